"""Issue 26, "no false statement": diagnosis rules and the reward-health reading on degenerate inputs (all zero,
constant, a single point, exact zeros among small values), checked by property tests; reward-collapse aliases."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from adapterkit import load_all, write
from hypothesis import given, settings
from hypothesis import strategies as st

from obs.analysis.curves import plan_curves
from obs.analysis.diagnose import DiagnosisInput, diagnose
from obs.analysis.report import RunContext, analyse_run
from obs.analysis.reward import reward_health
from obs.config import SiteConfig
from obs.model import Metrics, Series

CFG = SiteConfig()


def _findings(series: dict[str, np.ndarray]) -> list:
    metrics = Metrics(series={k: Series(np.arange(float(v.size)), v.astype(float)) for k, v in series.items()})
    plan = plan_curves(metrics)
    return diagnose(
        DiagnosisInput(
            scoreboard=None,
            scoreboard_repaired=None,
            metrics=metrics,
            comparison=None,
            threshold=CFG.threshold,
            loss_key=plan.loss,
            grad_key=plan.grad,
            reward=reward_health(metrics, CFG.threshold),
        )
    )


def _degenerate() -> st.SearchStrategy[np.ndarray]:
    """All zero, one constant, a single point, or exact zeros among one positive level."""
    n = st.integers(1, 300)
    level = st.floats(1e-6, 1e6)
    return st.one_of(
        n.map(np.zeros),
        st.tuples(n, level).map(lambda t: np.full(t[0], t[1])),
        level.map(lambda v: np.array([v])),
        st.tuples(st.lists(st.booleans(), min_size=2, max_size=300), level).map(
            lambda t: np.where(np.array(t[0]), 0.0, t[1])
        ),
    )


@settings(max_examples=150, deadline=None)
@given(loss=_degenerate(), grad=_degenerate())
def test_no_rule_reads_more_than_degenerate_curves_hold(loss: np.ndarray, grad: np.ndarray) -> None:
    """No curve rule fires on a flat or zero curve with a number it cannot have (NaN, ∞), no gradient spike is made
    of exact zeros (a step with no gradient is not a scale to spike against), no oscillation around a flat level."""
    found = _findings({"loss": loss, "grad_norm": grad})
    rules = {f.rule for f in found}
    assert "grad_spikes" not in rules
    assert "loss_oscillation" not in rules
    for f in found:
        text = " ".join(f.evidence)
        assert "nan" not in text.lower() and "∞" not in text and "inf" not in text.lower(), (f.rule, text)


def test_gradient_spikes_are_not_driven_by_exact_zero_gradients() -> None:
    """The defect: median 0.005, max 0.40, and "spikes" that were ordinary steps after runs of exact zeros (which
    pulled the trailing median down to 2e-4)."""
    rng = np.random.default_rng(3)
    g = np.minimum(np.exp(rng.normal(np.log(0.005), 1.0, 400)), 0.03)
    g[rng.random(400) < 0.45] = 0.0  # tied groups: no gradient at all
    assert "grad_spikes" not in {f.rule for f in _findings({"loss": np.linspace(2, 1, 400), "grad_norm": g})}
    g[201] = 0.40  # one real spike
    found = {f.rule: f for f in _findings({"loss": np.linspace(2, 1, 400), "grad_norm": g})}
    spikes = found["grad_spikes"]
    assert spikes.evidence[0].startswith("1 point") and "exactly 0 left out" in spikes.evidence[0]
    assert spikes.evidence[1].startswith("step 201: 0.4")


def test_zero_advantage_fraction_is_a_collapse_canary() -> None:
    steps = np.arange(60.0)
    zero = np.where(steps < 20, 0.1, 1.0)
    metrics = Metrics(
        series={
            "reward": Series(steps, np.where(steps < 20, 0.5, 1.0)),
            "zero_advantage_fraction": Series(steps, zero),
        }
    )
    h = reward_health(metrics, CFG.threshold)
    assert h is not None and h.zero_std is not None and h.zero_std.key == "zero_advantage_fraction"
    assert h.collapsed


def test_uniform_group_rate_is_a_collapse_canary() -> None:
    for name in ("uniform_group_rate", "tie_rate", "frac_groups_tied", "train/zero_std_frac"):
        steps = np.arange(40.0)
        metrics = Metrics(series={"reward": Series(steps, steps / 40), name: Series(steps, np.full(40, 0.9))})
        h = reward_health(metrics, CFG.threshold)
        assert h is not None and h.zero_std is not None and h.zero_std.key == name, name


def test_too_few_points_is_no_verdict() -> None:
    steps = np.arange(3.0)
    metrics = Metrics(series={"reward": Series(steps, np.ones(3)), "reward_std": Series(steps, np.zeros(3))})
    h = reward_health(metrics, CFG.threshold)
    assert h is not None and not h.collapsed and not h.judged
    assert h.last_tied is not None and "reward_std" in h.last_tied


def test_oscillation_is_not_computed_around_a_zero_level() -> None:
    loss = np.zeros(100)
    loss[::2] = 1e-9
    assert "loss_oscillation" not in {f.rule for f in _findings({"loss": loss - loss.mean()})}


def test_a_huge_finite_value_stays_finite_in_the_headline(tmp_path: Path) -> None:
    """The defect: 1.2e230 in the file, "∞" in the headline (a ±1e150 clamp), 1.204e+230 in the table beside it."""
    rows = [{"step": s, "eval_loss": 1.2e230 if s >= 30 else 1.0, "loss": 1.7e308} for s in range(40)]
    write(tmp_path / "r" / "log.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    (run, diags), *_ = load_all(tmp_path).values()
    report = analyse_run(run, RunContext(), CFG)
    h = report.headline
    assert h.metric == "eval_loss" and h.value == pytest.approx(1.2e230) and math.isfinite(h.value)
    loss = report.digest.finals["loss"]
    assert loss.mean == 1.7e308 and loss.sd == 0.0
    assert not [d for d in diags.items if d.severity != "info"]


@settings(max_examples=150, deadline=None)
@given(spread=_degenerate(), zero_std=st.one_of(st.none(), _degenerate()))
def test_reward_health_never_says_no_collapse_it_cannot_see(spread: np.ndarray, zero_std: np.ndarray | None) -> None:
    """Degenerate reward spreads: an all-zero reward_std long enough to judge is a collapse; a short one is no
    verdict; "no collapse" only when the rule could have seen one."""
    series = {
        "reward": Series(np.arange(float(spread.size)), np.ones(spread.size)),
        "reward_std": Series(np.arange(float(spread.size)), spread),
    }
    if zero_std is not None:
        series["zero_advantage_fraction"] = Series(np.arange(float(zero_std.size)), np.clip(zero_std, 0, 1))
    h = reward_health(Metrics(series=series), CFG.threshold)
    assert h is not None
    if not h.judged:
        assert not h.collapsed
    elif spread.size >= h.points_needed and not spread.any():
        assert h.collapsed
    if not spread.any() or (zero_std is not None and np.clip(zero_std, 0, 1)[-1] >= h.zero_std_threshold):
        assert h.last_tied is not None


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(1, 40),
    kind=st.sampled_from(["all_false", "all_true", "one_true"]),
    families=st.integers(1, 3),
    loss=_degenerate(),
)
def test_probe_rules_on_degenerate_probes(n: int, kind: str, families: int, loss: np.ndarray) -> None:
    """Every rule on a probe where every case fails, every case passes or one case passes (one case, one family,
    ...), beside a degenerate loss: no crash, and no evidence with a number the data cannot give (NaN, ∞)."""
    from obs.analysis.scoreboard import build_scoreboard
    from obs.model import ProbeCase

    probe = [
        ProbeCase(
            id=f"c{i}",
            checks={"exact": kind == "all_true" or (kind == "one_true" and i == 0), "parses": True},
            split=("train", "dev", "test")[i % 3],
            family=f"f{i % families}",
        )
        for i in range(n)
    ]
    metrics = Metrics(series={"loss": Series(np.arange(float(loss.size)), loss.astype(float))})
    d = DiagnosisInput(
        scoreboard=build_scoreboard(probe, CFG.is_negative_check),
        scoreboard_repaired=None,
        metrics=metrics,
        comparison=None,
        threshold=CFG.threshold,
        loss_key="loss",
        headline_check="exact",
    )
    for f in diagnose(d):
        text = " ".join(f.evidence)
        assert "nan" not in text.lower() and "∞" not in text and "inf" not in text.lower(), (f.rule, text)
