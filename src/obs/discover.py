"""Walk the source tree once and find runs, spec folders and campaign folders.

Discovery reads only small metadata files (spec.yaml, campaign.yaml) and asks the adapters which
folders they recognise; the runs themselves are read later, one by one, so a tree of hundreds
of runs never sits in memory at once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict, cast

from obs.adapters import ADAPTERS, LEARNING
from obs.adapters.base import Claim, RunSource
from obs.adapters.native import NATIVE_FILES
from obs.adapters.native import files_read as native_files_read
from obs.adapters.shared.ids import folder_id
from obs.adapters.side_logs import SIDE_DIRS, is_read, side_files
from obs.analysis.paired_systems import ItemFileError, parse_item_results
from obs.diagnostics import Diagnostics
from obs.fieldbounds import MAX_GROUP_FIELD, bound_fields
from obs.fields import YamlFields
from obs.layout import infer_campaigns
from obs.ledger import ARCHIVE_DIR
from obs.model import Campaign, Condition, ItemResults, MetricDecl, PairedSpec, Spec
from obs.numbers import plural
from obs.safepaths import (
    Listing,
    is_inside,
    is_obs_site,
    list_folder,
    real,
    remembered_locations,
    report_refused,
    report_unusable,
    safe_input,
    shown_name,
)
from obs.safeyaml import load_mapping
from obs.schema import CAMPAIGN_YAML, SPEC_YAML, Reading, Schema

SPEC_FILE = "spec.yaml"
CAMPAIGN_FILE = "campaign.yaml"


@dataclass
class FolderClaim:
    """For `obs check`: which adapter took which folder, and how many runs it found there."""

    folder: Path
    adapter: str
    runs: int
    notes: tuple[str, ...] = ()


@dataclass
class Discovery:
    root: Path
    runs: list[RunSource] = field(default_factory=list)
    specs: dict[str, Spec] = field(default_factory=dict)
    campaigns: dict[str, Campaign] = field(default_factory=dict)
    claims: list[FolderClaim] = field(default_factory=list)  # when `keep_claims`
    keep_claims: bool = True
    diags: Diagnostics = field(default_factory=Diagnostics)
    files: set[str] = field(default_factory=set)  # every readable file met by the walk (real paths, as text: a
    # `Path` each was ~1 KB a run at the walk's peak), until `unread` is made from it at the walk's end
    unread: list[Path] = field(default_factory=list)  # ... that no run, spec, campaign or setting reads
    learning: list[Path] = field(default_factory=list)  # agent-learning exports (obs.adapters.agent_sessions)
    hidden: list[tuple[str, tuple[Path, ...]]] = field(default_factory=list)  # read, not shown on purpose (why)

    def hidden_rel(self) -> list[str]:
        """What was read and deliberately not shown, a line each: where, why and how many files."""
        return [f"{why} ({plural(len(files), 'file')})" for why, files in self.hidden]

    def unread_rel(self) -> list[str]:
        """The files no adapter read, relative to the source root, for `obs check`, `obs build` and the site."""
        out = []
        for path in self.unread:
            try:
                out.append(shown_name(path.relative_to(real(self.root)).as_posix()))
            except ValueError:
                out.append(shown_name(str(path)))
        return out


SITE_FILES = frozenset({"obs.yaml", SPEC_FILE, CAMPAIGN_FILE, "decisions.jsonl"})


def files_read(source: RunSource, root: Path) -> set[Path]:
    """The files a run's reading uses: a native folder's own files (not every file below it), another format's
    files, and of its side folders only the side logs obs reads (obs.adapters.side_logs)."""
    own = native_files_read(source, root) if source.adapter == "native" else set(source.files)
    sides = tuple(source.path / name for name in SIDE_DIRS)
    return {f for f in own if not any(d in f.parents for d in sides)} | set(source.side)


def not_read(found: Discovery) -> list[Path]:
    """Files of the tree that nothing reads: not a run's input, not a campaign's paired file, not obs' own
    settings (obs.yaml, spec.yaml, campaign.yaml, decisions.jsonl). Listed, never dropped silently."""
    read = {os.fspath(real(f)) for source in found.runs for f in files_read(source, found.root)}
    read.update(os.fspath(real(f)) for f in found.learning)
    read.update(os.fspath(real(f)) for _, files in found.hidden for f in files)
    for source in found.runs:
        if source.base is not None:
            read.update(os.fspath(real(f)) for f in source.base.files)
    for campaign in found.campaigns.values():
        for pair in campaign.paired:
            for rel in (pair.file_a, pair.file_b):
                if rel:
                    read.add(os.fspath(real(campaign.source_dir / rel)))
    left = (f for f in found.files if f not in read and os.path.basename(f) not in SITE_FILES)
    return sorted(Path(f) for f in left)


def discover(
    root: Path, *, exclude: tuple[Path, ...] = (), preferred_metric: str | None = None, claims: bool = True
) -> Discovery:
    """Walk the tree once: specs, campaigns and the runs each folder's first willing adapter finds; with
    `claims`, which adapter took each folder (what `obs check` lists; a build does not keep them: ~0.2 KB a
    run, 20 MB at 100,000 runs, issue 32).

    Every folder is listed once (by its real location), and every symbolic link met on the way
    that leaves the tree or loops is named in a warning and never read (obs.safepaths).
    """
    root = root.resolve()
    found = Discovery(root=root, diags=Diagnostics(root=root), keep_claims=claims)
    with remembered_locations():
        _Walk(found, {real(p) for p in exclude}).folder(root, None, None)
        found.runs = infer_campaigns(
            found.runs, found.campaigns, root, found.diags, preferred_metric=preferred_metric
        )  # conditions x seeds that the layout names (obs.layout)
        found.unread = not_read(found)
    found.files = set()  # only `unread` was made from it: ~1 KB a run of paths a build held to the end (issue 32)
    return found


class _Walk:
    """One pass over the source tree, filling a `Discovery`."""

    def __init__(self, found: Discovery, excluded: set[Path]) -> None:
        self.found = found
        self.root = found.root
        self.seen = set(excluded)

    def listing(self, folder: Path) -> Listing | None:
        """The folder's entries, its refused links reported; None when the folder was listed already."""
        where = real(folder)
        if where in self.seen:
            return None
        self.seen.add(where)
        listing = list_folder(folder, self.root)
        report_refused(self.found.diags, listing.refused)
        report_unusable(self.found.diags, folder, listing)
        for child in listing.dirs:
            if child.name in NATIVE_FILES:
                self.found.diags.warning(child, "a folder, not a regular file: not read")
        if listing.unreadable:
            self.found.diags.error(
                folder,
                f"the folder cannot be listed ({listing.unreadable}); what it holds may be skipped: "
                "make it readable, then build again",
            )
        self.found.files.update(os.fspath(real(f)) for f in listing.files)
        return listing

    def folder(self, folder: Path, spec: str | None, campaign: str | None) -> None:
        listing = self.listing(folder)
        if listing is None:
            return
        if is_obs_site(folder, listing):
            self.found.diags.info(folder, "a site built by obs (its index.json says so): skipped, not read as runs")
            self.found.files.difference_update(os.fspath(real(f)) for f in listing.files)
            return
        if SPEC_FILE in listing.names:
            spec = self.spec(folder) or spec
        if CAMPAIGN_FILE in listing.names:
            campaign = self.campaign(folder) or campaign
        self.found.learning.extend(LEARNING.pick(listing.files, self.root))
        owned = self.claim(folder, spec, campaign)
        for child in self.children(folder, listing):
            if owned:
                self.links_below(child)
            else:
                self.folder(child, spec, campaign)

    def spec(self, folder: Path) -> str | None:
        parsed = read_spec(folder, self.found.diags, root=self.root)
        if parsed is not None:
            bound_fields(parsed, MAX_GROUP_FIELD, self.found.diags, folder / SPEC_FILE)
        return self.register(parsed, self.found.specs, folder / SPEC_FILE, "spec")

    def campaign(self, folder: Path) -> str | None:
        parsed = read_campaign(folder, self.found.diags, root=self.root)
        if parsed is not None:
            bound_fields(parsed, MAX_GROUP_FIELD, self.found.diags, folder / CAMPAIGN_FILE)
        return self.register(parsed, self.found.campaigns, folder / CAMPAIGN_FILE, "campaign")

    def register(self, parsed: Spec | Campaign | None, known: dict[str, Any], path: Path, what: str) -> str | None:
        """Keep a spec or campaign under its id; the runs below belong to it. An id already taken is an error."""
        if parsed is None:
            return None
        if parsed.id in known:
            first = known[parsed.id].source_dir
            message = f"{what} id '{parsed.id}' is already used by {first}; this {what} folder was ignored"
            self.found.diags.error(path, message)
            return None
        known[parsed.id] = parsed
        return parsed.id

    def claim(self, folder: Path, spec: str | None, campaign: str | None) -> bool:
        """Ask the adapters in order; True when the one that recognised the folder owns it (no descent)."""
        for adapter in ADAPTERS:
            claim = adapter.claim(folder, self.root)
            if claim is None:
                continue
            claim = self.attach_side_logs(folder, claim)
            for source in claim.runs:
                self.found.runs.append(replace(source, spec=source.spec or spec, campaign=source.campaign or campaign))
            if self.found.keep_claims:
                self.found.claims.append(FolderClaim(folder, adapter.name, len(claim.runs), claim.notes))
            self.found.hidden.extend(claim.hidden)
            self.seen.update(real(owned) for owned in claim.owned_dirs if owned != folder)
            return folder in claim.owned_dirs
        return False

    def attach_side_logs(self, folder: Path, claim: Claim) -> Claim:
        """The side logs of the one run found in this folder are that run's: the files of its side folders
        (`emergence/`), and a `generations.jsonl` or `steps.jsonl` beside its `metrics.jsonl` or run.yaml. They join
        its files (never runs of their own); the side logs obs reads are named in `RunSource.side`."""
        claim = self.side_logs_beside(folder, claim)
        here = [s for s in claim.runs if s.path == folder and s.record is None and s.part is None]
        if len(here) != 1 or len(claim.runs) != 1:
            return claim
        (source,) = claim.runs
        found: list[Path] = [
            f for f in source.files if f.parent == folder and is_read(f) and self.is_run_folder(folder)
        ]
        for name in SIDE_DIRS:
            side = folder / name
            if not side.is_dir() or side.is_symlink() or real(side) in self.seen:
                continue
            files = side_files(side, self.root)
            if not files:
                continue
            found += files
            self.seen.add(real(side))
            self.found.files.update(os.fspath(real(f)) for f in files)
        if not found:
            return claim
        known = set(source.files)
        owned = (*source.files, *(f for f in found if f not in known))
        read = [f.relative_to(folder).as_posix() for f in found if is_read(f)]
        note = f"side logs of this run: {', '.join(read)}" if read else "a side folder of this run: no file of it read"
        attached = replace(source, files=owned, side=tuple(f for f in found if is_read(f)))
        return replace(claim, runs=(attached,), notes=(*claim.notes, note))

    def is_run_folder(self, folder: Path) -> bool:
        """A folder whose run is named by its run.yaml or its `metrics.jsonl` (a side log beside it is the run's)."""
        return any(safe_input(folder / name, self.root) is not None for name in ("run.yaml", "metrics.jsonl"))

    def side_logs_beside(self, folder: Path, claim: Claim) -> Claim:
        """A log reader's runs of `generations.jsonl` / `steps.jsonl` beside the folder's `metrics.jsonl`: not runs.
        They join the metrics' run, which takes the folder's id (as it would alone)."""
        beside = [s for s in claim.runs if s.path == folder and is_read(folder / s.key) and s.record is None]
        main = [s for s in claim.runs if s not in beside]
        if not beside or len(main) != 1 or main[0].key != "metrics.jsonl" or not self.is_run_folder(folder):
            return claim
        files = (*main[0].files, *(f for s in beside for f in s.files))
        run = replace(main[0], files=files, default_id=folder_id(folder, self.root))
        return replace(claim, runs=(run,))

    def children(self, folder: Path, listing: Listing) -> list[Path]:
        """Subfolders to enter: not `__pycache__`, and at the top not `archive/` (frozen reports of `obs decide`)."""
        return [
            child
            for child in listing.dirs
            if child.name != "__pycache__" and not (folder == self.root and child.name == ARCHIVE_DIR)
        ]

    def links_below(self, folder: Path) -> None:
        """A folder an adapter owns is not walked for runs, but its refused links are still named."""
        listing = self.listing(folder)
        if listing is not None:
            for child in listing.dirs:
                self.links_below(child)


