"""RL reward health: series found under the names trainers log, summaries, and collapse onsets.

Onsets are checked against hand-derived steps and against pandas' rolling mean (an independent
implementation), and on the demo run grpo-rl-07 against its own metrics file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from obs.analysis.reward import find_components, reward_health, rolling_mean, sustained_onset
from obs.config import SiteConfig
from obs.model import Metrics, Series

THRESHOLD = SiteConfig().threshold


def metrics_of(**series: np.ndarray) -> Metrics:
    return Metrics(
        series={k: Series(np.arange(len(v), dtype=float), np.asarray(v, dtype=float)) for k, v in series.items()}
    )


def collapsing_run(n: int = 200, onset: int = 120) -> dict[str, np.ndarray]:
    """A GRPO-like log: zero-std groups jump from 0.05 to 0.8 at `onset`, reward std falls with it."""
    rng = np.random.default_rng(3)
    zero = np.where(np.arange(n) < onset, 0.05, 0.8) + rng.uniform(-0.02, 0.02, n)
    std = np.where(np.arange(n) < onset, 0.35, 0.04) + rng.uniform(-0.01, 0.01, n)
    mean = np.linspace(0.2, 0.9, n)
    return {
        "reward": mean,
        "reward_std": std,
        "frac_reward_zero_std": zero,
        "rewards/correct_fn/mean": mean * 0.9,
        "rewards/format_fn/mean": np.full(n, 0.98),
        "rewards/format_fn/std": np.full(n, 0.01),
    }


# --------------------------------------------------------------------------- rolling mean and onset


@pytest.mark.parametrize("window", [1, 3, 10])
def test_rolling_mean_matches_pandas(window: int) -> None:
    values = np.random.default_rng(1).normal(size=57)
    expected = pd.Series(values).rolling(window).mean().to_numpy()[window - 1 :]
    np.testing.assert_allclose(rolling_mean(values, window), expected, rtol=0, atol=1e-12)


def test_rolling_mean_of_a_short_series_is_empty() -> None:
    assert rolling_mean(np.ones(3), 5).size == 0


def test_onset_of_a_step_change_is_where_the_window_mean_passes_the_threshold() -> None:
    steps = np.arange(100, dtype=float) * 2  # steps 0, 2, 4, ...
    values = np.where(np.arange(100) < 30, 0.0, 1.0)
    # windows of 5 ending at index i have mean >= 0.5 once 3 of them are ones: i = 32, step 64
    assert sustained_onset(steps, values, 0.5, 5) == (64.0, (100 - 5 + 1) - 28)


def test_a_temporary_excursion_is_not_an_onset() -> None:
    values = np.zeros(100)
    values[20:40] = 1.0  # above for 20 points, then back
    assert sustained_onset(np.arange(100.0), values, 0.5, 5) is None
    values[90:] = 1.0  # back above for the last 10 points: the onset is the second crossing
    found = sustained_onset(np.arange(100.0), values, 0.5, 5)
    assert found is not None and found[0] == 92.0


def test_a_crossing_shorter_than_one_window_does_not_count_yet() -> None:
    values = np.zeros(100)
    values[-5:] = 1.0  # rolling means >= 0.5 only for the last 3 windows
    assert sustained_onset(np.arange(100.0), values, 0.5, 10) is None


def test_onset_below_a_threshold() -> None:
    values = np.concatenate([np.full(50, 1.0), np.full(50, 0.1)])
    found = sustained_onset(np.arange(100.0), values, 0.25, 4, above=False)
    # mean of 4 <= 0.25 once all 4 are low (one high in 4 gives 0.325): window ending at index 53
    assert found == (53.0, 100 - 4 + 1 - 50)


def test_onset_matches_a_pandas_reading_of_the_same_rule() -> None:
    rng = np.random.default_rng(11)
    values = np.clip(np.linspace(0, 1, 300) + rng.normal(0, 0.15, 300), 0, 1)
    found = sustained_onset(np.arange(300.0), values, 0.6, 10)
    roll = pd.Series(values).rolling(10).mean()
    above = (roll >= 0.6).to_numpy()
    last_below = max(i for i in range(300) if not above[i])  # NaN windows count as below
    assert found is not None and found[0] == float(last_below + 1)


# --------------------------------------------------------------------------- names


def test_components_from_trl_and_older_names() -> None:
    names = {
        "rewards/correct_fn/mean": "rewards/correct_fn/mean",
        "rewards/correct_fn/std": "rewards/correct_fn/std",
        "reward/length": "reward/length",
        "rewards/mean": "rewards/mean",  # the total, not a component
        "reward_std": "reward_std",
    }
    assert find_components(names) == [
        ("correct_fn", "rewards/correct_fn/mean", "rewards/correct_fn/std"),
        ("length", "reward/length", None),
    ]


def test_trl_names_are_found_and_a_collapse_is_detected() -> None:
    h = reward_health(metrics_of(**collapsing_run()), THRESHOLD)
    assert h is not None
    assert h.mean is not None and h.mean.key == "reward"
    assert h.std is not None and h.std.key == "reward_std"
    assert h.zero_std is not None and h.zero_std.key == "frac_reward_zero_std"
    assert [c.name for c in h.components] == ["correct_fn", "format_fn"]
    assert h.components[1].std_key == "rewards/format_fn/std"
    assert h.collapsed
    # rolling mean of 10 passes 0.5 once 6 of the 10 points are past the jump at 120: window ending at 125
    assert h.zero_std_onset is not None and h.zero_std_onset.step == 125.0
    assert h.std_onset is not None and 120 <= h.std_onset.step <= 130
    assert h.onset_step == min(h.zero_std_onset.step, h.std_onset.step)
    json.dumps(h.as_dict())  # plain data for analysis.json


def test_older_trl_zero_std_ratio_and_train_prefix() -> None:
    run = collapsing_run()
    h = reward_health(
        metrics_of(
            **{"train/reward_mean": run["reward"], "train/reward_std": run["reward_std"]},
            zero_std_ratio=run["frac_reward_zero_std"],
        ),
        THRESHOLD,
    )
    assert h is not None and h.mean is not None and h.mean.key == "train/reward_mean"
    assert h.zero_std is not None and h.zero_std.key == "zero_std_ratio"
    assert h.collapsed


def test_a_healthy_run_has_no_onset() -> None:
    n = 200
    rng = np.random.default_rng(5)
    h = reward_health(
        metrics_of(
            reward_mean=np.linspace(0.2, 0.6, n),
            reward_std=0.3 + rng.uniform(-0.02, 0.02, n),
            reward_min=np.zeros(n),
            reward_max=np.ones(n),
            frac_reward_zero_std=0.1 + rng.uniform(-0.05, 0.05, n),
            advantage_mean=rng.normal(0, 0.01, n),
            advantage_std=np.full(n, 0.9),
        ),
        THRESHOLD,
    )
    assert h is not None and not h.collapsed and h.onset_step is None
    assert h.min is not None and h.max is not None and h.adv_std is not None
    assert [row["label"] for row in h.table()][:3] == ["reward mean", "reward std", "reward min"]


def test_reward_std_that_only_rises_is_not_a_collapse() -> None:
    h = reward_health(metrics_of(reward_mean=np.linspace(0, 1, 100), reward_std=np.linspace(0.01, 0.4, 100)), THRESHOLD)
    assert h is not None and h.std_onset is None


def test_zero_std_threshold_and_window_come_from_obs_yaml() -> None:
    run = collapsing_run()
    strict = SiteConfig(thresholds={"zero_std_frac": 0.9, "reward_std_drop": 0.01})
    h = reward_health(metrics_of(**run), strict.threshold)
    assert h is not None and not h.collapsed


def test_mean_only_cannot_detect_a_collapse() -> None:
    h = reward_health(metrics_of(mean_reward=np.linspace(0, 1, 50)), THRESHOLD)
    assert h is not None and not h.can_detect and not h.collapsed


def test_no_reward_series_means_no_reward_health() -> None:
    assert reward_health(metrics_of(loss=np.linspace(3, 1, 50), correct_rate=np.linspace(0, 1, 50)), THRESHOLD) is None
    assert reward_health(None, THRESHOLD) is None


def test_final_is_the_mean_of_the_final_window() -> None:
    values = np.arange(30, dtype=float)
    h = reward_health(metrics_of(reward_mean=values), THRESHOLD)
    assert h is not None and h.mean is not None
    assert h.mean.final == pytest.approx(np.mean(values[-10:]))
    assert (h.mean.first, h.mean.min, h.mean.max) == (0.0, 0.0, 29.0)


# --------------------------------------------------------------------------- the demo RL run


def test_demo_grpo_run_collapse_onset_matches_its_metrics_file(demo_site: Path, demo_source: Path) -> None:
    rows = [json.loads(line) for line in (demo_source / "grpo-rl-07/metrics.jsonl").read_text().splitlines() if line]
    frame = pd.DataFrame(rows)
    above = (frame["frac_reward_zero_std"].rolling(10).mean() >= 0.5).to_numpy()
    first = max(i for i in range(len(above)) if not above[i]) + 1
    expected = float(frame["step"][first])
    analysis = json.loads((demo_site / "runs/grpo-rl-07/analysis.json").read_text())
    health = analysis["reward_health"]
    assert health["collapsed"] is True
    assert health["zero_std_onset"]["step"] == expected
    finding = next(f for f in analysis["diagnosis"] if f["rule"] == "reward_variance_collapse")
    assert f"from step {int(expected)}" in finding["title"]
    reward = chart_spec(demo_site, "grpo-rl-07")["groups"]["reward"]
    assert [p["title"] for p in reward][:2] == ["reward", "zero-std groups"]
    assert all(p["vlines"] == [{"x": expected, "label": f"signal lost from step {int(expected)}"}] for p in reward)


def test_runs_without_reward_series_have_no_reward_health(demo_site: Path) -> None:
    analysis = json.loads((demo_site / "runs/spec03-r2/analysis.json").read_text())
    assert analysis["reward_health"] is None
    assert "reward" not in chart_spec(demo_site, "spec03-r2")["groups"]


def chart_spec(site: Path, slug: str) -> dict[str, Any]:
    """The run page's inert JSON block that says which panels its charts draw."""
    html = (site / "runs" / slug / "index.html").read_text()
    start = html.index('<script type="application/json" id="chart-spec">') + len(
        '<script type="application/json" id="chart-spec">'
    )
    spec: dict[str, Any] = json.loads(html[start : html.index("</script>", start)])
    return spec
