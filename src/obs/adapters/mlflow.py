"""The MLflow file store (`mlruns/`): one obs run per MLflow run.

Layout: `mlruns/<experiment id>/meta.yaml` (the experiment's name), and per run
`<run id>/meta.yaml` (name, status, times, lifecycle), `metrics/<key>` (lines of
`timestamp value [step]`; a key with `/` is a subfolder), `params/<key>` and `tags/<key>` (one
value per file). Deleted runs (`lifecycle_stage: deleted`, or anything under `.trash/`) are not
shown; the claim counts them so `obs check` says how many were hidden. `inf` and `nan` values are
kept as such. Artifacts are not read.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from obs.adapters.base import LOG_SECTIONS, Claim, Holds, LoadContext, RunSource, visible_files
from obs.adapters.shared.ids import folder_id, new_run, unread_note
from obs.adapters.shared.text_files import bounded_markdown, read_head
from obs.adapters.shared.values import iso_from_timestamp, typed_scalar
from obs.diagnostics import Diagnostics
from obs.jsonl import bounded_lines
from obs.jsontypes import NUMBER, TEXT, TypedReader
from obs.model import Run
from obs.safepaths import safe_input, shown_name, walk_files
from obs.safeyaml import YamlError, load_yaml_file
from obs.sanitize import CLEANED, clean_text, has_unsafe_text, visible
from obs.series_builder import SeriesBuilder

META = "meta.yaml"
RUN_PARTS = ("metrics", "params", "tags")
NOT_EXPERIMENTS = {"models", ".trash"}  # the model registry lives beside the experiments
STATUS = {
    "1": "running",
    "2": "queued",
    "3": "finished",
    "4": "failed",
    "5": "crashed",
    "RUNNING": "running",
    "SCHEDULED": "queued",
    "FINISHED": "finished",
    "FAILED": "failed",
    "KILLED": "crashed",
}
MAX_TAG_BYTES = 65536
MAX_METRIC_LINE = 4096  # `timestamp value step` is under 100 bytes


class MlflowAdapter:
    name = "mlflow"
    holds = Holds("MLflow runs", "an mlruns folder", sections=LOG_SECTIONS, takes_run_yaml=False)

    def claim(self, folder: Path, root: Path) -> Claim | None:
        experiments = _experiment_dirs(folder, root)
        if not experiments and folder.name != "mlruns":
            return None
        scan = _StoreScan(self.name, root)
        for exp in experiments:
            scan.experiment(exp)
        scan.unread += visible_files(folder, root)
        for other in _subdirs(folder):
            if other not in experiments:
                scan.unread += visible_files(other, root, recursive=True)
        return Claim(runs=tuple(scan.runs), owned_dirs=(folder,), notes=scan.notes(folder), hidden=tuple(scan.hidden))

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        return load_mlflow_run(source, ctx)


class _StoreScan:
    """One mlruns folder's experiments, run by run: the runs to load, what is hidden on purpose (deleted runs,
    experiments with no runs; `Claim.hidden`) and the files outside the run layout, for the claim's notes."""

    def __init__(self, adapter: str, root: Path) -> None:
        self.adapter = adapter
        self.root = root
        self.runs: list[RunSource] = []
        self.deleted: list[str] = []
        self.empty: list[str] = []
        self.unread: list[Path] = []
        self.hidden: list[tuple[str, tuple[Path, ...]]] = []

    def experiment(self, exp: Path) -> None:
        root = self.root
        exp_meta = _read_meta(exp / META, root)
        run_dirs = [d for d in _subdirs(exp) if _is_run_dir(d)]
        for other in _subdirs(exp):
            if other not in run_dirs:
                self.unread += visible_files(other, root, recursive=True)
        if not run_dirs:
            self.empty.append(f"{exp.name}/ ({exp_meta['name']})" if exp_meta.get("name") else f"{exp.name}/")
            if safe_input(exp / META, root):
                self.hidden.append((f"{_rel(exp, root)}: an MLflow experiment with no runs", (exp / META,)))
        exp_files = (exp / META,) if safe_input(exp / META, root) else ()
        for run_dir in run_dirs:
            meta = _read_meta(run_dir / META, root)
            run_deleted = meta.get("lifecycle_stage") == "deleted"
            if run_deleted or exp_meta.get("lifecycle_stage") == "deleted":
                self.hide_deleted(run_dir, str(meta.get("run_name") or ""), run_deleted)
                continue
            every = visible_files(run_dir, root, recursive=True)
            files = tuple(f for f in every if _is_run_file(f, run_dir))
            self.runs.append(
                RunSource(
                    self.adapter, run_dir, exp_files + files, key=run_dir.name, default_id=folder_id(run_dir, root)
                )
            )
            self.unread += [f for f in every if f not in files]
        self.unread += [f for f in visible_files(exp, root) if f.name != META]

    def hide_deleted(self, run_dir: Path, label: str, run_deleted: bool) -> None:
        """A run MLflow marks deleted (itself or its experiment): counted in the notes, its files hidden with why."""
        self.deleted.append(f"{run_dir.name}/ ({label})" if label else f"{run_dir.name}/")
        whose = "" if run_deleted else " whose experiment is"
        name = f" '{visible(label)[:200]}'" if label else ""
        self.hidden.append(
            (
                f"{_rel(run_dir, self.root)}: MLflow run{name}{whose} marked deleted (lifecycle_stage)",
                tuple(visible_files(run_dir, self.root, recursive=True)),
            )
        )

    def notes(self, folder: Path) -> tuple[str, ...]:
        notes = []
        trash = folder / ".trash"
        trashed = _subdirs(trash) if trash.is_dir() else []
        if self.deleted:
            notes.append(f"{len(self.deleted)} deleted run(s) hidden: {', '.join(sorted(self.deleted)[:6])}")
        if trashed:
            notes.append(f"{len(trashed)} deleted item(s) in .trash hidden")
        if self.empty:
            notes.append(f"experiment(s) with no runs: {', '.join(sorted(self.empty))}")
        note = unread_note(self.unread, folder, "artifacts and files outside the run layout")
        if note:
            notes.append(note)
        return tuple(notes)


