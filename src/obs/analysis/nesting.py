"""Nesting-error counts by block type (seed 003's `block_nesting_failure`: "wrong closing tag, invalid nesting,
repeated block open"; what to track: "nesting error rate by block type").

A probe case says which blocks it nested wrongly in a field named `nesting_errors` (or `block_nesting_errors`):
a mapping of block type to a count (`{"section_card": 2}`), or a list of block types, one entry an error
(`["table_row", "table_row"]`); an empty one says the case had none. A case without the field is not counted
(the rate's denominator is the cases that carry it), and a value of another shape is counted as unreadable and
said, never guessed. Per block type: the errors, the cases with at least one, and their share of the cases that
carry the field, overall and per split: a block type whose errors sit in one split shows it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from obs.model import Probe

NESTING_KEYS = ("nesting_errors", "block_nesting_errors")


@dataclass(frozen=True)
class BlockErrors:
    """One block type: its nesting errors, and the cases with at least one of them."""

    block: str
    errors: int
    cases: int

    def as_dict(self) -> dict[str, Any]:
        return {"block": self.block, "errors": self.errors, "cases": self.cases}


@dataclass(frozen=True)
class NestingScope:
    """All cases, or one split: the cases carrying the field, those with any nesting error, per block type."""

    scope: str  # "all" or a split's name
    cases: int
    with_errors: int
    blocks: tuple[BlockErrors, ...]  # most errors first, then by name

    @property
    def errors(self) -> int:
        return sum(b.errors for b in self.blocks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "cases": self.cases,
            "with_errors": self.with_errors,
            "errors": self.errors,
            "blocks": [b.as_dict() for b in self.blocks],
        }


@dataclass(frozen=True)
class NestingErrors:
    key: str  # the field the cases carry
    overall: NestingScope
    by_split: tuple[NestingScope, ...]
    unreadable: int  # cases whose value was neither a mapping of counts nor a list of block types

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "overall": self.overall.as_dict(),
            "by_split": [s.as_dict() for s in self.by_split],
            "unreadable": self.unreadable,
        }


def block_counts(value: Any) -> Counter[str] | None:
    """A case's nesting errors per block type, or None when the value is not one of the two shapes."""
    if isinstance(value, dict):
        out: Counter[str] = Counter()
        for block, n in value.items():
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                return None
            if n:
                out[str(block)] += n
        return out
    if isinstance(value, list):
        if not all(isinstance(b, str) and b for b in value):
            return None
        return Counter(value)
    return None


class _Tally:
    def __init__(self) -> None:
        self.cases = 0
        self.with_errors = 0
        self.errors: Counter[str] = Counter()
        self.case_blocks: Counter[str] = Counter()

    def add(self, counts: Counter[str]) -> None:
        self.cases += 1
        self.with_errors += bool(counts)
        self.errors.update(counts)
        self.case_blocks.update(counts.keys())

    def scope(self, name: str) -> NestingScope:
        blocks = sorted(self.errors.items(), key=lambda kv: (-kv[1], kv[0]))
        return NestingScope(
            name, self.cases, self.with_errors, tuple(BlockErrors(b, n, self.case_blocks[b]) for b, n in blocks)
        )


def nesting_errors(probe: Probe | None) -> NestingErrors | None:
    """The probe's nesting errors by block type, or None when no case carries the field."""
    if probe is None or not probe.size:
        return None
    table = probe.table
    key: str | None = None
    overall, splits, unreadable = _Tally(), dict[str, _Tally](), 0
    for i, text in enumerate(table.iter_texts()):
        found = next((k for k in NESTING_KEYS if k in text.extra and text.extra[k] is not None), None)
        if found is None:
            continue
        key = key or found
        counts = block_counts(text.extra[found])
        if counts is None:
            unreadable += 1
            continue
        overall.add(counts)
        split = table.outcomes.split.value(i)
        if split is not None:
            splits.setdefault(split, _Tally()).add(counts)
    if key is None:
        return None
    by_split = tuple(splits[s].scope(s) for s in sorted(splits))
    return NestingErrors(key, overall.scope("all"), by_split, unreadable)
