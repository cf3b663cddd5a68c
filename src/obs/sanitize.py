"""Values read from input files made safe to compute with and to write: one place, used by every reader.

A file can hold things that parse but that nothing downstream can use:

* **text that cannot be written**: a lone surrogate (a JSON or YAML escape such as `"\\ud800"`; UTF-8
  cannot encode it, so writing the page fails) and control characters (NUL, ESC, ...: not allowed
  in HTML or SVG, they break a figure's text, and a message quoting them moves the terminal's
  cursor). Each control character is written as its visible escape (ESC as the four characters
  `\\x1b`, BEL as `\\x07`), so a page, a figure and a message show which character the file held; a
  lone surrogate, which has no character to name, becomes U+FFFD. Tab, newline and carriage return are
  kept (a one-line field shows them as `\\n` when it is rendered: `obs.render.format.ident`);
* **integers beyond 64 bits**: no array, no JSON writer and no statistic takes them, and one over
  4,300 digits cannot even be turned into text by Python. In a JSON log they are read as floats (as
  orjson and every JavaScript reader do); in a YAML file they are kept as text (`'1267...376'`), so
  a hash written as a number keeps its digits; either way they never reach integer arithmetic;
* **numbers beyond ±1e150** in a metric log: finite, but their squares overflow a double, and so
  does every variance, standard deviation and test statistic computed from them (near 1e308 even a
  plot's axis range does), so a series reads them as infinite, like the `Infinity` a log may hold,
  and says so.

Readers report what was changed through `Findings`, with the file's path and the first line: one
diagnostic per kind of problem and file, however many values it touched.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

REPLACEMENT = "\ufffd"
# How every reader's warning says what cleaning did (readers and tests match on it)
CLEANED = "each control character was written as its escape (e.g. \\x1b) and each lone surrogate as U+FFFD"
# C0 controls but tab, newline and carriage return; DEL; C1 controls; lone surrogates
UNSAFE_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# What in the bytes of a JSON document can turn into unsafe text once parsed: a \u escape of a control
# character or a surrogate, the short escapes \b and \f (backspace, form feed: what json.dumps writes for
# them), a raw DEL or C1 control. (A false alarm, e.g. an escaped backslash before a b, only costs a walk.)
UNSAFE_JSON = re.compile(rb"\\u(?:00[01]|00[89]|007[fF]|[dD][89a-fA-F])|\\[bf]|\x7f|\xc2[\x80-\x9f]")
_ESCAPE_TO_CHECK = re.compile(rb"\\[ubf]")  # a literal first byte: the regex engine scans for it fast
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FLOAT_LIMIT = 1e150  # its square is still a double
MAX_SHOWN_DIGITS = 40


_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _joined(m: re.Match[str]) -> str:
    pair = m.group()
    return chr(0x10000 + ((ord(pair[0]) - 0xD800) << 10) + (ord(pair[1]) - 0xDC00))


def join_pairs(text: str) -> str:
    """`text` with each surrogate pair joined into the character it encodes (see `clean_text`)."""
    return _PAIR.sub(_joined, text) if _PAIR.search(text) else text


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group())
    return REPLACEMENT if 0xD800 <= code <= 0xDFFF else f"\\x{code:02x}"


def clean_text(text: str) -> str:
    """`text` with every character that cannot be written made writable: a control character as its
    visible escape (`\\x1b`), a lone surrogate as U+FFFD.

    A surrogate pair (YAML's `"\\ud83d\\ude00"`, as `json.dumps` writes an emoji; a JSON parser joins
    it, PyYAML does not) is first joined into the character it encodes: only a lone surrogate is lost.
    """
    return UNSAFE_TEXT.sub(_escaped, join_pairs(text))


# What a terminal, a CI log or a Markdown line would act on: every C0 and C1 control (newline and tab too),
# DEL, the line and paragraph separators; lone surrogates (and the surrogate escapes of undecodable bytes in
# file names) become U+FFFD
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return REPLACEMENT  # an undecodable byte of a file name, or a lone surrogate: cannot be written as is
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control character written as its escape (`\\x1b`, `\\n`, `\\u2028`).

    For one-line output a reader's tools interpret: a diagnostic, a log line, a line of PR Markdown. A
    message quoting a file cannot recolour a terminal, move its cursor or forge a `path:1: error:` line.
    """
    return _INVISIBLE.sub(_shown, text) if _INVISIBLE.search(text) else text


def has_unsafe_text(text: str) -> bool:
    return UNSAFE_TEXT.search(text) is not None


