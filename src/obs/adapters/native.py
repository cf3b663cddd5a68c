"""The native format: a folder with `run.yaml` and the files of docs/contract.md.

This module reads native files only. Laying a run.yaml over another format's files, and handing a
log named by `metrics_file:` to the generic reader, are the registry's job (`obs.adapters`), so
this module imports no other adapter.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from obs.adapters.base import Claim, LoadContext, RunSource, list_files
from obs.adapters.common import (
    IMAGE_SUFFIXES,
    ProbeCollector,
    checked_render,
    decode_text,
    folder_id,
    probe_case_from_record,
    read_json_document,
)
from obs.diagnostics import Diagnostics
from obs.fast_metrics import FAST_PATH_MIN_BYTES, read_metrics_fast
from obs.fields import FieldReader
from obs.jsonl import iter_jsonl
from obs.model import STATUSES, VERDICTS, Decision, Gate, GateAsset, GateCheck, Metrics, Probe, Run
from obs.safeyaml import YamlDoc, YamlError, load_yaml_file
from obs.series_builder import SeriesBuilder
from obs.sourcetree import is_inside, refusal, safe_input

RUN_FILE = "run.yaml"
CONTRACT_VERSIONS = (1,)

KNOWN_RUN_KEYS = {
    "obs_contract",
    "id",
    "title",
    "spec",
    "campaign",
    "revision",
    "date",
    "status",
    "baseline",
    "primary_axis",
    "primary_metric",
    "hypothesis",
    "success_criteria",
    "held_constant",
    "model",
    "config",
    "contract",
    "data",
    "provenance",
    "condition",
    "seed",
    "arm",
    "tags",
    "lessons",
    "decision",
    "step_key",
    "metrics_file",
}


class LogReader(Protocol):
    """Reads a log named by `metrics_file:` into a run (the registry passes the generic reader)."""

    def __call__(self, run: Run, path: Path, diags: Diagnostics, *, step_key: str | None, root: Path) -> None: ...


def claim(folder: Path, root: Path) -> Claim | None:
    """A folder holding run.yaml is one native run and owns its subfolders (renders/, ...).

    A run.yaml that is a link out of the tree (or a loop) still marks the folder as a run's, so no
    other format reads it instead: the folder is taken, with no run (discovery names the link).
    """
    if safe_input(folder / RUN_FILE, root) is None:
        if refusal(folder / RUN_FILE, root) is None:
            return None
        return Claim(runs=(), owned_dirs=(folder,), notes=("run.yaml is a refused link: folder not read",))
    files = list_files(folder, root)
    source = RunSource(adapter="native", path=folder, files=files, default_id=folder_id(folder, root))
    return Claim(runs=(source,), owned_dirs=(folder,))


def new_run(source: RunSource, diags: Diagnostics) -> Run:
    """The empty run a native folder starts from, before run.yaml is read."""
    return Run(
        id=source.default_id or source.path.name,
        source_dir=source.path,
        adapter="native",
        spec=source.spec,
        campaign=source.campaign,
        input_files=list(source.files),
        diagnostics=diags,
    )


def read_run_yaml(path: Path, diags: Diagnostics) -> YamlDoc | None:
    try:
        doc = load_yaml_file(path)
    except YamlError as exc:
        diags.error(path, str(exc), exc.line)
        return None
    if doc.data is None:
        return YamlDoc({})
    if not isinstance(doc.data, dict):
        diags.error(path, "expected a mapping of run fields at the top level", 1)
        return None
    return doc


def apply_run_yaml(run: Run, doc: YamlDoc, path: Path, diags: Diagnostics) -> None:
    """Fill `run` from a run.yaml document (also used to overlay run.yaml on adapter formats)."""
    f = FieldReader(doc, path, diags)
    version = f.integer("obs_contract")
    if version is not None and version not in CONTRACT_VERSIONS:
        diags.error(
            path,
            f"obs_contract: {version} is not a version this obs understands "
            f"(it reads {', '.join(map(str, CONTRACT_VERSIONS))}); fields were read as version 1",
            f.line("obs_contract"),
        )
    run.id = f.text("id") or run.id
    run.title = f.text("title") or run.title
    run.spec = f.text("spec") or run.spec
    run.campaign = f.text("campaign") or run.campaign
    run.revision = f.text("revision") or run.revision
    run.date = f.text("date") or run.date
    run.status = f.choice("status", STATUSES, run.status) or run.status
    run.baseline = f.text("baseline") or run.baseline
    run.primary_axis = f.text("primary_axis") or run.primary_axis
    run.primary_metric = f.text("primary_metric") or run.primary_metric
    run.hypothesis = f.markdown("hypothesis") or run.hypothesis
    run.success_criteria = f.markdown("success_criteria") or run.success_criteria
    run.held_constant = f.string_list("held_constant") or run.held_constant
    run.model = f.mapping("model") or run.model
    run.config = f.mapping("config") or run.config
    run.contract = f.mapping("contract") or run.contract
    run.data = f.mapping("data") or run.data
    run.provenance = f.mapping("provenance") or run.provenance
    run.condition = f.text("condition") or run.condition
    seed = f.integer("seed")
    run.seed = seed if seed is not None else run.seed
    run.arm = f.text("arm") or run.arm
    run.tags = f.string_list("tags") or run.tags
    run.lessons = f.markdown("lessons") or run.lessons
    if "decision" in f.data:
        run.decision = read_decision(f.child("decision"))
    for key, value in f.data.items():
        if key not in KNOWN_RUN_KEYS:
            run.other_fields[key] = value
            diags.info(path, f"unknown field '{key}' (not in contract v1); shown under other fields", f.line(key))


def read_decision(f: FieldReader) -> Decision | None:
    if not f.data:
        return None
    verdict = f.choice("verdict", VERDICTS, None)
    return Decision(
        verdict=verdict,
        rationale=f.markdown("rationale"),
        next=f.text("next") or "",
        by=f.text("by") or "",
        date=f.text("date") or "",
    )


MAX_RUN_YAML_SNIFF = 1 << 20
NATIVE_FILES = frozenset({RUN_FILE, "metrics.jsonl", "probe.jsonl", "probe_repaired.jsonl", "gate.json", "notes.md"})


def has_own_metrics(folder: Path, root: Path) -> bool:
    """metrics.jsonl, or a run.yaml naming a metrics_file: the generic log reader is then not asked."""
    if safe_input(folder / "metrics.jsonl", root) is not None:
        return True
    run_yaml = safe_input(folder / RUN_FILE, root)
    try:
        return run_yaml is not None and b"metrics_file" in run_yaml.read_bytes()[:MAX_RUN_YAML_SNIFF]
    except OSError:
        return False


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
    doc = read_run_yaml(run_yaml, diags) if run_yaml is not None else None
    if doc is not None:
        apply_run_yaml(run, doc, folder / RUN_FILE, diags)
    read_metrics(run, folder, doc, ctx, read_log)
    for name, attr in (("probe.jsonl", "probe"), ("probe_repaired.jsonl", "probe_repaired")):
        probe_path = safe_input(folder / name, root)
        if probe_path is not None:
            setattr(run, attr, read_probe(probe_path, folder, root, diags))
    gate_path = safe_input(folder / "gate.json", root)
    if gate_path is not None:
        run.gate = read_gate(gate_path, folder, root, diags)
    notes_path = safe_input(folder / "notes.md", root)
    if notes_path is not None:
        run.notes = decode_text(notes_path.read_bytes(), notes_path, diags)


def read_metrics(run: Run, folder: Path, doc: YamlDoc | None, ctx: LoadContext, read_log: LogReader) -> None:
    """metrics.jsonl with the native reader, or the log run.yaml names (`metrics_file:`) with the generic one."""
    diags, run_yaml = ctx.diags, folder / RUN_FILE
    step_key = named = None
    if doc is not None:
        reader = FieldReader(doc, run_yaml, diags)
        step_key = reader.text("step_key")
        named = reader.text("metrics_file")
    if not named or named == "metrics.jsonl":  # the native log keeps the native reader
        path = safe_input(folder / "metrics.jsonl", ctx.root)
        if path is not None:
            run.metrics = read_metrics_jsonl(path, diags, step_key=step_key, running=run.status == "running")
        return
    inside = safe_child(folder, named, ctx.root, diags, run_yaml)
    if inside is None:
        return
    path = safe_input(inside, ctx.root)
    if path is not None:
        read_log(run, path, diags, step_key=step_key, root=ctx.root)
    elif doc is not None:
        diags.warning(run_yaml, f"metrics_file '{named}' does not exist", doc.line_of("metrics_file"))


def safe_child(folder: Path, name: str, root: Path, diags: Diagnostics, referer: Path) -> Path | None:
    """Resolve a file name given in metadata; refuse anything that leaves the run folder."""
    candidate = folder / name
    if not is_inside(candidate, folder) or not is_inside(candidate, root):
        diags.error(referer, f"'{name}' points outside the run folder; ignored")
        return None
    return candidate


def read_metrics_jsonl(path: Path, diags: Diagnostics, *, step_key: str | None, running: bool) -> Metrics:
    """Large clean logs take the native-code fast path; everything else the tolerant reader."""
    metrics = None
    try:
        large = path.stat().st_size >= FAST_PATH_MIN_BYTES
    except OSError:
        large = False
    if large:
        metrics = read_metrics_fast(path, diags, step_key)
    if metrics is None:
        builder = SeriesBuilder(path, diags, step_key=step_key)
        for line, record in iter_jsonl(path, diags, partial_last_is_normal=True):
            builder.add(record, line)
        metrics = builder.finish()
    if not metrics.series:
        diags.warning(path, "no numeric metrics found")
    return metrics


def read_probe(path: Path, run_dir: Path, root: Path, diags: Diagnostics) -> Probe:
    collector = ProbeCollector(path, diags)
    for line, rec in iter_jsonl(path, diags, partial_last_is_normal=True):
        collector.add(probe_case_from_record(rec, line, path, run_dir, root, diags), line)
    if not collector.cases:
        diags.warning(path, "no probe cases found")
    return Probe(cases=collector.cases, source_file=str(path))


def read_gate(path: Path, run_dir: Path, root: Path, diags: Diagnostics) -> Gate | None:
    doc = read_json_document(path, diags)
    if doc is None or not doc.ok:
        return None
    data = doc.data
    if not isinstance(data, dict):
        diags.error(path, "expected a JSON object", 1)
        return None
    checks = []
    for item in data.get("checks") or []:
        if isinstance(item, dict) and "name" in item:
            passed = item.get("passed")
            checks.append(
                GateCheck(
                    str(item["name"]),
                    passed if isinstance(passed, bool) else None,
                    str(item.get("detail") or ""),
                )
            )
        else:
            diags.warning(path, "a gate check needs at least a 'name'; skipped")
    assets = []
    for item in data.get("assets") or []:
        if not (isinstance(item, dict) and "id" in item):
            diags.warning(path, "a gate asset needs at least an 'id'; skipped")
            continue
        passed = item.get("passed")
        score = item.get("score")
        render = item.get("render")
        render = checked_render(render, run_dir, root, path, 1, diags) if isinstance(render, str) else None
        assets.append(
            GateAsset(
                id=str(item["id"]),
                passed=passed if isinstance(passed, bool) else None,
                score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
                render=render,
                note=str(item.get("note") or ""),
            )
        )
    passed = data.get("passed")
    if not isinstance(passed, bool):
        known = [c.passed for c in checks if c.passed is not None] + [a.passed for a in assets if a.passed is not None]
        passed = all(known) if known else None
    parity = data.get("parity_score")
    threshold = data.get("threshold")
    return Gate(
        passed=passed,
        parity_score=float(parity) if isinstance(parity, int | float) and not isinstance(parity, bool) else None,
        threshold=float(threshold) if isinstance(threshold, int | float) and not isinstance(threshold, bool) else None,
        checks=checks,
        assets=assets,
    )
