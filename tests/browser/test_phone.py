"""On a phone (390 px wide), every page of the demo and of a site built from the shared corpus of
real runs: nothing scrolls sideways, tables reflow instead of scrolling inside a box, the numbers that
decide (headline, Δ, verdict, a decision's rationale and next run) are on screen in every row, and
identifiers and dates break only between their parts, never inside one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browserkit import PHONE, ServedSite, new_watched_context, serve, settle, site_pages
from playwright.sync_api import Browser, BrowserContext, Page

from obs.build import BuildOptions
from obs.publish.extras import build_published

REPO = Path(__file__).resolve().parents[2]


def corpus_source() -> Path:
    """The shared corpus of real runs beside the repository when there is one, else the copy in tests/data."""
    candidates = [os.environ.get("OBS_CORPUS", ""), REPO.parent / "shared/corpus", REPO.parent.parent / "shared/corpus"]
    for c in candidates:
        if c and Path(c, "README.md").is_file():
            return Path(c)
    return REPO / "tests/data/corpus"


@pytest.fixture(scope="session")
def served_corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    out = tmp_path_factory.mktemp("corpus-site") / "site"
    build_published(BuildOptions(source=corpus_source(), out=out, quiet=True))
    site = serve(out)
    yield site
    site.close()


@pytest.fixture
def phone(browser: Browser, browser_context_args: dict[str, Any]) -> Iterator[BrowserContext]:
    context = browser.new_context(**{**browser_context_args, "viewport": PHONE})
    yield context
    context.close()


# what a page must not do at 390 px; each entry is a list of problems (empty: fine)
PHONE_FACTS = """() => {
  const W = innerWidth, out = {sideways: [], boxes: [], broken: [], spills: []};
  const sw = document.scrollingElement.scrollWidth;
  if (sw > W) out.sideways.push('page is ' + sw + ' px wide');
  // a table's box may not scroll sideways (a chart may: it says so with .chart-scroll)
  for (const box of document.querySelectorAll('.table-wrap:not(.chart-scroll)')) {
    if (box.scrollWidth > box.clientWidth + 1) {
      out.boxes.push((box.querySelector('table') || box).id + ': ' + box.textContent.trim().slice(0, 40));
    }
  }
  // a leaderboard card's value stays in its column (an interval kept on one line ran under the verdict's text)
  for (const td of document.querySelectorAll('#runs-table > tbody > tr:not([hidden]) > td')) {
    const r = td.getBoundingClientRect();
    if (!r.width) continue;
    const over = [...td.querySelectorAll('*')].find(el => {
      const e = el.getBoundingClientRect();
      return e.width > 0 && e.right > r.right + 1;
    });
    if (over) out.spills.push((td.dataset.label || '') + ': ' + over.textContent.trim().slice(0, 40));
  }
  // an identifier breaks only after a separator or at a space; a date never breaks
  const SEP = '._/:=,|@+- ';
  const nodes = [];
  for (const id of document.querySelectorAll('.ident')) {
    for (const n of id.childNodes) if (n.nodeType === 3) nodes.push([n, false]);
  }
  for (const d of document.querySelectorAll('.date')) if (d.firstChild) nodes.push([d.firstChild, true]);
  for (const [n, whole] of nodes) {
    if (!n.textContent.trim() || n.parentElement.closest('[hidden], details:not([open]), .toc')) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    if (new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top))).size < 2) continue;
    if (whole) { out.broken.push('date ' + n.textContent); continue; }
    let top = null;
    for (let i = 0; i < n.length; i++) {
      range.setStart(n, i); range.setEnd(n, i + 1);
      const r = range.getBoundingClientRect();
      if (r.width === 0) continue;
      const atSeparator = SEP.includes(n.textContent[i - 1]) || n.textContent[i] === ' ';
      if (top !== null && Math.round(r.top) > top + 2 && !atSeparator) {
        out.broken.push(n.textContent.slice(0, i) + '/' + n.textContent.slice(i));
        break;
      }
      top = Math.round(r.top);
    }
  }
  return out;
}"""


def check_page(page: Page, url: str) -> list[str]:
    page.goto(url)
    settle(page)
    facts = page.evaluate(PHONE_FACTS)
    return [f"{kind}: {what}" for kind in ("sideways", "boxes", "broken", "spills") for what in facts[kind][:3]]


@pytest.mark.parametrize("which", ["demo", "corpus"])
def test_no_page_scrolls_sideways_on_a_phone(request: pytest.FixtureRequest, phone: BrowserContext, which: str) -> None:
    site: ServedSite = request.getfixturevalue("served_demo" if which == "demo" else "served_corpus")
    pages = site_pages(site.root)
    kinds = {p.split("/")[0] if "/" in p else p for p in pages}
    if which == "demo":  # every page type: leaderboard, ledger, sweeps, compare, runs and their diffs, specs, ...
        assert {"index.html", "ledger.html", "sweeps.html", "compare.html", "404.html"} <= kinds
        assert {"runs", "specs", "campaigns", "arms"} <= kinds
    page = phone.new_page()
    problems = []
    for rel in pages:
        problems += [f"{rel}: {p}" for p in check_page(page, site.url(rel))]
        assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth"), rel
    assert not problems, "\n".join(problems)


def test_the_check_sees_a_page_that_scrolls_sideways(phone: BrowserContext, served_demo: ServedSite) -> None:
    page = phone.new_page()
    page.goto(served_demo.url("index.html"))
    page.evaluate("document.querySelector('h1').style.width = '900px'")  # a test-only change, not the CSP's concern
    assert not page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")


LADDER_DELTA = "Δ vs its baseline"
VISIBLE_CELLS = """(selector) => [...document.querySelectorAll(selector)]
  .filter(c => !c.closest('tr[hidden]')).map(c => {
    const r = c.getBoundingClientRect();
    const ok = r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= innerWidth;
    return {text: c.textContent.trim().slice(0, 30), ok};
  })"""


@pytest.mark.parametrize(
    ("rel", "selectors"),
    [
        ("index.html", [f'#runs-table td[data-label="{c}"]' for c in ("Headline", "Δ vs baseline", "Verdict")]),
        ("specs/spec03.html", [f'#ladder-table td[data-label="{c}"]' for c in ("Headline", LADDER_DELTA, "Verdict")]),
        ("ledger.html", [f'#ledger-table td[data-label="{c}"]' for c in ("Verdict", "Rationale", "Next")]),
        ("runs/spec03-r2/index.html", ["#probe td[data-label^='Δ exact']", "#headline-delta", "#recorded-decision"]),
    ],
)
def test_what_decides_is_on_screen_in_every_row(
    phone: BrowserContext, served_demo: ServedSite, rel: str, selectors: list[str]
) -> None:
    page = phone.new_page()
    page.goto(served_demo.url(rel))
    settle(page)
    for sel in selectors:
        cells = page.evaluate(VISIBLE_CELLS, sel)
        assert cells, sel
        cut = [c["text"] for c in cells if not c["ok"]]
        assert not cut, f"{rel} {sel}: cut off or hidden: {cut[:3]}"


def test_reflowed_rows_label_their_values(phone: BrowserContext, served_demo: ServedSite) -> None:
    """A reflowed row shows each value under the column's name (its data-label), as the table did."""
    page = phone.new_page()
    page.goto(served_demo.url("specs/spec03.html"))
    settle(page)
    label = page.evaluate(
        """() => getComputedStyle(
             document.querySelector('#ladder-table td[data-label="Verdict"]'), '::before').content"""
    )
    assert label == '"Verdict"'
    assert page.evaluate("getComputedStyle(document.querySelector('#ladder-table thead')).display") == "none"


def test_the_phone_layout_holds_from_file_urls(
    browser: Browser, browser_context_args: dict[str, Any], demo_site: Path
) -> None:
    context, watch = new_watched_context(browser, browser_context_args, ("file://", "data:"), viewport=PHONE)
    try:
        page = context.new_page()
        page.goto((demo_site / "index.html").resolve().as_uri())
        settle(page)
        assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
        watch.assert_clean("index.html from file://")
    finally:
        context.close()
