"""TensorBoard event files, written here with TensorBoard's own writer in the layouts real trainers use:
HF Trainer (`runs/<date>_<host>/`, `train/`/`eval/` tags, `args` and `model_config` as JSON text, hparams),
Keras (`train/` and `validation/` folders), Lightning (`version_0/` with `hparams.yaml`), a restarted run,
and event files beside a `trainer_state.json`."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from adapterkit import load_all, write

pytest.importorskip("tensorboard")

from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
from tensorboard.plugins.hparams import plugin_data_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from obs.analysis.report import RunContext, analyse_run
from obs.config import SiteConfig
from obs.discover import discover


class Events:
    """One event file, written with tensorboard's EventFileWriter (what torch and HF use underneath)."""

    def __init__(self, folder: Path, suffix: str = "") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.writer = EventFileWriter(str(folder), filename_suffix=suffix)

    def _add(self, step: int, value: summary_pb2.Summary.Value) -> None:
        self.writer.add_event(
            event_pb2.Event(step=step, wall_time=time.time(), summary=summary_pb2.Summary(value=[value]))
        )

    def scalar(self, tag: str, value: float, step: int) -> Events:
        self._add(step, summary_pb2.Summary.Value(tag=tag, simple_value=value))
        return self

    def text(self, tag: str, text: str) -> Events:
        meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, string_val=[text.encode()])
        self._add(0, summary_pb2.Summary.Value(tag=tag, metadata=meta, tensor=tensor))
        return self

    def hparams(self, **values: object) -> Events:
        info = plugin_data_pb2.SessionStartInfo()
        for key, value in values.items():
            if isinstance(value, bool):
                info.hparams[key].bool_value = value
            elif isinstance(value, int | float):
                info.hparams[key].number_value = value
            else:
                info.hparams[key].string_value = str(value)
        content = plugin_data_pb2.HParamsPluginData(session_start_info=info).SerializeToString()
        plugin = summary_pb2.SummaryMetadata.PluginData(plugin_name="hparams", content=content)
        meta = summary_pb2.SummaryMetadata(plugin_data=plugin)
        self._add(0, summary_pb2.Summary.Value(tag="_hparams_/session_start_info", metadata=meta))
        return self

    def histogram(self, tag: str, step: int) -> Events:
        histo = summary_pb2.HistogramProto(min=0, max=1, num=2, sum=1, sum_squares=1, bucket_limit=[1], bucket=[2])
        self._add(step, summary_pb2.Summary.Value(tag=tag, histo=histo))
        return self

    def close(self) -> None:
        self.writer.close()


def _hf_trainer_events(folder: Path, steps: range) -> None:
    ev = Events(folder)
    args = {"learning_rate": 5e-05, "per_device_train_batch_size": 8, "seed": 42, "output_dir": "out"}
    ev.text("args/text_summary", json.dumps(args, indent=2)).text("model_config/text_summary", '{"model_type": "bert"}')
    ev.hparams(learning_rate=5e-05, seed=42, fp16=True, optim="adamw_torch")
    for s in steps:
        ev.scalar("train/loss", 2.0 / (1 + s), s).scalar("train/learning_rate", 5e-05, s).scalar(
            "train/grad_norm", 1.0, s
        )
        if s % 20 == 0:
            ev.scalar("eval/loss", 1.5 / (1 + s), s).scalar("eval/accuracy", 0.5 + s / 1000, s)
    ev.histogram("weights/layer0", steps[-1])
    ev.close()


def test_hf_trainer_events_alone_are_a_run_with_curves_config_and_the_right_headline(tmp_path: Path) -> None:
    _hf_trainer_events(tmp_path / "out" / "runs" / "Jan01_12-00-00_host", range(0, 101, 5))
    ((run_id, (run, diags)),) = load_all(tmp_path).items()
    assert run_id == "out/runs/Jan01_12-00-00_host" and run.adapter == "tensorboard"
    assert run.metrics is not None and len(run.metrics.series["train/loss"]) == 21
    assert list(run.metrics.series["eval/accuracy"].steps) == [0, 20, 40, 60, 80, 100]
    assert run.config["per_device_train_batch_size"] == 8 and run.config["optim"] == "adamw_torch"
    assert run.config["fp16"] is True and run.model == {"model_type": "bert"}
    assert run.status == "unknown"
    assert any("1 histograms value(s)" in n for n in run.notices)  # counted, not silently dropped
    headline = analyse_run(run, RunContext(), SiteConfig()).headline
    assert headline.metric == "eval/accuracy" and headline.kind == "series"
    assert not diags.has_errors


