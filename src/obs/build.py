"""The build pipeline: discover -> plan -> per run (reuse, or load -> analyse -> render) -> index pages -> swap.

Runs are processed in baseline-first order, in parallel over all cores, each one dropped after its
page is written: only small summaries and digests stay in memory. A run is rebuilt only when its
cache key changed: its input files, the settings, the templates, the obs version, or the digest of
its baseline. Reused runs are hard-linked from the previous site into the new one, so a rebuild
after one new run touches one run folder plus the index pages, and a build with nothing to do
imports nothing heavy and writes nothing.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson

from obs import __version__, ledger, quickcheck, worker
from obs.analysis.recipes import RecipePair
from obs.cache import BuildCache, LiveNames, RunEntry, cache_dir_for, exact_bytes, hash_json, hash_json_each, tree_hash
from obs.config import SiteConfig
from obs.diagnostics import Diagnostic, Diagnostics, sort_diagnostics
from obs.hooks import BuildPlugin
from obs.lazysummary import LazySummary, lazy_summaries
from obs.manifest import manifest_files
from obs.pipeline import RunResult, SourceTree, gate_refs, recipe_pairs
from obs.plan import LET_GO, BuildPlan, PlannedRun
from obs.resources import package_dir, templates_dir
from obs.safepaths import remembered_locations
from obs.safeyaml import forget_peeks
from obs.sitemodel import RunSummary, SummaryError
from obs.write import MARKER, Staging, check_output_location, output_location, output_lock, static_unchanged

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from obs.cluster import DaskPool

PARALLEL_MIN_RUNS = 3  # below this, starting worker processes costs more than it saves
# Runs handed to the workers at a time, per worker: enough that none waits for its next run, few enough that
# the pool's queue and the futures waited on stay small (every ready run was submitted at once: at 100,000 runs
# each finished run made the build wait on ~10,000 futures and scan every pending run, issue 32).
IN_FLIGHT_PER_WORKER = 4


@dataclass
class BuildOptions:
    source: Path
    out: Path
    strict: bool = False
    quiet: bool = False
    clean: bool = False
    jobs: int | None = None
    progress: bool = False
    cache_dir: Path | None = None
    start_method: str | None = None  # multiprocessing start method; None: the platform's default
    force: bool = False  # publish even when the new site has no runs or lost more than half (obs.write)
    # The caller's quickcheck.snapshot of this source and output (obs.cli takes one to see whether anything
    # changed), saved instead of walking the tree again. One taken before the build started is always safe:
    # a file changed since then differs from it, and the next build reads the file again.
    snapshot: dict[str, Any] | None = None
    # A Dask scheduler's address, or "local" for a LocalCluster: runs are built as dask.distributed tasks
    # (obs.cluster) instead of in this machine's process pool. The site's bytes are the same.
    dask: str | None = None
    # with `dask` and a bucket source (obs.objectstore.BucketRuns): workers read each run's objects from the bucket
    bucket: Any = None


@dataclass
class BuildResult:
    runs: int = 0
    pages: int = 0
    built: int = 0
    reused: int = 0
    seconds: float = 0.0
    changed: bool = True
    complete: bool = True  # every input file could be read (see RunResult.complete)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    summaries: list[RunSummary] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # files of the source no format read (relative to it)
    hidden: list[str] = field(default_factory=list)  # what was read and not shown on purpose (a deleted run), why

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "warning")

    def exit_code(self, strict: bool) -> int:
        if self.errors or (strict and self.warnings):
            return 1
        return 0


def environment_key(cfg: SiteConfig) -> str:
    """What every page depends on besides its own inputs: obs (its version and its code, so an
    edited checkout never serves pages made by older code), the templates and the settings."""
    return hash_json([__version__, tree_hash(package_dir(), "*.py"), tree_hash(templates_dir()), cfg.fingerprint()])


def layout_key(tree: SourceTree) -> str:
    """The page names of every spec and campaign, and whether there are agent-learning pages: part of every
    run's key (its page links to them)."""
    return hash_json(
        [sorted(tree.layout.specs.items()), sorted(tree.layout.campaigns.items()), bool(tree.found.learning)]
    )


