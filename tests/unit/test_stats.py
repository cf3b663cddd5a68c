"""Tests for obs.analysis.stats.

Every function is checked against scipy.stats on the same data, or against a
published worked example.  Deterministic quantities must agree to 1e-9 (1e-12 where
the brief demands it).  Monte-Carlo quantities are compared with a tolerance derived
from their Monte-Carlo standard error (stated at each use), so a failure means a
real discrepancy rather than resampling noise.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from obs.analysis import stats as S

# Published data -----------------------------------------------------------------------

# Lakens (2013), "Calculating and reporting effect sizes ...", Front. Psychol. 4:863,
# hypothetical movie ratings: t(18) = 2.52, p = .022, Cohen's d_s = 1.13.
MOVIE_1 = [9, 7, 8, 9, 8, 9, 9, 10, 9, 9]
MOVIE_2 = [9, 6, 7, 8, 7, 9, 8, 8, 8, 7]


def _diff_means(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _scipy_perm(x: Any, y: Any, n_resamples: int, alternative: str = "two-sided", seed: int = 0) -> Any:
    return sps.permutation_test(
        (np.asarray(x, float), np.asarray(y, float)),
        _diff_means,
        permutation_type="independent",
        vectorized=True,
        n_resamples=n_resamples,
        alternative=alternative,
        rng=seed,
    )


def _quantile_mc_tol(boot_se: float, n_resamples: int, level: float = 0.95, k: float = 5.0) -> float:
    """Tolerance for comparing two independent percentile-bootstrap endpoints.

    The MC standard error of an estimated q-quantile from B draws is
    sqrt(q(1-q)/B) / f(x_q); for a near-normal bootstrap distribution with sd s,
    f(x_q) = phi(z_q)/s.  Two independent estimates differ with sd sqrt(2) times
    that; we allow ``k`` of those.
    """
    q = (1 - level) / 2
    z = sps.norm.ppf(q)
    se_q = math.sqrt(q * (1 - q) / n_resamples) / sps.norm.pdf(z) * boot_se
    return k * math.sqrt(2) * se_q


def _assert_plain(d: dict[str, Any]) -> None:
    """as_dict() must contain only builtins (no numpy scalars) and be JSON-dumpable."""
    for value in d.values():
        if isinstance(value, dict):
            _assert_plain(value)
        else:
            assert value is None or type(value) in (float, int, str, bool), (value, type(value))
    json.dumps(d)


# Result objects -----------------------------------------------------------------------


def test_results_are_frozen_and_json_friendly() -> None:
    iv = S.Interval(0.1, 0.2, 0.95)
    with pytest.raises(AttributeError):
        iv.low = 0.0  # type: ignore[misc]
    assert iv.as_dict() == {"low": 0.1, "high": 0.2, "level": 0.95}
    assert iv.contains(0.15) and not iv.contains(0.3)
    assert iv.excludes_zero() and not S.Interval(-0.1, 0.1, 0.95).excludes_zero()
    assert not S.Interval(math.nan, math.nan, 0.95).contains(0.0)
    assert iv.width == pytest.approx(0.1)

    rng = np.random.default_rng(0)
    a, b = rng.random(50) < 0.6, rng.random(50) < 0.5
    x, y = rng.normal(size=8), rng.normal(size=8)
    for res in (
        S.wilson_interval(3, 10),
        S.mcnemar_exact(3, 9),
        S.paired_bootstrap_diff(a, b, n_resamples=500),
        S.paired_comparison(a, b, n_resamples=500),
        S.permutation_test_diff_means(x, y, n_resamples=500),
        S.bootstrap_diff_means(x, y, n_resamples=500),
        S.fisher_exact_counts(3, 10, 7, 10),
    ):
        _assert_plain(res.as_dict())


def test_test_result_is_not_collected_by_pytest() -> None:
    assert S.TestResult.__test__ is False


# wilson_interval ----------------------------------------------------------------------


@pytest.mark.parametrize("level", [0.90, 0.95, 0.99])
def test_wilson_matches_scipy_grid(level: float) -> None:
    for n in (1, 2, 5, 13, 100, 1524):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            ours = S.wilson_interval(k, n, level)
            ref = sps.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
            assert ours.low == pytest.approx(ref.low, abs=1e-12)
            assert ours.high == pytest.approx(ref.high, abs=1e-12)
            assert ours.level == level


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 100_000), frac=st.floats(0, 1), level=st.floats(0.5, 0.999))
def test_wilson_matches_scipy_random(n: int, frac: float, level: float) -> None:
    k = round(frac * n)
    ours = S.wilson_interval(k, n, level)
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    assert ours.low == pytest.approx(ref.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.high, abs=1e-12)
    assert 0.0 <= ours.low <= k / n <= ours.high <= 1.0


def test_wilson_newcombe_1998_published_values() -> None:
    # Newcombe (1998), Stat. Med. 17:857-872, Table I, method 3 (score/Wilson).
    published = {
        (81, 263): (0.2553, 0.3662),
        (15, 148): (0.0624, 0.1605),
        (0, 20): (0.0000, 0.1611),
        (1, 29): (0.0061, 0.1718),
    }
    for (k, n), (lo, hi) in published.items():
        iv = S.wilson_interval(k, n)
        assert round(iv.low, 4) == lo
        assert round(iv.high, 4) == hi


def test_wilson_edge_cases() -> None:
    empty = S.wilson_interval(0, 0)
    assert math.isnan(empty.low) and math.isnan(empty.high)
    assert S.wilson_interval(5, 5).high == 1.0
    assert S.wilson_interval(0, 5).low == 0.0
    with pytest.raises(ValueError):
        S.wilson_interval(6, 5)
    with pytest.raises(ValueError):
        S.wilson_interval(-1, 5)
    with pytest.raises(ValueError):
        S.wilson_interval(1, 5, level=1.0)


# mcnemar_exact ------------------------------------------------------------------------


def test_mcnemar_matches_binomtest() -> None:
    for b in range(0, 41):
        for c in range(0, 41):
            if b + c == 0:
                continue
            res = S.mcnemar_exact(b, c)
            assert res.p_value == pytest.approx(sps.binomtest(b, b + c, 0.5).pvalue, abs=1e-12)
            assert res.n == b + c and res.statistic == b


def test_mcnemar_large_counts_and_hand_values() -> None:
    # All 5 discordant pairs favour B: p = 2 * 0.5**5.
    assert S.mcnemar_exact(0, 5).p_value == pytest.approx(2 / 32, abs=1e-15)
    assert S.mcnemar_exact(362, 311).p_value == pytest.approx(sps.binomtest(362, 673).pvalue, abs=1e-12)
    assert S.mcnemar_exact(20, 20).p_value == 1.0


def test_mcnemar_no_discordant_pairs() -> None:
    res = S.mcnemar_exact(0, 0)
    assert res.p_value == 1.0 and res.n == 0
    with pytest.raises(ValueError):
        S.mcnemar_exact(-1, 3)


# paired_bootstrap_diff ----------------------------------------------------------------


def _binary_pair(n: int, p_a: float, p_b: float, rho_seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Correlated right/wrong vectors: shared item difficulty plus system noise."""
    rng = np.random.default_rng(rho_seed)
    difficulty = rng.normal(size=n)
    a = difficulty + rng.normal(scale=0.8, size=n) < sps.norm.ppf(p_a) * math.sqrt(1.64)
    b = difficulty + rng.normal(scale=0.8, size=n) < sps.norm.ppf(p_b) * math.sqrt(1.64)
    return a, b


