"""Weights & Biases local run folders (`wandb/run-<date>_<time>-<id>/files/`).

Read: `config.yaml` (every key wrapped as `{value: ...}`, plus the `_wandb` internals),
`wandb-summary.json` (the final value of each logged key), `wandb-metadata.json` (start time,
program, git commit, hardware; newer clients keep the same in config.yaml's `_wandb.e`) and, when
an old client wrote it, `wandb-history.jsonl`. The history of a current client lives in the binary
`run-<id>.wandb` file, read through the wandb SDK's own reader (`wandb_binary.py`, the optional extra
`obs[wandb]`); without it the page says so and shows the final values only. Personal fields of the metadata (e-mail,
user name, host name, root folder, interpreter path) are not copied into the site.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from obs.adapters.base import LOG_SECTIONS, Claim, Holds, LoadContext, RunSource, visible_files
from obs.adapters.shared.ids import folder_id, new_run, unread_note
from obs.adapters.shared.json_docs import read_json_object
from obs.adapters.shared.log_records import RecordCleaner
from obs.adapters.shared.values import is_number, numeric_leaves
from obs.adapters.wandb_binary import ReaderMissing, history_rows, run_info
from obs.diagnostics import Diagnostics
from obs.jsonl import iter_jsonl
from obs.jsontypes import TEXT, TypedReader
from obs.model import Run
from obs.safepaths import safe_input
from obs.safeyaml import load_mapping
from obs.series_builder import SeriesBuilder

CONFIG = "config.yaml"
SUMMARY = "wandb-summary.json"
METADATA = "wandb-metadata.json"
HISTORY = "wandb-history.jsonl"
KNOWN = (CONFIG, SUMMARY, METADATA, HISTORY)
RUN_DIR = re.compile(r"^(?:offline-)?run-(\d{8})_(\d{6})-([A-Za-z0-9]+)$")
SUMMARY_SKIP = frozenset({"_wandb", "_timestamp"})
METADATA_KEYS = {
    "program": "program",
    "codePath": "code_path",
    "python": "python",
    "os": "os",
    "gpu": "gpu",
    "gpu_count": "gpu_count",
    "cudaVersion": "cuda",
    "cpu_count": "cpu_count",
}
MODEL_NAME_KEYS = ("_name_or_path", "model_name_or_path", "model_name", "model")


class WandbAdapter:
    name = "wandb"
    holds = Holds(
        "W&B run folders", "the run's files/ folder", records="the run's history (wandb.log)", sections=LOG_SECTIONS
    )

    def claim(self, folder: Path, root: Path) -> Claim | None:
        files_dir = _files_dir(folder, root)
        if files_dir is None:
            return None
        read = [p for p in (safe_input(files_dir / n, root) for n in KNOWN) if p is not None]
        if files_dir / HISTORY not in read:  # a current client: the history is in the binary run file
            binary = _binary_history(folder, root)
            read += [binary] if binary is not None else []
        source = RunSource(self.name, folder, tuple(read), default_id=folder_id(folder, root))
        unread = [f for f in visible_files(folder, root, recursive=True) if f not in read]
        notes = []
        note = unread_note(unread, folder, "logs and saved files")
        if note:
            notes.append(note)
        return Claim(runs=(source,), owned_dirs=(folder,), notes=tuple(notes))

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        return load_wandb_run(source, ctx)


def _files_dir(folder: Path, root: Path) -> Path | None:
    """`folder/files` of a `run-*` folder, or a folder holding the W&B files itself."""
    if safe_input(folder / SUMMARY, root) or safe_input(folder / METADATA, root):
        return folder
    files = folder / "files"
    if files.is_dir() and not files.is_symlink():
        if safe_input(files / SUMMARY, root) or safe_input(files / METADATA, root):
            return files
        if RUN_DIR.match(folder.name) and safe_input(files / CONFIG, root):
            return files
    return None


def unwrap_config(data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """W&B's `{key: {value: v, desc: ...}}` -> `{key: v}`; the `_wandb` block is returned apart."""
    config: dict[str, Any] = {}
    internals: dict[str, Any] = {}
    if not isinstance(data, dict):
        return config, internals
    for key, entry in data.items():
        value = entry["value"] if isinstance(entry, dict) and "value" in entry else entry
        if key == "_wandb":
            internals = value if isinstance(value, dict) else {}
        elif key == "wandb_version":
            continue
        else:
            config[str(key)] = value
    return config, internals


