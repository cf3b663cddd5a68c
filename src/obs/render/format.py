"""Number and text formatting for pages: one place decides how a rate, a delta or a p-value reads.

These are Jinja filters. They return plain strings (escaped by the template engine), never markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from obs.analysis.compare import Headline
from obs.analysis.held_constant import flatten
from obs.numbers import delta_text, num, p_text, pct, pp, signed_num
from obs.numbers import is_number as _is_number
from obs.sitemodel import RunSummary

TEXT_PREVIEW_CHARS = 600
TEXT_PREVIEW_LINES = 12
TEXT_CAP_BYTES = 64 * 1024


def show_value(x: Any) -> str:
    """Any config or metric value, compactly (lists and maps as JSON-ish text)."""
    if isinstance(x, list):
        inner = ", ".join(show_value(v) for v in x[:12])
        return f"[{inner}{', …' if len(x) > 12 else ''}]"
    if isinstance(x, dict):
        inner = ", ".join(f"{k}: {show_value(v)}" for k, v in list(x.items())[:12])
        return "{" + inner + (", …" if len(x) > 12 else "") + "}"
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
    if _is_number(x):
        return num(x) if not isinstance(x, int) else str(x)
    return str(x)


def headline_number(value: Any, headline: Headline) -> str:
    return pct(value) if headline.is_rate else num(value)


def headline_value(headline: Headline) -> str:
    if headline.value is None:
        return "—"
    return headline_number(headline.value, headline)


def delta_for(value: Any, headline: Headline, with_unit: bool = True) -> str:
    return pp(value, with_unit) if headline.is_rate else signed_num(value)


def direction(verdict: Any) -> str:
    """CSS class for a comparison outcome: up (better), down (worse), flat (not significant)."""
    return {"statistically_significant_improvement": "up", "significant_degradation": "down"}.get(str(verdict), "flat")


def tile_class(verdict: Any) -> str:
    return {"statistically_significant_improvement": "good", "significant_degradation": "bad"}.get(str(verdict), "")


def verdict_words(verdict: Any) -> str:
    return {
        "statistically_significant_improvement": "significant improvement",
        "significant_degradation": "significant degradation",
        "insufficient_statistical_evidence": "not significant",
    }.get(str(verdict), str(verdict))


_AFTER_SEPARATOR = re.compile(r"(?<=[._/:=,|@+\\-])(?=[^._/:=,|@+\\-])")
LONG_TOKEN = 24
SHORT_IDENT = 12  # fits any column, phones included: no break opportunity needed


def ident(value: Any) -> Markup:
    """An identifier (run id, config key, path, case id) that breaks only at its separators:
    `config.train.lr` may wrap after a dot, never inside `train`. A segment too long for any line (a
    hash) may still break anywhere (`.tok`). Short identifiers are left whole."""
    text = "" if value is None else str(value)
    if len(text) <= SHORT_IDENT:
        return Markup('<span class="ident">') + escape(text) + Markup("</span>")
    out = []
    for part in _AFTER_SEPARATOR.split(text):
        piece = str(escape(part))
        out.append(f'<span class="tok">{piece}</span>' if len(part) > LONG_TOKEN else piece)
    return Markup('<span class="ident">' + "<wbr>".join(out) + "</span>")


def day(value: Any) -> Markup:
    """A date as its day (2026-03-21), never broken across lines."""
    text = str(value)[:10] if value else "—"
    return Markup(f'<span class="date">{escape(text)}</span>')


def css_token(text: Any) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", str(text).lower()).strip("-") or "x"


def capitalize_first(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def human_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


@dataclass(frozen=True)
class TextInfo:
    long: bool
    size: str
    lines: int
    shown: str
    cut: bool
    shown_size: str


def text_info(text: str) -> TextInfo:
    """Decide whether a text is collapsed, and cap what is embedded in the page."""
    raw_len = len(text.encode("utf-8", errors="replace"))
    lines = text.count("\n") + 1
    long = len(text) > TEXT_PREVIEW_CHARS or lines > TEXT_PREVIEW_LINES
    cut = raw_len > TEXT_CAP_BYTES
    shown = text.encode("utf-8", errors="replace")[:TEXT_CAP_BYTES].decode("utf-8", errors="ignore") if cut else text
    return TextInfo(long, human_bytes(raw_len), lines, shown, cut, human_bytes(TEXT_CAP_BYTES))


def flat_items(mapping: dict[str, Any]) -> list[tuple[str, Any]]:
    return sorted(flatten(mapping).items())


def safe_hint(text: str) -> Markup:
    """Hints are written by obs; `backticks` become code, everything else stays text."""
    parts = str(text).split("`")
    out = []
    for i, part in enumerate(parts):
        out.append(f"<code>{escape(part)}</code>" if i % 2 else str(escape(part)))
    return Markup("".join(out))


def summary_value(summary: RunSummary, value: Any = None) -> str:
    """A run summary's headline-metric value (rates as percentages); a non-finite one as ∞ / −∞ / NaN."""
    if value is None and summary.headline.nonfinite:
        return num(float(summary.headline.nonfinite))
    v = summary.headline.value if value is None else value
    if v is None:
        return "—"
    return pct(v) if summary.headline_is_rate else num(v)


def summary_delta(summary: RunSummary) -> str:
    return delta_text(summary.delta.delta if summary.delta else None, summary.headline_is_rate)


def summary_ci(summary: RunSummary) -> str:
    ci = summary.delta.ci if summary.delta else None
    if ci is None or ci.low is None or ci.high is None:
        return "no CI"
    if summary.headline_is_rate:
        return f"[{pp(ci.low, False)}, {pp(ci.high, False)}]"
    return f"[{num(ci.low)}, {num(ci.high)}]"


FILTERS = {
    "summary_value": summary_value,
    "summary_delta": summary_delta,
    "summary_ci": summary_ci,
    "pct": pct,
    "pp": pp,
    "num": num,
    "show_value": show_value,
    "pval": p_text,
    "headline_value": headline_value,
    "headline_number": headline_number,
    "delta_for": delta_for,
    "direction": direction,
    "tile_class": tile_class,
    "verdict_words": verdict_words,
    "css_token": css_token,
    "ident": ident,
    "day": day,
    "capitalize_first": capitalize_first,
    "text_info": text_info,
    "flat_items": flat_items,
    "safe_hint": safe_hint,
    "human_bytes": human_bytes,
}
