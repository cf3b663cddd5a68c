"""pass@k: when each probe case was sampled several times, how often would k samples contain a right one?

With n samples of an item of which c are right, the unbiased pass@k of the item is
``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021); the probe's pass@k is the mean over items, with an
interval over items (items are the unit: Wilson at the design-effect n, :func:`stats.mean_interval_01`).
Reported per split and family for k = 1, 2, 4, ... up to the smallest number of samples an item has.

Two systems on shared items (a run and its baseline) are compared item by item, pairs kept
(:func:`stats.paired_means`). When the records carry a ``selected`` flag (the sample a reranker or
verifier picked), best-of-n - any sample right, the oracle - is set against the selector: what the
selector leaves on the table.

Pure: a run's probe samples (and the baseline's digest) in, a presentation model out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from obs.analysis.digest import CaseOutcome, CaseOutcomes, SampleCounts
from obs.analysis.scoreboard import order_checks, split_sort_key
from obs.analysis.stats import (
    Interval,
    PairedComparison,
    PairedMeans,
    mean_interval_01,
    paired_comparison,
    paired_means,
    pass_at_k,
    wilson_interval,
)
from obs.model import Probe

UNIT = "probe cases (items); samples within a case are not replicates"
MAX_K_SHOWN = 64


@dataclass(frozen=True)
class PassAtK:
    k: int
    value: float
    interval: Interval


@dataclass(frozen=True)
class PassKScope:
    scope: str  # all | split | family
    label: str
    n_items: int
    values: list[PassAtK]


@dataclass(frozen=True)
class PassKDelta:
    """pass@k of this run against the baseline's on the items both sampled (this run minus baseline)."""

    k: int
    result: PairedMeans


@dataclass(frozen=True)
class Selector:
    """Best-of-n (the oracle: any sample right) against the sample the selector picked, per item."""

    n_items: int
    oracle: float
    oracle_interval: Interval
    selected: float
    selected_interval: Interval
    comparison: PairedComparison  # selected (a) vs oracle (b)

    @property
    def left(self) -> int:
        """Items the oracle solves that the selector's pick gets wrong."""
        return self.comparison.only_b

    @property
    def gap_words(self) -> str:
        """What the selected-minus-best-of-n gap says. Best-of-n is an upper bound the selector can only
        approach, so a gap is the selector's shortfall, never a "degradation" of the run."""
        c = self.comparison
        if c.p_value < c.alpha and c.interval.high < 0.0:
            return "the selector falls significantly short of best-of-n"
        return "no significant gap between the selector and best-of-n"


@dataclass(frozen=True)
class PassK:
    check: str
    ks: list[int]
    samples_min: int
    samples_max: int
    n_items: int
    items_single: int  # cases with one sample only: left out of pass@k
    overall: PassKScope
    by_split: list[PassKScope] = field(default_factory=list)
    by_family: list[PassKScope] = field(default_factory=list)
    vs_baseline: list[PassKDelta] = field(default_factory=list)
    baseline_items: int = 0
    selector: Selector | None = None

    def as_dict(self) -> dict[str, Any]:
        def scope(s: PassKScope) -> dict[str, Any]:
            return {
                "scope": s.scope,
                "label": s.label,
                "n_items": s.n_items,
                "pass_at_k": {str(v.k): {"value": v.value, "ci": v.interval.as_dict()} for v in s.values},
            }

        out: dict[str, Any] = {
            "check": self.check,
            "k": self.ks,
            "samples_per_item": [self.samples_min, self.samples_max],
            "n_items": self.n_items,
            "items_with_one_sample": self.items_single,
            "unit": UNIT,
            "estimator": "unbiased pass@k = 1 - C(n - c, k) / C(n, k) per item (Chen et al. 2021), mean over items",
            "interval": "Wilson at n / design effect over items",
            "overall": scope(self.overall),
            "by_split": [scope(s) for s in self.by_split],
            "by_family": [scope(s) for s in self.by_family],
            "vs_baseline": {
                "items": self.baseline_items,
                "by_k": {str(d.k): d.result.as_dict() for d in self.vs_baseline},
            },
        }
        if self.selector is not None:
            sel = self.selector
            out["selector"] = {
                "n_items": sel.n_items,
                "best_of_n": {"value": sel.oracle, "ci": sel.oracle_interval.as_dict()},
                "selected": {"value": sel.selected, "ci": sel.selected_interval.as_dict()},
                "selected_minus_best_of_n": sel.comparison.as_dict(),
            }
        return out


def k_values(n_min: int) -> list[int]:
    """1, 2, 4, ... up to `n_min`, and `n_min` itself."""
    ks, k = [], 1
    while k <= min(n_min, MAX_K_SHOWN):
        ks.append(k)
        k *= 2
    if n_min <= MAX_K_SHOWN and (not ks or ks[-1] != n_min):
        ks.append(n_min)
    return ks


def _scope(scope: str, label: str, counts: Sequence[tuple[int, int]], ks: list[int], m_max: int) -> PassKScope:
    values = []
    for k in ks:
        per_item = np.array([pass_at_k(n, c, k) for n, c in counts])
        values.append(PassAtK(k, float(per_item.mean()), mean_interval_01(per_item, max_samples=m_max)))
    return PassKScope(scope, label, len(counts), values)


