"""Issue 16, "per-item evaluation files read as training curves" and "a file that lists several evaluation
runs": DESIGN.md §9, outcomes are not curves. Fixtures are shaped like the real files of the shared corpus
(GSM8K `per_q` records, tau-bench task records, lm-eval sample lines, an eval-runs table)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from adapterkit import load_all, write
from hypothesis import given, settings
from hypothesis import strategies as st

from obs.adapters.shapes import classify
from obs.analysis.report import RunContext, analyse_run
from obs.config import SiteConfig
from obs.model import Run


def _lines(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _headline(run: Run) -> tuple[str | None, float | None, str | None, str]:
    h = analyse_run(run, RunContext(), SiteConfig()).headline
    return h.metric, h.value, h.kind, h.detail


def _outcomes(n: int, hits: int, seed: int = 1) -> list[bool]:
    out = [True] * hits + [False] * (n - hits)
    random.Random(seed).shuffle(out)
    return out


def test_true_false_records_without_ids_are_cases_with_the_files_own_accuracy(tmp_path: Path) -> None:
    """A file scoring 53 % showed 90 % (the mean of its last 10 lines)."""
    outcomes = [*_outcomes(90, 44), *[True] * 9, False]  # 53 % in all; the last ten lines score 90 %
    hits = sum(outcomes)
    assert hits == 53
    rows = [{"question": f"q{i}", "pred": "x", "correct": c} for i, c in enumerate(outcomes)]
    write(tmp_path / "eval" / "preds.jsonl", _lines(rows))
    (run, _), *_ = load_all(tmp_path).values()
    assert run.metrics is None and run.probe is not None and len(run.probe.cases) == 100
    assert [c.id for c in run.probe.cases[:3]] == ["1", "2", "3"]  # positions, for pairing by position
    metric, value, kind, detail = _headline(run)
    assert (metric, kind) == ("correct", "probe") and value == pytest.approx(0.53)
    assert "last" not in detail and "over 100 probe cases" in detail
    assert any("not a time series" in n for n in run.notices)


@pytest.mark.parametrize("rate", [0.15, 0.10])
def test_zero_one_outcomes_are_not_a_curve_of_zeros(tmp_path: Path, rate: float) -> None:
    """Files at 15 % and 10 % showed 0 % (their last lines were all wrong)."""
    n = 200
    hits = int(rate * n)
    outcomes = [1] * hits + [0] * (n - hits)  # the right ones first: the last 10 lines are all 0
    rows = [{"sample_id": f"s{i}", "exact_match": o, "response": "..."} for i, o in enumerate(outcomes)]
    write(tmp_path / "r" / "samples.jsonl", _lines(rows))
    (run, _), *_ = load_all(tmp_path).values()
    metric, value, kind, _ = _headline(run)
    assert (metric, kind) == ("exact_match", "probe") and value == pytest.approx(rate)
    assert run.probe is not None and run.probe.cases[0].checks == {"exact_match": True}


def test_nested_outcome_by_dotted_path(tmp_path: Path) -> None:
    rows = [{"task_id": f"t{i}", "result": {"passed": i % 4 == 0, "time": 1.5}} for i in range(40)]
    write(tmp_path / "r" / "results.json", json.dumps(rows, indent=1))
    (run, _), *_ = load_all(tmp_path).values()
    metric, value, kind, _ = _headline(run)
    assert (metric, kind, value) == ("result.passed", "probe", 0.25)


def test_records_under_a_task_key_in_a_json_object(tmp_path: Path) -> None:
    doc = {"task": "gsm8k", "model": "m", "gsm8k": [{"doc_id": i, "acc": float(i % 2 == 0)} for i in range(30)]}
    write(tmp_path / "r" / "eval.json", json.dumps(doc))
    (run, _), *_ = load_all(tmp_path).values()
    metric, value, kind, _ = _headline(run)
    assert (metric, kind, value) == ("acc", "probe", 0.5)


def test_the_main_outcome_is_the_files_accuracy_not_the_first_check_by_name(tmp_path: Path) -> None:
    """tau-bench: `success` (82 %), not `exact_action_match` (28 %), is the file's result."""
    rows = [
        {"task_id": f"task_{i:03d}", "success": i < 82, "exact_action_match": i < 28, "action_f1": 0.5}
        for i in range(100)
    ]
    write(tmp_path / "r" / "test_results.json", json.dumps(rows))
    (run, _), *_ = load_all(tmp_path).values()
    metric, value, _, _ = _headline(run)
    assert (metric, value) == ("success", 0.82)


def test_per_item_scores_without_outcomes_headline_their_mean(tmp_path: Path) -> None:
    rows = [{"id": i, "f1": v} for i, v in enumerate([0.2, 0.4, 0.6, 0.8])]
    write(tmp_path / "r" / "scores.jsonl", _lines(rows))
    (run, _), *_ = load_all(tmp_path).values()
    metric, value, kind, _ = _headline(run)
    assert kind == "eval" and metric == "scores/f1" and value == pytest.approx(0.5)
    assert run.evals[0].n == 4


