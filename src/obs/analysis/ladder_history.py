"""A spec's history across rungs: each probe check's rate overall and per failure family, rung by rung.

The hand-written "family x rung" table of a ladder's notes (the demo's spec03 notes.md) made from the rungs'
summaries, with each rate's count and its Wilson 95% interval (cases are the unit; a family of 32 cases moves
by ±15 pp by chance alone, which the interval says). The spec page shows the headline check's table and a
chart of every check's rates across rungs (the campaign pages' chart, x = the rung's number).

A rung measured on another probe (not one measurement with the spec's frozen contract) is kept in its column
but marked, and left out of the chart: its rates are of other cases.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from obs.analysis.ladder import on_frozen_probe
from obs.analysis.recipes import seed_of
from obs.analysis.stats import wilson_interval
from obs.model import Spec
from obs.sitemodel import RunSummary

ALL = "all cases"


@dataclass(frozen=True)
class Cell:
    hits: int
    n: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        return self.hits / self.n

    def as_dict(self) -> dict[str, Any]:
        return {"hits": self.hits, "n": self.n, "rate": self.rate, "ci": [self.low, self.high]}


@dataclass(frozen=True)
class Rung:
    run: str
    slug: str
    label: str  # the revision, else the run id
    number: int  # 1-based position on the ladder (the chart's x)
    frozen_probe: bool  # measured on the frozen probe (one measurement with the spec's contract)


@dataclass(frozen=True)
class CheckHistory:
    """One check: rows are "all cases" then each family, columns the rungs; None where a rung has no such cases."""

    check: str
    negative: bool  # lower is better (a negative check such as truncated)
    rows: tuple[tuple[str, tuple[Cell | None, ...]], ...]


@dataclass(frozen=True)
class History:
    rungs: tuple[Rung, ...]
    checks: tuple[CheckHistory, ...]  # the headline check first
    headline: str | None

    def check(self, name: str | None) -> CheckHistory | None:
        return next((c for c in self.checks if c.check == name), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rungs": [r.__dict__ for r in self.rungs],
            "checks": {
                c.check: {label: [x.as_dict() if x else None for x in cells] for label, cells in c.rows}
                for c in self.checks
            },
        }


def _cell(counts: tuple[int, int] | None) -> Cell | None:
    if counts is None or counts[1] <= 0:
        return None
    hits, n = int(counts[0]), int(counts[1])
    iv = wilson_interval(hits, n)
    return Cell(hits, n, iv.low, iv.high)


def ladder_history(
    runs: Sequence[RunSummary], spec: Spec, negative: frozenset[str] = frozenset(), seed_keys: Sequence[str] = ()
) -> History | None:
    """The rungs' probe rates across the ladder, in ladder order (None: fewer than one rung with a probe)."""
    probed = [s for s in runs if s.check_counts]
    if not probed:
        return None
    labels = _rung_labels(probed, seed_keys)
    rungs = tuple(Rung(s.id, s.slug, labels[s.id], i + 1, on_frozen_probe(s, spec)) for i, s in enumerate(probed))
    headline = spec.primary_metric or next((s.headline.metric for s in probed if s.headline.kind == "probe"), None)
    names = sorted({c for s in probed for c in s.check_counts})
    if headline in names:
        names = [headline, *(c for c in names if c != headline)]
    checks = []
    for check in names:
        families = sorted({f for s in probed for f in s.family_counts.get(check, {})})
        rows: list[tuple[str, tuple[Cell | None, ...]]] = [
            (ALL, tuple(_cell(s.check_counts.get(check)) for s in probed))
        ]
        rows += [(f, tuple(_cell(s.family_counts.get(check, {}).get(f)) for s in probed)) for f in families]
        checks.append(CheckHistory(check, check in negative, tuple(rows)))
    return History(rungs, tuple(checks), headline if headline in names else None)


def _rung_labels(runs: Sequence[RunSummary], seed_keys: Sequence[str]) -> dict[str, str]:
    """Each rung's column name: its revision, told apart by its seed (`r1 · seed 18`) when seed replicates share
    the revision, else by its run id; a run without a revision is named by its id."""
    shared = Counter(s.revision for s in runs if s.revision)
    labels: dict[str, str] = {}
    for s in runs:
        if not s.revision:
            labels[s.id] = s.id
        elif shared[s.revision] == 1:
            labels[s.id] = s.revision
        else:
            seed = seed_of(s, seed_keys)  # the declared seed, else a seed key of its config (obs.yaml seed_keys)
            labels[s.id] = f"{s.revision} · seed {seed}" if seed is not None else s.id
    if len(set(labels.values())) < len(labels):  # replicates that share a seed too: only the run id tells them apart
        return {s.id: s.id for s in runs}
    return labels


def chart_data(key: str, history: History) -> dict[str, Any]:
    """The campaign pages' chart data (`obs.conditions/1`): per check, one line per scope (all cases, then each
    family) over the rung numbers, with its Wilson 95% band; a rung on another probe is left out."""
    metrics: dict[str, Any] = {}
    for c in history.checks:
        lines = []
        for label, cells in c.rows:
            pts = [(r.number, x) for r, x in zip(history.rungs, cells, strict=True) if x is not None and r.frozen_probe]
            if not pts:
                continue
            lines.append(
                {
                    "name": label,
                    "label": label,
                    "x": [n for n, _ in pts],
                    "mean": [round(x.rate, 6) for _, x in pts],
                    "ci_lo": [round(x.low, 6) for _, x in pts],
                    "ci_hi": [round(x.high, 6) for _, x in pts],
                }
            )
        if lines:
            metrics[c.check] = {"conditions": lines}
    return {"schema": "obs.conditions/1", "slug": key, "metrics": metrics}
