"""Issue 28: words no stronger than their test. Each test here fails without its fix.

* a side whose seeds are copies of one run is "not tested", never significant, with no "∞" effect size;
* "at least the minimum effect" only when the interval's bound clears it (campaigns and probes alike);
* secondary metrics of a campaign or arms page are one Holm family across metrics;
* a passing regression rule says what it could have missed: the smallest drop it detects with 80 %
  power, checked here by simulating the rule's own test;
* a probe too small for any change to be significant gets no verdict and a notice;
* the PR campaign summary keeps a significance failure out of "Unmet evidence minimums";
* the best-of-n gap is the selector's shortfall, never a "degradation".
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from obs.analysis import stats as S
from obs.analysis.campaign import CONFIRMED, Campaign, RunFinal, campaign_stats
from obs.analysis.compare import Headline, compare_probes, headline_delta
from obs.analysis.detectable import detectable_drop, detectable_gain, drop_power, min_cases
from obs.analysis.digest import CaseOutcome, RunDigest
from obs.analysis.metric_views import MetricView, across_metrics
from obs.analysis.promotion import PromotionInput, suggest_verdict
from obs.config import SiteConfig
from obs.model import Condition

CFG = SiteConfig()


def _campaign(names: list[str], **kw: object) -> Campaign:
    return Campaign(
        id="t",
        source_dir=Path("."),
        conditions=[Condition(n, label=n.upper()) for n in names],
        baseline_condition=names[0],
        primary_metric="correct_rate",
        **kw,  # type: ignore[arg-type]
    )


def _runs(values: dict[str, list[float]]) -> list[RunFinal]:
    return [
        RunFinal(run_id=f"{c}-s{i}", condition=c, seed=i, final=v)
        for c, vals in values.items()
        for i, v in enumerate(vals)
    ]


BASE5 = [0.5012, 0.5197, 0.5105, 0.5321, 0.4894]


# --------------------------------------------------------------------------- copies of one run


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy notes the copies' zero spread
def test_three_copies_against_five_varied_seeds_are_not_tested() -> None:
    """The issue's case: a condition whose 3 seeds all gave 0.53 (here 0.54) against 5 varied base seeds read
    "▲ +0.026 (significant improvement) · p = 0.021 (Holm)". scipy's Welch does give p < 0.05 here."""
    assert sps.ttest_ind([0.54] * 3, BASE5, equal_var=False).pvalue < 0.05
    k = campaign_stats(_campaign(["base", "cand"]), _runs({"base": BASE5, "cand": [0.54] * 3})).candidates[0]
    assert k.recommendation == S.NOT_TESTED and not k.tested
    assert k.welch.p_value is None and k.welch.interval is None
    assert math.isnan(k.hedges_g)
    assert "copies of one run" in k.sentence and "significant" not in k.sentence.lower()
    assert k.litmus.verdict != CONFIRMED


# --------------------------------------------------------------------------- minimum effect on the interval


def test_campaign_min_effect_is_judged_on_the_interval() -> None:
    """Estimate +0.05 above a 0.03 minimum effect, but the CI's lower bound is below it: significant, size
    not established; the litmus does not confirm "at least the minimum effect"."""
    cand = [0.5512, 0.5697, 0.5605, 0.5821, 0.5394]  # BASE5 + 0.05
    stats = campaign_stats(_campaign(["base", "cand"], min_effect=0.03), _runs({"base": BASE5, "cand": cand}))
    k = stats.candidates[0]
    ref = sps.ttest_ind(cand, BASE5, equal_var=False)
    low = ref.confidence_interval(0.95).low
    assert ref.pvalue < 0.05 and 0.0 < low < 0.03 < k.delta
    assert k.recommendation == S.SIZE_UNKNOWN
    assert "size is not established" in k.sentence
    assert k.litmus.verdict != CONFIRMED
    effect = next(c for c in k.litmus.thresholds if c.key == "min_effect")
    assert not effect.met and effect.observed == pytest.approx(low, abs=1e-12)


# --------------------------------------------------------------------------- Holm across metrics


def test_secondary_metrics_are_one_holm_family() -> None:
    """A page of several metrics labels each one on Holm-adjusted p-values over every candidate x metric
    test of the metrics other than the primary (statsmodels' Holm as the reference)."""
    rng = np.random.default_rng(7)
    views = []
    for i in range(4):
        cand = list(np.array(BASE5) + 0.03 + 0.01 * i + rng.normal(0, 0.01, 5))
        stats = campaign_stats(_campaign(["base", "cand"]), _runs({"base": BASE5, "cand": cand}))
        views.append(MetricView(f"m{i}", i == 0, [], stats))
    out = across_metrics(views)
    raw = [v.stats.candidates[0].p_value for v in views[1:]]
    expected = multipletests(raw, method="holm")[1]
    assert [v.stats.candidates[0].p_adjusted for v in out[1:]] == pytest.approx(list(expected), abs=1e-12)
    assert out[0] is views[0]  # the primary metric keeps its own result
    for v in out[1:]:
        c = v.stats.candidates[0]
        assert "candidate × metric" in v.stats.correction
        assert (c.recommendation == S.IMPROVEMENT) == (c.p_adjusted < 0.05)
    assert any(v.stats.candidates[0].recommendation == S.IMPROVEMENT for v in views[1:])
    assert sum(v.stats.candidates[0].recommendation == S.IMPROVEMENT for v in out[1:]) <= sum(
        v.stats.candidates[0].recommendation == S.IMPROVEMENT for v in views[1:]
    )


