"""The agent-learning domain: sessions grouped by learning key, and the playbook entries they used.

Agent teams export one record per session (an Atlas-style JSONL export, or the per-key summary files
their harness writes). A session is not a step of a training curve: the sessions of one learning
key are a sample, ordered in time, each with a reward, a cost in tokens, a review state and the
playbook entries whose cue hit. These types hold what `obs.adapters.agent_sessions` read, for
`obs.analysis.learning` to summarise; they carry no behaviour beyond small conveniences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class EntryUsage:
    """One playbook entry in one session: its cue hit (it "fired") and whether the agent adopted it."""

    entry_id: str
    cue_hit: bool
    adopted: bool


@dataclass(frozen=True)
class Session:
    """One agent session, as exported. `line` is where it was read (for messages and the sessions table)."""

    session_id: str
    learning_key: str
    task_id: str | None
    created_at: str | None
    execution_mode: str | None
    review_status: str | None
    reward: float | None
    uncertainty: float | None
    tokens: float | None
    retries: float | None
    failures: float | None
    models: tuple[tuple[str, str], ...]  # (role, model name), sorted by role
    usage: tuple[EntryUsage, ...]
    trajectory_events: int | None
    source: Path
    line: int
    order: int  # position in reading order: ties of created_at keep it

    def fired(self, entry_id: str) -> bool:
        return any(u.entry_id == entry_id and u.cue_hit for u in self.usage)


@dataclass(frozen=True)
class PlaybookEntry:
    """A playbook entry: cue, action, scope, lifecycle, rubric scores and gate results."""

    entry_id: str
    cue: str | None
    action: str | None
    scope: str | None  # reinforcement / differentiation
    lifecycle: str | None  # active / deprecated / rejected
    scores: tuple[tuple[str, float], ...]  # rubric dimension -> score (0-1)
    gates: tuple[tuple[str, bool], ...]  # gate -> passed
    weighted_score: float | None  # as written in the file, when it was


@dataclass(frozen=True)
class Playbook:
    """The playbook of one learning key (or of every key, `learning_key` None), with its rubric weights."""

    learning_key: str | None
    entries: tuple[PlaybookEntry, ...]
    weights: tuple[tuple[str, float], ...]
    weights_given: bool  # False: the default weights were used
    source: Path


DEFAULT_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("actionability", 0.4),
    ("generality", 0.3),
    ("hookability", 0.2),
    ("concision", 0.1),
)


@dataclass
class LearningData:
    """Every session, playbook and export setting read from a source tree."""

    sessions: list[Session] = field(default_factory=list)
    playbooks: list[Playbook] = field(default_factory=list)
    run_metadata: dict[str, Any] = field(default_factory=dict)  # prompt variant, synthesis models, injection
    files: list[Path] = field(default_factory=list)

    def keys(self) -> list[str]:
        return sorted({s.learning_key for s in self.sessions})

    def sessions_of(self, key: str) -> list[Session]:
        return [s for s in self.sessions if s.learning_key == key]

    def playbook_of(self, key: str) -> Playbook | None:
        """The key's own playbook, else one written for every key (the last read wins)."""
        own = [p for p in self.playbooks if p.learning_key == key]
        if own:
            return own[-1]
        shared = [p for p in self.playbooks if p.learning_key is None]
        return shared[-1] if shared else None
