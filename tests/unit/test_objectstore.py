"""obs.objectstore's mirror against a store held in memory: what is fetched again, what is never written,
and how paths are shown. (tests/site/test_object_store.py runs it against a real S3 server.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from obs import objectstore


class Store:
    """A bucket as fsspec lists it: key -> bytes and version tag; `get` counts what it downloads."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[bytes, str | None]] = {}
        self.fetched: list[str] = []

    def put(self, key: str, data: bytes, etag: str | None = "auto") -> None:
        self.objects[key] = (data, f'"{hash(data) & 0xFFFFFFFF:x}"' if etag == "auto" else etag)

    def find(self, prefix: str, detail: bool = True) -> dict[str, dict[str, Any]]:
        return {
            key: {"name": key, "type": "file", "size": len(data), **({"ETag": etag} if etag else {})}
            for key, (data, etag) in self.objects.items()
            if key.startswith(prefix.rstrip("/") + "/")
        }

    def get(self, keys: list[str], paths: list[str]) -> None:
        for key, path in zip(keys, paths, strict=True):
            Path(path).write_bytes(self.objects[key][0])
            self.fetched.append(key)


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Store:
    fake = Store()
    monkeypatch.setattr(objectstore, "_filesystem", lambda url: (fake, objectstore.URL.sub("", url)))
    return fake


def test_an_object_is_fetched_again_only_when_its_etag_or_size_changed(store: Store, tmp_path: Path) -> None:
    store.put("b/runs/a/metrics.jsonl", b'{"step": 1}\n')
    store.put("b/runs/a/run.yaml", b"id: a\n")
    first = objectstore.mirror("s3://b/runs", tmp_path)
    assert (first.downloaded, first.kept) == (2, 0) and first.folder.name == "runs"
    assert (first.folder / "a" / "run.yaml").read_bytes() == b"id: a\n"

    store.fetched.clear()
    assert objectstore.mirror("s3://b/runs", tmp_path).kept == 2 and store.fetched == []

    store.put("b/runs/a/run.yaml", b"id: a\n", etag='"rewritten"')  # same bytes, new ETag: fetched
    store.put("b/runs/a/metrics.jsonl", b'{"step": 1}\n{"step": 2}\n', etag=store.objects["b/runs/a/metrics.jsonl"][1])
    again = objectstore.mirror("s3://b/runs", tmp_path)  # the size changed under the same ETag: fetched too
    assert sorted(store.fetched) == ["b/runs/a/metrics.jsonl", "b/runs/a/run.yaml"] and again.downloaded == 2


def test_an_object_without_a_version_tag_is_fetched_every_time(store: Store, tmp_path: Path) -> None:
    store.put("b/runs/a/run.yaml", b"id: a\n", etag=None)
    objectstore.mirror("s3://b/runs", tmp_path)
    assert objectstore.mirror("s3://b/runs", tmp_path).downloaded == 1 and len(store.fetched) == 2


def test_a_mirrored_file_changed_on_disk_is_fetched_again(store: Store, tmp_path: Path) -> None:
    store.put("b/runs/a/run.yaml", b"id: a\n")
    m = objectstore.mirror("s3://b/runs", tmp_path)
    (m.folder / "a" / "run.yaml").write_bytes(b"id: a, edited by hand\n")
    assert objectstore.mirror("s3://b/runs", tmp_path).downloaded == 1
    assert (m.folder / "a" / "run.yaml").read_bytes() == b"id: a\n"


def test_keys_a_folder_cannot_hold_are_never_written(store: Store, tmp_path: Path) -> None:
    store.put("b/runs/a/run.yaml", b"id: a\n")
    store.put("b/runs/a/run.yaml/x", b"1")  # S3 allows an object and a "folder" of the same name
    store.put("b/runs/../../escape", b"!")
    store.put("b/runs/a//double", b"!")
    m = objectstore.mirror("s3://b/runs", tmp_path)
    assert m.skipped == [
        ("s3://b/runs/../../escape", "a key with an empty, '.' or '..' part"),
        ("s3://b/runs/a//double", "a key with an empty, '.' or '..' part"),
        ("s3://b/runs/a/run.yaml", "an object named like a folder of other objects"),
    ]
    assert sorted(p.relative_to(m.folder).as_posix() for p in m.folder.rglob("*") if p.is_file()) == ["a/run.yaml/x"]
    assert (m.folder / "a" / "run.yaml" / "x").read_bytes() == b"1"
    assert not any("escape" in p.name or "double" in p.name for p in tmp_path.rglob("*"))


def test_a_gone_object_is_removed_from_the_mirror(store: Store, tmp_path: Path) -> None:
    store.put("b/runs/a/run.yaml", b"id: a\n")
    store.put("b/runs/c/run.yaml", b"id: c\n")
    m = objectstore.mirror("s3://b/runs", tmp_path)
    del store.objects["b/runs/c/run.yaml"]
    assert objectstore.mirror("s3://b/runs", tmp_path).removed == 1
    assert not (m.folder / "c").exists() and (m.folder / "a" / "run.yaml").is_file()


def test_an_empty_prefix_is_an_error(store: Store, tmp_path: Path) -> None:
    with pytest.raises(objectstore.SourceError, match="no objects there"):
        objectstore.mirror("s3://b/none", tmp_path)


def test_diagnostic_paths_name_the_objects(tmp_path: Path) -> None:
    m = objectstore.Mirror("s3://b/runs/reports/", tmp_path / "x" / "reports")
    assert m.shown("reports/spec03/r2/probe.jsonl") == "s3://b/runs/reports/spec03/r2/probe.jsonl"
    assert m.shown(str(tmp_path / "x" / "reports" / "obs.yaml")) == "s3://b/runs/reports/obs.yaml"
    assert m.shown("reports") == "s3://b/runs/reports"
    assert m.shown("elsewhere/obs.yaml") == "elsewhere/obs.yaml"
    assert m.shown("reports-old/x") == "reports-old/x"


@pytest.mark.parametrize(
    ("text", "url"),
    [("s3://b/p", True), ("gs://b", True), ("az://c/p", True), ("file:///tmp/x", False), ("reports", False)],
)
def test_what_counts_as_a_url(text: str, url: bool) -> None:
    assert objectstore.is_url(text) is url