def _rel(path: Path, root: Path) -> str:
    try:
        return shown_name(path.relative_to(root).as_posix())
    except ValueError:
        return shown_name(path.as_posix())


def _subdirs(folder: Path) -> list[Path]:
    """Visible subfolders that are not links (asked of every folder no other format claims: the folder's own
    listing tells which entries are folders, with no call per entry)."""
    try:
        with os.scandir(folder) as entries:
            return sorted(
                folder / e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
            )
    except OSError:
        return []


def _is_run_dir(folder: Path) -> bool:
    return (folder / META).is_file() or any((folder / part).is_dir() for part in ("metrics", "params"))


def _is_run_file(path: Path, run_dir: Path) -> bool:
    rel = path.relative_to(run_dir).parts
    return rel == (META,) or (len(rel) > 1 and rel[0] in RUN_PARTS)


def _experiment_dirs(folder: Path, root: Path) -> list[Path]:
    """Children that look like MLflow experiments: an experiment meta.yaml, or run folders inside."""
    out = []
    for child in _subdirs(folder):
        if child.name in NOT_EXPERIMENTS:
            continue
        meta = safe_input(child / META, root)
        if meta is not None:
            head = read_head(meta, 4096)
            if b"experiment_id" in head and b"run_id" not in head:
                out.append(child)
                continue
        if any(_names_a_run(grand / META, root) for grand in _subdirs(child)):
            out.append(child)
    return out


def _names_a_run(meta: Path, root: Path) -> bool:
    return safe_input(meta, root) is not None and b"run_id" in read_head(meta, 4096)


# the fields of an MLflow meta.yaml obs reads, with their types (obs.jsontypes: one message per wrong field)
MLFLOW_META = {
    "name": TEXT,
    "run_name": TEXT,
    "run_id": TEXT,
    "run_uuid": TEXT,
    "experiment_id": TEXT,
    "lifecycle_stage": TEXT,
    "status": TEXT,
    "start_time": NUMBER,
    "end_time": NUMBER,
}


