"""One run, start to finish, the same way for every command: load -> analyse -> render -> write.

`obs build` runs it for every run (in worker processes, `obs.worker`); `obs build --single-file`,
`obs summary`, `obs decide`, `obs gate` and `obs check` run the same functions for one run or a
few. So a number on a run page, in a PR comment and in `obs gate`'s verdict is one computation:

    tree = SourceTree.open(source)            # obs.yaml, discovery, plan, page names
    loaded = load_report(tree, "spec03-r2")   # the run and its baseline's digest, analysed
    loaded.report, loaded.summary             # what every output reads

A baseline is always seen through its digest (`analysis.digest`), made with the baseline's own
settings (its campaign's final window, ...), whether the build cached it or it was read just now.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from obs import ledger
from obs.adapters import adapter_named, holds_of
from obs.adapters.base import LoadContext
from obs.adapters.side_logs import read_side_logs
from obs.analysis.advice import NATIVE, AdviceFiles
from obs.analysis.config_diff import compact_fields
from obs.analysis.digest import RunDigest, digest_from_dict, digest_to_dict, make_digest
from obs.analysis.headline import surrounding_metrics
from obs.analysis.held_constant import run_fields
from obs.analysis.recipes import RecipeLevel, RecipePair, seed_in, site_recipe_pairs
from obs.analysis.report import RunContext, RunReport, analyse_run
from obs.analysis.summary import summarize
from obs.cache import BuildCache
from obs.config import CONFIG_FILE, SiteConfig, load_config
from obs.diagnostics import NO_RUNS, Diagnostic, Diagnostics
from obs.discover import Discovery, discover, reconcile_primary
from obs.fieldbounds import bound_run_fields
from obs.jsonutil import jsonable
from obs.model import Campaign, Run, Spec
from obs.plan import BuildPlan, Peek, PlannedRun, plan_build
from obs.render.run_page import RunPageLinks, render_run
from obs.render.site import Renderer, SiteMeta
from obs.safepaths import shown_name
from obs.safeyaml import YamlError, load_yaml_file
from obs.sitemodel import RunSummary
from obs.urls import INDEX, SiteLayout, relative, root_of, run_file, run_page
from obs.write import STATIC_DIR, fault_point

if TYPE_CHECKING:
    from obs.analysis.gates import GateResult

JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


class RunNotFound(Exception):
    """The run id is not in the source tree (the message suggests close matches)."""


class CampaignNotFound(Exception):
    """The campaign id is not in the source tree (the message lists the known ones)."""


def _check_gate_runs(root: Path, cfg: SiteConfig, plan: BuildPlan, diags: Diagnostics) -> None:
    """A gate's `run:ID.` reference to a run that is not in the tree is an error of obs.yaml (path:line)."""
    from obs.gate_language import GateError, parse_gate, run_refs

    where = next((root / n for n in ("obs.yaml", "obs.yml") if (root / n).is_file()), root / "obs.yaml")
    for gate in cfg.gates:
        try:
            spec = parse_gate(gate["expr"], gate.get("name"), gate.get("label"))
        except (GateError, KeyError):
            continue
        for rid in run_refs(spec):
            if rid not in plan.slugs:
                diags.error(
                    where,
                    f"gate '{spec.name}': run:{rid} is not a run in this source tree "
                    f"({closest_ids(rid, list(plan.slugs))})",
                    _line_of(where, "gates"),
                )


def closest_ids(wanted: str, ids: list[str], shown: int = 10) -> str:
    """What to say after "no run with id X": the ids that contain X or that X contains, else the ids
    closest to X (difflib's ratio), else the first ids, so a reader never has to go and list them."""
    if not ids:
        return "there is no run in this folder"
    contained = [i for i in ids if wanted and (wanted in i or i in wanted)]  # `r2` for `spec03-r2`
    close = contained[:5] or difflib.get_close_matches(wanted, ids, n=5, cutoff=0.6)
    if close:
        return f"did you mean {', '.join(close)}?"
    more = f" (+{len(ids) - shown} more; obs ls lists them)" if len(ids) > shown else ""
    return f"{len(ids)} run{'' if len(ids) == 1 else 's'}: {', '.join(sorted(ids)[:shown])}{more}"


