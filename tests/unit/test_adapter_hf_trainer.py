"""Hugging Face Trainer states (incl. TRL GRPO/DPO/ORPO) read into the model: values, not just no crash."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from adapterkit import DATA_CORPUS, at, load_all, messages
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obs.adapters.hf_trainer import HfTrainerAdapter
from obs.diagnostics import Diagnostics
from obs.model import Run

CORPUS = DATA_CORPUS / "trainer_state"


def one(root: Path, id_part: str) -> tuple[Run, Diagnostics]:
    runs = load_all(root)
    matches = [v for k, v in runs.items() if id_part in k]
    assert len(matches) == 1, sorted(runs)
    return matches[0]


def write_state(folder: Path, history: list, **extra: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    state = {"global_step": extra.pop("global_step", 0), "log_history": history, **extra}
    path = folder / "trainer_state.json"
    path.write_text(json.dumps(state, indent=2))
    return path


# ---------------------------------------------------------------------------------------------------- corpus


def test_grpo_older_trl_keys_normalised_for_reward_health() -> None:
    run, diags = one(CORPUS, "trainer_state_checkpoint-25")
    source = json.loads(
        (CORPUS / "HaoranLuo__text2sql-grpo/visualization_1000/trainer_state_checkpoint-25.json").read_text()
    )
    first = source["log_history"][0]
    assert first["step"] == 5
    assert at(run, "reward", 5) == first["reward"]
    assert at(run, "reward_mean", 5) == first["reward"]  # the name the reward-health panel reads
    assert at(run, "reward_std", 5) == first["reward_std"]
    assert at(run, "rewards/reward_func", 5) == first["rewards/reward_func"]  # original kept
    assert at(run, "rewards/reward_func/mean", 5) == first["rewards/reward_func"]
    assert at(run, "completions/mean_length", 5) == first["completion_length"]
    assert at(run, "kl", 25) == source["log_history"][-1]["kl"]
    assert run.adapter == "hf_trainer"
    assert any("step 25 of 75" in n for n in run.notices)
    assert not messages(diags, "warning") and not messages(diags, "error")


def test_grpo_renamed_states_are_one_run_each() -> None:
    runs = load_all(CORPUS / "HaoranLuo__text2sql-grpo")
    ids = sorted(runs)
    assert ids == [
        "visualization_1000/trainer_state_1000steps",
        "visualization_1000/trainer_state_checkpoint-25",
    ]
    run, _ = runs["visualization_1000/trainer_state_1000steps"]
    assert at(run, "reward", 5) == 0.3349999964237213
    assert at(run, "reward_mean", 5) == 0.3349999964237213
    assert at(run, "rewards/reward_func/std", 1000) == 0.462006539106369
    assert len(run.metrics.series["reward"]) == 200  # type: ignore[union-attr]
    assert "clip_ratio/region_mean" in run.metrics.series  # type: ignore[union-attr]
    assert run.summary["global_step"] == 1000


def test_grpo_newer_trl_two_reward_functions_and_zero_std() -> None:
    run, diags = one(CORPUS, "srinath-manda")
    assert run.provenance["trainer_state"] == "checkpoint-500/trainer_state.json"
    assert at(run, "frac_reward_zero_std", 500) == 0.7
    assert at(run, "reward_mean", 10) == -9.6625
    assert at(run, "rewards/gameplay_scores/mean", 10) == -8.7875
    assert at(run, "rewards/valid_json_reward/std", 500) == 0.0
    assert at(run, "entropy", 10) == 1.4185649514198304
    assert "kl" not in run.metrics.series  # type: ignore[union-attr]  # beta=0: TRL logs no kl
    assert not messages(diags, "warning")


def test_dpo_final_summary_entry_at_duplicated_step_30() -> None:
    run, diags = one(CORPUS, "Distill-Safety")
    assert run.metrics is not None
    assert list(run.metrics.series["loss"].steps) == [1, 10, 20, 30]
    assert at(run, "rewards/margins", 30) == 141.71812438964844
    assert at(run, "rewards/accuracies", 1) == 0.0
    assert at(run, "grad_norm", 20) == 1.6985264750246643e-08
    assert at(run, "logps/rejected", 30) == -1784.1370849609375
    # the summary entry (same step 30) goes to the summary, not into the curves
    assert run.summary["train_loss"] == 0.07195354054873829
    assert run.summary["train_runtime"] == 3321.4879
    assert "train_runtime" not in run.metrics.series
    assert "train_loss" not in run.metrics.series
    assert not messages(diags, "warning")  # not a duplicate


def test_orpo_keys_kept_and_summary() -> None:
    run, _ = one(CORPUS, "chandlerzuo")
    assert run.metrics is not None
    for key in ("odds_ratio_loss", "sft_loss", "rewards/chosen", "rewards/margins", "logits/rejected", "logps/chosen"):
        assert len(run.metrics.series[key]) == 33
    assert "rewards/chosen/mean" not in run.metrics.series  # DPO/ORPO rewards are not GRPO reward functions
    assert run.summary["train_runtime"] == 789.838
    assert at(run, "odds_ratio_loss", 10) == 10.130699157714844


def test_train_and_eval_entries_at_the_same_step_are_one_point() -> None:
    run, diags = one(CORPUS, "nazeefa16")
    folder = next(CORPUS.glob("nazeefa16__*")) / "baseline_checkpoints/checkpoint-365"
    history = json.loads((folder / "trainer_state.json").read_text())["log_history"]
    assert history[12]["step"] == 350 and "loss" in history[12]
    assert at(run, "loss", 350) == history[12]["loss"]
    assert at(run, "eval_f1", 350) == 0.8840864440078585
    assert run.summary["best_metric"] == 0.8840864440078585
    assert run.provenance["best_model_checkpoint"] == "./baseline_checkpoints/checkpoint-350"
    assert len(run.metrics.series["epoch"]) == 7  # type: ignore[union-attr]
    assert not messages(diags, "warning")

    bert, diags = one(CORPUS, "subro608")
    assert at(bert, "eval_accuracy", 2400) == 0.90625
    assert at(bert, "loss", 100) == 1.3676
    assert len(bert.metrics.series["eval_loss"]) == 24  # type: ignore[union-attr]
    assert not messages(diags, "warning")


def test_claim_names_checkpoint_used() -> None:
    folder = CORPUS / "subro608__Deep_learning_Bert_project2"
    claim = HfTrainerAdapter().claim(folder, CORPUS)
    assert claim is not None
    assert claim.notes == ("state of the newest checkpoint used: checkpoint-2400",)
    assert claim.owned_dirs == (folder,)


# ---------------------------------------------------------------------------------------------------- synthetic


def test_newest_checkpoint_by_global_step_and_read_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_state(out / "checkpoint-200", [{"step": 100, "loss": 2.0}, {"step": 200, "loss": 1.5}], global_step=200)
    write_state(
        out / "checkpoint-1000",
        [{"step": 100, "loss": 2.0}, {"step": 200, "loss": 1.5}, {"step": 1000, "loss": 0.5}],
        global_step=1000,
    )
    runs = load_all(tmp_path)
    assert list(runs) == ["out"]
    run, diags = runs["out"]
    assert list(run.metrics.series["loss"].steps) == [100, 200, 1000]  # type: ignore[union-attr]
    assert run.provenance["trainer_state"] == "checkpoint-1000/trainer_state.json"
    claim = HfTrainerAdapter().claim(out, tmp_path)
    assert claim is not None and any("checkpoint-200/" in n for n in claim.notes)
    assert not diags.items


def test_top_level_state_preferred_when_as_new(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_state(out, [{"step": 10, "loss": 1.0}, {"step": 20, "loss": 0.9}], global_step=20)
    write_state(out / "checkpoint-20", [{"step": 10, "loss": 1.0}, {"step": 20, "loss": 0.9}], global_step=20)
    (out / "all_results.json").write_text(json.dumps({"train_loss": 0.95, "eval_accuracy": 0.5}))
    (out / "config.json").write_text(json.dumps({"_name_or_path": "gpt2", "num_hidden_layers": 12}))
    (out / "model.safetensors").write_bytes(b"\0" * 8)
    run, _ = one(tmp_path, "out")
    assert run.provenance["trainer_state"] == "trainer_state.json"
    assert run.summary["eval_accuracy"] == 0.5
    assert run.model == {"name": "gpt2", "layers": 12}
    claim = HfTrainerAdapter().claim(out, tmp_path)
    assert claim is not None and any("model.safetensors" in n for n in claim.notes)


def test_several_eval_datasets_and_conflicting_duplicate(tmp_path: Path) -> None:
    history = [
        {"step": 10, "epoch": 0.1, "loss": 2.0},
        {"step": 10, "epoch": 0.1, "eval_squad_loss": 1.9, "eval_squad_runtime": 3.0},
        {"step": 10, "epoch": 0.1, "eval_trivia_loss": 2.1},
        {"step": 20, "epoch": 0.2, "loss": 1.8},
        {"step": 20, "epoch": 0.2, "loss": 1.7},  # a real duplicate: aggregated (mean, band, count), said
        {"step": 20, "epoch": 0.2, "train_runtime": 9.0, "train_loss": 1.9, "total_flos": 1.0},
    ]
    write_state(tmp_path / "r", history, global_step=20)
    run, diags = one(tmp_path, "r")
    assert at(run, "eval_squad_loss", 10) == 1.9
    assert at(run, "eval_trivia_loss", 10) == 2.1
    assert at(run, "loss", 20) == pytest.approx(1.75)
    loss = run.metrics.series["loss"]  # type: ignore[union-attr]
    assert (loss.lo[-1], loss.hi[-1], loss.n[-1]) == (1.7, 1.8, 2)  # type: ignore[index]
    assert run.summary["train_loss"] == 1.9
    assert not messages(diags, "warning")
    said = [d for d in diags.items if "logged more than once" in d.message]
    assert len(said) == 1 and said[0].path.endswith("trainer_state.json") and "mean" in said[0].message
    line = said[0].line
    text = (tmp_path / "r" / "trainer_state.json").read_text().splitlines()
    assert line is not None and '"step": 20' in "\n".join(text[line - 1 : line + 4])


def test_zero_std_ratio_and_reward_fn_older_names(tmp_path: Path) -> None:
    history = [{"step": 1, "reward": 0.5, "reward_std": 0.1, "zero_std_ratio": 0.25, "reward/accuracy": 0.4}]
    write_state(tmp_path / "r", history, global_step=1)
    run, _ = one(tmp_path, "r")
    assert at(run, "frac_reward_zero_std", 1) == 0.25
    assert at(run, "zero_std_ratio", 1) == 0.25
    assert at(run, "rewards/accuracy/mean", 1) == 0.4
    assert at(run, "reward/accuracy", 1) == 0.4


def test_truncated_state_keeps_entries_before_the_cut(tmp_path: Path) -> None:
    path = write_state(tmp_path / "r", [{"step": i, "loss": 1.0 / (i + 1)} for i in range(10)], global_step=9)
    text = path.read_text()
    path.write_text(text[: text.index('"step": 7')])
    run, diags = one(tmp_path, "r")
    errors = messages(diags, "error")
    assert len(errors) == 1 and "truncated" in errors[0]
    assert list(run.metrics.series["loss"].steps) == list(range(7))  # type: ignore[union-attr]
    assert any("truncated" in n for n in run.notices)


def test_nan_infinity_wrong_types_and_bad_bytes(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    raw = (
        b'{"global_step": 3, "log_history": [\n'
        b'{"step": 1, "loss": NaN, "grad_norm": Infinity},\n'
        b'{"step": 2, "loss": "oops", "note": "caf\xe9"},\n'
        b'{"step": 3, "loss": 0.5},\n'
        b"42\n]}"
    )
    (folder / "trainer_state.json").write_bytes(raw)
    run, diags = one(tmp_path, "r")
    loss = run.metrics.series["loss"]  # type: ignore[union-attr]
    assert math.isnan(loss.values[0]) and loss.values[-1] == 0.5
    assert math.isinf(at(run, "grad_norm", 1))
    text = "\n".join(messages(diags))
    assert "not valid UTF-8" in text
    assert "NaN/Infinity" in text
    assert "'loss' holds text" in text
    assert "log entry 4 is a int" in text


def test_empty_state_file(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "trainer_state.json").write_bytes(b"")
    run, diags = one(tmp_path, "r")
    assert run.metrics is None
    assert any("empty" in m for m in messages(diags, "error"))


# ---------------------------------------------------------------------------------------------------- properties

_value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
)
_entry = st.dictionaries(
    st.sampled_from(["step", "loss", "eval_loss", "reward", "epoch", "x/y", "train_runtime"]), _value
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(_entry, _value), max_size=12))
def test_property_arbitrary_log_history_never_crashes(tmp_path: Path, history: list) -> None:
    folder = tmp_path / "p"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    one(tmp_path, "p")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_property_arbitrary_bytes_never_crash(tmp_path: Path, raw: bytes) -> None:
    folder = tmp_path / "b"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "trainer_state.json").write_bytes(raw)
    one(tmp_path, "b")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["loss", "grad_norm", "eval_loss", "rewards/f/mean", "kl"]),
            st.floats(allow_nan=False, allow_infinity=False, width=32),
            min_size=1,
        ),
        max_size=15,
    )
)
def test_property_every_well_formed_entry_appears(tmp_path: Path, rows: list[dict[str, float]]) -> None:
    folder = tmp_path / "w"
    shutil.rmtree(folder, ignore_errors=True)
    history = [{"step": (i + 1) * 10, **row} for i, row in enumerate(rows)]
    write_state(folder, history, global_step=len(rows) * 10)
    run, _ = one(tmp_path, "w")
    for entry in history:
        for key, value in entry.items():
            if key != "step":
                assert at(run, key, entry["step"]) == value