def test_paired_bootstrap_binary_matches_scipy_within_mc_error() -> None:
    a, b = _binary_pair(1524, 0.60, 0.58, 1)
    B = 10_000
    ours = S.paired_bootstrap_diff(a, b, n_resamples=B, seed=11)
    ref = sps.bootstrap(
        (a.astype(float), b.astype(float)),
        _diff_means,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=B,
        rng=12,
    )
    assert ours.estimate == pytest.approx(a.mean() - b.mean(), abs=1e-15)
    # Plus one lattice step: the bootstrap distribution of a binary mean lives on 1/n.
    tol = _quantile_mc_tol(ref.standard_error, B) + 1 / a.size
    assert abs(ours.interval.low - ref.confidence_interval.low) < tol
    assert abs(ours.interval.high - ref.confidence_interval.high) < tol
    # SE of a bootstrap SD from B draws is ~ SD/sqrt(2B) (0.7 %); allow 4 %.
    assert ours.standard_error == pytest.approx(ref.standard_error, rel=0.04)


def test_paired_bootstrap_binary_se_matches_plugin_formula() -> None:
    # For paired binary data the bootstrap variance of the mean difference is the
    # plug-in value (p10 + p01 - (p10 - p01)^2) / n; B = 20,000 gives ~0.5 % MC error.
    a, b = _binary_pair(1524, 0.55, 0.5, 2)
    n = a.size
    p10 = np.mean(a & ~b)
    p01 = np.mean(~a & b)
    expected = math.sqrt((p10 + p01 - (p10 - p01) ** 2) / n)
    res = S.paired_bootstrap_diff(a, b, n_resamples=20_000, seed=5)
    assert res.standard_error == pytest.approx(expected, rel=0.025)


