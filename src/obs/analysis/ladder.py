"""A spec's ladder across rungs: each rung against the spec's frozen baseline, the looks taken at the frozen
probe, and the ladder-level claim adjusted for them.

Every rung is judged (tested, with a suggested verdict) against its own `baseline:`, its parent. Its build
also tests it against the spec's frozen baseline with the same paired machinery and the same one-measurement
rule (`FrozenComparison`, made by `analysis.report`; the summary carries it as `frozen_delta`), so the ladder
shows each rung against both. A headline without replicates is only described, and two measurements give no
number at all (the contract keys of `analysis.measurement`).

Each rung tested on the frozen probe is one more look at the same cases: ten no-change rungs give some
"significant improvement" far more often than α (issue 27's simulation: 14 % over 10 rungs), and the best of
several overstates its gain. The ladder counts the recorded decisions (each rung's verdict says how many came
before it), and `ladder_claim` adjusts the claim "the best rung beats the frozen baseline" for every rung
tested: Holm over their p-values, a simultaneous (Bonferroni) interval for the best (docs/statistics.md;
bench/stats_calibration.py's ladder rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from obs.analysis.measurement import MEASUREMENT_KEYS, Measurement, one_measurement
from obs.analysis.stats import (
    DEGRADATION,
    IMPROVEMENT,
    INSUFFICIENT,
    NOT_ONE_MEASUREMENT,
    NOT_TESTED,
    SIZE_UNKNOWN,
    holm_adjust,
    paired_from_counts,
    recommendation,
)
from obs.model import Spec
from obs.probetable import CaseOutcomes
from obs.sitemodel import DeltaSummary, RunSummary

if TYPE_CHECKING:
    from obs.analysis.compare import HeadlineDelta, ProbeComparison


@dataclass(frozen=True)
class FrozenDelta:
    """One rung against the spec's frozen baseline, as the ladder shows it."""

    frozen: str
    delta: float | None  # headline value minus the frozen baseline's (None: not comparable)
    tested_as_parent: bool  # the rung's own baseline is the frozen baseline: its tested delta is this one
    why_not: str | None  # why there is no number (another metric, no value, not one measurement)
    tested: DeltaSummary | None = None  # the paired test against the frozen baseline, from the rung's own build


def tested_vs_frozen(s: RunSummary, frozen_id: str | None) -> DeltaSummary | None:
    """The rung's tested delta against the frozen baseline: its delta vs its parent when the parent is the frozen
    baseline, else the one its build made against the frozen baseline (None: neither, or not tested)."""
    if not frozen_id or s.id == frozen_id:
        return None
    d = s.delta if s.baseline == frozen_id else s.frozen_delta
    if d is None or d.delta is None or d.verdict in (NOT_TESTED, NOT_ONE_MEASUREMENT):
        return None
    return d


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
    if not tested and s.frozen_delta is not None and s.frozen_delta.delta is not None:
        d = s.frozen_delta
        if d.verdict == NOT_ONE_MEASUREMENT:
            return FrozenDelta(frozen.id, None, False, d.method.split(": the numbers")[0])
        return FrozenDelta(frozen.id, d.delta, False, None, d if d.verdict != NOT_TESTED else None)
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
class FrozenComparison:
    """A rung tested against the spec's frozen baseline, by the same function and rules as against its parent
    (`analysis.report._against`): the paired probe comparison, the headline delta, and one measurement or none
    (then the delta is described: no interval, no significance). Never read by the promotion rules, which
    judge the rung against its own baseline; it is what the ladder-level claim adjusts across rungs."""

    baseline_id: str
    delta: HeadlineDelta | None
    measurement: Measurement
    comparison: ProbeComparison | None
    problem: str | None = None  # why there is no delta (the frozen baseline was not read, ...)

    def as_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline_id,
            "delta": self.delta.as_dict() if self.delta else None,
            "measurement": self.measurement.as_dict(),
            "comparison": self.comparison.as_dict() if self.comparison else None,
            "problem": self.problem,
        }


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


@dataclass(frozen=True)
class LadderRung:
    """One rung in the ladder-level claim: its tested delta against the frozen baseline and its Holm p."""

    run: str
    delta: float
    p_value: float
    p_holm: float
    significant: bool  # a significant improvement after Holm's adjustment over the ladder's rungs
    verdict: str  # improvement / degradation when Holm's p < α on that side, else insufficient evidence
    members: tuple[str, ...] = ()  # a recipe's seed replicates, one look: Welch over seeds, not a paired test
    members_frozen: tuple[str, ...] = ()  # the frozen baseline's seeds it was tested against

    @property
    def label(self) -> str:
        """How the claim names it: the run, or the recipe and its seeds."""
        if not self.members:
            return self.run
        return f"{self.run}'s recipe ({len(self.members)} v {len(self.members_frozen)} seeds)"


