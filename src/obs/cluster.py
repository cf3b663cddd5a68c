"""Builds on a Dask cluster (`obs build --dask ADDRESS`): each run's pipeline as a dask.distributed task.

The per-run pipeline (`pipeline.build_run`) is already spawn-safe and returns small serialised results,
so a Dask worker runs exactly what a pool process runs; only two things differ, because a worker may
be on another machine:

- it cannot write into the build's staging folder, so it hands the run's files back with its result
  (`RunResult.payload`) and the build writes them, through the same `Staging.write` as every page;
- it cannot read the build cache, so a run's baseline digest travels as bytes with the task.

The source tree (settings, discovery, plan) is scattered to every worker once, like the process pool's
initializer; workers read the run files themselves, at the paths the build found them, so a remote
worker needs the source mounted at the same path (checked before the first task, with every worker
named that cannot see it), and the same obs (its version and code hash: checked too, since a worker
with other code would publish other bytes). A bucket source (`obs build s3://... --dask`) needs no such
mount: each task fetches its run's objects from the bucket into its worker's own folder and reads them
there (`objectstore.BucketRuns`, `RemoteContext.localized`).

dask is an optional extra (`obs[dask]`) and is imported only here, only when `--dask` is
given: `import distributed` costs ~1-2 s.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from obs import __version__
from obs.adapters.base import RunSource
from obs.analysis.recipes import RecipeLevel
from obs.cache import tree_hash
from obs.ledger import LEDGER_FILE
from obs.pipeline import RunResult, SourceTree, build_run, parse_digest, summaries_of
from obs.plan import PlannedRun
from obs.render.site import Renderer
from obs.resources import package_dir, templates_dir

LOCAL = "local"  # `--dask local`: a LocalCluster on this machine, one single-threaded worker process per job
MISSING = (
    "--dask needs dask.distributed, which is not installed: pip install 'dask[distributed]' into obs's "
    "environment (the obs[dask] extra)"
)


CONNECT_TIMEOUT = "20s"  # how long a scheduler that does not answer is waited for
FETCHED: list[str] = []  # objects this process's tasks downloaded from a bucket (tests read it, in threads mode)

if TYPE_CHECKING:
    from obs.objectstore import BucketRuns


class ClusterError(Exception):
    """The cluster cannot build this site (dask missing, no scheduler at the address, a worker that
    cannot see the source or runs other obs code); the message is one line for the command line."""


@dataclass
class RemoteContext:
    """What every task of one build needs, scattered to each worker once. The renderer (the compiled
    templates) is made on a worker at its first run and kept for the next ones; it never travels."""

    tree: SourceTree
    bucket: BucketRuns | None = None  # a bucket source: each task reads its run's objects from the bucket
    _renderer: Renderer | None = field(default=None, repr=False, compare=False)

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer = Renderer(self.tree.meta)  # no bytecode cache: the build's is on another machine
        return self._renderer

    def __getstate__(self) -> dict[str, Any]:
        return {"tree": self.tree, "bucket": self.bucket, "_renderer": None}

    def localized(self, planned: PlannedRun) -> tuple[SourceTree, PlannedRun]:
        """The tree and run as this worker reads them: its run's objects (and the decision ledger) fetched
        from the bucket into the worker's own folder, every path of the run moved there."""
        assert self.bucket is not None
        root, local = self.tree.root, self.bucket.local_root()
        rels = [path.relative_to(root).as_posix() for path in _files(planned.source)]
        FETCHED.extend(self.bucket.fetch([*rels, LEDGER_FILE]))
        return replace(self.tree, root=local), replace(planned, source=_moved(planned.source, root, local))


def _files(source: RunSource) -> list[Path]:
    """Every file a run is read from: its own, its side logs, and those of the formats merged into it
    (the one a run.yaml lies over, other formats' files in its folder)."""
    out = [*source.files, *source.side]
    for other in (source.base, *source.extras):
        if other is not None:
            out += _files(other)
    return out


def _moved(source: RunSource, root: Path, local: Path) -> RunSource:
    """`source` with every path it holds moved from below `root` to below `local`."""

    def move(path: Path) -> Path:
        return local / path.relative_to(root)

    return replace(
        source,
        path=move(source.path),
        files=tuple(move(p) for p in source.files),
        side=tuple(move(p) for p in source.side),
        base=_moved(source.base, root, local) if source.base is not None else None,
        extras=tuple(_moved(x, root, local) for x in source.extras),
    )


def _checked(address: str) -> str:
    """A scheduler address Dask can dial (`tcp://host:8786`, `host:8786`), or a one-line error: a Client
    given a malformed one fails deep inside its event loop and hangs the interpreter's exit."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address if "://" in address else f"tcp://{address}")
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except ValueError as exc:
        raise ClusterError(
            f"--dask {address}: not a Dask scheduler address (tcp://host:8786, or 'local' for a LocalCluster): {exc}"
        ) from exc
    return address


def build_remote(
    ctx: RemoteContext,
    planned: PlannedRun,
    baseline: bytes | None,
    input_hash: str,
    frozen: bytes | None = None,
    recipe: RecipeLevel | None = None,
    gate_others: Mapping[str, bytes] | None = None,
) -> RunResult:
    """A Dask task: one run through the pipeline, its files returned with its result instead of written."""
    files: list[tuple[str, bytes]] = []
    tree = ctx.tree
    if ctx.bucket is not None:
        tree, planned = ctx.localized(planned)
    result = build_run(
        tree,
        planned,
        parse_digest(baseline),
        input_hash,
        ctx.renderer,
        lambda rel, data: files.append((rel, data)),
        frozen=parse_digest(frozen),
        recipe=recipe,
        gate_others=summaries_of(gate_others),
    )
    result.payload = files
    return result


def _read_bytes(path: Path | None) -> bytes | None:
    """A digest's bytes; None when there is none or it went away (read_digest's answer: built without it)."""
    try:
        return path.read_bytes() if path is not None else None
    except OSError:
        return None


def identity(root: str) -> tuple[str, str, str, bool]:
    """What must match between the build and a worker: obs's version, its code and templates, and
    whether the source folder is visible at the build's path (run on each worker before any task)."""
    return __version__, tree_hash(package_dir(), "*.py"), tree_hash(templates_dir()), os.path.isdir(root)


