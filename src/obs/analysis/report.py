"""Assemble everything the run page shows into one presentation model (still no I/O, no drawing).

`analyse_run` is the pure heart of a build: a loaded run, its baseline's digest and the site
settings in; a `RunReport` out. Templates only format what is here, and `as_dict()` is what
`analysis.json` publishes for other tools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from obs.analysis.advice import NATIVE, AdviceFiles
from obs.analysis.compare import (
    Headline,
    HeadlineDelta,
    ProbeComparison,
    compare_probes,
    headline_delta,
)
from obs.analysis.config_view import ConfigView, config_view
from obs.analysis.confusion import Confusion, confusions
from obs.analysis.coupling import RunCoupling, run_coupling
from obs.analysis.curves import CurvePlan, plan_curves
from obs.analysis.diagnose import DiagnosisInput, Finding, diagnose
from obs.analysis.digest import RunDigest, make_digest
from obs.analysis.failures import FailureGroup, count_failing, group_failures
from obs.analysis.headline import Declared, aggregate_delta, choose_headline, declared_metrics
from obs.analysis.held_constant import HeldConstant, compare_held_constant
from obs.analysis.ladder import FrozenComparison, TargetClass, target_class
from obs.analysis.measurement import (
    Measurement,
    ProbeFingerprint,
    comparison_without_claims,
    described_delta,
    one_measurement,
)
from obs.analysis.nesting import NestingErrors, nesting_errors
from obs.analysis.promotion import PromotionInput, Suggestion, suggest_verdict
from obs.analysis.reward import RewardHealth, reward_health
from obs.analysis.scoreboard import Scoreboard, build_scoreboard
from obs.config import SiteConfig
from obs.model import Run
from obs.probetable import CaseOutcomes

if TYPE_CHECKING:
    from obs.analysis.passk import PassK
    from obs.analysis.recipes import RecipeLevel


@dataclass
class RunContext:
    """What the run's surroundings say: the declared primary metrics and the baseline."""

    declared: list[Declared] = field(default_factory=list)  # the spec's and campaign's (headline.surrounding_metrics)
    final_window: int = 10
    baseline_id: str | None = None
    baseline: RunDigest | None = None
    baseline_problem: str | None = None
    alpha: float = 0.05
    min_effect: float = 0.0  # smallest headline change worth acting on (spec.yaml, campaign.yaml or obs.yaml)
    spec_id: str | None = None
    frozen_baseline: str | None = None  # the spec's `baseline:`
    frozen_contract: dict[str, Any] = field(default_factory=dict)  # the spec's `contract:` (spec.yaml)
    frozen: RunDigest | None = None  # the frozen baseline's digest, when the rung is tested against it too
    advice: AdviceFiles = NATIVE  # the files advice names: the run's own format's (pipeline, from its Holds)
    # the run's recipe against its baseline's recipe, seeds as the unit (analysis.recipes), when both recipes have
    # seed replicates: made from the summaries of the runs around it, before this run's page (pipeline, build)
    recipe: RecipeLevel | None = None


