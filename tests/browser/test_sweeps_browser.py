"""The sweeps page with 200 synthetic runs, as Chromium draws it: no axis label overlaps another.

The chart's layout rules are proven on estimated boxes in tests/unit/test_sweeps.py; this checks the
real thing: the page is rendered from summaries, opened from file:// in Debian's Chromium (the
session's browser, see conftest.py), and every label's box is measured after the fonts are in.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import Browser

from obs.analysis.held_constant import flatten
from obs.config import SiteConfig
from obs.render.across_pages import sweeps_page
from obs.render.site import Renderer, SiteMeta
from obs.resources import templates_dir
from obs.sitemodel import RunSummary
from summaries import make_summary

N_RUNS = 200
DATASETS = [f"scene-corpus-v{i}.{j}-remix" for i in range(3) for j in range(9)]  # 27 categories


def synthetic_summaries(n: int = N_RUNS) -> list[RunSummary]:
    """A sweep as people run them: log-spaced lr, powers-of-two batches, a few categorical choices,
    many dataset versions, long nested keys, and outcomes that depend on some of them."""
    rng = np.random.default_rng(20260322)
    out = []
    for i in range(n):
        lr = float(10 ** rng.uniform(-5.5, -2))
        batch = int(2 ** rng.integers(3, 9))
        optim = ["adamw", "lion", "sgd", "adafactor"][int(rng.integers(0, 4))]
        schedule = ["cosine", "linear", "constant", "warmup-cosine-anneal-with-restarts"][int(rng.integers(0, 4))]
        dataset = DATASETS[int(rng.integers(0, len(DATASETS)))]
        config = {
            "config": {
                "train": {"lr": lr, "batch_size": batch, "warmup_steps": int(rng.integers(0, 2000)), "seed": i},
                "optim": {"name": optim},
                "schedule": schedule,
                "very": {"deeply": {"nested": {"hyperparameter_with_a_long_name": float(rng.uniform(0, 1))}}},
            },
            "model": {"d_model": int(rng.choice([256, 512, 768, 1024]))},
            "data": {"dataset_version": dataset},
            "provenance": {"code_commit": f"{i:040x}"},  # unique per run: never an axis
        }
        quality = -abs(np.log10(lr) + 3.5) / 2 + (0.1 if optim == "adamw" else 0) + rng.normal(0, 0.05)
        exact = float(np.clip(0.6 + quality, 0, 1))
        out.append(
            make_summary(
                id=f"sweep-{i:03d}-{optim}",
                spec="sweep",
                seed=i,
                headline={"metric": "exact", "value": exact},
                headline_is_rate=True,
                rates={"exact": exact, "renderable": float(np.clip(exact + 0.2, 0, 1))},
                finals={"loss": float(np.exp(-exact * 3))},
                fields=flatten(config),
            )
        )
    return out


@pytest.fixture(scope="module")
def sweeps_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("sweeps-site")
    cfg = SiteConfig()
    cfg.sweeps = {**cfg.sweeps, "max_axes": 10, "metrics": ["exact", "renderable", "final.loss"]}
    pages = sweeps_page(synthetic_summaries(), cfg, Renderer(SiteMeta(title="Sweep test", source_name="synthetic")))
    for rel, data in pages.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)  # sweeps/<slug>/importance.json
        (site / rel).write_bytes(data)
    shutil.copytree(templates_dir() / "assets", site / "assets")
    return site


LABEL_BOXES = """() => Array.from(document.querySelectorAll('svg.pcp text.pcp-label')).map(t => {
  const r = t.getBoundingClientRect();
  return {text: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom, chars: t.textContent.length,
          size: parseFloat(t.getAttribute('font-size'))};
})"""
SVG_BOX = """() => { const r = document.querySelector('svg.pcp').getBoundingClientRect();
  return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; }"""


def intersecting(boxes: list[dict[str, Any]], slack: float = 0.5) -> list[tuple[str, str]]:
    bad = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (
                a["x0"] + slack < b["x1"]
                and b["x0"] + slack < a["x1"]
                and a["y0"] + slack < b["y1"]
                and b["y0"] + slack < a["y1"]
            ):
                bad.append((a["text"], b["text"]))
    return bad


@pytest.mark.parametrize("viewport", [(1366, 768), (390, 844)])
def test_200_runs_render_without_overlapping_labels(
    sweeps_site: Path, viewport: tuple[int, int], tmp_path: Path, browser: Browser
) -> None:
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, device_scale_factor=1)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((sweeps_site / "sweeps.html").as_uri())
        page.evaluate("() => document.fonts.ready")
        assert page.evaluate("() => document.fonts.check('11px \"JetBrains Mono\"')")
        assert page.locator("svg.pcp polyline title").count() == N_RUNS
        assert page.locator("table[data-export^='sweep-'] tbody tr").count() == N_RUNS
        boxes = page.evaluate(LABEL_BOXES)
        svg = page.evaluate(SVG_BOX)
        # the first screen only: at 390 px the 200 reflowed table rows make a page too tall to capture whole
        page.screenshot(path=str(tmp_path / "sweeps.png"), animations="disabled")
    finally:
        context.close()
    assert errors == []
    titles = [b for b in boxes if b["size"] == 11]
    assert len(titles) >= 8  # the axes: settings that vary plus the three outcomes
    assert len(boxes) > 3 * len(titles)  # ticks were drawn, not all thinned away
    assert intersecting(boxes) == []
    for b in boxes:  # every label inside the chart
        assert svg["x0"] - 0.5 <= b["x0"] and b["x1"] <= svg["x1"] + 0.5, b
        assert svg["y0"] - 0.5 <= b["y0"] and b["y1"] <= svg["y1"] + 0.5, b
        # the layout's width estimate holds for the real font (monospace, 0.6 em per character)
        assert b["x1"] - b["x0"] <= b["chars"] * 0.6 * b["size"] + 1.0, b
    assert (tmp_path / "sweeps.png").stat().st_size > 10_000
