"""Control characters from an input are shown on pages as escapes (`\\x1b`), never as U+FFFD or raw (issue 31).

One-line fields (an id, a title, a config key or value) show a newline as `\\n` too; a multi-line block
(notes) keeps its newlines as newlines.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from bs4 import BeautifulSoup

from obs.cli import main

RUN_YAML = (
    'id: ctl\ntitle: "bell\\a esc\\e[31m two\\nlines"\nstatus: finished\n'
    'config:\n  "key\\ewith": "value\\a and\\nmore"\n  plain: 3\n'
)
NOTES = "first line\nsecond line \x1b[1m bold\n"


def build(tmp_path: Path) -> tuple[Path, str]:
    src = tmp_path / "src"
    (src / "r").mkdir(parents=True)
    (src / "r/run.yaml").write_text(RUN_YAML, encoding="utf-8")
    (src / "r/notes.md").write_text(NOTES, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["build", str(src), "-o", str(tmp_path / "site")])
    assert code in (0, 1), err.getvalue()
    return tmp_path / "site", out.getvalue() + err.getvalue()


def test_control_characters_are_escapes_on_pages_and_one_line_fields_show_newlines(tmp_path: Path) -> None:
    site, said = build(tmp_path)
    html = (site / "runs/ctl/index.html").read_text(encoding="utf-8")
    assert "\ufffd" not in html
    assert not any(ch in html for ch in "\x1b\x07")
    soup = BeautifulSoup(html, "html.parser")
    h1 = soup.find("h1")
    assert h1 is not None
    assert h1.get_text().startswith("bell\\x07 esc\\x1b[31m two\\nlines")
    title = soup.find("title")
    assert title is not None and title.get_text().startswith("ctl ·")
    keys = [th.get_text() for th in soup.select("table.config-table th")]
    values = [td.get_text() for td in soup.select("table.config-table td")]
    assert "config.key\\x1bwith" in keys or "key\\x1bwith" in keys, keys
    assert any(v.startswith("value\\x07 and\\nmore") for v in values), values
    # notes are multi-line text: the newline stays a line break, the control character is shown
    notes = soup.find(string=lambda s: s is not None and "second line" in s)
    assert notes is not None and "\\x1b[1m" in str(notes)
    assert "first line" in html and "first line\\n" not in html
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "bell\\x07 esc\\x1b[31m two\\nlines" in index
    # what was done is said once per file, with the file and line
    assert "each control character was written as its escape" in said
