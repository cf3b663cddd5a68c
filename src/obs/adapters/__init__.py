"""The registry of input formats: the order discovery asks them in, and how formats combine.

Discovery asks each adapter in `ADAPTERS`, in order; the first that recognises a folder takes it.
`native` comes first so that a `run.yaml` placed beside another format's files (to add a
hypothesis or a decision to, say, a Hugging Face output folder) makes the folder a native run; the
generic JSON-log reader comes last, since it recognises the most folders.

`LEARNING` is not a run format: discovery hands it the agent-learning exports of every folder
(sessions, per-key summaries, playbooks; told by content), which the run formats leave alone.

Combining formats is this module's job, not any adapter's, so no adapter imports another (the
way Pelican keeps its readers apart): a run.yaml is laid over the data of the first other format
that recognises its folder, and a log that run.yaml names with `metrics_file:` is read by the
generic reader.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from obs.adapters import native, tensorboard
from obs.adapters.agent_sessions import AgentSessionsAdapter
from obs.adapters.base import Adapter, Claim, Holds, LoadContext, RunSource
from obs.adapters.csv_logs import CsvLogAdapter
from obs.adapters.generic_jsonl import GenericJsonlAdapter, read_log_into
from obs.adapters.hf_trainer import HfTrainerAdapter
from obs.adapters.lm_eval import LmEvalAdapter
from obs.adapters.mlflow import MlflowAdapter
from obs.adapters.native import NativeAdapter
from obs.adapters.tensorboard import TensorboardAdapter
from obs.adapters.wandb import WandbAdapter
from obs.model import Run


class HfTrainerWithEvents:
    """HF Trainer output folders, with the TensorBoard events its callback writes (`runs/<date>/`) merged in:
    one run, its configuration from the events' `args` and `model_config`, every tag the state lacks."""

    name = HfTrainerAdapter.name
    holds = HfTrainerAdapter.holds

    def __init__(self) -> None:
        self.hf = HfTrainerAdapter()

    def claim(self, folder: Path, root: Path) -> Claim | None:
        claim = self.hf.claim(folder, root)
        if claim is None or len(claim.runs) != 1:
            return claim
        dirs = tensorboard.event_dirs_below(folder, root)
        if not dirs:
            return claim
        (source,) = claim.runs
        files = tuple(f for d in dirs for f in tensorboard.event_files(d, root))
        events = RunSource(TensorboardAdapter.name, folder, files, default_id=source.default_id)
        where = ", ".join(sorted({d.relative_to(folder).as_posix() + "/" for d in dirs}))
        note = f"TensorBoard events merged into this run: {len(files)} file(s) in {where}"
        merged = replace(source, files=(*source.files, *files), extras=(events,))
        return Claim(runs=(merged,), owned_dirs=claim.owned_dirs, notes=(*claim.notes, note))

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        run = self.hf.load(source, ctx)
        for extra in source.extras:
            tensorboard.merge_into(run, extra, ctx)
        return run


OTHER_FORMATS: tuple[Adapter, ...] = (
    HfTrainerWithEvents(),
    MlflowAdapter(),
    LmEvalAdapter(),
    WandbAdapter(),
    TensorboardAdapter(),
    CsvLogAdapter(),
    GenericJsonlAdapter(),
)


def overlaid_source(source: RunSource, root: Path) -> RunSource | None:
    """The other format's run beside this run.yaml (a trainer_state.json, ...), if there is one.

    The other formats are asked in their order; the first that finds exactly one run in this
    folder, made of files the native format does not read itself, provides the data. A folder
    with its own metrics (metrics.jsonl, or a run.yaml naming a metrics_file) is not offered to
    the generic log reader.
    """
    folder = source.path
    if native.only_native_files(source.files):
        return None
    skip_generic = native.has_own_metrics(folder, root)
    for adapter in OTHER_FORMATS:
        if skip_generic and adapter.name == GenericJsonlAdapter.name:
            continue
        claim = adapter.claim(folder, root)
        if claim is None:
            continue
        here = [s for s in claim.runs if s.path == folder]
        if len(here) == 1 and any(f.name not in native.NATIVE_FILES for f in here[0].files):
            return here[0]
    return None


def _load_other(source: RunSource, ctx: LoadContext) -> Run:
    """The run another format reads from its files (the data a run.yaml is laid over)."""
    return adapter_named(source.adapter).load(source, ctx)


ADAPTERS: list[Adapter] = [
    NativeAdapter(find_base=overlaid_source, load_base=_load_other, read_log=read_log_into),
    *OTHER_FORMATS,
]
LEARNING = AgentSessionsAdapter()  # agent sessions by learning key: not runs (obs.agents)


def holds_of(adapter: str) -> Holds:
    """What the files of the format that holds a run's data can hold, for a `Run.adapter`: for a
    run.yaml laid over another format's files (`native+hf_trainer`), that other format's."""
    name = adapter.split("+")[-1]
    found = next((a for a in ADAPTERS if a.name == name), None)
    return found.holds if found is not None else NativeAdapter.holds


def adapter_named(name: str) -> Adapter:
    for adapter in ADAPTERS:
        if adapter.name == name:
            return adapter
    raise KeyError(name)
