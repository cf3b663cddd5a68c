"""Issue 31: every documented chart key and button on series a range cannot be made of.

A one-point series (pressing 0 or Home threw `RangeError: Invalid array length`: reset() lacked the
guard setRange has), a constant series and a series of NaN only: each key of charts.js's keyboard
help (← → Shift+← Shift+→ + = − _ 0 Home Escape) and each toolbar button, with no uncaught exception
and no console error (the watch fails the test on either).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from browserkit import ServedSite, new_watched_context, serve
from playwright.sync_api import Browser

from obs.build import BuildOptions
from obs.publish.extras import build_published

KEYS = ("ArrowRight", "ArrowLeft", "Shift+ArrowRight", "Shift+ArrowLeft", "+", "=", "-", "_", "0", "Home", "Escape")
SERIES = {
    "one-point": [{"step": 5, "loss": 0.5, "acc": 0.25}],
    "constant": [{"step": s, "loss": 1.0, "acc": 0.5} for s in range(0, 50, 10)],
    "nan-only": [{"step": s, "loss": "NaN", "acc": 0.5} for s in range(0, 50, 10)],
    "same-step": [{"step": 3, "loss": 0.1 * i, "acc": 0.5} for i in range(4)],
}


@pytest.fixture(scope="module")
def degenerate_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    src = tmp_path_factory.mktemp("degenerate") / "src"
    for name, rows in SERIES.items():
        (src / name).mkdir(parents=True)
        (src / name / "run.yaml").write_text(f"id: {name}\ntitle: {name}\nstatus: finished\n")
        lines = [json.dumps(r).replace('"NaN"', "NaN") for r in rows]
        (src / name / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path_factory.mktemp("degenerate-site") / "site"
    build_published(BuildOptions(source=src, out=out, quiet=True))
    site = serve(out.resolve())
    yield site
    site.close()


@pytest.mark.parametrize("run", list(SERIES))
def test_every_key_and_button_on_a_degenerate_series(
    browser: Browser, browser_context_args: dict[str, Any], degenerate_site: ServedSite, run: str
) -> None:
    context, watch = new_watched_context(browser, browser_context_args, allowed=(degenerate_site.base, "data:"))
    try:
        page = context.new_page()
        page.goto(degenerate_site.url(f"runs/{run}/index.html"))
        groups = page.locator(".chart-live.chart-group")
        assert groups.count() >= 1
        for i in range(groups.count()):
            group = groups.nth(i)
            group.scroll_into_view_if_needed()
            page.wait_for_function(
                "g => g.classList.contains('ready') || g.classList.contains('failed') || !g.isConnected",
                arg=group.element_handle(),
            )
            plots = group.locator(".chart-plot")
            for j in range(plots.count()):
                plots.nth(j).focus()
                for key in KEYS:
                    page.keyboard.press(key)
            for button in group.locator("[data-zoom], [data-pan], [data-reset]").all():
                if button.is_visible() and button.is_enabled():
                    button.click()
            page.wait_for_timeout(50)
            watch.assert_clean(f"{run}, chart group {i}")
    finally:
        context.close()
