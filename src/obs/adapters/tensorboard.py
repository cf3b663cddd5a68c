"""TensorBoard event files (`events.out.tfevents.*`): the default logger of HF Trainer, Lightning, Keras and
most PyTorch code.

Read with TensorBoard's own event-file loader (`tensorboard.backend.event_processing.event_file_loader`,
which also migrates old `simple_value` scalars to the current tensor form), an optional dependency:
`pip install tensorboard` (the `obs[tensorboard]` extra). Without it a folder of event files is still
found, and its page says how to read it, instead of the files vanishing. Importing the loader costs
about 0.3 s beyond numpy, so it happens only when a run has event files.

* A folder holding event files is one run; its event files (a restarted process writes a new one)
  are read in file-name (time) order. When a later file starts at a step already logged, the earlier
  points from that step on are dropped, as TensorBoard itself does, and the page says so.
* Keras writes `train/` and `validation/` beside each other: a folder whose only event files are in
  such split subfolders is one run, tags prefixed by the split (`validation/epoch_loss`).
* Scalars become series (x = the event step); `hparams` and text summaries holding a JSON or
  YAML mapping (HF Trainer's `args`, `model_config`; Lightning's `hparams.yaml` beside the files)
  become the configuration; other text is listed; histograms, images, audio, graphs and the rest
  are counted on the page, not drawn.
* Beside a `trainer_state.json` (HF Trainer's `runs/<date>/`) the registry merges the events into
  the trainer-state run (`merge_into`): the configuration and any tag the state does not log.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from obs.adapters.base import LOG_SECTIONS, Claim, Holds, LoadContext, RunSource, visible_files
from obs.adapters.shared.hparams import add_hparams
from obs.adapters.shared.ids import folder_id, new_run, unread_note
from obs.diagnostics import Diagnostics
from obs.model import Run
from obs.series_builder import SeriesBuilder

EVENT_FILE = re.compile(r"^events\.out\.tfevents\.")
SPLIT_DIRS = ("train", "validation", "val", "eval", "evaluation", "test", "valid")
HPARAMS_YAML = "hparams.yaml"  # Lightning's TensorBoardLogger writes the hyperparameters here too
CONFIG_TEXT_TAGS = ("args", "config", "hparams", "hyperparameters", "model_config", "training_args")
MISSING_READER = (
    "This folder holds TensorBoard event files, but TensorBoard's reader is not installed: "
    "pip install tensorboard into obs's environment (the obs[tensorboard] extra), then build again."
)
# HF Trainer's TensorBoardCallback logs `train/<key>`, `eval/<key>`, `test/<key>` for the keys that
# trainer_state.json logs as `<key>`, `eval_<key>`, `test_<key>` (transformers' `rewrite_logs`)
HF_PREFIXES = (("train/", ""), ("eval/", "eval_"), ("test/", "test_"))


def is_event_file(path: Path) -> bool:
    return EVENT_FILE.match(path.name) is not None


def event_files(folder: Path, root: Path) -> list[Path]:
    return sorted(f for f in visible_files(folder, root) if is_event_file(f))


def split_folders(folder: Path, root: Path) -> list[Path]:
    """Keras' layout: `train/`, `validation/` (...) subfolders with event files, none in the folder itself."""
    out = []
    for name in SPLIT_DIRS:
        sub = folder / name
        if sub.is_dir() and not sub.is_symlink() and event_files(sub, root):
            out.append(sub)
    return out


def event_dirs_below(folder: Path, root: Path, depth: int = 2) -> list[Path]:
    """Folders under `folder` (itself included) that hold event files: HF Trainer's `runs/<date>/`."""
    found = [folder] if event_files(folder, root) else []
    if depth <= 0:
        return found
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and p.name[:1] != ".")
    except OSError:
        return found
    for child in children:
        found += event_dirs_below(child, root, depth - 1)
    return found


