"""The leaderboard of a very large site: every run as data, for the index page's script.

Up to `leaderboard_rows` runs (obs.yaml) the index page holds every row and its script filters and
sorts them in place. Past that, the page holds the newest `leaderboard_rows` (what a reader without
JavaScript sees) and `leaderboard.js` holds every run: what a row shows, already formatted here (the
script never formats a number), its sort keys and its filter values. Measured on 10,000 runs in
docs/performance.md. Like the other data files, it appends one JSON value to `OBS_DATA`, which a
page opened from disk can load and a strict policy allows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from obs import urls
from obs.analysis.gates import GateResult
from obs.analysis.ranking import RankGroup
from obs.render.datafile import data_file_of_items
from obs.render.format import direction, summary_ci, summary_delta, summary_value, verdict_words
from obs.sitemodel import RunSummary

SCHEMA = "obs.leaderboard/1"


def _gates(gates: Sequence[GateResult]) -> tuple[list[list[str]], str, int]:
    passed = sum(1 for g in gates if g.status == "pass")
    na = sum(1 for g in gates if g.status == "na")
    text = "none applies" if na == len(gates) else f"{passed}/{len(gates) - na} pass" + (f" · {na} n/a" if na else "")
    return [[g.status, g.label, g.detail] for g in gates], text, passed


def run_record(
    s: RunSummary,
    gates: Sequence[GateResult] | None,
    spec_links: dict[str, str],
    prov: dict[str, str],
    rank: RankGroup | None = None,
    seed_level: SeedLevelRow | None = None,
) -> dict[str, Any]:
    """One run as the script's row builder (assets/obs.js `buildRow`) reads it: the same cell as the
    template's `run_delta` (the delta with its comparison key and outcome, "vs baseline" when it was
    tested, and the group's seed-level result when the run belongs to one)."""
    ch = s.changed if s.changed and s.changed.state != "same" else None
    cond = _condition(s)
    flag = f"rules suggest {s.suggested_verdict}" if s.disagrees else None
    suggested = f"suggested: {s.suggested_verdict}" if not s.verdict and s.suggested_verdict and not flag else None
    gate_cells, gates_text, passed = _gates(gates) if gates is not None else ([], "", 0)
    head = summary_value(s)
    rec: dict[str, Any] = {
        "id": s.id,
        "slug": s.slug,  # the value of the row's pick box (overlay on compare.html)
        "href": urls.run_page(s.slug),
        "title": s.title or None,
        "tags": list(s.tags),
        "changed": [ch.state, f"{urls.CHANGES}#run-{s.slug}", ", ".join(ch.what)] if ch else None,
        "spec": s.spec,
        "specHref": spec_links.get(s.spec) if s.spec else None,
        "campaign": s.campaign,
        "cond": cond,
        "date": s.date,
        "status": s.status,
        "head": head,
        "headSort": s.headline.value,
        "metric": s.headline.metric,
        "group": rank.group if rank else "",  # the headline is ranked only within this comparable set
        "marks": list(rank.marks) if rank else [],
        **_delta_cells(s, seed_level),
        "verdict": s.verdict,
        "flag": flag,
        "suggested": suggested,
        "gates": gate_cells if gates is not None else None,
        "gatesText": gates_text,
        "gatesPassed": passed,
        "facets": {"status": s.status, "verdict": s.verdict or "none", "spec": s.spec or "", **prov},
    }
    words = [s.id, s.title, " ".join(f"#{t}" for t in s.tags), s.spec, s.campaign, cond, s.date, s.status]
    words += [head, s.headline.metric, rec["delta"], rec["ci"], s.verdict, flag, suggested, gates_text]
    rec["search"] = " ".join(str(w) for w in words if w)
    sort_spec = " ".join(x for x in (s.spec, s.campaign, cond) if x)
    rec["keys"] = [s.id, sort_spec, s.date or "", s.status, s.headline.value, rec["deltaSort"], s.verdict or "", passed]
    return rec


def _condition(s: RunSummary) -> str:
    """A campaign run's condition and seed, as the row's spec cell shows them."""
    if not (s.campaign and s.condition):
        return ""
    return s.condition + (f" · seed {s.seed}" if s.seed is not None else "")


def _delta_cells(s: RunSummary, seed_level: SeedLevelRow | None) -> dict[str, Any]:
    """The row's delta cell: the change against the baseline, its interval and outcome, and the group's
    seed-level result."""
    d = s.delta if s.delta and s.delta.delta is not None else None
    return {
        "delta": summary_delta(s) if d else None,
        "deltaSort": d.delta if d else None,
        "ci": summary_ci(s) if d else "",
        "dir": direction(d.verdict) if d else "flat",
        "verdictWords": verdict_words(d.verdict) if d else "",
        "outcome": d.verdict if d else None,
        "vs": s.baseline if d and d.verdict != "not_tested" else None,
        "seedLevel": _seed_level(seed_level) if seed_level else None,
    }


class SeedLevelRow(Protocol):
    """A run's seed-level result (`index_pages.SeedLevel`), as the row reads it."""

    @property
    def key(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def href(self) -> str: ...
    @property
    def outcome(self) -> str | None: ...
    @property
    def n(self) -> int: ...
    @property
    def n_baseline(self) -> int: ...


def _seed_level(sl: SeedLevelRow) -> dict[str, Any]:
    """What the row's seed-level line shows (`run_delta` in templates/partials/macros.html)."""
    if sl.outcome:
        return {
            "key": sl.key,
            "outcome": sl.outcome,
            "dir": direction(sl.outcome),
            "words": verdict_words(sl.outcome),
            "seeds": f"{sl.n} v {sl.n_baseline} seeds",
            "href": sl.href,
            "label": sl.label,
        }
    return {"href": sl.href, "label": sl.label, "text": sl.label.split(" of ")[0]}


def leaderboard_data(records: Iterable[dict[str, Any]], part: int | None = None) -> bytes:
    """One data file of the leaderboard; `part` numbers it (from 1) when the runs take several files. The
    records may come one at a time (each made into JSON as it comes)."""
    meta: dict[str, Any] = {"schema": SCHEMA, "kind": "runs"}
    if part is not None:
        meta["part"] = part
    return data_file_of_items(meta, records)
