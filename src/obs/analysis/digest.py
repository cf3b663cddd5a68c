"""A run's digest: the small part of a run that other pages need.

Runs are streamed (read, rendered, dropped), so a run compared with its baseline cannot hold the
baseline's whole log. The digest keeps just what comparisons use: per-case check outcomes, the
flattened configuration, and summary statistics of each metric's final window. It is small,
picklable and JSON-friendly, so it can also be cached between builds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from obs.analysis.held_constant import run_fields
from obs.analysis.measurement import ProbeFingerprint, probe_fingerprint
from obs.model import Probe, ProbeCase, Run
from obs.probetable import CaseOutcome, CaseOutcomes, SampleCounts

__all__ = [
    "CaseOutcome",
    "CaseOutcomes",
    "RunDigest",
    "SampleCounts",
    "WindowStat",
    "digest_from_dict",
    "digest_to_dict",
    "make_digest",
    "sample_counts",
    "window_stat",
]


DENSE_FACTOR = 2  # a final window is averaged only over a series with at least this many windows' worth of points


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
    """`probe` and `probe_repaired` hold every case's outcome by column; a mapping of case id to
    `CaseOutcome` (as tests write them) is turned into that on the way in."""

    id: str
    fields: dict[str, Any] = field(default_factory=dict)
    probe: CaseOutcomes | None = None
    probe_repaired: CaseOutcomes | None = None
    finals: dict[str, WindowStat] = field(default_factory=dict)
    summary: dict[str, float] = field(default_factory=dict)
    evals: dict[str, tuple[float, float | None]] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    contract: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    # series whose last logged value is NaN or ±∞: name -> (that value, its step). The final window
    # mean is taken over finite points; a run that ended diverged is said so, not averaged away.
    ends_nonfinite: dict[str, tuple[float, float]] = field(default_factory=dict)
    # the probe's identity by content (case ids, expected outputs): `analysis.measurement`
    probe_fingerprint: ProbeFingerprint | None = None

    def __post_init__(self) -> None:
        if self.probe is not None:
            self.probe = CaseOutcomes.of(self.probe)
        if self.probe_repaired is not None:
            self.probe_repaired = CaseOutcomes.of(self.probe_repaired)


def nonfinite_text(value: float) -> str:
    """'nan', 'inf' or '-inf': how a non-finite value travels through JSON (which has none)."""
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def _outcomes(probe: Probe | None) -> CaseOutcomes | None:
    if probe is None:
        return None
    outcomes = probe.table.outcomes
    if not probe.samples:
        return outcomes
    counts = {i: c for i, group in probe.samples.items() if (c := sample_counts(group))}
    return replace(outcomes, samples=counts)


def sample_counts(samples: list[ProbeCase] | None) -> SampleCounts | None:
    """check -> (samples that have it, samples where it is true), over the samples of one case."""
    if not samples:
        return None
    out: SampleCounts = {}
    for s in samples:
        for check, value in s.checks.items():
            n, c = out.get(check, (0, 0))
            out[check] = (n + 1, c + int(value))
    return out


def window_stat(values: np.ndarray, steps: np.ndarray, window: int) -> WindowStat | None:
    """The mean of the last `window` finite points, when the series is dense: at least twice `window` points, so the
    window is the end of the run. A sparse series (an eval logged 5-7 times) has its last value (n 1): a "mean of the
    last 10" would span the whole run."""
    keep = np.isfinite(values)
    vals, st = values[keep], steps[keep]
    if vals.size == 0:
        return None
    tail = vals[-max(1, window) :] if vals.size >= DENSE_FACTOR * window else vals[-1:]
    mean, sd = scaled_mean_sd(tail)
    return WindowStat(mean, sd, int(tail.size), float(st[-1]), int(vals.size))


def scaled_mean_sd(values: np.ndarray) -> tuple[float, float]:
    """Mean and sample sd of finite values, computed on values divided by their largest magnitude: a logged 1.2e230
    (or 1.7e308) has a finite mean and sd instead of an overflow to infinity (their squares are not doubles)."""
    scale = float(np.max(np.abs(values))) if values.size else 0.0
    if not scale or not math.isfinite(scale):
        scale = 1.0
    unit = values / scale
    mean = float(np.mean(unit)) * scale
    sd = float(np.std(unit, ddof=1)) * scale if values.size > 1 else math.nan
    return mean, sd


def make_digest(run: Run, window: int) -> RunDigest:
    finals: dict[str, WindowStat] = {}
    ends: dict[str, tuple[float, float]] = {}
    if run.metrics is not None:
        for name, series in run.metrics.series.items():
            stat = window_stat(series.values, series.steps, window)
            if stat is not None:
                finals[name] = stat
            if len(series) and not math.isfinite(float(series.values[-1])):
                ends[name] = (float(series.values[-1]), float(series.steps[-1]))
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
        ends_nonfinite=ends,
        probe_fingerprint=probe_fingerprint(run.probe),
    )


def digest_to_dict(digest: RunDigest) -> dict[str, Any]:
    """Plain data for the build cache (and for hashing: a dependant's page depends on it)."""

    def outcomes(probe: CaseOutcomes | None) -> dict[str, Any] | None:
        return probe.to_json() if probe is not None else None

    return {
        "id": digest.id,
        "fields": digest.fields,
        "probe": outcomes(digest.probe),
        "probe_repaired": outcomes(digest.probe_repaired),
        "finals": {k: [v.mean, v.sd, v.n, v.last_step, v.points] for k, v in digest.finals.items()},
        "summary": digest.summary,
        "evals": {k: list(v) for k, v in digest.evals.items()},
        "model": digest.model,
        "config": digest.config,
        "contract": digest.contract,
        "data": digest.data,
        "provenance": digest.provenance,
        "ends_nonfinite": {k: [nonfinite_text(v), s] for k, (v, s) in digest.ends_nonfinite.items()},
        "probe_fingerprint": digest.probe_fingerprint.as_dict() if digest.probe_fingerprint else None,
    }


def digest_from_dict(data: dict[str, Any]) -> RunDigest:
    def outcomes(raw: dict[str, Any] | None) -> CaseOutcomes | None:
        return CaseOutcomes.from_json(raw) if raw is not None else None

    return RunDigest(
        id=data["id"],
        fields=data["fields"],
        probe=outcomes(data["probe"]),
        probe_repaired=outcomes(data["probe_repaired"]),
        finals={
            k: WindowStat(float(v[0]), float(v[1]) if v[1] is not None else math.nan, int(v[2]), float(v[3]), int(v[4]))
            for k, v in data["finals"].items()
        },
        summary=data["summary"],
        evals={k: (v[0], v[1]) for k, v in data["evals"].items()},
        model=data["model"],
        config=data["config"],
        contract=data["contract"],
        data=data["data"],
        provenance=data["provenance"],
        ends_nonfinite={k: (float(v), float(s)) for k, (v, s) in data.get("ends_nonfinite", {}).items()},
        probe_fingerprint=ProbeFingerprint.from_dict(data.get("probe_fingerprint")),
    )