# --------------------------------------------------------------------------- what could have been missed


@pytest.mark.parametrize(("n", "k", "psi", "drop"), [(32, 18, 0.06, 0.30), (32, 20, 0.1, 0.45), (160, 96, 0.05, 0.1)])
def test_drop_power_matches_a_simulation_of_the_rule(n: int, k: int, psi: float, drop: float) -> None:
    level = 0.05 / 30
    rng = np.random.default_rng([n, k])
    reps = 20_000
    fix = min(1.0, n * psi / 2 / (n - k))
    brk = min(1.0, (n * psi / 2 + n * drop) / k)
    fixed, broken = rng.binomial(n - k, fix, reps), rng.binomial(k, brk, reps)
    p = S.score_tests(fixed, broken, np.full(reps, n), -0.02, "less")
    simulated = float(np.mean(p < level))
    assert drop_power(n, k, psi, drop, 0.02, level) == pytest.approx(simulated, abs=4 * math.sqrt(0.25 / reps))


def test_detectable_drop_has_80_percent_power_and_no_less() -> None:
    level = 0.05 / 26
    d = detectable_drop(32, 18, 0.06, 0.02, level)
    assert d is not None and 0.2 < d < 0.56
    assert drop_power(32, 18, 0.06, d, 0.02, level) >= 0.8
    assert drop_power(32, 18, 0.06, d - 0.002, 0.02, level) < 0.8
    assert detectable_drop(5, 2, 0.0, 0.02, level) is None  # even a total collapse would not be seen
    assert min_cases(0.05) == 6 and min_cases(0.01) == 8


def test_detectable_gain_inverts_connor() -> None:
    g = detectable_gain(160, 0.1, 0.05)
    assert g is not None
    assert S.paired_items_needed(0.1, g) <= 160 < S.paired_items_needed(0.1, g - 0.002)  # type: ignore[operator]


FAMS = ("cards", "lane", "poster", "table", "tree")


def _probe(rng: np.random.Generator, n: int = 160) -> tuple[dict[str, CaseOutcome], dict[str, CaseOutcome]]:
    base, here = {}, {}
    for i in range(n):
        b = bool(rng.random() < 0.6)
        h = (not b) if rng.random() < 0.05 else b
        fam, split = FAMS[i % 5], ("dev", "test")[i % 2]
        base[f"c{i:03d}"] = CaseOutcome({"exact": b}, split, fam)
        here[f"c{i:03d}"] = CaseOutcome({"exact": h}, split, fam)
    return here, base


def _suggest(here: dict[str, CaseOutcome], base: dict[str, CaseOutcome]):  # type: ignore[no-untyped-def]
    neg = CFG.is_negative_check
    cmp = compare_probes(here, base, "base", neg, primary="exact")
    rate = sum(o.checks["exact"] for o in here.values()) / len(here)
    head = Headline("exact", rate, "probe", "exact", n=len(here))
    delta = headline_delta(head, RunDigest("r", probe=here), RunDigest("b", probe=base), neg, 0.05, cmp)
    return suggest_verdict(PromotionInput(delta, cmp, "exact", CFG.threshold, headline_is_rate=True))


def test_a_passing_regression_rule_says_what_it_could_have_missed() -> None:
    """Before: "[pass] no split or family worse by more than 2.0 pp" and "nothing regressed", where a
    -20 pp collapse of a 32-case family is caught a small fraction of the time."""
    s = _suggest(*_probe(np.random.default_rng(3)))
    assert not s.regressions
    rule = next(c for c in s.checks if c.rule.startswith("no split or family"))
    assert rule.passed and "could have missed" in rule.detail
    fam = [i for i in s.missable if i.startswith("family lane (32 cases)")]
    assert fam and ("could miss a drop smaller than −" in fam[0] or "could miss any drop" in fam[0])
    assert s.as_dict()["could_have_missed"] == s.missable
    if s.verdict == "branch":
        assert "nothing regressed" not in " ".join(s.reasons)
        assert "could have been missed" in " ".join(s.reasons)