def test_paired_bootstrap_float_matches_scipy_within_mc_error() -> None:
    rng = np.random.default_rng(3)
    a = rng.gamma(2.0, size=300)
    b = a + rng.normal(0.1, 0.5, size=300)
    B = 10_000
    ours = S.paired_bootstrap_diff(a, b, n_resamples=B, seed=1, level=0.9)
    ref = sps.bootstrap(
        (a, b),
        _diff_means,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=B,
        confidence_level=0.9,
        rng=2,
    )
    tol = _quantile_mc_tol(ref.standard_error, B, level=0.9)
    assert abs(ours.interval.low - ref.confidence_interval.low) < tol
    assert abs(ours.interval.high - ref.confidence_interval.high) < tol
    assert ours.interval.level == 0.9


def test_paired_bootstrap_reproducible_and_seed_sensitive() -> None:
    a, b = _binary_pair(1524, 0.6, 0.6, 4)
    r1 = S.paired_bootstrap_diff(a, b, seed=123)
    r2 = S.paired_bootstrap_diff(a, b, seed=123)
    r3 = S.paired_bootstrap_diff(a, b, seed=124)
    assert r1 == r2
    assert r1.interval != r3.interval
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=40), rng.normal(size=40)
    assert S.paired_bootstrap_diff(x, y, seed=9) == S.paired_bootstrap_diff(x, y, seed=9)


def test_paired_bootstrap_is_fast_on_1524_binary_items() -> None:
    a, b = _binary_pair(1524, 0.60, 0.58, 5)
    S.paired_bootstrap_diff(a, b, n_resamples=10_000, seed=0)  # warm-up
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        S.paired_bootstrap_diff(a, b, n_resamples=10_000, seed=0)
        best = min(best, time.perf_counter() - t0)
    assert best < 0.2


def test_paired_bootstrap_edge_cases() -> None:
    empty = S.paired_bootstrap_diff([], [])
    assert math.isnan(empty.estimate) and math.isnan(empty.interval.low) and empty.n == 0
    one = S.paired_bootstrap_diff([1.0], [0.0])
    assert one.estimate == 1.0 and one.interval.low == one.interval.high == 1.0
    same = S.paired_bootstrap_diff([True] * 30, [True] * 30)
    assert same.estimate == 0.0 and same.interval.low == same.interval.high == 0.0
    assert same.standard_error == 0.0
    with pytest.raises(ValueError):
        S.paired_bootstrap_diff([1, 0], [1])
    with pytest.raises(ValueError):
        S.paired_bootstrap_diff([1.0, math.nan], [1.0, 0.0])
    with pytest.raises(ValueError):
        S.paired_bootstrap_diff([1.0], [0.0], n_resamples=0)


# paired_comparison --------------------------------------------------------------------


def test_paired_comparison_fields_agree_with_components() -> None:
    a, b = _binary_pair(1524, 0.62, 0.60, 6)
    res = S.paired_comparison(a, b, n_resamples=5_000, seed=7)
    assert res.n == 1524
    assert res.both_correct + res.only_a + res.only_b + res.both_wrong == res.n
    assert res.only_a == int(np.sum(a & ~b)) and res.only_b == int(np.sum(~a & b))
    assert res.rate_a == pytest.approx(a.mean(), abs=1e-15)
    assert res.rate_b == pytest.approx(b.mean(), abs=1e-15)
    assert res.delta == pytest.approx(a.mean() - b.mean(), abs=1e-15)
    assert res.p_value == pytest.approx(sps.binomtest(res.only_a, res.only_a + res.only_b).pvalue, abs=1e-12)
    boot = S.paired_bootstrap_diff(a, b, n_resamples=5_000, seed=7)
    assert res.interval == boot.interval
    assert res.recommendation == S.recommendation(res.p_value, res.delta, res.interval)
    _assert_plain(res.as_dict())


def test_paired_comparison_recommendations() -> None:
    rng = np.random.default_rng(8)
    base = rng.random(1524) < 0.6
    better = base | (rng.random(1524) < 0.15)  # strictly dominates: many A-only wins
    up = S.paired_comparison(better, base, n_resamples=2_000)
    assert up.recommendation == S.IMPROVEMENT and up.only_b == 0
    down = S.paired_comparison(base, better, n_resamples=2_000)
    assert down.recommendation == S.DEGRADATION
    # For an error indicator, more 1s is worse.
    err = S.paired_comparison(better, base, n_resamples=2_000, higher_is_better=False)
    assert err.recommendation == S.DEGRADATION


