"""compare.py's paired comparison of a run with its baseline, checked against scipy.stats.

McNemar's exact p-value must equal scipy's binomial test on the discordant cases (deterministic:
to 1e-12); the paired-bootstrap CI must agree with scipy.stats.bootstrap(paired=True,
method='percentile') within Monte-Carlo error. Counts, flips and unpaired cases are checked against
a plain re-count of the same synthetic probes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from obs.analysis.compare import RESAMPLES, SCOPE_RESAMPLES, Headline, compare_probes, headline_delta
from obs.analysis.digest import CaseOutcome, RunDigest
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


def scipy_paired_ci(a: np.ndarray, b: np.ndarray, n_resamples: int) -> tuple[float, float]:
    res = sps.bootstrap(
        (a, b),
        lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=n_resamples,
        confidence_level=0.95,
        random_state=np.random.default_rng(99),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def mc_tolerance(a: np.ndarray, b: np.ndarray, ours: int, theirs: int) -> float:
    """Allowed gap between two percentile-bootstrap bounds: 4 Monte-Carlo SEs plus one lattice step.

    The SE of a 2.5% quantile estimated from B draws of a ~normal bootstrap distribution with sd s
    is sqrt(q(1-q)/B) / pdf(z_q) * s = 2.67 s / sqrt(B); two independent estimates add in
    quadrature. Binary data put the gap on a lattice of 1/n, so one step is always allowed.
    """
    d = a - b
    s = float(np.std(d, ddof=0)) / math.sqrt(d.size)
    se = 2.67 * s * math.sqrt(1 / ours + 1 / theirs)
    return 4 * se + 1 / d.size


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mcnemar_equals_scipy_binomtest_in_every_scope(seed: int) -> None:
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
            expected = 1.0 if only_a + only_b == 0 else sps.binomtest(only_a, only_a + only_b, 0.5).pvalue
            assert pc.p_value == pytest.approx(expected, abs=1e-12, rel=1e-12)


@pytest.mark.parametrize("seed", [4, 5])
def test_bootstrap_ci_agrees_with_scipy_paired_bootstrap(seed: int) -> None:
    here, base = synthetic(seed)
    cmp = compare_probes(here, base, "base", NEG)
    shared = sorted(set(here) & set(base))
    theirs = 20_000
    a, b = vectors(here, base, "exact", shared)
    lo, hi = scipy_paired_ci(a, b, theirs)
    pc = cmp.overall.checks["exact"]
    tol = mc_tolerance(a, b, RESAMPLES, theirs)
    assert abs(pc.interval.low - lo) <= tol and abs(pc.interval.high - hi) <= tol
    fam = cmp.by_family[0]
    ids = [i for i in shared if here[i].family == fam.label]
    a, b = vectors(here, base, "exact", ids)
    lo, hi = scipy_paired_ci(a, b, theirs)
    tol = mc_tolerance(a, b, SCOPE_RESAMPLES, theirs)
    pc = fam.checks["exact"]
    assert abs(pc.interval.low - lo) <= tol and abs(pc.interval.high - hi) <= tol


def test_the_tolerance_is_tight_enough_to_catch_a_wrong_interval() -> None:
    """The check above must be able to fail: an unpaired bootstrap of the same data is wider."""
    here, base = synthetic(6)
    shared = sorted(set(here) & set(base))
    a, b = vectors(here, base, "exact", shared)
    lo, hi = scipy_paired_ci(a, b, 20_000)
    unpaired = sps.bootstrap(
        (a, b),
        lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        paired=False,
        vectorized=True,
        method="percentile",
        n_resamples=20_000,
        random_state=np.random.default_rng(7),
    ).confidence_interval
    tol = mc_tolerance(a, b, RESAMPLES, 20_000)
    assert abs(unpaired.low - lo) > tol or abs(unpaired.high - hi) > tol


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
    assert pc.p_value == pytest.approx(sps.binomtest(30, 30, 0.5).pvalue, rel=1e-12)
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
