"""A campaign's metrics in tiers: which are tested, with what multiplicity, and what the tests say together.

Why: a campaign usually has one question (the primary metric) and a few outcomes worth checking beside it
(secondary metrics); everything else it logged (entropy, loss, throughput) helps to read the run but is not
a question. Testing every logged series, as a metric picker that gives each its own Welch table does,
marks some of them "significant" by chance alone, and t-tests `seed` or a yes/no flag as if they were
outcomes. So:

* only **primary and secondary** metrics are tested, and their tests form **one family**: the Welch
  p-value of every tested metric × candidate (vs the baseline condition) is Holm-adjusted over that
  family, and the page says so in words; **diagnostics** (and, when `metrics:` declares tiers, every other
  logged metric) are shown per condition (mean ± sd over seeds), never tested; without `metrics:` only the
  primary metric is tested and the page says secondary metrics can be declared;
* identifiers (`seed`, `condition`, `*_id`) and yes/no flags (`loss_is_placeholder`: a name that asks a
  question, every value 0 or 1) are never metrics: left out, and named;
* a **candidate-vs-candidate matrix** per tested metric: every pair of conditions, Welch over seeds, Holm
  over every pair of every tested metric (a second family: the pairwise question is another question);
* an optional **expected order** (`expected_order: [baseline, a, b]`, worst to best in the metric's good
  direction) checked on each adjacent pair of that matrix: holds (significantly in the expected direction
  after Holm), reversed (significantly the other way) or undetermined at α;
* **planning in tiers**: seeds per condition for quick (50% power), standard (80%) and paper (95%)
  confidence at the family's first Holm level α / m, for the minimum effect over the observed pooled sd of
  the seeds (the observed Hedges' g when no minimum effect is set), and "double the seeds" advice when a
  result is *directional* (defined in :data:`DIRECTIONAL`).

Pure: summaries in, a :class:`CampaignTiers` out; statistics from :mod:`obs.analysis.stats`.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from obs.analysis.campaign import (
    CampaignStats,
    CandidateStats,
    Family,
    RunFinal,
    Units,
    campaign_stats,
    compare_seeds,
    finals_from_summaries,
    min_effect_of,
    num_na,
)
from obs.analysis.stats import (
    NOT_TESTED,
    SIZE_UNKNOWN,
    WelchResult,
    holm_adjust,
    recommendation,
    sample_size_for_power,
)
from obs.model import Campaign, MetricDecl, MetricWindow, PairedSpec
from obs.numbers import p_text, plural
from obs.sitemodel import RunSummary
from obs.vocabulary import names_an_identifier

PLANNING_TIERS = (("quick", 0.5), ("standard", 0.8), ("paper", 0.95))
PLANNING_DEFINITION = (
    "seeds per condition for a two-sided Welch-type t-test (noncentral t, equal seeds per condition) to detect the "
    "minimum effect over the observed pooled sd of the seeds (the observed Hedges' g when no minimum effect is set) "
    "at the family's first Holm level α / m: quick = 50% power (a coin flip of seeing it), standard = 80%, "
    "paper = 95%"
)
DIRECTIONAL = (
    "directional: the estimate points one way but the evidence stops short of the claim: either significant after "
    "Holm with a 95% CI that excludes 0 but reaches below the minimum effect (size not established), or a "
    "Holm-adjusted p between α and 2α. Doubling the seeds per condition narrows the interval by about 1/√2 (×0.71)"
)


@dataclass(frozen=True)
class PairCell:
    """Condition `b` minus condition `a` on one metric (b later in `Campaign.condition_order`: the baseline first,
    so a pair with the baseline is candidate − baseline, as in the comparisons with the baseline)."""

    a: str
    b: str
    n_a: int
    n_b: int
    delta: float
    welch: WelchResult
    p_value: float
    p_adjusted: float
    hedges_g: float
    outcome: str  # a stats recommendation: b better / worse than a, or insufficient / not tested


@dataclass(frozen=True)
class OrderStep:
    lower: str  # expected worse
    upper: str  # expected better
    state: str  # holds | reversed | undetermined | not tested
    detail: str


@dataclass(frozen=True)
class OrderCheck:
    metric: str
    order: list[str]
    steps: list[OrderStep]
    verdict: str  # holds | contradicted | not established
    sentence: str


@dataclass(frozen=True)
class PlanTier:
    name: str
    power: float
    seeds: int | None


@dataclass(frozen=True)
class Planning:
    """Seeds per condition for one candidate on one tested metric, in tiers, and the advice."""

    condition: str
    label: str
    effect: str  # what effect the tiers are for
    alpha: float
    tiers: list[PlanTier]
    directional: bool
    advice: str


@dataclass(frozen=True)
class TieredMetric:
    """One metric of the campaign as its pages show it."""

    name: str
    tier: str  # primary | secondary | diagnostic | logged (not declared)
    higher_is_better: bool
    window: str
    unit: str
    min_effect: float
    tested: bool
    why_not_tested: str
    stats: CampaignStats
    matrix: list[PairCell] = field(default_factory=list)
    order: OrderCheck | None = None
    planning: list[Planning] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "stats"}
        out["stats"] = self.stats.as_dict()
        out["stats"].pop("paired", None)
        out["stats"].pop("methods", None)
        return out


@dataclass(frozen=True)
class CampaignTiers:
    metrics: list[TieredMetric]
    declared: str  # where the tiers came from, in words
    family: str  # the tested family, in words
    matrix_family: str
    not_metrics: list[str]  # identifiers and flags left out, each with why
    methods: dict[str, str]

    @property
    def tested(self) -> list[TieredMetric]:
        return [m for m in self.metrics if m.tested]

    @property
    def primary(self) -> TieredMetric | None:
        return next((m for m in self.metrics if m.tier == "primary"), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "metrics": [m.as_dict() for m in self.metrics],
            "declared": self.declared,
            "family": self.family,
            "matrix_family": self.matrix_family,
            "not_metrics": self.not_metrics,
            "methods": self.methods,
        }


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# --------------------------------------------------------------------------- which metrics


def headline_metric(runs: Sequence[RunSummary]) -> str | None:
    """The campaign's primary metric when campaign.yaml names none: the headline the one headline rule
    (obs.analysis.headline.choose_headline) chose for most of its runs (ties: by name)."""
    counts = Counter(s.headline.metric for s in runs if s.headline.metric)
    if not counts:
        return None
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def _finals(runs: Sequence[RunSummary], metric: str, primary: str | None, window: MetricWindow) -> list[RunFinal]:
    """Each run's one number for `metric`: its declared window (RunSummary.metric_windows) when one was computed,
    else the campaign's final window (the primary metric's `campaign_final`, any other metric's `finals`)."""
    if metric == primary and window.kind == "final":
        base = finals_from_summaries(runs)
        if any(r.final is not None for r in base):
            return base
    out = []
    for s in runs:
        w = s.metric_windows.get(metric)
        value = w.mean if w is not None else (s.finals.get(metric) if window.kind == "final" else None)
        if value is not None and not math.isfinite(value):
            value = None
        total = s.completions if s.completions is not None and math.isfinite(s.completions) else None
        out.append(
            RunFinal(
                run_id=s.id,
                condition=s.condition,
                seed=s.seed,
                final=value,
                last_step=s.last_step,
                completions_total=total,  # logged, but not counted over this window: see campaign._pooled
            )
        )
    return out


