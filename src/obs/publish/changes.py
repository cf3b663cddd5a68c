"""Changes since another build: `obs build --compare-to OLD_SITE_OR_index.json`.

The other build is read from its manifest (`index.json`) only, never from its pages: the manifest is
the published, versioned record of what a build said about each run (headline, rates, verdicts, the
hash of the inputs). Comparing it with this build's run summaries answers the reviewer's question
"what is different from what I saw last time?": new and removed runs, changed verdicts, metrics
that moved (with their deltas), and runs whose artifacts changed although nothing shown moved.

Pure apart from `read_manifest`: summaries and a manifest in, a `Changes` record out.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from obs import urls
from obs.lazysummary import replace_summary
from obs.manifest import ShardError, read_runs, record_json
from obs.sitemodel import ChangeState, RunSummary

MAX_MANIFEST_BYTES = 256 * 1024 * 1024
EPSILON = 1e-12  # float noise, not a change


class ManifestError(Exception):
    pass


@dataclass(frozen=True)
class OldManifest:
    token: str  # identifies the compared build (a hash of its run records)
    obs_version: str
    title: str
    runs: dict[str, dict[str, Any]]


def read_manifest(path: Path) -> OldManifest:
    """The manifest of another build: a site folder (its index.json) or an index.json file."""
    target = path / urls.MANIFEST if path.is_dir() else path
    try:
        if target.stat().st_size > MAX_MANIFEST_BYTES:
            raise ManifestError(f"{target}: larger than {MAX_MANIFEST_BYTES} bytes; not read")
        doc = json.loads(target.read_bytes())
    except OSError as exc:
        raise ManifestError(f"{target}: cannot be read: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ManifestError(f"{target}: not valid JSON ({exc})") from exc
    if (
        not isinstance(doc, dict)
        or doc.get("generator") != "obs"
        or not (isinstance(doc.get("runs"), list) or isinstance(doc.get("run_shards"), list))
    ):
        raise ManifestError(f"{target}: not an obs manifest (expected the index.json of a site built by obs)")
    runs: dict[str, dict[str, Any]] = {}
    try:
        for rec in read_runs(doc, target.parent, MAX_MANIFEST_BYTES):  # a large site's runs are in shards
            if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                runs[rec["id"]] = rec
    except ShardError as exc:
        raise ManifestError(str(exc)) from exc
    canonical = json.dumps([runs[k] for k in sorted(runs)], sort_keys=True, default=str).encode()
    return OldManifest(
        token=hashlib.sha256(canonical).hexdigest()[:16],
        obs_version=str(doc.get("obs_version") or "?"),
        title=str(doc.get("title") or ""),
        runs=runs,
    )


@dataclass
class Moved:
    id: str
    slug: str
    metric: str
    old: float | None
    new: float | None
    delta: float | None
    is_rate: bool
    headline: bool
    better: bool | None = None  # True when the move is in the metric's good direction


@dataclass
class VerdictChange:
    id: str
    slug: str
    which: str  # "recorded" or "suggested"
    old: str | None
    new: str | None


@dataclass
class Changes:
    token: str
    old_version: str
    old_runs: int
    new_runs: int
    new: list[RunSummary] = field(default_factory=list)  # runs not in the old build
    removed: list[dict[str, Any]] = field(default_factory=list)  # old manifest records
    verdicts: list[VerdictChange] = field(default_factory=list)
    moved: list[Moved] = field(default_factory=list)
    statuses: list[VerdictChange] = field(default_factory=list)
    inputs_only: list[RunSummary] = field(default_factory=list)  # artifacts changed, nothing shown moved
    states: dict[str, ChangeState] = field(default_factory=dict)  # run id -> the run's `changed`

    def changed_runs(self, summaries: list[RunSummary]) -> list[dict[str, Any]]:
        """One record per run that is in both builds and changed, with everything that changed."""
        by_id = {s.id: s for s in summaries}
        out = []
        for run_id in sorted(k for k, v in self.states.items() if v.state == "changed"):
            out.append(
                {
                    "summary": by_id[run_id],
                    "verdicts": [v for v in self.verdicts if v.id == run_id],
                    "statuses": [v for v in self.statuses if v.id == run_id],
                    "moved": [m for m in self.moved if m.id == run_id],
                    "inputs_only": any(s.id == run_id for s in self.inputs_only),
                }
            )
        return out

    @property
    def empty(self) -> bool:
        return not (self.new or self.removed or self.verdicts or self.moved or self.statuses or self.inputs_only)


def _number(x: Any) -> float | None:
    if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x):
        return float(x)
    return None


def _differs(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    return abs(a - b) > EPSILON * max(1.0, abs(a), abs(b))


def compare(
    old: OldManifest, summaries: list[RunSummary], is_negative: Callable[[str], bool] = lambda _: False
) -> Changes:
    """This build's runs against the other build's manifest records, field by field of the manifest."""
    out = Changes(token=old.token, old_version=old.obs_version, old_runs=len(old.runs), new_runs=len(summaries))
    by_id = {s.id: s for s in summaries}
    for s in sorted(summaries, key=lambda s: s.id):
        before = old.runs.get(s.id)
        if before is None:
            out.new.append(s)
            out.states[s.id] = ChangeState(old.token, "new", ("new run",))
            continue
        now = record_json(s)
        what: list[str] = []
        for which, key in (("recorded", "verdict"), ("suggested", "suggested_verdict")):
            if before.get(key) != now.get(key):
                out.verdicts.append(VerdictChange(s.id, s.slug, which, before.get(key), now.get(key)))
                what.append(f"{which} verdict")
        if before.get("status") != now.get("status"):
            out.statuses.append(VerdictChange(s.id, s.slug, "status", before.get("status"), now.get("status")))
            what.append("status")
        moved = _moved(s, now, before, is_negative)
        out.moved.extend(moved)
        if moved:
            what.append("metrics")
        if not what and before.get("input_hash") != now.get("input_hash"):
            out.inputs_only.append(s)
            what.append("artifacts")
        out.states[s.id] = ChangeState(old.token, "changed" if what else "same", tuple(what))
    out.removed = [old.runs[k] for k in sorted(old.runs) if k not in by_id]
    for rec in out.removed:
        rec.setdefault("slug", urls.run_page_of(str(rec.get("page") or "")) or "")
    return out


def _moved(
    s: RunSummary, now: dict[str, Any], before: dict[str, Any], is_negative: Callable[[str], bool]
) -> list[Moved]:
    out: list[Moved] = []
    head_new, head_old = now.get("headline") or {}, before.get("headline") or {}
    metric = head_new.get("metric")
    is_rate = s.headline_is_rate
    if metric and metric == head_old.get("metric"):
        a, b = _number(head_old.get("value")), _number(head_new.get("value"))
        if _differs(a, b):
            delta = None if a is None or b is None else b - a
            better = None if delta is None else (delta > 0) == bool(head_new.get("higher_is_better", True))
            out.append(Moved(s.id, s.slug, metric, a, b, delta, is_rate, True, better))
    elif metric or head_old.get("metric"):
        a, b = _number(head_old.get("value")), _number(head_new.get("value"))
        label = f"headline {head_old.get('metric') or 'none'} → {metric or 'none'}"
        out.append(Moved(s.id, s.slug, label, a, b, None, is_rate, True))
    rates_new, rates_old = now.get("rates") or {}, before.get("rates") or {}
    for check in sorted(set(rates_new) | set(rates_old)):
        if check == metric:
            continue  # already the headline row
        a, b = _number(rates_old.get(check)), _number(rates_new.get(check))
        if _differs(a, b):
            delta = None if a is None or b is None else b - a
            better = None if delta is None else (delta > 0) != is_negative(check)
            out.append(Moved(s.id, s.slug, check, a, b, delta, True, False, better))
    return out


def annotate(summaries: list[RunSummary], changes: Changes | None) -> list[RunSummary]:
    """Every run marked with `changed` (None without a comparison), for the leaderboard badge."""
    if changes is None and all(s.changed is None for s in summaries):
        return summaries  # nothing to mark: no copy of every summary
    # a lazy summary stays lazy (obs.lazysummary): the mark is kept beside its bytes
    return [replace_summary(s, changed=changes.states.get(s.id) if changes is not None else None) for s in summaries]
