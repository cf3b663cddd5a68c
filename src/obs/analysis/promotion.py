"""Promotion rules: the verdict the evidence suggests, shown beside the one a human recorded.

Promote only when the headline improves significantly (its 95% CI above zero, and by at least the
minimum effect of interest when one is set), the run changed one axis, and no split or family shows
*evidence* of being worse than the baseline by more than the tolerance. Everything else is reject,
repair or branch, with each rule's outcome spelled out, so a disagreement with the recorded decision
is visible and explainable. The rules (docs/reading-a-report.md) follow the domain's promotion
discipline: gate every run against the frozen baseline, reject runs that moved several axes at once,
and route mostly-repairable misses to deterministic decode/repair instead of another training run.

A verdict rule is judged by its error rates (docs/statistics.md, bench/stats_calibration.py). A
160-case probe has 3 splits x 5 families x 3 checks: some thirty scope-check cells, a family of 32
cases moves 3.1 pp per case. "No point estimate below -2 pp" fails by chance almost every time, and
thirty uncorrected tests find something nearly as often. So a cell regresses only when a one-sided
score test says it is worse than the baseline by more than the tolerance, with Holm's correction over
every cell tested; a cell so small that even losing every case it passed could not be evidence says so
("too small to judge") instead of failing. Under no true change the rule stays quiet (about 3% false
alarms), and a real family collapse is still caught.
"""

from __future__ import annotations

from collections.abc import Callable, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from obs.analysis.compare import PROBE_UNIT, HeadlineDelta, ProbeComparison
from obs.analysis.held_constant import HeldConstant
from obs.analysis.measurement import Measurement
from obs.analysis.stats import (
    DEGRADATION,
    IMPROVEMENT,
    NEGLIGIBLE,
    NOT_TESTED,
    OUTCOME_WORDS,
    SIZE_UNKNOWN,
    PairedComparison,
    holm_adjust,
    score_tests,
)
from obs.model import Gate
from obs.numbers import delta_text, num, p_text, pct, plural, pp

if TYPE_CHECKING:
    from obs.analysis.recipes import RecipeLevel


@dataclass(frozen=True)
class RuleCheck:
    """One promotion rule and how this run fared on it (None: it could not be checked)."""

    rule: str
    passed: bool | None
    detail: str
    gate: bool = True  # False: it routes a run that is not promoted (repair or not), it does not block
    items: tuple[str, ...] = ()  # the individual findings behind `detail` (each regression, ...)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "passed": self.passed,
            "detail": self.detail,
            "gate": self.gate,
            "items": list(self.items),
        }


@dataclass(frozen=True)
class Regression:
    """A split or family (or another check overall) that is worse than the baseline by more than the
    tolerance, with evidence: the one rule every output reads (run page, `obs gate`, `obs summary`).

    `p_value` is the one-sided score test of "worse by at most the tolerance", `p_adjusted` its
    Holm-adjusted value over the `m` scope-check cells tested.
    """

    scope: str  # all | split | family
    label: str
    check: str
    negative: bool  # the check's `true` means a problem (truncated, ...)
    result: PairedComparison
    tolerance: float
    p_value: float
    p_adjusted: float
    m: int

    @property
    def where(self) -> str:
        return "all shared cases" if self.scope == "all" else f"{self.scope} {self.label}"

    @property
    def worse_by(self) -> float:
        """How much worse, in the check's own polarity (positive = worse)."""
        return self.result.delta if self.negative else -self.result.delta

    @property
    def broke_fixed(self) -> tuple[int, int]:
        """Cases that went right -> wrong, and wrong -> right."""
        pc = self.result
        return (pc.only_a, pc.only_b) if self.negative else (pc.only_b, pc.only_a)

    def text(self) -> str:
        pc = self.result
        broke, fixed = self.broke_fixed
        iv = pc.interval
        return (
            f"{self.where}: {self.check} {pct(pc.rate_b)} → {pct(pc.rate_a)} ({pp(pc.delta)}, 95% CI "
            f"[{pp(iv.low, False)}, {pp(iv.high, False)}] pp, n = {pc.n} paired cases; {broke} broken / {fixed} "
            f"fixed): worse by more than {pp(self.tolerance, False)} pp, one-sided score test {p_text(self.p_value)}, "
            f"Holm-adjusted over {plural(self.m, 'cell')} {p_text(self.p_adjusted)}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "label": self.label,
            "check": self.check,
            "delta": self.result.delta,
            "ci": self.result.interval.as_dict(),
            "n": self.result.n,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "tests": self.m,
            "tolerance": self.tolerance,
            "text": self.text(),
        }


