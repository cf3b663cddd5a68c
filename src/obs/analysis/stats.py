"""Pure statistics toolkit for comparing ML training runs.

A p-value or an interval is only as good as its unit of replication, and obs knows two:

* **Paired items** (probe cases, evaluation items): two systems scored right/wrong on the *same*
  items. The items are the replicates and the pairs are kept. The interval of the rate gap is
  Tango's score interval for paired proportions (:func:`tango_interval`), and the test is the score
  test it inverts (:func:`score_test`), which at a gap of zero is McNemar's test without continuity
  correction. Because the interval is the inversion of the test, the interval excludes 0 exactly
  when the test gives p < alpha: a page can never show a significant p beside an interval that
  includes 0, or the reverse. Tango (1998) and Fagerland, Lydersen & Laake (2013, 2014) show these
  score methods hold their level at small n where the exact conditional McNemar test is needlessly
  conservative and percentile bootstraps (which collapse to zero width when no pair disagrees)
  undercover.
* **Independent replicates** (seeds): one summary number per run, a few runs per condition.
  :func:`welch` gives Welch's t-test and its dual interval of the difference of means (again: the
  interval excludes 0 exactly when p < alpha); :func:`hedges_g` the small-sample-corrected effect
  size; :func:`sample_size_for_power` the seeds needed at the level the verdict uses.

The logged points of one run are *not* replicates (autocorrelated, trending): nothing here tests
them, and the callers describe one run against one run without a p-value.

pass@k (Chen et al. 2021): :func:`pass_at_k` is the unbiased estimator per item; the mean over items
gets a Wilson interval widened or narrowed by the observed design effect
(:func:`mean_interval_01`), and two systems on shared items the Tango interval on the per-item
differences, scaled the same way (:func:`paired_means`). With one sample per item both reduce
exactly to the binary methods above.

Conventions shared by every function here:

* Pure: no I/O, no global random state; nothing resamples, so the same inputs give the same
  numbers bit for bit.
* Results are small frozen dataclasses holding plain Python ``float``/``int``/``str`` with an
  ``as_dict()`` for JSON. Quantities that are undefined for the input are ``nan`` (or ``None``
  with a ``problem`` saying why) rather than exceptions, so a report can say "—" instead of
  crashing. Strict JSON has no ``nan``; serialisers such as orjson write null.
* Invalid input (NaN/inf values, mismatched paired lengths, negative counts, levels outside
  (0, 1)) raises :class:`ValueError`: those are caller bugs, not data.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from statistics import NormalDist
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEGRADATION",
    "EXACT_BELOW",
    "IMPROVEMENT",
    "INSUFFICIENT",
    "NEGLIGIBLE",
    "NOT_ONE_MEASUREMENT",
    "NOT_TESTED",
    "OUTCOME_WORDS",
    "SIZE_UNKNOWN",
    "Alternative",
    "Interval",
    "PairedComparison",
    "PairedMeans",
    "Recommendation",
    "TestResult",
    "WelchResult",
    "clopper_pearson",
    "cohens_d",
    "design_effect",
    "exact_mcnemar",
    "hedges_g",
    "holm_adjust",
    "holm_family",
    "mean_interval_01",
    "paired_comparison",
    "paired_comparisons",
    "paired_items_needed",
    "paired_means",
    "pass_at_k",
    "recommendation",
    "sample_size_for_power",
    "score_test",
    "score_tests",
    "tango_interval",
    "tango_intervals",
    "welch",
    "wilson_interval",
]

Alternative = Literal["two-sided", "greater", "less"]
Recommendation = Literal[
    "statistically_significant_improvement",
    "insufficient_statistical_evidence",
    "significant_degradation",
    "significant_below_min_effect",
    "significant_size_not_established",
    "not_tested",
    "not_one_measurement",
]
IMPROVEMENT: Recommendation = "statistically_significant_improvement"
INSUFFICIENT: Recommendation = "insufficient_statistical_evidence"
DEGRADATION: Recommendation = "significant_degradation"
NEGLIGIBLE: Recommendation = "significant_below_min_effect"  # significant, smaller than the minimum effect
NOT_TESTED: Recommendation = "not_tested"  # no replicates: described, never tested
# the run and its baseline are not one measurement (probe, compiler, tokenizer or DSL differ:
# analysis.measurement): described, never tested
NOT_ONE_MEASUREMENT: Recommendation = "not_one_measurement"
# significant, but the interval does not show the change is at least the minimum effect (nor that it is smaller)
SIZE_UNKNOWN: Recommendation = "significant_size_not_established"

# How each outcome reads, the same on every page, PR comment and `obs gate` line.
OUTCOME_WORDS: dict[str, str] = {
    IMPROVEMENT: "significant improvement",
    DEGRADATION: "significant degradation",
    NEGLIGIBLE: "significant, below the minimum effect",
    SIZE_UNKNOWN: "significant, size not established",
    INSUFFICIENT: "not significant",
    NOT_TESTED: "not tested",
    NOT_ONE_MEASUREMENT: "not one measurement: no test",
}

FloatArray = npt.NDArray[np.float64]

_NORMAL = NormalDist()
_BISECTIONS = 64  # interval endpoints to ~1e-19: far below anything shown


class _LazyScipy:
    """A scipy submodule, imported on first use (scipy.special costs ~0.25 s, and most runs never need it;
    scipy.stats, ~1 s, is never imported: its distributions are scipy.special's functions underneath)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


_special = _LazyScipy("scipy.special")


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

    @property
    def defined(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

    def contains(self, value: float) -> bool:
        """True if ``low <= value <= high`` (False for an undefined interval)."""
        return bool(self.low <= value <= self.high)

    def excludes_zero(self) -> bool:
        """True if the whole interval lies strictly on one side of zero."""
        return bool(self.low > 0.0 or self.high < 0.0)


@dataclass(frozen=True, slots=True)
class TestResult(_Result):
    """Outcome of a hypothesis test: ``statistic`` (test specific), ``p_value``, the ``n`` it used."""

    __test__: ClassVar[bool] = False  # not a pytest test class despite the name

    statistic: float
    p_value: float
    n: int
    method: str
    alternative: Alternative = "two-sided"


PAIRED_METHOD = (
    "Tango score interval of the paired rate difference; score test (McNemar's test without continuity "
    "correction at a difference of 0), its exact dual: the interval excludes 0 exactly when p < alpha"
)
PAIRED_EXACT_METHOD = (
    "fewer than 25 discordant pairs: the exact conditional (binomial) McNemar test, and an interval that "
    "spans both Tango's score interval and the Clopper-Pearson interval of the discordant split (so it "
    "excludes 0 exactly when p < alpha)"
)

# Below this many discordant pairs the score (asymptotic McNemar) test does not decide alone: the usual rule
# for the chi-square approximation of McNemar's statistic is b + c >= 25, the exact binomial test below it.
# Conditionally on the discordant count the score test rejects a true null with probability 0.125 at 4 pairs
# (4 vs 0) and 0.0625 at 5, where the exact test cannot reject at all; beyond 25 its conditional level
# oscillates around alpha (mean 0.050 over 25-199 pairs). tests/unit/test_stats.py computes these.
EXACT_BELOW = 25


@dataclass(frozen=True, slots=True)
class PairedComparison(_Result):
    """Two systems scored right/wrong on the same ``n`` items (A minus B).

    The 2×2 cells are ``both_correct``, ``only_a`` (A right, B wrong), ``only_b`` and
    ``both_wrong``; ``delta = rate_a - rate_b = (only_a - only_b) / n``. ``interval`` is Tango's
    score interval of ``delta`` and ``p_value`` the two-sided score test of ``delta = 0`` (McNemar
    without continuity correction); ``recommendation`` combines them at ``alpha`` (and
    ``min_effect``, in the better direction).
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
    min_effect: float = 0.0
    method: str = PAIRED_METHOD
    exact: bool = False  # fewer than EXACT_BELOW discordant pairs: the exact conditional test decides
    p_adjusted: float | None = None  # Holm-adjusted p over `family`, when this cell is one of several
    family: str | None = None  # what the p was adjusted over ("the 44 other cells of this comparison")

    @property
    def discordant(self) -> int:
        return self.only_a + self.only_b

    @property
    def p_decision(self) -> float:
        """The p the recommendation uses: the adjusted one when this cell belongs to a family."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted


@dataclass(frozen=True, slots=True)
class PairedMeans(_Result):
    """Two systems' per-item scores in [0, 1] on the same ``n`` items (A minus B): pass@k, ...

    ``interval`` is the Tango score interval on the positive and negative parts of the per-item
    differences, its variance scaled by ``design_effect`` (1 for 0/1 scores, where this is exactly
    :class:`PairedComparison`); ``p_value`` the dual score test of ``delta = 0``.
    """

    n: int
    mean_a: float
    mean_b: float
    delta: float
    interval: Interval
    p_value: float
    alpha: float
    recommendation: Recommendation
    design_effect: float
    items_differing: int
    method: str


@dataclass(frozen=True, slots=True)
class WelchResult(_Result):
    """Two independent groups of replicates (seeds): Welch's t-test and its dual interval (x minus y).

    ``interval`` and ``p_value`` are ``None`` when they cannot be computed, and ``problem`` says why:
    fewer than :data:`MIN_REPLICATES` values in a group ("too few seeds for an interval"), or no
    variation at all within a group ("no variation observed": its seeds are copies of each other, one
    replicate rather than n; a test against them would treat their mean as known exactly, and a
    zero-width interval would be a lie, not a 95% CI).
    """

    estimate: float
    interval: Interval | None
    p_value: float | None
    t: float | None
    df: float | None
    se: float | None
    n_x: int
    n_y: int
    mean_x: float
    mean_y: float
    sd_x: float
    sd_y: float
    problem: str | None
    method: str = "Welch's t-test (unequal variances, Satterthwaite df) and its dual t interval"

    @property
    def df_rule(self) -> str:
        """Which degrees of freedom the test used: Satterthwaite's, or min(n) - 1 for unequal seed counts."""
        return "Satterthwaite" if self.n_x == self.n_y else "min(n) − 1 (Hsu), as the seed counts differ"


# --------------------------------------------------------------------------- validation


def _check_level(level: float, name: str = "level") -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {level!r}")
    return level


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


def _nan_interval(level: float) -> Interval:
    return Interval(math.nan, math.nan, level)


def _z(level: float) -> float:
    return _NORMAL.inv_cdf(0.5 + 0.5 * level)


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
    return _wilson(k / n, float(n), level)


def _wilson(p: float, n: float, level: float) -> Interval:
    """The Wilson interval of a rate ``p`` observed over ``n`` (possibly effective, non-integer) trials."""
    z = _z(level)
    denom = 2.0 * (n + z * z)
    center = (2.0 * n * p + z * z) / denom
    half = z / denom * math.sqrt(max(0.0, 4.0 * n * p * (1.0 - p)) + z * z)
    low = 0.0 if p <= 0.0 else max(0.0, center - half)
    high = 1.0 if p >= 1.0 else min(1.0, center + half)
    return Interval(low, high, level)


def design_effect(values: npt.ArrayLike, max_samples: int = 1) -> float:
    """How much less a mean of [0, 1]-scores varies than a mean of as many 0/1 outcomes would.

    Why: a per-item score in [0, 1] (pass@k from several samples) varies at most as much as a
    0/1 outcome with the same mean, ``p(1 - p)``; the ratio of the observed variance to that bound
    is the design effect that turns ``n`` items into ``n / deff`` effective 0/1 trials (the
    Rao-Scott / Korn-Graubard idea). It is 1 for 0/1 scores, and never below ``1 / max_samples``:
    an item scored from ``m`` samples cannot carry more than ``m`` trials' worth of information.
    """
    v = _as_sample(values, "values")
    m = max(1, int(max_samples))
    if v.size == 0:
        return 1.0
    p = float(v.mean())
    bound = p * (1.0 - p)
    if bound <= 0.0:
        return 1.0
    observed = float(np.mean((v - p) ** 2))
    return float(min(1.0, max(1.0 / m, observed / bound)))


def mean_interval_01(values: npt.ArrayLike, level: float = 0.95, max_samples: int = 1) -> Interval:
    """Interval of the mean of per-item scores in [0, 1] (items are the unit): pass@k over a probe.

    The Wilson interval at ``n / design_effect`` effective trials (see :func:`design_effect`):
    exactly :func:`wilson_interval` for 0/1 scores, narrower when several samples per item pin
    each item's score down. Never zero width, never outside [0, 1].
    """
    level = _check_level(level)
    v = _as_sample(values, "values")
    if v.size == 0:
        return _nan_interval(level)
    if np.any((v < 0.0) | (v > 1.0)):
        raise ValueError("values must lie in [0, 1]")
    deff = design_effect(v, max_samples)
    return _wilson(float(v.mean()), v.size / deff, level)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one item: ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021, eq. 1).

    The chance that at least one of ``k`` samples drawn without replacement from the ``n`` generated
    ones is correct, when ``c`` of them are. Computed as the paper's numerically stable product
    ``1 - prod_{i = n - c + 1}^{n} (1 - k / i)``. Needs ``1 <= k <= n``.
    """
    n = _check_count(n, "n")
    c = _check_count(c, "c")
    k = _check_count(k, "k")
    if c > n:
        raise ValueError(f"c ({c}) cannot exceed n ({n})")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and n ({n}), got {k}")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


# --------------------------------------------------------------------------- paired items


FloatLike = float | FloatArray


def _norm_sf(z: FloatArray) -> FloatArray:
    """Upper-tail normal probability, elementwise (math.erfc: no scipy on the run-page path)."""
    erfc = np.frompyfunc(math.erfc, 1, 1)
    out: FloatArray = np.asarray(erfc(np.asarray(z, dtype=np.float64) / math.sqrt(2.0)), dtype=np.float64) / 2.0
    return out


def _tango_z(b: FloatLike, c: FloatLike, n: FloatLike, d: FloatLike, rho: FloatLike = 1.0) -> FloatArray:
    """Tango's (1998) score statistic for H0: p12 - p21 = d, elementwise.

    ``b`` items right only under A, ``c`` right only under B, ``n`` items in all; ``q21`` is the
    maximum-likelihood p21 under the constraint (a quadratic's positive root), and the statistic
    ``(b - c - n·d) / sqrt(n·(2·q21 + d·(1 - d)))`` is standard normal under H0. ``rho`` scales the
    variance by a design effect (1 for 0/1 outcomes, see :func:`paired_means`). At ``d = 0`` it is
    ``(b - c) / sqrt(b + c)``: McNemar's statistic.
    """
    b_, c_, n_, d_ = (np.asarray(v, dtype=np.float64) for v in (b, c, n, d))
    w = -b_ - c_ + (2.0 * n_ - b_ + c_) * d_
    disc = np.maximum(w * w + 8.0 * n_ * c_ * d_ * (1.0 - d_), 0.0)
    q21 = (np.sqrt(disc) - w) / (4.0 * n_)
    var = np.asarray(rho, dtype=np.float64) * n_ * (2.0 * q21 + d_ * (1.0 - d_))
    num = b_ - c_ - n_ * d_
    with np.errstate(divide="ignore", invalid="ignore"):
        z = num / np.sqrt(var)
    edge = np.where(num > 0, np.inf, np.where(num < 0, -np.inf, 0.0))
    out: FloatArray = np.where(var > 1e-300, z, edge)
    return out


def tango_intervals(
    b: npt.ArrayLike, c: npt.ArrayLike, n: npt.ArrayLike, level: float = 0.95, rho: npt.ArrayLike = 1.0
) -> tuple[FloatArray, FloatArray]:
    """Tango's score interval of ``(b - c) / n`` for many paired tables at once: (lows, highs).

    The set of differences ``d`` the score test does not reject at ``1 - level``: the statistic
    falls monotonically in ``d``, so each endpoint is found by bisection (64 halvings of [-1, 1]).
    An endpoint is ±1 exactly when the estimate is. ``n == 0`` gives ``nan``.
    """
    level = _check_level(level)
    zc = _z(level)
    b_ = np.atleast_1d(np.asarray(b, dtype=np.float64))
    c_ = np.atleast_1d(np.asarray(c, dtype=np.float64))
    n_ = np.atleast_1d(np.asarray(n, dtype=np.float64))
    rho_ = np.broadcast_to(np.asarray(rho, dtype=np.float64), b_.shape)
    empty = n_ <= 0
    safe_n = np.where(empty, 1.0, n_)
    est = np.clip((b_ - c_) / safe_n, -1.0, 1.0)
    # lower: Z(lo) > zc (rejected) and Z(hi) <= zc (kept), hi starting at the estimate
    lo, hi = np.full_like(est, -1.0), est.copy()
    keep_edge = _tango_z(b_, c_, safe_n, lo, rho_) <= zc
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2.0
        rejected = _tango_z(b_, c_, safe_n, mid, rho_) > zc
        lo, hi = np.where(rejected, mid, lo), np.where(rejected, hi, mid)
    lows = np.where(keep_edge, -1.0, hi)
    # upper: Z(lo) >= -zc (kept), lo starting at the estimate, and Z(hi) < -zc (rejected)
    lo, hi = est.copy(), np.full_like(est, 1.0)
    keep_edge = _tango_z(b_, c_, safe_n, hi, rho_) >= -zc
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2.0
        rejected = _tango_z(b_, c_, safe_n, mid, rho_) < -zc
        lo, hi = np.where(rejected, lo, mid), np.where(rejected, mid, hi)
    highs = np.where(keep_edge, 1.0, lo)
    lows_out: FloatArray = np.where(empty, np.nan, lows)
    highs_out: FloatArray = np.where(empty, np.nan, highs)
    return lows_out, highs_out


def tango_interval(b: float, c: float, n: float, level: float = 0.95, rho: float = 1.0) -> Interval:
    """Tango's (1998) score interval for the difference of two paired proportions, ``(b - c) / n``.

    Why: the paired Wald interval collapses to zero width when no pair disagrees and undercovers
    at small n; the percentile bootstrap does the same. The score interval inverts the score test
    with the variance estimated *under each hypothesis*, so it has good coverage down to a handful
    of discordant pairs (Tango 1998; Fagerland, Lydersen & Laake 2014 recommend it) and a real
    width even with none. ``b``: pairs right only under A; ``c``: right only under B.
    """
    lows, highs = tango_intervals([b], [c], [n], level, rho)
    level = _check_level(level)
    return Interval(float(lows[0]), float(highs[0]), level)


def score_tests(
    b: npt.ArrayLike,
    c: npt.ArrayLike,
    n: npt.ArrayLike,
    delta0: npt.ArrayLike = 0.0,
    alternative: Alternative = "two-sided",
    rho: npt.ArrayLike = 1.0,
) -> FloatArray:
    """p-values of Tango's score test of ``p12 - p21 = delta0`` for many paired tables at once.

    ``alternative="less"``: evidence that the difference is below ``delta0`` (``greater``: above).
    A one-sided test against a margin (``delta0 = -0.02``) asks "is it worse by more than 2 pp?".
    ``n == 0`` gives ``nan``.
    """
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    b_ = np.atleast_1d(np.asarray(b, dtype=np.float64))
    n_ = np.atleast_1d(np.asarray(n, dtype=np.float64))
    empty = n_ <= 0
    c_ = np.atleast_1d(np.asarray(c, dtype=np.float64))
    d0 = np.broadcast_to(np.asarray(delta0, dtype=np.float64), b_.shape)
    z = _tango_z(b_, c_, np.where(empty, 1.0, n_), d0, np.asarray(rho, dtype=np.float64))
    if alternative == "less":
        p = _norm_sf(-z)
    elif alternative == "greater":
        p = _norm_sf(z)
    else:
        p = np.minimum(1.0, 2.0 * _norm_sf(np.abs(z)))
    out: FloatArray = np.where(empty, np.nan, p)
    return out


def score_test(b: int, c: int, n: int, delta0: float = 0.0, alternative: Alternative = "two-sided") -> TestResult:
    """Tango's score test of ``p12 - p21 = delta0`` on a paired 2×2 table (b, c discordant of n pairs).

    At ``delta0 = 0`` (two-sided) it is McNemar's test without continuity correction,
    ``chi2 = (b - c)² / (b + c)``, which holds its level down to small counts (Fagerland, Lydersen &
    Laake 2013: "The McNemar test for binary matched-pairs data: mid-p and asymptotic are better than
    exact conditional"); ``b + c == 0`` gives p = 1. ``statistic`` is the z statistic.
    """
    b = _check_count(b, "b")
    c = _check_count(c, "c")
    n = _check_count(n, "n")
    if b + c > n:
        raise ValueError(f"discordant pairs ({b + c}) cannot exceed n ({n})")
    z = float(_tango_z(b, c, max(n, 1), delta0)) if n else math.nan
    p = float(score_tests([b], [c], [n], delta0, alternative)[0])
    name = "McNemar score test (no continuity correction)" if delta0 == 0.0 else f"Tango score test of d = {delta0:g}"
    return TestResult(statistic=z, p_value=p, n=n, method=name, alternative=alternative)


def paired_comparison(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    level: float = 0.95,
    alpha: float = 0.05,
    higher_is_better: bool = True,
    min_effect: float = 0.0,
) -> PairedComparison:
    """Full comparison of two systems' right/wrong outcomes on the same items (A minus B).

    ``a[i]`` and ``b[i]`` must refer to the same item. Assumes items are independent of each other
    (not, e.g., several paraphrases of one question). Empty input gives ``nan`` rates, a ``nan``
    interval and p, and the "insufficient" recommendation.
    """
    return paired_comparisons(
        [(a, b)], higher_is_better=[higher_is_better], level=level, alpha=alpha, min_effect=min_effect
    )[0]


def paired_comparisons(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]],
    *,
    higher_is_better: Sequence[bool] | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
    min_effect: float = 0.0,
) -> list[PairedComparison]:
    """:func:`paired_comparison` for many (a, b) pairs at once (one vectorised interval search).

    A run's report compares every check in every scope (all cases, each split, each family) with its
    baseline: dozens of comparisons, each needing only its four cell counts.
    """
    counts = []
    for a, b in pairs:
        xa, xb = _as_binary(a, "a"), _as_binary(b, "b")
        if xa.size != xb.size:
            raise ValueError(f"paired samples must have equal length, got {xa.size} and {xb.size}")
        both = int(np.count_nonzero(xa & xb))
        only_a = int(np.count_nonzero(xa & ~xb))
        only_b = int(np.count_nonzero(~xa & xb))
        counts.append((int(xa.size), both, only_a, only_b))
    return paired_from_counts(
        counts, higher_is_better=higher_is_better, level=level, alpha=alpha, min_effect=min_effect
    )


def paired_from_counts(
    counts: Sequence[tuple[int, int, int, int]],
    *,
    higher_is_better: Sequence[bool] | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
    min_effect: float = 0.0,
) -> list[PairedComparison]:
    """Paired comparisons from ``(n, both_correct, only_a, only_b)`` cell counts."""
    level = _check_level(level)
    alpha = _check_level(alpha, "alpha")
    if not counts:
        return []
    hib = list(higher_is_better) if higher_is_better is not None else [True] * len(counts)
    n = np.array([c[0] for c in counts], dtype=np.float64)
    b = np.array([c[2] for c in counts], dtype=np.float64)
    c = np.array([c[3] for c in counts], dtype=np.float64)
    lows, highs = tango_intervals(b, c, n, level)
    ps = score_tests(b, c, n)
    exact = (b + c) < EXACT_BELOW
    if bool(np.any(exact)):
        lows, highs, ps = _exact_small(b, c, n, lows, highs, ps, exact, level)
    out = []
    for i, (size, both, only_a, only_b) in enumerate(counts):
        if size == 0:
            interval = _nan_interval(level)
            rate_a = rate_b = delta = p_value = math.nan
        else:
            interval = Interval(float(lows[i]), float(highs[i]), level)
            rate_a, rate_b = (both + only_a) / size, (both + only_b) / size
            delta = (only_a - only_b) / size
            p_value = float(ps[i])
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
                recommendation=recommendation(
                    p_value, delta, interval, alpha=alpha, higher_is_better=hib[i], min_effect=min_effect
                ),
                min_effect=min_effect,
                method=PAIRED_EXACT_METHOD if exact[i] else PAIRED_METHOD,
                exact=bool(exact[i]),
            )
        )
    return out


def holm_family(
    results: Sequence[PairedComparison], higher_is_better: Sequence[bool], family: str
) -> list[PairedComparison]:
    """The same comparisons with Holm-adjusted p-values over ``results`` and recommendations made from them.

    Why: a run's comparison table shows dozens of cells (every check in every split and family); at raw
    p < 0.05 some are "significant" by chance alone. Each cell keeps its raw p and its (unadjusted) 95% CI;
    its label uses the adjusted p, and ``family`` names what it was adjusted over. A family of one is
    left as it is.
    """
    if len(results) < 2:
        return list(results)
    adjusted = holm_adjust([r.p_value for r in results])
    out = []
    for r, adj, hib in zip(results, adjusted, higher_is_better, strict=True):
        rec = recommendation(adj, r.delta, r.interval, alpha=r.alpha, higher_is_better=hib, min_effect=r.min_effect)
        out.append(replace(r, p_adjusted=None if math.isnan(adj) else adj, family=family, recommendation=rec))
    return out


def exact_mcnemar(b: int, c: int) -> float:
    """The exact conditional McNemar test: two-sided binomial test of ``b`` of ``b + c`` discordant pairs
    against 1/2, ``min(1, 2·P(X <= min(b, c)))``. Matches statsmodels' ``mcnemar(exact=True)``."""
    b, c = _check_count(b, "b"), _check_count(c, "c")
    m = b + c
    if m == 0:
        return 1.0
    # exact integer arithmetic (no scipy on the run page's path): sum C(m, i) for i <= min(b, c), over 2^m
    return min(1.0, 2.0 * sum(math.comb(m, i) for i in range(min(b, c) + 1)) / 2.0**m)


def clopper_pearson(k: int, m: int, level: float = 0.95) -> Interval:
    """Clopper-Pearson interval of a binomial proportion ``k / m`` (the inversion of two one-sided exact
    tests at ``(1 - level) / 2`` each). Matches statsmodels' ``proportion_confint(method="beta")``."""
    level = _check_level(level)
    if m == 0:
        return Interval(0.0, 1.0, level)
    a = 1.0 - level
    # each bound by bisection on the binomial tail (exact sums: the run page's path does not import scipy)
    low = 0.0 if k == 0 else _binomial_root(lambda q: _binom_sf(k - 1, m, q) - a / 2.0)
    high = 1.0 if k == m else _binomial_root(lambda q: a / 2.0 - _binom_cdf(k, m, q))
    return Interval(low, high, level)


def _binom_cdf(k: int, m: int, q: float) -> float:
    """P(X <= k) for X ~ Binomial(m, q), summed exactly term by term."""
    return math.fsum(math.comb(m, i) * q**i * (1.0 - q) ** (m - i) for i in range(k + 1))


def _binom_sf(k: int, m: int, q: float) -> float:
    """P(X > k) for X ~ Binomial(m, q)."""
    return math.fsum(math.comb(m, i) * q**i * (1.0 - q) ** (m - i) for i in range(k + 1, m + 1))


def _binomial_root(f: Any) -> float:
    """The q in (0, 1) where the increasing function `f` crosses 0, by bisection (~1e-16)."""
    lo, hi = 0.0, 1.0
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2.0
        if f(mid) < 0.0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _exact_small(
    b: FloatArray,
    c: FloatArray,
    n: FloatArray,
    lows: FloatArray,
    highs: FloatArray,
    ps: FloatArray,
    exact: npt.NDArray[np.bool_],
    level: float,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Where fewer than EXACT_BELOW pairs disagree: p = the larger of the exact conditional McNemar p and
    the score p, and the interval the hull of Tango's and the exact conditional one.

    Conditionally on the m discordant pairs, b ~ Binomial(m, pi) and the gap is (m/n)(2 pi - 1); the
    Clopper-Pearson interval of pi excludes 1/2 exactly when the exact test rejects, so the mapped interval
    is its dual. The hull excludes 0 exactly when both intervals do, i.e. when both tests reject: exactly
    when the larger p is below alpha. The hull is never narrower than Tango's, so it covers at least as
    often; with no discordant pair it is Tango's (never zero width).
    """
    lows, highs, ps = lows.copy(), highs.copy(), ps.copy()
    for i in np.flatnonzero(exact):
        if n[i] <= 0:
            continue
        bi, ci = int(b[i]), int(c[i])
        m = bi + ci
        cp = clopper_pearson(bi, m, level)
        scale = m / float(n[i])
        lows[i] = min(lows[i], scale * (2.0 * cp.low - 1.0))
        highs[i] = max(highs[i], scale * (2.0 * cp.high - 1.0))
        ps[i] = max(ps[i], exact_mcnemar(bi, ci))
    return lows, highs, ps


def paired_means(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    level: float = 0.95,
    alpha: float = 0.05,
    higher_is_better: bool = True,
    max_samples: int = 1,
) -> PairedMeans:
    """Two systems' per-item scores in [0, 1] on the same items (A minus B): e.g. pass@k per item.

    The items are the unit and each item's pair is kept. The per-item differences ``d`` are split
    into their positive and negative parts, which play the roles of Tango's discordant counts, and
    the score variance is scaled by the design effect of ``d`` (observed variance over the variance
    0/1 outcomes with the same parts would have; at least ``1 / max_samples``). For 0/1 scores the
    design effect is 1 and this is exactly :func:`paired_comparison`.
    """
    level = _check_level(level)
    alpha = _check_level(alpha, "alpha")
    x, y = _as_sample(a, "a"), _as_sample(b, "b")
    if x.size != y.size:
        raise ValueError(f"paired samples must have equal length, got {x.size} and {y.size}")
    if np.any((x < 0) | (x > 1) | (y < 0) | (y > 1)):
        raise ValueError("scores must lie in [0, 1]")
    method = (
        "Tango score interval on the positive and negative parts of the per-item differences, variance "
        "scaled by their design effect; dual score test"
    )
    n = int(x.size)
    if n == 0:
        return PairedMeans(
            0, math.nan, math.nan, math.nan, _nan_interval(level), math.nan, alpha, INSUFFICIENT, 1.0, 0, method
        )
    d = x - y
    pos, neg = float(np.sum(np.maximum(d, 0.0))), float(np.sum(np.maximum(-d, 0.0)))
    mean = float(d.mean())
    bound = float(np.mean(np.abs(d))) - mean * mean
    observed = float(np.mean(d * d)) - mean * mean
    deff = 1.0 if bound <= 1e-15 else float(min(1.0, max(1.0 / max(1, max_samples), observed / bound)))
    lows, highs = tango_intervals([pos], [neg], [n], level, deff)
    interval = Interval(float(lows[0]), float(highs[0]), level)
    p_value = float(score_tests([pos], [neg], [n], 0.0, "two-sided", deff)[0])
    return PairedMeans(
        n=n,
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        delta=mean,
        interval=interval,
        p_value=p_value,
        alpha=alpha,
        recommendation=recommendation(p_value, mean, interval, alpha=alpha, higher_is_better=higher_is_better),
        design_effect=deff,
        items_differing=int(np.count_nonzero(d)),
        method=method,
    )


def paired_items_needed(p_discordant: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Paired items for a two-sided McNemar test to reach ``power`` (Connor 1987, Biometrics 43:207).

    ``p_discordant`` is the share of items on which the two systems disagree (``(b + c) / n``) and
    ``delta`` the difference of the rates (``(b - c) / n``)::

        n = [z_{1-α/2}·sqrt(ψ) + z_{1-β}·sqrt(ψ - δ²)]² / δ²

    A paired design pays only for the discordant items, so it needs far fewer items than the
    two-independent-groups formula. ``None`` when ``delta`` is 0 (no finite number of items detects
    it); ``|delta|`` cannot exceed ``p_discordant``.
    """
    alpha = _check_level(alpha, "alpha")
    power = _check_level(power, "power")
    psi, d = float(p_discordant), abs(float(delta))
    if not 0.0 <= psi <= 1.0 or d > psi + 1e-12:
        raise ValueError(f"need 0 <= |delta| <= p_discordant <= 1, got delta={delta!r}, p_discordant={psi!r}")
    if d == 0.0:
        return None
    za, zb = _z(1.0 - alpha), _NORMAL.inv_cdf(power)
    n = (za * math.sqrt(psi) + zb * math.sqrt(max(0.0, psi - d * d))) ** 2 / (d * d)
    return max(1, math.ceil(n - 1e-9))


# --------------------------------------------------------------------------- independent replicates

# Each condition needs its own estimate of spread, so two seeds per condition is the least that can
# give an interval at all; with two (Welch df >= 1) the t interval still holds its level (the
# calibration benchmark checks 2v2 as well as 3v3 and up), it is just very wide.
MIN_REPLICATES = 2


def welch(x: npt.ArrayLike, y: npt.ArrayLike, *, level: float = 0.95) -> WelchResult:
    """Welch's t-test of ``mean(x) = mean(y)`` and the dual ``level`` t interval of ``mean(x) - mean(y)``.

    Why: with a few seeds per condition (3-10) the percentile bootstrap is too narrow (it ignores the
    small-sample variance inflation) and a permutation test cannot reach p < 0.05 with 3 vs 3 seeds
    while its bootstrap interval already excludes 0 - two procedures that disagree. Welch's t interval
    carries the right small-sample widening (Satterthwaite degrees of freedom, unequal variances
    allowed) and is the exact inversion of its test: the interval excludes 0 iff p < 1 - level.
    Matches ``scipy.stats.ttest_ind(x, y, equal_var=False)`` and its ``confidence_interval`` for equal
    group sizes.

    With unequal group sizes the degrees of freedom are Hsu's conservative ``min(n_x, n_y) - 1`` instead
    of Satterthwaite's (which under-covers when the smaller group is the noisier: see the code); with
    equal sizes this is exactly scipy's Welch test.

    Fewer than :data:`MIN_REPLICATES` values in a group, or no spread at all in a group (its seeds are
    copies of one run), give no interval and no p, with ``problem`` saying so.
    """
    level = _check_level(level)
    xs, ys = _as_sample(x, "x"), _as_sample(y, "y")
    nx, ny = int(xs.size), int(ys.size)
    mx = float(xs.mean()) if nx else math.nan
    my = float(ys.mean()) if ny else math.nan
    sx = float(xs.std(ddof=1)) if nx > 1 else math.nan
    sy = float(ys.std(ddof=1)) if ny > 1 else math.nan
    estimate = mx - my

    def result(problem: str | None, **kw: Any) -> WelchResult:
        base: dict[str, Any] = {"interval": None, "p_value": None, "t": None, "df": None, "se": None}
        base.update(kw)
        return WelchResult(
            estimate=estimate, n_x=nx, n_y=ny, mean_x=mx, mean_y=my, sd_x=sx, sd_y=sy, problem=problem, **base
        )

    if nx < MIN_REPLICATES or ny < MIN_REPLICATES:
        return result(
            f"too few seeds for an interval ({nx} and {ny}; each condition needs at least {MIN_REPLICATES} "
            "to estimate its spread)"
        )
    vx, vy = sx * sx / nx, sy * sy / ny
    scale = max(float(np.max(np.abs(xs))), float(np.max(np.abs(ys))), 1e-300)
    if math.sqrt(vx + vy) <= 1e-12 * scale:
        return result(f"no variation observed (n = {nx} + {ny}): every seed gave the same value")
    flat = [name for name, sd in (("first", sx), ("second", sy)) if sd <= 1e-12 * scale]
    if flat:
        # Welch would then test the other group against a constant, as if this group's mean were known
        # exactly: copies of one run are one replicate, not n, and there is no spread to test against.
        which = "the candidate's" if flat == ["first"] else "the baseline's"
        n_flat = nx if flat == ["first"] else ny
        return result(
            f"no variation observed in {which} {n_flat} seeds (n = {nx} + {ny}): they all gave the same value, so "
            "they are copies of one run, not replicates"
        )
    se = math.sqrt(vx + vy)
    df = (vx + vy) ** 2 / ((vx * vx) / (nx - 1) + (vy * vy) / (ny - 1))
    if nx != ny:
        # Unequal seed counts: Satterthwaite's df trusts the small condition's spread, which 2-3 seeds estimate
        # badly; when it is the noisier one, the interval under-covers (2v5, small side 3x noisier: 0.90;
        # skewed 3v5: 0.88; bench/stats_calibration.py). The conservative df = min(n) - 1 (Hsu 1938; Scheffe
        # 1970 shows the interval then holds its level for any variance ratio) keeps >= 0.96 there.
        df = float(min(nx, ny) - 1)
    t = estimate / se
    p = float(min(1.0, 2.0 * _special.stdtr(df, -abs(t))))
    tq = float(_special.stdtrit(df, 0.5 + 0.5 * level))
    interval = Interval(estimate - tq * se, estimate + tq * se, level)
    return result(None, interval=interval, p_value=p, t=t, df=df, se=se)


def cohens_d(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Cohen's d = (mean(x) - mean(y)) / pooled standard deviation.

    The pooled SD ``sqrt(((n_x-1)s_x² + (n_y-1)s_y²) / (n_x+n_y-2))`` assumes both groups share one
    variance. Biased away from 0 at small n: see :func:`hedges_g`.

    Edge cases: an empty group or ``n_x + n_y < 3`` → ``nan`` (no variance estimate); zero pooled SD
    → ``nan`` (seeds that are copies have no spread to scale a difference by; "∞" would read as an
    infinitely large effect).
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
        return math.nan  # no spread to measure the difference in: undefined, not infinite
    return diff / sd


def hedges_g(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Hedges' g: Cohen's d times the exact small-sample correction ``J(df)`` (Hedges 1981).

    Why: at 3 vs 3 seeds Cohen's d overstates the effect by ~25 % (J(4) = 0.798), and planning
    with it promises power the campaign will not have. ``J(df) = Γ(df/2) / (sqrt(df/2)·Γ((df-1)/2))``
    with ``df = n_x + n_y - 2``; ``1 - 3/(4(n_x+n_y) - 9)`` is its usual approximation.
    """
    d = cohens_d(x, y)
    df = int(np.size(x)) + int(np.size(y)) - 2
    if math.isnan(d) or df < 2:
        return math.nan
    j = math.exp(math.lgamma(df / 2.0) - math.lgamma((df - 1) / 2.0)) / math.sqrt(df / 2.0)
    return d * j


# --------------------------------------------------------------------------- planning


def _t_test_power(n: int, d: float, alpha: float) -> float:
    """Power of the two-sided two-sample t-test with ``n`` per group at effect ``d``."""
    df = 2 * n - 2
    nc = d * math.sqrt(n / 2.0)
    # scipy.special's Student and noncentral t (what scipy.stats.t and .nct evaluate), without scipy.stats' ~1 s import
    t_crit = float(_special.stdtrit(df, 1.0 - alpha / 2.0))
    power = float((1.0 - _special.nctdtr(df, nc, t_crit)) + _special.nctdtr(df, nc, -t_crit))
    if not math.isfinite(power):
        # the noncentral t fails for extreme noncentrality; the normal limit is
        # then accurate (huge nc → power ≈ 1, huge df → t ≈ normal).
        power = (1.0 - _NORMAL.cdf(t_crit - nc)) + _NORMAL.cdf(-t_crit - nc)
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
    z = _NORMAL.inv_cdf(1.0 - alpha / 2.0) + _NORMAL.inv_cdf(power)
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
    min_effect: float = 0.0,
) -> Recommendation:
    """Turn a test result into one of the report's labels.

    Why: readers want a verdict, but a verdict needs *both* a significant test and an interval that
    agrees on the direction (with the dual pairs used here they always agree, except where a
    multiplicity correction raised the p-value); and a claim about the *size* of a change is only as
    strong as the interval: "at least the minimum effect" needs the interval's near bound to clear it,
    not the point estimate (a +4 pp estimate with a 95% CI [+0.4, +10] pp does not show a 3 pp gain).

    * ``statistically_significant_improvement``: ``p < alpha`` and the CI entirely on the better side
      of 0 and, when ``min_effect`` is set, entirely at or beyond ``min_effect``;
    * ``significant_size_not_established``: significant and better, but the CI reaches below
      ``min_effect`` and above it: the size is not established either way;
    * ``significant_below_min_effect``: significant, and the whole CI is smaller than ``min_effect``
      (better or worse);
    * ``significant_degradation``: significant on the worse side, unless the whole CI shows the harm is
      smaller than ``min_effect``: a harm is flagged unless shown negligible, a gain is claimed only
      when shown large enough;
    * ``insufficient_statistical_evidence``: otherwise, including any ``nan``.

    ``delta`` and ``ci`` are candidate minus baseline; ``higher_is_better=False`` for losses.
    """
    alpha = _check_level(alpha, "alpha")
    low, high = (ci.low, ci.high) if isinstance(ci, Interval) else (float(ci[0]), float(ci[1]))
    values = (p_value, delta, low, high)
    if any(v is None or math.isnan(v) for v in values) or not p_value < alpha:
        return INSUFFICIENT
    sign = 1.0 if higher_is_better else -1.0
    better, lo, hi = sign * delta, min(sign * low, sign * high), max(sign * low, sign * high)
    if better > 0.0 and lo > 0.0:
        if lo >= min_effect:
            return IMPROVEMENT
        return NEGLIGIBLE if hi < min_effect else SIZE_UNKNOWN
    if better < 0.0 and hi < 0.0:
        return NEGLIGIBLE if min_effect > 0.0 and -lo < min_effect else DEGRADATION
    return INSUFFICIENT