class TensorboardAdapter:
    name = "tensorboard"
    holds = Holds("TensorBoard event files", "the event files", sections=LOG_SECTIONS)

    def claim(self, folder: Path, root: Path) -> Claim | None:
        files = visible_files(folder, root)
        events = [f for f in files if is_event_file(f)]
        splits = [] if events else split_folders(folder, root)
        if not events and not splits:
            return None
        inputs = list(events)
        for sub in splits:
            inputs += event_files(sub, root)
        extra = [f for f in files if f.name == HPARAMS_YAML]
        source = RunSource(self.name, folder, tuple(inputs + extra), default_id=folder_id(folder, root))
        notes = []
        if splits:
            notes.append(f"one run from the split folders {', '.join(s.name + '/' for s in splits)}")
        note = unread_note([f for f in files if f not in inputs and f not in extra], folder, "not TensorBoard events")
        if note:
            notes.append(note)
        return Claim(runs=(source,), owned_dirs=(folder, *splits) if splits else (), notes=tuple(notes))

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        run = new_run(source, ctx, title=source.path.name)
        events = read_events(source, ctx)
        if events is None:
            run.notices.append(MISSING_READER)
            ctx.diags.warning(source.path, "TensorBoard event files not read: the tensorboard package is missing")
            return run
        events.apply(run)
        return run


@dataclass
class Events:
    """What the event files of one run hold, before it becomes a Run."""

    builder: SeriesBuilder
    config: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)  # plugin -> values not drawn
    notices: list[str] = field(default_factory=list)
    points: int = 0

    def apply(self, run: Run) -> None:
        run.metrics = self.builder.finish()
        for key, value in self.config.items():
            run.config.setdefault(key, value)
        for key, value in self.model.items():
            run.model.setdefault(key, value)
        run.notices.extend(self.notices)
        if self.texts:
            shown = ", ".join(
                f"{t} ('{v[:40]}{'…' if len(v) > 40 else ''}')" for t, v in sorted(self.texts.items())[:6]
            )
            run.notices.append(f"Text summaries, not drawn: {shown}.")
        if self.skipped:
            kinds = ", ".join(f"{n} {k} value(s)" for k, n in sorted(self.skipped.items()))
            run.notices.append(f"TensorBoard data that obs does not draw: {kinds}.")
        if not run.metrics.series:
            run.diagnostics.warning(run.source_dir, "no scalars were read from the TensorBoard event files")


def read_events(source: RunSource, ctx: LoadContext, prefix_splits: bool = True) -> Events | None:
    """Every event file of `source` in time order (None when TensorBoard's reader is not installed)."""
    try:
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    except ImportError:
        return None
    folder = source.path
    events = Events(SeriesBuilder(folder, ctx.diags, step_key="step", same_step=ctx.config.same_step))
    files = [f for f in source.files if is_event_file(f)]
    by_dir: dict[Path, list[Path]] = {}
    for f in files:
        by_dir.setdefault(f.parent, []).append(f)
    for directory, group in sorted(by_dir.items()):
        prefix = f"{directory.name}/" if prefix_splits and directory != folder and directory.name in SPLIT_DIRS else ""
        points: dict[str, list[tuple[float, float]]] = {}
        high = -1.0
        for path in sorted(group):
            first: float | None = None
            records = 0
            try:
                for event in EventFileLoader(str(path)).Load():
                    records += 1
                    if not event.HasField("summary"):
                        continue
                    step = float(event.step)
                    if first is None:
                        first = step
                        if step <= high:
                            dropped = _purge(points, step)
                            events.notices.append(
                                f"{path.name} restarts at step {event.step}: {dropped} point(s) logged earlier at "
                                "steps from there on were replaced by the new ones (as TensorBoard does)."
                            )
                    high = max(high, step)
                    for value in event.summary.value:
                        _value(events, points, prefix, step, value, ctx.diags, path)
            except Exception as exc:  # a damaged or cut-off file: keep what was read before it
                ctx.diags.warning(
                    path,
                    f"event file could not be read to its end ({type(exc).__name__}); "
                    "the events before the damage were kept",
                )
            else:
                if records == 0 and _size(path) > 0:  # TensorBoard's reader stops at damage without a word
                    ctx.diags.warning(
                        path,
                        f"no event record could be read from this {_size(path):,}-byte file (damaged, cut off at "
                        "its first record, or not a TensorBoard event file)",
                    )
        for tag, pts in points.items():
            for step, value in pts:
                events.builder.add({"step": step, tag: value})
                events.points += 1
    for yaml_file in (f for f in source.files if f.name == HPARAMS_YAML):
        add_hparams(events.config, yaml_file, ctx.diags)
    return events


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _purge(points: dict[str, list[tuple[float, float]]], step: float) -> int:
    dropped = 0
    for tag, pts in points.items():
        keep = [p for p in pts if p[0] < step]
        dropped += len(pts) - len(keep)
        points[tag] = keep
    return dropped


