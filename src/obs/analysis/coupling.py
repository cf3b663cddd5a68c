"""Coupling of a proxy and a downstream metric: does the number the run optimises still track the one
it is for?

A reward (the proxy) can keep rising while the evaluation it stands for (the downstream) falls:
reward hacking, over-optimisation, a verifier that can be gamed. obs.yaml's `coupling:` names the
pairs; this module reads each one two ways.

- **Within a run** (`run_coupling`): the downstream is usually evaluated every few hundred steps, the
  proxy every step. At each step where the downstream was logged, the proxy is the mean of its values
  logged since the previous such step (up to and including this one; all values up to the first). A
  **diverging window** runs from one evaluation to a later one over which the proxy improved (rose, or
  fell for a lower-is-better proxy) while the downstream got worse; the page lists the one with the
  downstream's largest worsening, then the largest not overlapping it, and so on (`diverging_windows`).
  They describe one run's logged points, which are not replicates: no test, no p-value.
- **Across runs** (`across_runs`): each run's final-window values of the two; Spearman's rank
  correlation over the runs (ties get average ranks) with a 95% interval from Fisher's z with the
  Bonett–Wright standard error sqrt((1 + rho²/2) / (n − 3)); the unit of replication is the run, n runs.

Pure: series and summaries in, numbers and sentences out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from obs.analysis.campaign import metric_is_rate
from obs.model import Metrics
from obs.numbers import MINUS, num, plural, step
from obs.sitemodel import RunSummary

LEVEL = 0.95
Z975 = 1.959963984540054  # the standard normal's 97.5% point
MIN_RUNS = 4  # Fisher's z needs n - 3 > 0
MAX_EVALS = 5000  # a downstream logged more often is read at every k-th of its evaluations (said on the page)
SHOWN_WINDOWS = 5


def change_text(delta: float, metric: str) -> str:
    """A change in words without its sign: "2.1 pp" for a rate, "0.31" otherwise."""
    if metric_is_rate(metric):
        return f"{abs(delta) * 100:.1f} pp"
    return f"{abs(float(delta)):.3g}"


def ordinal(n: int) -> str:
    """2 -> "2nd", 11 -> "11th", 23 -> "23rd"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def moved(delta: float) -> str:
    return "rose" if delta > 0 else "fell" if delta < 0 else "stayed at"


@dataclass(frozen=True)
class Window:
    """A stretch of evaluations over which the proxy improved and the downstream got worse at every one."""

    start: float  # the step of the evaluation it starts from
    end: float
    intervals: int  # evaluation intervals spanned (evaluations in it, minus one)
    proxy_from: float
    proxy_to: float
    down_from: float
    down_to: float

    def words(self, proxy: str, downstream: str) -> str:
        dp, dd = self.proxy_to - self.proxy_from, self.down_to - self.down_from
        return (
            f"{proxy} {moved(dp)} {change_text(dp, proxy)} while {downstream} {moved(dd)} "
            f"{change_text(dd, downstream)} over steps {step(self.start)}–{step(self.end)}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "intervals": self.intervals,
            "proxy": [self.proxy_from, self.proxy_to],
            "downstream": [self.down_from, self.down_to],
        }


