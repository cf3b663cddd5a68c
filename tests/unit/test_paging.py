"""Long lists cut into pages, index.json cut into shards (issue 32): the cutting, the pager, reading back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from obs import urls
from obs.manifest import SHARDED_SCHEMA_VERSION, ShardError, manifest_files, read_runs
from obs.publish.changes import ManifestError, read_manifest
from obs.render import paging
from summaries import make_summary


def test_numbered_keeps_the_first_name() -> None:
    assert urls.numbered("ledger.html", 1) == "ledger.html"
    assert urls.numbered("ledger.html", 2) == "ledger-2.html"
    assert urls.numbered("sweeps/a.b-1.html", 3) == "sweeps/a.b-1-3.html"
    assert urls.numbered("leaderboard.js", 10) == "leaderboard-10.js"


def test_chunks_cover_every_item_once_in_order() -> None:
    items = list(range(1234))
    parts = list(paging.chunks(items, 500))
    assert [len(p) for p in parts] == [500, 500, 234]
    assert [x for p in parts for x in p] == items
    assert list(paging.chunks([], 10)) == [[]]  # an empty list still has its (empty) first page
    with pytest.raises(ValueError):
        list(paging.chunks(items, 0))


def test_cut_by_budget() -> None:
    assert paging.cut_by_budget([300, 300, 900, 10, 2000, 5], lambda c: c, 1500) == [[300, 300, 900], [10], [2000], [5]]
    assert paging.cut_by_budget([], lambda c: c, 10) == [[]]


def test_pager_links_and_numbers() -> None:
    p = paging.pager("ledger.html", 5, 12, 500, 5_800)
    assert (p.first_item, p.last_item, p.total, p.paged) == (2001, 2500, 5_800, True)
    assert (p.prev, p.next) == ("ledger-4.html", "ledger-6.html")
    labels = [(link.label, link.href) for link in p.links]
    assert labels[0] == ("1", "ledger.html")
    assert ("…", None) in labels  # 1 … 2..8 … 12 with a window of 3
    assert ("5", None) in labels  # the current page is not a link
    assert labels[-1] == ("12", "ledger-12.html")
    last = paging.pager(urls.sweep_table("x", 1), 12, 12, 500, 5_800)
    assert (last.first_item, last.last_item, last.next, last.prev) == (5501, 5800, None, "runs-11.html")
    assert urls.sweep_table("x", 11) == "sweeps/x/runs-11.html"
    assert not paging.pager("ledger.html", 1, 1, 500, 3).paged


def _summaries(n: int) -> list:
    return [make_summary(id=f"run-{i:04d}", input_hash=f"h{i}") for i in range(n)]


def test_manifest_inline_below_the_shard_size() -> None:
    runs = _summaries(5)
    files = manifest_files(runs, title="t", specs=[], campaigns=[], errors=0, warnings=0, shard_runs=5)
    assert list(files) == [urls.MANIFEST]
    doc = json.loads(files[urls.MANIFEST])
    assert doc["schema_version"] == 2 and [r["id"] for r in doc["runs"]] == [s.id for s in runs]
    default = manifest_files(runs, title="t", specs=[], campaigns=[], errors=0, warnings=0)
    assert default == files  # below SHARD_RUNS, the default: one index.json


def test_manifest_shards_read_back(tmp_path: Path) -> None:
    runs = _summaries(11)[::-1]  # shards are by id whatever the order given
    files = manifest_files(runs, title="t", specs=["s"], campaigns=[], errors=1, warnings=2, shard_runs=4)
    assert sorted(files) == [urls.MANIFEST, "index/runs-0001.json", "index/runs-0002.json", "index/runs-0003.json"]
    doc = json.loads(files[urls.MANIFEST])
    assert doc["schema_version"] == SHARDED_SCHEMA_VERSION and "runs" not in doc
    assert doc["run_count"] == 11
    assert doc["run_shards"][1] == {"path": "index/runs-0002.json", "count": 4, "first": "run-0004", "last": "run-0007"}
    assert doc["diagnostics"] == {"errors": 1, "warnings": 2}
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    assert [r["id"] for r in read_runs(doc, tmp_path, 10**6)] == [f"run-{i:04d}" for i in range(11)]
    old = read_manifest(tmp_path)  # --compare-to reads a sharded site as it reads any other
    assert sorted(old.runs) == [f"run-{i:04d}" for i in range(11)]
    (tmp_path / "index/runs-0002.json").unlink()
    with pytest.raises(ManifestError, match=r"runs-0002\.json: cannot be read .*needs its site folder"):
        read_manifest(tmp_path / "index.json")


def test_read_runs_refuses_a_shard_outside_its_folder(tmp_path: Path) -> None:
    doc = {"run_shards": [{"path": "../secret.json"}]}
    with pytest.raises(ShardError, match="not under index/"):
        list(read_runs(doc, tmp_path, 10**6))
    with pytest.raises(ShardError, match="no 'runs' and no 'run_shards'"):
        list(read_runs({}, tmp_path, 10**6))
    (tmp_path / "index").mkdir()
    (tmp_path / "index/runs-0001.json").write_text("[1, 2]")
    with pytest.raises(ShardError, match="not a run shard"):
        list(read_runs({"run_shards": [{"path": "index/runs-0001.json"}]}, tmp_path, 10**6))


def test_manifest_shards_are_written_as_they_are_made() -> None:
    """With `write`, each shard is handed over as it is made (never all held: ~140 MB at 100,000 runs) and only
    index.json is returned, for the build to write last; the bytes are those of the shards returned without it."""
    runs = _summaries(11)
    written: list[str] = []
    held = manifest_files(runs, title="t", specs=[], campaigns=[], errors=0, warnings=0, shard_runs=4)
    got: dict[str, bytes] = {}

    def write(rel: str, data: bytes) -> None:
        written.append(rel)
        got[rel] = data

    files = manifest_files(runs, title="t", specs=[], campaigns=[], errors=0, warnings=0, shard_runs=4, write=write)
    assert list(files) == [urls.MANIFEST] and {**got, **files} == held
    assert written == ["index/runs-0001.json", "index/runs-0002.json", "index/runs-0003.json"]
