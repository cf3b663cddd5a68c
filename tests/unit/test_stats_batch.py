"""The vectorised paired comparison must agree with scipy and with the one-at-a-time version."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from obs.analysis.stats import EXACT_BELOW, paired_comparison, paired_comparisons, score_test, tango_interval


def pairs(seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for n, pa, pb in ((1524, 0.60, 0.58), (160, 0.72, 0.63), (50, 0.9, 0.9), (32, 0.75, 0.19), (7, 1.0, 0.0)):
        a = rng.random(n) < pa
        b = np.where(rng.random(n) < 0.7, a, rng.random(n) < pb)  # correlated, as paired systems are
        out.append((a, b))
    out.append((np.ones(40, dtype=bool), np.ones(40, dtype=bool)))  # no discordant case at all
    return out


def test_batch_equals_the_single_version_and_scipy() -> None:
    batch = paired_comparisons(pairs(1))
    for (a, b), got in zip(pairs(1), batch, strict=True):
        single = paired_comparison(a, b)
        assert got == single
        only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
        assert (got.only_a, got.only_b, got.n) == (only_a, only_b, a.size)
        m = only_a + only_b
        if m:
            chi2 = (only_a - only_b) ** 2 / m
            score_p = float(sps.chi2.sf(chi2, 1))
            exact_p = float(min(1.0, 2 * sps.binom.cdf(min(only_a, only_b), m, 0.5)))
            expected = score_p if m >= EXACT_BELOW else max(score_p, exact_p)
            assert got.p_value == pytest.approx(expected, abs=1e-12)
        else:
            assert got.p_value == 1.0
        if m >= EXACT_BELOW:
            assert got.p_value == score_test(only_a, only_b, a.size).p_value
            assert got.interval == tango_interval(only_a, only_b, a.size)
        else:
            assert got.exact and got.interval.width >= tango_interval(only_a, only_b, a.size).width
        assert got.interval.width > 0  # never a zero-width interval, even with no discordant case


def test_deterministic() -> None:
    assert paired_comparisons(pairs(2)) == paired_comparisons(pairs(2))
