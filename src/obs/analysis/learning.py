"""What the sessions of one learning key say: reward momentum, modes, review states, models, playbook entries.

Pure: `obs.agents` objects in, frozen dataclasses out (`as_dict()` for index.json). The unit of every
statistic here is the session: a window's mean is the mean of its sessions' rewards, and a difference
of two groups of sessions gets Welch's t interval (`obs.analysis.stats.welch`, checked against scipy).
Sessions are not independent draws from one distribution (the agent learns, the task mix drifts), so
the fired-vs-not comparisons of playbook entries are associations, and the page says so; the task
mix, the one confounder an export lets us check, is checked (`within_task`).

Windows: sessions are put in time order (`created_at`, then reading order); the **recent** window is
the last `recent` sessions with a reward, the **baseline** window the `baseline` sessions just before
it. The windows do not overlap, so the two means are of different sessions.
"""

from __future__ import annotations

import math
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from obs.agents import LearningData, Playbook, PlaybookEntry, Session
from obs.analysis.stats import MIN_REPLICATES, welch, wilson_interval

LEVEL = 0.95
RECENT_WINDOW = 10
BASELINE_WINDOW = 50
LATEST_SESSIONS = 10
NOT_RECORDED = "not recorded"


def _z(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2)


@dataclass(frozen=True, slots=True)
class Diff:
    """mean(a) - mean(b) of two groups of sessions, with Welch's t interval (None with `problem`). Slotted: the
    cohorts of 100,000 runs hold ~80,000 of them (issue 32)."""

    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None
    low: float | None
    high: float | None
    p_value: float | None
    df: float | None
    se: float | None
    level: float
    problem: str | None


def diff(
    a: Sequence[float],
    b: Sequence[float],
    what: str = "sessions",
    level: float = LEVEL,
    sides: tuple[str, str] = ("with it", "without it"),
) -> Diff:
    """Welch's comparison of two groups; its problems are worded for sessions (or runs), not seeds."""
    if not a or not b:
        empty = f"no {what} {sides[0] if not a else sides[1]}"
        return Diff(len(a), len(b), _mean(a), _mean(b), None, None, None, None, None, None, level, empty)
    w = welch(list(a), list(b), level=level)
    problem: str | None = None
    if w.problem is not None:
        if len(a) < MIN_REPLICATES or len(b) < MIN_REPLICATES:
            problem = f"too few {what} for an interval ({len(a)} and {len(b)}; each side needs {MIN_REPLICATES})"
        else:
            problem = f"no variation within either group ({len(a)} + {len(b)} {what}): no interval"
    iv = w.interval
    if problem is not None:  # one string for the many cohorts of the same sizes (~35,000 at 100,000 runs: 3.6 MB)
        problem = sys.intern(problem)
    return Diff(
        n_a=len(a),
        n_b=len(b),
        mean_a=w.mean_x,
        mean_b=w.mean_y,
        delta=w.estimate,
        low=iv.low if iv is not None else None,
        high=iv.high if iv is not None else None,
        p_value=w.p_value,
        df=w.df,
        se=w.se,
        level=level,
        problem=problem,
    )


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def in_time_order(sessions: Sequence[Session]) -> list[Session]:
    """By `created_at` (ISO text sorts as time), sessions without one after, ties in reading order."""
    return sorted(sessions, key=lambda s: (s.created_at is None, s.created_at or "", s.order))


@dataclass(frozen=True)
class Momentum:
    recent_window: int  # sessions asked for
    baseline_window: int
    recent_n: int  # sessions in the window (fewer when the key has fewer)
    baseline_n: int
    recent_first: int | None  # positions (0-based) in the time-ordered rewarded sessions, for the chart
    baseline_first: int | None
    diff: Diff  # recent - baseline
    unrewarded: int  # sessions without a reward, in no window


