"""The vectorised paired comparison must agree with scipy and with the one-at-a-time version."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from obs.analysis.stats import paired_comparison, paired_comparisons


def pairs(seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for n, pa, pb in ((1524, 0.60, 0.58), (160, 0.72, 0.63), (50, 0.9, 0.9), (32, 0.75, 0.19), (7, 1.0, 0.0)):
        a = rng.random(n) < pa
        b = np.where(rng.random(n) < 0.7, a, rng.random(n) < pb)  # correlated, as paired systems are
        out.append((a, b))
    out.append((np.ones(40, dtype=bool), np.ones(40, dtype=bool)))  # no discordant case at all
    return out


def test_counts_rates_and_mcnemar_are_exactly_the_single_version() -> None:
    batch = paired_comparisons(pairs(1), seed=3)
    for (a, b), got in zip(pairs(1), batch, strict=True):
        one = paired_comparison(a, b, seed=3)
        assert (got.n, got.both_correct, got.only_a, got.only_b, got.both_wrong) == (
            one.n,
            one.both_correct,
            one.only_a,
            one.only_b,
            one.both_wrong,
        )
        assert got.delta == one.delta and got.rate_a == one.rate_a
        assert got.p_value == pytest.approx(
            sps.binomtest(got.only_a, got.only_a + got.only_b, 0.5).pvalue if got.only_a + got.only_b else 1.0,
            abs=1e-12,
        )


def test_interval_matches_scipy_paired_bootstrap_within_monte_carlo_error() -> None:
    for (a, b), got in zip(pairs(2), paired_comparisons(pairs(2), n_resamples=20_000, seed=5), strict=True):
        if got.only_a + got.only_b == 0:
            assert (got.interval.low, got.interval.high) == (0.0, 0.0)
            continue
        ref = sps.bootstrap(
            (a.astype(float), b.astype(float)),
            lambda x, y, axis=-1: np.mean(x - y, axis=axis),
            paired=True,
            method="percentile",
            n_resamples=20_000,
            random_state=11,
            vectorized=True,
        ).confidence_interval
        se = np.sqrt(max(got.delta * (1 - got.delta), 0.01) / got.n)  # scale of the gap's sampling error
        assert abs(got.interval.low - ref.low) < 0.2 * se + 1.5 / got.n
        assert abs(got.interval.high - ref.high) < 0.2 * se + 1.5 / got.n


def test_seeded_and_reproducible() -> None:
    first = paired_comparisons(pairs(3), seed=9)
    again = paired_comparisons(pairs(3), seed=9)
    assert [r.interval for r in first] == [r.interval for r in again]
