"""The ladder across rungs (issue 27): each rung against the spec's frozen baseline, and the looks taken at
the frozen probe, from run summaries (analysis.ladder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
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
        delta=kw.pop("delta", DELTA if baseline else None),
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


def test_a_rungs_own_test_against_the_frozen_baseline_is_read_by_the_ladder() -> None:
    from obs.analysis.ladder import tested_vs_frozen

    r1 = rung("r1", 0.70)
    tested = {"baseline": "r1", "delta": 0.08, "p_value": 0.01, "n": 160, "pairs": [16, 3]}
    tested["ci"] = {"low": 0.02, "high": 0.14, "level": 0.95}
    tested["verdict"] = "statistically_significant_improvement"
    r3 = rung("r3", 0.78, "r2", frozen_delta=tested)
    d = frozen_delta(r3, r1, SPEC)
    assert d is not None and d.tested is not None and d.delta == pytest.approx(0.08) and not d.tested_as_parent
    assert tested_vs_frozen(r3, "r1") is r3.frozen_delta
    moved = rung(
        "r4",
        0.9,
        "r2",
        frozen_delta={
            **tested,
            "verdict": "not_one_measurement",
            "method": "not one "
            "measurement: probe: probe-v4 here, probe-v3 in baseline r1: the numbers are not comparable",
        },
    )
    d = frozen_delta(moved, r1, SPEC)
    assert (
        d is not None
        and d.delta is None
        and d.why_not == "not one measurement: probe: probe-v4 here, probe-v3 in baseline r1"
    )
    assert tested_vs_frozen(moved, "r1") is None  # no claim across two measurements


def _tested(run_id: str, parent: str, delta: float, p: float, pairs: tuple[int, int], n: int = 160) -> Any:
    d = {"baseline": "r1", "delta": delta, "p_value": p, "n": n, "pairs": list(pairs)}
    d["ci"] = {"low": delta - 0.05, "high": delta + 0.05, "level": 0.95}
    d["verdict"] = (
        "statistically_significant_improvement" if p < 0.05 and delta > 0 else "insufficient_statistical_evidence"
    )
    if parent == "r1":
        return rung(run_id, 0.7 + delta, "r1", delta=d)
    return rung(run_id, 0.7 + delta, parent, frozen_delta=d)


def test_the_ladder_claim_is_holm_adjusted_over_the_rungs_as_statsmodels_does() -> None:
    from statsmodels.stats.multitest import multipletests

    from obs.analysis.ladder import ladder_claim
    from obs.analysis.stats import paired_from_counts

    runs = [
        rung("r1", 0.70),
        _tested("r2", "r1", 0.03, 0.20, (12, 7)),
        _tested("r3", "r2", 0.06, 0.02, (16, 6)),
        _tested("r4", "r3", 0.05, 0.030, (14, 6)),
        _tested("r5", "r4", -0.01, 0.70, (8, 10)),
        rung(
            "r6",
            0.99,
            "r5",
            fields={**FIELDS, "contract.probe": "probe-v4"},
            not_one_measurement="not one measurement: probe: probe-v4 here, probe-v3 in the frozen contract",
        ),
    ]
    claim = ladder_claim(runs, SPEC)
    assert claim is not None and claim.m == 4  # r6 is another measurement: not a look at the frozen probe
    reject, adjusted, _, _ = multipletests([0.20, 0.02, 0.030, 0.70], alpha=0.05, method="holm")
    assert [r.p_holm for r in claim.rungs] == pytest.approx(list(adjusted))
    assert [r.significant for r in claim.rungs] == [False, False, False, False] == list(reject)
    assert claim.best == "r3" and claim.best_delta == pytest.approx(0.06)
    # Bonferroni: the rung's own paired interval (exact: 22 discordant pairs) at level 1 - α/m
    (pc,) = paired_from_counts([(160, 0, 16, 6)], level=1 - 0.05 / 4)
    iv = pc.interval
    assert (claim.best_low, claim.best_high) == (pytest.approx(iv.low), pytest.approx(iv.high))
    assert claim.best_low < 0.0 < claim.best_high and claim.verdict == "insufficient_statistical_evidence"
    (one,) = paired_from_counts([(160, 0, 16, 6)])
    wide = one.interval
    assert claim.best_low < wide.low and claim.best_high > wide.high  # wider than one rung's own 95% interval


def test_a_strong_rung_survives_the_ladder_adjustment() -> None:
    from statsmodels.stats.multitest import multipletests

    from obs.analysis.ladder import ladder_claim

    runs = [rung("r1", 0.70), _tested("r2", "r1", 0.02, 0.4, (9, 6)), _tested("r3", "r2", 0.15, 1e-6, (28, 4))]
    claim = ladder_claim(runs, SPEC)
    reject, adjusted, _, _ = multipletests([0.4, 1e-6], method="holm")
    assert claim is not None and [r.p_holm for r in claim.rungs] == pytest.approx(list(adjusted))
    assert claim.significant == ("r3",) and list(reject) == [False, True]
    assert (
        claim.verdict == "statistically_significant_improvement" and claim.best_low is not None and claim.best_low > 0
    )


def test_no_ladder_claim_without_a_test_against_the_frozen_baseline() -> None:
    from obs.analysis.ladder import ladder_claim

    assert ladder_claim([rung("r1", 0.7), rung("r2", 0.8, "r1")], SPEC) is None  # r2's delta is not tested
    assert ladder_claim([rung("r1", 0.7)], Spec("s1", Path("."), contract=CONTRACT, baseline=None)) is None


# ----------------------------------------------------------------- a recipe's seed replicates: one look


def _seed(run_id: str, value: float, seed: int, parent: str | None, recipe: str, **kw: Any) -> Any:
    """A finished run of `recipe` (its config) at `seed`, tested against the frozen baseline r1 as one checkpoint."""
    fields = {**FIELDS, "config.recipe": recipe}
    if parent is None:
        return rung(run_id, value, fields=fields, seed=seed, status="finished", **kw)
    return _tested_seed(run_id, parent, value, seed, fields)


def _tested_seed(run_id: str, parent: str, value: float, seed: int, fields: dict[str, Any]) -> Any:
    d = {"baseline": "r1", "delta": value - 0.70, "p_value": 0.001, "n": 160, "pairs": [30, 8]}
    d["ci"] = {"low": value - 0.75, "high": value - 0.65, "level": 0.95}
    d["verdict"] = "statistically_significant_improvement"
    return rung(run_id, value, parent, delta=d, fields=fields, seed=seed, status="finished")


def test_a_recipe_with_seed_replicates_is_one_look_judged_over_its_seeds() -> None:
    """Issue 27 item: three seeds of one recipe are not three rungs (the best of them is not a finding): the recipe
    is one look, Welch's t of its seeds' headlines against the frozen baseline recipe's, Holm over the looks; the
    frozen baseline's own seed replicates are its seeds, not rungs. Checked against scipy and statsmodels."""
    from scipy.stats import ttest_ind
    from statsmodels.stats.multitest import multipletests

    from obs.analysis.ladder import ladder_claim

    frozen = [
        _seed("r1", 0.70, 17, None, "a"),
        _seed("r1-s18", 0.67, 18, "r1", "a"),
        _seed("r1-s19", 0.74, 19, "r1", "a"),
    ]
    recipe = [
        _seed("r3", 0.80, 17, "r1", "b"),
        _seed("r3-s18", 0.79, 18, "r1", "b"),
        _seed("r3-s19", 0.84, 19, "r1", "b"),
    ]
    other = _tested("r2", "r1", 0.03, 0.20, (12, 7))
    claim = ladder_claim([*frozen, other, *recipe], SPEC, seed_keys=())
    assert claim is not None
    assert claim.m == 2  # r2, and r3's recipe once; r1-s18 and r1-s19 are the frozen baseline's seeds
    assert claim.frozen_seeds == ("r1", "r1-s18", "r1-s19")
    rung_ = claim.rung("r3-s19")
    assert rung_ is not None and rung_ is claim.rung("r3") and rung_.members == ("r3", "r3-s18", "r3-s19")
    assert rung_.label == "r3's recipe (3 v 3 seeds)"
    x, y = [0.80, 0.79, 0.84], [0.70, 0.67, 0.74]
    t = ttest_ind(x, y, equal_var=False)
    assert rung_.p_value == pytest.approx(t.pvalue) and rung_.delta == pytest.approx(sum(x) / 3 - sum(y) / 3)
    _, adjusted, _, _ = multipletests([0.20, t.pvalue], method="holm")
    assert [r.p_holm for r in claim.rungs] == pytest.approx(list(adjusted))
    # the best is the recipe; its simultaneous interval is Welch's at level 1 - α/2 (scipy, equal sizes)
    assert claim.best == "r3" and claim.best_label == "r3's recipe (3 v 3 seeds)"
    ci = t.confidence_interval(1 - 0.05 / 2)
    assert (claim.best_low, claim.best_high) == (pytest.approx(ci.low), pytest.approx(ci.high))


