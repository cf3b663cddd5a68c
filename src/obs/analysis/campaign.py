"""Campaign statistics: is a candidate condition really better than the baseline condition?

A campaign runs each condition with several seeds. The unit of evidence is the *seed*: each run
contributes one number, the final-window mean of the primary metric (the logged points within one
run are not replicates: they are autocorrelated and come from one seed). Every candidate is compared
with the baseline condition by

* Welch's t-test over seeds and its dual 95% t interval of the difference of means (the interval
  excludes 0 exactly when p < α), which keeps its level at 3-10 seeds where percentile bootstraps
  are too narrow (bench/stats_calibration.py); fewer than two seeds per condition gives "too few
  seeds for an interval", seeds that all gave the same value "no variation observed", never a
  zero-width interval;
* Holm's correction of the p-values across candidates, because with several candidates one of them
  will look good by chance; the recommendation and the litmus use the adjusted p;
* Hedges' g (Cohen's d with its small-sample correction), and the seeds per condition needed for 80%
  power at the Holm-adjusted α the verdict uses, for the minimum effect of interest when campaign.yaml
  sets one (else for the observed g);
* pooled correct/total episodes when the metric is a rate and the runs log ``completions``, shown as
  a description only: episodes cluster by seed, so no test is run on them;
* the recommendation of :func:`obs.analysis.stats.recommendation` (adjusted p, CI, ``min_effect``)
  and a litmus verdict: INCONCLUSIVE while any evidence minimum of campaign.yaml is unmet (each one
  named) or a condition's seeds are copies of one run (no spread at all), otherwise CONFIRMED or
  FAILED against the thresholds.

Pure: run summaries (or :class:`RunFinal` records) in, a :class:`CampaignStats` presentation model
out, with ``as_dict()`` for ``campaigns/<id>/analysis.json``. The statistics come from
:mod:`obs.analysis.stats`; nothing here re-implements a test.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from obs.analysis.paired_systems import ConfigTable, PairedSystems, compare_systems, config_table
from obs.analysis.stats import (
    DEGRADATION,
    IMPROVEMENT,
    NEGLIGIBLE,
    NOT_TESTED,
    SIZE_UNKNOWN,
    Recommendation,
    WelchResult,
    hedges_g,
    holm_adjust,
    recommendation,
    sample_size_for_power,
    welch,
)
from obs.model import Campaign, PairedSpec
from obs.numbers import num, p_text, pct, plural, pp
from obs.sitemodel import RunSummary

__all__ = [
    "CONFIRMED",
    "FAILED",
    "INCONCLUSIVE",
    "CampaignStats",
    "CandidateStats",
    "Check",
    "ConditionFinals",
    "Family",
    "Litmus",
    "PooledCounts",
    "RunFinal",
    "Units",
    "campaign_stats",
    "finals_from_summaries",
    "metric_is_rate",
    "reads_in_pp",
]

Verdict = Literal["CONFIRMED", "FAILED", "INCONCLUSIVE"]
CONFIRMED: Verdict = "CONFIRMED"
FAILED: Verdict = "FAILED"
INCONCLUSIVE: Verdict = "INCONCLUSIVE"

LEVEL = 0.95
POWER = 0.8
# A metric whose name contains one of these is a proportion of episodes (correct / total), so
# pooled counts make sense; a mean reward in [0, 1] is not a count of anything.
RATE_HINTS = ("correct", "accuracy", "acc", "_rate", "pass", "exact_match", "success", "solve")
EVIDENCE_KEYS = {"min_seeds": "seeds", "min_steps": "steps", "min_completions": "completions"}
LITMUS_KEYS = ("min_delta",)
MAX_NAMED = 4


# --------------------------------------------------------------------------- inputs


def num_na(x: float | None) -> str:
    """A number in a sentence ("n/a" when there is none, or it is not a number)."""
    return "n/a" if x is None or math.isnan(x) else num(x)


@dataclass(frozen=True)
class RunFinal:
    """What one run contributes to its condition: the final-window value and its evidence.

    ``completions_window`` is the number of episodes behind ``final`` (completions logged in the
    final window); ``completions_window_estimated`` says it was derived from the run's total as
    ``total × window / points``, which assumes a constant number of completions per logged step.
    """

    run_id: str
    condition: str | None
    seed: int | None
    final: float | None
    window_n: int = 0
    points: int = 0
    last_step: float | None = None
    completions_total: float | None = None
    completions_window: float | None = None
    completions_window_estimated: bool = False


def _finite(x: Any) -> float | None:
    if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x):
        return float(x)
    return None


def finals_from_summaries(summaries: Sequence[RunSummary]) -> list[RunFinal]:
    """One :class:`RunFinal` per run summary (see :mod:`obs.analysis.summary`).

    Uses an explicit ``completions_final`` (episodes in the final window) when a summary has one;
    otherwise estimates it from the run's total completions, pro rata to the final window's share of
    the logged points of the primary metric, and marks it estimated.
    """
    out: list[RunFinal] = []
    for s in summaries:
        stat = s.campaign_final
        final = _finite(stat.mean) if stat else None
        window_n = stat.n if stat else 0
        points = stat.points if stat else 0
        total = _finite(s.completions)
        explicit = _finite(s.completions_final)
        if explicit is not None:
            window, estimated = explicit, False
        elif total is not None and points > 0 and window_n > 0:
            window, estimated = total * window_n / points, True
        else:
            window, estimated = None, False
        out.append(
            RunFinal(
                run_id=s.id,
                condition=s.condition,
                seed=s.seed,
                final=final,
                window_n=window_n,
                points=points,
                last_step=_finite(s.last_step),
                completions_total=total,
                completions_window=window,
                completions_window_estimated=estimated,
            )
        )
    return out


def metric_is_rate(name: str | None) -> bool:
    """True when the metric's name says it is a proportion of episodes (correct_rate, accuracy...)."""
    lowered = (name or "").lower()
    return any(hint in lowered for hint in RATE_HINTS)


# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True)
class SeedValue:
    seed: int | None
    run_id: str
    value: float


@dataclass(frozen=True)
class ConditionFinals:
    """The per-seed final values of one condition, as the tests use them."""

    name: str
    label: str
    is_baseline: bool
    values: list[SeedValue]
    n: int
    mean: float
    sd: float
    runs_without_final: list[str]


@dataclass(frozen=True)
class Check:
    """One evidence minimum or litmus threshold: what was required, what was seen, and whether it held."""

    key: str
    what: str
    required: float | None
    observed: float | None
    met: bool
    detail: str


@dataclass(frozen=True)
class Litmus:
    verdict: Verdict
    reason: str
    evidence: list[Check]
    thresholds: list[Check]
    unmet: list[str]


@dataclass(frozen=True)
class PooledCounts:
    """Correct/total episodes pooled over a condition's seeds: a description, never tested (episodes
    cluster by seed and share prompts, so they are not independent replicates)."""

    correct: int
    total: int
    correct_baseline: int
    total_baseline: int
    rate: float
    rate_baseline: float
    estimated: bool
    method: str


@dataclass(frozen=True)
class CandidateStats:
    """A candidate condition against the baseline condition (candidate minus baseline throughout)."""

    condition: str
    label: str
    n: int
    n_baseline: int
    mean: float
    mean_baseline: float
    delta: float
    welch: WelchResult
    p_value: float
    p_adjusted: float
    hedges_g: float
    seeds_needed: int | None
    power_for: str  # what effect the planning advice is for
    pooled: PooledCounts | None
    pooled_absent: str | None
    recommendation: Recommendation
    litmus: Litmus
    sentence: str
    warnings: list[str] = field(default_factory=list)

    @property
    def tested(self) -> bool:
        return self.welch.p_value is not None


@dataclass(frozen=True)
class CampaignStats:
    """Everything the "Is the difference real?" section shows, and analysis.json publishes."""

    campaign_id: str
    primary_metric: str | None
    higher_is_better: bool
    alpha: float
    level: float
    min_effect: float
    final_window: int
    baseline_condition: str | None
    baseline_label: str
    conditions: list[ConditionFinals]
    candidates: list[CandidateStats]
    correction: str
    paired: list[PairedSystems]
    methods: dict[str, str]
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    paired_table: ConfigTable | None = None
    in_pp: bool = False  # a rate: values read in %, differences in pp (reads_in_pp), on the page and in its sentences

    @property
    def computed(self) -> bool:
        return any(c.tested for c in self.candidates)

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "paired"}
        plain: dict[str, Any] = {k: _plain(v) for k, v in out.items()}
        plain["paired"] = [p.as_dict() for p in self.paired]
        plain["schema"] = "obs.campaign_stats/3"
        return plain


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------- formatting


def _signed(x: float | None) -> str:
    text = num_na(x)
    return text if text.startswith(("\u2212", "n/a")) else "+" + text


def reads_in_pp(metric: str | None, values: Sequence[float]) -> bool:
    """Whether a metric's seed-level numbers read in percent and percentage points, as a run page shows a rate:
    its name says it is a rate and every final value is a proportion. The one rule for the page's tables
    (render.format.stats_in_pp) and this module's sentences."""
    return bool(values) and metric_is_rate(metric) and all(0.0 <= v <= 1.0 for v in values)


