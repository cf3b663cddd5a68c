"""A very long log read by the tolerant reader keeps bounded memory and the same curves.

Columns longer than `spill_points` are reduced as they grow (min/max buckets plus an exact tail),
exactly as the streamed fast path reduces a clean log; these tests compare the reduced result
with the whole series.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import obs.series_builder as sb
from obs.diagnostics import Diagnostics
from obs.series_builder import SeriesBuilder

TAIL = 100


@pytest.fixture(autouse=True)
def small_reduction(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks reduced to 200 points and a 100-point exact tail, so 30,000 steps show the reduction."""
    monkeypatch.setattr(sb, "POINTS_PER_CHUNK", 200)
    monkeypatch.setattr(sb, "EXACT_TAIL", TAIL)


def _records(n: int, seed: int = 3) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    loss = rng.normal(1.0, 0.2, n)
    out: list[dict[str, object]] = []
    for i in range(n):
        rec: dict[str, object] = {"step": i, "loss": float(loss[i]), "stage": "warmup" if i < n // 3 else "main"}
        if i % 10 == 0:
            rec["eval_loss"] = float(loss[i]) / 2
        if i == n // 2:
            rec["loss"] = "oops"  # text in a numeric column: reported, as without spilling
        out.append(rec)
    return out


def _build(records: list[dict[str, object]], spill: int) -> tuple[SeriesBuilder, Diagnostics]:
    diags = Diagnostics(root=Path("."))
    builder = SeriesBuilder(Path("metrics.jsonl"), diags, spill_points=spill)
    for line, rec in enumerate(records, 1):
        builder.add(rec, line)
    return builder, diags


def test_spilled_columns_keep_extremes_tail_and_counts() -> None:
    records = _records(30_000)
    whole_builder, whole_diags = _build(records, spill=10**9)
    small_builder, small_diags = _build(records, spill=2_000)
    whole, small = whole_builder.finish(), small_builder.finish()
    assert sorted(whole.series) == sorted(small.series) == ["eval_loss", "loss"]
    for name in whole.series:
        w, s = whole.series[name], small.series[name]
        assert s.count == w.count  # the real number of logged points
        assert len(s) < len(w) / 2  # but far from all of them are held
        assert s.values.max() == w.values.max() and s.values.min() == w.values.min()
        assert s.steps[0] == w.steps[0] and s.steps[-1] == w.steps[-1]
        tail = min(TAIL, len(w))
        np.testing.assert_array_equal(s.steps[-tail:], w.steps[-tail:])
        np.testing.assert_array_equal(s.values[-tail:], w.values[-tail:])
        # every kept point is a real point of the series
        lookup = dict(zip(w.steps.tolist(), w.values.tolist(), strict=True))
        assert all(lookup[st] == v for st, v in zip(s.steps.tolist(), s.values.tolist(), strict=True))
    assert [(st.name, st.start, st.end) for st in whole.stages] == [(st.name, st.start, st.end) for st in small.stages]
    assert [d.message for d in whole_diags.items] == [d.message for d in small_diags.items]
    assert any("holds text" in d.message for d in small_diags.items)


def test_stage_points_stay_compact_on_a_long_log() -> None:
    """Every stage point is kept (see the next test for why), as 12 bytes, never as Python objects."""
    builder, _ = _build(_records(30_000), spill=2_000)
    points = builder._stage_points
    assert len(points.steps) == len(points.codes) == 30_000
    assert points.steps.itemsize + points.codes.itemsize == 12 and points.names == {"warmup": 0, "main": 1}
    assert [(s.name, s.start, s.end) for s in builder.finish().stages] == [
        ("warmup", 0.0, 10_000.0),
        ("main", 10_000.0, 29_999.0),
    ]


def test_a_late_stage_point_inside_an_earlier_run_splits_it_where_it_falls() -> None:
    """Steps 0-2 of "main" with a "warmup" point at step 1 logged first: sorted by step (ties in
    the order logged) the warmup sits between the two step-1 points, so main, warmup, main. Found
    by the fast-path property test: dropping the middle "main" point as it arrived made warmup
    swallow step 1-2."""
    records: list[dict[str, object]] = [
        {"step": 1, "stage": "warmup"},
        {"step": 0, "stage": "main"},
        {"step": 1, "stage": "main"},
        {"step": 2, "stage": "main"},
    ]
    builder, _ = _build(records, spill=2_000)
    assert [(s.name, s.start, s.end) for s in builder.finish().stages] == [
        ("main", 0.0, 1.0),
        ("warmup", 1.0, 1.0),
        ("main", 1.0, 2.0),
    ]


def test_steps_going_back_past_a_spilled_chunk_are_reported() -> None:
    records = [{"step": i, "loss": float(i)} for i in range(5_000)]
    records += [{"step": i, "loss": -1.0} for i in range(100, 110)]  # a restart re-logs old steps
    records += [{"step": 5_000 + i, "loss": 1.0} for i in range(10)]
    builder, diags = _build(records, spill=1_000)
    metrics = builder.finish()
    loss = metrics.series["loss"]
    assert loss.count == 5_010  # the ten late points are not counted twice
    assert -1.0 not in loss.values.tolist()
    warning = next(d for d in diags.items if "go back to steps" in d.message)
    assert warning.message.startswith("10 point(s)")


def test_duplicates_inside_a_chunk_keep_the_last_value_as_without_spilling() -> None:
    records = [{"step": i // 2, "loss": float(i)} for i in range(6_000)]  # every step twice
    whole_builder, whole_diags = _build(records, spill=10**9)
    small_builder, small_diags = _build(records, spill=1_000)
    whole, small = whole_builder.finish(), small_builder.finish()
    tail = TAIL
    np.testing.assert_array_equal(small.series["loss"].values[-tail:], whole.series["loss"].values[-tail:])
    assert any("more than once" in d.message for d in small_diags.items)
    assert any("more than once" in d.message for d in whole_diags.items)
