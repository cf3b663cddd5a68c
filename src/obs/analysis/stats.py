"""Pure statistics toolkit for comparing ML training runs.

Two comparison settings occur in run reports, and they need different tools:

* **Paired items** — two systems scored on the *same* evaluation items (e.g. 1,524
  BIRD-dev questions, right/wrong each).  Item difficulty is shared, so the per-item
  difference carries the signal: use :func:`paired_comparison` (McNemar exact test on
  the discordant items + paired bootstrap CI of the accuracy gap).
* **Independent replicates** — a few seeds per condition (e.g. 2 conditions × 8
  seeds), one summary number per run.  Seeds are exchangeable under "no effect", so
  use :func:`permutation_test_diff_means` for the p-value and
  :func:`bootstrap_diff_means` for the CI, :func:`cohens_d` for a scale-free effect
  size, and :func:`sample_size_for_power` to say how many seeds would be needed.

:func:`fisher_exact_counts` compares pooled success counts (episodes, completions);
note it treats every episode as independent, which overstates the evidence when the
episodes cluster by seed — prefer the seed-level permutation test for claims.

Conventions shared by every function here:

* Pure: no I/O, no global random state.  Every random procedure takes an explicit
  ``seed`` (``numpy.random.default_rng(seed)``) and ``n_resamples``; the same inputs
  and seed give bit-identical results, so a regenerated report does not drift.
* Results are small frozen dataclasses holding plain Python ``float``/``int``/``str``
  with an ``as_dict()`` for JSON.  Quantities that are undefined for the input (empty
  samples, zero variance, ...) are ``nan`` (or ``inf`` where the limit is meaningful)
  rather than exceptions, so a report can render "—" instead of crashing.  Note that
  strict JSON has no ``nan``/``inf``; serialisers such as orjson write them as null.
* Invalid input (NaN/inf values, mismatched paired lengths, negative counts,
  levels outside (0, 1)) raises :class:`ValueError`: those are caller bugs, not data.
"""

from __future__ import annotations

import importlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from statistics import NormalDist
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEGRADATION",
    "IMPROVEMENT",
    "INSUFFICIENT",
    "Alternative",
    "BootstrapResult",
    "Interval",
    "PairedComparison",
    "Recommendation",
    "TestResult",
    "bootstrap_diff_means",
    "cohens_d",
    "fisher_exact_counts",
    "holm_adjust",
    "mcnemar_exact",
    "paired_bootstrap_diff",
    "paired_comparison",
    "paired_comparisons",
    "permutation_test_diff_means",
    "recommendation",
    "sample_size_for_power",
    "sample_size_two_proportions",
    "wilson_interval",
]

Alternative = Literal["two-sided", "greater", "less"]
Recommendation = Literal[
    "statistically_significant_improvement",
    "insufficient_statistical_evidence",
    "significant_degradation",
]
IMPROVEMENT: Recommendation = "statistically_significant_improvement"
INSUFFICIENT: Recommendation = "insufficient_statistical_evidence"
DEGRADATION: Recommendation = "significant_degradation"

FloatArray = npt.NDArray[np.float64]

DEFAULT_RESAMPLES = 10_000
_NORMAL = NormalDist()


class _LazyScipyStats:
    """`scipy.stats`, imported on first use: it costs ~0.8 s, and most builds never need it."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("scipy.stats"), name)


_st = _LazyScipyStats()
# Number of array elements materialised at once by resampling loops (2 MB of
# float64): bounds memory for large inputs, and chunks that stay in cache are
# measurably faster than one big (resamples × n) index matrix.
_CHUNK_ELEMENTS = 1 << 18
# Null-distribution values within this relative distance of the observed statistic
# count as ties: they are mathematically equal values separated only by rounding.
_TIE_RTOL = 1e-12


# --------------------------------------------------------------------------- results


def _plain(value: Any) -> Any:
    """Convert nested results to JSON-friendly builtins."""
    if isinstance(value, _Result):
        return value.as_dict()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


class _Result:
    """Mixin giving frozen result dataclasses a JSON-friendly ``as_dict``."""

    __slots__ = ()

    def as_dict(self) -> dict[str, Any]:
        """Return the fields as a dict of builtins (nested results become dicts)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Interval(_Result):
    """A two-sided confidence interval ``[low, high]`` at confidence ``level``.

    ``low``/``high`` are ``nan`` when the interval is undefined (e.g. no data).
    """

    low: float
    high: float
    level: float

    @property
    def width(self) -> float:
        """``high - low``; a quick read of how much the data pins the quantity down."""
        return self.high - self.low

    def contains(self, value: float) -> bool:
        """True if ``low <= value <= high`` (False for an undefined interval)."""
        return bool(self.low <= value <= self.high)

    def excludes_zero(self) -> bool:
        """True if the whole interval lies strictly on one side of zero."""
        return bool(self.low > 0.0 or self.high < 0.0)


