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
from array import array
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, overload

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
    with_ids: tuple[str, ...]  # the runs without the tag are counted (`diff.n_b`), not listed: the page names only
    diff: Diff  # with tag - without  # those with it, and at 100,000 runs the rest were ~10 MB of tuples (issue 32)

    @property
    def better(self) -> bool | None:
        """True when the interval lies wholly on the metric's good side of 0, False on its bad side."""
        d = self.diff
        if d.low is None or d.high is None:
            return None
        if d.low > 0 or d.high < 0:
            return (d.low > 0) == self.higher_is_better
        return None


Groups = Mapping[str, tuple[str, list[Cohort]]]  # comparable set -> (its runs' key, its cohorts)

_FLOATS = ("mean_a", "mean_b", "delta", "low", "high", "p_value", "df", "se", "level")  # Diff's, in its order
_N, _DELTA, _SE = len(_FLOATS), _FLOATS.index("delta"), _FLOATS.index("se")  # a row's width; what the order reads


class PackedGroups(Groups):
    """Each comparable set's key and cohorts (`Groups`), held as columns and made into `Cohort`s when read.

    A `Cohort` with its `Diff`, floats and list of runs was ~440 bytes, and 100,000 runs in ladders of ten make
    ~80,000 cohorts: ~37 MB held from the tests to the last page, the build's peak (issue 32). Here a cohort
    is ~110 bytes: its sizes and statistics in arrays (a statistic that is None is a bit of `_none`, never a
    float that could be mistaken for one), its runs as places in one list of run ids. `in_page_order` gives
    them most separated first, each made as it is read; a set read back is the cohorts it was given, equal
    field for field (floats are held as the same doubles)."""

    def __init__(self) -> None:
        self._sets: dict[str, tuple[str, bool, int, int]] = {}  # name -> (key, higher is better, first row, end)
        self._set_of: list[str] = []  # row -> its set's name (one string a set)
        self._tag: list[str] = []
        self._problem: list[str | None] = []
        self._sizes = array("q")  # n_a, n_b of each row
        self._floats = array("d")  # `_FLOATS` of each row, 0.0 where None
        self._none = array("H")  # row -> bit k set: `_FLOATS[k]` is None
        self._with_end = array("L")  # row -> where its runs end in `_with` (they start where the last row's end)
        self._with = array("L")  # places in `_ids`
        self._ids: list[str] = []  # the runs of every set, a set's after the last's

    def add(self, name: str, key: str, higher: bool, runs: Sequence[str], cohorts: Sequence[Cohort]) -> None:
        """A set's cohorts; `runs` are the set's run ids, every `with_ids` of its cohorts among them."""
        first_id = len(self._ids)
        self._ids.extend(runs)
        place = {run: first_id + k for k, run in enumerate(runs)}
        first = len(self._tag)
        for c in cohorts:
            self._set_of.append(name)
            self._tag.append(c.tag)
            d = c.diff
            self._problem.append(d.problem)
            self._sizes.extend((d.n_a, d.n_b))
            values = [getattr(d, field) for field in _FLOATS]
            self._floats.extend(0.0 if v is None else v for v in values)
            self._none.append(sum(1 << k for k, v in enumerate(values) if v is None))
            self._with.extend(place[run] for run in c.with_ids)
            self._with_end.append(len(self._with))
        self._sets[name] = (key, higher, first, len(self._tag))

    def row(self, i: int) -> Cohort:
        """The `i`-th cohort added, made again."""
        none = self._none[i]
        f = self._floats[_N * i : _N * i + _N]
        values: dict[str, Any] = {name: None if none >> k & 1 else f[k] for k, name in enumerate(_FLOATS)}
        diff = Diff(n_a=self._sizes[2 * i], n_b=self._sizes[2 * i + 1], problem=self._problem[i], **values)
        start = self._with_end[i - 1] if i else 0
        with_ids = tuple(self._ids[k] for k in self._with[start : self._with_end[i]])
        name = self._set_of[i]
        return Cohort(self._tag[i], name, self._sets[name][1], with_ids, diff)

    def __getitem__(self, name: str) -> tuple[str, list[Cohort]]:
        key, _, first, end = self._sets[name]
        return key, [self.row(i) for i in range(first, end)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sets)

    def tags(self) -> set[str]:
        """The tags of every cohort (read from the column: no cohort made)."""
        return set(self._tag)

    def __len__(self) -> int:
        return len(self._sets)

    def in_page_order(self) -> InPageOrder:
        """Every cohort, most separated first (as `ordered` puts them), made one at a time as it is read."""

        def key(i: int) -> tuple[int, float, str, str]:
            delta, se = self._floats[_N * i + _DELTA], self._floats[_N * i + _SE]
            if self._none[i] & (1 << _DELTA | 1 << _SE) or se == 0:
                return (1, 0.0, self._set_of[i], self._tag[i])
            return (0, -abs(delta / se), self._set_of[i], self._tag[i])

        return InPageOrder(self, array("L", sorted(range(len(self._tag)), key=key)))


