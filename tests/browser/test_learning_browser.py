"""A learning key's page in Chromium: the reward chart is drawn (uPlot, the windows shaded), its readout
reads a session, the static SVG stands in without JavaScript, and on a phone nothing scrolls sideways."""

from __future__ import annotations

from typing import Any

from browserkit import DESKTOP, PHONE, PageWatch, ServedSite, new_watched_context, settle
from playwright.sync_api import Browser, BrowserContext

PAGE = "learning/incident-triage.html"

NO_SIDEWAYS = """() => {
  const out = [];
  if (document.scrollingElement.scrollWidth > innerWidth) out.push('page ' + document.scrollingElement.scrollWidth);
  for (const box of document.querySelectorAll('.table-wrap')) {
    if (box.scrollWidth > box.clientWidth + 1) out.push((box.querySelector('table') || box).id);
  }
  return out;
}"""


def test_chart_is_drawn_with_its_windows(context: BrowserContext, served_demo: ServedSite, watch: PageWatch) -> None:
    page = context.new_page()
    page.goto(served_demo.url(PAGE))
    settle(page)
    page.wait_for_selector("#reward-chart .chart-live canvas")
    box = page.locator("#reward-chart .chart-live").bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] >= 200
    assert page.locator("#reward-chart svg.static-fallback").is_hidden()
    # the windows are shaded: the top corner of the plot is white before the baseline window and tinted in it
    # and in the recent window (the canvas is read at the plot's corners, where no session's dot lies)
    plot = page.locator("#reward-chart .u-over").bounding_box()
    assert plot is not None
    pixels = page.evaluate(
        """() => {
          const canvas = document.querySelector('#reward-chart canvas');
          const over = document.querySelector('#reward-chart .u-over');
          const c = canvas.getBoundingClientRect(), o = over.getBoundingClientRect(), ctx = canvas.getContext('2d');
          const at = (x, y) => Array.from(ctx.getImageData(Math.round(x - c.left), Math.round(y - c.top), 1, 1).data);
          return {before: at(o.left + 2, o.top + 2), recent: at(o.right - 2, o.top + 2)};
        }"""
    )
    assert pixels["before"][:3] == [255, 255, 255] or pixels["before"][3] == 0
    assert pixels["recent"][3] > 0 and pixels["recent"][:3] != [255, 255, 255]
    page.mouse.move(plot["x"] + plot["width"] - 3, plot["y"] + plot["height"] / 2)
    readout = page.locator("[data-learning-readout]").text_content() or ""
    assert readout.startswith("session 160 (inc-0160)") and "reward" in readout
    assert page.evaluate(NO_SIDEWAYS) == []


def test_phone_has_no_sideways_scroll(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    context, watch = new_watched_context(browser, browser_context_args, (served_demo.base, "data:"), viewport=PHONE)
    try:
        for rel in (PAGE, "learning/index.html"):
            page = context.new_page()
            page.goto(served_demo.url(rel))
            settle(page)
            assert page.evaluate(NO_SIDEWAYS) == [], rel
            page.close()
        watch.assert_clean("phone")
    finally:
        context.close()


def test_without_javascript_the_static_chart_shows(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    context, watch = new_watched_context(
        browser, browser_context_args, (served_demo.base, "data:"), java_script_enabled=False, viewport=DESKTOP
    )
    try:
        page = context.new_page()
        page.goto(served_demo.url(PAGE))
        page.wait_for_load_state("load")
        assert page.locator("#reward-chart svg.static-fallback").is_visible()
        assert page.locator("#reward-chart .chart-live").is_hidden()
        assert page.locator("#reward-chart svg rect.win-recent").count() == 1
        watch.assert_clean("no JavaScript")
    finally:
        context.close()
