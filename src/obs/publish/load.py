"""One run and its baseline, analysed exactly as a build would, without building the site.

`obs summary`, `obs build --single-file` and `obs decide` all need one run's report: reading the
whole tree's logs for that would be wasteful, so only the run and its baseline are loaded, through
the same worker functions a build uses (so the numbers are the site's numbers).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, replace
from pathlib import Path

from obs.analysis.digest import make_digest
from obs.analysis.report import RunReport, analyse_run
from obs.config import SiteConfig, load_config
from obs.diagnostics import Diagnostics
from obs.discover import Discovery, discover
from obs.plan import BuildPlan, PlannedRun, plan_build
from obs.render.run_page import RunPageLinks
from obs.render.site import SiteMeta
from obs.worker import BuildContext, load_run, page_links, run_context


class RunNotFound(Exception):
    """The run id is not in the source tree (the message suggests close matches)."""


@dataclass
class SourceTree:
    root: Path
    cfg: SiteConfig
    found: Discovery
    plan: BuildPlan
    diags: Diagnostics

    def context(self) -> BuildContext:
        meta = SiteMeta(
            title=self.cfg.title,
            source_name=self.root.name,
            has_specs=bool(self.found.specs),
            has_campaigns=bool(self.found.campaigns),
        )
        return BuildContext(
            root=self.root, cfg=self.cfg, found=self.found, plan=self.plan, meta=meta, staging=Path(os.devnull)
        )

    def planned(self, run_id: str) -> PlannedRun:
        for p in self.plan.runs:
            if p.id == run_id:
                return p
        ids = [p.id for p in self.plan.runs]
        close = difflib.get_close_matches(run_id, ids, n=3)
        hint = f"did you mean {', '.join(close)}?" if close else f"{len(ids)} runs found"
        raise RunNotFound(f"no run with id '{run_id}' in {self.root} ({hint})")


@dataclass
class LoadedRun:
    tree: SourceTree
    planned: PlannedRun
    report: RunReport
    input_hash: str
    source_rel: str

    @property
    def slug(self) -> str:
        return self.planned.slug


def open_tree(source: Path) -> SourceTree:
    root = source.resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"{source}: source folder does not exist")
    diags = Diagnostics(root=root)
    cfg = load_config(root, diags)
    found = discover(root)
    diags.extend(found.diags)
    plan = plan_build(found.runs, diags)
    return SourceTree(root, cfg, found, plan, diags)


def load_report(tree: SourceTree, run_id: str, baseline: str | None = None) -> LoadedRun:
    """Analyse `run_id` against its baseline (or `baseline`, when given) as the build does."""
    from obs.build import input_hash  # the build's own identity of a run's artifacts

    planned = tree.planned(run_id)
    if baseline is not None:
        tree.planned(baseline)  # an unknown override is an error, not a silent "no baseline"
        planned = replace(planned, baseline=baseline if baseline != run_id else None)
    ctx = tree.context()
    run = load_run(planned, tree.root, tree.cfg)
    rc = run_context(run, ctx, None)
    if planned.baseline and planned.baseline in tree.plan.slugs:
        base_run = load_run(tree.planned(planned.baseline), tree.root, tree.cfg)
        rc.baseline = make_digest(base_run, rc.final_window)
        rc.baseline_problem = None
    report = analyse_run(run, rc, tree.cfg)
    try:
        source_rel = planned.source.path.resolve().relative_to(tree.root.parent).as_posix()
    except ValueError:
        source_rel = planned.source.path.name
    return LoadedRun(tree, planned, report, input_hash(planned.source.files, tree.root), source_rel)


def links_for(loaded: LoadedRun) -> RunPageLinks:
    """The run page's links as the site has them (relative to runs/<slug>/)."""
    return page_links(loaded.report.run, loaded.tree.context())
