"""The demo generator (scripts/make_demo.py) is deterministic and writes the tree the docs promise."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import yaml

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_demo.py"
SPEC_RUNS = ("r1", "r2", "r3", "r4")
SPEC_RUN_FIELDS = (
    "id",
    "title",
    "spec",
    "revision",
    "date",
    "status",
    "primary_axis",
    "hypothesis",
    "success_criteria",
    "held_constant",
    "model",
    "config",
    "contract",
    "data",
    "provenance",
    "tags",
    "lessons",
)
DATA_FIELDS = (
    "dataset_version",
    "rows",
    "packed_tokens",
    "effective_epochs",
    "tokenizer_size",
    "reserved_tokens",
    "context",
    "p95_prompt_tokens",
    "p95_output_tokens",
    "decode_budget",
)


def _load_script():
    spec = importlib.util.spec_from_file_location("make_demo", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_demo"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def make_demo():
    return _load_script()


@pytest.fixture(scope="module")
def tree(make_demo, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "reports"
    assert make_demo.main([str(out)]) == 0
    return out


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_generations_are_byte_identical(make_demo, tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "again"
    make_demo.main([str(other)])
    a, b = _snapshot(tree), _snapshot(other)
    assert sorted(a) == sorted(b)
    assert [k for k in a if a[k] != b[k]] == []


def test_regenerating_in_place_wipes_stale_files(make_demo, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    make_demo.main([str(out)])
    (out / "spec03" / "stale.txt").write_text("left over")
    make_demo.main([str(out)])
    assert not (out / "spec03" / "stale.txt").exists()


def test_refuses_to_wipe_a_folder_it_did_not_write(make_demo, tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("do not delete")
    with pytest.raises(SystemExit):
        make_demo.main([str(out)])
    assert (out / "thesis.tex").exists()
    make_demo.main([str(out), "--force"])
    assert (out / "obs.yaml").is_file()


def test_running_run_ends_with_a_half_written_line(tree: Path) -> None:
    raw = (tree / "spec03" / "r4" / "metrics.jsonl").read_bytes()
    assert not raw.endswith(b"\n")
    *complete, last = raw.decode().split("\n")
    assert len(complete) > 1000
    for line in complete:
        json.loads(line)
    assert last.startswith("{")
    with pytest.raises(json.JSONDecodeError):
        json.loads(last)
    # finished runs end cleanly
    for run in ("r1", "r2", "r3"):
        assert (tree / "spec03" / run / "metrics.jsonl").read_bytes().endswith(b"}\n")


def _probe_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_probe_ids_are_shared_across_the_spec_runs(tree: Path) -> None:
    ids = {run: _probe_ids(tree / "spec03" / run / "probe.jsonl") for run in SPEC_RUNS}
    for run, found in ids.items():
        if run == "r4":  # sampled: every id 4 times, as samples 0-3 with one selected
            records = [json.loads(x) for x in (tree / "spec03" / run / "probe.jsonl").read_text().splitlines()]
            by_id: dict[str, list[dict]] = {}
            for r in records:
                by_id.setdefault(r["id"], []).append(r)
            assert all(sorted(r["sample"] for r in group) == [0, 1, 2, 3] for group in by_id.values())
            assert all(sum(r["selected"] for r in group) == 1 for group in by_id.values())
            found = list(by_id)
            ids[run] = found
        assert len(found) == len(set(found)), f"duplicate ids in {run}"
    full = set(ids["r1"])
    assert 120 <= len(full) <= 200
    assert set(ids["r2"]) == full
    assert set(ids["r3"]) == full
    assert ids["r4"] and set(ids["r4"]) < full  # partial probe of a running run
    assert _probe_ids(tree / "spec03" / "r3" / "probe_repaired.jsonl") == ids["r3"]


def test_probe_cases_follow_the_contract(tree: Path) -> None:
    for run in SPEC_RUNS:
        run_dir = tree / "spec03" / run
        for line in (run_dir / "probe.jsonl").read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            assert case["split"] in {"train", "dev", "test"}
            for check in ("exact", "renderable", "materialized", "truncated", "special_token_leak"):
                assert isinstance(case[check], bool)
            failed = (
                not case["exact"]
                or not case["renderable"]
                or not case["materialized"]
                or case["truncated"]
                or case["special_token_leak"]
            )
            assert failed == ("failure_class" in case), case["id"]
            render = case.get("render")
            if render and not render.startswith(".."):
                assert (run_dir / render).is_file()


def test_every_run_yaml_parses_and_has_its_fields(tree: Path) -> None:
    run_files = sorted(tree.rglob("run.yaml"))
    # spec03 (5 rungs and 2 more seeds of r1 and of r3), the RL run, the campaigns, the ablation arms, the size study
    assert len(run_files) == 5 + 4 + 1 + 9 + 18 + 9 + 18
    docs = {}
    for path in run_files:
        text = path.read_text(encoding="utf-8")
        doc = yaml.safe_load(text)
        assert isinstance(doc, dict), path
        assert "&id" not in text and "*id" not in text  # obs refuses YAML aliases
        docs[path.parent.relative_to(tree).as_posix()] = doc

    # a seed replicate is its rung's run.yaml but for the id, title, hypothesis, tags, baseline and the seed
    for run in ("r1", "r3"):
        rung = docs[f"spec03/{run}"]
        for seed in (18, 19):
            rep = docs[f"spec03/{run}_s{seed}"]
            assert rep["id"] == f"spec03-{run}-s{seed}" and rep["config"]["train"]["seed"] == seed
            assert {**rep["config"]["train"], "seed": 17} == rung["config"]["train"]
            for key in ("model", "contract", "data", "spec", "status"):
                assert rep[key] == rung[key], (run, seed, key)
            assert rep.get("baseline") == (f"{rung['baseline']}-s{seed}" if rung.get("baseline") else None)
            assert "decision" not in rep

    verdicts = {"r1": "promote", "r2": "reject", "r3": "repair"}
    for run in SPEC_RUNS:
        doc = docs[f"spec03/{run}"]
        assert doc["id"] == f"spec03-{run}"
        for key in SPEC_RUN_FIELDS:
            assert doc.get(key) not in (None, "", [], {}), f"{run}: {key}"
        assert set(doc["contract"]) == {"dsl", "compiler", "tokenizer", "probe"}
        assert all(k in doc["data"] for k in DATA_FIELDS)
        assert {"corpus_hash", "code_commit", "tokenizer", "chat_template"} <= set(doc["provenance"])
        assert doc["date"].year == 2026 and doc["date"].month == 3
        if run in verdicts:
            assert doc["status"] == "finished"
            assert doc["decision"]["verdict"] == verdicts[run]
            assert {"rationale", "next", "by", "date"} <= set(doc["decision"])
        else:
            assert doc["status"] == "running"
            assert "decision" not in doc
        if run != "r1":
            assert doc["baseline"].startswith("spec03-r")

    r1, r2 = docs["spec03/r1"], docs["spec03/r2"]
    assert r2["primary_axis"] == "data"
    assert r2["config"]["train"]["lr"] != r1["config"]["train"]["lr"]  # the undeclared second axis
    assert "optimizer" in r2["held_constant"]

    rl = docs["grpo-rl-07"]
    assert rl["primary_metric"] == "correct_rate"
    assert rl["hypothesis"] and rl["decision"]["verdict"]

    campaign = yaml.safe_load((tree / "sepa-campaign" / "campaign.yaml").read_text(encoding="utf-8"))
    names = [c["name"] for c in campaign["conditions"]]
    for cond in names:
        for seed in campaign["seeds"]:
            doc = docs[f"sepa-campaign/{cond}_s{seed}"]
            assert (doc["condition"], doc["seed"], doc["status"]) == (cond, seed, "finished")
            assert doc["id"] and doc["date"]


def test_rl_run_shows_a_late_reward_variance_collapse(tree: Path) -> None:
    rows = [json.loads(x) for x in (tree / "grpo-rl-07" / "metrics.jsonl").read_text().splitlines()]
    n = len(rows)
    mid = [r["frac_reward_zero_std"] for r in rows[n // 5 : int(n * 0.65)]]
    end = [r["frac_reward_zero_std"] for r in rows[-30:]]
    assert max(mid) < 0.2 < 0.4 < min(end)
    for key in ("kl", "entropy", "reward_std", "advantage_std", "rewards/format/mean", "rewards/correct/mean"):
        assert key in rows[-1]


def test_hostile_inputs_are_where_the_docs_say(tree: Path) -> None:
    r2 = (tree / "spec03" / "r2" / "probe.jsonl").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" in r2
    assert "</td></tr>" in r2
    prompts = " ".join(json.loads(line)["prompt"] for line in r2.splitlines())
    assert "\"latency\" vs 'throughput' &amp; cost" in prompts
    assert "\u202e" in r2
    assert '"render": "../../obs.yaml"' in r2
    big = max((json.loads(line) for line in r2.splitlines()), key=lambda c: len(c["actual"]))
    assert 190_000 <= len(big["actual"].encode()) <= 210_000
    for text in (
        (tree / "spec03" / "r2" / "notes.md").read_text(encoding="utf-8"),
        (tree / "spec03" / "r2" / "run.yaml").read_text(encoding="utf-8"),
    ):
        assert "javascript:alert(1)" in text
        assert "<img src=x onerror=alert(1)>" in text


def test_agent_learning_export_is_in_the_tree(tree: Path) -> None:
    learning = tree / "agents" / "results" / "learning"
    lines = (learning / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 300
    playbook = json.loads((learning / "playbook.json").read_text(encoding="utf-8"))
    assert len(playbook["playbook_entries"]) == 6
    assert {json.loads(line)["learning_key"] for line in lines} == {"incident-triage", "sql-repair"}


def test_tree_stays_small(tree: Path) -> None:
    total = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
    # + the agent-learning export (agents/, ~170 KB), the retrain-layout campaign (retrain-demo/, ~210 KB),
    # spec03's four seed replicates (outcomes-only probes, ~90 KB), the probe-change rung spec03-r5 and the
    # expected/predicted layouts of the spec03 probes (issue 27, ~420 KB)
    assert total < 3 * 1024 * 1024 + 200 * 1024 + 200 * 1024 + 240 * 1024 + 100 * 1024 + 440 * 1024
    assert max(p.stat().st_size for p in tree.rglob("*.svg")) < 4096


def test_retrain_demo_is_a_campaign_runner_layout(tree: Path) -> None:
    """retrain-demo/: runs/<condition>_s<seed>/ with no run.yaml, records carrying condition and seed, and the
    emergence logger's steps and a few hundred generations (issue 33)."""
    base = tree / "retrain-demo"
    assert (base / "campaign.yaml").is_file() and not list(base.rglob("run.yaml"))
    folders = sorted(p.name for p in (base / "runs").iterdir())
    assert len(folders) == 9
    n_generations = 0
    for name in folders:
        run = base / "runs" / name
        first = json.loads((run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()[0])
        assert name == f"{first['condition']}_s{first['seed']}"
        gens = (run / "emergence/generations.jsonl").read_text(encoding="utf-8").splitlines()
        assert (run / "emergence/steps.jsonl").is_file()
        assert all({"step", "prompt", "completion", "reward"} <= set(json.loads(g)) for g in gens)
        n_generations += len(gens)
    assert 100 <= n_generations <= 300
