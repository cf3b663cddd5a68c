"""A page standing alone (obs.render.standalone): rendered from the templates with a variant context,
every resource part of the file, links into the site elsewhere or plain text, and a policy that
allows exactly the inline style and script."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from obs import urls
from obs.pipeline import SourceTree, load_report
from obs.publish.single_file import SingleFileOptions, is_frozen_report, link_base_for, render_single_file
from obs.render.standalone import Standalone
from obs.resources import templates_dir

RUN_YAML = """id: r2
baseline: r1
hypothesis: |
  See [the baseline](../r1/index.html), [its analysis](analysis.json#x), [here](index.html#failures),
  [docs](https://example.org/doc) and [mail](mailto:a@example.org). Text that looks like a tag:
  `<img src="fig-training.svg">` and `<script src="x.js"></script>`.
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("src")
    for rid, text in (("r1", "id: r1\n"), ("r2", RUN_YAML)):
        folder = root / rid
        folder.mkdir()
        (folder / "run.yaml").write_text(text, encoding="utf-8")
        lines = [json.dumps({"step": i, "loss": 1 / i, "lr": 0.001}) for i in range(1, 30)]
        (folder / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        cases = [{"id": f"c{i}", "exact": i % 3 != 0, "expected": "a b", "actual": "a c"} for i in range(40)]
        (folder / "probe.jsonl").write_text("\n".join(json.dumps(c) for c in cases) + "\n", encoding="utf-8")
    return root


def single(source: Path, **opts: object) -> str:
    loaded = load_report(SourceTree.open(source), "r2")
    options = SingleFileOptions(page_dir=f"runs/{loaded.slug}/", **opts)  # type: ignore[arg-type]
    return render_single_file(loaded, options).decode("utf-8")


def sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def between(html: str, tag: str) -> str:
    m = re.search(rf"<{tag}>(.*?)</{tag}>", html, re.S)
    assert m, tag
    return m.group(1)


def test_everything_is_inline_and_the_policy_hashes_match(source: Path) -> None:
    html = single(source, link_base="https://example.github.io/demo/")
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert csp and html.count("Content-Security-Policy") == 1
    policy = csp.group(1)
    assert "default-src 'none'" in policy and "'self'" not in policy and "unsafe-inline" not in policy
    assert f"style-src {sha(between(html, 'style'))}" in policy
    assert f"script-src {sha(between(html, 'script'))}" in policy
    assert 'url("data:font/woff2;base64,' in between(html, "style")
    assert not re.search(r'<(link|script)[^>]+(href|src)="(?!data:)', html)
    srcs = re.findall(r'<img src="([^"]*)"', html)
    assert srcs and all(s.startswith("data:image/svg+xml;base64,") for s in srcs)
    # no data files to browse: the case browser is its heading and note
    assert 'id="case-spec"' not in html and not re.search(r"<div[^>]* data-case-browser", html)


def test_links_point_into_the_site_at_its_base_url(source: Path) -> None:
    html = single(source, link_base="https://example.github.io/demo/")
    base = "https://example.github.io/demo/"
    assert f'href="{base}index.html"' in html  # the site's navigation
    assert f'href="{base}runs/r1/index.html"' in html  # the baseline, from the template and from Markdown
    assert f'href="{base}runs/r2/analysis.json#x"' in html
    assert f'href="{base}runs/r2/{urls.DIFF}"' in html
    assert 'href="#failures"' in html and 'href="https://example.org/doc"' in html
    assert 'href="mailto:a@example.org"' in html
    assert not re.search(r'<a [^>]*href="(?!#|https?:|mailto:)', html)
    # text that merely looks like a tag stays text
    assert "&lt;img src=&#34;fig-training.svg&#34;&gt;" in html or '&lt;img src="fig-training.svg"&gt;' in html
    assert "<script src" not in html


def test_without_a_base_url_links_to_other_pages_become_text(source: Path) -> None:
    html = single(source)
    assert not re.search(r'<a [^>]*href="(?!#|https?:|mailto:)', html)
    assert "<a>the baseline</a>" in html and '<a class="brand">' in html
    assert 'href="#failures"' in html


def test_a_frozen_report_has_no_script_and_is_recognised(source: Path) -> None:
    frozen = single(source, link_base="../../../", with_script=False, banner='<p class="frozen">F</p>')
    assert "<script" not in frozen and "script-src 'none'" in frozen
    assert '<main id="main">\n<p class="frozen">F</p>' in frozen
    # without obs.js, every box that may scroll is reachable by keyboard
    boxes = re.findall(r'<div class="table-wrap[^"]*"[^>]*>', frozen)
    assert boxes and all('tabindex="0"' in b for b in boxes)
    assert is_frozen_report(frozen.encode())
    assert not is_frozen_report(single(source).encode())
    forged = frozen.replace("<title>", "<script>alert(1)</script><title>", 1).encode()
    assert is_frozen_report(forged)  # allowed to *start* right: the policy it starts with still blocks that script
    assert not is_frozen_report(b"<!DOCTYPE html>\n<html><script>alert(1)</script>" + frozen.encode())


def test_a_site_page_has_none_of_it(source: Path) -> None:
    """The same templates without the variant: the site's files and links, boxes focusable by obs.js."""
    from obs.render.run_page import render_run
    from obs.render.site import Renderer

    loaded = load_report(SourceTree.open(source), "r2")
    out = render_run(
        loaded.report, Renderer(loaded.tree.meta), loaded.links, source_rel="r2", max_points=500, slug=loaded.slug
    )
    html = out.files["index.html"].decode()
    assert '<link rel="stylesheet" href="../../assets/obs.css">' in html and "<style>" not in html
    assert 'href="../r1/index.html"' in html and 'tabindex="0">' not in html.split('aria-label="Probe rates')[0]


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("#x", "#x"),
        ("https://a.org/p", "https://a.org/p"),
        ("MAILTO:x@y", "MAILTO:x@y"),
        ("javascript:alert(1)", None),
        ("../../../outside.html", None),
        ("index.html#cases", "#cases"),
        ("index.html", "B/runs/r2/index.html"),
        ("../../index.html", "B/index.html"),
        ("../r1/index.html#top", "B/runs/r1/index.html#top"),
    ],
)
def test_where_a_link_points_from_the_file(href: str, expected: str | None) -> None:
    page = Standalone(page_dir="runs/r2/", style="", link_base="B/")
    assert page.href(href) == expected
    if expected is not None and not expected.startswith(("#", "http", "MAILTO")):
        assert Standalone(page_dir="runs/r2/", style="").href(href) is None


def test_link_base_only_for_http_urls() -> None:
    assert link_base_for("https://x.github.io/demo") == "https://x.github.io/demo/"
    assert link_base_for("") is None
    assert link_base_for("javascript:alert(1)") is None
    assert link_base_for('https://x" onload="y') is None


def test_the_real_assets_inline() -> None:
    css = (templates_dir() / "assets" / "obs.css").read_text()
    assert css.count("url(") == len(re.findall(r"url\(\"fonts/", css))  # the only url()s are fonts, all inlined
