"""The index-page families' registry (obs.render.index_pages.FAMILIES): a family reads only what families before
it made, and adding a family of pages is one function and one registry entry."""

from __future__ import annotations

import json
from pathlib import Path

from obs import urls
from obs.pipeline import SourceTree, load_report
from obs.render.index_pages import FAMILIES, PageFamily, SiteBuild, SitePages, render_site_pages
from obs.render.site import Renderer
from obs.sitemodel import RunSummary


def test_every_family_reads_only_families_made_before_it() -> None:
    names = [f.name for f in FAMILIES]
    assert len(set(names)) == len(names)
    for i, family in enumerate(FAMILIES):
        assert set(family.reads) <= set(names[:i]), family.name


def _site(root: Path) -> tuple[SourceTree, list[RunSummary], SitePages]:
    run = root / "a"
    run.mkdir(parents=True)
    (run / "run.yaml").write_text("id: a\nhypothesis: It converges.\n", encoding="utf-8")
    lines = [json.dumps({"step": i, "loss": 1 / (i + 1)}) for i in range(1, 11)]
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tree = SourceTree.open(root)
    summaries = [load_report(tree, "a").summary]
    site = SitePages(tree.cfg, tree.found.specs, tree.found.campaigns, tree.layout)
    return tree, summaries, site


def test_a_new_family_is_one_function_and_one_entry(tmp_path: Path) -> None:
    tree, summaries, site = _site(tmp_path)
    renderer = Renderer(tree.meta)
    seen: list[int] = []

    def run_count(b: SiteBuild) -> dict[str, bytes]:  # reads the seed levels, made by an earlier family
        seen.append(len(b.seed_levels))
        return {"count.txt": f"{len(b.summaries)} run(s)".encode()}

    plain = render_site_pages(summaries, site, renderer)
    extended = render_site_pages(
        summaries, site, renderer, families=(*FAMILIES, PageFamily("count", run_count, reads=("seed levels",)))
    )
    assert extended.pop("count.txt") == b"1 run(s)"
    assert extended == plain  # the other families' pages are unchanged
    assert urls.INDEX in plain
    assert seen == [len(json.loads(plain[urls.SEED_LEVELS]))]  # what the family "seed levels" made and wrote