def _read(path: Path, root: Path, schema: Schema, diags: Diagnostics) -> Reading | None:
    """A spec.yaml or campaign.yaml checked against its declaration; None when it cannot be used."""
    if safe_input(path, root) is None:  # a refused link: named by discovery, not read
        return None
    doc = load_mapping(path, diags)
    return schema.read(YamlFields(doc, path, diags)) if doc is not None else None


def read_spec(folder: Path, diags: Diagnostics, *, root: Path | None = None) -> Spec | None:
    """spec.yaml of `folder`; it must lie inside `root` (by default the folder itself)."""
    f = _read(folder / SPEC_FILE, root or folder, SPEC_YAML, diags)
    if f is None:
        return None
    spec = Spec(id=f.get("id") or folder.name, source_dir=folder)
    lay_spec_yaml_values(spec, cast(SpecYamlValues, f.values))
    return spec


def read_campaign(folder: Path, diags: Diagnostics, *, root: Path | None = None) -> Campaign | None:
    """campaign.yaml of `folder` and the result files it pairs; it must lie inside `root` (by default the folder)."""
    path = folder / CAMPAIGN_FILE
    f = _read(path, root or folder, CAMPAIGN_YAML, diags)
    if f is None:
        return None
    given = cast(CampaignYamlValues, f.values)
    campaign = Campaign(
        id=f.get("id") or folder.name,
        source_dir=folder,
        conditions=[Condition(**c) for c in given.get("conditions", [])],
        evidence=_given(f, "evidence"),
        litmus=_given(f, "litmus"),
        extra=f.unknown,
    )
    lay_campaign_yaml_values(campaign, given)
    if "metrics" in given:
        _read_tiers(campaign, given["metrics"], f, diags)
    _check_conditions(campaign, f, diags)
    campaign.sample_efficiency = given.get("sample_efficiency") or None  # the declared views' own declaration
    campaign.coupling = given.get("coupling") or None
    if "paired" in given:
        campaign.paired = _read_paired(folder, given["paired"], path, f.line("paired"), diags)
    return campaign


