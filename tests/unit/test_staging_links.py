"""Files linked into a new site from the helper thread (Staging.link_later) are all there, or the build hears why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from obs.write import Staging


def source_files(tmp_path: Path, n: int) -> list[tuple[str, str]]:
    src = tmp_path / "old"
    pairs = []
    for i in range(n):
        path = src / f"run{i % 7}" / ("cases" if i % 2 else "") / f"f{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(i))
        pairs.append((f"runs/{path.relative_to(src).as_posix()}", str(path)))
    return pairs


def test_linked_later_files_are_all_in_place_once_waited_for(tmp_path: Path) -> None:
    staging = Staging(tmp_path / "site")
    pairs = source_files(tmp_path, 60)
    for start in range(0, 60, 9):
        staging.link_later(pairs[start : start + 9])
    staging.write("index.html", b"page")  # the build's own writes go on meanwhile
    staging.wait_for_links()
    for rel, src in pairs:
        target = staging.path / rel
        assert target.read_text() == Path(src).read_text()
        assert os.stat(target).st_ino == os.stat(src).st_ino  # a hard link, not a copy
    staging.discard()


def test_a_failed_link_is_raised_by_the_build_and_the_rest_is_not_attempted(tmp_path: Path) -> None:
    staging = Staging(tmp_path / "site")
    pairs = source_files(tmp_path, 4)
    staging.link_later([("runs/missing.txt", str(tmp_path / "nowhere.txt"))])
    staging.link_later(pairs)
    with pytest.raises(FileNotFoundError):
        staging.wait_for_links()
    assert not (staging.path / pairs[0][0]).exists()
    staging.discard()
    assert not staging.path.exists()


def test_discard_waits_for_the_helper_before_removing_the_folder(tmp_path: Path) -> None:
    staging = Staging(tmp_path / "site")
    staging.link_later(source_files(tmp_path, 200))
    staging.discard()  # no failure, and nothing left behind by a link made after the removal
    assert not staging.path.exists()