@dataclass(frozen=True)
class Units:
    """How the sentences of one metric write its numbers: a rate's values in %, its differences in pp (as the
    tables beside them do), any other metric's as plain signed numbers."""

    in_pp: bool = False

    def value(self, x: float | None) -> str:
        return pct(x, missing="n/a") if self.in_pp else num_na(x)

    def diff(self, x: float | None) -> str:
        """A signed difference: +0.1 pp, −0.04622."""
        return pp(x, missing="n/a") if self.in_pp else _signed(x)

    def size(self, x: float | None) -> str:
        """An unsigned amount in the difference's unit (a minimum effect, an sd): 3.0 pp, 0.03."""
        return f"{pp(x, False, missing='n/a')} pp" if self.in_pp and x is not None and not math.isnan(x) else num_na(x)

    def interval(self, low: float, high: float) -> str:
        """An interval's bounds, signed, its unit once: −6.1 to +6.3 pp."""
        if self.in_pp:
            return f"{pp(low, missing='n/a').removesuffix(' pp')} to {pp(high, missing='n/a')}"
        return f"{_signed(low)} to {_signed(high)}"


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    return shown + (f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else "")


# --------------------------------------------------------------------------- assembly


def _condition_finals(name: str, label: str, is_baseline: bool, runs: Sequence[RunFinal]) -> ConditionFinals:
    values = sorted(
        (SeedValue(r.seed, r.run_id, r.final) for r in runs if r.final is not None),
        key=lambda v: (v.seed is None, v.seed if v.seed is not None else 0, v.run_id),
    )
    arr = np.array([v.value for v in values], dtype=np.float64)
    return ConditionFinals(
        name=name,
        label=label,
        is_baseline=is_baseline,
        values=values,
        n=len(values),
        mean=float(arr.mean()) if arr.size else math.nan,
        sd=float(arr.std(ddof=1)) if arr.size > 1 else math.nan,
        runs_without_final=sorted(r.run_id for r in runs if r.final is None),
    )


def _pooled(
    metric: str | None, cand: Sequence[RunFinal], base: Sequence[RunFinal], final_window: int
) -> tuple[PooledCounts | None, str | None]:
    """Correct/total episodes pooled over seeds (described, not tested), or why there are none: no completions
    logged, or logged but not counted over this metric's window (summaries count them only in the primary metric's
    final window: a step window's or another metric's episodes are not known)."""
    if not metric_is_rate(metric):
        return None, f"'{metric}' is not a proportion of episodes, so there are no correct/total counts to pool"
    used = [r for r in (*cand, *base) if r.final is not None]
    unlogged = [r.run_id for r in used if r.completions_window is None and r.completions_total is None]
    if unlogged:
        return None, f"no completions logged by {_names(unlogged)}"
    if any(r.completions_window is None for r in used):
        # the runs did log completions: what is missing is their count over this metric's window
        return None, (
            "the runs logged completions, but obs counts the episodes only behind the campaign's primary metric over "
            f"its final window (the last {final_window} logged values), not behind {metric} over its declared window, "
            "so there are no pooled counts"
        )
    outside = [r.run_id for r in used if r.final is not None and not 0.0 <= r.final <= 1.0]
    if outside:
        return None, f"final values outside [0, 1] in {_names(outside)}, so they are not rates"

    def counts(runs: Sequence[RunFinal]) -> tuple[int, int]:
        total = correct = 0
        for r in runs:
            if r.final is None or r.completions_window is None:
                continue
            n = round(r.completions_window)
            total += n
            correct += min(n, round(r.final * r.completions_window))
        return correct, total

    cc, ct = counts(cand)
    bc, bt = counts(base)
    if ct == 0 or bt == 0:
        return None, "no completions in the final window"
    rate, rate_b = cc / ct, bc / bt
    estimated = any(r.completions_window_estimated for r in used)
    method = "correct = round(final-window rate × completions in the window) per run, summed over seeds" + (
        "; window completions estimated as total × window ÷ logged points (assumes equal completions per logged step)"
        if estimated
        else ""
    )
    return PooledCounts(cc, ct, bc, bt, rate, rate_b, estimated, method), None


def _evidence(
    campaign: Campaign, cand: ConditionFinals, base: ConditionFinals, runs: Sequence[RunFinal]
) -> list[Check]:
    """Each evidence minimum set in campaign.yaml, checked on the two conditions being compared."""
    checks: list[Check] = []
    used = [r for r in runs if r.final is not None]
    for key in EVIDENCE_KEYS:
        required = campaign.evidence.get(key)
        if required is None:
            continue
        if key == "min_seeds":
            checks.append(_seeds_check(key, required, cand, base))
        elif key == "min_steps":
            checks.append(_steps_check(key, required, used))
        else:
            checks.append(_completions_check(key, required, cand, base, used))
    return checks


