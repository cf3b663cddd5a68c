"""How a number reads, everywhere: pages, analysis sentences, PR comments and `obs gate`.

One module so that a rate, a difference of rates, a p-value or a plain number is written the same
way in the sentence that describes it and in the table beside it. A real minus sign (U+2212), four
significant digits, thousands separators, and ∞ / NaN spelled out; `missing` is what an absent
value reads as (a dash in a table cell, "n/a" in a sentence).
"""

from __future__ import annotations

import math
from typing import Any

MINUS = "\u2212"
DASH = "—"


def is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def pct(x: Any, digits: int = 1, missing: str = DASH) -> str:
    """A rate as a percentage: 0.825 -> 82.5%."""
    if not is_number(x) or math.isnan(x):
        return missing
    return f"{100 * x:.{digits}f}%"


def pp(x: Any, with_unit: bool = True, missing: str = DASH) -> str:
    """A difference of two rates in percentage points, signed (±0.0 when it rounds to zero)."""
    if not is_number(x) or math.isnan(x):
        return missing
    value = 100 * x
    text = f"{value:+.1f}" if with_unit else f"{value:.1f}"
    if text in ("+0.0", "-0.0"):
        text = "±0.0" if with_unit else "0.0"
    text = text.replace("-", MINUS)
    return f"{text} pp" if with_unit else text


def num(x: Any, missing: str = DASH) -> str:
    """Numbers for humans: 4 significant digits, thousands separators, ∞ and NaN spelled out."""
    if x is None:
        return missing
    if isinstance(x, bool):
        return "true" if x else "false"
    if not is_number(x):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}".replace("-", MINUS)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else MINUS + "∞"
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}".replace("-", MINUS)
    a = abs(x)
    text = f"{x:.3e}" if a < 1e-3 or a >= 1e7 else f"{x:,.4g}" if a >= 1 else f"{x:.4g}"
    return text.replace("-", MINUS)


def signed_num(x: Any, missing: str = DASH) -> str:
    """A difference of two numbers, always signed."""
    text = num(x, missing)
    if text == missing or text.startswith((MINUS, "+")) or text in ("NaN", "∞"):
        return text
    return "+" + text


def delta_text(x: Any, is_rate: bool, missing: str = DASH) -> str:
    """A change of a headline: percentage points for rates, a signed number otherwise."""
    return pp(x, missing=missing) if is_rate else signed_num(x, missing)


def p_value(p: Any, missing: str = "n/a") -> str:
    """A p-value's number, for a table cell under a "p" heading: < 0.001, 0.012, 0.34."""
    if not is_number(p) or math.isnan(p):
        return missing
    if p < 0.001:
        return "< 0.001"
    return f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


def p_text(p: Any) -> str:
    """A p-value in a sentence: p < 0.001, p = 0.012 (never "p = < 0.001")."""
    if not is_number(p) or math.isnan(p):
        return "p n/a"
    text = p_value(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def step(x: float) -> str:
    """A training step: whole steps with separators, fractional ones as they are."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """A count and its noun, agreeing: 1 run, 2 runs, 0 runs; `many` for an irregular plural
    (plural(1, "entry", "entries")). Every "N things" obs writes goes through here."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
