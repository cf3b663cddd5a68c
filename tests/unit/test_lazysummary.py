"""obs.lazysummary: a summary held as its JSON bytes reads as the RunSummary it stands for, and the pages
made from lazy summaries are the bytes made from the objects (issue 32: the build holds them lazily)."""

from __future__ import annotations

import dataclasses
import sys
import tracemalloc
from pathlib import Path

import orjson
import pytest

from obs import lazysummary
from obs.cache import STATE_FILE, BuildCache, RunEntry, exact_bytes
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
    many = lazy_summaries((_bytes(make_summary(id=f"r{i}")) for i in range(lazysummary.RECENT + 50)), eager_up_to=0)
    assert all(isinstance(s, LazySummary) for s in many)
    assert [s.headline for s in many]  # every one decoded once
    assert len(lazysummary._recent) <= lazysummary.RECENT


def test_pages_from_lazy_summaries_are_the_same_bytes() -> None:
    summaries = synthetic_summaries(300)
    lazy = lazy_summaries((_bytes(s) for s in summaries), eager_up_to=0)
    assert all(isinstance(s, LazySummary) for s in lazy)
    assert synthetic_pages(lazy) == synthetic_pages(summaries)


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


def test_the_cache_reads_back_what_it_saved_and_holds_no_summary(tmp_path: Path) -> None:
    """The cache is a SQLite file (format 3): what was saved is what is read back, and a run's summary is read
    from the file when asked for, never held by the entry."""
    cache = BuildCache(tmp_path / "cache")
    s = make_summary(id="r1")
    cache.runs = {"r1": RunEntry("k", "r1", ["runs/r1/index.html"], _bytes(s), "d", [{"message": "m"}])}
    cache.file_hashes = {"/x/metrics.jsonl": [1, 2, 3, "sha"]}
    cache.peeks = {"/x/run.yaml": [1, 2, 3, "r1", None]}
    cache.pages = {"site": {"key": "k", "files": ["index.html"]}}
    cache.save({"/x/metrics.jsonl", "/x/run.yaml"})
    back = BuildCache.open(tmp_path / "cache")
    assert back.runs["r1"] == cache.runs["r1"]
    assert RunSummary.from_json(back.runs["r1"].summary) == s
    assert back.runs["r1"]._summary is None and callable(back.runs["r1"].summary_source())  # read when asked
    assert back.pages == cache.pages and back.peeks == {}  # a peek is read by path, as a file's hash
    assert back.known_file("/x/run.yaml", table="peeks") == [1, 2, 3, "r1", None]
    assert back.file_hashes == {} and back.known_file("/x/metrics.jsonl") == [1, 2, 3, "sha"]  # read by path
    # a summary built this time is spilled to disk, and read from the saved state after the save
    t = make_summary(id="r2")
    back.runs["r2"] = back.keep("r2", RunEntry("k2", "r2", [], _bytes(t), "d2", []))
    assert back.runs["r2"]._summary is None and RunSummary.from_json(back.runs["r2"].summary) == t
    back.save({"/x/metrics.jsonl", "/x/run.yaml"})
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [STATE_FILE]  # no spill file left
    assert RunSummary.from_json(back.runs["r2"].summary) == t and RunSummary.from_json(back.runs["r1"].summary) == s
    again = BuildCache.open(tmp_path / "cache")
    assert sorted(again.runs) == ["r1", "r2"] and again.runs["r2"] == back.runs["r2"]
    (tmp_path / "cache" / STATE_FILE).write_bytes(b"not a database\n" * 100)
    assert BuildCache.open(tmp_path / "cache").runs == {}  # a damaged cache is ignored


def test_few_summaries_are_held_decoded() -> None:
    """Up to EAGER_UP_TO runs the summaries are plain objects (no lookup per field read), above it lazy."""
    few = [_bytes(make_summary(id=f"r{i}")) for i in range(3)]
    assert all(type(s) is RunSummary for s in lazy_summaries(few))
    assert lazy_summaries(few) == [RunSummary.from_json(b) for b in few]
    assert all(isinstance(s, LazySummary) for s in lazy_summaries(few, eager_up_to=2))


