"""obs build --single-file: one HTML file that shows everything offline, in a real Chromium with every
request blocked except the file's own URL."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from obs.cli import main

REPORTS = Path(__file__).resolve().parents[2] / "reports"
CHROMIUM = os.environ.get("OBS_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src") / "reports"
    shutil.copytree(REPORTS, src)
    out = tmp_path_factory.mktemp("out") / "report.html"
    assert main(["build", str(src), "--single-file", "spec03-r2", "-o", str(out)]) == 0
    return out


def test_the_file_needs_nothing_beside_it(single: Path) -> None:
    html = single.read_text()
    assert not re.search(r'<(link|script)[^>]+(href|src)="(?!data:)', html)
    assert not re.search(r'<img[^>]+src="(?!data:)', html)
    assert "@font-face" in html and "data:font/woff2;base64," in html
    assert "https://example.github.io/obs-demo/runs/spec03-r1/index.html" in html  # base_url links


@pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason="needs Debian's chromium")
def test_it_loads_offline_in_chromium_and_shows_its_figures(single: Path) -> None:
    from playwright.sync_api import Route, sync_playwright

    url = single.resolve().as_uri()
    blocked: list[str] = []
    errors: list[str] = []

    def route(r: Route) -> None:
        if r.request.url == url:
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort("blockedbyclient")

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})  # narrow: tables scroll
            page.route("**/*", route)
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url)
            page.wait_for_load_state("load")
            page.evaluate("() => document.fonts.ready")
            images = page.evaluate("() => [...document.images].map(i => [i.complete, i.naturalWidth, i.alt])")
            figures = page.evaluate("() => [...document.querySelectorAll('figure.fig img')].map(i => i.naturalWidth)")
            font_ok = page.evaluate("() => document.fonts.check('16px Inter')")
            style_ok = page.evaluate("() => getComputedStyle(document.querySelector('.topbar')).display")
            # obs.js (allowed by its hash) marks scrolling tables focusable: proof that it ran
            script_ran = page.evaluate("() => document.querySelectorAll('[data-scroll-focus]').length")
            assert blocked == [] and errors == []
            # the policy is strict: an injected inline script is refused (no 'unsafe-inline')
            page.evaluate(
                "() => { const s = document.createElement('script'); s.textContent = 'window.__pwned = 1';"
                " document.body.appendChild(s); }"
            )
            pwned = page.evaluate("() => window.__pwned === 1")
        finally:
            browser.close()
    assert figures and all(w > 0 for w in figures)
    assert images and all(ok and w > 0 for ok, w, _ in images), images
    assert font_ok and style_ok == "block"
    assert not pwned
    assert script_ran > 0


def test_command_line_defaults_and_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "reports"
    shutil.copytree(REPORTS, src)
    monkeypatch.chdir(tmp_path)
    assert main(["build", str(src), "--single-file", "grpo-rl-07"]) == 0
    assert (tmp_path / "grpo-rl-07.html").read_bytes().startswith(b"<!DOCTYPE html>")
    assert main(["build", str(src), "--single-file", "grpo-rl-07", "-o", str(src / "x.html")]) == 2
    assert not (src / "x.html").exists()
    assert main(["build", str(src), "--single-file", "no-such-run", "-o", "y.html"]) == 2