def _site_tiers(campaign: Campaign, cfg: SiteConfig, diags: Diagnostics) -> None:
    """obs.yaml's metric tiers for a campaign that declares none of its own (campaign.yaml's `metrics:` wins)."""
    if campaign.metrics_from:
        return
    tiers = [s["decl"] for s in cfg.metrics.values() if s["decl"].tier]
    if not tiers:
        return
    campaign.metrics, said = reconcile_primary(tiers, campaign.primary_metric)
    campaign.metrics_from = CONFIG_FILE
    if campaign.primary_metric is None:
        campaign.primary_metric = next((d.name for d in campaign.metrics if d.tier == "primary"), None)
    if said:
        diags.info(campaign.source_dir / "campaign.yaml", f"obs.yaml {said}")


@dataclass
class SourceTree:
    """A source folder read as far as a build plans it: settings, runs found, their order and page names.

    Opening it reads obs.yaml, spec.yaml and campaign.yaml files and peeks at run.yaml ids; no log is
    read until a run is loaded. It is plain data, so worker processes receive it whole (spawn-safe).
    """

    root: Path
    cfg: SiteConfig
    found: Discovery
    plan: BuildPlan
    layout: SiteLayout
    diags: Diagnostics

    @classmethod
    def open(
        cls, source: Path, *, exclude: Iterable[Path] = (), peek: Peek | None = None, claims: bool = True
    ) -> SourceTree:
        """The source tree found, planned and laid out; `claims`: keep which adapter took each folder (`obs check`
        lists them; a build passes False)."""
        root = source.resolve()
        if not root.is_dir():
            raise FileNotFoundError(f"{source}: source folder does not exist")
        diags = Diagnostics(root=root)
        cfg = load_config(root, diags)
        # static/ is copied into the site, not read; obs.yaml's primary metric leads a campaign the layout forms
        declared = cfg.primary_metric if cfg.primary_metric != SiteConfig().primary_metric else None  # not the default
        found = discover(root, exclude=(*exclude, root / STATIC_DIR), preferred_metric=declared, claims=claims)
        diags.extend(found.diags)
        frozen = {sid: spec.baseline for sid, spec in found.specs.items()}
        plan = (
            plan_build(found.runs, diags, frozen=frozen)
            if peek is None
            else plan_build(found.runs, diags, peek=peek, frozen=frozen)
        )
        for campaign in found.campaigns.values():
            _site_tiers(campaign, cfg, diags)
        layout = SiteLayout.make(plan.slugs, found.specs, found.campaigns)
        for kind, ident, slug in layout.renamed():
            folder = (found.specs[ident] if kind == "spec" else found.campaigns[ident]).source_dir
            diags.info(
                folder / f"{kind}.yaml",
                f"{kind} id '{ident}' shares its page name with another {kind}; its page is {slug}",
            )
        _check_gate_runs(root, cfg, plan, diags)
        if not plan.runs and not found.learning:  # agent sessions alone are a source too (learning pages)
            diags.warning(root, NO_RUNS)
        return cls(root, cfg, found, plan, layout, diags)

    def for_workers(self) -> SourceTree:
        """This tree as a worker needs it to build one run at a time: settings, specs, campaigns, every run's
        page name and the layout, without the list of every run's sources (each task carries its own run).
        A worker started by spawn or forkserver (macOS's default) or on a Dask cluster unpickles the tree: whole,
        it held every run's sources, ~2.9 KB a run (3.1 MB pickled at 10,000 runs, 0.39 MB without; issue 32)."""
        found = replace(self.found, runs=[], claims=[], files=set(), unread=[], hidden=[])
        return replace(self, found=found, plan=replace(self.plan, runs=[]))

    @property
    def meta(self) -> SiteMeta:
        return SiteMeta(
            title=self.cfg.title,
            source_name=self.root.name,
            has_specs=bool(self.found.specs),
            has_campaigns=bool(self.found.campaigns),
            has_learning=bool(self.found.learning),
        )

    def planned(self, run_id: str) -> PlannedRun:
        for p in self.plan.runs:
            if p.id == run_id:
                return p
        raise RunNotFound(
            f"no run with id '{run_id}' in {self.root} ({closest_ids(run_id, [p.id for p in self.plan.runs])})"
        )

    def campaign(self, campaign_id: str) -> Campaign:
        campaign = self.found.campaigns.get(campaign_id)
        if campaign is None:
            known = ", ".join(sorted(self.found.campaigns)) or "none"
            raise CampaignNotFound(f"no campaign with id '{campaign_id}' in {self.root} (campaigns: {known})")
        return campaign

    def plan_frozen(self, run_id: str) -> str | None:
        """The frozen baseline of the spec `run_id` belongs to (None: not a rung, or the frozen baseline itself)."""
        planned = self.planned(run_id)
        spec = self.found.specs.get(planned.source.spec) if planned.source.spec else None
        target = spec.baseline if spec else None
        return target if target and target != run_id and target in self.plan.slugs else None

    def spec_of(self, run: Run) -> Spec | None:
        return self.found.specs.get(run.spec) if run.spec else None

    def campaign_of(self, run: Run) -> Campaign | None:
        return self.found.campaigns.get(run.campaign) if run.campaign else None

    def source_rel(self, planned: PlannedRun) -> str:
        """The run folder as the page names it: relative to the folder above the source root (a byte of a
        name that is not UTF-8 as U+FFFD)."""
        try:
            return shown_name(planned.source.path.resolve().relative_to(self.root.parent).as_posix())
        except ValueError:
            return shown_name(planned.source.path.name)


