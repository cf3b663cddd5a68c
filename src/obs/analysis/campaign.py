"""Campaign statistics: is a candidate condition really better than the baseline condition?

A campaign runs each condition with several seeds. The unit of evidence is the *seed*: each run
contributes one number, the final-window mean of the primary metric, and under "the condition has
no effect" those numbers are exchangeable between conditions. So every candidate is compared with
the baseline condition by

* a permutation test of the difference in means over seeds (exact enumeration whenever the number
  of relabellings is manageable; it is also what makes "3 seeds cannot reach p < 0.05" visible),
* a percentile-bootstrap 95% CI of that difference, Cohen's d, and the seeds per condition needed
  for 80% power at the observed d,
* Fisher's exact test on pooled correct/total episode counts when the metric is a rate and the
  runs log ``completions``, shown as a secondary check: it treats every episode as independent,
  which they are not (they cluster by seed), so it overstates the evidence,
* Holm's correction of the permutation p-values across candidates, because with several
  candidates one of them will look good by chance,
* the three-way recommendation of :func:`obs.analysis.stats.recommendation` (on the Holm-adjusted
  p) and a litmus verdict: INCONCLUSIVE while any evidence minimum of campaign.yaml is unmet
  (each one named), otherwise CONFIRMED or FAILED against the thresholds.

Pure: run summaries (or :class:`RunFinal` records) in, a :class:`CampaignStats` presentation model
out, with ``as_dict()`` for ``campaigns/<id>/analysis.json``. The statistics come from
:mod:`obs.analysis.stats`; nothing here re-implements a test.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from obs.analysis.paired_systems import PairedSpec, PairedSystems, compare_systems
from obs.analysis.stats import (
    DEGRADATION,
    IMPROVEMENT,
    BootstrapResult,
    Recommendation,
    TestResult,
    bootstrap_diff_means,
    cohens_d,
    fisher_exact_counts,
    holm_adjust,
    permutation_test_diff_means,
    recommendation,
    sample_size_for_power,
    sample_size_two_proportions,
)
from obs.model import Campaign
from obs.numbers import num, p_value
from obs.sitemodel import RunSummary

__all__ = [
    "CONFIRMED",
    "FAILED",
    "INCONCLUSIVE",
    "CampaignStats",
    "CandidateStats",
    "Check",
    "ConditionFinals",
    "Litmus",
    "PooledCounts",
    "RunFinal",
    "campaign_stats",
    "finals_from_summaries",
    "metric_is_rate",
]

Verdict = Literal["CONFIRMED", "FAILED", "INCONCLUSIVE"]
CONFIRMED: Verdict = "CONFIRMED"
FAILED: Verdict = "FAILED"
INCONCLUSIVE: Verdict = "INCONCLUSIVE"

LEVEL = 0.95
POWER = 0.8
# Up to this many relabellings the permutation test enumerates them all (exact p); 8 vs 8 seeds
# is 12,870, 10 vs 10 is 184,756. Beyond, a seeded Monte-Carlo test with N_PERMUTATIONS draws.
MAX_EXACT_SPLITS = 200_000
N_PERMUTATIONS = 20_000
N_BOOTSTRAP = 10_000
# Below this many seeds per condition the percentile bootstrap is known to be too narrow.
FEW_SEEDS = 8
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
    """Correct/total episodes pooled over a condition's seeds, and Fisher's exact test on them."""

    correct: int
    total: int
    correct_baseline: int
    total_baseline: int
    rate: float
    rate_baseline: float
    test: TestResult
    episodes_needed: int | None
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
    permutation: TestResult | None
    p_value: float
    p_adjusted: float
    min_attainable_p: float | None
    bootstrap: BootstrapResult | None
    cohens_d: float
    seeds_needed: int | None
    pooled: PooledCounts | None
    pooled_absent: str | None
    recommendation: Recommendation
    litmus: Litmus
    sentence: str


@dataclass(frozen=True)
class CampaignStats:
    """Everything the "Is the difference real?" section shows, and analysis.json publishes."""

    campaign_id: str
    primary_metric: str | None
    higher_is_better: bool
    alpha: float
    level: float
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

    @property
    def computed(self) -> bool:
        return any(c.permutation is not None for c in self.candidates)

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "paired"}
        plain: dict[str, Any] = {k: _plain(v) for k, v in out.items()}
        plain["paired"] = [p.as_dict() for p in self.paired]
        plain["schema"] = "obs.campaign_stats/1"
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
    metric: str | None, cand: Sequence[RunFinal], base: Sequence[RunFinal], alpha: float
) -> tuple[PooledCounts | None, str | None]:
    """Fisher's exact test on correct/total episodes, or why it does not apply."""
    if not metric_is_rate(metric):
        return None, f"'{metric}' is not a proportion of episodes, so there are no correct/total counts to pool"
    used = [r for r in (*cand, *base) if r.final is not None]
    missing = [r.run_id for r in used if r.completions_window is None]
    if missing:
        return None, f"no completions logged by {_names(missing)}"
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
    test = fisher_exact_counts(cc, ct, bc, bt)
    rate, rate_b = cc / ct, bc / bt
    estimated = any(r.completions_window_estimated for r in used)
    method = "correct = round(final-window rate × completions in the window) per run, summed over seeds" + (
        "; window completions estimated as total × window ÷ logged points (assumes equal completions per logged step)"
        if estimated
        else ""
    )
    needed = sample_size_two_proportions(rate, rate_b, alpha=alpha, power=POWER) if rate != rate_b else None
    return PooledCounts(cc, ct, bc, bt, rate, rate_b, test, needed, estimated, method), None


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
            short = [f"{c.label} has {c.n}" for c in (base, cand) if c.n < required]
            observed: float | None = float(min(cand.n, base.n))
            detail = (
                f"seeds with a final value per condition: {(short and '; '.join(short)) or 'all enough'} "
                f"(need {required:g})"
            )
            checks.append(Check(key, "seeds per condition", required, observed, not short, detail))
        elif key == "min_steps":
            unknown = [r.run_id for r in used if r.last_step is None]
            low = [
                f"{r.run_id} reached step {num_na(r.last_step)}"
                for r in used
                if r.last_step is not None and r.last_step < required
            ]
            steps = [r.last_step for r in used if r.last_step is not None]
            observed = min(steps) if steps else None
            problems = low + ([f"no steps logged by {_names(unknown)}"] if unknown else [])
            detail = (
                f"last logged step of every run: {_names(problems) if problems else 'all enough'} (need {required:g})"
            )
            checks.append(Check(key, "steps per run", required, observed, bool(used) and not problems, detail))
        else:
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
            checks.append(Check(key, "completions per condition", required, observed, not short, detail))
    return checks