def load_wandb_run(source: RunSource, ctx: LoadContext) -> Run:
    folder = source.path
    diags = ctx.diags
    files_dir = _files_dir(folder, ctx.root) or folder
    m = RUN_DIR.match(folder.name)
    run = new_run(source, ctx, title=m.group(3) if m else folder.name)
    if m:
        d, t = m.group(1), m.group(2)
        run.date = f"{d[:4]}-{d[4:6]}-{d[6:]}T{t[:2]}:{t[2:4]}:{t[4:]}"
        run.provenance["wandb_run_id"] = m.group(3)
    _read_config(run, safe_input(files_dir / CONFIG, ctx.root), diags)
    _read_summary(run, safe_input(files_dir / SUMMARY, ctx.root), diags)
    _read_metadata(run, safe_input(files_dir / METADATA, ctx.root), diags)
    history = safe_input(files_dir / HISTORY, ctx.root)
    if history is not None:
        builder = SeriesBuilder(
            history, diags, step_key=None, same_step=ctx.config.same_step, restarts=ctx.config.restarts
        )
        cleaner = RecordCleaner(history, diags)
        for line, rec in iter_jsonl(history, diags, partial_last_is_normal=True):
            builder.add(cleaner.clean(rec, line), line)
        run.metrics = builder.finish()
        cleaner.report(run, ignore=[run.metrics.stage_key] if run.metrics.stage_key else ())
    else:
        _read_binary_history(run, folder, ctx)
    return run


def _binary_history(folder: Path, root: Path) -> Path | None:
    """The run's `run-<id>.wandb` file (the first by name if a resumed run left several), if any."""
    for path in sorted(folder.glob("*.wandb")):
        safe = safe_input(path, root)
        if safe is not None:
            return safe
    return None


def _read_binary_history(run: Run, folder: Path, ctx: LoadContext) -> None:
    """A current client's history, from `run-<id>.wandb` through the SDK's reader (`wandb_binary`)."""
    path = _binary_history(folder, ctx.root)
    if path is None:
        run.notices.append(
            f"No history beside the summary: neither {HISTORY} (older clients) nor the binary run-<id>.wandb "
            "(current clients) is in this folder, so there are no curves, only the summary's final values."
        )
        return
    builder = SeriesBuilder(
        path, ctx.diags, step_key=None, same_step=ctx.config.same_step, restarts=ctx.config.restarts
    )
    cleaner = RecordCleaner(path, ctx.diags)
    try:
        for number, row in history_rows(path, ctx.diags):
            builder.add(cleaner.clean(row, number), number)
    except ReaderMissing as exc:
        run.notices.append(
            f"W&B keeps this run's history in a binary file ({path.name}) that obs could not read: {exc}. "
            "Until then: no curves, only the final values of the summary."
        )
        return
    run.metrics = builder.finish()
    cleaner.report(run, ignore=[run.metrics.stage_key] if run.metrics.stage_key else ())
    _read_run_record(run, path)


def _read_run_record(run: Run, path: Path) -> None:
    """The run record's tags (the run's own, beside any run.yaml gives), group and job type (provenance): what
    `wandb.init(group=..., tags=[...])` said, and what obs.layout reads a campaign's conditions from."""
    info = run_info(path)
    if info is None:
        return
    run.tags = [*run.tags, *(t for t in info.tags if t and t not in run.tags)]
    if info.group:
        run.provenance["wandb_group"] = info.group
    if info.job_type:
        run.provenance["wandb_job_type"] = info.job_type


def _read_config(run: Run, path: Path | None, diags: Diagnostics) -> None:
    doc = load_mapping(path, diags, "config keys") if path is not None else None
    if doc is None or path is None:
        return
    config, internals = unwrap_config(doc.data)
    run.config = config
    _config_metadata(run, internals, path, diags)
    for key in ("cli_version", "python_version", "framework"):
        if isinstance(internals.get(key), str | int | float):
            run.provenance[f"wandb_{key}" if key == "cli_version" else key] = internals[key]
    for key in MODEL_NAME_KEYS:
        if isinstance(config.get(key), str) and config[key]:
            run.model["name"] = config[key]
            break
    for key in ("run_name", "wandb_run_name", "name"):
        if isinstance(config.get(key), str) and config[key] and not config[key].startswith(("/", ".")):
            run.title = config[key]
            break