@dataclass(frozen=True)
class Unjudged:
    """A scope-check cell too small to show a regression: even if every case it got right in the
    baseline broke, the one-sided test could not pass the strictest Holm step (alpha over the number of
    cells that had something to lose)."""

    scope: str
    label: str
    check: str
    n: int
    passed_before: int
    best_p: float

    def text(self) -> str:
        where = "all shared cases" if self.scope == "all" else f"{self.scope} {self.label}"
        case = "case" if self.passed_before == 1 else "cases"
        return (
            f"{where}: {self.check}, {self.n} paired cases: too small to judge (even losing all {self.passed_before} "
            f"{case} it got right in the baseline would give {p_text(self.best_p)}, short of the Holm level)"
        )


@dataclass
class Suggestion:
    verdict: str | None  # promote | reject | repair | branch | None (cannot judge)
    reasons: list[str] = field(default_factory=list)
    checks: list[RuleCheck] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)
    unjudged: list[Unjudged] = field(default_factory=list)
    tests: int = 0  # scope-check cells tested for a regression (the Holm family)
    missable: list[str] = field(default_factory=list)  # with no regression: the drops each cell could miss

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reasons": self.reasons,
            "checks": [c.as_dict() for c in self.checks],
            "regressions": [r.as_dict() for r in self.regressions],
            "too_small_to_judge": [u.text() for u in self.unjudged],
            "regression_tests": self.tests,
            "could_have_missed": self.missable,
        }


@dataclass
class PromotionInput:
    delta: HeadlineDelta | None
    comparison: ProbeComparison | None
    headline_metric: str | None
    threshold: Callable[[str], float]
    status: str = "finished"
    repair_comparison: ProbeComparison | None = None  # repaired probe (a) vs raw probe (b)
    held: HeldConstant | None = None
    signal_lost_at: float | None = None  # RL: the step from which the reward signal vanished
    headline_is_rate: bool = False
    alpha: float = 0.05
    min_effect: float = 0.0
    seed_level_hint: str | None = None  # where a seed-level comparison of this run lives, if any
    measurement: Measurement | None = None  # analysis.measurement: not one measurement, no verdict
    # the run's recipe against the baseline's recipe, seeds as the unit (analysis.recipes): when set, it is the
    # headline rule's evidence and the paired item test is shown as the checkpoint comparison, deciding nothing
    recipe: RecipeLevel | None = None
    # the run's gate.json (the compiler / gold-asset gate): when it says passed or failed, a gate of the rules
    compiler_gate: Gate | None = None


def _count(items: Sized, noun: str) -> str:
    return plural(len(items), noun)


def _change(delta: HeadlineDelta, is_rate: bool) -> str:
    """The headline change with its CI, p, n and unit, from the numbers themselves."""
    text = delta_text(delta.delta, is_rate)
    iv = delta.interval
    if iv is not None:
        lo, hi = (pp(iv.low, False), pp(iv.high, False)) if is_rate else (num(iv.low), num(iv.high))
        text += f", 95% CI [{lo}, {hi}]{' pp' if is_rate else ''}"
    if delta.p_value is not None:
        text += f", {p_text(delta.p_value)}"
    if delta.n:
        text += f", n = {delta.n}"
    return text + f" ({delta.unit})" if delta.unit != "none" else text


SEEDS_UNIT = "seeds as the unit: one headline value per run"


def recipe_change(r: RecipeLevel, is_rate: bool) -> str:
    """The recipe-level change with its CI, p and seeds, from the numbers themselves (the words of the run
    page's recipe line, `obs gate` and `obs summary`)."""
    text = delta_text(r.estimate, is_rate)
    if r.low is not None and r.high is not None:
        lo, hi = (pp(r.low, False), pp(r.high, False)) if is_rate else (num(r.low), num(r.high))
        text += f", 95% CI [{lo}, {hi}]{' pp' if is_rate else ''}"
    if r.p_value is not None:
        text += f", Welch {p_text(r.p_value)}"
    return text + f", {r.n} v {r.n_baseline} seeds ({SEEDS_UNIT})"


