"""A site of 3,000 runs in Chromium (issue 32): the leaderboard's search, sort and paging over runs loaded
from its data files, compare.html's searched and paged pick list, its paged runs table and a pair typed
by id, the ledger's and the sweeps' pages.

The site's pages over all runs are made from 3,000 synthetic summaries (tests/synthetic_site.py); no run
page is built, so the tests never follow a run's link, and the few runs the overlay draws get a copy of a
demo run's curves.js under their own name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browserkit import TIMEOUT_MS, PageWatch, ServedSite, serve
from playwright.sync_api import BrowserContext, Page, expect

from obs import urls
from synthetic_site import synthetic_summaries, write_site

N = 3_000


@pytest.fixture(scope="module")
def served_big(tmp_path_factory: pytest.TempPathFactory, demo_site: Path) -> Iterator[ServedSite]:
    out = write_site(synthetic_summaries(N), tmp_path_factory.mktemp("scale") / "site")
    curves = (demo_site / urls.run_curves("spec03-r2")).read_text(encoding="utf-8")
    for slug in [f"s00000-r{i}" for i in range(10)] + [f"s00042-r{i}" for i in range(10)]:
        path = out / urls.run_curves(slug)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = curves.replace('"id":"spec03-r2"', f'"id":"{slug}"').replace('"slug":"spec03-r2"', f'"slug":"{slug}"')
        path.write_text(text, encoding="utf-8")
    site = serve(out)
    yield site
    site.close()


@pytest.fixture
def big(context: BrowserContext, served_big: ServedSite) -> Iterator[Page]:
    context.set_default_timeout(TIMEOUT_MS)
    w = PageWatch(allowed=(served_big.base, "data:"))
    w.attach(context)
    yield context.new_page()
    w.assert_clean("after the test")


def headline_values(page: Page) -> list[float]:
    cells = page.eval_on_selector_all(
        "#runs-table tbody tr:not([hidden])", "rows => rows.map(r => r.cells[4].getAttribute('data-sort'))"
    )
    return [float(v) for v in cells if v not in (None, "")]


def test_the_leaderboard_searches_sorts_and_pages_every_run(big: Page, served_big: ServedSite) -> None:
    big.goto(served_big.url("index.html"))
    assert big.locator("#runs-table tbody tr").count() >= 100  # the newest rows are there before any script
    big.wait_for_selector("#runs-table[data-ready]")
    counter = big.locator("form.filters [data-count]")
    expect(counter).to_have_text(f"{N:,} of {N:,} runs")
    expect(big.locator("nav.pager .pager-where")).to_contain_text("page 1 of 30")
    big.get_by_role("button", name="Headline", exact=True).click()
    expect(big.locator("#runs-table th[aria-sort]")).to_contain_text("Headline")
    values = headline_values(big)
    assert len(values) == 100 and values == sorted(values)
    big.get_by_role("button", name="Older →").click()  # the next page continues the order over all runs
    expect(big.locator("nav.pager .pager-where")).to_contain_text("page 2 of 30")
    later = headline_values(big)
    assert later[0] >= values[-1] and later == sorted(later)
    big.get_by_role("searchbox").fill("s00123-r4")  # a run far from the newest 500 the page holds
    big.wait_for_function("() => document.querySelector('form.filters [data-count]').textContent.startsWith('1 of')")
    ids = big.eval_on_selector_all(
        "#runs-table tbody tr:not([hidden]) td:first-child a", "as => as.map(a => a.textContent)"
    )
    assert ids == ["s00123-r4"]


def test_compare_picks_runs_by_search_a_page_at_a_time(big: Page, served_big: ServedSite) -> None:
    big.goto(served_big.url("compare.html"))
    runs = big.locator("[data-overlay-runs]")
    big.wait_for_selector("[data-overlay-runs] input[type=checkbox]", state="attached")
    assert runs.locator("input[type=checkbox]").count() <= 52  # 2 picked + a page of 50, not 3,000 boxes
    # the default pair (the count is written once the picked runs' curves are loaded: waited for, not raced)
    expect(big.locator("[data-overlay-count]")).to_have_text("2")
    big.locator("summary", has_text="Runs:").click()
    big.locator("input[data-overlay-filter]").fill("s00042")
    big.wait_for_function(
        "() => document.querySelector('[data-overlay-runs] li.spec').textContent.startsWith('10 runs match')"
    )
    runs.locator("input[value='s00042-r3']").check()
    big.wait_for_function("() => document.querySelector('[data-overlay-count]').textContent === '3'")
    picked = big.eval_on_selector_all("[data-overlay-runs] input:checked", "bs => bs.map(b => b.value)")
    assert picked == ["s00000-r0", "s00000-r1", "s00042-r3"]  # the picked runs first, in id order
    assert "runs=s00000-r0,s00000-r1,s00042-r3" in big.url
    big.locator("input[data-overlay-filter]").fill("")
    where = big.locator("[data-overlay-runs] li.pager .pager-where")
    expect(where).to_have_text("page 1 of 60")  # 2,997 runs not picked, 50 a page
    big.locator("[data-overlay-runs] li.pager button", has_text="Next →").click()
    expect(where).to_have_text("page 2 of 60")


def test_compare_runs_table_pages_and_the_pair_is_typed_by_id(big: Page, served_big: ServedSite) -> None:
    big.goto(served_big.url("compare.html"))
    big.wait_for_function(
        "() => (document.querySelector('[data-runs-status]') || {}).textContent.includes('of 3,000 runs')"
    )
    expect(big.locator("table[data-runs-table] tbody tr")).to_have_count(200)
    pager = big.locator("#runs-table nav.pager .pager-where")
    expect(pager).to_have_text("runs 1–200 of 3,000 · page 1 of 15")
    big.locator("#runs-table nav.pager button", has_text="Next →").click()
    expect(pager).to_have_text("runs 201–400 of 3,000 · page 2 of 15")
    big.locator("input[data-runs-where]").fill("s00042")
    big.wait_for_function("() => document.querySelector('[data-runs-status]').textContent.startsWith('10 of 3,000')")
    expect(big.locator("#runs-table nav.pager")).to_be_hidden()
    b = big.locator("#compare-b")
    b.fill("s00042-r7")
    b.press("Enter")
    big.wait_for_function("() => document.getElementById('compare-b-id').textContent === 's00042-r7'")
    assert "b=s00042-r7" in big.url
    b.fill("no-such-run")
    b.press("Enter")
    expect(big.locator("#compare-status")).to_contain_text("No run of this site has the id “no-such-run”")


def test_ledger_and_sweeps_are_paged(big: Page, served_big: ServedSite) -> None:
    big.goto(served_big.url("ledger.html"))
    nav = big.locator("nav.static-pager").first
    n = int(re.search(r"of (\d+) · page 1 of (\d+)", nav.inner_text()).group(1))  # type: ignore[union-attr]
    assert big.locator("#ledger-table tbody tr").count() == 500 < n
    nav.get_by_role("link", name="Next →").click()
    big.wait_for_url(re.compile(r"ledger-2\.html$"))
    assert big.locator("#ledger-table tbody tr").count() == min(500, n - 500)
    big.goto(served_big.url("sweeps.html"))
    assert "Parallel coordinates of 300 runs" in (big.locator("svg.pcp title").first.text_content() or "")  # of 3,000
    assert big.locator("svg.pcp polyline").count() >= 300
    big.locator("[data-sweep-cut] a").click()
    big.wait_for_url(re.compile(r"sweeps/exact/runs\.html$"))
    assert big.locator("table.sortable tbody tr").count() == 500
    assert "runs 1–500 of 3,000 · page 1 of 6" in big.locator("nav.static-pager").first.inner_text()
