"""Tolerant, streaming JSON-lines reading.

Training logs are written by crashing, pre-empted, still-running processes: a last line cut in
half, a `NaN` that is not JSON, a stray non-UTF-8 byte. The fast path parses each line with orjson;
a line orjson refuses gets a second, more forgiving chance (stdlib json accepts NaN/Infinity), and
only then becomes a diagnostic. The file is streamed line by line, never loaded whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from obs.diagnostics import Diagnostics


@dataclass
class JsonlStats:
    """What happened while reading, for one summary diagnostic per kind instead of one per line."""

    lines: int = 0
    records: int = 0
    blank: int = 0
    nonstandard_numbers: list[int] = field(default_factory=list)
    bad_utf8: list[int] = field(default_factory=list)
    partial_last_line: bool = False


def _lenient_loads(text: str, seen: list[str] | None = None) -> Any:
    """stdlib json, which accepts bare NaN/Infinity; `seen` collects the ones it met (not "NaN" in a string)."""

    def constant(name: str) -> float:
        if seen is not None:
            seen.append(name)
        return float(name.replace("Infinity", "inf"))

    return json.loads(text, parse_constant=constant)


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
    with path.open("rb") as fh:
        lineno = 0
        for raw in fh:
            lineno += 1
            st.lines = lineno
            ends_with_newline = raw.endswith(b"\n")
            stripped = raw.strip()
            if not stripped:
                st.blank += 1
                continue
            try:
                obj = orjson.loads(stripped)
            except orjson.JSONDecodeError:
                obj, problem = _second_chance(stripped, lineno, st)
                if problem is not None:
                    if not ends_with_newline:
                        st.partial_last_line = True
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
            st.records += 1
            yield lineno, obj
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
        obj = _lenient_loads(text, constants)
    except json.JSONDecodeError as exc:
        snippet = text[:60] + ("…" if len(text) > 60 else "")
        return None, f"malformed JSON ({exc.msg} at column {exc.colno}): {snippet!r}; line skipped"
    except RecursionError:
        return None, "JSON nested too deeply; line skipped"
    if constants:
        st.nonstandard_numbers.append(lineno)
    return obj, None
