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

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from obs.analysis.stats import PAIRED_METHOD, PairedComparison, paired_comparison, paired_items_needed
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

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in self.__dict__.items() if k != "comparison"}
        out["comparison"] = self.comparison.as_dict() if self.comparison else None
        return out


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
    )


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