def run_key(
    planned: PlannedRun,
    env: str,
    inputs: str,
    baseline_digest: str | None,
    tree: SourceTree,
    layout: str,
    frozen_digest: str | None = None,
    recipe: str | None = None,
    gates: str | None = None,
) -> str:
    """What a run's files depend on; `layout` is `layout_key(tree)`, made once a build; `frozen_digest` the
    digest hash of the spec's frozen baseline the rung is also tested against (`planned.frozen`); `recipe` the
    token of the run's recipe-level result (`recipe_token`): made from the summaries of its sibling seeds and its
    baseline's, so a run's page is built again when one of them changes what it shows; `gates` the token of the
    summaries its gate strip reads (`_Scheduler.gate_others`)."""
    found = tree.found
    spec = found.specs.get(planned.source.spec or "")
    campaign = found.campaigns.get(planned.source.campaign or "")
    return hash_json(
        [
            env,
            planned.id,
            planned.slug,
            planned.baseline,
            inputs,
            baseline_digest,
            layout,
            [spec.primary_metric, spec.min_effect] if spec else None,
            [
                campaign.primary_metric,
                campaign.final_window,
                campaign.alpha,
                campaign.min_effect,
                repr(campaign.metrics),
            ]
            if campaign
            else None,
            # the run's place as discovery found it (obs.layout: a campaign.yaml's names can change it)
            [planned.source.campaign, planned.source.condition, planned.source.seed],
            [planned.frozen, frozen_digest, spec.contract] if planned.frozen and spec else None,
            ledger.entry_key(found.root, planned.id),  # a decision recorded with obs decide
            recipe,
            gates,
        ]
    )


def recipe_token(pair: RecipePair | None) -> str | None:
    """What a run's recipe-level result is made of (seeds, values, pages, settings): its page depends on it."""
    return pair.token() if pair is not None else None


def cached_summaries(cache: BuildCache, plan: BuildPlan) -> list[RunSummary]:
    """The previous build's summaries of the runs still planned (those that still read), each decoded when read
    (obs.lazysummary)."""
    out = []
    for planned in plan.runs:
        entry = cache.runs.get(planned.id)
        if entry is None:
            continue
        try:
            out.append(LazySummary(entry.summary_source()))
        except SummaryError:
            continue
    return cast("list[RunSummary]", out)


class Progress:
    """A one-line progress bar on a terminal for builds that take more than a moment."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled and total > 0
        self.started = time.perf_counter()
        self.shown = False

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled or time.perf_counter() - self.started < 1.0:
            return
        width = 28
        filled = int(width * self.done / self.total)
        bar = "█" * filled + "·" * (width - filled)
        sys.stderr.write(f"\r  building [{bar}] {self.done}/{self.total} {label[:40]:<40}")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


@dataclass
class _Scheduler:
    """Runs whose baseline is done are ready; each is reused from the cache or (re)built."""

    tree: SourceTree
    cache: BuildCache
    env: str
    out: Path
    digest_hashes: dict[str, str | None] = field(default_factory=dict)
    entries: dict[str, RunEntry] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)  # run id -> input hash, once per build
    checked: dict[tuple[str, str], RunEntry | None] = field(default_factory=dict)  # (run id, key) -> reusable entry
    layout: str | None = None  # layout_key(tree), made at the first run's key
    # run id -> what its recipe-level result is made of, handed to its page (judged when it is built): first as
    # the previous build's summaries predict it, then as this build's make it (`_rebuild_recipes`)
    recipes: dict[str, RecipePair] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)  # run id -> "built" or "reused" (this build)
    # run id -> the token of the summaries its gate strip was judged with (`gate_others`): this build's when the
    # run it reads is done, else the previous build's; `_rebuild_gates` builds again the runs it then misjudged
    gate_tokens: dict[str, str | None] = field(default_factory=dict)

    def release(self) -> None:
        """Forget what only the run passes read (each run's input hash, digest hash, how it was done, its gate
        token, its memo and its recipe): ~0.25 KB a run that the page phase held for nothing (issue 32). The
        entries stay: the pages are made from them."""
        for held in (self.digest_hashes, self.inputs, self.checked, self.recipes, self.how, self.gate_tokens):
            held.clear()
        forget_peeks()  # the run.yaml files planning peeked at

    def gate_others(self, planned: PlannedRun, final: bool = False) -> dict[str, bytes]:
        """The summaries (JSON) of the runs obs.yaml's gates read for this run: this build's, else (not `final`)
        the previous build's as a prediction; a run with neither is left out (its gates read n/a)."""
        if not self.tree.cfg.gates:
            return {}
        out = {}
        for rid in gate_refs(self.tree, planned.id, planned.baseline, planned.source.spec):
            entry = self.entries.get(rid) or (None if final else self.cache.runs.get(rid))
            if entry is not None:
                out[rid] = bytes(entry.summary)
        return out

    def gate_token(self, planned: PlannedRun, final: bool = False) -> str | None:
        others = self.gate_others(planned, final)
        if not others:
            return None
        return hash_json(sorted((rid, hashlib.sha256(data).hexdigest()) for rid, data in others.items()))

    def baseline_digest_path(self, planned: PlannedRun, base: str | None = None) -> Path | None:
        """Where the baseline's digest is (or `base`'s: the frozen baseline's), made by this build or kept from
        the previous one."""
        base = base or planned.baseline
        if not base or base not in self.tree.plan.slugs:
            return None
        slug = self.tree.plan.slugs[base]
        for path in (self.cache.fresh_digest_path(slug), self.cache.digest_path(slug)):
            if path.is_file():
                return path
        return None

    def key_for(self, planned: PlannedRun) -> tuple[str, str]:
        inputs = self.inputs.get(planned.id)
        if inputs is None:
            inputs = self.inputs[planned.id] = self.cache.input_hash(planned.source.files, self.tree.root)
        base_hash = self.digest_hashes.get(planned.baseline) if planned.baseline else None
        frozen_hash = self.digest_hashes.get(planned.frozen) if planned.frozen else None
        if self.layout is None:
            self.layout = layout_key(self.tree)
        recipe = recipe_token(self.recipes.get(planned.id))
        gates = self.gate_token(planned)
        if gates is not None:  # most runs read no other run's summary: nothing kept for them
            self.gate_tokens[planned.id] = gates
        else:
            self.gate_tokens.pop(planned.id, None)
        key = run_key(planned, self.env, inputs, base_hash, self.tree, self.layout, frozen_hash, recipe, gates)
        return key, inputs

    def reusable(self, planned: PlannedRun, key: str) -> RunEntry | None:
        """The cached entry of a run whose key is unchanged and whose files are all in the current site.

        Asked twice a build for most runs (when the build decides whether there is anything to do, and
        when it reuses them), so the answer is remembered for the key it was given."""
        memo = (planned.id, key)
        if memo not in self.checked:
            self.checked[memo] = self._reusable(planned, key)
        return self.checked[memo]

    def _reusable(self, planned: PlannedRun, key: str) -> RunEntry | None:
        entry = self.cache.runs.get(planned.id)
        if entry is None or entry.key != key or entry.slug != planned.slug:
            return None
        out = os.fspath(self.out)
        if not all(os.path.isfile(f"{out}/{rel}") for rel in entry.files):
            return None
        if not self.cache.digest_path(planned.slug).is_file():
            return None
        try:
            RunSummary.from_json(entry.summary)
        except SummaryError:  # made by another version of the summary: rebuild
            return None
        return entry


