"""What a build holds for each run until it ends, kept small (issue 32: the build process at 100,000 runs).

A build holds a `RunSource` per run from discovery to the end, a cache entry per run from the run's build to
the end, and (before) every run.yaml's peek: each is checked here to read back exactly what was given, and to
hold a bounded number of bytes, measured with tracemalloc against what the previous forms held.
"""

from __future__ import annotations

import dataclasses
import gc
import pickle
import tracemalloc
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any

import pytest

from obs.adapters import session_shape
from obs.adapters.base import RunSource
from obs.cache import STATE_FILE, BuildCache, LiveNames, RunEntry
from obs.pipeline import SourceTree

RUN_FILES = ("analysis.json", "curves.js", "index.html", "cases-rows-1.js", "cases-text-1.js")


def held_each(make: Callable[[int], Any], n: int = 1000) -> float:
    """Bytes held per object made by `make(i)`, i < n (tracemalloc: everything allocated and still alive)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        made = [make(i) for i in range(n)]
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert len(made) == n
    return held / n


def test_a_run_entry_reads_back_its_files_in_order() -> None:
    cases = [
        ("s1", [f"runs/s1/{name}" for name in RUN_FILES]),
        ("s1", []),
        ("s1", ["runs/s1/index.html", "assets/shared.css"]),  # one outside the run's folder: whole names kept
        ("s1", ["runs/s10/index.html"]),  # another run's folder whose name starts alike
        ("s1", ["runs/s1/"]),  # the folder itself (no name below it)
        ("a b", ["runs/a b/sub/deep.js", "runs/a b/index.html"]),
    ]
    for slug, files in cases:
        entry = RunEntry("k", slug, files, None, "d", [])
        assert entry.files == files, (slug, files)
        assert entry.entry_json().startswith(b'["k",')  # the cache's format is unchanged: the whole list


def test_a_run_entry_holds_its_files_as_one_string(tmp_path: Path) -> None:
    """Five file names below the run's folder as a list of paths were ~720 bytes an entry; now ~280."""

    def entry(i: int) -> RunEntry:
        slug = f"s{i:05d}-r1"
        return RunEntry("k" * 64, slug, [f"runs/{slug}/{name}" for name in RUN_FILES], None, "d" * 64, [])

    assert held_each(entry) < 400
    cache = BuildCache(tmp_path / "cache")
    made = entry(7)
    cache.runs = {"r1": RunEntry(made.key, made.slug, made.files, b'{"x": 1}', made.digest_hash, [])}
    cache.save(set())
    back = BuildCache.open(tmp_path / "cache")
    assert back.runs["r1"].files == entry(7).files and back.runs["r1"].diagnostics == ()


def test_a_stored_entry_is_its_own_summary_source(tmp_path: Path) -> None:
    """The summary a page reads is read through the entry itself, not a `functools.partial` made for each run."""
    cache = BuildCache.open(tmp_path / "cache")
    kept = cache.keep("r1", RunEntry("k", "r1", [], b'{"s": 1}', "d", []))
    assert kept.summary_source() is kept and kept() == b'{"s": 1}'
    cache.runs = {"r1": kept}
    cache.save(set())
    assert kept() == b'{"s": 1}'  # read from the saved state now


def test_a_run_source_reads_back_its_files() -> None:
    folder = Path("/data/s1/r0")
    files = (folder / "metrics.jsonl", folder / "logs" / "probe.jsonl", folder / "run.yaml")
    source = RunSource("native", folder, files, spec="s1")
    assert source.files == files and all(type(f) is type(folder) for f in source.files)
    assert pickle.loads(pickle.dumps(source)) == source
    moved = dataclasses.replace(source, files=(Path("/elsewhere/a.json"), folder / "run.yaml"))
    assert moved.files == (Path("/elsewhere/a.json"), folder / "run.yaml")
    assert dataclasses.replace(moved, files=()).files == ()
    assert RunSource("native", Path("/"), (Path("/x.json"),)).files == (Path("/x.json"),)
    assert RunSource("native", Path("rel"), (Path("rel/x.json"), Path("other.json"))).files == (
        Path("rel/x.json"),
        Path("other.json"),
    )
    assert hash(source) == hash(pickle.loads(pickle.dumps(source)))


