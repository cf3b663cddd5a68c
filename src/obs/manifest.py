"""`index.json`: the published, versioned record of what a build said about each run.

Other tools (and `obs build --compare-to`) read it instead of the pages. Each record is made from
the run's `RunSummary` (`manifest_record`), so the manifest and the pages cannot disagree.

A site of more than `SHARD_RUNS` runs keeps index.json small (issue 32: at 100,000 runs one file of every
record would be ~80 MB): its runs go into shards of `SHARD_RUNS` records by id (`index/runs-0001.json`,
...), and index.json says where (`run_shards`: each shard's path, count, first and last id) with
`"schema_version": 3`; `read_runs` reads either form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
import orjson

from obs import __version__
from obs.jsonutil import dumps
from obs.sitemodel import ManifestRecord, RunSummary
from obs.urls import MANIFEST, MANIFEST_SHARDS, manifest_shard, run_analysis, run_page

MANIFEST_SCHEMA_VERSION = 2
SHARDED_SCHEMA_VERSION = 3  # index.json whose runs are in shards (`run_shards`) instead of `runs`
SHARD_RUNS = 1_000  # records index.json or a shard holds (~1.3 KB a record as written, indented: ~1.3 MB)


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


def manifest_files(
    summaries: list[RunSummary],
    *,
    title: str,
    specs: Iterable[str],
    campaigns: Iterable[str],
    errors: int,
    warnings: int,
    not_read: Iterable[str] = (),
    hidden: Iterable[str] = (),
    seed_levels: Mapping[str, dict[str, Any]] | None = None,
    sections: dict[str, Any] | None = None,
    shard_runs: int = SHARD_RUNS,
    write: Callable[[str, bytes], None] | None = None,
) -> dict[str, bytes]:
    """index.json, and its run shards when there are more than `shard_runs` runs; `sections` are what
    build plugins add (the agent-learning keys: `learning`). Records are made a shard at a time; with `write`,
    each shard is written with it as it is made and only index.json is returned (for the caller to write
    last): at 100,000 runs the shards held together were ~140 MB at the end of a build (issue 32)."""
    ordered = sorted(summaries, key=lambda s: s.id)
    levels = seed_levels or {}
    doc: dict[str, Any] = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "generator": "obs",
        "obs_version": __version__,
        "title": title,
    }
    files: dict[str, bytes] = {}
    put = write or files.__setitem__
    if len(ordered) <= shard_runs:
        doc["runs"] = [record_json(s, levels.get(s.id)) for s in ordered]
    else:
        doc["schema_version"] = SHARDED_SCHEMA_VERSION
        doc["run_count"] = len(ordered)
        shards = []
        for k, start in enumerate(range(0, len(ordered), shard_runs), start=1):
            part = ordered[start : start + shard_runs]
            path = manifest_shard(k)
            put(path, dumps({"runs": [record_json(s, levels.get(s.id)) for s in part]}))
            shards.append({"path": path, "count": len(part), "first": part[0].id, "last": part[-1].id})
        doc["run_shards"] = shards
    doc.update(
        {
            "specs": sorted(specs),
            "campaigns": sorted(campaigns),
            "diagnostics": {"errors": errors, "warnings": warnings},
            "not_read": list(not_read),  # files of the source that no format read (relative to the source)
        }
    )
    hidden_lines = list(hidden)
    if hidden_lines:  # read and not shown on purpose (a deleted MLflow run), with why; absent when none
        doc["hidden"] = hidden_lines
    for name, value in (sections or {}).items():
        doc.setdefault(name, value)
    files[MANIFEST] = dumps(doc)
    return files


class ShardError(ValueError):
    """A sharded index.json whose shard is missing or malformed (the message names it)."""


def read_runs(doc: Mapping[str, Any], folder: Path, max_bytes: int) -> Iterator[Any]:
    """The run records of a parsed index.json found in `folder`: its `runs`, or those of each of its
    `run_shards` (read one at a time, each at most `max_bytes`); anything else raises ShardError."""
    if isinstance(doc.get("runs"), list):
        yield from doc["runs"]
        return
    shards = doc.get("run_shards")
    if not isinstance(shards, list):
        raise ShardError(f"{folder / MANIFEST}: no 'runs' and no 'run_shards'")
    for shard in shards:
        rel = shard.get("path") if isinstance(shard, dict) else None
        if not isinstance(rel, str) or not rel.startswith(MANIFEST_SHARDS + "/") or ".." in rel.split("/"):
            raise ShardError(f"{folder / MANIFEST}: a run shard's path is not under {MANIFEST_SHARDS}/: {rel!r}")
        path = folder / rel
        try:
            if path.stat().st_size > max_bytes:
                raise ShardError(f"{path}: larger than {max_bytes} bytes; not read")
            part = orjson.loads(path.read_bytes())
        except OSError as exc:
            raise ShardError(
                f"{path}: cannot be read ({exc.strerror or exc}); a sharded index.json needs its site folder"
            ) from exc
        except orjson.JSONDecodeError as exc:
            raise ShardError(f"{path}: not valid JSON ({exc})") from exc
        if not isinstance(part, dict) or not isinstance(part.get("runs"), list):
            raise ShardError(f"{path}: not a run shard of an obs manifest (no 'runs' list)")
        yield from part["runs"]
