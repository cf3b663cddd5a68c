"""Hugging Face Trainer output folders: `trainer_state.json` and its `log_history` (incl. TRL).

A folder is a run when it holds a `trainer_state.json`, `checkpoint-*/trainer_state.json`
subfolders, or (when neither exists) renamed copies such as `trainer_state_1000steps.json` or any JSON file
with the TrainerState layout (`log_history` beside `global_step`, ...), whatever its name.
Checkpoints are snapshots of one run: only the newest state is read, once. Train and eval entries
logged at the same step become one point; the final summary entry (train_runtime, train_loss, ...)
goes to `run.summary`, not to the curves. TRL's GRPO keys get the names the reward-health panel
reads (`reward_mean`, `frac_reward_zero_std`, `rewards/<fn>/mean`); every original key is kept.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from obs.adapters.base import LOG_SECTIONS, Claim, Holds, LoadContext, RunSource, visible_files
from obs.adapters.shared.ids import folder_id, new_run, run_id_for_file, unread_note
from obs.adapters.shared.json_docs import element_lines, read_json_document, read_json_object, salvage_array
from obs.adapters.shared.log_records import build_log_metrics
from obs.adapters.shared.text_files import read_head
from obs.adapters.shared.values import is_number
from obs.diagnostics import Diagnostics
from obs.model import Run
from obs.safepaths import safe_input

STATE_FILE = "trainer_state.json"
RENAMED_STATE = re.compile(r"^trainer_state.*\.json$")
CHECKPOINT_DIR = re.compile(r"^checkpoint-(\d{1,18})$", re.ASCII)  # a longer number is no step
RESULT_FILES = ("all_results.json", "train_results.json", "eval_results.json", "test_results.json")
MODEL_CONFIG = "config.json"
CONFIG_KEYS = (
    "max_steps",
    "num_train_epochs",
    "train_batch_size",
    "logging_steps",
    "eval_steps",
    "save_steps",
)
MODEL_KEYS = {
    "_name_or_path": "name",
    "model_type": "type",
    "architectures": "architectures",
    "num_hidden_layers": "layers",
    "hidden_size": "d_model",
    "num_attention_heads": "heads",
    "max_position_embeddings": "context",
    "vocab_size": "vocab_size",
    "torch_dtype": "dtype",
}
_GLOBAL_STEP = re.compile(rb'"global_step"\s*:\s*(\d{1,18})(?![\d.eE])')


class HfTrainerAdapter:
    name = "hf_trainer"
    holds = Holds(
        "HF Trainer logs",
        "trainer_state.json",
        records="the `log_history` entries of trainer_state.json",
        sections=LOG_SECTIONS,
    )

    def claim(self, folder: Path, root: Path) -> Claim | None:
        files = visible_files(folder, root)
        names = {f.name for f in files}
        checkpoints = _checkpoint_states(folder, root)
        notes: list[str] = []
        if STATE_FILE in names or checkpoints:
            candidates = ([folder / STATE_FILE] if STATE_FILE in names else []) + [s for _, s in checkpoints]
            chosen = max(candidates, key=lambda p: (_global_step(p, folder), p.parent == folder))
            if chosen.parent != folder:
                notes.append(f"state of the newest checkpoint used: {chosen.parent.name}")
            older = [c.parent.name + "/" for c in candidates if c != chosen and c.parent != folder]
            if older:
                notes.append(
                    f"older checkpoint states not read: {', '.join(older[:6])}" + (" …" if len(older) > 6 else "")
                )
            read = [chosen, *self._side_files(folder, names)]
            sources: tuple[RunSource, ...] = (
                RunSource(
                    self.name,
                    folder,
                    tuple(read),
                    key=chosen.relative_to(folder).as_posix(),
                    default_id=folder_id(folder, root),
                ),
            )
        else:
            renamed = sorted(
                f
                for f in files
                if (RENAMED_STATE.match(f.name) and _looks_like_state(f)) or _state_by_content(f, names)
            )
            if not renamed:
                return None
            several = len(renamed) > 1
            side = self._side_files(folder, names)
            sources = tuple(
                RunSource(
                    self.name,
                    folder,
                    (state, *side),
                    key=state.name,
                    default_id=run_id_for_file(folder, root, state, several),
                )
                for state in renamed
            )
            if several:
                notes.append(f"{len(renamed)} renamed trainer states, one run each")
            read = [*renamed, *side]
        unread = [f for f in files if f not in read]
        note = unread_note(unread, folder, "not part of the trainer state")
        if note:
            notes.append(note)
        return Claim(runs=sources, owned_dirs=(folder,), notes=tuple(notes))

    @staticmethod
    def _side_files(folder: Path, names: set[str]) -> list[Path]:
        return [folder / n for n in (*RESULT_FILES, MODEL_CONFIG) if n in names]

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        run = new_run(source, ctx, title=source.path.name)
        state_path = source.path / source.key if source.key else source.files[0]
        if state_path.name != STATE_FILE and state_path.parent == source.path:
            run.title = f"{source.path.name}/{state_path.stem}"
        load_trainer_state(run, state_path, ctx.diags, same_step=ctx.config.same_step, restarts=ctx.config.restarts)
        for path in source.files:
            if path.name in RESULT_FILES:
                _read_results_file(run, path, ctx.diags)
            elif path.name == MODEL_CONFIG:
                _read_model_config(run, path, ctx.diags)
        return run


def _checkpoint_states(folder: Path, root: Path) -> list[tuple[int, Path]]:
    out = []
    try:
        children = list(folder.iterdir())
    except OSError:
        return []
    for child in children:
        m = CHECKPOINT_DIR.match(child.name)
        if m and child.is_dir() and not child.is_symlink() and safe_input(child / STATE_FILE, root):
            out.append((int(m.group(1)), child / STATE_FILE))
    return sorted(out)


def _global_step(state: Path, folder: Path) -> int:
    """global_step from the head of the file (keys are sorted, so it precedes log_history)."""
    m = _GLOBAL_STEP.search(read_head(state, 16384))
    if m:
        return int(m.group(1))
    cp = CHECKPOINT_DIR.match(state.parent.name) if state.parent != folder else None
    return int(cp.group(1)) if cp else -1


def _looks_like_state(path: Path) -> bool:
    head = read_head(path, 65536)
    return b'"log_history"' in head or b'"global_step"' in head or path.stat().st_size > 65536


STATE_MARKERS = (b'"global_step"', b'"is_world_process_zero"', b'"best_model_checkpoint"', b'"trial_name"')


def _state_by_content(path: Path, names: set[str]) -> bool:
    """A trainer state saved under another name (`state.json`, `run_0417.json`): the TrainerState layout, a
    `log_history` beside the fields only a TrainerState has, is recognised by content (it lost its status and
    configuration when the generic reader took it as a plain list of records)."""
    if path.suffix.lower() != ".json" or path.name in (*RESULT_FILES, MODEL_CONFIG) or path.name == STATE_FILE:
        return False
    head = read_head(path, 65536)
    return b'"log_history"' in head and any(m in head for m in STATE_MARKERS)


def load_trainer_state(
    run: Run, path: Path, diags: Diagnostics, same_step: str = "mean", restarts: str = "last"
) -> None:
    """Fill `run` (metrics, summary, config, provenance) from one trainer_state.json."""
    doc = read_json_document(path, diags)
    if doc is None:
        return
    state: dict[str, Any]
    if doc.ok and isinstance(doc.data, dict):
        state = doc.data
        history = state.get("log_history")
        lines = element_lines(doc.text, "log_history")
    elif doc.ok:
        diags.error(path, f"expected a JSON object with 'log_history', found {type(doc.data).__name__}", 1)
        return
    else:
        history, stop = salvage_array(doc.text, "log_history")
        lines = element_lines(doc.text, "log_history")
        state = {}
        if history:
            diags.warning(
                path,
                f"the {len(history)} log entries before the damage were read; the rest of the file was not",
                stop,
            )
            run.notices.append(
                f"{path.name} is damaged or truncated: only its first {len(history)} log entries are shown."
            )
    if history is None:
        diags.error(path, "no 'log_history' in this trainer state; no curves", 1)
        history = []
    if not isinstance(history, list):
        diags.error(path, "'log_history' should be a list of entries", 1)
        history = []
    if not history:
        diags.warning(path, "'log_history' is empty: nothing was logged")
    _state_fields(run, state, path)
    records = []
    for i, entry in enumerate(history):
        line = lines[i] if i < len(lines) else None
        if not isinstance(entry, dict):
            diags.warning(path, f"log entry {i + 1} is a {type(entry).__name__}, not an object; skipped", line)
            continue
        records.append((line, entry))
    build_log_metrics(run, records, path, diags, step_key="step", same_step=same_step, restarts=restarts)
    max_steps, global_step = state.get("max_steps"), state.get("global_step")
    if is_number(max_steps) and is_number(global_step) and 0 < global_step < max_steps:
        run.notices.append(
            f"This trainer state stops at step {global_step} of {max_steps}: a checkpoint taken during training, "
            "or a run that stopped early."
        )
    elif (
        is_number(max_steps) and is_number(global_step) and 0 < max_steps <= global_step
    ) or "train_runtime" in run.summary:
        run.status = "finished"  # the state reached max_steps, or Trainer logged its end-of-training summary


def _state_fields(run: Run, state: dict[str, Any], path: Path) -> None:
    for key in CONFIG_KEYS:
        value = state.get(key)
        if is_number(value):
            run.config[key] = value
    trial = state.get("trial_params")
    if isinstance(trial, dict) and trial:
        run.config["trial_params"] = trial
    for key in ("global_step", "epoch", "num_input_tokens_seen", "total_flos"):
        value = state.get(key)
        if is_number(value) and (value or key in ("global_step", "epoch")):
            run.summary.setdefault(key, float(value))
    best = state.get("best_metric")
    if is_number(best):
        run.summary["best_metric"] = float(best)
    for key in ("best_model_checkpoint", "best_global_step"):
        if state.get(key) is not None:
            run.provenance[key] = state[key]
    run.provenance["trainer_state"] = (
        path.name if path.parent == run.source_dir else (f"{path.parent.name}/{path.name}")
    )


def _read_results_file(run: Run, path: Path, diags: Diagnostics) -> None:
    """all_results.json / train_results.json / eval_results.json: final numbers -> summary."""
    results = read_json_object(path, diags, "warning", "expected a JSON object of final metrics; ignored")
    if results is None:
        return
    for key, value in results.items():
        if is_number(value):
            run.summary[key] = float(value)


def _read_model_config(run: Run, path: Path, diags: Diagnostics) -> None:
    """The model's config.json: a few architecture fields for the run card."""
    config = read_json_object(path, diags, None)
    if config is None:
        return
    for key, name in MODEL_KEYS.items():
        value = config.get(key)
        if value is not None and not isinstance(value, dict):
            run.model.setdefault(name, value)