def pass_at_k_report(
    probe: Probe,
    check: str,
    baseline: CaseOutcomes | Mapping[str, CaseOutcome] | None = None,
    alpha: float = 0.05,
) -> PassK | None:
    """pass@k of one (positive) check over the cases that were sampled at least twice; None if none were."""
    counts, meta = _sample_counts(probe, check)
    if not counts:
        return None
    sizes = [n for n, _ in counts.values()]
    n_min, n_max = min(sizes), max(sizes)
    ks = k_values(n_min)
    ids = sorted(counts)
    overall = _scope("all", "all sampled cases", [counts[i] for i in ids], ks, n_max)
    splits = sorted({s for s, _ in meta.values() if s}, key=split_sort_key)
    families = sorted({f for _, f in meta.values() if f})
    by_split = [_scope("split", s, [counts[i] for i in ids if meta[i][0] == s], ks, n_max) for s in splits]
    by_family = [_scope("family", f, [counts[i] for i in ids if meta[i][1] == f], ks, n_max) for f in families]
    shared, deltas = _vs_baseline(counts, check, baseline, n_min, n_max, alpha)
    return PassK(
        check=check,
        ks=ks,
        samples_min=n_min,
        samples_max=n_max,
        n_items=len(ids),
        items_single=_single_sample_items(probe, check, counts),
        overall=overall,
        by_split=by_split,
        by_family=by_family,
        vs_baseline=deltas,
        baseline_items=len(shared),
        selector=_selector(probe, check, ids, alpha),
    )


def _sample_counts(
    probe: Probe, check: str
) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[str | None, str | None]]]:
    """(samples, passes) of `check` for each case sampled at least twice, and each such case's split and family."""
    counts: dict[str, tuple[int, int]] = {}
    meta: dict[str, tuple[str | None, str | None]] = {}
    outcomes = probe.table.outcomes  # one row per case (the chosen sample): ids, split, family by column
    for row, case_id in enumerate(outcomes.ids_list()):
        group = probe.samples.get(case_id)
        if not group:
            continue
        values = [s.checks[check] for s in group if check in s.checks]
        if len(values) >= 2:
            counts[case_id] = (len(values), sum(values))
            meta[case_id] = (outcomes.split.value(row), outcomes.family.value(row))
    return counts, meta


def _single_sample_items(probe: Probe, check: str, counts: Mapping[str, tuple[int, int]]) -> int:
    """The cases with a result for `check` that were not sampled at least twice (left out of pass@k)."""
    outcomes = probe.table.outcomes
    column = outcomes.checks.get(check)
    if column is None:
        return 0
    return sum(1 for row, case_id in enumerate(outcomes.ids_list()) if case_id not in counts and column[row] >= 0)


def _vs_baseline(
    counts: Mapping[str, tuple[int, int]],
    check: str,
    baseline: CaseOutcomes | Mapping[str, CaseOutcome] | None,
    n_min: int,
    n_max: int,
    alpha: float,
) -> tuple[list[str], list[PassKDelta]]:
    """The cases the baseline sampled at least twice too, and pass@k's paired difference over them for every k
    both runs reach."""
    base_samples = baseline_samples(baseline)
    if not base_samples:
        return [], []
    shared = [i for i in sorted(counts) if (o := base_samples.get(i)) and o.get(check, (0, 0))[0] >= 2]
    deltas: list[PassKDelta] = []
    if shared:
        base_counts = {i: base_samples[i][check] for i in shared}
        both_min = min(n_min, min(n for n, _ in base_counts.values()))
        m_max = max(n_max, max(n for n, _ in base_counts.values()))
        for k in k_values(both_min):
            here_v = [pass_at_k(counts[i][0], counts[i][1], k) for i in shared]
            base_v = [pass_at_k(base_counts[i][0], base_counts[i][1], k) for i in shared]
            deltas.append(PassKDelta(k, paired_means(here_v, base_v, alpha=alpha, max_samples=m_max)))
    return shared, deltas


def baseline_samples(baseline: CaseOutcomes | Mapping[str, CaseOutcome] | None) -> dict[str, SampleCounts]:
    """The baseline's sampled cases: case id -> check -> (samples, samples where the check is true)."""
    if baseline is None:
        return {}
    if isinstance(baseline, CaseOutcomes):
        return baseline.samples
    return {i: o.samples for i, o in baseline.items() if o.samples}


def _selector(probe: Probe, check: str, ids: list[str], alpha: float) -> Selector | None:
    """Best-of-n against the selected sample, on the cases where a sample is marked `selected`."""
    oracle: list[bool] = []
    picked: list[bool] = []
    for i in ids:
        group = [s for s in probe.samples[i] if check in s.checks]
        chosen = next((s for s in group if s.selected), None)
        if chosen is None:
            continue
        oracle.append(any(s.checks[check] for s in group))
        picked.append(chosen.checks[check])
    if not oracle:
        return None
    n = len(oracle)
    return Selector(
        n_items=n,
        oracle=sum(oracle) / n,
        oracle_interval=wilson_interval(sum(oracle), n),
        selected=sum(picked) / n,
        selected_interval=wilson_interval(sum(picked), n),
        comparison=paired_comparison(picked, oracle, alpha=alpha),
    )


def pass_at_k_reports(
    probe: Probe | None,
    is_negative: Callable[[str], bool],
    baseline: CaseOutcomes | Mapping[str, CaseOutcome] | None = None,
    alpha: float = 0.05,
) -> list[PassK]:
    """pass@k for every positive check of a sampled probe (a negative check, `truncated`, has no pass@k)."""
    if probe is None or not probe.samples:
        return []
    checks = order_checks({c for group in probe.samples.values() for s in group for c in s.checks})
    reports = [pass_at_k_report(probe, c, baseline, alpha) for c in checks if not is_negative(c)]
    return [r for r in reports if r is not None]