def test_lm_eval_samples_alone_in_a_folder_are_an_evaluation(tmp_path: Path) -> None:
    stamp = "2024-08-25T21-59-12.123082"
    rows = [
        {
            "doc_id": i,
            "filter": "strict-match",
            "metrics": ["exact_match"],
            "exact_match": float(i < 3),
            "target": "1",
            "resps": [["1"]],
            "filtered_resps": ["1"],
            "arguments": [["Q?", {}]],
        }
        for i in range(20)
    ]
    write(tmp_path / "out" / f"samples_gsm8k_{stamp}.jsonl", _lines(rows))
    runs = load_all(tmp_path)
    ((run, diags),) = runs.values()
    assert run.adapter == "lm_eval" and run.metrics is None
    metric, value, kind, _ = _headline(run)
    assert (metric, kind, value) == ("exact_match,strict-match", "probe", 0.15)
    assert not diags.has_errors


def test_a_file_listing_evaluation_runs_is_one_run_per_record(tmp_path: Path) -> None:
    """It became one 10-point curve with a meaningless headline."""
    rows = [
        {"run_id": f"ckpt-{k}", "stage": "sft" if k < 5 else "dpo", "accuracy": 0.5 + k / 100, "f1": 0.4}
        for k in range(10)
    ]
    write(tmp_path / "evals" / "eval_runs.jsonl", _lines(rows))
    runs = load_all(tmp_path)
    assert sorted(runs) == sorted(f"evals/ckpt-{k}" for k in range(10))
    run, diags = runs["evals/ckpt-7"]
    assert run.metrics is None and run.summary == {"accuracy": pytest.approx(0.57), "f1": 0.4}
    assert run.config == {"stage": "dpo"} and "stage:dpo" in run.tags
    metric, value, kind, _ = _headline(run)
    assert (metric, kind) == ("accuracy", "summary") and value == pytest.approx(0.57)
    assert not diags.items


def test_a_metrics_log_without_a_step_stays_a_log(tmp_path: Path) -> None:
    rows = [{"loss": 2.0 - i / 10, "accuracy": 0.5} for i in range(12)]
    write(tmp_path / "r" / "log.jsonl", _lines(rows))
    (run, _), *_ = load_all(tmp_path).values()
    assert run.probe is None and run.metrics is not None and run.metrics.step_source == "line index"


# ----------------------------------------------------------------------------------------- detector properties

_value = st.one_of(st.integers(-5, 5), st.floats(-10, 10, allow_nan=False), st.text(max_size=4), st.none())


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 40),
    st.sampled_from(["step", "global_step", "epoch", "iteration", "_step"]),
    st.dictionaries(st.sampled_from(["correct", "loss", "acc", "id", "run_id", "score"]), _value, max_size=4),
)
def test_property_records_with_a_step_are_always_a_time_series(n: int, step: str, extra: dict) -> None:
    records = [{step: i, **extra, "x": i * 0.5} for i in range(n)]
    assert classify(records).kind == "metrics"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.booleans(), min_size=2, max_size=60),
    st.sampled_from([None, "id", "doc_id", "task_id", "i"]),
    st.sampled_from(["correct", "success", "is_correct", "passed", "result.correct"]),
    st.booleans(),
)
def test_property_a_true_false_outcome_per_record_is_items(
    outcomes: list[bool], id_key: str | None, name: str, as_int: bool
) -> None:
    records = []
    for i, o in enumerate(outcomes):
        value: object = int(o) if as_int else o
        rec: dict = {"result": {"correct": value}} if name == "result.correct" else {name: value}
        if id_key:
            rec[id_key] = f"q{i}"
        rec["pred"] = "text"
        records.append(rec)
    shape = classify(records)
    assert shape.kind == "items" and shape.main == name
    assert shape.id_key == id_key


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 30), st.sampled_from(["run_id", "run", "model", "checkpoint"]), st.floats(0, 1))
def test_property_distinct_run_names_with_metrics_are_runs(n: int, key: str, base: float) -> None:
    records = [{key: f"r{i}", "accuracy": base + i / 1000, "stage": "a"} for i in range(n)]
    shape = classify(records)
    assert shape.kind == "runs" and shape.id_key == key
    records[1][key] = "r0"  # two records of one run: not a list of runs
    assert classify(records).kind != "runs"


# ----------------------------------------------------------------------------------------- pairing by position


def test_paired_inputs_without_ids_pair_by_position_when_asked_and_the_lengths_agree(tmp_path: Path) -> None:
    from obs.diagnostics import Diagnostics
    from obs.discover import read_campaign

    folder = tmp_path / "c"
    write(folder / "a.jsonl", _lines([{"correct": i % 2 == 0} for i in range(10)]))
    write(folder / "b.jsonl", _lines([{"correct": i % 3 == 0} for i in range(10)]))
    write(folder / "short.jsonl", _lines([{"correct": True} for _ in range(9)]))
    write(
        folder / "campaign.yaml",
        "paired:\n  - {a: a.jsonl, b: b.jsonl, pair_by: position}\n"
        "  - {a: a.jsonl, b: short.jsonl, pair_by: position}\n",
    )
    diags = Diagnostics()
    campaign = read_campaign(folder, diags)
    assert campaign is not None
    same, short = campaign.paired
    assert (
        same.a is not None and same.b is not None and sorted(same.a.outcomes, key=int) == [str(i) for i in range(1, 11)]
    )
    assert same.a.outcomes["1"] is True and same.b.outcomes["2"] is False
    assert short.a is None and short.b is None
    assert any("pair_by: position needs two files of the same length" in d.message for d in diags.items)
