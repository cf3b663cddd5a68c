"""What a probe of this size could have missed: the smallest changes its tests detect with 80 % power.

"No split or family regressed" is absence of evidence, not evidence of absence: a 32-case family
cannot show a 20 pp collapse most of the time. So a passing regression rule carries, for each split and
family, the smallest drop the rule itself (one-sided score test against the tolerance, at the strictest
Holm step alpha / m) detects with 80 % power at that cell's n and observed churn; and "nothing measurably
improved" carries the smallest gain the headline's test detects with 80 % power (Connor 1987).

Model of a drop D in a cell of n cases, k of them right in the baseline, with observed discordance psi:
the background churn moves n·psi/2 cases each way, so each wrong case is fixed with chance
n·psi/2 / (n − k), and each right case breaks with chance (n·psi/2 + n·D) / k. The power is summed
exactly over both binomials (tails beyond ~9 sd dropped); tests/unit/test_stats_round_two.py checks it by
simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from obs.analysis.stats import exact_mcnemar, paired_items_needed, score_tests

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
    if p <= 0.0 or n <= 0:
        return np.zeros(1)
    if p >= 1.0:
        return np.array([float(n)])
    sd = math.sqrt(n * p * (1.0 - p))
    lo, hi = max(0, math.floor(n * p - 9 * sd - 2)), min(n, math.ceil(n * p + 9 * sd + 2))
    return np.arange(lo, hi + 1, dtype=np.float64)


def _pmf_all(n: int, p: float) -> np.ndarray:
    """Binomial(n, p) probabilities of 0..n (log-space recursion; numpy only, no scipy on the run page)."""
    if p <= 0.0 or n <= 0:
        out = np.zeros(n + 1)
        out[0] = 1.0
        return out
    if p >= 1.0:
        out = np.zeros(n + 1)
        out[n] = 1.0
        return out
    k = np.arange(n, dtype=np.float64)
    steps = np.log((n - k) / (k + 1.0)) + math.log(p) - math.log1p(-p)
    logs = np.concatenate([[n * math.log1p(-p)], n * math.log1p(-p) + np.cumsum(steps)])
    return np.asarray(np.exp(logs), dtype=np.float64)


def _pmf(k: np.ndarray, n: int, p: float) -> np.ndarray:
    return np.asarray(_pmf_all(n, p)[k.astype(np.intp)], dtype=np.float64)


def _tail(first: np.ndarray, k: int, p: float) -> np.ndarray:
    """P(Binomial(k, p) >= first), elementwise (first > k: 0; first <= 0: 1)."""
    pmf = _pmf_all(k, p)
    at_least = np.concatenate([np.cumsum(pmf[::-1])[::-1], [0.0]])  # at_least[j] = P(X >= j), j = 0..k+1
    idx = np.clip(first, 0, k + 1).astype(np.intp)
    return np.asarray(np.minimum(1.0, at_least[idx]), dtype=np.float64)


@dataclass(frozen=True)
class _Cell:
    """A scope-check cell: n cases, k of them right in the baseline, churn psi (discordant share)."""

    n: int
    k: int
    psi: float

    @property
    def fix_rate(self) -> float:
        """Each case wrong in the baseline is fixed with this chance (half the churn, as a count)."""
        return min(1.0, self.n * self.psi / 2.0 / (self.n - self.k)) if self.n > self.k else 0.0

    def break_rate(self, drop: float) -> float:
        """Each case right in the baseline breaks with this chance: half the churn plus the drop."""
        return min(1.0, (self.n * self.psi / 2.0 + self.n * drop) / self.k) if self.k else 0.0


def _thresholds(cell: _Cell, tolerance: float, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(counts fixed f, fewest broken x that reject given f): the rule's rejection region, computed once."""
    fixed = _support(cell.n - cell.k, cell.fix_rate)
    broken = np.arange(0, cell.k + 1, dtype=np.float64)
    ff, xx = np.meshgrid(fixed, broken, indexing="ij")
    p = score_tests(ff.ravel(), xx.ravel(), np.full(ff.size, float(cell.n)), -tolerance, "less").reshape(ff.shape)
    rejects = p < level  # the statistic falls as x grows: the region is x >= first
    first = np.where(rejects.any(axis=1), rejects.argmax(axis=1), cell.k + 1).astype(np.float64)
    return fixed, first


def _power(cell: _Cell, drop: float, fixed: np.ndarray, first: np.ndarray) -> float:
    weights = _pmf(fixed, cell.n - cell.k, cell.fix_rate)
    return float(np.sum(weights * _tail(first, cell.k, cell.break_rate(drop))))


def drop_power(n: int, k: int, psi: float, drop: float, tolerance: float, level: float) -> float:
    """Chance the one-sided score test of "worse by more than `tolerance`" rejects at `level` when a cell of
    `n` cases (`k` right in the baseline, churn `psi`) truly loses `drop` of its rate: each wrong case is
    fixed with chance n·psi/2 / (n − k), each right case breaks with chance (n·psi/2 + n·drop) / k."""
    cell = _Cell(n, k, psi)
    return _power(cell, drop, *_thresholds(cell, tolerance, level))


def detectable_drop(n: int, k: int, psi: float, tolerance: float, level: float) -> float | None:
    """The smallest drop (a positive rate difference, to 0.05 pp) detected with 80 % power, or None when
    even losing every case right in the baseline (k / n) would not be."""
    cell = _Cell(n, k, psi)
    top = (k - n * psi / 2.0) / n  # every right case broken, net of the churn's own breaks
    if n <= 0 or k <= 0 or top <= tolerance:
        return None
    fixed, first = _thresholds(cell, tolerance, level)
    if _power(cell, top, fixed, first) < POWER:
        return None
    lo, hi = tolerance, top
    while hi - lo > 0.0005:
        mid = (lo + hi) / 2.0
        if _power(cell, mid, fixed, first) >= POWER:
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