def momentum(ordered: Sequence[Session], recent: int = RECENT_WINDOW, baseline: int = BASELINE_WINDOW) -> Momentum:
    rewarded = [s for s in ordered if s.reward is not None]
    n = len(rewarded)
    r_start = max(0, n - recent)
    b_start = max(0, r_start - baseline)
    recent_rewards = [s.reward for s in rewarded[r_start:] if s.reward is not None]
    base_rewards = [s.reward for s in rewarded[b_start:r_start] if s.reward is not None]
    return Momentum(
        recent_window=recent,
        baseline_window=baseline,
        recent_n=len(recent_rewards),
        baseline_n=len(base_rewards),
        recent_first=r_start if recent_rewards else None,
        baseline_first=b_start if base_rewards else None,
        diff=diff(recent_rewards, base_rewards, sides=("in the recent window", "in the baseline window")),
        unrewarded=len(ordered) - n,
    )


@dataclass(frozen=True)
class Count:
    name: str
    sessions: int
    share: float
    reward_mean: float | None


def counts(sessions: Sequence[Session], field: Callable[[Session], str | None]) -> list[Count]:
    groups: dict[str, list[Session]] = defaultdict(list)
    for s in sessions:
        groups[field(s) or NOT_RECORDED].append(s)
    total = len(sessions) or 1
    out = [
        Count(name, len(group), len(group) / total, _mean([s.reward for s in group if s.reward is not None]))
        for name, group in groups.items()
    ]
    return sorted(out, key=lambda c: (-c.sessions, c.name))


def review_warning(review: Sequence[Count]) -> str | None:
    names = {c.name.lower() for c in review}
    if "approved" in names and "pending" in names:
        return (
            "Approved and pending sessions are mixed: every figure on this page counts both. Pending sessions have "
            "not been reviewed; compare them with approved ones on purpose, not by accident."
        )
    return None


@dataclass(frozen=True)
class ModelRow:
    role: str
    model: str
    sessions: int
    share_of_role: float
    reward_mean: float | None
    latest_score: float | None
    latest_at: str | None


def model_rows(ordered: Sequence[Session]) -> list[ModelRow]:
    by: dict[tuple[str, str], list[Session]] = defaultdict(list)
    per_role: Counter[str] = Counter()
    for s in ordered:
        for role, model in s.models:
            by[(role, model)].append(s)
            per_role[role] += 1
    rows = []
    for (role, model), group in by.items():
        rewarded = [s for s in group if s.reward is not None]
        last = rewarded[-1] if rewarded else None
        rows.append(
            ModelRow(
                role=role,
                model=model,
                sessions=len(group),
                share_of_role=len(group) / per_role[role],
                reward_mean=_mean([s.reward for s in rewarded if s.reward is not None]),
                latest_score=last.reward if last else None,
                latest_at=last.created_at if last else None,
            )
        )
    return sorted(rows, key=lambda r: (r.role, -r.sessions, r.model))


@dataclass(frozen=True)
class SessionRow:
    session_id: str
    created_at: str | None
    task_id: str | None
    execution_mode: str | None
    review_status: str | None
    reward: float | None
    uncertainty: float | None
    tokens: float | None
    trajectory_events: int | None
    fired: tuple[str, ...]
    where: str  # file:line


def session_row(s: Session, rel: Callable[[Session], str]) -> SessionRow:
    return SessionRow(
        session_id=s.session_id,
        created_at=s.created_at,
        task_id=s.task_id,
        execution_mode=s.execution_mode,
        review_status=s.review_status,
        reward=s.reward,
        uncertainty=s.uncertainty,
        tokens=s.tokens,
        trajectory_events=s.trajectory_events,
        fired=tuple(u.entry_id for u in s.usage if u.cue_hit),
        where=f"{rel(s)}:{s.line}",
    )


@dataclass(frozen=True)
class WithinGroups:
    """The fired-vs-not reward delta within each task (or mode) where both happened, weighted by fired sessions."""

    by: str
    groups_compared: int
    fired_covered: int  # fired sessions in those groups
    fired_total: int
    delta: float | None


