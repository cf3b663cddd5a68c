"""Diagnosis: symptom rules over the scoreboard and the curves.

Each rule that fires says what it saw (the numbers), the likely cause and the next action, so a
reader can check the reasoning instead of trusting a label. Thresholds come from obs.yaml.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from obs.analysis.compare import ProbeComparison
from obs.analysis.scoreboard import Scoreboard
from obs.model import Metrics


@dataclass(frozen=True)
class Finding:
    rule: str
    title: str
    severity: str  # "problem" | "warning" | "note"
    evidence: list[str]
    cause: str
    action: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "title": self.title,
            "severity": self.severity,
            "evidence": self.evidence,
            "cause": self.cause,
            "action": self.action,
        }


@dataclass
class DiagnosisInput:
    scoreboard: Scoreboard | None
    scoreboard_repaired: Scoreboard | None
    metrics: Metrics | None
    comparison: ProbeComparison | None
    threshold: Callable[[str], float]
    loss_key: str | None = None
    grad_key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _rule_drift(d: DiagnosisInput) -> Finding | None:
    sb = d.scoreboard
    if sb is None:
        return None
    exact, rend = sb.rate("exact"), sb.rate("renderable")
    if exact is None or rend is None:
        return None
    if exact < d.threshold("low_exact") and rend >= d.threshold("high_renderable"):
        return Finding(
            "semantic_drift",
            "Valid output, wrong content",
            "problem",
            [
                f"exact {_pct(exact)} < {_pct(d.threshold('low_exact'))}",
                f"renderable {_pct(rend)} ≥ {_pct(d.threshold('high_renderable'))}",
            ],
            "The grammar is learned but the choices are wrong: semantic or ordering drift.",
            "Add targeted exactness rows for the drifting families; do not add syntax repair rows.",
        )
    return None


def _rule_grammar(d: DiagnosisInput) -> Finding | None:
    sb = d.scoreboard
    if sb is None:
        return None
    rend, trunc = sb.rate("renderable"), sb.rate("truncated")
    if rend is None or trunc is None:
        return None
    if rend < d.threshold("low_renderable") and trunc <= d.threshold("low_truncation"):
        return Finding(
            "grammar_corruption",
            "Outputs do not parse, and not because they were cut off",
            "problem",
            [
                f"renderable {_pct(rend)} < {_pct(d.threshold('low_renderable'))}",
                f"truncated {_pct(trunc)} ≤ {_pct(d.threshold('low_truncation'))}",
            ],
            "Grammar corruption: the model emits structurally invalid output within budget.",
            "Protect full-scene replay anchors; reduce fragment-style repair rows; check tokenizer boundaries.",
        )
    return None


def _rule_truncation(d: DiagnosisInput) -> Finding | None:
    sb = d.scoreboard
    trunc = sb.rate("truncated") if sb else None
    if trunc is None or trunc < d.threshold("high_truncation"):
        return None
    return Finding(
        "budget_truncation",
        "Outputs are cut off by the decode budget",
        "problem",
        [f"truncated {_pct(trunc)} ≥ {_pct(d.threshold('high_truncation'))}"],
        "The decode budget (or context) is too small for the targets.",
        "Raise the decode budget first, then the context only if needed; re-probe before retraining.",
    )


def _rule_materialized(d: DiagnosisInput) -> Finding | None:
    sb = d.scoreboard
    if sb is None:
        return None
    exact, mat = sb.rate("exact"), sb.rate("materialized")
    if exact is None or mat is None or exact - mat < d.threshold("materialized_gap"):
        return None
    return Finding(
        "exact_not_materialized",
        "Exact scenes that do not materialise",
        "problem",
        [f"exact {_pct(exact)} vs materialized {_pct(mat)} (gap {_pct(exact - mat)})"],
        "A compiler, content-binding or probe bug: the model's output matches but the final artefact differs.",
        "Fix the renderer or probe path, not the training data.",
    )


RULES: list[Callable[[DiagnosisInput], Finding | None]] = [
    _rule_drift,
    _rule_grammar,
    _rule_truncation,
    _rule_materialized,
]


def diagnose(d: DiagnosisInput) -> list[Finding]:
    findings = [f for rule in RULES if (f := rule(d)) is not None]
    order = {"problem": 0, "warning": 1, "note": 2}
    return sorted(findings, key=lambda f: order.get(f.severity, 3))
