"""The site model: what every page, the PR summary and the manifest know about a run, typed.

A build streams runs one at a time and drops each after its page is written; what stays is a
`RunSummary` per run. The index, spec, campaign, ledger, sweeps, arms and changes pages, `index.json`
and the incremental build cache are all made from these records, so they are the contract between
the per-run pipeline and everything else. They are frozen dataclasses (renaming a field fails mypy
wherever it is read) and cross process and cache boundaries as plain JSON, checked on the way back
in (`RunSummary.from_json`): a stale or damaged cache entry is rejected, never half-read.

This module imports nothing from obs: it sits below the analysis, which fills it, and below the
pages, which read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import msgspec

SUMMARY_SCHEMA_VERSION = 5  # the cached and exchanged form of RunSummary; bump on any field change


class SummaryError(ValueError):
    """A summary read back from JSON does not have the declared shape."""


def finite_or_none(value: float | None) -> float | None:
    """JSON has no NaN: a value that is not a finite number is stored as null."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


@dataclass(frozen=True)
class IntervalSummary:
    low: float | None
    high: float | None
    level: float


@dataclass(frozen=True)
class HeadlineSummary:
    """The one number at the top of a run page and where it came from (`analysis.compare.Headline`)."""

    metric: str | None
    value: float | None
    kind: str | None  # probe | series | summary | eval | aggregate (a mean over eval sets)
    detail: str
    higher_is_better: bool = True
    n: int | None = None
    stderr: float | None = None
    # JSON has no NaN or ∞: such a headline is `value: null` with `nonfinite: "nan" | "inf" | "-inf"`,
    # so a diverged run never reads as "no metric" (index.json, the leaderboard, its sort)
    nonfinite: str | None = None


def nonfinite_of(value: float | None) -> str | None:
    """'nan', 'inf' or '-inf' for a non-finite number, None otherwise."""
    if value is None or math.isfinite(value):
        return None
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


@dataclass(frozen=True)
class DeltaSummary:
    """The headline against the baseline (`analysis.compare.HeadlineDelta`)."""

    baseline: str
    baseline_value: float | None
    delta: float | None
    ci: IntervalSummary | None
    p_value: float | None
    method: str
    n: int | None
    verdict: str  # a stats.Recommendation; "not_tested" when there are no replicates (one run each)
    unit: str = "none"  # the unit of replication of `ci` and `p_value` (`n` of them)


@dataclass(frozen=True)
class WindowSummary:
    """Mean, sd and count of a series' final window (`analysis.digest.WindowStat`)."""

    mean: float
    sd: float | None
    n: int
    last_step: float
    points: int