def _seeds_check(key: str, required: float, cand: ConditionFinals, base: ConditionFinals) -> Check:
    """Seeds with a final value, in each of the two conditions."""
    short = [f"{c.label} has {c.n}" for c in (base, cand) if c.n < required]
    detail = (
        f"seeds with a final value per condition: {(short and '; '.join(short)) or 'all enough'} (need {required:g})"
    )
    return Check(key, "seeds per condition", required, float(min(cand.n, base.n)), not short, detail)


def _steps_check(key: str, required: float, used: Sequence[RunFinal]) -> Check:
    """The last logged step of every run with a final value (a run that logged no step fails it)."""
    unknown = [r.run_id for r in used if r.last_step is None]
    low = [
        f"{r.run_id} reached step {num_na(r.last_step)}"
        for r in used
        if r.last_step is not None and r.last_step < required
    ]
    steps = [r.last_step for r in used if r.last_step is not None]
    observed = min(steps) if steps else None
    problems = low + ([f"no steps logged by {_names(unknown)}"] if unknown else [])
    detail = f"last logged step of every run: {_names(problems) if problems else 'all enough'} (need {required:g})"
    return Check(key, "steps per run", required, observed, bool(used) and not problems, detail)


def _completions_check(
    key: str, required: float, cand: ConditionFinals, base: ConditionFinals, used: Sequence[RunFinal]
) -> Check:
    """Completions per condition, summed over its seeds (unknown when a seed did not log them)."""
    per: list[tuple[str, float | None]] = []
    for cond in (base, cand):
        members = [r for r in used if r.condition == cond.name]
        totals = [r.completions_total for r in members]
        per.append((cond.label, None if any(t is None for t in totals) else float(sum(t or 0 for t in totals))))
    short = [
        f"{label} {'did not log completions' if total is None else f'has {num_na(total)}'}"
        for label, total in per
        if total is None or total < required
    ]
    known = [t for _, t in per if t is not None]
    observed = min(known) if len(known) == len(per) else None
    detail = (
        f"completions per condition, summed over its seeds: {'; '.join(short) if short else 'all enough'} "
        f"(need {num_na(required)})"
    )
    return Check(key, "completions per condition", required, observed, not short, detail)


def _copies(cond: ConditionFinals, units: Units) -> str | None:
    """The zero-variance guard: seeds that all gave the same value are copies of one run."""
    if cond.n >= 2 and cond.sd == 0.0:
        return (
            f"the seed changed nothing in {cond.label}: its {cond.n} seeds all gave {units.value(cond.mean)}, so they "
            "are "
            "copies of one run, not replicates (check that the seed reaches the data order, init and sampling)"
        )
    return None


def min_effect_of(campaign: Campaign) -> float:
    """The campaign's minimum effect of interest: `min_effect`, else the older `litmus.min_delta`, else 0."""
    if campaign.min_effect is not None:
        return float(campaign.min_effect)
    legacy = campaign.litmus.get("min_delta")
    return float(legacy) if legacy is not None else 0.0


def change_words(delta: float | None, higher_is_better: bool) -> str:
    """What a difference (candidate − baseline) means for the metric's direction, from its sign: "higher is
    better: an improvement", "lower is better: a worsening", "no change"."""
    direction = "higher is better" if higher_is_better else "lower is better"
    if delta is None or math.isnan(delta):
        return f"{direction}: no difference computed"
    if delta == 0.0:
        return f"{direction}: no change"
    better = (delta > 0.0) == higher_is_better
    return f"{direction}: {'an improvement' if better else 'a worsening'}"


