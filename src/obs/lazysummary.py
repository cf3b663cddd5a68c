"""Run summaries held as their JSON bytes, decoded when read: the pages over all runs without every run's
`RunSummary` in memory (issue 32).

A `RunSummary` object is ~8.3 KB in memory, its JSON ~2.4 KB, and the build cache already holds the JSON
(`cache.RunEntry.summary`). A `LazySummary` keeps a reference to those bytes and the few fields that page
families filter, group and sort every run by (id, slug, spec, campaign, date, status, ...: the compact
record of a run), ~0.4 KB; any other attribute decodes the summary, and the last `RECENT` summaries
decoded are kept, so a template reading twenty fields of one row decodes it once. A family that goes
over every run decodes them one after the other and holds none of them.

It reads like the `RunSummary` it stands for (attributes, methods, `to_json`), so the page families and
templates are unchanged and the pages are the same bytes. `replace_summary` replaces fields on either kind
(a publish plugin's `changed` and `ledger` marks): on a lazy one, as overrides applied after decoding.
"""

from __future__ import annotations

import dataclasses
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from obs.sitemodel import RunSummary

RECENT = 512  # decoded summaries kept (~4 MB): a row's fields read together decode it once
# Up to this many runs the summaries are decoded once and held as `RunSummary` objects (~8 KB each: 8 MB at
# 1,000). Held lazily, every field a page reads goes through a lookup of the recently decoded ones: on the
# bench's 240 runs that was ~0.1 s of every rebuild, for memory that only counts at tens of thousands of runs.
EAGER_UP_TO = 1_000
# What families filter, group and sort all runs by: kept on the record, so such a pass decodes nothing.
HOT = ("id", "slug", "spec", "campaign", "condition", "seed", "arm", "date", "status", "baseline", "revision")
# Of those, the ones many runs share (a ladder's spec, a day, a status): one string for them all (`sys.intern`), not
# one decoded per run: ~0.2 KB of the ~0.5 KB a record held (issue 32). An id or a slug is one run's own.
SHARED = frozenset(HOT) - {"id", "slug"}

_recent: OrderedDict[LazySummary, RunSummary] = OrderedDict()  # the last summaries decoded


class LazySummary:
    """One run's summary as its JSON bytes and its `HOT` fields; everything else decoded on access."""

    __slots__ = ("_data", "_over", "__weakref__", *HOT)

    # the HOT fields, set in __init__ (declared for type checkers)
    id: str
    slug: str
    spec: str | None
    campaign: str | None
    condition: str | None
    seed: int | None
    arm: str | None
    date: str | None
    status: str
    baseline: str | None
    revision: str | None

    def __init__(
        self, data: bytes | Callable[[], bytes], over: dict[str, Any] | None = None, names: tuple[str, str] = ("", "")
    ) -> None:
        """`data`: the summary's JSON bytes, or what reads them (a cache entry whose summary is on disk). `names`:
        the run's id and slug as the build plan holds them, kept instead of the equal strings decoded (two strings
        a run fewer: ~12 MB at 100,000 runs, issue 32)."""
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_over", over or None)
        full = _decode(self)  # raises SummaryError for bytes that are not a summary of this version
        for name in HOT:
            value = getattr(full, name)
            object.__setattr__(self, name, sys.intern(value) if name in SHARED and type(value) is str else value)
        for name, known in zip(("id", "slug"), names, strict=True):
            if known == getattr(self, name):
                object.__setattr__(self, name, known)

    def summary(self) -> RunSummary:
        """The `RunSummary` this stands for (decoded, or one of the last decoded)."""
        return _decode(self)

    def __getattr__(self, name: str) -> Any:  # only for names that are not slots
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(_decode(self), name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazySummary):
            return self is other or self.summary() == other.summary()
        if isinstance(other, RunSummary):
            return self.summary() == other
        return NotImplemented

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return repr(self.summary())

    def __reduce__(self) -> tuple[Any, ...]:  # sent to another process as the summary itself
        return (_identity, (self.summary(),))


def _identity(summary: RunSummary) -> RunSummary:
    return summary


def _decode(lazy: LazySummary) -> RunSummary:
    found = _recent.get(lazy)  # keyed by the object itself (identity: its hash is object.__hash__)
    if found is not None:
        _recent.move_to_end(lazy)
        return found
    data = object.__getattribute__(lazy, "_data")
    summary = RunSummary.from_json(data() if callable(data) else data)
    over = object.__getattribute__(lazy, "_over")
    if over:
        summary = dataclasses.replace(summary, **over)
    _recent[lazy] = summary
    if len(_recent) > RECENT:
        _recent.popitem(last=False)
    return summary


def lazy_summaries(
    data: Iterable[bytes | Callable[[], bytes]],
    *,
    eager_up_to: int | None = None,
    names: Iterable[tuple[str, str]] | None = None,
) -> list[RunSummary]:
    """Each summary's JSON bytes as a `LazySummary`, typed as the `RunSummary` it stands for; decoded into
    plain `RunSummary` objects when there are at most `eager_up_to` of them (default `EAGER_UP_TO`). The
    pages are the same bytes either way (tests/unit/test_lazysummary.py, tests/site/test_lazy_site.py).
    `names`: each run's (id, slug) as the caller holds them, in the same order (`LazySummary`)."""
    held = list(data)
    if len(held) <= (EAGER_UP_TO if eager_up_to is None else eager_up_to):
        return [RunSummary.from_json(d() if callable(d) else d) for d in held]
    if names is None:
        return cast("list[RunSummary]", [LazySummary(d) for d in held])
    return cast("list[RunSummary]", [LazySummary(d, names=n) for d, n in zip(held, names, strict=True)])


def replace_summary(summary: RunSummary, **changes: Any) -> RunSummary:
    """`dataclasses.replace` for a `RunSummary` or a `LazySummary` (which stays lazy, the changes kept beside
    its bytes)."""
    if isinstance(summary, LazySummary):
        lazy = cast("LazySummary", summary)
        over = {**(object.__getattribute__(lazy, "_over") or {}), **changes}
        if any(name in HOT for name in changes):
            return cast("RunSummary", LazySummary(object.__getattribute__(lazy, "_data"), over))
        new = object.__new__(LazySummary)  # the record's fields are unchanged: nothing to decode
        object.__setattr__(new, "_data", object.__getattribute__(lazy, "_data"))
        object.__setattr__(new, "_over", over)
        for name in HOT:
            object.__setattr__(new, name, getattr(lazy, name))
        return cast("RunSummary", new)
    return dataclasses.replace(summary, **changes)


def materialized(summaries: Sequence[RunSummary]) -> list[RunSummary]:
    """Plain `RunSummary` objects (for a caller that needs the dataclass itself)."""
    return [s.summary() if isinstance(s, LazySummary) else s for s in summaries]
