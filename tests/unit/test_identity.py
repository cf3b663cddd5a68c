"""Issue 26, "identity and state lost": a trainer state under another name, W&B's newer metadata in
config.yaml (`_wandb.e`), ground-truth fields (`gt`, ...) as the expected output. Fixtures written here."""

from __future__ import annotations

import json
from pathlib import Path

from adapterkit import load_all, write


def _state() -> dict:
    log = [
        {"step": s, "epoch": s / 100, "loss": 2 - s / 100, "learning_rate": 1e-4, "grad_norm": 1.0}
        for s in range(10, 110, 10)
    ]
    log.append({"step": 100, "epoch": 1.0, "train_runtime": 60.0, "train_loss": 1.5, "total_flos": 1.0})
    state = {
        "best_metric": None,
        "best_model_checkpoint": None,
        "epoch": 1.0,
        "eval_steps": 50,
        "global_step": 100,
        "is_hyper_param_search": False,
        "is_local_process_zero": True,
        "is_world_process_zero": True,
        "log_history": log,
        "logging_steps": 10,
        "max_steps": 100,
        "num_train_epochs": 1,
        "save_steps": 50,
        "train_batch_size": 8,
        "trial_name": None,
    }
    return dict(sorted(state.items()))  # the Trainer writes its keys sorted


def test_a_trainer_state_under_another_name_is_read_as_one(tmp_path: Path) -> None:
    write(tmp_path / "exp" / "run_0417_state.json", json.dumps(_state(), indent=2))
    (run, _), *_ = load_all(tmp_path).values()
    assert run.adapter == "hf_trainer"
    assert run.status == "finished"  # global_step reached max_steps: lost when read as a plain list of records
    assert run.config.get("max_steps") == 100
    assert run.summary.get("train_loss") == 1.5


CONFIG_YAML = """\
wandb_version: 1
_wandb:
  value:
    cli_version: 0.21.0
    e:
      abc123writer:
        startedAt: "2025-05-06T07:08:09.123456Z"
        program: /home/user/train.py
        codePath: train.py
        git:
          commit: 0123456789abcdef0123456789abcdef01234567
          remote: https://example.org/lab/repo.git
        python: CPython 3.11.9
        gpu: NVIDIA A100-SXM4-80GB
        gpu_count: 8
        email: someone@example.org
learning_rate:
  value: 0.0003
"""


def test_wandb_metadata_in_config_yaml_is_read(tmp_path: Path) -> None:
    files = tmp_path / "wandb" / "run-20250506_070809-abc123" / "files"
    write(files / "config.yaml", CONFIG_YAML)
    write(files / "wandb-summary.json", json.dumps({"eval/accuracy": 0.8, "_runtime": 100.0, "_step": 10}))
    (run, _), *_ = load_all(tmp_path).values()
    assert run.adapter == "wandb"
    assert run.date == "2025-05-06T07:08:09.123456Z"  # UTC, not the folder's local time stamp
    assert run.provenance["code_commit"] == "0123456789abcdef0123456789abcdef01234567"
    assert run.provenance["gpu_count"] == 8
    assert "someone@example.org" not in json.dumps(run.provenance)  # personal fields stay out


def test_gt_is_the_expected_output_and_answer_beside_it_the_models(tmp_path: Path) -> None:
    rows = [
        {"id": i, "question": f"2+{i}?", "answer": str(2 + i + (i % 3 == 0)), "gt": str(2 + i), "correct": i % 3 != 0}
        for i in range(12)
    ]
    write(tmp_path / "ev" / "outputs.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    (run, _), *_ = load_all(tmp_path).values()
    assert run.probe is not None
    case = next(c for c in run.probe.cases if str(c.id) == "3")
    assert case.expected == "5" and case.actual == "6"
