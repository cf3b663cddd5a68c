"""Group failing probe cases for the failure gallery.

A reader wants to see *kinds* of failure, biggest first, with a concrete example each; a flat list
of hundreds of cases hides the pattern. Cases are grouped by their `failure_class`, or, when none
is given, by the first check they fail in scoreboard order. Inside a group, near-identical failures
are counted together: the same failed checks and the same *pattern* (the case's note, or where its
output first leaves the expected one; see `obs.probetable.failure_pattern`), so sixteen cases that
all emitted the wrong layout read as one line with a count, not sixteen cards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from obs.analysis.scoreboard import failing_matrix, groups_of, split_sort_key
from obs.model import ProbeCase
from obs.probetable import CaseOutcomes, IdList, ProbeTable, table_of

Rows = npt.NDArray[np.intp]


@dataclass
class FailurePattern:
    """Near-identical failures of one group: the same failed checks and the same difference."""

    text: str | None  # the shared note or first difference; None when the cases carry no text to compare
    failed: tuple[str, ...]
    rows: Rows  # table rows, in case id order

    @property
    def count(self) -> int:
        return int(self.rows.size)

    @property
    def example(self) -> int:
        return int(self.rows[0])


@dataclass
class FailureGroup:
    key: str
    source: str  # "failure_class" or "first failed check"
    rows: Rows  # table rows, in case id order
    outcomes: CaseOutcomes = field(repr=False)
    patterns: list[FailurePattern] = field(default_factory=list)

    @property
    def count(self) -> int:
        return int(self.rows.size)

    @property
    def case_ids(self) -> IdList:
        return IdList(self.outcomes.ids[self.rows])

    def where(self, rows: Rows | None = None) -> list[tuple[str, str, int]]:
        """("split" | "family", value, cases) for the group's (or `rows`') cases, biggest first."""
        sel = self.rows if rows is None else rows
        out: list[tuple[str, str, int]] = []
        for kind, column in (("split", self.outcomes.split), ("family", self.outcomes.family)):
            counts = groups_of(column.take(sel))
            ordered = sorted(counts.items(), key=lambda kv: (-kv[1].size, split_sort_key(kv[0])))
            out.extend((kind, label, int(members.size)) for label, members in ordered)
        return out

    def as_dict(self) -> dict[str, object]:
        return {
            "key": self.key,
            "source": self.source,
            "count": self.count,
            "case_ids": self.case_ids,
        }


def _by_id(outcomes: CaseOutcomes, rows: Rows) -> Rows:
    return rows[np.argsort(outcomes.ids[rows], kind="stable")]


def group_failures(
    cases: ProbeTable | Sequence[ProbeCase], is_negative: Callable[[str], bool], checks_order: list[str]
) -> list[FailureGroup]:
    table = cases if isinstance(cases, ProbeTable) else table_of(cases)
    outcomes = table.outcomes
    n = len(outcomes)
    if n == 0:
        return []
    fails = failing_matrix(outcomes, is_negative, checks_order)
    any_fail = fails.any(axis=0) if len(checks_order) else np.zeros(n, dtype=bool)
    fc = outcomes.failure_class
    truthy = np.array([bool(label) for label in fc.labels] + [False], dtype=bool)  # code -1 -> last: False
    has_class = truthy[fc.codes]
    failing = any_fail | has_class
    # the group key: the failure class when there is one, else the first failed check
    first = np.argmax(fails, axis=0) if len(checks_order) else np.zeros(n, dtype=np.intp)
    key_code = np.where(has_class, fc.codes, len(fc.labels) + first)
    key_names = [(label, "failure_class") for label in fc.labels] + [
        (c if is_negative(c) else f"{c} failed", "first failed check") for c in checks_order
    ]
    # near-identical: the same failed checks (as bits) and the same pattern
    bits = np.zeros(n, dtype=np.int64)
    for k in range(len(checks_order)):
        bits |= fails[k].astype(np.int64) << k
    groups: dict[tuple[str, str], list[Rows]] = {}
    rows_failing = np.flatnonzero(failing)
    order = rows_failing[np.argsort(key_code[rows_failing], kind="stable")]
    codes = key_code[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if order.size else np.array([], dtype=np.intp)
    ends = [*starts[1:], order.size] if order.size else []  # no failing case (scores only): no group
    for s, e in zip(starts, ends, strict=True):
        groups.setdefault(key_names[int(codes[s])], []).append(order[s:e])
    out = []
    for (key, source), parts in groups.items():
        members = _by_id(outcomes, np.concatenate(parts))
        out.append(FailureGroup(key, source, members, outcomes, _patterns(table, members, bits, checks_order)))
    return sorted(out, key=lambda g: (-g.count, g.key))


def _patterns(table: ProbeTable, members: Rows, bits: npt.NDArray[np.int64], checks: list[str]) -> list[FailurePattern]:
    pattern = table.pattern
    width = len(pattern.labels) + 1
    combined = bits[members] * width + (pattern.codes[members] + 1)
    values, inverse = np.unique(combined, return_inverse=True)
    out = []
    for k, value in enumerate(values.tolist()):
        rows = members[inverse == k]  # still in id order
        failed_bits, code = divmod(int(value), width)
        failed = tuple(c for i, c in enumerate(checks) if failed_bits >> i & 1)
        out.append(FailurePattern(pattern.labels[code - 1] if code else None, failed, rows))
    return sorted(out, key=lambda p: (-p.count, p.text is None, p.text or "", p.failed))


def count_failing(groups: list[FailureGroup]) -> int:
    return sum(g.count for g in groups)