def _reachable(alpha: float, floor: float | None, n_tests: int, n: int, n_base: int) -> Check | None:
    """Can this many seeds reach significance at all? If not, a non-significant result says nothing.

    An exact permutation test over n vs m seeds has C(n+m, n) relabellings, so its two-sided p is
    never below 2 / C(n+m, n) (0.10 for 3 vs 3); Holm multiplies the smallest p by the number of
    candidates. When that floor is ≥ α the design cannot confirm anything, and calling the litmus
    FAILED would blame the condition for the campaign's size: it is INCONCLUSIVE instead.
    """
    if floor is None:
        return None
    effective = min(1.0, floor * n_tests)
    holm = f" (×{n_tests} after Holm)" if n_tests > 1 else ""
    detail = (
        f"with {n} vs {n_base} seeds the smallest attainable permutation p is {p_value(floor)}{holm}, "
        f"{'below' if effective < alpha else 'not below'} α = {alpha:g}"
    )
    return Check("attainable_p", "design can reach significance", alpha, effective, effective < alpha, detail)


def _min_seeds_for_permutation(alpha: float) -> int:
    """Smallest n (seeds per condition, n vs n) whose exact permutation test can give two-sided p < alpha.

    The t-test power formula happily answers "3 seeds" for a huge effect, but 3 vs 3 seeds have only
    20 relabellings, so the permutation test's p is never below 0.10; the seeds to ask for are the
    larger of the two numbers.
    """
    n = 2
    while 2.0 / math.comb(2 * n, n) >= alpha:
        n += 1
    return n


