"""Agent sessions: JSON-lines exports of agent sessions, per-key summaries and playbook files.

Not a run format. The sessions of a learning key are a sample of episodes, each with a reward, a cost
and the playbook entries that fired, so they are read into `obs.agents` objects (never into a run
plotted against the line index) and discovery hands every such file here, wherever it lies
(`obs.adapters.session_shape` tells them by content). The field names of an Atlas export are the
native ones; the aliases below are what other harnesses write. Every problem is a diagnostic with
the file and line; a record without a learning key or a reward is reported and skipped.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from obs.adapters.session_shape import is_session_record, learning_key_of, learning_kind
from obs.adapters.shared.json_docs import read_json_document
from obs.agents import DEFAULT_WEIGHTS, EntryUsage, LearningData, Playbook, PlaybookEntry, Session
from obs.diagnostics import Diagnostics
from obs.jsonl import iter_jsonl
from obs.ledger import is_reserved
from obs.safepaths import walk_files

MAX_SUMMARY_BYTES = 64 * 1024 * 1024

# dotted paths, first present wins
SESSION_ID = ("session_id", "id", "session")
TASK_ID = ("task_id", "incident_id", "task", "metadata.task_id", "metadata.incident_id", "session_metadata.task_id")
CREATED_AT = ("created_at", "timestamp", "started_at", "completed_at", "metadata.created_at")
EXECUTION_MODE = (
    "execution_mode",
    "session_metadata.adaptive_summary.execution_mode",
    "metadata.adaptive_summary.execution_mode",
    "adaptive_summary.execution_mode",
    "metadata.execution_mode",
)
REVIEW_STATUS = ("review_status", "metadata.review_status", "status")
REWARD = ("session_reward.score", "reward_stats.score", "reward_stats.mean", "reward.score", "reward", "score")
UNCERTAINTY = ("session_reward.uncertainty", "reward_stats.uncertainty", "reward_stats.std", "reward.uncertainty")
TOKENS = ("token_usage.total_tokens", "metadata.token_usage.total_tokens", "total_tokens", "tokens")
RETRIES = ("retries", "retry_count", "metadata.retries", "metadata.learning_usage.session.retry_count")
FAILURES = ("failures", "failure_count", "failure_events", "metadata.learning_usage.session.failure_events")
MODELS = ("models", "metadata.models", "session_metadata.models")
USAGE = ("metadata.learning_usage.session.entries", "learning_usage.session.entries", "learning_usage.entries")
TRAJECTORY = ("trajectory_events", "trajectory_event_count")
ENTRY_ID = ("entry_id", "id", "playbook_entry_id")


class AgentSessionsAdapter:
    """Finds the agent-learning files of a folder (by content) and reads them into `LearningData`."""

    name = "agent_sessions"

    def pick(self, files: Iterable[Path], root: Path) -> list[Path]:
        """The agent-learning files among a folder's files (discovery's listing), sorted."""
        return sorted(f for f in files if not is_reserved(f, root) and learning_kind(f) is not None)

    def files(self, folder: Path, root: Path) -> list[Path]:
        """The folder's own agent-learning files (not below it), sorted."""
        return self.pick(walk_files(folder, root, recursive=False), root)

    def load(self, files: Iterable[Path], diags: Diagnostics) -> LearningData:
        data = LearningData()
        order = 0
        for path in sorted(files):
            kind = learning_kind(path)
            data.files.append(path)
            if kind == "sessions":
                for session in _read_sessions_file(path, diags, order):
                    data.sessions.append(session)
                    order += 1
            elif kind is not None:
                order = _read_document(path, kind, data, diags, order)
        _drop_repeats(data, diags)
        return data


@functools.cache
def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def get(record: Any, path: str) -> Any:
    """The value at a dotted path, or None."""
    node = record
    for part in _parts(path):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
        if node is None:
            return None
    return node


def first(record: Any, paths: tuple[str, ...]) -> Any:
    for p in paths:
        value = get(record, p)
        if value is not None:
            return value
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    x = float(value)
    return x if math.isfinite(x) else None


def _count(value: Any) -> float | None:
    """A count written as a number, or as the list of the things counted."""
    if isinstance(value, list):
        return float(len(value))
    return _number(value)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