def _recipe_planning(p: PromotionInput, r: RecipeLevel) -> str:
    """What more seeds would buy: the seeds per recipe that detect the minimum effect (when set) with 80% power
    at the seed-to-seed spread seen on both sides; else that more seeds narrow the interval."""
    from obs.analysis.stats import sample_size_for_power

    spreads = [s for s in (r.sd, r.sd_baseline) if s is not None]
    sd = (sum(s * s for s in spreads) / len(spreads)) ** 0.5 if spreads else 0.0
    if p.min_effect > 0 and sd > 0:
        need = sample_size_for_power(p.min_effect / sd, alpha=p.alpha)
        if need is not None:
            shown = pp(sd, False) + " pp" if p.headline_is_rate else num(sd)
            return (
                f"at the seed-to-seed sd seen here ({shown}), detecting the minimum effect with 80% power takes "
                f"{need} seeds per recipe (here {r.n} v {r.n_baseline})"
            )
    return f"more seeds per recipe (here {r.n} v {r.n_baseline}) would narrow the interval"


def _headline_check(p: PromotionInput) -> str | None:
    """The headline metric when it is a probe check both runs share (regressions are read on it)."""
    c = p.comparison
    if c is None or p.headline_metric is None or p.headline_metric not in c.checks:
        return None
    return p.headline_metric


def _cells(p: PromotionInput) -> list[tuple[str, str, str, PairedComparison]]:
    """Every scope-check cell judged for a regression: splits and families on every check, and all
    shared cases on the checks other than the headline (the headline rule judges that one)."""
    c = p.comparison
    if c is None:
        return []
    head = _headline_check(p)
    out = []
    for scope in [c.overall, *c.by_split, *c.by_family]:
        for check, pc in scope.checks.items():
            if scope.scope == "all" and check == head:
                continue
            if pc.n:
                out.append((scope.scope, scope.label, check, pc))
    return out


def regression_tests(p: PromotionInput) -> tuple[list[Regression], list[Unjudged], int]:
    """(regressions, cells too small to judge, number of cells tested): one-sided score tests of
    "worse by more than the tolerance", Holm-adjusted over every cell that could show it."""
    c = p.comparison
    if c is None:
        return [], [], 0
    tolerance = p.threshold("regression_tolerance")
    cells = _cells(p)
    if not cells:
        return [], [], 0
    neg = np.array([check in c.negative for _, _, check, _ in cells])
    n = np.array([pc.n for *_, pc in cells], dtype=np.float64)
    only_a = np.array([pc.only_a for *_, pc in cells], dtype=np.float64)
    only_b = np.array([pc.only_b for *_, pc in cells], dtype=np.float64)
    both = np.array([pc.both_correct for *_, pc in cells], dtype=np.float64)
    # cases right in the baseline, in the check's polarity: what could break
    passed_before = np.where(neg, n - both - only_b, both + only_b)
    # worse = a negative check more often true (delta > +tol), a positive one less often (delta < -tol);
    # a negative check's cells are mirrored (b <-> c) so both read as "is delta below -tol?"
    b = np.where(neg, only_b, only_a)
    c_ = np.where(neg, only_a, only_b)
    p_one = score_tests(b, c_, n, -tolerance, "less")
    best = score_tests(np.zeros_like(n), passed_before, n, -tolerance, "less")
    judged: list[tuple[str, str, str, PairedComparison, float]] = []
    unjudged: list[Unjudged] = []
    # the strictest Holm step a cell's p must pass, over every cell that had something to lose
    strictest = p.alpha / max(1, int(np.count_nonzero(passed_before)))
    for k, (scope, label, check, pc) in enumerate(cells):
        if passed_before[k] == 0:
            continue  # nothing was right before: nothing can regress
        if not best[k] < strictest:
            unjudged.append(Unjudged(scope, label, check, pc.n, int(passed_before[k]), float(best[k])))
            continue
        judged.append((scope, label, check, pc, float(p_one[k])))
    adjusted = holm_adjust([j[4] for j in judged])
    m = len(judged)
    regs = [
        Regression(scope, label, check, check in c.negative, pc, tolerance, p_one, p_adj, m)
        for (scope, label, check, pc, p_one), p_adj in zip(judged, adjusted, strict=True)
        if p_adj < p.alpha
    ]
    return regs, unjudged, m


