#!/usr/bin/env python3
"""The agent-learning part of the demo tree: an Atlas-style export of two learning keys.

`make_demo.py` puts `learning_tree()` under ``agents/`` of the demo (``reports/agents/results/learning/``):

* ``sessions.jsonl`` — 300 sessions, one line each (learning key, task, execution mode, review
  status, reward and its uncertainty, tokens, retries, failures, models per role, trajectory events,
  and per-entry cue hits and adoptions under ``metadata.learning_usage.session.entries``);
* ``playbook.json`` — the playbook of ``incident-triage``: six entries with cue, action, scope,
  lifecycle, rubric scores and gate results. ``pb-03`` is harmful (sessions where it fires lose
  reward); ``pb-06`` failed the generality gate and was rejected; ``pb-04`` is deprecated;
* ``sql-repair_summary.json`` — a per-key summary with the ``sql-repair`` key's playbook;
* ``index.json`` — the harness's manifest with its ``run_metadata`` (prompt variant, synthesis models,
  injection mode);
* ``incident-triage_summary.md`` — the harness's own Markdown digest (obs does not read it).

``--previous OUT`` writes the export as it stood earlier (the sessions before a cut-off, an older
prompt variant): build it and pass that site to ``obs build --compare-to``. Deterministic: seeded
generators, rounded floats, sorted keys, no clock.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

SEED = 20261127
BASE = "agents/results/learning"
START = datetime(2026, 10, 1, tzinfo=UTC)
PREVIOUS_CUT = 0.8  # the previous export holds the first 80 % of each key's sessions

ENTRIES: list[dict[str, Any]] = [
    {
        "entry_id": "pb-01",
        "cue": {"type": "regex", "pattern": "(?i)deploy(ed|ment)? (in|within) the last"},
        "action": {
            "imperative": "List the deploys of the last hour before touching the service",
            "runtime_handle": "logs.search",
        },
        "scope": {"category": "reinforcement"},
        "lifecycle": "active",
        "rubric_scores": {"actionability": 0.9, "generality": 0.8, "hookability": 0.85, "concision": 0.7},
        "gates": {"actionability": "pass", "cue_presence": "pass", "generality": "pass"},
    },
    {
        "entry_id": "pb-02",
        "cue": {"type": "keyword", "pattern": "error rate"},
        "action": {
            "imperative": "Query the error rate per endpoint before restarting anything",
            "runtime_handle": "data.query",
        },
        "scope": {"category": "differentiation"},
        "lifecycle": "active",
        "rubric_scores": {"actionability": 0.85, "generality": 0.75, "hookability": 0.9, "concision": 0.8},
        "gates": {"actionability": "pass", "cue_presence": "pass", "generality": "pass"},
    },
    {
        "entry_id": "pb-03",
        "cue": {"type": "keyword", "pattern": "runbook missing"},
        "action": {
            "imperative": "Escalate to the on-call human as soon as no runbook matches",
            "runtime_handle": "pager.escalate",
        },
        "scope": {"category": "reinforcement"},
        "lifecycle": "active",
        "rubric_scores": {"actionability": 0.8, "generality": 0.7, "hookability": 0.8, "concision": 0.9},
        "gates": {"actionability": "pass", "cue_presence": "pass", "generality": "pass"},
    },
    {
        "entry_id": "pb-04",
        "cue": {"type": "regex", "pattern": "(?i)disk (full|pressure)"},
        "action": {"imperative": "Rotate logs before scaling the volume", "runtime_handle": "ops.rotate_logs"},
        "scope": {"category": "reinforcement"},
        "lifecycle": "deprecated",
        "rubric_scores": {"actionability": 0.7, "generality": 0.6, "hookability": 0.75, "concision": 0.85},
        "gates": {"actionability": "pass", "cue_presence": "pass", "generality": "pass"},
    },
    {
        "entry_id": "pb-05",
        "cue": {"type": "keyword", "pattern": "slow query"},
        "action": {"imperative": "Read the query plan before adding an index", "runtime_handle": "data.query_plan"},
        "scope": {"category": "differentiation"},
        "lifecycle": "active",
        "rubric_scores": {"actionability": 0.8, "generality": 0.5, "hookability": 0.7, "concision": 0.9},
        "gates": {"actionability": "pass", "cue_presence": "pass", "generality": "pass"},
    },
    {
        "entry_id": "pb-06",
        "cue": {"type": "keyword", "pattern": "INC-4471"},
        "action": {"imperative": "Restart the payments worker as on 2026-09-14", "runtime_handle": "ops.restart"},
        "scope": {"category": "reinforcement"},
        "lifecycle": "rejected",
        "rubric_scores": {"actionability": 0.75, "generality": 0.1, "hookability": 0.6, "concision": 0.8},
        "gates": {"actionability": "pass", "cue_presence": "pass", "generality": "fail"},
    },
]

# entry -> (chance its cue hits, chance it is adopted when it hits, reward effect when adopted, token effect, tasks)
EFFECTS: dict[str, tuple[float, float, float, float, tuple[str, ...] | None]] = {
    "pb-01": (0.45, 0.8, 0.09, -400.0, None),
    "pb-02": (0.35, 0.65, 0.05, -150.0, None),
    "pb-03": (0.30, 0.85, -0.12, 900.0, None),
    "pb-04": (0.08, 0.4, 0.0, 0.0, None),
    "pb-05": (0.5, 0.7, 0.04, -300.0, ("T-104",)),
}

KEYS: dict[str, dict[str, Any]] = {
    "incident-triage": {
        "sessions": 160,
        "tasks": ("T-101", "T-102", "T-103", "T-104", "T-105", "T-106"),
        "trend": 0.18,  # the reward rises by this much over the key's sessions
        "base": 0.55,
        "entries": ("pb-01", "pb-02", "pb-03", "pb-04", "pb-05"),
    },
    "sql-repair": {
        "sessions": 140,
        "tasks": ("T-201", "T-202", "T-203", "T-204"),
        "trend": -0.04,
        "base": 0.62,
        "entries": ("sq-01", "sq-02"),
    },
}
SQL_ENTRIES: list[dict[str, Any]] = [
    {
        "entry_id": "sq-01",
        "cue": {"type": "regex", "pattern": "(?i)syntax error at or near"},
        "action": {"imperative": "Quote the identifier the parser names", "runtime_handle": "sql.rewrite"},
        "scope": {"category": "reinforcement"},
        "lifecycle": "active",
        "rubric_scores": {"actionability": 0.9, "generality": 0.85, "hookability": 0.95, "concision": 0.9},
        "gates": {"actionability": "pass", "cue_presence": "pass", "generality": "pass"},
    },
    {
        "entry_id": "sq-02",
        "cue": {"type": "keyword", "pattern": "deadlock"},
        "action": {"imperative": "Retry the transaction once with a smaller batch", "runtime_handle": "sql.retry"},
        "scope": {"category": "differentiation"},
        "lifecycle": "active",
        "rubric_scores": {"actionability": 0.8, "generality": 0.7, "hookability": 0.8, "concision": 0.85},
        "gates": {"actionability": "pass", "cue_presence": "pass", "generality": "pass"},
    },
]
SQL_EFFECTS: dict[str, tuple[float, float, float, float, tuple[str, ...] | None]] = {
    "sq-01": (0.4, 0.75, 0.06, -200.0, None),
    "sq-02": (0.2, 0.6, 0.0, 300.0, ("T-203", "T-204")),
}
MODES = ("auto", "paired", "coach", "escalate")
STUDENTS = ("gpt-4o-mini", "claude-3-haiku")


def rng_for(*names: str) -> np.random.Generator:
    return np.random.default_rng([SEED, zlib.crc32("/".join(names).encode())])


def r4(x: float) -> float:
    return float(round(x, 4))


def sessions_of(key: str) -> list[dict[str, Any]]:
    spec = KEYS[key]
    rng = rng_for("sessions", key)
    effects = EFFECTS if key == "incident-triage" else SQL_EFFECTS
    n = spec["sessions"]
    tasks = spec["tasks"]
    difficulty = {t: d for t, d in zip(tasks, rng.normal(0.0, 0.06, len(tasks)), strict=True)}
    out = []
    for i in range(n):
        task = tasks[int(rng.integers(len(tasks)))]
        mode = MODES[int(rng.choice(4, p=[0.55, 0.2, 0.15, 0.1]))]
        student = STUDENTS[0] if rng.random() < (0.3 + 0.5 * i / n) else STUDENTS[1]
        reward = spec["base"] + spec["trend"] * i / n + difficulty[task]
        tokens = float(rng.lognormal(np.log(6000), 0.25))
        usage = []
        for entry, (p_hit, p_adopt, effect, token_effect, only) in effects.items():
            if only is not None and task not in only:
                continue
            if rng.random() >= p_hit:
                continue
            adopted = bool(rng.random() < p_adopt)
            if adopted:
                reward += effect
                tokens += token_effect
            usage.append({"entry_id": entry, "cue_hit": True, "adopted": adopted})
        reward = float(np.clip(reward + rng.normal(0, 0.08), 0.0, 1.0))
        retries = int(rng.poisson(0.6 if reward > 0.6 else 1.4))
        failures = int(rng.random() < (0.08 if reward > 0.6 else 0.3))
        created = START + timedelta(hours=3 * i + int(rng.integers(0, 3)), minutes=int(rng.integers(60)))
        record = {
            "session_id": f"{key[:3]}-{i + 1:04d}",
            "learning_key": key,
            "task_id": task,
            "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "execution_mode": mode,
            "review_status": "pending" if i >= n - 12 or rng.random() < 0.05 else "approved",
            "session_reward": {"score": r4(reward), "uncertainty": r4(float(rng.uniform(0.03, 0.12)))},
            "token_usage": {"total_tokens": round(tokens)},
            "models": {"student": student, "teacher": "claude-3-sonnet"},
            "trajectory_event_count": int(rng.integers(4, 14)),
            "metadata": {
                "learning_usage": {"session": {"entries": usage, "retry_count": retries, "failure_events": failures}}
            },
        }
        out.append(record)
    return out


def json_line(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def learning_tree(previous: bool = False) -> dict[str, bytes]:
    """The export's files by path relative to the demo root; `previous`: the earlier export."""
    lines = []
    for key in KEYS:
        rows = sessions_of(key)
        if previous:
            rows = rows[: int(len(rows) * PREVIOUS_CUT)]
        lines += rows
    lines.sort(key=lambda r: (r["created_at"], r["session_id"]))
    playbook = {
        "learning_key": "incident-triage",
        "rubric_weights": {"actionability": 0.4, "generality": 0.3, "hookability": 0.2, "concision": 0.1},
        "playbook_entries": ENTRIES,
    }
    summary = {
        "learning_key": "sql-repair",
        "generated_by": "scripts/report_learning.py",
        "teacher_playbook": {"playbook_entries": SQL_ENTRIES},
    }
    manifest = {
        "run_metadata": {
            "prompt_variant": "schema_v1" if previous else "schema_v2",
            "synthesis_models": ["gpt-4o-mini", "claude-3-sonnet"],
            "pamphlet_injection": "toggle",
        },
        "artifacts": ["incident-triage_summary.md", "sql-repair_summary.json"],
    }
    digest = (
        "# incident-triage\n\nThe harness's own digest. obs computes every figure from sessions.jsonl; "
        "this file is listed as not read.\n"
    )
    return {
        f"{BASE}/sessions.jsonl": ("\n".join(json_line(r) for r in lines) + "\n").encode("utf-8"),
        f"{BASE}/playbook.json": (json.dumps(playbook, sort_keys=True, indent=1) + "\n").encode("utf-8"),
        f"{BASE}/sql-repair_summary.json": (json.dumps(summary, sort_keys=True, indent=1) + "\n").encode("utf-8"),
        f"{BASE}/index.json": (json.dumps(manifest, sort_keys=True, indent=1) + "\n").encode("utf-8"),
        f"{BASE}/incident-triage_summary.md": digest.encode("utf-8"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder to write the export into (created; files are overwritten)")
    parser.add_argument("--previous", action="store_true", help="the earlier export, to build and compare with")
    args = parser.parse_args(argv)
    for rel, blob in learning_tree(args.previous).items():
        path = Path(args.out) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
    print(f"wrote the {'previous ' if args.previous else ''}agent-learning export to {args.out}/{BASE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
