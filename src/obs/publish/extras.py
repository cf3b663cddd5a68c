"""What the publish features add to a site build: a build plugin (`obs.hooks.BuildPlugin`).

    on_tree(tree)                      read the ledger, check the archived reports, read the old manifest
    on_summaries(summaries)            before the index pages' cache key is computed
    on_post_build(staging, summaries)  archive copies, changes.html, 404.html, sitemap.xml

`on_summaries` returns copies (the build cache keeps the summaries its workers made) with two
fields the index templates read: `ledger` (the run's decisions from decisions.jsonl, newest first,
with their frozen reports, and whether the artifacts changed after the latest one) and `changed`
(what differs from the compared build, None without --compare-to). Because the page cache key
hashes the summaries, a new ledger line, a new archive or another compared build re-renders the
index pages.

Nothing here writes into the source tree: archived reports are copied out of it into the site.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from obs import urls
from obs.build import BuildOptions, BuildResult, build_site
from obs.jsonutil import dumps
from obs.lazysummary import replace_summary
from obs.ledger import ARCHIVE_DIR, Ledger, read_ledger
from obs.pipeline import SourceTree
from obs.publish.changes import Changes, ManifestError, OldManifest, annotate, compare, read_manifest
from obs.publish.learning import LearningFeature, read_old_learning, windows_of
from obs.publish.single_file import SingleFileOptions, is_frozen_report, link_base_for, standalone
from obs.render import paging
from obs.render.site import Renderer
from obs.sitemodel import LedgerView, LedgerViewEntry, RunSummary
from obs.write import Staging

if TYPE_CHECKING:
    from obs.analysis.cohorts import Groups

MAX_ARCHIVED_BYTES = 64 * 1024 * 1024


@dataclass
class PublishExtras:
    """The publish features of a site build (see the module docstring for the events)."""

    compare_to: Path | None = None  # another build (its folder or index.json) for changes.html
    name: str = "publish"
    tree: SourceTree | None = None
    ledger: Ledger = field(default_factory=Ledger)
    old: OldManifest | None = None
    archives: dict[str, str | None] = field(default_factory=dict)  # archive rel path -> problem (None: publishable)
    changes: Changes | None = None
    learning: LearningFeature = field(default_factory=LearningFeature)  # agent learning pages (publish/learning.py)

    def fingerprint(self) -> Any:
        return {"compare_to": str(self.compare_to)} if self.compare_to else {}

    def on_tree(self, tree: SourceTree) -> None:
        """Read the ledger, check its archived reports and read the compared build's manifest."""
        self.tree = tree
        root, diags = tree.root, tree.diags
        self.ledger = read_ledger(root, diags)
        if self.compare_to is not None:
            try:
                self.old = read_manifest(self.compare_to)
            except ManifestError as exc:
                diags.error(self.compare_to, f"--compare-to: {exc}; no changes page was made")
        old_learning = read_old_learning(self.compare_to) if self.old is not None and self.compare_to else None
        self.learning.compare_to = self.compare_to
        self.learning.windows = windows_of(tree.cfg.trends)
        self.learning.read(root, tree.found.learning, diags, old_learning)
        for e in self.ledger.entries:
            if e.archive and e.archive not in self.archives:
                problem = check_archive(root, e.archive)
                self.archives[e.archive] = problem
                if problem:
                    diags.warning(root / e.archive, f"frozen report of {e.run} not published: {problem}")

    def on_summaries(self, summaries: list[RunSummary]) -> list[RunSummary]:
        views = [self._ledger_view(s) for s in summaries]
        out = [
            s if view == s.ledger else replace_summary(s, ledger=view) for s, view in zip(summaries, views, strict=True)
        ]
        negative = self.tree.cfg.is_negative_check if self.tree else (lambda _: False)
        self.changes = compare(self.old, out, negative) if self.old is not None else None
        return annotate(out, self.changes)

    def _ledger_view(self, s: RunSummary) -> LedgerView | None:
        history = self.ledger.history(s.id)
        if not history:
            return None
        latest = history[-1]
        entries = []
        for e in reversed(history):
            problem = self.archives.get(e.archive) if e.archive else "no frozen report was recorded"
            entries.append(
                LedgerViewEntry(
                    verdict=e.verdict,
                    date=e.date,
                    by=e.by,
                    next=e.next,
                    suggested=e.suggested,
                    input_hash=e.input_hash,
                    same_inputs=e.input_hash == s.input_hash,
                    archive=e.archive if e.archive and problem is None else None,
                    archive_problem=problem,
                )
            )
        return LedgerView(stale=latest.input_hash != s.input_hash, decided_on=latest.input_hash, entries=tuple(entries))

    def on_post_build(self, staging: Staging, summaries: list[RunSummary]) -> int:
        """Write the extra files into the staging folder; return the number of HTML pages."""
        tree = self.tree
        if tree is None:
            raise RuntimeError("on_post_build before on_tree")
        pages = 0
        for rel, problem in sorted(self.archives.items()):
            if problem is None:
                target = staging.path / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(tree.root / rel, target)  # byte for byte; never re-rendered
        base = link_base_for(tree.cfg.base_url)
        renderer = Renderer(tree.meta) if self.changes is not None or base or self.learning.reports else None
        if renderer is not None:
            pages += self.learning.write(staging, renderer)
        if any(s.tags for s in summaries):
            pages += cohorts_page(summaries, Renderer(tree.meta), staging.out / urls.COHORTS_DATA, staging.write)
        if self.changes is not None and renderer is not None:
            html = renderer.render(
                "changes.html",
                root="",
                c=self.changes,
                changed_runs=self.changes.changed_runs(summaries),
            )
            staging.write(urls.CHANGES, html.encode("utf-8"))
            pages += 1
        if base and renderer is not None:
            opts = SingleFileOptions("", link_base=base, with_script=False, page_file=urls.NOT_FOUND)
            page = renderer.render("404.html", root="", standalone=standalone(opts))
            staging.write(urls.NOT_FOUND, page.encode("utf-8"))
            staging.write(urls.SITEMAP, sitemap(staging.path, base))
            pages += 1
        return pages

    def manifest_sections(self) -> dict[str, Any]:
        """index.json's sections beyond the runs: `learning` when the source holds agent sessions."""
        return self.learning.section()