def within(
    fired: Sequence[Session], other: Sequence[Session], by: Callable[[Session], str | None], name: str
) -> WithinGroups:
    fa: dict[str, list[float]] = defaultdict(list)
    fb: dict[str, list[float]] = defaultdict(list)
    for s in fired:
        if s.reward is not None:
            fa[by(s) or NOT_RECORDED].append(s.reward)
    for s in other:
        if s.reward is not None:
            fb[by(s) or NOT_RECORDED].append(s.reward)
    shared = sorted(set(fa) & set(fb))
    weight = sum(len(fa[g]) for g in shared)
    delta = None
    if weight:
        delta = sum(len(fa[g]) * (sum(fa[g]) / len(fa[g]) - sum(fb[g]) / len(fb[g])) for g in shared) / weight
    return WithinGroups(name, len(shared), weight, sum(len(v) for v in fa.values()), delta)


@dataclass(frozen=True)
class EntryImpact:
    entry_id: str
    cue: str | None
    action: str | None
    scope: str | None
    lifecycle: str | None
    in_playbook: bool
    cue_hits: int
    adoptions: int
    adoption_rate: float | None
    adoption_low: float | None  # Wilson interval
    adoption_high: float | None
    reward: Diff  # fired - not fired
    tokens: Diff
    within_task: WithinGroups
    within_mode: WithinGroups
    tasks_fired: int
    transfer: bool  # fired on >= 2 distinct tasks
    retries_fired: float | None
    retries_not: float | None
    failure_rate_fired: float | None  # share of fired sessions with a failure
    failure_rate_not: float | None
    impact: float | None  # adoption_rate x reward delta
    impact_low: float | None  # delta-method normal interval
    impact_high: float | None
    confounded: str | None  # what the task-mix check found, when it changes the reading


def impact_interval(a: float, n_hits: int, d: Diff, level: float = LEVEL) -> tuple[float | None, float | None]:
    """adoption x delta ± z·sqrt(delta²·a(1-a)/n + a²·se²): the delta method, the two estimates independent."""
    if d.delta is None or d.se is None or n_hits == 0:
        return None, None
    se = math.sqrt(d.delta**2 * a * (1 - a) / n_hits + a * a * d.se**2)
    z = _z(level)
    return a * d.delta - z * se, a * d.delta + z * se


def _confounded(d: Diff, task: WithinGroups) -> str | None:
    if d.delta is None:
        return None
    if task.fired_total and task.fired_covered < task.fired_total / 2:
        return (
            f"only {task.fired_covered} of {task.fired_total} fired sessions share a task with sessions where it did "
            "not fire: the task mix may explain the delta"
        )
    if task.delta is not None and d.delta * task.delta < 0:
        return "within the same tasks the delta has the opposite sign: the task mix explains the raw delta"
    if task.delta is not None and abs(task.delta) < abs(d.delta) / 2:
        return "within the same tasks the delta is less than half the raw one: the task mix explains part of it"
    return None


def entry_impact(entry_id: str, entry: PlaybookEntry | None, sessions: Sequence[Session]) -> EntryImpact:
    """What one playbook entry was associated with: the sessions whose cue hit it against the others (adoption,
    reward and token deltas, within-task and within-mode checks, retries, failures, transfer)."""
    fired = [s for s in sessions if s.fired(entry_id)]
    other = [s for s in sessions if not s.fired(entry_id)]
    hits = len(fired)
    adoptions = sum(1 for s in fired if any(u.entry_id == entry_id and u.adopted for u in s.usage))
    rate = adoptions / hits if hits else None
    wil = wilson_interval(adoptions, hits) if hits else None
    reward = diff(_known(fired, _reward), _known(other, _reward))
    tokens = diff(_known(fired, _tokens), _known(other, _tokens))
    task = within(fired, other, lambda s: s.task_id, "task")
    mode = within(fired, other, lambda s: s.execution_mode, "execution mode")
    tasks = {s.task_id for s in fired if s.task_id is not None}
    impact = rate * reward.delta if rate is not None and reward.delta is not None else None
    low, high = impact_interval(rate, hits, reward) if rate is not None else (None, None)
    return EntryImpact(
        entry_id=entry_id,
        cue=entry.cue if entry else None,
        action=entry.action if entry else None,
        scope=entry.scope if entry else None,
        lifecycle=entry.lifecycle if entry else None,
        in_playbook=entry is not None,
        cue_hits=hits,
        adoptions=adoptions,
        adoption_rate=rate,
        adoption_low=wil.low if wil else None,
        adoption_high=wil.high if wil else None,
        reward=reward,
        tokens=tokens,
        within_task=task,
        within_mode=mode,
        tasks_fired=len(tasks),
        transfer=len(tasks) >= 2,
        retries_fired=_mean(_known(fired, _retries)),
        retries_not=_mean(_known(other, _retries)),
        failure_rate_fired=_failure_rate(fired),
        failure_rate_not=_failure_rate(other),
        impact=impact,
        impact_low=low,
        impact_high=high,
        confounded=_confounded(reward, task),
    )