def test_a_run_source_holds_its_files_as_one_string() -> None:
    """Three files as `Path`s were ~1,110 bytes a source (with its folder's path); then ~750 with the files as
    one string; ~540 with the folder as text too (`PathText`)."""

    def source(i: int) -> RunSource:
        folder = Path(f"/data/runs/s{i // 10:05d}/r{i % 10}")
        return RunSource("native", folder, tuple(folder / n for n in ("metrics.jsonl", "probe.jsonl", "run.yaml")))

    assert held_each(source) < 650


def test_a_planned_run_is_slotted() -> None:
    """The plan holds a `PlannedRun` per run to the end of a build: with a `__dict__` it was ~123 bytes, slotted ~81
    (its source, id and slug are held anyway, by the discovery and the plan's slugs): ~4 MB at 100,000 runs."""
    from obs.plan import PlannedRun

    source = RunSource("native", Path("/data/runs/s1/r1"), ())
    ids = [f"s{i:05d}-r1" for i in range(1000)]
    assert held_each(lambda i: PlannedRun(source, ids[i], ids[i], None)) < 100
    run = PlannedRun(source, "a", "a", "b")
    assert pickle.loads(pickle.dumps(run)) == run and run.needs == ("b",)  # sent to a worker as it was


def test_discovery_holds_no_path_a_run(tmp_path: Path) -> None:
    """After discovery and the plan, no run holds a `Path`: its folder and its files are text, made into paths
    when read (~4 a run before, then the folder's one). The folder reads back as the path it was."""
    n = 60
    for i in range(n):
        run = tmp_path / "src" / f"s{i // 6}" / f"r{i % 6}"
        run.mkdir(parents=True)
        (run / "run.yaml").write_text(f"id: s{i // 6}-r{i % 6}\n")
        (run / "metrics.jsonl").write_text('{"step": 1, "loss": 1.0}\n')
        (run / "probe.jsonl").write_text('{"id": "a", "passed": true}\n')
    gc.collect()
    before = sum(1 for o in gc.get_objects() if isinstance(o, PurePath))
    tree = SourceTree.open(tmp_path / "src", claims=False)  # as a build opens it (`obs check` lists the claims)
    session_shape._kind.cache_clear()  # the last 4,096 logs looked at, by path: bounded, not a path a run
    gc.collect()
    held = sum(1 for o in gc.get_objects() if isinstance(o, PurePath)) - before
    assert len(tree.plan.runs) == n
    assert all(len(p.source.files) == 3 for p in tree.plan.runs)
    assert held < 0.5 * n, held
    assert sorted(p.source.path for p in tree.plan.runs) == sorted((tmp_path / "src").resolve().glob("s*/r*"))


def test_a_peek_made_by_a_build_is_on_disk_not_held(tmp_path: Path) -> None:
    """A run.yaml's identity is read back by path from the spill file, then from the saved state (as a file's
    hash): a build of 100,000 runs held one list of five values for each (~0.3 KB)."""
    run_yaml = tmp_path / "run.yaml"
    run_yaml.write_text("id: r1\n")
    reads: list[Path] = []

    def read(path: Path) -> tuple[str | None, str | None]:
        reads.append(path)
        return "r1", "r0"

    cache = BuildCache.open(tmp_path / "cache")
    assert cache.peek_identity(run_yaml, read) == ("r1", "r0")
    assert cache.peeks == {} and cache.peek_identity(run_yaml, read) == ("r1", "r0") and len(reads) == 1
    cache.save({str(run_yaml)})
    back = BuildCache.open(tmp_path / "cache")
    assert back.peek_identity(run_yaml, read) == ("r1", "r0") and len(reads) == 1
    run_yaml.write_text("id: r2\n")  # changed: read again, and the new identity saved over the old
    assert back.peek_identity(run_yaml, lambda p: ("r2", None)) == ("r2", None)
    back.save({str(run_yaml)})
    assert BuildCache.open(tmp_path / "cache").peek_identity(run_yaml, read) == ("r2", None) and len(reads) == 1
    assert (tmp_path / "cache" / STATE_FILE).is_file()


