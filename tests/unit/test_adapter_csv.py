"""CSV metric logs in the layouts the loggers write: Lightning CSVLogger (sparse rows: train and validation on
different rows of one step, `hparams.yaml` beside), Keras CSVLogger (`epoch` column, any file name),
Ultralytics `results.csv` (header padded with spaces) and a generic CSV; a per-item CSV is outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest
from adapterkit import at, load_all, write

from obs.analysis.report import RunContext, analyse_run
from obs.config import SiteConfig
from obs.model import Run


def _only(root: Path) -> Run:
    ((run, diags),) = load_all(root).values()
    assert not diags.has_errors, [d.format() for d in diags.items]
    return run


def _headline(run: Run) -> tuple[str | None, str | None]:
    h = analyse_run(run, RunContext(), SiteConfig()).headline
    return h.metric, h.kind


def test_lightning_csvlogger_sparse_rows_are_merged_per_step(tmp_path: Path) -> None:
    rows = ["epoch,step,train_loss,val_loss,val_acc"]
    for epoch in range(3):
        for k in range(1, 4):
            rows.append(f"{epoch},{epoch * 30 + k * 10 - 1},{1.0 - epoch / 10 - k / 100},,")
        rows.append(f"{epoch},{epoch * 30 + 29},,{0.9 - epoch / 10},{0.6 + epoch / 10}")  # validation row, same step
    folder = tmp_path / "lightning_logs" / "version_0"
    write(folder / "metrics.csv", "\n".join(rows) + "\n")
    write(folder / "hparams.yaml", "learning_rate: 0.001\nhidden_dim: 64\n")
    run = _only(tmp_path)
    assert run.adapter == "csv_logs" and run.metrics is not None and run.metrics.step_source == "step"
    assert at(run, "train_loss", 29) == pytest.approx(0.97) and at(run, "val_loss", 29) == pytest.approx(0.9)
    assert run.metrics.series["val_acc"].n is None  # train + validation rows of one step: one point
    assert run.config == {"learning_rate": 0.001, "hidden_dim": 64}
    assert _headline(run) == ("val_acc", "series")


def test_keras_csvlogger_epoch_column_any_file_name(tmp_path: Path) -> None:
    body = "epoch,accuracy,loss,val_accuracy,val_loss\n" + "".join(
        f"{e},{0.5 + e / 20},{1.0 - e / 10},{0.45 + e / 20},{1.1 - e / 10}\n" for e in range(8)
    )
    write(tmp_path / "keras" / "training.log", body)
    run = _only(tmp_path)
    assert run.metrics is not None and run.metrics.step_source == "epoch"
    assert sorted(run.metrics.series) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert _headline(run) == ("val_accuracy", "series")


def test_ultralytics_results_csv_padded_header(tmp_path: Path) -> None:
    names = ["epoch", "train/box_loss", "train/cls_loss", "metrics/precision(B)", "metrics/mAP50(B)"]
    header = ",".join(f"{n:>23}" for n in names)
    body = (
        header
        + "\n"
        + "".join(
            f"{e:>23},{1.5 - e / 10:>23},{2.0 - e / 10:>23},{0.3 + e / 20:>23},{0.2 + e / 25:>23}\n"
            for e in range(1, 6)
        )
    )
    write(tmp_path / "runs" / "detect" / "train" / "results.csv", body)
    run = _only(tmp_path)
    assert run.metrics is not None and run.metrics.step_source == "epoch"
    assert "train/box_loss" in run.metrics.series and at(run, "metrics/mAP50(B)", 5) == pytest.approx(0.4)
    assert any("Ultralytics" in n for n in run.notices)


def test_a_generic_csv_with_nan_and_text(tmp_path: Path) -> None:
    body = "step,loss,phase,note\n0,2.0,warmup,ok\n1,nan,warmup,spike\n2,1.0,main,ok\n"
    write(tmp_path / "r" / "train_metrics.csv", body)
    ((run, diags),) = load_all(tmp_path).values()
    assert run.metrics is not None and [s.name for s in run.metrics.stages] == ["warmup", "main"]
    assert [d.line for d in diags.items if "'loss' is NaN at step 1" in d.message] == [3]
    assert any("note" in d for d in run.metrics.dropped)


def test_a_results_csv_of_per_item_outcomes_is_not_a_curve(tmp_path: Path) -> None:
    body = "id,question,prediction,correct\n" + "".join(f"q{i},Q{i},A,{int(i % 5 == 0)}\n" for i in range(40))
    write(tmp_path / "eval" / "results.csv", body)
    run = _only(tmp_path)
    assert run.metrics is None and run.probe is not None and len(run.probe.cases) == 40
    assert _headline(run) == ("correct", "probe")


def test_a_csv_that_is_not_a_log_is_not_read_as_one_and_is_listed(tmp_path: Path) -> None:
    from obs.discover import discover

    write(tmp_path / "data" / "train.csv", "text,label\nhello,1\nbye,0\n")
    assert load_all(tmp_path) == {}
    assert [p.name for p in discover(tmp_path).unread] == ["train.csv"]
