"""What the publish features add to a site build: one object, three calls from the pipeline.

    extras = prepare(root, cfg, found, compare_to, diags)  # read the ledger, the archive, the old manifest
    summaries = extras.annotate(summaries)                 # before the index pages' cache key is computed
    pages += extras.write(staging, summaries)              # archive copies, changes.html, 404.html, sitemap.xml

`annotate` returns copies (the build cache keeps the summaries its workers made) with two fields
the index templates read: `ledger` (the run's decisions from decisions.jsonl, newest first, with
their frozen reports, and whether the artifacts changed after the latest one) and `changed` (what
differs from the compared build, None without --compare-to). Because the page cache key hashes the
summaries, a new ledger line, a new archive or another compared build re-renders the index pages.

Nothing here writes into the source tree: archived reports are copied out of it into the site.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape as xml_escape

from obs.config import SiteConfig
from obs.diagnostics import Diagnostics
from obs.discover import Discovery
from obs.ledger import ARCHIVE_DIR, Ledger, read_ledger
from obs.publish.changes import Changes, ManifestError, OldManifest, annotate, compare, read_manifest
from obs.publish.single_file import SingleFileOptions, is_frozen_report, link_base_for, make_single_file
from obs.write import Staging

MAX_ARCHIVED_BYTES = 64 * 1024 * 1024


@dataclass
class SiteExtras:
    root: Path
    cfg: SiteConfig
    found: Discovery
    ledger: Ledger
    old: OldManifest | None
    archives: dict[str, str | None] = field(default_factory=dict)  # archive rel path -> problem (None: publishable)
    changes: Changes | None = None

    def annotate(self, summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for s in summaries:
            copy = dict(s)
            copy["ledger"] = self._ledger_view(s)
            out.append(copy)
        self.changes = compare(self.old, out, self.cfg.is_negative_check) if self.old is not None else None
        annotate(out, self.changes)
        return out

    def _ledger_view(self, s: dict[str, Any]) -> dict[str, Any] | None:
        history = self.ledger.history(s["id"])
        if not history:
            return None
        latest = history[-1]
        entries = []
        for e in reversed(history):
            problem = self.archives.get(e.archive) if e.archive else "no frozen report was recorded"
            entries.append(
                {
                    "verdict": e.verdict,
                    "date": e.date,
                    "by": e.by,
                    "next": e.next,
                    "suggested": e.suggested,
                    "input_hash": e.input_hash,
                    "same_inputs": e.input_hash == s["input_hash"],
                    "archive": e.archive if e.archive and problem is None else None,
                    "archive_problem": problem,
                }
            )
        return {"stale": latest.input_hash != s["input_hash"], "decided_on": latest.input_hash, "entries": entries}

    def write(self, staging: Staging, summaries: list[dict[str, Any]]) -> int:
        """Write the extra files into the staging folder; return the number of HTML pages."""
        pages = 0
        for rel, problem in sorted(self.archives.items()):
            if problem is None:
                target = staging.path / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(self.root / rel, target)  # byte for byte; never re-rendered
        renderer = None
        if self.changes is not None or link_base_for(self.cfg.base_url):
            from obs.render.site import Renderer, SiteMeta

            renderer = Renderer(
                SiteMeta(
                    title=self.cfg.title,
                    source_name=self.found.root.name,
                    has_specs=bool(self.found.specs),
                    has_campaigns=bool(self.found.campaigns),
                )
            )
        if self.changes is not None and renderer is not None:
            html = renderer.render(
                "changes.html",
                root="",
                c=self.changes,
                changed_runs=self.changes.changed_runs(summaries),
            )
            staging.write("changes.html", html.encode("utf-8"))
            pages += 1
        base = link_base_for(self.cfg.base_url)
        if base and renderer is not None:
            page = renderer.render("404.html", root="").encode("utf-8")
            opts = SingleFileOptions("", link_base=base, with_script=False, page_file="404.html")
            staging.write("404.html", make_single_file({"index.html": page}, opts))
            staging.write("sitemap.xml", sitemap(staging.path, base))
            pages += 1
        return pages


def prepare(root: Path, cfg: SiteConfig, found: Discovery, compare_to: Path | None, diags: Diagnostics) -> SiteExtras:
    ledger = read_ledger(root, diags)
    old = None
    if compare_to is not None:
        try:
            old = read_manifest(compare_to)
        except ManifestError as exc:
            diags.error(compare_to, f"--compare-to: {exc}; no changes page was made")
    extras = SiteExtras(root, cfg, found, ledger, old)
    for e in ledger.entries:
        if e.archive and e.archive not in extras.archives:
            problem = check_archive(root, e.archive)
            extras.archives[e.archive] = problem
            if problem:
                diags.warning(root / e.archive, f"frozen report of {e.run} not published: {problem}")
    return extras


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
    lines += [f"  <url><loc>{xml_escape(base + quote(rel))}</loc></url>" for rel in rels]
    lines.append("</urlset>")
    return ("\n".join(lines) + "\n").encode("utf-8")
