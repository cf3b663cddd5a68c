"""The build pipeline: discover -> plan -> (load -> analyse -> render) per run -> index pages -> swap.

Each step is a named function so the pipeline reads top to bottom. Runs are processed one at a
time in baseline-first order and dropped after their page is written; only small digests and
summaries stay in memory.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from obs import __version__
from obs.adapters import adapter_named
from obs.adapters.base import LoadContext
from obs.analysis.digest import RunDigest
from obs.analysis.report import RunContext, RunReport, analyse_run
from obs.analysis.summary import summarize
from obs.config import SiteConfig, load_config
from obs.diagnostics import Diagnostic, Diagnostics, sort_diagnostics
from obs.discover import Discovery, discover
from obs.jsonutil import dumps
from obs.model import Campaign, Run, Spec
from obs.plan import BuildPlan, PlannedRun, plan_build
from obs.render.index_pages import render_site_pages
from obs.render.run_page import RunPageLinks, render_run
from obs.render.site import Renderer, SiteMeta, templates_dir
from obs.write import Staging, check_output_location

MANIFEST_SCHEMA_VERSION = 1


@dataclass
class BuildOptions:
    source: Path
    out: Path
    strict: bool = False
    quiet: bool = False


@dataclass
class BuildResult:
    runs: int = 0
    pages: int = 0
    seconds: float = 0.0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)

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


def input_hash(files: tuple[Path, ...], root: Path) -> str:
    """Content hash of a run's input files (names and bytes): the identity of what was decided on."""
    h = hashlib.sha256()
    for path in files:
        try:
            rel = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = path.name
        h.update(rel.encode() + b"\0")
        try:
            with path.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
        except OSError:
            h.update(b"<unreadable>")
        h.update(b"\0")
    return h.hexdigest()


def load_run(planned: PlannedRun, root: Path, cfg: SiteConfig) -> Run:
    diags = Diagnostics(root=root)
    ctx = LoadContext(root=root, config=cfg, diags=diags)
    adapter = adapter_named(planned.source.adapter)
    try:
        run = adapter.load(planned.source, ctx)
    except Exception as exc:
        diags.error(planned.source.path, f"could not be read: {type(exc).__name__}: {exc}")
        run = Run(id=planned.id, source_dir=planned.source.path, adapter=planned.source.adapter, diagnostics=diags)
    run.id = planned.id
    run.baseline = planned.baseline if planned.baseline is not None or run.baseline is None else run.baseline
    run.diagnostics = diags
    return run


def run_context(
    run: Run, plan: BuildPlan, digests: dict[str, RunDigest], found: Discovery, cfg: SiteConfig
) -> RunContext:
    spec: Spec | None = found.specs.get(run.spec) if run.spec else None
    campaign: Campaign | None = found.campaigns.get(run.campaign) if run.campaign else None
    preferred = [m for m in (spec.primary_metric if spec else None, campaign.primary_metric if campaign else None) if m]
    ctx = RunContext(
        preferred_metrics=preferred,
        final_window=campaign.final_window if campaign else cfg.final_window,
        baseline_id=run.baseline,
        alpha=campaign.alpha if campaign else 0.05,
    )
    if run.baseline:
        if run.baseline in digests:
            ctx.baseline = digests[run.baseline]
        elif run.baseline in plan.slugs:
            ctx.baseline_problem = f"baseline {run.baseline} could not be read"
        else:
            ctx.baseline_problem = f"baseline {run.baseline} is not in this source tree"
    return ctx


def page_links(run: Run, plan: BuildPlan, found: Discovery) -> RunPageLinks:
    root = "../../"
    base_slug = plan.slug(run.baseline)
    return RunPageLinks(
        root=root,
        baseline=f"../{base_slug}/index.html" if base_slug else None,
        spec=f"{root}specs/{spec_slug(run.spec)}.html" if run.spec and run.spec in found.specs else None,
        campaign=(
            f"{root}campaigns/{spec_slug(run.campaign)}/index.html"
            if run.campaign and run.campaign in found.campaigns
            else None
        ),
    )


def spec_slug(name: str | None) -> str:
    from obs.plan import slugify

    return slugify(name or "")


