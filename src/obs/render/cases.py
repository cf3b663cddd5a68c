"""The run page's failure gallery and case browser: what the page shows of the probe cases, and
the data files the browser reads the rest from.

The page itself stays light whatever the probe's size: per failure group, its near-identical
patterns with counts and one full example (server-rendered, so it reads without JavaScript); every
case, with its outcome here and in the baseline, lives in data files next to the page:

    cases-rows-<k>.js   CASE_ROWS_PER_FILE cases each: id, split, family, failure group, pattern,
                        the checks here and in the baseline, the line in the probe file
    cases-text-<k>.js   TEXT_ROWS_PER_FILE cases each: prompt, expected, actual, note, other fields

(beside the page, not in a folder of their own: a rebuild makes every unchanged run's folders anew in
the new version of the site, and a folder costs more than the files it would hold).

`assets/cases.js` loads them page by page (a million cases are read a few thousand at a time, and
only as far as a filter needs). They are `.js` files appending one JSON value to `OBS_DATA`, their
data compressed (obs.render.datafile): a page opened from disk cannot fetch() a file, but may load a
script from its own folder; orjson escapes every string, so no case text can become code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from obs.analysis.failures import FailureGroup, FailurePattern
from obs.analysis.report import RunReport
from obs.probetable import ABSENT, TRUE, CaseOutcomes, CaseText, ProbeTable, align, ids_list
from obs.render.datafile import data_file
from obs.render.format import show_value
from obs.render.textdiff import token_diff

CASE_ROWS_PER_FILE = 5_000
TEXT_ROWS_PER_FILE = 500
TEXT_CAP_CHARS = 6_000  # of each text in the data files (the page's example shows up to 64 KB)
PATTERNS_SHOWN = 6  # per group on the page; the rest are counted in one line
PATTERNS_IN_SPEC = 600  # patterns the browser can name; others read "other"
IDS_SHOWN = 24  # of a long list of ids (flips, unpaired cases) on the page
SCHEMA = "obs.cases/1"
PREFIX = "cases-"


@dataclass
class PatternView:
    text: str | None
    failed: tuple[str, ...]
    count: int
    example_ids: list[str]
    where: list[tuple[str, str, int]]
    index: int  # in the browser's pattern list (-1: not named there)


@dataclass
class Example:
    """One case shown in full: the first case of its group's biggest pattern."""

    id: str
    split: str | None
    family: str | None
    failed: tuple[str, ...]
    text: CaseText
    diff: list[tuple[str, str]] | None
    line: int | None


@dataclass
class GroupView:
    index: int  # 1-based, the group's anchor (fail-<index>) and browser filter (group=<index>)
    key: str
    source: str
    count: int
    patterns: list[PatternView]
    other_patterns: int  # patterns not shown ...
    other_cases: int  # ... and their cases
    example: Example | None
    where: list[tuple[str, str, int]]


@dataclass
class Gallery:
    groups: list[GroupView] = field(default_factory=list)
    renders: set[str] = field(default_factory=set)  # render paths the examples show


def gallery(report: RunReport) -> Gallery:
    """The failure groups as the page shows them."""
    probe = report.run.probe
    out = Gallery()
    if probe is None or not report.failures:
        return out
    table = probe.table
    spec_index = 0
    for gi, group in enumerate(report.failures, start=1):
        views = []
        for k, p in enumerate(group.patterns):
            index = spec_index if spec_index < PATTERNS_IN_SPEC else -1
            spec_index += 1
            if k < PATTERNS_SHOWN:
                views.append(_pattern_view(table, group, p, index))
        shown = sum(v.count for v in views)
        biggest = group.patterns[0] if group.patterns else None
        example = _example(table, biggest) if biggest is not None else None
        if example is not None and example.text.render:
            out.renders.add(example.text.render)
        out.groups.append(
            GroupView(
                gi,
                group.key,
                group.source,
                group.count,
                views,
                max(0, len(group.patterns) - len(views)),
                group.count - shown,
                example,
                group.where(),
            )
        )
    return out


def _pattern_view(table: ProbeTable, group: FailureGroup, p: FailurePattern, index: int) -> PatternView:
    ids = [table.outcomes.id(int(r)) for r in p.rows[:3]]
    return PatternView(p.text, p.failed, p.count, ids, group.where(p.rows), index)


def _example(table: ProbeTable, p: FailurePattern) -> Example:
    row = p.example
    text = table.text(row)
    o = table.outcomes
    line = int(table.lines[row])
    return Example(
        o.id(row),
        o.split.value(row),
        o.family.value(row),
        p.failed,
        text,
        token_diff(text.expected, text.actual),
        line or None,
    )


# ------------------------------------------------------------------------------- browser: spec


def _check_codes(outcomes: CaseOutcomes, checks: list[str], rows: np.ndarray) -> list[str]:
    """Per case one character per check: "1" true, "0" false, "-" absent."""
    if not checks:
        return [""] * int(rows.size)
    chars = np.full((rows.size, len(checks)), ord("0"), dtype=np.uint8)  # one byte per check, a row per case
    for j, check in enumerate(checks):
        col = outcomes.checks.get(check)
        if col is None:
            chars[:, j] = ord("-")
            continue
        values = col[rows]
        chars[values == TRUE, j] = ord("1")
        chars[values == ABSENT, j] = ord("-")
    return chars.view(f"S{len(checks)}").ravel().astype(f"U{len(checks)}").tolist()