def _reward(s: Session) -> float | None:
    return s.reward


def _tokens(s: Session) -> float | None:
    return s.tokens


def _retries(s: Session) -> float | None:
    return s.retries


def _known(group: Sequence[Session], value: Callable[[Session], float | None]) -> list[float]:
    """The sessions' values that were recorded (None: not recorded, left out)."""
    return [v for v in map(value, group) if v is not None]


def _failure_rate(group: Sequence[Session]) -> float | None:
    """The share of the sessions that recorded failures with at least one."""
    known = [s for s in group if s.failures is not None]
    return sum(1 for s in known if (s.failures or 0) > 0) / len(known) if known else None


def audit_order(rows: Sequence[EntryImpact]) -> list[EntryImpact]:
    """Negative impact first (the most harmful on top), then the rest by impact, entries never fired last."""

    def key(r: EntryImpact) -> tuple[int, float, str]:
        if r.impact is None:
            return (2, 0.0, r.entry_id)
        return (0, r.impact, r.entry_id) if r.impact < 0 else (1, -r.impact, r.entry_id)

    return sorted(rows, key=key)


@dataclass(frozen=True)
class EntryQuality:
    entry_id: str
    weighted_score: float | None
    scores: tuple[tuple[str, float], ...]
    failed_gates: tuple[str, ...]


@dataclass(frozen=True)
class Quality:
    candidates: int
    weights: tuple[tuple[str, float], ...]
    weights_given: bool
    gate_failures: tuple[tuple[str, int], ...]  # gate -> entries failing it
    rejected: int
    weighted_mean: float | None
    entries: tuple[EntryQuality, ...]
    source: str


def weighted(entry: PlaybookEntry, weights: Sequence[tuple[str, float]]) -> float | None:
    """Σ weight × score over the rubric dimensions (the harness's formula); None without scores."""
    scores = dict(entry.scores)
    if not scores:
        return entry.weighted_score
    return sum(w * scores.get(k, 0.0) for k, w in weights)


def quality(playbook: Playbook, source: str) -> Quality:
    per = []
    failures: Counter[str] = Counter()
    for e in playbook.entries:
        failed = tuple(g for g, ok in e.gates if not ok)
        failures.update(failed)
        per.append(EntryQuality(e.entry_id, weighted(e, playbook.weights), e.scores, failed))
    scored = [q.weighted_score for q in per if q.weighted_score is not None]
    return Quality(
        candidates=len(playbook.entries),
        weights=playbook.weights,
        weights_given=playbook.weights_given,
        gate_failures=tuple(sorted(failures.items())),
        rejected=sum(1 for e in playbook.entries if is_rejected(e)),
        weighted_mean=_mean(scored),
        entries=tuple(per),
        source=source,
    )


def is_rejected(e: PlaybookEntry) -> bool:
    return (e.lifecycle or "").lower() == "rejected" or any(not ok for _, ok in e.gates)


@dataclass(frozen=True)
class Lifecycle:
    rows: tuple[tuple[str, int, int], ...]  # scope -> active, deprecated
    rejected: int
    other: int  # neither active, deprecated nor rejected (lifecycle not recorded)