def test_two_cases_get_no_verdict_but_a_notice() -> None:
    """Before: a 2-case probe (2 right vs 0) got "branch: this axis has given what it can"."""
    here = {f"c{i}": CaseOutcome({"exact": True}, "dev", "cards") for i in range(2)}
    base = {f"c{i}": CaseOutcome({"exact": False}, "dev", "cards") for i in range(2)}
    s = _suggest(here, base)
    assert s.verdict is None
    assert "too few to judge" in s.reasons[0] and "add cases" in s.reasons[0]


# --------------------------------------------------------------------------- the PR campaign summary


def test_pr_summary_keeps_a_significance_failure_out_of_unmet_evidence_minimums(tmp_path: Path) -> None:
    from obs.publish import summary_md

    flat = [0.4913, 0.5301, 0.5105, 0.5222, 0.4994]
    stats = campaign_stats(_campaign(["base", "cand"], evidence={"min_seeds": 3}), _runs({"base": BASE5, "cand": flat}))
    k = stats.candidates[0]
    assert k.litmus.verdict == "FAILED"
    text = summary_md.campaign_summary(stats, title="t", question="", slug="t", base_url="", curves={})
    # the significance failure is a threshold the evidence failed, not a missing minimum (min_seeds is met)
    assert "Unmet evidence minimums" not in text
    failed = text.split("#### Thresholds not met")[1]
    assert "adjusted p" in failed


# --------------------------------------------------------------------------- best-of-n


def test_the_best_of_n_gap_is_a_shortfall_not_a_degradation() -> None:
    from obs.analysis.passk import Selector

    (pc,) = S.paired_from_counts([(50, 20, 0, 15)])  # the selected sample misses 15 cases best-of-n solves
    sel = Selector(50, 0.7, S.wilson_interval(35, 50), 0.4, S.wilson_interval(20, 50), pc)
    assert pc.recommendation == S.DEGRADATION  # what the page used to print
    assert sel.gap_words == "the selector falls significantly short of best-of-n"
    assert "degradation" not in sel.gap_words


# --------------------------------------------------------------------------- seeds as the unit of a recipe


def _recipe_runs(values: dict[str, list[float]], seed_in_config: bool = False) -> list:  # type: ignore[type-arg]
    from summaries import make_summary

    out = []
    for lr, vals in values.items():
        for i, v in enumerate(vals):
            config = {"config.lr": lr, "provenance.host": f"h{i}"}
            if seed_in_config:
                config["config.training.rng"] = i
            out.append(
                make_summary(
                    id=f"{lr}-s{i}",
                    seed=None if seed_in_config else i,
                    baseline=None if lr == "base" else f"base-s{i}",
                    headline={"metric": "exact", "value": v},
                    fields=config,
                )
            )
    return out


def _levels(runs: list, seed_keys: list[str] | None = None) -> dict:  # type: ignore[type-arg]
    from obs.analysis.recipes import recipe_levels, recipe_pairs

    return recipe_levels(
        recipe_pairs(runs, seed_keys or [], alpha=0.05, min_effect=lambda s: 0.0, higher_is_better={"exact": True})
    )


def test_runs_differing_only_by_seed_are_judged_at_the_seed_level() -> None:
    base, new = [0.601, 0.585, 0.617], [0.640, 0.628, 0.655]
    levels = _levels(_recipe_runs({"base": base, "new": new}))
    assert set(levels) == {"new-s0", "new-s1", "new-s2"}  # every run of the recipe, one comparison
    level = levels["new-s0"]
    ref = sps.ttest_ind(new, base, equal_var=False)
    assert level.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    assert (level.low, level.high) == pytest.approx(tuple(ref.confidence_interval(0.95)), abs=1e-12)
    assert level.outcome == S.IMPROVEMENT and (level.n, level.n_baseline) == (3, 3)
    assert levels["new-s1"] == level and level.key.startswith("recipe:")  # one comparison for every seed
    assert level.as_dict()["unit"].startswith("seeds")


def test_a_seed_key_named_in_obs_yaml_makes_replicates() -> None:
    runs = _recipe_runs({"base": [0.60, 0.58, 0.61], "new": [0.61, 0.57, 0.62]}, seed_in_config=True)
    assert not _levels(runs)  # `training.rng` is not a seed unless obs.yaml names it
    levels = _levels(runs, ["training.rng"])
    assert levels["new-s0"].outcome == S.INSUFFICIENT