def test_paired_comparison_edge_cases() -> None:
    same = S.paired_comparison([True, False, True], [True, False, True])
    assert same.p_value == 1.0 and same.delta == 0.0
    assert same.recommendation == S.INSUFFICIENT
    empty = S.paired_comparison([], [])
    assert empty.n == 0 and math.isnan(empty.rate_a) and math.isnan(empty.delta)
    assert empty.p_value == 1.0 and empty.recommendation == S.INSUFFICIENT
    _assert_plain(empty.as_dict())
    with pytest.raises(ValueError):
        S.paired_comparison([0.5, 1.0], [1.0, 0.0])
    with pytest.raises(ValueError):
        S.paired_comparison([1, 0, 1], [1, 0])


# permutation_test_diff_means ----------------------------------------------------------


EXACT_CASES = [
    # (nx, ny, n_resamples): C(nx+ny, nx) <= n_resamples, so both sides enumerate.
    (5, 6, 10_000),
    (8, 8, 20_000),
    (3, 9, 10_000),
    (2, 4, 10_000),
]


@pytest.mark.parametrize(("nx", "ny", "n_resamples"), EXACT_CASES)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_permutation_exact_matches_scipy(nx: int, ny: int, n_resamples: int, alternative: str) -> None:
    rng = np.random.default_rng(nx * 100 + ny)
    x = rng.normal(0.55, 0.03, size=nx)
    y = rng.normal(0.52, 0.03, size=ny)
    ours = S.permutation_test_diff_means(x, y, n_resamples=n_resamples, alternative=alternative)  # type: ignore[arg-type]
    ref = _scipy_perm(x, y, n_resamples, alternative)
    assert ours.exact and ours.n_resamples == math.comb(nx + ny, nx)
    assert ours.p_value == pytest.approx(float(ref.pvalue), abs=1e-9)
    assert ours.statistic == pytest.approx(float(ref.statistic), abs=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_permutation_exact_matches_scipy_with_ties(alternative: str) -> None:
    # Integer-valued metrics (e.g. solved-problem counts) create many tied splits.
    x = [12, 15, 15, 11, 14, 13, 15, 12]
    y = [11, 12, 13, 11, 12, 14, 11, 12]
    ours = S.permutation_test_diff_means(x, y, n_resamples=20_000, alternative=alternative)  # type: ignore[arg-type]
    ref = _scipy_perm(x, y, 20_000, alternative)
    assert ours.exact
    assert ours.p_value == pytest.approx(float(ref.pvalue), abs=1e-9)
    # Shifting / rescaling the data must not change the tie structure.
    shifted = S.permutation_test_diff_means(
        [v * 0.1 + 0.3 for v in x],
        [v * 0.1 + 0.3 for v in y],
        n_resamples=20_000,
        alternative=alternative,  # type: ignore[arg-type]
    )
    assert shifted.p_value == pytest.approx(ours.p_value, abs=1e-12)


def test_permutation_exact_hand_example() -> None:
    # x = [1, 2], y = [3, 4]: the 6 splits give differences -2, -1, 0, 0, 1, 2;
    # observed -2 -> p_less = 1/6, p_greater = 1, two-sided 2/6.
    res = S.permutation_test_diff_means([1, 2], [3, 4])
    assert res.statistic == -2.0
    assert res.p_value == pytest.approx(1 / 3, abs=1e-15)
    assert S.permutation_test_diff_means([1, 2], [3, 4], alternative="less").p_value == pytest.approx(1 / 6)
    assert S.permutation_test_diff_means([1, 2], [3, 4], alternative="greater").p_value == 1.0


@pytest.mark.parametrize(("nx", "ny", "shift"), [(8, 8, 0.02), (8, 8, 0.0), (20, 25, 0.01)])
def test_permutation_monte_carlo_matches_scipy_within_mc_error(nx: int, ny: int, shift: float) -> None:
    rng = np.random.default_rng(nx + ny)
    x = rng.normal(0.5 + shift, 0.02, size=nx)
    y = rng.normal(0.5, 0.02, size=ny)
    B = 10_000  # C(16, 8) = 12,870 > B, so both use random splits
    ours = S.permutation_test_diff_means(x, y, n_resamples=B, seed=1)
    assert not ours.exact and ours.n_resamples == B
    # Compare with scipy's *exact* p where feasible, otherwise its MC estimate.
    if math.comb(nx + ny, nx) <= 20_000:
        ref_p = float(_scipy_perm(x, y, 20_000).pvalue)
        sd = 2 * math.sqrt(max(ref_p / 2 * (1 - ref_p / 2), 1e-4) / B)
    else:
        ref_p = float(_scipy_perm(x, y, B, seed=2).pvalue)
        sd = 2 * math.sqrt(2 * max(ref_p / 2 * (1 - ref_p / 2), 1e-4) / B)
    # A two-sided MC p is 2 * (a binomial proportion of B); allow 5 SDs.
    assert abs(ours.p_value - ref_p) < 5 * sd


def test_permutation_reproducible_and_seed_sensitive() -> None:
    rng = np.random.default_rng(10)
    x, y = rng.normal(size=8), rng.normal(0.8, size=8)
    r1 = S.permutation_test_diff_means(x, y, seed=3)
    assert r1 == S.permutation_test_diff_means(x, y, seed=3)
    assert r1.p_value != S.permutation_test_diff_means(x, y, seed=4).p_value
    # Exact enumeration does not depend on the seed at all.
    e1 = S.permutation_test_diff_means(x, y, n_resamples=20_000, seed=3)
    e2 = S.permutation_test_diff_means(x, y, n_resamples=20_000, seed=4)
    assert e1 == e2 and e1.exact


def test_permutation_edge_cases() -> None:
    for n_resamples in (20_000, 1_000):  # exact and Monte-Carlo
        same = S.permutation_test_diff_means([0.3] * 8, [0.3] * 8, n_resamples=n_resamples)
        assert same.p_value == 1.0 and same.statistic == 0.0
    empty = S.permutation_test_diff_means([], [1.0, 2.0])
    assert math.isnan(empty.statistic) and math.isnan(empty.p_value)
    one = S.permutation_test_diff_means([1.0], [2.0])
    assert one.exact and one.p_value == 1.0 and one.n_resamples == 2
    with pytest.raises(ValueError):
        S.permutation_test_diff_means([1.0], [2.0], alternative="bigger")  # type: ignore[arg-type]


# bootstrap_diff_means -----------------------------------------------------------------


@pytest.mark.parametrize(("nx", "ny"), [(8, 8), (50, 60)])
def test_bootstrap_diff_means_matches_scipy_within_mc_error(nx: int, ny: int) -> None:
    rng = np.random.default_rng(nx)
    x = rng.normal(0.55, 0.04, size=nx)
    y = rng.exponential(0.04, size=ny) + 0.48
    B = 10_000
    ours = S.bootstrap_diff_means(x, y, n_resamples=B, seed=3)
    ref = sps.bootstrap((x, y), _diff_means, vectorized=True, method="percentile", n_resamples=B, rng=4)
    assert ours.estimate == pytest.approx(x.mean() - y.mean(), abs=1e-15)
    tol = _quantile_mc_tol(ref.standard_error, B)
    assert abs(ours.interval.low - ref.confidence_interval.low) < tol
    assert abs(ours.interval.high - ref.confidence_interval.high) < tol
    # Plug-in SE sqrt(var_x/nx + var_y/ny) (ddof=0); SD MC error ~0.7 % at B=10k.
    plugin = math.sqrt(x.var() / nx + y.var() / ny)
    assert ours.standard_error == pytest.approx(plugin, rel=0.04)


def test_bootstrap_diff_means_binary_path_matches_scipy() -> None:
    # Large binary samples take the multinomial path; check it against scipy too.
    rng = np.random.default_rng(21)
    x = (rng.random(1024) < 0.334).astype(float)
    y = (rng.random(1024) < 0.291).astype(float)
    B = 10_000
    ours = S.bootstrap_diff_means(x, y, n_resamples=B, seed=3)
    ref = sps.bootstrap((x, y), _diff_means, vectorized=True, method="percentile", n_resamples=B, rng=4)
    tol = _quantile_mc_tol(ref.standard_error, B) + 2 / 1024
    assert abs(ours.interval.low - ref.confidence_interval.low) < tol
    assert abs(ours.interval.high - ref.confidence_interval.high) < tol


def test_bootstrap_diff_means_reproducible_and_edge_cases() -> None:
    x, y = [0.5, 0.52, 0.49, 0.55], [0.47, 0.5, 0.46]
    assert S.bootstrap_diff_means(x, y, seed=1) == S.bootstrap_diff_means(x, y, seed=1)
    assert S.bootstrap_diff_means(x, y, seed=1).interval != S.bootstrap_diff_means(x, y, seed=2).interval
    empty = S.bootstrap_diff_means([], y)
    assert math.isnan(empty.estimate) and math.isnan(empty.interval.high)
    const = S.bootstrap_diff_means([0.5] * 8, [0.4] * 8)
    assert const.interval.low == pytest.approx(0.1) and const.interval.high == pytest.approx(0.1)
    single = S.bootstrap_diff_means([1.0], [0.0])
    assert single.estimate == 1.0 and single.interval.low == single.interval.high == 1.0


# fisher_exact_counts ------------------------------------------------------------------


def test_fisher_matches_scipy_on_grid() -> None:
    for n_a, n_b in ((5, 5), (7, 12), (20, 20)):
        for s_a in range(n_a + 1):
            for s_b in range(n_b + 1):
                table = [[s_a, n_a - s_a], [s_b, n_b - s_b]]
                for alt in ("two-sided", "greater", "less"):
                    ours = S.fisher_exact_counts(s_a, n_a, s_b, n_b, alternative=alt)
                    ref = sps.fisher_exact(table, alternative=alt)
                    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)
                    if math.isnan(ref.statistic):
                        assert math.isnan(ours.statistic)
                    else:
                        assert ours.statistic == ref.statistic


