"""A stream of loosely typed log records to `run.metrics`: durations written as text become seconds, text-only
keys are named, train and eval rows logged at the same step are merged, the summary row is kept apart."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from obs.adapters.shared.trl import is_summary_record, trl_aliases
from obs.adapters.shared.values import duration_value, is_number
from obs.diagnostics import Diagnostics
from obs.model import Run
from obs.series_builder import STEP_KEYS, SeriesBuilder


@dataclass
class RecordCleaner:
    """Per-record fixes before the SeriesBuilder: durations as seconds, text-only keys remembered."""

    path: Path
    diags: Diagnostics
    durations: dict[str, int] = field(default_factory=dict)
    text_keys: dict[str, int] = field(default_factory=dict)

    def clean(self, record: dict[str, Any], line: int | None) -> dict[str, Any]:
        out: dict[str, Any] | None = None
        for key, value in record.items():
            if not isinstance(value, str):
                continue
            seconds = duration_value(key, value)
            if seconds is None:
                self.text_keys.setdefault(key, line or 0)
                continue
            self.durations.setdefault(key, line or 0)
            if out is None:
                out = dict(record)
            out[key] = seconds
        return record if out is None else out

    def report(self, run: Run, ignore: Iterable[str] = ()) -> None:
        """Say which durations were converted and which keys held only text (after the series are built)."""
        if self.durations:
            names = ", ".join(sorted(self.durations))
            run.notices.append(f"{names}: durations written as H:MM:SS text were read as seconds.")
        skip = set(ignore)
        plotted = run.metrics.series if run.metrics is not None else {}
        text_only = sorted(k for k in self.text_keys if k not in plotted and k not in skip)
        if text_only:
            first = min(self.text_keys[k] for k in text_only)
            self.diags.info(
                self.path,
                f"{', '.join(text_only)}: text values, not metrics (first at line {first}); not plotted",
                first or None,
            )
            if run.metrics is not None:
                run.metrics.dropped.append(f"text columns, not plotted: {', '.join(text_only)}")


def merge_same_step(
    records: Iterable[tuple[int | None, dict[str, Any]]],
    step_key: str,
    path: Path,
    diags: Diagnostics,
) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """Merge consecutive records logged at the same step (a train row and an eval row, say).

    Trainer logs train metrics and eval metrics as separate entries with the same step, each
    carrying `epoch`: they are one point of the curve, not a duplicate. A record that logs a key
    again at that step with another value is not merged: both values go on to the series builder,
    which applies the obs.yaml `same_step` policy (the mean with its band, by default) and says so.
    """
    pending: dict[str, Any] | None = None
    pending_line: int | None = None
    copied = False  # `pending` is the caller's record until a merge needs to change it
    for line, record in records:
        step = record.get(step_key)
        same = pending is not None and step is not None and pending.get(step_key) == step
        if same and pending is not None and not _conflicts(pending, record):
            if not copied:
                pending, copied = dict(pending), True
            pending.update(record)
            continue
        if pending is not None:
            yield pending_line, pending
        pending, pending_line, copied = record, line, False
    if pending is not None:
        yield pending_line, pending


def _conflicts(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """`b` logs a key of `a` again with another value (epoch, the same in both, does not count)."""
    return any(k in a and a[k] != v and not _both_nan(a[k], v) for k, v in b.items())


def _both_nan(a: Any, b: Any) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


def build_log_metrics(
    run: Run,
    records: Iterable[tuple[int | None, dict[str, Any]]],
    path: Path,
    diags: Diagnostics,
    step_key: str | None,
    same_step: str = "mean",
    restarts: str = "last",
) -> None:
    """Trainer-style records -> `run.metrics` (streamed: records may come from a multi-GB log).

    The final summary row goes to `run.summary`; train and eval rows at the same step are merged;
    TRL's GRPO keys get their health-panel names; durations written as text become seconds.
    """
    cleaner = RecordCleaner(path, diags)
    key_holder: list[str] = [step_key] if step_key else []

    def prepared() -> Iterator[tuple[int | None, dict[str, Any]]]:
        for line, rec in records:
            if is_summary_record(rec):
                for k, v in rec.items():
                    if k not in STEP_KEYS and k != step_key and is_number(v):
                        run.summary[k] = float(v)
                continue
            if not key_holder:
                key_holder.append(next((k for k in STEP_KEYS if k in rec), "line index"))
            yield line, trl_aliases(cleaner.clean(rec, line))

    builder = SeriesBuilder(path, diags, step_key=step_key, same_step=same_step, restarts=restarts)
    stream = prepared()
    first = next(stream, None)
    if first is not None:
        chained: Iterable[tuple[int | None, dict[str, Any]]] = _prepend(first, stream)
        if key_holder[0] != "line index":
            chained = merge_same_step(chained, key_holder[0], path, diags)
        for line, record in chained:
            builder.add(record, line)
    run.metrics = builder.finish()
    cleaner.report(run, ignore=[run.metrics.stage_key] if run.metrics.stage_key else ())
    if run.metrics.step_source == "line index" and run.metrics.series:
        run.notices.append(
            f"{path.name} has no step column (looked for {', '.join(STEP_KEYS)}): "
            "the x axis is the record's position in the log."
        )


def _prepend(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest
