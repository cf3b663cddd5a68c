"""A campaign as every output shows it: the conditions × seeds table, the mean curves with their
bands and the statistics, assembled once from run summaries.

The campaign page, its analysis.json and `obs summary --campaign` all read one `CampaignView`, so
the PR comment and the page cannot disagree about a campaign. Pure: summaries in, numbers out; the
figure is drawn from it by `obs.render`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from obs.model import Campaign
from obs.sitemodel import Curve, RunSummary
from obs.vocabulary import lower_is_better

if TYPE_CHECKING:
    from obs.analysis.campaign import CampaignStats
    from obs.analysis.tiers import CampaignTiers

GRID_POINTS = 200


def step_grid(lo: float, hi: float, whole: bool) -> np.ndarray:
    """GRID_POINTS points from lo to hi; whole steps when the runs log whole steps (every step of a
    short span, else the nearest whole step to each evenly spaced point), so a read-out never says
    "step 208.849" of runs that only ever logged step 208 and 209."""
    grid = np.linspace(lo, hi, GRID_POINTS)
    if whole and float(lo).is_integer() and float(hi).is_integer():
        grid = np.unique(np.round(grid))
    return grid


def align_curves(curves: Sequence[Curve]) -> tuple[np.ndarray, np.ndarray] | None:
    """Several runs' curves on one step grid over the span every run covers (linear interpolation)."""
    usable = [(np.asarray(c.steps), np.asarray(c.values)) for c in curves if len(c.steps) >= 2]
    if not usable:
        return None
    lo = max(float(x[0]) for x, _ in usable)
    hi = min(float(x[-1]) for x, _ in usable)
    if hi <= lo:
        return None
    grid = step_grid(lo, hi, all(bool(np.all(np.mod(x, 1) == 0)) for x, _ in usable))
    matrix = np.vstack([np.interp(grid, x, y) for x, y in usable])
    return grid, matrix


@dataclass(frozen=True)
class ConditionRow:
    """One condition's row of the conditions × seeds table."""

    name: str
    label: str
    is_baseline: bool
    cells: list[RunSummary | None]  # one per seed of the table, None where the seed has no run
    values: list[float | None]  # each cell's one number for the primary metric, over its window (tiers)
    n: int
    mean: float | None
    sd: float | None
    missing_seeds: list[int]


@dataclass(frozen=True)
class ConditionCurve:
    """A condition's mean curve over its seeds, with the 95% t band of that mean (two seeds or more)."""

    name: str
    label: str
    grid: np.ndarray
    mean: np.ndarray
    sd: np.ndarray | None
    band: tuple[np.ndarray, np.ndarray] | None


@dataclass(frozen=True)
class CampaignView:
    campaign: Campaign
    seeds: list[int]
    table: list[ConditionRow]
    curves: list[ConditionCurve]
    runs: list[RunSummary]  # by condition, then seed
    unassigned: list[RunSummary]  # runs whose condition the campaign does not name
    stats: CampaignStats  # the primary metric's, adjusted over the tested family (obs.analysis.tiers)
    tiers: CampaignTiers

    def mean_curve(self, condition: str) -> list[float]:
        for c in self.curves:
            if c.name == condition:
                return [float(v) for v in c.mean]
        return []


def condition_names(campaign: Campaign, runs: Sequence[RunSummary]) -> list[str]:
    """The campaign's conditions in the one order of its outputs (`Campaign.condition_order`: the baseline first,
    then campaign.yaml's order)."""
    return campaign.condition_order(s.condition for s in runs)


def campaign_view(
    campaign: Campaign, summaries: Sequence[RunSummary], direction: Callable[[str], bool] | None = None
) -> CampaignView:
    """A campaign as its page shows it (the statistics' modules imported here: a rebuild that keeps the page
    does not load them). `direction` says whether a metric is higher-is-better (obs.yaml, else its name)."""
    from obs.analysis.campaign import campaign_stats
    from obs.analysis.tiers import campaign_tiers

    runs = [s for s in summaries if s.campaign == campaign.id]
    paired = campaign.paired
    tiers = campaign_tiers(campaign, runs, direction or (lambda name: not lower_is_better(name)), paired=paired)
    primary = tiers.primary
    stats = primary.stats if primary is not None else campaign_stats(campaign, [], paired=paired)
    value_of = {v.run_id: v.value for c in stats.conditions for v in c.values}
    names = condition_names(campaign, runs)
    labels = {c.name: (c.label or c.name) for c in campaign.conditions}
    seeds = sorted({s.seed for s in runs if s.seed is not None} | set(campaign.seeds))
    table: list[ConditionRow] = []
    curves: list[ConditionCurve] = []
    for name in names:
        members = [s for s in runs if s.condition == name]
        table.append(_row(campaign, name, labels.get(name, name), members, seeds, value_of))
        curve = condition_curve(name, labels.get(name, name), [s.campaign_curve for s in members if s.campaign_curve])
        if curve is not None:
            curves.append(curve)
    return CampaignView(
        campaign=campaign,
        seeds=seeds,
        table=table,
        curves=curves,
        runs=sorted(runs, key=_by_condition_and_seed),
        unassigned=[s for s in runs if s.condition not in names],
        stats=stats,
        tiers=tiers,
    )


def _by_condition_and_seed(s: RunSummary) -> tuple[str, int]:
    return (s.condition or "", s.seed if s.seed is not None else -1)


def _row(
    campaign: Campaign,
    name: str,
    label: str,
    members: Sequence[RunSummary],
    seeds: Sequence[int],
    value_of: Mapping[str, float],
) -> ConditionRow:
    """One condition's row: a cell per seed, each cell's value of the primary metric, their mean and sd."""
    by_seed = {s.seed: s for s in members}
    finals = [value_of[s.id] for s in members if s.id in value_of]
    cells = [by_seed.get(seed) for seed in seeds]
    return ConditionRow(
        name=name,
        label=label,
        is_baseline=name == campaign.baseline_condition,
        cells=cells,
        values=[value_of.get(c.id) if c is not None else None for c in cells],
        n=len(finals),
        mean=float(np.mean(finals)) if finals else None,
        sd=float(np.std(finals, ddof=1)) if len(finals) > 1 else None,
        missing_seeds=[seed for seed in campaign.seeds if seed not in by_seed],
    )


def condition_curve(name: str, label: str, members: list[Curve]) -> ConditionCurve | None:
    """The mean of several seeds' curves with its 95% t band (and ± 1 sd), on the span all cover."""
    aligned = align_curves(members)
    if aligned is None:
        return None
    grid, matrix = aligned
    mean = matrix.mean(axis=0)
    if matrix.shape[0] < 2:
        return ConditionCurve(name, label, grid, mean, None, None)
    from scipy import special  # only when a campaign has curves to band (stdtrit: scipy.stats.t.ppf without its import)

    sd = matrix.std(axis=0, ddof=1)
    half = float(special.stdtrit(matrix.shape[0] - 1, 0.975)) * sd / np.sqrt(matrix.shape[0])
    return ConditionCurve(name, label, grid, mean, sd, (mean - half, mean + half))