@dataclass(frozen=True)
class LadderClaim:
    """ "Is any rung better than the frozen baseline?", asked once of the whole ladder.

    Each rung tested against the frozen probe is one more look at the same cases, and the best of m looks
    overstates its gain (ten no-change rungs: some "significant improvement" about 14 % of the time at
    α = 0.05 each; the best of eight reads +4.8 pp where the truth is 0, issue 27). So the claim is adjusted
    for all m rungs: Holm's step-down adjustment of their p-values (it controls the family-wise error rate
    under any dependence, and rungs scored on one probe are dependent), and for the best rung a simultaneous
    interval (Bonferroni: each rung's paired interval, Tango's score interval or the exact one below 25
    discordant pairs as for one rung, at level 1 - α/m), which covers the truth for
    whichever rung is picked, the best included, with probability ≥ 1 - α. bench/stats_calibration.py
    simulates both (ladder rows)."""

    frozen: str
    m: int  # rungs tested against the frozen baseline on its probe
    alpha: float
    rungs: tuple[LadderRung, ...]
    best: str  # the rung with the largest gain (in the better direction)
    best_delta: float
    best_low: float | None  # its simultaneous interval (None: no paired counts to make it from)
    best_high: float | None
    level: float  # each rung's level in the simultaneous interval: 1 - alpha / m
    verdict: str  # stats.Recommendation of the best rung, from its Holm p and simultaneous interval
    higher_is_better: bool
    # recipes with seeds that could not be judged at the seed level (label, why): no look, no paired test instead
    not_tested: tuple[tuple[str, str], ...] = ()
    frozen_seeds: tuple[str, ...] = ()  # the frozen baseline and its seed replicates: its seeds, not rungs

    @property
    def significant(self) -> tuple[str, ...]:
        return tuple(r.label for r in self.rungs if r.significant)

    @property
    def best_label(self) -> str:
        found = self.rung(self.best)
        return found.label if found else self.best

    def rung(self, run_id: str) -> LadderRung | None:
        """The rung a run is judged in: its own, or its recipe's when it is one of its seeds."""
        return next((r for r in self.rungs if r.run == run_id or run_id in r.members), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "frozen_baseline": self.frozen,
            "rungs_tested": self.m,
            "alpha": self.alpha,
            "method": "Holm over the rungs' paired p-values; Bonferroni simultaneous Tango intervals",
            "rungs": [r.__dict__ for r in self.rungs],
            "best": self.best,
            "best_label": self.best_label,
            "best_delta": self.best_delta,
            "best_interval": [self.best_low, self.best_high],
            "interval_level_each": self.level,
            "verdict": self.verdict,
            "significant": list(self.significant),
            "recipes_not_tested": [list(t) for t in self.not_tested],
        }


@dataclass(frozen=True)
class RungTest:
    """One rung's paired test against the frozen baseline: what the ladder-level claim is made from."""

    run: str
    delta: float
    p_value: float
    pairs: tuple[int, int] | None  # (right only in the rung, right only in the frozen baseline)
    n: int | None  # paired cases
    # a recipe with seed replicates, one look: its seeds' headline values and the frozen baseline recipe's
    # (Welch's t over seeds; its simultaneous interval is Welch's at level 1 - α/m)
    seeds: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    members: tuple[str, ...] = ()
    members_frozen: tuple[str, ...] = ()


def _recipes(
    runs: Sequence[RunSummary], frozen: str, seed_keys: Sequence[str]
) -> tuple[dict[str, list[RunSummary]], list[RunSummary]]:
    """Run id -> its recipe's seeds (only recipes of two or more seeds, the frozen baseline's excluded), and the
    frozen baseline's recipe's seeds (itself alone when it has no replicates)."""
    from obs.analysis.recipes import replicates

    groups = [g for g in replicates(runs, seed_keys).values() if len(g) >= 2]
    frozen_seeds = next((g for g in groups if any(s.id == frozen for s in g)), [])
    of_run = {s.id: g for g in groups if g is not frozen_seeds for s in g}
    return of_run, frozen_seeds or [s for s in runs if s.id == frozen]


