"""The polars fast path must give exactly what the tolerant reader gives, or step aside."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
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
        '{"step": 0, "loss": "high"}\n{"step": 1, "loss": 1}\n',
        '{"step": 0, "loss": 1}\nnot json\n',
        '{"loss": 1}\n',
        '{"step": 0, "m": {"a": 1}}\n',
    ):
        path.write_text(body)
        assert read_metrics_fast(path, Diagnostics(), None) is None, body
