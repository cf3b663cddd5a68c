"""A run page's charts over another x axis, and its view kept in its link: a counter obs.yaml declares
(`x_axes: {tokens: [...]}`) offered on the run page and on compare.html whatever each run calls it,
the zoom, the axis and the explorer's series restored from a shared link, and a link's value the run
does not have said above the charts.

Expected values come from the metrics.jsonl this module writes, not from the page's data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from browserkit import ServedSite, new_watched_context, serve, settle, steady_box
from playwright.sync_api import Browser, BrowserContext, Page

from obs.build import BuildOptions
from obs.publish.extras import build_published

STEPS = 200
TOKENS_PER_STEP = (2048, 4096)  # run 0 logs num_input_tokens_seen, run 1 ntok (no name rule knows it)

X_RANGES = """() => Object.fromEntries(window.obsCharts.groups.map(g => [g.root.id,
  g.panels.map(p => p.u ? [p.u.scales.x.min, p.u.scales.x.max] : null)]))"""


def write_runs(src: Path) -> None:
    src.joinpath("obs.yaml").write_text(
        "x_axes:\n  tokens: [num_input_tokens_seen, ntok]\n  samples: seen\n", encoding="utf-8"
    )
    for k, name in enumerate(("num_input_tokens_seen", "ntok")):
        folder = src / f"r{k}"
        folder.mkdir(parents=True)
        folder.joinpath("run.yaml").write_text(f"obs_contract: 1\nid: tok-{k}\nconfig:\n  lr: {k + 1}e-4\n")
        lines = []
        for step in range(STEPS + 1):
            rec: dict[str, Any] = {
                "step": step,
                "loss": round(3.0 / (1 + step / 40) + 0.01 * k, 6),
                "grad_norm": 1 + (step % 7) / 10,
                name: step * TOKENS_PER_STEP[k],
                "epoch": round(step / 100, 4),
            }
            if k == 0:
                rec["seen"] = 4 if step == 100 else step * 8  # a counter that goes back: not an axis
            lines.append(json.dumps(rec))
        folder.joinpath("metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def tokens_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    src = tmp_path_factory.mktemp("tokens") / "runs"
    src.mkdir()
    write_runs(src)
    out = tmp_path_factory.mktemp("tokens-site") / "site"
    result = build_published(BuildOptions(source=src, out=out, quiet=True))
    assert result.errors == 0 and result.warnings == 1  # the counter that goes back
    site = serve(out)
    yield site
    site.close()


@pytest.fixture
def tpage(browser: Browser, browser_context_args: dict[str, Any], tokens_site: ServedSite) -> Iterator[Page]:
    context: BrowserContext
    context, watch = new_watched_context(browser, browser_context_args, (tokens_site.base, "data:"))
    try:
        page = context.new_page()
        yield page
        watch.assert_clean("run page axes")
    finally:
        context.close()


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def open_charts(page: Page, url: str, group: str = "#chart-training") -> None:
    page.goto(url)
    settle(page)
    page.locator(group).scroll_into_view_if_needed()
    page.wait_for_function(
        "sel => { const g = document.querySelector(sel); return g.classList.contains('ready')"
        " && g.querySelector('canvas') && !window.obsCharts.busy(); }",
        arg=group,
    )


def test_a_declared_counter_is_an_x_axis_of_the_run_page(tpage: Page, tokens_site: ServedSite) -> None:
    open_charts(tpage, tokens_site.url("runs/tok-0/index.html"))
    options = tpage.eval_on_selector_all("#chart-training select[data-x] option", "os => os.map(o => o.value)")
    # the declared axis by its name, not its series' name as well; 'seen' goes back, so no 'samples'
    assert options == ["step", "epoch", "tokens"]
    assert tpage.evaluate(X_RANGES)["chart-training"][0] == [0, STEPS]
    tpage.select_option("#chart-training select[data-x]", "tokens")
    ranges = tpage.evaluate(X_RANGES)
    assert ranges["chart-training"][0] == pytest.approx([0, STEPS * TOKENS_PER_STEP[0]])
    # every group of the page moves to the axis, and its picker says so
    assert tpage.eval_on_selector("#chart-explore select[data-x]", "s => s.value") == "tokens"
    assert query(tpage.url)["x"] == "tokens"
    plot = tpage.locator("#chart-training .chart-plot").first
    box = steady_box(tpage, plot)  # aimed once nothing drawn above it moves it
    tpage.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    tpage.wait_for_function("() => document.querySelector('#chart-training .ro-item')")
    item = tpage.eval_on_selector(
        "#chart-training .ro-item", "e => ({ x: Number(e.dataset.x), step: Number(e.dataset.step), t: e.textContent })"
    )
    assert item["x"] == item["step"] * TOKENS_PER_STEP[0]  # the read-out names the step of the point too
    assert f"(step {item['step']:g})" in item["t"]
    # the counter that goes back is named on the run page, in the run card's input diagnostics
    notes = tpage.locator("details", has_text="input diagnostic").text_content() or ""
    assert "x_axes.samples: the series 'seen' goes back at step 100 (from 792 to 4)" in notes


def test_zoom_axis_and_series_round_trip_through_the_link(tpage: Page, tokens_site: ServedSite) -> None:
    open_charts(tpage, tokens_site.url("runs/tok-0/index.html?x=tokens"))
    tpage.click("#chart-training [data-zoom=in]")
    tpage.locator("#chart-explore").scroll_into_view_if_needed()
    tpage.select_option("#chart-explore select[data-series]", "epoch")
    shared = tpage.url
    q = query(shared)
    lo, hi = (float(v) for v in q["zoom.training"].split(","))
    assert q["x"] == "tokens" and q["series"] == "epoch"
    assert hi - lo == pytest.approx(STEPS * TOKENS_PER_STEP[0] / 2)  # + halves the range shown
    open_charts(tpage, shared)
    assert tpage.evaluate(X_RANGES)["chart-training"] == [[lo, hi], [lo, hi]]
    assert tpage.eval_on_selector("#chart-training select[data-x]", "s => s.value") == "tokens"
    open_charts(tpage, shared, "#chart-explore")
    assert tpage.eval_on_selector("#chart-explore select[data-series]", "s => s.value") == "epoch"
    assert tpage.evaluate(X_RANGES)["chart-explore"] == [[0, STEPS * TOKENS_PER_STEP[0]]]  # its own range
    tpage.click("#chart-training [data-reset]")
    assert "zoom.training" not in query(tpage.url)
    tpage.locator("#chart-training .chart-plot").first.focus()
    tpage.keyboard.press("+")  # the keyboard's zoom is kept too
    assert "zoom.training" in query(tpage.url)


def test_what_a_run_page_link_asks_for_and_is_not_there_is_said(tpage: Page, tokens_site: ServedSite) -> None:
    open_charts(tpage, tokens_site.url("runs/tok-1/index.html?x=samples&zoom.training=5,9&series=nope"))
    note = tpage.inner_text(".chart-link")
    assert "x axis “samples”, which this run does not offer" in note
    assert "range 5,9 of the training charts on that axis (not applied)" in note
    assert "series “nope”" in note
    assert tpage.evaluate(X_RANGES)["chart-training"][0] == [0, STEPS]
    open_charts(tpage, tokens_site.url("runs/tok-1/index.html?zoom.training=9,5"))
    assert "not two increasing numbers" in tpage.inner_text(".chart-link")


def test_compare_offers_the_declared_counter_for_runs_that_name_it_differently(
    tpage: Page, tokens_site: ServedSite
) -> None:
    open_charts(tpage, tokens_site.url("compare.html?runs=tok-0,tok-1&metrics=loss&x=tokens"), "#chart-overlay")
    options = tpage.eval_on_selector_all("select[data-overlay-x] option", "os => os.map(o => o.value)")
    assert options == ["step", "epoch", "tokens"]
    lines = tpage.evaluate(
        "() => window.obsCharts.groups[0].panels[0].model.lines.map(l => [l.run, l.x[l.x.length - 1]])"
    )
    assert sorted(lines) == [["tok-0", STEPS * TOKENS_PER_STEP[0]], ["tok-1", STEPS * TOKENS_PER_STEP[1]]]