def test_the_record_of_what_obs_wrote_is_held_as_packed_text_and_written_in_chunks(tmp_path: Path) -> None:
    """A site of 100,000 runs has ~600,000 files: their names are held a few hundred to a string and looked up by
    bisection (a list of them was ~90 bytes a name, a set more), and the record is written a few thousand names
    at a time, the same bytes as `json.dumps(record, indent=0)`."""
    import json

    from obs.write import SortedNames, _record_chunks, _write_atomic

    names = sorted(f"runs/s{i:05d}/{n}" for i in range(3000) for n in RUN_FILES)
    as_list = held_each(lambda i: list(names), 1) / len(names)  # the list the walk made before, its strings copied
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        held = SortedNames(iter(names))
        packed = (tracemalloc.get_traced_memory()[0] - base) / len(names)
    finally:
        tracemalloc.stop()
    assert packed < 32 and as_list >= 8  # the names' text and a little; a list's pointers alone are 8 bytes
    assert all(n in held for n in names[::7]) and "runs/s00042/nope.html" not in held and 7 not in held
    assert "a" not in held and "zzz" not in held and "runs/s00042/index.htm" not in held
    held.add("index.json")
    held.add("index.json")
    held.add("zzz")
    assert list(held) == sorted([*names, "index.json", "zzz"]) and len(held) == len(names) + 2
    assert "index.json" in held and "zzz" in held
    written = list(held)
    chunks = list(_record_chunks(held, ["CNAME"]))
    record = {"written": written, "static": ["CNAME"]}
    assert len(chunks) > 1 and b"".join(chunks) == json.dumps(record, indent=0).encode("utf-8")
    _write_atomic(tmp_path / "v.files", iter(chunks))
    assert json.loads((tmp_path / "v.files").read_bytes()) == record
    for empty in ([], ["only"]):
        assert b"".join(_record_chunks(SortedNames(empty), [])) == json.dumps(
            {"written": empty, "static": []}, indent=0
        ).encode("utf-8")
    few = SortedNames([])
    few.add("b")
    few.add("a")
    assert list(few) == ["a", "b"] and len(few) == 2


def test_the_sorted_walk_gives_every_file_and_link_in_sorted_order(tmp_path: Path) -> None:
    """`sorted_entries` goes into each folder where its paths sort (a folder as its name and "/"), so the names
    come sorted without holding them all: the same list as walking everything and sorting it."""
    import os

    from obs.write import sorted_entries

    root = tmp_path / "site"
    for name in ("a", "a-b", "a0", "a.b", "A", "été", "z z", "runs"):
        (root / name / "in").mkdir(parents=True)
        (root / name / "in" / "f.html").write_text("x")
        (root / name / "g").write_text("x")
        (root / (name + "x")).write_text("y")
    (root / "a" / "empty").mkdir()
    (root / "lnk").symlink_to(root / "a")  # a link to a folder: listed, not followed
    (root / "broken").symlink_to(root / "nothere")
    everything: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root).as_posix()
        prefix = "" if rel == "." else f"{rel}/"
        everything += [prefix + n for n in dirnames if os.path.islink(os.path.join(dirpath, n))]
        everything += [prefix + n for n in filenames]
    assert list(sorted_entries(root)) == sorted(everything)
    assert len(everything) == 8 * 3 + 2 and "lnk" in everything and not any(e.startswith("lnk/") for e in everything)
    assert list(sorted_entries(tmp_path / "absent")) == []


