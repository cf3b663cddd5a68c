"""One run, start to finish: load, analyse, render, write into the staging folder.

This is the unit of parallel work. It runs in worker processes (forked after the build context is
set, so nothing big is pickled per task) or inline for small builds; either way it returns only
small, picklable results: the run's summary, its digest and its diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from obs import ledger
from obs.adapters import adapter_named
from obs.adapters.base import LoadContext
from obs.analysis.digest import RunDigest, digest_from_dict, digest_to_dict
from obs.analysis.report import RunContext, analyse_run
from obs.analysis.summary import summarize
from obs.config import SiteConfig
from obs.diagnostics import Diagnostic, Diagnostics
from obs.discover import Discovery
from obs.jsonutil import jsonable
from obs.model import Run
from obs.plan import BuildPlan, PlannedRun, slugify
from obs.render.run_page import RunPageLinks, render_run
from obs.render.site import Renderer, SiteMeta


@dataclass
class BuildContext:
    """Everything every run needs, shared by all workers."""

    root: Path
    cfg: SiteConfig
    found: Discovery
    plan: BuildPlan
    meta: SiteMeta
    staging: Path
    template_cache: Path | None = None
    _renderer: Renderer | None = field(default=None, repr=False)

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer = Renderer(self.meta, self.template_cache)
        return self._renderer


@dataclass
class RunResult:
    """Serialised in the worker (orjson, sorted keys), so the main process only stores and hashes bytes."""

    id: str
    summary: bytes
    digest: bytes
    diagnostics: list[Diagnostic]
    files: list[str]


JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_CONTEXT: BuildContext | None = None


def set_context(ctx: BuildContext | None) -> None:
    """Set before the worker pool forks, so workers inherit it instead of receiving it per task."""
    global _CONTEXT
    _CONTEXT = ctx


def load_run(planned: PlannedRun, root: Path, cfg: SiteConfig) -> Run:
    diags = Diagnostics(root=root)
    ctx = LoadContext(root=root, config=cfg, diags=diags)
    try:
        run = adapter_named(planned.source.adapter).load(planned.source, ctx)
    except Exception as exc:
        diags.error(planned.source.path, f"could not be read: {type(exc).__name__}: {exc}")
        run = Run(id=planned.id, source_dir=planned.source.path, adapter=planned.source.adapter)
    run.id = planned.id
    run.baseline = planned.baseline
    run.diagnostics = diags
    ledger.overlay(run, ledger.read_ledger(root))  # decisions.jsonl (obs decide) wins over run.yaml
    return run


def run_context(run: Run, ctx: BuildContext, baseline: RunDigest | None) -> RunContext:
    spec = ctx.found.specs.get(run.spec) if run.spec else None
    campaign = ctx.found.campaigns.get(run.campaign) if run.campaign else None
    preferred = [m for m in (spec.primary_metric if spec else None, campaign.primary_metric if campaign else None) if m]
    rc = RunContext(
        preferred_metrics=preferred,
        final_window=campaign.final_window if campaign else ctx.cfg.final_window,
        baseline_id=run.baseline,
        baseline=baseline,
        alpha=campaign.alpha if campaign else 0.05,
    )
    if run.baseline and baseline is None:
        known = run.baseline in ctx.plan.slugs
        rc.baseline_problem = (
            f"baseline {run.baseline} could not be read"
            if known
            else f"baseline {run.baseline} is not in this source tree"
        )
    return rc


def page_links(run: Run, ctx: BuildContext) -> RunPageLinks:
    root = "../../"
    base_slug = ctx.plan.slug(run.baseline)
    return RunPageLinks(
        root=root,
        baseline=f"../{base_slug}/index.html" if base_slug else None,
        spec=f"{root}specs/{slugify(run.spec)}.html" if run.spec and run.spec in ctx.found.specs else None,
        campaign=(
            f"{root}campaigns/{slugify(run.campaign)}/index.html"
            if run.campaign and run.campaign in ctx.found.campaigns
            else None
        ),
    )


def load_digest(path: Path | None) -> RunDigest | None:
    """A baseline's digest from the build cache (read here, in the worker, not pickled to it)."""
    if path is None:
        return None
    try:
        return digest_from_dict(orjson.loads(path.read_bytes()))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def process_run(planned: PlannedRun, baseline_path: Path | None, input_hash: str) -> RunResult:
    ctx = _CONTEXT
    if ctx is None:
        raise RuntimeError("worker context not set")
    baseline = load_digest(baseline_path)
    run = load_run(planned, ctx.root, ctx.cfg)
    report = analyse_run(run, run_context(run, ctx, baseline), ctx.cfg)
    try:
        source_rel = planned.source.path.resolve().relative_to(ctx.root.resolve().parent).as_posix()
    except ValueError:
        source_rel = planned.source.path.name
    output = render_run(
        report, ctx.renderer, page_links(run, ctx), source_rel=source_rel, max_points=ctx.cfg.max_points
    )
    files = []
    for rel, data in sorted(output.files.items()):
        target = ctx.staging / "runs" / planned.slug / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        files.append(f"runs/{planned.slug}/{rel}")
    campaign = ctx.found.campaigns.get(run.campaign) if run.campaign else None
    summary = summarize(
        report,
        slug=planned.slug,
        input_hash=input_hash,
        campaign_metric=campaign.primary_metric if campaign else None,
        campaign_window=campaign.final_window if campaign else ctx.cfg.final_window,
    )
    return RunResult(
        planned.id,
        orjson.dumps(summary, option=JSON_OPTIONS, default=jsonable),
        orjson.dumps(digest_to_dict(report.digest), option=JSON_OPTIONS, default=jsonable),
        list(run.diagnostics.items),
        files,
    )
