"""Tests for obs.analysis.stats.

Every function is checked against scipy.stats or statsmodels on the same data, against a published
worked example, or against an independent computation (Tango's interval against a numerical
constrained-likelihood inversion written here, not the closed-form root obs uses). Deterministic
quantities agree to 1e-9 or better. Nothing here resamples.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import TTestIndPower
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

from obs.analysis import stats as S

# Lakens (2013), "Calculating and reporting effect sizes ...", Front. Psychol. 4:863,
# hypothetical movie ratings: t(18) = 2.52, p = .022, Cohen's d_s = 1.13, Hedges' g_s = 1.08.
MOVIE_1 = [9, 7, 8, 9, 8, 9, 9, 10, 9, 9]
MOVIE_2 = [9, 6, 7, 8, 7, 9, 8, 8, 8, 7]


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
        S.score_test(3, 9, 40),
        S.paired_comparison(a, b),
        S.paired_means(a.astype(float), b.astype(float)),
        S.welch(x, y),
        S.welch([1.0], [2.0]),
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


# paired items: Tango's score interval and the score (McNemar) test --------------------


def _z_by_constrained_ml(a: int, b: int, c: int, d: int, delta: float) -> float:
    """Tango's statistic computed the long way: maximise the multinomial likelihood numerically under
    p12 - p21 = delta (Nelder-Mead from several starts), then plug the constrained p21 into the
    variance. Independent of obs's closed-form root."""
    n = a + b + c + d
    counts = np.array([a, b, c, d], dtype=float)

    def nll(x: np.ndarray) -> float:
        p11, p21 = x
        probs = np.array([p11, p21 + delta, p21, 1 - p11 - 2 * p21 - delta])
        if np.any(probs <= 0):
            return 1e18
        return float(-np.sum(counts * np.log(probs)))

    best = None
    for start in ((0.2, 0.1), (0.5, 0.05), (0.05, 0.3)):
        res = optimize.minimize(nll, start, method="Nelder-Mead", options={"xatol": 1e-13, "fatol": 1e-13})
        if best is None or res.fun < best.fun:
            best = res
    assert best is not None
    p21 = best.x[1]
    return float((b - c - n * delta) / math.sqrt(n * (2 * p21 + delta * (1 - delta))))


@pytest.mark.parametrize(
    "table",
    [
        (1, 1, 7, 12),  # Bentur et al. 2009 (airway hyper-responsiveness), Fagerland et al. 2014
        (59, 6, 16, 80),  # Cavo et al. 2012 (complete response), Fagerland et al. 2014
        (10, 3, 1, 6),
        (40, 12, 2, 46),
        (8, 0, 4, 20),
    ],
)
def test_tango_statistic_equals_constrained_maximum_likelihood(table: tuple[int, int, int, int]) -> None:
    a, b, c, d = table
    n = a + b + c + d
    for delta in (-0.3, -0.1, -0.02, 0.05, 0.2):
        if (delta < 0 and c < 1) or (delta > 0 and b < 1):
            continue
        assert float(S._tango_z(b, c, n, delta)) == pytest.approx(_z_by_constrained_ml(a, b, c, d, delta), abs=1e-6)


def test_tango_interval_endpoints_are_where_the_test_stops_rejecting() -> None:
    # the published examples' tables, and the statistic evaluated at obs's endpoints
    for b, c, n in ((1, 7, 21), (6, 16, 161), (12, 2, 50)):
        iv = S.tango_interval(b, c, n)
        assert float(S._tango_z(b, c, n, iv.low)) == pytest.approx(1.959963984540054, abs=1e-9)
        assert float(S._tango_z(b, c, n, iv.high)) == pytest.approx(-1.959963984540054, abs=1e-9)
        assert iv.low < (b - c) / n < iv.high
    # pinned digits (verified above against the constrained-likelihood statistic)
    bentur = S.tango_interval(1, 7, 21)
    assert (round(bentur.low, 4), round(bentur.high, 4)) == (-0.5172, -0.0260)
    cavo = S.tango_interval(6, 16, 161)
    assert (round(cavo.low, 4), round(cavo.high, 4)) == (-0.1240, -0.0054)


def test_score_test_at_zero_is_mcnemar_without_continuity_correction() -> None:
    for b, c, both, neither in ((1, 7, 1, 12), (6, 16, 59, 80), (3, 0, 10, 7), (20, 25, 5, 9), (0, 5, 0, 0)):
        n = b + c + both + neither
        ref = mcnemar([[both, b], [c, neither]], exact=False, correction=False)
        ours = S.score_test(b, c, n)
        assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)
        assert ours.statistic**2 == pytest.approx(ref.statistic, abs=1e-9)
    assert S.score_test(0, 0, 20).p_value == 1.0
    with pytest.raises(ValueError):
        S.score_test(5, 6, 10)


