"""Chart details a reader notices, each checked where it went wrong before: stage labels drawn on top
of each other after a zoom ("mainup"), tick labels that are not normalised ("0, 5e−5, 10e−5"),
fractional steps in the campaign and arms read-outs ("step 208.849"); and links into the case
browser that name a split, family or failure class (not its place in a list) and say what they ask
for that a run does not have. Also the export of a run page's chart.

What the canvas drew is recorded by wrapping the 2D context's fillText before the page loads, so the
checks see the pixels' text and places, not the script's own account of them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from browserkit import PageWatch, ServedSite, run_pages, settle, steady_box
from PIL import Image
from playwright.sync_api import Page

RUN = "runs/spec03-r2/index.html"
CAMPAIGN = "campaigns/sepa-campaign/index.html"
ARMS = "arms/onto-arms/index.html"

RECORD_TEXT = """
(() => {
  const fill = CanvasRenderingContext2D.prototype.fillText;
  window.__drawn = [];
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y) {
    const m = this.measureText(text);
    window.__drawn.push({ text: String(text), x, y, w: m.width, align: this.textAlign, base: this.textBaseline,
      h: m.actualBoundingBoxAscent + m.actualBoundingBoxDescent, canvas: this.canvas });
    return fill.apply(this, arguments);
  };
})();
"""


def ready(page: Page, group: str) -> None:
    page.locator(group).scroll_into_view_if_needed()
    page.wait_for_function(
        "sel => { const g = document.querySelector(sel);"
        " return g && g.classList.contains('ready') && g.querySelector('canvas'); }",
        arg=group,
    )


def hover(page: Page, group: str, fraction: float) -> None:
    plot = page.locator(f"{group} .chart-plot").first
    box = steady_box(page, plot)  # aimed once nothing drawn above it moves it
    page.mouse.move(box["x"] + box["width"] * fraction, box["y"] + box["height"] * 0.5)
    page.wait_for_function("sel => document.querySelector(sel + ' .ro-item')", arg=group)


# ------------------------------------------------------------------------------ stage labels


def stage_labels(page: Page, names: list[str]) -> list[dict[str, Any]]:
    """The stage labels drawn on the first panel's canvas since the last call, as boxes."""
    drawn = page.evaluate(
        """names => { const c = document.querySelector('#chart-training canvas');
           const out = window.__drawn.filter(d => d.canvas === c && names.includes(d.text))
             .map(d => ({ text: d.text, x0: d.x, x1: d.x + d.w, y0: d.y, y1: d.y + d.h }));
           window.__drawn = []; return out; }""",
        names,
    )
    return drawn