@dataclass
class RunReport:
    run: Run
    digest: RunDigest
    headline: Headline
    delta: HeadlineDelta | None
    baseline_id: str | None
    baseline_problem: str | None
    scoreboard: Scoreboard | None
    scoreboard_repaired: Scoreboard | None
    comparison: ProbeComparison | None
    repair_comparison: ProbeComparison | None
    held: HeldConstant
    failures: list[FailureGroup]
    failures_repaired: list[FailureGroup]
    curves: CurvePlan | None
    findings: list[Finding]
    suggestion: Suggestion
    reward: RewardHealth | None = None
    baseline_probe: CaseOutcomes | None = None  # the baseline's case outcomes (the case browser shows both)
    seed_level: str | None = None  # where the seed-level comparison of this run's group lives, if any
    passk: list[PassK] = field(default_factory=list)  # one per positive check, when cases were sampled
    config: ConfigView | None = None
    declared: list[Declared] = field(default_factory=list)  # the primary metrics declared for it, in precedence order
    measurement: Measurement = field(default_factory=Measurement)  # one measurement with the baseline and the spec?
    target: TargetClass | None = None  # the failure class this rung targets, counted before and after
    frozen_baseline: str | None = None  # the spec's frozen baseline (spec.yaml `baseline:`), when it is not this run
    recipe: RecipeLevel | None = None  # the recipe-level verdict the promotion rules read (RunContext.recipe)
    # the rung tested against the frozen baseline (None: no frozen baseline, or it is this run or its parent)
    frozen: FrozenComparison | None = None
    confusion: list[Confusion] = field(default_factory=list)  # expected vs predicted class pairs in the probe
    nesting: NestingErrors | None = None  # nesting errors by block type, when the probe's cases carry them
    coupling: list[RunCoupling] = field(default_factory=list)  # obs.yaml `coupling:` pairs this run logged

    @property
    def headline_passk(self) -> PassK | None:
        return next((p for p in self.passk if p.check == self.headline.metric), self.passk[0] if self.passk else None)

    @property
    def n_failing(self) -> int:
        return count_failing(self.failures)

    @property
    def disagrees(self) -> bool:
        recorded = self.run.verdict
        return bool(recorded and self.suggestion.verdict and recorded != self.suggestion.verdict)

    def as_dict(self) -> dict[str, Any]:
        run = self.run
        return {
            "schema_version": 2,
            "run": run.id,
            "headline": self.headline.as_dict(),
            "delta_vs_baseline": self.delta.as_dict() if self.delta else None,
            "baseline": self.baseline_id,
            "baseline_problem": self.baseline_problem,
            "scoreboard": self.scoreboard.as_dict() if self.scoreboard else None,
            "scoreboard_repaired": self.scoreboard_repaired.as_dict() if self.scoreboard_repaired else None,
            "comparison": self.comparison.as_dict() if self.comparison else None,
            "repair_comparison": self.repair_comparison.as_dict() if self.repair_comparison else None,
            "held_constant": self.held.as_dict(),
            "measurement": self.measurement.as_dict(),
            "target_failure_class": self.target.as_dict() if self.target else None,
            "frozen_baseline": self.frozen_baseline,
            "vs_frozen_baseline": self.frozen.as_dict() if self.frozen else None,
            "confusion": [c.as_dict() for c in self.confusion],
            "nesting_errors": self.nesting.as_dict() if self.nesting else None,
            "failures": [g.as_dict() for g in self.failures],
            "diagnosis": [f.as_dict() for f in self.findings],
            "seed_level": self.seed_level,
            "recipe_level": self.recipe.as_dict() if self.recipe else None,
            "pass_at_k": [p.as_dict() for p in self.passk],
            "reward_health": self.reward.as_dict() if self.reward else None,
            "coupling": [c.as_dict() for c in self.coupling],
            "decision": {
                "recorded": run.verdict,
                "suggested": self.suggestion.as_dict(),
                "disagree": self.disagrees,
            },
            "final_values": {k: v.as_dict() for k, v in sorted(self.digest.finals.items())},
            "configuration": self.config.as_dict() if self.config else None,
        }


