"""A run's digest: the small part of a run that other pages need.

Runs are streamed (read, rendered, dropped), so a run compared with its baseline cannot hold the
baseline's whole log. The digest keeps just what comparisons use: per-case check outcomes, the
flattened configuration, and summary statistics of each metric's final window. It is small,
picklable and JSON-friendly, so it can also be cached between builds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from obs.analysis.held_constant import run_fields
from obs.model import Probe, Run


@dataclass(frozen=True)
class CaseOutcome:
    checks: dict[str, bool]
    split: str | None
    family: str | None
    failure_class: str | None = None


@dataclass(frozen=True)
class WindowStat:
    """Mean, sd and count of the last `window` finite points of a series, plus its last step."""

    mean: float
    sd: float
    n: int
    last_step: float
    points: int

    def as_dict(self) -> dict[str, float]:
        return {
            "mean": self.mean,
            "sd": self.sd,
            "n": self.n,
            "last_step": self.last_step,
            "points": self.points,
        }


@dataclass
class RunDigest:
    id: str
    fields: dict[str, Any] = field(default_factory=dict)
    probe: dict[str, CaseOutcome] | None = None
    probe_repaired: dict[str, CaseOutcome] | None = None
    finals: dict[str, WindowStat] = field(default_factory=dict)
    summary: dict[str, float] = field(default_factory=dict)
    evals: dict[str, tuple[float, float | None]] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    contract: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)


def _outcomes(probe: Probe | None) -> dict[str, CaseOutcome] | None:
    if probe is None:
        return None
    return {c.id: CaseOutcome(dict(c.checks), c.split, c.family, c.failure_class) for c in probe.cases}


def window_stat(values: np.ndarray, steps: np.ndarray, window: int) -> WindowStat | None:
    keep = np.isfinite(values)
    vals, st = values[keep], steps[keep]
    if vals.size == 0:
        return None
    tail = vals[-max(1, window) :]
    sd = float(np.std(tail, ddof=1)) if tail.size > 1 else math.nan
    return WindowStat(float(np.mean(tail)), sd, int(tail.size), float(st[-1]), int(vals.size))


def make_digest(run: Run, window: int) -> RunDigest:
    finals: dict[str, WindowStat] = {}
    if run.metrics is not None:
        for name, series in run.metrics.series.items():
            stat = window_stat(series.values, series.steps, window)
            if stat is not None:
                finals[name] = stat
    evals = {f"{e.task}/{e.metric}": (e.value, e.stderr) for e in run.evals}
    return RunDigest(
        id=run.id,
        fields=run_fields(run),
        probe=_outcomes(run.probe),
        probe_repaired=_outcomes(run.probe_repaired),
        finals=finals,
        summary=dict(run.summary),
        evals=evals,
        model=run.model,
        config=run.config,
        contract=run.contract,
        data=run.data,
        provenance=run.provenance,
    )
