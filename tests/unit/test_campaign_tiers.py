"""Campaign metric tiers (obs.analysis.tiers), read from campaign.yaml `metrics:` (obs.schema.MetricTiers).

The statistics are checked against scipy and statsmodels, never against themselves: Welch's test
(scipy.stats.ttest_ind, equal_var=False), Holm over the family (statsmodels multipletests), the seeds
for power (statsmodels TTestIndPower).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower

from obs.analysis.campaign_gate import campaign_gate
from obs.analysis.campaign_view import campaign_view
from obs.analysis.tiers import PLANNING_TIERS, campaign_tiers
from obs.diagnostics import Diagnostics
from obs.discover import read_campaign
from obs.model import Campaign, Condition, MetricDecl, MetricWindow
from obs.schema import parse_window
from obs.vocabulary import lower_is_better
from summaries import make_summary

DIRECTION = lambda name: not lower_is_better(name)  # noqa: E731

# --------------------------------------------------------------------------- parsing


def _read(tmp_path: Path, text: str) -> tuple[Campaign | None, list[str]]:
    (tmp_path / "campaign.yaml").write_text(text, encoding="utf-8")
    diags = Diagnostics(root=tmp_path)
    campaign = read_campaign(tmp_path, diags)
    return campaign, [d.format() for d in diags.items]


def test_a_plain_list_is_primary_then_secondary(tmp_path: Path) -> None:
    c, said = _read(tmp_path, "conditions: [a, b]\nmetrics: [acc, reward, entropy]\n")
    assert c is not None and not said
    assert [(d.name, d.tier) for d in c.metrics] == [
        ("acc", "primary"),
        ("reward", "secondary"),
        ("entropy", "secondary"),
    ]
    assert c.primary_metric == "acc" and c.metrics_from == "campaign.yaml"


def test_a_mapping_gives_tier_direction_window_unit(tmp_path: Path) -> None:
    text = (
        "primary_metric: acc\n"
        "metrics:\n"
        "  acc: {tier: primary, unit: share}\n"
        "  loss: {tier: secondary, direction: lower, window: 400-500}\n"
        "  entropy: {tier: diagnostic, window: 25}\n"
    )
    c, said = _read(tmp_path, text)
    assert c is not None and not said
    by = {d.name: d for d in c.metrics}
    assert by["acc"].unit == "share" and by["acc"].tier == "primary"
    assert by["loss"].higher_is_better is False and by["loss"].window == MetricWindow("steps", lo=400.0, hi=500.0)
    assert by["entropy"].window == MetricWindow("last", n=25) and by["entropy"].tier == "diagnostic"


@pytest.mark.parametrize(
    ("value", "window"),
    [
        ("final", MetricWindow()),
        (20, MetricWindow("last", n=20)),
        ("last 20", MetricWindow("last", n=20)),
        ("400-500", MetricWindow("steps", lo=400.0, hi=500.0)),
        ("steps 400..500", MetricWindow("steps", lo=400.0, hi=500.0)),
        ([400, 500], MetricWindow("steps", lo=400.0, hi=500.0)),
        ("500-400", None),
        (0, None),
        ("soon", None),
        (True, None),
    ],
)
def test_windows(value: object, window: MetricWindow | None) -> None:
    assert parse_window(value) == window


@pytest.mark.parametrize(
    ("body", "line", "words"),
    [
        (
            "metrics:\n  acc: {tier: main}\n",
            3,
            "'metrics.acc.tier' is 'main'; expected one of primary, secondary, diagnostic",
        ),
        ("metrics:\n  acc:\n    tier: primary\n    window: soon\n", 5, "'metrics.acc.window' should be `final`"),
        ("metrics:\n  seed: {tier: secondary}\n", 3, "'seed' is an identifier of the records, not a metric"),
        (
            "metrics:\n  acc:\n    tier: primary\n    direction: up\n",
            5,
            "'metrics.acc.direction' should be higher or lower",
        ),
        ("metrics:\n  acc: {tier: primary, colour: red}\n", 3, "unknown key(s) colour"),
        ("metrics:\n  acc: primary\n  f1: primary\n", 4, "'acc' and 'f1' are both primary"),
        ("metrics: [acc, 3]\n", 2, "entry 2 should be a metric name"),
        ("metrics: 7\n", 2, "'metrics' should be a list of metric names or a mapping"),
    ],
)
def test_bad_tiers_say_where_and_what(tmp_path: Path, body: str, line: int, words: str) -> None:
    _, said = _read(tmp_path, "conditions: [a, b]\n" + body)
    hits = [s for s in said if words in s]
    assert hits, said
    assert f"campaign.yaml:{line}: warning: " in hits[0].split("'", 1)[0], hits  # path:line: first


def test_primary_metric_wins_over_a_different_primary_tier(tmp_path: Path) -> None:
    c, said = _read(tmp_path, "primary_metric: acc\nmetrics: {f1: {tier: primary}}\n")
    assert c is not None
    assert [(d.name, d.tier) for d in c.metrics] == [("acc", "primary"), ("f1", "secondary")]
    assert any("'f1' is marked primary but primary_metric is 'acc'" in s for s in said)


def test_expected_order_names_unknown_conditions(tmp_path: Path) -> None:
    c, said = _read(tmp_path, "conditions: [a, b]\nexpected_order: [a, z, b]\n")
    assert c is not None and c.expected_order == ["a", "b"]
    assert any(":2: warning: expected_order names 'z'" in s for s in said), said


# --------------------------------------------------------------------------- statistics

VALUES = {  # condition -> metric -> one value per seed
    "base": {"acc": [0.40, 0.42, 0.41, 0.39], "reward": [1.0, 1.2, 1.1, 0.9]},
    "a": {"acc": [0.44, 0.45, 0.43, 0.46], "reward": [1.1, 1.0, 1.3, 1.2]},
    "b": {"acc": [0.50, 0.52, 0.49, 0.51], "reward": [1.6, 1.5, 1.7, 1.4]},
}


def _runs(values: dict[str, dict[str, list[float]]] = VALUES, **extra: object) -> list:
    out = []
    for cond, metrics in values.items():
        for seed in range(len(next(iter(metrics.values())))):
            finals = {m: float(v[seed]) for m, v in metrics.items()}
            out.append(
                make_summary(
                    id=f"{cond}_s{seed}",
                    campaign="c",
                    condition=cond,
                    seed=seed,
                    finals={**finals, "seed": float(seed), "loss_is_placeholder": 1.0},
                    flags=["loss_is_placeholder"],
                    **extra,
                )
            )
    return out


def _campaign(**kw: object) -> Campaign:
    base = dict(
        id="c",
        source_dir=Path("."),
        conditions=[Condition("base"), Condition("a"), Condition("b")],
        baseline_condition="base",
        primary_metric="acc",
        metrics=[MetricDecl("acc", "primary"), MetricDecl("reward", "secondary")],
        metrics_from="campaign.yaml",
    )
    base.update(kw)
    return Campaign(**base)  # type: ignore[arg-type]


def test_the_tested_family_is_holm_over_every_metric_and_candidate() -> None:
    tiers = campaign_tiers(_campaign(), _runs(), DIRECTION)
    raw, ours = [], []
    for t in tiers.tested:
        for k in t.stats.candidates:
            x, y = VALUES[k.condition][t.name], VALUES["base"][t.name]
            p = sps.ttest_ind(x, y, equal_var=False).pvalue
            assert k.p_value == pytest.approx(p, rel=1e-9)
            raw.append(p)
            ours.append(k.p_adjusted)
    assert len(raw) == 4
    assert ours == pytest.approx(list(multipletests(raw, method="holm")[1]), rel=1e-9)
    assert "Holm over the 4 metric × candidate tests (2 metrics)" in tiers.family
    assert all("metric × candidate" in k.sentence for t in tiers.tested for k in t.stats.candidates)


def test_identifiers_and_flags_are_never_metrics() -> None:
    tiers = campaign_tiers(_campaign(metrics=[], metrics_from=""), _runs(), DIRECTION)
    names = {t.name for t in tiers.metrics}
    assert "seed" not in names and "loss_is_placeholder" not in names
    assert any(n.startswith("seed (an identifier") for n in tiers.not_metrics)
    assert any(n.startswith("loss_is_placeholder (a yes/no flag") for n in tiers.not_metrics)
    # without metrics: only the primary is tested, and the page is told secondary metrics can be declared
    assert [t.name for t in tiers.tested] == ["acc"]
    assert "Secondary metrics" in tiers.declared and "can be declared" in tiers.declared
    reward = next(t for t in tiers.metrics if t.name == "reward")
    assert not reward.tested and reward.stats.candidates == [] and reward.stats.conditions


def test_diagnostics_are_described_never_tested() -> None:
    c = _campaign(metrics=[MetricDecl("acc", "primary"), MetricDecl("reward", "diagnostic")])
    tiers = campaign_tiers(c, _runs(), DIRECTION)
    assert [t.name for t in tiers.tested] == ["acc"]
    reward = next(t for t in tiers.metrics if t.name == "reward")
    assert reward.why_not_tested.startswith("a diagnostic") and not reward.matrix
    # one tested metric: Holm over its candidates only
    acc = tiers.tested[0]
    raw = [
        sps.ttest_ind(VALUES[k.condition]["acc"], VALUES["base"]["acc"], equal_var=False).pvalue
        for k in acc.stats.candidates
    ]
    assert [k.p_adjusted for k in acc.stats.candidates] == pytest.approx(list(multipletests(raw, method="holm")[1]))


def test_without_a_primary_metric_the_headline_rule_chooses_it() -> None:
    runs = _runs(headline={"metric": "reward", "kind": "series"})
    tiers = campaign_tiers(_campaign(primary_metric=None, metrics=[], metrics_from=""), runs, DIRECTION)
    assert tiers.primary is not None and tiers.primary.name == "reward"
    assert "the runs' headline (reward), chosen by the headline rule" in tiers.declared


def test_the_matrix_is_every_pair_holm_over_all_tested_metrics() -> None:
    tiers = campaign_tiers(_campaign(), _runs(), DIRECTION)
    cells = [c for t in tiers.tested for c in t.matrix]
    assert len(cells) == 2 * 3
    raw = []
    for t in tiers.tested:
        for c in t.matrix:
            x, y = VALUES[c.b][t.name], VALUES[c.a][t.name]
            res = sps.ttest_ind(x, y, equal_var=False)
            assert c.p_value == pytest.approx(res.pvalue, rel=1e-9)
            assert c.delta == pytest.approx(np.mean(x) - np.mean(y))
            ci = res.confidence_interval(0.95)
            assert (c.welch.interval.low, c.welch.interval.high) == pytest.approx((ci.low, ci.high), rel=1e-6)
            raw.append(res.pvalue)
    assert [c.p_adjusted for c in cells] == pytest.approx(list(multipletests(raw, method="holm")[1]))


def test_expected_order_holds_is_reversed_or_undetermined() -> None:
    holds = campaign_tiers(_campaign(expected_order=["base", "a", "b"]), _runs(), DIRECTION)
    acc = holds.tested[0]
    assert acc.order is not None
    assert [s.state for s in acc.order.steps] == ["holds", "holds"] and acc.order.verdict == "holds"
    backwards = campaign_tiers(_campaign(expected_order=["b", "a"]), _runs(), DIRECTION).tested[0].order
    assert backwards is not None and backwards.verdict == "contradicted" and backwards.steps[0].state == "reversed"
    close = {**VALUES, "a": {"acc": [0.40, 0.43, 0.41, 0.40], "reward": [1.0, 1.1, 1.2, 1.0]}}
    vague = campaign_tiers(_campaign(expected_order=["base", "a"]), _runs(close), DIRECTION).tested[0].order
    assert vague is not None and vague.steps[0].state == "undetermined" and vague.verdict == "not established"
    assert "1 undetermined at α = 0.05 after Holm" in vague.sentence


def test_planning_tiers_match_statsmodels() -> None:
    c = _campaign(min_effect=0.02, metrics=[MetricDecl("acc", "primary")])
    tiers = campaign_tiers(c, _runs(), DIRECTION)
    acc = tiers.tested[0]
    alpha = 0.05 / 2  # two candidates: the family's first Holm level
    for plan in acc.planning:
        x = np.array(VALUES[plan.condition]["acc"])
        y = np.array(VALUES["base"]["acc"])
        sd = math.sqrt((((x - x.mean()) ** 2).sum() + ((y - y.mean()) ** 2).sum()) / (x.size + y.size - 2))
        assert plan.alpha == pytest.approx(alpha)
        for tier, (name, power) in zip(plan.tiers, PLANNING_TIERS, strict=True):
            n = TTestIndPower().solve_power(effect_size=0.02 / sd, alpha=alpha, power=power, ratio=1.0)
            assert tier.name == name and tier.seeds == max(2, math.ceil(n - 1e-9)), (name, n)


def test_double_the_seeds_when_a_result_is_directional() -> None:
    # a p just above alpha after Holm: between α and 2α
    values = {
        "base": {"acc": [0.40, 0.42, 0.41, 0.39]},
        "a": {"acc": [0.41, 0.44, 0.42, 0.43]},
    }
    c = _campaign(conditions=[Condition("base"), Condition("a")], metrics=[MetricDecl("acc", "primary")])
    tiers = campaign_tiers(c, _runs(values), DIRECTION)
    k = tiers.tested[0].stats.candidates[0]
    plan = tiers.tested[0].planning[0]
    assert (0.05 <= k.p_adjusted < 0.10) == plan.directional
    assert 0.05 <= k.p_adjusted < 0.10, k.p_adjusted  # the data were chosen to be directional
    assert "Double the seeds (4 → 8 per condition)" in plan.advice


def test_the_gate_reads_the_order_and_the_secondary_guardrail() -> None:
    runs = _runs()
    c = _campaign(expected_order=["base", "a", "b"], conditions=[Condition("base"), Condition("a"), Condition("b")])
    view = campaign_view(c, runs, DIRECTION)
    gate = campaign_gate(view)
    assert gate.verdict == "PASS" and gate.exit_code == 0
    assert any(ln.what == "order on acc" and ln.verdict == "PASS" for ln in gate.lines)
    # a secondary metric that gets significantly worse fails the gate
    worse = {k: {**v, "reward": list(np.array(v["reward"]) * (0.2 if k == "b" else 1.0))} for k, v in VALUES.items()}
    gate = campaign_gate(campaign_view(c, _runs(worse), DIRECTION))
    assert gate.verdict == "FAIL" and gate.exit_code == 1
    assert any(ln.verdict == "FAIL" and ln.what.startswith("reward (secondary) · b") for ln in gate.lines)


# --------------------------------------------------------------------------- a run's number over its window


def test_a_step_window_is_the_mean_of_the_values_logged_in_it() -> None:
    from obs.analysis.summary import metric_window

    steps = np.arange(0, 600, 10, dtype=float)
    values = np.sin(steps / 50.0)
    values[45] = np.nan  # step 450: not a value
    got = metric_window(values, steps, MetricWindow("steps", lo=400.0, hi=500.0), 10)
    keep = (steps >= 400) & (steps <= 500) & np.isfinite(values)
    assert got is not None and got.n == int(keep.sum()) == 10
    assert got.mean == pytest.approx(float(values[keep].mean())) and got.last_step == 500.0
    last = metric_window(values, steps, MetricWindow("last", n=5), 10)
    assert last is not None and last.mean == pytest.approx(float(values[-5:].mean())) and last.n == 5
    assert metric_window(values, steps, MetricWindow("steps", lo=900.0, hi=990.0), 10) is None


def test_obs_yaml_tiers_serve_every_campaign_without_its_own(tmp_path: Path) -> None:
    from obs.pipeline import SourceTree

    (tmp_path / "obs.yaml").write_text("metrics:\n  acc: {tier: primary}\n  loss: {tier: diagnostic, better: lower}\n")
    for name, own in (("mine", "metrics: [f1]\n"), ("site", "")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "campaign.yaml").write_text(f"id: {name}\nconditions: [a, b]\n{own}")
    tree = SourceTree.open(tmp_path)
    site, mine = tree.found.campaigns["site"], tree.found.campaigns["mine"]
    assert [(d.name, d.tier) for d in site.metrics] == [("acc", "primary"), ("loss", "diagnostic")]
    assert site.metrics_from == "obs.yaml" and site.primary_metric == "acc"
    assert [(d.name, d.tier) for d in mine.metrics] == [("f1", "primary")] and mine.metrics_from == "campaign.yaml"
    assert tree.cfg.metric_higher_is_better("loss") is False


def test_tiers_without_a_primary_are_led_by_the_headline() -> None:
    c = _campaign(primary_metric=None, metrics=[MetricDecl("reward", "secondary")])
    tiers = campaign_tiers(c, _runs(headline={"metric": "acc", "kind": "series"}), DIRECTION)
    assert [(t.name, t.tier) for t in tiers.tested] == [("acc", "primary"), ("reward", "secondary")]
    assert "none is primary, so the runs' headline (acc) is the primary metric" in tiers.declared


def test_the_arms_picker_leaves_out_identifiers_and_flags() -> None:
    from obs.analysis.arms import ArmGroup, arm_stats
    from obs.analysis.metric_views import arms_metrics

    runs = {
        arm: [
            make_summary(
                id=f"{arm}{i}",
                arm=arm,
                seed=i,
                finals={"acc": float(v + i / 100), "seed": float(i), "is_resumed": 0.0},
                curves={m: {"steps": [0.0, 1.0], "values": [0.0, 1.0]} for m in ("acc", "seed", "is_resumed")},
                flags=["is_resumed"],
            )
            for i in range(3)
        ]
        for arm, v in (("full", 0.5), ("no-x", 0.4))
    }
    group = ArmGroup(("s", "", ""), "g", "g", ["full", "no-x"], "full", runs, "acc")
    views = arms_metrics(group, DIRECTION, 10, arm_stats(group, True, 10))
    assert [v.metric for v in views] == ["acc"]
