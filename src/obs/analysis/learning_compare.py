"""Learning keys in index.json, and what moved since another build (`--compare-to`).

A key's record in index.json (`key_record`) holds the figures a later build compares against: the
reward windows, session counts, model utilisation and playbook usage. `compare` takes the records of
the compared build and of this one and returns, per key, the deltas (reward trend: recent mean and
latest score; session counts; sessions and mean reward per model; cue hits and adoption rate) and
the best and worst keys by the change of their recent mean. Pure: plain records in, plain data out.

A delta between two builds is a description of what the exports say, not a test: the two builds
may share most of their sessions, so no interval is computed for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from obs.analysis.learning import KeyReport

BOARD_SIZE = 5


def key_record(r: KeyReport, slug: str, page: str) -> dict[str, Any]:
    m = r.momentum
    return {
        "key": r.key,
        "slug": slug,
        "page": page,
        "sessions": r.sessions,
        "rewarded": r.rewarded,
        "first_at": r.first_at,
        "last_at": r.last_at,
        "reward_mean": r.reward_mean,
        "latest_score": r.latest_score,
        "recent_window": m.recent_window,
        "baseline_window": m.baseline_window,
        "recent_n": m.recent_n,
        "baseline_n": m.baseline_n,
        "recent_mean": m.diff.mean_a,
        "baseline_mean": m.diff.mean_b,
        "momentum_delta": m.diff.delta,
        "momentum_low": m.diff.low,
        "momentum_high": m.diff.high,
        "momentum_level": m.diff.level,
        "modes": {c.name: c.sessions for c in r.modes},
        "review": {c.name: c.sessions for c in r.review},
        "review_warning": r.review_warning,
        "models": {
            f"{row.role}: {row.model}": {"sessions": row.sessions, "reward_mean": row.reward_mean} for row in r.models
        },
        "usage": {
            "cue_hits": r.usage.cue_hits,
            "adoptions": r.usage.adoptions,
            "sessions_with_hit": r.usage.sessions_with_hit,
            "trigger_rate": r.usage.trigger_rate,
            "adoption_rate": r.usage.adoption_rate,
        },
        "entries": {
            e.entry_id: {
                "cue_hits": e.cue_hits,
                "adoptions": e.adoptions,
                "adoption_rate": e.adoption_rate,
                "reward_delta": e.reward.delta,
                "reward_low": e.reward.low,
                "reward_high": e.reward.high,
                "token_delta": e.tokens.delta,
                "impact": e.impact,
                "impact_low": e.impact_low,
                "impact_high": e.impact_high,
                "transfer": e.transfer,
            }
            for e in r.entries
        },
    }


@dataclass(frozen=True)
class Moved:
    name: str
    old: float | None
    new: float | None

    @property
    def delta(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old


@dataclass
class KeyChange:
    key: str
    state: str  # "new", "removed", "compared"
    page: str | None
    figures: list[Moved] = field(default_factory=list)  # recent mean, latest score, sessions, cue hits, adoption
    models: list[Moved] = field(default_factory=list)  # sessions per role: model
    model_rewards: list[Moved] = field(default_factory=list)
    entries: list[Moved] = field(default_factory=list)  # cue hits per entry

    def figure(self, name: str) -> Moved | None:
        return next((m for m in self.figures if m.name == name), None)

    def as_dict(self) -> dict[str, Any]:
        def rows(ms: list[Moved]) -> list[dict[str, Any]]:
            return [{"name": m.name, "old": m.old, "new": m.new, "delta": m.delta} for m in ms]

        return {
            "key": self.key,
            "state": self.state,
            "page": self.page,
            "figures": rows(self.figures),
            "models": rows(self.models),
            "model_rewards": rows(self.model_rewards),
            "entries": rows(self.entries),
        }


@dataclass
class LearningChanges:
    against: str
    keys: list[KeyChange]
    best: list[KeyChange]  # largest rise of the recent mean first
    worst: list[KeyChange]  # largest fall first
    old_metadata: dict[str, Any]

    def of(self, key: str) -> KeyChange | None:
        return next((k for k in self.keys if k.key == key), None)

    def as_dict(self) -> dict[str, Any]:
        def board(ks: list[KeyChange]) -> list[dict[str, Any]]:
            out = []
            for k in ks:
                m = k.figure("recent mean")
                out.append(
                    {
                        "key": k.key,
                        "page": k.page,
                        "old": m.old if m else None,
                        "new": m.new if m else None,
                        "delta": m.delta if m else None,
                    }
                )
            return out

        return {
            "against": self.against,
            "keys": [k.as_dict() for k in self.keys],
            "best": board(self.best),
            "worst": board(self.worst),
            "old_run_metadata": self.old_metadata,
        }


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


# what a key's record is compared on: (name shown, dotted path in the record)
FIGURES = (
    ("recent mean", "recent_mean"),
    ("latest score", "latest_score"),
    ("sessions", "sessions"),
    ("cue hits", "usage.cue_hits"),
    ("adoption rate", "usage.adoption_rate"),
)


def _at(record: dict[str, Any], path: str) -> float | None:
    node: Any = record
    for part in path.split("."):
        node = _dict(node).get(part)
    return _num(node)


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _pairs(old: dict[str, Any], new: dict[str, Any], pick: str | None) -> list[Moved]:
    out = []
    for name in sorted(set(old) | set(new)):
        o, n = old.get(name), new.get(name)
        ov = _num(_dict(o).get(pick) if pick else o)
        nv = _num(_dict(n).get(pick) if pick else n)
        out.append(Moved(name, ov, nv))
    return out


def compare(old: dict[str, Any], new: list[dict[str, Any]], against: str) -> LearningChanges:
    """`old` is the compared build's `learning` section of index.json, `new` this build's key records."""
    old_keys = {r["key"]: r for r in old.get("keys", []) if isinstance(r, dict) and isinstance(r.get("key"), str)}
    changes = []
    for rec in new:
        before = old_keys.get(rec["key"])
        if before is None:
            changes.append(KeyChange(rec["key"], "new", rec.get("page")))
            continue
        k = KeyChange(rec["key"], "compared", rec.get("page"))
        k.figures = [Moved(name, _at(before, path), _at(rec, path)) for name, path in FIGURES]
        k.models = _pairs(_dict(before.get("models")), _dict(rec.get("models")), "sessions")
        k.model_rewards = _pairs(_dict(before.get("models")), _dict(rec.get("models")), "reward_mean")
        k.entries = _pairs(_dict(before.get("entries")), _dict(rec.get("entries")), "cue_hits")
        changes.append(k)
    here = {r["key"] for r in new}
    changes += [KeyChange(key, "removed", None) for key in sorted(old_keys) if key not in here]
    moved = [(k, d) for k in changes if (m := k.figure("recent mean")) is not None and (d := m.delta) is not None]
    best = [k for k, d in sorted(moved, key=lambda kd: (-kd[1], kd[0].key)) if d > 0][:BOARD_SIZE]
    worst = [k for k, d in sorted(moved, key=lambda kd: (kd[1], kd[0].key)) if d < 0][:BOARD_SIZE]
    return LearningChanges(against, changes, best, worst, _dict(old.get("run_metadata")))
