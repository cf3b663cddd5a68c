"""`index.json`: the published, versioned record of what a build said about each run.

Other tools (and `obs build --compare-to`) read it instead of the pages. Each record is made from
the run's `RunSummary` (`manifest_record`), so the manifest and the pages cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from obs import __version__
from obs.jsonutil import dumps
from obs.sitemodel import ManifestRecord, RunSummary
from obs.urls import run_analysis, run_page

MANIFEST_SCHEMA_VERSION = 2


def manifest_record(s: RunSummary) -> ManifestRecord:
    return ManifestRecord(
        id=s.id,
        title=s.title,
        page=run_page(s.slug),
        analysis=run_analysis(s.slug),
        adapter=s.adapter,
        spec=s.spec,
        campaign=s.campaign,
        status=s.status,
        date=s.date,
        baseline=s.baseline,
        headline=s.headline,
        delta=s.delta,
        rates=s.rates,
        verdict=s.verdict,
        suggested_verdict=s.suggested_verdict,
        input_hash=s.input_hash,
    )


def record_json(s: RunSummary, seed_level: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run's record as it appears in index.json (plain data), with its seed-level result when its group
    (campaign condition, ablation arm, or a recipe with seed replicates) is compared with seeds as the unit."""
    data: dict[str, Any] = msgspec.to_builtins(manifest_record(s))
    data["seed_level"] = seed_level
    return data


def manifest(
    summaries: list[RunSummary],
    *,
    title: str,
    specs: Iterable[str],
    campaigns: Iterable[str],
    errors: int,
    warnings: int,
    not_read: Iterable[str] = (),
    seed_levels: Mapping[str, dict[str, Any]] | None = None,
    sections: dict[str, Any] | None = None,
) -> bytes:
    """index.json; `sections` are what build plugins add (the agent-learning keys: `learning`)."""
    doc = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "generator": "obs",
        "obs_version": __version__,
        "title": title,
        "runs": [record_json(s, (seed_levels or {}).get(s.id)) for s in sorted(summaries, key=lambda s: s.id)],
        "specs": sorted(specs),
        "campaigns": sorted(campaigns),
        "diagnostics": {"errors": errors, "warnings": warnings},
        "not_read": list(not_read),  # files of the source that no format read (relative to the source)
    }
    for name, value in (sections or {}).items():
        doc.setdefault(name, value)
    return dumps(doc)