def _thresholds(
    campaign: Campaign, delta: float, rec: Recommendation, p_adj: float, ci_low: float, ci_high: float
) -> list[Check]:
    sign = 1.0 if campaign.higher_is_better else -1.0
    gain = sign * delta
    min_delta = campaign.litmus.get("min_delta")
    required = 0.0 if min_delta is None else float(min_delta)
    met = bool(not math.isnan(gain) and gain > 0.0 and gain >= required)
    word = "improvement" if campaign.higher_is_better else "reduction"
    detail = (
        f"observed {word} {_signed(gain)} vs minimum {num_na(required)}"
        if min_delta is not None
        else f"observed {word} {_signed(gain)}; min_delta not set, so any {word} counts"
    )
    checks = [Check("min_delta", f"{word} of the mean ≥ min_delta", required, gain, met, detail)]
    ci = f"95% CI {_signed(ci_low)} to {_signed(ci_high)}"
    checks.append(
        Check(
            "significance",
            "significant improvement (Holm-adjusted permutation p < α, CI excludes 0)",
            campaign.alpha,
            p_adj,
            rec == IMPROVEMENT,
            f"adjusted p = {p_value(p_adj)} vs α = {campaign.alpha:g}; {ci}",
        )
    )
    return checks


def _litmus(evidence: list[Check], thresholds: list[Check]) -> Litmus:
    short = [c.detail for c in evidence if not c.met]
    failed = [c.detail for c in thresholds if not c.met]
    if short:
        return Litmus(INCONCLUSIVE, "evidence minimums not met: " + "; ".join(short), evidence, thresholds, short)
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
) -> str:
    metric = campaign.primary_metric or "the primary metric"
    if c.permutation is None or c.bootstrap is None:
        return f"{cand.label}: not compared, no run of it has a final value of {metric}."
    ci = c.bootstrap.interval
    direction = "higher" if campaign.higher_is_better else "lower"
    text = (
        f"{cand.label} averaged {num_na(c.mean)} {metric} over {c.n} seed{'s' if c.n != 1 else ''}, against "
        f"{num_na(c.mean_baseline)} for {base.label} over {c.n_baseline}: a difference of {_signed(c.delta)} "
        f"({direction} is better; 95% bootstrap CI {_signed(ci.low)} to {_signed(ci.high)}, "
        f"Cohen's d = {num_na(c.cohens_d)}). "
    )
    kind = "exact" if c.permutation.exact else "Monte Carlo"
    text += f"Permutation test over seeds: p = {p_value(c.p_value)} ({kind})"
    text += f", Holm-adjusted over {n_tests} candidates p = {p_value(c.p_adjusted)}. " if n_tests > 1 else ". "
    if c.recommendation == IMPROVEMENT:
        text += f"A statistically significant improvement at α = {campaign.alpha:g}."
    elif c.recommendation == DEGRADATION:
        text += f"A statistically significant degradation at α = {campaign.alpha:g}."
    else:
        text += (
            f"Insufficient statistical evidence at α = {campaign.alpha:g}: the data are compatible with no difference."
        )
        floor = c.min_attainable_p
        if floor is not None and floor * n_tests >= campaign.alpha:
            holm = f" (×{n_tests} after Holm)" if n_tests > 1 else ""
            text += (
                f" With {c.n} vs {c.n_baseline} seeds no outcome could be significant: the smallest possible "
                f"p is {p_value(floor)}{holm}."
            )
        if c.seeds_needed is not None:
            text += (
                f" About {c.seeds_needed} seeds per condition would give {POWER:.0%} power to detect an "
                f"effect of this size."
            )
    return text