def could_miss(p: PromotionInput, m: int) -> list[str]:
    """For each split and family on the headline check (else the first check): the smallest drop the
    regression rule detects with 80 % power there, at the strictest Holm level alpha / m. "Nothing
    regressed" is only as strong as this."""
    from obs.analysis.detectable import detectable_drop

    c = p.comparison
    if c is None or not c.checks:
        return []
    check = _headline_check(p) or c.checks[0]
    tolerance = p.threshold("regression_tolerance")
    level = p.alpha / max(1, m)
    out = []
    for scope in [*c.by_split, *c.by_family]:
        pc = scope.checks.get(check)
        if pc is None or not pc.n:
            continue
        negative = check in c.negative
        passed_before = (pc.n - pc.both_correct - pc.only_b) if negative else (pc.both_correct + pc.only_b)
        drop = detectable_drop(pc.n, passed_before, pc.discordant / pc.n, tolerance, level)
        where = f"{scope.scope} {scope.label} ({pc.n} cases)"
        if drop is None:
            out.append(f"{where}: could miss any drop, even losing every case it got right")
        else:
            out.append(f"{where}: could miss a drop smaller than {pp(-drop)} in {check}")
    return out


def regressions(p: PromotionInput) -> list[Regression]:
    """The regressions of the promotion rule (see :func:`regression_tests`)."""
    return regression_tests(p)[0]


def gained_families(p: PromotionInput) -> list[str]:
    """Families whose headline rate rose significantly (one-sided score test, Holm over the families)
    by at least `family_gain`: the slices the run fixed."""
    c, head = p.comparison, _headline_check(p)
    if c is None or head is None:
        return []
    gain = p.threshold("family_gain")
    negative = head in c.negative
    fams = [(s.label, s.checks[head]) for s in c.by_family if head in s.checks and s.checks[head].n]
    if not fams:
        return []
    raw = [
        float(v)
        for v in score_tests(
            [pc.only_a for _, pc in fams],
            [pc.only_b for _, pc in fams],
            [pc.n for _, pc in fams],
            0.0,
            "less" if negative else "greater",
        )
    ]
    sign = -1.0 if negative else 1.0
    return [
        f"{label} {pp(pc.delta)}"
        for (label, pc), adj in zip(fams, holm_adjust(raw), strict=True)
        if adj < p.alpha and sign * pc.delta >= gain
    ]


def repairable_share(p: PromotionInput) -> tuple[float, int, int] | None:
    """(share, fixed, misses): of the raw misses on the headline check, how many the repair pass fixes."""
    rc = p.repair_comparison
    head = p.headline_metric
    if rc is None or head is None or head not in rc.overall.checks:
        return None
    pc = rc.overall.checks[head]  # a = repaired, b = raw
    if head in rc.negative:  # a miss is the check being true
        misses, fixed = pc.both_correct + pc.only_b, pc.only_b
    else:
        misses, fixed = pc.only_a + pc.both_wrong, pc.only_a
    if misses == 0:
        return None
    return fixed / misses, fixed, misses


def _effect(p: PromotionInput) -> str:
    if not p.min_effect:
        return ""
    shown = pp(p.min_effect, False) + " pp" if p.headline_is_rate else num(p.min_effect)
    return f" by at least the minimum effect ({shown})"


def suggest_verdict(p: PromotionInput) -> Suggestion:
    """The promotion rule's suggestion: none when the run cannot be judged (and why), else the rule checks and
    a verdict: a decisive change of the headline first, else what an inconclusive one leaves to do."""
    regs, unjudged, m = regression_tests(p)  # reported whether or not a verdict can be suggested
    unjudgeable = _why_not_judged(p, regs, unjudged, m)
    if unjudgeable is not None:
        return unjudgeable
    assert p.delta is not None  # _why_not_judged answers for a run without a delta
    j = _Judging(p, p.delta, p.headline_metric or "the headline", regs, unjudged, m)
    _add_rule_checks(j)
    return _decisive_verdict(j) or _inconclusive_verdict(j)


