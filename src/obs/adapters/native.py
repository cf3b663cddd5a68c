"""The native format: a folder with `run.yaml` and the files of docs/contract.md.

This module reads native files only. Which other format's files a run.yaml is laid over, how that
format reads them, and which reader takes a log named by `metrics_file:` are the registry's call
(`obs.adapters`), handed to `NativeAdapter` when the registry makes it, so this module imports no
other adapter.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, TypedDict, cast

from obs.adapters.base import Claim, Holds, LoadContext, RunSource, list_files
from obs.adapters.shared.ids import folder_id, new_run
from obs.adapters.shared.json_docs import read_json_object
from obs.adapters.shared.probe_cases import IMAGE_SUFFIXES, checked_render
from obs.adapters.shared.probe_collector import ProbeCollector
from obs.adapters.shared.text_files import bounded_markdown, read_text_file
from obs.diagnostics import Diagnostics
from obs.fast_metrics import FAST_PATH_MIN_BYTES, read_metrics_fast
from obs.fields import YamlFields
from obs.jsonl import iter_jsonl
from obs.jsontypes import BOOL, NUMBER, TEXT, Records, TypedReader
from obs.model import Decision, Gate, GateAsset, GateCheck, Metrics, Probe, Run
from obs.probetable import table_of
from obs.safepaths import is_inside, refusal, safe_input
from obs.safeyaml import YamlDoc, load_mapping, peek_yaml
from obs.schema import RUN_YAML, Reading
from obs.series_builder import SeriesBuilder

RUN_FILE = "run.yaml"


class LogReader(Protocol):
    """Reads a log named by `metrics_file:` into a run (the registry passes the generic reader)."""

    def __call__(
        self,
        run: Run,
        path: Path,
        diags: Diagnostics,
        *,
        step_key: str | None,
        root: Path,
        same_step: str = "mean",
        restarts: str = "last",
    ) -> None: ...


def claim_folder(folder: Path, root: Path) -> Claim | None:
    """A folder holding run.yaml is one native run and owns its subfolders (renders/, ...).

    A run.yaml that is a link out of the tree (or a loop) still marks the folder as a run's, so no
    other format reads it instead: the folder is taken, with no run (discovery names the link).
    """
    if safe_input(folder / RUN_FILE, root) is None:
        if refusal(folder / RUN_FILE, root) is None:
            if not os.path.lexists(folder / RUN_FILE):
                return None
            # a FIFO, device, folder or dangling link named run.yaml (discovery names it): never read, and
            # the folder is not taken by another format either (its logs are this unreadable run's)
            return Claim(runs=(), owned_dirs=(folder,), notes=("run.yaml is not a regular file: folder not read",))
        return Claim(runs=(), owned_dirs=(folder,), notes=("run.yaml is a refused link: folder not read",))
    files = list_files(folder, root)
    source = RunSource(adapter="native", path=folder, files=files, default_id=folder_id(folder, root))
    return Claim(runs=(source,), owned_dirs=(folder,))


class BaseFinder(Protocol):
    """The other format's run beside a run.yaml, if there is one (the registry's `overlaid_source`)."""

    def __call__(self, source: RunSource, root: Path) -> RunSource | None: ...


class BaseLoader(Protocol):
    """Loads the run of another format's files (the registry: that format's `load`)."""

    def __call__(self, source: RunSource, ctx: LoadContext) -> Run: ...


class NativeAdapter:
    """A folder with run.yaml: native files alone, or run.yaml laid over another format's files.

    The registry hands it the three things that need the other formats: `find_base` (whose files lie
    beside this run.yaml), `load_base` (read them) and `read_log` (a log named by `metrics_file:`).
    """

    name = "native"
    holds = Holds("run folders", "run.yaml", records="metrics.jsonl lines")  # every section

    def __init__(self, find_base: BaseFinder, load_base: BaseLoader, read_log: LogReader) -> None:
        self.find_base = find_base
        self.load_base = load_base
        self.read_log = read_log

    def claim(self, folder: Path, root: Path) -> Claim | None:
        found = claim_folder(folder, root)
        if found is None or not found.runs:  # no run.yaml, or one that is a refused link
            return found
        (source,) = found.runs
        base = self.find_base(source, root)
        if base is None:
            return found
        note = f"run.yaml overlaid on {base.adapter} files"
        return Claim(runs=(replace(source, base=base),), owned_dirs=found.owned_dirs, notes=(note,))

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        if source.base is None:
            run = new_run(source, ctx)
        else:
            base = source.base
            run = self.load_base(replace(base, default_id=source.default_id), ctx)
            run.adapter = f"native+{base.adapter}"
            run.spec = source.spec or run.spec
            run.campaign = source.campaign or run.campaign
        read_native_files(run, source, ctx, self.read_log)
        return run


def apply_run_yaml(run: Run, doc: YamlDoc, path: Path, diags: Diagnostics) -> Reading:
    """Lay a run.yaml over `run` (a new native run, or what another format read): what it gives wins.

    A field that is absent, empty or wrong (a warning on its line) leaves the run's value; unknown
    keys are kept under "other fields". Returns the reading, for the fields that are not run
    attributes (`step_key`, `metrics_file`).
    """
    reading = RUN_YAML.read(YamlFields(doc, path, diags))
    lay_run_yaml_values(run, cast(RunYamlValues, reading.values))
    if "decision" in doc.data:  # written, even empty or wrong: it replaces the run's decision
        nested = reading.values.get("decision")
        run.decision = _decision(nested) if nested is not None and doc.data["decision"] else None
    run.other_fields.update(reading.unknown)
    return reading


# values of run.yaml: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
class RunYamlValues(TypedDict, total=False):
    """The valid values a run.yaml gave (`Reading.values` of its declaration), typed."""

    id: str
    title: str
    spec: str
    campaign: str
    revision: str
    date: str
    status: str
    baseline: str
    primary_axis: str
    target_failure_class: str
    primary_metric: str
    hypothesis: str
    success_criteria: str
    held_constant: list[str]
    model: dict[str, Any]
    config: dict[str, Any]
    contract: dict[str, Any]
    data: dict[str, Any]
    provenance: dict[str, Any]
    condition: str
    seed: int
    arm: str
    tags: list[str]
    lessons: str
    decision: Reading


def lay_run_yaml_values(run: Run, given: RunYamlValues) -> None:
    """Each value a run.yaml gave replaces the Run's (an empty one, `""`, `[]` or `{}`, leaves it).

    Set by the reader itself: decision.
    """
    kept = cast(RunYamlValues, {k: v for k, v in given.items() if v not in ("", [], {})})
    run.id = kept.get("id", run.id)
    run.title = kept.get("title", run.title)
    run.spec = kept.get("spec", run.spec)
    run.campaign = kept.get("campaign", run.campaign)
    run.revision = kept.get("revision", run.revision)
    run.date = kept.get("date", run.date)
    run.status = kept.get("status", run.status)
    run.baseline = kept.get("baseline", run.baseline)
    run.primary_axis = kept.get("primary_axis", run.primary_axis)
    run.target_failure_class = kept.get("target_failure_class", run.target_failure_class)
    run.primary_metric = kept.get("primary_metric", run.primary_metric)
    run.hypothesis = kept.get("hypothesis", run.hypothesis)
    run.success_criteria = kept.get("success_criteria", run.success_criteria)
    run.held_constant = kept.get("held_constant", run.held_constant)
    run.model = kept.get("model", run.model)
    run.config = kept.get("config", run.config)
    run.contract = kept.get("contract", run.contract)
    run.data = kept.get("data", run.data)
    run.provenance = kept.get("provenance", run.provenance)
    run.condition = kept.get("condition", run.condition)
    run.seed = kept.get("seed", run.seed)
    run.arm = kept.get("arm", run.arm)
    run.tags = kept.get("tags", run.tags)
    run.lessons = kept.get("lessons", run.lessons)


# end of the values of run.yaml


def _decision(reading: Reading) -> Decision:
    decision = Decision()
    lay_decision_values(decision, cast(DecisionValues, reading.values))
    return decision


# values of decision: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
class DecisionValues(TypedDict, total=False):
    """The valid values run.yaml's `decision:` gave (`Reading.values` of its declaration), typed."""

    verdict: str
    rationale: str
    next: str
    by: str
    date: str