@dataclass(frozen=True)
class RunCoupling:
    """One declared pair in one run."""

    proxy: str
    downstream: str
    label: str
    proxy_higher_is_better: bool
    down_higher_is_better: bool
    steps: tuple[float, ...]  # the downstream's evaluation steps used
    proxy_at: tuple[float, ...]  # the proxy's mean since the previous evaluation, at each
    down_at: tuple[float, ...]
    windows: tuple[Window, ...]  # largest downstream worsening first, not overlapping (`diverging_windows`)
    missing: str | None = None  # why there is nothing to read (a series not logged, one evaluation)
    every: int = 1  # every k-th evaluation was read (a downstream logged more than MAX_EVALS times)
    logged: int = 0  # the downstream's evaluations with the proxy logged up to them

    @property
    def worst(self) -> Window | None:
        return self.windows[0] if self.windows else None

    def summary(self) -> str:
        """The run's pair in one sentence, from the numbers."""
        if self.missing:
            return self.missing
        p0, p1, d0, d1 = self.proxy_at[0], self.proxy_at[-1], self.down_at[0], self.down_at[-1]
        whole = (
            f"From step {step(self.steps[0])} to {step(self.steps[-1])}, {self.proxy} {moved(p1 - p0)} "
            f"{change_text(p1 - p0, self.proxy)} ({num(p0)} → {num(p1)}) and {self.downstream} {moved(d1 - d0)} "
            f"{change_text(d1 - d0, self.downstream)} ({num(d0)} → {num(d1)}), "
            f"over {plural(len(self.steps), 'evaluation')}"
        )
        if self.every > 1:
            whole += f" (every {ordinal(self.every)} of {self.logged:,} evaluations)"
        if not self.windows:
            return (
                whole + f"; {self.downstream} never got worse between two evaluations over which {self.proxy} improved."
            )
        return whole + f". The largest divergence: {self.windows[0].words(self.proxy, self.downstream)}."

    def as_dict(self) -> dict[str, Any]:
        return {
            "proxy": self.proxy,
            "downstream": self.downstream,
            "evaluations": len(self.steps),
            "windows": [w.as_dict() for w in self.windows],
            "missing": self.missing,
            "summary": self.summary(),
        }


def _finite(metrics: Metrics, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    series = metrics.get(name)
    if series is None or not len(series):
        return None
    keep = np.isfinite(series.values)
    if not keep.any():
        return None
    return series.steps[keep].astype(np.float64), series.values[keep].astype(np.float64)


def proxy_at_evaluations(p_steps: np.ndarray, p_values: np.ndarray, d_steps: np.ndarray) -> np.ndarray:
    """The proxy's mean over (previous evaluation step, this one] at each evaluation step; all values up to
    the first; NaN where the proxy logged nothing in the interval. Cumulative sums: one pass, any length."""
    order = np.argsort(p_steps, kind="stable")
    steps, values = p_steps[order], p_values[order]
    sums = np.concatenate(([0.0], np.cumsum(values)))
    hi = np.searchsorted(steps, d_steps, side="right")
    lo = np.concatenate(([0], hi[:-1]))
    count = hi - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(count > 0, (sums[hi] - sums[lo]) / np.maximum(count, 1), np.nan)
    return out


def _best_pair(proxy: np.ndarray, worse: np.ndarray, lo: int, hi: int) -> tuple[float, int, int] | None:
    """Among evaluations lo..hi (inclusive), the pair i < j with proxy[j] > proxy[i] and the largest
    worse[j] − worse[i] > 0; a sweep over j keeping, per proxy rank, the smallest `worse` seen (a Fenwick
    tree of prefix minima): O(m log m) for m evaluations."""
    m = hi - lo + 1
    if m < 2:
        return None
    seg_p, seg_w = proxy[lo : hi + 1], worse[lo : hi + 1]
    ranks = np.searchsorted(np.unique(seg_p), seg_p) + 1  # 1-based ranks; ties share one
    size = int(ranks.max())
    tree_val = np.full(size + 1, np.inf)
    tree_idx = np.full(size + 1, -1, dtype=np.int64)
    best: tuple[float, int, int] | None = None
    for j in range(m):
        r = int(ranks[j]) - 1  # strictly lower proxy: prefix up to rank - 1
        low, at = np.inf, -1
        while r > 0:
            if tree_val[r] < low:
                low, at = float(tree_val[r]), int(tree_idx[r])
            r -= r & -r
        if at >= 0:
            gain = float(seg_w[j]) - low
            if gain > 0 and (best is None or gain > best[0]):
                best = (gain, lo + at, lo + j)
        r = int(ranks[j])
        while r <= size:
            if seg_w[j] < tree_val[r]:
                tree_val[r], tree_idx[r] = seg_w[j], j
            r += r & -r
    return best


def diverging_windows(
    steps: np.ndarray, proxy: np.ndarray, down: np.ndarray, proxy_up: bool, down_up: bool, most: int = SHOWN_WINDOWS
) -> list[Window]:
    """The stretches between two evaluations over which the proxy improved and the downstream got worse,
    largest worsening first: the one pair of evaluations (i < j) with the downstream's largest worsening
    among the pairs where the proxy improved, then the largest among the pairs not overlapping it (they
    may share an evaluation), and so on, `most` of them. Net changes from one evaluation to the other:
    the noise between them does not cut a long slide into pieces."""
    p = proxy if proxy_up else -proxy  # improving: rising
    w = -down if down_up else down  # worsening: rising
    segments = [(0, steps.size - 1)]  # what is left between the windows taken
    windows: list[Window] = []
    while len(windows) < most:
        found = [(b, seg) for seg in segments if (b := _best_pair(p, w, *seg)) is not None]
        if not found:
            break
        (_, i, j), seg = max(found, key=lambda f: (f[0][0], -f[0][1]))
        segments.remove(seg)
        segments += [(seg[0], i), (j, seg[1])]
        windows.append(
            Window(
                float(steps[i]),
                float(steps[j]),
                j - i,
                float(proxy[i]),
                float(proxy[j]),
                float(down[i]),
                float(down[j]),
            )
        )
    return windows


def run_coupling(metrics: Metrics | None, pair: dict[str, str], higher_is_better: Callable[[str], bool]) -> RunCoupling:
    proxy, downstream = pair["proxy"], pair["downstream"]
    p_up, d_up = higher_is_better(proxy), higher_is_better(downstream)

    def empty(why: str) -> RunCoupling:
        return RunCoupling(proxy, downstream, pair.get("label", ""), p_up, d_up, (), (), (), (), why)

    p = _finite(metrics, proxy) if metrics is not None else None
    d = _finite(metrics, downstream) if metrics is not None else None
    if p is None or d is None:
        absent = [name for name, got in ((proxy, p), (downstream, d)) if got is None]
        return empty(f"This run logged no {' and no '.join(absent)}: nothing to couple.")
    p_at = proxy_at_evaluations(*p, d[0])
    keep = np.isfinite(p_at)
    steps, p_at, d_at = d[0][keep], p_at[keep], d[1][keep]
    if steps.size < 2:
        return empty(
            f"{downstream} has {plural(int(steps.size), 'evaluation')} with {proxy} logged up to it: "
            "a change needs two."
        )
    logged, every = int(steps.size), max(1, math.ceil(steps.size / MAX_EVALS))
    if every > 1:  # read at every k-th evaluation (and the last); the proxy's means then span k of them
        keep_at = np.unique(np.concatenate((np.arange(0, steps.size, every), [steps.size - 1])))
        steps, d_at = steps[keep_at], d_at[keep_at]
        p_at = proxy_at_evaluations(*p, steps)
    windows = diverging_windows(steps, p_at, d_at, p_up, d_up)
    return RunCoupling(
        proxy,
        downstream,
        pair.get("label", ""),
        p_up,
        d_up,
        tuple(map(float, steps)),
        tuple(map(float, p_at)),
        tuple(map(float, d_at)),
        tuple(windows),
        every=every,
        logged=logged,
    )


# ------------------------------------------------------------------------------------------ across runs


@dataclass(frozen=True)
class RunPoint:
    run_id: str
    slug: str
    group: str | None
    proxy: float
    downstream: float


@dataclass(frozen=True)
class AcrossRuns:
    """One declared pair over a set of runs: final values and their rank correlation."""

    proxy: str
    downstream: str
    label: str
    points: list[RunPoint]
    rho: float | None
    ci: tuple[float, float] | None
    left_out: list[str]
    level: float = LEVEL

    @property
    def n(self) -> int:
        return len(self.points)

    def words(self) -> str:
        if self.rho is None:
            return (
                f"{plural(self.n, 'run')} with final values of both {self.proxy} and {self.downstream}: a rank "
                "correlation needs three."
            )
        rho = f"{self.rho:+.2f}".replace("-", MINUS)
        exact = self.ci is None and self.n >= MIN_RUNS  # ρ = ±1: every run in the same (or the reversed) order
        if exact:
            span = "no interval: Fisher's z is infinite at ±1"
        elif self.ci is None:
            span = f"an interval needs {MIN_RUNS} runs"
        else:
            lo, hi = (f"{v:+.2f}".replace("-", MINUS) for v in self.ci)
            span = f"{self.level:.0%} CI {lo} to {hi}"
        reading = (
            "they rank the runs alike"
            if self.ci is not None and self.ci[0] > 0
            else "they rank the runs in opposite orders"
            if self.ci is not None and self.ci[1] < 0
            else "the interval includes no association"
            if self.ci is not None
            else ("every run in the same order on both" if self.rho > 0 else "every run in the reversed order")
            if exact
            else "too few runs to say"
        )
        return (
            f"Across {plural(self.n, 'run')}, Spearman's ρ between final {self.proxy} and final {self.downstream} "
            f"is {rho} ({span}; unit = run, n = {self.n}): {reading}."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "proxy": self.proxy,
            "downstream": self.downstream,
            "n": self.n,
            "unit": "run",
            "rho": self.rho,
            "ci": list(self.ci) if self.ci else None,
            "level": self.level,
            "method": "Spearman; Fisher z with the Bonett-Wright standard error",
            "points": [
                {"run": p.run_id, "group": p.group, "proxy": p.proxy, "downstream": p.downstream} for p in self.points
            ],
            "left_out": self.left_out,
            "words": self.words(),
        }


def ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties given the mean of the ranks they span."""
    order = np.argsort(x, kind="mergesort")
    out = np.empty(x.size)
    sorted_x = x[order]
    i = 0
    while i < x.size:
        j = i
        while j + 1 < x.size and sorted_x[j + 1] == sorted_x[i]:
            j += 1
        out[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho: Pearson's correlation of the ranks; None when either side has no spread."""
    rx, ry = ranks(np.asarray(x, dtype=np.float64)), ranks(np.asarray(y, dtype=np.float64))
    sx, sy = rx - rx.mean(), ry - ry.mean()
    denom = math.sqrt(float((sx * sx).sum() * (sy * sy).sum()))
    return float((sx * sy).sum() / denom) if denom > 0 else None


def spearman_interval(rho: float, n: int, level: float = LEVEL) -> tuple[float, float] | None:
    """Fisher's z interval for Spearman's rho with Bonett and Wright's (2000) standard error."""
    if n < MIN_RUNS:
        return None
    if abs(rho) >= 1:
        return None  # the runs in exactly the same (or reversed) order: Fisher's z is infinite, no interval
    z = math.atanh(rho)
    se = math.sqrt((1 + rho * rho / 2) / (n - 3))
    q = Z975 if level == LEVEL else _normal_quantile(0.5 + level / 2)
    return (math.tanh(z - q * se), math.tanh(z + q * se))


def _normal_quantile(p: float) -> float:
    from scipy import special  # only for a level other than 95%

    return float(special.ndtri(p))


def across_runs(runs: Sequence[RunSummary], pair: dict[str, str]) -> AcrossRuns:
    proxy, downstream = pair["proxy"], pair["downstream"]
    points, left_out = [], []
    for s in sorted(runs, key=lambda r: r.id):
        a, b = s.finals.get(proxy), s.finals.get(downstream)
        if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
            absent = [n for n, v in ((proxy, a), (downstream, b)) if v is None or not math.isfinite(v)]
            left_out.append(f"{s.id}: no final {' or '.join(absent)}")
            continue
        points.append(RunPoint(s.id, s.slug, s.condition, float(a), float(b)))
    rho = spearman([p.proxy for p in points], [p.downstream for p in points]) if len(points) >= 3 else None
    ci = spearman_interval(rho, len(points)) if rho is not None else None
    return AcrossRuns(proxy, downstream, pair.get("label", ""), points, rho, ci, left_out)
