"""Tests for obs.analysis.campaign: the campaign comparison assembled from per-run finals.

The statistics themselves are tested in test_stats.py; here the *assembly* is checked: that the
numbers on a hand-made campaign are the ones scipy and statsmodels give on the same seed values,
that Holm is applied across candidates as a hand computation says, that the planning advice is made
at the Holm level with Hedges' g, that the litmus names every unmet minimum and never confirms copies
of one run, and, by simulation, that a campaign with no real difference comes out
insufficient_statistical_evidence in the large majority of repetitions while a planted effect is found.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.power import TTestIndPower

from obs.analysis.campaign import (
    CONFIRMED,
    FAILED,
    INCONCLUSIVE,
    RunFinal,
    campaign_stats,
    finals_from_summaries,
    metric_is_rate,
)
from obs.analysis.stats import DEGRADATION, IMPROVEMENT, INSUFFICIENT, NEGLIGIBLE, NOT_TESTED, recommendation
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
    ref = sps.ttest_ind(x, y, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert k.welch.interval is not None
    assert k.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    assert (k.welch.interval.low, k.welch.interval.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert k.p_adjusted == k.p_value  # one candidate: nothing to correct

    # Hedges' g: Cohen's d (from scipy's pooled t) times the exact J(8)
    t = sps.ttest_ind(x, y, equal_var=True).statistic
    j = math.exp(math.lgamma(4) - math.lgamma(3.5)) / math.sqrt(4)
    assert k.hedges_g == pytest.approx(t * math.sqrt(1 / 5 + 1 / 5) * j, rel=1e-9)

    # seeds for 80% power at the observed g, one candidate: alpha 0.05 (statsmodels' t-test power)
    need = TTestIndPower().solve_power(effect_size=k.hedges_g, alpha=0.05, power=0.8, ratio=1.0)
    assert k.seeds_needed == max(2, math.ceil(need - 1e-9))

    # pooled counts are described, never tested
    cc = sum(round(v * 640) for v in CAND)
    bc = sum(round(v * 640) for v in BASE)
    assert k.pooled is not None
    assert (k.pooled.correct, k.pooled.total, k.pooled.correct_baseline, k.pooled.total_baseline) == (
        cc,
        3200,
        bc,
        3200,
    )
    assert not hasattr(k.pooled, "test") and not k.pooled.estimated

    assert k.recommendation == IMPROVEMENT
    assert "significant improvement" in k.sentence
    assert "95% Welch CI" in k.sentence and "over 5 seeds" in k.sentence


def test_holm_across_three_candidates_matches_hand_computation() -> None:
    values = {
        "base": BASE,
        "c1": CAND,
        "c2": [0.3151, 0.3446, 0.3352, 0.3603, 0.3398],
        "c3": FLAT,
    }
    stats = campaign_stats(_campaign(list(values)), _runs(values))
    raw = {c: float(sps.ttest_ind(values[c], BASE, equal_var=False).pvalue) for c in ("c1", "c2", "c3")}
    # Holm by hand: sort ascending, multiply the i-th smallest by (m - i + 1), keep it monotone.
    order = sorted(raw, key=raw.__getitem__)
    adj, running = {}, 0.0
    for i, c in enumerate(order):
        running = max(running, min(1.0, (3 - i) * raw[c]))
        adj[c] = running
    got = {k.condition: k for k in stats.candidates}
    for c in raw:
        assert got[c].p_value == pytest.approx(raw[c], abs=1e-12)
        assert got[c].p_adjusted == pytest.approx(adj[c], abs=1e-12)
        ci = got[c].welch.interval
        assert ci is not None
        assert got[c].recommendation == recommendation(adj[c], got[c].delta, ci, 0.05)
    assert raw["c2"] < 0.05 <= adj["c2"]
    assert got["c2"].recommendation == INSUFFICIENT  # significant raw, not after correction
    assert got["c2"].welch.interval is not None and got["c2"].welch.interval.excludes_zero()
    assert "The 95% CI excludes 0, but after Holm's correction for 3 candidates" in got["c2"].sentence
    assert "compatible with no difference" not in got["c2"].sentence
    assert got["c1"].recommendation == IMPROVEMENT
    assert "Holm" in stats.correction and "3" in stats.correction
    assert "Holm-adjusted over 3 candidates" in got["c2"].sentence
    # planning at the level the verdict uses: alpha / 3
    need = TTestIndPower().solve_power(effect_size=got["c3"].hedges_g, alpha=0.05 / 3, power=0.8, ratio=1.0)
    assert got["c3"].seeds_needed == max(2, math.ceil(need - 1e-9))


def test_planning_uses_the_minimum_effect_when_set() -> None:
    camp = _campaign(["base", "cand"], min_effect=0.02)
    k = campaign_stats(camp, _runs({"base": BASE, "cand": FLAT})).candidates[0]
    sd = math.sqrt((np.var(BASE, ddof=1) + np.var(FLAT, ddof=1)) / 2)
    need = TTestIndPower().solve_power(effect_size=0.02 / sd, alpha=0.05, power=0.8, ratio=1.0)
    assert k.seeds_needed == max(2, math.ceil(need - 1e-9))
    assert k.power_for.startswith("the minimum effect of interest (2.0 pp")  # correct_rate: a rate, in pp


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
    assert met == {"min_seeds": False, "min_steps": False, "min_completions": False}


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
    # litmus.min_delta is the older name of min_effect: a 0.06 gain, significant, is below 0.1
    assert [c.key for c in lit.thresholds if not c.met] == ["min_effect", "significance"]
    assert big.candidates[0].recommendation == NEGLIGIBLE
    assert "smaller than the minimum effect of interest (10.0 pp)" in big.candidates[0].sentence
    same = campaign_stats(_campaign(["base", "cand"], evidence=evidence, min_effect=0.1), runs)
    assert same.candidates[0].recommendation == NEGLIGIBLE and same.min_effect == 0.1
    # Enough seeds but no significant difference: FAILED on the significance threshold.
    flat = _runs({"base": BASE, "cand": FLAT}, last_step=300.0)
    lit = campaign_stats(_campaign(["base", "cand"], evidence=evidence), flat).candidates[0].litmus
    assert lit.verdict == FAILED and {c.key for c in lit.thresholds if not c.met} >= {"significance"}


def test_copies_of_one_run_are_never_confirmed() -> None:
    """The zero-variance guard: seeds that all gave the same value are copies, not replicates."""
    camp = _campaign(["base", "cand"], evidence={"min_seeds": 5})
    k = campaign_stats(camp, _runs({"base": BASE, "cand": [0.41] * 5})).candidates[0]
    # the baseline still has spread, but the candidate's five seeds are one replicate: not tested, never
    # significant (before: "significant improvement", p = 0.02, beside "copies of one run, not replicates")
    assert k.welch.interval is None and k.welch.p_value is None
    assert "copies of one run" in (k.welch.problem or "")
    assert k.recommendation == NOT_TESTED and math.isnan(k.hedges_g)
    assert "∞" not in k.sentence and "inf" not in k.sentence
    assert k.warnings and "the seed changed nothing in CAND" in k.warnings[0]
    assert k.litmus.verdict == INCONCLUSIVE
    both = campaign_stats(camp, _runs({"base": [0.3] * 5, "cand": [0.41] * 5}))
    k = both.candidates[0]
    assert k.welch.interval is None and "no variation observed" in (k.welch.problem or "")
    assert k.recommendation == NOT_TESTED and k.litmus.verdict == INCONCLUSIVE
    assert any("copies of one run" in note for note in both.notes)


def test_too_few_seeds_for_an_interval() -> None:
    k = campaign_stats(_campaign(["base", "cand"]), _runs({"base": BASE, "cand": [0.4]})).candidates[0]
    assert k.welch.interval is None and k.p_value != k.p_value  # nan: not tested
    assert "Too few seeds for an interval" in k.sentence
    assert k.recommendation == NOT_TESTED and k.litmus.verdict == INCONCLUSIVE


def test_three_seeds_can_show_a_large_clean_difference() -> None:
    # 3 vs 3 seeds with little spread: Welch's t interval is wide (df ~ 4) but excludes 0
    k = campaign_stats(
        _campaign(["base", "cand"]), _runs({"base": [0.30, 0.31, 0.32], "cand": [0.60, 0.61, 0.62]})
    ).candidates[0]
    assert k.recommendation == IMPROVEMENT
    assert k.welch.df == pytest.approx(4.0)


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
        stats = campaign_stats(camp, _simulate(rng, {"base": 0, "a": 0, "b": 0}))
        claimed += any(k.recommendation != INSUFFICIENT for k in stats.candidates)
    # Holm keeps the family-wise error near alpha = 5%; allow up to 10% (binomial sd ~1.5%).
    assert claimed <= 0.10 * reps, claimed


def test_planted_large_effect_is_found() -> None:
    rng = np.random.default_rng(11)
    camp = _campaign(["base", "up", "down"])
    found_up = found_down = 0
    reps = 60
    for _ in range(reps):
        # +-3 sd: power of Welch's 8-vs-8 test at alpha/2 is ~0.99.
        stats = campaign_stats(camp, _simulate(rng, {"base": 0, "up": 0.09, "down": -0.09}))
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
    assert doc["schema"] == "obs.campaign_stats/3"
    by = {c["condition"]: c for c in doc["candidates"]}
    assert by["cand"]["recommendation"] == IMPROVEMENT
    assert by["empty"]["welch"]["interval"] is None and by["empty"]["p_value"] is None  # NaN -> null
    assert [c["name"] for c in doc["conditions"]] == ["base", "cand", "empty"]


def test_demo_campaign_page_and_analysis_json(demo_site: Path) -> None:
    folder = demo_site / "campaigns" / "sepa-campaign"
    doc = json.loads((folder / "analysis.json").read_text())
    assert [c["condition"] for c in doc["candidates"]] == ["maxrl+gtpo", "maxrl+gtpo_sepa"]
    by = {c["condition"]: c for c in doc["candidates"]}
    for c in doc["candidates"]:
        assert c["n"] == 3 and c["n_baseline"] == 3
        assert c["welch"]["interval"] is not None and c["pooled"]["total"] == 3 * 2560
        lo, hi = c["welch"]["interval"]["low"], c["welch"]["interval"]["high"]
        significant = c["recommendation"] != INSUFFICIENT
        assert significant == (c["p_adjusted"] < 0.05 and (lo > 0 or hi < 0))
    # SEPA separates from the baseline over 3 v 3 seeds; GTPO alone does not (its CI includes 0)
    assert by["maxrl+gtpo_sepa"]["recommendation"] == IMPROVEMENT
    assert by["maxrl+gtpo_sepa"]["litmus"]["verdict"] == CONFIRMED
    assert by["maxrl+gtpo"]["recommendation"] == INSUFFICIENT
    html = (folder / "index.html").read_text()
    assert 'id="campaign-stats"' in html
    assert "Holm-adjusted" in html and "not significant" in html
    assert "described, not tested" in html