def lay_decision_values(decision: Decision, given: DecisionValues) -> None:
    """Each value run.yaml's `decision:` gave replaces the Decision's."""
    decision.verdict = given.get("verdict", decision.verdict)
    decision.rationale = given.get("rationale", decision.rationale)
    decision.next = given.get("next", decision.next)
    decision.by = given.get("by", decision.by)
    decision.date = given.get("date", decision.date)


# end of the values of decision


MAX_RUN_YAML_SNIFF = 1 << 20
PROBE_BATCH = 4096  # probe records read before they become columns: bounded memory for a million-case probe
NATIVE_FILES = frozenset(
    {RUN_FILE, "metrics.jsonl", "probe.jsonl", "probe_repaired.jsonl", "gate.json", "notes.md", "training_plan.json"}
)


def has_own_metrics(folder: Path, root: Path) -> bool:
    """metrics.jsonl, or a run.yaml naming a metrics_file: the generic log reader is then not asked."""
    if safe_input(folder / "metrics.jsonl", root) is not None:
        return True
    run_yaml = safe_input(folder / RUN_FILE, root)
    try:
        return run_yaml is not None and b"metrics_file" in run_yaml.read_bytes()[:MAX_RUN_YAML_SNIFF]
    except OSError:
        return False


def files_read(source: RunSource, root: Path) -> set[Path]:
    """The files of a native run folder that this format reads: its own files at the top of the folder, the log
    run.yaml names (`metrics_file:`) and images (renders a probe or gate.json points at); `obs check` and the
    index list the rest as not read, never as read."""
    folder = source.path
    read = {f for f in source.files if (f.parent == folder and f.name in NATIVE_FILES)}
    read.update(f for f in source.files if f.suffix.lower() in IMAGE_SUFFIXES)
    run_yaml = safe_input(folder / RUN_FILE, root)
    if run_yaml is not None:
        try:
            doc = peek_yaml(run_yaml)
        except Exception:  # the run's own reading names a run.yaml that cannot be read
            doc = None
        named = doc.get("metrics_file") if isinstance(doc, dict) else None
        if isinstance(named, str) and named:
            read.update(f for f in source.files if f == folder / named)
    return read


