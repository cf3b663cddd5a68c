"""The build writes the pages made from summaries as they come (issue 32: never all held at once), links a
kept page group's files from the current site without reading them, and a page made twice keeps the last."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from obs.build import KeptPages, StagedPages
from obs.write import Staging


def test_pages_are_written_as_they_come_and_kept_ones_linked(tmp_path: Path) -> None:
    current = tmp_path / "current"
    (current / "specs").mkdir(parents=True)
    (current / "specs" / "a.html").write_bytes(b"kept page")
    staging = Staging(tmp_path / "site")
    try:
        pages = StagedPages(staging, os.fspath(current))
        pages["index.html"] = b"<p>new</p>"
        assert (staging.path / "index.html").read_bytes() == b"<p>new</p>"  # on disk at once
        kept = KeptPages(current, ["specs/a.html"])
        pages.kept.update(kept)
        (current / "specs" / "b.html").write_bytes(b"never read")
        pages.update(kept)  # linked by name: KeptPages' bytes are not asked for
        assert os.path.samefile(staging.path / "specs" / "a.html", current / "specs" / "a.html")
        pages.update({"index.html": b"<p>last</p>"})
        assert (staging.path / "index.html").read_bytes() == b"<p>last</p>"  # made twice: the last wins
        assert sorted(pages) == ["index.html", "specs/a.html"] and len(pages) == 2
        assert pages["specs/a.html"] == b"kept page"
        with pytest.raises(KeyError):
            pages["nothing.html"]
        assert kept["specs/a.html"] == b"kept page"  # read when a later page needs it (a campaign's analysis.json)
        with pytest.raises(KeyError):
            kept["specs/b.html"]
    finally:
        staging.discard()
