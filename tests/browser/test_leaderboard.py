"""The leaderboard on the index page: sorting by column, filtering by text and facets, and a complete
table when JavaScript is off. Expected orders are computed here from the table's own cells, so the
tests check what the reader sees, not how obs.js does it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from browserkit import PageWatch, ServedSite, settle
from playwright.sync_api import Browser, Page

ROWS = """() => [...document.querySelectorAll('#runs-table tbody tr')].filter(r => !r.hidden).map(r => ({
  id: r.cells[0].textContent.trim().split(/\\s+/)[0],
  text: r.textContent.toLowerCase(),
  status: r.dataset.status, verdict: r.dataset.verdict, spec: r.dataset.spec,
  keys: [...r.cells].map(c => c.dataset.sort !== undefined ? c.dataset.sort : c.textContent.trim()),
  groups: [...r.cells].map(c => c.dataset.group || ""),
}))"""

COLUMNS = {"Run": (0, "text"), "Date": (2, "text"), "Headline": (4, "number"), "Δ vs baseline": (5, "number")}


@pytest.fixture
def index(page: Page, watch: PageWatch, served_demo: ServedSite) -> Page:
    page.goto(served_demo.url("index.html"))
    settle(page)
    return page


def rows(page: Page) -> list[dict[str, Any]]:
    return page.evaluate(ROWS)


def expected_order(before: list[dict[str, Any]], col: int, kind: str, descending: bool) -> list[tuple[str, str]]:
    """(group, value) in order: rows are ranked within their comparable set (a cell's `data-group`, sets in
    name order whatever the direction); missing values sink to the bottom of their set in both directions."""

    def natural(v: str) -> list[Any]:
        return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", v)]

    def key(r: dict[str, Any]) -> Any:
        v = r["keys"][col]
        return float(v) if kind == "number" else natural(v)

    out: list[tuple[str, str]] = []
    for group in sorted({r["groups"][col] for r in before}, key=natural):
        members = [r for r in before if r["groups"][col] == group]
        present = [r for r in members if r["keys"][col] != ""]
        missing = [r for r in members if r["keys"][col] == ""]
        ordered = sorted(present, key=key, reverse=descending) + missing
        out += [(group, r["keys"][col]) for r in ordered]
    return out


@pytest.mark.parametrize("header", list(COLUMNS))
def test_sorting_orders_rows_and_toggles_direction(index: Page, header: str) -> None:
    col, kind = COLUMNS[header]
    before = rows(index)
    assert len(before) >= 10
    button = index.get_by_role("button", name=header, exact=True)
    th = index.locator("#runs-table thead th").nth(col)
    for descending in (False, True):
        button.click()
        after = rows(index)
        assert th.get_attribute("aria-sort") == ("descending" if descending else "ascending")
        assert sorted(r["id"] for r in after) == sorted(r["id"] for r in before), "sorting lost or added rows"
        assert [(r["groups"][col], r["keys"][col]) for r in after] == expected_order(before, col, kind, descending)
    assert index.locator("#runs-table th[aria-sort]").count() == 1


def test_sorting_works_from_the_keyboard(index: Page) -> None:
    index.get_by_role("button", name="Headline", exact=True).focus()
    index.keyboard.press("Enter")
    ranked = [(r["groups"][4], float(r["keys"][4])) for r in rows(index) if r["keys"][4] != ""]
    assert len(ranked) >= 10
    for group in {g for g, _ in ranked}:  # ranked within each comparable set
        values = [v for g, v in ranked if g == group]
        assert values == sorted(values), group


def test_text_filter_shows_matching_rows_and_counts_them(index: Page) -> None:
    everything = rows(index)
    counter = index.locator("form.filters [data-count]")
    assert counter.inner_text() == f"{len(everything)} of {len(everything)} runs"
    box = index.get_by_role("searchbox")
    for query in ("spec03", "SEED 2", "maxrl+gtpo_sepa", "no-such-run-anywhere"):
        box.fill(query)
        shown = [r["id"] for r in rows(index)]
        wanted = [r["id"] for r in everything if query.lower() in r["text"]]
        assert shown == wanted, query
        assert counter.inner_text() == f"{len(wanted)} of {len(everything)} runs"
    box.fill("")
    assert len(rows(index)) == len(everything)


def test_facet_filters_combine_with_the_text_filter(index: Page) -> None:
    everything = rows(index)
    statuses = {r["status"] for r in everything}
    assert len(statuses) >= 2, "the demo should have runs in more than one status"
    status = index.get_by_label("Status")
    for s in sorted(statuses):
        status.select_option(s)
        assert [r["id"] for r in rows(index)] == [r["id"] for r in everything if r["status"] == s]
    status.select_option("")
    verdict = index.get_by_label("Verdict")
    verdict.select_option("none")
    undecided = [r["id"] for r in everything if r["verdict"] == "none"]
    assert [r["id"] for r in rows(index)] == undecided and undecided
    index.get_by_role("searchbox").fill("sepa")
    assert [r["id"] for r in rows(index)] == [i for i in undecided if "sepa" in i]
    verdict.select_option("")
    index.get_by_role("searchbox").fill("")
    assert len(rows(index)) == len(everything)


def test_table_is_complete_without_javascript(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    context = browser.new_context(**browser_context_args, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(served_demo.url("index.html"))
        n_runs = len(list((served_demo.root / "runs").iterdir()))
        assert page.locator("#runs-table tbody tr").count() == n_runs
        assert page.locator("#runs-table tbody tr a[href^='runs/']").count() == n_runs
        assert not page.locator("form.filters").is_visible(), "filter controls that cannot work are hidden"
    finally:
        context.close()
