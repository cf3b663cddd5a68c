"""The answer comes first on the pages that compare runs: on every campaign, ablation-arms and spec
ladder page, in a 1366x768 window, the verdict (each candidate's Δ with its significance in words and
shape, or the ladder's latest rung and decision) is on screen without scrolling.
"""

from __future__ import annotations

import pytest
from browserkit import DESKTOP, PageWatch, ServedSite, settle, site_pages
from playwright.sync_api import Page

VERDICT = """() => { const v = document.getElementById('verdict'); if (!v) return null;
  const r = v.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, right: r.right, text: v.innerText,
          tiles: [...v.querySelectorAll('.tile')].map(t => { const b = t.getBoundingClientRect();
            return {bottom: b.bottom, right: b.right, text: t.innerText}; })}; }"""


def comparison_pages(root) -> list[str]:
    return [p for p in site_pages(root) if p.startswith(("campaigns/", "arms/", "specs/"))]


def test_the_verdict_is_above_the_fold(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    pages = comparison_pages(served_demo.root)
    assert {p.split("/")[0] for p in pages} == {"campaigns", "arms", "specs"}
    for rel in pages:
        page.goto(served_demo.url(rel))
        settle(page)
        v = page.evaluate(VERDICT)
        assert v is not None, f"{rel}: no verdict"
        assert v["tiles"], rel
        for tile in v["tiles"][:4]:
            assert tile["bottom"] <= DESKTOP["height"] and tile["right"] <= DESKTOP["width"], (rel, tile["text"][:40])
        if rel.startswith("specs/"):
            assert "Latest decision" in v["text"].title() or "LATEST DECISION" in v["text"], rel
        else:  # each candidate says whether it is significant, in words
            for tile in v["tiles"]:
                assert "significant" in tile["text"] or "not tested" in tile["text"], (rel, tile["text"])


@pytest.mark.parametrize("rel", ["index.html", "specs/spec03.html", "runs/spec03-r2/index.html"])
def test_significance_reads_without_colour(page: Page, watch: PageWatch, served_demo: ServedSite, rel: str) -> None:
    """Every significant delta carries a ▲ or ▼ and says which in words (for a screen reader too)."""
    page.goto(served_demo.url(rel))
    settle(page)
    marks = page.evaluate(
        """() => [...document.querySelectorAll(
               'td[data-label^="Δ"] .up, td[data-label^="Δ"] .down, .tile .big .up, .tile .big .down')]
             .filter(e => !e.closest("#trends-table, #momentum-table"))  // a direction there, not a test
             .map(e => ({cls: e.className, text: e.textContent}))"""
    )
    assert marks, rel
    for m in marks:
        arrow = "▲" if "up" in m["cls"].split() else "▼"
        words = "significant improvement" if arrow == "▲" else "significant degradation"
        assert m["text"].startswith(arrow) and words in m["text"], (rel, m)