def _logged(runs: Sequence[RunSummary]) -> list[str]:
    return sorted({m for s in runs for m in (s.curves or {})} | {m for s in runs for m in s.finals})


def _flags(runs: Sequence[RunSummary]) -> set[str]:
    return {f for s in runs for f in s.flags}


# --------------------------------------------------------------------------- the analysis


METHODS = {
    "tiers": (
        "primary and secondary metrics are tested (Welch over seeds vs the baseline condition, one Holm family "
        "over every tested metric × candidate); diagnostics and undeclared metrics are described (mean ± sd "
        "over seeds), never tested; identifiers and yes/no flags are not metrics"
    ),
    "window": (
        "each run's one number per metric: the mean of its declared window (the last N logged values, or every "
        "value logged at a step in the range, both ends included); the campaign's final window by default"
    ),
    "matrix": (
        "every pair of conditions, later minus earlier in the page's order (the baseline first, then "
        "campaign.yaml's order, so a pair with the baseline is candidate − baseline): Welch's t-test over seeds "
        "and its 95% t interval (not widened for multiplicity), Hedges' g; the labels use p Holm-adjusted over "
        "every pair of every tested metric"
    ),
    "order": (
        "expected_order lists conditions worst to best in each metric's good direction; an adjacent pair holds "
        "when the better-expected condition is significantly better after Holm (matrix), is reversed when it "
        "is significantly worse, and is undetermined otherwise; the order holds when every pair holds"
    ),
    "planning": PLANNING_DEFINITION,
    "directional": DIRECTIONAL,
}


