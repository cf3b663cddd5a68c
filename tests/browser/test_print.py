"""Print: a run report printed to PDF by Chromium on A4 has nothing cut off at the right edge.

Chromium lays a printed page out at the width of the paper minus the @page margins. The test emulates
print media at exactly that width and checks every element box and every line of text on each run
page: nothing may end to the right of the printable width, and no box that clips its content (an
overflow other than visible) may hold content wider than itself. It also prints one report to an
A4 PDF, the way a reader would.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from browserkit import PageWatch, ServedSite, add_css_rule, run_pages, settle
from playwright.sync_api import Page

A4_WIDTH_MM = 210.0
PX_PER_MM = 96 / 25.4

OVERFLOW = """(width) => {
  const cls = e => typeof e.className === 'string' && e.className.trim()
                    ? '.' + e.className.trim().split(/\\s+/).join('.') : '';
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + cls(e);
  const boxes = [...document.querySelectorAll('body *')].filter(e => {
    const r = e.getBoundingClientRect(); return r.width > 0 && r.right > width + 0.5; })
    .map(e => `${name(e)} ends at ${Math.round(e.getBoundingClientRect().right)}px`);
  const clipped = [...document.querySelectorAll('body *')].filter(e => {
    const s = getComputedStyle(e);
    // .visually-hidden (text for screen readers: a 1 px clipped box on purpose) is not content cut off
    return s.display !== 'none' && s.overflowX !== 'visible' && e.scrollWidth > e.clientWidth + 1
           && !e.closest('.visually-hidden'); })
    .map(e => `${name(e)} clips content ${e.scrollWidth}px wide into ${e.clientWidth}px`);
  const text = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walker.nextNode());) {
    const range = document.createRange(); range.selectNodeContents(n);
    if ([...range.getClientRects()].some(r => r.width > 0 && r.right > width + 0.5))
      text.push(`text "${n.textContent.trim().slice(0, 40)}" in ${name(n.parentElement)} runs past the edge`);
  }
  return {page: document.documentElement.scrollWidth, problems: [...boxes, ...clipped, ...text]};
}"""


def printable_width_px(site: Path) -> int:
    """A4 width minus the left and right @page margins that obs.css sets for print."""
    css = (site / "assets" / "obs.css").read_text(encoding="utf-8")
    m = re.search(r"@page\s*\{[^}]*?margin:\s*([\d.]+)mm", css)
    assert m, "obs.css should set an @page margin in mm for print"
    return math.floor((A4_WIDTH_MM - 2 * float(m.group(1))) * PX_PER_MM)


def overflow(page: Page, url: str, width: int) -> dict[str, Any]:
    page.goto(url)
    settle(page)
    result: dict[str, Any] = page.evaluate(OVERFLOW, width)
    return result


@pytest.fixture
def print_page(page: Page, watch: PageWatch, served_demo: ServedSite) -> tuple[Page, int]:
    width = printable_width_px(served_demo.root)
    page.set_viewport_size({"width": width, "height": 1100})
    page.emulate_media(media="print")
    return page, width


def test_nothing_is_cut_off_at_the_right_edge_of_an_a4_page(
    print_page: tuple[Page, int], served_demo: ServedSite
) -> None:
    page, width = print_page
    problems = []
    for rel in run_pages(served_demo.root):
        found = overflow(page, served_demo.url(rel), width)
        problems += [f"{rel}: {p}" for p in found["problems"][:8]]
        if found["page"] > width:
            problems.append(f"{rel}: the page is {found['page']}px wide, the A4 print area {width}px")
    assert not problems, "\n".join(problems)


def test_the_check_sees_a_figure_wider_than_the_paper(print_page: tuple[Page, int], served_demo: ServedSite) -> None:
    page, width = print_page
    add_css_rule(page, "@media print { .fig img { width: 900px !important; max-width: none !important; } }")
    # run pages draw their curves in the browser (not printed); the campaign's static figure prints
    found = overflow(page, served_demo.url("campaigns/sepa-campaign/index.html"), width)
    assert any(p.startswith("img") for p in found["problems"]), found


def test_a_run_report_prints_to_an_a4_pdf(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    page.goto(served_demo.url("runs/spec03-r2/index.html"))
    settle(page)
    pdf = page.pdf(format="A4", prefer_css_page_size=True, print_background=True)
    assert pdf.startswith(b"%PDF-")
    boxes = re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
    assert len(boxes) >= 5, "a long report fills several pages"
    for w, h in boxes:  # A4 is 595.3 x 841.9 pt
        assert abs(float(w) - 595.3) < 1 and abs(float(h) - 841.9) < 1