def only_native_files(files: Iterable[Path]) -> bool:
    """Nothing but native files and renders: no other format can be overlaid (the common case, cheap to see)."""
    return all(p.name in NATIVE_FILES or p.suffix.lower() in IMAGE_SUFFIXES for p in files)


def read_native_files(run: Run, source: RunSource, ctx: LoadContext, read_log: LogReader) -> None:
    """run.yaml over `run` (its fields win), then metrics, probes, gate and notes.

    `read_log` reads a log that run.yaml names with `metrics_file:` (the generic reader, passed in by
    the registry, which is the one module that knows every format).
    """
    folder, root, diags = source.path, ctx.root, ctx.diags
    run_yaml = safe_input(folder / RUN_FILE, root)
    doc = load_mapping(run_yaml, diags, "run fields") if run_yaml is not None else None
    reading = apply_run_yaml(run, doc, folder / RUN_FILE, diags) if doc is not None else None
    read_metrics(run, folder, reading, ctx, read_log)
    for name, attr in (("probe.jsonl", "probe"), ("probe_repaired.jsonl", "probe_repaired")):
        probe_path = safe_input(folder / name, root)
        if probe_path is not None:
            setattr(run, attr, read_probe(probe_path, folder, root, diags))
    gate_path = safe_input(folder / "gate.json", root)
    if gate_path is not None:
        run.gate = read_gate(gate_path, folder, root, diags)
    plan_path = safe_input(folder / "training_plan.json", root)
    if plan_path is not None:
        read_training_plan(run, plan_path, diags)
    notes_path = safe_input(folder / "notes.md", root)
    if notes_path is not None:
        notes = read_text_file(notes_path, diags)
        if notes is not None:
            run.notes = bounded_markdown(notes, notes_path, diags)


def read_metrics(run: Run, folder: Path, reading: Reading | None, ctx: LoadContext, read_log: LogReader) -> None:
    """metrics.jsonl with the native reader, or the log run.yaml names (`metrics_file:`) with the generic one."""
    diags, run_yaml = ctx.diags, folder / RUN_FILE
    step_key = reading.get("step_key") if reading else None
    named = reading.get("metrics_file") if reading else None
    if not named or named == "metrics.jsonl":  # the native log keeps the native reader
        path = safe_input(folder / "metrics.jsonl", ctx.root)
        if path is not None:
            run.metrics = read_metrics_jsonl(
                path,
                diags,
                step_key=step_key,
                running=run.status == "running",
                same_step=ctx.config.same_step,
                restarts=ctx.config.restarts,
            )
        return
    inside = safe_child(folder, named, ctx.root, diags, run_yaml)
    if inside is None:
        return
    path = safe_input(inside, ctx.root)
    if path is not None:
        read_log(
            run,
            path,
            diags,
            step_key=step_key,
            root=ctx.root,
            same_step=ctx.config.same_step,
            restarts=ctx.config.restarts,
        )
    elif reading is not None:
        diags.warning(run_yaml, f"metrics_file '{named}' does not exist", reading.line("metrics_file"))