def test_a_recipe_against_a_frozen_baseline_of_one_seed_is_said_not_claimed() -> None:
    from obs.analysis.ladder import ladder_claim

    frozen = _seed("r1", 0.70, 17, None, "a")
    recipe = [_seed("r3", 0.80, 17, "r1", "b"), _seed("r3-s18", 0.79, 18, "r1", "b")]
    other = _tested("r2", "r1", 0.03, 0.20, (12, 7))
    claim = ladder_claim([frozen, other, *recipe], SPEC)
    assert claim is not None and claim.m == 1 and [r.run for r in claim.rungs] == ["r2"]
    ((label, why),) = claim.not_tested
    assert label == "r3's recipe (2 v 1 seeds)" and "too few seeds" in why


def test_holm_significant_best_rung_with_a_wide_simultaneous_interval_is_significant_size_not_established() -> None:
    """Holm's step-down rejects the best rung (adjusted p = max(3 p1, 2 p2) < α), while its Bonferroni interval at
    level 1 - α/3 (dual to Welch's p > α/3) reaches below zero: the claim is a gain whose size is not established,
    never "not significant" beside a list of significant rungs (issue 27: the demo's ladder said both)."""
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    from obs.analysis.ladder import RungTest, claim_of

    frozen = (0.58, 0.59, 0.60, 0.61, 0.62, 0.60)
    wide = (0.601, 0.645, 0.70, 0.755, 0.799, 0.70)  # the largest gain, noisy: Welch p ~0.018
    tight = (0.64, 0.65, 0.66, 0.645, 0.655, 0.65)  # a smaller gain, precise: p ~9e-5
    same = (0.61, 0.59, 0.60, 0.60, 0.60, 0.60)
    tests = []
    for name, x in (("wide", wide), ("tight", tight), ("same", same)):
        w = stats.ttest_ind(x, frozen, equal_var=False)
        tests.append(RungTest(name, float(np.mean(x) - np.mean(frozen)), float(w.pvalue), None, None, (x, frozen)))
    reject, adjusted, _, _ = multipletests([t.p_value for t in tests], alpha=0.05, method="holm")
    assert list(reject) == [True, True, False]
    claim = claim_of(tests, "r1")
    assert claim is not None and claim.best == "wide"
    assert [r.p_holm for r in claim.rungs] == pytest.approx(list(adjusted))
    ci = stats.ttest_ind(wide, frozen, equal_var=False).confidence_interval(1 - 0.05 / 3)
    assert (claim.best_low, claim.best_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert claim.best_low < 0.0 < claim.best_high
    assert claim.verdict == "significant_size_not_established"
    assert claim.significant == ("wide", "tight")
