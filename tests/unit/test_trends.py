"""Trends: recent window vs the baseline window before it, across runs and within a run."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from obs.analysis.trends import condition_momentum, momentum, series_trends, windows
from obs.sitemodel import RunSummary
from summaries import make_summary, summaries


def test_configured_windows_when_the_series_is_long_enough() -> None:
    values = [float(v) for v in range(1, 31)]  # 1..30
    m = momentum(values, 5, 10)
    assert m is not None
    assert (m.recent_n, m.baseline_n) == (5, 10)
    assert m.recent_mean == pytest.approx(np.mean([26, 27, 28, 29, 30]))  # 28
    assert m.baseline_mean == pytest.approx(np.mean(range(16, 26)))  # 20.5
    assert m.delta == pytest.approx(7.5)
    assert not m.shortened
    assert m.direction(higher_is_better=True) == "up"
    assert m.direction(higher_is_better=False) == "down"


def test_short_series_shrink_to_half_each_and_say_so() -> None:
    assert windows(4, 5, 20) == (2, 2)
    assert windows(5, 5, 20) == (2, 3)
    assert windows(6, 5, 20) == (5, 1)
    assert windows(1, 5, 20) == (0, 0)
    m = momentum([0.5, 0.7, 0.6, 0.8], 5, 20, ids=["a", "b", "c", "d"])
    assert m is not None and m.shortened
    assert m.recent_ids == ["c", "d"] and m.baseline_ids == ["a", "b"]
    assert m.delta == pytest.approx(0.7 - 0.6)


def test_non_finite_values_are_dropped_first() -> None:
    m = momentum([1.0, math.nan, 2.0, math.inf, 3.0, 4.0], 2, 2)
    assert m is not None
    assert m.recent_mean == pytest.approx(3.5) and m.baseline_mean == pytest.approx(1.5)
    assert momentum([math.nan, 1.0], 1, 1) is None


@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=60),
    st.integers(1, 20),
    st.integers(1, 40),
)
def test_windows_are_disjoint_adjacent_and_at_the_end(values: list[float], recent: int, baseline: int) -> None:
    ids = [str(i) for i in range(len(values))]
    m = momentum(values, recent, baseline, ids)
    assert m is not None
    assert 1 <= m.recent_n <= recent and 1 <= m.baseline_n <= baseline
    assert m.recent_ids == ids[-m.recent_n :]
    assert m.baseline_ids == ids[-(m.recent_n + m.baseline_n) : -m.recent_n]
    assert m.recent_mean == pytest.approx(float(np.mean(values[-m.recent_n :])), rel=1e-9, abs=1e-6)


def run(rid: str, date: str, exact: float | None, **kw: Any) -> RunSummary:
    return make_summary(
        id=rid,
        date=date,
        headline={"metric": "exact", "value": exact},
        headline_is_rate=True,
        rates={"exact": exact} if exact is not None else {},
        **kw,
    )


def test_series_trends_order_runs_by_date_not_by_list_order() -> None:
    runs = [
        run("c", "2026-03-03", 0.8),
        run("a", "2026-03-01", 0.5),
        run("b", "2026-03-02", 0.6),
        run("d", "2026-03-04", 0.9),
    ]
    (t,) = series_trends(runs, ["exact"], 2, 10, lambda m: True, lambda m: True)
    assert t.momentum.recent_ids == ["c", "d"] and t.momentum.baseline_ids == ["a", "b"]
    assert t.momentum.delta == pytest.approx(0.85 - 0.55)
    assert t.direction == "up" and t.n_runs == 4


def test_series_trends_skip_runs_without_the_metric() -> None:
    runs = [run("a", "1", 0.5), run("b", "2", None), run("c", "3", 0.7)]
    (t,) = series_trends(runs, ["exact"], 1, 5, lambda m: True, lambda m: True)
    assert t.n_runs == 2 and t.momentum.recent_ids == ["c"] and t.momentum.baseline_ids == ["a"]
    assert series_trends(runs, ["loss"], 1, 5, lambda m: False, lambda m: False) == []


def test_condition_momentum_is_the_mean_over_seeds_of_per_run_momentum() -> None:
    def tail(values: list[float]) -> dict[str, list[float]]:
        return {"steps": [float(i) for i in range(len(values))], "values": values}

    runs = summaries(
        {"id": "s1", "seed": 1, "campaign_tail": tail([0.0] * 10 + [1.0] * 5)},  # delta 1
        {"id": "s2", "seed": 2, "campaign_tail": tail([0.0] * 10 + [3.0] * 5)},  # delta 3
        {"id": "s3", "seed": 3, "campaign_tail": None},
    )
    cm = condition_momentum("c", "C", runs, 5, 10)
    assert cm is not None and cm.n == 2
    assert cm.delta == pytest.approx(2.0)
    assert cm.delta_sd == pytest.approx(float(np.std([1.0, 3.0], ddof=1)))
    assert cm.window_sizes == (5, 10) and not cm.shortened
    assert condition_momentum("c", "C", runs[2:], 5, 10) is None
