"""A spec's ladder across rungs: each rung against the spec's frozen baseline, and the looks taken at
the frozen probe.

Every rung is judged (tested, with a suggested verdict) against its own `baseline:`, its parent. The
ladder also shows where each rung stands against the spec's frozen baseline, from the run summaries: the
difference of the two headline values, *described, not tested* here (a paired test needs both runs'
cases: `obs gate RUN --baseline FROZEN` makes it), and whether the two are one measurement (the contract
keys of `analysis.measurement`).

Each decision recorded on the frozen probe is one more look at the same cases: ten no-change rungs
judged against one frozen probe give some "significant improvement" far more often than α (issue 27's
simulation: 14 % over 10 rungs). The ladder counts those looks, and each rung's verdict says how many
came before it, so a reader can weigh a "significant" tenth look accordingly (docs/statistics.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from obs.analysis.measurement import MEASUREMENT_KEYS, one_measurement
from obs.model import Spec
from obs.probetable import CaseOutcomes
from obs.sitemodel import RunSummary


@dataclass(frozen=True)
class FrozenDelta:
    """One rung against the spec's frozen baseline, as the ladder shows it."""

    frozen: str
    delta: float | None  # headline value minus the frozen baseline's (None: not comparable)
    tested_as_parent: bool  # the rung's own baseline is the frozen baseline: its tested delta is this one
    why_not: str | None  # why there is no number (another metric, no value, not one measurement)


@dataclass(frozen=True)
class Look:
    """A recorded decision on the frozen probe: the `number`-th, with `number - 1` before it."""

    number: int
    total: int


def contract_of(s: RunSummary) -> dict[str, Any]:
    """The measurement keys of a run's contract, from its summary's flattened fields."""
    return {k: s.fields[f"contract.{k}"] for k in MEASUREMENT_KEYS if f"contract.{k}" in s.fields}


def frozen_delta(s: RunSummary, frozen: RunSummary | None, spec: Spec) -> FrozenDelta | None:
    """The rung against the spec's frozen baseline (None for the frozen baseline itself, or no baseline)."""
    if frozen is None or s.id == frozen.id:
        return None
    tested = s.baseline == frozen.id
    m = one_measurement(
        contract_of(s),
        baseline_id=frozen.id,
        baseline_contract=contract_of(frozen),
        frozen_contract=spec.contract,
        spec_id=spec.id,
    )
    if not m.ok:
        return FrozenDelta(frozen.id, None, tested, f"not one measurement: {m.what_differs()}")
    if s.headline.metric != frozen.headline.metric:
        return FrozenDelta(frozen.id, None, tested, f"another headline metric than {frozen.id}'s")
    if s.headline.value is None or frozen.headline.value is None:
        return FrozenDelta(frozen.id, None, tested, "no headline value")
    if s.headline.kind == "probe" and s.headline.n != frozen.headline.n:
        return FrozenDelta(
            frozen.id,
            None,
            tested,
            f"rates over {s.headline.n} and {frozen.headline.n} cases: not the same cases, only a paired comparison "
            "compares them",
        )
    return FrozenDelta(frozen.id, s.headline.value - frozen.headline.value, tested, None)


def on_frozen_probe(s: RunSummary, spec: Spec) -> bool:
    """Was the rung measured on the spec's frozen probe (same declared probe, one measurement)?"""
    if s.not_one_measurement:
        return False
    frozen_probe = spec.contract.get("probe") if isinstance(spec.contract, Mapping) else None
    probe = s.fields.get("contract.probe")
    return frozen_probe is None or probe is None or str(probe) == str(frozen_probe)


def looks(runs: Sequence[RunSummary], spec: Spec) -> dict[str, Look]:
    """Run id -> its look at the frozen probe, in ladder order: every rung with a recorded decision that compared
    it with a baseline on the frozen probe (the first rung, compared with nothing, is not a look)."""
    deciding = [s for s in runs if s.verdict and s.baseline and s.delta is not None and on_frozen_probe(s, spec)]
    return {s.id: Look(i + 1, len(deciding)) for i, s in enumerate(deciding)}


@dataclass(frozen=True)
class TargetClass:
    """The failure class a rung targets (`target_failure_class:`), counted in the baseline and in the run.

    Counts are cases whose probe `failure_class` is the name, over each run's whole probe (`n_before`,
    `n_after` cases); None when that run has no probe. `labelled` is False when neither probe labels any
    case with a failure class (then a count of 0 says nothing)."""

    name: str
    before: int | None
    after: int | None
    n_before: int | None
    n_after: int | None
    labelled: bool

    def text(self) -> str:
        if not self.labelled:
            return f"targets {self.name}: no probe case carries a failure_class label, so it cannot be counted"
        before = f"{self.before} of {self.n_before}" if self.before is not None else "no baseline probe"
        after = f"{self.after} of {self.n_after}" if self.after is not None else "no probe"
        return f"targets {self.name}: {before} cases before (baseline), {after} in this run"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "before": self.before,
            "after": self.after,
            "n_before": self.n_before,
            "n_after": self.n_after,
            "labelled": self.labelled,
            "text": self.text(),
        }


def _count(outcomes: CaseOutcomes | None, name: str) -> tuple[int | None, int | None, bool]:
    if outcomes is None:
        return None, None, False
    fc = outcomes.failure_class
    labelled = bool(fc.labels) and bool(np.any(fc.codes >= 0))
    if name not in fc.labels:
        return 0, len(outcomes), labelled
    return int(np.count_nonzero(fc.codes == fc.labels.index(name))), len(outcomes), labelled


def target_class(name: str | None, here: CaseOutcomes | None, base: CaseOutcomes | None) -> TargetClass | None:
    """The targeted class's count before (the baseline's probe) and after (this run's)."""
    if not name:
        return None
    after, n_after, lab_a = _count(here, name)
    before, n_before, lab_b = _count(base, name)
    return TargetClass(name, before, after, n_before, n_after, lab_a or lab_b)
