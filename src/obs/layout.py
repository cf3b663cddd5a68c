"""Campaigns that a tree's own layout already describes: conditions x seeds without a campaign.yaml.

Researchers rarely write a campaign.yaml before they run one: a campaign runner leaves
`runs/<condition>_s<seed>/metrics.jsonl`, its records carrying `condition` and `seed`, or W&B runs
whose config holds them. Without this module such a tree builds as unrelated runs. Each run's place
is read cheaply at discovery (no log is read whole), from, in this order of precedence:

1. its run.yaml (`condition:`, `seed:`),
2. the first record of its log (`condition`, `seed` fields),
3. a W&B run's config (`condition`, `seed` keys; the group where a config names it),
4. a W&B run's own record in its binary `run-<id>.wandb` (`wandb.init(group=..., tags=[...])`, read with the
   SDK's reader, `adapters/wandb_binary.run_info`): a tag `condition:<name>` (or `condition=<name>`), else the
   run's group, is its condition; a tag `seed:<n>` (`seed=<n>`, `seed-<n>`, `seed_<n>`) its seed. Any other tag
   says nothing of a place (`baseline`, `debug`, `v2` are not conditions),
5. its folder's name, `<condition>_s<seed>` (also `-s`, `_seed`, `-seed-`): with the condition names
   of a campaign.yaml, the longest declared name that the folder starts with.

Run folders side by side (the folder above `runs/` when they sit in one), in no spec and no campaign
and not ablation arms (`arm:`), whose places name at least two conditions form a campaign; a notice
says how it was inferred and which campaign.yaml makes it explicit. Runs below a campaign.yaml get
their condition and seed the same way, so such a campaign needs no run.yaml per run. Nothing is
guessed beyond what the names say: an inferred campaign has no baseline condition (nothing is tested
until one is written) and its primary metric is named in the notice with the rule that chose it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from obs.adapters.base import RunSource
from obs.analysis.headline import is_bookkeeping, metric_class
from obs.diagnostics import Diagnostics
from obs.model import Campaign, Condition
from obs.safepaths import real, safe_input, shown_name
from obs.safeyaml import YamlError, peek_yaml
from obs.sanitize import clean_text

# `<condition>_s<seed>`: the last `_s<digits>` (or -s, _seed, -seed-, .s) of the name is the seed
SEED_SUFFIX = re.compile(r"^(?P<condition>.+?)[_.-](?:s|seed)[_-]?(?P<seed>\d{1,9})$", re.IGNORECASE)
HEAD_BYTES = 64 * 1024  # of a log, for its first record
MIN_CONDITIONS = 2  # an inferred campaign compares conditions: one condition's seeds are replicates (recipes.py)
IDENTIFIERS = frozenset({"condition", "seed"})
CONDITION_TAG = re.compile(r"^condition[:=](?P<value>.+)$", re.IGNORECASE)
SEED_TAG = re.compile(r"^seed[:=_-](?P<value>\d{1,18})$", re.IGNORECASE)


@dataclass(frozen=True)
class Place:
    """A run's condition and seed, and where each was read (for the notice and the mismatch warning)."""

    condition: str | None = None
    seed: int | None = None
    condition_from: str = ""
    seed_from: str = ""
    campaign: str | None = None  # a run.yaml's own `campaign:`: such a run is never inferred into another
    arm: bool = False  # a run.yaml's `arm:`: an ablation arm of a spec (analysis/arms.py), not a condition
    metrics: tuple[str, ...] = ()  # numeric fields of the first record (a primary metric for the campaign)


def parse_folder_name(name: str, declared: tuple[str, ...] = ()) -> tuple[str, int] | None:
    """(condition, seed) from `<condition>_s<seed>`; with declared conditions, the longest one the name
    starts with (`lr_1e-4_s1` with conditions `lr` and `lr_1e-4` is `lr_1e-4`, seed 1)."""
    for cond in sorted(declared, key=len, reverse=True):
        rest = name[len(cond) :] if name.startswith(cond) else None
        m = re.fullmatch(r"[_.-](?:s|seed)[_-]?(\d{1,9})", rest or "", re.IGNORECASE)
        if m:
            return cond, int(m.group(1))
    if declared:
        return None
    m = SEED_SUFFIX.match(name)
    return (m.group("condition"), int(m.group("seed"))) if m else None


