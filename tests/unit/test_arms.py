"""Ablation arms: grouping, the reference arm, curves per arm, and the comparison (checked against scipy)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from obs.analysis.arms import arm_curves, arm_groups, arm_stats, arm_value, curve_metrics, pick_reference
from obs.sitemodel import RunSummary
from summaries import make_summary


def s(rid: str, arm: str | None, seed: int | None, f1: float | None, **kw: Any) -> RunSummary:
    out: dict[str, Any] = {
        "id": rid,
        "spec": kw.pop("spec", "onto"),
        "campaign": kw.pop("campaign", None),
        "condition": kw.pop("condition", None),
        "arm": arm,
        "seed": seed,
        "headline": {"metric": "relational_f1", "value": f1},
        "finals": {"relational_f1": f1} if f1 is not None else {},
        "last_step": 1500.0,
        "curves": kw.pop("curves", None),
    }
    out.update(kw)
    return make_summary(**out)


FULL = [0.61, 0.59, 0.60, 0.62]
NO_ONTO = [0.47, 0.45, 0.48, 0.46]
NO_SCHEMA = [0.55, 0.57, 0.54, 0.58]


def demo() -> list[RunSummary]:
    out = []
    for arm, values in (("no-schema", NO_SCHEMA), ("full", FULL), ("no-ontology", NO_ONTO)):
        out += [s(f"{arm}_s{i + 1}", arm, i + 1, v) for i, v in enumerate(values)]
    out.append(s("lonely", "full", 1, 0.5, spec="other"))  # one arm only in its spec: no group
    out.append(s("plain", None, 1, 0.5))  # no arm: not an arm run
    return out


def test_groups_need_two_arms_and_put_the_reference_first() -> None:
    (g,) = arm_groups(demo())
    assert g.key == ("onto", "", "")
    assert g.arms == ["full", "no-ontology", "no-schema"]
    assert g.baseline_arm == "full" and g.metric == "relational_f1"
    assert [r.id for r in g.runs["full"]] == ["full_s1", "full_s2", "full_s3", "full_s4"]
    assert g.seeds == [1, 2, 3, 4] and g.n_runs == 12


def test_groups_split_by_spec_campaign_and_condition() -> None:
    runs = [
        s("a", "x", 1, 0.1, condition="c1"),
        s("b", "y", 1, 0.2, condition="c1"),
        s("c", "x", 1, 0.3, condition="c2"),
    ]
    groups = arm_groups(runs)
    assert [g.key for g in groups] == [("onto", "", "c1")]


def test_reference_arm_choice() -> None:
    assert pick_reference(["a", "b"], "b") == "b"
    assert pick_reference(["no-x", "full"], None) == "full"
    assert pick_reference(["no-x", "control"], None) == "control"
    assert pick_reference(["zeta", "alpha"], "missing") == "alpha"
    (g,) = arm_groups(demo(), reference="no-schema")
    assert g.arms[0] == "no-schema"


def test_arm_value_prefers_the_final_window_then_the_headline() -> None:
    assert arm_value(make_summary(finals={"m": 0.3}, headline={"metric": "m", "value": 0.9}), "m") == 0.3
    assert arm_value(make_summary(finals={}, headline={"metric": "m", "value": 0.9}, rates={}), "m") == 0.9
    assert arm_value(make_summary(headline={"metric": None, "value": None}, rates={"exact": 0.4}), "exact") == 0.4


def test_arm_comparison_matches_scipy() -> None:
    (g,) = arm_groups(demo())
    st = arm_stats(g, higher_is_better=True, final_window=10)
    assert st.baseline_condition == "full"
    by = {c.condition: c for c in st.candidates}
    for name, values in (("no-ontology", NO_ONTO), ("no-schema", NO_SCHEMA)):
        c = by[name]
        assert c.delta == pytest.approx(np.mean(values) - np.mean(FULL))
        ref = sps.ttest_ind(values, FULL, equal_var=False)
        assert c.p_value == pytest.approx(ref.pvalue, abs=1e-12)
        ci = ref.confidence_interval(0.95)
        assert c.welch.interval is not None
        assert (c.welch.interval.low, c.welch.interval.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
        pooled = np.sqrt((np.var(values, ddof=1) + np.var(FULL, ddof=1)) / 2)
        j = 1 - 3 / (4 * (len(values) + len(FULL)) - 9)  # Hedges' approximation of J
        assert c.hedges_g == pytest.approx((np.mean(values) - np.mean(FULL)) / pooled * j, rel=3e-3)
    # Holm over the two arms: the smaller p is doubled, the larger is max(2 p1, p2)
    ps = sorted(c.p_value for c in st.candidates)
    assert sorted(c.p_adjusted for c in st.candidates) == pytest.approx(
        [min(1, 2 * ps[0]), min(1, max(2 * ps[0], ps[1]))]
    )


def test_arm_curves_are_numpy_mean_and_sd_over_seeds() -> None:
    steps = [0.0, 50.0, 100.0]
    runs = [
        s("f1", "full", 1, 0.6, curves={"f1": {"steps": steps, "values": [0.1, 0.4, 0.6]}}),
        s("f2", "full", 2, 0.6, curves={"f1": {"steps": steps, "values": [0.1, 0.5, 0.7]}}),
        s(
            "n1",
            "none",
            1,
            0.4,
            curves={"f1": {"steps": steps, "values": [0.1, 0.2, 0.4]}, "loss": {"steps": steps, "values": [3, 2, 1]}},
        ),
    ]
    (g,) = arm_groups(runs)
    assert curve_metrics(g) == ["f1"]  # loss is not logged by every arm
    curves = {c.arm: c for c in arm_curves(g, "f1")}
    full = curves["full"]
    assert full.n == 2 and full.steps[0] == 0.0 and full.steps[-1] == 100.0
    assert full.mean[-1] == pytest.approx(0.65)
    assert full.sd is not None and full.sd[-1] == pytest.approx(float(np.std([0.6, 0.7], ddof=1)))
    assert curves["none"].sd is None and curves["none"].n == 1
