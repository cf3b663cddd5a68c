"""obs.lazysummary: a summary held as its JSON bytes reads as the RunSummary it stands for, and the pages
made from lazy summaries are the bytes made from the objects (issue 32: the build holds them lazily)."""

from __future__ import annotations

import dataclasses
import sys
import tracemalloc

import orjson
import pytest

from obs import lazysummary
from obs.cache import RunEntry, exact_bytes
from obs.jsonutil import dumps
from obs.lazysummary import LazySummary, lazy_summaries, materialized, replace_summary
from obs.sitemodel import RunSummary, SummaryError
from summaries import make_summary
from synthetic_site import synthetic_pages, synthetic_summaries


def _bytes(s: RunSummary) -> bytes:
    return exact_bytes(orjson.dumps(s.to_json()))


def test_reads_as_the_summary_it_stands_for() -> None:
    s = make_summary(id="r1", tags=("a", "b"), decision={"verdict": "promote", "rationale": "why"})
    lazy = LazySummary(_bytes(s))
    assert lazy.summary() == s
    for name in RunSummary.__dataclass_fields__:
        assert getattr(lazy, name) == getattr(s, name), name
    assert lazy.to_json() == s.to_json()
    assert lazy.value_of("status") == s.status
    assert lazy == s and lazy == LazySummary(_bytes(s))
    assert lazy != make_summary(id="r2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        lazy.status = "failed"  # type: ignore[misc]
    with pytest.raises(TypeError):  # never written as its repr
        dumps(lazy)


def test_not_a_summary_is_refused() -> None:
    with pytest.raises(SummaryError):
        LazySummary(b'{"schema": -1}')


def test_replace_keeps_it_lazy_with_the_change() -> None:
    s = make_summary(id="r1", condition="a")
    lazy = LazySummary(_bytes(s))
    changed = replace_summary(lazy, verdict="reject", condition="b")
    assert isinstance(changed, LazySummary)
    assert changed.summary() == dataclasses.replace(s, verdict="reject", condition="b")
    assert changed.condition == "b" and changed.verdict == "reject"  # a record field and a decoded one
    assert lazy.summary() == s  # the original unchanged
    assert replace_summary(s, verdict="reject") == dataclasses.replace(s, verdict="reject")  # a plain one too
    assert materialized([changed, s]) == [changed.summary(), s]


def test_decoded_summaries_are_not_all_kept() -> None:
    many = lazy_summaries(_bytes(make_summary(id=f"r{i}")) for i in range(lazysummary.RECENT + 50))
    assert [s.headline for s in many]  # every one decoded once
    assert len(lazysummary._recent) <= lazysummary.RECENT


def test_pages_from_lazy_summaries_are_the_same_bytes() -> None:
    summaries = synthetic_summaries(300)
    assert synthetic_pages(lazy_summaries(_bytes(s) for s in summaries)) == synthetic_pages(summaries)


def test_cached_summary_bytes_are_their_own_size() -> None:
    """orjson returns its output in its ~32 KB write buffer; the cache keeps a copy of the summary's size."""
    s = make_summary(id="r1").to_json()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        entries = [RunEntry("k", "r1", [], s, "d", []) for _ in range(50)]  # as read back from the cache file
        held = (tracemalloc.get_traced_memory()[0] - base) / len(entries)
    finally:
        tracemalloc.stop()
    assert held < 3 * sys.getsizeof(entries[0].summary)