def cohorts_page(
    summaries: list[RunSummary], renderer: Renderer, previous: Path, write: Callable[[str, bytes], None]
) -> int:
    """cohorts.html (cohorts-2.html, ... past 500 cohorts) and cohorts.json (cohorts-2.json, ... past 1.5 MB of
    statistics: `cohorts_data`), each written with `write` as it is made; returns the number of pages. Every
    tag's runs against the rest of their comparable set. The sets whose runs did not change since the published
    build (`previous`, its cohorts.json) are reused, so a build where one run changed tests only that run's set
    (and imports no statistics when it has none).

    Made in turn, each let go before the next: the runs' points, the data files, the pages. Returned together
    at 100,000 tagged runs they were ~2 KB a run at the end of the build (issue 32)."""
    from obs.analysis.cohorts import RunPoint, cohorts_by_group, groups_from_json
    from obs.render.cohort_page import render_cohort_pages

    tags: dict[tuple[str, ...], tuple[str, ...]] = {}  # a run's tags as one tuple shared by the runs with them
    points = [
        RunPoint(
            s.id,
            tags.setdefault(s.tags, s.tags),
            sys.intern(s.comparable + (f" · {s.probe_key}" if s.probe_key else "")),  # one string a set
            s.headline.value,
            s.headline.higher_is_better,
        )
        for s in summaries
        if s.headline.metric and s.headline.value is not None and math.isfinite(s.headline.value)
    ]
    groups = cohorts_by_group(points, groups_from_json(read_cohorts_data(previous)))
    del points, tags
    for rel, data in cohorts_data(groups):
        write(rel, data)
    cohorts = groups.in_page_order()  # each cohort made as its page is (held packed: `PackedGroups`)
    compared = groups.tags()
    tagged: dict[str, list[str]] = {}  # the runs of each tag no set compares (listed on the first page)
    for s in summaries:
        for tag in s.tags:
            if tag not in compared:
                tagged.setdefault(tag, []).append(s.id)
    pages = 0

    def page(rel: str, data: bytes) -> None:
        nonlocal pages
        write(rel, data)
        pages += 1

    render_cohort_pages(cohorts, {s.id: s.slug for s in summaries}, renderer, tagged, write=page)
    return pages