def _thresholds(campaign: Campaign, c: CandidateStats, units: Units) -> list[Check]:
    """The litmus thresholds: the minimum effect (judged on the interval's bound on the worse side, never on the
    estimate) and significance. Their sentences print the difference as it is (candidate − baseline, signed, as
    the tables beside them) and say from its sign and the metric's direction whether it is an improvement: an
    "improvement of −48.7 pp" would read backwards."""
    hib = campaign.higher_is_better
    sign = 1.0 if hib else -1.0
    gain = sign * c.delta
    required = min_effect_of(campaign)
    iv = c.welch.interval
    # the size is judged on the interval: its bound nearer 0 must clear the minimum effect, not the estimate
    near = None if iv is None else min(sign * iv.low, sign * iv.high)
    met = bool(not math.isnan(gain) and gain > 0.0 and near is not None and near > 0.0 and near >= required)
    observed = f"observed change {units.diff(c.delta)} ({change_words(c.delta, hib)})"
    side = "lower" if hib else "upper"  # the bound on the worse side of the interval
    if iv is None:
        bound = "; no interval, so the minimum effect cannot be judged"
    elif required:
        need = "at or above" if hib else "at or below"
        bound = (
            f"; the 95% CI's {side} bound {units.diff(iv.low if hib else iv.high)} is {'' if met else 'not '}{need} "
            f"{units.diff(sign * required)}, the minimum effect (the bound must reach it)"
        )
    else:
        bound = (
            f"; no minimum effect set (min_effect), so the 95% CI's {side} bound need only be "
            f"{'above' if hib else 'below'} 0: it is {units.diff(iv.low if hib else iv.high)}"
        )
    checks = [Check("min_effect", "improvement, 95% CI bound ≥ min_effect", required, near, met, observed + bound)]
    ci = f"95% CI {units.interval(iv.low, iv.high)}" if iv is not None else (c.welch.problem or "no interval")
    checks.append(
        Check(
            "significance",
            "significant improvement (Holm-adjusted Welch p < α, CI excludes 0)",
            campaign.alpha,
            c.p_adjusted,
            c.recommendation == IMPROVEMENT,
            f"adjusted {p_text(c.p_adjusted)} vs α = {campaign.alpha:g}; {ci}",
        )
    )
    return checks


def _litmus(evidence: list[Check], thresholds: list[Check], warnings: Sequence[str]) -> Litmus:
    short = [c.detail for c in evidence if not c.met]
    failed = [c.detail for c in thresholds if not c.met]
    if short:
        return Litmus(INCONCLUSIVE, "evidence minimums not met: " + "; ".join(short), evidence, thresholds, short)
    if warnings:
        return Litmus(INCONCLUSIVE, "; ".join(warnings), evidence, thresholds, list(warnings))
    if failed:
        return Litmus(FAILED, "evidence sufficient, but: " + "; ".join(failed), evidence, thresholds, failed)
    reason = "all evidence minimums met and every threshold passed"
    if not evidence:
        reason += " (no evidence minimums are set in campaign.yaml)"
    return Litmus(CONFIRMED, reason, evidence, thresholds, [])


def _sentence(
    campaign: Campaign,
    cand: ConditionFinals,
    base: ConditionFinals,
    c: CandidateStats,
    n_tests: int,
    family_words: str = "",
    units: Units = Units(),
) -> str:
    """What the numbers say, in words made from those numbers (checked by tests/site/test_words_numbers.py), in
    the units of the tables beside them (`units`: a rate's means in %, differences in pp)."""
    metric = campaign.primary_metric or "the primary metric"
    alpha = campaign.alpha
    w = c.welch
    if cand.n == 0:
        return f"{cand.label}: not compared, no run of it has a final value of {metric}."
    direction = "higher" if campaign.higher_is_better else "lower"
    text = (
        f"{cand.label} averaged {units.value(c.mean)} {metric} over {plural(c.n, 'seed')}, against "
        f"{units.value(c.mean_baseline)} for {base.label} over {c.n_baseline}: a difference of {units.diff(c.delta)} "
        f"({direction} is better"
    )
    if w.interval is None or w.p_value is None:
        return text + f"). {(w.problem or 'no test').capitalize()}: no test, no interval."
    iv = w.interval
    text += (
        f"; 95% Welch CI {units.interval(iv.low, iv.high)}, Hedges' g = {num_na(c.hedges_g)}). "
        f"Welch's t-test over seeds: t = {num_na(w.t)}, df = {num_na(w.df)}, {p_text(w.p_value)}"
    )
    family_words = family_words or f"{n_tests} candidates"
    text += f", Holm-adjusted over {family_words} {p_text(c.p_adjusted)}. " if n_tests > 1 else ". "
    if c.recommendation == IMPROVEMENT:
        text += f"A statistically significant improvement at α = {alpha:g}."
    elif c.recommendation == DEGRADATION:
        text += f"A statistically significant degradation at α = {alpha:g}."
    elif c.recommendation == NEGLIGIBLE:
        text += (
            f"Significant at α = {alpha:g}, but the whole 95% CI is smaller than the minimum effect of interest "
            f"({units.size(min_effect_of(campaign))})."
        )
    elif c.recommendation == SIZE_UNKNOWN:
        text += (
            f"Significant at α = {alpha:g}, but the size is not established: the 95% CI reaches below the minimum "
            f"effect of interest ({units.size(min_effect_of(campaign))}) as well as above it."
        )
    elif iv.excludes_zero():
        text += (
            f"The 95% CI excludes 0, but after Holm's correction for {family_words} compared with the same "
            f"baseline the adjusted p is not below α = {alpha:g}: not significant."
        )
    else:
        text += (
            f"Not significant at α = {alpha:g}: the 95% CI includes 0, so the data are compatible with no difference."
        )
    if c.recommendation != IMPROVEMENT and c.recommendation != DEGRADATION and c.seeds_needed is not None:
        text += (
            f" About {c.seeds_needed} seeds per condition would give {POWER:.0%} power to detect {c.power_for} at the "
            f"{'Holm-adjusted ' if n_tests > 1 else ''}α = {alpha / max(1, n_tests):.3g}."
        )
    return text


