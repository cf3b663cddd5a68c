"""The leaderboard on the index page: sorting by column, filtering by text and facets, and a complete
table when JavaScript is off. Expected orders are computed here from the table's own cells, so the
tests check what the reader sees, not how obs.js does it.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from browserkit import PageWatch, ServedSite, serve, settle
from playwright.sync_api import Browser, Page

from obs.build import BuildOptions
from obs.publish.extras import build_published

REPORTS = Path(__file__).resolve().parents[2] / "reports"

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


# ASCII punctuation and symbols in the order of the Unicode root collation (CLDR), which Intl.Collator uses
ROOT_PUNCTUATION = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def expected_order(before: list[dict[str, Any]], col: int, kind: str, descending: bool) -> list[tuple[str, str]]:
    """(group, value) in order: rows are ranked within their comparable set (a cell's `data-group`, sets in
    name order whatever the direction); missing values sink to the bottom of their set in both directions."""

    def natural(v: str) -> list[Any]:
        # the page sorts with Intl.Collator(numeric): digit runs as numbers, and punctuation before digits and
        # letters in the Unicode root collation's order ("-" before "+", "_" first), not in ASCII's
        def chars(t: str) -> list[tuple[int, Any]]:
            return [(0, ROOT_PUNCTUATION.index(c)) if c in ROOT_PUNCTUATION else (1, c.lower()) for c in t]

        return [int(t) if t.isdigit() else chars(t) for t in re.split(r"(\d+)", v)]

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
        # each row's run link (a row may link into its page once more: "seed level" -> #recipe-level)
        assert page.locator("#runs-table tbody tr td:first-child a[href^='runs/']").count() == n_runs
        assert not page.locator("form.filters").is_visible(), "filter controls that cannot work are hidden"
    finally:
        context.close()


# ------------------------------------------------------------------ tags, state in the URL, big sites


def test_tags_are_searchable(index: Page, demo_source: Path) -> None:
    tagged = {}
    for run_yaml in demo_source.rglob("run.yaml"):
        doc = yaml.safe_load(run_yaml.read_text(encoding="utf-8"))
        tagged[doc["id"]] = doc.get("tags") or []
    tag = "no-schema"
    wanted = sorted(i for i, tags in tagged.items() if tag in tags)
    assert wanted
    index.get_by_role("searchbox").fill("#" + tag)
    assert sorted(r["id"] for r in rows(index)) == sorted(
        next(r for r in [x["id"] for x in rows(index)] if r.startswith(i)) for i in wanted
    )


def test_filter_and_sort_live_in_the_url_hash(index: Page, served_demo: ServedSite) -> None:
    index.get_by_label("Status").select_option("finished")
    index.get_by_role("searchbox").fill("onto")
    index.get_by_role("button", name="Δ vs baseline", exact=True).click()
    index.get_by_role("button", name="Δ vs baseline", exact=True).click()
    state = index.evaluate("location.hash")
    assert state.startswith("#runs?") and "status=finished" in state and "q=onto" in state and "dir=descending" in state
    shown = [r["id"] for r in rows(index)]
    index.goto(served_demo.url("index.html") + state)  # a link to the view, opened anew
    index.reload()
    settle(index)
    assert index.get_by_role("searchbox").input_value() == "onto"
    assert index.get_by_label("Status").input_value() == "finished"
    assert index.locator("#runs-table thead th").nth(5).get_attribute("aria-sort") == "descending"
    assert [r["id"] for r in rows(index)] == shown
    index.get_by_role("searchbox").fill("")
    index.get_by_label("Status").select_option("")
    # the sort stays, the filters are cleared: in the header and in the link to the view
    assert index.locator("#runs-table thead th").nth(5).get_attribute("aria-sort") == "descending"
    state = index.evaluate("location.hash")
    assert "q=" not in state and "status=" not in state and "dir=descending" in state


@pytest.fixture(scope="module")
def served_paged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    """The demo with `leaderboard_rows: 5`: the page lists the 5 newest runs, leaderboard.js all 32."""
    src = tmp_path_factory.mktemp("paged") / "reports"
    shutil.copytree(REPORTS, src)
    with (src / "obs.yaml").open("a", encoding="utf-8") as fh:
        fh.write("\nleaderboard_rows: 5\n")
    out = tmp_path_factory.mktemp("paged-site") / "site"
    build_published(BuildOptions(source=src, out=out, quiet=True))
    site = serve(out)
    yield site
    site.close()


def test_a_big_leaderboard_pages_through_every_run(page: Page, served_paged: ServedSite, demo_source: Path) -> None:
    # a run folder: its run.yaml, or its metrics.jsonl alone (retrain-demo's layout)
    n_runs = len({p.parent for pattern in ("run.yaml", "metrics.jsonl") for p in demo_source.rglob(pattern)})
    page.goto(served_paged.url("index.html"))
    page.wait_for_selector("#runs-table[data-ready]")
    counter = page.locator("form.filters [data-count]")
    assert counter.inner_text() == f"{n_runs} of {n_runs} runs"
    assert page.locator("nav.pager").is_visible()
    assert len(rows(page)) == n_runs  # one page of 100 holds them all
    page.get_by_role("searchbox").fill("sepa")  # runs beyond the 5 in the page are found
    wanted = sorted(p.parent.name for p in (demo_source / "sepa-campaign").rglob("run.yaml"))
    wanted += sorted(p.parent.name for p in (demo_source / "retrain-demo").rglob("metrics.jsonl") if "sepa" in str(p))
    assert len(rows(page)) == len(wanted) == 12
    assert counter.inner_text() == f"12 of {n_runs} runs"
    before = rows(page)
    page.get_by_role("button", name="Headline", exact=True).click()
    after = rows(page)  # ranked within each comparable set (the two campaigns)
    assert [(r["groups"][4], r["keys"][4]) for r in after] == expected_order(before, 4, "number", False)
    assert "sort=4" in page.evaluate("location.hash")


def test_a_big_leaderboard_without_javascript_lists_the_newest(
    browser: Browser, browser_context_args: dict[str, Any], served_paged: ServedSite
) -> None:
    context = browser.new_context(**browser_context_args, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(served_paged.url("index.html"))
        assert page.locator("#runs-table tbody tr").count() == 5
        assert page.locator("[data-partial-note]").is_visible()
    finally:
        context.close()


def rows_in_view(page: Page, height: int) -> int:
    return int(
        page.evaluate(
            "h => [...document.querySelectorAll('#runs-table tbody tr')]"
            ".filter(r => !r.hidden && r.getBoundingClientRect().bottom <= h).length",
            height,
        )
    )


def test_first_rows_are_above_the_fold_with_the_explanations_folded(
    page: Page, watch: PageWatch, browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    from browserkit import PHONE, new_watched_context

    page.goto(served_demo.url("index.html"))
    settle(page)
    assert rows_in_view(page, 768) >= 3  # 1366 x 768
    help_text = page.locator("details.explain")
    assert not help_text.get_attribute("open") and "a bold ▲ marks" in (help_text.text_content() or "")
    page.click("caption a[href='#leaderboard-help']")  # the caption's link opens the explanations
    assert page.locator("#leaderboard-help").is_visible()
    context, phone_watch = new_watched_context(
        browser, browser_context_args, (served_demo.base, "data:"), viewport=PHONE
    )
    try:
        phone = context.new_page()
        phone.goto(served_demo.url("index.html"))
        settle(phone)
        assert rows_in_view(phone, PHONE["height"]) >= 1  # the facets folded under one line
        assert not phone.get_by_label("Status").is_visible()
        phone.click("details.facets summary")
        phone.get_by_label("Status").select_option("finished")
        # a link that sets a facet opens them
        phone.goto(served_demo.url("index.html") + phone.evaluate("location.hash"))
        phone.reload()
        settle(phone)
        assert phone.get_by_label("Status").is_visible() and phone.get_by_label("Status").input_value() == "finished"
        assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        phone_watch.assert_clean("index.html at 390 px")
    finally:
        context.close()
