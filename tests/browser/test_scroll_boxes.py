"""Boxes that scroll (wide tables, long texts) are tab stops, and boxes that do not scroll are not,
for a reader who moves through a run page with Tab from its top without scrolling first.

(While sections were drawn only near the viewport, content-visibility: auto, Tab passed over a box in a
section not drawn yet; run pages now draw every section, and obs.js measures every box at the first
Tab.) Which boxes scroll depends on the width: the expected set is measured here, after
the tabbing, with every section drawn (not read from what obs.js decided).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from browserkit import ServedSite, new_watched_context, settle
from playwright.sync_api import Browser, Page

RUN = "runs/spec03-r2/index.html"
BOXES = ".table-wrap, pre.text"

# every box with the section it sits in; `scrolls` measured with every section drawn (CSSOM style,
# allowed by the page's CSP); boxes not rendered at all (in a closed <details>) left out
MEASURE = """(sel) => {
  document.querySelectorAll('main > .section').forEach(s => { s.style.contentVisibility = 'visible'; });
  const out = [...document.querySelectorAll(sel)].map((e, i) => ({
    i, section: (e.closest('main > .section') || {}).id || '',
    shown: e.checkVisibility(),
    scrolls: e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1,
  }));
  document.querySelectorAll('main > .section').forEach(s => { s.style.contentVisibility = ''; });
  return out;
}"""


def tab_through(page: Page, limit: int = 600) -> list[int]:
    """Press Tab from the top of the page until focus leaves it or comes back to an element it has
    been on (Chromium wraps around); the indexes of the boxes reached."""
    reached: list[int] = []
    page.evaluate("() => { window.__tabbed = new WeakSet(); }")
    for _ in range(limit):
        page.keyboard.press("Tab")
        i = page.evaluate(
            "(sel) => { const e = document.activeElement;"
            " if (!e || e === document.body || window.__tabbed.has(e)) return null;"
            " window.__tabbed.add(e);"
            " return [...document.querySelectorAll(sel)].indexOf(e); }",
            BOXES,
        )
        if i is None:
            return reached
        if i >= 0:
            reached.append(i)
    raise AssertionError(f"focus did not leave the page after {limit} presses of Tab")


@pytest.mark.parametrize("width", [1024, 390])
def test_tab_reaches_every_scroll_box_and_only_those(
    width: int, browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    context, watch = new_watched_context(
        browser, browser_context_args, (served_demo.base, "data:"), viewport={"width": width, "height": 800}
    )
    try:
        page = context.new_page()
        page.goto(served_demo.url(RUN))
        settle(page)
        assert page.evaluate("scrollY") == 0
        # the first Tab: every box that scrolls is a tab stop already, in sections not drawn too
        page.keyboard.press("Tab")
        state = page.evaluate(
            "(sel) => [...document.querySelectorAll(sel)].map(e => ({tab: e.tabIndex >= 0,"
            " drawn: e.checkVisibility({contentVisibilityAuto: true})}))",
            BOXES,
        )
        page.keyboard.press("Shift+Tab")
        page.evaluate("() => { document.activeElement && document.activeElement.blur(); scrollTo(0, 0); }")
        reached = tab_through(page)
        boxes = page.evaluate(MEASURE, BOXES)
        scrolling = [b["i"] for b in boxes if b["shown"] and b["scrolls"]]
        where = {b["i"]: b["section"] for b in boxes}
        if width == 1024:
            assert scrolling, state  # the demo has scroll boxes at this width
        not_yet = [(i, where[i]) for i in scrolling if not state[i]["tab"]]
        assert not not_yet, f"scroll boxes not tab stops at the first Tab: {not_yet}"
        missed = [(i, where[i]) for i in scrolling if i not in reached]
        assert not missed, f"scroll boxes Tab did not reach: {missed}"
        pointless = [(i, where[i]) for i in reached if i not in scrolling]
        assert not pointless, f"tab stops on boxes that do not scroll: {pointless}"
        watch.assert_clean(f"{RUN} at {width} px")
    finally:
        context.close()


def test_tables_of_rates_are_tab_stops_in_the_html(page: Page, served_demo: ServedSite) -> None:
    """Before any script runs, the tables of rates are tab stops from the HTML (axe's
    scrollable-region-focusable looks at them on load, and they scroll on most screens)."""
    html = page.request.get(served_demo.url(RUN)).text()
    marked = re.findall(r'<div class="table-wrap[^"]*"[^>]*data-scroll-focus[^>]*>', html)
    assert marked, "no table of rates marked in the HTML"
    assert all('tabindex="0"' in tag for tag in marked), marked