def test_keras_train_and_validation_folders_are_one_run(tmp_path: Path) -> None:
    logs = tmp_path / "fit" / "20240101-120000"
    for split, offset in (("train", 0.0), ("validation", 0.1)):
        ev = Events(logs / split)
        for epoch in range(5):
            ev.scalar("epoch_loss", 1.0 - epoch / 10 + offset, epoch).scalar(
                "epoch_accuracy", 0.6 + epoch / 20 - offset, epoch
            )
        ev.close()
    runs = load_all(tmp_path)
    assert list(runs) == ["fit/20240101-120000"]
    run, _ = runs["fit/20240101-120000"]
    assert run.metrics is not None
    assert sorted(run.metrics.series) == [
        "train/epoch_accuracy",
        "train/epoch_loss",
        "validation/epoch_accuracy",
        "validation/epoch_loss",
    ]
    headline = analyse_run(run, RunContext(), SiteConfig()).headline
    assert headline.metric == "validation/epoch_accuracy"  # held-out first, not the training accuracy


def test_a_restarted_run_replaces_the_steps_it_logged_again(tmp_path: Path) -> None:
    folder = tmp_path / "lightning_logs" / "version_0"
    first = Events(folder, suffix=".0")
    for s in range(0, 60, 10):
        first.scalar("train_loss", 1.0, s)
    first.close()
    time.sleep(1.1)  # event file names carry the time in seconds: the restart sorts after
    second = Events(folder, suffix=".1")
    for s in range(30, 90, 10):
        second.scalar("train_loss", 0.5, s)
    second.close()
    write(folder / "hparams.yaml", "lr: 0.001\nbatch_size: 32\nmodel:\n  hidden: 128\n")
    (run, _), *_ = load_all(tmp_path).values()
    loss = run.metrics.series["train_loss"]  # type: ignore[union-attr]
    assert list(loss.steps) == [0, 10, 20, 30, 40, 50, 60, 70, 80] and list(loss.values) == [1.0] * 3 + [0.5] * 6
    assert loss.n is None  # replaced, not averaged
    assert any("restarts at step 30: 3 point(s)" in n for n in run.notices)
    assert run.config == {"lr": 0.001, "batch_size": 32, "model": {"hidden": 128}}


def test_events_beside_a_trainer_state_are_merged_into_one_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    history = [{"step": s, "loss": 2.0 / (1 + s), "learning_rate": 5e-05, "grad_norm": 1.0} for s in range(5, 101, 5)]
    write(out / "trainer_state.json", json.dumps({"log_history": history, "global_step": 100, "max_steps": 100}))
    _hf_trainer_events(out / "runs" / "Jan01_12-00-00_host", range(5, 101, 5))
    found = discover(tmp_path)
    assert [s.adapter for s in found.runs] == ["hf_trainer"] and not found.unread
    ((run, _),) = load_all(tmp_path).values()
    assert run.config["per_device_train_batch_size"] == 8 and run.config["max_steps"] == 100
    assert run.metrics is not None and "train/loss" not in run.metrics.series  # the state's `loss` already
    assert "eval/accuracy" in run.metrics.series  # a tag the state did not log
    assert any("TensorBoard events beside the trainer state" in n for n in run.notices)


def test_without_tensorboard_installed_the_page_says_how_to_read_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hf_trainer_events(tmp_path / "r", range(0, 10, 5))
    monkeypatch.setitem(sys.modules, "tensorboard.backend.event_processing.event_file_loader", None)
    ((run, diags),) = load_all(tmp_path).values()
    assert run.metrics is None and any("pip install tensorboard into obs's environment" in n for n in run.notices)
    assert any("tensorboard package is missing" in d.message for d in diags.items)