def ladder_claim(
    runs: Sequence[RunSummary],
    spec: Spec,
    alpha: float = 0.05,
    min_effect: float = 0.0,
    seed_keys: Sequence[str] = (),
) -> LadderClaim | None:
    """The ladder-level claim: the best rung against the frozen baseline, adjusted for every rung tested on the
    frozen probe (None: no rung has a test against the frozen baseline). A recipe with seed replicates is one
    look, judged at the seed level (Welch's t of its seeds' headlines against the frozen baseline recipe's): its
    seeds are not independent rungs, and the best of them is not a finding. The frozen baseline's own seed
    replicates are its seeds, not rungs."""
    frozen = spec.baseline
    if not frozen:
        return None
    from obs.analysis.stats import welch

    of_run, frozen_seeds = _recipes(runs, frozen, seed_keys)
    frozen_ids = {s.id for s in frozen_seeds}
    tests: list[RungTest] = []
    skipped: list[tuple[str, str]] = []
    done: set[str] = set()
    hib = True
    for s in runs:
        if s.id in frozen_ids or s.id in done or not on_frozen_probe(s, spec):
            continue
        group = of_run.get(s.id)
        if group is not None:
            done.update(g.id for g in group)
            if not all(on_frozen_probe(g, spec) for g in group):
                continue
            x = tuple(float(g.headline.value) for g in group if g.headline.value is not None)
            y = tuple(float(f.headline.value) for f in frozen_seeds if f.headline.value is not None)
            label = f"{s.id}'s recipe ({len(x)} v {len(y)} seeds)"
            if not frozen_seeds or s.headline.metric != frozen_seeds[0].headline.metric:
                why = "the frozen baseline is not in this build" if not frozen_seeds else "another headline metric"
                skipped.append((label, why))
                continue
            w = welch(x, y)
            if w.p_value is None:
                skipped.append((label, w.problem or "no test"))
                continue
            members = tuple(g.id for g in group)
            tests.append(RungTest(s.id, w.estimate, w.p_value, None, None, (x, y), members, tuple(frozen_ids)))
            hib = s.headline.higher_is_better
            continue
        d = tested_vs_frozen(s, frozen)
        if d is not None and d.p_value is not None and d.delta is not None:
            tests.append(RungTest(s.id, d.delta, d.p_value, d.pairs, d.n))
            hib = s.headline.higher_is_better
    claim = claim_of(tests, frozen, hib, alpha, min_effect)
    if claim is None:
        return None
    return replace(claim, not_tested=tuple(skipped), frozen_seeds=tuple(sorted(frozen_ids)))


def claim_of(
    tests: Sequence[RungTest], frozen: str, higher_is_better: bool = True, alpha: float = 0.05, min_effect: float = 0.0
) -> LadderClaim | None:
    """Holm over the rungs' p-values, the best rung's Bonferroni simultaneous interval (the calibration bench
    calls this directly with simulated rungs)."""
    if not tests:
        return None
    m = len(tests)
    holm = holm_adjust([t.p_value for t in tests])
    sign = 1.0 if higher_is_better else -1.0
    rungs = []
    for t, p_adj in zip(tests, holm, strict=True):
        signed = sign * t.delta
        verdict = (
            INSUFFICIENT
            if not p_adj < alpha
            else IMPROVEMENT
            if signed > 0
            else DEGRADATION
            if signed < 0
            else INSUFFICIENT
        )
        rungs.append(
            LadderRung(t.run, t.delta, t.p_value, p_adj, verdict == IMPROVEMENT, verdict, t.members, t.members_frozen)
        )
    i = max(range(m), key=lambda k: (sign * rungs[k].delta, -rungs[k].p_value))
    best = tests[i]
    level = 1.0 - alpha / m
    low = high = None
    if best.seeds is not None:  # a recipe: Welch's t interval over seeds at the simultaneous level
        from obs.analysis.stats import welch

        iv = welch(best.seeds[0], best.seeds[1], level=level).interval
        if iv is not None:
            low, high = iv.low, iv.high
    elif best.pairs is not None and best.n:  # the rung's own interval method (exact below 25 discordant pairs)
        (pc,) = paired_from_counts([(best.n, 0, best.pairs[0], best.pairs[1])], level=level, alpha=alpha)
        low, high = pc.interval.low, pc.interval.high
    claim_verdict = (
        str(recommendation(rungs[i].p_holm, rungs[i].delta, (low, high), alpha, higher_is_better, min_effect))
        if low is not None and high is not None
        else rungs[i].verdict
    )
    if rungs[i].significant and claim_verdict == INSUFFICIENT:
        # Holm's step-down rejects (the family-wise error rate is controlled), while the Bonferroni interval, more
        # conservative for all but the smallest p, still reaches past zero: the gain is shown, its size is not
        claim_verdict = SIZE_UNKNOWN
    return LadderClaim(
        frozen, m, alpha, tuple(rungs), best.run, rungs[i].delta, low, high, level, claim_verdict, higher_is_better
    )
