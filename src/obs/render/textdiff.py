"""Token diff of expected vs actual output, for the failure gallery.

A reader scanning a failing case wants to see *where* the output went wrong. For structured
outputs (a scene DSL, code, JSON) a diff over whitespace-separated tokens reads better than a
character diff. Long texts are not diffed (the cost is quadratic and the result unreadable).
"""

from __future__ import annotations

import difflib
import re

MAX_DIFF_CHARS = 4000
_TOKEN = re.compile(r"\s+|[^\s]+")


def token_diff(expected: str | None, actual: str | None) -> list[tuple[str, str]] | None:
    """[(op, text)] with op in eq/del/ins, or None when there is nothing useful to show."""
    if not expected or not actual or expected == actual:
        return None
    if len(expected) > MAX_DIFF_CHARS or len(actual) > MAX_DIFF_CHARS:
        return None
    a = _TOKEN.findall(expected)
    b = _TOKEN.findall(actual)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(("eq", "".join(a[i1:i2])))
            continue
        if op in ("replace", "delete"):
            out.append(("del", "".join(a[i1:i2])))
        if op in ("replace", "insert"):
            out.append(("ins", "".join(b[j1:j2])))
    return out