def _why_not_judged(p: PromotionInput, regs: list[Regression], unjudged: list[Unjudged], m: int) -> Suggestion | None:
    """No verdict, and the reasons, for a run the rules cannot judge: still running, measured unlike its
    baseline, no baseline or no delta, one run against one run, too few shared cases. None otherwise."""

    def nothing(*reasons: str) -> Suggestion:
        return Suggestion(None, [r for r in reasons if r], regressions=regs, unjudged=unjudged, tests=m)

    if p.status in ("running", "queued"):
        return nothing("the run has not finished: the rules judge it when it has")
    if p.measurement is not None and not p.measurement.ok:
        return nothing(
            p.measurement.text(),
            "to judge this run, measure it and its baseline on the same probe, compiler, tokenizer and DSL "
            "(re-run the baseline on the new contract, or this run on the frozen one)",
        )
    if p.delta is None:
        lost = p.signal_lost_at
        return nothing(
            "no baseline to compare with: promotion is judged against a frozen baseline (set `baseline:`)",
            f"the diagnosis found the reward signal vanished from step {lost:g}" if lost is not None else "",
        )
    if p.delta.delta is None:
        return nothing(p.delta.method)
    name = p.headline_metric or "the headline"
    d = p.delta
    r = p.recipe
    if r is not None and r.outcome == NOT_TESTED:
        return nothing(
            f"{name} at the recipe level: {recipe_change(r, p.headline_is_rate)}: not tested"
            + (f" ({r.problem})" if r.problem else ""),
            "the seeds of this recipe and of the baseline's are known, so the paired test of this checkpoint "
            "alone does not promote the recipe: add seeds that vary",
        )
    if r is None and d.verdict == NOT_TESTED:
        return nothing(
            f"{name}: {delta_text(d.delta, p.headline_is_rate)} against the baseline, {d.method}; the promotion "
            "rules need replicates (paired probe cases, or seeds) and do not judge one run against one run",
            p.seed_level_hint or "",
        )
    from obs.analysis.detectable import min_cases

    fewest = min_cases(p.alpha)
    if r is None and d.unit == PROBE_UNIT and d.n is not None and d.n < fewest:
        return nothing(
            f"{name}: only {d.n} shared probe case{'s' if d.n != 1 else ''} with the baseline, too few to judge: no "
            f"change in fewer than {fewest} cases can be significant at α = {p.alpha:g} (exact test); add cases "
            f"(at least {fewest}, and many more to detect a change of a few points)"
        )
    return None


@dataclass
class _Judging:
    """A run the rules can judge, while they do: its input, the regression tests' results, the rule checks
    made so far and what they found."""

    p: PromotionInput
    d: HeadlineDelta
    name: str  # the headline metric, as the reasons name it
    regs: list[Regression]
    unjudged: list[Unjudged]
    m: int
    checks: list[RuleCheck] = field(default_factory=list)
    held_ok: bool | None = None
    missable: list[str] = field(default_factory=list)
    share: tuple[float, int, int] | None = None
    limit: float = 0.0
    gains: list[str] = field(default_factory=list)
    compiler_ok: bool | None = None  # gate.json's overall result (None: no gate.json, or no result in it)

    @property
    def verdict(self) -> str:
        """The headline rule's evidence: the recipe against the baseline's recipe when both have seeds (the
        checkpoint's paired test then decides nothing), else this run against its baseline."""
        return self.p.recipe.outcome if self.p.recipe is not None else self.d.verdict

    @property
    def level(self) -> str:
        """Where the reasons say the change was judged."""
        return " at the recipe level (seeds as the unit)" if self.p.recipe is not None else ""

    def done(self, verdict: str | None, *reasons: str) -> Suggestion:
        said = [r for r in reasons if r]
        if self.compiler_ok is False and not any(COMPILER_FAILED in r for r in said):
            said.append(COMPILER_FAILED)  # whatever the verdict, a failed compiler gate is said with it
        return Suggestion(verdict, said, self.checks, self.regs, self.unjudged, self.m, self.missable)


