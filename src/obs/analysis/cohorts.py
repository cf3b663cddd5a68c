"""Tag cohorts: the headline of runs carrying a tag against runs of the same headline metric without it.

The same comparison as a playbook entry's fired-vs-not (`obs.analysis.learning`), for ordinary runs:
a tag (`tags:` of run.yaml, or a cue a team writes as a tag) splits the runs that report one headline
metric into two groups, and the difference of their means carries Welch's t interval, **runs as the
unit**. Runs are not assigned to tags at random, so this is an association: the page says so, and
names how many runs each side holds. Runs are compared only inside one comparable set (the same
headline metric in the same family: spec, campaign, experiment or folder; `RunSummary.comparable`),
never across sets. Pure.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from obs.analysis.learning import Diff, diff

MIN_SIDE = 1  # a side needs a run to be shown; an interval needs two (Welch)


@dataclass(frozen=True, slots=True)
class RunPoint:
    """One run as the cohorts see it: its tags and its headline."""

    id: str
    tags: tuple[str, ...]
    group: str  # the comparable set: "metric · family"
    value: float
    higher_is_better: bool


@dataclass(frozen=True, slots=True)
class Cohort:
    tag: str
    group: str
    higher_is_better: bool
    with_ids: tuple[str, ...]
    without_ids: tuple[str, ...]
    diff: Diff  # with tag - without

    @property
    def better(self) -> bool | None:
        """True when the interval lies wholly on the metric's good side of 0, False on its bad side."""
        d = self.diff
        if d.low is None or d.high is None:
            return None
        if d.low > 0 or d.high < 0:
            return (d.low > 0) == self.higher_is_better
        return None


Groups = dict[str, tuple[str, list[Cohort]]]  # comparable set -> (its runs' key, its cohorts)


def group_key(points: Sequence[RunPoint]) -> str:
    """What a comparable set's cohorts depend on: its runs, their tags and headlines."""
    rows = sorted([p.id, sorted(p.tags), p.value, p.higher_is_better] for p in points)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:24]


def cohorts_by_group(runs: Sequence[RunPoint], known: Mapping[str, tuple[str, list[Cohort]]] | None = None) -> Groups:
    """Each comparable set's cohorts; a set whose runs are those of `known` (a previous build) is reused,
    not tested again (a build where one run changed computes only that run's set)."""
    by_group: dict[str, list[RunPoint]] = defaultdict(list)
    for r in runs:
        by_group[r.group].append(r)
    out: Groups = {}
    for name, group in sorted(by_group.items()):
        key = group_key(group)
        before = (known or {}).get(name)
        if before is not None and before[0] == key:  # the same runs, tags and headlines: its statistics stand
            out[name] = (key, [_members(c, group) for c in before[1]])
            continue
        higher = group[0].higher_is_better
        found = []
        for tag in sorted({t for r in group for t in r.tags}):
            with_tag = [r for r in group if tag in r.tags]
            without = [r for r in group if tag not in r.tags]
            if len(with_tag) < MIN_SIDE or len(without) < MIN_SIDE:
                continue
            d = diff([r.value for r in with_tag], [r.value for r in without], "runs")
            found.append(Cohort(tag, name, higher, tuple(r.id for r in with_tag), tuple(r.id for r in without), d))
        out[name] = (key, found)
    return out


def _members(c: Cohort, group: Sequence[RunPoint]) -> Cohort:
    """A stored cohort with its runs: the set's runs with its tag and without it, as a new test orders them."""
    with_tag = tuple(r.id for r in group if c.tag in r.tags)
    without = tuple(r.id for r in group if c.tag not in r.tags)
    return Cohort(c.tag, c.group, c.higher_is_better, with_tag, without, c.diff)


def groups_json(groups: Groups) -> dict[str, Any]:
    """Each set's key and its cohorts' statistics, without their runs: a cohort's runs are its set's runs with
    (and without) its tag, which the key pins down, so the next build derives them; listed, they were ~25
    bytes a run a cohort (7.3 MB at 10,000 runs, growing with the runs of one set without bound)."""
    return {name: group_json(key, cs) for name, (key, cs) in groups.items()}


def group_json(key: str, cohorts: Sequence[Cohort]) -> dict[str, Any]:
    """One set as `groups_json` writes it: its key and its cohorts' statistics."""
    return {
        "key": key,
        "cohorts": [
            {"tag": c.tag, "group": c.group, "higher_is_better": c.higher_is_better, "diff": asdict(c.diff)}
            for c in cohorts
        ],
    }


def groups_from_json(doc: Any) -> Groups:
    """What `groups_json` wrote (a previous build's cohorts.json); anything unreadable is left out. The cohorts
    come without their runs (`cohorts_by_group` adds them when it reuses a set); a file of an older obs that
    listed them is read the same way."""
    out: Groups = {}
    if not isinstance(doc, dict):
        return out
    for name, entry in doc.items():
        try:
            cohorts = [
                Cohort(
                    tag=c["tag"],
                    group=c["group"],
                    higher_is_better=c["higher_is_better"],
                    with_ids=(),
                    without_ids=(),
                    diff=Diff(**c["diff"]),
                )
                for c in entry["cohorts"]
            ]
            out[str(name)] = (str(entry["key"]), cohorts)
        except (KeyError, TypeError):
            continue
    return out


def tag_cohorts(runs: Sequence[RunPoint], known: Groups | None = None) -> list[Cohort]:
    """Every (tag, comparable set) with runs on both sides, the most separated first (by |t|)."""
    return ordered([c for _, cs in cohorts_by_group(runs, known).values() for c in cs])


def ordered(out: list[Cohort]) -> list[Cohort]:
    """The most separated first (|Δ / standard error|), cohorts without an interval after them."""

    def key(c: Cohort) -> tuple[int, float, str, str]:
        d = c.diff
        if d.delta is None or d.se is None or d.se == 0:
            return (1, 0.0, c.group, c.tag)
        return (0, -abs(d.delta / d.se), c.group, c.tag)

    return sorted(out, key=key)
