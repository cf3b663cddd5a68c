"""Number and text formatting for pages: one place decides how a rate, a delta or a p-value reads.

These are Jinja filters. They return plain strings (escaped by the template engine), never markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from obs.analysis.compare import Headline
from obs.analysis.headline import level_interval
from obs.analysis.held_constant import flatten
from obs.analysis.stats import OUTCOME_WORDS
from obs.numbers import MINUS, delta_text, num, p_text, p_value, pct, plural, pp, signed_num
from obs.numbers import is_number as _is_number
from obs.sanitize import visible
from obs.sitemodel import DeltaSummary, RunSummary

TEXT_PREVIEW_CHARS = 600
TEXT_PREVIEW_LINES = 12
TEXT_CAP_BYTES = 64 * 1024


def show_value(x: Any) -> str:
    """Any config or metric value, compactly (lists and maps as JSON-ish text), on one line: a newline or
    tab in a text value is shown as `\\n`, `\\t` (a multi-line value would otherwise read as one with
    spaces), as are control characters a caller did not clean (`obs.sanitize.visible`)."""
    if isinstance(x, list):
        inner = ", ".join(show_value(v) for v in x[:12])
        return f"[{inner}{', …' if len(x) > 12 else ''}]"
    if isinstance(x, dict):
        inner = ", ".join(f"{visible(str(k))}: {show_value(v)}" for k, v in list(x.items())[:12])
        return "{" + inner + (", …" if len(x) > 12 else "") + "}"
    if x is None:
        return "—"
    if isinstance(x, str):
        return visible(x)
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
    """CSS class for a comparison outcome: up (better), down (worse), flat (not significant, or not tested)."""
    return {"statistically_significant_improvement": "up", "significant_degradation": "down"}.get(str(verdict), "flat")


def tile_class(verdict: Any) -> str:
    return {
        "statistically_significant_improvement": "good",
        "significant_degradation": "bad",
        "not_one_measurement": "warn",
    }.get(str(verdict), "")


VERDICT_WORDS = OUTCOME_WORDS


def verdict_words(verdict: Any) -> str:
    """The words for a comparison outcome, the same on every page, PR comment and `obs gate` line."""
    return VERDICT_WORDS.get(str(verdict), str(verdict))


def stat(x: Any) -> str:
    """A statistic that may be undefined for its input (Hedges' g of one seed, a mean of none): a dash,
    not "NaN" (a NaN in the data itself is shown as NaN by `num`)."""
    if _is_number(x) and x != x:
        return "—"
    return num(x)


def ci_text(interval: Any, is_rate: bool = True) -> str:
    """`95% CI [−3.1, +4.0] pp` from an interval with low/high/level (or "no CI" without one)."""
    if interval is None or not _is_number(interval.low) or not _is_number(interval.high):
        return "no CI"
    level = getattr(interval, "level", 0.95)
    if is_rate:
        return f"{level:.0%} CI [{pp(interval.low, False)}, {pp(interval.high, False)}] pp"
    return f"{level:.0%} CI [{signed_num(interval.low)}, {signed_num(interval.high)}]"


def level_ci(interval: Any, headline: Headline) -> str:
    """`95% CI [55.4, 70.2]%` for an interval on a value (not a change: no signs), in the headline's units."""
    if interval is None or not _is_number(interval.low) or not _is_number(interval.high):
        return "no CI"
    level = getattr(interval, "level", 0.95)
    if headline.is_rate:
        return f"{level:.0%} CI [{100 * interval.low:.1f}, {100 * interval.high:.1f}]%"
    return f"{level:.0%} CI [{num(interval.low)}, {num(interval.high)}]"


def headline_interval(headline: Headline) -> Any:
    """The headline's own interval (`analysis.headline.level_interval`), for the run page's tile."""
    return level_interval(headline)


_AFTER_SEPARATOR = re.compile(r"(?<=[._/:=,|@+\\-])(?=[^._/:=,|@+\\-])")
LONG_TOKEN = 24
SHORT_IDENT = 12  # fits any column, phones included: no break opportunity needed


def ident(value: Any) -> Markup:
    """An identifier (run id, config key, path, case id) that breaks only at its separators:
    `config.train.lr` may wrap after a dot, never inside `train`. A segment too long for any line (a
    hash) may still break anywhere (`.tok`). Short identifiers are left whole. One line: a newline, tab or
    control character in it is shown as its escape (`\\n`, `\\x1b`), never acted on."""
    text = "" if value is None else visible(str(value))
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
    """The line under a delta on the leaderboard and spec pages: its CI and what it rests on."""
    return delta_ci(summary.delta, summary.headline_is_rate)


def delta_ci(d: DeltaSummary | None, is_rate: bool) -> str:
    """A delta's CI and what it rests on (its vs-parent or vs-frozen-baseline delta: one wording for both)."""
    if d is None:
        return "no CI"
    if d.verdict == "not_tested":
        return d.method.split(";")[0].split(" (")[0]
    if d.verdict == "not_one_measurement":  # analysis.measurement: what differs, not a CI
        return d.method.split(": the numbers")[0]
    ci = d.ci
    if ci is None or ci.low is None or ci.high is None:
        return "no CI"
    text = ci_text(ci, is_rate)
    return text + (f" · {unit_text(d.unit, d.n)}" if d.unit and d.unit != "none" else "")


def unit_text(unit: str | None, n: int | None) -> str:
    """The unit of replication and its n, short: "160 paired cases", "items (reported SE)"."""
    if not unit or unit == "none":
        return "no replicates"
    if unit.startswith("probe cases"):
        return f"n = {n} paired cases" if n else "paired cases"
    if unit.startswith("evaluation items"):
        return "items (from reported standard errors)"
    return f"n = {n} {unit}" if n else unit


def stats_in_pp(stats: Any) -> bool:
    """Whether a campaign's (or an arms group's) statistics read in percent and percentage points, as a
    run page shows a rate: the metric is named as a rate and every final value is a proportion
    (`obs.analysis.campaign.reads_in_pp`, decided once with the statistics, so their sentences agree)."""
    return bool(getattr(stats, "in_pp", False))


def stat_diff(x: Any, in_pp: bool = False) -> str:
    """A campaign's difference of means, signed: `+4.6 pp` for a rate (`stats_in_pp`), `+0.04622` otherwise;
    undefined reads `—`. The campaign page, `obs summary --campaign` and `obs gate --campaign` all print it."""
    if in_pp:
        return pp(x)
    return ("+" if _is_number(x) and x > 0 else "") + stat(x)


def stat_ci(interval: Any, in_pp: bool = False) -> str:
    """A campaign's interval of a difference, bracketed: `[−0.6, +9.9] pp` for a rate, `[−0.006, +0.099]` otherwise."""
    if in_pp:
        return f"[{pp(interval.low, False)}, {pp(interval.high, False)}] pp"
    return f"[{stat_diff(interval.low)}, {stat_diff(interval.high)}]"


def stat_value(x: Any, in_pp: bool = False) -> str:
    """A campaign's value (a mean, one seed's final): `82.5%` for a rate, `0.825` otherwise."""
    return pct(x) if in_pp else stat(x)


def stat_mean_sd(mean: Any, sd: Any, in_pp: bool = False) -> str:
    """A condition's mean ± sd of its seeds: `82.5% ± 1.2 pp` for a rate, `0.825 ± 0.012` otherwise; no sd (one
    seed), the mean alone."""
    if sd is None or (_is_number(sd) and sd != sd):
        return stat_value(mean, in_pp)
    if in_pp:
        return f"{pct(mean)} ± {pp(sd, False)} pp"
    return f"{stat(mean)} ± {num(sd)}"


def corr(x: Any) -> str:
    """A correlation, signed, two decimals: +0.84, −0.12."""
    return "—" if not _is_number(x) else f"{x:+.2f}".replace("-", MINUS)


FILTERS = {
    "corr": corr,
    "p_cell": p_value,
    "summary_value": summary_value,
    "summary_delta": summary_delta,
    "summary_ci": summary_ci,
    "pct": pct,
    "pp": pp,
    "num": num,
    "signed_num": signed_num,
    "show_value": show_value,
    "pval": p_text,
    "headline_value": headline_value,
    "headline_number": headline_number,
    "delta_for": delta_for,
    "direction": direction,
    "tile_class": tile_class,
    "verdict_words": verdict_words,
    "ci_text": ci_text,
    "level_ci": level_ci,
    "headline_interval": headline_interval,
    "stat": stat,
    "unit_text": unit_text,
    "css_token": css_token,
    "ident": ident,
    "oneline": lambda v: visible("" if v is None else str(v)),  # a title or label: \n shown, never acted on
    "day": day,
    "capitalize_first": capitalize_first,
    "text_info": text_info,
    "flat_items": flat_items,
    "safe_hint": safe_hint,
    "human_bytes": human_bytes,
    "plural": plural,
    "stats_in_pp": stats_in_pp,
    "stat_diff": stat_diff,
    "stat_ci": stat_ci,
    "stat_value": stat_value,
    "stat_mean_sd": stat_mean_sd,
}


def frozen_line(fz: Any, is_rate: bool) -> str:
    """The rung against the spec's frozen baseline in one line (`analysis.ladder.FrozenComparison`): what
    `obs gate`, the PR summary and the run page's delta tile say, in the same words."""
    d = fz.delta
    head = f"vs the spec's frozen baseline {fz.baseline_id}"
    if d is None or d.delta is None:
        return f"{head}: no delta ({fz.problem or (d.method if d else 'no comparable metric')})"
    value = delta_text(d.delta, is_rate)
    if d.verdict == "not_one_measurement":
        return f"{head}: {value}, {fz.measurement.text()}"
    if d.verdict == "not_tested" or d.interval is None:
        return f"{head}: {value}, described, not tested ({d.method})"
    extra = [ci_text(d.interval, is_rate)] + ([p_text(d.p_value)] if d.p_value is not None else [])
    extra.append(unit_text(d.unit, d.n))
    return (
        f"{head}: {value} ({' · '.join(extra)}): {verdict_words(d.verdict)}, one look at the frozen probe, "
        "not adjusted for the ladder's other rungs (the spec page's ladder claim is)"
    )