def _add_rule_checks(j: _Judging) -> None:
    """The promotion rule's checks in page order: the headline improves, one axis changed, no slice regressed
    (and the cells too small to judge), raw misses mostly repairable."""
    p, d, regs, r = j.p, j.d, j.regs, j.p.recipe
    word = OUTCOME_WORDS.get(j.verdict, j.verdict)
    if r is not None:
        j.checks.append(
            RuleCheck(
                f"recipe improves (Welch's t over seeds, p < {p.alpha:g}, 95% CI above zero){_effect(p)}",
                j.verdict == IMPROVEMENT,
                f"{j.name}: {recipe_change(r, p.headline_is_rate)}: {word}",
            )
        )
        if d.verdict != NOT_TESTED:
            j.checks.append(
                RuleCheck(
                    "this checkpoint vs the baseline's (paired items: two checkpoints, not two recipes)",
                    d.verdict == IMPROVEMENT,
                    f"{j.name}: {_change(d, p.headline_is_rate)}: {OUTCOME_WORDS.get(d.verdict, d.verdict)}",
                    gate=False,
                )
            )
    else:
        j.checks.append(
            RuleCheck(
                f"headline improves (p < {p.alpha:g}, 95% CI above zero){_effect(p)}",
                j.verdict == IMPROVEMENT,
                f"{j.name}: {_change(d, p.headline_is_rate)}: {word}",
            )
        )
    if p.held is not None and p.held.baseline_id is not None:
        j.held_ok = p.held.clean
        j.checks.append(RuleCheck("one axis changed", j.held_ok, p.held.verdict_text()))
    if p.compiler_gate is not None:
        j.compiler_ok = p.compiler_gate.passed
        j.checks.append(
            RuleCheck("compiler gate passes (gate.json)", j.compiler_ok, compiler_gate_text(p.compiler_gate))
        )
    tolerance = p.threshold("regression_tolerance")
    if p.comparison is not None:
        j.missable = could_miss(p, j.m) if not regs else []
        j.checks.append(
            RuleCheck(
                f"no split or family worse by more than {pp(tolerance, False)} pp (one-sided score test, "
                f"Holm over {plural(j.m, 'cell')})",
                not regs,
                (
                    "none found; what this probe could have missed (the smallest drop the rule detects with 80% "
                    "power at each cell's size and churn):"
                    if j.missable
                    else "none"
                )
                if not regs
                else f"{_count(regs, 'regression')}:",
                items=tuple(r.text() for r in regs) if regs else tuple(j.missable),
            )
        )
        if j.unjudged:
            j.checks.append(
                RuleCheck(
                    "cells too small to judge",
                    None,
                    f"{plural(len(j.unjudged), 'scope-check cell')} cannot show a regression "
                    "at this size (not counted as passing or failing):",
                    gate=False,
                    items=tuple(u.text() for u in j.unjudged),
                )
            )
    j.share = repairable_share(p)
    j.limit = p.threshold("repairable_share")
    if j.share is not None:
        j.checks.append(
            RuleCheck(
                f"raw misses mostly repairable (≥ {100 * j.limit:.0f}%)",
                j.share[0] >= j.limit,
                f"the repair pass fixes {j.share[1]} of {j.share[2]} raw misses ({100 * j.share[0]:.0f}%)",
                gate=False,
            )
        )
    j.gains = gained_families(p)


COMPILER_FAILED = (
    "the compiler gate failed (gate.json): the numbers pass through a compiler that fails its own gold-asset gate, "
    "so a compiler fault and a model fault look alike here; do a compiler pass and measure again"
)


def compiler_gate_text(gate: Gate) -> str:
    """gate.json's result in words: passed or failed, the gold-asset parity against its threshold, the checks
    that failed; said of a gate.json without an overall result too."""
    if gate.passed is None:
        return "gate.json has no overall `passed`: not judged (give it one to make the compiler gate a rule)"
    text = "gate.json passed" if gate.passed else "gate.json failed"
    if gate.parity_score is not None:
        text += f": gold-asset parity {pct(gate.parity_score)}"
        if gate.threshold is not None:
            text += f" (threshold {pct(gate.threshold)})"
    failed = [c.name for c in gate.checks if c.passed is False]
    if gate.checks:
        text += f"; {len(gate.checks) - len(failed)} of {plural(len(gate.checks), 'check')} passed"
        if failed:
            text += f" (failed: {', '.join(failed[:5])}{', ...' if len(failed) > 5 else ''})"
    return text


