"""Inlining a page: every resource becomes part of the file, and the policy allows exactly that."""

from __future__ import annotations

import base64
import hashlib
import re

from obs.publish.single_file import SingleFileOptions, is_frozen_report, link_base_for, make_single_file
from obs.resources import templates_dir

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self'">
<title>t</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="../../assets/obs.css">
<script src="../../assets/obs.js" defer></script>
</head>
<body>
<a href="../../index.html">Runs</a> <a href="../r1/index.html#x">base</a> <a href="#failures">in page</a>
<a href="https://example.org/doc">doc</a> <a href="analysis.json">json</a>
<main id="main">
<img src="fig-training.svg" alt="fig"><img src="renders/a.png" alt="r"><img src="missing.svg" alt="m">
<div class="table-wrap"><table></table></div>
<pre class="text">&lt;img src="fig-training.svg"&gt; &lt;script src="x.js"&gt;&lt;/script&gt;</pre>
</main>
</body>
</html>
"""
FILES = {
    "index.html": PAGE.encode(),
    "fig-training.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    "renders/a.png": b"\x89PNG",
}


def sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def between(html: str, tag: str) -> str:
    m = re.search(rf"<{tag}>(.*?)</{tag}>", html, re.S)
    assert m, tag
    return m.group(1)


def test_everything_is_inlined_and_the_policy_hashes_match() -> None:
    opts = SingleFileOptions(page_dir="runs/r2/", link_base="https://example.github.io/demo/")
    html = make_single_file(FILES, opts).decode()
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert csp and html.count("Content-Security-Policy") == 1
    policy = csp.group(1)
    assert "default-src 'none'" in policy and "'self'" not in policy and "unsafe-inline" not in policy
    assert f"style-src {sha(between(html, 'style'))}" in policy
    assert f"script-src {sha(between(html, 'script'))}" in policy
    assert 'url("data:font/woff2;base64,' in between(html, "style")
    assert 'href="../../assets' not in html and "<script src" not in html
    srcs = re.findall(r'<img src="([^"]*)"', html)
    assert len(srcs) == 2 and all(s.startswith("data:image/") for s in srcs)
    assert '<img alt="m">' in html and opts.missing == ["missing.svg"]
    assert 'href="https://example.github.io/demo/index.html"' in html
    assert 'href="https://example.github.io/demo/runs/r1/index.html#x"' in html
    assert 'href="https://example.github.io/demo/runs/r2/analysis.json"' in html
    assert 'href="#failures"' in html and 'href="https://example.org/doc"' in html
    # text that merely looks like a tag is left alone
    assert '&lt;img src="fig-training.svg"&gt; &lt;script src="x.js"&gt;' in html


def test_without_a_base_url_links_to_other_pages_become_text() -> None:
    html = make_single_file(FILES, SingleFileOptions(page_dir="runs/r2/")).decode()
    assert "<a>Runs</a>" in html and "<a>json</a>" in html and 'href="#failures"' in html


def test_a_frozen_report_has_no_script_and_is_recognised() -> None:
    frozen = make_single_file(FILES, SingleFileOptions(page_dir="runs/r2/", with_script=False, banner="<p>F</p>"))
    assert b"<script" not in frozen and b"script-src 'none'" in frozen
    assert b'<main id="main">\n<p>F</p>' in frozen
    assert b'<pre tabindex="0">' not in frozen and b"tabindex" not in frozen.split(b"<main")[0]
    assert b'<div class="table-wrap" tabindex="0">' in frozen and b'<pre class="text" tabindex="0">' in frozen
    assert is_frozen_report(frozen)
    assert not is_frozen_report(make_single_file(FILES, SingleFileOptions(page_dir="runs/r2/")))
    forged = frozen.replace(b"<title>", b"<script>alert(1)</script><title>", 1)
    assert is_frozen_report(forged)  # allowed to *start* right: the policy it starts with still blocks that script
    assert not is_frozen_report(b"<!DOCTYPE html>\n<html><script>alert(1)</script>" + frozen)
    assert not is_frozen_report(PAGE.encode())


def test_link_base_only_for_http_urls() -> None:
    assert link_base_for("https://x.github.io/demo") == "https://x.github.io/demo/"
    assert link_base_for("") is None
    assert link_base_for("javascript:alert(1)") is None
    assert link_base_for('https://x" onload="y') is None


def test_the_real_assets_inline() -> None:
    css = (templates_dir() / "assets" / "obs.css").read_text()
    assert css.count("url(") == len(re.findall(r"url\(\"fonts/", css))  # the only url()s are fonts, all inlined
