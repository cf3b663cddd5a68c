"""`make_summary`: a `RunSummary` for unit tests, from only the fields a test cares about.

Nested parts may be given as partial dicts (`headline={"metric": "f1", "value": 0.7}`,
`delta={"delta": -0.02}`, `has={"reward": True}`, curves as `{"steps": [...], "values": [...]}`);
every other field gets a neutral default. The result is checked by the same conversion the build
cache uses, so a test cannot build a summary the site could not.
"""

from __future__ import annotations

from typing import Any

import msgspec

from obs.sitemodel import RunSummary

HEADLINE = {"metric": "exact", "value": 0.7, "kind": "probe", "detail": "", "higher_is_better": True}
DELTA = {
    "baseline": "base",
    "baseline_value": None,
    "delta": None,
    "ci": None,
    "p_value": None,
    "method": "",
    "n": None,
    "verdict": "insufficient_statistical_evidence",
}
HAS = {"probe": False, "curves": False, "reward": False, "gate": False}
DEFAULTS: dict[str, Any] = {
    "id": "r",
    "slug": None,  # the id's slug
    "title": "",
    "adapter": "native",
    "spec": None,
    "campaign": None,
    "revision": None,
    "date": None,
    "status": "finished",
    "baseline": None,
    "primary_axis": None,
    "condition": None,
    "seed": None,
    "arm": None,
    "tags": [],
    "provenance": {},
    "headline_is_rate": True,
    "delta": None,
    "verdict": None,
    "decision": None,
    "suggested_verdict": None,
    "disagrees": False,
    "held_constant_clean": None,
    "n_cases": None,
    "n_failing": None,
    "top_failure": None,
    "findings": [],
    "rates": {},
    "input_hash": "",
    "last_step": None,
    "fields": {},
    "finals": {},
    "family_rates": {},
    "split_rates": {},
    "gate_passed": None,
    "curves": None,
}


def make_summary(**kw: Any) -> RunSummary:
    data = {**DEFAULTS, **kw}
    data["slug"] = data["slug"] or str(data["id"])
    data["headline"] = {**HEADLINE, **(kw.get("headline") or {})}
    data["has"] = {**HAS, **(kw.get("has") or {})}
    if kw.get("delta") is not None:
        data["delta"] = {**DELTA, **kw["delta"]}
    if kw.get("frozen_delta") is not None:
        data["frozen_delta"] = {**DELTA, **kw["frozen_delta"]}
    if kw.get("decision") is not None:
        data["decision"] = {"verdict": None, "rationale": "", "next": "", "by": "", "date": "", **kw["decision"]}
    return msgspec.convert(data, RunSummary)


def summaries(*items: dict[str, Any]) -> list[RunSummary]:
    return [make_summary(**item) for item in items]
