"""Seed 003's diagnostic matrix and seed 001's watch metrics as rules (analysis.diagnose_matrix): each rule
fires on a synthetic input with its numbers in the evidence, stays silent on a close one, and reads its
threshold from obs.yaml."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from test_diagnose import cases, falling_loss, metrics, run_rules

from obs.config import SiteConfig
from obs.model import Stage

CFG = SiteConfig()


def test_a_check_null_on_every_case_is_a_plumbing_bug() -> None:
    probe = cases(44, exact=30)
    f = run_rules(probe, extra={"n_cases": 44, "null_checks": {"rendered_svg_ok": 44}})["probe_null_check"]
    assert f.severity == "problem" and "`rendered_svg_ok` is null on 44 of the 44 cases" in f.evidence[0]
    assert "exact 68.2%" in f.evidence[1]
    assert "probe_null_check" not in run_rules(probe, extra={"n_cases": 44, "null_checks": {"rendered_svg_ok": 43}})
    assert "probe_null_check" not in run_rules(probe, extra={"n_cases": 44, "null_checks": {"error": 44}})  # no error
    lenient = SiteConfig(thresholds={"null_check_share": 0.9})
    assert "probe_null_check" in run_rules(
        probe, cfg=lenient, extra={"n_cases": 44, "null_checks": {"rendered_svg_ok": 43}}
    )


def test_null_keys_are_counted_from_the_probe(tmp_path: Path) -> None:
    from obs.pipeline import SourceTree, load_report

    run = tmp_path / "r1"
    run.mkdir()
    (run / "run.yaml").write_text("id: r1\nstatus: finished\n")
    rows = [{"id": f"c{i}", "exact": i % 3 == 0, "rendered_svg_ok": None, "error": None} for i in range(44)]
    (run / "probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = load_report(SourceTree.open(tmp_path), "r1").report
    assert [f.rule for f in report.findings] == ["probe_null_check"]
    rows[5]["rendered_svg_ok"] = True
    (run / "probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert not load_report(SourceTree.open(tmp_path), "r1").report.findings  # computed on one case: not plumbing


def test_ck_and_pt_loss_disagree() -> None:
    loss = falling_loss(50)
    f = run_rules(None, metrics(ck_loss=loss * 1.05, pt_loss=loss))["loss_parity"]
    assert f.severity == "problem" and "5.0% apart; threshold 1.0%" in f.evidence[0] and "50 of 50" in f.evidence[1]
    assert "loss_parity" not in run_rules(None, metrics(ck_loss=loss * 1.005, pt_loss=loss))
    assert "loss_parity" not in run_rules(None, metrics(ck_loss=loss * 1.05))  # one implementation only


def test_a_loss_stuck_high_with_a_low_packing_fill_rate() -> None:
    flat = np.full(100, 0.9) + 0.001 * np.sin(np.arange(100))
    f = run_rules(None, metrics(loss=flat, packing_fill_rate=np.full(100, 0.62)))["packing_fill_low"]
    assert f.severity == "warning" and "62.0% < 85.0%" in f.evidence[1]
    assert "packing_fill_low" not in run_rules(None, metrics(loss=flat, packing_fill_rate=np.full(100, 0.93)))
    assert "packing_fill_low" not in run_rules(None, metrics(loss=flat * 0.3, packing_fill_rate=np.full(100, 0.6)))


def _staged(recover: bool) -> Any:
    y = np.concatenate([falling_loss(60, 0.4, tau=10), np.full(40, 0.42)])
    y[60:63] = [2.0, 1.6, 1.2]
    if not recover:
        y[63:] = 1.5
    return metrics([Stage("pretrain", 0, 590), Stage("midtrain", 600, 990)], loss=y)


def test_a_loss_spike_at_a_stage_boundary() -> None:
    f = run_rules(None, _staged(recover=True))["stage_boundary_spike"]
    assert (
        f.severity == "note"
        and "stage 'midtrain' from step 600" in f.evidence[0]
        and "back within 10%" in f.evidence[0]
    )
    f = run_rules(None, _staged(recover=False))["stage_boundary_spike"]
    assert f.severity == "warning" and "did not recover" in f.title
    calm = metrics([Stage("pretrain", 0, 590), Stage("midtrain", 600, 990)], loss=falling_loss(100))
    assert "stage_boundary_spike" not in run_rules(None, calm)


def test_gold_outputs_longer_than_the_context() -> None:
    f = run_rules(None, extra={"data": {"p95_output_tokens": 2793, "context": 512}})["gold_budget_over_context"]
    assert f.severity == "problem" and "2,793 tokens vs context 512" in f.evidence[0]
    assert "gold_budget_over_context" not in run_rules(None, extra={"data": {"p95_output_tokens": 380, "context": 512}})
    assert "gold_budget_over_context" not in run_rules(None, extra={"data": {"context": 512}})


def test_seed_001_watch_metrics() -> None:
    quiet = metrics(max_token_hit_rate=np.full(30, 0.05), num_datums=np.full(30, 64.0))
    assert not {"max_token_hits", "datums_drop"} & set(run_rules(None, quiet))
    hits = np.full(30, 0.05)
    hits[20] = 0.4
    f = run_rules(None, metrics(max_token_hit_rate=hits))["max_token_hits"]
    assert "40.0% at step 200" in f.evidence[0]
    datums = np.concatenate([np.full(20, 64.0), np.full(10, 12.0)])
    assert "datums_drop" in run_rules(None, metrics(num_datums=datums))
    uniform = run_rules(None, metrics(reward_uniform_group_rate=np.linspace(0.1, 0.8, 30)))
    assert "uniform_reward_groups" in uniform
    assert "uniform_reward_groups" not in run_rules(None, metrics(reward_uniform_group_rate=np.full(30, 0.2)))


def test_a_placeholder_loss_silences_the_loss_rules() -> None:
    flat = np.full(100, 0.9)
    assert "loss_plateau" in run_rules(None, metrics(loss=flat))
    found = run_rules(None, metrics(loss=flat, loss_is_placeholder=np.ones(100)))
    assert "placeholder_loss" in found and "loss_plateau" not in found
    assert "placeholder_loss" not in run_rules(None, metrics(loss=flat, loss_is_placeholder=np.zeros(100)))


def test_a_training_plan_still_active_after_the_run(tmp_path: Path) -> None:
    from obs.pipeline import SourceTree, load_report

    run = tmp_path / "r1"
    run.mkdir()
    (run / "run.yaml").write_text("id: r1\nstatus: finished\n")
    (run / "training_plan.json").write_text(json.dumps({"status": "active", "stage": "midtrain"}))
    f = {x.rule: x for x in load_report(SourceTree.open(tmp_path), "r1").report.findings}["plan_not_finalized"]
    assert f.severity == "note" and "status 'active', stage 'midtrain'; run.yaml: finished" in f.evidence[0]
    (run / "training_plan.json").write_text(json.dumps({"status": "completed", "stage": "midtrain"}))
    assert not load_report(SourceTree.open(tmp_path), "r1").report.findings
    (run / "run.yaml").write_text("id: r1\nstatus: running\n")
    (run / "training_plan.json").write_text(json.dumps({"status": "active"}))
    assert not load_report(SourceTree.open(tmp_path), "r1").report.findings  # still running: the plan is right