def _decisive_verdict(j: _Judging) -> Suggestion | None:
    """The verdict when the axes are not clean or the headline's change is decisive (better, worse, of an
    unestablished size, negligible); None when it is inconclusive."""
    p, name, regs, gains, verdict, level = j.p, j.name, j.regs, j.gains, j.verdict, j.level
    if j.held_ok is False:
        return j.done(
            "reject",
            f"{p.held.verdict_text() if p.held else ''}: whatever the numbers say, they cannot be attributed",
            f"it did move {', '.join(gains)}: worth re-testing on one axis" if gains else "",
        )
    if verdict == IMPROVEMENT and not regs and j.compiler_ok is not False:
        return j.done(
            "promote",
            f"{name} improved significantly{_effect(p)}{level} and no split or family regressed beyond tolerance",
        )
    if verdict == IMPROVEMENT and not regs:
        return j.done(
            "repair", f"{name} improved significantly{_effect(p)}{level}, but not promoted: {COMPILER_FAILED}"
        )
    if verdict == IMPROVEMENT:
        return j.done(
            "repair",
            f"{name} improved{level}, but with {_count(regs, 'regression')} beyond tolerance: keep the change, restore "
            "the regressed slices (anchor replay) and re-run before promoting",
        )
    if verdict == DEGRADATION:
        return j.done(
            "reject",
            f"{name} got significantly worse{level} (95% CI below zero)",
            f"it did fix {', '.join(gains)}: keep that idea, not this run" if gains else "",
        )
    if verdict == SIZE_UNKNOWN:
        unknown = (
            f"{name} improved significantly{level}, but the 95% CI reaches below the minimum effect of interest as "
            "well as above it: the size of the gain is not established"
        )
        if regs:
            return j.done("reject", unknown, f"and {_count(regs, 'regression')} beyond tolerance")
        return j.done(
            None, unknown, "not promoted on an unestablished size: more cases (or seeds) would narrow the interval"
        )
    if verdict == NEGLIGIBLE:
        small = (
            f"{name} changed significantly{level}, but by less than the minimum effect of interest (the whole 95% CI)"
        )
        if regs:
            return j.done("reject", small, f"and {_count(regs, 'regression')} beyond tolerance")
        return j.done("branch", small, "not worth promoting: branch to a change that moves it further")
    return None


def _inconclusive_verdict(j: _Judging) -> Suggestion:
    """The verdict when the headline's change is not significant: repair what regressed or what the repair pass
    fixes, reject on regressions alone, else branch, saying how large a change the probe could have missed."""
    p, d, name, regs, gains, share, r, level = j.p, j.d, j.name, j.regs, j.gains, j.share, j.p.recipe, j.level
    low, high = (r.low, r.high) if r is not None else (d.interval.low, d.interval.high) if d.interval else (None, None)
    inconclusive = (
        f"{name}: the 95% CI of the change{level} includes zero"
        if low is not None and high is not None and low <= 0.0 <= high
        else f"{name}: the change is not significant{level}"
    )
    if gains and regs:
        return j.done(
            "repair",
            inconclusive,
            f"the run fixed {', '.join(gains)} but other slices regressed: repair them with anchor replay",
        )
    if share is not None and share[0] >= j.limit:
        return j.done(
            "repair",
            inconclusive,
            f"the repair pass fixes {100 * share[0]:.0f}% of the raw misses: train less, validate more "
            "(route the rest to deterministic decode/repair)",
        )
    if regs:
        return j.done("reject", inconclusive, f"and {_count(regs, 'regression')} beyond tolerance")
    if r is not None:
        return j.done(
            "branch",
            inconclusive,
            f"no regression found and no significant improvement of the recipe: {_recipe_planning(p, r)}; branch "
            "to a different axis, or add seeds to look for a smaller effect",
        )
    from obs.analysis.detectable import detectable_gain

    gain = None
    head_pc = p.comparison.overall.checks.get(p.headline_metric or "") if p.comparison is not None else None
    if head_pc is not None and head_pc.n:
        gain = detectable_gain(head_pc.n, max(head_pc.discordant, 1) / head_pc.n, p.alpha)
    missed = (
        f"at {head_pc.n} cases the test detects a change of {pp(gain, False)} pp with 80% power, so a smaller one "
        "could have been missed"
        if head_pc is not None and gain is not None
        else "the probe is too small to say how large a change could have been missed"
    )
    return j.done(
        "branch",
        inconclusive,
        f"no regression found and no significant improvement: {missed}; branch to a different axis, or enlarge "
        "the probe to look for a smaller effect",
    )