@settings(max_examples=100, deadline=None)
@given(
    n_a=st.integers(1, 3000),
    n_b=st.integers(1, 3000),
    fa=st.floats(0, 1),
    fb=st.floats(0, 1),
)
def test_fisher_matches_scipy_random(n_a: int, n_b: int, fa: float, fb: float) -> None:
    s_a, s_b = round(fa * n_a), round(fb * n_b)
    ours = S.fisher_exact_counts(s_a, n_a, s_b, n_b)
    ref = sps.fisher_exact([[s_a, n_a - s_a], [s_b, n_b - s_b]])
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_fisher_published_examples() -> None:
    # Fisher's lady tasting tea (Design of Experiments, 1935): 3 of 4 milk-first cups
    # identified; one-sided p = 17/70, two-sided p = 34/70.
    assert S.fisher_exact_counts(3, 4, 1, 4, alternative="greater").p_value == pytest.approx(17 / 70, abs=1e-12)
    assert S.fisher_exact_counts(3, 4, 1, 4).p_value == pytest.approx(34 / 70, abs=1e-12)
    # scipy docstring example [[6, 2], [1, 4]]: two-sided 0.10256410256410257.
    assert S.fisher_exact_counts(6, 8, 1, 5).p_value == pytest.approx(0.10256410256410257, abs=1e-12)
    # The campaign guide's example (342/1024 vs 298/1024).
    res = S.fisher_exact_counts(342, 1024, 298, 1024)
    assert res.statistic == pytest.approx((342 * 726) / (682 * 298), rel=1e-15)
    assert res.n == 2048


