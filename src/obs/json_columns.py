"""A clean JSON-lines metrics log as columns, parsed by msgspec into typed records.

The fast metrics path (`obs.fast_metrics`) needs each key of a clean log as one array. This is its one
parser: the column types are taken from the first lines, msgspec decodes every line into a record of
exactly those types (a value of another type fails the whole file), and numpy turns the records into
columns. (polars' JSON reader did the same in native code, but its import cost every process ~0.12 s and
~80 MB, and saved less than that on a process's first dozen logs: docs/performance.md.)

It gives exactly what the tolerant reader would or nothing: any doubt (a value of another type than its
column's, a nested object, a key written twice, text outside the one stage column, a number too large to
compute with) returns None, and the tolerant reader reads the file and says what is wrong.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import msgspec
import numpy as np
import orjson

from obs.sanitize import FLOAT_LIMIT
from obs.vocabulary import is_stage_key

SAMPLE_ROWS = 200  # lines whose values give each column's type


class Columns(NamedTuple):
    """A log's steps, its numeric columns (NaN where a line has no value), and its stage column."""

    steps: np.ndarray
    values: dict[str, np.ndarray]
    stage_key: str | None
    stage_labels: list[str | None]


def _kind(value: Any) -> str | None:
    """The column type a value asks for: 'number', 'bool', 'text', or None for null; 'other' for the rest."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    return "other"


def _kinds(lines: list[bytes]) -> dict[str, str | None] | None:
    """Each key of `lines` with the type of its values (None when only nulls were seen), or None when
    a line is not an object, a value is an object or a list, or a key holds values of two types."""
    kinds: dict[str, str | None] = {}
    for line in lines:
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(record, dict):
            return None
        for key, value in record.items():
            kind = _kind(value)
            if kind == "other":
                return None
            known = kinds.get(key)
            if known is None:
                kinds[key] = kind
            elif kind is not None and kind != known:
                return None
    return kinds


_TYPES: dict[str | None, Any] = {"number": float | None, "bool": bool | None, "text": str | None, None: float | None}


def _decode(body: bytes, kinds: dict[str, str | None]) -> list[Any] | None:
    """Every line of `body` as a record with `kinds`' fields (keys not among them are skipped)."""
    names = list(kinds)
    # a number absent from a line is NaN already (as a null becomes in `_held`): a column without nulls is then
    # all floats, which numpy converts without looking for None (~15% of `_held` on a bench log)
    fields = [(f"c{i}", _TYPES[kind], None if kind == "text" else math.nan) for i, kind in enumerate(kinds.values())]
    record = msgspec.defstruct(
        "LogRecord", fields, rename={f"c{i}": name for i, name in enumerate(names)}, gc=False, frozen=True
    )
    try:
        return list(msgspec.json.Decoder(record).decode_lines(body))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _held(records: list[Any], kinds: dict[str, str | None]) -> tuple[np.ndarray, list[tuple[Any, ...]], int]:
    """The records' numeric and true/false fields as one matrix (NaN for null), their text fields as
    tuples, and how many values the records hold (nulls not counted)."""
    names = list(kinds)
    numeric = [f"c{i}" for i, name in enumerate(names) if kinds[name] != "text"]
    texts = [f"c{i}" for i, name in enumerate(names) if kinds[name] == "text"]
    matrix = np.empty((len(records), len(numeric)), dtype=np.float64)
    if numeric and records:
        get = operator.attrgetter(*numeric)
        rows = list(map(get, records)) if len(numeric) > 1 else [(v,) for v in map(get, records)]
        matrix = np.array(rows, dtype=np.float64).reshape(len(records), len(numeric))  # None -> NaN
    text_lists = [tuple(map(operator.attrgetter(t), records)) for t in texts]
    held = int(np.count_nonzero(~np.isnan(matrix))) + sum(len(col) - col.count(None) for col in text_lists)
    return matrix, text_lists, held


def read_columns(body: bytes, step_key: str) -> Columns | None:
    """The columns of a clean log (`body`: whole lines), or None for the tolerant reader."""
    head_end = 0
    for _ in range(SAMPLE_ROWS):
        cut = body.find(b"\n", head_end)
        if cut < 0:
            head_end = len(body)
            break
        head_end = cut + 1
    parsed = _parsed(body, body[:head_end].split(b"\n"))
    if parsed is not None and not every_key_held(body, parsed[3]):
        # A key the first lines lack (an eval metric logged every 500 steps): learn every key, once.
        parsed = _parsed(body, body.split(b"\n"))
        if parsed is not None and not every_key_held(body, parsed[3]):
            return None  # a key written twice in a record, or '":' inside a text: the tolerant reader says
    if parsed is None:
        return None
    kinds, matrix, texts, _ = parsed
    return _to_columns(kinds, matrix, texts, step_key)


def _parsed(
    body: bytes, typed_by: list[bytes]
) -> tuple[dict[str, str | None], np.ndarray, list[tuple[Any, ...]], int] | None:
    """The lines of `body` decoded with the column types the lines `typed_by` give: (types, numeric matrix,
    text columns, values held), or None when a line does not fit them."""
    kinds = _kinds(typed_by)
    records = _decode(body, kinds) if kinds is not None else None
    if kinds is None or records is None:
        return None
    return (kinds, *_held(records, kinds))


def every_key_held(body: bytes, held: int) -> bool:
    """Whether the records hold every key the text writes: each key is written `"name":`, so their count is
    the values held plus the explicit nulls (a key written twice, or unknown to the records, breaks it)."""
    keys = body.count(b'":')
    if keys == held:
        return True
    return keys == held + body.count(b'": null') + body.count(b'":null')


def _to_columns(
    kinds: dict[str, str | None], matrix: np.ndarray, texts: list[tuple[Any, ...]], step_key: str
) -> Columns | None:
    numeric = [name for name, kind in kinds.items() if kind != "text"]
    text_names = [name for name, kind in kinds.items() if kind == "text"]
    if kinds.get(step_key) != "number":
        return None
    if len(text_names) > 1 or (text_names and not is_stage_key(text_names[0])):
        return None  # text in a metric column: the tolerant reader flattens and reports it
    if np.any(np.abs(matrix) > FLOAT_LIMIT):  # the tolerant reader reports these (obs.sanitize)
        return None
    steps = matrix[:, numeric.index(step_key)]
    if not np.all(np.isfinite(steps)):  # a line without a step, or a null one
        return None
    values: dict[str, np.ndarray] = {}
    for i, name in enumerate(numeric):
        column = matrix[:, i]
        if name == step_key or np.all(np.isnan(column)):  # no value in any line: no series
            continue
        values[name] = np.ascontiguousarray(column)
    stage_key = text_names[0] if text_names else None
    labels: list[str | None] = list(texts[0]) if stage_key else []
    return Columns(steps=np.ascontiguousarray(steps), values=values, stage_key=stage_key, stage_labels=labels)


def stage_codes(labels: list[str | None]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(which rows have a label, each labelled row's index into the sorted distinct labels, those labels)."""
    present = [label for label in labels if label is not None]
    keep = np.fromiter((label is not None for label in labels), dtype=bool, count=len(labels))
    names = sorted(set(present))
    index = {name: i for i, name in enumerate(names)}
    codes = np.fromiter(map(index.__getitem__, present), dtype=np.intp, count=len(present))
    return keep, codes, names
