"""Issue 33, "every file accounted for": an emergence logger's `emergence/steps.jsonl` and `generations.jsonl` belong
to the run of the folder above them (obs.adapters.side_logs), whatever that run's format; they are never runs of
their own; a file of a run folder that nothing reads is listed as not read."""

from __future__ import annotations

import json
from pathlib import Path

from obs.discover import discover
from obs.pipeline import SourceTree, load_run


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _run(folder: Path, *, run_yaml: bool = False) -> None:
    _jsonl(folder / "metrics.jsonl", [{"step": s, "correct_rate": 0.1 * s} for s in range(5)])
    _jsonl(folder / "emergence" / "steps.jsonl", [{"step": s, "mean_reward": 0.2 * s} for s in range(0, 5, 2)])
    gens = [
        {"step": s, "prompt": f"make {s}", "completion": f"{s} = {s}", "reward": float(s % 2), "tokens": [1, 2]}
        for s in range(5)
    ]
    _jsonl(folder / "emergence" / "generations.jsonl", gens)
    if run_yaml:
        (folder / "run.yaml").write_text("hypothesis: it learns\n")


def test_side_logs_of_a_log_folder_are_not_runs(tmp_path: Path) -> None:
    _run(tmp_path / "r1")
    tree = SourceTree.open(tmp_path)
    assert [p.id for p in tree.plan.runs] == ["r1"]  # no r1/emergence/steps, no r1/emergence/generations
    (planned,) = tree.plan.runs
    assert sorted(f.name for f in planned.source.side) == ["generations.jsonl", "steps.jsonl"]
    run = load_run(tree, planned)
    assert run.metrics is not None
    assert set(run.metrics.series) == {"correct_rate", "emergence/mean_reward"}
    assert list(run.metrics.series["emergence/mean_reward"].values) == [0.0, 0.4, 0.8]
    assert run.generations is not None and len(run.generations) == 5
    assert run.generations.prompt[3] == "make 3" and run.generations.reward[3] == 1.0
    assert run.generations.step[4] == 4.0 and run.generations.line[0] == 1
    assert tree.found.unread_rel() == []


def test_side_logs_of_a_native_run_are_read_and_the_rest_listed(tmp_path: Path) -> None:
    _run(tmp_path / "r1", run_yaml=True)
    (tmp_path / "r1" / "emergence" / "notes.txt").write_text("scratch\n")
    (tmp_path / "r1" / "checkpoint.txt").write_text("step 4\n")
    (tmp_path / "r1" / "renders").mkdir()
    (tmp_path / "r1" / "renders" / "a.svg").write_text("<svg/>")
    found = discover(tmp_path)
    assert found.unread_rel() == ["r1/checkpoint.txt", "r1/emergence/notes.txt"]  # no longer "every file was read"
    tree = SourceTree.open(tmp_path)
    run = load_run(tree, tree.plan.runs[0])
    assert run.adapter == "native"
    assert run.generations is not None and len(run.generations) == 5
    assert run.metrics is not None and "emergence/mean_reward" in run.metrics.series


def test_a_run_below_a_side_folder_name_stays_a_run(tmp_path: Path) -> None:
    """A folder named like a side folder that holds a run of its own (its metrics.jsonl) is not attached."""
    _jsonl(tmp_path / "r1" / "metrics.jsonl", [{"step": 1, "loss": 1.0}])
    _jsonl(tmp_path / "r1" / "emergence" / "metrics.jsonl", [{"step": 1, "loss": 2.0}])
    tree = SourceTree.open(tmp_path)
    assert sorted(p.id for p in tree.plan.runs) == ["r1", "r1/emergence"]
    assert all(not p.source.side for p in tree.plan.runs)


def test_generation_records_without_text_are_counted(tmp_path: Path) -> None:
    _jsonl(tmp_path / "r1" / "metrics.jsonl", [{"step": 1, "loss": 1.0}])
    _jsonl(
        tmp_path / "r1" / "emergence" / "generations.jsonl",
        [{"step": 1, "reward": 1.0}, {"step": 1, "prompt": "p", "completion": "c" * 9000, "reward": "high"}],
    )
    tree = SourceTree.open(tmp_path)
    run = load_run(tree, tree.plan.runs[0])
    assert run.generations is not None and len(run.generations) == 1
    assert run.generations.without_text == 1 and run.generations.cut == 1
    assert run.generations.reward == [None]  # a reward that is not a number is not invented
    messages = [d.message for d in run.diagnostics.items]
    assert any("1 record(s) have no prompt or completion" in m for m in messages)


def test_side_logs_beside_the_metrics_are_the_runs(tmp_path: Path) -> None:
    """`generations.jsonl` and `steps.jsonl` beside a run's metrics.jsonl (no emergence/ folder) are its side logs:
    one run with the folder's id, not three runs `r1/metrics`, `r1/generations`, `r1/steps`."""
    _run(tmp_path / "r1")
    for name in ("steps.jsonl", "generations.jsonl"):
        (tmp_path / "r1" / "emergence" / name).rename(tmp_path / "r1" / name)
    (tmp_path / "r1" / "emergence").rmdir()
    _run(tmp_path / "r2", run_yaml=True)
    (tmp_path / "r2" / "emergence" / "generations.jsonl").rename(tmp_path / "r2" / "generations.jsonl")
    tree = SourceTree.open(tmp_path)
    assert sorted(p.id for p in tree.plan.runs) == ["r1", "r2"]
    runs = {p.id: load_run(tree, p) for p in tree.plan.runs}
    assert runs["r1"].metrics is not None and "steps/mean_reward" in runs["r1"].metrics.series
    assert all(r.generations is not None and len(r.generations) == 5 for r in runs.values())
    assert tree.found.unread_rel() == []
