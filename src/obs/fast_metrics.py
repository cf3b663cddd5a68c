"""Fast path for large, clean metrics logs: their JSON lines parsed into columns in native code.

The tolerant reader (jsonl.py + series_builder.py) handles every oddity of real logs with a
diagnostic per problem, at ~20-40 MB/s of Python work. Most large logs are clean: one flat object
per line, numbers, nulls and a string `stage`. For those, msgspec's typed records
(`obs.json_columns`) read several times faster, and this module produces exactly the Metrics the
tolerant path would. Anything else (a malformed line, NaN literals, text in a numeric column, nested
objects, a record without a step, a repeated key, text that needs cleaning or a number too large to
compute with: `obs.sanitize`) returns None and the tolerant path takes over, so the contract's
diagnostics never depend on which path ran.

One fast parser, with no state between calls: polars' reader cost ~0.12 s and ~80 MB to import in
every process, paid back only after a dozen logs (docs/performance.md, issue 25), and choosing
between the two by a process-wide counter made a log's reading depend on what was read before it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson

from obs.decimate import distinct
from obs.diagnostics import Diagnostics
from obs.json_columns import read_columns, stage_codes
from obs.model import Metrics, Series
from obs.sanitize import json_may_hold_unsafe
from obs.series_builder import (
    STEP_KEYS,
    ReducedColumn,
    stage_change_points,
    stages_from_points,
    to_series,
)

FAST_PATH_MIN_BYTES = 1 << 20  # below 1 MB the tolerant reader is as fast
STREAM_MIN_BYTES = 64 << 20  # above this a log is read in chunks and kept reduced
CHUNK_BYTES = 32 << 20
# A metric record is a few hundred bytes. The column parser holds every line's values at once, so one
# line of tens of MB (a text dump in a log) would cost ~10x its size; such a file goes to the tolerant
# reader, which skips over-long lines as they stream by and says so (obs.jsonl.MAX_LINE_BYTES).
FAST_LINE_MAX_BYTES = 1 << 20


def _has_long_line(raw: bytes, limit: int = FAST_LINE_MAX_BYTES) -> bool:
    """Whether a line of `raw` is longer than `limit` (no copy of the text: one pass over its bytes)."""
    if len(raw) <= limit:
        return False
    ends = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)
    bounds = np.concatenate(([-1], ends, [len(raw)]))
    return bool(np.max(np.diff(bounds)) > limit + 1)


def read_metrics_fast(path: Path, diags: Diagnostics, step_key: str | None) -> Metrics | None:
    """Metrics for a clean JSONL log, or None when the tolerant reader must handle the file."""
    try:
        if path.stat().st_size >= STREAM_MIN_BYTES:
            return read_metrics_streamed(path, diags, step_key)
        raw = path.read_bytes()
    except OSError:
        return None
    # Bare NaN/Infinity need no scan here: msgspec's JSON decoder refuses them (a test holds it to that),
    # and the tolerant reader then reports them.
    if json_may_hold_unsafe(raw) or _has_long_line(raw):
        return None
    body, partial = raw, False
    if raw and not raw.endswith(b"\n"):
        cut = raw.rfind(b"\n")
        body = raw[: cut + 1] if cut >= 0 else b""
        partial = True
    first_line = body[: body.find(b"\n")].strip()
    if not first_line:
        return None
    try:
        first = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(first, dict):
        return None
    key = step_key or next((k for k in STEP_KEYS if k in first), None)
    if key is None:
        return None  # line-index steps: rare in big logs; the tolerant path says so properly
    columns = _read_columns(body, key)
    if columns is None:
        return None
    steps, series_values, stage_key, stage_points = columns
    if distinct(steps).size != steps.size or bool(np.any(np.diff(steps) < 0)):
        # several rows at one step, or a step counter that goes back (a restart): the tolerant reader aggregates
        # them (obs.yaml same_step) or keeps the attempts (obs.yaml restarts), and says so
        return None
    if partial:
        lineno = raw.count(b"\n") + 1
        diags.info(path, "last line is incomplete (the run may still be writing); it was skipped", lineno)
    series: dict[str, Series] = {}
    duplicates = 0
    for name in sorted(series_values):
        values = series_values[name]
        keep = ~np.isnan(values)
        s, dups = to_series(steps[keep], values[keep])
        duplicates = max(duplicates, dups)
        series[name] = s
    if duplicates:
        diags.warning(path, f"{duplicates} step(s) are logged more than once; the last value of each was kept")
    return Metrics(
        series=series,
        stages=stages_from_points(stage_points),
        step_source=key,
        source_file=str(path),
        stage_key=stage_key,
    )


ParsedColumns = tuple[np.ndarray, dict[str, np.ndarray], str | None, list[tuple[float, str]]]


def _read_columns(body: bytes, key: str) -> ParsedColumns | None:
    """(steps, numeric columns, the stage column's name, its change points) of clean whole lines, or None."""
    cols = read_columns(body, key)
    if cols is None:
        return None
    points: list[tuple[float, str]] = []
    if cols.stage_key is not None:
        keep, codes, names = stage_codes(cols.stage_labels)
        points = stage_change_points(cols.steps[keep], codes, names) if names else []
    return cols.steps, cols.values, cols.stage_key, points


def read_metrics_streamed(path: Path, diags: Diagnostics, step_key: str | None) -> Metrics | None:
    """A very long clean log, read 32 MB at a time and kept reduced: memory stays bounded whatever
    its length, every bucket's extremes and the last points stay exact. Requires strictly increasing
    steps (the common case for long logs); anything else goes to the other readers."""
    reduced: dict[str, ReducedColumn] = {}
    stage_points: list[tuple[float, str]] = []
    stage_key: str | None = None
    key = step_key
    last_step = -np.inf
    newlines = 0
    carry = b""
    with path.open("rb") as fh:
        while block := fh.read(CHUNK_BYTES):
            block = carry + block
            cut = block.rfind(b"\n")
            if cut < 0:
                carry = block
                continue
            body, carry = block[: cut + 1], block[cut + 1 :]
            newlines += body.count(b"\n")
            if json_may_hold_unsafe(body) or _has_long_line(body):
                return None
            if key is None:
                first = _first_object(body)
                key = next((k for k in STEP_KEYS if k in first), None) if first is not None else None
                if key is None:
                    return None
            columns = _read_columns(body, key)
            if columns is None:
                return None
            steps, values, chunk_stage, points = columns
            if chunk_stage is not None and stage_key is not None and chunk_stage != stage_key:
                return None  # two stage columns: the tolerant reader flattens and reports the second
            if steps.size and (steps[0] <= last_step or np.any(np.diff(steps) <= 0)):
                return None
            if steps.size:
                last_step = float(steps[-1])
            for name, vals in values.items():
                reduced.setdefault(name, ReducedColumn()).add(steps, vals)
            stage_points.extend(points)
            stage_key = stage_key or chunk_stage
    if key is None:
        return None
    if carry.strip():
        diags.info(path, "last line is incomplete (the run may still be writing); it was skipped", newlines + 1)
    series = {name: r.finish() for name, r in sorted(reduced.items()) if r.logged}
    return Metrics(
        series=series,
        stages=stages_from_points(stage_points),
        step_source=key,
        source_file=str(path),
        stage_key=stage_key,
    )


def _first_object(body: bytes) -> dict[str, Any] | None:
    try:
        first = orjson.loads(body[: body.find(b"\n")].strip())
    except orjson.JSONDecodeError:
        return None
    return first if isinstance(first, dict) else None
