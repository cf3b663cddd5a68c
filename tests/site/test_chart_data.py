"""What the interactive charts read, checked against the runs' own files.

Each run's `curves.js` must hold every logged series as real logged points (decimated, never
invented), the last point exact; the run page must point at it; building a run must not import a
plotting library; the campaign and arms data and the per-metric statistics must be the ones the
runs' logs give. Static figures stay only where they are the product (campaign bands, arms,
--single-file), and their tick labels (and the sweeps chart's) are never repeated.
"""

from __future__ import annotations

import base64
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from bs4 import BeautifulSoup

from obs.analysis.campaign import RunFinal, campaign_stats
from obs.model import Campaign, Condition
from obs.numbers import num
from obs.render.chartdata import PREFIX, SUFFIX

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "unit"))
from test_ticks import assert_readable, svg_tick_labels  # noqa: E402


def data_file(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    assert raw.startswith(PREFIX) and raw.endswith(SUFFIX), path
    value: dict[str, Any] = json.loads(raw[len(PREFIX) : -len(SUFFIX)])
    return value


def xs(entry: dict[str, Any]) -> list[float]:
    return [float(v) for v in np.cumsum(entry["dx"])] if "dx" in entry else [float(v) for v in entry["x"]]


def logged(source: Path, folder: str) -> dict[str, dict[float, float]]:
    out: dict[str, dict[float, float]] = {}
    for line in (source / folder / "metrics.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        for key, value in rec.items():
            if key != "step" and isinstance(value, int | float) and not isinstance(value, bool):
                out.setdefault(key, {})[float(rec["step"])] = float(value)
    return out


RUN_FOLDERS = {"spec03-r2": "spec03/r2", "grpo-rl-07": "grpo-rl-07", "onto-full_s1": "onto-arms/full_s1"}


@pytest.mark.parametrize("slug", sorted(RUN_FOLDERS))
def test_every_series_is_drawn_from_logged_points(demo_site: Path, demo_source: Path, slug: str) -> None:
    folder = RUN_FOLDERS[slug]
    data = data_file(demo_site / "runs" / slug / "curves.js")
    log = logged(demo_source, folder)
    assert data["slug"] == slug and data["id"] == slug
    assert set(data["series"]) == set(log)
    for name, entry in data["series"].items():
        steps, values = xs(entry), entry["y"]
        assert len(steps) == len(values) and steps == sorted(steps)
        assert entry["n"] == len(log[name])
        for s, v in zip(steps, values, strict=True):  # every drawn point is a logged point
            assert math.isclose(v, log[name][s], rel_tol=1e-5, abs_tol=1e-12), (name, s)
        last = max(log[name])
        assert steps[-1] == last and values[-1] == pytest.approx(log[name][last], rel=1e-5)
        extremes = [min(log[name].values()), max(log[name].values())]
        assert [min(values), max(values)] == pytest.approx(extremes, rel=1e-5)  # spikes survive


def test_the_run_page_reads_its_data_file_and_draws_nothing_itself(demo_site: Path) -> None:
    html = (demo_site / "runs/spec03-r2/index.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    sources = [s["src"] for s in soup.find_all("script", src=True)]
    assert "../../assets/charts.js" in sources  # it loads uPlot and the data file when the curves are near
    spec = json.loads(soup.find("script", id="chart-spec").string)
    assert spec["data"] == "curves.js" and spec["slug"] == "spec03-r2"
    assert [p["title"] for p in spec["groups"]["training"]] == ["loss", "grad norm", "learning rate"]
    assert spec["groups"]["training"][0]["lines"] == ["loss", "eval_loss"]
    assert not list(demo_site.glob("runs/*/*.svg")), "per-run curves are drawn in the browser"
    for group in soup.select(".chart-group"):  # reserved boxes: every plot has its panel and a read-out
        assert group.select(".chart-plot") and group.select("[data-readout]")


def test_building_a_run_imports_no_plotting_library(demo_source: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from obs.pipeline import SourceTree, load_report, render_files\n"
        "from obs.render.site import Renderer\n"
        f"tree = SourceTree.open(Path({str(demo_source)!r}))\n"
        "loaded = load_report(tree, 'grpo-rl-07')\n"
        "files = dict(render_files(tree, loaded.planned, loaded.report, Renderer(tree.meta)))\n"
        "assert 'curves.js' in files and 'index.html' in files\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'scipy', 'seaborn', 'pandas')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_whole_build_never_imports_scipy_stats(demo_source: Path, tmp_path: Path) -> None:
    """scipy.stats costs ~1 s to import, more than everything one changed run needs; its distributions
    are scipy.special's functions underneath, which obs calls directly (campaign bands, planning)."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from obs.build import BuildOptions, build_site\n"
        f"build_site(BuildOptions(source=Path({str(demo_source)!r}), out=Path('site'), quiet=True, jobs=1))\n"
        "assert Path('site/index.html').is_file()\n"
        "print(sorted(m for m in sys.modules if m.startswith('scipy.stats')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == "[]", out.stdout


def test_chart_data_is_small_and_byte_identical(demo_site: Path, tmp_path: Path, demo_source: Path) -> None:
    from obs.build import BuildOptions, build_site

    again = tmp_path / "again"
    build_site(BuildOptions(source=demo_source, out=again, quiet=True, jobs=1))
    for path in sorted(demo_site.rglob("curves.js")):
        rel = path.relative_to(demo_site)
        assert (again / rel).read_bytes() == path.read_bytes(), rel
        assert path.stat().st_size < 160_000, rel


# --------------------------------------------------------------------------- campaigns


def step_window_mean(source: Path, folder: Path, metric: str, lo: float, hi: float) -> float:
    values = logged(source, str(folder.relative_to(source)))[metric]
    return float(np.mean([v for step, v in values.items() if lo <= step <= hi]))


def test_a_secondary_campaign_metric_is_tested_like_the_primary(demo_site: Path, demo_source: Path) -> None:
    """The picker's statistics for mean_reward, a secondary metric over its declared step window (campaign.yaml
    `metrics: {mean_reward: {window: 250-299}}`): seed values from the logs, campaign_stats on them."""
    camp_dir = next(p.parent for p in demo_source.rglob("campaign.yaml"))
    spec = yaml.safe_load((camp_dir / "campaign.yaml").read_text())
    window = int(spec.get("final_window", 10))
    assert spec["metrics"]["mean_reward"] == {"tier": "secondary", "window": "250-299", "unit": "reward"}
    runs = []
    for run_yaml in sorted(camp_dir.rglob("run.yaml")):
        doc = yaml.safe_load(run_yaml.read_text())
        value = step_window_mean(demo_source, run_yaml.parent, "mean_reward", 250, 299)
        runs.append(RunFinal(doc["id"], doc["condition"], doc["seed"], value))
    conditions = [Condition(name=c["name"] if isinstance(c, dict) else c) for c in spec["conditions"]]
    campaign = Campaign(
        id=spec["id"],
        source_dir=camp_dir,
        conditions=conditions,
        baseline_condition=spec["baseline_condition"],
        primary_metric="mean_reward",
        seeds=spec.get("seeds", []),
        final_window=window,
    )
    expected = campaign_stats(campaign, runs)
    html = (demo_site / "campaigns/sepa-campaign/index.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    block = soup.select_one("[data-metric-block='mean_reward']")
    assert block is not None and block.has_attr("hidden")  # shown when picked (or without JavaScript)
    text = block.get_text(" ")
    for cand in expected.candidates:
        if cand.tested:
            assert num(cand.p_value) in text or f"{cand.p_value:.2f}" in text, cand
        interval = cand.welch.interval
        if interval is None:
            assert cand.welch.problem and cand.welch.problem in text, cand
        else:
            assert num(interval.low) in text and num(interval.high) in text, cand
    primary = soup.select_one("[data-metric-block='correct_rate']")
    assert primary is not None and not primary.has_attr("hidden")


def test_campaign_curves_are_the_mean_over_seeds(demo_site: Path, demo_source: Path) -> None:
    data = data_file(demo_site / "campaigns/sepa-campaign/curves.js")
    assert data["slug"] == "campaign:sepa-campaign"
    assert {"correct_rate", "mean_reward", "loss"} <= set(data["metrics"])
    view = data["metrics"]["mean_reward"]
    for cond in view["conditions"]:
        assert len(cond["x"]) == len(cond["mean"]) == len(cond["ci_lo"]) == len(cond["sd_hi"])
        assert all(lo <= m <= hi for lo, m, hi in zip(cond["ci_lo"], cond["mean"], cond["ci_hi"], strict=True))
    # the last grid point is the end of the shortest seed: its mean is the mean of the seeds' values there
    camp_dir = next(p.parent for p in demo_source.rglob("campaign.yaml"))
    first = view["conditions"][0]
    members = [
        p.parent for p in camp_dir.rglob("run.yaml") if yaml.safe_load(p.read_text())["condition"] == first["name"]
    ]
    ends = [logged(demo_source, str(m.relative_to(demo_source)))["mean_reward"] for m in members]
    last = first["x"][-1]
    assert first["mean"][-1] == pytest.approx(np.mean([e[last] for e in ends]), rel=1e-3, abs=1e-6)


# ---------------------------------------------------------------------- static figures


def test_static_figures_have_distinct_evenly_spaced_ticks(demo_site: Path, single_file_report: Path) -> None:
    figures = {str(p.relative_to(demo_site)): p.read_text(encoding="utf-8") for p in demo_site.rglob("*.svg")}
    html = single_file_report.read_text(encoding="utf-8")
    for i, b64 in enumerate(re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)):
        svg = base64.b64decode(b64).decode("utf-8", errors="replace")
        if "matplotlib" in svg:
            figures[f"single-file figure {i}"] = svg
    assert any(k.startswith("single-file") for k in figures) and any("campaigns/" in k for k in figures)
    for name, svg in figures.items():
        try:
            assert_readable(svg_tick_labels(svg))
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc


def test_the_sweeps_chart_never_repeats_a_tick_label(demo_site: Path) -> None:
    soup = BeautifulSoup((demo_site / "sweeps.html").read_text(encoding="utf-8"), "html.parser")
    by_axis: dict[tuple[int, str], list[str]] = {}  # an axis's tick labels share its x
    for i, chart in enumerate(soup.select("svg.pcp")):
        for t in chart.select("text.pcp-tick"):
            by_axis.setdefault((i, t["x"]), []).append(t.get_text())
    assert len(by_axis) >= 3
    for labels in by_axis.values():
        assert len(labels) == len(set(labels)), labels
