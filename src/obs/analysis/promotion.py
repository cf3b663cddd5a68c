"""Promotion rules: the verdict the evidence suggests, shown beside the one a human recorded.

Promote only when the headline improves with a CI above zero and nothing regresses beyond its
tolerance. Everything else is reject, repair or branch, with the reasons spelled out, so a
disagreement with the recorded decision is visible and explainable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from obs.analysis.compare import HeadlineDelta, ProbeComparison


@dataclass
class Suggestion:
    verdict: str | None  # promote | reject | repair | branch | None (cannot judge)
    reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reasons": self.reasons}


@dataclass
class PromotionInput:
    delta: HeadlineDelta | None
    comparison: ProbeComparison | None
    headline_metric: str | None
    threshold: Callable[[str], float]
    status: str = "finished"
    repairable_share: float | None = None
    target_family: str | None = None


def suggest_verdict(p: PromotionInput) -> Suggestion:
    if p.status in ("running", "queued"):
        return Suggestion(None, ["the run has not finished"])
    if p.delta is None:
        return Suggestion(None, ["no baseline to compare with"])
    if p.delta.delta is None:
        return Suggestion(None, [p.delta.method])
    tolerance = p.threshold("regression_tolerance")
    regressions: list[str] = []
    if p.comparison is not None:
        for scope in [*p.comparison.by_split, *p.comparison.by_family]:
            for check, pc in scope.checks.items():
                negative = check in p.comparison.negative
                worse = pc.delta > tolerance if negative else pc.delta < -tolerance
                if worse:
                    regressions.append(
                        f"{scope.scope} {scope.label}: {check} {100 * pc.delta:+.1f} pp "
                        f"(tolerance {100 * tolerance:.1f} pp)"
                    )
    if p.delta.better is True and not regressions:
        return Suggestion("promote", [f"{p.headline_metric} improved with a 95% CI above zero"])
    if p.delta.better is True:
        return Suggestion("repair", [f"{p.headline_metric} improved, but regressions beyond tolerance:", *regressions])
    if p.delta.better is False:
        return Suggestion("reject", [f"{p.headline_metric} got worse (CI below zero)", *regressions])
    reasons = [f"{p.headline_metric}: the CI of the change includes zero"]
    if regressions:
        return Suggestion("reject", [*reasons, *regressions])
    return Suggestion("branch", [*reasons, "no significant change: try a different axis rather than promoting"])
