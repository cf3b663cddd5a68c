"""The declared views drawn: the campaign's sample-efficiency chart reads out the seed means of the runs'
own files, the run page's component and coupling charts are drawn, and neither page scrolls sideways on
a phone (390 px) or on a laptop (1366 px)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from browserkit import PHONE, PageWatch, ServedSite, steady_box
from playwright.sync_api import Page

CAMPAIGN = "campaigns/data-scaling/index.html"
RL_RUN = "runs/grpo-rl-07/index.html"


def ready(page: Page, group: str) -> None:
    page.locator(group).scroll_into_view_if_needed()
    page.wait_for_function(
        "sel => { const g = document.querySelector(sel); return g && g.classList.contains('ready')"
        " && g.querySelector('canvas'); }",
        arg=group,
    )


def seed_means(source: Path) -> dict[tuple[str, float], float]:
    cells: dict[tuple[str, float], list[float]] = {}
    for folder in (source / "data-scaling").iterdir():
        if (folder / "run.yaml").is_file():
            cfg = yaml.safe_load((folder / "run.yaml").read_text(encoding="utf-8"))["config"]
            rows = [json.loads(x) for x in (folder / "metrics.jsonl").read_text(encoding="utf-8").splitlines() if x]
            acc = [r["eval/accuracy"] for r in rows if "eval/accuracy" in r][-1]
            cells.setdefault((cfg["method"], float(cfg["data"]["train_examples"])), []).append(acc)
    return {k: sum(v) / len(v) for k, v in cells.items()}


def test_sample_efficiency_readout_is_the_seed_means(
    page: Page, watch: PageWatch, served_demo: ServedSite, demo_source: Path
) -> None:
    page.goto(served_demo.url(CAMPAIGN))
    ready(page, "#chart-sample-efficiency")
    legend = page.eval_on_selector_all("#chart-sample-efficiency .legend-item", "bs => bs.map(b => b.textContent)")
    assert legend == ["sft", "sft+curriculum"]
    plot = page.locator("#chart-sample-efficiency .chart-plot")
    box = steady_box(page, plot)  # aimed once nothing drawn above it moves it
    page.mouse.move(box["x"] + box["width"] * 0.1, box["y"] + box["height"] / 2)  # nearest: the smallest size
    page.wait_for_function("() => document.querySelector('#chart-sample-efficiency .ro-item')")
    items = page.evaluate(
        """() => [...document.querySelectorAll('#chart-sample-efficiency .ro-item')].map(e => ({
        series: e.dataset.series, step: Number(e.dataset.step), value: Number(e.dataset.value) }))"""
    )
    means = seed_means(demo_source)
    assert {i["series"] for i in items} == {"sft+curriculum", "sft"}
    for item in items:
        assert item["step"] == 1000
        assert item["value"] == pytest.approx(means[(item["series"], 1000.0)], abs=1e-4)
    assert "training examples" in page.inner_text("#chart-sample-efficiency [data-readout]")


def test_run_page_draws_components_and_coupling(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    page.goto(served_demo.url(RL_RUN))
    ready(page, "#chart-components")
    titles = page.eval_on_selector_all("#chart-components .chart-title", "ts => ts.map(t => t.textContent)")
    assert titles == ["correct (weight 0.8)", "format (weight 0.2)", "weighted decomposition"]
    ready(page, "#chart-coupling-0")
    assert page.locator("#chart-coupling-0 canvas").count() >= 2


@pytest.mark.parametrize("where", [CAMPAIGN, RL_RUN])
@pytest.mark.parametrize("viewport", [PHONE, {"width": 1366, "height": 768}])
def test_no_sideways_scroll(
    page: Page, watch: PageWatch, served_demo: ServedSite, where: str, viewport: dict[str, int]
) -> None:
    page.set_viewport_size(viewport)
    page.goto(served_demo.url(where))
    for group in ("#chart-sample-efficiency",) if where == CAMPAIGN else ("#chart-components", "#chart-coupling-0"):
        ready(page, group)
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= viewport["width"]
