"""run.yaml beside another format's files: the data comes from that format, run.yaml is laid on top."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from adapterkit import DATA_CORPUS, at, load_all

from obs.discover import discover

CORPUS = DATA_CORPUS


def test_run_yaml_over_a_trainer_state(tmp_path: Path) -> None:
    folder = tmp_path / "grpo"
    shutil.copytree(CORPUS / "trainer_state/srinath-manda__IITD_Feb26_AAIPL/outputs", folder)
    (folder / "run.yaml").write_text(
        "id: grpo-aaipl\ntitle: GRPO on game play\nhypothesis: two rewards beat one\n"
        "config: {beta: 0.0}\ndecision: {verdict: promote, rationale: fine}\n"
    )
    found = discover(tmp_path)
    (claim,) = found.claims
    assert claim.adapter == "native" and claim.notes == ("run.yaml overlaid on hf_trainer files",)
    (run, diags) = load_all(tmp_path)["grpo"]
    assert run.adapter == "native+hf_trainer"
    assert run.id == "grpo-aaipl" and run.title == "GRPO on game play"
    assert run.hypothesis == "two rewards beat one"
    assert run.verdict == "promote"
    assert run.config == {"beta": 0.0}  # run.yaml's mapping wins
    assert at(run, "frac_reward_zero_std", 500) == 0.7  # the data still comes from trainer_state.json
    assert run.provenance["trainer_state"] == "checkpoint-500/trainer_state.json"
    assert not [d for d in diags.items if d.severity != "info"]


def test_metrics_file_and_step_key_use_the_generic_reader(tmp_path: Path) -> None:
    folder = tmp_path / "orpo"
    folder.mkdir()
    shutil.copy(CORPUS / "metrics_jsonl/chandlerzuo__rlhf_recsys/outputs/trainer_log.jsonl", folder)
    (folder / "run.yaml").write_text("metrics_file: trainer_log.jsonl\nstep_key: current_steps\n")
    (folder / "other.jsonl").write_text('{"step": 1, "x": 1}\n')
    found = discover(tmp_path)
    assert found.claims[0].notes == ()  # named file: the generic adapter is not asked to claim the folder
    (run, diags) = load_all(tmp_path)["orpo"]
    assert run.adapter == "native"
    assert run.metrics is not None and run.metrics.step_source == "current_steps"
    assert at(run, "elapsed_time", 336) == 789.0
    assert at(run, "loss", 10) == 1.0495
    assert not [d for d in diags.items if d.severity != "info"]


def test_metrics_file_json_array(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "hist.json").write_text(json.dumps([{"it": 1, "loss": 2.0}, {"it": 2, "loss": 1.0}]))
    (folder / "run.yaml").write_text("metrics_file: hist.json\nstep_key: it\n")
    (run, _) = load_all(tmp_path)["r"]
    assert at(run, "loss", 2) == 1.0


def test_native_metrics_stay_native_and_missing_file_is_reported(tmp_path: Path) -> None:
    native = tmp_path / "n"
    native.mkdir()
    (native / "run.yaml").write_text("title: plain\n")
    (native / "metrics.jsonl").write_text('{"step": 0, "loss": 1.0}\n')
    (native / "probe.jsonl").write_text('{"id": "a", "exact": true}\n')
    (native / "samples.jsonl").write_text('{"id": 1, "ok": true}\n')
    missing = tmp_path / "m"
    missing.mkdir()
    (missing / "run.yaml").write_text("title: x\nmetrics_file: nowhere.jsonl\n")
    runs = load_all(tmp_path)
    run, diags = runs["n"]
    assert run.adapter == "native" and at(run, "loss", 0) == 1.0 and run.probe is not None
    assert not diags.items
    _, diags = runs["m"]
    (warning,) = [d for d in diags.items if d.severity == "warning"]
    assert warning.line == 2 and "nowhere.jsonl" in warning.message


def test_probe_only_folder_is_not_delegated(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "run.yaml").write_text("title: probe only\n")
    (folder / "probe.jsonl").write_text('{"id": "a", "exact": true}\n')
    (run, _) = load_all(tmp_path)["p"]
    assert run.adapter == "native" and run.probe is not None and len(run.probe.cases) == 1


def test_mixed_tree_one_discovery(tmp_path: Path) -> None:
    """Native runs, an HF output folder, an mlruns tree, lm-eval, W&B and a generic log: one pass."""
    (tmp_path / "native").mkdir()
    (tmp_path / "native" / "run.yaml").write_text("title: native run\n")
    (tmp_path / "native" / "metrics.jsonl").write_text('{"step": 0, "loss": 1.0}\n')
    shutil.copytree(CORPUS / "trainer_state/202520030411__Distill-Safety-Aligned-Models/outputs/dpo", tmp_path / "dpo")
    shutil.copytree(CORPUS / "mlflow/1010sb__ImageClass/mlruns", tmp_path / "mlruns")
    shutil.copytree(CORPUS / "lm_eval/saucam__model_evals/saucam/Orpomis-Prime-7B/openllm", tmp_path / "evals")
    shutil.copytree(CORPUS / "wandb/Sustella__qwen_sapiens/wandb", tmp_path / "wandb")
    shutil.copytree(CORPUS / "metrics_jsonl/akawslearn-ai__slm_training", tmp_path / "slm")
    found = discover(tmp_path)
    by_adapter = sorted((c.adapter, c.runs) for c in found.claims)
    assert by_adapter == [
        ("generic_jsonl", 1),
        ("hf_trainer", 1),
        ("lm_eval", 2),
        ("mlflow", 1),
        ("native", 1),
        ("wandb", 1),
    ]
    runs = load_all(tmp_path)
    assert len(runs) == 7
    assert {r.adapter for r, _ in runs.values()} == {
        "native",
        "hf_trainer",
        "mlflow",
        "lm_eval",
        "wandb",
        "generic_jsonl",
    }
    assert not [d for _, diags in runs.values() for d in diags.items if d.severity == "error"]