@dataclass(frozen=True)
class Family:
    """The tests a candidate's p is adjusted with when it is one of several metrics' tests (obs.analysis.tiers):
    the Holm-adjusted p of each candidate of this metric, the family's size and how it is said."""

    adjusted: dict[str, float]
    size: int
    words: str  # "the 6 metric × candidate tests", read after "Holm-adjusted over"
    correction: str


@dataclass(frozen=True)
class SeedComparison:
    """One condition's seeds against another's (x minus y): the difference of means, Welch's test and its interval,
    Hedges' g. The one computation the candidate-vs-baseline comparisons and the candidate-vs-candidate matrix
    (obs.analysis.tiers) share; p and g are NaN when there is no test (too few seeds, or copies of one run, whose
    zero sd would inflate g)."""

    delta: float
    welch: WelchResult
    p_value: float
    hedges_g: float


def compare_seeds(x: ConditionFinals, y: ConditionFinals) -> SeedComparison:
    """`x` against `y`, seeds as the unit (see SeedComparison)."""
    xs, ys = [v.value for v in x.values], [v.value for v in y.values]
    w = welch(xs, ys, level=LEVEL)
    tested = bool(xs and ys and w.interval is not None)
    return SeedComparison(
        delta=x.mean - y.mean if xs and ys else math.nan,
        welch=w,
        p_value=w.p_value if w.p_value is not None else math.nan,
        hedges_g=hedges_g(xs, ys) if tested else math.nan,
    )


def campaign_stats(
    campaign: Campaign, runs: Sequence[RunFinal], *, paired: Sequence[PairedSpec] = (), family: Family | None = None
) -> CampaignStats:
    """Compare every non-baseline condition of ``campaign`` with its baseline condition.

    ``runs`` are the campaign's runs (:func:`finals_from_summaries`). Nothing is random: a rebuilt
    page shows the same numbers. With ``family``, the p-values are adjusted over that family (every
    tested metric × candidate) instead of over this metric's candidates alone. The steps: each condition's
    finals, what keeps the design from being compared, a Welch test per candidate (Holm over them, or over the
    family), each candidate's statistics, notes and methods.
    """
    labels = {c.name: (c.label or c.name) for c in campaign.conditions}
    names = campaign.condition_order(r.condition for r in runs)
    base_name = campaign.baseline_condition
    base_label = labels.get(base_name or "", base_name or "")
    by_cond = {name: [r for r in runs if r.condition == name] for name in names}
    conditions = [_condition_finals(n, labels.get(n, n), n == base_name, by_cond[n]) for n in names]
    base = next((c for c in conditions if c.is_baseline), None)
    problems = _design_problems(campaign, base_name, by_cond, base)
    units = Units(reads_in_pp(campaign.primary_metric, [v.value for c in conditions for v in c.values]))

    min_effect = min_effect_of(campaign)
    tests: list[tuple[ConditionFinals, SeedComparison]] = []
    if not problems and base is not None:
        tests = [(cond, compare_seeds(cond, base)) for cond in conditions if not cond.is_baseline]
    raw = [c.p_value for _, c in tests]
    adjusted, n_tests, family_words = _adjusted([cond for cond, _ in tests], raw, family)
    alpha_used = campaign.alpha / max(1, n_tests)  # the first Holm step: what planning must reach
    candidates: list[CandidateStats] = []
    for (cond, compared), p_adj in zip(tests, adjusted, strict=True):
        assert base is not None  # tests is empty otherwise
        tested = _Tested(compared, p_adj, n_tests, alpha_used, min_effect, family_words, units)
        candidates.append(_candidate(campaign, cond, base, tested, by_cond))

    correction = _correction(family, n_tests)
    return CampaignStats(
        campaign_id=campaign.id,
        primary_metric=campaign.primary_metric,
        higher_is_better=campaign.higher_is_better,
        alpha=campaign.alpha,
        level=LEVEL,
        min_effect=min_effect,
        final_window=campaign.final_window,
        baseline_condition=base_name,
        baseline_label=base_label,
        conditions=conditions,
        candidates=candidates,
        correction=correction,
        paired=[compare_systems(p, alpha=campaign.alpha, level=LEVEL) for p in paired],
        paired_table=config_table(paired, LEVEL) if paired else None,
        methods=_methods(campaign, correction),
        notes=_notes(campaign, conditions, candidates, units),
        problems=problems,
        in_pp=units.in_pp,
    )


