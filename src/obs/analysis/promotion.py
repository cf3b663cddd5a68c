"""Promotion rules: the verdict the evidence suggests, shown beside the one a human recorded.

Promote only when the headline improves with a CI above zero, the run changed one axis, and no split
or family regresses beyond its tolerance. Everything else is reject, repair or branch, with each
rule's outcome spelled out, so a disagreement with the recorded decision is visible and explainable.
The rules (docs/reading-a-report.md) follow the domain's promotion discipline: gate every run
against the frozen baseline, reject runs that moved several axes at once, and route mostly-repairable
misses to deterministic decode/repair instead of another training run.
"""

from __future__ import annotations

from collections.abc import Callable, Sized
from dataclasses import dataclass, field
from typing import Any

from obs.analysis.compare import HeadlineDelta, ProbeComparison
from obs.analysis.held_constant import HeldConstant
from obs.analysis.stats import DEGRADATION, PairedComparison
from obs.numbers import pp


@dataclass(frozen=True)
class RuleCheck:
    """One promotion rule and how this run fared on it (None: it could not be checked)."""

    rule: str
    passed: bool | None
    detail: str
    gate: bool = True  # False: it routes a run that is not promoted (repair or not), it does not block
    items: tuple[str, ...] = ()  # the individual findings behind `detail` (each regression, ...)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "passed": self.passed,
            "detail": self.detail,
            "gate": self.gate,
            "items": list(self.items),
        }


@dataclass(frozen=True)
class Regression:
    """A split or family that regressed by the promotion rules (the one rule every output reads).

    `why` is "tolerance" (the headline check lost more than the tolerance in this scope) or
    "significant" (another check got significantly worse here: McNemar p and CI below zero).
    """

    scope: str  # all | split | family
    label: str
    check: str
    negative: bool  # the check's `true` means a problem (truncated, ...)
    why: str
    result: PairedComparison
    tolerance: float

    @property
    def where(self) -> str:
        return "all shared cases" if self.scope == "all" else f"{self.scope} {self.label}"

    @property
    def worse_by(self) -> float:
        """How much worse, in the check's own polarity (positive = worse)."""
        return self.result.delta if self.negative else -self.result.delta

    @property
    def broke_fixed(self) -> tuple[int, int]:
        """Cases that went right -> wrong, and wrong -> right."""
        pc = self.result
        return (pc.only_a, pc.only_b) if self.negative else (pc.only_b, pc.only_a)

    def text(self) -> str:
        pc = self.result
        if self.why == "tolerance":
            broke, fixed = self.broke_fixed
            return (
                f"{self.where}: {self.check} {100 * pc.rate_b:.1f}% → {100 * pc.rate_a:.1f}% ({pp(pc.delta)}, "
                f"{broke} broken / {fixed} fixed; tolerance {100 * self.tolerance:.1f} pp)"
            )
        return (
            f"{self.where}: {self.check} {pp(pc.delta)}, significantly worse "
            f"(McNemar p = {pc.p_value:.3g}, CI below zero)"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "label": self.label,
            "check": self.check,
            "why": self.why,
            "delta": self.result.delta,
            "p_value": self.result.p_value,
            "text": self.text(),
        }


@dataclass
class Suggestion:
    verdict: str | None  # promote | reject | repair | branch | None (cannot judge)
    reasons: list[str] = field(default_factory=list)
    checks: list[RuleCheck] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reasons": self.reasons, "checks": [c.as_dict() for c in self.checks]}


@dataclass
class PromotionInput:
    delta: HeadlineDelta | None
    comparison: ProbeComparison | None
    headline_metric: str | None
    threshold: Callable[[str], float]
    status: str = "finished"
    repair_comparison: ProbeComparison | None = None  # repaired probe (a) vs raw probe (b)
    held: HeldConstant | None = None
    signal_lost_at: float | None = None  # RL: the step from which the reward signal vanished
    headline_is_rate: bool = False


def _count(items: Sized, noun: str) -> str:
    return f"{len(items)} {noun}{'s' if len(items) != 1 else ''}"


def _change(delta: HeadlineDelta, is_rate: bool) -> str:
    """The headline change with its CI: in percentage points for rates, as a number otherwise."""

    def show(x: float) -> str:
        return (f"{100 * x:+.1f}" if is_rate else f"{x:+.4g}").replace("-", "−")

    unit = " pp" if is_rate else ""
    text = f"{show(delta.delta or 0.0)}{unit}"
    iv = delta.interval
    text += f", 95% CI [{show(iv.low)}, {show(iv.high)}]{unit}" if iv is not None else ", no CI available"
    if delta.p_value is not None:
        text += f", p = {delta.p_value:.3g}"
    return text


def _headline_check(p: PromotionInput) -> str | None:
    """The headline metric when it is a probe check both runs share (regressions are read on it)."""
    c = p.comparison
    if c is None or p.headline_metric is None or p.headline_metric not in c.checks:
        return None
    return p.headline_metric


