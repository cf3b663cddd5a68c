"""The run scoreboard: every probe check as a rate with its n, overall, per split and per family.

The same small table on every run keeps comparisons honest: exact vs renderable vs materialized
vs truncation separates a semantic miss from a grammar break from a budget cut-off, which loss
alone cannot do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from obs.model import ProbeCase

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


def _row(label: str, cases: list[ProbeCase], checks: list[str], negative: frozenset[str]) -> ScoreRow:
    rates: dict[str, Rate] = {}
    for check in checks:
        values = [c.checks[check] for c in cases if check in c.checks]
        if values:
            rates[check] = Rate(check, sum(values), len(values), check in negative)
    return ScoreRow(label, len(cases), rates)


def split_sort_key(label: str) -> tuple[int, str]:
    """Splits in their natural order (train, dev, test), unknown names after, alphabetically."""
    return (SPLIT_ORDER.index(label) if label in SPLIT_ORDER else len(SPLIT_ORDER), label)


def build_scoreboard(cases: list[ProbeCase], is_negative: Callable[[str], bool]) -> Scoreboard:
    checks = order_checks(name for c in cases for name in c.checks)
    negative = frozenset(c for c in checks if is_negative(c))
    overall = _row("all", cases, checks, negative)
    by_split: dict[str, list[ProbeCase]] = defaultdict(list)
    by_family: dict[str, list[ProbeCase]] = defaultdict(list)
    for case in cases:
        if case.split:
            by_split[case.split].append(case)
        if case.family:
            by_family[case.family].append(case)
    return Scoreboard(
        checks=checks,
        overall=overall,
        by_split=[_row(k, by_split[k], checks, negative) for k in sorted(by_split, key=split_sort_key)],
        by_family=[_row(k, by_family[k], checks, negative) for k in sorted(by_family)],
        negative=negative,
    )


def failed_checks(case: ProbeCase, is_negative: Callable[[str], bool], checks_order: list[str]) -> list[str]:
    """The checks this case fails, in scoreboard order."""
    return [c for c in checks_order if c in case.checks and case.checks[c] == is_negative(c)]