def _read_meta(path: Path, root: Path, diags: Diagnostics | None = None) -> dict[str, Any]:
    if safe_input(path, root) is None:
        return {}
    try:
        doc = load_yaml_file(path)
    except (YamlError, OSError) as exc:
        if diags is not None:
            diags.error(path, str(exc), getattr(exc, "line", None))
        return {}
    data = doc.data
    if diags is not None:
        for line, message in doc.problems:
            diags.warning(path, message, line)
    if not isinstance(data, dict):
        if diags is not None:
            diags.error(path, "expected a mapping", 1)
        return {}
    if diags is None:
        return data
    typed = TypedReader(path, diags)
    data = typed.checked(data, MLFLOW_META)
    typed.report()
    return data


def _read_value_files(base: Path, root: Path, diags: Diagnostics) -> dict[str, str]:
    """params/ or tags/: one file per key (a key with `/` is a subfolder), the file's text is the value."""
    out: dict[str, str] = {}
    for path in walk_files(base, root):
        key = clean_text(path.relative_to(base).as_posix())
        try:
            with path.open("rb") as fh:
                raw = fh.read(MAX_TAG_BYTES)  # a value longer than this is cut: never read whole
        except OSError as exc:
            diags.unreadable(path, exc, "warning")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            diags.warning(path, "not valid UTF-8; bad bytes were replaced", 1)
            text = raw.decode("utf-8", errors="replace")
        if has_unsafe_text(text):
            diags.warning(path, f"holds control characters, which a page cannot show; {CLEANED}", 1)
            text = clean_text(text)
        out[key] = text
    return out


def parse_metric_line(text: str) -> tuple[float, float | None] | str:
    """`timestamp value [step]` -> (value, step or None), or a message saying what is wrong."""
    parts = text.split()
    if len(parts) not in (2, 3):
        return f"expected 'timestamp value [step]', found {len(parts)} field(s)"
    try:
        float(parts[0])
    except ValueError:
        return f"timestamp {parts[0][:30]!r} is not a number"
    try:
        value = float(parts[1])
    except ValueError:
        return f"value {parts[1][:30]!r} is not a number"
    step: float | None = None
    if len(parts) == 3:
        try:
            step = float(int(parts[2]))
        except ValueError:
            return f"step {parts[2][:30]!r} is not an integer"
    return value, step


def read_metric_file(path: Path, key: str, builder: SeriesBuilder, diags: Diagnostics) -> tuple[float, float] | None:
    """Stream one metric file into the builder; return the latest (step, value) MLflow would show."""
    latest: tuple[float, float, float] | None = None  # step, timestamp, value
    no_step = 0
    bad = 0
    first_bad: int | None = None
    index = 0
    with_step = False
    with path.open("rb") as fh:
        for lineno, (raw, size) in enumerate(bounded_lines(fh, MAX_METRIC_LINE), 1):
            if raw is None:
                bad += 1
                if first_bad is None:
                    first_bad = lineno
                    diags.warning(path, f"line is {size:,} bytes, not 'timestamp value [step]'; line skipped", lineno)
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            parsed = parse_metric_line(text)
            if isinstance(parsed, str):
                bad += 1
                if first_bad is None:
                    first_bad = lineno
                    msg = parsed
                    if not raw.endswith(b"\n"):
                        msg += " (last line is incomplete: the run may still be writing)"
                    diags.warning(path, f"{msg}; line skipped", lineno)
                continue
            value, step = parsed
            if step is None and with_step and not raw.endswith(b"\n"):
                diags.info(path, "last line is incomplete (the run may still be writing); it was skipped", lineno)
                continue
            with_step = with_step or step is not None
            if step is None:
                no_step += 1
                step = float(index)
            index += 1
            builder.add({"step": step, key: value}, lineno)
            try:
                ts = float(text.split()[0])
            except ValueError:
                ts = 0.0
            if latest is None or (step, ts) >= (latest[0], latest[1]):
                latest = (step, ts, value)
    if bad > 1:
        diags.warning(path, f"{bad} malformed line(s) in all (first at line {first_bad}); they were skipped", first_bad)
    if no_step:
        diags.info(path, f"{no_step} value(s) have no step (an old MLflow format); the line order is used", None)
    return (latest[0], latest[2]) if latest else None