def build_one(
    planned: PlannedRun,
    *,
    root: Path,
    cfg: SiteConfig,
    plan: BuildPlan,
    found: Discovery,
    digests: dict[str, RunDigest],
    renderer: Renderer,
    staging: Staging,
) -> tuple[dict[str, Any], Run, RunReport]:
    run = load_run(planned, root, cfg)
    ctx = run_context(run, plan, digests, found, cfg)
    report = analyse_run(run, ctx, cfg)
    links = page_links(run, plan, found)
    try:
        source_rel = planned.source.path.resolve().relative_to(root.resolve().parent).as_posix()
    except ValueError:
        source_rel = planned.source.path.name
    output = render_run(report, renderer, links, source_rel=source_rel, max_points=cfg.max_points)
    for rel, data in output.files.items():
        staging.write(f"runs/{planned.slug}/{rel}", data)
    campaign = found.campaigns.get(run.campaign) if run.campaign else None
    summary = summarize(
        report,
        slug=planned.slug,
        input_hash=input_hash(planned.source.files, root),
        campaign_metric=campaign.primary_metric if campaign else None,
        campaign_window=campaign.final_window if campaign else cfg.final_window,
    )
    return summary, run, report


def build_site(opts: BuildOptions) -> BuildResult:
    started = time.perf_counter()
    result = BuildResult()
    root = opts.source.resolve()
    top = Diagnostics(root=root)
    if not root.is_dir():
        top.error(opts.source, "source folder does not exist")
        result.diagnostics = top.items
        return result
    check_output_location(root, opts.out)
    cfg = load_config(root, top)
    found = discover(root, exclude=(opts.out,))
    top.extend(found.diags)
    plan = plan_build(found.runs, top)
    renderer = Renderer(
        SiteMeta(
            title=cfg.title, source_name=root.name, has_specs=bool(found.specs), has_campaigns=bool(found.campaigns)
        )
    )
    staging = Staging(opts.out)
    all_diags: list[Diagnostic] = []
    try:
        digests: dict[str, RunDigest] = {}
        remaining = dict(plan.dependants)
        for planned in plan.runs:
            summary, run, report = build_one(
                planned, root=root, cfg=cfg, plan=plan, found=found, digests=digests, renderer=renderer, staging=staging
            )
            result.summaries.append(summary)
            all_diags.extend(run.diagnostics.items)
            if remaining.get(planned.id):
                digests[planned.id] = report.digest
            if run.baseline and run.baseline in remaining:
                remaining[run.baseline] -= 1
                if remaining[run.baseline] <= 0:
                    digests.pop(run.baseline, None)
            result.pages += 1
        all_diags.extend(top.items)
        pages = render_site_pages(result.summaries, found, cfg, renderer)
        for rel, data in pages.items():
            staging.write(rel, data)
        result.pages += sum(1 for rel in pages if rel.endswith(".html"))
        staging.copy_tree(templates_dir() / "assets", "assets")
        staging.write(".nojekyll", b"")
        result.runs = len(result.summaries)
        result.diagnostics = sort_diagnostics(all_diags)
        staging.write("index.json", manifest(result, cfg, found))
        staging.commit()
    except BaseException:
        staging.discard()
        raise
    result.seconds = time.perf_counter() - started
    return result


def manifest(result: BuildResult, cfg: SiteConfig, found: Discovery) -> bytes:
    runs = []
    for s in sorted(result.summaries, key=lambda s: s["id"]):
        runs.append(
            {
                "id": s["id"],
                "title": s["title"],
                "page": f"runs/{s['slug']}/index.html",
                "analysis": f"runs/{s['slug']}/analysis.json",
                "adapter": s["adapter"],
                "spec": s["spec"],
                "campaign": s["campaign"],
                "status": s["status"],
                "date": s["date"],
                "baseline": s["baseline"],
                "headline": s["headline"],
                "delta": s["delta"],
                "rates": s["rates"],
                "verdict": s["verdict"],
                "suggested_verdict": s["suggested_verdict"],
                "input_hash": s["input_hash"],
            }
        )
    doc = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "generator": "obs",
        "obs_version": __version__,
        "title": cfg.title,
        "runs": runs,
        "specs": sorted(found.specs),
        "campaigns": sorted(found.campaigns),
        "diagnostics": {"errors": result.errors, "warnings": result.warnings},
    }
    return dumps(doc)