def _adjusted(
    tested: Sequence[ConditionFinals], raw: list[float], family: Family | None
) -> tuple[list[float], int, str]:
    """Each candidate's adjusted p, the number of tests it was adjusted over and how the sentence says them:
    Holm over this metric's candidates, or the family's adjustment over every tested metric × candidate."""
    n_tests = sum(1 for p in raw if not math.isnan(p))
    if family is not None and family.size > 1:
        adjusted = [
            family.adjusted.get(cond.name, math.nan) if not math.isnan(p) else math.nan
            for cond, p in zip(tested, raw, strict=True)
        ]
        return adjusted, family.size, family.words
    return holm_adjust(raw), n_tests, f"{n_tests} candidates"


def _correction(family: Family | None, n_tests: int) -> str:
    """The multiple-comparison correction, in words."""
    if family is not None and family.size > 1:
        return family.correction
    if n_tests > 1:
        return (
            f"Holm–Bonferroni over the {n_tests} candidate-vs-baseline Welch p-values; "
            "the recommendation and the litmus use the adjusted p"
        )
    return "none needed: one candidate is compared with the baseline"


def _design_problems(
    campaign: Campaign, base_name: str | None, by_cond: Mapping[str, list[RunFinal]], base: ConditionFinals | None
) -> list[str]:
    """What keeps the campaign from being compared: no primary metric, no (or an unknown) baseline condition,
    a baseline condition without a final value."""
    problems: list[str] = []
    # a campaign formed from the folders' layout has no campaign.yaml yet: the fix is to write one
    where = (
        "a campaign.yaml (there is none: this campaign was inferred from its runs' layout)"
        if campaign.inferred
        else "campaign.yaml"
    )
    if not campaign.primary_metric:
        problems.append(f"no primary_metric in {where}, so there is nothing to compare")
    if not base_name:
        problems.append(f"no baseline_condition in {where}, so there is nothing to compare against")
    elif base_name not in by_cond:
        problems.append(f"the baseline condition '{base_name}' is not one of the conditions")
    if base is not None and base.n == 0 and not problems:
        problems.append(f"no run of the baseline condition {base.label} has a final value of {campaign.primary_metric}")
    return problems


@dataclass(frozen=True)
class _Tested:
    """One candidate's comparison with the baseline, its p after Holm, and the family's size."""

    compared: SeedComparison
    p_adjusted: float
    n_tests: int
    alpha_used: float  # the first Holm step's level, which planning must reach
    min_effect: float
    family_words: str  # what the adjusted p was adjusted over, as the sentence says it
    units: Units = Units()


def _candidate(
    campaign: Campaign,
    cond: ConditionFinals,
    base: ConditionFinals,
    tested: _Tested,
    by_cond: Mapping[str, list[RunFinal]],
) -> CandidateStats:
    """One candidate condition against the baseline: effect size, pooled episodes, recommendation, planning,
    the litmus verdict on the campaign's evidence minimums, and the sentence that says it."""
    w, p_adj, min_effect = tested.compared.welch, tested.p_adjusted, tested.min_effect
    x = [v.value for v in cond.values]
    y = [v.value for v in base.values]
    g = tested.compared.hedges_g
    pooled, pooled_absent = _pooled(
        campaign.primary_metric, by_cond[cond.name], by_cond[base.name], campaign.final_window
    )
    # no test (too few seeds, or seeds that are copies of one run): "not tested", never "not significant"
    rec = (
        recommendation(p_adj, w.estimate, w.interval, campaign.alpha, campaign.higher_is_better, min_effect)
        if w.interval is not None
        else NOT_TESTED
    )
    units = tested.units
    seeds_needed, power_for = _planning(x, y, g, min_effect, tested.alpha_used, units)
    warnings = [msg for msg in (_copies(base, units), _copies(cond, units)) if msg]
    stats = CandidateStats(
        condition=cond.name,
        label=cond.label,
        n=len(x),
        n_baseline=len(y),
        mean=cond.mean,
        mean_baseline=base.mean,
        delta=tested.compared.delta,
        welch=w,
        p_value=tested.compared.p_value,
        p_adjusted=p_adj,
        hedges_g=g,
        seeds_needed=seeds_needed,
        power_for=power_for,
        pooled=pooled,
        pooled_absent=pooled_absent,
        recommendation=rec,
        litmus=Litmus(INCONCLUSIVE, "", [], [], []),
        sentence="",
        warnings=warnings,
    )
    evidence = _evidence(campaign, cond, base, [*by_cond[cond.name], *by_cond[base.name]])
    unusable = [] if w.interval is not None else [w.problem or "no test"]
    litmus = _litmus(evidence, _thresholds(campaign, stats, units), [*warnings, *unusable])
    stats = dataclasses.replace(stats, litmus=litmus)
    sentence = _sentence(campaign, cond, base, stats, max(tested.n_tests, 1), tested.family_words, units)
    return dataclasses.replace(stats, sentence=sentence)