def _read_tiers(campaign: Campaign, decls: list[MetricDecl], f: Reading, diags: Diagnostics) -> None:
    """campaign.yaml's `metrics:`, reconciled with its `primary_metric` (which names the primary when unset)."""
    campaign.metrics_from = CAMPAIGN_FILE
    campaign.metrics, said = reconcile_primary(decls, campaign.primary_metric)
    if said:
        diags.warning(f.at.path, said, f.line("metrics"))
    if campaign.primary_metric is None:
        campaign.primary_metric = next((d.name for d in campaign.metrics if d.tier == "primary"), None)


def _check_conditions(campaign: Campaign, f: Reading, diags: Diagnostics) -> None:
    """`expected_order` and `baseline_condition` name declared conditions: an unknown name is said and left out."""
    path = f.at.path
    names = {c.name for c in campaign.conditions}
    unknown = [n for n in campaign.expected_order if names and n not in names]
    if unknown:
        diags.warning(
            path,
            f"expected_order names {', '.join(repr(n) for n in unknown)}, not among the conditions "
            f"({', '.join(sorted(names))}); those are left out of the order",
            f.line("expected_order"),
        )
        campaign.expected_order = [n for n in campaign.expected_order if n not in unknown]
    if len(campaign.expected_order) == 1:
        diags.warning(path, "expected_order needs two conditions or more; not checked", f.line("expected_order"))
    if campaign.baseline_condition and names and campaign.baseline_condition not in names:
        diags.warning(
            path,
            f"baseline_condition '{campaign.baseline_condition}' is not one of the conditions",
            f.line("baseline_condition"),
        )