def build_site(opts: BuildOptions, plugins: Sequence[BuildPlugin] = ()) -> BuildResult:
    """The whole build, under the output's lock: one build per output at a time, the cache only
    changed by it. `plugins` (`obs.hooks`) add publishing features; the core build writes runs,
    index, spec, campaign, ledger and across-runs pages and `index.json`."""
    if not opts.source.is_dir():
        return _build_site(opts, plugins)  # only reports the missing source: nothing is written
    check_output_location(opts.source.resolve(), opts.out)  # before the lock makes a folder beside it
    with output_lock(opts.out):
        return _build_site(opts, plugins)


def _build_site(opts: BuildOptions, plugins: Sequence[BuildPlugin]) -> BuildResult:
    """Plan, reuse or (re)build every run, then the pages made from summaries, then publish."""
    started = time.perf_counter()
    result = BuildResult()
    root = opts.source.resolve()
    out = output_location(opts.out)  # the output's link, not the version it points to now
    if not root.is_dir():
        top = Diagnostics(root=root)
        top.error(opts.source, "source folder does not exist")
        result.diagnostics = top.items
        return result
    check_output_location(root, opts.out)
    cache_dir = opts.cache_dir or cache_dir_for(out)
    # the no-op replay (obs.cli) snapshots with no options: a plugin with its defaults adds none
    options = {p.name: fp for p in plugins if (fp := p.fingerprint())}
    if opts.snapshot is not None and opts.cache_dir is None:
        before = {**opts.snapshot, "options": options}
    else:
        before = quickcheck.snapshot(root, out, cache_dir, templates_dir(), options, package_dir())
    cache = BuildCache.open(cache_dir, clean=opts.clean or not (out / MARKER).is_file(), site=opts.out)
    tree = SourceTree.open(root, exclude=(out, cache_dir.parent), peek=cache.peek_identity, claims=False)
    result.unread = tree.found.unread_rel()
    result.hidden = tree.found.hidden_rel()
    for plugin in plugins:
        plugin.on_tree(tree)
    sections = {k: v for p in plugins for k, v in p.manifest_sections().items()}  # index.json beyond the runs
    sched = _Scheduler(tree, cache, environment_key(tree.cfg), out)
    # A run page judged at the recipe level reads the summaries of other runs (its recipe's seeds and its
    # baseline's), which exist only once they are built: each run is built with the result the previous build's
    # summaries give, and those whose result then differs are built again (`_rebuild_recipes`).
    sched.recipes = recipe_pairs(tree, cached_summaries(cache, tree.plan))

    def annotate(summaries: list[RunSummary]) -> list[RunSummary]:
        for plugin in plugins:
            summaries = plugin.on_summaries(summaries)
        return summaries

    if _all_reusable(tree, sched):
        summaries = annotate(lazy_summaries(cache.runs[p.id].summary_source() for p in tree.plan.runs))
        pages_key = site_pages_key(sched.env, summaries, tree, sections)
        cached_pages = cache.pages.get("site")
        if (
            cached_pages
            and cached_pages.get("key") == pages_key
            and all((out / rel).is_file() for rel in cached_pages["files"])
            and static_unchanged(root, opts.out)
        ):
            _nothing_to_do(result, tree, cache, started)
            _remember(before, result, root, out, cache_dir, options)
            return result

    staging = Staging(opts.out)
    try:
        _build_runs(opts, result, sched, staging)
        _rebuild_recipes(opts, result, sched, staging)
        _rebuild_gates(opts, result, sched, staging)
        sched.release()
        live = release_sources(tree)
        all_diags: list[Diagnostic] = []
        held: list[bytes | Callable[[], bytes]] = []  # each summary read from the cache when a page asks for it
        kept: list[PlannedRun] = []
        for planned in tree.plan.runs:
            entry = sched.entries.get(planned.id)
            if entry is None:
                continue
            held.append(entry.summary_source())
            kept.append(planned)
            all_diags.extend(Diagnostic(**d) for d in entry.diagnostics)
        summaries = lazy_summaries(held, names=((p.id, p.slug) for p in kept))
        del held, kept
        all_diags.extend(tree.diags.items)
        result.summaries = annotate(summaries)
        result.runs = len(result.summaries)
        result.diagnostics = sort_diagnostics(all_diags)
        result.pages += _site_pages(result, cache, tree, sched.env, staging, out, sections)
        for plugin in plugins:
            result.pages += plugin.on_post_build(staging, result.summaries)
        staging.write(".nojekyll", b"")
        result.diagnostics = sort_diagnostics(result.diagnostics + staging.finish(root, clean=opts.clean))
        index_files = manifest_files(
            result.summaries,
            title=tree.cfg.title,
            specs=tree.found.specs,
            campaigns=tree.found.campaigns,
            errors=result.errors,
            warnings=result.warnings,
            not_read=result.unread,
            hidden=result.hidden,
            seed_levels=_seed_levels(staging),
            sections=sections,
            write=staging.write,  # the shards as they are made; index.json below, last
        )
        for rel in sorted(index_files, key=lambda rel: rel == MARKER):
            staging.write(rel, index_files.pop(rel))
        staging.commit(runs=result.runs, force=opts.force)
    except BaseException:
        staging.discard()
        raise
    cache.runs = dict(sched.entries)
    cache.commit_fresh_digests()
    cache.save(live)
    _prune_digests(cache, tree.plan)
    _remember(before, result, root, out, cache_dir, options)
    result.seconds = time.perf_counter() - started
    return result


