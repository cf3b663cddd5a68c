"""Confusion matrices for probe cases that carry an expected and a predicted class (seed 003: "per-layout
confusion matrix" for `layout_drift`, "theme/tone confusion matrix" for `theme_tone_drift`).

A pair is found by name among a case's extra fields: `expected_X` / `predicted_X`, `gold_X` / `pred_X`, or
`X_expected` / `X_predicted` (X: layout, block_type, theme, ...). Counts are over the cases holding both
values, for all cases and per split; a class seen in only one column still gets its row and column, so what
the model invented and what it never produced both show. More than `MAX_CLASSES` classes are not drawn (the
page says so).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from obs.model import Probe

MAX_CLASSES = 20
PAIRS = (("expected_", "predicted_", "prefix"), ("gold_", "pred_", "prefix"), ("_expected", "_predicted", "suffix"))


@dataclass(frozen=True)
class Matrix:
    """One split's (or all cases') matrix: `counts[i][j]` cases of expected class `labels[i]` predicted as
    `labels[j]`."""

    scope: str  # "all" or "split: <name>"
    labels: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]

    @property
    def n(self) -> int:
        return sum(map(sum, self.counts))

    @property
    def agree(self) -> int:
        return sum(self.counts[i][i] for i in range(len(self.labels)))

    def as_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, "labels": list(self.labels), "counts": [list(r) for r in self.counts]}


@dataclass(frozen=True)
class Confusion:
    name: str  # X
    expected_key: str
    predicted_key: str
    matrices: tuple[Matrix, ...]  # all cases first, then each split
    too_many: int | None = None  # the number of classes when more than MAX_CLASSES (no matrix drawn)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "expected": self.expected_key,
            "predicted": self.predicted_key,
            "matrices": [m.as_dict() for m in self.matrices],
            "too_many_classes": self.too_many,
        }


def pairs_in(keys: set[str]) -> list[tuple[str, str, str]]:
    """(name, expected key, predicted key) for every pair of keys named like one."""
    out = []
    for a, b, where in PAIRS:
        for key in sorted(keys):
            if where == "prefix" and key.startswith(a) and len(key) > len(a):
                name, other = key[len(a) :], b + key[len(a) :]
            elif where == "suffix" and key.endswith(a) and len(key) > len(a):
                name, other = key[: -len(a)], key[: -len(a)] + b
            else:
                continue
            if other in keys:
                out.append((name, key, other))
    return out


def _label(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


def confusions(probe: Probe | None) -> list[Confusion]:
    """Every expected/predicted pair the probe's cases carry, counted (empty: none)."""
    if probe is None or not probe.size:
        return []
    table = probe.table
    first = next(table.iter_texts())
    found = pairs_in(set(first.extra))
    if not found:
        return []
    splits = [table.outcomes.split.value(i) for i in range(len(table))]
    counters: dict[tuple[str, str | None], Counter[tuple[str, str]]] = {}
    for i, text in enumerate(table.iter_texts()):
        for name, ek, pk in found:
            e, p = _label(text.extra.get(ek)), _label(text.extra.get(pk))
            if e is None or p is None:
                continue
            counters.setdefault((name, None), Counter())[(e, p)] += 1
            if splits[i] is not None:
                counters.setdefault((name, splits[i]), Counter())[(e, p)] += 1
    out = []
    for name, ek, pk in found:
        total = counters.get((name, None))
        if not total:
            continue
        labels = tuple(sorted({x for pair in total for x in pair}))
        if len(labels) > MAX_CLASSES:
            out.append(Confusion(name, ek, pk, (), len(labels)))
            continue
        scopes = [("all", total)] + [
            (f"split: {split}", c)
            for (n, split), c in sorted(counters.items(), key=lambda t: str(t[0][1]))
            if n == name and split is not None
        ]
        matrices = tuple(
            Matrix(scope, labels, tuple(tuple(c[(a, b)] for b in labels) for a in labels)) for scope, c in scopes
        )
        out.append(Confusion(name, ek, pk, matrices))
    return out