def test_file_hashes_are_read_by_path_and_this_builds_spilled(tmp_path: Path) -> None:
    """An opened cache holds no file's hash: the last build's are read by path, this build's go to its spill
    file, and the saved state keeps a live file's newest hash (the last build's when it was not hashed again)
    and drops a file that is gone."""
    src = tmp_path / "src"
    src.mkdir()
    a, b, gone = src / "a.jsonl", src / "b.jsonl", src / "gone.jsonl"
    for f in (a, b, gone):
        f.write_text(f.name)
    first = BuildCache.open(tmp_path / "cache")
    shas = {f: first.file_sha(f) for f in (a, b, gone)}
    assert first.file_hashes == {} and first.spilled is not None  # spilled, not held
    first.save({str(a), str(b), str(gone)})
    second = BuildCache.open(tmp_path / "cache")
    assert second.file_hashes == {} and second.known_file(str(a))[3] == shas[a]  # type: ignore[index]
    a.write_text("changed")
    new_a = second.file_sha(a)
    assert new_a != shas[a] and second.file_sha(b) == shas[b]
    second.save({str(a), str(b)})  # gone.jsonl is no longer an input
    third = BuildCache.open(tmp_path / "cache")
    assert third.known_file(str(a))[3] == new_a and third.known_file(str(b))[3] == shas[b]  # type: ignore[index]
    assert third.known_file(str(gone)) is None
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [STATE_FILE]  # the spill file went with the save


def test_a_record_shares_the_strings_many_runs_have() -> None:
    """A spec, a day, a status and a revision are one string for all the runs that have them, not one decoded per
    run: the records of 100,000 runs are held from the run pass to the end of a build (issue 32)."""
    made = [
        make_summary(id=f"run-{i:05d}", spec=f"spec-{i // 10:04d}", revision=f"r{i % 10}", date="2026-01-01")
        for i in range(2000)
    ]
    data = [_bytes(s) for s in made]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        held = [LazySummary(d) for d in data]
        lazysummary._recent.clear()  # the last summaries decoded, a fixed number: not what a record holds
        each = (tracemalloc.get_traced_memory()[0] - base) / len(held)
    finally:
        tracemalloc.stop()
    assert each < 350  # ~280 bytes; each its own strings, ~500
    assert [(h.id, h.spec, h.revision, h.date, h.status) for h in held] == [
        (s.id, s.spec, s.revision, s.date, s.status) for s in made
    ]
    assert held[0].spec is held[9].spec and held[0].date is held[1999].date and held[0].id is not held[1].id


def test_a_record_keeps_the_plans_id_and_slug() -> None:
    """Given the run's id and slug as the build plan holds them, a record keeps those strings, not the equal ones
    decoded (~110 bytes a run fewer, the records held to the end of a build); names that differ are not taken."""
    made = [make_summary(id=f"run-{i:05d}", slug=f"run-{i:05d}") for i in range(1_200)]
    ids = ["".join(["run-", f"{i:05d}"]) for i in range(1_200)]  # equal strings, other objects than the JSON's
    slugs = ["".join(["run-", f"{i:05d}"]) for i in range(1_200)]
    held = lazy_summaries([_bytes(s) for s in made], names=zip(ids, slugs, strict=True))
    assert all(h.id is i and h.slug is s for h, i, s in zip(held, ids, slugs, strict=True))
    assert [h.id for h in held] == [s.id for s in made] and held[5] == made[5]
    other = LazySummary(_bytes(made[0]), names=("run-99999", slugs[0]))
    assert other.id == "run-00000" and other.slug is slugs[0]
    with pytest.raises(ValueError):  # one name a summary
        lazy_summaries([_bytes(s) for s in made], names=zip(ids[:-1], slugs, strict=False))
