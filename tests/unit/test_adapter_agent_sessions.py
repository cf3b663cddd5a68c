"""The agent-sessions input: told by content wherever it lies, never read as a run, aliases, bad input."""

from __future__ import annotations

import json
from pathlib import Path

from obs.adapters import LEARNING
from obs.adapters.session_shape import learning_kind
from obs.diagnostics import Diagnostics
from obs.discover import discover


def session(i: int, key: str = "k1", **extra: object) -> dict:
    return {
        "session_id": f"s{i}",
        "learning_key": key,
        "task_id": f"t{i % 2}",
        "created_at": f"2026-10-01T00:{i:02d}:00Z",
        "execution_mode": "auto",
        "review_status": "approved",
        "session_reward": {"score": 0.5 + i / 100, "uncertainty": 0.1},
        "token_usage": {"total_tokens": 1000 + i},
        "models": {"student": "m1"},
        "metadata": {
            "learning_usage": {"session": {"entries": [{"entry_id": "e1", "cue_hit": i % 2 == 0, "adopted": True}]}}
        },
        **extra,
    }


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sessions_are_found_anywhere_and_are_not_runs(tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "deep" / "results" / "learning" / "export.jsonl",
        [session(i, "a" if i % 2 else "b") for i in range(6)],
    )
    (tmp_path / "deep" / "results" / "learning" / "b_summary.json").write_text(
        json.dumps({"learning_key": "b", "reward_windows": {"recent": 0.6}, "sessions": [session(9, "b")]})
    )
    found = discover(tmp_path)
    assert found.runs == []  # neither the export nor the per-key summary became a run
    assert sorted(p.name for p in found.learning) == ["b_summary.json", "export.jsonl"]
    assert found.unread_rel() == []
    data = LEARNING.load(found.learning, Diagnostics(root=tmp_path))
    assert data.keys() == ["a", "b"] and len(data.sessions_of("b")) == 4


def test_a_run_log_beside_the_sessions_is_still_a_run(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "r" / "sessions.jsonl", [session(i) for i in range(3)])
    write_jsonl(tmp_path / "r" / "metrics.jsonl", [{"step": i, "loss": 1 / (i + 1)} for i in range(5)])
    found = discover(tmp_path)
    assert [s.files[0].name for s in found.runs] == ["metrics.jsonl"]
    assert [p.name for p in found.learning] == ["sessions.jsonl"]


def test_kinds_by_content(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", [session(0)])
    write_jsonl(tmp_path / "metrics.jsonl", [{"step": 1, "learning_key": "x"}])  # a key but not a session
    (tmp_path / "playbook.json").write_text(json.dumps({"playbook_entries": [{"entry_id": "e1"}]}))
    (tmp_path / "index.json").write_text(json.dumps({"run_metadata": {"prompt_variant": "v2"}}))
    site = {"generator": "obs", "runs": [], "learning": {"run_metadata": {}}}
    (tmp_path / "site.json").write_text(json.dumps(site))
    kinds = {p.name: learning_kind(p) for p in sorted(tmp_path.iterdir())}
    assert kinds == {
        "a.jsonl": "sessions",
        "metrics.jsonl": None,
        "playbook.json": "playbook",
        "index.json": "manifest",
        "site.json": None,
    }


def test_aliases_of_other_harnesses(tmp_path: Path) -> None:
    row = {
        "id": "x1",
        "metadata": {"learning_key": "k", "incident_id": "INC-1", "token_usage": {"total_tokens": 77}, "retries": 2},
        "session_metadata": {"adaptive_summary": {"execution_mode": "coach"}},
        "reward_stats": {"score": 0.25, "std": 0.05},
        "timestamp": "2026-01-01T00:00:00Z",
        "failure_events": [{"kind": "timeout"}, {"kind": "tool"}],
        "trajectory_event_count": 12,
    }
    path = write_jsonl(tmp_path / "e.jsonl", [row])
    data = LEARNING.load([path], Diagnostics(root=tmp_path))
    (s,) = data.sessions
    assert (s.session_id, s.learning_key, s.task_id, s.execution_mode) == ("x1", "k", "INC-1", "coach")
    assert (s.reward, s.uncertainty, s.tokens, s.retries, s.failures) == (0.25, 0.05, 77.0, 2.0, 2.0)
    assert s.trajectory_events == 12 and s.created_at == "2026-01-01T00:00:00Z"


def test_bad_records_are_reported_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        json.dumps(session(0)),
        json.dumps({**session(1), "session_reward": {"score": "high"}}),
        json.dumps({**session(2), "learning_key": ""}),
        "{not json",
        json.dumps({**session(3), "metadata": {"learning_usage": {"session": {"entries": "e1"}}}}),
    ]
    path.write_text("\n".join(lines) + "\n")
    diags = Diagnostics(root=tmp_path)
    data = LEARNING.load([path], diags)
    messages = [d.format() for d in diags.items]
    assert any("s.jsonl:2" in m and "not a finite number" in m for m in messages), messages
    assert any("s.jsonl:3" in m and "no learning_key" in m for m in messages), messages
    assert any("s.jsonl:4" in m for m in messages), messages
    assert any("s.jsonl:5" in m and "should be a list" in m for m in messages), messages
    assert [s.session_id for s in data.sessions] == ["s0", "s1", "s3"]
    assert data.sessions[1].reward is None


def test_a_session_exported_twice_counts_once(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [session(0), session(1)])
    (tmp_path / "k1_summary.json").write_text(json.dumps({"learning_key": "k1", "sessions": [session(1)]}))
    diags = Diagnostics(root=tmp_path)
    data = LEARNING.load([path, tmp_path / "k1_summary.json"], diags)
    assert len(data.sessions) == 2
    assert any("read twice" in d.message for d in diags.items)


def test_a_summary_without_sessions_says_what_to_add(tmp_path: Path) -> None:
    path = tmp_path / "k_summary.json"
    path.write_text(json.dumps({"learning_key": "k", "reward_mean": 0.7}))
    diags = Diagnostics(root=tmp_path)
    data = LEARNING.load([path], diags)
    assert data.sessions == []
    assert any("without session records" in d.message for d in diags.items)
