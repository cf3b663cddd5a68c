"""Issue 31: a file name may hold any byte but / and NUL; obs keeps it surrogate-escaped to open the file and
never lets it reach text output unescaped (hashes, the cache's JSON, ids, messages)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from obs.cache import STATE_FILE, BuildCache, hash_json
from obs.safepaths import shown_name, valid_name

BAD = os.fsdecode(b"caf\xe9")  # 'caf\udce9'


def test_names_that_are_not_utf8_are_found_and_shown_with_replacement_characters() -> None:
    assert not valid_name(BAD) and valid_name("café")
    assert shown_name(BAD) == "caf\ufffd"
    assert shown_name(Path("runs") / BAD / "run.yaml") == "runs/caf\ufffd/run.yaml"


def test_hash_json_takes_them_and_keeps_different_bytes_apart() -> None:
    one = hash_json({"path": os.fsdecode(b"r\xe9"), "files": [Path(os.fsdecode(b"x\xff"))]})
    two = hash_json({"path": os.fsdecode(b"r\xe8"), "files": [Path(os.fsdecode(b"x\xff"))]})
    assert one != two and len(one) == 64
    assert hash_json({"path": "ok"}) == hash_json({"path": "ok"})


def test_the_cache_saves_without_them(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "cache")
    bad, good = str(tmp_path / BAD), str(tmp_path / "good")
    cache.file_hashes = {bad: [1, 2, 3, "a"], good: [1, 2, 3, "b"]}
    cache.peeks = {bad: [1, 2, 3, "id", None]}
    cache.save({bad, good})
    with sqlite3.connect(tmp_path / "cache" / STATE_FILE) as con:
        peeks = con.execute("SELECT path FROM peeks").fetchall()
        files = con.execute("SELECT path FROM files").fetchall()
    assert files == [(good,)]
    assert peeks == []
    reopened = BuildCache.open(tmp_path / "cache")
    assert reopened.known_file(good) == [1, 2, 3, "b"] and reopened.known_file(bad) is None
    assert reopened.known_file(bad, table="peeks") is None