def campaign_stats(
    campaign: Campaign,
    runs: Sequence[RunFinal],
    *,
    paired: Sequence[PairedSpec] = (),
    n_bootstrap: int = N_BOOTSTRAP,
    n_permutations: int = N_PERMUTATIONS,
    max_exact_splits: int = MAX_EXACT_SPLITS,
    seed: int = 0,
) -> CampaignStats:
    """Compare every non-baseline condition of ``campaign`` with its baseline condition.

    ``runs`` are the campaign's runs (:func:`finals_from_summaries`). Random procedures use
    ``seed`` (the same for every candidate), so a rebuilt page shows the same numbers.
    """
    labels = {c.name: (c.label or c.name) for c in campaign.conditions}
    names = [c.name for c in campaign.conditions] or sorted({r.condition for r in runs if r.condition})
    base_name = campaign.baseline_condition
    base_label = labels.get(base_name or "", base_name or "")
    by_cond = {name: [r for r in runs if r.condition == name] for name in names}
    conditions = [_condition_finals(n, labels.get(n, n), n == base_name, by_cond[n]) for n in names]
    problems: list[str] = []
    notes: list[str] = []
    if not campaign.primary_metric:
        problems.append("no primary_metric in campaign.yaml, so there is nothing to compare")
    if not base_name:
        problems.append("no baseline_condition in campaign.yaml, so there is nothing to compare against")
    elif base_name not in by_cond:
        problems.append(f"the baseline condition '{base_name}' is not one of the conditions")
    base = next((c for c in conditions if c.is_baseline), None)
    if base is not None and base.n == 0 and not problems:
        problems.append(f"no run of the baseline condition {base.label} has a final value of {campaign.primary_metric}")

    partial: list[dict[str, Any]] = []
    if not problems and base is not None:
        y = [v.value for v in base.values]
        for cond in conditions:
            if cond.is_baseline:
                continue
            partial.append(
                _compare(
                    campaign,
                    cond,
                    base,
                    y,
                    by_cond[cond.name],
                    by_cond[base.name],
                    n_bootstrap,
                    n_permutations,
                    max_exact_splits,
                    seed,
                )
            )
    raw = [p["p_value"] for p in partial]
    adjusted = holm_adjust(raw)
    n_tests = sum(1 for p in raw if not math.isnan(p))
    candidates: list[CandidateStats] = []
    for part, p_adj in zip(partial, adjusted, strict=True):
        assert base is not None  # partial is empty otherwise
        finals: ConditionFinals = part.pop("cond")
        boot: BootstrapResult | None = part["bootstrap"]
        ci_low, ci_high = (boot.interval.low, boot.interval.high) if boot else (math.nan, math.nan)
        rec = recommendation(p_adj, part["delta"], (ci_low, ci_high), campaign.alpha, campaign.higher_is_better)
        evidence = _evidence(campaign, finals, base, [*by_cond[finals.name], *by_cond[base.name]])
        reach = _reachable(campaign.alpha, part["min_attainable_p"], max(n_tests, 1), finals.n, base.n)
        if reach is not None:
            evidence.append(reach)
        litmus = _litmus(evidence, _thresholds(campaign, part["delta"], rec, p_adj, ci_low, ci_high))
        if part["seeds_needed"] is not None:
            floor_n = _min_seeds_for_permutation(campaign.alpha / max(n_tests, 1))
            part["seeds_needed"] = max(part["seeds_needed"], floor_n)
        stats = CandidateStats(p_adjusted=p_adj, recommendation=rec, litmus=litmus, sentence="", **part)
        sentence = _sentence(campaign, finals, base, stats, max(n_tests, 1))
        candidates.append(dataclasses.replace(stats, sentence=sentence))

    if n_tests > 1:
        correction = (
            f"Holm–Bonferroni over the {n_tests} candidate-vs-baseline permutation p-values; "
            "the recommendation and the litmus use the adjusted p"
        )
    else:
        correction = "none needed: one candidate is compared with the baseline"
    smallest = min((c.n for c in conditions), default=0)
    if candidates and smallest < FEW_SEEDS:
        notes.append(
            f"With fewer than {FEW_SEEDS} seeds per condition the percentile-bootstrap CI is too narrow (it "
            "ignores the small-sample variance inflation); read it together with the permutation test."
        )
    if any(c.pooled is not None for c in candidates):
        notes.append(
            "Pooled counts treat every episode as independent, but episodes cluster by seed (and share "
            "prompts), so Fisher's p-value overstates the evidence. It is shown as a secondary check; the "
            "recommendation rests on the seed-level permutation test."
        )
    ignored = sorted(k for k in campaign.litmus if k not in LITMUS_KEYS)
    ignored_e = sorted(k for k in campaign.evidence if k not in EVIDENCE_KEYS)
    if ignored or ignored_e:
        notes.append(f"Unknown keys ignored in campaign.yaml: {', '.join(ignored_e + ignored)}.")

    metric = campaign.primary_metric or "the primary metric"
    methods = {
        "final": (
            f"one value per run: the mean of the last {campaign.final_window} logged values of {metric}; "
            "seeds are the unit of analysis"
        ),
        "permutation": (
            "two-sided permutation test of the difference in means over seeds; exact enumeration of every "
            f"relabelling up to {max_exact_splits:,}, otherwise {n_permutations:,} random relabellings (seed {seed})"
        ),
        "bootstrap": (
            f"two-sample percentile bootstrap, {n_bootstrap:,} resamples (seed {seed}), of candidate minus baseline"
        ),
        "effect": "Cohen's d: difference of means over the pooled standard deviation of the seed values",
        "power": (
            f"seeds per condition for {POWER:.0%} power at the observed d: two-sided two-sample t-test at "
            f"α = {campaign.alpha:g} (noncentral t), and never fewer than the smallest number of seeds with which "
            "the exact permutation test (after Holm) can reach α"
        ),
        "pooled": (
            "Fisher's exact test on correct/total episodes pooled over seeds (episodes treated as independent): "
            "per run, correct = round(final-window rate × completions in the final window), the completions in the "
            "window estimated as total × window ÷ logged points when not logged per window (equal completions per "
            f"logged step assumed); episodes per condition for {POWER:.0%} power from the two-proportion z-test formula"
        ),
        "correction": correction,
        "recommendation": (
            "improvement / degradation only when the adjusted p < α and the 95% CI lies entirely on that side "
            "of 0; otherwise insufficient evidence"
        ),
        "litmus": (
            "INCONCLUSIVE while any evidence minimum is unmet; else CONFIRMED if the improvement is at least "
            "min_delta and significant, FAILED otherwise"
        ),
    }
    return CampaignStats(
        campaign_id=campaign.id,
        primary_metric=campaign.primary_metric,
        higher_is_better=campaign.higher_is_better,
        alpha=campaign.alpha,
        level=LEVEL,
        final_window=campaign.final_window,
        baseline_condition=base_name,
        baseline_label=base_label,
        conditions=conditions,
        candidates=candidates,
        correction=correction,
        paired=[compare_systems(p, alpha=campaign.alpha, level=LEVEL, seed=seed) for p in paired],
        methods=methods,
        notes=notes,
        problems=problems,
    )


