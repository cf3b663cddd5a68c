"""Diagnosis rules: for each rule, a synthetic input that fires it (with its numbers in the
evidence) and a close one that does not. Thresholds are the defaults of obs.yaml unless a test
sets its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from obs.analysis.compare import compare_probes
from obs.analysis.diagnose import DiagnosisInput, Finding, diagnose
from obs.analysis.digest import CaseOutcome
from obs.analysis.reward import reward_health
from obs.analysis.scoreboard import build_scoreboard
from obs.config import SiteConfig
from obs.model import Metrics, ProbeCase, Series, Stage

CFG = SiteConfig()


def cases(n: int, *, split: str | None = None, family: str | None = None, **hits: int) -> list[ProbeCase]:
    """`n` cases; check `name` is true on the first `hits[name]` of them."""
    prefix = f"{split or ''}-{family or ''}"
    return [
        ProbeCase(id=f"{prefix}-{i}", checks={c: i < k for c, k in hits.items()}, split=split, family=family)
        for i in range(n)
    ]


def metrics(stages: list[Stage] | None = None, **series: Any) -> Metrics:
    out = {}
    for name, values in series.items():
        v = np.asarray(values, dtype=float)
        out[name] = Series(np.arange(v.size, dtype=float) * 10, v)
    return Metrics(series=out, stages=stages or [])


def run_rules(
    probe: list[ProbeCase] | None = None,
    m: Metrics | None = None,
    cfg: SiteConfig = CFG,
    **kw: Any,
) -> dict[str, Finding]:
    sb = build_scoreboard(probe, cfg.is_negative_check) if probe else None
    d = DiagnosisInput(
        scoreboard=sb,
        scoreboard_repaired=None,
        metrics=m,
        comparison=kw.pop("comparison", None),
        threshold=cfg.threshold,
        loss_key="loss" if m is not None and "loss" in m.series else None,
        grad_key="grad_norm" if m is not None and "grad_norm" in m.series else None,
        **kw,
    )
    return {f.rule: f for f in diagnose(d)}


def falling_loss(n: int = 200, end: float = 0.3, tau: float = 120) -> np.ndarray:
    """A loss descending towards `end` (with the default tau still clearly falling at the end)."""
    return end + (3.0 - end) * np.exp(-np.arange(n) / tau)


def test_no_inputs_no_findings() -> None:
    assert run_rules() == {}


# --------------------------------------------------------------------------- scoreboard rules


def test_semantic_drift_fires_on_low_exact_with_high_renderable() -> None:
    f = run_rules(cases(10, exact=3, renderable=9))
    assert "semantic_drift" in f
    assert f["semantic_drift"].evidence == ["exact 30.0% < 50.0%", "renderable 90.0% ≥ 80.0%"]


def test_semantic_drift_silent_when_output_does_not_render() -> None:
    assert "semantic_drift" not in run_rules(cases(10, exact=3, renderable=5))


def test_grammar_corruption_fires_on_low_renderable_without_truncation() -> None:
    f = run_rules(cases(10, exact=3, renderable=5, truncated=0))
    assert "grammar_corruption" in f and "renderable 50.0% < 70.0%" in f["grammar_corruption"].evidence


def test_grammar_corruption_silent_when_truncation_explains_it() -> None:
    f = run_rules(cases(10, exact=3, renderable=5, truncated=4))
    assert "grammar_corruption" not in f and "budget_truncation" in f


def test_budget_truncation_fires_at_the_threshold() -> None:
    f = run_rules(cases(10, exact=8, truncated=1))
    assert f["budget_truncation"].evidence == ["truncated 10.0% ≥ 10.0%"]


def test_budget_truncation_silent_below_the_threshold() -> None:
    assert "budget_truncation" not in run_rules(cases(20, exact=18, truncated=1))


def test_exact_not_materialized_fires_on_the_gap() -> None:
    f = run_rules(cases(10, exact=8, materialized=6))
    assert f["exact_not_materialized"].evidence == ["exact 80.0% vs materialized 60.0% (gap 20.0%)"]


def test_exact_not_materialized_silent_when_they_agree() -> None:
    assert "exact_not_materialized" not in run_rules(cases(10, exact=8, materialized=8))


def test_family_imbalance_fires_on_one_family_near_zero_among_high_ones() -> None:
    probe = cases(10, family="lane", exact=1) + cases(10, family="poster", exact=9) + cases(10, family="cards", exact=8)
    f = run_rules(probe)
    assert "family_imbalance" in f
    assert f["family_imbalance"].title.endswith("lane")
    assert f["family_imbalance"].evidence[0] == (
        "lane: exact 10.0% (1/10) ≤ 25.0%, while the other families' median is 85.0% ≥ 60.0%"
    )


def test_family_imbalance_silent_when_every_family_is_weak() -> None:
    probe = cases(10, family="lane", exact=1) + cases(10, family="poster", exact=5) + cases(10, family="cards", exact=4)
    assert "family_imbalance" not in run_rules(probe)


def test_family_imbalance_threshold_comes_from_obs_yaml() -> None:
    probe = cases(10, family="lane", exact=2) + cases(10, family="poster", exact=9) + cases(10, family="cards", exact=8)
    assert "family_imbalance" in run_rules(probe)
    assert "family_imbalance" not in run_rules(probe, cfg=SiteConfig(thresholds={"family_near_zero": 0.1}))


def test_split_gap_fires_on_train_far_above_held_out() -> None:
    probe = cases(10, split="train", exact=10) + cases(10, split="dev", exact=7) + cases(10, split="test", exact=6)
    f = run_rules(probe)
    assert f["split_gap"].evidence == [
        "exact by split: train 100.0% (10/10) → dev 70.0% (7/10) → test 60.0% (6/10)",
        "train − test: +40.0 pp (threshold 20 pp)",
    ]


def test_split_gap_silent_on_a_small_gradient() -> None:
    probe = cases(10, split="train", exact=8) + cases(10, split="dev", exact=7) + cases(10, split="test", exact=7)
    assert "split_gap" not in run_rules(probe)


def _outcomes(probe: list[ProbeCase]) -> dict[str, CaseOutcome]:
    return {c.id: CaseOutcome(dict(c.checks), c.split, c.family) for c in probe}


def test_repair_regression_fires_when_repair_breaks_a_correct_case() -> None:
    raw = [ProbeCase("a", {"exact": True}), ProbeCase("b", {"exact": False}), ProbeCase("c", {"exact": False})]
    rep = [ProbeCase("a", {"exact": False}), ProbeCase("b", {"exact": True}), ProbeCase("c", {"exact": True})]
    rc = compare_probes(_outcomes(rep), _outcomes(raw), "raw probe", CFG.is_negative_check)
    f = run_rules(raw, repair_comparison=rc)
    assert f["repair_regression"].evidence == [
        "exact: 1 case right in the raw output, wrong after repair (a); the repair fixed 2"
    ]


def test_repair_regression_silent_when_repair_only_fixes() -> None:
    raw = [ProbeCase("a", {"exact": True}), ProbeCase("b", {"exact": False})]
    rep = [ProbeCase("a", {"exact": True}), ProbeCase("b", {"exact": True})]
    rc = compare_probes(_outcomes(rep), _outcomes(raw), "raw probe", CFG.is_negative_check)
    assert "repair_regression" not in run_rules(raw, repair_comparison=rc)


# --------------------------------------------------------------------------- curve rules


def test_memorised_fires_on_tiny_loss_and_low_exact() -> None:
    f = run_rules(cases(10, exact=2), metrics(loss=falling_loss(end=0.02, tau=20)))
    assert "memorised" in f and "exact 20.0% < 50.0%" in f["memorised"].evidence


def test_memorised_silent_when_the_probe_is_good() -> None:
    assert "memorised" not in run_rules(cases(10, exact=8), metrics(loss=falling_loss(end=0.02, tau=20)))


def test_loss_rules_ignore_a_policy_gradient_loss_around_zero() -> None:
    rng = np.random.default_rng(0)
    grpo_loss = rng.normal(0.0, 0.02, 300)
    f = run_rules(cases(10, exact=2), metrics(loss=grpo_loss))
    assert not {"memorised", "loss_plateau", "loss_oscillation", "missing_stage_labels"} & set(f)


def test_loss_plateau_fires_on_a_flat_final_window() -> None:
    loss = np.concatenate([np.linspace(3.0, 0.4, 150), np.full(150, 0.4)])
    f = run_rules(None, metrics(loss=loss))
    assert f["loss_plateau"].severity == "warning"  # no probe to say the plateau is harmless
    assert f["loss_plateau"].evidence[0].startswith("loss changed by ±0.00% over the final 60 points")


def test_loss_plateau_is_a_note_when_the_probe_is_good() -> None:
    loss = np.concatenate([np.linspace(3.0, 0.4, 150), np.full(150, 0.4)])
    assert run_rules(cases(10, exact=8), metrics(loss=loss))["loss_plateau"].severity == "note"


def test_loss_plateau_silent_while_the_loss_still_falls() -> None:
    assert "loss_plateau" not in run_rules(None, metrics(loss=falling_loss()))


def test_loss_plateau_silent_on_a_loss_converged_near_zero() -> None:
    loss = np.concatenate([np.linspace(3.0, 0.02, 150), np.full(150, 0.02)])
    assert "loss_plateau" not in run_rules(None, metrics(loss=loss))


def test_loss_oscillation_fires_on_a_loss_that_swings() -> None:
    loss = 1.0 + 0.4 * np.where(np.arange(300) % 2 == 0, 1.0, -1.0)
    f = run_rules(None, metrics(loss=loss))
    assert "loss_oscillation" in f and "40% of its level" in f["loss_oscillation"].evidence[0]


def test_loss_oscillation_silent_on_a_smooth_loss() -> None:
    assert "loss_oscillation" not in run_rules(None, metrics(loss=falling_loss()))


def test_grad_spikes_fire_with_the_step_and_the_ratio() -> None:
    g = np.full(200, 1.0)
    g[120] = 40.0
    f = run_rules(None, metrics(loss=falling_loss(), grad_norm=g))
    assert f["grad_spikes"].evidence == [
        "1 point of grad_norm ≥ 10× the median of the previous 25 points",
        "step 1,200: 40 vs median 1 (40×)",
    ]


def test_grad_spikes_silent_on_noise() -> None:
    g = 1.0 + np.random.default_rng(2).uniform(-0.3, 0.3, 200)
    assert "grad_spikes" not in run_rules(None, metrics(loss=falling_loss(), grad_norm=g))


def test_grad_collapse_fires_when_the_norm_goes_to_zero() -> None:
    g = np.concatenate([np.full(100, 1.0), np.full(100, 1e-9)])
    f = run_rules(None, metrics(loss=falling_loss(), grad_norm=g))
    assert "grad_collapse" in f and f["grad_collapse"].severity == "problem"


def test_grad_collapse_silent_on_small_but_living_gradients() -> None:
    g = np.concatenate([np.full(100, 1.0), np.full(100, 1e-3)])
    assert "grad_collapse" not in run_rules(None, metrics(loss=falling_loss(), grad_norm=g))


def test_missing_stage_labels_fires_without_stages() -> None:
    f = run_rules(None, metrics(loss=falling_loss()))
    assert f["missing_stage_labels"].evidence == ["no `stage` field on any of the 200 loss points"]


def test_missing_stage_labels_fires_when_one_label_covers_everything() -> None:
    f = run_rules(None, metrics([Stage("pretrain", 0, 1990)], loss=falling_loss()))
    assert "labelled 'pretrain'" in f["missing_stage_labels"].evidence[0]


def test_missing_stage_labels_silent_with_stages() -> None:
    stages = [Stage("warmup", 0, 100), Stage("main", 100, 1990)]
    assert "missing_stage_labels" not in run_rules(None, metrics(stages, loss=falling_loss()))


def _grpo(collapse: bool) -> Metrics:
    n = 200
    zero = np.where((np.arange(n) >= 120) & collapse, 0.8, 0.05)
    std = np.where((np.arange(n) >= 120) & collapse, 0.03, 0.3)
    return metrics(reward_mean=np.linspace(0.2, 0.9, n), reward_std=std, frac_reward_zero_std=zero)


def test_reward_variance_collapse_fires_with_the_onset_step() -> None:
    m = _grpo(collapse=True)
    f = run_rules(None, m, reward=reward_health(m, CFG.threshold))
    finding = f["reward_variance_collapse"]
    # steps are index × 10; the 10-point rolling mean passes 0.5 at the window ending at index 125
    assert finding.title == "The learning signal vanished from step 1,250"
    assert finding.evidence[0].startswith("frac_reward_zero_std: rolling mean (10 points) ≥ 0.5 from step 1,250")


def test_reward_variance_collapse_silent_on_a_healthy_run() -> None:
    m = _grpo(collapse=False)
    assert "reward_variance_collapse" not in run_rules(None, m, reward=reward_health(m, CFG.threshold))


def test_findings_are_ordered_by_severity() -> None:
    f = list(run_rules(cases(10, exact=8, truncated=1), metrics(loss=falling_loss())).values())
    assert [x.severity for x in f] == sorted((x.severity for x in f), key=["problem", "warning", "note"].index)


# --------------------------------------------------------------------------- the demo ladder


@pytest.mark.parametrize(
    ("run", "fires", "silent"),
    [
        ("spec03-r2", {"family_imbalance"}, {"reward_variance_collapse", "memorised"}),
        ("spec03-r3", {"repair_regression"}, {"family_imbalance"}),
        ("spec03-r1", set(), {"family_imbalance", "repair_regression"}),
        ("grpo-rl-07", {"reward_variance_collapse"}, {"loss_plateau", "loss_oscillation"}),
    ],
)
def test_demo_runs(demo_site: Path, run: str, fires: set[str], silent: set[str]) -> None:
    rules = {f["rule"] for f in json.loads((demo_site / f"runs/{run}/analysis.json").read_text())["diagnosis"]}
    assert fires <= rules and not silent & rules


def test_demo_r2_names_pipeline_lane_with_its_counts(demo_site: Path) -> None:
    analysis = json.loads((demo_site / "runs/spec03-r2/analysis.json").read_text())
    finding = next(f for f in analysis["diagnosis"] if f["rule"] == "family_imbalance")
    lane = analysis["scoreboard"]["by_family"]
    rate = next(r for r in lane if r["label"] == "pipeline_lane")["rates"]["exact"]
    assert finding["title"].endswith("pipeline_lane")
    assert f"({rate['hits']}/{rate['n']})" in finding["evidence"][0]


@pytest.mark.parametrize("factor", [1.5, 3.0])
def test_spike_ratios_match_pandas_rolling_medians_across_chunks(factor: float) -> None:
    """Every point at or above `factor` x its trailing median is found, with the ratio pandas gives."""
    import pandas as pd

    from obs.analysis.diagnose import _spike_ratios

    rng = np.random.default_rng(4)
    g = rng.random(400) + 0.05
    g[rng.choice(400, 12, replace=False)] *= 20  # spikes
    g[50:60] = 0.0  # windows whose minimum is 0 (no bound from it)
    medians = pd.Series(g[:-1]).rolling(5).median().to_numpy()[4:]
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.where(medians > 0, g[5:] / medians, 0.0)
    ratio, got_medians = _spike_ratios(g, 5, factor, chunk=7)
    assert np.array_equal(np.flatnonzero(ratio >= factor), np.flatnonzero(expected >= factor))
    hits = expected >= factor
    assert hits.sum() > 5
    np.testing.assert_allclose(ratio[hits], expected[hits])
    np.testing.assert_allclose(got_medians[hits], medians[hits])
