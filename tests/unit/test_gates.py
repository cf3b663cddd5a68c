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
    # an unreadable gate is an error (it would read n/a on every run); a bad entry's shape is a warning
    assert {d.severity for d in diags.items if "cannot read gate" in d.message} == {"error"}


def test_obs_yaml_gates_must_be_a_list(tmp_path: Path) -> None:
    (tmp_path / "obs.yaml").write_text("gates: renderable >= 1\n")
    diags = Diagnostics(root=tmp_path)
    assert load_config(tmp_path, diags).gates == []
    assert diags.items and diags.items[0].line == 1


# ------------------------------------------------------------------ composite gates (issue 27)


def test_and_or_with_parentheses_parse_with_and_binding_tighter() -> None:
    g = parse_gate("renderable >= 100% and exact >= 0.7 or ci_low(delta) > 0")
    assert g.kind == "any" and [p.kind for p in g.parts] == ["all", "compare"]
    assert [p.ref for p in g.parts[0].parts] == ["renderable", "exact"]
    assert (g.parts[1].func, g.parts[1].ref, g.parts[1].op) == ("ci_low", "delta", ">")
    g = parse_gate("renderable >= 100% and (exact >= 0.7 or ci_low(delta) > 0)")
    assert g.kind == "all" and [p.kind for p in g.parts] == ["compare", "any"]
    r = parse_gate("exact >= baseline.exact + 0.03")
    assert (r.ref, r.rhs_ref, r.value) == ("exact", "baseline.exact", pytest.approx(0.03))
    assert parse_gate("split.test.exact >= 70%").ref == "split.test.exact"
    assert parse_gate("check fam").check == "fam"


@pytest.mark.parametrize(
    "bad",
    [
        "delta.ci_low > 0",  # the two: unknown forms that read n/a on every run
        "rate.test.exact >= 0.7",
        "ci_low(exact) > 0",
        "renderable >= 100% and",
        "(exact >= 0.7",
        "exact >= 0.7 exact >= 0.5",
        "exact >= renderable",  # a bare name on the right: only another run's value
        "exact >= run:.exact",
    ],
)
def test_unknown_references_and_broken_expressions_are_errors(bad: str) -> None:
    with pytest.raises(GateError):
        parse_gate(bad)


def test_composite_evaluation_is_three_valued() -> None:
    s = summary(rates={"renderable": 1.0, "exact": 0.6})
    assert evaluate_gate(parse_gate("renderable >= 100% and exact >= 0.7"), s).status == FAIL
    assert evaluate_gate(parse_gate("renderable >= 100% or exact >= 0.7"), s).status == PASS
    assert evaluate_gate(parse_gate("exact >= 0.7 or final.loss < 1"), s).status == NA  # no loss: not a fail
    assert evaluate_gate(parse_gate("exact >= 0.7 and final.loss < 1"), s).status == FAIL  # a fail decides
    r = evaluate_gate(parse_gate("renderable >= 100% and (exact >= 0.7 or exact >= 0.5)"), s)
    assert r.status == PASS and "(probe rate renderable = 100.0%" in r.detail


def test_interval_bounds_and_references_to_other_runs() -> None:
    from obs.analysis.gates import GateContext

    ci = {"low": 0.01, "high": 0.09, "level": 0.95}
    delta = {"baseline": "b", "delta": 0.05, "ci": ci, "verdict": "statistically_significant_improvement"}
    s = summary(id="r2", spec="s", baseline="r1", rates={"exact": 0.75}, delta=delta)
    base = summary(id="r1", spec="s", rates={"exact": 0.70})
    ctx = GateContext({"r1": base, "r2": s}, {"s": "r1"})
    assert evaluate_gate(parse_gate("ci_low(delta) > 0"), s, ctx).status == PASS
    assert evaluate_gate(parse_gate("ci_high(delta) < 0.05"), s, ctx).status == FAIL
    assert evaluate_gate(parse_gate("frozen.delta >= 0.05"), s, ctx).status == PASS  # the parent is the frozen one
    r = evaluate_gate(parse_gate("exact >= baseline.exact + 0.03"), s, ctx)
    assert r.status == PASS and "baseline r1 probe rate exact 70.0% + 3.0%" in r.detail
    assert evaluate_gate(parse_gate("exact >= run:r1.exact + 0.1"), s, ctx).status == FAIL
    assert evaluate_gate(parse_gate("exact >= run:r9.exact"), s, ctx).status == NA  # not in this build
    untested = summary(delta={**delta, "ci": None, "verdict": "not_tested"})
    assert evaluate_gate(parse_gate("ci_low(delta) > 0"), untested).status == NA


def test_a_check_reads_a_gate_above_it(tmp_path: Path) -> None:
    from obs.analysis.gates import evaluate_gates, gate_specs_from

    (tmp_path / "obs.yaml").write_text(
        "gates:\n"
        "  - {name: render, expr: renderable >= 100%}\n"
        "  - {name: both, expr: check render and exact >= 0.5}\n"
        "  - {name: early, expr: check later}\n"
        "  - {name: bad, expr: delta.ci_low > 0}\n"
    )
    diags = Diagnostics(root=tmp_path)
    cfg = load_config(tmp_path, diags)
    assert [g["name"] for g in cfg.gates] == ["render", "both"]
    errors = [d for d in diags.items if d.severity == "error"]
    assert len(errors) == 2 and all(d.line == 1 for d in errors)  # obs.yaml:1, the gates key
    assert any("'check later' names no gate above it" in d.message for d in errors)
    assert any("unknown reference 'delta.ci_low'" in d.message for d in errors)
    results = evaluate_gates(gate_specs_from(cfg.gates), summary(rates={"renderable": 0.9, "exact": 0.8}))
    assert [r.status for r in results] == [FAIL, FAIL]


def test_a_run_reference_to_a_run_not_in_the_tree_is_an_error_at_obs_check(tmp_path: Path) -> None:
    from obs.pipeline import SourceTree

    (tmp_path / "obs.yaml").write_text("title: t\ngates:\n  - exact >= run:nope.exact\n")
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "run.yaml").write_text("id: r1\n")
    tree = SourceTree.open(tmp_path)
    (err,) = [d for d in tree.diags.items if d.severity == "error"]
    assert "run:nope is not a run in this source tree" in err.message and err.line == 2