def test_the_walk_remembers_a_bounded_number_of_locations(tmp_path: Path, monkeypatch: Any) -> None:
    """The walk's memos (real locations, folder listings) start again past their limit: held for every file they
    were ~3 KB a run at the walk's peak. With tiny limits the tree is found exactly as with the defaults."""
    from obs import safepaths

    for i in range(40):
        run = tmp_path / "src" / f"s{i // 8}" / f"r{i % 8}"
        run.mkdir(parents=True)
        (run / "run.yaml").write_text(f"id: s{i // 8}-r{i % 8}\n")
        (run / "metrics.jsonl").write_text('{"step": 1, "loss": 1.0}\n')
        (run / "notes.bin").write_bytes(b"\0")  # read by no format: listed as not read
    (tmp_path / "src" / "link").symlink_to(tmp_path / "src" / "s0")  # a link inside the tree: resolved

    def found() -> tuple[list[str], list[str], list[str]]:
        tree = SourceTree.open(tmp_path / "src")
        return (
            [p.id for p in tree.plan.runs],
            tree.found.unread_rel(),
            [str(f) for p in tree.plan.runs for f in p.source.files],
        )

    expected = found()
    sizes: list[int] = []
    real_setitem = safepaths._Recent.__setitem__

    def setitem(self: Any, key: Any, value: Any) -> None:
        real_setitem(self, key, value)
        sizes.append(len(self))

    monkeypatch.setattr(safepaths, "WALK_MEMO", 7)
    monkeypatch.setattr(safepaths, "WALK_LISTINGS", 3)
    monkeypatch.setattr(safepaths._Recent, "__setitem__", setitem)
    assert found() == expected
    assert sizes and max(sizes) <= 7
    assert len(expected[1]) == 40 and all(rel.endswith("notes.bin") for rel in expected[1])


def test_the_live_files_answer_as_their_set_does_in_a_fraction_of_its_memory() -> None:
    names = [f"/lab/runs/s{i // 10:05d}/r{i % 10}/{f}" for i in range(4000) for f in ("metrics.jsonl", "run.yaml")]
    gone = [name.replace("/r", "/x") for name in names]

    def held(make: Callable[[], Any]) -> tuple[Any, int]:
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            made = make()
            return made, tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()

    as_set, set_bytes = held(lambda: {str(PurePath(n)) for n in names})
    live, live_bytes = held(lambda: LiveNames(str(PurePath(n)) for n in names))
    assert len(live) == len(as_set) == 8000
    assert all(n in live for n in names) and not any(n in live for n in gone)
    assert live_bytes <= 9 * len(names) < set_bytes / 10  # 8 bytes a name against a string and a slot


