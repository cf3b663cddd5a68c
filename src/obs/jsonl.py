"""Tolerant, streaming JSON-lines reading.

Training logs are written by crashing, pre-empted, still-running processes: a last line cut in
half, a `NaN` that is not JSON, a stray non-UTF-8 byte. The fast path parses each line with orjson;
a line orjson refuses gets a second, more forgiving chance (stdlib json accepts NaN/Infinity), and
only then becomes a diagnostic. The file is streamed line by line, never loaded whole, and a line
is never read whole either: one over `MAX_LINE_BYTES` is skipped as it streams by. Every object
yielded is safe to use (`obs.sanitize`): text that cannot be written is replaced, numbers beyond
64 bits are floats, and nothing is nested deeper than `MAX_DEPTH`.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from obs.diagnostics import Diagnostics
from obs.sanitize import Findings, clean_text, clean_tree, digits_text, json_int, json_may_hold_unsafe

MAX_LINE_BYTES = 16 * 1024 * 1024  # a record longer than this is not a log record: skipped, never held whole
MAX_DEPTH = 64  # levels of nesting in one record
_SKIP_CHUNK = 1024 * 1024
# A file up to this size is read whole first, so one scan of its bytes can tell that no line needs its text
# cleaned (most files: then no line is scanned again); a larger one is streamed and each line scanned.
WHOLE_FILE_BYTES = 8 * 1024 * 1024


@dataclass
class JsonlStats:
    """What happened while reading, for one summary diagnostic per kind instead of one per line."""

    lines: int = 0
    records: int = 0
    blank: int = 0
    nonstandard_numbers: list[int] = field(default_factory=list)
    bad_utf8: list[int] = field(default_factory=list)
    long_lines: list[tuple[int, int]] = field(default_factory=list)  # (line, bytes)
    repeated: list[tuple[int, str]] = field(default_factory=list)  # (line, key)
    findings: Findings = field(default_factory=Findings)


def bounded_lines(fh: Any, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[bytes | None, int]]:
    """(line, size) for each line of a binary file; a line over `limit` bytes is (None, its size), read past
    in chunks, never held whole."""
    while raw := fh.readline(limit + 1):
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield raw, len(raw)
            continue
        size = len(raw)
        while chunk := fh.readline(_SKIP_CHUNK):
            size += len(chunk)
            if chunk.endswith(b"\n"):
                break
        yield None, size


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether parsed JSON nests more than `limit` levels (iterative: the check itself cannot overflow)."""
    if isinstance(value, dict):  # a flat record whose strings hold many brackets: the byte count's common false alarm
        for v in value.values():
            if isinstance(v, dict | list):
                break
        else:
            return False
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list))
    return False


def lenient_decoder(
    findings: Findings, line: int | None = None, constants: list[str] | None = None
) -> json.JSONDecoder:
    """The stdlib parser, which accepts NaN/Infinity, with integers read as orjson reads them (beyond 64 bits: a
    float, never int() of thousands of digits) and numbers past the float range counted (they become infinity).
    `constants` collects the bare NaN/Infinity it met (not "NaN" in a string)."""

    def constant(name: str) -> float:
        if constants is not None:
            constants.append(name)
        return float(name.replace("Infinity", "inf"))

    def number(text: str) -> float:
        value = float(text)
        if math.isinf(value):
            findings.saw_big_number(line, text[:40])
        return value

    def integer(text: str) -> int | float:
        value = json_int(text)
        if isinstance(value, float) and math.isinf(value):
            findings.saw_big_number(line, digits_text(text))
        return value

    return json.JSONDecoder(parse_int=integer, parse_float=number, parse_constant=constant)


def lenient_loads(text: str, findings: Findings, line: int | None = None, constants: list[str] | None = None) -> Any:
    return lenient_decoder(findings, line, constants).decode(text)