def test_fisher_edge_cases() -> None:
    res = S.fisher_exact_counts(0, 0, 3, 5)
    assert math.isnan(res.statistic) and res.p_value == 1.0
    assert math.isinf(S.fisher_exact_counts(5, 5, 2, 5).statistic)
    with pytest.raises(ValueError):
        S.fisher_exact_counts(6, 5, 2, 5)


# cohens_d -----------------------------------------------------------------------------


def test_cohens_d_lakens_2013() -> None:
    d = S.cohens_d(MOVIE_1, MOVIE_2)
    assert round(d, 2) == 1.13
    # Hand computation: means 8.7 / 7.7, sums of squares 6.1 / 8.1, df 18.
    assert d == pytest.approx(1.0 / math.sqrt((6.1 + 8.1) / 18), abs=1e-12)


def test_cohens_d_equals_scipy_t_scaled() -> None:
    # Student's t with pooled variance: d = t * sqrt(1/nx + 1/ny).
    rng = np.random.default_rng(12)
    for nx, ny in ((8, 8), (3, 11), (40, 25)):
        x, y = rng.normal(1, 2, nx), rng.normal(0, 2, ny)
        t = sps.ttest_ind(x, y).statistic
        assert S.cohens_d(x, y) == pytest.approx(t * math.sqrt(1 / nx + 1 / ny), abs=1e-12)
    t = sps.ttest_ind(MOVIE_1, MOVIE_2).statistic
    assert round(t, 2) == 2.52


def test_cohens_d_edge_cases() -> None:
    assert math.isnan(S.cohens_d([], [1.0, 2.0]))
    assert math.isnan(S.cohens_d([1.0], [2.0]))  # no degrees of freedom
    assert math.isfinite(S.cohens_d([1.0], [2.0, 3.0]))
    assert S.cohens_d([0.6] * 8, [0.5] * 8) == math.inf
    assert S.cohens_d([0.5] * 8, [0.6] * 8) == -math.inf
    assert math.isnan(S.cohens_d([0.5] * 8, [0.5] * 8))
    assert S.cohens_d([1.0, 2.0], [1.0, 2.0]) == 0.0