def _declared(campaign: Campaign, runs: Sequence[RunSummary]) -> tuple[list[MetricDecl], str | None, str]:
    """The metrics in their tiers, the primary metric, and where they came from in words: `metrics:` (led by
    the runs' headline when it names no primary), else the primary metric alone."""
    primary = campaign.primary_metric
    if campaign.metrics:
        decls = list(campaign.metrics)
        words = f"tiers declared in {campaign.metrics_from or 'campaign.yaml'} (metrics:)"
        if not any(d.tier == "primary" for d in decls):  # only secondaries and diagnostics: the headline leads
            primary = primary or headline_metric(runs)
            if primary:
                decls = [MetricDecl(primary, "primary"), *(d for d in decls if d.name != primary)]
                words += f"; none is primary, so the runs' headline ({primary}) is the primary metric"
        return decls, primary, words
    chosen = primary or headline_metric(runs)
    if campaign.primary_metric:
        how = f"the primary metric is campaign.yaml's primary_metric ({chosen})"
    elif chosen:
        how = (
            f"no primary_metric in campaign.yaml: the primary metric is the runs' headline ({chosen}), "
            "chosen by the headline rule"
        )
    else:
        how = "no primary metric: none declared and the runs have no headline"
    words = (
        f"{how}; no metrics: declared, so only it is tested. Secondary metrics (tested with it, Holm over the "
        "family) and diagnostics (shown, not tested) can be declared in campaign.yaml metrics:"
    )
    return ([MetricDecl(chosen, "primary")] if chosen else []), chosen, words


def _not_metrics(runs: Sequence[RunSummary], declared: set[str]) -> tuple[list[str], list[str]]:
    """The logged series that are no metric (identifiers, yes/no flags), each with why, and the logged metrics
    that `metrics:` does not declare."""
    flags = _flags(runs)
    logged = _logged(runs)
    not_metrics: list[str] = []
    for name in logged:
        if names_an_identifier(name):
            not_metrics.append(f"{name} (an identifier of the records)")
        elif name in flags:
            not_metrics.append(f"{name} (a yes/no flag: every value 0 or 1)")
    excluded = {n.split(" (", 1)[0] for n in not_metrics}
    return not_metrics, [n for n in logged if n not in declared and n not in excluded]


@dataclass(frozen=True)
class _Metrics:
    """One metric's campaign: the campaign with that metric as its primary, its direction and minimum effect."""

    campaign: Campaign
    primary: str | None
    direction: Callable[[str], bool]

    def higher(self, d: MetricDecl) -> bool:
        if d.higher_is_better is not None:
            return d.higher_is_better
        return self.campaign.higher_is_better if d.name == self.primary else self.direction(d.name)

    def of(self, d: MetricDecl) -> Campaign:
        c = self.campaign
        me = d.min_effect if d.min_effect is not None else (min_effect_of(c) if d.name == self.primary else 0.0)
        return dataclasses.replace(
            c,
            primary_metric=d.name,
            higher_is_better=self.higher(d),
            min_effect=me,
            litmus=c.litmus if d.name == self.primary else {},
        )


