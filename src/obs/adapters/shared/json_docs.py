"""JSON documents (states, results, summaries): read whole and tolerantly with every problem at its line, the
line of each element of an array found (so a diagnostic can point at it), the readable part of a truncated
document salvaged."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from obs.adapters.shared.text_files import decode_text
from obs.diagnostics import Diagnostics, Severity
from obs.jsonl import MAX_DEPTH, lenient_decoder, lenient_loads, repeated_keys, too_deep
from obs.sanitize import CLEANED, Findings, clean_tree, json_may_hold_unsafe

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]\n:]')


def element_lines(text: str, key: str | None) -> list[int]:
    """1-based line of each object in the array at the top level (`key=None`) or under top-level `key`.

    A tokenizer that only knows strings, colons and brackets: enough to point a diagnostic at the
    entry of a pretty-printed `log_history` without a second JSON parser.
    """
    lines: list[int] = []
    line = 1
    depth = 0
    last_string: str | None = None
    current_key: str | None = None
    target_depth = 1 if key is None else 2
    in_target = key is None
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok == "\n":
            line += 1
        elif tok[0] == '"':
            if depth == 1:
                last_string = tok[1:-1]
        elif tok == ":":
            if depth == 1:
                current_key = last_string
        elif tok in "{[":
            if tok == "[" and key is not None and depth == 1:
                in_target = current_key == key
            if tok == "{" and in_target and depth == target_depth:
                lines.append(line)
            depth += 1
        else:
            depth -= 1
            if key is not None and depth == 1 and tok == "]":
                in_target = False
    return lines


def salvage_array(text: str, key: str | None) -> tuple[list[Any], int | None]:
    """Parse the elements of a (possibly truncated) JSON array one by one until the first bad one.

    Returns the elements read and the 1-based line where reading stopped (None when the array ended).
    """
    decoder = lenient_decoder(Findings())
    if key is None:
        start = text.find("[")
    else:
        m = re.search(r'"' + re.escape(key) + r'"\s*:\s*\[', text)
        start = m.end() - 1 if m else -1
    if start < 0:
        return [], 1
    pos = start + 1
    items: list[Any] = []
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n:
            return items, text.count("\n", 0, n) + 1
        if text[pos] == "]":
            return items, None
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return items, text.count("\n", 0, pos) + 1
        if too_deep(value):
            return items, text.count("\n", 0, pos) + 1
        items.append(clean_tree(value, Findings()))
        pos = end


def salvage_object(text: str, key: str) -> Any | None:
    """The value of top-level `key` in a document that does not parse as a whole, when it is intact."""
    m = re.search(r'"' + re.escape(key) + r'"\s*:\s*', text)
    if m is None:
        return None
    try:
        value, _ = lenient_decoder(Findings()).raw_decode(text, m.end())
    except (ValueError, RecursionError):
        return None
    return None if too_deep(value) else clean_tree(value, Findings())


# Parsed, a JSON document takes up to ten times its size in memory; a build keeps to ~400 MB. A log that
# size is JSON lines, which is streamed. Summaries, metadata, gates and final results are small.
MAX_JSON_DOCUMENT_BYTES = 32 * 1024 * 1024
MAX_SMALL_DOCUMENT_BYTES = 8 * 1024 * 1024


@dataclass
class JsonDoc:
    """A JSON document read tolerantly: `data` when it parsed, else `None` and `text` for salvage."""

    data: Any
    text: str
    ok: bool


def read_json_document(
    path: Path,
    diags: Diagnostics,
    max_bytes: int = MAX_JSON_DOCUMENT_BYTES,
    hint: str = "a log this long should be written as JSON lines, which obs streams",
) -> JsonDoc | None:
    """Read a JSON document whole (they are small: states, results, summaries); report what is wrong.

    orjson parses it; a document orjson refuses (bare NaN, a lone surrogate escape, a number past the
    float range) gets the stdlib parser. Either way the data is made safe as a JSON-lines record is
    (`obs.jsonl`, `obs.sanitize`): nothing nested deeper than MAX_DEPTH, no unwritable text, no
    integer beyond 64 bits. A file over `max_bytes` (what a file of its kind can reasonably be) is
    not read. Returns None only when the file cannot be read at all (unreadable, empty, too large,
    too deep).
    """
    try:
        size = path.stat().st_size
        if size > max_bytes:
            diags.error(
                path,
                f"file is {size / 2**20:,.1f} MB; obs reads a JSON document like this one up to "
                f"{max_bytes // 2**20} MB, so it was not read ({hint})",
            )
            return None
        raw = path.read_bytes()
    except OSError as exc:
        diags.unreadable(path, exc)
        return None
    if not raw.strip():
        diags.error(path, "file is empty; expected a JSON document")
        return None
    text = decode_text(raw, path, diags)
    findings = Findings()
    constants: list[str] = []
    lenient = False
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        lenient = True
        try:
            data = lenient_loads(text, findings, constants=constants)
        except json.JSONDecodeError as exc:
            truncated = exc.pos >= len(text.rstrip()) - 1
            hint = "; the file looks truncated (cut off before its end)" if truncated else ""
            diags.error(path, f"invalid JSON: {exc.msg} at column {exc.colno}{hint}", exc.lineno)
            return JsonDoc(None, text, False)
        except RecursionError:
            diags.error(path, f"JSON nested more than {MAX_DEPTH} levels deep; not read", 1)
            return None
    if too_deep(data):
        diags.error(path, f"JSON nested more than {MAX_DEPTH} levels deep; not read", _line_of(text, _DEEP))
        return None
    if constants:  # real bare constants, not the text "NaN" inside a string
        line = _first_bare_constant_line(text)
        diags.warning(
            path,
            f"uses bare NaN/Infinity ({len(constants)} value(s), first at line {line}), "
            "which is not JSON; the values were kept",
            line,
        )
    if lenient or json_may_hold_unsafe(text):
        data = clean_tree(data, findings)
    for line, message in findings.messages():
        pattern = _UNSAFE_TEXT if CLEANED in message else _BIG_NUMBER
        diags.warning(path, message, line or _line_of(text, pattern))
    repeated = repeated_keys(text, data)
    if repeated:
        key = repeated[0]
        more = f" ({len(repeated)} keys are)" if len(repeated) > 1 else ""
        second = list(re.finditer(r'"' + re.escape(key) + r'"\s*:', text))[1:2]
        line = text.count("\n", 0, second[0].start()) + 1 if second else None
        diags.warning(path, f"key '{key}' is written twice in one object{more}; the last value was kept", line)
    return JsonDoc(data, text, True)


_UNSAFE_TEXT = re.compile(r"\\u(?:00[01]|00[89]|007[fF]|[dD][89a-fA-F])|[\x7f-\x9f]")
_BIG_NUMBER = re.compile(r"\d[eE]\+?\d{3,}|\d{309,}")
_DEEP = re.compile(r"(?:[\[{]\s*){" + str(MAX_DEPTH) + "}")
_STRING_OR_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def _line_of(text: str, pattern: re.Pattern[str]) -> int | None:
    """The line of the first match of `pattern` in `text` (for a finding about a whole document)."""
    m = pattern.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _first_bare_constant_line(text: str) -> int | None:
    for m in _STRING_OR_CONSTANT.finditer(text):
        if m.group(1):
            return text.count("\n", 0, m.start()) + 1
    return None


def read_json_object(
    path: Path,
    diags: Diagnostics,
    severity: Severity | None = "error",
    complaint: str = "expected a JSON object",
    max_bytes: int = MAX_SMALL_DOCUMENT_BYTES,
) -> dict[str, Any] | None:
    """A JSON document that must be an object (a summary, metadata, a gate): None when it is not.

    A document that is not an object is reported once with `severity` (not at all when None). Such
    documents are small: one over `max_bytes` is reported and not read.
    """
    doc = read_json_document(path, diags, max_bytes, "it should hold a summary, not a log: is it the right file?")
    if doc is None or not doc.ok:
        return None
    if not isinstance(doc.data, dict):
        if severity is not None:
            diags.add(severity, path, complaint, 1)
        return None
    return doc.data