class DaskPool:
    """The build's pool on a Dask cluster: `submit` returns a concurrent.futures.Future of the run's
    `RunResult`, so the build waits on it as on the process pool's futures."""

    def __init__(self, address: str, jobs: int | None, tree: SourceTree, bucket: BucketRuns | None = None) -> None:
        try:
            import distributed
        except ImportError as exc:
            raise ClusterError(MISSING) from exc
        self.cluster: Any = None
        self._held: set[Any] = set()  # dask futures not yet done: a future nobody holds is cancelled
        self._lock = threading.Lock()
        self._slots: int | None = None
        self._token = uuid.uuid4().hex[:12]  # task keys of two builds on one cluster never meet
        try:
            if address == LOCAL:
                self.cluster = distributed.LocalCluster(
                    n_workers=jobs or os.cpu_count() or 1,
                    threads_per_worker=1,  # the pipeline is written for one run per process at a time
                    processes=True,
                    dashboard_address=None,
                    silence_logs=50,  # logging.CRITICAL: Dask's own log lines are not the build's output
                )
                self.client = distributed.Client(self.cluster, set_as_default=False)
            else:
                self.client = distributed.Client(_checked(address), timeout=CONNECT_TIMEOUT, set_as_default=False)
        except OSError as exc:  # no scheduler there, or it did not answer in time
            self.close()
            raise ClusterError(f"--dask {address}: cannot reach a Dask scheduler there ({exc})") from exc
        try:
            self._check_workers(tree, needs_source=bucket is None)
            self.context = self.client.scatter(RemoteContext(tree.for_workers(), bucket), broadcast=True, hash=False)
        except BaseException:
            self.close()
            raise

    def _check_workers(self, tree: SourceTree, *, needs_source: bool = True) -> None:
        """Refuse a cluster whose workers would publish other bytes than this process would."""
        if not self.client.scheduler_info().get("workers"):
            self.client.wait_for_workers(1, timeout=60)
        mine = (__version__, tree_hash(package_dir(), "*.py"), tree_hash(templates_dir()))
        for worker, theirs in sorted(self.client.run(identity, os.fspath(tree.root)).items()):
            if tuple(theirs[:3]) != mine[:3]:
                raise ClusterError(
                    f"--dask: worker {worker} runs other obs code (version {theirs[0]}) than this build "
                    f"(version {mine[0]}): install the same obs on every worker"
                )
            if needs_source and not theirs[3]:
                raise ClusterError(
                    f"--dask: worker {worker} cannot see the source folder {tree.root}: workers read the runs "
                    "themselves, so mount it at the same path on every worker"
                )

    @property
    def slots(self) -> int:
        """Runs the cluster builds at once: its workers' threads (asked once; a cluster may grow later)."""
        if self._slots is None:
            self._slots = max(1, sum(self.client.nthreads().values()))
        return self._slots

    def submit(
        self,
        planned: PlannedRun,
        baseline: Path | None,
        input_hash: str,
        frozen: Path | None = None,
        recipe: RecipeLevel | None = None,
        gate_others: Mapping[str, bytes] | None = None,
    ) -> cf.Future[RunResult]:
        digest, frozen_digest = _read_bytes(baseline), _read_bytes(frozen)
        task = self.client.submit(
            build_remote,
            self.context,
            planned,
            digest,
            input_hash,
            frozen_digest,
            recipe,
            gate_others,
            key=f"obs-run-{planned.slug}-{self._token}",
            pure=False,
        )
        out: cf.Future[RunResult] = cf.Future()
        with self._lock:
            self._held.add(task)

        def done(task: Any) -> None:  # in the client's callback thread
            with self._lock:
                self._held.discard(task)  # the result leaves the worker's memory once read here
            try:
                if task.status == "finished":
                    out.set_result(task.result())
                elif task.status == "cancelled":
                    out.cancel()
                    out.set_running_or_notify_cancel()
                else:
                    out.set_exception(task.exception() or RuntimeError(f"Dask task for {planned.id} failed"))
            except BaseException as exc:  # a result that could not be fetched
                if not out.done():
                    out.set_exception(exc)

        task.add_done_callback(done)
        return out

    def close(self, *, failed: bool = False) -> None:
        """Stop the tasks still queued after a failure or Ctrl-C, then disconnect (and stop a local cluster)."""
        client = getattr(self, "client", None)
        if client is not None:
            if failed:
                with self._lock:
                    held = list(self._held)
                if held:
                    client.cancel(held)
            client.close()
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