def test_one_seed_per_side_is_a_checkpoint_comparison_with_seed_planning() -> None:
    here, base = _probe(np.random.default_rng(5))
    neg = CFG.is_negative_check
    cmp = compare_probes(here, base, "base", neg, min_effect=0.03, primary="exact")
    rate = sum(o.checks["exact"] for o in here.values()) / len(here)
    d = headline_delta(
        Headline("exact", rate, "probe", "exact", n=len(here)),
        RunDigest("r", probe=here),
        RunDigest("b", probe=base),
        neg,
        0.05,
        cmp,
        0.03,
    )
    assert d is not None and d.claim == "checkpoint"
    assert "seed-to-seed variation is unknown" in d.claim_text and "not a claim about the recipe" in d.claim_text
    assert d.recipe_note is not None
    half, same = S.sample_size_for_power(2.0), S.sample_size_for_power(1.0)
    assert f"{half} seeds per recipe if seed-to-seed sd is half of it, {same} if it equals it" in d.recipe_note
    assert "the minimum effect" in d.recipe_note
    assert d.as_dict()["claim"] == "checkpoint"


def test_copies_in_a_recipe_are_not_tested() -> None:
    levels = _levels(_recipe_runs({"base": [0.60, 0.58, 0.61], "new": [0.64, 0.64, 0.64]}))
    assert levels["new-s0"].outcome == S.NOT_TESTED and levels["new-s0"].p_value is None


# --------------------------------------------------------------------------- smaller defects


def test_an_unbalanced_design_is_not_called_conditions_times_seeds() -> None:
    from obs.render.index_pages import design_text

    assert design_text([5, 2, 3, 2]) == "4 conditions, 2-5 seeds each (5, 2, 3, 2)"  # before: "4 conditions × 5 seeds"
    assert design_text([3, 3, 3]) == "3 conditions × 3 seeds"


def test_a_rate_difference_interval_stays_within_minus_one_and_one() -> None:
    """The issue's [-1.261, 1.253]: a normal interval on two evaluation rates with large standard errors."""
    head = Headline("acc", 0.5, "eval", "acc", stderr=0.45)
    here = RunDigest("r", evals={"acc": (0.5, 0.45)})
    base = RunDigest("b", evals={"acc": (0.496, 0.45)})
    d = headline_delta(head, here, base, CFG.is_negative_check, 0.05)
    assert d is not None and d.interval is not None
    assert d.interval.low >= -1.0 and d.interval.high <= 1.0
    assert d.interval.low == -1.0 and d.interval.high == 1.0


def test_a_built_site_judges_recipes_at_the_seed_level(tmp_path: Path) -> None:
    """Three seeds of a recipe against three seeds of its baseline recipe, each run compared with the
    baseline of its seed: the leaderboard row shows the seed-level result, and index.json carries it."""
    import json

    from bs4 import BeautifulSoup

    from obs.build import BuildOptions
    from obs.publish.extras import build_published

    src = tmp_path / "src"
    (src / "ladder").mkdir(parents=True)
    (src / "ladder" / "spec.yaml").write_text("id: ladder\n")
    finals = {"base": [0.601, 0.585, 0.617], "new": [0.660, 0.648, 0.675]}
    for recipe, values in finals.items():
        for seed, value in enumerate(values, start=1):
            run = src / "ladder" / f"{recipe}_s{seed}"
            run.mkdir()
            baseline = "" if recipe == "base" else f"baseline: base-s{seed}\n"
            lr = 0.001 if recipe == "base" else 0.002
            (run / "run.yaml").write_text(
                f"id: {recipe}-s{seed}\nspec: ladder\nseed: {seed}\nstatus: finished\n{baseline}"
                f"primary_metric: accuracy\nconfig: {{lr: {lr}}}\n"
            )
            (run / "metrics.jsonl").write_text("".join(f'{{"step": {s}, "accuracy": {value}}}\n' for s in range(12)))
    out = tmp_path / "site"
    build_published(BuildOptions(source=src, out=out, quiet=True))
    doc = json.loads((out / "index.json").read_text())
    by_id = {r["id"]: r for r in doc["runs"]}
    level = by_id["new-s1"]["seed_level"]
    ref = sps.ttest_ind(finals["new"], finals["base"], equal_var=False)
    assert level is not None and level["unit"].startswith("seeds")
    assert level["p_value"] == pytest.approx(ref.pvalue, abs=1e-9)
    assert level["outcome"] == S.IMPROVEMENT and (level["n"], level["n_baseline"]) == (3, 3)
    assert by_id["new-s2"]["seed_level"]["key"] == level["key"]
    assert by_id["base-s1"]["seed_level"] is None
    # the one-run-each delta on the series is still described, never tested
    assert by_id["new-s1"]["delta"]["verdict"] == S.NOT_TESTED
    soup = BeautifulSoup((out / "index.html").read_text(), "html.parser")
    shown = soup.select(f'[data-cmp="{level["key"]}"]')
    assert shown and all(el["data-outcome"] == S.IMPROVEMENT for el in shown)


def test_the_seed_table_of_the_run_page_is_the_power_function() -> None:
    from obs.analysis.compare import SEEDS_AT_ALPHA_05

    for d, n in SEEDS_AT_ALPHA_05.items():
        assert S.sample_size_for_power(d, alpha=0.05) == n
