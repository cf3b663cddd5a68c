"""A run against its baseline: the headline delta and the paired probe comparison.

The probe comparison pairs cases by id, so item difficulty cancels out: a 4-point gain on the same
180 cases is judged by the cases that flipped, with Tango's score interval of the gap and the score
(McNemar) test it inverts, not by two independent rates. Cases present in only one run are counted
and listed, never dropped.

The unit of replication is explicit in every delta (`HeadlineDelta.unit`): probe cases (paired),
evaluation items (from reported standard errors), or none. One run against one run on a logged
series has no replicates - its logged points are autocorrelated and trending, not independent - so
that delta is described ("one run each: no test; seed-to-seed variation unknown") and never tested;
the seed-level comparison, when both runs belong to seed groups, is made on the campaign or arms page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from obs.analysis.digest import RunDigest, WindowStat
from obs.analysis.scoreboard import groups_of, order_checks, split_sort_key
from obs.analysis.stats import (
    NOT_TESTED,
    PAIRED_METHOD,
    Interval,
    PairedComparison,
    holm_family,
    paired_comparisons,
    recommendation,
)
from obs.probetable import ABSENT, FALSE, TRUE, CaseOutcome, CaseOutcomes, IdList, align
from obs.sitemodel import nonfinite_of

PROBE_UNIT = "probe cases, paired by id"
ONE_RUN_EACH = "one run each: no test; seed-to-seed variation unknown"


@dataclass
class ScopeComparison:
    """One scope (all cases, one split, one family): a paired comparison per check."""

    scope: str
    label: str
    n_shared: int
    checks: dict[str, PairedComparison]

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "label": self.label,
            "n_shared": self.n_shared,
            "checks": {k: v.as_dict() for k, v in self.checks.items()},
        }


@dataclass
class Flips:
    check: str
    broke: Sequence[str]  # passed in the baseline, fails here (an IdList: read as a list of ids)
    fixed: Sequence[str]  # failed in the baseline, passes here

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "right_to_wrong": self.broke, "wrong_to_right": self.fixed}


@dataclass
class ProbeComparison:
    baseline_id: str
    checks: list[str]
    negative: frozenset[str]
    overall: ScopeComparison
    by_split: list[ScopeComparison] = field(default_factory=list)
    by_family: list[ScopeComparison] = field(default_factory=list)
    only_here: Sequence[str] = field(default_factory=list)
    only_baseline: Sequence[str] = field(default_factory=list)
    flips: list[Flips] = field(default_factory=list)
    alpha: float = 0.05
    min_effect: float = 0.0

    @property
    def family(self) -> str | None:
        """What the cells' labels were Holm-adjusted over (None: a single cell, nothing adjusted)."""
        for scope in [self.overall, *self.by_split, *self.by_family]:
            for pc in scope.checks.values():
                if pc.family:
                    return pc.family
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline_id,
            "family": self.family,
            "checks": self.checks,
            "overall": self.overall.as_dict(),
            "by_split": [s.as_dict() for s in self.by_split],
            "by_family": [s.as_dict() for s in self.by_family],
            "only_in_this_run": self.only_here,
            "only_in_baseline": self.only_baseline,
            "flips": [f.as_dict() for f in self.flips],
            "alpha": self.alpha,
            "min_effect": self.min_effect,
            "unit": PROBE_UNIT,
            "method": PAIRED_METHOD,
        }


