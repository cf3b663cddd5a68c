"""The spec page's history across rungs (issue 27): each check's rate per family and rung with its count and its
Wilson interval (checked against scipy), and the campaign pages' chart data made from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from obs.analysis.ladder_history import ALL, chart_data, ladder_history
from obs.model import Spec
from summaries import make_summary

SPEC = Spec("s1", Path("."), contract={"probe": "probe-v3"}, baseline="r1", primary_metric="exact")


def rung(
    run_id: str, counts: dict[str, tuple[int, int]], families: dict[str, dict[str, tuple[int, int]]], **kw: Any
) -> Any:
    return make_summary(id=run_id, spec="s1", revision=run_id, check_counts=counts, family_counts=families, **kw)


def test_the_family_by_rung_table_with_counts_and_wilson_intervals() -> None:
    runs = [
        rung("r1", {"exact": (115, 160), "renderable": (140, 160)}, {"exact": {"lane": (24, 32), "poster": (26, 32)}}),
        rung("r2", {"exact": (101, 160)}, {"exact": {"lane": (6, 32), "poster": (24, 32)}}),
        make_summary(id="r0", spec="s1"),  # no probe: not a column
        rung("r3", {"exact": (30, 40)}, {"exact": {"lane": (7, 10)}}, fields={"contract.probe": "probe-v4"}),
    ]
    h = ladder_history(runs, SPEC)
    assert h is not None and [r.run for r in h.rungs] == ["r1", "r2", "r3"] and h.headline == "exact"
    assert [c.check for c in h.checks] == ["exact", "renderable"]  # the headline check first
    assert [r.frozen_probe for r in h.rungs] == [True, True, False]  # r3 measured another probe
    exact = h.check("exact")
    assert exact is not None
    rows = dict(exact.rows)
    assert list(rows) == [ALL, "lane", "poster"]
    lane = rows["lane"]
    assert [(c.hits, c.n) if c else None for c in lane] == [(24, 32), (6, 32), (7, 10)]
    assert rows["poster"][2] is None  # r3 has no poster cases
    for cell in (c for c in lane if c is not None):
        ci = binomtest(cell.hits, cell.n).proportion_ci(0.95, method="wilson")
        assert (cell.low, cell.high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    data = chart_data("spec:s1", h)
    lines = {c["name"]: c for c in data["metrics"]["exact"]["conditions"]}
    assert lines["lane"]["x"] == [1, 2]  # r3 (another probe) is left out of the chart
    assert lines["lane"]["mean"] == [0.75, 0.1875]
    assert lines["lane"]["ci_lo"][0] == pytest.approx(rows["lane"][0].low, abs=1e-6)  # type: ignore[union-attr]
    assert data["schema"] == "obs.conditions/1" and set(data["metrics"]) == {"exact", "renderable"}


def test_no_history_without_a_probe() -> None:
    assert ladder_history([make_summary(id="r1", spec="s1")], SPEC) is None


def test_seed_replicates_of_one_revision_get_columns_told_apart() -> None:
    """Three runs of revision r1 (seeds 1, 18, 19) are three columns: each is named by its seed, never "r1" three
    times; replicates that share a seed too fall back to their run ids."""
    counts = {"exact": (100, 160)}
    runs = [
        make_summary(id=f"a-s{k}", spec="s1", revision="r1", seed=k, check_counts=counts, family_counts={})
        for k in (1, 18, 19)
    ]
    runs.append(make_summary(id="b", spec="s1", revision="r2", seed=1, check_counts=counts, family_counts={}))
    h = ladder_history(runs, SPEC)
    assert h is not None
    assert [r.label for r in h.rungs] == ["r1 · seed 1", "r1 · seed 18", "r1 · seed 19", "r2"]
    same_seed = [
        make_summary(id=i, spec="s1", revision="r1", seed=1, check_counts=counts, family_counts={}) for i in "xy"
    ]
    h = ladder_history(same_seed, SPEC)
    assert h is not None and [r.label for r in h.rungs] == ["x", "y"]
