"""Interactive curves as a reader uses them, checked against the data they were drawn from.

The read-out's numbers are compared with the runs' own metrics.jsonl files (not with the page's
data), the overlay's table with the runs' logs, the campaign picker with the campaign's data file;
every axis of every chart must have distinct tick labels. The charts must work from file:// and
under a sub-path, without a console error or a request to another host (the `watch` fixture and
new_watched_context fail the test on either).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from browserkit import PageWatch, ServedSite, new_watched_context, next_frame, run_pages, settle, steady_box
from playwright.sync_api import Browser, Page

from obs.render.chartdata import PREFIX, SUFFIX

RUN = "runs/spec03-r2/index.html"
RL_RUN = "runs/grpo-rl-07/index.html"
CAMPAIGN = "campaigns/sepa-campaign/index.html"
ARMS = "arms/onto-arms/index.html"

READOUT = """(sel) => [...document.querySelectorAll(sel + ' .ro-item')].map(e => ({
  series: e.dataset.series, run: e.dataset.run || null, step: Number(e.dataset.step),
  value: Number(e.dataset.value), shown: e.querySelector('.ro-value').textContent,
  text: e.textContent }))"""

AXES = """() => (window.obsCharts ? window.obsCharts.groups : []).flatMap(g => g.panels.filter(p => p.u).map(p => ({
  group: g.root.id, log: p.log,
  axes: p.u.axes.map(a => (a._values || []).filter(v => v !== '')) })))"""

X_RANGES = """(sel) => window.obsCharts.groups.filter(g => '#' + g.root.id === sel)
  .flatMap(g => g.panels.filter(p => p.u).map(p => [p.u.scales.x.min, p.u.scales.x.max]))"""


def metrics_by_step(source: Path, folder: str) -> dict[float, dict[str, Any]]:
    rows: dict[float, dict[str, Any]] = {}
    for line in (source / folder / "metrics.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            rows[float(rec["step"])] = rec
    return rows


def data_file(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    assert raw.startswith(PREFIX) and raw.endswith(SUFFIX)
    value: dict[str, Any] = json.loads(raw[len(PREFIX) : -len(SUFFIX)])
    return value


def xs(entry: dict[str, Any]) -> list[float]:
    if "dx" in entry:
        out, acc = [], 0
        for d in entry["dx"]:
            acc += d
            out.append(float(acc))
        return out
    return [float(x) for x in entry["x"]]


def shown_number(text: str) -> float:
    return float(text.replace("\u2212", "-").replace(",", ""))


def ready(page: Page, group: str) -> None:
    """Charts are drawn when they come near the viewport: scroll there, wait until drawn."""
    page.locator(group).scroll_into_view_if_needed()
    page.wait_for_function(
        "sel => { const g = document.querySelector(sel); return g && g.classList.contains('ready')"
        " && g.querySelector('canvas'); }",
        arg=group,
    )


def hover(page: Page, group: str, fraction: float, panel: int = 0) -> None:
    plot = page.locator(f"{group} .chart-plot").nth(panel)
    plot.scroll_into_view_if_needed()
    box = steady_box(page, plot)  # aimed once nothing drawn above it moves it
    page.mouse.move(box["x"] + box["width"] * fraction, box["y"] + box["height"] * 0.5)
    page.wait_for_function("sel => document.querySelector(sel + ' .ro-item')", arg=group)


def assert_distinct_ticks(page: Page, where: str) -> int:
    charts = page.evaluate(AXES)
    for chart in charts:
        for labels in chart["axes"]:
            assert len(labels) == len(set(labels)), f"{where} {chart['group']}: repeated tick labels {labels}"
    return len(charts)


# ------------------------------------------------------------------------------- run page


def test_hover_read_out_matches_the_metrics_file(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    rows = metrics_by_step(demo_source, "spec03/r2")
    page.goto(served_demo.url(RUN))
    ready(page, "#chart-training")
    seen = set()
    for fraction in (0.05, 0.33, 0.62, 0.97):
        hover(page, "#chart-training", fraction)
        items = page.evaluate(READOUT, "#chart-training")
        assert {i["series"] for i in items} == {"loss", "eval_loss", "grad_norm", "lr"}
        for item in items:
            logged = rows[item["step"]][item["series"]]  # a real logged point: its step is in the file
            assert math.isclose(item["value"], logged, rel_tol=1e-6, abs_tol=1e-12), item
            assert math.isclose(shown_number(item["shown"]), logged, rel_tol=5e-4, abs_tol=1e-9), item
            seen.add((item["series"], item["step"]))
        step_text = page.inner_text("#chart-training .ro-step")
        assert step_text.startswith("step ")
    assert len(seen) >= 12  # four positions, four series: the read-out followed the pointer


def test_keyboard_steps_through_points_zooms_pans_and_resets(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_site: Path, demo_source: Path
) -> None:
    rows = metrics_by_step(demo_source, "spec03/r2")
    loss = data_file(demo_site / "runs/spec03-r2/curves.js")["series"]["loss"]
    page.goto(served_demo.url(RUN))
    ready(page, "#chart-training")
    plot = page.locator("#chart-training .chart-plot").first
    plot.focus()
    page.keyboard.press("ArrowRight")
    first = page.evaluate(READOUT, "#chart-training")
    assert first[0]["series"] == "loss" and first[0]["step"] == xs(loss)[0] == 0.0
    assert first[0]["value"] == rows[0.0]["loss"]
    page.keyboard.press("ArrowRight")
    second = page.evaluate(READOUT, "#chart-training")[0]
    assert second["step"] == xs(loss)[1] and second["value"] == rows[second["step"]]["loss"]
    assert page.get_attribute("#chart-training [data-readout]", "aria-live") == "polite"

    full = page.evaluate(X_RANGES, "#chart-training")
    page.keyboard.press("+")
    zoomed = page.evaluate(X_RANGES, "#chart-training")
    assert len({tuple(r) for r in zoomed}) == 1, "every panel of the group shows the same steps"
    assert zoomed[0][1] - zoomed[0][0] < 0.6 * (full[0][1] - full[0][0])
    page.keyboard.press("Shift+ArrowRight")
    panned = page.evaluate(X_RANGES, "#chart-training")
    assert panned[0][0] > zoomed[0][0] and math.isclose(
        panned[0][1] - panned[0][0], zoomed[0][1] - zoomed[0][0], rel_tol=1e-6
    )
    page.keyboard.press("0")
    assert page.evaluate(X_RANGES, "#chart-training") == full
    page.click("#chart-training [data-zoom=in]")
    assert page.evaluate(X_RANGES, "#chart-training") != full
    page.click("#chart-training [data-reset]")
    assert page.evaluate(X_RANGES, "#chart-training") == full


def ema(values: list[float], weight: float) -> list[float]:
    out, last = [], 0.0
    for n, v in enumerate(values, start=1):
        last = last * weight + (1 - weight) * v
        out.append(last / (1 - weight**n))
    return out


def test_smoothing_log_scale_and_legend(page: Page, watch: PageWatch, served_demo: ServedSite, demo_site: Path) -> None:
    loss = data_file(demo_site / "runs/spec03-r2/curves.js")["series"]["loss"]
    page.goto(served_demo.url(RUN))
    ready(page, "#chart-training")
    page.eval_on_selector(
        "#chart-training input[data-smooth]",
        "el => { el.value = '0.6'; el.dispatchEvent(new Event('input', {bubbles: true})); }",
    )
    assert page.inner_text("#chart-training [data-smooth-value]") == "0.60"
    next_frame(page)  # the slider redraws on the next animation frame
    plot = page.locator("#chart-training .chart-plot").first
    plot.focus()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    item = page.evaluate(READOUT, "#chart-training")[0]
    assert item["step"] == xs(loss)[4]
    smoothed = ema(loss["y"], 0.6)[4]  # TensorBoard's debiased EMA over the drawn points
    match = re.search(r"smoothed ([\d.,\u2212e-]+)", item["text"])
    assert match and math.isclose(shown_number(match.group(1)), smoothed, rel_tol=5e-4), item["text"]
    assert item["value"] == loss["y"][4]  # the raw value stays in the read-out

    log_box = page.locator("#chart-training .chart-panel").nth(1).locator("input[data-log]")
    log_box.check()
    grad = [c for c in page.evaluate(AXES) if c["group"] == "chart-training"][1]
    assert grad["log"] is True
    assert_distinct_ticks(page, RUN + " (log y)")

    legend = page.locator("#chart-training .legend-item", has_text="eval_loss")
    legend.click()
    assert legend.get_attribute("aria-pressed") == "false"
    hover(page, "#chart-training", 0.5)
    assert "eval_loss" not in {i["series"] for i in page.evaluate(READOUT, "#chart-training")}


def test_reward_panels_mark_the_collapse_and_read_their_band(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    rows = metrics_by_step(demo_source, "grpo-rl-07")
    page.goto(served_demo.url(RL_RUN))
    ready(page, "#chart-reward")
    hover(page, "#chart-reward", 0.5)
    items = page.evaluate(READOUT, "#chart-reward")
    reward = next(i for i in items if i["series"] == "reward_mean")
    assert reward["value"] == rows[reward["step"]]["reward_mean"]
    assert "± std [" in reward["text"]  # the band under the cursor is read out too


def test_the_explorer_plots_any_series(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    rows = metrics_by_step(demo_source, "spec03/r2")
    page.goto(served_demo.url(RUN))
    ready(page, "#chart-explore")
    page.select_option("#chart-explore select[data-series]", "epoch")
    hover(page, "#chart-explore", 0.4)
    item = page.evaluate(READOUT, "#chart-explore")[0]
    assert item["series"] == "epoch" and item["value"] == rows[item["step"]]["epoch"]


def test_the_chart_library_and_data_load_only_when_the_curves_come_near(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    """A reader who stays at the top of a report does not download or run the charts' 100 KB."""
    loaded: list[str] = []
    page.on("request", lambda r: loaded.append(r.url.rsplit("/", 1)[-1]))
    page.goto(served_demo.url(RUN))
    settle(page)
    page.wait_for_timeout(300)
    assert "uPlot.iife.min.js" not in loaded and "curves.js" not in loaded
    assert page.evaluate("typeof window.uPlot") == "undefined"
    ready(page, "#chart-training")
    assert loaded.count("uPlot.iife.min.js") == 1 and loaded.count("curves.js") == 1