def _notes(
    campaign: Campaign, conditions: list[ConditionFinals], candidates: list[CandidateStats], units: Units
) -> list[str]:
    """What the page says below the table: conditions whose seeds are copies, pooled counts being descriptive,
    unknown keys of campaign.yaml."""
    notes: list[str] = []
    for cond in conditions:
        if (msg := _copies(cond, units)) is not None:
            notes.append(msg[0].upper() + msg[1:] + ".")
    if any(c.pooled is not None for c in candidates):
        notes.append(
            "Pooled episode counts are shown as a description only: episodes cluster by seed (and share prompts), "
            "so they are not independent replicates and no test is run on them."
        )
    ignored = sorted(k for k in campaign.litmus if k not in LITMUS_KEYS)
    ignored_e = sorted(k for k in campaign.evidence if k not in EVIDENCE_KEYS)
    if ignored or ignored_e:
        notes.append(f"Unknown keys ignored in campaign.yaml: {', '.join(ignored_e + ignored)}.")
    return notes


def _methods(campaign: Campaign, correction: str) -> dict[str, str]:
    """How each number of the page was computed, in words."""
    metric = campaign.primary_metric or "the primary metric"
    return {
        "final": (
            f"one value per run: the mean of the last {campaign.final_window} logged values of {metric}; "
            "seeds are the unit of analysis (the logged points of one run are not replicates)"
        ),
        "test": (
            "Welch's two-sided t-test of the difference of means over seeds (unequal variances, Satterthwaite df; "
            "Hsu's conservative df = min(n) − 1 when the conditions have different numbers of seeds); "
            "at least 2 seeds per condition, and some spread among them, are needed"
        ),
        "interval": "95% Welch t interval of candidate minus baseline: the exact dual of the test",
        "effect": "Hedges' g: difference of means over the pooled sd, times the exact small-sample correction J(df)",
        "power": (
            f"seeds per condition for {POWER:.0%} power: two-sided t-test (noncentral t) at the Holm-adjusted "
            f"α = α / candidates (the level the smallest p must reach), for the minimum effect over the pooled sd "
            "when min_effect is set, else for the observed Hedges' g"
        ),
        "pooled": (
            "correct/total episodes pooled over seeds, described only: per run, correct = round(final-window rate × "
            "completions in the final window), the window's completions estimated as total × window ÷ logged points "
            "when not logged per window"
        ),
        "correction": correction,
        "recommendation": (
            "improvement / degradation only when the adjusted p < α, the 95% CI lies entirely on that side of 0 and "
            "the difference is at least min_effect; a significant difference smaller than min_effect is its own "
            "outcome; otherwise insufficient evidence"
        ),
        "litmus": (
            "INCONCLUSIVE while any evidence minimum is unmet or a condition's seeds are copies of one run; else "
            "CONFIRMED if the improvement is significant and at least min_effect, FAILED otherwise"
        ),
    }


def _planning(
    x: Sequence[float], y: Sequence[float], g: float, min_effect: float, alpha: float, units: Units
) -> tuple[int | None, str]:
    """Seeds per condition for 80% power at `alpha`: for the minimum effect when set, else the observed g."""
    if len(x) < 2 or len(y) < 2:
        return None, ""
    ss = float(np.sum((np.asarray(x) - np.mean(x)) ** 2) + np.sum((np.asarray(y) - np.mean(y)) ** 2))
    sd = math.sqrt(ss / (len(x) + len(y) - 2))
    if min_effect > 0 and sd > 0:
        return sample_size_for_power(min_effect / sd, alpha=alpha, power=POWER), (
            f"the minimum effect of interest ({units.size(min_effect)}, {num_na(min_effect / sd)} pooled sd)"
        )
    if math.isnan(g) or math.isinf(g) or g == 0:
        return None, ""
    return sample_size_for_power(g, alpha=alpha, power=POWER), f"an effect of this size (Hedges' g = {num_na(g)})"
