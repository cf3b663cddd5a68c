"""The MLflow file store: one run per MLflow run, params, tags, deleted runs hidden and counted."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from adapterkit import DATA_CORPUS, at, load_all, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obs.adapters.mlflow import MlflowAdapter, parse_metric_line
from obs.discover import discover

CORPUS = DATA_CORPUS / "mlflow"


def make_run(exp: Path, run_id: str, name: str, lifecycle: str = "active", status: int = 3) -> Path:
    run = exp / run_id
    write(
        run / "meta.yaml",
        f"artifact_uri: file:///x/{run_id}/artifacts\nend_time: 1700000100000\nexperiment_id: '7'\n"
        f"lifecycle_stage: {lifecycle}\nrun_id: {run_id}\nrun_name: {name}\nstart_time: 1700000000000\n"
        f"status: {status}\ntags: []\n",
    )
    write(run / "tags" / "mlflow.runName", name)
    return run


# ---------------------------------------------------------------------------------------------------- corpus


def test_deleted_run_hidden_and_counted() -> None:
    root = CORPUS / "1010sb__ImageClass"
    found = discover(root)
    assert [c.adapter for c in found.claims] == ["mlflow"]
    claim = found.claims[0]
    assert claim.runs == 1
    assert claim.notes == ("1 deleted run(s) hidden: 3a9af4bdab714eb69a4ed7582c387268/ (mysterious-goose-781)",)
    runs = load_all(root)
    assert list(runs) == ["mlruns/586757370402886605/6cb9a32fd38a464f8402979dbdd3191f"]
    run, diags = next(iter(runs.values()))
    assert run.title == "exultant-lynx-641"
    assert run.tags == ["experiment:Fashion_MNIST_Experiment"]
    assert run.provenance["mlflow_experiment"] == "Fashion_MNIST_Experiment"
    assert run.config == {"epochs": 10, "optimizer": "SGD"}
    assert run.summary["test_accuracy"] == 0.855400025844574
    assert at(run, "val_loss", 0) == 0.38698798418045044
    assert run.status == "finished"
    assert run.date == "2023-08-07T12:19:19Z"
    assert not diags.items


def test_deleted_run_files_are_hidden_with_why_not_listed_as_unread() -> None:
    """A deleted run's 11 files were read (its meta.yaml says deleted): the site names them apart, with the
    reason, instead of listing each as a file no format reads."""
    root = CORPUS / "1010sb__ImageClass"
    found = discover(root)
    deleted = root / "mlruns/586757370402886605/3a9af4bdab714eb69a4ed7582c387268"
    on_disk = sorted(p for p in deleted.rglob("*") if p.is_file())
    assert len(on_disk) == 11
    assert not [u for u in found.unread if deleted in u.parents]
    assert found.hidden_rel() == [
        "mlruns/586757370402886605/3a9af4bdab714eb69a4ed7582c387268: MLflow run 'mysterious-goose-781' "
        "marked deleted (lifecycle_stage) (11 files)"
    ]
    empty = discover(CORPUS / "10-Academy-Batch-4-Week-4__Swahili-Speech-To-Text")
    assert empty.hidden_rel() == ["mlruns/0: an MLflow experiment with no runs (1 file)"]
    assert not [u for u in empty.unread if u.name == "meta.yaml"]


def test_keras_autolog_params_typed_and_experiment_without_meta() -> None:
    root = CORPUS / "10-Academy-Batch-4-Week-4__Swahili-Speech-To-Text"
    found = discover(root)
    assert found.claims[0].notes == ("experiment(s) with no runs: 0/ (Default)",)
    (run, diags) = next(iter(load_all(root).values()))
    assert run.config["batch_size"] is None  # 'None' in the file
    assert run.config["opt_nesterov"] is True
    assert run.config["opt_learning_rate"] == 0.002
    assert run.config["epochs"] == 10
    assert run.config["opt_name"] == "SGD"
    loss = run.metrics.series["loss"]  # type: ignore[union-attr]
    assert list(loss.steps) == list(range(10))
    assert loss.values[0] == 332.6841735839844 and loss.values[-1] == 234.7978057861328
    assert run.provenance["mlflow_experiment"] == "1"
    assert any("no meta.yaml" in n for n in run.notices)
    assert not [d for d in diags.items if d.severity != "info"]


def test_llm_eval_run_single_values() -> None:
    (run, _) = next(iter(load_all(CORPUS / "01rahulsingh86__mlflow-groq-eval").values()))
    assert run.title == "adaptable-zebra-753"
    assert run.summary == {"contains": 1.0, "exact_match": 0.0, "token_f1": 0.0}
    assert run.config == {"max_tokens": 256, "model": "llama-3.1-8b-instant", "provider": "groq", "temperature": 0.0}
    assert run.tags == ["experiment:groq-eval-demo"]


# ---------------------------------------------------------------------------------------------------- synthetic


def test_nested_metric_names_parent_runs_inf_nan_trash(tmp_path: Path) -> None:
    mlruns = tmp_path / "mlruns"
    exp = mlruns / "7"
    write(exp / "meta.yaml", "experiment_id: '7'\nlifecycle_stage: active\nname: sweeps\n")
    parent = make_run(exp, "a" * 32, "parent-run")
    child = make_run(exp, "b" * 32, "child-run", status=4)
    write(child / "tags" / "mlflow.parentRunId", "a" * 32)
    write(child / "tags" / "team", "vision")
    write(child / "tags" / "mlflow.note.content", "# Notes\nwhy")
    write(child / "params" / "optim" / "lr", "0.001")  # a param with '/' in its name
    write(child / "metrics" / "train" / "loss", "1700000000001 2.5 0\n1700000000002 inf 1\n1700000000003 nan 2\n")
    write(child / "metrics" / "val" / "acc", "1700000000001 0.5 0\n1700000000002 -Infinity 1\n")
    write(parent / "metrics" / "loss", "1700000000001 1.0 0\n")
    write(child / "artifacts" / "model.pkl", b"\x80\x04")
    make_run(exp, "c" * 32, "deleted-run", lifecycle="deleted")
    write(mlruns / ".trash" / "9" / "meta.yaml", "name: gone\n")
    claim = MlflowAdapter().claim(mlruns, tmp_path)
    assert claim is not None and len(claim.runs) == 2
    notes = "; ".join(claim.notes)
    assert f"1 deleted run(s) hidden: {'c' * 32}/ (deleted-run)" in notes
    assert "1 deleted item(s) in .trash hidden" in notes
    assert "artifacts/model.pkl" in notes

    runs = load_all(tmp_path)
    run, diags = runs[f"mlruns/7/{'b' * 32}"]
    assert run.title == "child-run"
    assert run.status == "failed"
    assert at(run, "train/loss", 0) == 2.5
    assert math.isinf(at(run, "train/loss", 1))
    assert math.isnan(at(run, "train/loss", 2))
    assert at(run, "val/acc", 1) == -math.inf
    assert math.isnan(run.summary["train/loss"]) and run.summary["val/acc"] == -math.inf
    assert any("not finite" in n for n in run.notices)
    assert run.config == {"optim/lr": 0.001}
    assert run.provenance["mlflow_parent_run_id"] == "a" * 32
    assert run.provenance["parent_run"] == f"mlruns/7/{'a' * 32}"
    assert run.provenance["mlflow_tags"] == {"team": "vision"}
    assert run.notes == "# Notes\nwhy"
    assert run.tags == ["experiment:sweeps"]
    warned = sorted(d.format() for d in diags.items if d.severity != "info")
    assert len(warned) == 2  # each non-finite value named with its file, line, key and step
    assert (
        "metrics/train/loss:2: warning: 'train/loss' is ∞ at step 1 (line 2, first non-finite value) (2 in all)"
        in (warned[0])
    )
    assert "metrics/val/acc:2: warning: 'val/acc' is −∞ at step 1" in warned[1]


def test_bad_metric_lines_reported_with_line_and_rest_kept(tmp_path: Path) -> None:
    exp = tmp_path / "mlruns" / "0"
    write(exp / "meta.yaml", "experiment_id: '0'\nname: Default\n")
    run_dir = make_run(exp, "d" * 32, "r")
    write(
        run_dir / "metrics" / "loss",
        b"1 1.0 0\nthis is not a metric line\n3 abc 2\n4 0.5 3\n5 0.4 4\n4 0.45 3\n6 0.3",
    )
    write(run_dir / "metrics" / "empty", "")
    write(run_dir / "metrics" / "old", "1 0.1\n2 0.2\n")  # old format: no step
    write(run_dir / "params" / "bad", b"\xff\xfe")
    (run, diags) = next(iter(load_all(tmp_path).values()))
    loss = run.metrics.series["loss"]  # type: ignore[union-attr]
    assert list(loss.steps) == [0, 3, 4]
    assert at(run, "loss", 3) == pytest.approx(0.475)  # duplicated step: the mean, with its band
    assert run.metrics.series["loss"].n.tolist() == [1, 2, 1]  # type: ignore[union-attr]
    assert list(run.metrics.series["old"].values) == [0.1, 0.2]  # type: ignore[union-attr]
    text = [d.format() for d in diags.items]
    assert any("metrics/loss:2: warning: expected 'timestamp value [step]'" in t for t in text)
    assert any("2 malformed line(s)" in t for t in text)
    assert any("metrics/empty: warning: metric file is empty" in t for t in text)
    assert any("logged more than once" in t for t in text)
    assert any("params/bad:1: warning: not valid UTF-8" in t for t in text)
    assert any("no step" in t for t in text)
    assert any("metrics/loss:7: info: last line is incomplete" in t for t in text)


def test_parse_metric_line() -> None:
    assert parse_metric_line("1628697792090 332.6841735839844 0") == (332.6841735839844, 0.0)
    assert parse_metric_line("1 nan 3") != "x"
    assert isinstance(parse_metric_line("1 2 3 4"), str)
    assert isinstance(parse_metric_line("1 2 x"), str)
    assert parse_metric_line("1 -inf") == (-math.inf, None)


# ---------------------------------------------------------------------------------------------------- properties


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=60))
def test_property_metric_line_parser_never_raises(text: str) -> None:
    result = parse_metric_line(text)
    assert isinstance(result, str | tuple)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2**41),
            st.floats(allow_nan=False, width=64),
            st.integers(0, 10**6),
        ),
        max_size=20,
        unique_by=lambda t: t[2],
    ),
    st.binary(max_size=80),
)
def test_property_well_formed_lines_all_appear(tmp_path: Path, rows: list[tuple[int, float, int]], junk: bytes) -> None:
    shutil.rmtree(tmp_path / "mlruns", ignore_errors=True)
    exp = tmp_path / "mlruns" / "1"
    write(exp / "meta.yaml", "experiment_id: '1'\nname: p\n")
    run_dir = make_run(exp, "e" * 32, "p")
    body = b"".join(f"{ts} {v!r} {s}\n".encode() for ts, v, s in rows)
    write(run_dir / "metrics" / "m", body + b"x " + junk.replace(b"\n", b" ") + b"\n")
    write(run_dir / "metrics" / "junk", junk)
    (run, _) = next(iter(load_all(tmp_path).values()))
    for _, logged, step in rows:
        value = logged  # a finite value stays finite, however large (issue 26)
        got = at(run, "m", step)
        assert got == value or (math.isinf(got) and got == value)
