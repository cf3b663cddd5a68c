"""--compare-to (changes page, leaderboard badges) and what GitHub Pages needs (relative links,
.nojekyll, 404.html and sitemap.xml only with a base_url)."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from obs.build import BuildOptions
from obs.cli import main
from obs.publish.extras import build_published

REPORTS = Path(__file__).resolve().parents[2] / "reports"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "reports"
    shutil.copytree(REPORTS, src)
    return src


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_changes_since_a_previous_build(source: Path, tmp_path: Path) -> None:
    old_site = tmp_path / "old"
    build_published(BuildOptions(source=source, out=old_site, jobs=2))
    shutil.rmtree(source / "grpo-rl-07")  # removed
    shutil.copytree(source / "spec03/r4", source / "spec03/r9")  # new
    edit(source / "spec03/r9/run.yaml", "id: spec03-r4", "id: spec03-r9")
    edit(source / "spec03/r1/run.yaml", "verdict: promote", "verdict: branch")  # changed verdict
    probe = source / "spec03/r3/probe.jsonl"  # metrics move: one exact case flips to false
    lines = probe.read_text().splitlines()
    i = next(n for n, line in enumerate(lines) if '"exact": true' in line)
    lines[i] = lines[i].replace('"exact": true', '"exact": false')
    probe.write_text("\n".join(lines) + "\n")

    out = tmp_path / "new"
    result = build_published(BuildOptions(source=source, out=out, jobs=2), compare_to=old_site / "index.json")
    assert result.errors == 0
    page = (out / "changes.html").read_text()
    section = {name: page.split(f'id="h-{name}"')[1].split("</section>")[0] for name in ("new", "removed", "changed")}
    assert 'id="run-spec03-r9"' in section["new"]
    assert "grpo-rl-07" in section["removed"]
    r1 = section["changed"].split('id="run-spec03-r1"')[1].split("</tr>")[0]
    assert "recorded:" in r1 and "promote" in r1 and "branch" in r1
    r3 = section["changed"].split('id="run-spec03-r3"')[1].split("</tr>")[0]
    assert "80.6% → 80.0%" in r3 and "−0.6 pp" in r3  # 129/160 -> 128/160
    index = (out / "index.html").read_text()
    assert 'href="changes.html"' in index
    assert re.search(r'<a class="badge changed" href="changes.html#run-spec03-r3"', index)
    assert re.search(r'<a class="badge new" href="changes.html#run-spec03-r9"', index)
    assert 'href="changes.html#run-spec03-r2"' not in index  # unchanged runs carry no badge

    # compared with itself (a site folder this time): nothing changed, no badge
    again = tmp_path / "again"
    build_published(BuildOptions(source=source, out=again, jobs=2), compare_to=out)
    assert "Nothing changed" in (again / "changes.html").read_text()
    assert "badge changed" not in (again / "index.html").read_text()
    # without --compare-to the page goes away, even when nothing else changed
    build_published(BuildOptions(source=source, out=again, jobs=2))
    assert not (again / "changes.html").exists() and 'href="changes.html"' not in (again / "index.html").read_text()


def test_compare_to_something_else_is_an_error_not_a_crash(source: Path, tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    result = build_published(BuildOptions(source=source, out=tmp_path / "site", jobs=2), compare_to=bogus)
    assert result.errors == 1 and not (tmp_path / "site/changes.html").exists()
    assert main(["build", str(source), "-o", str(tmp_path / "site2"), "-q", "--compare-to", str(bogus)]) == 1


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src", "action", "poster", "srcset") and value is not None:
                self.refs.append((tag, name, value))


def test_every_link_is_relative(demo_site: Path) -> None:
    assert (demo_site / ".nojekyll").is_file()
    checked = 0
    for page in sorted(demo_site.rglob("*.html")):
        if page.name == "404.html":
            continue  # served at any depth by GitHub Pages: absolute on purpose, see below
        parser = _Refs()
        parser.feed(page.read_text())
        for tag, attr, value in parser.refs:
            checked += 1
            where = f"{page.relative_to(demo_site)}: <{tag} {attr}={value[:60]}>"
            assert not value.startswith("/"), f"root-relative link breaks under a project sub-path: {where}"
            if tag == "a":
                assert not re.match(r"(?i)javascript:", value), where
            else:  # a resource: inside the site or a data: URI, never another host
                assert not re.match(r"(?i)[a-z][a-z0-9+.-]*:", value) or value.startswith("data:"), where
    assert checked > 500


def test_pages_extras_follow_base_url(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_published(BuildOptions(source=source, out=out, jobs=2))  # the demo sets base_url
    sitemap = (out / "sitemap.xml").read_text()
    locs = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    assert "https://example.github.io/obs-demo/index.html" in locs
    assert "https://example.github.io/obs-demo/runs/spec03-r2/index.html" in locs
    assert all(loc.startswith("https://example.github.io/obs-demo/") for loc in locs)
    assert len(locs) == len([p for p in out.rglob("*.html") if p.name != "404.html"])
    notfound = (out / "404.html").read_text()
    assert 'href="https://example.github.io/obs-demo/index.html"' in notfound
    assert 'href="https://example.github.io/obs-demo/index.html#specs"' in notfound  # not an in-page anchor
    assert "<style>" in notfound and '<link rel="stylesheet"' not in notfound and "<script" not in notfound

    edit(source / "obs.yaml", "base_url: https://example.github.io/obs-demo/", "base_url: ''")
    build_published(BuildOptions(source=source, out=out, jobs=2))
    assert not (out / "sitemap.xml").exists() and not (out / "404.html").exists()