def analyse_run(run: Run, ctx: RunContext, cfg: SiteConfig) -> RunReport:
    digest = make_digest(run, ctx.final_window)
    declared = declared_metrics(run, ctx.declared, cfg)
    headline = choose_headline(digest, declared, cfg.metric_higher_is_better, ctx.final_window, advice=ctx.advice)
    is_negative = cfg.is_negative_check

    scoreboard, scoreboard_rep, failures, failures_rep = _probe_tables(run, is_negative)
    base = ctx.baseline
    comparison, delta, measurement = _against(run, digest, headline, base, ctx, is_negative)
    frozen = _frozen(run, digest, headline, ctx, is_negative)
    repair_comparison = None
    if digest.probe and digest.probe_repaired:
        repair_comparison = compare_probes(digest.probe_repaired, digest.probe, "raw probe", is_negative, ctx.alpha)
    seed_level = seed_level_of(run)
    # seeds as the unit only for one measurement against the baseline (no significance across two measurements)
    recipe = ctx.recipe if base is not None and measurement.ok else None
    passk: list[PassK] = []
    if run.probe is not None and run.probe.samples:  # several samples a case: pass@k (its module loads then)
        from obs.analysis.passk import pass_at_k_reports

        # against the baseline only when the two are one measurement (analysis.measurement)
        vs = base.probe if base is not None and measurement.ok else None
        passk = pass_at_k_reports(run.probe, is_negative, vs, ctx.alpha)
    held = compare_held_constant(run, base.id if base else None, base.fields if base else None, cfg.axes)
    curves = plan_curves(run.metrics) if run.metrics and run.metrics.series else None
    reward = reward_health(run.metrics, cfg.threshold, cfg.reward_components)
    coupling = [  # a declared pair this run logged neither side of is not its business
        run_coupling(run.metrics, pair, cfg.metric_higher_is_better)
        for pair in cfg.coupling
        if run.metrics is not None and (pair["proxy"] in run.metrics.series or pair["downstream"] in run.metrics.series)
    ]

    findings = diagnose(
        DiagnosisInput(
            scoreboard=scoreboard,
            scoreboard_repaired=scoreboard_rep,
            metrics=run.metrics,
            comparison=comparison,
            threshold=cfg.threshold,
            loss_key=curves.loss if curves else None,
            grad_key=curves.grad if curves else None,
            repair_comparison=repair_comparison,
            reward=reward,
            headline_check=headline.metric if headline.kind == "probe" else None,
            final_window=ctx.final_window,
            advice=ctx.advice,
            extra={
                "n_cases": len(run.probe.table) if run.probe is not None and run.probe.size else 0,
                "null_checks": null_keys(run),
                "data": run.data if isinstance(run.data, dict) else {},
                "run_status": run.status,
                "plan": (run.plan_status, run.plan_stage),
            },
        )
    )
    suggestion = suggest_verdict(
        PromotionInput(
            delta=delta,
            comparison=comparison,
            headline_metric=headline.metric,
            threshold=cfg.threshold,
            status=run.status,
            repair_comparison=repair_comparison,
            held=held,
            signal_lost_at=reward.onset_step if reward else None,
            headline_is_rate=headline.is_rate,
            alpha=ctx.alpha,
            min_effect=ctx.min_effect,
            seed_level_hint=seed_level,
            measurement=measurement,
            recipe=recipe,
            compiler_gate=run.gate,
        )
    )
    return RunReport(
        declared=declared,
        run=run,
        digest=digest,
        headline=headline,
        delta=delta,
        baseline_id=ctx.baseline_id,
        baseline_problem=ctx.baseline_problem,
        scoreboard=scoreboard,
        scoreboard_repaired=scoreboard_rep,
        comparison=comparison,
        repair_comparison=repair_comparison,
        held=held,
        failures=failures,
        failures_repaired=failures_rep,
        curves=curves,
        findings=findings,
        suggestion=suggestion,
        reward=reward,
        baseline_probe=base.probe if base is not None else None,
        seed_level=seed_level,
        passk=passk,
        config=config_view(run, held),
        measurement=measurement,
        target=target_class(run.target_failure_class, digest.probe, base.probe if base is not None else None),
        frozen_baseline=ctx.frozen_baseline if ctx.frozen_baseline != run.id else None,
        recipe=recipe,
        frozen=frozen,
        confusion=confusions(run.probe, cfg.confusion),
        nesting=nesting_errors(run.probe),
        coupling=coupling,
    )


def _probe_tables(
    run: Run, is_negative: Callable[[str], bool]
) -> tuple[Scoreboard | None, Scoreboard | None, list[FailureGroup], list[FailureGroup]]:
    """The scoreboards of the probe and the repaired probe, and their failures grouped by failing checks."""
    scoreboard = build_scoreboard(run.probe.table, is_negative) if run.probe and run.probe.size else None
    scoreboard_rep = (
        build_scoreboard(run.probe_repaired.table, is_negative)
        if run.probe_repaired and run.probe_repaired.size
        else None
    )
    checks_order = scoreboard.checks if scoreboard else []
    failures = group_failures(run.probe.table, is_negative, checks_order) if run.probe else []
    failures_rep = (
        group_failures(run.probe_repaired.table, is_negative, scoreboard_rep.checks)
        if run.probe_repaired and scoreboard_rep
        else []
    )
    return scoreboard, scoreboard_rep, failures, failures_rep


