"""The demo's declared views as built: the numbers on the pages and in analysis.json recomputed from the
runs' own files with scipy (never read back from obs), and the sentences made from them.

obs.yaml of the demo declares `sample_efficiency:` (config.data.train_examples, by config.method),
`coupling:` (reward_mean -> eval/accuracy) and `reward_components:` (format 0.2, correct 0.8).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scipy import stats

CAMPAIGN = "campaigns/data-scaling"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def last(rows: list[dict[str, Any]], key: str) -> float:
    return float([r[key] for r in rows if key in r][-1])


def scaling_runs(source: Path) -> list[dict[str, Any]]:
    out = []
    for folder in sorted((source / "data-scaling").iterdir()):
        if not (folder / "run.yaml").is_file():
            continue
        doc = yaml.safe_load((folder / "run.yaml").read_text(encoding="utf-8"))
        rows = records(folder / "metrics.jsonl")
        out.append(
            {
                "id": doc["id"],
                "method": doc["config"]["method"],
                "size": doc["config"]["data"]["train_examples"],
                "acc": last(rows, "eval/accuracy"),  # the campaign's final_window is 1
                "reward": last(rows, "reward_mean"),
            }
        )
    return out


def analysis(site: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((site / CAMPAIGN / "analysis.json").read_text(encoding="utf-8"))
    return value


def test_sample_efficiency_points_are_the_seed_means_of_the_files(demo_site: Path, demo_source: Path) -> None:
    runs = scaling_runs(demo_source)
    view = analysis(demo_site)["sample_efficiency"]
    assert view["unit"] == "seed" and view["source"] == "config.data.train_examples" and view["left_out"] == []
    lines = {line["group"]: line for line in view["lines"]}
    assert set(lines) == {"sft", "sft+curriculum"}
    for method, line in lines.items():
        assert [p["size"] for p in line["points"]] == [1000, 4000, 16000]
        for point in line["points"]:
            values = [r["acc"] for r in runs if r["method"] == method and r["size"] == point["size"]]
            lo, hi = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
            assert point["n"] == len(values) == 3
            assert point["mean"] == pytest.approx(np.mean(values))
            assert point["ci"] == pytest.approx([lo, hi])
    page = (demo_site / CAMPAIGN / "index.html").read_text(encoding="utf-8")
    assert 'id="sample-efficiency"' in page and "The unit of replication is the seed" in page
    first = lines["sft"]["points"][0]
    assert f"{first['mean']:.4g}" in page  # the table's cell


def test_coupling_across_runs_is_spearman_of_the_final_values(demo_site: Path, demo_source: Path) -> None:
    runs = scaling_runs(demo_source)
    (pair,) = analysis(demo_site)["coupling"]
    assert pair["n"] == len(runs) == 18 and pair["unit"] == "run"
    rho = stats.spearmanr([r["reward"] for r in runs], [r["acc"] for r in runs]).statistic
    assert pair["rho"] == pytest.approx(rho)
    z, se = math.atanh(rho), math.sqrt((1 + rho**2 / 2) / (18 - 3))
    q = stats.norm.ppf(0.975)
    assert pair["ci"] == pytest.approx([math.tanh(z - q * se), math.tanh(z + q * se)])
    page = (demo_site / CAMPAIGN / "index.html").read_text(encoding="utf-8")
    assert f"is +{rho:.2f} (95% CI" in page and "unit = run, n = 18" in page
    assert page.count('class="scatter-point"') == 18


def test_the_rl_run_says_where_its_reward_rose_while_eval_fell(demo_site: Path, demo_source: Path) -> None:
    rows = records(demo_source / "grpo-rl-07/metrics.jsonl")
    report = json.loads((demo_site / "runs/grpo-rl-07/analysis.json").read_text(encoding="utf-8"))
    (pair,) = report["coupling"]
    evals = [(float(r["step"]), float(r["eval/accuracy"])) for r in rows if "eval/accuracy" in r]
    assert pair["evaluations"] == len(evals)
    worst = pair["windows"][0]
    start, end = worst["start"], worst["end"]
    acc = dict(evals)
    assert worst["downstream"] == [acc[start], acc[end]]
    assert acc[end] < acc[start]
    # the proxy at an evaluation: the mean of reward_mean logged since the previous evaluation
    steps = [s for s, _ in evals]
    prev_end = steps[steps.index(end) - 1]
    since = [float(r["reward_mean"]) for r in rows if prev_end < float(r["step"]) <= end]
    assert worst["proxy"][1] == pytest.approx(np.mean(since))
    assert worst["proxy"][1] > worst["proxy"][0]
    page = (demo_site / "runs/grpo-rl-07/index.html").read_text(encoding="utf-8")
    fall = (acc[start] - acc[end]) * 100
    assert f"eval/accuracy fell {fall:.1f} pp over steps {start:,.0f}–{end:,.0f}" in page


def test_the_rl_run_checks_its_weighted_reward_components(demo_site: Path, demo_source: Path) -> None:
    rows = records(demo_source / "grpo-rl-07/metrics.jsonl")
    diff = [abs(0.2 * r["rewards/format/mean"] + 0.8 * r["rewards/correct/mean"] - r["reward_mean"]) for r in rows]
    report = json.loads((demo_site / "runs/grpo-rl-07/analysis.json").read_text(encoding="utf-8"))
    d = report["reward_health"]["decomposition"]
    assert d["compared_steps"] == len(rows)
    assert d["max_abs_difference"] == pytest.approx(max(diff), abs=1e-12)
    assert d["matches"] is True
    page = (demo_site / "runs/grpo-rl-07/index.html").read_text(encoding="utf-8")
    assert f"0.2 × format + 0.8 × correct matches the logged reward_mean at all {len(rows)} shared steps" in page
    assert 'id="chart-components"' in page


def test_runs_without_the_declared_series_show_none_of_it(demo_site: Path) -> None:
    page = (demo_site / "runs/spec03-r1/index.html").read_text(encoding="utf-8")
    assert 'id="coupling"' not in page and 'id="reward-components"' not in page


def final(rows: list[dict[str, Any]], key: str, window: int = 10) -> float:
    """A run in no campaign: the mean of its last `window` logged values (obs.yaml's final_window, 10) of a dense
    series (at least twice that many points), else its last value (an eval logged 6 times: docs/contract.md)."""
    values = [r[key] for r in rows if key in r]
    return float(np.mean(values[-window:])) if len(values) >= 2 * window else float(values[-1])


def test_efficiency_page_of_runs_in_no_campaign(demo_site: Path, demo_source: Path) -> None:
    """The demo's size study (ordinary runs, no campaign): efficiency.html draws its two recipes at their three
    sizes, each point the mean of three seeds with scipy's t interval, and the coupling is Spearman's ρ over
    every run in no campaign with both final values (the size study and grpo-rl-07)."""
    view = json.loads((demo_site / "efficiency.json").read_text(encoding="utf-8"))
    se = view["sample_efficiency"]
    assert se["group_by"] == "recipe" and se["unit"] == "seed" and se["final_window"] == 10
    lines = {line["group"]: line for line in se["lines"] if line["points"]}
    assert set(lines) == {"lora", "full-ft"}
    study = []
    for folder in sorted((demo_source / "size-study").iterdir()):
        doc = yaml.safe_load((folder / "run.yaml").read_text(encoding="utf-8"))
        rows = records(folder / "metrics.jsonl")
        size = doc["config"]["data"]["train_examples"]
        study.append((doc["config"]["method"], size, final(rows, "eval/accuracy"), final(rows, "reward_mean")))
    assert len(study) == 18
    for method, line in lines.items():
        assert [p["size"] for p in line["points"]] == [1000, 4000, 16000]
        for point in line["points"]:
            values = [acc for m, size, acc, _ in study if m == method and size == point["size"]]
            lo, hi = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
            assert point["n"] == len(values) == 3
            assert point["mean"] == pytest.approx(np.mean(values)) and point["ci"] == pytest.approx([lo, hi])
    (pair,) = view["coupling"]
    rl = records(demo_source / "grpo-rl-07" / "metrics.jsonl")
    proxy = [r for _, _, _, r in study] + [final(rl, "reward_mean")]
    downstream = [a for _, _, a, _ in study] + [final(rl, "eval/accuracy")]
    assert pair["n"] == 19 and pair["rho"] == pytest.approx(stats.spearmanr(proxy, downstream).statistic)
    page = (demo_site / "efficiency.html").read_text(encoding="utf-8")
    assert 'id="chart-sample-efficiency"' in page or "sample-efficiency" in page
    assert f"{100 * lines['lora']['points'][0]['mean']:.1f}%" in page  # the table's cell, a rate in percent
    assert "needs three" not in page and "coloured by condition" not in page  # no condition to colour by
    # eval/accuracy is logged 6 times, fewer than twice the window: the page says its final is its last value
    assert page.count("or its last value when it has fewer than twice that many") == 2