def release_sources(tree: SourceTree) -> LiveNames:
    """The names of the files the runs read (which remembered file hashes the saved cache keeps), then every run's
    source let go: the pages are made from the summaries, and discovery's `RunSource` held for each run to the
    end of a build was ~0.5 KB (~50 MB at 100,000 runs, issue 32). A page that read one would fail loudly
    (`plan.LET_GO`), not read a default."""
    live = LiveNames(str(f) for p in tree.plan.runs for f in p.source.files)
    tree.found.runs.clear()
    for planned in tree.plan.runs:
        planned.source = LET_GO
    return live


def _all_reusable(tree: SourceTree, sched: _Scheduler) -> bool:
    """Whether every run is reusable, decided without building anything: a dependant's key needs its baseline's
    digest hash, which is only known up front when the baseline itself is reused."""
    unknown: set[str] = set()
    with remembered_locations():  # every input's real location, found once for all the runs below a folder
        for planned in tree.plan.runs:
            if any(dep in unknown for dep in planned.needs):
                unknown.add(planned.id)
                continue
            key, _ = sched.key_for(planned)
            entry = sched.reusable(planned, key)
            if entry is None:
                unknown.add(planned.id)
            else:
                sched.digest_hashes[planned.id] = entry.digest_hash
    return not unknown


def _rebuild_recipes(opts: BuildOptions, result: BuildResult, sched: _Scheduler, staging: Staging) -> None:
    """Build again the runs whose recipe-level result, made from this build's summaries, is not the one they
    were built with. A recipe's identity and its seeds' values do not depend on that result, so one pass settles
    it; a run's files from the first pass are taken out of the staging folder first."""
    built = [p for p in sched.tree.plan.runs if p.id in sched.entries]
    summaries = lazy_summaries(
        (sched.entries[p.id].summary_source() for p in built), names=((p.id, p.slug) for p in built)
    )
    del built
    final = recipe_pairs(sched.tree, summaries)
    redo = [
        p
        for p in sched.tree.plan.runs
        if p.id in sched.entries and recipe_token(final.get(p.id)) != recipe_token(sched.recipes.get(p.id))
    ]
    sched.recipes = final
    _redo(opts, result, sched, staging, redo)