@dataclass(frozen=True, slots=True)
class TestResult(_Result):
    """Outcome of a hypothesis test.

    ``statistic`` is test specific and documented by each function; ``n`` is the number
    of observations the test used; ``exact`` tells whether ``p_value`` is exact
    (analytic or full enumeration) or a Monte-Carlo estimate from ``n_resamples`` draws.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class despite the name

    statistic: float
    p_value: float
    n: int
    method: str
    alternative: Alternative = "two-sided"
    exact: bool = True
    n_resamples: int | None = None
    seed: int | None = None


@dataclass(frozen=True, slots=True)
class BootstrapResult(_Result):
    """Point estimate with a percentile-bootstrap confidence interval.

    ``standard_error`` is the standard deviation of the bootstrap distribution;
    ``n`` is the number of pairs (paired) or total observations (two-sample).
    """

    estimate: float
    interval: Interval
    standard_error: float
    n: int
    n_resamples: int
    seed: int
    method: str


@dataclass(frozen=True, slots=True)
class PairedComparison(_Result):
    """Two systems scored right/wrong on the same ``n`` items (A minus B).

    The 2×2 cells are ``both_correct``, ``only_a`` (McNemar's *b*: A right, B wrong),
    ``only_b`` (McNemar's *c*) and ``both_wrong``; ``delta = rate_a - rate_b =
    (only_a - only_b) / n``.  ``interval`` is the paired-bootstrap CI of ``delta`` and
    ``p_value`` the exact McNemar p; ``recommendation`` combines them at ``alpha``.
    """

    n: int
    rate_a: float
    rate_b: float
    delta: float
    interval: Interval
    both_correct: int
    only_a: int
    only_b: int
    both_wrong: int
    p_value: float
    alpha: float
    recommendation: Recommendation
    n_resamples: int
    seed: int


# --------------------------------------------------------------------------- validation


def _check_level(level: float, name: str = "level") -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {level!r}")
    return level


def _check_resamples(n_resamples: int) -> int:
    if int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return int(n_resamples)


def _check_count(value: int, name: str) -> int:
    if int(value) != value or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _as_sample(values: npt.ArrayLike, name: str) -> FloatArray:
    """1-D finite float64 array (bools become 0/1)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; drop or impute them first")
    return arr


def _as_binary(values: npt.ArrayLike, name: str) -> npt.NDArray[np.bool_]:
    arr = _as_sample(values, name)
    if not np.all((arr == 0.0) | (arr == 1.0)):
        raise ValueError(f"{name} must contain only 0/1 (or False/True) values")
    return arr.astype(bool)


# --------------------------------------------------------------------------- helpers


def _bootstrap_means(values: FloatArray, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """Means of ``n_resamples`` with-replacement resamples of ``values`` (same size).

    Only the multiset of resampled values matters for a mean, and the counts of each
    distinct value in a resample are Multinomial(n, observed frequencies).  When the
    data have few distinct values (binary correctness, paired differences in
    {-1, 0, 1}) drawing those counts is exactly equivalent in distribution to drawing
    index arrays, and costs O(k) instead of O(n) per resample.  Otherwise indices are
    drawn in memory-bounded chunks.
    """
    n = values.size
    uniq, counts = np.unique(values, return_counts=True)
    if uniq.size * 8 <= n:
        draws = rng.multinomial(n, counts / n, size=n_resamples)
        means: FloatArray = (draws @ uniq) / n
        return means
    out = np.empty(n_resamples, dtype=np.float64)
    chunk = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = values.take(idx).mean(axis=1)
    return out


def _percentile_interval(dist: FloatArray, level: float) -> Interval:
    """Percentile CI, same convention as scipy.stats.bootstrap(method='percentile')."""
    tail = (1.0 - level) / 2.0
    low, high = np.percentile(dist, [100.0 * tail, 100.0 * (1.0 - tail)])
    return Interval(float(low), float(high), level)


def _nan_interval(level: float) -> Interval:
    return Interval(math.nan, math.nan, level)


# --------------------------------------------------------------------------- single rate


def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for a binomial rate ``successes / n``.

    Why: the textbook Wald interval ``p ± z·sqrt(p(1-p)/n)`` collapses to zero width
    at 0 % or 100 % and undercovers for small ``n`` or extreme rates; Wilson inverts
    the score test instead, stays inside [0, 1] and has near-nominal coverage even
    for a handful of trials (Newcombe 1998).  Assumes independent trials with a
    common success probability.  Matches
    ``scipy.stats.binomtest(k, n).proportion_ci(level, method='wilson')``.

    ``n == 0`` gives ``Interval(nan, nan, level)``: no data, no interval.
    """
    level = _check_level(level)
    k = _check_count(successes, "successes")
    n = _check_count(n, "n")
    if k > n:
        raise ValueError(f"successes ({k}) cannot exceed n ({n})")
    if n == 0:
        return _nan_interval(level)
    z = _NORMAL.inv_cdf(0.5 + 0.5 * level)
    p = k / n
    denom = 2.0 * (n + z * z)
    center = (2.0 * n * p + z * z) / denom
    half = z / denom * math.sqrt(4.0 * n * p * (1.0 - p) + z * z)
    low = 0.0 if k == 0 else max(0.0, center - half)
    high = 1.0 if k == n else min(1.0, center + half)
    return Interval(low, high, level)


# --------------------------------------------------------------------------- paired items


def _binom_half_cdf(k: int, m: int) -> float:
    """P(X <= k) for X ~ Binomial(m, 1/2), exactly: a sum of integers divided once by 2**m.

    Exact integer arithmetic needs no scipy (whose import costs ~0.8 s on the run-page path)
    and is correctly rounded; m is a count of discordant probe cases, at most a few thousand.
    """
    term = total = 1  # C(m, 0)
    for i in range(k):
        term = term * (m - i) // (i + 1)  # C(m, i + 1), exact in integers
        total += term
    return total / (1 << m)


def mcnemar_exact(b: int, c: int) -> TestResult:
    """Exact (binomial) McNemar test on the discordant counts of a paired 2×2 table.

    Why: when two systems answer the same items, the items both get right or both
    get wrong say nothing about which is better; under "no difference" each
    discordant item is equally likely to favour either system, so
    ``b ~ Binomial(b + c, 1/2)``.  The exact version is valid for any count (the
    chi-square approximation needs ``b + c`` of roughly 25+).  Assumes items are
    independent of each other.

    ``b``: items A got right and B wrong; ``c``: the reverse.  Two-sided
    ``p = min(1, 2·P(X <= min(b, c)))``, identical to
    ``scipy.stats.binomtest(b, b + c, 0.5).pvalue``.  ``b + c == 0`` gives ``p = 1``
    (no discordant items, no evidence).  ``statistic`` is ``b``; ``n`` is ``b + c``.
    """
    b = _check_count(b, "b")
    c = _check_count(c, "c")
    m = b + c
    # b == c is the centre of a symmetric distribution: every outcome is as extreme.
    p = 1.0 if m == 0 or b == c else min(1.0, 2.0 * _binom_half_cdf(min(b, c), m))
    return TestResult(
        statistic=float(b),
        p_value=p,
        n=m,
        method="exact McNemar (binomial test on discordant pairs)",
    )


def paired_bootstrap_diff(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> BootstrapResult:
    """Percentile-bootstrap CI of ``mean(a) - mean(b)`` for paired observations.

    Why: when both systems are measured on the same items, resampling *items* (keeping
    each pair together) preserves the item-difficulty correlation, which gives a much
    tighter and honest interval than treating the two vectors as independent.  It
    makes no distributional assumption beyond items being an i.i.d. sample from the
    population of interest; the percentile method is accurate for the large ``n``
    typical of evaluation sets (hundreds+) but undercovers for very small ``n``.

    ``a``/``b`` are equal-length vectors (bool or float).  Equivalent in distribution
    to ``scipy.stats.bootstrap((a, b), ..., paired=True, method='percentile')``.  For
    binary data the resampling draws multinomial counts of the per-item difference
    values (A only right / B only right / tie), so 1,524 items × 10,000 resamples
    takes about a millisecond.

    Empty input gives ``estimate = nan`` and a ``nan`` interval.
    """
    level = _check_level(level)
    n_resamples = _check_resamples(n_resamples)
    x = _as_sample(a, "a")
    y = _as_sample(b, "b")
    if x.size != y.size:
        raise ValueError(f"paired samples must have equal length, got {x.size} and {y.size}")
    method = "paired percentile bootstrap of mean(a) - mean(b)"
    n = x.size
    if n == 0:
        return BootstrapResult(math.nan, _nan_interval(level), math.nan, 0, n_resamples, seed, method)
    rng = np.random.default_rng(seed)
    dist = _bootstrap_means(x - y, n_resamples, rng)
    return _bootstrap_result(dist, float(x.mean() - y.mean()), level, n, n_resamples, seed, method)


def paired_comparison(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    level: float = 0.95,
    alpha: float = 0.05,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    higher_is_better: bool = True,
) -> PairedComparison:
    """Full comparison of two systems' right/wrong outcomes on the same items.

    Why: this is the standard report for "is system A better than system B on this
    benchmark" — both accuracies, the gap, a paired-bootstrap CI of the gap, the
    discordant counts that actually drive the result and the exact McNemar p-value,
    summarised by :func:`recommendation`.  ``a[i]`` and ``b[i]`` must refer to the
    same item.  Assumes items are independent (not e.g. several paraphrases of one
    question).

    Empty input gives ``nan`` rates, a ``nan`` interval, ``p = 1`` and the
    "insufficient" recommendation.
    """
    alpha = _check_level(alpha, "alpha")
    xa = _as_binary(a, "a")
    xb = _as_binary(b, "b")
    if xa.size != xb.size:
        raise ValueError(f"paired samples must have equal length, got {xa.size} and {xb.size}")
    n = int(xa.size)
    both = int(np.count_nonzero(xa & xb))
    only_a = int(np.count_nonzero(xa & ~xb))
    only_b = int(np.count_nonzero(~xa & xb))
    neither = n - both - only_a - only_b
    boot = paired_bootstrap_diff(xa, xb, level=level, n_resamples=n_resamples, seed=seed)
    test = mcnemar_exact(only_a, only_b)
    rate_a = (both + only_a) / n if n else math.nan
    rate_b = (both + only_b) / n if n else math.nan
    delta = (only_a - only_b) / n if n else math.nan
    return PairedComparison(
        n=n,
        rate_a=rate_a,
        rate_b=rate_b,
        delta=delta,
        interval=boot.interval,
        both_correct=both,
        only_a=only_a,
        only_b=only_b,
        both_wrong=neither,
        p_value=test.p_value,
        alpha=alpha,
        recommendation=recommendation(
            test.p_value, delta, boot.interval, alpha=alpha, higher_is_better=higher_is_better
        ),
        n_resamples=boot.n_resamples,
        seed=seed,
    )


def paired_comparisons(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]],
    *,
    higher_is_better: Sequence[bool] | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[PairedComparison]:
    """:func:`paired_comparison` for many (a, b) pairs at once, with one vectorised bootstrap.

    Why: a run's report compares every check in every scope (all cases, each split, each family)
    with its baseline, dozens of comparisons. For binary paired data the resampled gap only
    depends on the counts of "only A right" and "only B right", which are Multinomial(n; p_a,
    p_b, rest); drawing them as Binomial(n, p_a) then Binomial(n - X, p_b / (1 - p_a)) for all
    pairs in two numpy calls is the same distribution at a fraction of the cost. McNemar p-values
    are exact, as in :func:`paired_comparison`.
    """
    level = _check_level(level)
    alpha = _check_level(alpha, "alpha")
    n_resamples = _check_resamples(n_resamples)
    hib = list(higher_is_better) if higher_is_better is not None else [True] * len(pairs)
    counts = []
    for a, b in pairs:
        xa, xb = _as_binary(a, "a"), _as_binary(b, "b")
        if xa.size != xb.size:
            raise ValueError(f"paired samples must have equal length, got {xa.size} and {xb.size}")
        both = int(np.count_nonzero(xa & xb))
        only_a = int(np.count_nonzero(xa & ~xb))
        only_b = int(np.count_nonzero(~xa & xb))
        counts.append((int(xa.size), both, only_a, only_b))
    if not counts:
        return []
    rng = np.random.default_rng(seed)
    n = np.array([c[0] for c in counts], dtype=np.int64)
    safe_n = np.maximum(n, 1)
    p_a = np.array([c[2] for c in counts]) / safe_n
    p_b = np.array([c[3] for c in counts]) / safe_n
    x = rng.binomial(n[:, None], p_a[:, None], size=(len(counts), n_resamples))
    rest = np.where(p_a < 1.0, p_b / np.where(p_a < 1.0, 1.0 - p_a, 1.0), 0.0)
    y = rng.binomial(n[:, None] - x, np.clip(rest, 0.0, 1.0)[:, None])
    gaps = (x - y) / safe_n[:, None]
    tail = 100.0 * (1.0 - level) / 2.0
    lows, highs = np.percentile(gaps, [tail, 100.0 - tail], axis=1)
    out = []
    for i, (size, both, only_a, only_b) in enumerate(counts):
        if size == 0:
            interval = _nan_interval(level)
            rate_a = rate_b = delta = math.nan
        else:
            interval = Interval(float(lows[i]), float(highs[i]), level)
            rate_a, rate_b = (both + only_a) / size, (both + only_b) / size
            delta = (only_a - only_b) / size
        p_value = mcnemar_exact(only_a, only_b).p_value
        out.append(
            PairedComparison(
                n=size,
                rate_a=rate_a,
                rate_b=rate_b,
                delta=delta,
                interval=interval,
                both_correct=both,
                only_a=only_a,
                only_b=only_b,
                both_wrong=size - both - only_a - only_b,
                p_value=p_value,
                alpha=alpha,
                recommendation=recommendation(p_value, delta, interval, alpha=alpha, higher_is_better=hib[i]),
                n_resamples=n_resamples,
                seed=seed,
            )
        )
    return out


# --------------------------------------------------------------------------- independent samples


def _combination_matrix(n_total: int, k: int, count: int) -> npt.NDArray[np.intp]:
    """All ``count == C(n_total, k)`` k-subsets of ``range(n_total)``, one per row."""
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(n_total), k)),
        dtype=np.intp,
        count=count * k,
    )
    return flat.reshape(count, k)


def permutation_test_diff_means(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alternative: Alternative = "two-sided",
) -> TestResult:
    """Two-sample permutation test of ``mean(x) - mean(y)``.

    Why: with a few seeds per condition (e.g. 8 vs 8) normality of run-level metrics
    cannot be checked, but if the condition has no effect the seed outcomes are
    exchangeable, so every relabelling of the pooled runs is equally likely.  The
    p-value is the share of relabellings at least as extreme as the observed one —
    valid for any distribution and any sample size (exactly so when enumerated).

    Follows ``scipy.stats.permutation_test(..., permutation_type='independent')``:
    when the number of distinct splits ``C(n_x + n_y, n_x)`` is ``<= n_resamples``
    all splits are enumerated and the p-value is exact (8 vs 8 has 12,870 splits, so
    it is exact from ``n_resamples=12_870``); otherwise ``n_resamples`` random splits
    are drawn and ``p = (hits + 1) / (n_resamples + 1)``, which never reports an
    impossible 0.  Two-sided ``p = min(1, 2·min(p_less, p_greater))``.
    ``alternative='greater'`` tests ``mean(x) > mean(y)``.

    ``statistic`` is ``mean(x) - mean(y)``; ``n_resamples`` in the result is the number
    of splits actually evaluated and ``seed`` is recorded only for Monte-Carlo
    results (enumeration does not use it).  An empty sample gives ``nan`` statistic
    and p-value; identical values everywhere give ``p = 1``.
    """
    n_resamples = _check_resamples(n_resamples)
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    xs = _as_sample(x, "x")
    ys = _as_sample(y, "y")
    nx, ny = xs.size, ys.size
    n_total = nx + ny
    if nx == 0 or ny == 0:
        return TestResult(
            math.nan, math.nan, n_total, "permutation test of difference in means", alternative, True, 0, seed
        )

    pooled = np.concatenate([xs, ys])
    # Centre first: the statistic is shift invariant and sums of centred values lose
    # less precision, which keeps ties between equal splits exact to ~1e-15.
    z = pooled - pooled.mean()
    total = float(z.sum())
    scale = float(np.max(np.abs(z)))

    def stat_from_sums(sums_x: FloatArray) -> FloatArray:
        result: FloatArray = sums_x / nx - (total - sums_x) / ny
        return result

    observed_c = float(stat_from_sums(np.array([z[:nx].sum()]))[0])
    observed = float(xs.mean() - ys.mean())

    n_splits = math.comb(n_total, nx)
    exact = n_splits <= n_resamples
    rng = np.random.default_rng(seed)
    if exact:
        used = n_splits
        null = np.empty(n_splits, dtype=np.float64)
        chunk = max(1, _CHUNK_ELEMENTS // max(nx, 1))
        combos = _combination_matrix(n_total, nx, n_splits)
        for start in range(0, n_splits, chunk):
            stop = min(n_splits, start + chunk)
            null[start:stop] = stat_from_sums(z[combos[start:stop]].sum(axis=1))
    else:
        used = n_resamples
        null = np.empty(n_resamples, dtype=np.float64)
        chunk = max(1, _CHUNK_ELEMENTS // n_total)
        for start in range(0, n_resamples, chunk):
            stop = min(n_resamples, start + chunk)
            perm = rng.permuted(np.tile(z, (stop - start, 1)), axis=1)
            null[start:stop] = stat_from_sums(perm[:, :nx].sum(axis=1))

    gamma = _TIE_RTOL * max(abs(observed_c), scale)
    adjustment = 0 if exact else 1
    p_less = (int(np.count_nonzero(null <= observed_c + gamma)) + adjustment) / (used + adjustment)
    p_greater = (int(np.count_nonzero(null >= observed_c - gamma)) + adjustment) / (used + adjustment)
    if alternative == "less":
        p = p_less
    elif alternative == "greater":
        p = p_greater
    else:
        p = 2.0 * min(p_less, p_greater)
    method = "permutation test of difference in means (" + ("exact enumeration" if exact else "Monte Carlo") + ")"
    return TestResult(
        statistic=observed,
        p_value=float(min(1.0, p)),
        n=n_total,
        method=method,
        alternative=alternative,
        exact=exact,
        n_resamples=used,
        seed=None if exact else seed,
    )


def bootstrap_diff_means(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> BootstrapResult:
    """Percentile-bootstrap CI of ``mean(x) - mean(y)`` for two independent samples.

    Why: gives a distribution-free range for the size of a difference between
    conditions (e.g. final accuracy over seeds), complementing the permutation
    p-value which only says whether there is one.  Each sample is resampled
    separately, so the two groups may have different spreads and sizes.  Caveat: with
    very few runs (≈ 8 per group) the percentile interval is somewhat too narrow
    (it ignores the small-sample ``n/(n-1)`` variance inflation), so read it together
    with the permutation test rather than alone.

    Equivalent in distribution to ``scipy.stats.bootstrap((x, y), ...,
    method='percentile')``.  An empty sample gives ``nan`` estimate and interval.
    """
    level = _check_level(level)
    n_resamples = _check_resamples(n_resamples)
    xs = _as_sample(x, "x")
    ys = _as_sample(y, "y")
    method = "two-sample percentile bootstrap of mean(x) - mean(y)"
    n = xs.size + ys.size
    if xs.size == 0 or ys.size == 0:
        return BootstrapResult(math.nan, _nan_interval(level), math.nan, n, n_resamples, seed, method)
    rng = np.random.default_rng(seed)
    dist = _bootstrap_means(xs, n_resamples, rng) - _bootstrap_means(ys, n_resamples, rng)
    return _bootstrap_result(dist, float(xs.mean() - ys.mean()), level, n, n_resamples, seed, method)


def _bootstrap_result(
    dist: FloatArray, estimate: float, level: float, n: int, n_resamples: int, seed: int, method: str
) -> BootstrapResult:
    """The estimate with the percentile interval and standard error of its resampled distribution."""
    return BootstrapResult(
        estimate=estimate,
        interval=_percentile_interval(dist, level),
        standard_error=float(dist.std(ddof=1)) if n_resamples > 1 else math.nan,
        n=n,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
    )


def fisher_exact_counts(
    succ_a: int,
    n_a: int,
    succ_b: int,
    n_b: int,
    *,
    alternative: Alternative = "two-sided",
) -> TestResult:
    """Fisher exact test of equal success rates from pooled counts of two groups.

    Why: compares two rates (e.g. correct completions 342/1024 vs 298/1024) without a
    large-sample approximation, conditioning on the total number of successes.  It
    assumes every trial is independent; completions pooled across seeds or sharing
    prompts are correlated, which makes this p-value too small — use it as a quick
    check and the seed-level permutation test for claims.

    Table ``[[succ_a, n_a - succ_a], [succ_b, n_b - succ_b]]``; ``statistic`` is the
    sample odds ratio ``(succ_a·fail_b) / (fail_a·succ_b)`` (``inf`` when a failure
    cell is zero; ``nan`` with ``p = 1`` when a row or column is empty), exactly as
    ``scipy.stats.fisher_exact`` (which computes it).  ``alternative='greater'``
    tests whether group A has the higher odds of success.
    """
    sa = _check_count(succ_a, "succ_a")
    na = _check_count(n_a, "n_a")
    sb = _check_count(succ_b, "succ_b")
    nb = _check_count(n_b, "n_b")
    if sa > na or sb > nb:
        raise ValueError("successes cannot exceed the number of trials")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    table = [[sa, na - sa], [sb, nb - sb]]
    res = _st.fisher_exact(table, alternative=alternative)
    return TestResult(
        statistic=float(res.statistic),
        p_value=float(res.pvalue),
        n=na + nb,
        method="Fisher exact test (statistic = sample odds ratio A vs B)",
        alternative=alternative,
    )


def cohens_d(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Cohen's d = (mean(x) - mean(y)) / pooled standard deviation.

    Why: expresses a difference between conditions in units of run-to-run spread, so
    effects on different metrics (or benchmarks) are comparable and can feed
    :func:`sample_size_for_power`.  The pooled SD
    ``sqrt(((n_x-1)s_x² + (n_y-1)s_y²) / (n_x+n_y-2))`` assumes both groups share
    one variance.  No small-sample bias correction (Hedges' g multiplies by
    ``1 - 3/(4(n_x+n_y)-9)``, ~5 % smaller at 8 vs 8).

    Edge cases: an empty group or ``n_x + n_y < 3`` → ``nan`` (no variance estimate);
    zero pooled SD → ``±inf`` if the means differ, ``nan`` if they are equal.
    """
    xs = _as_sample(x, "x")
    ys = _as_sample(y, "y")
    nx, ny = xs.size, ys.size
    if nx == 0 or ny == 0 or nx + ny < 3:
        return math.nan
    diff = float(xs.mean() - ys.mean())
    ss = float(np.sum((xs - xs.mean()) ** 2) + np.sum((ys - ys.mean()) ** 2))
    sd = math.sqrt(ss / (nx + ny - 2))
    # Treat an SD that is pure rounding noise relative to the data as zero.
    if sd <= 1e-14 * max(float(np.max(np.abs(xs))), float(np.max(np.abs(ys))), 1e-300):
        if diff == 0.0:
            return math.nan
        return math.copysign(math.inf, diff)
    return diff / sd


# --------------------------------------------------------------------------- planning


def _t_test_power(n: int, d: float, alpha: float) -> float:
    """Power of the two-sided two-sample t-test with ``n`` per group at effect ``d``."""
    df = 2 * n - 2
    nc = d * math.sqrt(n / 2.0)
    t_crit = float(_st.t.ppf(1.0 - alpha / 2.0, df))
    power = float(_st.nct.sf(t_crit, df, nc) + _st.nct.cdf(-t_crit, df, nc))
    if not math.isfinite(power):
        # scipy's noncentral t fails for extreme noncentrality; the normal limit is
        # then accurate (huge nc → power ≈ 1, huge df → t ≈ normal).
        power = float(_st.norm.sf(t_crit - nc) + _st.norm.cdf(-t_crit - nc))
    return power


def sample_size_for_power(effect_size_d: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Runs (seeds) per group for a two-sided two-sample t-test to reach ``power``.

    Why: answers "how many seeds would we need to detect an effect this large?" —
    the number a report should show next to a non-significant result.  Uses the
    exact noncentral-t power (not the normal shortcut, which is optimistic by a few
    runs at the small ``n`` typical of seed counts) and returns the smallest ``n``
    per group reaching ``power``; Cohen's (1988) tables give 64 for d = 0.5, 26 for
    d = 0.8 and 394 for d = 0.2.  Assumes normal metrics with equal variances; a
    permutation test needs about the same number.

    The sign of ``d`` is ignored.  Returns ``None`` when no finite sample suffices
    (``d`` is 0 or ``nan``); the minimum returned is 2.
    """
    alpha = _check_level(alpha, "alpha")
    power = _check_level(power, "power")
    d = abs(float(effect_size_d))
    if not d > 0.0 or math.isinf(d):
        return 2 if math.isinf(d) else None
    if _t_test_power(2, d, alpha) >= power:
        return 2
    # Bracket with the normal approximation, then integer bisection (power is
    # monotone in n): invariant power(lo) < target <= power(hi).
    z = float(_st.norm.ppf(1.0 - alpha / 2.0) + _st.norm.ppf(power))
    hi = max(3, math.ceil(2.0 * (z / d) ** 2) + 2)
    lo = 2
    while _t_test_power(hi, d, alpha) < power:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _t_test_power(mid, d, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def sample_size_two_proportions(p1: float, p2: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Items per group to detect success rates ``p1`` vs ``p2`` with a two-sided z-test.

    Why: answers "how many evaluation items (or episodes) per arm do we need to see
    a lift from p1 to p2?".  Uses the classical normal-approximation formula without
    continuity correction (Fleiss 1981), with the pooled variance under H0 and the
    unpooled one under H1::

        n = [z_{1-α/2}·sqrt(2·p̄·q̄) + z_{1-β}·sqrt(p1·q1 + p2·q2)]² / (p1 - p2)²

    rounded up.  Assumes two *independent* groups; two systems scored on the same
    items need fewer items (the paired McNemar design only pays for discordant
    items), so this is conservative for paired evaluations.

    Returns ``None`` when ``p1 == p2`` (no finite sample detects a zero difference).
    """
    alpha = _check_level(alpha, "alpha")
    power = _check_level(power, "power")
    for name, p in (("p1", p1), ("p2", p2)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {p!r}")
    if p1 == p2:
        return None
    p_bar = (p1 + p2) / 2.0
    z_a = float(_st.norm.ppf(1.0 - alpha / 2.0))
    z_b = float(_st.norm.ppf(power))
    num = z_a * math.sqrt(2.0 * p_bar * (1.0 - p_bar)) + z_b * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    n = (num / (p1 - p2)) ** 2
    # Guard against e.g. 93.00000000000001 from rounding turning into 94.
    return max(1, math.ceil(n - 1e-9))


# --------------------------------------------------------------------------- decisions


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order.

    Why: a report that tests several metrics (correct rate, reward, entropy, ...)
    will find "something significant" by chance; comparing Holm-adjusted p-values to
    alpha controls the family-wise error rate under any dependence between the tests,
    and is uniformly more powerful than plain Bonferroni.  Matches R's
    ``p.adjust(p, "holm")``: sort ascending, ``adj_(i) = max_{j<=i} min(1, (m-j+1)·p_(j))``.

    ``nan`` entries (tests that could not be run) stay ``nan`` and do not count
    towards ``m``.  An empty input gives an empty list.
    """
    p = np.asarray(list(p_values), dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("p_values must be a flat sequence")
    valid = ~np.isnan(p)
    if np.any((p[valid] < 0.0) | (p[valid] > 1.0)):
        raise ValueError("p-values must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    pv = p[valid]
    m = pv.size
    if m:
        order = np.argsort(pv, kind="stable")
        scaled = np.minimum(1.0, (m - np.arange(m)) * pv[order])
        adj = np.empty(m)
        adj[order] = np.maximum.accumulate(scaled)
        out[valid] = adj
    return [float(v) for v in out]


def recommendation(
    p_value: float,
    delta: float,
    ci: Interval | tuple[float, float],
    alpha: float = 0.05,
    higher_is_better: bool = True,
) -> Recommendation:
    """Turn a test result into one of three report labels.

    Why: readers want a verdict, but a verdict must need *both* a significant test
    and an interval that agrees on the direction; disagreement (possible because
    the p-value and the CI come from different procedures) is reported as
    insufficient rather than picking one.

    * ``statistically_significant_improvement``: ``p < alpha``, ``delta`` in the
      better direction and the CI entirely on that side of 0;
    * ``significant_degradation``: ``p < alpha``, ``delta`` in the worse direction and
      the CI entirely on that side of 0;
    * ``insufficient_statistical_evidence``: otherwise, including any ``nan``.

    ``delta`` and ``ci`` are candidate minus baseline; set ``higher_is_better=False``
    for losses/error rates.
    """
    alpha = _check_level(alpha, "alpha")
    low, high = (ci.low, ci.high) if isinstance(ci, Interval) else (float(ci[0]), float(ci[1]))
    values = (p_value, delta, low, high)
    if any(math.isnan(v) for v in values) or not p_value < alpha:
        return INSUFFICIENT
    sign = 1.0 if higher_is_better else -1.0
    better, lo, hi = sign * delta, min(sign * low, sign * high), max(sign * low, sign * high)
    if better > 0.0 and lo > 0.0:
        return IMPROVEMENT
    if better < 0.0 and hi < 0.0:
        return DEGRADATION
    return INSUFFICIENT