# ------------------------------------------------------------------------------------------ load


def load_run(tree: SourceTree, planned: PlannedRun) -> Run:
    """Read one run with its adapter; every problem is a diagnostic on the run, never an exception."""
    diags = Diagnostics(root=tree.root)
    ctx = LoadContext(root=tree.root, config=tree.cfg, diags=diags)
    try:
        run = adapter_named(planned.source.adapter).load(planned.source, ctx)
    except OSError as exc:  # a file that went away or lost its permissions while the run was read
        diags.unreadable(exc.filename or planned.source.path, exc)
        run = Run(id=planned.id, source_dir=planned.source.path, adapter=planned.source.adapter)
    except Exception as exc:
        diags.error(planned.source.path, f"could not be read: {type(exc).__name__}: {exc}")
        run = Run(id=planned.id, source_dir=planned.source.path, adapter=planned.source.adapter)
    if planned.source.side:  # emergence/steps.jsonl, generations.jsonl: read with their run, whatever its format
        try:
            read_side_logs(run, planned.source.side, diags, restarts=tree.cfg.restarts)
        except OSError as exc:
            diags.unreadable(exc.filename or planned.source.path, exc)
    _check_still_readable(planned.source.files, diags)
    bound_run_fields(run, diags)  # a 2 MB title or date would keep its pages from loading
    run.id = planned.id
    run.baseline = planned.baseline
    run.campaign = run.campaign or planned.source.campaign  # a campaign inferred from the layout (obs.layout)
    if run.condition is None:  # a run.yaml's own condition and seed win over what discovery inferred
        run.condition = planned.source.condition
    if run.seed is None:
        run.seed = planned.source.seed
    run.diagnostics = diags
    ledger.overlay(run, ledger.read_ledger(tree.root))  # decisions.jsonl (obs decide) wins over run.yaml
    return run