MAX_SEED_DIGITS = 18  # a seed is a machine integer; a longer number is not one (and int() of 4,300+ digits raises)


def _seed(value: Any) -> int | None:
    """A record's or a config's seed as an integer; None for anything that is not a plausible seed."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) < 10**MAX_SEED_DIGITS else None
    if isinstance(value, float) and value.is_integer() and abs(value) < 10**MAX_SEED_DIGITS:
        return int(value)
    if (
        isinstance(value, str)
        and value.strip().isascii()
        and value.strip().isdigit()
        and len(value.strip()) <= MAX_SEED_DIGITS
    ):
        return int(value.strip())
    return None


def _condition(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return clean_text(value.strip())
    return None


def _run_yaml(source: RunSource, root: Path) -> dict[str, Any]:
    path = safe_input(source.path / "run.yaml", root)
    if path is None:
        return {}
    try:
        data = peek_yaml(path)
    except (YamlError, OSError, UnicodeDecodeError):
        return {}
    except Exception:  # a file libyaml refuses: the run's own reading names it
        return {}
    return data if isinstance(data, dict) else {}


def _log_of(source: RunSource) -> Path | None:
    """The log whose first record may carry the run's condition and seed."""
    for f in source.files:
        if f.parent == source.path and f.name == "metrics.jsonl":
            return f
    if source.adapter == "generic_jsonl" and source.key.endswith((".jsonl", ".ndjson")) and source.record is None:
        return source.path / source.key
    if source.base is not None:
        return _log_of(source.base)
    return None