def compare_probes(
    here: CaseOutcomes | Mapping[str, CaseOutcome],
    base: CaseOutcomes | Mapping[str, CaseOutcome],
    baseline_id: str,
    is_negative: Callable[[str], bool],
    alpha: float = 0.05,
    min_effect: float = 0.0,
    primary: str | None = None,
) -> ProbeComparison:
    """Every check in every scope (all shared cases, each split, each family), paired by case id.

    The cells are one family of tests: their labels use Holm-adjusted p-values over every cell but the
    `primary` check on all shared cases (the headline: one pre-declared test, judged on its own p), so a
    table of forty cells does not mark two of them "significant" by chance.
    """
    here, base = CaseOutcomes.of(here), CaseOutcomes.of(base)
    matched = align(here, base)
    ih, ib = matched.here, matched.base
    checks = order_checks(here.check_names(ih) & base.check_names(ib))
    negative = frozenset(c for c in checks if is_negative(c))
    split_rows = groups_of(here.split.take(ih))  # positions in the shared (sorted) order
    family_rows = groups_of(here.family.take(ih))
    splits = sorted(split_rows, key=split_sort_key)
    families = sorted(family_rows)
    everything = np.arange(ih.size, dtype=np.intp)
    scopes: list[tuple[str, str, npt.NDArray[np.intp]]] = [("all", "all shared cases", everything)]
    scopes += [("split", s, split_rows[s]) for s in splits]
    scopes += [("family", f, family_rows[f]) for f in families]
    # each check's outcomes on the shared cases, here and in the baseline (-1: the case lacks it)
    pairs_of = {c: (here.checks[c][ih], base.checks[c][ib]) for c in checks}
    # every (scope, check) pair in one vectorised interval search
    cells: list[tuple[int, str]] = []
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    for k, (_, _, pos) in enumerate(scopes):
        for check in checks:
            h, b = pairs_of[check][0][pos], pairs_of[check][1][pos]
            both = (h >= 0) & (b >= 0)
            if bool(np.any(both)):
                cells.append((k, check))
                pairs.append((h[both] == TRUE, b[both] == TRUE))
    hib = [c not in negative for _, c in cells]
    results = paired_comparisons(pairs, higher_is_better=hib, alpha=alpha, min_effect=min_effect)
    in_family = [i for i, (k, check) in enumerate(cells) if not (k == 0 and check == primary)]
    if len(in_family) > 1:
        other = " other" if len(in_family) < len(cells) else ""
        family = f"Holm over the {len(in_family)}{other} cells of this comparison"
        adjusted = holm_family([results[i] for i in in_family], [hib[i] for i in in_family], family)
        for i, result in zip(in_family, adjusted, strict=True):
            results[i] = result
    per_scope: list[dict[str, PairedComparison]] = [{} for _ in scopes]
    for (k, check), result in zip(cells, results, strict=True):
        per_scope[k][check] = result
    built = [ScopeComparison(kind, label, int(pos.size), per_scope[k]) for k, (kind, label, pos) in enumerate(scopes)]
    overall, by_split, by_family = built[0], built[1 : 1 + len(splits)], built[1 + len(splits) :]
    flips = []
    for check in checks:
        bad = TRUE if is_negative(check) else FALSE
        h, b = pairs_of[check]
        both = (h >= 0) & (b >= 0)
        broke = both & (b != bad) & (h == bad)
        fixed = both & (b == bad) & (h != bad)
        flips.append(Flips(check, IdList(matched.ids[broke]), IdList(matched.ids[fixed])))
    return ProbeComparison(
        baseline_id=baseline_id,
        checks=checks,
        negative=negative,
        overall=overall,
        by_split=by_split,
        by_family=by_family,
        only_here=IdList(matched.only_here),
        only_baseline=IdList(matched.only_base),
        flips=flips,
        alpha=alpha,
        min_effect=min_effect,
    )


@dataclass
class Headline:
    """The one number at the top of a run page, and where it came from."""

    metric: str | None
    value: float | None
    kind: str | None  # probe | series | summary | eval | aggregate
    detail: str
    higher_is_better: bool = True
    n: int | None = None
    stderr: float | None = None
    missing: str | None = None  # a primary metric was named and the run does not have it: why there is no number
    reason: str = ""  # why this metric leads (analysis.headline.choose_headline, the one rule that picks it)
    members: tuple[str, ...] = ()  # kind "aggregate": the metrics whose mean it is

    @property
    def is_rate(self) -> bool:
        return self.kind == "probe" or (
            self.value is not None
            and 0.0 <= self.value <= 1.0
            and self.metric is not None
            and any(t in self.metric.lower() for t in ("rate", "acc", "exact", "match", "pass", "correct", "f1"))
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "value": self.value if self.value is None or math.isfinite(self.value) else None,
            "nonfinite": nonfinite_of(self.value),
            "kind": self.kind,
            "detail": self.detail,
            "higher_is_better": self.higher_is_better,
            "n": self.n,
            "stderr": _num(self.stderr),
            "reason": self.reason,
            "members": list(self.members),
        }