def _check_still_readable(files: Iterable[Path], diags: Diagnostics) -> None:
    """Every input file discovery found must still open: one that went away or lost its permissions while
    the build ran was skipped by its reader as an absent optional file would be. Say so, once per file."""
    said = {os.path.abspath(p) for p in diags.unread}
    for path in files:
        if os.path.abspath(path) in said:
            continue
        try:
            os.close(os.open(path, os.O_RDONLY))
        except OSError as exc:
            diags.unreadable(path, exc)


# --------------------------------------------------------------------------------------- analyse


def final_window(tree: SourceTree, run: Run) -> int:
    campaign = tree.campaign_of(run)
    return campaign.final_window if campaign else tree.cfg.final_window


def advice_files(adapter: str) -> AdviceFiles:
    """The files advice on a run's page names, from what its format says it holds (`Holds`): a run read from
    another format is told to log in that format's records, and to declare in a run.yaml beside its files (or the
    run.yaml laid over them, `native+hf_trainer`); a format whose folders take no run.yaml is sent to obs.yaml."""
    if adapter == "native":
        return NATIVE
    holds = holds_of(adapter)
    if adapter.split("+", 1)[0] == "native":
        declare = "run.yaml"
    elif holds.takes_run_yaml:
        declare = f"a run.yaml beside {holds.beside}"
    else:
        declare = "obs.yaml"
    return AdviceFiles(label=holds.label, records=holds.records, declare=declare, native=False)


def run_context(
    tree: SourceTree,
    run: Run,
    baseline: RunDigest | None,
    frozen: RunDigest | None = None,
    recipe: RecipeLevel | None = None,
) -> RunContext:
    """What the run's surroundings say: the primary metrics declared for it (run.yaml, spec, campaign, obs.yaml), the
    baseline, the spec's frozen baseline's digest when the rung is tested against it too, and the run's recipe
    against the baseline's recipe when both have seed replicates."""
    spec, campaign = tree.spec_of(run), tree.campaign_of(run)
    rc = RunContext(
        declared=surrounding_metrics(spec, campaign),
        final_window=final_window(tree, run),
        baseline_id=run.baseline,
        baseline=baseline,
        alpha=campaign.alpha if campaign else 0.05,
        min_effect=min_effect_of(tree, run),
        spec_id=spec.id if spec else None,
        frozen_baseline=spec.baseline if spec else None,
        frozen_contract=dict(spec.contract) if spec and isinstance(spec.contract, dict) else {},
        frozen=frozen,
        advice=advice_files(run.adapter),
        recipe=recipe,
    )
    if run.baseline and baseline is None:
        rc.baseline_problem = (
            f"baseline {run.baseline} could not be read"
            if run.baseline in tree.plan.slugs
            else f"baseline {run.baseline} is not in this source tree"
        )
    return rc


def min_effect_of(tree: SourceTree, run: Run) -> float:
    """The smallest headline change worth acting on: the spec's, else the campaign's, else obs.yaml's."""
    spec, campaign = tree.spec_of(run), tree.campaign_of(run)
    for value in (spec.min_effect if spec else None, campaign.min_effect if campaign else None):
        if value is not None:
            return value
    return tree.cfg.min_effect


def analyse(
    tree: SourceTree,
    run: Run,
    baseline: RunDigest | None,
    frozen: RunDigest | None = None,
    recipe: RecipeLevel | None = None,
) -> RunReport:
    """Analyse a loaded run, and make the checks only an analysis can (a named headline metric the run
    does not have). Every command goes through here: `obs build`, `check`, `summary`, `gate`,
    `--single-file` and `decide`, so none is more lenient than another. `frozen`: the spec's frozen baseline's
    digest; `recipe`: the run's recipe-level result (`recipe_level_of` on demand; the build hands each run its
    own, made from every run's summary)."""
    report = analyse_run(run, run_context(tree, run, baseline, frozen, recipe), tree.cfg)
    if report.headline.missing:  # a primary metric named in run.yaml, spec.yaml or campaign.yaml that is not there
        where = next((d.file for d in report.declared if d.required and d.file is not None), run.source_dir)
        run.diagnostics.error(where, f"run {run.id}: {report.headline.missing}", _line_of(where, "primary_metric"))
    return report