def regressions(p: PromotionInput) -> list[Regression]:
    """Splits and families that lost more than the tolerance on the headline check, and any
    significant degradation (CI below zero) of another check in any scope."""
    c = p.comparison
    if c is None:
        return []
    tolerance = p.threshold("regression_tolerance")
    head = _headline_check(p)
    out: list[Regression] = []
    for scope in [c.overall, *c.by_split, *c.by_family]:
        for check, pc in scope.checks.items():
            negative = check in c.negative
            worse = -pc.delta if negative else pc.delta  # < 0 means worse, in the check's own polarity
            if check == head and scope.scope != "all" and worse < -tolerance:
                out.append(Regression(scope.scope, scope.label, check, negative, "tolerance", pc, tolerance))
            elif check != head and pc.recommendation == DEGRADATION:
                out.append(Regression(scope.scope, scope.label, check, negative, "significant", pc, tolerance))
    return out


def gained_families(p: PromotionInput) -> list[str]:
    """Families whose headline rate rose by at least `family_gain`: the slices the run fixed."""
    c, head = p.comparison, _headline_check(p)
    if c is None or head is None:
        return []
    gain = p.threshold("family_gain")
    sign = -1.0 if head in c.negative else 1.0
    return [
        f"{s.label} {pp(s.checks[head].delta)}"
        for s in c.by_family
        if head in s.checks and sign * s.checks[head].delta >= gain
    ]


def repairable_share(p: PromotionInput) -> tuple[float, int, int] | None:
    """(share, fixed, misses): of the raw misses on the headline check, how many the repair pass fixes."""
    rc = p.repair_comparison
    head = p.headline_metric
    if rc is None or head is None or head not in rc.overall.checks:
        return None
    pc = rc.overall.checks[head]  # a = repaired, b = raw
    if head in rc.negative:  # a miss is the check being true
        misses, fixed = pc.both_correct + pc.only_b, pc.only_b
    else:
        misses, fixed = pc.only_a + pc.both_wrong, pc.only_a
    if misses == 0:
        return None
    return fixed / misses, fixed, misses


def suggest_verdict(p: PromotionInput) -> Suggestion:
    regs = regressions(p)  # reported whether or not a verdict can be suggested
    if p.status in ("running", "queued"):
        return Suggestion(None, ["the run has not finished: the rules judge it when it has"], regressions=regs)
    if p.delta is None:
        reasons = ["no baseline to compare with: promotion is judged against a frozen baseline (set `baseline:`)"]
        if p.signal_lost_at is not None:
            reasons.append(f"the diagnosis found the reward signal vanished from step {p.signal_lost_at:g}")
        return Suggestion(None, reasons, regressions=regs)
    if p.delta.delta is None:
        return Suggestion(None, [p.delta.method], regressions=regs)

    name = p.headline_metric or "the headline"
    d = p.delta
    better = d.better
    checks: list[RuleCheck] = []
    checks.append(
        RuleCheck(
            "headline improves with a 95% CI above zero",
            better is True,
            f"{name}: {_change(d, p.headline_is_rate)} ({d.verdict.replace('_', ' ')})",
        )
    )
    held_ok: bool | None = None
    if p.held is not None and p.held.baseline_id is not None:
        held_ok = p.held.clean
        checks.append(RuleCheck("one axis changed", held_ok, p.held.verdict_text()))
    tolerance = p.threshold("regression_tolerance")
    if p.comparison is not None:
        checks.append(
            RuleCheck(
                f"no split or family regresses beyond {100 * tolerance:.1f} pp",
                not regs,
                "none" if not regs else f"{len(regs)} regression{'s' if len(regs) != 1 else ''}:",
                items=tuple(r.text() for r in regs),
            )
        )
    share = repairable_share(p)
    limit = p.threshold("repairable_share")
    if share is not None:
        checks.append(
            RuleCheck(
                f"raw misses mostly repairable (≥ {100 * limit:.0f}%)",
                share[0] >= limit,
                f"the repair pass fixes {share[1]} of {share[2]} raw misses ({100 * share[0]:.0f}%)",
                gate=False,
            )
        )
    gains = gained_families(p)

    def done(verdict: str, *reasons: str) -> Suggestion:
        return Suggestion(verdict, [r for r in reasons if r], checks, regs)

    if held_ok is False:
        return done(
            "reject",
            f"{p.held.verdict_text() if p.held else ''}: whatever the numbers say, they cannot be attributed",
            f"it did move {', '.join(gains)}: worth re-testing on one axis" if gains else "",
        )
    if better is True and not regs:
        return done("promote", f"{name} improved with a 95% CI above zero and nothing regressed beyond tolerance")
    if better is True:
        return done(
            "repair",
            f"{name} improved, but with {_count(regs, 'regression')} beyond tolerance: keep the change, restore "
            "the regressed slices (anchor replay) and re-run before promoting",
        )
    if better is False:
        return done(
            "reject",
            f"{name} got worse (95% CI below zero)",
            f"it did fix {', '.join(gains)}: keep that idea, not this run" if gains else "",
        )
    inconclusive = f"{name}: the 95% CI of the change includes zero"
    if gains and regs:
        return done(
            "repair",
            inconclusive,
            f"the run fixed {', '.join(gains)} but other slices regressed: repair them with anchor replay",
        )
    if share is not None and share[0] >= limit:
        return done(
            "repair",
            inconclusive,
            f"the repair pass fixes {100 * share[0]:.0f}% of the raw misses: train less, validate more "
            "(route the rest to deterministic decode/repair)",
        )
    if regs:
        return done("reject", inconclusive, f"and {_count(regs, 'regression')} beyond tolerance")
    return done(
        "branch",
        inconclusive,
        "nothing regressed, but nothing measurably improved either: this axis has given what it can at this "
        "budget; branch to a different axis rather than repeat",
    )
