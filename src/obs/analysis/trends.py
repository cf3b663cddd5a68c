"""Trends: is a metric still moving? Its recent window against the window before it ("momentum").

Two readings of the same idea:

* across a series of runs (a spec ladder, by date): the mean of the last `recent` runs against the
  mean of the `baseline` runs before them;
* within a run (a campaign's primary metric over steps): the mean of the last `recent` logged points
  against the `baseline` points before them, per seed, then summarised per condition over seeds.

The windows never overlap, so the delta compares two disjoint samples, and the window sizes actually
used are always reported: with few runs the windows shrink (half the series each at most) and the
result says so instead of pretending to have the configured sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from obs.sitemodel import Curve, RunSummary


@dataclass(frozen=True)
class Momentum:
    """Recent mean vs baseline mean over two disjoint, adjacent windows of one ordered series."""

    recent_mean: float
    baseline_mean: float
    recent_n: int
    baseline_n: int
    recent_window: int  # as configured
    baseline_window: int
    recent_ids: list[str] = field(default_factory=list)
    baseline_ids: list[str] = field(default_factory=list)

    @property
    def delta(self) -> float:
        return self.recent_mean - self.baseline_mean

    @property
    def shortened(self) -> bool:
        return self.recent_n < self.recent_window or self.baseline_n < self.baseline_window

    def direction(self, higher_is_better: bool = True, tolerance: float = 0.0) -> str:
        """up (better), down (worse) or flat, for the page's arrow; not a significance claim."""
        if abs(self.delta) <= tolerance or self.delta == 0:
            return "flat"
        return "up" if (self.delta > 0) == higher_is_better else "down"

    def as_dict(self) -> dict[str, Any]:
        return {
            "recent_mean": self.recent_mean,
            "baseline_mean": self.baseline_mean,
            "delta": self.delta,
            "recent_n": self.recent_n,
            "baseline_n": self.baseline_n,
            "recent_window": self.recent_window,
            "baseline_window": self.baseline_window,
        }


def windows(n: int, recent: int, baseline: int) -> tuple[int, int]:
    """Sizes (recent, baseline) that fit a series of n values: configured, or shrunk to half each.

    With n >= recent + 1 the recent window is as configured and the baseline takes what is left (up
    to its size); with fewer values each window gets at most half, so both have at least one value.
    """
    if n < 2 or recent < 1 or baseline < 1:
        return 0, 0
    r = recent if n >= recent + 1 else max(1, n // 2)
    b = min(baseline, n - r)
    return r, b


def momentum(values: Sequence[float], recent: int, baseline: int, ids: Sequence[str] | None = None) -> Momentum | None:
    """Momentum of an ordered series (oldest first); non-finite values are dropped first.

    None when fewer than two finite values remain (there is no "before" to compare with).
    """
    pairs = [
        (float(v), ids[i] if ids is not None else str(i))
        for i, v in enumerate(values)
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    ]
    r, b = windows(len(pairs), recent, baseline)
    if r == 0 or b == 0:
        return None
    recent_part = pairs[-r:]
    base_part = pairs[-(r + b) : -r]
    return Momentum(
        recent_mean=float(np.mean([v for v, _ in recent_part])),
        baseline_mean=float(np.mean([v for v, _ in base_part])),
        recent_n=r,
        baseline_n=b,
        recent_window=recent,
        baseline_window=baseline,
        recent_ids=[i for _, i in recent_part],
        baseline_ids=[i for _, i in base_part],
    )


@dataclass(frozen=True)
class SeriesTrend:
    """One metric's momentum across a run series (e.g. a spec ladder by date)."""

    metric: str
    is_rate: bool
    higher_is_better: bool
    momentum: Momentum
    n_runs: int

    @property
    def direction(self) -> str:
        return self.momentum.direction(self.higher_is_better)


def run_order_key(summary: RunSummary) -> tuple[str, str]:
    """Runs in time order: by date (ISO text sorts in time order), then id for ties."""
    return (summary.date or "", summary.id)


def metric_value(summary: RunSummary, metric: str) -> float | None:
    """A run's value of `metric`: its headline when that is the metric, else its probe rate or final value."""
    headline = summary.headline
    if headline.metric == metric and headline.value is not None:
        return float(headline.value)
    sources: tuple[Mapping[str, float | None], ...] = (summary.rates, summary.finals)
    for source in sources:
        value = source.get(metric)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def series_trends(
    runs: Sequence[RunSummary],
    metrics: Sequence[str],
    recent: int,
    baseline: int,
    higher_is_better: Any,
    is_rate: Any,
) -> list[SeriesTrend]:
    """Momentum of each metric across `runs` in time order (runs lacking the metric are skipped)."""
    ordered = sorted(runs, key=run_order_key)
    out: list[SeriesTrend] = []
    for metric in metrics:
        pairs = [(metric_value(s, metric), s.id) for s in ordered]
        present = [(v, i) for v, i in pairs if v is not None]
        m = momentum([v for v, _ in present], recent, baseline, [i for _, i in present])
        if m is not None:
            out.append(SeriesTrend(metric, bool(is_rate(metric)), bool(higher_is_better(metric)), m, len(present)))
    return out


@dataclass(frozen=True)
class ConditionMomentum:
    """Within-run momentum of a campaign condition: per seed, then mean ± sd over seeds."""

    name: str
    label: str
    per_run: list[tuple[str, Momentum]]
    recent_points: int
    baseline_points: int

    @property
    def n(self) -> int:
        return len(self.per_run)

    @property
    def recent_mean(self) -> float:
        return float(np.mean([m.recent_mean for _, m in self.per_run]))

    @property
    def baseline_mean(self) -> float:
        return float(np.mean([m.baseline_mean for _, m in self.per_run]))

    @property
    def delta(self) -> float:
        return float(np.mean([m.delta for _, m in self.per_run]))

    @property
    def delta_sd(self) -> float | None:
        return float(np.std([m.delta for _, m in self.per_run], ddof=1)) if self.n > 1 else None

    @property
    def shortened(self) -> bool:
        return any(m.shortened for _, m in self.per_run)

    @property
    def window_sizes(self) -> tuple[int, int]:
        """Smallest windows used by any seed (what every seed had at least)."""
        return min(m.recent_n for _, m in self.per_run), min(m.baseline_n for _, m in self.per_run)


def within_run_momentum(tail: Curve | None, recent_points: int, baseline_points: int, run_id: str) -> Momentum | None:
    """Momentum over the exact last logged points of one run's metric (the summary's `campaign_tail`)."""
    if not tail or not tail.values:
        return None
    values = list(tail.values)
    steps = tail.steps or tuple(float(i) for i in range(len(values)))
    return momentum(values, recent_points, baseline_points, [f"{run_id}@{s:g}" for s in steps])


def condition_momentum(
    name: str, label: str, runs: Sequence[RunSummary], recent_points: int, baseline_points: int
) -> ConditionMomentum | None:
    per_run: list[tuple[str, Momentum]] = []
    for s in sorted(runs, key=lambda r: (r.seed if r.seed is not None else -1, r.id)):
        m = within_run_momentum(s.campaign_tail, recent_points, baseline_points, s.id)
        if m is not None:
            per_run.append((s.id, m))
    if not per_run:
        return None
    return ConditionMomentum(name, label, per_run, recent_points, baseline_points)