def _line_of(path: Path, key: str) -> int | None:
    """The line `key` is written on in a YAML file (read again: this is said only when something is wrong)."""
    if path.suffix not in (".yaml", ".yml"):
        return None
    try:
        return load_yaml_file(path).line_of(key)
    except (OSError, YamlError):
        return None


def check_runs(tree: SourceTree) -> Iterator[RunReport]:
    """Every run loaded and analysed as a build does, baselines first, each dropped after its report is
    yielded (only its digest is kept, for the runs compared with it): what `obs check` reports."""
    digests: dict[str, RunDigest] = {}
    for planned in tree.plan.runs:
        run = load_run(tree, planned)
        base, frozen = (_digest_for(tree, digests, r) for r in (planned.baseline, planned.frozen))
        report = analyse(tree, run, base, frozen)
        digests[planned.id] = report.digest
        yield report


def _digest_for(tree: SourceTree, digests: dict[str, RunDigest], run_id: str | None) -> RunDigest | None:
    if not run_id:
        return None
    if run_id not in digests and run_id in tree.plan.slugs:
        digests[run_id] = digest_of(tree, tree.planned(run_id))
    return digests.get(run_id)


def views_series(cfg: SiteConfig, campaign: Campaign | None = None) -> tuple[str, ...]:
    """The series the declared views across runs read from each run's summary (the campaign.yaml's
    declarations, else obs.yaml's): sample efficiency's metric and counter, each coupling pair's two series
    (carried before the other curves, so none is left out)."""
    names: list[str] = []
    se = (campaign.sample_efficiency if campaign is not None else None) or cfg.sample_efficiency or {}
    names += [str(se[k]) for k in ("metric", "series") if se.get(k)]
    for pair in (campaign.coupling if campaign is not None else None) or cfg.coupling:
        names += [pair["proxy"], pair["downstream"]]
    return tuple(dict.fromkeys(names))


def summary_of(tree: SourceTree, planned: PlannedRun, report: RunReport, input_hash: str) -> RunSummary:
    campaign = tree.campaign_of(report.run)
    return summarize(
        report,
        slug=planned.slug,
        input_hash=input_hash,
        campaign_metric=campaign.primary_metric if campaign else None,
        campaign_window=final_window(tree, report.run),
        campaign_metrics=campaign.metrics if campaign else (),
        carried=views_series(tree.cfg, campaign),
    )


def digest_of(tree: SourceTree, planned: PlannedRun) -> RunDigest:
    """A run's digest as its own build makes it (what a run compared with it sees)."""
    run = load_run(tree, planned)
    return make_digest(run, final_window(tree, run))


# ---------------------------------------------------------------------------------------- render


def links_for(tree: SourceTree, run: Run) -> RunPageLinks:
    """The run page's links to its baseline, spec and campaign (relative to the run's folder)."""
    page = run_page(tree.plan.slugs.get(run.id, "run"))
    baseline = tree.layout.run(run.baseline)
    spec = tree.layout.spec(run.spec)
    campaign = tree.layout.campaign(run.campaign)
    # where the seed-level comparison of the run's group is made (from summaries, after the runs): the
    # campaign page for a condition, the spec page (which lists its arm groups) or the index for an arm
    seed_level = None
    if campaign and run.condition:
        seed_level = relative(page, campaign) + "#significance"
    elif run.arm:
        seed_level = relative(page, spec or INDEX) + ("#ladder" if spec else "#arms")
    frozen_spec = tree.spec_of(run)
    frozen = tree.layout.run(frozen_spec.baseline) if frozen_spec and frozen_spec.baseline else None
    return RunPageLinks(
        root=root_of(page),
        baseline=relative(page, baseline) if baseline else None,
        spec=relative(page, spec) if spec else None,
        campaign=relative(page, campaign) if campaign else None,
        seed_level=seed_level,
        frozen=relative(page, frozen) if frozen else None,
    )