# values of spec.yaml: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
class SpecYamlValues(TypedDict, total=False):
    """The valid values a spec.yaml gave (`Reading.values` of its declaration), typed."""

    id: str
    title: str
    question: str
    contract: dict[str, Any]
    baseline: str
    primary_metric: str
    min_effect: float


def lay_spec_yaml_values(spec: Spec, given: SpecYamlValues) -> None:
    """Each value a spec.yaml gave replaces the Spec's.

    Set by the reader itself: id.
    """
    spec.title = given.get("title", spec.title)
    spec.question = given.get("question", spec.question)
    spec.contract = given.get("contract", spec.contract)
    spec.baseline = given.get("baseline", spec.baseline)
    spec.primary_metric = given.get("primary_metric", spec.primary_metric)
    spec.min_effect = given.get("min_effect", spec.min_effect)


# end of the values of spec.yaml


# values of campaign.yaml: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
class CampaignYamlValues(TypedDict, total=False):
    """The valid values a campaign.yaml gave (`Reading.values` of its declaration), typed."""

    id: str
    title: str
    question: str
    conditions: list[dict[str, str]]
    baseline_condition: str
    primary_metric: str
    higher_is_better: bool
    seeds: list[int]
    final_window: int
    alpha: float
    evidence: Reading
    min_effect: float
    litmus: Reading
    metrics: list[MetricDecl]
    expected_order: list[str]
    paired: list[Any]
    sample_efficiency: dict[str, Any]
    coupling: list[dict[str, str]]