def test_tango_interval_and_test_are_duals() -> None:
    # the interval excludes 0 exactly when the two-sided test rejects, on every small table
    for n in (5, 20, 32, 160):
        for b in range(0, min(n, 20) + 1):
            for c in range(0, min(n - b, 20) + 1):
                iv = S.tango_interval(b, c, n)
                assert iv.excludes_zero() == (S.score_test(b, c, n).p_value < 0.05), (n, b, c)
                assert iv.low < iv.high  # never zero width
                assert -1.0 <= iv.low <= (b - c) / n <= iv.high <= 1.0


def test_tango_interval_edges() -> None:
    none_disagree = S.tango_interval(0, 0, 32)
    assert none_disagree.low == pytest.approx(-none_disagree.high) and none_disagree.width > 0.1
    assert S.tango_interval(20, 0, 20).high == 1.0 and S.tango_interval(0, 20, 20).low == -1.0
    lows, highs = S.tango_intervals([0, 3, 5], [0, 1, 9], [0, 40, 60])
    assert math.isnan(lows[0]) and math.isnan(highs[0])
    single = S.tango_interval(3, 1, 40)
    assert (lows[1], highs[1]) == (single.low, single.high)


def test_one_sided_score_test_against_a_margin() -> None:
    # "worse by more than 2 pp": z at delta0 = -0.02, lower tail
    for a, b, c, d in ((10, 0, 9, 13), (40, 2, 6, 112)):
        n = a + b + c + d
        p = float(S.score_tests([b], [c], [n], -0.02, "less")[0])
        z = _z_by_constrained_ml(a, b, c, d, -0.02)
        assert p == pytest.approx(sps.norm.cdf(z), abs=1e-6)
        assert float(S.score_tests([b], [c], [n], -0.02, "greater")[0]) == pytest.approx(1 - p, abs=1e-12)


def test_paired_comparison_counts_rates_and_method() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.random(160) < 0.7, rng.random(160) < 0.6
    pc = S.paired_comparison(a, b)
    assert pc.only_a == int(np.sum(a & ~b)) and pc.only_b == int(np.sum(~a & b))
    assert pc.n == 160 and pc.delta == pytest.approx(a.mean() - b.mean())
    assert pc.p_value == S.score_test(pc.only_a, pc.only_b, 160).p_value
    assert pc.interval == S.tango_interval(pc.only_a, pc.only_b, 160)
    batch = S.paired_comparisons([(a, b), (b, a)], higher_is_better=[True, False])
    assert batch[0] == pc
    assert batch[1].delta == -pc.delta and batch[1].p_value == pc.p_value
    empty = S.paired_comparison([], [])
    assert math.isnan(empty.delta) and math.isnan(empty.interval.low) and empty.recommendation == S.INSUFFICIENT
    with pytest.raises(ValueError):
        S.paired_comparison([1, 0], [1])


def test_paired_means_reduces_to_the_binary_comparison() -> None:
    rng = np.random.default_rng(7)
    a, b = (rng.random(60) < 0.6).astype(float), (rng.random(60) < 0.5).astype(float)
    pm, pc = S.paired_means(a, b), S.paired_comparison(a, b)
    assert pm.design_effect == 1.0
    assert pm.interval.low == pytest.approx(pc.interval.low, abs=1e-15)
    assert pm.interval.high == pytest.approx(pc.interval.high, abs=1e-15)
    assert pm.p_value == pytest.approx(pc.p_value, abs=1e-15)


def test_paired_means_of_fractional_scores_is_narrower_and_centered() -> None:
    rng = np.random.default_rng(8)
    theta = rng.beta(1, 1, 100)
    a = rng.binomial(10, np.clip(theta + 0.1, 0, 1)) / 10
    b = rng.binomial(10, theta) / 10
    pm = S.paired_means(a, b, max_samples=10)
    assert 0.1 <= pm.design_effect < 1.0
    assert pm.interval.low < pm.delta < pm.interval.high
    pos, neg = round(float(np.sum(np.maximum(a - b, 0)))), round(float(np.sum(np.maximum(b - a, 0))))
    binary_width = S.tango_interval(pos, neg, 100).width
    assert pm.interval.width < binary_width


