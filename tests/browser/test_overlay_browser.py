"""compare.html's overlay as a researcher uses it: links that keep every setting, small multiples,
other x axes, grouping with a band, min/max marks, an outlier-robust y range, colours fixed per run,
and export of the charts (PNG, SVG, CSV) and tables (CSV).

Expected values come from the runs' own metrics.jsonl (and scipy for the group intervals), not
from the page's data; exported files are opened with Pillow, an XML parser and the csv module.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
import statistics
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from browserkit import PHONE, PageWatch, ServedSite, new_watched_context, serve, settle, steady_box
from PIL import Image
from playwright.sync_api import Browser, Page
from scipy import stats

from obs.build import BuildOptions
from obs.publish.extras import build_published

OVERLAY = "#chart-overlay"
# Okabe and Ito's palette without its yellow, as charts.js indexes it
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"]

PANELS = """() => window.obsCharts.groups.filter(g => g.root.id === 'chart-overlay')
  .flatMap(g => g.panels.map(p => ({ title: p.model.title, log: p.log,
     lines: p.model.lines.map(l => ({ label: l.label, color: l.color, run: l.run || null, n: l.x.length,
        band: l.band ? l.band.label : null })),
     extremes: (p.extremes || []).map(e => [e.line, e.kind, e.x, e.y]),
     x: p.u ? [p.u.scales.x.min, p.u.scales.x.max] : null, y: p.u ? [p.u.scales.y.min, p.u.scales.y.max] : null })))"""

READOUT = """() => [...document.querySelectorAll('#chart-overlay .ro-item')].map(e => ({
  series: e.dataset.series, run: e.dataset.run || null, panel: e.dataset.panel || null, step: Number(e.dataset.step),
  value: Number(e.dataset.value), text: e.textContent }))"""


def fnv1a(text: str) -> int:
    """32-bit FNV-1a over UTF-16 code units, as charts.js hashes a run id."""
    h = 0x811C9DC5
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def run_color(run_id: str) -> str:
    return PALETTE[fnv1a(run_id) % len(PALETTE)]


def log_of(source: Path, folder: str) -> dict[float, dict[str, Any]]:
    rows: dict[float, dict[str, Any]] = {}
    for line in (source / folder / "metrics.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            rows[float(rec["step"])] = rec
    return rows


def folder_of(source: Path, run_id: str) -> str:
    for path in source.rglob("run.yaml"):
        if f"id: {run_id}\n" in path.read_text(encoding="utf-8"):
            return path.parent.relative_to(source).as_posix()
    raise AssertionError(run_id)


def open_overlay(page: Page, url: str) -> None:
    page.goto(url)
    settle(page)
    page.locator(OVERLAY).scroll_into_view_if_needed()
    page.wait_for_function(
        "() => { const g = document.querySelector('#chart-overlay'); return g.classList.contains('ready')"
        " && g.querySelector('canvas') && !window.obsCharts.busy(); }"
    )
    page.wait_for_timeout(50)


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def hover(page: Page, fraction: float, panel: int = 0) -> None:
    plot = page.locator(f"{OVERLAY} .chart-plot").nth(panel)
    plot.scroll_into_view_if_needed()
    box = steady_box(page, plot)  # aimed once nothing drawn above it moves it
    page.mouse.move(box["x"] + box["width"] * fraction, box["y"] + box["height"] * 0.5)
    page.wait_for_function("() => document.querySelector('#chart-overlay .ro-item')")


# ------------------------------------------------------------------- links and the run picker


def test_a_shared_link_keeps_its_metric_and_is_not_rewritten(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    url = served_demo.url("compare.html?runs=spec03-r1,spec03-r2&metric=grad_norm")
    open_overlay(page, url)
    panels = page.evaluate(PANELS)
    assert [p["title"] for p in panels] == ["grad_norm"]
    assert {ln["run"] for ln in panels[0]["lines"]} == {"spec03-r1", "spec03-r2"}
    assert query(page.url).get("metric", query(page.url).get("metrics")) == "grad_norm"
    assert "loss" not in (query(page.url).get("metrics") or "")
    assert page.locator("[data-overlay-link]").is_hidden()


def test_every_setting_round_trips_through_the_link(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    url = served_demo.url(
        "compare.html?runs=onto-full_s1,onto-full_s2,onto-no-schema_s1,onto-no-schema_s2"
        "&metrics=relational_f1,loss&x=step&group=arm&band=sd&smooth=0.5&zoom=200,900&log=loss&robust=1&marks=1"
    )
    open_overlay(page, url)
    assert page.input_value("select[data-overlay-group]") == "arm"
    assert page.input_value("select[data-overlay-band]") == "sd"
    assert page.input_value("select[data-overlay-x]") == "step"
    assert page.is_checked("input[data-overlay-robust]") and page.is_checked("input[data-overlay-marks]")
    assert page.input_value(f"{OVERLAY} input[data-smooth]") == "0.5"
    panels = page.evaluate(PANELS)
    assert [p["title"] for p in panels] == ["relational_f1", "loss"]
    assert [p["log"] for p in panels] == [False, True]
    for p in panels:
        assert p["x"] == pytest.approx([200, 900])
        assert {ln["band"] for ln in p["lines"]} == {"± sd"}
    # the reader changes everything; the URL follows, and a fresh page opened at it shows the same
    page.select_option("select[data-overlay-group]", "")
    page.select_option("select[data-overlay-x]", "step")
    page.uncheck("input[data-overlay-robust]")
    page.locator(f"{OVERLAY} .chart-plot").first.focus()
    page.keyboard.press("0")  # reset the zoom
    page.locator(".overlay-metrics summary").click()
    page.uncheck(".overlay-metrics input[value='loss']")
    q = query(page.url)
    assert q["metrics"] == "relational_f1" and "group" not in q and "robust" not in q and "zoom" not in q
    assert q["marks"] == "1" and q["smooth"] == "0.5"
    page.locator(f"{OVERLAY} .chart-plot").first.focus()
    page.keyboard.press("+")
    zoom = [float(v) for v in query(page.url)["zoom"].split(",")]
    again = page.context.new_page()
    open_overlay(again, page.url)
    assert again.evaluate(PANELS)[0]["x"] == pytest.approx(zoom)
    assert again.is_checked("input[data-overlay-marks]") and not again.is_checked("input[data-overlay-robust]")
    assert again.input_value("select[data-overlay-group]") == ""
    assert query(again.url) == query(page.url)


def test_what_a_link_asks_for_and_is_not_here_is_said(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    url = served_demo.url(
        "compare.html?runs=spec03-r1,no-such-run&metrics=loss,no_such_metric&x=tokens_seen&group=config.nope&band=iqr"
    )
    open_overlay(page, url)
    note = page.inner_text("[data-overlay-link]")
    for said in ("no-such-run", "no_such_metric", "tokens_seen", "config.nope", "iqr"):
        assert said in note, note
    assert [p["title"] for p in page.evaluate(PANELS)] == ["loss"]


def test_the_run_picker_is_one_compact_row_per_run(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    open_overlay(page, served_demo.url("compare.html?runs=spec03-r1"))
    page.locator(".overlay-runs summary").click()
    rows = page.eval_on_selector_all(
        "[data-overlay-runs] li:not(.spec) label",
        """ls => ls.map(l => { const b = l.querySelector('input').getBoundingClientRect();
             const t = l.querySelector('span').getBoundingClientRect(); const r = l.getBoundingClientRect();
             return { box: [b.left, b.top, b.right, b.bottom], text: [t.left, t.top, t.right, t.bottom],
                      h: r.height }; })""",
    )
    assert len(rows) > 10
    for r in rows:
        assert r["box"][2] <= r["text"][0]  # the box left of its run id
        box_mid, text_mid = (r["box"][1] + r["box"][3]) / 2, (r["text"][1] + r["text"][3]) / 2
        assert abs(box_mid - text_mid) < 4  # on one line
        assert r["h"] < 32, r


# ------------------------------------------------------------------------------ colours


def test_a_run_keeps_its_colour_whatever_else_is_picked(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    colours: dict[str, set[str]] = {}
    for runs in ("spec03-r2", "spec03-r1,spec03-r2", "grpo-rl-07,spec03-r3,spec03-r2,onto-full_s1"):
        open_overlay(page, served_demo.url(f"compare.html?runs={runs}&metrics=loss"))
        for line in page.evaluate(PANELS)[0]["lines"]:
            colours.setdefault(line["run"], set()).add(line["color"])
        swatches = page.eval_on_selector_all(
            "table[data-overlay-finals] tbody th",
            "ths => ths.map(t => [t.querySelector('a').textContent,"
            " getComputedStyle(t.querySelector('.swatch')).backgroundColor])",
        )
        for run_id, css in swatches:
            hexed = "#" + "".join(f"{int(c):02X}" for c in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
            assert hexed == run_color(run_id), (run_id, css)
    for run_id, seen in colours.items():
        assert seen == {run_color(run_id)}, (run_id, seen)


# ------------------------------------------------------------------- small multiples, x axes


def test_any_metrics_as_small_multiples_read_the_runs_logs(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    open_overlay(page, served_demo.url("compare.html?runs=spec03-r1,spec03-r3&metrics=loss,grad_norm,eval_loss"))
    panels = page.evaluate(PANELS)
    assert [p["title"] for p in panels] == ["loss", "grad_norm", "eval_loss"]
    logs = {rid: log_of(demo_source, folder_of(demo_source, rid)) for rid in ("spec03-r1", "spec03-r3")}
    for i, metric in enumerate(("loss", "grad_norm")):
        hover(page, 0.4, panel=i)
        items = [it for it in page.evaluate(READOUT) if it["panel"] == metric]
        assert {it["run"] for it in items} == set(logs)
        for item in items:
            assert item["value"] == logs[item["run"]][item["step"]][metric]
    rows = page.eval_on_selector_all(
        "table[data-overlay-finals] tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent.trim()))"
    )
    assert len(rows) == 6 and {r[1] for r in rows} == {"loss", "grad_norm", "eval_loss"}


def test_the_epoch_axis_maps_each_step_through_the_logged_epoch(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    open_overlay(page, served_demo.url("compare.html?runs=spec03-r1,spec03-r2&metrics=loss&x=epoch"))
    assert page.input_value("select[data-overlay-x]") == "epoch"
    assert page.evaluate(PANELS)[0]["x"][1] == pytest.approx(3.0, abs=0.01)
    hover(page, 0.5)
    logs = {rid: log_of(demo_source, folder_of(demo_source, rid)) for rid in ("spec03-r1", "spec03-r2")}
    head = page.inner_text(f"{OVERLAY} .ro-step")
    assert head.startswith("epoch ")
    for item in page.evaluate(READOUT):
        rec = logs[item["run"]][item["step"]]
        assert item["value"] == rec["loss"]
        assert f"(step {int(item['step']):,})" in item["text"]


@pytest.fixture(scope="module")
def clocked_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    """Two runs logging a wall clock, elapsed time, tokens seen and a throughput (not an axis)."""
    src = tmp_path_factory.mktemp("clocked") / "runs"
    start = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC
    for k, (rate, lr) in enumerate(((2.0, "1e-4"), (3.5, "3e-4"))):
        folder = src / f"r{k}"
        folder.mkdir(parents=True)
        folder.joinpath("run.yaml").write_text(
            f"obs_contract: 1\nid: clock-{k}\nconfig:\n  lr: {lr}\n", encoding="utf-8"
        )
        lines = []
        for step in range(0, 201):
            t = step * rate + (0.25 * k)
            lines.append(
                json.dumps(
                    {
                        "step": step,
                        "loss": round(3.0 / (1 + step / 40) + 0.01 * k, 6),
                        "_timestamp": start + 600 * k + t,
                        "elapsed": t,
                        "tokens_seen": step * 4096,
                        "tokens_per_second": 4096 / rate,
                    }
                )
            )
        folder.joinpath("metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("clocked-site") / "site"
    result = build_published(BuildOptions(source=src, out=out, quiet=True))
    assert result.errors == 0
    site = serve(out)
    yield site
    site.close()


def test_time_and_counter_axes(
    page: Page, browser: Browser, browser_context_args: dict[str, Any], clocked_site: ServedSite
) -> None:
    context, watch = new_watched_context(browser, browser_context_args, (clocked_site.base, "data:"))
    try:
        page = context.new_page()
        open_overlay(page, clocked_site.url("compare.html?runs=clock-0,clock-1&metrics=loss"))
        options = page.eval_on_selector_all("select[data-overlay-x] option", "os => os.map(o => o.value)")
        assert options == ["step", "wall", "relative", "tokens_seen"]  # not tokens_per_second: a rate
        page.select_option("select[data-overlay-x]", "tokens_seen")
        assert page.evaluate(PANELS)[0]["x"] == pytest.approx([0, 200 * 4096])
        page.select_option("select[data-overlay-x]", "relative")
        # run 1 logs 3.5 s a step: 700 s, so minutes
        assert page.inner_text(f"{OVERLAY} .chart-readout").startswith("Point at")
        hover(page, 0.5)
        head = page.inner_text(f"{OVERLAY} .ro-step")
        assert head.startswith("relative time (min) ")
        for item in page.evaluate(READOUT):
            k = int(item["run"].split("-")[1])
            assert item["value"] == pytest.approx(round(3.0 / (1 + item["step"] / 40) + 0.01 * k, 6))
        x_rel = page.evaluate(PANELS)[0]["x"]
        assert x_rel[1] == pytest.approx(200 * 3.5 / 60, rel=1e-3)
        page.select_option("select[data-overlay-x]", "wall")
        x_wall = page.evaluate(PANELS)[0]["x"]
        assert x_wall == pytest.approx([1_767_225_600.0, 1_767_225_600.0 + 600 + 200 * 3.5 + 0.25], abs=0.5)
        ticks = page.evaluate(
            "() => window.obsCharts.groups.find(g => g.root.id === 'chart-overlay').panels[0].u.axes[0]._values"
        )
        ticks = [t for t in ticks if t]
        assert len(ticks) >= 3 and len(set(ticks)) == len(ticks), ticks
        assert all(re.search(r"\d{1,2}:\d{2}", t) for t in ticks), ticks  # times of day, on whole minutes
        hover(page, 0.2)
        assert page.inner_text(f"{OVERLAY} .ro-step").startswith("wall time 2026-01-01 00:")
        assert query(page.url)["x"] == "wall"
        watch.assert_clean("time axes")
    finally:
        context.close()


# ------------------------------------------------------------------------------ grouping


def test_grouping_by_a_key_draws_each_groups_mean_and_its_interval(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    arms = {
        "full": ["onto-full_s1", "onto-full_s2", "onto-full_s3"],
        "no-schema": ["onto-no-schema_s1", "onto-no-schema_s2", "onto-no-schema_s3"],
    }
    runs = ",".join(r for rs in arms.values() for r in rs)
    open_overlay(page, served_demo.url(f"compare.html?runs={runs}&metrics=relational_f1&group=arm"))
    lines = page.evaluate(PANELS)[0]["lines"]
    assert [ln["label"] for ln in lines] == ["arm=full · n=3", "arm=no-schema · n=3"]
    assert {ln["band"] for ln in lines} == {"95% CI"}
    logs = {rid: log_of(demo_source, folder_of(demo_source, rid)) for rs in arms.values() for rid in rs}
    checked = 0
    for fraction in (0.3, 0.6, 0.9):
        hover(page, fraction)
        for item in page.evaluate(READOUT):
            arm = item["series"].split("=")[1].split(" ·")[0]
            values = [logs[r][item["step"]]["relational_f1"] for r in arms[arm]]
            mean, sd = statistics.fmean(values), statistics.stdev(values)
            half = stats.t.ppf(0.975, len(values) - 1) * sd / math.sqrt(len(values))
            assert item["value"] == pytest.approx(mean, rel=1e-9)
            lo, hi = item["text"].split("95% CI [")[1].split("]")[0].split(", ")
            assert float(lo.replace("\u2212", "-")) == pytest.approx(mean - half, abs=6e-4)
            assert float(hi.replace("\u2212", "-")) == pytest.approx(mean + half, abs=6e-4)
            checked += 1
    assert checked == 6
    # the t quantiles the page uses, against scipy
    for df in (1, 2, 5, 29, 30, 31, 45, 200):
        assert page.evaluate("df => window.obsOverlay.t975(df)", df) == pytest.approx(stats.t.ppf(0.975, df), abs=2e-6)
    page.select_option("select[data-overlay-band]", "sd")
    hover(page, 0.5)
    item = page.evaluate(READOUT)[0]
    arm = item["series"].split("=")[1].split(" ·")[0]
    values = [logs[r][item["step"]]["relational_f1"] for r in arms[arm]]
    lo = float(item["text"].split("± sd [")[1].split(",")[0].replace("\u2212", "-"))
    assert lo == pytest.approx(statistics.fmean(values) - statistics.stdev(values), abs=6e-4)
    assert query(page.url)["band"] == "sd"


# --------------------------------------------------------------------- marks and the y range


def test_min_max_marks_and_the_outlier_robust_y_range(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    open_overlay(page, served_demo.url("compare.html?runs=spec03-r2&metrics=grad_norm&marks=1"))
    panel = page.evaluate(PANELS)[0]
    log = log_of(demo_source, folder_of(demo_source, "spec03-r2"))
    values = [rec["grad_norm"] for rec in log.values() if "grad_norm" in rec]
    marks = {kind: y for _, kind, _, y in panel["extremes"]}
    assert marks == {"min": min(values), "max": max(values)}
    full = panel["y"]
    assert full[1] >= max(values)
    page.check("input[data-overlay-robust]")
    robust = page.evaluate(PANELS)[0]["y"]
    assert robust[1] < max(values)  # the spikes no longer set the range ...
    assert robust[1] >= sorted(values)[int(0.9 * len(values))]  # ... the bulk of the curve is in view
    assert query(page.url)["robust"] == "1"


# ------------------------------------------------------------------------------- export


def saved(page: Page, selector: str, tmp: Path) -> Path:
    with page.expect_download() as info:
        page.click(selector)
    path = tmp / info.value.suggested_filename
    info.value.save_as(path)
    return path


def test_charts_and_tables_export_as_files_a_program_can_read(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_site: Path, demo_source: Path, tmp_path: Path
) -> None:
    open_overlay(page, served_demo.url("compare.html?runs=spec03-r1,spec03-r2&metrics=loss,lr"))
    png = saved(page, f"{OVERLAY} [data-export=png]", tmp_path)
    assert png.name == "compare-loss-lr.png"
    with Image.open(png) as img:
        img.load()
        assert img.width >= 600 and img.height >= 300
        colours = {c for _, c in img.convert("RGB").getcolors(1 << 20) or []}
    assert len(colours) > 20  # drawn, not blank

    svg = saved(page, f"{OVERLAY} [data-export=svg]", tmp_path)
    tree = ET.parse(svg)
    ns = "{http://www.w3.org/2000/svg}"
    texts = [t.text for t in tree.iter(ns + "text")]
    assert "loss" in texts and "lr" in texts and "spec03-r1" in texts
    paths = [p for p in tree.iter(ns + "path")]
    assert len(paths) == 4 and {p.get("stroke") for p in paths} == {run_color("spec03-r1"), run_color("spec03-r2")}

    data = saved(page, f"{OVERLAY} [data-export=csv]", tmp_path)
    rows = list(csv.reader(io.StringIO(data.read_text(encoding="utf-8"))))
    assert rows[0] == ["step", "loss · spec03-r1", "loss · spec03-r2", "lr · spec03-r1", "lr · spec03-r2"]
    logs = {rid: log_of(demo_source, folder_of(demo_source, rid)) for rid in ("spec03-r1", "spec03-r2")}
    checked = 0
    for row in rows[1:]:
        for col, cell in enumerate(row[1:], start=1):
            if cell:
                metric, run_id = rows[0][col].split(" · ")
                assert float(cell) == pytest.approx(logs[run_id][float(row[0])][metric], rel=1e-5)
                checked += 1
    assert checked > 1000

    table = saved(page, "[data-export-table=compare-final-values]", tmp_path)
    rows = list(csv.reader(io.StringIO(table.read_text(encoding="utf-8"))))
    assert rows[0][:4] == ["Run", "Metric", "Last step", "Last value"]
    for row in rows[1:]:
        run_id, metric, last_step, last_value = row[:4]
        log = logs[run_id]
        step = max(s for s, rec in log.items() if metric in rec)
        assert float(last_step) == step
        assert float(last_value) == pytest.approx(log[step][metric], rel=1e-5)
    assert len(rows) == 5


def test_export_works_from_a_file_url(
    browser: Browser, browser_context_args: dict[str, Any], demo_site: Path, tmp_path: Path
) -> None:
    root = demo_site.resolve().as_uri() + "/"
    context, watch = new_watched_context(browser, browser_context_args, allowed=(root, "data:", "blob:"))
    try:
        page = context.new_page()
        open_overlay(page, root + "compare.html?runs=spec03-r2,grpo-rl-07&metrics=loss")
        with Image.open(saved(page, f"{OVERLAY} [data-export=png]", tmp_path)) as img:
            assert img.width > 100
        ET.parse(saved(page, f"{OVERLAY} [data-export=svg]", tmp_path))
        assert (
            saved(page, "[data-export-table=compare-config-diff]", tmp_path)
            .read_text(encoding="utf-8")
            .startswith("Key,")
        )
        watch.assert_clean("export from file://")
    finally:
        context.close()


# --------------------------------------------------------------------------------- phone


def test_compare_page_fits_a_phone(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    context, watch = new_watched_context(browser, browser_context_args, (served_demo.base, "data:"), viewport=PHONE)
    try:
        page = context.new_page()
        open_overlay(
            page,
            served_demo.url(
                "compare.html?runs=spec03-r1,spec03-r2,onto-full_s1&metrics=loss,grad_norm&group=spec&marks=1"
            ),
        )
        for summary in page.locator(".overlay-list summary").all():
            summary.click()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        watch.assert_clean("compare.html at 390 px")
    finally:
        context.close()


# ----------------------------------------------------------------------------- runs table

RUN_ROWS = """() => [...document.querySelectorAll('table[data-runs-table] tbody tr')].map(r =>
  [...r.cells].map(c => c.textContent.trim()))"""


def page_data(page: Page) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(page.text_content("#compare-data") or "{}")
    return value


def run_docs(source: Path) -> dict[str, dict[str, Any]]:
    import yaml

    docs = {}
    for path in source.rglob("run.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        docs[doc["id"]] = doc
    return docs


def test_the_runs_table_filters_sorts_and_keeps_its_state_in_the_link(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path, tmp_path: Path
) -> None:
    where = "config.train.lr > 1e-4; final loss < 0.5"
    url = served_demo.url("compare.html?cols=spec,config.train.lr,final%20loss&sort=-final%20loss&where=") + where
    open_overlay(page, url)
    finals = {r["id"]: r["finals"] for r in page_data(page)["runs"]}
    docs = run_docs(demo_source)
    lr = {rid: d.get("config", {}).get("train", {}).get("lr") for rid, d in docs.items()}
    expected = [rid for rid in docs if lr[rid] is not None and lr[rid] > 1e-4 and finals[rid].get("loss", 1e9) < 0.5]
    rows = page.evaluate(RUN_ROWS)
    assert len(expected) >= 2 and sorted(r[0] for r in rows) == sorted(expected)
    assert [r[0] for r in rows] == sorted(expected, key=lambda rid: -finals[rid]["loss"])  # sort=-final loss
    assert page.eval_on_selector_all("table[data-runs-table] thead th", "ts => ts.map(t => t.textContent)") == [
        "run",
        "spec",
        "config.train.lr",
        "final loss",
    ]
    # a click on a header sorts by it (numbers as numbers), a second click reverses
    page.click("table[data-runs-table] th button[data-col='config.train.lr']")
    shown_lr = [float(r[2].replace("\u2212", "-")) for r in page.evaluate(RUN_ROWS)]
    assert shown_lr == sorted(shown_lr)
    assert query(page.url)["sort"] == "config.train.lr"
    # the table as CSV: its rows, exact numbers
    table = saved(page, "[data-export-table=runs-table]", tmp_path)
    rows = list(csv.reader(io.StringIO(table.read_text(encoding="utf-8"))))
    assert rows[0] == ["run", "spec", "config.train.lr", "final loss"]
    for row in rows[1:]:
        assert float(row[3]) == finals[row[0]]["loss"]
    # what a filter cannot use is said; the rest applies
    page.fill("input[data-runs-where]", "nosuch > 1; spec = spec03; final loss < lots")
    page.wait_for_function("() => !document.querySelector('[data-runs-problem]').hidden")
    problem = page.inner_text("[data-runs-problem]")
    assert "“nosuch” is not a column" in problem and "“lots” is not a number" in problem
    assert sorted(r[0] for r in page.evaluate(RUN_ROWS)) == sorted(
        r for r, d in docs.items() if d.get("spec") == "spec03"
    )
    assert query(page.url)["where"] == "nosuch > 1; spec = spec03; final loss < lots"
    # the runs shown become the overlay's picks
    page.fill("input[data-runs-where]", "arm = full")
    page.wait_for_function("() => document.querySelectorAll('table[data-runs-table] tbody tr').length === 3")
    page.click("[data-runs-overlay]")
    page.wait_for_function("() => document.querySelectorAll('table[data-overlay-finals] tbody tr').length === 3")
    assert sorted(query(page.url)["runs"].split(",")) == ["onto-full_s1", "onto-full_s2", "onto-full_s3"]
    again = page.context.new_page()
    open_overlay(again, page.url)
    assert again.evaluate(RUN_ROWS) == page.evaluate(RUN_ROWS)


def test_smoothing_is_remembered_across_pages(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    page.goto(served_demo.url("runs/spec03-r2/index.html"))
    settle(page)
    page.locator("#chart-training").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('#chart-training').classList.contains('ready')")
    slider = page.locator("#chart-training input[data-smooth]")
    slider.fill("0.8")
    assert page.inner_text("#chart-training [data-smooth-value]") == "0.80"
    open_overlay(page, served_demo.url("compare.html?runs=spec03-r1,spec03-r2&metrics=loss"))
    assert page.input_value(f"{OVERLAY} input[data-smooth]") == "0.8"
    assert page.evaluate("() => window.obsCharts.groups.find(g => g.root.id === 'chart-overlay').smoothing") == 0.8
    # a link's own smoothing wins over the remembered one
    open_overlay(page, served_demo.url("compare.html?runs=spec03-r1,spec03-r2&metrics=loss&smooth=0.3"))
    assert page.input_value(f"{OVERLAY} input[data-smooth]") == "0.3"
    page.goto(served_demo.url("runs/spec03-r1/index.html"))
    settle(page)
    page.locator("#chart-training").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('#chart-training').classList.contains('ready')")
    assert page.input_value("#chart-training input[data-smooth]") == "0.8"


def test_the_runs_table_groups_rows_by_a_column_with_each_groups_means(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    open_overlay(page, served_demo.url("compare.html?cols=arm,final%20loss&where=spec%20%3D%20onto-arms&rows_by=arm"))
    finals = {r["id"]: r for r in page_data(page)["runs"]}
    leads = page.eval_on_selector_all(
        "table[data-runs-table] tbody tr.group-row",
        "rs => rs.map(r => [r.cells[0].textContent, r.cells[2].getAttribute('data-value')])",
    )
    arms = sorted({r["arm"] for r in finals.values() if r["spec"] == "onto-arms"})
    assert [lead[0] for lead in leads] == [f"arm = {a} · 3 runs" for a in arms]
    for (_, mean), arm in zip(leads, arms, strict=True):
        losses = [r["finals"]["loss"] for r in finals.values() if r["arm"] == arm]
        assert float(mean) == pytest.approx(statistics.fmean(losses), rel=1e-12)
    assert page.input_value("select[data-runs-group]") == "arm"
    page.select_option("select[data-runs-group]", "")
    assert page.locator("table[data-runs-table] tr.group-row").count() == 0
    assert "rows_by" not in query(page.url)
    page.goto(served_demo.url("compare.html?rows_by=nope"))
    settle(page)
    assert "group column “nope” is not here" in page.inner_text("[data-runs-problem]")


def test_the_runs_table_scatters_any_setting_against_any_outcome(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    open_overlay(page, served_demo.url("compare.html?sx=config.train.lr&sy=final%20loss&slogx=1"))
    page.locator(".runs-scatter").scroll_into_view_if_needed()
    finals = {r["id"]: r["finals"] for r in page_data(page)["runs"]}
    docs = run_docs(demo_source)
    lr = {rid: d.get("config", {}).get("train", {}).get("lr") for rid, d in docs.items()}
    both = {rid for rid in docs if lr[rid] is not None and "loss" in finals[rid]}
    dots = page.eval_on_selector_all(
        ".scatter-plot circle",
        "cs => cs.map(c => ({ run: c.dataset.run, x: Number(c.dataset.x), y: Number(c.dataset.y),"
        " cx: Number(c.getAttribute('cx')), cy: Number(c.getAttribute('cy')), fill: c.getAttribute('fill') }))",
    )
    assert {d["run"] for d in dots} == both
    for d in dots:
        assert d["x"] == pytest.approx(lr[d["run"]]) and d["y"] == finals[d["run"]]["loss"]
        assert d["fill"] == run_color(d["run"])
    # positions follow the values: further right for a larger lr (log x), higher for a larger loss
    by_x = sorted(dots, key=lambda d: d["x"])
    assert all(a["cx"] <= b["cx"] for a, b in itertools.pairwise(by_x))
    by_y = sorted(dots, key=lambda d: d["y"])
    assert all(a["cy"] >= b["cy"] for a, b in itertools.pairwise(by_y))
    left = len(finals) - len(both)  # every run on the page (a run folder without run.yaml has no doc here)
    assert f"The scatter leaves out {left} without a value of both its columns." in page.inner_text(
        "[data-runs-status]"
    )
    page.locator(".scatter-plot circle").first.hover()
    assert page.inner_text("[data-scatter-readout]").startswith(dots[0]["run"])
    page.select_option("select[data-scatter-y]", "final grad_norm")
    q = query(page.url)
    assert (q["sx"], q["sy"], q["slogx"]) == ("config.train.lr", "final grad_norm", "1")


def test_a_sweeps_table_exports_its_numbers_as_numbers(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path, tmp_path: Path
) -> None:
    page.goto(served_demo.url("sweeps.html"))
    settle(page)
    name = "sweep-pcp-exact-spec-spec03"
    rows = list(csv.reader(io.StringIO(saved(page, f"[data-export-table={name}]", tmp_path).read_text("utf-8"))))
    head = rows[0]
    assert head[:2] == ["Rank", "Run"] and "config.train.lr" in head
    docs = run_docs(demo_source)
    lr = head.index("config.train.lr")
    shown = page.eval_on_selector_all(f"table[data-export={name}] tbody tr", "rs => rs.length")
    assert len(rows) - 1 == shown >= 3
    for row in rows[1:]:
        assert float(row[lr]) == docs[row[1]]["config"]["train"]["lr"]  # 3.000e−04 on the page, 0.0003 here
        assert all("\u2212" not in cell for cell in row)