def _read_summary(run: Run, path: Path | None, diags: Diagnostics) -> None:
    if path is None:
        run.notices.append("This W&B run has no wandb-summary.json: no final values.")
        return
    summary = read_json_object(path, diags)
    if summary is None:
        return
    for key, value in numeric_leaves(summary, skip=SUMMARY_SKIP):
        run.summary[key] = value
    others = not_numbers(summary)
    if others:
        shown = ", ".join(f"{k} ({what})" for k, what in others[:12]) + (
            f" and {len(others) - 12} more" if len(others) > 12 else ""
        )
        run.notices.append(
            f"The W&B summary also holds {len(others)} value(s) that are not numbers, not shown here as final values: "
            f"{shown}."
        )
    runtime = summary.get("_wandb", {}).get("runtime") if isinstance(summary.get("_wandb"), dict) else None
    if is_number(runtime) and "_runtime" not in run.summary:
        run.summary["_runtime"] = float(runtime)
    if not [k for k in run.summary if not k.startswith("_")]:
        run.notices.append("The W&B summary holds no metric: the run logged nothing, or stopped before its first log.")


def not_numbers(data: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(key, what) of every summary value that is not a number: W&B media and tables (`_type`), text, lists."""
    out: list[tuple[str, str]] = []
    if not isinstance(data, dict):
        return out
    for key, value in data.items():
        if key in SUMMARY_SKIP:
            continue
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            if "_type" in value:
                out.append((name, str(value["_type"])))
            else:
                out.extend(not_numbers(value, f"{name}/"))
        elif isinstance(value, str):
            out.append((name, f"text '{value[:40]}'" + ("…" if len(value) > 40 else "")))
        elif isinstance(value, list):
            out.append((name, f"a list of {len(value)}"))
        elif value is None:
            out.append((name, "null"))
    return out


# the fields of wandb-metadata.json obs reads, with their types (obs.jsontypes: one message per wrong field)
WANDB_METADATA = {"startedAt": TEXT, "heartbeatAt": TEXT, "state": TEXT}


def _read_metadata(run: Run, path: Path | None, diags: Diagnostics) -> None:
    if path is None:
        return
    meta = read_json_object(path, diags)
    if meta is None:
        return
    typed = TypedReader(path, diags)
    meta = typed.checked(meta, WANDB_METADATA)
    typed.report()
    _apply_metadata(run, meta)


def _config_metadata(run: Run, internals: dict[str, Any], path: Path, diags: Diagnostics) -> None:
    """Newer clients keep the metadata in config.yaml, `_wandb.e.<writer id>` (UTC start time, git, program,
    hardware), often with no wandb-metadata.json: read it the same way. Several writers (a resumed run): the
    earliest start is the run's."""
    writers = internals.get("e")
    if not isinstance(writers, dict):
        return
    typed = TypedReader(path, diags)
    entries = [typed.checked(w, WANDB_METADATA) for w in writers.values() if isinstance(w, dict)]
    typed.report()
    entries.sort(key=lambda w: str(w.get("startedAt") or ""), reverse=True)
    for meta in entries:  # the earliest last, so its start time and commit stay
        _apply_metadata(run, meta)


def _apply_metadata(run: Run, meta: dict[str, Any]) -> None:
    started = meta.get("startedAt") or meta.get("heartbeatAt")
    if isinstance(started, str) and started:
        run.date = started
    for key, name in METADATA_KEYS.items():
        value = meta.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and value != "":
            run.provenance[name] = value
    git = meta.get("git")
    if isinstance(git, dict):
        if isinstance(git.get("commit"), str):
            run.provenance["code_commit"] = git["commit"]
        if isinstance(git.get("remote"), str):
            run.provenance["code_remote"] = git["remote"]
    args = meta.get("args")
    if isinstance(args, list) and all(isinstance(a, str) for a in args):
        run.provenance["args"] = " ".join(args)
    state = meta.get("state")
    if not isinstance(state, str) or state.lower() not in ("running", "finished", "failed", "crashed"):
        return
    runtime = run.summary.get("_runtime")
    if state.lower() == "running" and runtime is not None:
        # wandb-metadata.json is written when the run starts; a summary with a runtime was written later
        run.notices.append(
            f"wandb-metadata.json says 'running' (written when the run started), but the summary records "
            f"{runtime:g} s of runtime: how the run ended is not recorded, so its status is unknown."
        )
        return
    run.status = state.lower()
