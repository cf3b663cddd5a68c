"""The ladder across rungs (issue 27): each rung against the spec's frozen baseline, and the looks taken at
the frozen probe, from run summaries (analysis.ladder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from obs.analysis.ladder import frozen_delta, looks
from obs.model import Spec
from summaries import make_summary

CONTRACT = {"probe": "probe-v3", "compiler": "svgc 3.1.2"}
SPEC = Spec("s1", Path("."), contract=CONTRACT, baseline="r1")
FIELDS = {f"contract.{k}": v for k, v in CONTRACT.items()}
DELTA = {"delta": 0.01}


def rung(run_id: str, value: float, baseline: str | None = None, verdict: str | None = None, **kw: Any) -> Any:
    return make_summary(
        id=run_id,
        spec="s1",
        baseline=baseline,
        headline={"value": value, "n": kw.pop("n", 160)},
        fields=kw.pop("fields", FIELDS),
        delta=DELTA if baseline else None,
        verdict=verdict,
        **kw,
    )


def test_each_rung_against_the_frozen_baseline() -> None:
    r1, r2, r3 = rung("r1", 0.70), rung("r2", 0.75, "r1"), rung("r3", 0.81, "r2")
    assert frozen_delta(r1, r1, SPEC) is None  # the frozen baseline itself
    d2 = frozen_delta(r2, r1, SPEC)
    assert d2 is not None and d2.tested_as_parent and d2.delta == pytest.approx(0.05)
    d3 = frozen_delta(r3, r1, SPEC)
    assert d3 is not None and not d3.tested_as_parent and d3.delta == pytest.approx(0.11) and d3.why_not is None


def test_no_number_across_two_measurements_or_two_case_sets() -> None:
    r1 = rung("r1", 0.70)
    moved = rung("r5", 0.95, "r1", fields={**FIELDS, "contract.probe": "probe-v4"})
    d = frozen_delta(moved, r1, SPEC)
    assert d is not None and d.delta is None and d.why_not is not None
    assert "not one measurement: probe: probe-v4 here, probe-v3 in baseline r1" in d.why_not
    partial = rung("r4", 0.78, "r1", n=50)
    d = frozen_delta(partial, r1, SPEC)
    assert d is not None and d.delta is None and d.why_not is not None and "50 and 160 cases" in d.why_not


def test_looks_count_the_decisions_on_the_frozen_probe() -> None:
    runs = [
        rung("r1", 0.70, verdict="promote"),  # compared with nothing: not a look
        rung("r2", 0.72, "r1", verdict="reject"),
        rung("r3", 0.74, "r1"),  # no decision yet
        rung("r4", 0.80, "r1", verdict="promote", not_one_measurement="not one measurement: probe: ..."),
        rung("r5", 0.76, "r1", verdict="branch"),
        rung("r6", 0.75, "r1", verdict="reject", fields={**FIELDS, "contract.probe": "probe-v4"}),
    ]
    seen = looks(runs, SPEC)
    assert sorted(seen) == ["r2", "r5"]
    assert (seen["r2"].number, seen["r2"].total) == (1, 2)
    assert (seen["r5"].number, seen["r5"].total) == (2, 2)


def _outcomes(classes: list[str | None]) -> Any:
    from obs.probetable import CaseOutcome, CaseOutcomes

    return CaseOutcomes.from_mapping(
        {f"c{i}": CaseOutcome({"exact": c is None}, "test", "f", c) for i, c in enumerate(classes)}
    )


def test_the_target_failure_class_is_counted_before_and_after() -> None:
    from obs.analysis.ladder import target_class

    base = _outcomes(["layout_drift"] * 5 + ["truncated"] * 2 + [None] * 3)
    here = _outcomes(["layout_drift"] * 2 + ["truncated"] * 3 + [None] * 5)
    t = target_class("layout_drift", here, base)
    assert t is not None and (t.before, t.after, t.n_before, t.n_after) == (5, 2, 10, 10) and t.labelled
    assert t.text() == "targets layout_drift: 5 of 10 cases before (baseline), 2 of 10 in this run"
    gone = target_class("stop_spill", here, base)  # a class neither probe has: 0 and 0, labelled probes
    assert gone is not None and (gone.before, gone.after) == (0, 0)
    unlabelled = target_class("layout_drift", _outcomes([None, None]), None)
    assert unlabelled is not None and not unlabelled.labelled and "cannot be counted" in unlabelled.text()
    assert target_class(None, here, base) is None