def render_files(
    tree: SourceTree,
    planned: PlannedRun,
    report: RunReport,
    renderer: Renderer,
    gates: Sequence[GateResult] = (),
) -> Iterator[tuple[str, bytes]]:
    """The run's folder in the site: page, analysis.json, figures, renders and the case browser's data
    (paths inside the folder), made one file at a time as they are written; `gates`: obs.yaml's gates on it."""
    output = render_run(
        report,
        renderer,
        links_for(tree, report.run),
        source_rel=tree.source_rel(planned),
        max_points=tree.cfg.max_points,
        slug=planned.slug,
        x_axes=tree.cfg.x_axes,
        gates=gates,
    )
    return output.all_files()


# ---------------------------------------------------------------------------- one run in a build


@dataclass
class RunResult:
    """What a build keeps of a run: serialised (sorted JSON) in the worker, so the main process
    only stores and hashes bytes."""

    id: str
    summary: bytes
    digest: bytes
    diagnostics: list[Diagnostic]
    files: list[str]
    complete: bool = True  # False when an input file could not be read: the build must not keep the result
    # The run's files (site path, bytes) when the worker could not write them itself: a Dask worker, maybe on
    # another machine, hands them back and the build writes them (obs.cluster). Empty for the process pool.
    payload: list[tuple[str, bytes]] = field(default_factory=list)


def build_run(
    tree: SourceTree,
    planned: PlannedRun,
    baseline: RunDigest | None,
    input_hash: str,
    renderer: Renderer,
    write: Callable[[str, bytes], None],
    frozen: RunDigest | None = None,
    recipe: RecipeLevel | None = None,
    gate_others: Mapping[str, RunSummary] | None = None,
) -> RunResult:
    """Load, analyse, render and write one run of a build; `write(site_path, data)` stores a file. `frozen` is
    the spec's frozen baseline's digest (`planned.frozen`), when the rung is tested against it too; `recipe`: the
    run's recipe-level result, which the build makes from the summaries of every run (`recipe_pairs`);
    `gate_others`: the summaries of the runs obs.yaml's gates read (`gate_refs`), for the page's gate strip."""
    fault_point("run")  # tests: the build has planned and hashed its inputs; the run is about to be read
    run = load_run(tree, planned)
    report = analyse(tree, run, baseline, frozen, recipe)
    summary = summary_of(tree, planned, report, input_hash)
    gates = judge_gates(tree, summary, gate_others or {})
    files = []
    for rel, data in render_files(tree, planned, report, renderer, gates):
        path = run_file(planned.slug, rel)
        write(path, data)
        files.append(path)
    return RunResult(
        planned.id,
        orjson.dumps(summary.to_json(), option=JSON_OPTIONS, default=jsonable),
        orjson.dumps(digest_to_dict(report.digest), option=JSON_OPTIONS, default=jsonable),
        list(run.diagnostics.items),
        files,
        complete=not run.diagnostics.unread,
    )


def read_digest(path: Path | None) -> RunDigest | None:
    """A baseline's digest from the build cache (None when it is missing or unreadable)."""
    if path is None:
        return None
    try:
        return parse_digest(path.read_bytes())
    except OSError:
        return None


def parse_digest(data: bytes | None) -> RunDigest | None:
    """A baseline's digest from its cached bytes (None when there are none or they do not parse)."""
    if data is None:
        return None
    try:
        return digest_from_dict(orjson.loads(data))
    except (ValueError, KeyError, TypeError, IndexError):
        return None


# ---------------------------------------------------------------- one run on demand (not a build)