def test_stage_labels_never_overlap_whatever_the_zoom(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    page.add_init_script(RECORD_TEXT)
    page.goto(served_demo.url(RUN))
    settle(page)
    ready(page, "#chart-training")
    data = json.loads(
        (served_demo.root / "runs/spec03-r2/curves.js").read_text(encoding="utf-8").split("push(", 1)[1][:-3]
    )
    names = [s[0] for s in data["stages"]]
    assert len(names) == 3
    last = data["stages"][-1][2]
    for lo, hi in [(0, last), (100, 400), (140, 170), (2450, 2650), (2300, 2500), (0, 200)]:
        page.evaluate("r => { window.__drawn = []; }", None)
        page.evaluate(
            "([lo, hi]) => window.obsCharts.groups.find(g => g.root.id === 'chart-training').setRange(lo, hi)", [lo, hi]
        )
        page.wait_for_timeout(50)
        boxes = stage_labels(page, names)
        # the latest drawing only: one label per stage at most
        seen: dict[str, dict[str, Any]] = {}
        for b in boxes:
            seen[b["text"]] = b
        labels = list(seen.values())
        assert labels, (lo, hi)
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                apart = a["x1"] <= b["x0"] or b["x1"] <= a["x0"] or a["y1"] <= b["y0"] or b["y1"] <= a["y0"]
                assert apart, f"zoomed to {lo}–{hi}: {a['text']} and {b['text']} overlap ({a}, {b})"
        # the stage the view starts in is named
        current = [s[0] for s in data["stages"] if s[1] <= lo][-1]
        assert current in seen, (lo, hi, seen.keys())


# -------------------------------------------------------------------------------- tick labels

SCI = re.compile(r"^\u2212?(\d+(?:\.\d+)?)e\u2212?\d+$")


def test_tick_labels_are_normalised(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    page.goto(served_demo.url(RUN))
    settle(page)
    labels = page.evaluate("() => window.obsCharts.linearLabels([0, 5e-7, 1e-6, 1.5e-6, 2e-6], 5e-7)")
    assert labels == ["0", "5e\u22127", "1e\u22126", "1.5e\u22126", "2e\u22126"]
    assert page.evaluate("() => window.obsCharts.linearLabels([0, 5e-5, 1e-4, 1.5e-4], 5e-5)") == [
        "0",
        "5e\u22125",
        "1e\u22124",
        "1.5e\u22124",
    ]
    checked = 0
    for rel in [*run_pages(served_demo.root)[:6], "compare.html?runs=spec03-r1,spec03-r2&metrics=lr,grad_norm"]:
        page.goto(served_demo.url(rel))
        settle(page)
        for group in page.locator(".chart-group").all():
            group.scroll_into_view_if_needed()
        page.wait_for_function(
            "() => document.querySelectorAll('.chart-group').length"
            " === document.querySelectorAll('.chart-group.ready').length"
        )
        axes = page.evaluate(
            "() => window.obsCharts.groups.flatMap(g => g.panels.filter(p => p.u)"
            ".flatMap(p => p.u.axes.map(a => a._values || [])))"
        )
        for values in axes:
            for v in values:
                m = SCI.match(v or "")
                if m:
                    assert 1 <= float(m.group(1)) < 10, f"{rel}: tick label {v} in {values}"
                    checked += 1
    assert checked > 0  # the learning-rate panels have exponent labels


# --------------------------------------------------------------------------- campaign read-outs


@pytest.mark.parametrize("rel", [CAMPAIGN, ARMS])
def test_campaign_and_arms_read_outs_name_whole_steps(
    page: Page, watch: PageWatch, served_demo: ServedSite, rel: str
) -> None:
    page.goto(served_demo.url(rel))
    settle(page)
    ready(page, "#chart-conditions")
    for fraction in (0.13, 0.37, 0.52, 0.81):
        hover(page, "#chart-conditions", fraction)
        head = page.inner_text("#chart-conditions .ro-step")
        assert re.fullmatch(r"step [\d,]+", head), head
        steps = page.eval_on_selector_all("#chart-conditions .ro-item", "els => els.map(e => Number(e.dataset.step))")
        assert steps and all(float(s).is_integer() for s in steps), steps


# --------------------------------------------------------------------------------- export


def test_a_run_pages_chart_exports_as_png_svg_and_csv(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path, tmp_path: Path
) -> None:
    page.goto(served_demo.url(RUN))
    settle(page)
    ready(page, "#chart-training")
    files = {}
    for kind in ("png", "svg", "csv"):
        with page.expect_download() as info:
            page.click(f"#chart-training [data-export={kind}]")
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        files[kind] = path
    assert files["png"].name == "spec03-r2-training.png"
    with Image.open(files["png"]) as img:
        img.load()
        assert img.height > 300
    assert "<svg" in files["svg"].read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(files["csv"].read_text(encoding="utf-8"))))
    log = {}
    for line in (demo_source / "spec03/r2/metrics.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            log[float(rec["step"])] = rec
    header = rows[0]
    assert header == ["step", "loss", "eval_loss", "grad_norm", "lr"]  # every series drawn, by name
    col = header.index("loss")
    checked = 0
    for row in rows[1:]:
        if row[col]:
            assert float(row[col]) == pytest.approx(log[float(row[0])]["loss"], rel=1e-5)
            checked += 1
    assert checked > 500


# ------------------------------------------------------------------------ case-browser links


def probe_cases(demo_source: Path) -> list[dict[str, Any]]:
    path = demo_source / "spec03/r2/probe.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def matching(page: Page) -> int:
    text = page.locator("#cases .case-status").text_content() or ""
    assert " of " in text, text
    return int(text.split(" of ")[1].split()[0].replace(",", "").rstrip("+"))


def test_case_browser_links_use_names_and_say_what_they_cannot_apply(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    cases = probe_cases(demo_source)
    in_test = sum(1 for c in cases if c.get("split") == "test")
    assert 0 < in_test < len(cases)
    page.goto(served_demo.url(RUN + "#cases?split=test"))
    page.wait_for_selector("#cases[data-ready]")
    page.wait_for_timeout(100)
    assert page.input_value("#cases select[name=split]") != ""
    assert matching(page) == in_test
    assert page.locator("#cases .case-link").is_hidden()
    # picking a family writes its name into the link
    page.select_option("#cases select[name=family]", label="pipeline_lane")
    page.wait_for_timeout(100)
    assert page.evaluate("location.hash") == "#cases?split=test&family=pipeline_lane"
    both = sum(1 for c in cases if c.get("split") == "test" and c.get("family") == "pipeline_lane")
    assert matching(page) == both
    # the links on the page into the browser name their failure class
    hrefs = page.eval_on_selector_all("a[data-cases^='group=']", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs and all(re.fullmatch(r"#cases\?group=[a-z_]+", h) for h in hrefs), hrefs
    # a value this run does not have is said, and the rest of the link still applies
    page.goto(served_demo.url(RUN + "#cases?split=holdout&family=pipeline_lane&sort=id"))
    page.wait_for_selector("#cases[data-ready]")
    page.wait_for_timeout(100)
    note = page.inner_text("#cases .case-link")
    assert "split “holdout”" in note and "filter “sort”" in note and "pipeline_lane" not in note
    assert matching(page) == sum(1 for c in cases if c.get("family") == "pipeline_lane")


# ------------------------------------------------------------------ other links, other pages


def test_a_campaign_link_to_a_metric_it_does_not_have_says_so(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    page.goto(served_demo.url(CAMPAIGN + "#metric=no_such_metric"))
    settle(page)
    ready(page, "#chart-conditions")
    note = page.locator(".chart-link")
    assert note.is_visible() and "“no_such_metric”" in note.inner_text()
    assert page.input_value("select[data-metric]") == "correct_rate"
    page.goto(served_demo.url(CAMPAIGN + "#metric=mean_reward"))  # only the hash changed: load it anew
    page.reload()
    settle(page)
    ready(page, "#chart-conditions")
    assert page.input_value("select[data-metric]") == "mean_reward" and page.locator(".chart-link").count() == 0


def test_a_compare_link_to_a_run_that_is_not_here_says_so(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    page.goto(served_demo.url("compare.html?a=spec03-r1&b=gone-run"))
    settle(page)
    note = page.locator("[data-compare-link]")
    assert note.is_visible() and "“gone-run”" in note.inner_text()
    assert page.input_value("#compare-a") == "spec03-r1"