def test_a_saved_state_keeps_the_hashes_of_the_live_files_only(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    files = [src / f"{name}.jsonl" for name in ("a", "b", "gone")]
    for f in files:
        f.write_text(f.name)
    first = BuildCache.open(tmp_path / "cache")
    shas = [first.file_sha(f) for f in files]
    first.save(LiveNames(str(f) for f in files[:2]))
    second = BuildCache.open(tmp_path / "cache")
    assert [second.known_file(str(f)) for f in files] == [
        [f.stat().st_size, f.stat().st_mtime_ns, f.stat().st_ino, sha]
        for f, sha in zip(files[:2], shas[:2], strict=True)
    ] + [None]


def test_a_build_keeps_no_record_of_which_adapter_took_each_folder(tmp_path: Path) -> None:
    """`obs check` lists which adapter took each folder; a build never reads that list, which held a claim and its
    folder for every run (~0.2 KB a run) from discovery to the end. Nor does it hold the run.yaml files planning
    peeked at once the runs are built (the last 1,024: ~3.6 MB)."""
    from obs import safeyaml
    from obs.build import BuildOptions, build_site
    from obs.discover import discover
    from obs.plan import LET_GO

    for i in range(3):
        run = tmp_path / "src" / f"r{i}"
        run.mkdir(parents=True)
        (run / "run.yaml").write_text(f"id: r{i}\n")
        (run / "metrics.jsonl").write_text('{"step": 1, "loss": 1.0}\n')
    seen: list[SourceTree] = []

    class Watch:
        name = "watch"

        def fingerprint(self) -> Any:
            return None

        def on_tree(self, tree: SourceTree) -> None:
            seen.append(tree)

        def on_summaries(self, summaries: list[Any]) -> list[Any]:
            return summaries

        def on_post_build(self, staging: Any, summaries: list[Any]) -> int:
            peeks.append(len(safeyaml._peeked))
            tree = seen[-1]
            let_go.append(not tree.found.runs and all(p.source is LET_GO for p in tree.plan.runs))
            return 0

        def manifest_sections(self) -> dict[str, Any]:
            return {}

    peeks: list[int] = []
    let_go: list[bool] = []
    safeyaml._peeked.clear()
    opts = BuildOptions(source=tmp_path / "src", out=tmp_path / "site", jobs=1, quiet=True)
    result = build_site(opts, [Watch()])
    assert result.runs == 3 and result.errors == 0 and peeks == [0]
    assert let_go == [True]  # the pages are made with every run's source let go
    with pytest.raises(AttributeError, match="let go after the run pass"):
        _ = seen[0].plan.runs[0].source.files
    assert [len(tree.plan.runs) for tree in seen] == [3] and seen[0].found.claims == []
    assert [c.adapter for c in discover(tmp_path / "src").claims] == ["native"] * 3  # obs check's walk keeps them
    assert len(SourceTree.open(tmp_path / "src").found.claims) == 3
    (tmp_path / "src" / "r1" / "metrics.jsonl").write_text('{"step": 1, "loss": 0.5}\n')
    again = build_site(opts, [Watch()])  # the cache kept the files the runs read: only the changed run is built
    assert (again.built, again.reused, again.errors) == (1, 2, 0) and let_go == [True, True]


def test_a_data_file_made_an_item_at_a_time_is_the_same_bytes() -> None:
    """A leaderboard shard's 10,000 records are made into JSON one at a time (held as dicts they were ~22 MB); the
    file is the bytes `data_file` makes of the whole list, and reads back as it."""
    from obs.render.datafile import data_file, data_file_of_items, read_data_file

    for n in (0, 1, 3, 500):
        items = [
            {"id": f"r{i}", "value": i / 7, "text": "\u00e9\u2028<x>", "list": [1, None, 2.5], "none": None}
            for i in range(n)
        ]
        meta = {"schema": 1, "kind": "runs", "part": 2}
        made = data_file_of_items(meta, iter(items))
        assert made == data_file(meta, items)
        assert read_data_file(made) == ({"schema": 1, "kind": "runs", "part": 2}, items)
        for head in ({}, {"keys": ["a", "b"], "values": [["1"], []], "axes": [None, "x"]}):
            around = data_file_of_items(meta, iter(items), within=head)
            assert around == data_file(meta, {**head, "runs": items})


def test_a_data_file_made_an_item_at_a_time_holds_about_its_json() -> None:
    """orjson returns each item's JSON in the buffer it wrote into (~32 KB for a ~0.6 KB leaderboard record):
    joining 10,000 such outputs held ~160 MB to make one data file at 100,000 runs. Copied into one buffer as
    they come, the file's making peaks at a small multiple of its JSON, whatever orjson's buffers are."""
    import orjson

    from obs.render.datafile import data_file_of_items

    items = [{"id": f"r{i:05d}", "search": "word " * 100, "keys": [i, i / 3, None]} for i in range(2_000)]
    size = len(orjson.dumps(items))  # ~1.1 MB
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        data_file_of_items({"kind": "runs"}, iter(items))
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 4 * size, f"made a {size}-byte JSON with a peak of {peak} bytes"


def test_a_group_of_whole_summaries_is_keyed_a_run_at_a_time() -> None:
    """A campaign's pages (and the page of the runs in no campaign) are kept while every field of every member is
    unchanged: the key is made a run at a time, and any field of any run, or their order, changes it."""
    from obs.render.across_pages import summaries_key
    from obs.sitemodel import RunSummary
    from summaries import make_summary

    runs = [make_summary(id=f"r{i}", seed=i, finals={"loss": 1.0 / (i + 1)}) for i in range(5)]
    key = summaries_key(runs)
    assert key == summaries_key([RunSummary.from_json(s.to_json()) for s in runs])  # equal runs, other objects
    changed = [*runs[:3], dataclasses.replace(runs[3], finals={"loss": 0.3}), runs[4]]
    assert len({key, summaries_key(changed), summaries_key(runs[::-1]), summaries_key(runs[:4])}) == 4


def test_the_staging_area_remembers_a_bounded_number_of_folders(tmp_path: Path, monkeypatch: Any) -> None:
    """It remembered every folder it made (every run's: ~0.15 KB a run to the end of a build); now the last few
    thousand, and a folder forgotten is made again if need be (an existing one is left as it is)."""
    from obs import write

    monkeypatch.setattr(write, "FOLDERS_KEPT", 3)
    staging = write.Staging(tmp_path / "site")
    names = [f"runs/r{i}/{f}" for i in range(20) for f in ("index.html", "sub/a.js")] + ["runs/r0/again.html"]
    for rel in names:
        staging.write(rel, rel.encode())
    assert len(staging._folders) <= 3 + 3  # the limit, and the folders of one path added after a new start
    assert all((staging.path / rel).read_bytes() == rel.encode() for rel in names)
    staging.discard()


def test_recipe_pairs_look_only_at_replicates() -> None:
    """Only runs with a seed can be paired at the recipe level, on either side. The pairs were made with a table of
    every run (id -> summary, id -> page: ~50 MB at 100,000 runs, twice a build, on a site with no seeds at all);
    now a run's page is asked for only when it is in a pair, and a site without seeds holds no table of its runs.
    The pairs are the same: the one seeded recipe against its seeded baseline, its seeds' pages in order."""
    from obs.analysis.recipes import site_recipe_pairs
    from obs.config import SiteConfig
    from summaries import make_summary

    def run(rid: str, **kw: Any) -> Any:
        return make_summary(id=rid, headline={"metric": "exact", "value": 0.5 + len(rid) / 100}, **kw)

    seeded = [
        run(f"{lr}-s{i}", seed=i, baseline=None if lr == "base" else f"base-s{i}", fields={"config.lr": lr})
        for lr in ("base", "new")
        for i in range(3)
    ]
    unseeded = [run(f"u{i:04d}", baseline="u0000", fields={"config.lr": str(i)}) for i in range(4_000)]
    asked: list[str] = []

    def page_of(s: Any) -> str:
        asked.append(s.id)
        return f"runs/{s.slug}/index.html"

    pairs = site_recipe_pairs([*unseeded, *seeded], SiteConfig(), {}, {}, page_of)
    assert sorted(pairs) == ["new-s0", "new-s1", "new-s2"]
    assert pairs["new-s1"].pages == tuple(f"runs/new-s{i}/index.html" for i in range(3))
    assert pairs["new-s1"].pages_baseline == tuple(f"runs/base-s{i}/index.html" for i in range(3))
    assert pairs["new-s1"].href == "runs/new-s1/index.html#recipe-level"
    assert set(asked) <= {s.id for s in seeded}

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        assert site_recipe_pairs(unseeded, SiteConfig(), {}, {}, page_of) == {}
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 40 * len(unseeded), f"{peak / len(unseeded):.0f} bytes a run held to find no pairs"