def _rebuild_gates(opts: BuildOptions, result: BuildResult, sched: _Scheduler, staging: Staging) -> None:
    """Build again the runs whose gate strip read a summary that is not this build's final one (a run named by
    `run:ID.` built after it, or rebuilt for its recipe). A strip is not part of any summary: one pass settles it."""
    redo = [
        p
        for p in sched.tree.plan.runs
        if p.id in sched.entries and sched.gate_token(p, final=True) != sched.gate_tokens.get(p.id)
    ]
    _redo(opts, result, sched, staging, redo)


def _redo(opts: BuildOptions, result: BuildResult, sched: _Scheduler, staging: Staging, redo: list[PlannedRun]) -> None:
    """Build these runs again, their files from the first pass taken out of the staging folder first."""
    if not redo:
        return
    for planned in redo:
        for rel in sched.entries[planned.id].files:
            staging.remove(rel)
        if sched.how.pop(planned.id, None) == "built":
            result.built -= 1
        else:
            result.reused -= 1
    _build_runs(opts, result, sched, staging, only=redo)


def _seed_levels(staging: Staging) -> dict[str, Any]:
    """The seed-level results the site pages published (urls.SEED_LEVELS), for index.json."""
    from obs import urls

    try:
        data = orjson.loads((staging.path / urls.SEED_LEVELS).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember(
    before: dict[str, Any], result: BuildResult, root: Path, out: Path, cache_dir: Path, options: dict[str, Any]
) -> None:
    """Save the pre-build snapshot with this result, for the next build's quick check."""
    if not result.complete:
        quickcheck.forget(cache_dir)
        return
    quickcheck.save(
        cache_dir,
        {**before, "marker": quickcheck.site_state(out)},
        {
            "runs": result.runs,
            "diagnostics": [d.as_dict() for d in result.diagnostics],
            "unread": result.unread,
            "hidden": result.hidden,
        },
    )


def _nothing_to_do(result: BuildResult, tree: SourceTree, cache: BuildCache, started: float) -> BuildResult:
    all_diags = list(tree.diags.items)
    for planned in tree.plan.runs:
        entry = cache.runs[planned.id]
        result.summaries.append(cast("RunSummary", LazySummary(entry.summary_source())))
        all_diags.extend(Diagnostic(**d) for d in entry.diagnostics)
    result.runs = result.reused = len(tree.plan.runs)
    result.pages = 0
    result.changed = False
    result.diagnostics = sort_diagnostics(all_diags)
    cache.save(LiveNames(str(f) for p in tree.plan.runs for f in p.source.files))
    result.seconds = time.perf_counter() - started
    return result


def _warm_up(ctx: worker.WorkerContext, campaigns: bool) -> None:
    """Work for this process while the workers build runs, done once, right after the first runs went to
    them: compile the templates into the build's template cache (run.html first, so a worker that renders
    its first run after this finds it compiled instead of compiling it too) and import what the site pages
    will need (scipy.special and matplotlib for campaigns). Their cost moves from the serial end of the
    build into the part where the workers run. It runs in this thread, not a thread of its own: a worker
    forked while another thread holds an import lock would never get it. Nothing here changes a byte of
    output; a failure only leaves the work to be done, and reported, where it is needed."""
    try:
        from obs.render.site import Renderer

        env = Renderer(ctx.tree.meta, ctx.template_cache).env
        env.get_template("run.html")
        for name in env.list_templates(filter_func=lambda n: n.endswith(".html")):
            env.get_template(name)
        if campaigns:
            import scipy.special  # noqa: F401  (campaign bands and seed-level tests)

            from obs.render import figures  # noqa: F401  (the campaign figure: matplotlib)
    except Exception:  # a warm-up: what failed here is done again where it is needed
        return


def _start_pool(jobs: int, ctx: worker.WorkerContext, start_method: str | None) -> ProcessPoolExecutor:
    """Worker processes that receive the build's context once, under any start method.

    concurrent.futures.process and multiprocessing are imported here, when a build has several runs to
    build: a rebuild of one changed run builds it in this process and never pays their ~15 ms."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    return ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=get_context(start_method),
        initializer=worker.start,
        initargs=(ctx,),
    )


def _stop_pool(pool: ProcessPoolExecutor, *, failed: bool) -> None:
    """Wait for the workers after a build; after a failure or Ctrl-C, stop them now instead of
    letting them finish runs nobody will use (they would keep the output pipe open)."""
    if not failed:
        pool.shutdown(wait=True)
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public API stops a running task
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()


def _build_runs(
    opts: BuildOptions, result: BuildResult, sched: _Scheduler, staging: Staging, only: list[PlannedRun] | None = None
) -> None:
    """Reuse or build every run of the plan, baselines first (`only`: these runs again, every other one done)."""
    _RunPass(opts, result, sched, staging, only).run()
    if only is None:
        result.pages += len(sched.tree.plan.runs)


class _RunPass:
    """One pass over the plan's runs: each run whose baseline is done is reused from the current site or built,
    in this process, in worker processes once enough runs wait, or on a Dask cluster (`--dask`).

    A class rather than one function with closures because its steps (take the ready runs, start the workers,
    submit, collect, stop) share the pass's state: what is pending, running and done, and the pool."""

    def __init__(
        self,
        opts: BuildOptions,
        result: BuildResult,
        sched: _Scheduler,
        staging: Staging,
        only: list[PlannedRun] | None,
    ) -> None:
        self.opts, self.result, self.sched, self.staging = opts, result, sched, staging
        plan = sched.tree.plan
        self.ctx = worker.WorkerContext(
            tree=sched.tree.for_workers(),
            staging=staging.path,
            template_cache=sched.cache.folder / "templates",
            parent_pid=os.getpid(),
        )
        self.progress = Progress(len(plan.runs if only is None else only), opts.progress and not opts.quiet)
        self.jobs = opts.jobs or os.cpu_count() or 1
        self.pool: ProcessPoolExecutor | None = None
        self.cluster: DaskPool | None = None  # --dask: every run that is not reused is built on the cluster
        self.warmed = False
        self.running: dict[Future[RunResult], PlannedRun] = {}
        self.keys: dict[str, str] = {}
        todo = list(plan.runs if only is None else only)
        self.total = len(todo)
        done = set() if only is None else {p.id for p in plan.runs} - {p.id for p in only}
        self.finished = 0
        # each run waits for the runs it needs that are still to do; finishing one releases those that need it
        self.ready: deque[PlannedRun] = deque()
        self.unmet: dict[str, int] = {}
        self.needed_by: dict[str, list[PlannedRun]] = {}
        for planned in todo:
            deps = {dep for dep in planned.needs if dep in plan.slugs and dep not in done}
            for dep in deps:
                self.needed_by.setdefault(dep, []).append(planned)
            if deps:
                self.unmet[planned.id] = len(deps)
            else:
                self.ready.append(planned)
        self.current = os.fspath(sched.out)

    @property
    def offloaded(self) -> bool:
        """Whether runs are built away from this process (a worker pool or a cluster is running)."""
        return self.pool is not None or self.cluster is not None

    def run(self) -> None:
        """Until every run is done: dispatch the ready runs, then wait for one being built to finish."""
        worker.start(self.ctx)  # the inline path (small builds) runs in this process
        failed = True
        try:
            while self.ready or self.running:
                self._dispatch()
                if self.offloaded and not self.warmed:
                    _warm_up(self.ctx, bool(self.sched.tree.found.campaigns))  # the workers build meanwhile
                    self.warmed = True
                if self.running:
                    self._collect()
            if self.finished < self.total:
                raise RuntimeError("build plan has a dependency that can never be satisfied")
            failed = False
        finally:
            if self.pool is not None:
                _stop_pool(self.pool, failed=failed)
            if self.cluster is not None:
                self.cluster.close(failed=failed)
            worker.start(None)
            self.progress.close()

    @property
    def capacity(self) -> int:
        """Runs handed to the workers at a time (`IN_FLIGHT_PER_WORKER` each)."""
        workers = self.cluster.slots if self.cluster is not None else self.jobs
        return IN_FLIGHT_PER_WORKER * max(1, workers)

    def _dispatch(self) -> None:
        """Reuse each ready run that can be, and build the others, until the workers hold `capacity` runs.

        Worker processes start once enough runs wait to be built at the same time (the ready runs not
        reusable, and those building): one changed run, and each run downstream of it on its ladder (waiting
        for the one before), is built in this process, since starting workers costs each a new interpreter's
        imports, more than the run itself."""
        waiting: list[tuple[PlannedRun, str, str]] = []
        while self.ready and not (self.offloaded and len(self.running) >= self.capacity):
            planned = self.ready.popleft()
            key, inputs = self.sched.key_for(planned)
            entry = self.sched.reusable(planned, key)
            self.sched.checked.pop((planned.id, key), None)  # asked for the last time (a run built again asks anew)
            if entry is not None:
                self._reuse(planned, entry)
                continue
            waiting.append((planned, key, inputs))
            self._start_workers(len(waiting))
            if self.offloaded:  # submitted as found: workers start while the next runs are hashed
                for item in waiting:
                    self._submit(*item)
                waiting.clear()
        for item in waiting:
            self._submit(*item)

    def _start_workers(self, waiting: int) -> None:
        """Connect to the cluster once a run needs building (`--dask`), or start the pool once enough wait."""
        if self.opts.dask and self.cluster is None:
            from obs.cluster import DaskPool

            self.cluster = DaskPool(self.opts.dask, self.opts.jobs, self.sched.tree, self.opts.bucket)
        elif not self.offloaded and self.jobs > 1 and waiting + len(self.running) >= PARALLEL_MIN_RUNS:
            self.pool = _start_pool(self.jobs, self.ctx, self.opts.start_method)

    def _collect(self) -> None:
        """Wait for at least one run being built, and take in each one finished."""
        from concurrent.futures import FIRST_COMPLETED, wait  # imported with the pool already

        finished, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
        for fut in finished:
            planned = self.running.pop(fut)
            self._finish(planned, self.keys.pop(planned.id), fut.result())  # a key per run in flight, not per run

    def _submit(self, planned: PlannedRun, key: str, inputs: str) -> None:
        """Build one run: in a worker once the pool runs, else here (see `_dispatch`)."""
        sched = self.sched
        baseline = sched.baseline_digest_path(planned)
        frozen = sched.baseline_digest_path(planned, planned.frozen) if planned.frozen else None
        pair = sched.recipes.get(planned.id)
        recipe = pair.judge() if pair is not None else None
        if sched.tree.cfg.gates:  # the key says which summaries the gate strip reads: those handed over now
            key = sched.key_for(planned)[0]
        others = sched.gate_others(planned)
        fut: Future[RunResult]
        if self.cluster is not None:
            fut = self.cluster.submit(planned, baseline, inputs, frozen, recipe, others)
        elif self.pool is not None:
            fut = self.pool.submit(worker.process, planned, baseline, inputs, frozen, recipe, others)
        else:
            self._finish(planned, key, worker.process(planned, baseline, inputs, frozen, recipe, others))
            return
        self.running[fut] = planned
        self.keys[planned.id] = key

    def _finish(self, planned: PlannedRun, key: str, res: RunResult) -> None:
        """Take in a built run: its files (a Dask worker's are written here), its digest and cache entry."""
        sched = self.sched
        for rel, data in res.payload:
            self.staging.write(rel, data)
        summary = exact_bytes(res.summary)  # an inline run's summary is orjson's oversized buffer
        digest_hash = hashlib.sha256(res.digest).hexdigest()
        path = sched.cache.fresh_digest_path(planned.slug)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(res.digest)
        sched.digest_hashes[planned.id] = digest_hash
        # A run read without one of its files (it went away or lost its permissions mid-build) is published as
        # read, but not kept for reuse: its key says nothing of permissions, so the next build reads it again.
        diagnostics = [d.as_dict() for d in res.diagnostics]
        entry = RunEntry(key if res.complete else "", planned.slug, res.files, summary, digest_hash, diagnostics)
        sched.entries[planned.id] = sched.cache.keep(planned.id, entry)  # its summary read back when asked for
        self.result.built += 1
        sched.how[planned.id] = "built"
        self.result.complete = self.result.complete and res.complete
        self._done(planned)

    def _reuse(self, planned: PlannedRun, entry: RunEntry) -> None:
        """Link a run's files from the current site and keep its cache entry."""
        for rel in entry.files:
            self.staging.link(rel, f"{self.current}/{rel}")
        self.sched.entries[planned.id] = entry
        self.sched.digest_hashes[planned.id] = entry.digest_hash
        self.result.reused += 1
        self.sched.how[planned.id] = "reused"
        self._done(planned)

    def _done(self, planned: PlannedRun) -> None:
        """Count the run, and make ready each run that waited for it alone."""
        self.finished += 1
        for waiting in self.needed_by.pop(planned.id, ()):
            self.unmet[waiting.id] -= 1
            if not self.unmet[waiting.id]:
                del self.unmet[waiting.id]
                self.ready.append(waiting)
        self.progress.step(planned.id)


def site_pages_key(env: str, summaries: list[RunSummary], tree: SourceTree, sections: Any = None) -> str:
    """What the site's pages depend on; `sections` are the plugins' index.json sections (agent learning)."""
    found = tree.found
    specs = [[s.id, s.title, s.question, s.contract, s.baseline, s.primary_metric] for s in found.specs.values()]
    campaigns = [repr(c) for c in found.campaigns.values()]
    runs = hash_json_each(s.to_json() for s in sorted(summaries, key=lambda s: s.id))
    return hash_json(
        [
            env,
            runs,
            sorted(specs, key=str),
            sorted(campaigns),
            [sorted(tree.layout.specs.items()), sorted(tree.layout.campaigns.items())],
            tree.cfg.title,
            tree.found.unread_rel(),
            tree.found.hidden_rel(),
            learning_inputs(tree),
            sections,
        ]
    )


def learning_inputs(tree: SourceTree) -> list[list[str]]:
    """The agent-learning exports (path and content hash): their pages are made with the site's pages."""
    out = []
    for path in sorted(tree.found.learning):
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            digest = f"unreadable: {exc.strerror}"
        out.append([str(path), digest])
    return out


class KeptPages(Mapping[str, bytes]):
    """A page group kept from the current site: its names, its bytes read only when asked for (a campaign's
    analysis.json); `StagedPages` links the files without reading them."""

    def __init__(self, site: Path, files: list[str]) -> None:
        self.site, self.files = site, list(files)

    def __getitem__(self, rel: str) -> bytes:
        if rel not in self.files:
            raise KeyError(rel)
        return (self.site / rel).read_bytes()

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)


