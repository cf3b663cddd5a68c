"""Group failing probe cases for the failure gallery.

A reader wants to see *kinds* of failure, biggest first, with a few concrete examples each; a flat
list of hundreds of cases hides the pattern. Cases are grouped by their `failure_class`, or, when
none is given, by the first check they fail in scoreboard order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from obs.analysis.scoreboard import failed_checks
from obs.model import ProbeCase

SHOWN_PER_GROUP = 4


@dataclass
class FailureGroup:
    key: str
    source: str  # "failure_class" or "first failed check"
    cases: list[ProbeCase]
    failed: dict[str, list[str]] = field(default_factory=dict)  # case id -> failed checks
    shown: int = SHOWN_PER_GROUP

    @property
    def count(self) -> int:
        return len(self.cases)

    @property
    def shown_cases(self) -> list[ProbeCase]:
        return self.cases[: self.shown]

    @property
    def hidden_cases(self) -> list[ProbeCase]:
        return self.cases[self.shown :]

    @property
    def hidden_by_kind(self) -> list[tuple[tuple[str, str, str], list[ProbeCase]]]:
        """The cases not shown as cards, grouped by (split, family, failed checks): patterns read
        better than a row per case, and the page stays small with thousands of cases."""
        kinds: dict[tuple[str, str, str], list[ProbeCase]] = defaultdict(list)
        for case in self.hidden_cases:
            failed = ", ".join(self.failed.get(case.id, [])) or "—"
            kinds[(case.split or "—", case.family or "—", failed)].append(case)
        return sorted(kinds.items(), key=lambda item: (-len(item[1]), item[0]))

    def as_dict(self) -> dict[str, object]:
        return {
            "key": self.key,
            "source": self.source,
            "count": self.count,
            "case_ids": [c.id for c in self.cases],
        }


def group_failures(
    cases: list[ProbeCase], is_negative: Callable[[str], bool], checks_order: list[str]
) -> list[FailureGroup]:
    groups: dict[tuple[str, str], FailureGroup] = {}
    buckets: dict[tuple[str, str], list[ProbeCase]] = defaultdict(list)
    failed_by_id: dict[str, list[str]] = {}
    for case in cases:
        failed = failed_checks(case, is_negative, checks_order)
        if not failed and not case.failure_class:
            continue
        failed_by_id[case.id] = failed
        if case.failure_class:
            key = (case.failure_class, "failure_class")
        else:
            key = (f"{failed[0]} failed" if not is_negative(failed[0]) else failed[0], "first failed check")
        buckets[key].append(case)
    for key, members in buckets.items():
        members.sort(key=lambda c: c.id)
        groups[key] = FailureGroup(
            key=key[0], source=key[1], cases=members, failed={c.id: failed_by_id[c.id] for c in members}
        )
    return sorted(groups.values(), key=lambda g: (-g.count, g.key))


def count_failing(groups: list[FailureGroup]) -> int:
    return sum(g.count for g in groups)