@dataclass
class HeadlineDelta:
    """The headline against the baseline, with its unit of replication (`unit`) and its size (`n`).

    `verdict` is a `stats.Recommendation`; "not_tested" when there are no replicates to test with
    (one run each on a logged series, final summaries only): the delta is then descriptive.
    """

    baseline_id: str
    baseline_value: float | None
    delta: float | None
    interval: Interval | None
    p_value: float | None
    method: str
    n: int | None = None
    verdict: str = "insufficient_statistical_evidence"
    unit: str = "none"
    baseline_subset: str | None = None  # set when `baseline_value` is over fewer cases than the baseline has
    # what the test is about: "checkpoint" for paired items of one run each (seed-to-seed variation is not in
    # it), with the seeds per recipe a claim about the recipe would need (`recipe_note`)
    claim: str | None = None
    recipe_note: str | None = None
    # paired probe cases: (right here only, right in the baseline only), the discordant pairs the interval is
    # made from, so a ladder can remake it at another level (analysis.ladder.ladder_claim)
    pairs: tuple[int, int] | None = None

    @property
    def claim_text(self) -> str:
        """What the test is about, in words (the checkpoint caveat for paired items of one run each)."""
        return CHECKPOINT if self.claim == "checkpoint" else ""

    @property
    def better(self) -> bool | None:
        """True/False when the CI excludes zero in the better/worse direction; None when it does not."""
        if self.verdict == "statistically_significant_improvement":
            return True
        if self.verdict == "significant_degradation":
            return False
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline_id,
            "baseline_value": _num(self.baseline_value),
            "delta": _num(self.delta),
            "ci": self.interval.as_dict() if self.interval else None,
            "p_value": _num(self.p_value),
            "method": self.method,
            "n": self.n,
            "unit": self.unit,
            "verdict": self.verdict,
            "baseline_subset": self.baseline_subset,
            "claim": self.claim,
            "recipe_note": self.recipe_note,
            "pairs": list(self.pairs) if self.pairs else None,
        }


def _num(value: float | None) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def headline_delta(
    headline: Headline,
    here: RunDigest,
    base: RunDigest,
    is_negative: Callable[[str], bool],
    alpha: float,
    comparison: ProbeComparison | None = None,
    min_effect: float = 0.0,
) -> HeadlineDelta | None:
    """Delta of the headline metric vs the baseline, with its uncertainty where replicates exist.

    A probe headline reuses the run's paired comparison when it is given, so the number at the
    top of the page and the one in the probe table are the same computation.
    """
    name = headline.metric
    if name is None or headline.value is None:
        return None
    if (
        headline.kind == "probe"
        and comparison is not None
        and name in comparison.overall.checks
        and comparison.overall.checks[name].family is None  # the headline is its own test, not a family member
    ):
        return _subset(_probe_delta(comparison.overall.checks[name], base.id, is_negative(name)), base, name)
    if headline.kind == "probe" and here.probe and base.probe:
        matched = align(here.probe, base.probe)
        h = here.probe.checks[name][matched.here] if name in here.probe.checks else np.array([], dtype=np.int8)
        b_col = base.probe.checks.get(name)
        b_all = b_col[matched.base] if b_col is not None else np.full(h.size, ABSENT, dtype=np.int8)
        both = (h >= 0) & (b_all >= 0)
        if not bool(np.any(both)):
            return HeadlineDelta(base.id, None, None, None, None, "no shared probe cases with the baseline")
        a, b = h[both] == TRUE, b_all[both] == TRUE
        (pc,) = paired_comparisons(
            [(a, b)], higher_is_better=[not is_negative(name)], alpha=alpha, min_effect=min_effect
        )
        return _subset(_probe_delta(pc, base.id, is_negative(name)), base, name)
    if headline.kind == "series" and name in here.finals and name in base.finals:
        return _series_delta(here.finals[name], base.finals[name], base.id)
    if headline.kind == "summary" and name in base.summary:
        return HeadlineDelta(
            base.id,
            base.summary[name],
            headline.value - base.summary[name],
            None,
            None,
            f"{ONE_RUN_EACH} (final summary values)",
            verdict=NOT_TESTED,
        )
    if headline.kind == "eval" and name in base.evals:
        value_b, se_b = base.evals[name]
        se_a = headline.stderr
        delta = headline.value - value_b
        if se_a is not None and se_b is not None and math.hypot(se_a, se_b) > 0:
            se = math.hypot(se_a, se_b)
            z = NormalDist().inv_cdf(0.975)
            p = 2 * (1 - NormalDist().cdf(abs(delta) / se))
            ci = Interval(delta - z * se, delta + z * se, 0.95)
            if headline.is_rate and 0.0 <= value_b <= 1.0:  # a difference of two rates lies in [-1, 1]
                ci = Interval(max(-1.0, ci.low), min(1.0, ci.high), 0.95)
            return HeadlineDelta(
                base.id,
                value_b,
                delta,
                ci,
                p,
                "normal approximation from the standard errors over items each evaluation reported (two "
                "independent samples: conservative when the items are shared)",
                verdict=_verdict(delta, ci, p, alpha, headline.higher_is_better, min_effect),
                unit="evaluation items (from the reported standard errors; n not reported)",
                claim="checkpoint",  # items of one evaluation each: seed-to-seed variation is not in it either
                recipe_note=recipe_note(delta, min_effect, alpha),
            )
        return HeadlineDelta(
            base.id, value_b, delta, None, None, "no standard error reported: no test", verdict=NOT_TESTED
        )
    return HeadlineDelta(base.id, None, None, None, None, f"the baseline has no {name}")