def key_count(value: Any) -> int:
    """Keys of every object in parsed JSON (iterative)."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            count += len(item)
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, dict | list))
    return count


def repeated_keys(text: str | bytes, obj: Any) -> list[str]:
    """Keys written twice in one object of `text` (whose parse is `obj`); JSON parsers keep the last silently.

    Cheap for the common case: every key is written `"key":`, so when the text holds exactly as many
    `":` as the parsed objects have keys, no key can have been lost. Otherwise (a repeated key, a `":`
    inside a string, a space before a colon) the text is parsed again, watching each object's keys.
    """
    marks = text.count(b'":') if isinstance(text, bytes) else text.count('":')
    if marks == (len(obj) if isinstance(obj, dict) else -1) or marks == key_count(obj):
        return []
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) < len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    repeated.append(key)
                seen.add(key)
        return out

    decoder = json.JSONDecoder(object_pairs_hook=pairs, parse_int=json_int)
    try:
        decoder.decode(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
    except (ValueError, RecursionError):
        return []
    return [clean_text(k) for k in repeated]


def iter_jsonl(
    path: Path,
    diags: Diagnostics,
    *,
    stats: JsonlStats | None = None,
    partial_last_is_normal: bool = True,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, object) for every readable JSON object line.

    Malformed lines are reported with their line number and skipped. A malformed *last* line
    without a trailing newline is what a run that is still writing leaves behind: it is reported
    as `info` (when `partial_last_is_normal`) rather than as a warning.
    """
    st = stats if stats is not None else JsonlStats()
    try:
        encoding = _utf16(path)
        if encoding:  # every line would be one more "malformed JSON": one message instead
            diags.warning(
                path,
                f"the file is {encoding} (it starts with a {encoding} byte-order mark); obs reads JSON lines as "
                f"UTF-8: convert it (iconv -f {encoding} -t UTF-8)",
                1,
            )
            return
        yield from _records(path, diags, st, partial_last_is_normal)
    except OSError as exc:  # gone, no permission, an I/O error: what was read is kept
        diags.unreadable(path, exc)
    _report(path, diags, st)


