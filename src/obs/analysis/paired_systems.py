"""Two systems scored on the same evaluation items: is A really ahead of B, and by how much?

A campaign can name pairs of per-item result files (``paired:`` in campaign.yaml), e.g. the
COLLAB and INDEP pipelines each answering the 1,524 BIRD-dev questions right or wrong. Because the
items are shared, the honest comparison is *paired*: items are the unit, each item's two outcomes
stay together, and the evidence is in the items where the systems disagree. The gap gets Tango's
score interval and the score (McNemar) test it inverts, so the interval excludes 0 exactly when the
test is significant. A claim such as "A beats B by ≥ 1 pp" is supported only when the CI's lower
bound is at least 1 pp (and above 0); a point estimate above 1 pp is not enough.

This module is pure: :func:`parse_item_results` turns the bytes of a result file (read by
discovery) into outcomes per item id, :func:`compare_systems` turns two of those into a
presentation model. The statistics themselves come from :mod:`obs.analysis.stats`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from obs.analysis.stats import (
    PAIRED_METHOD,
    PairedComparison,
    paired_comparison,
    paired_items_needed,
    wilson_interval,
)
from obs.model import ItemResults, PairedSpec
from obs.numbers import p_text, pct, plural, pp

__all__ = [
    "CORRECT_KEYS",
    "ID_KEYS",
    "ItemFileError",
    "PairedSystems",
    "compare_systems",
    "parse_item_results",
]

# Tried in this order when a pair does not name its keys: the names real evaluation dumps use
# (lm-eval `doc_id`, tau-bench `task_id`, GSM8K dumps `i`, ...).
ID_KEYS = ("id", "item_id", "task_id", "question_id", "qid", "doc_id", "example_id", "idx", "index", "i")
CORRECT_KEYS = ("correct", "is_correct", "success", "passed", "pass", "exact_match", "solved", "acc")
# Where a JSON object keeps its list of per-item records.
LIST_KEYS = ("items", "per_item", "per_q", "results", "records", "samples", "data", "outcomes")
MAX_LISTED_IDS = 10


def pp_na(x: float) -> str:
    return pp(x, missing="n/a")


def pct_na(x: float) -> str:
    return pct(x, missing="n/a")


class ItemFileError(ValueError):
    """A result file that cannot be used at all (not JSON, no records, no id or correctness key)."""


@dataclass(frozen=True)
class PairedSystems:
    """Presentation model of one A-vs-B comparison on shared items (A minus B throughout)."""

    name: str
    label_a: str
    label_b: str
    file_a: str
    file_b: str
    items_a: int
    items_b: int
    shared: int
    only_in_a: int
    only_in_b: int
    only_in_a_ids: list[str]
    only_in_b_ids: list[str]
    comparison: PairedComparison | None
    claim_pp: float | None
    claim_supported: bool | None
    items_needed: int | None
    sentence: str
    method: str
    problems: list[str] = field(default_factory=list)
    side_a: SideAccuracy | None = None
    side_b: SideAccuracy | None = None
    formation_rate: float | None = None  # items on both sides / items on either
    control: MatchedControl | None = None
    gate: PairedGate | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in self.__dict__.items() if k != "comparison"}
        out["comparison"] = self.comparison.as_dict() if self.comparison else None
        for k in ("side_a", "side_b", "control", "gate"):
            out[k] = dataclasses.asdict(out[k]) if out[k] is not None else None
        return out


@dataclass(frozen=True)
class SideAccuracy:
    """One system's own accuracy over the items of its file, with its Wilson score interval."""

    label: str
    correct: int
    n: int
    rate: float
    low: float
    high: float
    level: float


@dataclass(frozen=True)
class MatchedControl:
    """The two sides' `config:` compared: what differs, what is meant to differ (`varies:`), what matches."""

    declared: bool  # both sides have a config
    matched: bool  # nothing differs beyond `varies`
    same: list[str]
    intended: list[str]  # differences named in `varies`
    unintended: list[str]  # differences not named there, in words
    sentence: str


