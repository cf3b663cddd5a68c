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

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from obs.analysis.learning import Diff, diff

MIN_SIDE = 1  # a side needs a run to be shown; an interval needs two (Welch)


@dataclass(frozen=True)
class RunPoint:
    """One run as the cohorts see it: its tags and its headline."""

    id: str
    tags: tuple[str, ...]
    group: str  # the comparable set: "metric · family"
    value: float
    higher_is_better: bool


@dataclass(frozen=True)
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


def tag_cohorts(runs: Sequence[RunPoint]) -> list[Cohort]:
    """Every (tag, comparable set) with runs on both sides, the most separated first (by |t|)."""
    by_group: dict[str, list[RunPoint]] = defaultdict(list)
    for r in runs:
        by_group[r.group].append(r)
    out = []
    for name, group in sorted(by_group.items()):
        higher = group[0].higher_is_better
        for tag in sorted({t for r in group for t in r.tags}):
            with_tag = [r for r in group if tag in r.tags]
            without = [r for r in group if tag not in r.tags]
            if len(with_tag) < MIN_SIDE or len(without) < MIN_SIDE:
                continue
            d = diff([r.value for r in with_tag], [r.value for r in without], "runs")
            out.append(Cohort(tag, name, higher, tuple(r.id for r in with_tag), tuple(r.id for r in without), d))

    def key(c: Cohort) -> tuple[int, float, str, str]:
        d = c.diff
        if d.delta is None or d.se is None or d.se == 0:
            return (1, 0.0, c.group, c.tag)
        return (0, -abs(d.delta / d.se), c.group, c.tag)

    return sorted(out, key=key)
