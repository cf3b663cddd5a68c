"""Issue 24, "advice names the file of that format": a run read from HF Trainer or W&B files is not told to add
metrics.jsonl or probe.jsonl; advice names the format's own records, or a run.yaml beside its files."""

from __future__ import annotations

import pytest
from adapterkit import DATA_CORPUS
from test_sections import page_of

from obs.analysis.advice import NATIVE
from obs.pipeline import SourceTree, advice_files, load_report

HF_RUN = ("trainer_state", "subro608__Deep_learning_Bert_project2")
WANDB_RUN = ("wandb", "tsebaka__T-Lab-2024-LLM-Alignment/wandb/run-20241216_135818-xmayk974")  # config.yaml only


def _page(kind: str, run_id: str):  # type: ignore[no-untyped-def]
    return page_of(load_report(SourceTree.open(DATA_CORPUS / kind), run_id))


def test_an_hf_trainer_run_is_told_to_log_its_stage_in_log_history() -> None:
    soup = _page(*HF_RUN)
    cause, action = soup.find(id="finding-missing_stage_labels").select("dl.ca dd")
    assert cause.get_text().startswith("Telemetry bookkeeping")
    assert action.get_text(" ", strip=True).startswith(
        "Log a `stage` field in the `log_history` entries of trainer_state.json;"
    )
    assert "metrics.jsonl" not in soup.get_text(" ")  # before: "on every metrics.jsonl line"


def test_a_wandb_run_without_history_is_sent_to_wandb_log_and_a_run_yaml_beside_it() -> None:
    soup = _page(*WANDB_RUN)
    tile = soup.find(id="headline-metric").get_text(" ", strip=True)
    assert (
        "no metric found: nothing read from this run is an outcome or a loss; log one in the run's history "
        "(wandb.log), or set primary_metric in a run.yaml beside the run's files/ folder"
    ) in tile
    curves = soup.find(id="curves").get_text(" ", strip=True)
    assert "no series was read from this run: log step, loss, grad_norm, lr, ... in the run's history (wandb.log)" in (
        curves
    )
    diagnosis = soup.find(id="diagnosis").get_text(" ", strip=True)
    assert (
        "log metrics in the run's history (wandb.log); for the scoreboard, add probe.jsonl (one case per line) and "
        "a run.yaml beside the run's files/ folder"
    ) in diagnosis
    assert "metrics.jsonl" not in soup.get_text(" ")  # before: headline, curves and diagnosis said "add metrics.jsonl"


def test_per_item_advice_names_lm_evals_samples_files_and_a_run_yaml_beside_a_json_log() -> None:
    soup = _page("lm_eval", "saucam__model_evals/saucam/Orpomis-Prime-7B/openllm/mmlu")
    samples = "per-item cases come from the samples_<task>_<date>.jsonl files lm-eval writes beside the results"
    for sid in ("probe", "failures", "diagnosis"):
        assert samples in soup.find(id=sid).get_text(" ", strip=True), sid
    assert "probe.jsonl" not in soup.get_text(" ")  # before: "add probe.jsonl (...) to the run folder"
    soup = _page("metrics_jsonl", "Mark-Joseph-42__JurisSim")
    for sid in ("probe", "failures"):
        text = soup.find(id=sid).get_text(" ", strip=True)
        assert "add probe.jsonl (one case per line) and a run.yaml beside the log (alone in its folder)" in text
        assert "to the run folder" not in text


@pytest.mark.parametrize(
    ("adapter", "declare", "records"),
    [
        ("hf_trainer", "a run.yaml beside trainer_state.json", "the `log_history` entries of trainer_state.json"),
        ("native+hf_trainer", "run.yaml", "the `log_history` entries of trainer_state.json"),
        ("wandb", "a run.yaml beside the run's files/ folder", "the run's history (wandb.log)"),
        ("mlflow", "obs.yaml", ""),  # an mlruns folder takes no run.yaml
        ("tensorboard", "a run.yaml beside the event files", ""),
    ],
)
def test_advice_files_follow_what_each_format_holds(adapter: str, declare: str, records: str) -> None:
    advice = advice_files(adapter)
    assert (advice.declare, advice.records, advice.native) == (declare, records, False)
    assert "metrics.jsonl" not in advice.no_metric() + advice.stage_field()
    assert declare in advice.no_metric()


def test_a_native_run_keeps_its_own_files_in_the_advice() -> None:
    assert advice_files("native") is NATIVE
    assert NATIVE.no_metric() == "no metric found: add probe.jsonl or metrics.jsonl, or set primary_metric"
    assert "every metrics.jsonl line" in NATIVE.stage_field()
    assert "hold no stage labels" in advice_files("tensorboard").stage_field()  # TB scalars take no text label