def _against(
    run: Run,
    digest: RunDigest,
    headline: Headline,
    base: RunDigest | None,
    ctx: RunContext,
    is_negative: Callable[[str], bool],
) -> tuple[ProbeComparison | None, HeadlineDelta | None, Measurement]:
    """The run against one other run (its parent, or the spec's frozen baseline): the paired probe comparison,
    the headline delta and whether the two are one measurement (no claim when they are not). One function for
    both, so the rung's two comparisons are made and judged the same way."""
    comparison = None
    if base is not None and digest.probe and base.probe:
        primary = headline.metric if headline.kind == "probe" else None
        comparison = compare_probes(
            digest.probe, base.probe, base.id, is_negative, ctx.alpha, ctx.min_effect, primary=primary
        )
    delta = None
    if base is not None:
        delta = (
            aggregate_delta(headline, digest, base)
            if headline.members
            else headline_delta(headline, digest, base, is_negative, ctx.alpha, comparison, ctx.min_effect)
        )
    measurement = one_measurement(
        run.contract if isinstance(run.contract, dict) else {},
        _probe_of(digest),
        baseline_id=base.id if base is not None else None,
        baseline_contract=base.contract if base is not None else None,
        baseline_probe=_probe_of(base) if base is not None else None,
        frozen_contract=ctx.frozen_contract,
        spec_id=ctx.spec_id,
    )
    if not measurement.ok:  # no significance claim across two measurements, in the tile or the probe table
        delta = described_delta(delta, measurement) if delta is not None else None
        comparison = comparison_without_claims(comparison) if comparison is not None else None
    return comparison, delta, measurement


def _frozen(
    run: Run, digest: RunDigest, headline: Headline, ctx: RunContext, is_negative: Callable[[str], bool]
) -> FrozenComparison | None:
    """The rung against the spec's frozen baseline, when that is neither the rung nor its parent (then the
    comparison with the parent is this one)."""
    target = ctx.frozen_baseline
    if not target or target == run.id or target == ctx.baseline_id:
        return None
    if ctx.frozen is None or ctx.frozen.id != target:
        return FrozenComparison(target, None, Measurement(), None, f"the frozen baseline {target} could not be read")
    comparison, delta, measurement = _against(run, digest, headline, ctx.frozen, ctx, is_negative)
    problem = None if delta is not None else f"no headline delta against {target}"
    return FrozenComparison(target, delta, measurement, comparison, problem)


def null_keys(run: Run) -> dict[str, int]:
    """Probe keys that are null on some case, with the count of such cases (a check whose value was never
    computed is null, not false: `diagnose_matrix.rule_null_check`); only keys null on the first case are
    followed, since a key null everywhere is null there."""
    if run.probe is None or not run.probe.size:
        return {}
    texts = run.probe.table.iter_texts()
    first = next(texts)
    keys = {k for k, v in first.extra.items() if v is None}
    if not keys:
        return {}
    counts = dict.fromkeys(keys, 1)
    for t in texts:
        for k in keys:
            if k in t.extra and t.extra[k] is None:
                counts[k] += 1
    return counts


def _probe_of(digest: RunDigest) -> tuple[CaseOutcomes, ProbeFingerprint] | None:
    if digest.probe is None or digest.probe_fingerprint is None:
        return None
    return digest.probe, digest.probe_fingerprint


def seed_level_of(run: Run) -> str | None:
    """Where this run's group is compared with seeds as the unit (built from summaries, after the runs)."""
    if run.campaign and run.condition:
        return (
            f"the seed-level comparison of condition {run.condition} with the campaign's baseline condition "
            f"(seeds as the unit) is on the campaign page of {run.campaign}"
        )
    if run.arm:
        return (
            f"the seed-level comparison of arm {run.arm} with the reference arm (seeds as the unit) is on the "
            "ablation-arms page"
        )
    return None