class StagedPages(MutableMapping[str, bytes]):
    """The pages made from summaries, written into the staging folder as they are made, so a build of
    100,000 runs never holds all of its diff, ledger and sweep pages in memory at once (issue 32). A page
    of a kept group (`kept`) is hard-linked from the current site instead of written."""

    def __init__(self, staging: Staging, current: str) -> None:
        self.staging, self.current = staging, current
        self.kept: set[str] = set()
        self.written: set[str] = set()

    def __setitem__(self, rel: str, data: bytes) -> None:
        if rel in self.written:  # made twice: the last one wins, as in a dict
            (self.staging.path / rel).unlink()
        if rel in self.kept:
            self.staging.link(rel, f"{self.current}/{rel}")
        else:
            self.staging.write(rel, data)
        self.written.add(rel)

    def update(self, other: Any = (), /, **kw: bytes) -> None:
        """Like dict.update, without reading a kept page's bytes (it is linked) nor a page written here already."""
        from obs.render.written import WrittenPages

        if isinstance(other, WrittenPages) and other.written_to(self):
            other = ()
        items = other.keys() if isinstance(other, Mapping) else [k for k, _ in other]
        values = other if isinstance(other, Mapping) else dict(other)
        for rel in items:
            if rel in self.kept and rel not in self.written:
                self.staging.link(rel, f"{self.current}/{rel}")
                self.written.add(rel)
            else:
                self[rel] = values[rel]
        for rel, data in kw.items():
            self[rel] = data

    def __getitem__(self, rel: str) -> bytes:
        if rel not in self.written:
            raise KeyError(rel)
        return (self.staging.path / rel).read_bytes()

    def __delitem__(self, rel: str) -> None:
        raise TypeError("a staged page is not taken back")

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.written))

    def __len__(self) -> int:
        return len(self.written)