def lay_campaign_yaml_values(campaign: Campaign, given: CampaignYamlValues) -> None:
    """Each value a campaign.yaml gave replaces the Campaign's.

    Set by the reader itself: id, conditions, evidence, litmus, metrics, paired, sample_efficiency, coupling.
    """
    campaign.title = given.get("title", campaign.title)
    campaign.question = given.get("question", campaign.question)
    campaign.baseline_condition = given.get("baseline_condition", campaign.baseline_condition)
    campaign.primary_metric = given.get("primary_metric", campaign.primary_metric)
    campaign.higher_is_better = given.get("higher_is_better", campaign.higher_is_better)
    campaign.seeds = given.get("seeds", campaign.seeds)
    campaign.final_window = given.get("final_window", campaign.final_window)
    campaign.alpha = given.get("alpha", campaign.alpha)
    campaign.min_effect = given.get("min_effect", campaign.min_effect)
    campaign.expected_order = given.get("expected_order", campaign.expected_order)


# end of the values of campaign.yaml


def reconcile_primary(decls: list[MetricDecl], primary_metric: str | None) -> tuple[list[MetricDecl], str | None]:
    """The tiers with `primary_metric` as their primary: a declared `primary_metric` wins over a different primary
    tier (read as secondary, and said), and is added as the primary when `metrics:` does not list it."""
    if not primary_metric:
        return decls, None
    said = None
    out: list[MetricDecl] = []
    for d in decls:
        if d.tier == "primary" and d.name != primary_metric:
            said = (
                f"metrics: '{d.name}' is marked primary but primary_metric is '{primary_metric}'; "
                f"'{d.name}' was read as secondary"
            )
            d = replace(d, tier="secondary")
        elif d.name == primary_metric and d.tier != "primary":
            said = f"metrics: '{d.name}' is the primary_metric, so it is the primary tier, not {d.tier}"
            d = replace(d, tier="primary")
        out.append(d)
    if not any(d.name == primary_metric for d in out):
        out.insert(0, MetricDecl(primary_metric, "primary"))
    out.sort(key=lambda d: d.tier != "primary")
    return out, said


def _given(f: Reading, name: str) -> dict[str, float]:
    """The entries of a nested mapping that were given (no defaults: an absent minimum is not checked)."""
    nested = f.values.get(name)
    return {**nested.values, **nested.unknown} if isinstance(nested, Reading) else {}


MAX_ITEM_FILE_BYTES = 64 * 1024 * 1024


def _read_paired(folder: Path, raw: list[Any], path: Path, line: int | None, diags: Diagnostics) -> list[PairedSpec]:
    """The `paired:` entries of campaign.yaml: two per-item result files (inside the folder) per entry."""
    specs = [_paired_entry(folder, f"paired[{i}]", entry, path, line, diags) for i, entry in enumerate(raw)]
    return [s for s in specs if s is not None]


_Side = tuple[str, str, ItemResults | None, list[str], dict[str, Any]]  # file, label, outcomes, problems, config


