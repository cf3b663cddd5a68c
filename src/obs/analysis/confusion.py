"""Confusion matrices for probe cases that carry an expected and a predicted class (seed 003: "per-layout
confusion matrix" for `layout_drift`, "theme/tone confusion matrix" for `theme_tone_drift`).

A pair is found by name among a case's extra fields: `expected_X` / `predicted_X`, `gold_X` / `pred_X`, or
`X_expected` / `X_predicted` (X: layout, block_type, theme, ...), or declared in obs.yaml's `confusion:` (any two
field names; a declared pair no case carries is said, not dropped). Counts are over the cases holding both
values, for all cases and per split; a class seen in only one column still gets its row and column, so what
the model invented and what it never produced both show. More than `MAX_CLASSES` classes are not drawn (the
page says so).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
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
    matrices: tuple[Matrix, ...]  # all cases first, then each split (empty: too many classes, or no case has both)
    too_many: int | None = None  # the number of classes when more than MAX_CLASSES (no matrix drawn)
    declared: bool = False  # declared in obs.yaml's `confusion:` rather than found by name

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "expected": self.expected_key,
            "predicted": self.predicted_key,
            "matrices": [m.as_dict() for m in self.matrices],
            "too_many_classes": self.too_many,
            "declared": self.declared,
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


def confusions(probe: Probe | None, declared: Sequence[Mapping[str, str]] = ()) -> list[Confusion]:
    """Every expected/predicted pair the probe's cases carry, counted (empty: none); `declared`: obs.yaml's
    `confusion:` pairs ({expected, predicted, name}), counted whether or not their names pair up by the rule."""
    if probe is None or not probe.size:
        return []
    table = probe.table
    first = next(table.iter_texts())
    found = pairs_in(set(first.extra))
    named = {(ek, pk) for _, ek, pk in found}
    mine = [
        (d["name"], d["expected"], d["predicted"]) for d in declared if (d["expected"], d["predicted"]) not in named
    ]
    found += mine
    if not found:
        return []
    splits = [table.outcomes.split.value(i) for i in range(len(table))]
    counters: dict[tuple[str, str, str | None], Counter[tuple[str, str]]] = {}
    for i, text in enumerate(table.iter_texts()):
        for _, ek, pk in found:
            e, p = _label(text.extra.get(ek)), _label(text.extra.get(pk))
            if e is None or p is None:
                continue
            counters.setdefault((ek, pk, None), Counter())[(e, p)] += 1
            if splits[i] is not None:
                counters.setdefault((ek, pk, splits[i]), Counter())[(e, p)] += 1
    out = []
    declared_keys = {(d["expected"], d["predicted"]) for d in declared}
    for name, ek, pk in found:
        total = counters.get((ek, pk, None))
        is_declared = (ek, pk) in declared_keys
        if not total:
            if is_declared:  # declared, and no case holds both: said on the page
                out.append(Confusion(name, ek, pk, (), None, True))
            continue
        labels = tuple(sorted({x for pair in total for x in pair}))
        if len(labels) > MAX_CLASSES:
            out.append(Confusion(name, ek, pk, (), len(labels), is_declared))
            continue
        scopes = [("all", total)] + [
            (f"split: {split}", c)
            for (e_key, p_key, split), c in sorted(counters.items(), key=lambda t: str(t[0][2]))
            if (e_key, p_key) == (ek, pk) and split is not None
        ]
        matrices = tuple(
            Matrix(scope, labels, tuple(tuple(c[(a, b)] for b in labels) for a in labels)) for scope, c in scopes
        )
        out.append(Confusion(name, ek, pk, matrices, None, is_declared))
    return out