def first_record(path: Path) -> dict[str, Any]:
    """The first JSON object of a JSON-lines file, from its first 64 KB ({} when there is none)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return {}
    for line in head.splitlines():
        if line.strip():
            try:
                value = orjson.loads(line)  # bounded nesting: a hostile line is an error, not a RecursionError
            except (ValueError, RecursionError):
                return {}
            return value if isinstance(value, dict) else {}
    return {}


def _wandb_config(source: RunSource) -> dict[str, Any]:
    config = next((f for f in source.files if f.name == "config.yaml"), None)
    if config is None:
        return {}
    try:
        data = peek_yaml(config)
    except Exception:  # the W&B reader names a bad config when the run is read
        return {}
    if not isinstance(data, dict):
        return {}
    unwrapped = {k: (v["value"] if isinstance(v, dict) and "value" in v else v) for k, v in data.items()}
    return unwrapped


def _wandb_summary(source: RunSource) -> dict[str, Any]:
    """A W&B run's `wandb-summary.json` (its first 64 KB, as a log's first record is read), else {}."""
    summary = next((f for f in source.files if f.name == "wandb-summary.json"), None)
    if summary is None:
        return {}
    try:
        with open(summary, "rb") as fh:
            value = orjson.loads(fh.read(HEAD_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}  # larger or damaged: the W&B reader names it when the run is read
    return value if isinstance(value, dict) else {}


def _wandb_record_place(source: RunSource) -> Place:
    """A W&B run's condition and seed from the run record of its binary file: a `condition:` tag, else the group;
    a `seed:` tag. Nothing when the run has no binary file or the SDK (the extra obs[wandb]) is not installed."""
    binary = next((f for f in source.files if f.suffix == ".wandb"), None)
    if binary is None:
        return Place()
    from obs.adapters.wandb_binary import ReaderMissing, run_info  # the SDK: only for a run that needs it

    try:
        info = run_info(binary)
    except ReaderMissing:
        return Place()
    if info is None:
        return Place()
    cond = cond_from = ""
    for tag in info.tags:
        m = CONDITION_TAG.match(tag.strip())
        if m and _condition(m.group("value")):
            cond, cond_from = _condition(m.group("value")) or "", "W&B tags (condition:)"
            break
    if not cond and _condition(info.group):
        cond, cond_from = _condition(info.group) or "", "W&B group"
    seeds = [_seed(m.group("value")) for m in (SEED_TAG.match(t.strip()) for t in info.tags) if m]
    seed = next((s for s in seeds if s is not None), None)
    return Place(cond or None, seed, cond_from, "W&B tags (seed:)" if seed is not None else "")


class _Pick:
    """The condition and seed as sources are offered in precedence order: the first source that has one wins."""

    def __init__(self) -> None:
        self.condition: str | None = None
        self.seed: int | None = None
        self.condition_from = ""
        self.seed_from = ""

    def offer(self, condition: str | None, seed: int | None, where: str, seed_where: str = "") -> None:
        if self.condition is None and condition:
            self.condition, self.condition_from = condition, where
        if self.seed is None and seed is not None:
            self.seed, self.seed_from = seed, seed_where or where

    @property
    def complete(self) -> bool:
        return self.condition is not None and self.seed is not None


def place_of(source: RunSource, root: Path, declared: tuple[str, ...] = ()) -> Place:
    """Where a run sits in a campaign, by the precedence of the module docstring."""
    pick = _Pick()
    doc = _run_yaml(source, root)
    pick.offer(_condition(doc.get("condition")), _seed(doc.get("seed")), "run.yaml")
    log = _log_of(source)
    record = first_record(log) if log is not None else {}
    pick.offer(_condition(record.get("condition")), _seed(record.get("seed")), "records")
    if source.adapter == "wandb":
        _offer_wandb(pick, source)
    parsed = parse_folder_name(shown_name(source.path.name), declared)
    if parsed is not None:
        pick.offer(parsed[0], parsed[1], "folder name")
    if not record and source.adapter == "wandb":  # no log: the summary's final values name what the run logged
        record = {k: v for k, v in _wandb_summary(source).items() if not k.startswith("_")}  # _step, _runtime
    metrics = tuple(
        k
        for k, v in record.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and k not in IDENTIFIERS and not is_bookkeeping(k)
    )
    own = _condition(doc.get("campaign"))
    return Place(
        pick.condition,
        pick.seed,
        pick.condition_from,
        pick.seed_from,
        campaign=own,
        metrics=metrics,
        arm=doc.get("arm") is not None,
    )


def _offer_wandb(pick: _Pick, source: RunSource) -> None:
    """A W&B run's config (condition, group, seed), then its run record's group and tags (the .wandb file)."""
    config = _wandb_config(source)
    for key in ("condition", "group"):
        pick.offer(_condition(config.get(key)), None, f"W&B config ({key})")
    pick.offer(None, _seed(config.get("seed")), "", "W&B config (seed)")
    if not pick.complete:
        found = _wandb_record_place(source)
        pick.offer(found.condition, found.seed, found.condition_from, found.seed_from)


def _campaign_folder(run_folder: Path) -> Path:
    """The folder a campaign of run folders is named after: the one above `runs/`, else their parent."""
    parent = run_folder.parent
    return parent.parent if parent.name.lower() == "runs" and parent.parent != parent else parent


def _campaign_id(folder: Path, root: Path) -> str:
    try:
        rel = real(folder).relative_to(real(root)).as_posix()
    except ValueError:
        rel = folder.name
    return shown_name(rel if rel not in ("", ".") else root.name)


def _primary(members: list[Place], preferred: str | None) -> tuple[str | None, str]:
    """A metric every member's first record has: obs.yaml's primary metric when they do, else the first by the
    headline rule's classes (obs.analysis.headline), then by name."""
    shared = set(members[0].metrics)
    for p in members[1:]:
        shared &= set(p.metrics)
    if not shared:
        return None, "no numeric field is in the first record of every run"
    if preferred and preferred in shared:
        return preferred, "obs.yaml's primary_metric"
    ranked = sorted(shared, key=lambda k: (metric_class(k) if metric_class(k) is not None else 99, k))
    return ranked[0], "the headline rule's first choice among the fields every run logs"


def _how(places: list[Place]) -> str:
    sources = sorted({p.condition_from for p in places} | {p.seed_from for p in places})
    words = {
        "folder name": "folder names <condition>_s<seed>",
        "records": "the records' condition and seed fields",
        "W&B group": "the W&B runs' group (wandb.init(group=...), from their run-*.wandb files)",
        "W&B tags (condition:)": "the W&B runs' tags condition:<name> (from their run-*.wandb files)",
        "W&B tags (seed:)": "the W&B runs' tags seed:<n> (from their run-*.wandb files)",
    }
    return ", ".join(words.get(s, s) for s in sources)