# ------------------------------------------------------------------------------ overlays


def test_overlay_of_two_runs_picked_on_the_leaderboard(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    page.goto(served_demo.url("index.html"))
    settle(page)
    page.check("input.pick[value='spec03-r1']")
    page.check("input.pick[value='spec03-r3']")
    go = page.locator("[data-overlay-go]")
    assert go.inner_text() == "Overlay curves of 2 picked runs"
    go.click()
    page.wait_for_url(re.compile(r"compare\.html\?runs=spec03-r[13],spec03-r[13]#overlay$"))
    ready(page, "#chart-overlay")
    page.wait_for_function("() => document.querySelectorAll('table[data-overlay-finals] tbody tr').length === 2")
    assert page.inner_text("#chart-overlay .chart-title") == "loss"  # the default metric, logged by both
    legend = page.eval_on_selector_all("#chart-overlay .legend-item", "bs => bs.map(b => b.textContent)")
    assert sorted(legend) == ["spec03-r1", "spec03-r3"]

    logs = {rid: metrics_by_step(demo_source, f"spec03/{rid[-2:]}") for rid in ("spec03-r1", "spec03-r3")}
    for metric in ("loss", "grad_norm"):
        if metric != "loss":  # one chart of the other metric instead
            page.locator(".overlay-metrics summary").click()
            page.check(f".overlay-metrics input[value='{metric}']")
            page.uncheck(".overlay-metrics input[value='loss']")
            assert page.inner_text("#chart-overlay .chart-title") == metric
        table = page.eval_on_selector_all(
            "table[data-overlay-finals] tbody tr",
            "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))",
        )
        for row in table:
            log = logs[row[0]]
            assert row[1] == metric
            last_step = max(s for s, rec in log.items() if metric in rec)
            assert shown_number(row[2]) == last_step
            assert math.isclose(shown_number(row[3]), log[last_step][metric], rel_tol=5e-4)
        hover(page, "#chart-overlay", 0.3)
        items = page.evaluate(READOUT, "#chart-overlay")
        assert {i["run"] for i in items} == {"spec03-r1", "spec03-r3"}
        for item in items:
            assert item["value"] == logs[item["run"]][item["step"]][metric]
    assert_distinct_ticks(page, "compare.html")


def test_compare_page_overlay_from_file_urls(
    browser: Browser, browser_context_args: dict[str, Any], demo_site: Path
) -> None:
    """fetch() of local files is refused from file://; the data files load as scripts instead."""
    root = demo_site.resolve().as_uri() + "/"
    context, watch = new_watched_context(browser, browser_context_args, allowed=(root, "data:"))
    try:
        page = context.new_page()
        page.goto(root + "compare.html?runs=spec03-r2,grpo-rl-07,onto-full_s1")
        ready(page, "#chart-overlay")
        page.wait_for_function("() => document.querySelectorAll('table[data-overlay-finals] tbody tr').length === 3")
        status = page.inner_text("[data-overlay-status]")
        assert "of 3 picked runs drew" in status and "could not be read" not in status
        page.locator(".overlay-runs summary").click()
        page.check(".overlay-runs input[value='spec03-r1']")
        page.wait_for_function("() => document.querySelectorAll('table[data-overlay-finals] tbody tr').length === 4")
        watch.assert_clean("compare.html from file://")
    finally:
        context.close()


# ------------------------------------------------------------------ campaign and arms pages


def test_metric_picker_on_the_campaign_page(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_site: Path
) -> None:
    data = data_file(demo_site / "campaigns/sepa-campaign/curves.js")
    page.goto(served_demo.url(CAMPAIGN))
    ready(page, "#chart-conditions")
    options = page.eval_on_selector_all("select[data-metric] option", "os => os.map(o => o.value)")
    assert options[0] == "correct_rate" and len(options) >= 3 and set(options) == set(data["metrics"])
    assert page.is_visible("[data-metric-block='correct_rate']")
    other = "mean_reward"  # a secondary metric of the demo campaign
    page.select_option("select[data-metric]", other)
    assert page.inner_text("#chart-conditions .chart-title") == other
    assert page.is_visible(f"[data-metric-block='{other}']")
    assert not page.is_visible("[data-metric-block='correct_rate']")
    block = page.inner_text(f"[data-metric-block='{other}']")
    assert f"Seed-level statistics: {other}" in block and "Welch p" in block

    hover(page, "#chart-conditions", 0.6)
    view = data["metrics"][other]
    for item in page.evaluate(READOUT, "#chart-conditions"):
        cond = next(c for c in view["conditions"] if c["label"] == item["series"])
        i = cond["x"].index(item["step"]) if item["step"] in cond["x"] else None
        assert i is not None, item
        assert item["value"] == cond["mean"][i]
        assert "95% CI [" in item["text"]
    assert_distinct_ticks(page, CAMPAIGN)


def test_metric_picker_on_the_arms_page(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    page.goto(served_demo.url(ARMS))
    ready(page, "#chart-conditions")
    options = page.eval_on_selector_all("select[data-metric] option", "os => os.map(o => o.value)")
    assert len(options) >= 2
    page.select_option("select[data-metric]", options[-1])
    assert page.is_visible(f"[data-metric-block='{options[-1]}']")
    legend = page.eval_on_selector_all("#chart-conditions .legend-item", "bs => bs.map(b => b.textContent)")
    assert legend == ["full", "no-ontology", "no-schema"]


# -------------------------------------------------------------- every chart, every page


def test_no_repeated_tick_labels_in_any_chart(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    pages = [*run_pages(served_demo.root), CAMPAIGN, ARMS, "compare.html?runs=spec03-r1,spec03-r2,grpo-rl-07"]
    drawn = 0
    for rel in pages:
        page.goto(served_demo.url(rel))
        settle(page)
        # one group at a time: charts start when an IntersectionObserver sees them near the viewport, and
        # a group scrolled past between two of its reports (a loaded machine renders few frames) never is
        groups = page.locator(".chart-group")
        for i in range(groups.count()):
            groups.nth(i).scroll_into_view_if_needed()
            page.wait_for_function(
                "i => document.querySelectorAll('.chart-group')[i].classList.contains('ready')", arg=i
            )
        drawn += assert_distinct_ticks(page, rel)
        for box in page.locator("input[data-log]:not([disabled])").all()[:6]:
            box.scroll_into_view_if_needed()
            box.click()
        drawn += assert_distinct_ticks(page, rel + " (log y toggled)")
        watch.assert_clean(rel)
    assert drawn > 50


def test_charts_draw_from_file_urls(browser: Browser, browser_context_args: dict[str, Any], demo_site: Path) -> None:
    root = demo_site.resolve().as_uri() + "/"
    context, watch = new_watched_context(browser, browser_context_args, allowed=(root, "data:"))
    try:
        page = context.new_page()
        for rel, group in ((RUN, "#chart-training"), (RL_RUN, "#chart-reward"), (CAMPAIGN, "#chart-conditions")):
            page.goto(root + rel)
            ready(page, group)
            hover(page, group, 0.5)
            watch.assert_clean(rel + " from file://")
    finally:
        context.close()


def test_without_javascript_the_static_fallback_is_shown(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    context, watch = new_watched_context(
        browser, browser_context_args, allowed=(served_demo.base, "data:"), java_script_enabled=False
    )
    try:
        page = context.new_page()
        page.goto(served_demo.url(RUN))
        settle(page)
        assert not page.is_visible("#chart-training")
        assert page.is_visible(".chart-nojs")
        assert page.locator("table.series-table svg.spark").count() >= 4
        page.goto(served_demo.url(CAMPAIGN))
        settle(page)
        assert not page.is_visible("#chart-conditions")
        figure = page.locator("figure.static-fallback img")
        assert figure.is_visible() and figure.evaluate("img => img.naturalWidth") > 0
        blocks = page.locator("[data-metric-block]")
        assert blocks.count() >= 3 and all(b.is_visible() for b in blocks.all())  # every metric's statistics
        page.goto(served_demo.url("index.html"))
        assert not page.is_visible("input.pick")
        watch.assert_clean("without JavaScript")
    finally:
        context.close()


@pytest.mark.parametrize("rel", [RUN, CAMPAIGN])
def test_print_shows_the_static_fallback(page: Page, watch: PageWatch, served_demo: ServedSite, rel: str) -> None:
    page.goto(served_demo.url(rel))
    settle(page)
    page.emulate_media(media="print")
    assert not page.is_visible(".chart-figure")
    if rel == CAMPAIGN:
        assert page.is_visible("figure.static-fallback")
    else:
        assert page.is_visible("table.series-table")