def _usage(raw: Any, where: Path, line: int, diags: Diagnostics) -> tuple[EntryUsage, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        diags.warning(where, "learning_usage entries should be a list of {entry_id, cue_hit, adopted}; ignored", line)
        return ()
    out = []
    for item in raw:
        entry = _text(first(item, ENTRY_ID)) if isinstance(item, dict) else None
        if entry is None:
            diags.warning(where, "a learning_usage entry has no entry_id; it was skipped", line)
            continue
        hit = item.get("cue_hit", item.get("cue_hits", item.get("fired")))
        adopted = item.get("adopted", item.get("adoptions"))
        out.append(EntryUsage(entry, bool(hit), bool(adopted) and bool(hit)))
    return tuple(out)


def _models(raw: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, dict):
        return ()
    pairs = []
    for role, model in raw.items():
        name = model.get("name") or model.get("model") if isinstance(model, dict) else model
        if name is not None and not isinstance(name, dict | list):
            pairs.append((str(role), str(name)))
    return tuple(sorted(pairs))


def session_from(record: dict[str, Any], where: Path, line: int, order: int, diags: Diagnostics) -> Session | None:
    """One session record, or None (reported) when it has no learning key or no reward."""
    key = learning_key_of(record)
    if key is None or isinstance(key, dict | list) or str(key) == "":
        diags.warning(where, "session has no learning_key; skipped", line)
        return None
    raw_reward = first(record, REWARD)
    reward = _number(raw_reward)
    if raw_reward is not None and reward is None:
        diags.warning(
            where, f"session reward {raw_reward!r} is not a finite number; the session is kept without one", line
        )
    sid = _text(first(record, SESSION_ID)) or f"{where.name}:{line}"
    return Session(
        session_id=sid,
        learning_key=str(key),
        task_id=_text(first(record, TASK_ID)),
        created_at=_text(first(record, CREATED_AT)),
        execution_mode=_text(first(record, EXECUTION_MODE)),
        review_status=_text(first(record, REVIEW_STATUS)),
        reward=reward,
        uncertainty=_number(first(record, UNCERTAINTY)),
        tokens=_number(first(record, TOKENS)),
        retries=_count(first(record, RETRIES)),
        failures=_count(first(record, FAILURES)),
        models=_models(first(record, MODELS)),
        usage=_usage(first(record, USAGE), where, line, diags),
        trajectory_events=None if (t := _count(first(record, TRAJECTORY))) is None else int(t),
        source=where,
        line=line,
        order=order,
    )


def _read_sessions_file(path: Path, diags: Diagnostics, order: int) -> Iterator[Session]:
    for line, record in iter_jsonl(path, diags):
        if not is_session_record(record) and learning_key_of(record) is None:
            diags.warning(path, "not a session record (no learning_key); skipped", line)
            continue
        session = session_from(record, path, line, order, diags)
        if session is not None:
            order += 1
            yield session


def _read_document(path: Path, kind: str, data: LearningData, diags: Diagnostics, order: int) -> int:
    doc = read_json_document(path, diags, MAX_SUMMARY_BYTES, hint="export the sessions as JSON lines instead")
    if doc is None or not isinstance(doc.data, dict):
        if doc is not None and doc.ok:
            diags.warning(path, "expected a JSON object; not read")
        return order
    obj: dict[str, Any] = doc.data
    if kind == "manifest" or isinstance(obj.get("run_metadata"), dict):
        meta = obj.get("run_metadata")
        if isinstance(meta, dict):
            data.run_metadata.update({str(k): v for k, v in meta.items()})
    key = learning_key_of(obj)
    key = None if key is None or isinstance(key, dict | list) else str(key)
    sessions = obj.get("sessions")
    if isinstance(sessions, list):
        for i, record in enumerate(sessions):
            if not isinstance(record, dict):
                continue
            if key is not None and learning_key_of(record) is None:
                record = {**record, "learning_key": key}
            session = session_from(record, path, i + 1, order, diags)
            if session is not None:
                data.sessions.append(session)
                order += 1
    holder = next((obj[k] for k in ("teacher_playbook", "playbook") if isinstance(obj.get(k), dict)), obj)
    if isinstance(holder.get("playbook_entries"), list):
        data.playbooks.append(playbook_from(holder, key, path, diags, obj.get("rubric_weights")))
    elif kind == "summary" and not isinstance(sessions, list):
        diags.warning(
            path,
            "a learning summary without session records: obs computes every figure from the sessions, so this "
            "file adds nothing; export the sessions (JSON lines) or keep 'sessions' in the summary",
        )
    return order


def playbook_from(
    holder: dict[str, Any], key: str | None, path: Path, diags: Diagnostics, outer_weights: Any = None
) -> Playbook:
    raw_weights = holder.get("rubric_weights", outer_weights)
    weights = DEFAULT_WEIGHTS
    given = False
    if isinstance(raw_weights, dict):
        pairs = [(str(k), w) for k, v in raw_weights.items() if (w := _number(v)) is not None]
        if pairs:
            weights, given = tuple(sorted(pairs, key=lambda kv: -kv[1])), True
    entries = []
    for i, raw in enumerate(holder["playbook_entries"]):
        entry = entry_from(raw) if isinstance(raw, dict) else None
        if entry is None:
            diags.warning(path, f"playbook_entries[{i}] has no entry_id; skipped")
            continue
        entries.append(entry)
    own_key = holder.get("learning_key")
    return Playbook(
        learning_key=str(own_key) if isinstance(own_key, str | int) else key,
        entries=tuple(entries),
        weights=weights,
        weights_given=given,
        source=path,
    )


def _gate(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, dict):
        return _gate(value.get("passed", value.get("pass", value.get("status"))))
    if isinstance(value, str):
        low = value.lower()
        if low in ("pass", "passed", "ok", "true"):
            return True
        if low in ("fail", "failed", "false", "rejected"):
            return False
    return None


def _phrase(value: Any, *keys: str) -> str | None:
    if isinstance(value, dict):
        return next((str(value[k]) for k in keys if isinstance(value.get(k), str | int | float)), None)
    return _text(value)


def entry_from(raw: dict[str, Any]) -> PlaybookEntry | None:
    entry_id = _text(first(raw, ENTRY_ID))
    if entry_id is None:
        return None
    scores_raw = first(
        raw, ("rubric_scores", "scores", "rubric.scores", "provenance.rubric.scores", "provenance.rubric_scores")
    )
    scores = (
        tuple(sorted((str(k), v) for k, s in scores_raw.items() if (v := _number(s)) is not None))
        if isinstance(scores_raw, dict)
        else ()
    )
    gates_raw = first(raw, ("gates", "gate_results", "rubric.gates", "provenance.rubric.gates", "provenance.gates"))
    gates = (
        tuple(sorted((str(k), g) for k, v in gates_raw.items() if (g := _gate(v)) is not None))
        if isinstance(gates_raw, dict)
        else ()
    )
    return PlaybookEntry(
        entry_id=entry_id,
        cue=_phrase(raw.get("cue"), "pattern", "text", "value"),
        action=_phrase(raw.get("action"), "imperative", "text", "runtime_handle"),
        scope=_phrase(raw.get("scope"), "category", "type"),
        lifecycle=_text(first(raw, ("lifecycle", "provenance.lifecycle", "status"))),
        scores=scores,
        gates=gates,
        weighted_score=_number(
            first(raw, ("weighted_score", "rubric.weighted_score", "provenance.rubric.weighted_score"))
        ),
    )


def _drop_repeats(data: LearningData, diags: Diagnostics) -> None:
    """A session exported twice (in the JSONL and again in a summary) counts once: the first read is kept."""
    seen: dict[tuple[str, str], Session] = {}
    kept = []
    repeats = 0
    first_repeat: Session | None = None
    for s in data.sessions:
        ident = (s.learning_key, s.session_id)
        if ident in seen:
            repeats += 1
            first_repeat = first_repeat or s
            continue
        seen[ident] = s
        kept.append(s)
    if first_repeat is not None:
        diags.info(
            first_repeat.source,
            f"{repeats} session(s) were read twice (the same learning key and session id, e.g. in the export and in "
            "a summary); each counts once",
            first_repeat.line,
        )
    data.sessions = kept
