"""Config diffs between runs: one run against another, and "what varies" across a group of runs.

Runs are compared on their flattened fields (`train.lr` style keys from `held_constant.run_fields`),
which the per-run summary carries in a compact form (`compact_fields`). A diff lists only the keys
that differ, with the two values side by side; "what varies" lists, for a spec or a campaign, only
the keys whose value is not the same in every run, with one column per distinct configuration so
that seeds of the same configuration share a column instead of repeating it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from obs.analysis.held_constant import axis_of
from obs.sitemodel import RunSummary

MAX_FIELDS = 400  # a summary never carries more flattened keys than this
MAX_TEXT = 240  # long strings (prompts, templates) are cut: a diff shows that they differ, not all of them
MAX_LIST = 16

Scalar = str | int | float | bool | None


def _compact_value(value: Any) -> Scalar | list[Scalar]:
    """A JSON-friendly, bounded stand-in for a config value (long text cut, long lists summarised)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"
    if isinstance(value, list | tuple):
        if len(value) <= MAX_LIST and all(v is None or isinstance(v, str | int | float | bool) for v in value):
            return [_compact_value(v) for v in value]  # type: ignore[misc]
        return f"[{len(value)} items]"
    if isinstance(value, dict):
        return "{}" if not value else f"{{{len(value)} keys}}"
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def compact_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Flattened fields as the summary keeps them: sorted, bounded, JSON-friendly.

    Dates and other YAML scalars become text; a run with thousands of keys keeps the first
    `MAX_FIELDS` in key order (the summary stays small; the run's own page shows everything).
    """
    return {k: _compact_value(fields[k]) for k in sorted(fields)[:MAX_FIELDS]}


ABSENT = ("absent",)  # a what-varies signature entry for a key the run lacks (no value token looks like it)


@dataclass(frozen=True)
class DiffRow:
    key: str
    a: Any
    b: Any
    in_a: bool
    in_b: bool
    axis: str | None = None

    @property
    def status(self) -> str:
        if not self.in_a:
            return "only in B"
        if not self.in_b:
            return "only in A"
        return "changed"


@dataclass
class ConfigDiff:
    """Run A against run B: the keys that differ, and how many are the same."""

    a_id: str
    b_id: str
    rows: list[DiffRow]
    same: list[str]

    @property
    def n_changed(self) -> int:
        return len(self.rows)

    def by_section(self) -> list[tuple[str, list[DiffRow]]]:
        """Rows grouped by their first key segment (config, model, data, ...), in key order."""
        groups: dict[str, list[DiffRow]] = {}
        for row in self.rows:
            groups.setdefault(row.key.split(".", 1)[0], []).append(row)
        return list(groups.items())


def diff_fields(
    a_id: str,
    a: Mapping[str, Any],
    b_id: str,
    b: Mapping[str, Any],
    axes: Mapping[str, list[str]] | None = None,
) -> ConfigDiff:
    """Every key whose value differs between `a` and `b` (a key missing on one side differs)."""
    rows: list[DiffRow] = []
    same: list[str] = []
    for key in sorted(set(a) | set(b)):
        in_a, in_b = key in a, key in b
        va, vb = a.get(key), b.get(key)
        if in_a and in_b and _same(va, vb):
            same.append(key)
            continue
        rows.append(DiffRow(key, va, vb, in_a, in_b, axis_of(key, dict(axes)) if axes else None))
    return ConfigDiff(a_id, b_id, rows, same)


def _same(x: Any, y: Any) -> bool:
    """Equal values; 1 and 1.0 are the same setting, True and 1 are not."""
    return same_setting_key(x) == same_setting_key(y)


def same_setting_key(value: Any) -> Hashable:
    """A dict key under which two values meet exactly when they are the same setting.

    The one definition of "the same" for every diff (a pair, the compare page, what varies).
    Python's own equality does most of it (1 == 1.0 and both hash alike); the tag keeps True apart
    from 1 at the top level, NaN meets NaN (a setting, not a measurement), and unhashable values
    fall back to their repr.
    """
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    if isinstance(value, list | tuple):
        value = tuple(value)
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return ("value", value)


@dataclass
class FieldTable:
    """Every run's flattened fields as indices into one table of distinct values per key.

    Two runs differ on a key exactly when their indices for it differ (-1: the run lacks the
    key), so a page can diff any pair of runs in the browser without shipping every value once
    per run, and agree with `diff_fields` (a test checks every pair of the example runs).
    """

    keys: list[str]
    axes: list[str | None]
    values: list[list[str]]  # per key: how each distinct value is shown
    cells: list[list[int]]  # per run, per key: index into values[key], -1 when not set

    def differing(self, a: int, b: int) -> list[str]:
        return [k for k, x, y in zip(self.keys, self.cells[a], self.cells[b], strict=True) if x != y]


def field_table(
    fields: Iterable[Mapping[str, Any]],
    axes: Mapping[str, list[str]] | None,
    show: Callable[[Any], str],
) -> FieldTable:
    """The table of every run's fields, read one run at a time (`fields` may be a generator): at 100,000 runs the
    list of every run's fields dict it was given before was ~2 KB a run held at once (issue 32). Keys are
    numbered as met and put in sorted order at the end; each key's values are numbered as the runs meet them."""
    position: dict[str, int] = {}  # key -> its column as met
    seen: list[dict[Hashable, int]] = []
    values: list[list[str]] = []
    cells: list[list[int]] = []  # per run, by the columns as met (shorter when a key was met later)
    for f in fields:
        row: list[int] = []
        for key, value in f.items():
            i = position.get(key)
            if i is None:
                i = position[key] = len(seen)
                seen.append({})
                values.append([])
            token = same_setting_key(value)
            j = seen[i].get(token)
            if j is None:
                j = seen[i][token] = len(values[i])
                values[i].append(show(value))
            if len(row) <= i:
                row.extend([-1] * (i + 1 - len(row)))
            row[i] = j
        cells.append(row)
    keys = sorted(position)
    order = [position[k] for k in keys]
    for n, row in enumerate(cells):
        cells[n] = [row[i] if i < len(row) else -1 for i in order]
    axis_map = dict(axes) if axes else None
    axis_list = [axis_of(k, axis_map) if axis_map else None for k in keys]
    return FieldTable(keys, axis_list, [values[i] for i in order], cells)


@dataclass
class VariesColumn:
    """One distinct configuration: the runs that share it (e.g. the seeds of one condition)."""

    runs: list[RunSummary]
    values: dict[str, Any]
    label: str = ""


@dataclass
class WhatVaries:
    """The keys that are not the same across a group of runs, one column per distinct configuration."""

    keys: list[str]
    columns: list[VariesColumn]
    n_runs: int
    n_same: int
    partial: dict[str, int] = field(default_factory=dict)  # key -> runs that lack it

    @property
    def empty(self) -> bool:
        return not self.keys


def what_varies(
    runs: Sequence[RunSummary],
    *,
    ignore: Sequence[str] = (),
    label_of: Callable[[list[RunSummary]], str] | None = None,
) -> WhatVaries:
    """Keys whose value is not identical in every run of `runs` (each a summary with `fields`).

    A key present in some runs and absent in others varies. `ignore` drops keys by prefix (seeds
    differ by design). Columns are the distinct value combinations over the varying keys, in the
    order their first run appears.
    """
    fields = [r.fields for r in runs]
    keys_all = sorted({k for f in fields for k in f})

    def ignored(key: str) -> bool:
        return any(key == p or key.startswith(p + ".") for p in ignore)

    varying: list[str] = []
    partial: dict[str, int] = {}
    n_same = 0
    for key in keys_all:
        if ignored(key):
            continue
        present = [f for f in fields if key in f]
        tokens = {same_setting_key(f[key]) for f in present}
        if len(present) == len(fields) and len(tokens) == 1:
            n_same += 1
            continue
        varying.append(key)
        if len(present) < len(fields):
            partial[key] = len(fields) - len(present)
    columns: list[VariesColumn] = []
    index: dict[tuple[Hashable, ...], VariesColumn] = {}
    for run, f in zip(runs, fields, strict=True):
        signature = tuple(same_setting_key(f[k]) if k in f else ABSENT for k in varying)
        col = index.get(signature)
        if col is None:
            col = VariesColumn([], {k: f[k] for k in varying if k in f})
            index[signature] = col
            columns.append(col)
        col.runs.append(run)
    for col in columns:
        col.label = label_of(col.runs) if label_of else ""
    return WhatVaries(varying, columns, len(runs), n_same, partial)
