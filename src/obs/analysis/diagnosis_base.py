"""What every diagnosis rule reads and returns (`DiagnosisInput`, `Finding`) and the curve helpers they share:
one module below `analysis.diagnose` and `analysis.diagnose_matrix`, so neither imports the other's rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from obs.analysis.advice import NATIVE, AdviceFiles
from obs.analysis.compare import ProbeComparison
from obs.analysis.reward import RewardHealth
from obs.analysis.scoreboard import Scoreboard
from obs.model import Metrics

MIN_CURVE_POINTS = 20  # curve rules need a curve: fewer points say nothing about a trend


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
    repair_comparison: ProbeComparison | None = None  # repaired probe (a) vs raw probe (b)
    reward: RewardHealth | None = None
    headline_check: str | None = None  # the probe check the run is judged on, when it is one
    final_window: int = 10
    advice: AdviceFiles = NATIVE  # the run's own files, for advice that names one


def _curve(metrics: Metrics | None, key: str | None) -> tuple[np.ndarray, np.ndarray] | None:
    if metrics is None or key is None or key not in metrics.series:
        return None
    s = metrics.series[key].finite()
    if len(s) < MIN_CURVE_POINTS:
        return None
    return s.steps.astype(np.float64), s.values.astype(np.float64)


def _ce_loss(d: DiagnosisInput) -> tuple[np.ndarray, np.ndarray] | None:
    """The loss curve when it reads as a cross-entropy (all positive).

    A policy-gradient loss (GRPO, PPO) hovers around zero and changes sign: its level and its
    relative changes mean nothing, so the loss rules stay silent on it.
    """
    curve = _curve(d.metrics, d.loss_key)
    if curve is None or not bool(np.all(curve[1] > 0)) or placeholder_loss(d):  # a placeholder says nothing
        return None
    return curve


def placeholder_loss(d: DiagnosisInput) -> bool:
    """seed 001's `loss_is_placeholder` is true somewhere: the logged loss is not the objective."""
    if d.metrics is None or "loss_is_placeholder" not in d.metrics.series:
        return False
    s = d.metrics.series["loss_is_placeholder"].finite()
    return bool(len(s)) and bool(np.any(s.values > 0))
