"""Held constant, verified: what changed between a run and its baseline, and on which axis.

A run is only readable as an experiment on its primary axis if nothing else moved. Declared
`held_constant` lists are claims; this module checks them against a flat diff of the two runs'
`model`, `config`, `contract`, `data` and `provenance`, attributing every changed key to an axis
through the `axes` mapping of obs.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from obs.model import Run

DIFFED_SECTIONS: tuple[str, ...] = ("model", "config", "contract", "data", "provenance")
MISSING = object()


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings become dotted keys (`train.lr`); lists and scalars are leaf values."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        if not value and prefix:
            out[prefix] = {}
        for key in value:
            out.update(flatten(value[key], f"{prefix}.{key}" if prefix else str(key)))
    else:
        out[prefix] = value
    return out


def run_fields(run: Run) -> dict[str, Any]:
    return flatten({section: getattr(run, section) for section in DIFFED_SECTIONS if getattr(run, section)})


@dataclass(frozen=True)
class ChangedKey:
    key: str
    this: Any
    baseline: Any
    axis: str | None

    def as_dict(self) -> dict[str, Any]:
        def show(v: Any) -> Any:
            return None if v is MISSING else v

        return {"key": self.key, "this": show(self.this), "baseline": show(self.baseline), "axis": self.axis}


@dataclass
class AxisRow:
    """One row of the held-constant matrix."""

    axis: str
    this: dict[str, Any]
    baseline: dict[str, Any]
    changed_keys: list[str]
    declared_constant: bool
    is_primary: bool

    @property
    def changed(self) -> bool:
        return bool(self.changed_keys)

    @property
    def violated(self) -> bool:
        """Declared held constant but it moved."""
        return self.declared_constant and self.changed


@dataclass
class HeldConstant:
    primary_axis: str | None
    declared: list[str]
    rows: list[AxisRow]
    changed: list[ChangedKey]
    baseline_id: str | None
    unknown_declared: list[str] = field(default_factory=list)

    @property
    def off_axis(self) -> list[ChangedKey]:
        """Changed keys that do not belong to the primary axis."""
        return [c for c in self.changed if c.axis != self.primary_axis]

    @property
    def violations(self) -> list[AxisRow]:
        return [r for r in self.rows if r.violated]

    @property
    def clean(self) -> bool:
        return not self.off_axis

    @property
    def changed_axes(self) -> list[str]:
        return sorted({c.axis or "unassigned" for c in self.changed})

    def verdict_text(self) -> str:
        if self.baseline_id is None:
            return "no baseline to compare with"
        if not self.changed:
            return "nothing changed from the baseline"
        if self.primary_axis is None:
            return f"changed: {', '.join(self.changed_axes)} (no primary axis declared)"
        if self.clean:
            return f"only the primary axis ({self.primary_axis}) changed"
        offending = ", ".join(c.key for c in self.off_axis)
        return (
            f"more than one axis changed: this run cannot be read as an experiment on "
            f"{self.primary_axis} (also changed: {offending})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline_id,
            "primary_axis": self.primary_axis,
            "declared_held_constant": self.declared,
            "changed": [c.as_dict() for c in self.changed],
            "off_axis": [c.key for c in self.off_axis],
            "violated_axes": [r.axis for r in self.violations],
            "clean": self.clean,
            "verdict": self.verdict_text(),
        }


def axis_of(key: str, axes: dict[str, list[str]]) -> str | None:
    """The axis whose pattern is the longest prefix of `key` (so `config.train.lr` beats `config`)."""
    best: tuple[int, str] | None = None
    for axis, patterns in axes.items():
        for pattern in patterns:
            matches = key == pattern or key.startswith(pattern + ".")
            if matches and (best is None or len(pattern) > best[0]):
                best = (len(pattern), axis)
    return best[1] if best else None


def compare_held_constant(
    run: Run, baseline_id: str | None, baseline_fields: dict[str, Any] | None, axes: dict[str, list[str]]
) -> HeldConstant:
    """Diff `run` against its baseline's flattened fields (see `run_fields`) and build the matrix: a row per axis
    (the declared ones, the primary axis and those the run says it holds constant), then the changed keys no axis
    claims."""
    this_fields = run_fields(run)
    base_fields = baseline_fields if baseline_fields is not None else {}
    changed = _changed_keys(this_fields, base_fields, axes) if baseline_fields is not None else []
    names = list(axes)
    for extra in [run.primary_axis, *run.held_constant]:
        if extra and extra not in names:
            names.append(extra)
    rows = [row for axis in names if (row := _axis_row(run, axis, this_fields, base_fields, changed, axes))]
    unassigned = [c for c in changed if c.axis is None]
    if unassigned:
        rows.append(
            AxisRow(
                "unassigned",
                {c.key: c.this for c in unassigned if c.this is not MISSING},
                {c.key: c.baseline for c in unassigned if c.baseline is not MISSING},
                [c.key for c in unassigned],
                False,
                False,
            )
        )
    unknown = [a for a in run.held_constant if a not in axes]
    return HeldConstant(
        run.primary_axis,
        list(run.held_constant),
        rows,
        changed,
        baseline_id if baseline_fields is not None else None,
        unknown,
    )


def _changed_keys(
    this_fields: dict[str, Any], base_fields: dict[str, Any], axes: dict[str, list[str]]
) -> list[ChangedKey]:
    """Every key whose value differs between the run and its baseline (absent on one side counts), sorted."""
    changed: list[ChangedKey] = []
    for key in sorted(set(this_fields) | set(base_fields)):
        a = this_fields.get(key, MISSING)
        b = base_fields.get(key, MISSING)
        if a != b:
            changed.append(ChangedKey(key, a, b, axis_of(key, axes)))
    return changed


def _axis_row(
    run: Run,
    axis: str,
    this_fields: dict[str, Any],
    base_fields: dict[str, Any],
    changed: list[ChangedKey],
    axes: dict[str, list[str]],
) -> AxisRow | None:
    """One axis' row, or None for an axis with no pattern or no value that the run neither holds constant nor
    varies (its primary axis)."""
    patterns = axes.get(axis, [])
    this_vals = {k: v for k, v in this_fields.items() if axis_of(k, axes) == axis}
    base_vals = {k: v for k, v in base_fields.items() if axis_of(k, axes) == axis}
    declared = axis in run.held_constant
    primary = axis == run.primary_axis
    if not declared and not primary and (not patterns or (not this_vals and not base_vals)):
        return None
    return AxisRow(axis, this_vals, base_vals, [c.key for c in changed if c.axis == axis], declared, primary)