def infer_campaigns(
    runs: list[RunSource],
    campaigns: dict[str, Campaign],
    root: Path,
    diags: Diagnostics,
    *,
    preferred_metric: str | None = None,
) -> list[RunSource]:
    """The runs with their condition and seed as found; new campaigns added to `campaigns` (a notice each)."""
    out: list[RunSource] = []
    groups: dict[Path, list[tuple[int, Place]]] = defaultdict(list)
    for source in runs:
        campaign = campaigns.get(source.campaign or "")
        declared = tuple(c.name for c in campaign.conditions) if campaign else ()
        place = place_of(source, root, declared)
        if campaign is not None:  # below a campaign.yaml: its runs need no run.yaml to say where they sit
            _check_agreement(source, place, diags)
            out.append(replace(source, condition=place.condition, seed=place.seed))
            continue
        out.append(source)  # a run in no campaign keeps what its own files say
        if place.campaign is None and place.condition is not None and source.spec is None and not place.arm:
            groups[_campaign_folder(source.path)].append((len(out) - 1, place))
    for folder, members in sorted(groups.items()):
        conditions = sorted({p.condition for _, p in members if p.condition})
        if len(conditions) < MIN_CONDITIONS:
            continue
        if all(p.condition_from == "run.yaml" for _, p in members):
            continue  # run.yaml files that name conditions and no campaign: as they were written
        ident = _campaign_id(folder, root)
        if ident in campaigns:
            diags.info(folder, f"runs here look like a campaign, but the campaign id '{ident}' is taken: not formed")
            continue
        places = [p for _, p in members]
        metric, why = _primary(places, preferred_metric)
        seeds = sorted({p.seed for p in places if p.seed is not None})
        campaign = Campaign(
            id=ident,
            source_dir=folder,
            conditions=[Condition(name=c) for c in conditions],
            primary_metric=metric,
            seeds=seeds,
        )
        campaign.inferred = _notice(campaign, places, metric, why, folder, root)
        campaigns[ident] = campaign
        diags.info(folder, campaign.inferred)
        for i, place in members:
            _check_agreement(out[i], place, diags)
            out[i] = replace(out[i], campaign=ident, condition=place.condition, seed=place.seed)
    return out


def _notice(campaign: Campaign, places: list[Place], metric: str | None, why: str, folder: Path, root: Path) -> str:
    """What the campaign page and the build say: how it was formed and the campaign.yaml that makes it explicit."""
    n_cond, n_seed = len(campaign.conditions), len(campaign.seeds)
    where = _campaign_id(folder, root) if folder != root else "the source folder"
    names = ", ".join(c.name for c in campaign.conditions)
    metric_text = f"primary metric {metric} ({why})" if metric else f"no primary metric ({why})"
    yaml_path = "campaign.yaml" if folder == root else f"{where}/campaign.yaml"
    conds = ", ".join(c.name for c in campaign.conditions[:4]) + (", ..." if n_cond > 4 else "")
    primary = f"primary_metric: {metric}" if metric else "primary_metric: <a metric>"
    return (
        f"campaign '{campaign.id}' inferred from {len(places)} runs ({_how(places)}): {n_cond} conditions "
        f"({names}) x {n_seed} seeds, {metric_text}; no baseline condition, so no condition is tested. "
        f"To make it explicit, write {yaml_path} with id: {campaign.id}, conditions: [{conds}], "
        f"baseline_condition: <one of them>, {primary}"
    )


def _check_agreement(source: RunSource, place: Place, diags: Diagnostics) -> None:
    """A folder name that says another condition or seed than the records: the records win, said once."""
    parsed = parse_folder_name(shown_name(source.path.name))
    if parsed is None or place.condition_from != "records":
        return
    cond, seed = parsed
    if place.condition != cond:
        diags.info(
            source.path,
            f"the folder name says condition '{cond}', its records '{place.condition}': the records' is used",
        )
    if place.seed_from == "records" and place.seed != seed:
        diags.warning(source.path, f"the folder name says seed {seed}, its records {place.seed}: the records' is used")