@dataclass
class LoadedRun:
    """One run analysed against its baseline exactly as a build would, without building the site."""

    tree: SourceTree
    planned: PlannedRun
    report: RunReport
    summary: RunSummary
    input_hash: str

    @property
    def slug(self) -> str:
        return self.planned.slug

    @property
    def source_rel(self) -> str:
        return self.tree.source_rel(self.planned)

    @property
    def links(self) -> RunPageLinks:
        return links_for(self.tree, self.report.run)


def input_hash(tree: SourceTree, planned: PlannedRun) -> str:
    """The content hash of a run's input files: the identity of what was decided on."""
    return BuildCache(Path()).input_hash(planned.source.files, tree.root)


def load_report(tree: SourceTree, run_id: str, baseline: str | None = None) -> LoadedRun:
    """Analyse `run_id` against its baseline (or `baseline`, when given) as the build does.

    Only the run and its baseline are read, not the whole tree's logs.
    """
    planned = tree.planned(run_id)
    if baseline is not None:
        tree.planned(baseline)  # an unknown override is an error, not a silent "no baseline"
        target = tree.plan_frozen(run_id)  # tested against the frozen baseline too, unless it is the baseline now
        planned = replace(
            planned,
            baseline=baseline if baseline != run_id else None,
            frozen=target if target != baseline else None,
        )
    digests: dict[str, RunDigest] = {}
    base, frozen = (_digest_for(tree, digests, r) for r in (planned.baseline, planned.frozen))
    run = load_run(tree, planned)
    recipe = recipe_level_of(tree, planned, run) if base is not None else None
    report = analyse(tree, run, base, frozen, recipe)
    hashed = input_hash(tree, planned)
    return LoadedRun(tree, planned, report, summary_of(tree, planned, report, hashed), hashed)


# ---------------------------------------------------------------------- seeds as the unit of a recipe


def recipe_pairs(tree: SourceTree, summaries: Iterable[RunSummary]) -> dict[str, RecipePair]:
    """Every run's recipe against its baseline's recipe, not yet judged (`analysis.recipes.site_recipe_pairs`),
    with the settings and page names of this tree: what the build keys each run on and hands its page."""
    listed = list(summaries)
    return site_recipe_pairs(listed, tree.cfg, tree.found.specs, tree.found.campaigns, lambda s: run_page(s.slug))


def recipe_level_of(tree: SourceTree, planned: PlannedRun, run: Run) -> RecipeLevel | None:
    """One run's recipe-level result on demand (`obs gate`, `obs summary`, `--single-file`, `obs decide`), as the
    build makes it: the runs that could be seeds of its recipe or of its baseline's are read and summarised.

    Only a run with a seed, whose baseline has one too, can have one; replicates share a spec and a campaign, so
    only the runs of the spec or campaign of the run and of its baseline are read (for a run in neither, the
    other runs in neither)."""
    baseline = tree.planned(planned.baseline) if planned.baseline in tree.plan.slugs else None
    if baseline is None or seed_of_run(run, tree.cfg.seed_keys) is None:
        return None
    groups = {(planned.source.spec, planned.source.campaign), (baseline.source.spec, baseline.source.campaign)}
    summaries = []
    for other in tree.plan.runs:
        if (other.source.spec, other.source.campaign) not in groups:
            continue
        loaded = run if other.id == planned.id else load_run(tree, other)
        if other.id != planned.id and seed_of_run(loaded, tree.cfg.seed_keys) is None:
            continue
        # a recipe's identity and its seeds' values do not depend on the baseline: analysed without one
        summary = summary_of(tree, other, analyse_run(loaded, run_context(tree, loaded, None), tree.cfg), "")
        if other.id == planned.id:
            summary = replace(summary, baseline=planned.baseline)  # `--baseline` may have replaced it
        summaries.append(summary)
    pair = recipe_pairs(tree, summaries).get(planned.id)
    return pair.judge() if pair is not None else None