def _value(
    events: Events,
    points: dict[str, list[tuple[float, float]]],
    prefix: str,
    step: float,
    value: Any,
    diags: Diagnostics,
    path: Path,
) -> None:
    from tensorboard.util import tensor_util

    plugin = value.metadata.plugin_data.plugin_name
    tag = f"{prefix}{value.tag}"
    if plugin == "scalars" and value.HasField("tensor"):
        try:
            number = float(tensor_util.make_ndarray(value.tensor))
        except (TypeError, ValueError):
            events.skipped["unreadable scalar"] += 1
            return
        points.setdefault(tag, []).append((step, number))
    elif plugin == "hparams":
        _hparams(events, value.metadata.plugin_data.content)
    elif plugin == "text" and value.HasField("tensor"):
        try:
            raw = tensor_util.make_ndarray(value.tensor).reshape(-1)
        except (TypeError, ValueError):
            events.skipped["unreadable text"] += 1
            return
        text = "\n".join(t.decode("utf-8", "replace") if isinstance(t, bytes) else str(t) for t in raw)
        name = value.tag.split("/")[0]
        mapping = _mapping(text) if name in CONFIG_TEXT_TAGS else None
        if mapping is not None:
            (events.model if name == "model_config" else events.config).update(_plain(mapping))
        else:
            events.texts[tag] = text
    else:
        events.skipped[plugin or "untyped"] += 1


def _hparams(events: Events, content: bytes) -> None:
    from tensorboard.plugins.hparams import plugin_data_pb2

    try:
        data = plugin_data_pb2.HParamsPluginData.FromString(content)
    except Exception:
        events.skipped["unreadable hparams"] += 1
        return
    if not data.HasField("session_start_info"):
        return
    for key, value in data.session_start_info.hparams.items():
        kind = value.WhichOneof("kind")
        if kind == "number_value":
            number = value.number_value
            events.config[key] = int(number) if float(number).is_integer() and abs(number) < 2**53 else number
        elif kind == "string_value":
            events.config[key] = value.string_value
        elif kind == "bool_value":
            events.config[key] = value.bool_value


def _mapping(text: str) -> dict[str, Any] | None:
    """A text summary that is a JSON (or YAML) mapping: HF's `args` (TrainingArguments as JSON), ..."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").strip()
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None
    return data if isinstance(data, dict) else None


def _plain(mapping: dict[str, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in mapping.items()}


# --------------------------------------------------------------------------- merged into another format's run


def hf_name(tag: str) -> str:
    """The trainer-state name of a tag HF Trainer's TensorBoard callback wrote (`eval/loss` -> `eval_loss`)."""
    for prefix, replacement in HF_PREFIXES:
        if tag.startswith(prefix):
            return replacement + tag[len(prefix) :]
    return tag


def merge_into(run: Run, source: RunSource, ctx: LoadContext) -> None:
    """Event files found inside another format's run folder (HF Trainer's `runs/<date>/`): their configuration
    (TrainingArguments, model config, hparams) and every scalar the run does not already log."""
    events = read_events(source, ctx, prefix_splits=False)
    if events is None:
        run.notices.append(MISSING_READER)
        return
    metrics = events.builder.finish()
    have = set(run.metrics.series) if run.metrics is not None else set()
    added, same = [], 0
    for tag, series in sorted(metrics.series.items()):
        if hf_name(tag) in have or tag in have:
            same += 1
            continue
        if run.metrics is not None:
            run.metrics.series[tag] = series
            added.append(tag)
    for key, value in events.config.items():
        run.config.setdefault(key, value)
    for key, value in events.model.items():
        run.model.setdefault(key, value)
    run.notices.extend(events.notices)
    rel = ", ".join(sorted({f.parent.name + "/" for f in source.files if is_event_file(f)}))
    run.notices.append(
        f"TensorBoard events beside the trainer state ({rel}) were read too: "
        f"{len(events.config)} configuration key(s); {same} scalar tag(s) repeat the trainer state's log"
        + (f"; {len(added)} more added ({', '.join(added[:6])}{' …' if len(added) > 6 else ''})" if added else "")
        + "."
    )