class InPageOrder(Sequence[Cohort]):
    """The cohorts of `PackedGroups` in page order, each made when read (a page's slice, then let go)."""

    def __init__(self, groups: PackedGroups, order: array[int]) -> None:
        self._groups = groups
        self._order = order

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, i: int) -> Cohort: ...
    @overload
    def __getitem__(self, i: slice) -> list[Cohort]: ...
    def __getitem__(self, i: int | slice) -> Cohort | list[Cohort]:
        if isinstance(i, slice):
            return [self._groups.row(k) for k in self._order[i]]
        return self._groups.row(self._order[i])


def group_key(points: Sequence[RunPoint]) -> str:
    """What a comparable set's cohorts depend on: its runs, their tags and headlines."""
    rows = sorted([p.id, sorted(p.tags), p.value, p.higher_is_better] for p in points)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:24]


def cohorts_by_group(runs: Sequence[RunPoint], known: Groups | None = None) -> PackedGroups:
    """Each comparable set's cohorts; a set whose runs are those of `known` (a previous build) is reused,
    not tested again (a build where one run changed computes only that run's set)."""
    by_group: dict[str, list[RunPoint]] = defaultdict(list)
    for r in runs:
        by_group[r.group].append(r)
    out = PackedGroups()
    for name in sorted(by_group):
        group = by_group.pop(name)  # let go as packed
        key = group_key(group)
        higher = group[0].higher_is_better
        ids = [r.id for r in group]
        before = (known or {}).get(name)
        if before is not None and before[0] == key:  # the same runs, tags and headlines: its statistics stand
            out.add(name, key, higher, ids, [_members(c, group) for c in before[1]])
            continue
        found = []
        for tag in sorted({t for r in group for t in r.tags}):
            with_tag = [r for r in group if tag in r.tags]
            without = [r for r in group if tag not in r.tags]
            if len(with_tag) < MIN_SIDE or len(without) < MIN_SIDE:
                continue
            d = diff([r.value for r in with_tag], [r.value for r in without], "runs")
            found.append(Cohort(tag, name, higher, tuple(r.id for r in with_tag), d))
        out.add(name, key, higher, ids, found)
    return out


def _members(c: Cohort, group: Sequence[RunPoint]) -> Cohort:
    """A stored cohort with its runs: the set's runs with its tag, as a new test orders them."""
    return Cohort(c.tag, c.group, c.higher_is_better, tuple(r.id for r in group if c.tag in r.tags), c.diff)


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


def groups_from_json(doc: Any) -> dict[str, tuple[str, list[Cohort]]]:
    """What `groups_json` wrote (a previous build's cohorts.json); anything unreadable is left out. The cohorts
    come without their runs (`cohorts_by_group` adds them when it reuses a set); a file of an older obs that
    listed them is read the same way."""
    out: dict[str, tuple[str, list[Cohort]]] = {}
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