def _paired_entry(
    folder: Path, where: str, entry: Any, path: Path, line: int | None, diags: Diagnostics
) -> PairedSpec | None:
    """One comparison `{a, b, name, claim_pp, ...}`; a bad entry is a warning and is skipped."""
    if not isinstance(entry, dict) or "a" not in entry or "b" not in entry:
        diags.warning(path, f"{where} should be a mapping with 'a' and 'b' (result files); skipped", line)
        return None
    keys = {k: entry.get(k) for k in ("id_key", "correct_key", "items_key", "pair_by")}
    sides = []
    for side in ("a", "b"):
        read = _paired_side(folder, entry[side], keys, f"{where}.{side}", path, line, diags)
        if read is None:
            return None
        sides.append(read)
    (file_a, label_a, a, prob_a, config_a), (file_b, label_b, b, prob_b, config_b) = sides
    if keys.get("pair_by") == "position" and a is not None and b is not None:
        n_a, n_b = len(a.outcomes) + a.skipped, len(b.outcomes) + b.skipped
        if n_a != n_b:
            message = (
                f"{where}: pair_by: position needs two files of the same length; '{file_a}' has {n_a} records "
                f"and '{file_b}' {n_b}: not compared"
            )
            diags.error(path, message, line)
            a = b = None
            prob_a = [*prob_a, message]
    elif keys.get("pair_by") not in (None, "id"):
        diags.warning(
            path, f"{where}.pair_by should be 'id' or 'position', got {keys['pair_by']!r}; paired by id", line
        )
    claim = entry.get("claim_pp")
    if claim is not None and (not isinstance(claim, int | float) or isinstance(claim, bool) or claim < 0):
        diags.warning(path, f"{where}.claim_pp should be a number of percentage points ≥ 0; ignored", line)
        claim = None
    name = entry.get("name")
    varies = entry.get("varies", [])
    if isinstance(varies, str):
        varies = [varies]
    if not isinstance(varies, list) or not all(isinstance(v, str) for v in varies):
        diags.warning(
            path, f"{where}.varies should be a list of setting names (the ones meant to differ); ignored", line
        )
        varies = []
    return PairedSpec(
        name=str(name) if name else f"{label_a} vs {label_b}",
        label_a=label_a,
        label_b=label_b,
        file_a=file_a,
        file_b=file_b,
        claim_pp=None if claim is None else float(claim),
        a=a,
        b=b,
        problems=tuple(prob_a + prob_b),
        config_a=config_a,
        config_b=config_b,
        varies=tuple(varies),
    )


def _paired_side(
    folder: Path, value: Any, keys: dict[str, Any], where: str, path: Path, line: int | None, diags: Diagnostics
) -> _Side | None:
    """`a:` or `b:`: a path, or `{file, label, id_key, correct_key, items_key}` (its keys win over the entry's)."""
    options = dict(keys)
    config: dict[str, Any] = {}
    if isinstance(value, dict):
        rel, label = value.get("file"), value.get("label")
        options.update({k: value[k] for k in options if k in value})
        given = value.get("config")
        if isinstance(given, dict):
            config = {str(k): v for k, v in given.items()}
        elif given is not None:
            diags.warning(
                path, f"{where}.config should be a mapping of settings (selector, K, temperature, ...); ignored", line
            )
    else:
        rel, label = value, None
    if not isinstance(rel, str) or not rel:
        diags.warning(path, f"{where} should be a file path or a mapping with 'file'; skipped", line)
        return None
    results, problems = _read_item_file(folder, rel, options, where, path, line, diags)
    return rel, str(label) if label else Path(rel).stem, results, problems, config


def _read_item_file(
    folder: Path,
    rel: str,
    options: dict[str, object],
    where: str,
    yaml_path: Path,
    line: int | None,
    diags: Diagnostics,
) -> tuple[ItemResults | None, list[str]]:
    """Read and parse one per-item result file; every problem is a diagnostic and a page note."""
    target = folder / rel
    if Path(rel).is_absolute() or not is_inside(target, folder):
        message = f"{where}: '{rel}' is outside the campaign folder; not read"
        diags.error(yaml_path, message, line)
        return None, [message]
    if not target.is_file():
        message = f"{where}: '{rel}' does not exist"
        diags.error(yaml_path, message, line)
        return None, [message]
    try:
        size = target.stat().st_size
        if size > MAX_ITEM_FILE_BYTES:
            message = f"{where}: '{rel}' is {size} bytes; obs reads result files up to {MAX_ITEM_FILE_BYTES} bytes"
            diags.error(yaml_path, message, line)
            return None, [message]
        data = target.read_bytes()
    except OSError as exc:
        message = f"{where}: cannot read '{rel}': {exc.strerror}"
        diags.error(yaml_path, message, line)
        return None, [message]
    text_options = {k: v for k, v in options.items() if isinstance(v, str)}
    try:
        results = parse_item_results(
            data,
            id_key=text_options.get("id_key"),
            correct_key=text_options.get("correct_key"),
            items_key=text_options.get("items_key"),
            by_position=text_options.get("pair_by") == "position",
        )
    except ItemFileError as exc:
        message = f"{where}: '{rel}': {exc}"
        diags.error(target, str(exc))
        return None, [message]
    for problem in results.problems:
        diags.warning(target, problem)
    return results, [f"{rel}: {p}" for p in results.problems]