def _compare(
    campaign: Campaign,
    cond: ConditionFinals,
    base: ConditionFinals,
    y: list[float],
    cand_runs: Sequence[RunFinal],
    base_runs: Sequence[RunFinal],
    n_bootstrap: int,
    n_permutations: int,
    max_exact_splits: int,
    seed: int,
) -> dict[str, Any]:
    """The per-candidate numbers that do not depend on the other candidates (everything but Holm)."""
    x = [v.value for v in cond.values]
    pooled, pooled_absent = _pooled(campaign.primary_metric, cand_runs, base_runs, campaign.alpha)
    out: dict[str, Any] = {
        "cond": cond,
        "condition": cond.name,
        "label": cond.label,
        "n": len(x),
        "n_baseline": len(y),
        "mean": cond.mean,
        "mean_baseline": base.mean,
        "delta": cond.mean - base.mean if x else math.nan,
        "permutation": None,
        "p_value": math.nan,
        "min_attainable_p": None,
        "bootstrap": None,
        "cohens_d": math.nan,
        "seeds_needed": None,
        "pooled": pooled,
        "pooled_absent": pooled_absent,
    }
    if not x:
        return out
    splits = math.comb(len(x) + len(y), len(x))
    n_res = splits if splits <= max_exact_splits else n_permutations
    perm = permutation_test_diff_means(x, y, n_resamples=n_res, seed=seed)
    d = cohens_d(x, y)
    out.update(
        permutation=perm,
        p_value=perm.p_value,
        min_attainable_p=min(1.0, 2.0 / splits) if perm.exact else None,
        bootstrap=bootstrap_diff_means(x, y, level=LEVEL, n_resamples=n_bootstrap, seed=seed),
        cohens_d=d,
        seeds_needed=None if math.isnan(d) else sample_size_for_power(d, alpha=campaign.alpha, power=POWER),
    )
    return out
