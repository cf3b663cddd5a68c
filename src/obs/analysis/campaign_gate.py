"""A campaign's claim, or one paired claim, as PASS or FAIL: what `obs gate --campaign` prints and the page shows.

Why one function: CI needs an exit code, a reader needs the reason, and the two must never disagree; the
command and the campaign page both print the lines made here. The rule, said on the page:

* the **primary metric**: with `expected_order:`, the order must hold on it (every adjacent pair
  significantly in the expected direction after Holm); without one, every candidate's litmus must be
  CONFIRMED (significant improvement, at least the minimum effect, evidence minimums met);
* every **secondary metric** is a guardrail: a candidate significantly worse on it (after the family's
  Holm adjustment) fails the gate; otherwise it is reported, whatever its outcome;
* every **paired claim** (`paired:`): with `claim_pp`, the CI's lower bound must reach it; without one,
  A must be significantly better than B; sides that declare their settings must be a matched control.

Diagnostics are never part of the gate. Pure: a :class:`CampaignView` in, a :class:`GateResult` out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from obs.analysis.campaign import Units
from obs.analysis.campaign_view import CampaignView
from obs.analysis.stats import DEGRADATION, OUTCOME_WORDS
from obs.numbers import p_text

PASS, FAIL = "PASS", "FAIL"
RULE = (
    "PASS when the primary metric's claim holds (the expected order, when campaign.yaml sets expected_order; else "
    "every candidate's litmus CONFIRMED), no candidate is significantly worse on a secondary metric, and every "
    "paired claim holds on a matched control; diagnostics never gate"
)


@dataclass(frozen=True)
class GateLine:
    verdict: str  # PASS | FAIL | INFO
    what: str
    reason: str

    def text(self) -> str:
        return f"[{self.verdict}] {self.what}: {self.reason}"


@dataclass(frozen=True)
class GateResult:
    verdict: str
    subject: str
    lines: list[GateLine] = field(default_factory=list)
    rule: str = RULE

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict == PASS else 1


def campaign_gate(view: CampaignView, paired: str | None = None) -> GateResult:
    """The campaign's gate; with `paired`, only that paired comparison's claim (by its name)."""
    stats = view.stats
    lines: list[GateLine] = []
    if paired is None:
        lines += _conditions(view)
    for p in stats.paired:
        if paired is not None and p.name != paired:
            continue
        if p.gate is not None:
            lines.append(GateLine(p.gate.verdict, f"paired {p.name}", p.gate.reason))
    subject = f"campaign {view.campaign.id}" + (f", paired {paired}" if paired else "")
    judged = [ln for ln in lines if ln.verdict in (PASS, FAIL)]
    if not judged:
        return GateResult(FAIL, subject, [*lines, GateLine(FAIL, "claim", "nothing to judge: no candidate was tested")])
    verdict = PASS if all(ln.verdict == PASS for ln in judged) else FAIL
    return GateResult(verdict, subject, lines)


def _conditions(view: CampaignView) -> list[GateLine]:
    lines: list[GateLine] = []
    tiers = view.tiers
    primary = tiers.primary
    if primary is None or not primary.stats.candidates:
        return lines
    if primary.order is not None:
        lines.append(
            GateLine(
                PASS if primary.order.verdict == "holds" else FAIL, f"order on {primary.name}", primary.order.sentence
            )
        )
    else:
        for k in primary.stats.candidates:
            verdict = PASS if k.litmus.verdict == "CONFIRMED" else FAIL
            lines.append(
                GateLine(
                    verdict,
                    f"{primary.name} · {k.label} vs {primary.stats.baseline_label}",
                    f"litmus {k.litmus.verdict}: {k.litmus.reason}",
                )
            )
    for t in tiers.tested:
        if t.tier != "secondary":
            continue
        for k in t.stats.candidates:
            worse = k.recommendation == DEGRADATION
            iv = k.welch.interval
            units = Units(t.stats.in_pp)  # a rate in pp, as the page's table and the PR comment write it
            said = (
                f"difference {units.diff(k.delta)} (95% CI {units.interval(iv.low, iv.high)}), "
                f"Holm-adjusted {p_text(k.p_adjusted)}"
                if iv is not None and k.tested
                else f"not tested ({k.welch.problem or 'no test'})"
            )
            lines.append(
                GateLine(
                    FAIL if worse else "INFO",
                    f"{t.name} (secondary) · {k.label} vs {t.stats.baseline_label}",
                    f"{OUTCOME_WORDS.get(k.recommendation, k.recommendation)}: {said}",
                )
            )
    return lines