COHORTS_PART = 1_500_000  # bytes of comparable sets a cohorts data file holds (a bigger set: a file of its own)


def _written_size(name: str, entry: Any) -> int:
    """A set's bytes in its file: its JSON indented two levels deeper (under "groups" and its name), as written
    (counted without the indent, 10,000 runs' parts were 1.73 MB against the 1.5 MB budget)."""
    body = dumps(entry)
    return len(body) + 4 * body.count(b"\n") + len(dumps(name)) + 6


def cohorts_data(groups: Groups) -> Iterator[tuple[str, bytes]]:
    """cohorts.json, and cohorts-2.json, ... when the sets' statistics pass `COHORTS_PART` (a set is never cut:
    without its runs it is ~0.6 KB a tag), each as made. The first file names every part (`parts`), each says its
    `part`. A set's JSON is made once to be measured and again for its file: every set's held at once (and every
    file) was the cohorts' peak, ~1.5 KB a cohort (issue 32)."""
    from obs.analysis.cohorts import group_json

    def entry(name: str) -> dict[str, Any]:
        return group_json(*groups[name])

    sizes = [(name, _written_size(name, entry(name))) for name in groups]
    cut = paging.cut_by_budget(sizes, lambda e: e[1], COHORTS_PART)
    del sizes
    names = [urls.numbered(urls.COHORTS_DATA, k) for k in range(1, len(cut) + 1)]
    for k, part in enumerate(cut, start=1):
        doc: dict[str, Any] = {"schema": 2, "part": k, "groups": {name: entry(name) for name, _ in part}}
        if k == 1:
            doc["parts"] = names
        yield names[k - 1], dumps(doc)


def read_cohorts_data(first: Path) -> dict[str, Any]:
    """Every set of a published cohorts.json and the parts it names beside it (only names of the form
    cohorts-<k>.json are read); an unreadable file gives nothing, an unreadable part only its own sets."""
    try:
        doc = json.loads(first.read_bytes())
        groups = dict(doc["groups"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    parts = doc.get("parts") if isinstance(doc, dict) else None
    allowed = (
        {urls.numbered(urls.COHORTS_DATA, k) for k in range(2, len(parts) + 1)} if isinstance(parts, list) else set()
    )
    for name in parts if isinstance(parts, list) else []:
        if name not in allowed:
            continue
        try:
            groups.update(json.loads((first.parent / name).read_bytes())["groups"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return groups


def check_archive(root: Path, rel: str) -> str | None:
    """Why an archived report cannot be published as it is (None when it can)."""
    path = root / rel
    try:
        real = path.resolve(strict=True)
    except OSError:
        return "the file is missing"
    if not real.is_relative_to((root / ARCHIVE_DIR).resolve()) or not real.is_file():
        return "it is not a file inside the archive folder"
    if real.stat().st_size > MAX_ARCHIVED_BYTES:
        return f"it is over {MAX_ARCHIVED_BYTES} bytes"
    with real.open("rb") as fh:
        head = fh.read(2048)
    if not is_frozen_report(head):
        return "it does not start like a report frozen by obs decide (a script-free policy); it may have been edited"
    return None


def sitemap(site: Path, base: str) -> bytes:
    """Absolute URLs of the site's pages (frozen reports and 404.html left out), sorted."""
    rels = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if p.is_file() and p.name != "404.html" and p.relative_to(site).parts[0] != ARCHIVE_DIR
    )
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    lines += [f"  <url><loc>{escape(base + quote(rel), quote=False)}</loc></url>" for rel in rels]
    lines.append("</urlset>")
    return ("\n".join(lines) + "\n").encode("utf-8")


def build_published(opts: BuildOptions, *, compare_to: Path | None = None) -> BuildResult:
    """A site as `obs build` makes it: the core build with the publish features attached."""
    return build_site(opts, [PublishExtras(compare_to=compare_to)])
