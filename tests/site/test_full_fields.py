"""A cut plain-text field of a run is kept whole, up to fieldbounds.MAX_KEPT characters, in a collapsed block on
the run page; longer ones are only cut (issue 31)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from bs4 import BeautifulSoup

from obs.cli import main


def test_a_cut_title_is_whole_in_a_collapsed_block_and_a_huge_one_is_not(tmp_path: Path) -> None:
    src = tmp_path / "src"
    title = "word " * 1_000 + "THE-END"  # 5,007 characters: cut to 300, kept whole
    (src / "a").mkdir(parents=True)
    (src / "a/run.yaml").write_text(f"id: a\ntitle: {title}\nstatus: finished\n", encoding="utf-8")
    (src / "b").mkdir()
    (src / "b/run.yaml").write_text("id: b\ntitle: " + "T" * 30_000 + "\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["build", str(src), "-o", str(tmp_path / "site")]) == 0
    said = out.getvalue() + err.getvalue()
    assert (
        "src/a/run.yaml: warning: 'title' is 5,007 characters long; pages show its first 300, the whole text in a "
        "collapsed block on the run page" in said
    )
    assert "src/b/run.yaml: warning: 'title' is 30,000 characters long; pages show its first 300\n" in said + "\n"
    soup = BeautifulSoup((tmp_path / "site/runs/a/index.html").read_text(encoding="utf-8"), "html.parser")
    h1 = soup.find("h1")
    assert h1 is not None and "THE-END" not in h1.get_text() and h1.get_text().strip().startswith("word word")
    block = soup.find("details", id="full-title")
    assert block is not None and block.get("open") is None
    assert block.find("p").get_text() == title
    assert "5,007 characters" in block.find("summary").get_text()
    other = (tmp_path / "site/runs/b/index.html").read_text(encoding="utf-8")
    assert 'id="full-title"' not in other and "T" * 301 not in other