# sample sizes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("d", "alpha", "power", "n"),
    [
        # Cohen (1988), Table 2.4.1, two-tailed alpha = .05.
        (0.2, 0.05, 0.80, 394),
        (0.5, 0.05, 0.80, 64),
        (0.8, 0.05, 0.80, 26),
        (0.2, 0.05, 0.90, 527),
        (0.5, 0.05, 0.90, 86),
        (0.8, 0.05, 0.90, 34),
        (0.5, 0.01, 0.80, 96),
        # G*Power's default example: d = 0.5, power .95 -> total 210.
        (0.5, 0.05, 0.95, 105),
    ],
)
def test_sample_size_for_power_published_tables(d: float, alpha: float, power: float, n: int) -> None:
    assert S.sample_size_for_power(d, alpha=alpha, power=power) == n
    assert S.sample_size_for_power(-d, alpha=alpha, power=power) == n


def _nct_power(n: int, d: float, alpha: float) -> float:
    df = 2 * n - 2
    t = sps.t.ppf(1 - alpha / 2, df)
    nc = d * math.sqrt(n / 2)
    return float(sps.nct.sf(t, df, nc) + sps.nct.cdf(-t, df, nc))


@pytest.mark.parametrize("d", [0.05, 0.3, 0.7, 1.0, 1.5, 2.0, 3.0])
def test_sample_size_for_power_is_minimal(d: float) -> None:
    n = S.sample_size_for_power(d)
    assert n is not None
    assert _nct_power(n, d, 0.05) >= 0.8
    if n > 2:
        assert _nct_power(n - 1, d, 0.05) < 0.8


def test_sample_size_for_power_edge_cases() -> None:
    assert S.sample_size_for_power(0.0) is None
    assert S.sample_size_for_power(math.nan) is None
    assert S.sample_size_for_power(50.0) == 2
    assert S.sample_size_for_power(math.inf) == 2
    assert S.sample_size_for_power(1e-4) is not None
    with pytest.raises(ValueError):
        S.sample_size_for_power(0.5, power=1.0)


def test_sample_size_two_proportions_published_and_formula() -> None:
    # JMP 13.2 documentation, "Two Sample Proportions": p1 = .08, p2 = .06, alpha .05
    # two-sided, power .8 -> 2554 per group.
    assert S.sample_size_two_proportions(0.08, 0.06) == 2554
    assert S.sample_size_two_proportions(0.06, 0.08) == 2554
    # Direct evaluation of the Fleiss (no continuity correction) formula.
    for p1, p2, alpha, power in ((0.60, 0.62, 0.05, 0.8), (0.334, 0.291, 0.05, 0.9), (0.05, 0.10, 0.01, 0.8)):
        za, zb = sps.norm.ppf(1 - alpha / 2), sps.norm.ppf(power)
        pb = (p1 + p2) / 2
        n = (za * math.sqrt(2 * pb * (1 - pb)) + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) ** 2 / (p1 - p2) ** 2
        assert S.sample_size_two_proportions(p1, p2, alpha, power) == math.ceil(n)


@pytest.mark.parametrize(("p1", "p2"), [(0.6, 0.62), (0.1, 0.113), (0.5, 0.7), (0.3, 0.5)])
def test_sample_size_two_proportions_is_minimal(p1: float, p2: float) -> None:
    # Normal-approximation power with pooled-null / unpooled-alternative variances.
    def power(n: int) -> float:
        pb = (p1 + p2) / 2
        se0 = math.sqrt(2 * pb * (1 - pb) / n)
        se1 = math.sqrt((p1 * (1 - p1) + p2 * (1 - p2)) / n)
        return float(sps.norm.cdf((abs(p1 - p2) - 1.959963984540054 * se0) / se1))

    n = S.sample_size_two_proportions(p1, p2)
    assert n is not None
    assert power(n) >= 0.8 - 1e-9 and power(n - 1) < 0.8


def test_sample_size_two_proportions_edge_cases() -> None:
    assert S.sample_size_two_proportions(0.5, 0.5) is None
    assert S.sample_size_two_proportions(0.0, 1.0) == 2  # (1.96 * sqrt(0.5))^2 = 1.92
    with pytest.raises(ValueError):
        S.sample_size_two_proportions(1.2, 0.5)


# holm_adjust --------------------------------------------------------------------------


def test_holm_published_example() -> None:
    # Wikipedia "Holm–Bonferroni method" example: p = .01, .04, .03, .005 at alpha .05
    # rejects H1 and H4 only; R p.adjust(..., "holm") gives .03 .06 .06 .02.
    adj = S.holm_adjust([0.01, 0.04, 0.03, 0.005])
    assert adj == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert [p < 0.05 for p in adj] == [True, False, False, True]


def test_holm_hand_example_with_capping_and_ties() -> None:
    # sorted .001 .02 .02 .4 -> 4*.001=.004, 3*.02=.06, 2*.02=.04 -> max .06, 1*.4=.4
    assert S.holm_adjust([0.02, 0.4, 0.001, 0.02]) == pytest.approx([0.06, 0.4, 0.004, 0.06], abs=1e-15)
    assert S.holm_adjust([0.5, 0.6]) == [1.0, 1.0]
    assert S.holm_adjust([0.03]) == [0.03]


