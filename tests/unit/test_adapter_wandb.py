"""W&B run folders: config unwrapped, summary and metadata read, the unread history said out loud."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from adapterkit import DATA_CORPUS, load_all
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obs.adapters.wandb import unwrap_config
from obs.discover import discover
from obs.sanitize import clean_text

CORPUS = DATA_CORPUS / "wandb"


def test_hf_trainer_run_config_unwrapped_summary_metadata() -> None:
    runs = load_all(CORPUS / "tsebaka__T-Lab-2024-LLM-Alignment")
    assert sorted(runs) == [
        "wandb/run-20241216_111704-k5u8xpy9",
        "wandb/run-20241216_113020-wvk49vqj",
        "wandb/run-20241216_135818-xmayk974",
    ]
    run, diags = runs["wandb/run-20241216_113020-wvk49vqj"]
    assert run.adapter == "wandb"
    # {value: ...} wrappers are gone, _wandb internals are not config
    assert run.config["_name_or_path"] == "distilbert/distilbert-base-cased"
    assert run.config["adam_beta1"] == 0.9
    assert run.config["accelerator_config"]["even_batches"] is True
    assert "_wandb" not in run.config
    assert not any(isinstance(v, dict) and set(v) >= {"value"} for v in run.config.values())
    assert run.provenance["wandb_cli_version"] == "0.18.7"
    assert run.model["name"] == "distilbert/distilbert-base-cased"
    assert run.summary["train/loss"] == 0.1726
    assert run.summary["train/global_step"] == 489
    assert run.summary["_runtime"] == 1220.362603724
    assert "_timestamp" not in run.summary and "_wandb/runtime" not in run.summary
    assert run.date == "2024-12-16T08:30:20.171829Z"
    assert run.provenance["gpu"] == "NVIDIA A100-SXM4-80GB" and run.provenance["gpu_count"] == 4
    assert run.provenance["args"] == "--config-dir config --config-name config"
    assert "email" not in json.dumps(run.provenance) and "ozoloev" not in json.dumps(run.provenance)
    assert run.metrics is None
    assert any("No history beside the summary" in n and "run-<id>.wandb" in n for n in run.notices)
    assert not diags.items


def test_crashed_run_and_config_only_run() -> None:
    runs = load_all(CORPUS / "tsebaka__T-Lab-2024-LLM-Alignment")
    crashed, _ = runs["wandb/run-20241216_111704-k5u8xpy9"]
    assert crashed.summary == {"_runtime": 436.0}
    assert any("holds no metric" in n for n in crashed.notices)
    assert crashed.date == "2024-12-16T11:17:04"  # from the folder name when there is no metadata
    config_only, _ = runs["wandb/run-20241216_135818-xmayk974"]
    other, _ = runs["wandb/run-20241216_113020-wvk49vqj"]
    diff = {k for k in other.config if other.config[k] != config_only.config.get(k)}
    assert diff and len(diff) < 10  # "differs by a few values"
    assert any("no wandb-summary.json" in n for n in config_only.notices)


def test_custom_loop_summary_and_git() -> None:
    (run, _) = next(iter(load_all(CORPUS / "Sustella__qwen_sapiens").values()))
    assert run.summary["val_gen/accuracy_strict"] == 0.68
    assert run.summary["val_gen_epoch/hmdb51_lenient"] == 0.9314285714285714
    assert run.summary["epoch"] == 2
    assert run.provenance["code_commit"] == "d8ecdbc203a995d156f4ed9e1937b92146b682f5"
    assert run.provenance["code_remote"] == "https://github.com/iz05/qwen_custom.git"
    assert "stellaktsu" not in json.dumps(run.provenance)


def test_old_client_history_jsonl_is_read(tmp_path: Path) -> None:
    files = tmp_path / "wandb" / "run-20200101_000000-abc123" / "files"
    files.mkdir(parents=True)
    (files / "wandb-summary.json").write_text('{"loss": 0.5, "hist": {"_type": "histogram", "values": [1]}}')
    (files / "wandb-history.jsonl").write_text(
        '{"_step": 0, "loss": 1.0, "_runtime": 1}\n{"_step": 1, "loss": 0.5, "_runtime": 2}\n{"_step": 2, "lo'
    )
    (files / "config.yaml").write_text("wandb_version: 1\nlr:\n  desc: null\n  value: 0.001\n")
    (files / "output.log").write_text("hello")
    found = discover(tmp_path)
    assert any("files/output.log" in n for c in found.claims for n in c.notes)
    (run, diags) = next(iter(load_all(tmp_path).values()))
    assert list(run.metrics.series["loss"].values) == [1.0, 0.5]  # type: ignore[union-attr]
    assert run.metrics.step_source == "_step"  # type: ignore[union-attr]
    assert run.config == {"lr": 0.001}
    assert run.summary == {"loss": 0.5}
    assert not any("binary" in n for n in run.notices)
    assert [d.severity for d in diags.items] == ["info"]  # the half-written last line


def test_bad_files_are_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    files = tmp_path / "run-20200101_000000-bad" / "files"
    files.mkdir(parents=True)
    (files / "config.yaml").write_text("a: &x 1\nb: *x\n")
    (files / "wandb-summary.json").write_bytes(b'{"loss": NaN, "acc": 0.5, "name": "caf\xe9"}')
    (files / "wandb-metadata.json").write_text("[1, 2]")
    (run, diags) = next(iter(load_all(tmp_path).values()))
    text = [d.format() for d in diags.items]
    assert any("config.yaml:2: error: YAML aliases" in t for t in text)
    assert any("not valid UTF-8" in t for t in text)
    assert any("wandb-metadata.json:1: error: expected a JSON object" in t for t in text)
    assert run.summary["acc"] == 0.5


# ---------------------------------------------------------------------------------------------------- properties

_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=6))
_tree = st.recursive(
    _leaf, lambda c: st.dictionaries(st.text(max_size=6), c, max_size=3) | st.lists(c, max_size=3), max_leaves=12
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _tree, max_size=6))
def test_property_unwrap_config_keeps_every_value(raw: dict) -> None:
    wrapped = {k: {"desc": None, "value": v} for k, v in raw.items()}
    config, _ = unwrap_config(wrapped)
    expected = {k: v for k, v in raw.items() if k not in ("_wandb", "wandb_version")}
    assert config == expected
    unwrapped, _ = unwrap_config(raw)  # unwrapped configs pass through
    assert set(unwrapped) <= set(raw)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200), st.binary(max_size=200), st.binary(max_size=200))
def test_property_arbitrary_bytes_never_crash(tmp_path: Path, config: bytes, summary: bytes, meta: bytes) -> None:
    shutil.rmtree(tmp_path / "w", ignore_errors=True)
    files = tmp_path / "w" / "run-20200101_000000-x" / "files"
    files.mkdir(parents=True)
    (files / "config.yaml").write_bytes(config)
    (files / "wandb-summary.json").write_bytes(summary)
    (files / "wandb-metadata.json").write_bytes(meta)
    load_all(tmp_path)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8).filter(lambda k: not k.startswith("_")), st.floats(allow_nan=False), max_size=8
    )
)
def test_property_every_summary_number_appears(tmp_path: Path, summary: dict[str, float]) -> None:
    shutil.rmtree(tmp_path / "s", ignore_errors=True)
    files = tmp_path / "s" / "run-20200101_000000-x" / "files"
    files.mkdir(parents=True)
    (files / "wandb-summary.json").write_text(json.dumps(summary))
    (run, _) = next(iter(load_all(tmp_path).values()))
    assert run.summary == {clean_text(k): v for k, v in summary.items()}  # control characters replaced (obs.sanitize)
