"""GitHub-flavoured Markdown from untrusted text: escaping, code spans, sparklines, a size budget.

A PR comment is rendered by GitHub, so a run's title, a family name or a failure class is markup
unless it is escaped. `md_text` backslash-escapes every ASCII punctuation character (CommonMark
allows that for all of them), which covers emphasis, links, images, code, raw HTML (`\\<`), entities
(`\\&`) and table cells (`\\|`), and breaks the things GitHub links *after* rendering (@mentions,
#references, bare URLs) with an invisible word joiner, so a hostile run cannot ping a team, cite an
issue or plant a link. Newlines and control characters are written as their escapes (`\\n`, `\\x1b`:
the reader sees they were there, and a value stays on its line); other invisible characters (bidi
overrides, zero-width joiners) become spaces.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from obs.sanitize import visible

COMMENT_LIMIT = 65_536  # GitHub's maximum comment body, in characters
WORD_JOINER = "\u2060"
_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_AUTOLINK = re.compile(r"(://|www\.)", re.IGNORECASE)
SPARK_CHARS = "▁▂▃▄▅▆▇█"


def _flatten(text: object, limit: int) -> str:
    s = visible("" if text is None else str(text))  # newlines and controls as escapes: \n, \x1b
    s = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in s)  # bidi overrides, zero widths
    s = re.sub(r"\s+", " ", s).strip()
    if len(s) > limit:
        s = s[: max(1, limit - 1)].rstrip() + "…"
    return s


def _escape(s: str) -> str:
    s = _AUTOLINK.sub(lambda m: m.group(1)[:-1] + WORD_JOINER + m.group(1)[-1], s)
    s = s.replace("@", "@" + WORD_JOINER).replace("#", "#" + WORD_JOINER)
    return _PUNCT.sub(r"\\\1", s)


def md_text(text: object, limit: int = 300) -> str:
    """Untrusted text as inert Markdown, on one line, at most `limit` characters before escaping."""
    return _escape(_flatten(text, limit))


def md_obs(text: object, limit: int = 300, in_table: bool = False) -> str:
    """A sentence obs wrote (a reason, a method, a finding), which may quote a run's values: its
    `code spans` stay code spans (each made with `md_code`, so nothing inside is markup), and the rest
    is escaped as `md_text` escapes it. A backtick a run's value brought in cannot open markup: an
    unpaired one is escaped, and a pair only makes an inert code span."""
    parts = re.split(r"(`[^`]+`)", _flatten(text, limit))
    return "".join(
        md_code(p[1:-1], limit=len(p), in_table=in_table) if i % 2 else _escape(p) for i, p in enumerate(parts)
    )


def md_code(text: object, limit: int = 120, in_table: bool = True) -> str:
    """Untrusted text as a code span (nothing inside is markup). In a table a pipe is escaped: GFM
    splits cells before it reads code spans, and removes that backslash again."""
    s = _flatten(text, limit)
    if in_table:
        s = s.replace("|", "\\|")
    if not s:
        return "` `"
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or s.startswith(" ") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def gh_length(text: str) -> int:
    """Length as GitHub counts it (UTF-16 code units, as JavaScript does), so emoji count double."""
    return len(text.encode("utf-16-le")) // 2


def sparkline(values: Sequence[float] | np.ndarray, width: int = 24) -> str:
    """A Unicode sparkline of a curve: `width` buckets (mean of each), eight levels, '' when empty."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return ""
    buckets = np.array_split(arr, min(width, arr.size))
    means = np.array([b.mean() for b in buckets])
    lo, hi = float(means.min()), float(means.max())
    if not math.isfinite(hi - lo) or hi - lo <= 1e-12 * max(1.0, abs(hi)):
        return SPARK_CHARS[3] * len(means)
    idx = np.clip(((means - lo) / (hi - lo) * (len(SPARK_CHARS) - 1)).round().astype(int), 0, len(SPARK_CHARS) - 1)
    return "".join(SPARK_CHARS[i] for i in idx)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str] | None = None) -> str:
    """A GFM table; cells must already be Markdown (escaped with md_text/md_code or written by obs)."""
    align = align or ["l"] * len(header)
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)
