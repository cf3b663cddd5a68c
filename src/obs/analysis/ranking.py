"""Which runs may be ranked against each other (the leaderboard's headline sort, the sweeps page).

A headline number is comparable only with the same metric measured on the same question: a DPO
loss and a speech-to-text loss are both "loss", a 50-case probe of a run still going is not the
160-case probe of finished runs. Each run summary carries its set (`RunSummary.comparable`: the
metric and the run's family, plus the probe's version and size); this module splits a set further
where a run must not be ranked silently among the others, and says why (the page shows the mark).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from obs.sitemodel import RunSummary

NOT_FINISHED = ("running", "queued")


@dataclass(frozen=True)
class RankGroup:
    """The group a run is ranked in, and the visible reasons it is apart from its set (empty: none)."""

    group: str
    marks: tuple[str, ...] = ()


def rank_groups(summaries: Sequence[RunSummary]) -> dict[str, RankGroup]:
    """Run id -> its ranking group: its comparable set, split off for another probe or a run not finished."""
    by_set: dict[str, list[RunSummary]] = {}
    for s in summaries:
        by_set.setdefault(s.comparable or (s.headline.metric or "no metric"), []).append(s)
    out: dict[str, RankGroup] = {}
    made: dict[tuple[str, tuple[str, ...]], RankGroup] = {}  # one object a group, not one a run
    for name, members in by_set.items():
        done = [s for s in members if s.status not in NOT_FINISHED] or members
        probes = Counter(s.probe_key for s in done if s.probe_key)
        usual = probes.most_common(1)[0][0] if probes else None
        for s in members:
            group, marks = name, []
            if s.probe_key and usual and s.probe_key != usual:
                group += f" · {s.probe_key}"
                marks.append(f"ranked apart: {s.probe_key}; the others: {usual}")
            if s.status in NOT_FINISHED:
                group += " · not finished"
                marks.append(f"{s.status}: not ranked with finished runs")
            key = (group, tuple(marks))
            out[s.id] = made.get(key) or made.setdefault(key, RankGroup(*key))
    return out