@dataclass(frozen=True)
class Curve:
    """A decimated curve: what across-run pages draw without re-reading a log."""

    steps: tuple[float, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class DecisionSummary:
    verdict: str | None
    rationale: str
    next: str
    by: str | None
    date: str | None


@dataclass(frozen=True)
class Inputs:
    """Which kinds of evidence the run has (gates say "n/a" instead of "fail" without them)."""

    probe: bool
    curves: bool
    reward: bool
    gate: bool


@dataclass(frozen=True)
class LedgerViewEntry:
    """One decision of the run from decisions.jsonl, newest first on the page."""

    verdict: str
    date: str
    by: str
    next: str
    suggested: str | None
    input_hash: str
    same_inputs: bool
    archive: str | None  # the frozen report's site path, when it is publishable
    archive_problem: str | None


@dataclass(frozen=True)
class LedgerView:
    stale: bool  # the artifacts changed after the latest decision
    decided_on: str
    entries: tuple[LedgerViewEntry, ...]


@dataclass(frozen=True)
class ChangeState:
    """How the run differs from a compared build (`obs build --compare-to`)."""

    since: str
    state: str  # new | changed | same
    what: tuple[str, ...]


@dataclass(frozen=True)
class RunSummary:
    """One run as the site sees it. Made by `analysis.summary.summarize` from a run's report."""

    id: str
    slug: str
    title: str
    adapter: str
    spec: str | None
    campaign: str | None
    revision: str | None
    date: str | None
    status: str
    baseline: str | None
    primary_axis: str | None
    condition: str | None
    seed: int | None
    arm: str | None
    tags: tuple[str, ...]
    provenance: dict[str, Any]
    headline: HeadlineSummary
    headline_is_rate: bool
    delta: DeltaSummary | None
    verdict: str | None
    decision: DecisionSummary | None
    suggested_verdict: str | None
    disagrees: bool
    held_constant_clean: bool | None
    n_cases: int | None
    n_failing: int | None
    top_failure: str | None
    findings: tuple[str, ...]
    rates: dict[str, float | None]
    input_hash: str
    last_step: float | None
    # across runs (sweeps, config diff, gates, arms, campaigns): small inputs, never a whole log
    fields: dict[str, Any]
    finals: dict[str, float]
    family_rates: dict[str, dict[str, float]]
    split_rates: dict[str, dict[str, float]]
    has: Inputs
    gate_passed: bool | None
    curves: dict[str, Curve] | None
    campaign_final: WindowSummary | None = None
    campaign_curve: Curve | None = None
    campaign_tail: Curve | None = None
    completions: float | None = None
    completions_final: float | None = None
    # added by the site step (publish plugins), never by the per-run pipeline
    ledger: LedgerView | None = None
    changed: ChangeState | None = None
    # which runs may be ranked together: the headline metric and the run's family (spec, campaign,
    # MLflow experiment, else the folder that holds it); for a probe headline, its version and size
    comparable: str = ""
    probe_key: str | None = None
    # analysis.measurement: why the run and its baseline (or the spec's frozen contract) are not one
    # measurement (None: they are, or nothing says otherwise); the probe's content hash (ids, expected)
    not_one_measurement: str | None = None
    probe_hash: str | None = None
    # analysis.ladder.TargetClass.as_dict(): the failure class the rung targets, counted before and after
    target_class: dict[str, Any] | None = None
    # a campaign run: each declared metric's one number over its own window (campaign.yaml `metrics:`), and the
    # logged series that are yes/no flags (every value 0 or 1, a name that asks a question): never tested
    metric_windows: dict[str, WindowSummary] = field(default_factory=dict)
    flags: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain data for the cache and for hashing (a page's inputs)."""
        return {"schema": SUMMARY_SCHEMA_VERSION, **msgspec.to_builtins(self)}

    @classmethod
    def from_json(cls, data: Any) -> RunSummary:
        """Back from `to_json` (or its JSON bytes), checked field by field."""
        try:
            if isinstance(data, bytes | str):
                data = msgspec.json.decode(data)
            if not isinstance(data, dict) or data.get("schema") != SUMMARY_SCHEMA_VERSION:
                raise SummaryError("not a run summary of this version")
            body = {k: v for k, v in data.items() if k != "schema"}
            return msgspec.convert(body, cls)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise SummaryError(str(exc)) from exc

    def value_of(self, name: str) -> Any:
        """A top-level field by name, for settings that name one (`run.status` in obs.yaml sweeps)."""
        return getattr(self, name, None) if name in _FIELD_NAMES else None


_FIELD_NAMES = frozenset(RunSummary.__dataclass_fields__)


@dataclass(frozen=True)
class ManifestRecord:
    """One run in `index.json` (schema `MANIFEST_SCHEMA_VERSION`): what other tools may rely on."""

    id: str
    title: str
    page: str
    analysis: str
    adapter: str
    spec: str | None
    campaign: str | None
    status: str
    date: str | None
    baseline: str | None
    headline: HeadlineSummary
    delta: DeltaSummary | None
    rates: dict[str, float | None]
    verdict: str | None
    suggested_verdict: str | None
    input_hash: str