@dataclass(frozen=True)
class _Family:
    """The tested family: every tested metric × candidate's Holm-adjusted p, its size and how it is said."""

    by_metric: dict[str, dict[str, float]]
    m: int
    n_metrics: int
    words: str
    correction: str

    def of(self, metric: str) -> Family | None:
        if self.n_metrics <= 1:
            return None  # one tested metric: Holm over its candidates alone (campaign_stats)
        return Family(self.by_metric.get(metric, {}), self.m, self.words, self.correction)

    def said(self, first: str) -> str:
        if self.m == 0:
            return "no metric is tested"
        if self.n_metrics == 1:
            return f"one tested metric ({first}): its {plural(self.m, 'candidate')} vs the baseline condition" + (
                ", Holm-adjusted over them" if self.m > 1 else ""
            )
        tested = plural(self.n_metrics, "tested metric")
        return f"{tested}: Holm over {self.words}, so a label 'significant' holds for the family"


def _family(first: Mapping[str, CampaignStats]) -> _Family:
    """Pass 1's raw p of every tested metric × candidate, Holm-adjusted over them all."""
    cells = [(name, c.condition, c.p_value) for name, stats in first.items() for c in stats.candidates if c.tested]
    adjusted = holm_adjust([p for _, _, p in cells])
    m = len(cells)
    n_metrics = len({name for name, _, _ in cells})
    words = f"the {m} metric × candidate tests ({plural(n_metrics, 'metric')})"
    correction = (
        f"Holm–Bonferroni over the {m} Welch tests of the {plural(n_metrics, 'tested metric')} × their candidates "
        "(one family: primary and secondary metrics); the recommendation and the litmus use the adjusted p"
    )
    by_metric: dict[str, dict[str, float]] = {}
    for (name, cond, _), p_adj in zip(cells, adjusted, strict=True):
        by_metric.setdefault(name, {})[cond] = p_adj
    return _Family(by_metric, m, n_metrics, words, correction)


def campaign_tiers(
    campaign: Campaign,
    runs: Sequence[RunSummary],
    direction: Callable[[str], bool],
    *,
    paired: Sequence[PairedSpec] = (),
) -> CampaignTiers:
    """Every metric of the campaign in its tier, the tested ones as one Holm family (see the module): which metrics,
    pass 1 (each tested metric's raw p), the family, pass 2 (each tested metric adjusted over the family), the
    described ones, the matrix and the order."""
    decls, primary, declared_words = _declared(campaign, runs)
    not_metrics, undeclared = _not_metrics(runs, {d.name for d in decls})
    flags = _flags(runs)
    each = _Metrics(campaign, primary, direction)
    tested = [d for d in decls if d.tier != "diagnostic" and d.name not in flags]
    finals = {d.name: _finals(runs, d.name, primary, d.window) for d in decls}
    family = _family({d.name: campaign_stats(each.of(d), finals[d.name]) for d in tested})
    alpha_first = campaign.alpha / max(1, family.m)
    metrics: list[TieredMetric] = []
    for d in tested:
        fam = family.of(d.name)
        stats = campaign_stats(each.of(d), finals[d.name], paired=paired if d.name == primary else (), family=fam)
        planning = [_planning(c, stats, alpha_first) for c in stats.candidates]
        metrics.append(_tested(d, campaign.final_window, each.higher(d), stats, planning))
    for d in decls:
        if d.tier == "diagnostic":
            why = "a diagnostic: shown, not tested"
        elif d.name in flags:
            why = "a yes/no flag (every value 0 or 1): not an outcome, not tested"
        else:
            continue
        metrics.append(_described(d, why, each.of(d), finals[d.name], campaign.final_window, each.higher(d)))
    for name in undeclared:
        d = MetricDecl(name, "logged")
        why = "logged, not declared in metrics:, shown, not tested"
        named = _finals(runs, name, primary, d.window)
        metrics.append(_described(d, why, each.of(d), named, campaign.final_window, direction(name)))
    metrics.sort(key=lambda t: ("primary", "secondary", "diagnostic", "logged").index(t.tier))
    matrix_family = _with_matrix(metrics, campaign)
    return CampaignTiers(
        metrics=metrics,
        declared=declared_words,
        family=family.said(metrics[0].name if metrics else ""),
        matrix_family=matrix_family,
        not_metrics=not_metrics,
        methods=dict(METHODS),
    )


