"""Parameter importance (obs.analysis.importance) against scipy and statsmodels, never against itself."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import orjson
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from obs.analysis.held_constant import flatten
from obs.analysis.importance import (
    CI_MIN_RUNS,
    MIN_RUNS,
    RESAMPLES,
    Importance,
    importance,
    key_importance,
    resamples_for,
)
from obs.analysis.sweeps import build_sweep, run_value
from obs.config import DEFAULT_SWEEPS
from summaries import make_summary


def abs_rho(y: list[float]) -> Any:
    """|Spearman's rho| of each row of x with y, vectorised for scipy's permutation_test (scipy's ranks)."""

    def statistic(x: np.ndarray, axis: int = -1) -> Any:
        rx = stats.rankdata(x, axis=axis)
        ry = np.broadcast_to(stats.rankdata(y), rx.shape)
        return np.abs(stats.pearsonr(rx, ry, axis=axis).statistic)

    return statistic


@pytest.mark.parametrize("n", [5, 6, 7, 8])
def test_a_numeric_key_is_spearman_with_scipys_exact_permutation_p(n: int) -> None:
    rng = np.random.default_rng(n)
    x = [float(v) for v in rng.choice([1e-4, 3e-4, 1e-3], size=n)]  # a grid: ties in the key
    x[0], x[1] = 1e-4, 1e-3  # two values at least
    y = [float(v) for v in np.log(x) * 0.5 + rng.normal(size=n)]
    k = key_importance("lr", x, y)
    ref = stats.spearmanr(x, y).statistic
    assert k.kind == "numeric" and k.n == n and k.exact
    assert k.rho == pytest.approx(ref, abs=1e-12)
    assert k.share == pytest.approx(ref**2, abs=1e-12)
    exact = stats.permutation_test(
        (np.array(x),),
        abs_rho(y),
        permutation_type="pairings",
        alternative="greater",
        n_resamples=np.inf,
        vectorized=True,
    )
    assert abs(stats.spearmanr(x, y).statistic) == pytest.approx(abs_rho(y)(np.array(x)))
    assert k.p == pytest.approx(exact.pvalue, abs=1e-12)
    assert (k.ci is None) == (n < CI_MIN_RUNS)  # below 10 runs the interval did not hold 95% (simulated)


def test_the_interval_is_fisher_z_with_bonett_wrights_error() -> None:
    rng = np.random.default_rng(3)
    x = list(rng.normal(size=12))
    y = list(np.array(x) + rng.normal(size=12))
    k = key_importance("a", x, y)
    rho = stats.spearmanr(x, y).statistic
    se = math.sqrt((1 + rho**2 / 2) / (12 - 3))
    q = stats.norm.ppf(0.975)
    assert k.ci == pytest.approx((math.tanh(math.atanh(rho) - q * se), math.tanh(math.atanh(rho) + q * se)))


def test_many_runs_get_a_monte_carlo_p_within_its_error_of_scipys() -> None:
    rng = np.random.default_rng(7)
    x = list(rng.normal(size=30))
    y = list(0.5 * np.array(x) + rng.normal(size=30))
    k = key_importance("a", x, y)
    assert not k.exact and k.resamples == RESAMPLES
    ref = stats.permutation_test(
        (np.array(x),),
        abs_rho(y),
        permutation_type="pairings",
        alternative="greater",
        n_resamples=RESAMPLES,
        rng=1,
        vectorized=True,
    ).pvalue
    assert 0.01 < ref < 0.2  # a p where the Monte Carlo error matters
    assert abs((k.p or 0) - ref) < 4 * math.sqrt(2 * ref * (1 - ref) / RESAMPLES)


def kruskal_share(labels: list[str], y: list[float]) -> float:
    groups = [[v for g, v in zip(labels, y, strict=True) if g == name] for name in sorted(set(labels))]
    return float(stats.kruskal(*groups).statistic) / (len(y) - 1)


def test_a_categorical_key_is_kruskal_wallis_eta_squared_with_scipys_exact_p() -> None:
    labels = ["a", "a", "b", "b", "c", "c", "c"]
    y = [0.61, 0.64, 0.70, 0.70, 0.81, 0.79, 0.64]  # ties across groups: H's tie correction
    k = key_importance("dataset", labels, y)
    assert k.kind == "categorical" and k.groups == 3 and k.rho is None and k.ci is None
    assert k.share == pytest.approx(kruskal_share(labels, y), abs=1e-12)
    samples = [np.array([v for g, v in zip(labels, y, strict=True) if g == name]) for name in "abc"]
    ref = stats.permutation_test(
        samples,
        lambda *s: stats.kruskal(*s).statistic,
        permutation_type="independent",
        alternative="greater",
        n_resamples=np.inf,
    ).pvalue
    assert k.p == pytest.approx(ref, abs=1e-12)


def test_booleans_are_categories_and_two_groups_match_kruskal() -> None:
    flags = [True, False, True, False, True, True]
    y = [0.9, 0.5, 0.8, 0.6, 0.7, 0.85]
    k = key_importance("repair", flags, y)
    assert k.kind == "categorical" and k.groups == 2
    assert k.share == pytest.approx(kruskal_share([str(f) for f in flags], y))


@pytest.mark.parametrize(
    ("values", "outcome", "why"),
    [
        ([1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4], f"4 runs with both values: it needs {MIN_RUNS}"),
        ([1, 2, 3, 4, 5, None], [0.1, 0.2, 0.3, 0.4, None, 0.6], f"4 runs with both values: it needs {MIN_RUNS}"),
        ([1, 1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5], "the same value in every run that has the outcome"),
        ([1, 2, 3, 4, 5], [0.5] * 5, "the outcome is the same in every run"),
        (["a", "b", "c", "d", "e"], [0.1, 0.2, 0.3, 0.4, 0.5], "a different value in every run: nothing to group"),
    ],
)
def test_too_little_to_go_on_is_unknown_and_says_why(values: list[Any], outcome: list[Any], why: str) -> None:
    k = key_importance("k", values, outcome)
    assert not k.known and k.share is None and k.p is None and k.why == why


def run(rid: str, score: float | None, config: dict[str, Any]) -> Any:
    return make_summary(
        id=rid,
        headline={"metric": "exact", "value": score},
        rates={"exact": score} if score is not None else {},
        fields=flatten({"config": config}),
    )


def test_a_sweep_ranks_its_settings_by_share_with_holm_over_the_keys() -> None:
    rng = np.random.default_rng(11)
    lrs = [1e-4, 3e-4, 1e-3] * 4
    data = ["web", "books"] * 6
    warm = [0, 100, 200, 300] * 3
    runs = [
        run(f"r{i:02}", float(0.5 + 0.1 * math.log10(lr / 1e-4) + rng.normal(0, 0.02)), {"lr": lr, "data": d, "w": w})
        for i, (lr, d, w) in enumerate(zip(lrs, data, warm, strict=True))
    ]
    sw = build_sweep("g", "g", runs, DEFAULT_SWEEPS, lambda m: True, "exact")
    assert sw is not None and sw.importance is not None
    imp = sw.importance
    assert imp.n_runs == 12 and imp.outcome == "exact"
    assert imp.keys[0].key == "config.lr"  # the one that drives the outcome, first
    shares = [k.share or 0 for k in imp.keys]
    assert shares == sorted(shares, reverse=True)
    y = [r.rates["exact"] for r in runs]
    for k in imp.keys:
        col = [run_value(r, k.key) for r in runs]
        ref = kruskal_share([str(v) for v in col], y) if k.kind == "categorical" else stats.spearmanr(col, y)[0] ** 2
        assert k.share == pytest.approx(ref)
    holm = multipletests([k.p for k in imp.keys], method="holm")[1]
    assert [k.p_holm for k in imp.keys] == pytest.approx(list(holm))
    assert imp.keys[0].significant
    again = build_sweep("g", "g", runs, DEFAULT_SWEEPS, lambda m: True, "exact")
    assert again is not None and again.importance == imp  # seeded: the same page every build


def test_keys_folded_together_are_named_with_the_one_tested() -> None:
    runs = [run(f"r{i}", 0.1 * i, {"lr": [1e-4, 1e-3][i % 2], "name": ["low", "high"][i % 2]}) for i in range(6)]
    imp = importance(runs, [("config.lr", ["config.name"])], "exact", True, run_value)
    assert imp.keys[0].also == ("config.name",)


def test_resamples_shrink_only_for_very_large_sweeps() -> None:
    assert resamples_for(8) == 0  # every ordering
    assert resamples_for(9) == resamples_for(2000) == RESAMPLES
    assert 999 <= resamples_for(10_000) < RESAMPLES


def test_a_published_importance_reads_back_as_computed() -> None:
    """sweeps/<slug>/importance.json is read back by the next build instead of testing again: the round trip
    through JSON gives the same object (exact, random and unknown keys alike)."""
    rng = np.random.default_rng(3)
    y = rng.normal(size=12)
    values = {
        "lr": [1e-4 * (1 + i % 3) for i in range(12)],
        "opt": ["adam" if i % 2 else "sgd" for i in range(12)],
        "few": [1.0, 2.0, None, None, None, None, None, None, None, None, None, None],
    }
    runs = [make_summary(id=f"r{i}") for i in range(12)]
    value = {(r.id, k): v[i] for i, r in enumerate(runs) for k, v in values.items()}
    value.update({(r.id, "out"): float(y[i]) for i, r in enumerate(runs)})
    imp = importance(runs, [("lr", []), ("opt", ["opt2"]), ("few", [])], "out", False, lambda r, k: value[(r.id, k)])
    assert {k.why == "" for k in imp.keys} == {True, False}  # a key with a figure and one without
    back = Importance.from_dict(orjson.loads(orjson.dumps(imp.as_dict())), False)
    assert back == imp
