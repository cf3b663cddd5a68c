"""The fast path (msgspec's typed records: obs.json_columns) must give exactly what the tolerant reader gives, or
step aside."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from obs.diagnostics import Diagnostics
from obs.fast_metrics import read_metrics_fast
from obs.jsonl import iter_jsonl
from obs.model import Metrics
from obs.series_builder import SeriesBuilder

KEYS = ["loss", "grad_norm", "lr", "eval_loss", "reward_mean", "flag"]


def tolerant(path: Path) -> tuple[Metrics, Diagnostics]:
    diags = Diagnostics()
    builder = SeriesBuilder(path, diags)
    for line, rec in iter_jsonl(path, diags):
        builder.add(rec, line)
    return builder.finish(), diags


def same(a: Metrics, b: Metrics) -> None:
    assert a.step_source == b.step_source
    assert sorted(a.series) == sorted(b.series)
    for name in a.series:
        assert np.array_equal(a.series[name].steps, b.series[name].steps), name
        assert np.array_equal(a.series[name].values, b.series[name].values), name
    assert a.stages == b.stages


record = st.fixed_dictionaries(
    {"step": st.integers(0, 50)},
    optional={
        **{k: st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False), st.integers(-1000, 1000)) for k in KEYS[:5]},
        "flag": st.booleans(),
        "stage": st.sampled_from(["warmup", "main", "anneal"]),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(record, min_size=1, max_size=120), st.booleans())
@example(  # found in CI: a stage point logged before earlier steps of another stage
    records=[
        {"step": 1, "loss": None, "stage": "warmup"},
        {"step": 0, "loss": None, "stage": "main"},
        {"step": 1, "stage": "main"},
        {"step": 2, "loss": None, "stage": "main"},
    ],
    partial=False,
)
def test_fast_path_equals_tolerant_reader(tmp_path: Path, records: list[dict[str, object]], partial: bool) -> None:
    path = tmp_path / "metrics.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in records)
    if partial:
        text += '{"step": 99, "loss": 0.'
    path.write_text(text)
    slow, slow_diags = tolerant(path)
    fast_diags = Diagnostics()
    fast = read_metrics_fast(path, fast_diags, None)
    if fast is None:
        return  # stepping aside is always allowed; silently different data is not
    same(fast, slow)
    assert [d.format() for d in fast_diags.items] == [d.format() for d in slow_diags.items]


def test_late_keys_are_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"step": i, "loss": 1.0 / (i + 1)}) for i in range(5000)]
    lines.append(json.dumps({"step": 5000, "loss": 0.1, "eval_loss": 0.2}))
    path.write_text("\n".join(lines) + "\n")
    fast = read_metrics_fast(path, Diagnostics(), None)
    assert fast is not None
    assert fast.series["eval_loss"].values.tolist() == [0.2]
    same(fast, tolerant(path)[0])


def test_files_the_tolerant_reader_must_explain_are_declined(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    for body in (
        '{"step": 0, "loss": NaN}\n',
        # bare constants after the first line reach the column parser, which must refuse them (obs does not
        # scan for them first: msgspec's decoder rejects what is not JSON, and the tolerant reader explains it)
        '{"step": 0, "loss": 1}\n{"step": 1, "loss": NaN}\n',
        '{"step": 0, "loss": 1}\n{"step": 1, "loss": Infinity}\n',
        '{"step": 0, "loss": 1}\n{"step": 1, "loss": -Infinity}\n',
        '{"step": 0, "loss": 1}\n{"step": 1, "loss": 1e999}\n',
        '{"step": 0, "loss": "high"}\n{"step": 1, "loss": 1}\n',
        '{"step": 0, "loss": 1}\nnot json\n',
        '{"loss": 1}\n',
        '{"step": 0, "m": {"a": 1}}\n',
        '{"step": 0, "loss": 1, "loss": 2}\n',  # a key twice: the tolerant reader names it
        '{"step": 0, "loss": 1}\n{"step": 1, "loss": true}\n',  # two types in one column
        '{"step": 0, "loss": 1}\n{"step": 1, "loss": [1]}\n',
        '{"step": 0, "loss": 1}\n[1, 2]\n',
        '{"step": 0, "note": "text"}\n',  # text that is not a stage
        '{"step": 0, "stage": "a", "phase": "b"}\n',  # two text columns
        '{"step": 0, "loss": 1}\n{"step": null, "loss": 2}\n',
        '{"step": 0, "loss": 1}\n{"loss": 2}\n',
        '{"step": 0, "loss": 1e200}\n',
    ):
        path.write_text(body)
        assert read_metrics_fast(path, Diagnostics(), None) is None, body


def test_streamed_keeps_extremes_tail_counts_and_stages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import obs.fast_metrics as fm
    import obs.series_builder as sb

    monkeypatch.setattr(fm, "STREAM_MIN_BYTES", 1 << 16)
    monkeypatch.setattr(fm, "CHUNK_BYTES", 1 << 15)
    monkeypatch.setattr(sb, "POINTS_PER_CHUNK", 50)
    monkeypatch.setattr(sb, "EXACT_TAIL", 30)
    rng = np.random.default_rng(5)
    n = 20_000
    loss = rng.normal(size=n).cumsum()
    loss[7777] = 1e6  # a spike the reduction must keep
    lines = []
    for i in range(n):
        rec: dict[str, object] = {"step": i, "loss": float(loss[i]), "stage": "warmup" if i < 500 else "main"}
        if i % 1000 == 0:
            rec["eval_loss"] = float(i)
        lines.append(json.dumps(rec))
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(lines) + "\n" + '{"step": 20000, "lo')  # still writing
    diags = Diagnostics()
    streamed = read_metrics_fast(path, diags, None)
    assert streamed is not None
    full, _ = tolerant(path)
    s, f = streamed.series["loss"], full.series["loss"]
    assert s.count == n and len(s) < n / 4  # reduced in memory, the true count kept
    assert s.values.max() == f.values.max() == 1e6 and s.values.min() == f.values.min()
    assert np.array_equal(s.steps[-30:], f.steps[-30:]) and np.array_equal(s.values[-30:], f.values[-30:])
    assert np.all(np.diff(s.steps) > 0)
    assert np.array_equal(streamed.series["eval_loss"].values, full.series["eval_loss"].values)
    assert streamed.stages == full.stages
    assert [d.severity for d in diags.items] == ["info"]  # the half-written last line, as the tolerant path says


def test_streamed_reading_declines_unsorted_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import obs.fast_metrics as fm

    monkeypatch.setattr(fm, "STREAM_MIN_BYTES", 1 << 10)
    monkeypatch.setattr(fm, "CHUNK_BYTES", 1 << 10)
    path = tmp_path / "metrics.jsonl"
    steps = [*range(200), *range(100, 300)]  # a restart
    path.write_text("".join(json.dumps({"step": i, "loss": 1.0}) + "\n" for i in steps))
    assert read_metrics_fast(path, Diagnostics(), None) is None


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_streamed_reading_declines_bare_constants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, constant: str
) -> None:
    import obs.fast_metrics as fm

    monkeypatch.setattr(fm, "STREAM_MIN_BYTES", 1 << 10)
    monkeypatch.setattr(fm, "CHUNK_BYTES", 1 << 10)
    path = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"step": i, "loss": 1.0}) for i in range(300)]
    lines[250] = f'{{"step": 250, "loss": {constant}}}'  # in a late chunk
    path.write_text("\n".join(lines) + "\n")
    assert read_metrics_fast(path, Diagnostics(), None) is None


@pytest.mark.parametrize(
    "late",
    [
        {"step": 300, "loss": True},  # a true/false where the first lines held numbers
        {"step": 300, "loss": "high"},
        {"step": 300, "note": "text"},  # text in a key the first lines lacked
        {"step": 300, "loss": {"a": 1}},
    ],
)
def test_a_type_change_after_the_first_lines_is_declined(tmp_path: Path, late: dict[str, object]) -> None:
    path = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"step": i, "loss": 1.0 / (i + 1)}) for i in range(300)] + [json.dumps(late)]
    path.write_text("\n".join(lines) + "\n")
    assert read_metrics_fast(path, Diagnostics(), None) is None


def test_reading_logs_never_imports_polars(tmp_path: Path) -> None:
    """One parser, no state between calls: the second log of a process is read as the first (no ~0.12 s import)."""
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": i, "loss": 1.0 / (i + 1)}) + "\n" for i in range(50)))
    code = (
        "import sys; from pathlib import Path; from obs.diagnostics import Diagnostics; "
        "from obs.fast_metrics import read_metrics_fast as r; "
        f"m = r(Path({str(path)!r}), Diagnostics(), None); assert m is not None and 'polars' not in sys.modules; "
        f"r(Path({str(path)!r}), Diagnostics(), None); assert 'polars' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
