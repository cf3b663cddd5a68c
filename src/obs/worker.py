"""The build's worker processes: each one builds whole runs with `pipeline.build_run`.

A worker receives the build's context once, through the pool's initializer (`start`), not per
task: under `spawn` (macOS, Windows) that is one pickled `WorkerContext` per process, under `fork`
a copy-on-write page or two. Tasks then carry only a planned run, its baseline digest's path and
its input hash, and return small picklable results. The same `process` runs inline for small
builds, so the two paths cannot differ.

A worker must not outlive the build: it watches its parent and exits when the parent is gone
(`_watch_parent`), so a killed `obs build` leaves no process behind holding the output pipe.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from obs.analysis.recipes import RecipeLevel
from obs.pipeline import RunResult, SourceTree, build_run, read_digest, summaries_of
from obs.plan import PlannedRun
from obs.render.site import Renderer

PARENT_CHECK_SECONDS = 1.0


@dataclass
class WorkerContext:
    """Everything every run of one build needs; plain data, so it pickles under spawn."""

    tree: SourceTree
    staging: Path
    template_cache: Path | None = None
    parent_pid: int | None = None
    _renderer: Renderer | None = field(default=None, repr=False, compare=False)

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer = Renderer(self.tree.meta, self.template_cache)
        return self._renderer

    def write(self, rel: str, data: bytes) -> None:
        target = self.staging / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


_CONTEXT: WorkerContext | None = None


def start(ctx: WorkerContext | None) -> None:
    """Pool initializer (and the inline path's setup): remember the build's context in this process."""
    global _CONTEXT
    _CONTEXT = ctx
    if ctx is not None and ctx.parent_pid is not None and ctx.parent_pid != os.getpid():
        # A terminal's Ctrl-C reaches the whole process group: the build process stops the pool and
        # says so once; a worker prints nothing. SIGTERM ends a worker at once.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        threading.Thread(target=_watch_parent, args=(ctx.parent_pid,), daemon=True).start()


def process(
    planned: PlannedRun,
    baseline_path: Path | None,
    input_hash: str,
    frozen_path: Path | None = None,
    recipe: RecipeLevel | None = None,
    gate_others: Mapping[str, bytes] | None = None,
) -> RunResult:
    """Build one run in this process (the pool's task); `frozen_path` is the spec's frozen baseline's digest,
    `recipe` the run's recipe-level result, `gate_others` the summaries (JSON) of the runs obs.yaml's gates read
    (`obs.build`)."""
    ctx = _CONTEXT
    if ctx is None:
        raise RuntimeError("worker context not set")
    return build_run(
        ctx.tree,
        planned,
        read_digest(baseline_path),
        input_hash,
        ctx.renderer,
        ctx.write,
        frozen=read_digest(frozen_path),
        recipe=recipe,
        gate_others=summaries_of(gate_others),
    )


def _watch_parent(parent_pid: int) -> None:
    """Exit as soon as the build process that started this worker is gone (killed, crashed).

    Under fork and spawn the build is this process's parent, and a parent's death changes our
    parent id (we are re-parented). Under forkserver the parent is the fork server, so the build's
    own pid is asked instead.
    """
    direct = os.getppid() == parent_pid
    while True:
        time.sleep(PARENT_CHECK_SECONDS)
        if direct:
            if os.getppid() != parent_pid:
                os._exit(1)
            continue
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:  # the pid now belongs to someone else's process: ours is gone
            os._exit(1)
