"""obs.yaml's declared views: sample efficiency, proxy/downstream coupling and weighted reward components.

Statistics against scipy (Spearman's rho, the t interval over seeds, the normal quantile of the rank
correlation's interval) and by simulation (the interval's coverage); the declarations' messages name
the file and line; the sentences on the pages are made from the numbers.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from obs.analysis.coupling import across_runs, diverging_windows, run_coupling, spearman, spearman_interval
from obs.analysis.reward import reward_health
from obs.analysis.sample_efficiency import sample_efficiency, t_interval
from obs.config import SiteConfig, load_config
from obs.diagnostics import Diagnostics
from obs.model import Metrics, Series
from summaries import make_summary

# ------------------------------------------------------------------------------------------- statistics


@pytest.mark.parametrize("seed", range(6))
def test_spearman_matches_scipy_with_and_without_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 40))
    x = rng.normal(size=n)
    y = 0.5 * x + rng.normal(size=n)
    if seed % 2:  # ties on both sides
        x, y = np.round(x), np.round(y * 2) / 2
    ours = spearman(x, y)
    assert ours is not None
    assert ours == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def test_spearman_without_spread_is_none() -> None:
    assert spearman([1, 1, 1, 1], [1, 2, 3, 4]) is None


def test_spearman_interval_is_fisher_z_with_bonett_wright_se() -> None:
    rho, n = 0.62, 18
    z, se = math.atanh(rho), math.sqrt((1 + rho**2 / 2) / (n - 3))
    q = stats.norm.ppf(0.975)
    lo, hi = spearman_interval(rho, n) or (math.nan, math.nan)
    assert lo == pytest.approx(math.tanh(z - q * se), abs=1e-9)
    assert hi == pytest.approx(math.tanh(z + q * se), abs=1e-9)
    lo90, hi90 = spearman_interval(rho, n, level=0.9) or (math.nan, math.nan)
    assert lo < lo90 < rho < hi90 < hi
    assert spearman_interval(rho, 3) is None  # n - 3 must be positive


def test_spearman_interval_holds_its_level_by_simulation() -> None:
    """Bivariate normal, n = 20 runs: the interval covers the population Spearman (6/π)·asin(ρ/2) about 95%."""
    rng = np.random.default_rng(7)
    r, n, reps = 0.6, 20, 600
    truth = 6 / math.pi * math.asin(r / 2)
    cov = [[1, r], [r, 1]]
    hits = 0
    for _ in range(reps):
        xy = rng.multivariate_normal([0, 0], cov, size=n)
        rho = spearman(xy[:, 0], xy[:, 1])
        assert rho is not None
        lo, hi = spearman_interval(rho, n) or (math.nan, math.nan)
        hits += lo <= truth <= hi
    assert 0.92 <= hits / reps <= 0.985


@pytest.mark.parametrize("values", [[0.41, 0.44, 0.39], [0.7, 0.72, 0.69, 0.75, 0.71], [1.0, 3.0]])
def test_t_interval_over_seeds_matches_scipy(values: list[float]) -> None:
    mean, sd, ci = t_interval(values)
    lo, hi = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert mean == pytest.approx(np.mean(values))
    assert sd == pytest.approx(np.std(values, ddof=1))
    assert ci is not None and ci[0] == pytest.approx(lo) and ci[1] == pytest.approx(hi)


def test_one_seed_gives_no_interval() -> None:
    assert t_interval([0.5]) == (0.5, None, None)


# -------------------------------------------------------------------------------------- sample efficiency


def scaling_runs() -> list[Any]:
    out = []
    for method, gain in (("a", 0.0), ("b", 0.05)):
        for size in (1000, 4000):
            for seed in (1, 2, 3):
                value = 0.3 + gain + 0.1 * (size == 4000) + 0.01 * seed
                out.append(
                    make_summary(
                        id=f"{method}-{size}-s{seed}",
                        campaign="c",
                        condition=f"{method}@{size}",
                        seed=seed,
                        fields={"config.method": method, "config.data.n": size},
                        finals={"acc": value},
                    )
                )
    return out


def test_sample_efficiency_points_are_seed_means_with_t_intervals() -> None:
    runs = scaling_runs()
    runs.append(
        make_summary(
            id="no-size", campaign="c", condition="a@?", seed=1, finals={"acc": 0.9}, fields={"config.method": "a"}
        )
    )
    view = sample_efficiency({"size_key": "config.data.n", "metric": "acc", "group_by": "config.method"}, runs, None)
    assert view is not None and view.mode == "size" and view.drawn
    assert [line.group for line in view.lines] == ["a", "b"]
    b = view.lines[1]
    assert [p.size for p in b.points] == [1000, 4000]
    values = [0.35 + 0.01 * s for s in (1, 2, 3)]
    lo, hi = stats.t.interval(0.95, 2, loc=np.mean(values), scale=stats.sem(values))
    assert b.points[0].n == 3 and b.points[0].mean == pytest.approx(np.mean(values))
    assert b.points[0].ci == pytest.approx((lo, hi))
    assert view.left_out == ["no-size: no number at config.data.n"]
    assert view.as_dict()["unit"] == "seed"


def test_a_copy_of_a_seed_is_not_a_replicate() -> None:
    runs = scaling_runs()
    runs.append(
        make_summary(
            id="a-1000-s1-again",
            campaign="c",
            seed=1,
            fields={"config.method": "a", "config.data.n": 1000},
            finals={"acc": 0.2},
        )
    )
    view = sample_efficiency({"size_key": "config.data.n", "metric": "acc", "group_by": "config.method"}, runs, None)
    assert view is not None
    assert view.lines[0].points[0].n == 3
    assert any("a copy is not a replicate" in why for why in view.left_out)


def test_sample_efficiency_over_a_logged_counter_averages_seeds_on_the_counter() -> None:
    runs = [
        make_summary(
            id=f"r{seed}",
            condition="x",
            seed=seed,
            curves={
                "acc": {"steps": [0, 10, 20], "values": [0.1, 0.2 + seed / 100, 0.3]},
                "examples_seen": {"steps": [0, 10, 20], "values": [0, 640, 1280]},
            },
        )
        for seed in (1, 2)
    ]
    view = sample_efficiency({"series": "examples_seen", "metric": "acc"}, runs, None)
    assert view is not None and view.mode == "series"
    curve = view.lines[0].curve
    assert curve is not None and curve.grid[0] == 0 and curve.grid[-1] == 1280
    each = [np.interp(curve.grid, [0, 640, 1280], [0.1, 0.2 + seed / 100, 0.3]) for seed in (1, 2)]
    assert curve.mean == pytest.approx(np.mean(each, axis=0))


# -------------------------------------------------------------------------------------- coupling


def metrics_of(**series: tuple[list[float], list[float]]) -> Metrics:
    return Metrics({k: Series(np.asarray(s, float), np.asarray(v, float)) for k, (s, v) in series.items()})


def test_within_a_run_the_largest_divergence_is_said_in_numbers() -> None:
    steps = list(range(0, 601))
    reward = [0.3 + 0.5 * s / 600 for s in steps]  # rises throughout
    evals = [0, 200, 400, 500, 600]
    acc = [0.30, 0.50, 0.62, 0.58, 0.60]  # falls 400 -> 500, partly recovers
    c = run_coupling(
        metrics_of(reward_mean=(steps, reward), **{"eval/accuracy": (evals, acc)}),
        {"proxy": "reward_mean", "downstream": "eval/accuracy"},
        lambda name: True,
    )
    assert c.missing is None and c.worst is not None
    assert (c.worst.start, c.worst.end) == (400, 500)
    proxy_400 = np.mean(reward[201:401])
    proxy_500 = np.mean(reward[401:501])
    assert c.worst.proxy_from == pytest.approx(proxy_400) and c.worst.proxy_to == pytest.approx(proxy_500)
    rise = proxy_500 - proxy_400
    assert c.worst.words("reward_mean", "eval/accuracy") == (
        f"reward_mean rose {rise:.3g} while eval/accuracy fell 4.0 pp over steps 400–500"
    )
    assert "The largest divergence: reward_mean rose" in c.summary()
    assert "eval/accuracy rose 30.0 pp (0.3 → 0.6)" in c.summary()


def test_noise_does_not_cut_a_long_slide_into_pieces() -> None:
    steps = np.arange(10.0)
    proxy = np.linspace(0, 1, 10)
    down = np.array([0.5, 0.6, 0.7, 0.65, 0.66, 0.6, 0.61, 0.55, 0.56, 0.5])
    windows = diverging_windows(steps, proxy, down, True, True)
    assert (windows[0].start, windows[0].end) == (2, 9)  # 0.7 -> 0.5 despite the upticks
    for w in windows[1:]:
        assert w.end <= 2 or w.start >= 9  # none overlaps it


def test_a_lower_is_better_downstream_gets_worse_by_rising() -> None:
    w = diverging_windows(np.arange(3.0), np.array([0.1, 0.2, 0.3]), np.array([1.0, 1.5, 1.2]), True, False)
    assert (w[0].start, w[0].end, w[0].down_to) == (0, 1, 1.5)


def test_a_missing_series_is_said() -> None:
    c = run_coupling(
        metrics_of(reward_mean=([0, 1], [0.1, 0.2])), {"proxy": "reward_mean", "downstream": "acc"}, lambda n: True
    )
    assert c.missing == "This run logged no acc: nothing to couple."


def test_across_runs_rho_and_words() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=12)
    y = x + rng.normal(size=12)
    runs = [
        make_summary(id=f"r{i}", condition="c", finals={"p": float(a), "d": float(b)})
        for i, (a, b) in enumerate(zip(x, y, strict=True))
    ]
    runs.append(make_summary(id="zz", finals={"p": 0.1}))
    pair = across_runs(runs, {"proxy": "p", "downstream": "d"})
    assert pair.n == 12 and pair.left_out == ["zz: no final d"]
    assert pair.rho == pytest.approx(stats.spearmanr(x, y).statistic)
    lo = (pair.ci or (0, 0))[0]
    assert f"is {pair.rho:+.2f}".replace("-", "\u2212") in pair.words()
    assert "unit = run, n = 12" in pair.words()
    assert ("rank the runs alike" in pair.words()) == (lo > 0)


# -------------------------------------------------------------------------------------- reward components


def grpo_like(n: int = 50, total_offset: float = 0.0) -> Metrics:
    steps = np.arange(float(n))
    fmt = np.linspace(0.7, 1.0, n)
    correct = np.linspace(0.1, 0.8, n)
    return Metrics(
        {
            "reward_mean": Series(steps, 0.2 * fmt + 0.8 * correct + total_offset),
            "rewards/format/mean": Series(steps, fmt),
            "rewards/correct/mean": Series(steps, correct),
        }
    )


def test_weighted_components_that_make_the_total_match() -> None:
    cfg = SiteConfig()
    h = reward_health(grpo_like(), cfg.threshold, {"format": 0.2, "correct": 0.8})
    assert h is not None and h.decomposition is not None
    d = h.decomposition
    assert d.matches and d.compared == 50 and d.max_diff == pytest.approx(0, abs=1e-12)
    assert d.words().startswith("0.2 × format + 0.8 × correct matches the logged reward_mean at all 50 shared steps")
    assert {c.name: c.weight for c in h.components} == {"correct": 0.8, "format": 0.2}


def test_a_mismatch_is_reported_with_its_size_and_step() -> None:
    h = reward_health(grpo_like(total_offset=0.1), SiteConfig().threshold, {"format": 0.2, "correct": 0.8})
    assert h is not None and h.decomposition is not None
    d = h.decomposition
    assert d.matches is False and d.max_diff == pytest.approx(0.1)
    assert "differs from the logged reward_mean: by up to 0.1 (at step" in d.words()
    assert "0.1 on average over 50 shared steps" in d.words()


def test_a_declared_component_not_logged_is_named() -> None:
    h = reward_health(grpo_like(), SiteConfig().threshold, {"format": 0.2, "length": 0.8})
    assert h is not None and h.decomposition is not None
    assert h.decomposition.missing == ["length"]
    assert "length is declared in obs.yaml's reward_components but not logged" in h.decomposition.words()


# -------------------------------------------------------------------------------------- declarations


def config_from(tmp_path: Path, text: str) -> tuple[SiteConfig, list[str]]:
    (tmp_path / "obs.yaml").write_text(text, encoding="utf-8")
    diags = Diagnostics()
    cfg = load_config(tmp_path, diags)
    return cfg, [d.format().replace(str(tmp_path) + "/", "") for d in diags.items]


def test_declarations_are_read(tmp_path: Path) -> None:
    cfg, msgs = config_from(
        tmp_path,
        (
            "sample_efficiency: {size_key: config.data.train_examples, metric: acc}\n"
            "coupling:\n  - {proxy: reward_mean, downstream: eval/accuracy}\n"
            "reward_components: {format: 0.2, correct: 0.8}\n"
        ),
    )
    assert msgs == []
    assert cfg.sample_efficiency == {
        "size_key": "config.data.train_examples",
        "series": None,
        "metric": "acc",
        "group_by": "run.condition",
        "label": None,
    }
    assert cfg.coupling == [{"proxy": "reward_mean", "downstream": "eval/accuracy", "label": ""}]
    assert cfg.reward_components == {"format": 0.2, "correct": 0.8}


def test_bad_declarations_are_named_with_their_lines(tmp_path: Path) -> None:
    cfg, msgs = config_from(
        tmp_path,
        (
            "sample_efficiency:\n"
            "  size_key: config.n\n"
            "  series: examples_seen\n"
            "coupling:\n"
            "  - {proxy: reward_mean, downstream: eval/accuracy}\n"
            "  - {proxy: reward_mean}\n"
            "  - 3\n"
            "  - {proxy: a, downstream: a}\n"
            "  - {proxy: reward_mean, downstream: eval/accuracy}\n"
            "reward_components: {format: 0.2, correct: lots}\n"
        ),
    )
    assert cfg.sample_efficiency is None
    assert cfg.coupling == [{"proxy": "reward_mean", "downstream": "eval/accuracy", "label": ""}]
    assert cfg.reward_components == {"format": 0.2}
    assert msgs == [
        "obs.yaml:1: warning: 'sample_efficiency' needs exactly one of size_key and series, got both; "
        "no sample-efficiency view",
        "obs.yaml:6: warning: 'coupling' entry 2: no downstream series name; skipped",
        "obs.yaml:7: warning: 'coupling' entry 3: should be a mapping {proxy, downstream}, got 3; skipped",
        "obs.yaml:8: warning: 'coupling' entry 4: proxy and downstream are the same series (a); skipped",
        "obs.yaml:9: warning: 'coupling' entry 5: reward_mean → eval/accuracy is declared twice; skipped",
        "obs.yaml:10: warning: 'reward_components.correct' should be a number (its weight), got 'lots'; skipped",
    ]


def test_neither_size_key_nor_series_and_an_unknown_key(tmp_path: Path) -> None:
    cfg, msgs = config_from(tmp_path, "sample_efficiency:\n  metric: acc\n  size: config.n\n")
    assert cfg.sample_efficiency is None
    assert msgs == [
        "obs.yaml:3: warning: unknown sample_efficiency setting 'size' (known: size_key, series, metric, group_by, "
        "label)",
        "obs.yaml:1: warning: 'sample_efficiency' needs exactly one of size_key and series, got neither; "
        "no sample-efficiency view",
    ]


def test_a_campaign_without_the_declared_size_gets_no_view() -> None:
    runs = [make_summary(id="r", condition="x", seed=1, finals={"acc": 0.5})]
    assert sample_efficiency({"size_key": "config.data.n", "metric": "acc"}, runs, None) is None
    assert sample_efficiency({"series": "examples_seen", "metric": "acc"}, runs, None) is None


def test_a_campaign_yaml_declares_its_own_views(tmp_path: Path) -> None:
    from obs.discover import read_campaign
    from obs.pipeline import views_series

    (tmp_path / "campaign.yaml").write_text(
        "primary_metric: acc\n"
        "sample_efficiency: {series: tokens_seen}\n"
        "coupling:\n"
        "  - {proxy: reward_mean, downstream: eval/acc}\n"
        "  - {downstream: eval/acc}\n",
        encoding="utf-8",
    )
    diags = Diagnostics()
    campaign = read_campaign(tmp_path, diags)
    assert campaign is not None
    assert campaign.sample_efficiency is not None and campaign.sample_efficiency["series"] == "tokens_seen"
    assert campaign.coupling == [{"proxy": "reward_mean", "downstream": "eval/acc", "label": ""}]
    assert [d.format().replace(str(tmp_path) + "/", "") for d in diags.items] == [
        "campaign.yaml:5: warning: 'coupling' entry 2: no proxy series name; skipped"
    ]
    site = SiteConfig(coupling=[{"proxy": "a", "downstream": "b", "label": ""}])
    assert views_series(site, campaign) == ("tokens_seen", "reward_mean", "eval/acc")  # the campaign's win
    assert views_series(site) == ("a", "b")


def brute_force_windows(proxy: np.ndarray, down: np.ndarray, most: int = 5) -> list[float]:
    """The windows' worsenings by trying every pair: the definition, slowly (proxy and downstream higher-better)."""
    taken: list[tuple[int, int]] = []
    out = []
    for _ in range(most):
        best = None
        for i in range(len(proxy)):
            for j in range(i + 1, len(proxy)):
                if any(i < b and j > a for a, b in taken):
                    continue
                if proxy[j] > proxy[i] and down[j] < down[i]:
                    gain = down[i] - down[j]
                    if best is None or gain > best[0]:
                        best = (gain, i, j)
        if best is None:
            break
        taken.append(best[1:])
        out.append(best[0])
    return out


@pytest.mark.parametrize("seed", range(8))
def test_diverging_windows_are_the_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    proxy, down = np.round(rng.normal(size=n), 1), np.round(rng.normal(size=n), 1)  # ties on purpose
    windows = diverging_windows(np.arange(float(n)), proxy, down, True, True)
    assert [w.down_from - w.down_to for w in windows] == pytest.approx(brute_force_windows(proxy, down))
    for w in windows:
        assert w.proxy_to > w.proxy_from and w.down_to < w.down_from
    spans = sorted((w.start, w.end) for w in windows)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))  # none overlaps another


def test_a_long_log_is_read_in_one_pass() -> None:
    n = 200_000
    steps = np.arange(float(n))
    c = run_coupling(
        metrics_of(p=(list(steps), list(steps / n)), d=(list(steps), list(np.sin(steps / 5000)))),
        {"proxy": "p", "downstream": "d"},
        lambda name: True,
    )
    assert c.worst is not None and c.worst.down_to < c.worst.down_from
    assert len(c.steps) <= 5001 and c.every == 40
    assert "every 40th of 200,000 evaluations" in c.summary()
