"""Any logged metric of a campaign or an ablation group, read the way its primary metric is.

The campaign and arms pages plot one metric; a mechanism check often needs another (entropy across
conditions, the loss of each arm). For every metric this gives each condition's (or arm's) mean curve
over its seeds with the 95% t band and ± 1 sd (`campaign_view.condition_curve`, the primary metric's
own function) and its seed-level numbers. On a campaign page the metrics come in their tiers
(`obs.analysis.tiers`): only the primary and secondary metrics are tested, as one Holm family;
diagnostics and undeclared metrics are described, never tested. On an arms page every metric
(identifiers and yes/no flags aside) is compared, the metrics other than the group's own as one Holm
family (`across_metrics`).

Litmus thresholds (`min_delta`) are set for the primary metric, so other metrics are compared
without them; the campaign's evidence minimums and α still apply. Pure: summaries in, numbers out.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from obs.analysis.arms import ArmGroup, arm_stats
from obs.analysis.campaign import CampaignStats, CandidateStats
from obs.analysis.campaign_view import CampaignView, ConditionCurve, condition_curve
from obs.analysis.stats import holm_adjust, recommendation
from obs.lazysummary import replace_summary
from obs.sitemodel import Curve, RunSummary
from obs.vocabulary import names_an_identifier

MAX_METRICS = 40  # a picker longer than this is a list nobody reads; the rest are named as left out


@dataclass(frozen=True)
class MetricView:
    """One metric of a campaign (or arms group): its curves per condition and its statistics."""

    metric: str
    primary: bool
    curves: list[ConditionCurve]
    stats: CampaignStats
    tier: str = ""  # a campaign's tier (obs.analysis.tiers): primary, secondary, diagnostic, logged
    tested: bool = True
    why_not_tested: str = ""
    window: str = ""  # which logged values make a run's one number, in words ("steps 400-500")


def logged_metrics(runs: Sequence[RunSummary], first: str | None) -> list[str]:
    """Every metric some run carries a curve of, `first` (the primary metric) leading."""
    names = sorted({m for s in runs for m in (s.curves or {})})
    if first:
        names = [first, *(n for n in names if n != first)]
    return names


def _curve_of(metric: str) -> Callable[[RunSummary], Curve | None]:
    return lambda s: (s.curves or {}).get(metric)


def _curves(
    conditions: Sequence[tuple[str, str]], runs: Sequence[RunSummary], curve_of: Callable[[RunSummary], Curve | None]
) -> list[ConditionCurve]:
    out = []
    for name, label in conditions:
        members = [c for s in runs if s.condition == name and (c := curve_of(s)) is not None]
        curve = condition_curve(name, label, members)
        if curve is not None:
            out.append(curve)
    return out


def campaign_metrics(view: CampaignView) -> list[MetricView]:
    """Every metric of a campaign in its tier (obs.analysis.tiers): the primary first, with the page's own
    numbers; only primary and secondary metrics carry tests, adjusted over their one family."""
    conditions = [(row.name, row.label) for row in view.table]
    runs = [*view.runs, *view.unassigned]
    out: list[MetricView] = []
    for t in view.tiers.metrics[:MAX_METRICS]:
        primary = t.tier == "primary"
        curves = view.curves if primary and view.curves else _curves(conditions, runs, _curve_of(t.name))
        out.append(MetricView(t.name, primary, curves, t.stats, t.tier, t.tested, t.why_not_tested, t.window))
    return out


def across_metrics(views: list[MetricView]) -> list[MetricView]:
    """The metrics other than the primary one as one family: Holm over every candidate x metric test.

    Why: a page of forty metrics, each with a few candidates, labelled one metric at a time, marks some
    of them "significant" by chance alone. The primary metric is the pre-declared question and keeps its
    own result (Holm over its candidates); every other metric's labels use p-values adjusted over all
    the candidate x metric tests of the other metrics, and `correction` says so.
    """
    tested = [
        (i, j) for i, v in enumerate(views) if not v.primary for j, c in enumerate(v.stats.candidates) if c.tested
    ]
    if len(tested) < 2:
        return views
    adjusted = holm_adjust([views[i].stats.candidates[j].p_value for i, j in tested])
    n_metrics = len({i for i, _ in tested})
    family = (
        f"Holm–Bonferroni over the {len(tested)} candidate × metric Welch tests of the {n_metrics} metrics other "
        "than the primary one; the labels use the adjusted p"
    )
    new_cands: dict[int, list[CandidateStats]] = {i: list(views[i].stats.candidates) for i, _ in tested}
    for (i, j), p_adj in zip(tested, adjusted, strict=True):
        s, c = views[i].stats, views[i].stats.candidates[j]
        rec = recommendation(
            p_adj, c.welch.estimate, c.welch.interval or (math.nan, math.nan), s.alpha, s.higher_is_better
        )
        new_cands[i][j] = dataclasses.replace(c, p_adjusted=p_adj, recommendation=rec)
    out = list(views)
    for i, cands in new_cands.items():
        stats = dataclasses.replace(views[i].stats, candidates=cands, correction=family)
        out[i] = dataclasses.replace(views[i], stats=stats)
    return out


def arms_metrics(
    group: ArmGroup, higher_is_better: Callable[[str], bool], final_window: int, primary_stats: CampaignStats
) -> list[MetricView]:
    """Every metric the arms' runs carry curves of, compared across arms like the group's metric."""
    runs = [s for members in group.runs.values() for s in members]
    as_conditions = [replace_summary(s, condition=arm) for arm, members in group.runs.items() for s in members]
    conditions = [(arm, arm) for arm in group.arms]
    out: list[MetricView] = []
    flags = {f for s in runs for f in s.flags}  # identifiers and yes/no flags are never metrics (obs.analysis.tiers)
    names = [m for m in logged_metrics(runs, None) if m == group.metric or not (names_an_identifier(m) or m in flags)]
    for metric in names[:MAX_METRICS]:
        curves = _curves(conditions, as_conditions, _curve_of(metric))
        if metric == group.metric:
            out.append(MetricView(metric, True, curves, primary_stats))
            continue
        stats = arm_stats(dataclasses.replace(group, metric=metric), higher_is_better(metric), final_window)
        out.append(MetricView(metric, False, curves, stats))
    out.sort(key=lambda v: not v.primary)  # the group's metric first, the rest by name
    return across_metrics(out)
