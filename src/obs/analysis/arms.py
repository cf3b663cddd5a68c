"""Ablation arms: runs that share a spec/campaign/condition and differ by `arm` (full / no-ontology / ...).

Reading an ablation from separate run pages means eyeballing; here the arms of one group are put
side by side: one metric per arm (mean over seeds ± sd, computed with numpy), and every arm compared
with the reference arm by the campaign statistics (seeds as the unit, Welch's t-test and its dual
interval, Holm across arms). The arms are treated as the conditions of a small campaign, so the numbers and the
wording are exactly those of the campaign pages; nothing is re-implemented here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from obs.analysis.trends import metric_value
from obs.model import Campaign, Condition
from obs.sitemodel import RunSummary

if TYPE_CHECKING:
    from obs.analysis.campaign import CampaignStats

REFERENCE_ARMS = ("full", "all", "baseline", "control")


@dataclass
class ArmGroup:
    """The runs of one spec/campaign/condition that carry an `arm`, by arm."""

    key: tuple[str, str, str]  # spec, campaign, condition ('' when absent)
    slug: str
    title: str
    arms: list[str]
    baseline_arm: str
    runs: dict[str, list[RunSummary]]
    metric: str | None

    @property
    def n_runs(self) -> int:
        return sum(len(v) for v in self.runs.values())

    @property
    def seeds(self) -> list[int]:
        return sorted({s.seed for rs in self.runs.values() for s in rs if s.seed is not None})


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:80] or "arms"


def _arm_order(arms: Sequence[str], baseline: str) -> list[str]:
    return [baseline, *sorted(a for a in arms if a != baseline)]


def pick_reference(arms: Sequence[str], preferred: str | None) -> str:
    """The arm the others are compared with: the configured one, else `full` (or a similar name), else the first."""
    if preferred and preferred in arms:
        return preferred
    for name in REFERENCE_ARMS:
        if name in arms:
            return name
    return sorted(arms)[0]


def shared_metric(runs: Sequence[RunSummary], preferred: str | None) -> str | None:
    """The metric to compare arms on: the configured one, else the members' most common headline metric."""
    if preferred:
        return preferred
    counts = Counter(s.headline.metric for s in runs)
    counts.pop(None, None)
    if not counts:
        return None
    return sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[0][0]


def arm_groups(
    summaries: Sequence[RunSummary], metric: str | None = None, reference: str | None = None
) -> list[ArmGroup]:
    """Every group of runs with at least two distinct arms, in a stable order."""
    by_key: dict[tuple[str, str, str], list[RunSummary]] = {}
    for s in summaries:
        if not s.arm:
            continue
        key = (s.spec or "", s.campaign or "", s.condition or "")
        by_key.setdefault(key, []).append(s)
    groups: list[ArmGroup] = []
    used: set[str] = set()
    for key in sorted(by_key):
        members = by_key[key]
        arms = sorted({str(s.arm) for s in members})
        if len(arms) < 2:
            continue
        ref = pick_reference(arms, reference)
        title = " · ".join(part for part in key if part) or "runs without spec or campaign"
        slug = _slug("--".join(part for part in key if part) or "arms")
        while slug in used:
            slug += "-x"
        used.add(slug)
        runs = {
            arm: sorted(
                (s for s in members if s.arm == arm),
                key=lambda s: (s.seed if s.seed is not None else -1, s.id),
            )
            for arm in _arm_order(arms, ref)
        }
        groups.append(ArmGroup(key, slug, title, _arm_order(arms, ref), ref, runs, shared_metric(members, metric)))
    return groups


def arm_value(summary: RunSummary, metric: str) -> float | None:
    """One run's number for the comparison: its final-window value (or headline / probe rate) of `metric`."""
    value = summary.finals.get(metric)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return metric_value(summary, metric)


def arm_stats(
    group: ArmGroup, higher_is_better: bool, final_window: int, alpha: float = 0.05, min_effect: float = 0.0
) -> CampaignStats:
    """Every arm against the reference arm, with the campaign statistics (arms as conditions).

    The statistics' modules are imported here, when an arms page is made, not by a rebuild that keeps it."""
    from obs.analysis.campaign import (
        RunFinal,
        campaign_stats,
    )

    campaign = Campaign(
        id=group.title,
        source_dir=Path(),
        title=group.title,
        conditions=[Condition(name=arm) for arm in group.arms],
        baseline_condition=group.baseline_arm,
        primary_metric=group.metric,
        higher_is_better=higher_is_better,
        seeds=group.seeds,
        final_window=final_window,
        alpha=alpha,
        min_effect=min_effect,
    )
    finals = [
        RunFinal(
            run_id=s.id,
            condition=arm,
            seed=s.seed,
            final=arm_value(s, group.metric) if group.metric else None,
            last_step=s.last_step,
        )
        for arm, runs in group.runs.items()
        for s in runs
    ]
    return campaign_stats(campaign, finals)


@dataclass
class ArmCurve:
    """One arm's curves on a shared step grid: mean and sd over its seeds (sd None for one seed)."""

    arm: str
    steps: list[float]
    mean: list[float]
    sd: list[float] | None
    n: int


def arm_curves(group: ArmGroup, metric: str) -> list[ArmCurve]:
    """Mean ± sd of `metric` per arm over its seeds (numpy, on the span every seed covers)."""
    from obs.analysis.campaign_view import align_curves

    out: list[ArmCurve] = []
    for arm, runs in group.runs.items():
        curves = [(s.curves or {}).get(metric) for s in runs]
        aligned = align_curves([c for c in curves if c])
        if aligned is None:
            continue
        grid, matrix = aligned
        mean = matrix.mean(axis=0)
        sd = matrix.std(axis=0, ddof=1) if matrix.shape[0] > 1 else None
        out.append(
            ArmCurve(
                arm,
                [float(x) for x in grid],
                [float(y) for y in mean],
                [float(y) for y in sd] if sd is not None else None,
                int(matrix.shape[0]),
            )
        )
    return out


def curve_metrics(group: ArmGroup) -> list[str]:
    """Metrics every arm has at least one curve of, the comparison metric first."""
    per_arm = [{m for s in runs for m in (s.curves or {})} for runs in group.runs.values()]
    common = set.intersection(*per_arm) if per_arm else set()
    ordered = sorted(common)
    if group.metric in common:
        ordered.remove(group.metric)
        ordered.insert(0, group.metric)
    return ordered