def _tested(d: MetricDecl, final_window: int, higher: bool, stats: CampaignStats, plan: list[Planning]) -> TieredMetric:
    return TieredMetric(
        name=d.name,
        tier=d.tier,
        higher_is_better=higher,
        window=d.window.text(final_window),
        unit=d.unit,
        min_effect=stats.min_effect,
        tested=True,
        why_not_tested="",
        stats=stats,
        planning=plan,
    )


def _described(
    d: MetricDecl, why: str, campaign: Campaign, finals: list[RunFinal], final_window: int, higher: bool
) -> TieredMetric:
    """A metric shown per condition (mean ± sd over seeds) with no test: the candidates are dropped."""
    stats = campaign_stats(campaign, finals)
    stats = dataclasses.replace(stats, candidates=[], correction="not tested")
    return TieredMetric(
        name=d.name,
        tier=d.tier,
        higher_is_better=higher,
        window=d.window.text(final_window),
        unit=d.unit,
        min_effect=stats.min_effect,
        tested=False,
        why_not_tested=why,
        stats=stats,
    )


# --------------------------------------------------------------------------- the matrix and the order


def _with_matrix(metrics: list[TieredMetric], campaign: Campaign) -> str:
    """Fill each tested metric's pairwise matrix (Holm over every pair of every tested metric) and order check."""
    raw: list[tuple[int, PairCell]] = []
    for i, t in enumerate(metrics):
        if not t.tested or len(t.stats.conditions) < 2:
            continue
        for a, b in combinations(t.stats.conditions, 2):
            c = compare_seeds(b, a)  # the comparisons with the baseline's computation: later minus earlier
            raw.append(
                (i, PairCell(a.name, b.name, a.n, b.n, c.delta, c.welch, c.p_value, math.nan, c.hedges_g, NOT_TESTED))
            )
    adjusted = holm_adjust([c.p_value for _, c in raw])
    size = sum(1 for _, c in raw if not math.isnan(c.p_value))
    for (i, cell), p_adj in zip(raw, adjusted, strict=True):
        t = metrics[i]
        outcome = (
            recommendation(p_adj, cell.welch.estimate, cell.welch.interval, campaign.alpha, t.higher_is_better)
            if cell.welch.interval is not None
            else "not_tested"
        )
        metrics[i] = dataclasses.replace(
            t, matrix=[*t.matrix, dataclasses.replace(cell, p_adjusted=p_adj, outcome=outcome)]
        )
    if len(campaign.expected_order) >= 2:
        for i, t in enumerate(metrics):
            if t.tested:
                metrics[i] = dataclasses.replace(t, order=_order(t, campaign))
    n_metrics = len({i for i, _ in raw})
    if not size:
        return "no pair of conditions could be tested"
    return (
        f"Holm over the {size} pairwise Welch tests ({plural(n_metrics, 'tested metric')} × every pair of conditions), "
        "a family apart from the tests against the baseline"
    )


def _cell(t: TieredMetric, lower: str, upper: str) -> tuple[PairCell | None, float]:
    """The matrix cell of two conditions and the sign that turns it into `upper` minus `lower`."""
    for c in t.matrix:
        if (c.a, c.b) == (lower, upper):
            return c, 1.0
        if (c.a, c.b) == (upper, lower):
            return c, -1.0
    return None, 1.0