def _utf16(path: Path) -> str | None:
    """'UTF-16' or 'UTF-32' when the file starts with that encoding's byte-order mark, else None."""
    with path.open("rb") as fh:
        head = fh.read(4096)
    for name, codec, boms in (
        ("UTF-32", "utf-32", (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")),
        ("UTF-16", "utf-16", (b"\xff\xfe", b"\xfe\xff")),
    ):
        if head.startswith(boms):
            unit = 4 if name == "UTF-32" else 2
            try:  # text in that encoding, not binary bytes that happen to start alike
                head[: len(head) // unit * unit].decode(codec)
            except UnicodeDecodeError:
                return None
            return name
    return None


def _records(
    path: Path, diags: Diagnostics, st: JsonlStats, partial_last_is_normal: bool
) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open("rb") as fh:
        lineno = 0
        # a file known to be large is streamed from its start, its first 8 MB not read twice
        small = os.fstat(fh.fileno()).st_size <= WHOLE_FILE_BYTES
        whole = fh.read(WHOLE_FILE_BYTES + 1) if small else None
        if whole is not None and len(whole) <= WHOLE_FILE_BYTES:
            may_hold_unsafe = json_may_hold_unsafe(whole)
            clean = None if may_hold_unsafe else _clean_file(whole)
            if clean is not None:
                records, st.lines, st.blank, st.records = clean
                yield from records
                return
            lines: Iterator[tuple[bytes | None, int]] = bounded_lines(io.BytesIO(whole))
        else:
            may_hold_unsafe = True  # streamed: each line is scanned
            if whole is not None:  # it grew past the limit while it was read
                fh.seek(0)
            whole = None
            lines = bounded_lines(fh)
        for raw, size in lines:
            lineno += 1
            st.lines = lineno
            if raw is None:
                st.long_lines.append((lineno, size))
                continue
            ends_with_newline = raw.endswith(b"\n")
            stripped = raw.strip()
            if not stripped:
                st.blank += 1
                continue
            lenient = False
            try:
                obj = orjson.loads(stripped)
            except orjson.JSONDecodeError:
                lenient = True
                obj, problem = _second_chance(stripped, lineno, st)
                if problem is not None:
                    if not ends_with_newline:
                        msg = "last line is incomplete (the run may still be writing); it was skipped"
                        if partial_last_is_normal:
                            diags.info(path, msg, lineno)
                        else:
                            diags.warning(path, msg, lineno)
                    else:
                        diags.warning(path, problem, lineno)
                    continue
            if not isinstance(obj, dict):
                diags.warning(path, f"expected a JSON object, found {type(obj).__name__}; line skipped", lineno)
                continue
            if stripped.count(b"{") + stripped.count(b"[") > MAX_DEPTH and too_deep(obj):
                diags.warning(path, f"object nested more than {MAX_DEPTH} levels deep; line skipped", lineno)
                continue
            if lenient or (may_hold_unsafe and json_may_hold_unsafe(stripped)):
                obj = clean_tree(obj, st.findings, lineno)
            repeated = repeated_keys(stripped, obj)
            if repeated:
                st.repeated.append((lineno, repeated[0]))
            st.records += 1
            yield lineno, obj


_NESTED_VALUE = re.compile(rb":\s*[\[{]")  # where a value may be an object or a list (or text that looks so)


def _clean_file(whole: bytes) -> tuple[list[tuple[int, dict[str, Any]]], int, int, int] | None:
    """(records, lines, blank lines, records read) of a file with nothing to report, or None.

    Nothing to report: it ends with a newline, every line is blank or one JSON object orjson reads, no key
    is written twice (each line holds as many `":` as its object has keys), nothing is nested too deep, and
    no text needs cleaning (the caller checked). Such a file (most files) costs a third of the line-by-line
    reading, which then reads any other file from its start, so what a file yields never depends on which
    way it was read.
    """
    if whole and not whole.endswith(b"\n"):
        return None
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    nested = _NESTED_VALUE.search(whole) is not None
    records: list[tuple[int, dict[str, Any]]] = []
    blank = 0
    lines = whole.split(b"\n")
    lines.pop()  # the empty text after the last newline
    for lineno, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            blank += 1
            continue
        try:
            obj = loads(stripped)
        except decode_error:
            return None
        if type(obj) is not dict:
            return None
        if nested:
            if too_deep(obj) or stripped.count(b'":') != key_count(obj):
                return None
        elif stripped.count(b'":') != len(obj):
            return None
        records.append((lineno, obj))
    return records, len(lines), blank, len(records)


def _report(path: Path, diags: Diagnostics, st: JsonlStats) -> None:
    """One diagnostic per kind of problem met while reading, with its first line."""
    for first, size in st.long_lines[:1]:
        more = f" ({len(st.long_lines)} such lines)" if len(st.long_lines) > 1 else ""
        diags.warning(
            path,
            f"line is {size:,} bytes long, over the {MAX_LINE_BYTES:,} bytes a record may have{more}; "
            "skipped without being read",
            first,
        )
    for line, message in st.findings.messages(unit="value"):
        diags.warning(path, message, line)
    if st.repeated:
        first, key = st.repeated[0]
        more = f" ({len(st.repeated)} lines do, first at line {first})" if len(st.repeated) > 1 else ""
        diags.warning(path, f"key '{key}' is written twice in one record{more}; the last value was kept", first)
    if st.nonstandard_numbers:
        first = st.nonstandard_numbers[0]
        diags.warning(
            path,
            f"{len(st.nonstandard_numbers)} line(s) use bare NaN/Infinity, which is not JSON "
            f"(first at line {first}); the values were kept",
            first,
        )
    if st.bad_utf8:
        first = st.bad_utf8[0]
        diags.warning(
            path,
            f"{len(st.bad_utf8)} line(s) are not valid UTF-8 (first at line {first}); "
            "bad bytes were replaced with U+FFFD",
            first,
        )


def _second_chance(raw: bytes, lineno: int, st: JsonlStats) -> tuple[Any, str | None]:
    """Parse a line orjson refused; return (object, None) or (None, problem)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        st.bad_utf8.append(lineno)
    constants: list[str] = []
    try:
        obj = lenient_loads(text, st.findings, lineno, constants)
    except json.JSONDecodeError as exc:
        snippet = clean_text(text[:60]) + ("…" if len(text) > 60 else "")
        return None, f"malformed JSON ({exc.msg} at column {exc.colno}): {snippet!r}; line skipped"
    except RecursionError:
        return None, f"JSON nested more than {MAX_DEPTH} levels deep; line skipped"
    if constants and isinstance(obj, dict):  # a bare `NaN` line is no record: it is skipped, its value not kept
        st.nonstandard_numbers.append(lineno)
    return obj, None
