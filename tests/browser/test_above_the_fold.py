"""Above the fold: on every run page, in a 1366x768 window, the headline metric, its delta vs the
baseline, the recorded decision and the failures tile (with the way into the failure gallery when
the run has a probe; without one there is no gallery to open, and no link to it) are on screen
without scrolling. Checked on the element boxes (not on text), which must lie wholly inside the viewport.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from browserkit import DESKTOP, PageWatch, ServedSite, add_css_rule, run_pages, serve, settle
from playwright.sync_api import Page

from obs.build import BuildOptions
from obs.publish.extras import build_published

BOXES = ["#headline-metric", "#headline-delta", "#recorded-decision", "#failures-link"]
GALLERY_LINK = "#failures-link a"

BOX_FACTS = """(selectors) => selectors.map(sel => {
  const el = document.querySelector(sel);
  if (!el) return {sel, missing: true};
  const r = el.getBoundingClientRect(), s = getComputedStyle(el);
  return {sel, top: r.top, left: r.left, bottom: r.bottom, right: r.right, width: r.width, height: r.height,
          hidden: s.visibility !== 'visible' || s.display === 'none' || Number(s.opacity) === 0};
})"""


def outside_viewport(box: dict[str, float], width: int, height: int) -> bool:
    return box["top"] < 0 or box["left"] < 0 or box["bottom"] > height or box["right"] > width


def test_key_facts_are_above_the_fold_on_every_run_page(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    width, height = DESKTOP["width"], DESKTOP["height"]
    assert page.viewport_size == {"width": width, "height": height}
    pages = run_pages(served_demo.root)
    assert len(pages) >= 5
    problems = []
    for rel in pages:
        page.goto(served_demo.url(rel))
        settle(page)
        assert page.evaluate("scrollY") == 0
        has_probe = "of" in page.inner_text("#failures-link .big")  # "12 of 160 cases"
        if not has_probe:
            assert page.locator(GALLERY_LINK).count() == 0, f"{rel}: a gallery link without a probe"
        for box in page.evaluate(BOX_FACTS, [*BOXES, GALLERY_LINK] if has_probe else BOXES):
            if box.get("missing"):
                problems.append(f"{rel}: {box['sel']} is missing")
            elif box["hidden"] or box["width"] < 1 or box["height"] < 1:
                problems.append(f"{rel}: {box['sel']} is not visible")
            elif outside_viewport(box, width, height):
                problems.append(
                    f"{rel}: {box['sel']} is not wholly in the first 1366x768 screen "
                    f"(top {box['top']:.0f}, bottom {box['bottom']:.0f}, right {box['right']:.0f})"
                )
    assert not problems, "\n".join(problems)


def test_the_check_fails_when_a_box_is_pushed_down(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    """The same check on a page whose summary row is pushed below the fold must report it."""
    add_css_rule(page, ".summary { margin-top: 700px; }")
    page.goto(served_demo.url(run_pages(served_demo.root)[0]))
    settle(page)
    boxes = page.evaluate(BOX_FACTS, BOXES)
    assert all(outside_viewport(b, DESKTOP["width"], DESKTOP["height"]) for b in boxes)


HF_RUN = Path(__file__).resolve().parents[1] / "data" / "corpus" / "trainer_state" / "chandlerzuo__rlhf_recsys"


@pytest.fixture(scope="module")
def served_hf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    """An HF Trainer output folder as it comes (no run.yaml), built on its own."""
    src = tmp_path_factory.mktemp("hf") / "runs"
    shutil.copytree(HF_RUN, src / HF_RUN.name)
    out = tmp_path_factory.mktemp("hf-site") / "site"
    build_published(BuildOptions(source=src, out=out, quiet=True))
    site = serve(out)
    yield site
    site.close()


def test_a_foreign_run_shows_its_curves_on_the_first_screen(page: Page, served_hf: ServedSite) -> None:
    """What an HF Trainer folder cannot hold (hypothesis, baseline, data, gate) is one line, not four
    boxes: the training curves start on the first 1366x768 screen."""
    (rel,) = run_pages(served_hf.root)
    page.goto(served_hf.url(rel))
    settle(page)
    assert page.viewport_size == {"width": DESKTOP["width"], "height": DESKTOP["height"]}
    line = page.locator(".collapsed-sections").first
    assert "HF Trainer logs hold no hypothesis" in line.inner_text()
    (heading, plot) = page.evaluate(BOX_FACTS, ["#curves > h2", "#curves .chart-figure .chart-plot"])
    assert not outside_viewport(heading, DESKTOP["width"], DESKTOP["height"]), heading
    assert plot["top"] < DESKTOP["height"], plot  # the first chart's plot begins on the first screen
