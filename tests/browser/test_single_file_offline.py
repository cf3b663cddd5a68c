"""obs build --single-file: the one file opens in Chromium from file:// with every request other than
its own URL blocked, and shows its figures, fonts and styles; its script runs, an injected one does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Route

REPORTS = Path(__file__).resolve().parents[2] / "reports"


@pytest.fixture(scope="module")
def single(single_file_report: Path) -> Path:
    return single_file_report


def test_it_loads_offline_in_chromium_and_shows_its_figures(single: Path, browser: Browser) -> None:
    url = single.resolve().as_uri()
    blocked: list[str] = []
    errors: list[str] = []

    def route(r: Route) -> None:
        if r.request.url == url:
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort("blockedbyclient")

    context = browser.new_context(viewport={"width": 390, "height": 844})  # narrow: tables scroll
    try:
        page = context.new_page()
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
        # obs.js (allowed by its hash) marks the page as soon as it runs
        script_ran = page.evaluate("() => document.documentElement.hasAttribute('data-obs-js')")
        assert blocked == [] and errors == []
        # the policy is strict: an injected inline script is refused (no 'unsafe-inline')
        page.evaluate(
            "() => { const s = document.createElement('script'); s.textContent = 'window.__pwned = 1';"
            " document.body.appendChild(s); }"
        )
        pwned = page.evaluate("() => window.__pwned === 1")
    finally:
        context.close()
    assert figures and all(w > 0 for w in figures)
    assert images and all(ok and w > 0 for ok, w, _ in images), images
    assert font_ok and style_ok == "block"
    assert not pwned
    assert script_ran
