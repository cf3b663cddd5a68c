"""Issue 26, "records read for what they are": a setting's boolean is not an outcome, pass@k and lists of K
sample outcomes are, a registry of runs is one run per record, an lm-eval per-sample dump is recognised by its
fields. Fixtures are written here, shaped like the files the issue describes (no third-party data)."""

from __future__ import annotations

import json
from pathlib import Path

from adapterkit import load_all, write

from obs.adapters.shapes import classify
from obs.analysis.report import RunContext, analyse_run
from obs.config import SiteConfig
from obs.model import Run


def _lines(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _headline(run: Run) -> tuple[str | None, float | None]:
    h = analyse_run(run, RunContext(), SiteConfig()).headline
    return h.metric, h.value


def _registry(n: int = 10) -> list[dict]:
    return [
        {
            "run_id": f"eval-{i:02d}",
            "started": f"2025-03-{i + 1:02d}T10:00:00Z",
            "git_commit": f"{i:07x}",
            "git_dirty": i % 5 == 0,  # 20 % of the runs
            "config": {"lr": 1e-4 * (i + 1), "seed": i},
            "metrics": {"accuracy": 0.5 + i / 100, "f1": 0.4 + i / 100},
        }
        for i in range(n)
    ]


def test_a_registry_of_runs_is_one_run_per_record_not_items_with_a_git_dirty_outcome(tmp_path: Path) -> None:
    rows = _registry()
    assert classify(rows).kind == "runs"
    write(tmp_path / "registry" / "runs.jsonl", _lines(rows))
    loaded = load_all(tmp_path)
    assert len(loaded) == 10
    run = next(r for r, _ in loaded.values() if r.id.endswith("eval-03"))
    assert run.probe is None
    assert _headline(run) == ("metrics.accuracy", 0.53)
    assert run.config["git_dirty"] is False


def test_a_constant_or_setting_boolean_is_not_an_outcome() -> None:
    rows = [{"question": f"q{i}", "use_cache": i % 2 == 0, "dry_run": False, "answer": str(i)} for i in range(20)]
    shape = classify(rows)
    assert not shape.is_items and shape.outcomes == ()
    named = [{"id": i, "passed": True} for i in range(5)]  # every item passed: named an outcome, still one
    assert classify(named).outcomes == ("passed",)


def test_pass_at_k_per_item_is_an_outcome(tmp_path: Path) -> None:
    rows = [{"task_id": f"HumanEval/{i}", "completion": "x", "pass@1": 1.0 if i < 16 else 0.0} for i in range(164)]
    shape = classify(rows[:50])
    assert shape.is_items and shape.outcomes == ("pass@1",)
    write(tmp_path / "he" / "humaneval_outputs.jsonl", _lines(rows))
    (run, _), *_ = load_all(tmp_path).values()
    metric, value = _headline(run)
    assert metric == "pass@1" and value == 16 / 164


def test_lists_of_k_sample_outcomes_are_items_with_samples(tmp_path: Path) -> None:
    rows = [{"question_id": 100 + i, "question": f"q{i}", "correct": [j < i % 9 for j in range(8)]} for i in range(30)]
    shape = classify(rows)
    assert shape.is_items and shape.main == "correct"
    write(tmp_path / "s" / "sampled.jsonl", _lines(rows))
    (run, _), *_ = load_all(tmp_path).values()
    assert run.metrics is None or not run.metrics.series
    assert run.probe is not None and len(run.probe.samples) == 30
    metric, _ = _headline(run)
    assert metric == "correct"


def _harness_sample(i: int, passed: bool) -> dict:
    return {
        "doc_id": i,
        "doc": {"task_id": f"HumanEval/{i}", "prompt": f"def f{i}():"},
        "target": f"check(f{i})",
        "arguments": {"gen_args_0": {"arg_0": f"def f{i}():", "arg_1": {"max_gen_toks": 512}}},
        "resps": [[f"    return {i}"]],
        "filtered_resps": [[f"    return {i}"]],
        "filter": "create_test",
        "metrics": ["pass@1"],
        "doc_hash": f"{i:064x}",
        "pass@1": 1.0 if passed else 0.0,
    }


def test_an_lm_eval_sample_dump_under_another_name_is_read_by_its_fields(tmp_path: Path) -> None:
    """Saved as `humaneval_generations.jsonl`, it was a curve over the line index ("pass@1 0.0 %, mean of the
    last 10"); it is 164 documents, 16 of them passed."""
    write(tmp_path / "dump" / "humaneval_generations.jsonl", _lines([_harness_sample(i, i < 16) for i in range(164)]))
    (run, _), *_ = load_all(tmp_path).values()
    assert run.adapter == "lm_eval"
    assert run.probe is not None and run.probe.size == 164
    metric, value = _headline(run)
    assert metric == "pass@1,create_test" and value == 16 / 164


RESULTS = {
    "results": {"arc_easy": {"alias": "arc_easy", "acc,none": 0.75, "acc_stderr,none": 0.01}},
    "versions": {"arc_easy": 1.0},
    "n-shot": {"arc_easy": 0},
    "config": {"model": "hf", "model_args": "pretrained=acme/tiny-7b,dtype=bfloat16", "batch_size": "8"},
    "git_hash": "abc1234",
    "date": 1718000000.0,
}


def test_a_truncated_results_file_keeps_the_model_before_the_damage(tmp_path: Path) -> None:
    text = json.dumps(RESULTS, indent=2)
    cut = text[: text.index('"batch_size"')]  # truncated right after model_args
    write(tmp_path / "ev" / "results_2025-01-02T03-04-05.json", cut)
    (run, _), *_ = load_all(tmp_path).values()
    assert run.model.get("name") == "acme/tiny-7b"
    assert _headline(run) == ("arc_easy/acc", 0.75)
    assert any("model_args" in n for n in run.notices)
    assert "git_hash" not in run.provenance  # after the damage: not read


def test_a_file_scoring_ten_systems_is_one_run_per_system_paired_on_items(tmp_path: Path) -> None:
    """The defect: one arbitrary system's accuracy for a file that scores ten systems."""
    rows = [
        {"question_id": f"q{i:02d}", "model": f"system-{s}", "prediction": "x", "correct": (i * (s + 1)) % 10 < s}
        for s in range(10)
        for i in range(30)
    ]
    write(tmp_path / "board" / "all_predictions.jsonl", _lines(rows))
    loaded = load_all(tmp_path)
    assert len(loaded) == 10
    for s in range(10):
        run = next(r for r, _ in loaded.values() if r.id.endswith(f"/system-{s}"))
        assert run.probe is not None and run.probe.size == 30
        hits = sum((i * (s + 1)) % 10 < s for i in range(30))
        assert _headline(run) == ("correct", hits / 30)
        assert run.model["name"] == f"system-{s}"
    ids = {tuple(sorted(str(c.id) for c in r.probe.cases)) for r, _ in loaded.values() if r.probe is not None}
    assert len(ids) == 1  # every system on the same items: paired case by case