def safe_child(folder: Path, name: str, root: Path, diags: Diagnostics, referer: Path) -> Path | None:
    """Resolve a file name given in metadata; refuse anything that leaves the run folder."""
    candidate = folder / name
    if not is_inside(candidate, folder) or not is_inside(candidate, root):
        diags.error(referer, f"'{name}' points outside the run folder; ignored")
        return None
    return candidate


def read_metrics_jsonl(
    path: Path,
    diags: Diagnostics,
    *,
    step_key: str | None,
    running: bool,
    same_step: str = "mean",
    restarts: str = "last",
) -> Metrics:
    """Large clean logs take the native-code fast path; everything else the tolerant reader."""
    metrics = None
    try:
        large = path.stat().st_size >= FAST_PATH_MIN_BYTES
    except OSError:
        large = False
    if large:
        metrics = read_metrics_fast(path, diags, step_key)
    if metrics is None:
        builder = SeriesBuilder(path, diags, step_key=step_key, same_step=same_step, restarts=restarts)
        for line, record in iter_jsonl(path, diags, partial_last_is_normal=True):
            builder.add(record, line)
        metrics = builder.finish()
    if not metrics.series and str(path) not in diags.unread:
        diags.warning(path, "no numeric metrics found")
    return metrics


def read_probe(path: Path, run_dir: Path, root: Path, diags: Diagnostics) -> Probe:
    collector = ProbeCollector(path, diags)
    batch: list[tuple[int, dict[str, Any]]] = []
    for record in iter_jsonl(path, diags, partial_last_is_normal=True):
        batch.append(record)
        if len(batch) == PROBE_BATCH:
            collector.add_native(batch, run_dir, root)
            batch = []
    collector.add_native(batch, run_dir, root)
    probe = collector.probe()
    if probe is None:
        if str(path) not in diags.unread:  # an unreadable file already has its message
            diags.warning(path, "no probe cases found")
        return Probe(table=table_of([]), source_file=str(path))
    return probe


GATE_CHECK = Records("gate check", {"name": TEXT, "passed": BOOL, "detail": TEXT}, required=("name",))
GATE_ASSET = Records(
    "gate asset", {"id": TEXT, "passed": BOOL, "score": NUMBER, "render": TEXT, "note": TEXT}, required=("id",)
)
GATE_JSON = {"passed": BOOL, "parity_score": NUMBER, "threshold": NUMBER, "checks": GATE_CHECK, "assets": GATE_ASSET}


TRAINING_PLAN = {"status": TEXT, "state": TEXT, "stage": TEXT, "current_stage": TEXT}


def read_training_plan(run: Run, path: Path, diags: Diagnostics) -> None:
    """training_plan.json's status and stage (typed: one message per field of another type); the rest is not read."""
    data = read_json_object(path, diags)
    if data is None:
        return
    typed = TypedReader(path, diags)
    f = typed.fields(data, TRAINING_PLAN)
    typed.report()
    run.plan_status = f.get("status") or f.get("state")
    run.plan_stage = f.get("stage") or f.get("current_stage")


def read_gate(path: Path, run_dir: Path, root: Path, diags: Diagnostics) -> Gate | None:
    """gate.json, every field checked against `GATE_JSON` (obs.jsontypes: one message per field)."""
    data = read_json_object(path, diags)
    if data is None:
        return None
    typed = TypedReader(path, diags)
    f = typed.fields(data, GATE_JSON)
    typed.report()
    checks = [GateCheck(c["name"], c.get("passed"), c.get("detail", "")) for c in f.get("checks", [])]
    assets = []
    for a in f.get("assets", []):
        render = a.get("render")
        assets.append(
            GateAsset(
                id=a["id"],
                passed=a.get("passed"),
                score=a.get("score"),
                render=checked_render(render, run_dir, root, path, 1, diags) if render is not None else None,
                note=a.get("note", ""),
            )
        )
    passed = f.get("passed")
    if passed is None:
        known = [c.passed for c in checks if c.passed is not None] + [a.passed for a in assets if a.passed is not None]
        passed = all(known) if known else None
    return Gate(
        passed=passed, parity_score=f.get("parity_score"), threshold=f.get("threshold"), checks=checks, assets=assets
    )
