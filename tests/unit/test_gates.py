"""Gates: parsing the obs.yaml expressions, evaluating them on summaries, and obs.yaml validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from obs.analysis.gates import FAIL, NA, PASS, GateError, evaluate_gate, parse_gate
from obs.config import load_config
from obs.diagnostics import Diagnostics
from obs.sitemodel import RunSummary
from summaries import make_summary


def summary(**kw: Any) -> RunSummary:
    return make_summary(**kw)


@pytest.mark.parametrize(
    ("expr", "kind", "ref", "op", "value", "agg", "scope"),
    [
        ("renderable >= 1.0", "compare", "renderable", ">=", 1.0, None, None),
        ("renderable = 100%", "compare", "renderable", "==", 1.0, None, None),
        ("min family exact >= 0.5", "compare", "exact", ">=", 0.5, "min", "family"),
        ("min family.exact >= 50%", "compare", "exact", ">=", 0.5, "min", "family"),
        ("max splits truncated < 0.1", "compare", "truncated", "<", 0.1, "max", "split"),
        ("final.loss <= 2e-1", "compare", "final.loss", "<=", 0.2, None, None),
    ],
)
def test_comparisons_parse(
    expr: str, kind: str, ref: str, op: str, value: float, agg: str | None, scope: str | None
) -> None:
    g = parse_gate(expr)
    assert (g.kind, g.ref, g.op, g.agg, g.scope) == (kind, ref, op, agg, scope)
    assert g.value == pytest.approx(value)


def test_other_forms_parse() -> None:
    assert parse_gate("diagnosis rule reward_variance_collapse not fired").rule == "reward_variance_collapse"
    assert not parse_gate("rule grad_spikes not fired").fired_ok
    assert parse_gate("gate.json passed").kind == "gate"
    assert parse_gate("compiler gate passed").kind == "gate"
    assert parse_gate("held constant clean").kind == "held"
    assert parse_gate("renderable >= 1", name="r", label="Renderable").label == "Renderable"


@pytest.mark.parametrize("bad", ["", "renderable", "renderable >= lots", "rule x maybe", ">= 3"])
def test_unreadable_gates_say_what_was_expected(bad: str) -> None:
    with pytest.raises(GateError, match=r"expected|needs an expression"):
        parse_gate(bad)


def test_probe_rate_gate() -> None:
    g = parse_gate("renderable >= 100%")
    assert evaluate_gate(g, summary(rates={"renderable": 1.0})).status == PASS
    r = evaluate_gate(g, summary(rates={"renderable": 0.825}))
    assert r.status == FAIL and r.value == pytest.approx(0.825)
    assert "82.5%" in r.detail and "100.0%" in r.detail
    assert evaluate_gate(g, summary()).status == NA  # no probe: not a pass


def test_weakest_family_gate_names_the_family() -> None:
    g = parse_gate("min family exact >= 0.5")
    s = summary(family_rates={"exact": {"a": 0.9, "b": 0.1875, "c": 0.6}})
    r = evaluate_gate(g, s)
    assert r.status == FAIL and r.value == pytest.approx(0.1875) and "b" in r.detail
    assert evaluate_gate(parse_gate("mean family exact >= 0.5"), s).value == pytest.approx((0.9 + 0.1875 + 0.6) / 3)
    assert evaluate_gate(g, summary()).status == NA


def test_rule_gates_need_the_data_the_rule_reads() -> None:
    g = parse_gate("rule reward_variance_collapse not fired")
    assert evaluate_gate(g, summary()).status == NA  # no reward series: the canary was never checked
    assert evaluate_gate(g, summary(has={"reward": True})).status == PASS
    fired = summary(has={"reward": True}, findings=["reward_variance_collapse"])
    assert evaluate_gate(g, fired).status == FAIL
    # a probe rule is judged whenever it fired or a probe exists
    probe_rule = parse_gate("rule family_imbalance not fired")
    assert evaluate_gate(probe_rule, summary(findings=["family_imbalance"])).status == FAIL


def test_gate_json_and_held_constant_gates() -> None:
    g = parse_gate("gate.json passed")
    assert evaluate_gate(g, summary(gate_passed=True, has={"gate": True})).status == PASS
    assert evaluate_gate(g, summary(gate_passed=False, has={"gate": True})).status == FAIL
    assert evaluate_gate(g, summary()).status == NA
    h = parse_gate("held constant clean")
    assert evaluate_gate(h, summary(held_constant_clean=True)).status == PASS
    assert evaluate_gate(h, summary(held_constant_clean=False)).status == FAIL
    assert evaluate_gate(h, summary()).status == NA


def test_final_headline_and_delta_gates() -> None:
    s = summary(finals={"loss": 0.31}, delta={"delta": -0.02})
    assert evaluate_gate(parse_gate("final.loss <= 0.3"), s).status == FAIL
    assert evaluate_gate(parse_gate("loss < 0.5"), s).status == PASS  # a bare name falls back to finals
    assert evaluate_gate(parse_gate("headline >= 0.7"), s).status == PASS
    assert evaluate_gate(parse_gate("delta >= 0"), s).status == FAIL
    assert evaluate_gate(parse_gate("final.reward <= 1"), s).status == NA


def test_obs_yaml_gates_are_validated(tmp_path: Path) -> None:
    (tmp_path / "obs.yaml").write_text(
        "gates:\n"
        "  - renderable >= 100%\n"
        "  - {name: fam, label: no family below half, expr: min family exact >= 0.5}\n"
        "  - {expr: renderable is great}\n"
        "  - {name: fam, expr: gate.json passed}\n"
        "  - 42\n"
    )
    diags = Diagnostics(root=tmp_path)
    cfg = load_config(tmp_path, diags)
    assert [g["name"] for g in cfg.gates] == ["renderable-100", "fam"]
    assert cfg.gates[1]["label"] == "no family below half"
    messages = [d.message for d in diags.items]
    assert any("cannot read gate 'renderable is great'" in m for m in messages)
    assert any("used twice" in m for m in messages)
    assert any("gate 5 should be a string" in m for m in messages)
    assert all(d.severity == "warning" for d in diags.items)


def test_obs_yaml_gates_must_be_a_list(tmp_path: Path) -> None:
    (tmp_path / "obs.yaml").write_text("gates: renderable >= 1\n")
    diags = Diagnostics(root=tmp_path)
    assert load_config(tmp_path, diags).gates == []
    assert diags.items and diags.items[0].line == 1