def _site_pages(
    result: BuildResult, cache: BuildCache, tree: SourceTree, env: str, staging: Staging, out: Path, sections: Any
) -> int:
    """Index, spec, campaign and ledger pages: reused when no summary changed, else re-rendered."""
    key = site_pages_key(env, result.summaries, tree, sections)
    cached = cache.pages.get("site")
    if cached and cached.get("key") == key and all((out / rel).is_file() for rel in cached["files"]):
        for rel in cached["files"]:
            staging.link(rel, out / rel)
        files = list(cached["files"])
    else:
        from obs.render.index_pages import SitePages, render_site_pages
        from obs.render.site import Renderer

        renderer = Renderer(tree.meta, cache.folder / "templates")
        groups: dict[str, dict[str, Any]] = {}
        current = os.fspath(out)
        pages = StagedPages(staging, current)

        def memo(group: str, inputs: Any, make: Callable[[], Mapping[str, bytes]]) -> Mapping[str, bytes]:
            """Reuse a page group from the previous site when its inputs are unchanged: its files are linked
            into the new site, read only if a page made from summaries asks for their bytes."""
            group_key = hash_json([env, group, inputs])
            known = cache.pages.get(group)
            made: Mapping[str, bytes]
            if known and known.get("key") == group_key and all((out / rel).is_file() for rel in known["files"]):
                made = KeptPages(out, known["files"])
                pages.kept.update(known["files"])
                inner = f"{group}/"  # the groups made inside this one (a sweep's importance in "sweeps") go with it
                groups.update((name, value) for name, value in cache.pages.items() if name.startswith(inner))
            else:
                made = make()
            groups[group] = {"key": group_key, "files": sorted(made)}
            return made

        render_site_pages(
            result.summaries,
            SitePages(
                tree.cfg,
                tree.found.specs,
                tree.found.campaigns,
                tree.layout,
                tuple(tree.found.unread_rel()),
                tuple(tree.found.hidden_rel()),
            ),
            renderer,
            memo,
            pages=pages,
        )
        assets = templates_dir() / "assets"
        staging.copy_tree(assets, "assets")
        files = sorted(pages.written) + sorted(
            f"assets/{p.relative_to(assets).as_posix()}" for p in assets.rglob("*") if p.is_file()
        )
        for group in [g for g in cache.pages if g != "site"]:
            del cache.pages[group]
        cache.pages.update(groups)
    cache.pages["site"] = {"key": key, "files": files}
    return sum(1 for rel in files if rel.endswith(".html"))


def _prune_digests(cache: BuildCache, plan: BuildPlan) -> None:
    folder = cache.folder / "digests"
    if not folder.is_dir():
        return
    live = {f"{slug}.json" for slug in plan.slugs.values()}
    for path in folder.iterdir():
        if path.name not in live:
            path.unlink(missing_ok=True)