@dataclass
class Browser:
    """The case browser's description (embedded in the page) and its data files (written beside it)."""

    spec: dict[str, Any]
    report: RunReport = field(repr=False)
    key: str = ""

    def files(self) -> Iterator[tuple[str, bytes]]:
        yield from _files(self)


def browser(report: RunReport, baseline_href: str | None) -> Browser | None:
    probe = report.run.probe
    sb = report.scoreboard
    if probe is None or sb is None or not probe.size:
        return None
    table = probe.table
    n = len(table)
    checks = list(sb.checks)
    base = report.baseline_probe
    groups = [{"key": g.key, "count": g.count, "source": g.source} for g in report.failures]
    patterns: list[dict[str, Any]] = []
    for gi, g in enumerate(report.failures):
        for p in g.patterns:
            if len(patterns) >= PATTERNS_IN_SPEC:
                break
            patterns.append({"group": gi, "text": p.text, "failed": list(p.failed), "count": p.count})
    headline = report.headline.metric if report.headline.kind == "probe" else None
    spec: dict[str, Any] = {
        "schema": SCHEMA,
        "run": report.run.id,
        "n": n,
        "rowsPerFile": CASE_ROWS_PER_FILE,
        "textRowsPerFile": TEXT_ROWS_PER_FILE,
        "rowFiles": -(-n // CASE_ROWS_PER_FILE),
        "textFiles": -(-n // TEXT_ROWS_PER_FILE),
        "prefix": PREFIX,
        "checks": checks,
        "negative": sorted(sb.negative),
        "headline": headline if headline in checks else (checks[0] if checks else None),
        "splits": table.outcomes.split.labels,
        "families": table.outcomes.family.labels,
        "groups": groups,
        "patterns": patterns,
        "source": report.run.probe.source_file.rsplit("/", 1)[-1] if report.run.probe else "",
        "baseline": None,
        "textCap": TEXT_CAP_CHARS,
    }
    if base is not None and report.baseline_id:
        spec["baseline"] = {"id": report.baseline_id, "href": baseline_href, "n": len(base)}
    return Browser(spec, report, report.run.id)


def _file(kind: str, run: str, page: int, body: Any) -> bytes:
    return data_file({"schema": SCHEMA, "kind": kind, "run": run, "page": page}, body)


def _group_codes(report: RunReport, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per case: its failure group (-1: not failing) and its pattern in the spec's list (-1: none)."""
    group = np.full(n, -1, dtype=np.int32)
    pattern = np.full(n, -1, dtype=np.int32)
    k = 0
    for gi, g in enumerate(report.failures):
        group[g.rows] = gi
        for p in g.patterns:
            if k < PATTERNS_IN_SPEC:
                pattern[p.rows] = k
            k += 1
    return group, pattern


def _baseline_rows(here: CaseOutcomes, base: CaseOutcomes | None) -> np.ndarray:
    """Per case of this run: its row in the baseline (-1: not there)."""
    out = np.full(len(here), -1, dtype=np.int64)
    if base is None:
        return out
    matched = align(here, base)
    out[matched.here] = matched.base
    return out


def _cap(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_CAP_CHARS:
        return text
    return text[:TEXT_CAP_CHARS]


def _text_record(t: CaseText) -> list[Any] | int:
    if t.prompt is None and t.expected is None and t.actual is None and t.note is None and not t.extra:
        return 0
    actual: str | int | None = 1 if t.actual is not None and t.actual == t.expected else _cap(t.actual)
    cut = [
        k
        for k, v in (("prompt", t.prompt), ("expected", t.expected), ("actual", t.actual))
        if v and len(v) > TEXT_CAP_CHARS
    ]
    extra = [[k, show_value(v)] for k, v in sorted(t.extra.items())]
    return [_cap(t.prompt), _cap(t.expected), actual, _cap(t.note), extra, t.render, cut]


def _files(b: Browser) -> Iterator[tuple[str, bytes]]:
    report = b.report
    probe = report.run.probe
    assert probe is not None
    table = probe.table
    o = table.outcomes
    n = len(table)
    checks: list[str] = b.spec["checks"]
    group, pattern = _group_codes(report, n)
    base = report.baseline_probe
    base_rows = _baseline_rows(o, base)
    for page, start in enumerate(range(0, n, CASE_ROWS_PER_FILE), start=1):
        stop = min(n, start + CASE_ROWS_PER_FILE)
        rows = np.arange(start, stop, dtype=np.intp)
        here = _check_codes(o, checks, rows)
        in_base = base_rows[start:stop]
        there: list[str | None] = [None] * rows.size
        if base is not None:
            found = np.flatnonzero(in_base >= 0)
            codes = _check_codes(base, checks, in_base[found].astype(np.intp))
            for pos, code in zip(found.tolist(), codes, strict=True):
                there[pos] = code
        ids = ids_list(o.ids[start:stop])
        split, family = o.split.codes[start:stop].tolist(), o.family.codes[start:stop].tolist()
        g, p, line = group[start:stop].tolist(), pattern[start:stop].tolist(), table.lines[start:stop].tolist()
        data = [[ids[i], split[i], family[i], g[i], p[i], here[i], there[i], line[i]] for i in range(rows.size)]
        yield f"{PREFIX}rows-{page}.js", _file("rows", b.key, page, data)
    texts = table.iter_texts()
    for page, start in enumerate(range(0, n, TEXT_ROWS_PER_FILE), start=1):
        stop = min(n, start + TEXT_ROWS_PER_FILE)
        records: list[list[Any] | int] = [_text_record(next(texts)) for _ in range(start, stop)]
        yield f"{PREFIX}text-{page}.js", _file("text", b.key, page, records)