def lifecycle(playbook: Playbook) -> Lifecycle:
    table: dict[str, list[int]] = {"reinforcement": [0, 0], "differentiation": [0, 0]}
    rejected = other = 0
    for e in playbook.entries:
        state = (e.lifecycle or "").lower()
        if is_rejected(e):
            rejected += 1
        elif state in ("active", "deprecated"):
            scope = (e.scope or NOT_RECORDED).lower()
            table.setdefault(scope, [0, 0])[0 if state == "active" else 1] += 1
        else:
            other += 1
    return Lifecycle(tuple((k, v[0], v[1]) for k, v in table.items()), rejected, other)


@dataclass(frozen=True)
class Usage:
    sessions: int
    sessions_with_hit: int
    cue_hits: int
    adoptions: int
    trigger_rate: float | None  # sessions with a cue hit / sessions
    adoption_rate: float | None  # adoptions / cue hits
    reward: Diff  # sessions with a cue hit - sessions without
    tokens: Diff


def usage(sessions: Sequence[Session]) -> Usage:
    hit = [s for s in sessions if any(u.cue_hit for u in s.usage)]
    none = [s for s in sessions if not any(u.cue_hit for u in s.usage)]
    hits = sum(1 for s in sessions for u in s.usage if u.cue_hit)
    adoptions = sum(1 for s in sessions for u in s.usage if u.adopted)
    return Usage(
        sessions=len(sessions),
        sessions_with_hit=len(hit),
        cue_hits=hits,
        adoptions=adoptions,
        trigger_rate=len(hit) / len(sessions) if sessions else None,
        adoption_rate=adoptions / hits if hits else None,
        reward=diff([s.reward for s in hit if s.reward is not None], [s.reward for s in none if s.reward is not None]),
        tokens=diff([s.tokens for s in hit if s.tokens is not None], [s.tokens for s in none if s.tokens is not None]),
    )


@dataclass(frozen=True)
class KeyReport:
    key: str
    sessions: int
    rewarded: int
    first_at: str | None
    last_at: str | None
    latest_score: float | None
    reward_mean: float | None
    momentum: Momentum
    modes: tuple[Count, ...]
    review: tuple[Count, ...]
    review_warning: str | None
    models: tuple[ModelRow, ...]
    latest: tuple[SessionRow, ...]
    usage: Usage
    entries: tuple[EntryImpact, ...]  # audit order
    quality: Quality | None
    lifecycle: Lifecycle | None
    series: tuple[tuple[str | None, float, float | None, str], ...]  # (created_at, reward, uncertainty, id) in order
    files: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def key_report(
    data: LearningData,
    key: str,
    rel: Callable[[Session], str],
    playbook_source: Callable[[Playbook], str],
    recent: int = RECENT_WINDOW,
    baseline: int = BASELINE_WINDOW,
) -> KeyReport:
    ordered = in_time_order(data.sessions_of(key))
    playbook = data.playbook_of(key)
    known = {e.entry_id: e for e in playbook.entries} if playbook else {}
    used = sorted({u.entry_id for s in ordered for u in s.usage})
    ids = list(known) + [e for e in used if e not in known]
    rewarded = [s for s in ordered if s.reward is not None]
    review = counts(ordered, lambda s: s.review_status)
    return KeyReport(
        key=key,
        sessions=len(ordered),
        rewarded=len(rewarded),
        first_at=ordered[0].created_at if ordered else None,
        last_at=ordered[-1].created_at if ordered else None,
        latest_score=rewarded[-1].reward if rewarded else None,
        reward_mean=_mean([s.reward for s in rewarded if s.reward is not None]),
        momentum=momentum(ordered, recent, baseline),
        modes=tuple(counts(ordered, lambda s: s.execution_mode)),
        review=tuple(review),
        review_warning=review_warning(review),
        models=tuple(model_rows(ordered)),
        latest=tuple(session_row(s, rel) for s in reversed(ordered[-LATEST_SESSIONS:])),
        usage=usage(ordered),
        entries=tuple(audit_order([entry_impact(i, known.get(i), ordered) for i in ids])),
        quality=quality(playbook, playbook_source(playbook)) if playbook else None,
        lifecycle=lifecycle(playbook) if playbook else None,
        series=tuple((s.created_at, s.reward, s.uncertainty, s.session_id) for s in rewarded if s.reward is not None),
        files=tuple(sorted({rel(s) for s in ordered})),
    )