def _order(t: TieredMetric, campaign: Campaign) -> OrderCheck:
    labels = {c.name: c.label for c in t.stats.conditions}
    units = Units(t.stats.in_pp)
    steps: list[OrderStep] = []
    alpha = campaign.alpha
    for lower, upper in zip(campaign.expected_order, campaign.expected_order[1:], strict=False):
        cell, sign = _cell(t, lower, upper)
        lo_l, up_l = labels.get(lower, lower), labels.get(upper, upper)
        if cell is None or cell.outcome == "not_tested":
            why = cell.welch.problem if cell is not None and cell.welch.problem else "no seeds with a value"
            steps.append(OrderStep(lower, upper, "not tested", f"{up_l} above {lo_l}: not tested ({why})"))
            continue
        gain = sign * cell.delta * (1.0 if t.higher_is_better else -1.0)
        significant = cell.p_adjusted < alpha  # Holm's p below α implies the raw p is, so the dual CI excludes 0
        p = p_text(cell.p_adjusted)
        if significant and gain > 0:
            state, word = "holds", "holds"
        elif significant and gain < 0:
            state, word = "reversed", "is reversed"
        else:
            state, word = "undetermined", "is undetermined"
        steps.append(
            OrderStep(
                lower,
                upper,
                state,
                f"{up_l} above {lo_l} {word}: difference {units.diff(sign * cell.delta)} "
                f"({'higher' if t.higher_is_better else 'lower'} is better), Holm-adjusted {p} at α = {alpha:g}",
            )
        )
    states = {s.state for s in steps}
    if states == {"holds"}:
        verdict = "holds"
    elif "reversed" in states:
        verdict = "contradicted"
    else:
        verdict = "not established"
    shown = " < ".join(labels.get(n, n) for n in campaign.expected_order)
    counts = Counter(s.state for s in steps)
    parts = [f"{counts[k]} {k}" for k in ("holds", "reversed", "undetermined", "not tested") if counts[k]]
    sentence = (
        f"Expected order on {t.name} ({shown}, worst to best): {verdict}; "
        f"of its {plural(len(steps), 'adjacent pair')}, {', '.join(parts)} at α = {alpha:g} after Holm."
    )
    return OrderCheck(t.name, list(campaign.expected_order), steps, verdict, sentence)


# --------------------------------------------------------------------------- planning


def _planning(c: CandidateStats, stats: CampaignStats, alpha: float) -> Planning:
    """Seeds in tiers for one candidate, and whether its result is directional (see DIRECTIONAL)."""
    cond = {x.name: x for x in stats.conditions}
    cand, base = cond.get(c.condition), next((x for x in stats.conditions if x.is_baseline), None)
    tiers: list[PlanTier] = []
    effect = ""
    d = math.nan
    if cand is not None and base is not None and cand.n >= 2 and base.n >= 2:
        x = np.array([v.value for v in cand.values])
        y = np.array([v.value for v in base.values])
        ss = float(np.sum((x - x.mean()) ** 2) + np.sum((y - y.mean()) ** 2))
        sd = math.sqrt(ss / (x.size + y.size - 2))
        if stats.min_effect > 0 and sd > 0:
            d = stats.min_effect / sd
            units = Units(stats.in_pp)
            effect = f"the minimum effect {units.size(stats.min_effect)} ({num_na(d)} pooled sd of {units.size(sd)})"
        elif math.isfinite(c.hedges_g) and c.hedges_g != 0:
            d = c.hedges_g
            effect = f"the observed effect (Hedges' g = {num_na(d)}; no minimum effect set)"
    for name, power in PLANNING_TIERS:
        seeds = sample_size_for_power(d, alpha=alpha, power=power) if math.isfinite(d) and d != 0 else None
        tiers.append(PlanTier(name, power, seeds))
    directional = bool(
        c.tested
        and (
            c.recommendation == SIZE_UNKNOWN
            or (not math.isnan(c.p_adjusted) and stats.alpha <= c.p_adjusted < 2 * stats.alpha)
        )
    )
    if directional:
        why = (
            "significant, but its 95% CI reaches below the minimum effect"
            if c.recommendation == SIZE_UNKNOWN
            else f"the Holm-adjusted {p_text(c.p_adjusted)} lies between α = {stats.alpha:g} and 2α"
        )
        advice = (
            f"Directional: {why}. Double the seeds ({c.n} → {2 * c.n} per condition): the interval narrows by "
            "about 1/√2."
        )
    elif not effect:
        advice = "No planning: too few seeds, or no spread and no minimum effect to plan for."
    else:
        standard = tiers[1].seeds
        advice = (
            f"{standard} seeds per condition give 80% power for {effect}."
            if standard is not None
            else "No finite number of seeds detects an effect of zero."
        )
    return Planning(c.condition, c.label, effect, alpha, tiers, directional, advice)
