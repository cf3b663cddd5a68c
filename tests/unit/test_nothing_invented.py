"""Issue 16, "invented defaults": a status no source gives is `unknown`, start-time metadata is not trusted
against a summary written later, and values a reader cannot show are announced, not dropped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from adapterkit import DATA_CORPUS, load_all, write

from obs.model import Run

HF = DATA_CORPUS / "trainer_state"
WANDB = DATA_CORPUS / "wandb"


def _state(folder: Path, history: list[dict], **fields: object) -> None:
    write(folder / "trainer_state.json", json.dumps({"log_history": history, **fields}))


def _only(root: Path) -> Run:
    (run, _), *rest = load_all(root).values()
    assert not rest
    return run


def test_a_run_no_source_describes_is_unknown_not_finished(tmp_path: Path) -> None:
    write(tmp_path / "log" / "metrics.jsonl", '{"step": 1, "loss": 2.0}\n{"step": 2, "loss": 1.0}\n')
    assert _only(tmp_path).status == "unknown"


def test_trainer_state_status_from_the_state_itself(tmp_path: Path) -> None:
    rows = [{"step": 5, "loss": 1.0}, {"step": 10, "loss": 0.5}]
    _state(tmp_path / "a", rows, global_step=10, max_steps=10)
    _state(tmp_path / "b", rows, global_step=10, max_steps=1000)
    _state(tmp_path / "c", [*rows, {"step": 10, "train_runtime": 3.0, "train_loss": 0.7}], global_step=10)
    _state(tmp_path / "d", rows, global_step=10)
    runs = {k: r for k, (r, _) in load_all(tmp_path).items()}
    assert runs["a"].status == "finished"  # reached max_steps
    assert runs["b"].status == "unknown"  # a checkpoint at step 10 of 1000
    assert runs["c"].status == "finished"  # Trainer's end-of-training summary entry
    assert runs["d"].status == "unknown"


def test_corpus_checkpoint_snapshot_is_not_finished() -> None:
    runs = {k.rsplit("/", 1)[-1]: r for k, (r, _) in load_all(HF / "HaoranLuo__text2sql-grpo").items()}
    assert runs["trainer_state_1000steps"].status == "finished"  # global_step 1000 of max_steps 1000
    assert runs["trainer_state_checkpoint-25"].status == "unknown"  # step 25 of 75


def test_wandb_start_time_running_is_not_trusted_against_a_later_summary(tmp_path: Path) -> None:
    src = WANDB / "tsebaka__T-Lab-2024-LLM-Alignment" / "wandb" / "run-20241216_113020-wvk49vqj"
    run_dir = tmp_path / "wandb" / src.name
    shutil.copytree(src, run_dir)
    meta = json.loads((run_dir / "files" / "wandb-metadata.json").read_text())
    (run_dir / "files" / "wandb-metadata.json").write_text(json.dumps({**meta, "state": "running"}))
    run = _only(tmp_path)
    assert run.status == "unknown"
    assert any("says 'running'" in n and "1220.36 s of runtime" in n for n in run.notices)
    (run_dir / "files" / "wandb-summary.json").unlink()
    assert _only(tmp_path).status == "running"  # nothing contradicts it
    crashed = WANDB / "tsebaka__T-Lab-2024-LLM-Alignment" / "wandb" / "run-20241216_111704-k5u8xpy9"
    shutil.copytree(crashed, tmp_path / "c" / crashed.name)
    assert _only(tmp_path / "c").status == "unknown"  # a summary of only {"_wandb": {"runtime": 436}}


def test_wandb_summary_values_that_are_not_numbers_are_announced(tmp_path: Path) -> None:
    files = tmp_path / "wandb" / "run-20240101_000000-abc123" / "files"
    summary = {
        "loss": 0.5,
        "samples": {"_type": "table-file", "path": "media/table/x.json"},
        "img": {"_type": "image-file", "path": "media/images/a.png"},
        "status_text": "converged",
        "_wandb": {"runtime": 3},
    }
    write(files / "wandb-summary.json", json.dumps(summary))
    run = _only(tmp_path)
    assert run.summary["loss"] == 0.5
    (notice,) = [n for n in run.notices if "not numbers" in n]
    assert "3 value(s)" in notice and "samples (table-file)" in notice and "img (image-file)" in notice
    assert "status_text (text 'converged')" in notice