def _subset(delta: HeadlineDelta, base: RunDigest, name: str) -> HeadlineDelta:
    """Say so when the baseline's rate is over the shared cases only, not over all of the baseline's."""
    column = base.probe.checks.get(name) if base.probe is not None else None
    total = int(np.count_nonzero(column >= 0)) if column is not None else 0
    if delta.n is not None and total != delta.n:
        delta.baseline_subset = f"on the {delta.n} cases shared with this run (the baseline has {total})"
    return delta


CHECKPOINT = (
    "compares two checkpoints, one run each: items are the only variation in this test, seed-to-seed "
    "variation is unknown, so it is not a claim about the recipe"
)


def recipe_note(delta: float, min_effect: float, alpha: float) -> str | None:
    """Seeds per recipe a seed-level claim would need (80% power, two-sided Welch/t at `alpha`), for the
    minimum effect when set, else for the observed change, at two plausible ratios of seed-to-seed sd to that
    effect: the sd is what one seed per side cannot tell."""
    effect = min_effect if min_effect > 0 else abs(delta)
    if not effect > 0:
        return None
    what = "the minimum effect" if min_effect > 0 else "a change of this size"
    half, same = _seeds_for(2.0, alpha), _seeds_for(1.0, alpha)
    return (
        f"for a claim about the recipe, run seeds of both: to detect {what} with 80% power at α = {alpha:g}, "
        f"{half} seeds per recipe if seed-to-seed sd is half of it, {same} if it equals it"
    )


# sample_size_for_power(d, alpha=0.05) for the two ratios recipe_note uses, so a run page does not import
# scipy for them (tests/unit/test_stats_round_two.py checks the table against the function)
SEEDS_AT_ALPHA_05 = {2.0: 6, 1.0: 17}


def _seeds_for(d: float, alpha: float) -> int | None:
    if alpha == 0.05 and d in SEEDS_AT_ALPHA_05:
        return SEEDS_AT_ALPHA_05[d]
    from obs.analysis.stats import sample_size_for_power

    return sample_size_for_power(d, alpha=alpha)


def _probe_delta(pc: PairedComparison, baseline_id: str, negative: bool) -> HeadlineDelta:
    fixed, broken = (pc.only_b, pc.only_a) if negative else (pc.only_a, pc.only_b)
    return HeadlineDelta(
        baseline_id,
        pc.rate_b,
        pc.delta,
        pc.interval,
        pc.p_value,
        f"paired on {pc.n} shared cases ({fixed} fixed, {broken} broken): Tango score 95% CI and the score "
        "(McNemar) test it inverts",
        pc.n,
        pc.recommendation,
        PROBE_UNIT,
        claim="checkpoint",
        recipe_note=recipe_note(pc.delta, pc.min_effect, pc.alpha),
        pairs=(pc.only_a, pc.only_b),
    )


def _verdict(delta: float, ci: Interval, p: float, alpha: float, higher_is_better: bool, min_effect: float) -> str:
    return str(recommendation(p, delta, ci, alpha=alpha, higher_is_better=higher_is_better, min_effect=min_effect))


def _series_delta(a: WindowStat, b: WindowStat, baseline_id: str) -> HeadlineDelta:
    """One run against one run on a logged series: a description, never a test.

    The logged points of one run are autocorrelated and still trending, and they all come from one
    seed: a test over them measures how smooth the curve is, not whether the change is real (two
    seeds of the same condition come out "significant" most of the time; bench/stats_calibration.py).
    """
    points = f"{a.n} vs {b.n} logged points" if (a.n, b.n) != (1, 1) else "last logged values"
    return HeadlineDelta(
        baseline_id,
        b.mean,
        a.mean - b.mean,
        None,
        None,
        f"{ONE_RUN_EACH} (difference of the final-window means, {points})",
        verdict=NOT_TESTED,
    )