def json_may_hold_unsafe(raw: bytes | str) -> bool:
    """Whether a JSON line or document may parse into unsafe text (cheap: one regex over the bytes)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    # Every match starts with a backslash, a DEL or a C1 lead byte. Searching for those bytes alone is a
    # memchr over the text (~0.1 ns/byte); the regex, which has no literal prefix, costs ~7 ns/byte, so it
    # runs only when one of them is present: most logs hold none, most text holds only \n or \" escapes.
    if b"\x7f" not in data and b"\xc2" not in data:
        if b"\\" not in data:
            return False
        if _ESCAPE_TO_CHECK.search(data) is None:
            return False
    return UNSAFE_JSON.search(data) is not None


def int_in_range(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX


def digits_text(digits: str) -> str:
    """An integer's digits as a message (or a page) shows them: cut in the middle when very long."""
    sign = "-" if digits.startswith("-") else ""
    body = digits.lstrip("+-")
    if len(body) <= MAX_SHOWN_DIGITS:
        return sign + body
    return f"{sign}{body[:20]}…{body[-8:]} ({len(body)} digits)"


def out_of_range(value: float) -> bool:
    """A finite number too large to compute with (see the module's docstring)."""
    return math.isfinite(value) and abs(value) > FLOAT_LIMIT


def as_logged(value: float) -> float:
    """A logged number as a series keeps it: beyond ±FLOAT_LIMIT, infinity (obs.series_builder)."""
    return value if not out_of_range(value) else math.copysign(math.inf, value)


def json_int(digits: str) -> int | float:
    """`parse_int` for the stdlib JSON parser: what orjson gives (an int up to 64 bits, else a float)."""
    if len(digits) <= 18:
        return int(digits)
    if len(digits) <= 21:  # cheap to convert exactly, then range-check
        value = int(digits)
        if INT64_MIN <= value < 2**64:  # orjson keeps unsigned 64-bit integers as ints
            return value
    return float(digits)  # beyond 64 bits: a float, or infinity past ~1e308 (never int() of 5,000 digits)


@dataclass
class Findings:
    """What cleaning changed in one file: counts and the first line of each kind of problem."""

    text: int = 0
    text_line: int | None = None
    big_numbers: int = 0
    big_numbers_line: int | None = None
    examples: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.text or self.big_numbers)

    def saw_text(self, line: int | None, count: int = 1) -> None:
        self.text += count
        if self.text_line is None:
            self.text_line = line

    def saw_big_number(self, line: int | None, shown: str) -> None:
        self.big_numbers += 1
        if self.big_numbers_line is None:
            self.big_numbers_line = line
            self.examples["number"] = shown

    def messages(self, *, unit: str = "value") -> list[tuple[int | None, str]]:
        """(line, message) for each kind of problem seen; `unit` names what was counted (`line`, `value`)."""
        out: list[tuple[int | None, str]] = []
        if self.text:
            where = f" (first at line {self.text_line})" if self.text_line and self.text > 1 else ""
            out.append(
                (
                    self.text_line,
                    f"{self.text} {unit}(s) hold characters that cannot be written in a page (a lone surrogate "
                    f"such as \\ud800, or a control character){where}; {CLEANED}",
                )
            )
        if self.big_numbers:
            where = (
                f" (first at line {self.big_numbers_line})" if self.big_numbers_line and self.big_numbers > 1 else ""
            )
            out.append(
                (
                    self.big_numbers_line,
                    f"{self.big_numbers} number(s) are too large to compute with, e.g. {self.examples['number']}"
                    f"{where}; they were read as infinity",
                )
            )
        return out


def clean_tree(value: Any, findings: Findings, line: int | None = None) -> Any:
    """`value` (parsed JSON: dicts, lists, strings, numbers) with unsafe text replaced in keys and strings.

    Returns the same object when nothing needed cleaning, so the common case allocates nothing.
    """
    if isinstance(value, str):
        if UNSAFE_TEXT.search(value) is None:
            return value
        findings.saw_text(line)
        return clean_text(value)
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for i, (k, v) in enumerate(value.items()):
            ck = clean_tree(k, findings, line) if isinstance(k, str) else k
            cv = clean_tree(v, findings, line)
            if out is None and (ck is not k or cv is not v):
                out = dict(list(value.items())[:i])
            if out is not None:
                out[ck] = cv
        return value if out is None else out
    if isinstance(value, list):
        items: list[Any] | None = None
        for i, v in enumerate(value):
            cv = clean_tree(v, findings, line)
            if items is None and cv is not v:
                items = list(value[:i])
            if items is not None:
                items.append(cv)
        return value if items is None else items
    return value
