"""Fast path for large, clean metrics logs: their JSON lines parsed into columns in native code.

The tolerant reader (jsonl.py + series_builder.py) handles every oddity of real logs with a
diagnostic per problem, at ~20-40 MB/s of Python work. Most large logs are clean: one flat object
per line, numbers, nulls and a string `stage`. For those, polars (or, for a process's first log,
msgspec: `_read_columns`) reads ~100-500 MB/s and this module produces exactly the Metrics the
tolerant path would. Anything else (a malformed line, NaN
literals, text in a numeric column, nested objects, a record without a step, a repeated key, text
that needs cleaning or a number too large to compute with: `obs.sanitize`) returns None and the
tolerant path takes over, so the contract's diagnostics never depend on which path ran.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from obs.decimate import distinct
from obs.diagnostics import Diagnostics
from obs.json_columns import SAMPLE_ROWS, every_key_held, read_columns, stage_codes
from obs.model import Metrics, Series
from obs.sanitize import FLOAT_LIMIT, json_may_hold_unsafe
from obs.series_builder import (
    STEP_KEYS,
    ReducedColumn,
    stage_change_points,
    stages_from_points,
    to_series,
)
from obs.vocabulary import is_stage_key

FAST_PATH_MIN_BYTES = 1 << 20  # below 1 MB the tolerant reader is as fast, and polars' import is saved
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
    # Bare NaN/Infinity need no scan here: polars' JSON parser refuses them (a test holds it to that),
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


# Which column parser reads a log: "msgspec" or "polars" (tests set it), or None: msgspec for the first log
# a process reads, unless polars is imported already, and polars from the second log on (see _read_columns).
PARSER: str | None = None
_logs_read = 0

ParsedColumns = tuple[np.ndarray, dict[str, np.ndarray], str | None, list[tuple[float, str]]]


def _read_columns(body: bytes, key: str) -> ParsedColumns | None:
    """(steps, numeric columns, the stage column's name, its change points) of a clean log, or None.

    Two parsers give the same columns (a property test holds both to the tolerant reader). polars parses
    in native code, ~20% less CPU a log than msgspec's typed records (obs.json_columns), but its import
    costs a new process ~0.12 s and ~40 MB: a process that reads one log (a rebuild after one run changed,
    `obs gate`) reads it with msgspec, one that reads many (a build's workers, `obs check`) imports
    polars at its second log.
    """
    global _logs_read
    _logs_read += 1
    parser = PARSER or ("polars" if _logs_read > 1 or "polars" in sys.modules else "msgspec")
    if parser == "msgspec":
        cols = read_columns(body, key)
        if cols is None:
            return None
        points: list[tuple[float, str]] = []
        if cols.stage_key is not None:
            keep, codes, names = stage_codes(cols.stage_labels)
            points = stage_change_points(cols.steps[keep], codes, names) if names else []
        return cols.steps, cols.values, cols.stage_key, points
    frame = _parse(body)
    if frame is None:
        return None
    columns = _columns(frame, key)
    if columns is None:
        return None
    steps, values, stage_values = columns
    stage_points: list[tuple[float, str]] = []
    for labels in stage_values:
        stage_points.extend(_stage_change_points(steps, labels))
    return steps, values, _stage_column(frame, key), stage_points


def _stage_column(frame: Any, key: str) -> str | None:
    """The text column read as stage labels (the one `_columns` took), if any."""
    import polars as pl

    return next((n for n in frame.columns if n != key and frame[n].dtype == pl.String and is_stage_key(n)), None)


def _stage_change_points(steps: np.ndarray, labels: Any) -> list[tuple[float, str]]:
    """A stage column's change points (`labels`: a polars String series), computed as the tolerant
    reader computes them; the codes come from polars in native code (a Python loop over a 20,000-row
    column cost ~4 ms a run)."""
    keep = labels.is_not_null().to_numpy()
    present = labels.drop_nulls()
    if present.len() == 0:
        return []
    names = present.unique().sort().to_list()
    codes = (present.rank("dense") - 1).to_numpy().astype(np.intp)  # dense ranks index the sorted distinct labels
    return stage_change_points(steps[keep], codes, names)


def _parse(body: bytes, schema: dict[str, Any] | None = None) -> Any:
    """Parse with a schema inferred from the first rows (or known from earlier chunks), then prove
    no key was missed.

    Inferring the schema from every row costs a second full pass; inferring it from a sample is
    5x faster but silently drops a key that first appears later (an eval metric logged every
    500 steps). Every key in the file is written as `"name":`, so the number of those must equal
    the values the frame holds plus the explicit nulls; if not, parse again inferring from all rows.
    """
    import polars as pl  # native JSON parser; imported only for large files

    try:
        if schema:
            frame = pl.read_ndjson(io.BytesIO(body), schema=schema)
        else:
            frame = pl.read_ndjson(io.BytesIO(body), infer_schema_length=SAMPLE_ROWS)
        if every_key_held(body, sum(frame.height - frame[c].null_count() for c in frame.columns)):
            return frame
        frame = pl.read_ndjson(io.BytesIO(body), infer_schema_length=None)
        if not every_key_held(body, sum(frame.height - frame[c].null_count() for c in frame.columns)):
            return None  # a key written twice in a record, or '":' inside a string: the tolerant reader sees
        return frame
    except Exception:
        return None


def _columns(frame: Any, key: str) -> tuple[np.ndarray, dict[str, np.ndarray], list[Any]] | None:
    import polars as pl

    if key not in frame.columns:
        return None
    step_col = frame[key]
    if not step_col.dtype.is_numeric() or step_col.null_count():
        return None
    steps = step_col.cast(pl.Float64).to_numpy()
    if not np.all(np.abs(steps) <= FLOAT_LIMIT):  # also false for NaN and infinity
        return None
    values: dict[str, np.ndarray] = {}
    stages: list[Any] = []
    for name in frame.columns:
        if name == key:
            continue
        col = frame[name]
        dtype = col.dtype
        if dtype == pl.Null:
            continue
        if dtype.is_numeric() or dtype == pl.Boolean:
            column = col.cast(pl.Float64).fill_null(np.nan).to_numpy()
            if np.any(np.abs(column) > FLOAT_LIMIT):  # the tolerant reader reports these (obs.sanitize)
                return None
            values[name] = column
        elif dtype == pl.String and is_stage_key(name) and not stages:
            stages.append(col)
        else:
            return None  # text, nested objects, lists: the tolerant path flattens and reports them
    return steps, values, stages


def read_metrics_streamed(path: Path, diags: Diagnostics, step_key: str | None) -> Metrics | None:
    """A very long clean log, read 32 MB at a time and kept reduced: memory stays bounded whatever
    its length, every bucket's extremes and the last points stay exact. Requires strictly increasing
    steps (the common case for long logs); anything else goes to the other readers."""
    reduced: dict[str, ReducedColumn] = {}
    stage_points: list[tuple[float, str]] = []
    stage_key: str | None = None
    key = step_key
    schema: dict[str, Any] | None = None
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
            frame = _parse(body, schema)
            columns = _columns(frame, key) if frame is not None else None
            if frame is not None:
                schema = dict(frame.schema)
            if columns is None:
                return None
            steps, values, stages = columns
            if steps.size and (steps[0] <= last_step or np.any(np.diff(steps) <= 0)):
                return None
            if steps.size:
                last_step = float(steps[-1])
            for name, vals in values.items():
                reduced.setdefault(name, ReducedColumn()).add(steps, vals)
            for labels in stages:
                stage_points.extend(_stage_change_points(steps, labels))
            stage_key = stage_key or _stage_column(frame, key)
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