def _holm_reference(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_properties(p: list[float]) -> None:
    adj = S.holm_adjust(p)
    assert adj == pytest.approx(_holm_reference(p), abs=1e-15)
    assert all(a >= raw - 1e-15 and a <= 1.0 for a, raw in zip(adj, p, strict=True))
    # Monotone: a smaller raw p never gets a larger adjusted p.
    for i in range(len(p)):
        for j in range(len(p)):
            if p[i] < p[j]:
                assert adj[i] <= adj[j]
    # Holm is never more conservative than Bonferroni.
    assert all(a <= min(1.0, len(p) * raw) + 1e-15 for a, raw in zip(adj, p, strict=True))


def test_holm_edge_cases() -> None:
    assert S.holm_adjust([]) == []
    out = S.holm_adjust([0.01, math.nan, 0.04])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    assert all(type(v) is float for v in out)
    with pytest.raises(ValueError):
        S.holm_adjust([0.5, 1.5])


# recommendation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "delta", "ci", "hib", "expected"),
    [
        (0.01, 0.03, (0.01, 0.05), True, S.IMPROVEMENT),
        (0.01, -0.03, (-0.05, -0.01), True, S.DEGRADATION),
        (0.01, 0.03, (-0.01, 0.05), True, S.INSUFFICIENT),  # CI crosses 0
        (0.20, 0.03, (0.01, 0.05), True, S.INSUFFICIENT),  # not significant
        (0.05, 0.03, (0.01, 0.05), True, S.INSUFFICIENT),  # p == alpha is not < alpha
        (0.01, 0.03, (-0.05, -0.01), True, S.INSUFFICIENT),  # CI disagrees with delta
        (0.01, 0.0, (0.0, 0.0), True, S.INSUFFICIENT),
        (0.01, -0.03, (-0.05, -0.01), False, S.IMPROVEMENT),  # lower loss is better
        (0.01, 0.03, (0.01, 0.05), False, S.DEGRADATION),
        (math.nan, 0.03, (0.01, 0.05), True, S.INSUFFICIENT),
        (0.01, 0.03, (math.nan, math.nan), True, S.INSUFFICIENT),
    ],
)
def test_recommendation_table(p: float, delta: float, ci: tuple[float, float], hib: bool, expected: str) -> None:
    assert S.recommendation(p, delta, ci, higher_is_better=hib) == expected
    assert S.recommendation(p, delta, S.Interval(ci[0], ci[1], 0.95), higher_is_better=hib) == expected


def test_recommendation_respects_alpha() -> None:
    assert S.recommendation(0.03, 0.1, (0.05, 0.2), alpha=0.01) == S.INSUFFICIENT
    assert S.recommendation(0.03, 0.1, (0.05, 0.2), alpha=0.05) == S.IMPROVEMENT


# End-to-end simulation ----------------------------------------------------------------


def _campaign_verdicts(effect_d: float, reps: int = 200, seeds: int = 8) -> list[S.Recommendation]:
    """Simulate `reps` campaigns of 2 conditions x `seeds` seeds and label each.

    Per-seed final correct_rate ~ N(0.45, 0.03); the candidate is shifted by
    effect_d standard deviations.  Fewer resamples (2,000) keep this fast; the
    verdict only needs p relative to 0.05, where MC error is ~0.005.
    """
    rng = np.random.default_rng(20240601 + int(effect_d * 100))
    sd = 0.03
    verdicts: list[S.Recommendation] = []
    for rep in range(reps):
        base = rng.normal(0.45, sd, size=seeds)
        cand = rng.normal(0.45 + effect_d * sd, sd, size=seeds)
        test = S.permutation_test_diff_means(cand, base, n_resamples=2_000, seed=rep)
        ci = S.bootstrap_diff_means(cand, base, n_resamples=2_000, seed=rep)
        verdicts.append(S.recommendation(test.p_value, ci.estimate, ci.interval))
    return verdicts


def test_simulation_null_campaigns_are_mostly_insufficient() -> None:
    verdicts = _campaign_verdicts(0.0)
    # Under H0 about alpha = 5 % should be flagged (either direction).
    assert verdicts.count(S.INSUFFICIENT) / len(verdicts) >= 0.90


def test_simulation_large_effect_is_detected() -> None:
    verdicts = _campaign_verdicts(2.0)
    # 8 vs 8 at d = 2 has ~95 % power for a two-sided test at alpha = .05.
    assert verdicts.count(S.IMPROVEMENT) / len(verdicts) >= 0.90
    assert S.DEGRADATION not in verdicts
