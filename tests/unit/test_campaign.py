"""Tests for obs.analysis.campaign: the campaign comparison assembled from per-run finals.

The statistics themselves are tested in test_stats.py; here the *assembly* is checked: that the
numbers on a hand-made campaign are the ones scipy gives on the same seed values and counts, that
Holm is applied across candidates as a hand computation says, that the litmus names every unmet
minimum, and, by simulation, that a campaign with no real difference comes out
insufficient_statistical_evidence in the large majority of repetitions while a planted effect is found.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from obs.analysis.campaign import (
    CONFIRMED,
    FAILED,
    INCONCLUSIVE,
    RunFinal,
    campaign_stats,
    finals_from_summaries,
    metric_is_rate,
)
from obs.analysis.stats import DEGRADATION, IMPROVEMENT, INSUFFICIENT, recommendation
from obs.jsonutil import dumps
from obs.model import Campaign, Condition
from summaries import summaries

# Irregular decimals on purpose: values on a 0.01 grid make many relabellings tie exactly, and
# scipy then separates mathematically equal sums by rounding noise (p 0.865 where exact
# arithmetic gives 1.0), which would test scipy's rounding rather than the assembly.
BASE = [0.3012, 0.3197, 0.3105, 0.3321, 0.2894]
CAND = [0.3604, 0.3822, 0.3689, 0.3917, 0.3533]
FLAT = [0.2813, 0.3327, 0.3011, 0.3398, 0.3072]


def _campaign(names: list[str], **kw: object) -> Campaign:
    return Campaign(
        id="t",
        source_dir=Path("."),
        conditions=[Condition(n, label=n.upper()) for n in names],
        baseline_condition=names[0],
        primary_metric=str(kw.pop("metric", "correct_rate")),
        **kw,  # type: ignore[arg-type]
    )


def _runs(values: dict[str, list[float]], **kw: object) -> list[RunFinal]:
    return [
        RunFinal(run_id=f"{cond}-s{i}", condition=cond, seed=i, final=v, **kw)  # type: ignore[arg-type]
        for cond, vals in values.items()
        for i, v in enumerate(vals)
    ]


def _diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _scipy_perm_p(x: list[float], y: list[float]) -> float:
    res = sps.permutation_test(
        (np.asarray(x), np.asarray(y)), _diff, permutation_type="independent", vectorized=True, n_resamples=np.inf
    )
    return float(res.pvalue)


# --------------------------------------------------------------------------- against scipy


def test_hand_made_campaign_matches_scipy() -> None:
    camp = _campaign(["base", "cand"])
    runs = _runs({"base": BASE, "cand": CAND}, completions_window=640.0, completions_total=6400.0, last_step=299.0)
    stats = campaign_stats(camp, runs)
    assert [k.condition for k in stats.candidates] == ["cand"]
    k = stats.candidates[0]
    x, y = np.array(CAND), np.array(BASE)

    assert k.n == 5 and k.n_baseline == 5
    assert k.delta == pytest.approx(x.mean() - y.mean(), abs=1e-12)
    # Exact permutation test: all C(10, 5) = 252 relabellings, as scipy with n_resamples=inf.
    assert k.permutation is not None and k.permutation.exact and k.permutation.n_resamples == 252
    assert k.p_value == pytest.approx(_scipy_perm_p(CAND, BASE), abs=1e-9)
    assert k.p_adjusted == k.p_value  # one candidate: nothing to correct
    assert k.min_attainable_p == pytest.approx(2 / 252, abs=1e-15)

    # Cohen's d from scipy's equal-variance t statistic: d = t·sqrt(1/nx + 1/ny).
    t = sps.ttest_ind(x, y, equal_var=True).statistic
    assert k.cohens_d == pytest.approx(t * math.sqrt(1 / 5 + 1 / 5), rel=1e-9)

    # Percentile bootstrap CI vs scipy's, within Monte-Carlo error of two independent 10k-draw runs.
    ref = sps.bootstrap(
        (x, y), _diff, method="percentile", n_resamples=10_000, vectorized=True, rng=np.random.default_rng(7)
    )
    assert k.bootstrap is not None
    tol = 5 * math.sqrt(2) * math.sqrt(0.025 * 0.975 / 10_000) / sps.norm.pdf(1.96) * ref.standard_error
    assert k.bootstrap.interval.low == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert k.bootstrap.interval.high == pytest.approx(ref.confidence_interval.high, abs=tol)

    # Fisher on pooled counts: correct = round(rate × 640) per run, summed.
    cc = sum(round(v * 640) for v in CAND)
    bc = sum(round(v * 640) for v in BASE)
    assert k.pooled is not None
    assert (k.pooled.correct, k.pooled.total, k.pooled.correct_baseline, k.pooled.total_baseline) == (
        cc,
        3200,
        bc,
        3200,
    )
    ref_f = sps.fisher_exact([[cc, 3200 - cc], [bc, 3200 - bc]])
    assert k.pooled.test.p_value == pytest.approx(ref_f.pvalue, rel=1e-9, abs=1e-300)
    assert k.pooled.test.statistic == pytest.approx(ref_f.statistic, rel=1e-12)
    assert not k.pooled.estimated

    # Seeds for 80% power: the t-test n from scipy's noncentral t, but at least the n whose exact
    # permutation test can reach alpha at all (2 / C(2n, n) < 0.05 first holds at n = 4).
    def power(n: int) -> float:
        df, nc = 2 * n - 2, k.cohens_d * math.sqrt(n / 2)
        crit = sps.t.ppf(0.975, df)
        return float(sps.nct.sf(crit, df, nc) + sps.nct.cdf(-crit, df, nc))

    n_t = next(n for n in range(2, 1000) if power(n) >= 0.8)
    assert k.seeds_needed == max(n_t, 4)

    # Episodes for 80% power if episodes were independent (two-proportion z-test formula).
    p1, p2 = cc / 3200, bc / 3200
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    pbar = (p1 + p2) / 2
    n_ep = ((za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) / (p1 - p2)) ** 2
    assert k.pooled.episodes_needed == math.ceil(n_ep - 1e-9)

    assert k.recommendation == IMPROVEMENT
    assert "significant improvement" in k.sentence


def test_monte_carlo_permutation_beyond_the_exact_limit() -> None:
    rng = np.random.default_rng(3)
    base, cand = list(rng.normal(0.4, 0.02, 8)), list(rng.normal(0.42, 0.02, 8))
    runs = _runs({"base": base, "cand": cand})
    stats = campaign_stats(_campaign(["base", "cand"]), runs, max_exact_splits=1000, n_permutations=5000)
    k = stats.candidates[0]
    assert k.permutation is not None and not k.permutation.exact
    assert k.permutation.n_resamples == 5000 and k.min_attainable_p is None
    # Monte-Carlo p within 5 binomial SEs of the exact p (all C(16, 8) = 12,870 splits, by scipy).
    exact = _scipy_perm_p(cand, base)
    assert abs(k.p_value - exact) <= 5 * math.sqrt(exact * (1 - exact) / 5000) + 1e-3


def test_holm_across_three_candidates_matches_hand_computation() -> None:
    values = {
        "base": BASE,
        "c1": CAND,  # completely separated: raw p = 2/252
        "c2": [0.3151, 0.3446, 0.3352, 0.3603, 0.3398],  # raw p = 8/252 < 0.05, but not after Holm
        "c3": FLAT,  # no difference
    }
    stats = campaign_stats(_campaign(list(values)), _runs(values))
    raw = {c: _scipy_perm_p(values[c], BASE) for c in ("c1", "c2", "c3")}
    # Holm by hand: sort ascending, multiply the i-th smallest by (m - i + 1), keep it monotone.
    order = sorted(raw, key=raw.__getitem__)
    adj, running = {}, 0.0
    for i, c in enumerate(order):
        running = max(running, min(1.0, (3 - i) * raw[c]))
        adj[c] = running
    got = {k.condition: k for k in stats.candidates}
    for c in raw:
        assert got[c].p_value == pytest.approx(raw[c], abs=1e-9)
        assert got[c].p_adjusted == pytest.approx(adj[c], abs=1e-9)
        ci = got[c].bootstrap.interval  # type: ignore[union-attr]
        assert got[c].recommendation == recommendation(adj[c], got[c].delta, ci, 0.05)
    assert raw["c2"] < 0.05 <= adj["c2"]
    assert got["c2"].recommendation == INSUFFICIENT  # significant raw, not after correction
    assert got["c1"].recommendation == IMPROVEMENT
    assert "Holm" in stats.correction and "3" in stats.correction
    assert "Holm-adjusted over 3 candidates" in got["c2"].sentence


# --------------------------------------------------------------------------- litmus


def test_litmus_inconclusive_names_each_unmet_minimum() -> None:
    camp = _campaign(
        ["base", "cand"],
        evidence={"min_seeds": 5, "min_steps": 100, "min_completions": 1000},
        litmus={"min_delta": 0.01},
    )
    runs = _runs({"base": BASE[:4], "cand": CAND}, last_step=299.0, completions_total=500.0)
    runs[-1] = RunFinal("cand-s4", "cand", 4, CAND[4], last_step=50.0, completions_total=None)
    k = campaign_stats(camp, runs).candidates[0]
    assert k.litmus.verdict == INCONCLUSIVE
    unmet = " | ".join(k.litmus.unmet)
    assert "BASE has 4" in unmet  # seeds: the baseline condition is one short
    assert "cand-s4 reached step 50" in unmet  # steps: the run that stopped early is named
    assert "CAND did not log completions" in unmet  # completions: unknown counts as unmet
    assert "BASE has" not in k.litmus.evidence[2].detail  # 4 runs x 500 = 2,000 completions: enough
    met = {c.key: c.met for c in k.litmus.evidence}
    assert met == {"min_seeds": False, "min_steps": False, "min_completions": False, "attainable_p": True}


def test_litmus_inconclusive_when_seeds_below_minimum_even_if_significant() -> None:
    camp = _campaign(["base", "cand"], evidence={"min_seeds": 8})
    k = campaign_stats(camp, _runs({"base": BASE, "cand": CAND})).candidates[0]
    assert k.recommendation == IMPROVEMENT
    assert k.litmus.verdict == INCONCLUSIVE
    assert k.litmus.unmet == ["seeds with a final value per condition: BASE has 5; CAND has 5 (need 8)"]


def test_litmus_confirmed_and_failed() -> None:
    evidence = {"min_seeds": 5, "min_steps": 100}
    runs = _runs({"base": BASE, "cand": CAND}, last_step=300.0)
    ok = campaign_stats(_campaign(["base", "cand"], evidence=evidence, litmus={"min_delta": 0.01}), runs)
    assert ok.candidates[0].litmus.verdict == CONFIRMED and not ok.candidates[0].litmus.unmet
    big = campaign_stats(_campaign(["base", "cand"], evidence=evidence, litmus={"min_delta": 0.1}), runs)
    lit = big.candidates[0].litmus
    assert lit.verdict == FAILED
    assert [c.key for c in lit.thresholds if not c.met] == ["min_delta"]
    # Enough seeds but no significant difference: FAILED on the significance threshold.
    flat = _runs({"base": BASE, "cand": FLAT}, last_step=300.0)
    lit = campaign_stats(_campaign(["base", "cand"], evidence=evidence), flat).candidates[0].litmus
    assert lit.verdict == FAILED and {c.key for c in lit.thresholds if not c.met} >= {"significance"}


def test_three_seeds_cannot_confirm_anything() -> None:
    # 3 vs 3 seeds: 20 relabellings, so p >= 0.10 whatever the data; the litmus must not say FAILED.
    camp = _campaign(["base", "cand"], evidence={"min_seeds": 3})
    k = campaign_stats(camp, _runs({"base": [0.30, 0.31, 0.32], "cand": [0.60, 0.61, 0.62]})).candidates[0]
    assert k.p_value == pytest.approx(0.1, abs=1e-12)
    assert k.recommendation == INSUFFICIENT
    assert k.litmus.verdict == INCONCLUSIVE
    assert any("smallest attainable permutation p is 0.10" in u for u in k.litmus.unmet)
    assert k.seeds_needed == 4  # the smallest n whose exact test can go below 0.05
    assert "no outcome could be significant" in k.sentence


def test_lower_is_better_flips_the_direction() -> None:
    camp = _campaign(["base", "cand"], metric="loss", higher_is_better=False, litmus={"min_delta": 0.01})
    k = campaign_stats(camp, _runs({"base": CAND, "cand": BASE})).candidates[0]
    assert k.delta < 0 and k.recommendation == IMPROVEMENT
    assert k.litmus.verdict == CONFIRMED
    assert k.pooled is None and "not a proportion" in (k.pooled_absent or "")


# --------------------------------------------------------------------------- simulation


def _simulate(rng: np.random.Generator, shifts: dict[str, float], n_seeds: int = 8) -> list[RunFinal]:
    return _runs({c: list(rng.normal(0.40 + s, 0.03, n_seeds)) for c, s in shifts.items()})


def test_no_real_difference_is_insufficient_in_the_large_majority() -> None:
    rng = np.random.default_rng(20240501)
    camp = _campaign(["base", "a", "b"])
    reps, claimed = 200, 0
    for _ in range(reps):
        stats = campaign_stats(camp, _simulate(rng, {"base": 0, "a": 0, "b": 0}), n_bootstrap=2000)
        claimed += any(k.recommendation != INSUFFICIENT for k in stats.candidates)
    # Holm keeps the family-wise error near alpha = 5%; allow up to 10% (binomial sd ~1.5%).
    assert claimed <= 0.10 * reps, claimed


def test_planted_large_effect_is_found() -> None:
    rng = np.random.default_rng(11)
    camp = _campaign(["base", "up", "down"])
    found_up = found_down = 0
    reps = 60
    for _ in range(reps):
        # +-3 sd: power of the exact 8-vs-8 permutation test at alpha/2 is ~0.99.
        stats = campaign_stats(camp, _simulate(rng, {"base": 0, "up": 0.09, "down": -0.09}), n_bootstrap=2000)
        got = {k.condition: k.recommendation for k in stats.candidates}
        found_up += got["up"] == IMPROVEMENT
        found_down += got["down"] == DEGRADATION
    assert found_up >= 0.9 * reps and found_down >= 0.9 * reps, (found_up, found_down)


# --------------------------------------------------------------------------- inputs and outputs


def test_finals_from_summaries_estimates_window_completions() -> None:
    summary = {
        "id": "r1",
        "condition": "base",
        "seed": 1,
        "campaign_final": {"mean": 0.4, "sd": 0.01, "n": 20, "last_step": 299.0, "points": 300},
        "completions": 38400.0,
        "last_step": 299,
    }
    (r,) = finals_from_summaries(summaries(summary))
    assert r.final == 0.4 and r.window_n == 20 and r.last_step == 299.0
    assert r.completions_window == pytest.approx(2560.0) and r.completions_window_estimated
    (r,) = finals_from_summaries(summaries({**summary, "completions_final": 2000.0}))
    assert r.completions_window == 2000.0 and not r.completions_window_estimated
    (r,) = finals_from_summaries(summaries({**summary, "campaign_final": None, "completions": None}))
    assert r.final is None and r.completions_window is None


def test_problems_instead_of_numbers() -> None:
    camp = _campaign(["base", "cand"])
    stats = campaign_stats(camp, _runs({"cand": CAND}))
    assert stats.candidates == [] and "baseline condition BASE" in stats.problems[0]
    camp.baseline_condition = None
    assert "no baseline_condition" in campaign_stats(camp, []).problems[0]


def test_metric_is_rate() -> None:
    assert metric_is_rate("correct_rate") and metric_is_rate("eval/accuracy")
    assert not metric_is_rate("mean_reward") and not metric_is_rate("loss") and not metric_is_rate(None)


def test_as_dict_is_strict_json() -> None:
    stats = campaign_stats(_campaign(["base", "cand", "empty"]), _runs({"base": BASE, "cand": CAND}))
    doc = json.loads(dumps(stats.as_dict()))
    assert doc["schema"] == "obs.campaign_stats/1"
    by = {c["condition"]: c for c in doc["candidates"]}
    assert by["cand"]["recommendation"] == IMPROVEMENT
    assert by["empty"]["permutation"] is None and by["empty"]["p_value"] is None  # NaN -> null
    assert [c["name"] for c in doc["conditions"]] == ["base", "cand", "empty"]


def test_demo_campaign_page_and_analysis_json(demo_site: Path) -> None:
    folder = demo_site / "campaigns" / "sepa-campaign"
    doc = json.loads((folder / "analysis.json").read_text())
    assert [c["condition"] for c in doc["candidates"]] == ["maxrl+gtpo", "maxrl+gtpo_sepa"]
    for c in doc["candidates"]:
        # 3 vs 3 seeds: the exact test cannot go below 0.10, so nothing can be called significant.
        assert c["permutation"]["exact"] and c["permutation"]["n_resamples"] == 20
        assert c["recommendation"] == INSUFFICIENT
        assert c["litmus"]["verdict"] == INCONCLUSIVE
        assert c["pooled"]["total"] == 3 * 2560
    html = (folder / "index.html").read_text()
    assert 'id="campaign-stats"' in html
    assert "Holm-adjusted" in html and "insufficient statistical evidence" in html
    assert "episodes treated as independent" in html
