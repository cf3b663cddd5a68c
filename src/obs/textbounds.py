"""Markdown bounded before it is rendered: what Python-Markdown can render in time and a page can hold.

Python-Markdown recurses once per level of nested lists and quotes (a list nested 1,000 deep ran
for minutes and then hit RecursionError), and its inline pass costs about (markup in a paragraph) x
(the paragraph's length): 9,000 unclosed `[` in one paragraph took 80 s, 5,000 escaped `<` 25 s.
Nothing a reader writes needs that, so before a text is rendered it is cut to bounds a page can
show and Python-Markdown renders in well under a second:

| bound | beyond it |
|---|---|
| `MAX_CHARS` characters, `MAX_LINES` lines in all | the rest is not shown |
| `MAX_LINE` characters per line | the line is cut |
| `MAX_INDENT` columns of nesting (spaces, `>`, list markers), `MAX_QUOTES` quotes | shown at the deepest level |
| `MAX_TABLE_ROWS` rows, `MAX_TABLE_COLUMNS` columns per table | the rest are not shown |
| `MAX_MARKUP` markup characters (`[ < \\ ` * _ &`) in one paragraph | the paragraph is shown as text (a code block) |
| `MAX_PARAGRAPH` characters in one paragraph | it is split into paragraphs (at a line end) |

`bound_markdown` says what it cut, line by line, so the reader of the file can report it
(`path:line`); the renderer calls it too, as a safety net, and ignores what it says. Text within
the bounds comes back unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MAX_CHARS = 100_000
MAX_LINES = 5_000  # Python-Markdown takes about a millisecond per block: a list item, a paragraph, a row
MAX_LINE = 10_000
MAX_INDENT = 32
MAX_QUOTES = 8
MAX_TABLE_ROWS = 500
MAX_TABLE_COLUMNS = 50
MAX_MARKUP = 256
MAX_PARAGRAPH = 20_000

# a line's nesting: indentation, quote markers, list markers (`-`, `*`, `+`, `1.`, `1)` followed by a space)
_PREFIX_TOKEN = re.compile(r"[ \t]+|>|[-*+][ \t]|\d{1,9}[.)][ \t]")
_PREFIX = re.compile(r"(?:[ \t]+|>|[-*+][ \t]|\d{1,9}[.)][ \t])+")
_LIST_OR_HEADING = re.compile(r"[ \t>]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|#)")
_FENCE = re.compile(r"[ \t>]*(`{3,}|~{3,})")
_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_MARKUP = re.compile(r"[\[<\\`*_&]")
_DEEP_START = re.compile(r"^[ \t]{8}", re.MULTILINE)  # (8 tabs are 32 columns)
# a line starting with more nesting markers than the bounds allow, whatever their widths
_MARKERS = re.compile(r"^(?:[ \t>]*(?:[-*+]|\d{1,9}[.)])[ \t]){" + str(MAX_QUOTES) + "}", re.MULTILINE)

Cut = Callable[[str, int, str], None]


def bound_markdown(text: str) -> tuple[str, list[tuple[int, str]]]:
    """`text` within the bounds above, and (line, what was cut) for each kind of cut (its first line)."""
    if _looks_plain(text):
        return text, []
    problems: dict[str, tuple[int, str]] = {}

    def cut(kind: str, line: int, message: str) -> None:
        problems.setdefault(kind, (line, message))

    if len(text) > MAX_CHARS:
        end = text.rfind("\n", 0, MAX_CHARS)
        end = end if end > 0 else MAX_CHARS
        cut(
            "length",
            text.count("\n", 0, end) + 1,
            f"text is {len(text):,} characters; only the first {end:,} are shown",
        )
        text = text[:end]
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        cut("lines", MAX_LINES + 1, f"text has {len(lines):,} lines; only the first {MAX_LINES:,} are shown")
        lines = lines[:MAX_LINES]
    out: list[str] = []
    paragraph: list[tuple[int, str]] = []  # (line number, line) of the paragraph being read
    fence: str | None = None
    table_rows = 0

    def end_paragraph() -> None:
        out.extend(_bounded_paragraph(paragraph, cut))
        paragraph.clear()

    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            cut("line", number, f"line is {len(line):,} characters long; it was cut at {MAX_LINE:,}")
            line = line[:MAX_LINE] + "…"
        line = _flatten_prefix(line, number, cut)
        opens = _FENCE.match(line)
        if fence is not None or opens:  # code: no inline pass, no bound but the line's
            end_paragraph()
            if fence is None:
                fence = opens.group(1) if opens else None
            elif opens and opens.group(1).startswith(fence):
                fence = None
            out.append(line)
            continue
        if not line.strip():
            end_paragraph()
            table_rows = 0
            out.append(line)
            continue
        if table_rows or (number < len(lines) and "|" in line and _DELIMITER_ROW.match(lines[number])):
            end_paragraph()
            table_rows += 1
            if table_rows > MAX_TABLE_ROWS + 1:  # the delimiter row does not count
                if table_rows == MAX_TABLE_ROWS + 2:
                    cut("rows", number, f"a table has more than {MAX_TABLE_ROWS} rows; the rest are not shown")
                continue
            if line.count("|") > MAX_TABLE_COLUMNS + 1:
                cut("columns", number, f"a table has more than {MAX_TABLE_COLUMNS} columns; the rest are not shown")
                line = "|".join(line.split("|")[: MAX_TABLE_COLUMNS + 2])
            out.append(line)
            continue
        if paragraph and _LIST_OR_HEADING.match(line):
            end_paragraph()
        paragraph.append((number, line))
    end_paragraph()
    if not problems:
        return "\n".join(out), []
    return "\n".join(out), sorted(problems.values())


def _bounded_paragraph(paragraph: list[tuple[int, str]], cut: Cut) -> list[str]:
    """The lines of one paragraph (or list item): split when long, shown as text when full of markup."""
    out: list[str] = []
    size = markup = 0
    start = 0
    for i, (_, line) in enumerate(paragraph):
        if size + len(line) > MAX_PARAGRAPH and i > start:
            out.extend(_as_text_if_marked(paragraph[start:i], markup, cut))
            out.append("")
            start, size, markup = i, 0, 0
        size += len(line) + 1
        markup += len(_MARKUP.findall(line))
    out.extend(_as_text_if_marked(paragraph[start:], markup, cut))
    return out


def _as_text_if_marked(lines: list[tuple[int, str]], markup: int, cut: Cut) -> list[str]:
    if markup <= MAX_MARKUP:
        return [line for _, line in lines]
    cut(
        "markup",
        lines[0][0],
        f"a paragraph has more than {MAX_MARKUP} markup characters ([ < \\ ` * _ &); it is shown as plain text",
    )
    longest = max((len(run) for _, line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return ["", fence, *(line for _, line in lines), fence, ""]


def _looks_plain(text: str) -> bool:
    """True when no bound can apply, cheaply decided (the common case): short, little markup, shallow."""
    return (
        len(text) <= MAX_LINE
        and text.count("\n") < MAX_LINES
        and len(_MARKUP.findall(text)) <= MAX_MARKUP
        and text.count("|") <= MAX_TABLE_COLUMNS
        and text.count(">") <= MAX_QUOTES
        and not _DEEP_START.search(text)
        and not _MARKERS.search(text)
    )


def _flatten_prefix(line: str, number: int, cut: Callable[[str, int, str], None]) -> str:
    """Indentation, quote markers and list markers (`- - - x` nests too) beyond the bounds dropped: the
    line is shown at the deepest level allowed."""
    prefix = _PREFIX.match(line)
    if prefix is None or not prefix.group():
        return line
    tokens = _PREFIX_TOKEN.findall(prefix.group())
    width = quotes = 0
    kept = 0
    for token in tokens:
        width += len(token.expandtabs(4))
        quotes += token.startswith(">")
        if width > MAX_INDENT or quotes > MAX_QUOTES:
            break
        kept += 1
    if kept == len(tokens):
        return line
    cut("nesting", number, f"nested more than {MAX_INDENT // 4} levels deep; deeper levels are shown at that depth")
    return "".join(tokens[:kept]) + line[prefix.end() :]
