"""The run scoreboard: every probe check as a rate with its n, overall, per split and per family.

The same small table on every run keeps comparisons honest: exact vs renderable vs materialized
vs truncation separates a semantic miss from a grammar break from a budget cut-off, which loss
alone cannot do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from obs.model import ProbeCase
from obs.probetable import FALSE, TRUE, CaseOutcomes, Categorical, ProbeTable, table_of

Rows = npt.NDArray[np.intp]
Bools = npt.NDArray[np.bool_]

# Checks shown first, in this order, when present; any other boolean column follows alphabetically.
CANONICAL_CHECKS: tuple[str, ...] = ("exact", "renderable", "materialized", "truncated")
SPLIT_ORDER: tuple[str, ...] = ("train", "dev", "val", "validation", "test", "holdout")


@dataclass(frozen=True)
class Rate:
    """`hits` of `n` cases have the check true. For a negative check (truncated) lower is better."""

    check: str
    hits: int
    n: int
    negative: bool = False

    @property
    def value(self) -> float | None:
        return self.hits / self.n if self.n else None

    @property
    def passes(self) -> int:
        return self.n - self.hits if self.negative else self.hits

    def as_dict(self) -> dict[str, object]:
        return {
            "check": self.check,
            "hits": self.hits,
            "n": self.n,
            "rate": self.value,
            "negative": self.negative,
        }


@dataclass
class ScoreRow:
    label: str
    n_cases: int
    rates: dict[str, Rate]

    def as_dict(self) -> dict[str, object]:
        return {
            "label": self.label,
            "n_cases": self.n_cases,
            "rates": {k: r.as_dict() for k, r in self.rates.items()},
        }


@dataclass
class Scoreboard:
    checks: list[str]
    overall: ScoreRow
    by_split: list[ScoreRow] = field(default_factory=list)
    by_family: list[ScoreRow] = field(default_factory=list)
    negative: frozenset[str] = frozenset()

    @property
    def n(self) -> int:
        return self.overall.n_cases

    def rate(self, check: str) -> float | None:
        r = self.overall.rates.get(check)
        return r.value if r else None

    def as_dict(self) -> dict[str, object]:
        return {
            "checks": self.checks,
            "negative_checks": sorted(self.negative),
            "overall": self.overall.as_dict(),
            "by_split": [r.as_dict() for r in self.by_split],
            "by_family": [r.as_dict() for r in self.by_family],
        }


def order_checks(names: Iterable[str]) -> list[str]:
    present = set(names)
    first = [c for c in CANONICAL_CHECKS if c in present]
    return first + sorted(present - set(first))


def _row(
    label: str, outcomes: CaseOutcomes, rows: Rows | None, checks: list[str], negative: frozenset[str]
) -> ScoreRow:
    rates: dict[str, Rate] = {}
    for check in checks:
        column = outcomes.checks[check] if rows is None else outcomes.checks[check][rows]
        n = int(np.count_nonzero(column >= 0))
        if n:
            rates[check] = Rate(check, int(np.count_nonzero(column == TRUE)), n, check in negative)
    return ScoreRow(label, len(outcomes) if rows is None else int(rows.size), rates)


def split_sort_key(label: str) -> tuple[int, str]:
    """Splits in their natural order (train, dev, test), unknown names after, alphabetically."""
    return (SPLIT_ORDER.index(label) if label in SPLIT_ORDER else len(SPLIT_ORDER), label)


def groups_of(column: Categorical) -> dict[str, Rows]:
    """The rows of each value of a text column (values that are empty or missing are left out)."""
    out: dict[str, Rows] = {}
    if not column.labels:
        return out
    order = np.argsort(column.codes, kind="stable")
    codes = column.codes[order]
    bounds = np.searchsorted(codes, np.arange(len(column.labels) + 1))
    for code, label in enumerate(column.labels):
        rows = order[bounds[code] : bounds[code + 1]]
        if label and rows.size:
            out[label] = rows
    return out


def outcomes_of(cases: ProbeTable | CaseOutcomes | Sequence[ProbeCase]) -> CaseOutcomes:
    if isinstance(cases, ProbeTable):
        return cases.outcomes
    if isinstance(cases, CaseOutcomes):
        return cases
    return table_of(cases).outcomes


def build_scoreboard(
    cases: ProbeTable | CaseOutcomes | Sequence[ProbeCase], is_negative: Callable[[str], bool]
) -> Scoreboard:
    outcomes = outcomes_of(cases)
    checks = order_checks(outcomes.check_names())
    negative = frozenset(c for c in checks if is_negative(c))
    by_split = groups_of(outcomes.split)
    by_family = groups_of(outcomes.family)
    return Scoreboard(
        checks=checks,
        overall=_row("all", outcomes, None, checks, negative),
        by_split=[_row(k, outcomes, by_split[k], checks, negative) for k in sorted(by_split, key=split_sort_key)],
        by_family=[_row(k, outcomes, by_family[k], checks, negative) for k in sorted(by_family)],
        negative=negative,
    )


def failing_matrix(outcomes: CaseOutcomes, is_negative: Callable[[str], bool], checks_order: list[str]) -> Bools:
    """fails[k, i]: case i fails check k of `checks_order` (false for a positive check, true for a
    negative one; an absent check never fails)."""
    fails = np.zeros((len(checks_order), len(outcomes)), dtype=bool)
    for k, check in enumerate(checks_order):
        column = outcomes.checks.get(check)
        if column is not None:
            fails[k] = column == (TRUE if is_negative(check) else FALSE)
    return fails
