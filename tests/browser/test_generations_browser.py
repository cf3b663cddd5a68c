"""The run page's generations viewer (issue 33) as a reader uses it in Chromium, on the demo's retrain-layout
campaign: every generation listed page by page, filters by step range and reward, text search (hostile text
shown as text, never run), two steps side by side, the filter kept in the URL, no sideways scroll at 390 px.
Expected results are computed here from the run's generations.jsonl, not from what the script does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browserkit import PHONE, PageWatch, ServedSite, new_watched_context, settle
from playwright.sync_api import Browser, Page

RUN_DIR = "retrain-demo/runs/maxrl+gtpo_sepa_s42"
RUN = "runs/retrain-demo-runs-maxrl+gtpo_sepa_s42/index.html"
VIEWER = "#generations-viewer"


def generations(demo_source: Path) -> list[dict[str, Any]]:
    path = demo_source / RUN_DIR / "emergence/generations.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{**r, "line": i} for i, r in enumerate(rows, start=1)]


def listed(page: Page) -> None:
    """Until the viewer has listed its current filter's generations (aria-busy while it reads data files)."""
    page.wait_for_selector(f"{VIEWER}[data-ready]:not([aria-busy])", state="attached")


def status(page: Page) -> str:
    return page.locator(f"{VIEWER} .gen-status").text_content() or ""


def show_all(page: Page) -> list[int]:
    """Press "show more" until every match is listed; the log lines of the listed generations."""
    more = page.locator(f"{VIEWER} [data-more]")
    listed(page)
    while more.is_visible():
        count = page.locator(f"{VIEWER} .gen-list .gen").count()
        more.click()
        page.wait_for_function(
            "(n) => document.querySelectorAll('#generations-viewer .gen-list .gen').length > n", arg=count
        )
    heads = page.eval_on_selector_all(f"{VIEWER} .gen-list .gen .gen-head .note", "els => els.map(e => e.textContent)")
    return [int(h.split()[-1]) for h in heads]


def set_filter(page: Page, **values: str) -> None:
    for name, value in values.items():
        page.locator(f'{VIEWER} form.gen-filters [name="{name}"]').fill(value)
    page.wait_for_function(  # the viewer has taken the filter (it writes it into the URL as it applies it)
        """(v) => {
             const p = new URLSearchParams(location.hash.split('?')[1] || '');
             return Object.entries(v).every(([k, x]) => (p.get(k) || '') === x);
           }""",
        arg=values,
    )
    listed(page)


@pytest.fixture
def viewer(page: Page, watch: PageWatch, served_demo: ServedSite) -> Page:
    page.goto(served_demo.url(RUN))
    settle(page)
    page.locator("#generations").scroll_into_view_if_needed()
    listed(page)
    return page


def test_every_generation_is_listed_and_pages_in(viewer: Page, demo_source: Path) -> None:
    gens = generations(demo_source)
    assert f"of {len(gens)} matching generations" in status(viewer)
    assert viewer.locator(f"{VIEWER} .gen-list .gen").count() == 10
    assert show_all(viewer) == [g["line"] for g in gens]


def test_step_range_and_reward_filters(viewer: Page, demo_source: Path) -> None:
    gens = generations(demo_source)
    set_filter(viewer, **{"from": "20", "to": "60", "rmin": "1"})
    wanted = [g["line"] for g in gens if 20 <= g["step"] <= 60 and g["reward"] >= 1]
    assert wanted, "the demo run has rewarded generations between steps 20 and 60"
    assert show_all(viewer) == wanted
    heads = viewer.eval_on_selector_all(f"{VIEWER} .gen-list .gen-step", "els => els.map(e => e.textContent)")
    assert all(20 <= int(h.split()[-1]) <= 60 for h in heads)
    set_filter(viewer, **{"from": "", "to": "", "rmin": "", "rmax": "0"})
    assert show_all(viewer) == [g["line"] for g in gens if g["reward"] <= 0]


def test_text_search_shows_hostile_text_as_text(viewer: Page, demo_source: Path) -> None:
    gens = generations(demo_source)
    set_filter(viewer, q="<script>")
    wanted = [g["line"] for g in gens if "<script>" in (g["prompt"] + g["completion"]).lower()]
    assert len(wanted) == 1
    assert show_all(viewer) == wanted
    shown = viewer.locator(f"{VIEWER} .gen-list .gen-completion").first.text_content() or ""
    assert "<script>alert('gen')</script></pre><b>bold?</b>" in shown
    assert viewer.evaluate("document.querySelectorAll('#generations .gen script, #generations .gen b').length") == 0
    set_filter(viewer, q="MULTIPLYING")  # case-insensitive, in completions
    assert show_all(viewer) == [g["line"] for g in gens if "multiplying" in g["completion"].lower()]
    # the filter is in the URL: a reload keeps it
    viewer.reload()
    listed(viewer)
    assert viewer.locator(f'{VIEWER} [name="q"]').input_value() == "MULTIPLYING"


def test_two_steps_side_by_side(viewer: Page, demo_source: Path) -> None:
    gens = generations(demo_source)
    pick = viewer.locator(f"{VIEWER} form.gen-pick")
    pick.locator('[name="a"]').select_option("20")
    pick.locator('[name="b"]').select_option("80")
    for side, step in (("a", 20), ("b", 80)):
        box = viewer.locator(f'{VIEWER} [data-side="{side}"]')
        box.locator(f"h4:text-is('Step {step}')").wait_for()
        at = [g for g in gens if g["step"] == step]
        mean = sum(g["reward"] for g in at) / len(at)
        note = box.locator("p.note").text_content() or ""
        assert note.startswith(f"{len(at)} generations, mean reward {float(f'{mean:.4g}'):g} over {len(at)}")
        steps = box.locator(".gen-step").all_text_contents()
        assert steps and all(s == f"step {step}" for s in steps)
        lines = [int(t.split()[-1]) for t in box.locator(".gen-head .note").all_text_contents()]
        assert lines == [g["line"] for g in at][:5]
    # side by side on a desktop
    a = viewer.locator(f'{VIEWER} [data-side="a"]').bounding_box()
    b = viewer.locator(f'{VIEWER} [data-side="b"]').bounding_box()
    assert a and b and b["x"] > a["x"] + a["width"] - 1 and abs(a["y"] - b["y"]) < 2


def test_no_sideways_scroll_at_390(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    context, watch = new_watched_context(
        browser, browser_context_args, (served_demo.base, "data:"), viewport=PHONE, is_mobile=True, has_touch=True
    )
    try:
        page = context.new_page()
        page.goto(served_demo.url(RUN) + "#generations-viewer?q=make")
        settle(page)
        page.locator("#generations").scroll_into_view_if_needed()
        listed(page)
        page.locator(f"{VIEWER} .gen-prompt summary").first.click()  # an opened prompt too
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the page scrolls sideways: {width} px"
        a = page.locator(f'{VIEWER} [data-side="a"]').bounding_box()
        b = page.locator(f'{VIEWER} [data-side="b"]').bounding_box()
        assert a and b and b["y"] >= a["y"] + a["height"] - 1  # the two steps stack on a phone
        watch.assert_clean("generations viewer at 390 px")
    finally:
        context.close()
