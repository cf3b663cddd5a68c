"""What a probe of this size could have missed: the smallest changes its tests detect with 80 % power.

"No split or family regressed" is absence of evidence, not evidence of absence: a 32-case family
cannot show a 20 pp collapse most of the time. So a passing regression rule carries, for each split and
family, the smallest drop the rule itself (one-sided score test against the tolerance, at the strictest
Holm step alpha / m) detects with 80 % power at that cell's n and observed churn; and "nothing measurably
improved" carries the smallest gain the headline's test detects with 80 % power (Connor 1987).

Model of a drop D in a cell of n cases with observed discordance psi: cases fixed ~ Binomial(n, psi/2),
cases broken ~ Binomial(n, psi/2 + D) (the background churn both ways, plus the drop). The power is
summed exactly over both binomials (tails beyond 1e-12 dropped); bench/stats_calibration.py simulates the
rule at the reported drop.
"""

from __future__ import annotations

import math

import numpy as np

from obs.analysis.stats import _special, exact_mcnemar, paired_items_needed, score_tests

POWER = 0.8


def min_cases(alpha: float) -> int:
    """The fewest paired cases in which any change can be significant at `alpha`: with n cases all
    discordant one way the exact test gives p = 2 / 2^n, so n must exceed log2(2 / alpha) (6 at 0.05)."""
    n = 1
    while exact_mcnemar(n, 0) >= alpha:
        n += 1
    return n


def _support(n: int, p: float) -> np.ndarray:
    """Counts 0..n where Binomial(n, p) has non-negligible mass."""
    if p <= 0.0:
        return np.zeros(1)
    sd = math.sqrt(n * p * (1.0 - p))
    lo, hi = max(0, math.floor(n * p - 9 * sd - 2)), min(n, math.ceil(n * p + 9 * sd + 2))
    return np.arange(lo, hi + 1, dtype=np.float64)


def _pmf(k: np.ndarray, n: int, p: float) -> np.ndarray:
    if p <= 0.0:
        return (k == 0).astype(np.float64)
    upper = np.asarray(_special.bdtr(k, n, p), dtype=np.float64)
    lower = np.where(k > 0, np.asarray(_special.bdtr(np.maximum(k - 1, 0), n, p), dtype=np.float64), 0.0)
    return upper - lower


def _thresholds(n: int, psi: float, tolerance: float, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(counts fixed f, fewest broken x that reject given f): the rule's rejection region, computed once."""
    fixed = _support(n, psi / 2.0)
    broken = np.arange(0, n + 1, dtype=np.float64)
    ff, xx = np.meshgrid(fixed, broken, indexing="ij")
    p = score_tests(ff.ravel(), xx.ravel(), np.full(ff.size, float(n)), -tolerance, "less").reshape(ff.shape)
    rejects = (p < level) & ((ff + xx) <= n)  # the statistic falls as x grows: the region is x >= first
    first = np.where(rejects.any(axis=1), rejects.argmax(axis=1), n + 1).astype(np.float64)
    return fixed, first


def _power(n: int, psi: float, drop: float, fixed: np.ndarray, first: np.ndarray) -> float:
    q_fix, q_break = psi / 2.0, min(1.0, psi / 2.0 + drop)
    tail = np.where(first <= n, np.asarray(_special.bdtrc(first - 1, n, q_break), dtype=np.float64), 0.0)
    tail = np.where(first <= 0, 1.0, tail)
    return float(np.sum(_pmf(fixed, n, q_fix) * tail))


def drop_power(n: int, psi: float, drop: float, tolerance: float, level: float) -> float:
    """Chance the one-sided score test of "worse by more than `tolerance`" rejects at `level` when the
    cell's rate truly drops by `drop` on top of a churn `psi` (see the module docstring)."""
    return _power(n, psi, drop, *_thresholds(n, psi, tolerance, level))


def detectable_drop(n: int, psi: float, tolerance: float, level: float, room: float) -> float | None:
    """The smallest drop (a positive rate difference, to 0.05 pp) detected with 80 % power, or None when
    even losing `room` (the share of cases right in the baseline) would not be."""
    top = max(0.0, min(room, 1.0 - psi / 2.0))
    if n <= 0 or top <= tolerance:
        return None
    fixed, first = _thresholds(n, psi, tolerance, level)
    if _power(n, psi, top, fixed, first) < POWER:
        return None
    lo, hi = tolerance, top
    while hi - lo > 0.0005:
        mid = (lo + hi) / 2.0
        if _power(n, psi, mid, fixed, first) >= POWER:
            hi = mid
        else:
            lo = mid
    return hi


def detectable_gain(n: int, psi: float, alpha: float) -> float | None:
    """The smallest rate change the two-sided paired McNemar test detects with 80 % power at `n` cases
    and discordance `psi` (Connor's formula, inverted by bisection); None when psi is 0."""
    if n <= 0 or psi <= 0.0:
        return None
    if (paired_items_needed(psi, psi, alpha=alpha) or n + 1) > n:
        return None
    lo, hi = 0.0, psi
    while hi - lo > 0.0005:
        mid = (lo + hi) / 2.0
        needed = paired_items_needed(psi, mid, alpha=alpha) if mid > 0 else None
        if needed is not None and needed <= n:
            hi = mid
        else:
            lo = mid
    return hi
