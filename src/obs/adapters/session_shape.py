"""Which files are agent-learning exports: told by their content, wherever they lie.

A file of agent sessions looks like any other JSON-lines log to the generic reader, which would make
the sessions of every learning key one run plotted against the line index, and each per-key summary
a one-point run. This module tells them apart from the first record, so the generic reader leaves
them to `obs.adapters.agent_sessions` (and discovery hands them over). It is a helper, not an
adapter: the generic reader may import it without knowing the agent-sessions format.

* **sessions** (`*.jsonl`, `*.ndjson`): the first record names a learning key (`learning_key`, at the
  top or under `metadata` / `session_metadata`) and is a session (a session id or a session reward);
* **summary** (`*.json`): an object with a top-level `learning_key` (a harness's `<slug>_summary.json`);
* **playbook** (`*.json`): an object with `playbook_entries` (at the top, or under `teacher_playbook` /
  `playbook`);
* **manifest** (`*.json`): a harness's index with `run_metadata` (prompt variant, synthesis models,
  injection mode); an obs site's own index.json is never one.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

import orjson

Kind = Literal["sessions", "summary", "playbook", "manifest"]
HEAD_BYTES = 65536
FIRST_LINE_BYTES = 4096  # a JSON-lines file is told by its first record: most fit in this
SESSION_MARKERS = ("session_id", "session_reward", "reward_stats")
KEY_HOLDERS = ("metadata", "session_metadata")


def _head(path: Path, size: int = HEAD_BYTES) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def _jsonl_head(path: Path) -> bytes:
    """The first record's bytes: 4 KB, or up to 64 KB when the first line is longer."""
    head = _head(path, FIRST_LINE_BYTES)
    if len(head) == FIRST_LINE_BYTES and b"\n" not in head.lstrip():
        head = _head(path)
    return head


def learning_key_of(record: dict[str, Any]) -> Any:
    """The record's learning key: top level first, then under `metadata` / `session_metadata`."""
    if "learning_key" in record:
        return record["learning_key"]
    for holder in KEY_HOLDERS:
        inner = record.get(holder)
        if isinstance(inner, dict) and "learning_key" in inner:
            return inner["learning_key"]
    return None


def is_session_record(record: Any) -> bool:
    return (
        isinstance(record, dict) and learning_key_of(record) is not None and any(m in record for m in SESSION_MARKERS)
    )


def _first_record(head: bytes) -> Any:
    for raw in head.split(b"\n"):
        if raw.strip():
            try:
                return orjson.loads(raw)
            except orjson.JSONDecodeError:
                return None
    return None


def learning_kind(path: Path) -> Kind | None:
    """What agent-learning export `path` is, or None when it is none (read only its head). Discovery and
    the generic reader both ask about every log, so the answer is kept for the file as it is (size, mtime)."""
    name = path.name.lower()
    if not name.endswith((".jsonl", ".ndjson", ".json")):
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    return _kind(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _kind(path: Path, size: int, mtime_ns: int) -> Kind | None:
    name = path.name.lower()
    if name.endswith((".jsonl", ".ndjson")):
        head = _jsonl_head(path)
        if b"learning_key" not in head:
            return None
        return "sessions" if is_session_record(_first_record(head)) else None
    if not name.endswith(".json"):
        return None
    head = _head(path).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        return None
    if b'"generator"' in head and b'"obs"' in head and b'"runs"' in head:
        return None  # an obs site's index.json
    if b'"playbook_entries"' in head and b'"learning_key"' not in head:
        return "playbook"
    if b'"learning_key"' in head and (b'"sessions"' in head or b'"playbook_entries"' in head or b"reward" in head):
        return "summary"
    if b'"run_metadata"' in head:
        return "manifest"
    return None


def is_learning_file(path: Path) -> bool:
    return learning_kind(path) is not None