# paired_items_needed (Connor 1987) ----------------------------------------------------


def test_paired_items_needed_is_connor_formula() -> None:
    for psi, delta, alpha, power in ((0.2, 0.1, 0.05, 0.8), (0.1, 0.04, 0.05, 0.8), (0.3, 0.05, 0.01, 0.9)):
        za, zb = sps.norm.ppf(1 - alpha / 2), sps.norm.ppf(power)
        n = (za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2
        assert S.paired_items_needed(psi, delta, alpha, power) == math.ceil(n)
        assert S.paired_items_needed(psi, -delta, alpha, power) == math.ceil(n)
    # a paired design needs far fewer items than two independent groups at the same rates (64 % vs 60 %:
    # Fleiss's two-proportion formula asks for over 2,000 per group)
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    independent = (za * math.sqrt(2 * 0.62 * 0.38) + zb * math.sqrt(0.64 * 0.36 + 0.6 * 0.4)) ** 2 / 0.04**2
    assert S.paired_items_needed(0.1, 0.04) < independent / 4
    assert S.paired_items_needed(0.2, 0.0) is None
    with pytest.raises(ValueError):
        S.paired_items_needed(0.05, 0.1)


# seeds: Welch's t-test and its interval -----------------------------------------------


@pytest.mark.parametrize(("nx", "ny"), [(2, 2), (3, 3), (3, 5), (5, 5), (8, 8), (10, 4)])
def test_welch_matches_scipy_and_statsmodels(nx: int, ny: int) -> None:
    rng = np.random.default_rng(nx * 100 + ny)
    x, y = rng.normal(0.5, 0.05, nx), rng.normal(0.45, 0.09, ny)
    ours = S.welch(x, y)
    ref = sps.ttest_ind(x, y, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert ours.interval is not None and ours.p_value is not None
    assert ours.t == pytest.approx(ref.statistic, abs=1e-12)
    if nx != ny:
        # unequal seed counts: Welch's statistic with Hsu's conservative df = min(n) - 1 (issue 28)
        df = min(nx, ny) - 1
        assert ours.df == df and ours.df < ref.df
        assert ours.p_value == pytest.approx(2 * sps.t.sf(abs(ref.statistic), df), abs=1e-12)
        half = sps.t.ppf(0.975, df) * ours.se
        assert (ours.interval.low, ours.interval.high) == pytest.approx((ours.estimate - half, ours.estimate + half))
        assert ours.interval.excludes_zero() == (ours.p_value < 0.05)
        return
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    assert ours.df == pytest.approx(ref.df, abs=1e-9)
    assert ours.interval.low == pytest.approx(ci.low, abs=1e-12)
    assert ours.interval.high == pytest.approx(ci.high, abs=1e-12)
    sm = CompareMeans(DescrStatsW(x), DescrStatsW(y))
    low, high = sm.tconfint_diff(alpha=0.05, usevar="unequal")
    assert (ours.interval.low, ours.interval.high) == pytest.approx((low, high), abs=1e-12)
    assert ours.interval.excludes_zero() == (ours.p_value < 0.05)


def test_welch_says_why_there_is_no_interval() -> None:
    few = S.welch([0.5], [0.4, 0.45, 0.5])
    assert few.interval is None and few.p_value is None and "too few seeds" in (few.problem or "")
    copies = S.welch([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    assert copies.interval is None and "no variation observed" in (copies.problem or "")
    # one condition's seeds are copies of one run: one replicate, not three. Welch would test the other
    # condition against their value as if it were known exactly (scipy gives p = 0.03 here), so: not tested
    one_flat = S.welch([0.5, 0.5, 0.5], [0.4, 0.45, 0.42])
    assert one_flat.interval is None and one_flat.p_value is None
    assert "copies of one run" in (one_flat.problem or "") and "candidate" in (one_flat.problem or "")
    other_flat = S.welch([0.4, 0.45, 0.42], [0.53] * 3)
    assert other_flat.p_value is None and "baseline" in (other_flat.problem or "")


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
    # constant seeds: no spread to scale the difference by; undefined, never "∞"
    assert math.isnan(S.cohens_d([0.6] * 8, [0.5] * 8))
    assert math.isnan(S.cohens_d([0.5] * 8, [0.6] * 8))
    assert math.isnan(S.hedges_g([0.53] * 3, [0.50] * 5))
    assert math.isnan(S.cohens_d([0.5] * 8, [0.5] * 8))
    assert S.cohens_d([1.0, 2.0], [1.0, 2.0]) == 0.0


def test_hedges_g_lakens_2013_and_its_correction() -> None:
    assert round(S.hedges_g(MOVIE_1, MOVIE_2), 2) == 1.08
    # the exact J(df) is within 0.3 % of Hedges' approximation 1 - 3 / (4 (nx + ny) - 9) from 3 v 3 seeds up
    rng = np.random.default_rng(5)
    for n in (3, 5, 8):
        x, y = rng.normal(1, 1, n), rng.normal(0, 1, n)
        approx = S.cohens_d(x, y) * (1 - 3 / (4 * 2 * n - 9))
        assert S.hedges_g(x, y) == pytest.approx(approx, rel=3e-3)
    assert math.isnan(S.hedges_g([1.0], [2.0]))


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


def test_sample_size_for_power_matches_statsmodels() -> None:
    for d, alpha in ((0.5, 0.05), (1.0, 0.025), (1.5, 0.0167), (2.0, 0.05), (0.8, 0.01)):
        ref = TTestIndPower().solve_power(effect_size=d, alpha=alpha, power=0.8, ratio=1.0, alternative="two-sided")
        assert S.sample_size_for_power(d, alpha=alpha) == max(2, math.ceil(ref - 1e-9))


# pass@k -------------------------------------------------------------------------------


def test_pass_at_k_hand_computations() -> None:
    # 1 - C(n - c, k) / C(n, k)
    assert S.pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)
    assert S.pass_at_k(4, 1, 2) == pytest.approx(0.5)
    assert S.pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert S.pass_at_k(10, 0, 10) == 0.0
    assert S.pass_at_k(10, 1, 10) == 1.0
    assert S.pass_at_k(4, 3, 2) == 1.0  # n - c < k: every draw of 2 holds a right one
    for n in range(1, 12):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert S.pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k), abs=1e-12)
    with pytest.raises(ValueError):
        S.pass_at_k(4, 1, 5)
    with pytest.raises(ValueError):
        S.pass_at_k(4, 5, 1)


def test_mean_interval_01_is_wilson_for_binary_and_never_zero_width() -> None:
    v = np.array([1.0] * 13 + [0.0] * 7)
    iv = S.mean_interval_01(v)
    ref = sps.binomtest(13, 20).proportion_ci(confidence_level=0.95, method="wilson")
    assert (iv.low, iv.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert S.design_effect(v) == 1.0
    ones = S.mean_interval_01(np.ones(20), max_samples=10)
    assert ones.high == 1.0 and ones.low < 1.0
    frac = S.mean_interval_01(np.array([0.4, 0.6, 0.5, 0.5, 0.3, 0.7] * 5), max_samples=10)
    assert frac.width < S.mean_interval_01(np.array([0.0, 1.0] * 15)).width
    assert S.design_effect(np.full(30, 0.5), max_samples=10) == pytest.approx(0.1)


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
        (0.20, 0.03, (0.01, 0.05), True, S.INSUFFICIENT),  # not significant (e.g. after Holm)
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


def test_recommendation_respects_alpha_and_the_minimum_effect() -> None:
    assert S.recommendation(0.03, 0.1, (0.05, 0.2), alpha=0.01) == S.INSUFFICIENT
    assert S.recommendation(0.03, 0.1, (0.05, 0.2), alpha=0.05) == S.IMPROVEMENT
    # significant, and the whole CI is smaller than the minimum effect of interest: its own outcome, both ways
    assert S.recommendation(0.001, 0.02, (0.01, 0.029), min_effect=0.03) == S.NEGLIGIBLE
    assert S.recommendation(0.001, -0.02, (-0.029, -0.01), min_effect=0.03) == S.NEGLIGIBLE
    # the minimum effect is judged on the interval, not the point estimate: +4 pp with a CI [+1, +7] pp does
    # not show a 3 pp gain (the "at least the minimum effect (3.0 pp)" beside CI [0.4, 10.0] pp)
    assert S.recommendation(0.001, 0.04, (0.01, 0.07), min_effect=0.03) == S.SIZE_UNKNOWN
    assert S.recommendation(0.02, 0.052, (0.004, 0.10), min_effect=0.03) == S.SIZE_UNKNOWN
    assert S.recommendation(0.001, 0.06, (0.03, 0.09), min_effect=0.03) == S.IMPROVEMENT
    # a harm is flagged unless the interval shows it smaller than the minimum effect
    assert S.recommendation(0.001, -0.02, (-0.03, -0.01), min_effect=0.03) == S.DEGRADATION
    assert S.OUTCOME_WORDS[S.SIZE_UNKNOWN] == "significant, size not established"


# exact McNemar below 25 discordant pairs ------------------------------------------------


def _score_conditional_size(m: int, alpha: float = 0.05) -> float:
    """P(score test rejects | m discordant pairs, no true change), exactly (binomial sum)."""
    return sum(math.comb(m, b) for b in range(m + 1) if (b - (m - b)) ** 2 / m > 3.841458820694124) / 2**m


def test_the_score_test_misses_its_level_at_few_discordant_pairs() -> None:
    """Why an exact test at few discordant pairs: conditionally on the discordant count, the asymptotic
    McNemar test rejects a true null 2.5 times as often as alpha at 4 pairs (the issue's 4-vs-0 cell) and
    more often than alpha at 5; the exact test never rejects there. obs uses the conventional threshold
    (b + c < 25); beyond it the conditional level oscillates around alpha (its mean over 25-199 pairs is 0.050)."""
    assert _score_conditional_size(4) == pytest.approx(0.125)
    assert _score_conditional_size(5) == pytest.approx(0.0625)
    assert all(S.exact_mcnemar(b, m - b) >= 0.0625 for m in range(1, 6) for b in range(m + 1))
    beyond = [_score_conditional_size(m) for m in range(S.EXACT_BELOW, 200)]
    assert sum(beyond) / len(beyond) == pytest.approx(0.05, abs=0.002)


@pytest.mark.parametrize(("b", "c"), [(4, 0), (0, 4), (5, 0), (6, 0), (7, 2), (3, 9), (12, 3), (0, 0), (10, 10)])
def test_exact_mcnemar_matches_statsmodels(b: int, c: int) -> None:
    from statsmodels.stats.contingency_tables import mcnemar

    assert S.exact_mcnemar(b, c) == pytest.approx(mcnemar([[50, b], [c, 50]], exact=True).pvalue, abs=1e-12)


@pytest.mark.parametrize(("k", "m"), [(0, 5), (3, 10), (5, 5), (7, 24), (1, 1)])
def test_clopper_pearson_matches_statsmodels(k: int, m: int) -> None:
    from statsmodels.stats.proportion import proportion_confint

    iv = S.clopper_pearson(k, m)
    assert (iv.low, iv.high) == pytest.approx(proportion_confint(k, m, method="beta"), abs=1e-10)


def test_four_of_four_discordant_is_not_significant() -> None:
    """The issue's cell: 4 vs 0 of 160 read "significant" at the score test's p = 0.046; exact p = 0.125."""
    (pc,) = S.paired_from_counts([(160, 100, 4, 0)])
    assert pc.exact and pc.p_value == pytest.approx(0.125)
    assert pc.recommendation == S.INSUFFICIENT and pc.interval.low < 0.0 < pc.interval.high


def test_small_discordant_tables_keep_test_and_interval_dual() -> None:
    """Every table with fewer than 25 discordant pairs: the interval excludes 0 exactly when p < 0.05, and it
    is never narrower than Tango's."""
    counts = [(n, 0, b, c) for n in (20, 40, 160) for b in range(25) for c in range(25) if b + c < 25 and b + c <= n]
    for (n, _, b, c), pc in zip(counts, S.paired_from_counts(counts), strict=True):
        tango = S.tango_interval(b, c, n)
        assert pc.interval.low <= tango.low + 1e-15 and pc.interval.high >= tango.high - 1e-15
        assert pc.interval.excludes_zero() == (pc.p_value < 0.05), (n, b, c)
        assert -1.0 <= pc.interval.low <= pc.interval.high <= 1.0


def test_holm_family_labels_use_the_adjusted_p() -> None:
    from statsmodels.stats.multitest import multipletests

    counts = [(160, 80, 9, 1), (160, 80, 30, 12), (32, 10, 0, 0), (32, 10, 3, 0)]
    raw = S.paired_from_counts(counts)
    fam = S.holm_family(raw, [True] * 4, "Holm over the 4 cells")
    expected = multipletests([r.p_value for r in raw], method="holm")[1]
    assert [f.p_adjusted for f in fam] == pytest.approx(list(expected), abs=1e-12)
    assert raw[1].recommendation == S.IMPROVEMENT  # raw p = 0.0053
    for f in fam:
        assert (f.recommendation == S.IMPROVEMENT) == (f.p_adjusted is not None and f.p_adjusted < 0.05)
        assert f.family == "Holm over the 4 cells"
