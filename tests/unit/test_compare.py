"""compare.py's paired comparison of a run with its baseline, checked against scipy and statsmodels.

The score (McNemar) p-value must equal statsmodels' McNemar test without continuity correction on
the same 2x2 table in every scope (to 1e-12), and the CI must be Tango's interval of those counts.
Counts, flips and unpaired cases are checked against a plain re-count of the same synthetic probes.
A headline logged as a series (one run each) is described and never tested.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar

from obs.analysis.compare import ONE_RUN_EACH, Headline, compare_probes, headline_delta
from obs.analysis.digest import CaseOutcome, RunDigest, WindowStat
from obs.analysis.stats import EXACT_BELOW, NOT_TESTED, tango_interval
from obs.config import SiteConfig

NEG = SiteConfig().is_negative_check
FAMILIES = ("cards", "lane", "poster")
SPLITS = ("train", "dev", "test")


def synthetic(seed: int, n: int = 180, p_base: float = 0.6, p_flip_up: float = 0.3, p_flip_down: float = 0.1):
    """A baseline and a run on the same ids, plus a few ids present in only one of them."""
    rng = np.random.default_rng(seed)
    base: dict[str, CaseOutcome] = {}
    here: dict[str, CaseOutcome] = {}
    for i in range(n):
        fam, split = FAMILIES[i % 3], SPLITS[(i // 3) % 3]
        b = bool(rng.random() < p_base)
        h = (not b and rng.random() < p_flip_up) or (b and rng.random() >= p_flip_down)
        bt, ht = bool(rng.random() < 0.05), bool(rng.random() < 0.08)
        base[f"c{i:03d}"] = CaseOutcome({"exact": b, "truncated": bt}, split, fam)
        here[f"c{i:03d}"] = CaseOutcome({"exact": h, "truncated": ht}, split, fam)
    for i in range(4):
        here[f"new{i}"] = CaseOutcome({"exact": True, "truncated": False}, "test", "cards")
    for i in range(3):
        base[f"old{i}"] = CaseOutcome({"exact": False, "truncated": False}, "dev", "lane")
    return here, base


def vectors(here, base, check: str, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.array([here[i].checks[check] for i in ids], dtype=float),
        np.array([base[i].checks[check] for i in ids], dtype=float),
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_score_test_equals_statsmodels_mcnemar_in_every_scope(seed: int) -> None:
    here, base = synthetic(seed)
    cmp = compare_probes(here, base, "base", NEG)
    shared = sorted(set(here) & set(base))
    scopes = [(cmp.overall, shared)]
    scopes += [(s, [i for i in shared if here[i].split == s.label]) for s in cmp.by_split]
    scopes += [(s, [i for i in shared if here[i].family == s.label]) for s in cmp.by_family]
    assert len(scopes) == 1 + 3 + 3
    for scope, ids in scopes:
        assert scope.n_shared == len(ids)
        for check in ("exact", "truncated"):
            pc = scope.checks[check]
            a, b = vectors(here, base, check, ids)
            only_a, only_b = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
            assert (pc.only_a, pc.only_b, pc.n) == (only_a, only_b, len(ids))
            assert pc.both_correct == int(np.sum((a == 1) & (b == 1)))
            assert pc.delta == pytest.approx(a.mean() - b.mean(), abs=1e-12)
            both = int(np.sum((a == 1) & (b == 1)))
            table = [[both, only_a], [only_b, len(ids) - both - only_a - only_b]]
            expected = 1.0 if only_a + only_b == 0 else mcnemar(table, exact=False, correction=False).pvalue
            if only_a + only_b < EXACT_BELOW:  # few discordant cases: the exact conditional test decides too
                expected = max(expected, mcnemar(table, exact=True).pvalue)
                tango = tango_interval(only_a, only_b, len(ids))
                assert pc.exact and pc.interval.low <= tango.low and pc.interval.high >= tango.high
            else:
                assert pc.interval == tango_interval(only_a, only_b, len(ids))
            assert pc.p_value == pytest.approx(expected, abs=1e-12, rel=1e-12)
            assert pc.interval.excludes_zero() == (pc.p_value < 0.05)
            # the label is the Holm-adjusted one over every cell of the comparison (no headline named here)
            assert pc.p_adjusted is not None and pc.p_adjusted >= pc.p_value
            assert cmp.family == "Holm over the 14 cells of this comparison"


def test_cases_in_only_one_run_are_counted_not_paired() -> None:
    here, base = synthetic(7)
    cmp = compare_probes(here, base, "base", NEG)
    assert cmp.only_here == ["new0", "new1", "new2", "new3"]
    assert cmp.only_baseline == ["old0", "old1", "old2"]
    assert cmp.overall.n_shared == 180
    assert cmp.overall.checks["exact"].n == 180
    # the unpaired cases change nothing in the paired numbers
    shared_here = {k: v for k, v in here.items() if k in base}
    shared_base = {k: v for k, v in base.items() if k in here}
    again = compare_probes(shared_here, shared_base, "base", NEG)
    assert again.overall.checks["exact"] == cmp.overall.checks["exact"]
    assert again.only_here == [] and again.only_baseline == []
    assert cmp.as_dict()["only_in_this_run"] == cmp.only_here


def test_a_check_present_on_some_cases_is_paired_where_both_have_it() -> None:
    base = {
        f"c{i}": CaseOutcome({"exact": i < 5, **({"renderable": True} if i < 6 else {})}, None, None) for i in range(10)
    }
    here = {f"c{i}": CaseOutcome({"exact": i < 7, "renderable": i != 0}, None, None) for i in range(10)}
    cmp = compare_probes(here, base, "base", NEG)
    assert cmp.overall.checks["renderable"].n == 6
    assert (cmp.overall.checks["renderable"].only_a, cmp.overall.checks["renderable"].only_b) == (0, 1)


def test_flips_are_the_cases_that_changed_in_each_direction() -> None:
    here, base = synthetic(8)
    cmp = compare_probes(here, base, "base", NEG)
    shared = sorted(set(here) & set(base))
    exact = next(f for f in cmp.flips if f.check == "exact")
    assert exact.broke == [i for i in shared if base[i].checks["exact"] and not here[i].checks["exact"]]
    assert exact.fixed == [i for i in shared if not base[i].checks["exact"] and here[i].checks["exact"]]
    # a negative check flips the other way: "broke" is newly truncated
    trunc = next(f for f in cmp.flips if f.check == "truncated")
    assert trunc.broke == [i for i in shared if not base[i].checks["truncated"] and here[i].checks["truncated"]]
    assert trunc.fixed == [i for i in shared if base[i].checks["truncated"] and not here[i].checks["truncated"]]


def test_negative_check_direction_in_the_recommendation() -> None:
    """More truncation is a degradation even though the rate went up."""
    base = {f"c{i}": CaseOutcome({"truncated": False}, None, None) for i in range(100)}
    here = {f"c{i}": CaseOutcome({"truncated": i < 30}, None, None) for i in range(100)}
    pc = compare_probes(here, base, "base", NEG).overall.checks["truncated"]
    assert pc.delta == pytest.approx(0.3)
    assert pc.p_value == pytest.approx(float(sps.chi2.sf(30.0, 1)), rel=1e-12)
    assert pc.recommendation == "significant_degradation"


def test_comparison_is_reproducible() -> None:
    here, base = synthetic(9)
    assert compare_probes(here, base, "b", NEG).as_dict() == compare_probes(here, base, "b", NEG).as_dict()


def test_headline_delta_reuses_the_overall_comparison() -> None:
    here, base = synthetic(10)
    cmp = compare_probes(here, base, "base", NEG)
    rate = float(np.mean([o.checks["exact"] for o in here.values()]))
    d = headline_delta(
        Headline("exact", rate, "probe", "exact"),
        RunDigest("r", probe=here),
        RunDigest("base", probe=base),
        NEG,
        0.05,
        cmp,
    )
    pc = cmp.overall.checks["exact"]
    assert d is not None and d.delta == pc.delta and d.interval == pc.interval and d.p_value == pc.p_value
    assert d.n == 180 and f"({pc.only_a} fixed, {pc.only_b} broken)" in d.method


def test_one_run_against_one_run_on_a_series_is_described_not_tested() -> None:
    """Logged points of one run are not replicates: no p, no CI, no verdict but "not tested"."""
    here = RunDigest("r", finals={"reward": WindowStat(0.52, 0.004, 10, 300.0, 300)})
    base = RunDigest("b", finals={"reward": WindowStat(0.61, 0.004, 10, 300.0, 300)})
    d = headline_delta(Headline("reward", 0.52, "series", "reward"), here, base, NEG, 0.05)
    assert d is not None
    assert d.delta == pytest.approx(-0.09) and d.baseline_value == 0.61
    assert d.interval is None and d.p_value is None and d.n is None
    assert d.verdict == NOT_TESTED and d.unit == "none"
    assert d.method.startswith(ONE_RUN_EACH)
    assert d.as_dict()["verdict"] == "not_tested"


def test_final_summaries_and_evals_without_stderr_are_not_tested() -> None:
    here = RunDigest("r", summary={"acc": 0.7}, evals={"t/acc": (0.7, None)})
    base = RunDigest("b", summary={"acc": 0.6}, evals={"t/acc": (0.6, None)})
    summary = headline_delta(Headline("acc", 0.7, "summary", "acc"), here, base, NEG, 0.05)
    ev = headline_delta(Headline("t/acc", 0.7, "eval", "t/acc"), here, base, NEG, 0.05)
    assert summary is not None and summary.verdict == NOT_TESTED and summary.p_value is None
    assert ev is not None and ev.verdict == NOT_TESTED and ev.interval is None


def test_eval_with_stderr_states_its_unit() -> None:
    here = RunDigest("r", evals={"t/acc": (0.70, 0.01)})
    base = RunDigest("b", evals={"t/acc": (0.65, 0.01)})
    d = headline_delta(Headline("t/acc", 0.70, "eval", "t/acc", stderr=0.01), here, base, NEG, 0.05)
    assert d is not None and d.interval is not None and d.p_value is not None
    assert d.unit.startswith("evaluation items")
    assert d.interval.excludes_zero() == (d.p_value < 0.05)
    assert d.p_value == pytest.approx(2 * sps.norm.sf(0.05 / math.hypot(0.01, 0.01)), abs=1e-12)
