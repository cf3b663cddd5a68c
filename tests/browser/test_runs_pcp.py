"""compare.html's parallel coordinates, linked with its runs table: brushing an axis (mouse or keyboard)
keeps the runs in its range in the table, the link and the overlay; axes reorder by drag or keyboard
and the table's columns follow; the plot fits a phone.

Expected runs come from the demo's run.yaml files (the learning rate each run declares) and the
bounds the page wrote into its filter, never from the plot's own account of what it kept.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from browserkit import PHONE, PageWatch, ServedSite, settle, steady_box
from playwright.sync_api import Page, expect

URL = "compare.html?cols=spec,config.train.lr,config.train.max_steps,final%20loss"
LR = "config.train.lr"

ROWS = """() => [...document.querySelectorAll('table[data-runs-table] tbody tr')]
  .map(r => r.cells[0].textContent.trim())"""
KEPT = """() => [...document.querySelectorAll('[data-pcp] path[data-kept="1"]')].map(p => p.dataset.run)"""
AXES = """() => [...document.querySelectorAll('[data-pcp] g.pcp-axis')].map(g => g.dataset.col)"""


def learning_rates(source: Path) -> dict[str, float]:
    out = {}
    for path in source.rglob("run.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        lr = (doc.get("config") or {}).get("train", {}).get("lr")
        if lr is not None:
            out[doc["id"]] = float(lr)
    return out


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def bounds(page: Page, col: str) -> tuple[float, float]:
    """The brush as the filter box says it: `col >= lo; col <= hi`."""
    clauses = [c.strip() for c in page.input_value("input[data-runs-where]").split(";")]
    lo = next(float(c.split(">=")[1]) for c in clauses if c.startswith(col + " >="))
    hi = next(float(c.split("<=")[1]) for c in clauses if c.startswith(col + " <="))
    return lo, hi


def open_pcp(page: Page, url: str) -> None:
    page.goto(url)
    settle(page)
    page.locator(".runs-pcp").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('[data-pcp] g.pcp-axis').length >= 2")


def test_brushing_an_axis_filters_the_table_and_survives_the_link(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    lrs = learning_rates(demo_source)
    open_pcp(page, served_demo.url(URL))
    assert page.evaluate(AXES) == ["spec", LR, "config.train.max_steps", "final loss"]
    hit = page.locator(f'g.pcp-axis[data-col="{LR}"] rect.pcp-hit')
    box = steady_box(page, hit)
    x = box["x"] + box["width"] / 2
    page.mouse.move(x, box["y"] + 4)
    page.mouse.down()
    page.mouse.move(x, box["y"] + box["height"] * 0.35, steps=6)
    page.mouse.up()
    lo, hi = bounds(page, LR)
    expected = sorted(rid for rid, lr in lrs.items() if lo <= lr <= hi)
    assert 0 < len(expected) < len(lrs)  # the brush kept some runs and dropped others
    assert sorted(page.evaluate(ROWS)) == expected
    assert sorted(page.evaluate(KEPT)) == expected
    assert f"{len(expected)} of " in page.inner_text("[data-pcp-status]")
    assert page.locator(f'g.pcp-axis[data-col="{LR}"] rect.pcp-brush').count() == 1
    link = page.url
    assert f"{LR} >= " in query(link)["where"]
    # the link shows the same brush and rows
    again = page.context.new_page()
    open_pcp(again, link)
    assert sorted(again.evaluate(ROWS)) == expected
    assert again.locator(f'g.pcp-axis[data-col="{LR}"] rect.pcp-brush').count() == 1
    again.close()
    # the brushed runs become the overlay's picks ("a selection opens compare")
    page.click("[data-runs-overlay]")
    page.wait_for_function("() => document.querySelectorAll('[data-overlay-runs] input:checked').length > 0")
    picked = page.eval_on_selector_all("[data-overlay-runs] input:checked", "bs => bs.map(b => b.dataset.id)")
    with_curves = page.eval_on_selector_all(
        "[data-overlay-runs] input:not([disabled])", "bs => bs.map(b => b.dataset.id)"
    )
    assert sorted(picked) == sorted(r for r in expected if r in with_curves)
    # a click on the axis without dragging clears its brush (aimed once the overlay's charts, drawn as their
    # data loads, no longer move the page: under a CPU burner the click landed beside the axis)
    settle(page)
    page.locator(".runs-pcp").scroll_into_view_if_needed()
    box = steady_box(page, hit)
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.locator("input[data-runs-where]")).to_have_value("")
    assert len(page.evaluate(ROWS)) == len(
        page.evaluate("() => JSON.parse(document.getElementById('compare-data').textContent).runs")
    )


def test_axes_reorder_by_drag_and_the_table_follows(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    open_pcp(page, served_demo.url(URL))
    name = page.locator('g.pcp-axis[data-col="final loss"] text.pcp-name')
    target = page.locator(f'g.pcp-axis[data-col="{LR}"] text.pcp-name')
    a, b = steady_box(page, name), steady_box(page, target)
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] - 12, b["y"] + b["height"] / 2, steps=8)
    page.mouse.up()
    order = ["spec", "final loss", LR, "config.train.max_steps"]
    assert page.evaluate(AXES) == order
    heads = page.eval_on_selector_all("table[data-runs-table] thead th", "ts => ts.map(t => t.textContent)")
    assert heads == ["run", *order]
    assert query(page.url)["cols"] == ",".join(order)


def test_the_keyboard_moves_axes_and_brushes_them(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    lrs = learning_rates(demo_source)
    open_pcp(page, served_demo.url(URL))
    page.focus(f'g.pcp-axis[data-col="{LR}"]')
    page.keyboard.press("Shift+ArrowRight")
    assert page.evaluate(AXES) == ["spec", "config.train.max_steps", LR, "final loss"]
    assert page.evaluate("() => document.activeElement.dataset.col") == LR  # the focus stays on the axis moved
    assert "moved to axis 3 of 4" in page.inner_text("[data-pcp-status]")
    # ↑ brushes the middle half of the axis (a log axis: the lr spans more than two decades), then moves it
    lo_all, hi_all = min(lrs.values()), max(lrs.values())
    assert hi_all / lo_all >= 100

    def at(u: float) -> float:
        return 10 ** (math.log10(lo_all) + u * (math.log10(hi_all) - math.log10(lo_all)))

    page.keyboard.press("ArrowUp")
    assert bounds(page, LR) == pytest.approx((at(0.25), at(0.75)), rel=1e-5)
    page.keyboard.press("ArrowUp")
    lo, hi = bounds(page, LR)
    assert (lo, hi) == pytest.approx((at(0.35), at(0.85)), rel=1e-5)
    assert sorted(page.evaluate(ROWS)) == sorted(r for r, lr in lrs.items() if lo <= lr <= hi)
    status = page.inner_text("[data-pcp-status]")
    assert status.startswith(f"{LR} from ") and " runs kept" in status
    page.keyboard.press("+")  # narrower, around its centre
    lo2, hi2 = bounds(page, LR)
    assert lo2 > lo and hi2 < hi
    assert page.evaluate("() => document.activeElement.dataset.col") == LR
    page.keyboard.press("Delete")
    assert page.input_value("input[data-runs-where]") == ""


def test_the_parallel_coordinates_fit_a_phone(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    page.set_viewport_size(PHONE)
    open_pcp(page, served_demo.url(URL))
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    box = page.locator("[data-pcp]").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    # every axis name and extreme is drawn inside the plot
    inside: Any = page.evaluate(
        """() => { const svg = document.querySelector('[data-pcp] svg'), r = svg.getBoundingClientRect();
          return [...svg.querySelectorAll('text')].every(t => { const b = t.getBoundingClientRect();
            return b.left >= r.left - 1 && b.right <= r.right + 1; }); }"""
    )
    assert inside
