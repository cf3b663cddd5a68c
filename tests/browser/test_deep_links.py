"""A run page opened at a deep link: a filtered case browser (#cases?outcome=failing&family=...), the
browser itself, a failure group or a section below them. The page must land on what the link names
without moving it afterwards: the cumulative layout shift of the load (Chromium's 'layout-shift'
entries, buffered, those without recent input summed, as web-vitals counts them) stays under 0.05,
a "good" CLS. The case browser fills its list from data files after the page has loaded (at once
when the link leads into it, else when it nears the window); that used to move what the reader saw
(#cases 0.46, #lessons 0.09 before this test).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browserkit import PHONE, PageWatch, ServedSite, new_watched_context, settle
from playwright.sync_api import Browser, Page

RUN = "runs/spec03-r2/index.html"
GOOD_CLS = 0.05

# Registered before the page's own scripts run; buffered, so shifts before it are counted too.
CLS_OBSERVER = """
window.__cls = 0;
new PerformanceObserver(list => {
  for (const e of list.getEntries()) if (!e.hadRecentInput) window.__cls += e.value;
}).observe({type: 'layout-shift', buffered: true});
"""


def open_at(page: Page, url: str) -> float:
    """Load `url` in a fresh page, wait until it is settled (case browser filled, charts in view
    drawn, two more frames and a pause for anything late) and return the load's layout shift."""
    page.add_init_script(CLS_OBSERVER)
    page.goto(url)
    # the case browser fills when the link leads into it or it is within a screen of the window
    # (cases.js); a link to a section far from it leaves it empty
    page.wait_for_function(
        """() => {
          const c = document.querySelector('#cases'), r = c.getBoundingClientRect();
          return c.hasAttribute('data-ready') || r.bottom < -innerHeight || r.top > 2 * innerHeight;
        }"""
    )
    settle(page)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.wait_for_timeout(300)
    return float(page.evaluate("window.__cls"))


def in_view(page: Page, selector: str) -> dict[str, Any]:
    return page.eval_on_selector(
        selector,
        "el => { const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, height: innerHeight}; }",
    )


def failing_in_family(served_demo: ServedSite, demo_source: Path, family: str) -> list[str]:
    """Expected from the run's own files: the failing cases (analysis.json) of one family (probe.jsonl)."""
    analysis = json.loads((served_demo.root / "runs/spec03-r2/analysis.json").read_text(encoding="utf-8"))
    failing = {i for g in analysis["failures"] for i in g["case_ids"]}
    lines = (demo_source / "spec03/r2/probe.jsonl").read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    return sorted(c["id"] for c in cases if c["id"] in failing and c.get("family") == family)


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_a_filtered_case_browser_link_lands_on_its_cases_without_moving(
    viewport: str,
    page: Page,
    watch: PageWatch,
    browser: Browser,
    browser_context_args: dict[str, Any],
    served_demo: ServedSite,
    demo_source: Path,
) -> None:
    family = "pipeline_lane"
    wanted = failing_in_family(served_demo, demo_source, family)
    assert len(wanted) > 3
    # the family by its name (the hash grammar of cases.js: names, not places in a list)
    url = served_demo.url(f"{RUN}#cases?outcome=failing&family={family}")
    context = None
    if viewport == "phone":
        context, phone_watch = new_watched_context(
            browser, browser_context_args, (served_demo.base, "data:"), viewport=PHONE
        )
        page = context.new_page()
    try:
        cls = open_at(page, url)
        assert cls < GOOD_CLS, f"layout shift {cls:.3f} on {url} ({viewport})"
        status = page.locator("#cases .case-status").inner_text()
        assert f"of {len(wanted)} matching" in status, status
        listed = page.eval_on_selector_all("#cases .case-item .cid", "els => els.map(e => e.textContent)")
        assert listed and set(listed) <= set(wanted), listed
        # the browser's heading at the top of the window, and its first cases under it, in view
        heading = in_view(page, "#cases > h3")
        assert 0 <= heading["top"] < 40, heading
        first = in_view(page, "#cases .case-item")
        assert first["top"] > 0 and first["bottom"] <= first["height"], first
        assert page.evaluate("location.hash").startswith("#cases?")
        if context is not None:
            phone_watch.assert_clean(f"{url} at 390 px")
    finally:
        if context is not None:
            context.close()


@pytest.mark.parametrize(
    ("anchor", "target"),
    [
        ("#cases", "#cases"),  # the browser, unfiltered: its list fills in under its heading
        ("#fail-2", "#fail-2"),  # a failure group, above the browser
        ("#lessons", "#lessons"),  # a section below the browser, which fills in above it
    ],
)
def test_an_anchor_on_a_run_page_lands_without_moving(
    anchor: str, target: str, page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    cls = open_at(page, served_demo.url(RUN + anchor))
    assert cls < GOOD_CLS, f"layout shift {cls:.3f} on {RUN}{anchor}"
    box = in_view(page, target)
    assert 0 <= box["top"] < 40, box  # at the top of the window (scroll-margin-top: 12px)