def load_mlflow_run(source: RunSource, ctx: LoadContext) -> Run:
    run_dir = source.path
    diags = ctx.diags
    run = new_run(source, ctx, title=run_dir.name)
    meta = _read_meta(run_dir / META, ctx.root, diags)
    if safe_input(run_dir / META, ctx.root) is None:
        diags.warning(run_dir, "this MLflow run has no meta.yaml: no name, status or date")
    exp_dir = run_dir.parent
    exp_meta = _read_meta(exp_dir / META, ctx.root, diags)
    exp_name = str(exp_meta.get("name") or exp_dir.name)
    if safe_input(exp_dir / META, ctx.root) is None:
        run.notices.append(f"MLflow experiment {exp_dir.name} has no meta.yaml: its name is unknown.")
    run.tags.append(f"experiment:{exp_name}")
    run.provenance["mlflow_experiment"] = exp_name
    run.provenance["mlflow_experiment_id"] = str(exp_meta.get("experiment_id") or exp_dir.name)
    run.provenance["mlflow_run_id"] = str(meta.get("run_id") or meta.get("run_uuid") or run_dir.name)
    name = meta.get("run_name") or meta.get("name")
    if name:
        run.title = str(name)
    status = STATUS.get(str(meta.get("status", "")).strip())
    if status:
        run.status = status
    run.date = iso_from_timestamp(meta.get("start_time")) or run.date
    end = iso_from_timestamp(meta.get("end_time"))
    if end:
        run.provenance["end_time"] = end

    params = _read_value_files(run_dir / "params", ctx.root, diags)
    run.config = {key: typed_scalar(value) for key, value in params.items()}
    tags = _read_value_files(run_dir / "tags", ctx.root, diags)
    _apply_tags(run, tags, run_dir, ctx.root)

    metrics_dir = run_dir / "metrics"
    builder = SeriesBuilder(
        metrics_dir,
        diags,
        step_key="step",
        same_step=ctx.config.same_step,
        restarts="off",  # MLflow keeps points by step, in any order: one logged for an earlier step is no restart
        key_path=lambda key: metrics_dir / key,
    )
    for path in walk_files(metrics_dir, ctx.root):
        key = path.relative_to(metrics_dir).as_posix()
        if path.stat().st_size == 0:
            diags.warning(path, "metric file is empty")
            continue
        latest = read_metric_file(path, key, builder, diags)
        if latest is not None:
            run.summary[key] = latest[1]
    run.metrics = builder.finish()
    run.metrics.source_file = str(metrics_dir)
    nonfinite = sorted(k for k, v in run.summary.items() if not math.isfinite(v))
    if nonfinite:
        run.notices.append(f"{', '.join(nonfinite)}: the last logged value is not finite (inf or nan), kept as such.")
    if not run.metrics.series and not params:
        diags.warning(run_dir, "this MLflow run logged no metrics and no params")
    return run


def _apply_tags(run: Run, tags: dict[str, str], run_dir: Path, root: Path) -> None:
    user_tags: dict[str, str] = {}
    for key, value in tags.items():
        if key == "mlflow.runName":
            run.title = value.strip() or run.title
        elif key == "mlflow.parentRunId":
            parent = value.strip()
            run.provenance["mlflow_parent_run_id"] = parent
            if (run_dir.parent / parent).is_dir():
                run.provenance["parent_run"] = folder_id(run_dir.parent / parent, root)
        elif key == "mlflow.note.content":
            run.notes = bounded_markdown(value, run_dir / "tags" / key, run.diagnostics)
        elif key == "mlflow.source.git.commit":
            run.provenance["code_commit"] = value.strip()
        elif key == "mlflow.source.name":
            run.provenance["source"] = value.strip()
        elif key in ("mlflow.source.type", "mlflow.autologging"):
            run.provenance[key.removeprefix("mlflow.").replace(".", "_")] = value.strip()
        elif key.startswith("mlflow."):
            continue  # user name, model history and other internals
        else:
            user_tags[key] = value
    if user_tags:
        run.provenance["mlflow_tags"] = user_tags