@dataclass(frozen=True)
class PairedGate:
    """The paired claim as obs gate judges it: PASS or FAIL, and the words the page says."""

    verdict: str  # PASS | FAIL
    reason: str


# --------------------------------------------------------------------------- reading


def _records_from_json(doc: Any, items_key: str | None) -> list[Any]:
    if isinstance(doc, list):
        return doc
    if not isinstance(doc, dict):
        raise ItemFileError("expected a list of item records or an object holding one")
    if items_key is not None:
        value = doc.get(items_key)
        if not isinstance(value, list):
            raise ItemFileError(f"'{items_key}' is not a list of item records")
        return value
    for key in LIST_KEYS:
        if isinstance(doc.get(key), list):
            return list(doc[key])
    lists = [k for k, v in doc.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
    if len(lists) == 1:
        return list(doc[lists[0]])
    if lists:
        raise ItemFileError(f"several lists of records ({', '.join(sorted(lists))}); name one with 'items_key'")
    return [doc]  # a single record


def _load_records(data: bytes, items_key: str | None) -> tuple[list[Any], list[int]]:
    """Whole-file JSON first; otherwise JSON Lines (one record per non-blank line).

    Returns the records and the numbers of the lines that were not JSON (JSON Lines only).
    """
    text = data.decode("utf-8-sig", errors="replace")
    try:
        return _records_from_json(json.loads(text), items_key), []
    except json.JSONDecodeError:
        pass
    records: list[Any] = []
    bad: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            bad.append(number)
    if not records:
        raise ItemFileError("neither JSON nor JSON Lines")
    return records, bad


def _pick_key(records: list[dict[str, Any]], given: str | None, candidates: Sequence[str], what: str) -> str:
    if given is not None:
        if not any(given in r for r in records):
            raise ItemFileError(f"no record has the {what} key '{given}'")
        return given
    for key in candidates:
        if any(key in r for r in records[:50]):
            return key
    raise ItemFileError(f"no {what} key found (tried {', '.join(candidates)}); name it with '{what}_key'")


def _as_outcome(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    return None


def parse_item_results(
    data: bytes,
    *,
    id_key: str | None = None,
    correct_key: str | None = None,
    items_key: str | None = None,
    by_position: bool = False,
) -> ItemResults:
    """Outcome per item id from a JSON or JSON Lines result file.

    Accepted shapes: a JSON list of records, a JSON object holding such a list (under
    ``items_key`` or one of :data:`LIST_KEYS`, e.g. ``{"n": 1319, "per_q": [...]}``), or JSON Lines.
    Each record needs an id (``id_key`` or the first of :data:`ID_KEYS` present) and a
    correctness value (``correct_key`` or the first of :data:`CORRECT_KEYS`) that is a boolean
    or 0/1. Records without a usable id or outcome are skipped and counted, never guessed; a
    repeated id keeps the last record (counted as a duplicate), as re-runs append.

    With ``by_position`` (campaign.yaml ``pair_by: position``) the id of a record is its position
    in the file (1, 2, ...): for two files of the same items in the same order that carry no id.

    Raises :class:`ItemFileError` when nothing usable is in the file.
    """
    raw, bad_lines = _load_records(data, items_key)
    if by_position:
        raw = [{**r, "#": i} if isinstance(r, dict) else r for i, r in enumerate(raw, 1)]
        id_key = "#"
    problems: list[str] = []
    if bad_lines:
        shown = ", ".join(str(n) for n in bad_lines[:5]) + (", …" if len(bad_lines) > 5 else "")
        problems.append(f"{len(bad_lines)} line(s) are not JSON (line {shown}); skipped")
    records = [r for r in raw if isinstance(r, dict)]
    not_records = len(raw) - len(records)
    if not records:
        raise ItemFileError("no item records (JSON objects) found")
    ikey = _pick_key(records, id_key, ID_KEYS, "id")
    ckey = _pick_key(records, correct_key, CORRECT_KEYS, "correct")
    outcomes: dict[str, bool] = {}
    skipped = not_records + len(bad_lines)
    no_id = no_outcome = duplicates = 0
    col_keys, sample_keys = _other_outcome_keys(records, {ikey, ckey})
    columns: dict[str, dict[str, bool]] = {k: {} for k in col_keys}
    samples: dict[str, dict[str, tuple[int, int]]] = {k: {} for k in sample_keys}
    for rec in records:
        item = rec.get(ikey)
        if item is None or isinstance(item, dict | list | bool):
            no_id += 1
            continue
        outcome = _as_outcome(rec.get(ckey))
        if outcome is None:
            no_outcome += 1
            continue
        key = str(item)
        if key in outcomes:
            duplicates += 1
        outcomes[key] = outcome
        for k in col_keys:
            value = _as_outcome(rec.get(k))
            if value is not None:
                columns[k][key] = value
        for k in sample_keys:
            drawn = _sampled(rec.get(k))
            if drawn is not None:
                samples[k][key] = drawn
    if not_records:
        problems.append(f"{plural(not_records, 'entry is', 'entries are')} not an object; skipped")
    if no_id:
        problems.append(f"{no_id} record(s) have no usable '{ikey}'; skipped")
    if no_outcome:
        problems.append(f"{no_outcome} record(s) have no true/false '{ckey}'; skipped")
    if duplicates:
        problems.append(f"{duplicates} repeated '{ikey}' value(s); the last record of each was kept")
    if not outcomes:
        raise ItemFileError(f"no record has both an '{ikey}' and a true/false '{ckey}'")
    return ItemResults(
        outcomes=outcomes,
        id_key=ikey,
        correct_key=ckey,
        skipped=skipped + no_id + no_outcome,
        duplicates=duplicates,
        problems=tuple(problems),
        columns={k: v for k, v in columns.items() if v},
        samples={k: v for k, v in samples.items() if v},
    )


MAX_COLUMNS = 8


def _sampled(value: Any) -> tuple[int, int] | None:
    """A list of K sampled outcomes (true/false or 0/1) as (K, correct); None for anything else."""
    if not isinstance(value, list) or not value:
        return None
    outcomes = [_as_outcome(v) for v in value]
    if any(o is None for o in outcomes):
        return None
    return len(outcomes), sum(1 for o in outcomes if o)


def _other_outcome_keys(records: list[dict[str, Any]], taken: set[str]) -> tuple[list[str], list[str]]:
    """Keys of the first records that hold another yes/no outcome (`true`/`false` values only: a 0/1 number may
    be a count) or a list of K sampled outcomes: the columns of the config x metric table."""
    cols: dict[str, None] = {}
    lists: dict[str, None] = {}
    for rec in records[:50]:
        for k, v in rec.items():
            if k in taken:
                continue
            if isinstance(v, bool):
                cols.setdefault(k)
            elif _sampled(v) is not None and len(v) > 1:
                lists.setdefault(k)
    return sorted(cols)[:MAX_COLUMNS], sorted(lists)[:MAX_COLUMNS]


# --------------------------------------------------------------------------- comparing


_NUMBER = re.compile(r"-?[0-9]{1,18}")  # what int() takes and a 64-bit integer holds ('²' is a digit too)


def _sort_ids(ids: set[str]) -> list[str]:
    """Numeric ids in numeric order, the rest alphabetically: stable pages whatever the file order."""
    return sorted(ids, key=lambda s: (0, int(s), "") if _NUMBER.fullmatch(s) else (1, 0, s))


def compare_systems(spec: PairedSpec, *, alpha: float = 0.05, level: float = 0.95) -> PairedSystems:
    """Compare system A with system B on the items both files contain.

    Items present in only one file are counted and listed (first ids), never silently dropped
    from view; the statistics use the shared items only, since an item without both outcomes
    carries no paired information. ``claim_supported`` is ``lower CI bound ≥ claim_pp / 100`` and
    above 0 (``None`` when no claim is set or nothing could be compared): a system compared with
    itself supports no claim. ``items_needed`` is the paired (Connor 1987) number of items for 80%
    power at the observed discordance and gap.
    """
    method = f"{level:.0%} {PAIRED_METHOD}; items are the unit, pairs kept"
    problems = list(spec.problems)
    a_out = spec.a.outcomes if spec.a else {}
    b_out = spec.b.outcomes if spec.b else {}
    both_read = spec.a is not None and spec.b is not None
    shared_ids = _sort_ids(set(a_out) & set(b_out))
    only_a = _sort_ids(set(a_out) - set(b_out)) if both_read else []
    only_b = _sort_ids(set(b_out) - set(a_out)) if both_read else []
    comparison: PairedComparison | None = None
    claim_supported: bool | None = None
    items_needed: int | None = None
    if spec.a is None or spec.b is None:
        sentence = "Not compared: a result file could not be read."
    elif not shared_ids:
        sentence = f"Not compared: the two files share no item ids ({spec.a.id_key} / {spec.b.id_key})."
    else:
        comparison = paired_comparison(
            [a_out[i] for i in shared_ids],
            [b_out[i] for i in shared_ids],
            level=level,
            alpha=alpha,
        )
        if comparison.only_a != comparison.only_b:
            items_needed = paired_items_needed(
                comparison.discordant / comparison.n, comparison.delta, alpha=alpha, power=0.8
            )
        sentence = _sentence(spec, comparison)
        if spec.claim_pp is not None:
            low = comparison.interval.low
            claim_supported = bool(low >= spec.claim_pp / 100.0 and low > 0.0)
            bound = pp_na(comparison.interval.low)
            verb = "is supported" if claim_supported else "is not supported"
            sentence += (
                f' The claim "{spec.label_a} beats {spec.label_b} by ≥ {spec.claim_pp:g} pp" {verb}: '
                f"the CI's lower bound is {bound}."
            )
    side_a = _side(spec.label_a, spec.a, level)
    side_b = _side(spec.label_b, spec.b, level)
    union = len(set(a_out) | set(b_out))
    formation = len(shared_ids) / union if both_read and union else None
    control = matched_control(spec)
    if formation is not None and formation < 1.0:
        sentence += (
            f" Pairs formed for {pct_na(formation)} of the items ({len(shared_ids):,} on both sides of {union:,} on "
            "either)."
        )
    if control is not None:
        sentence += " " + control.sentence
    gate = _gate(spec, comparison, claim_supported, control)
    return PairedSystems(
        name=spec.name,
        label_a=spec.label_a,
        label_b=spec.label_b,
        file_a=spec.file_a,
        file_b=spec.file_b,
        items_a=len(a_out),
        items_b=len(b_out),
        shared=len(shared_ids),
        only_in_a=len(only_a),
        only_in_b=len(only_b),
        only_in_a_ids=only_a[:MAX_LISTED_IDS],
        only_in_b_ids=only_b[:MAX_LISTED_IDS],
        comparison=comparison,
        claim_pp=spec.claim_pp,
        claim_supported=claim_supported,
        items_needed=items_needed,
        sentence=sentence,
        method=method,
        problems=problems,
        side_a=side_a,
        side_b=side_b,
        formation_rate=formation,
        control=control,
        gate=gate,
    )


def _side(label: str, results: ItemResults | None, level: float) -> SideAccuracy | None:
    """One system's accuracy over every item of its own file, with the Wilson score interval (items the unit)."""
    if results is None or not results.outcomes:
        return None
    n = len(results.outcomes)
    k = sum(1 for v in results.outcomes.values() if v)
    iv = wilson_interval(k, n, level)
    return SideAccuracy(label, k, n, k / n, iv.low, iv.high, level)


def _shown(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:59] + "…"


def matched_control(spec: PairedSpec) -> MatchedControl | None:
    """The two sides' settings compared key by key (None when neither side has a `config:`)."""
    a, b = spec.config_a, spec.config_b
    if not a and not b:
        return None
    varies = set(spec.varies)
    same: list[str] = []
    intended: list[str] = []
    unintended: list[str] = []
    for key in sorted(set(a) | set(b)):
        if key in a and key in b:
            if a[key] == b[key]:
                same.append(key)
                continue
            said = f"{key} differs: {_shown(a[key])} vs {_shown(b[key])}"
        else:
            side, other = (spec.label_a, spec.label_b) if key in a else (spec.label_b, spec.label_a)
            said = f"{key} is set for {side} only ({_shown(a.get(key, b.get(key)))}), not for {other}"
        (intended if key in varies else unintended).append(said)
    declared = bool(a) and bool(b)
    matched = declared and not unintended
    if not declared:
        sentence = (
            f"Matched control not checked: only {spec.label_a if a else spec.label_b} has a config "
            "(give each side `config:`)."
        )
    elif matched:
        meant = f" ({'; '.join(intended)}, as declared in varies)" if intended else ""
        kept = ", ".join(same) if same else "no other setting"
        sentence = f"Matched control: {kept} the same on both sides{meant}."
    else:
        sentence = (
            "Not a matched control: "
            + "; ".join(unintended)
            + (
                f" (beyond what varies names: {', '.join(sorted(varies))})."
                if varies
                else " (no `varies:` names a difference)."
            )
        )
    return MatchedControl(declared, matched, same, intended, unintended, sentence)


def _gate(
    spec: PairedSpec,
    c: PairedComparison | None,
    claim_supported: bool | None,
    control: MatchedControl | None,
) -> PairedGate:
    """PASS when the claim holds (`claim_pp`: the CI's lower bound at least that; without one, A significantly
    better than B) on a comparison that is a matched control when the sides declare their settings."""
    if c is None:
        return PairedGate("FAIL", "not compared: " + ("; ".join(spec.problems) or "no shared items"))
    if control is not None and control.declared and not control.matched:
        return PairedGate("FAIL", control.sentence)
    if spec.claim_pp is not None:
        verb = "is supported" if claim_supported else "is not supported"
        return PairedGate(
            "PASS" if claim_supported else "FAIL",
            f'the claim "{spec.label_a} beats {spec.label_b} by ≥ {spec.claim_pp:g} pp" {verb}: '
            f"the CI's lower bound is {pp_na(c.interval.low)}",
        )
    better = c.recommendation == "statistically_significant_improvement"
    return PairedGate(
        "PASS" if better else "FAIL",
        f"{spec.label_a} is significantly better at α = {c.alpha:g}"
        if better
        else f"{spec.label_a} is not shown better than {spec.label_b} at α = {c.alpha:g} (gap {pp_na(c.delta)})",
    )


def _sentence(spec: PairedSpec, c: PairedComparison) -> str:
    ci = f"{c.interval.level:.0%} CI {pp_na(c.interval.low)} to {pp_na(c.interval.high)}"
    text = (
        f"On {c.n:,} shared items {spec.label_a} scored {pct_na(c.rate_a)} and {spec.label_b} {pct_na(c.rate_b)}: "
        f"a gap of {pp_na(c.delta)} ({ci}, items as the unit). They disagree on {plural(c.only_a + c.only_b, 'item')} "
        f"({c.only_a:,} only {spec.label_a} right, {c.only_b:,} only {spec.label_b} right; "
        f"McNemar score test {p_text(c.p_value)})."
    )
    if c.recommendation == "statistically_significant_improvement":
        text += f" {spec.label_a} is significantly better at α = {c.alpha:g}."
    elif c.recommendation == "significant_degradation":
        text += f" {spec.label_b} is significantly better at α = {c.alpha:g}."
    else:
        text += f" Insufficient statistical evidence of a difference at α = {c.alpha:g}."
    return text


# --------------------------------------------------------------------------- the config x metric table


@dataclass(frozen=True)
class TableCell:
    value: float
    low: float
    high: float
    n: int  # items behind the value


@dataclass(frozen=True)
class ConfigRow:
    label: str
    file: str
    config: dict[str, Any]
    cells: dict[str, TableCell | None]  # column key -> cell (None: the file has no such outcome)


@dataclass(frozen=True)
class ConfigTable:
    """Every system of a campaign's `paired:` entries (once per file) against every outcome their files hold:
    the judged outcome, the other yes/no columns, pass@1 and pass@K of K sampled outcomes per item, and the
    selector's accuracy on the items the oracle (any of the K samples) solves."""

    columns: list[tuple[str, str]]  # key, heading
    rows: list[ConfigRow]
    settings: list[str]  # config keys shown as columns before the metrics
    method: str

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _cell_rate(values: list[bool], level: float) -> TableCell | None:
    if not values:
        return None
    k = sum(values)
    iv = wilson_interval(k, len(values), level)
    return TableCell(k / len(values), iv.low, iv.high, len(values))


def config_table(specs: Sequence[PairedSpec], level: float = 0.95) -> ConfigTable | None:
    """The config x metric table of a campaign's paired files, built from their per-item records."""
    from obs.analysis.stats import mean_interval_01, pass_at_k

    sides: dict[str, tuple[str, ItemResults, dict[str, Any]]] = {}
    for spec in specs:
        for file, label, res, cfg in (
            (spec.file_a, spec.label_a, spec.a, spec.config_a),
            (spec.file_b, spec.label_b, spec.b, spec.config_b),
        ):
            if res is not None and file not in sides:
                sides[file] = (label, res, cfg)
    if not sides:
        return None
    columns: dict[str, str] = {}
    for _, res, _ in sides.values():
        columns.setdefault(f"judged:{res.correct_key}", f"{res.correct_key} (judged)")
        for k in res.columns:
            columns.setdefault(f"col:{k}", k)
        for k, per in res.samples.items():
            big = max(n for n, _ in per.values())
            columns.setdefault(f"pass1:{k}", f"pass@1 ({k})")
            columns.setdefault(f"passK:{k}", f"oracle pass@{big} ({k})")
            columns.setdefault(f"sel:{k}", f"selector / oracle ({k})")
    rows: list[ConfigRow] = []
    for file, (label, res, cfg) in sides.items():
        cells: dict[str, TableCell | None] = dict.fromkeys(columns)
        cells[f"judged:{res.correct_key}"] = _cell_rate(list(res.outcomes.values()), level)
        for k, per_item in res.columns.items():
            cells[f"col:{k}"] = _cell_rate(list(per_item.values()), level)
        for k, per in res.samples.items():
            big = max(n for n, _ in per.values())
            full = [(n, c) for n, c in per.values() if n == big]
            ones = [pass_at_k(n, c, 1) for n, c in per.values()]
            if ones:
                iv = mean_interval_01(ones, level, max_samples=big)
                cells[f"pass1:{k}"] = TableCell(sum(ones) / len(ones), iv.low, iv.high, len(ones))
            cells[f"passK:{k}"] = _cell_rate([c > 0 for _, c in full], level)
            solved = [item for item, (n, c) in per.items() if n == big and c > 0 and item in res.outcomes]
            cells[f"sel:{k}"] = _cell_rate([res.outcomes[i] for i in solved], level)
        rows.append(ConfigRow(label, file, dict(cfg), cells))
    settings = sorted({k for _, _, cfg in sides.values() for k in cfg})
    method = (
        f"items are the unit; a yes/no outcome is its share of the file's items with a {level:.0%} Wilson score "
        "interval; pass@1 is the mean over items of the unbiased c/K with a Wilson interval at the items' effective "
        "number (design effect of K samples); oracle pass@K is the share of items with at least one of their K "
        "samples right (items with fewer samples left out); selector / oracle is the judged outcome's accuracy on "
        "the items the oracle solves: how much of the oracle the selector recovers"
    )
    return ConfigTable(list(columns.items()), rows, settings, method)