def seed_of_run(run: Run, seed_keys: list[str]) -> object:
    """The run's seed as its summary will have it (`analysis.recipes.seed_of`), read from the loaded run."""
    return seed_in(run.seed, compact_fields(run_fields(run)), seed_keys)


def gate_refs(tree: SourceTree, run_id: str, baseline: str | None, spec: str | None) -> list[str]:
    """The other runs obs.yaml's gates read for a run (`baseline.`, `frozen.` but `frozen.delta`, `run:ID.`), in
    the tree: what a run's gate strip depends on beyond the run itself."""
    from obs.analysis.gates import gate_specs_from
    from obs.gate_language import run_refs

    specs = gate_specs_from(tree.cfg.gates)
    wanted = {r for g in specs for r in run_refs(g)}
    refs = [r.lower() for g in specs for r in g.refs()]
    if baseline and any(r.startswith("baseline.") for r in refs):
        wanted.add(baseline)
    frozen_id = tree.found.specs[spec].baseline if spec and spec in tree.found.specs else None
    if frozen_id and any(r.startswith("frozen.") and r != "frozen.delta" for r in refs):
        wanted.add(frozen_id)
    return sorted(r for r in wanted - {run_id} if r in tree.plan.slugs)


def judge_gates(tree: SourceTree, s: RunSummary, others: Mapping[str, RunSummary]) -> list[GateResult]:
    """obs.yaml's gates on one run summary, `others` the summaries of the runs they read (`gate_refs`): the one
    judgement the run page's strip, the leaderboard's, `obs gate` and the PR summary show."""
    from obs.analysis.gates import GateContext, evaluate_gates, gate_specs_from

    specs = gate_specs_from(tree.cfg.gates)
    if not specs:
        return []
    frozen = {sid: spec.baseline for sid, spec in tree.found.specs.items()}
    return evaluate_gates(specs, s, GateContext({**others, s.id: s}, frozen))


def summaries_of(raw: Mapping[str, bytes] | None) -> dict[str, RunSummary]:
    """Summaries handed to a worker as JSON (run id -> bytes), read back; one that does not read is left out
    (a gate reading it is then n/a, as for a run not in the build)."""
    from obs.sitemodel import SummaryError

    out = {}
    for rid, data in (raw or {}).items():
        try:
            out[rid] = RunSummary.from_json(data)
        except SummaryError:
            continue
    return out


def gate_results(tree: SourceTree, loaded: LoadedRun) -> list[GateResult]:
    """obs.yaml's gates on one run analysed on demand: the runs a gate names (its baseline, the spec's frozen
    baseline, `run:ID.`) are analysed too, only when a gate names them. What `obs gate` and the PR summary
    show, judged as the build judges them for the run page and the leaderboard."""
    if not tree.cfg.gates:
        return []
    s = loaded.summary
    others = {rid: load_report(tree, rid).summary for rid in gate_refs(tree, s.id, s.baseline, s.spec)}
    return judge_gates(tree, s, others)


@dataclass
class DigestMemo:
    """Baseline digests read at most once while several runs are analysed on demand."""

    tree: SourceTree
    digests: dict[str, RunDigest] = field(default_factory=dict)

    def get(self, run_id: str | None) -> RunDigest | None:
        if not run_id or run_id not in self.tree.plan.slugs:
            return None
        if run_id not in self.digests:
            self.digests[run_id] = digest_of(self.tree, self.tree.planned(run_id))
        return self.digests[run_id]


def campaign_summaries(tree: SourceTree, campaign_id: str) -> tuple[Campaign, list[RunSummary]]:
    """The summaries of a campaign's runs, each analysed as the build analyses it."""
    campaign = tree.campaign(campaign_id)
    memo = DigestMemo(tree)
    out = []
    for planned in tree.plan.runs:
        if planned.source.campaign != campaign.id:
            continue
        run = load_run(tree, planned)
        report = analyse(tree, run, memo.get(planned.baseline))
        out.append(summary_of(tree, planned, report, input_hash(tree, planned)))
    return campaign, out
