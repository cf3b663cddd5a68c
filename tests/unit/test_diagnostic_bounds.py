"""Issue 31: every diagnostic is one line nothing acts on, and a file gets at most MAX_PER_KIND of a kind."""

from __future__ import annotations

from pathlib import Path

from obs.adapters.csv_logs import MAX_CSV_FIELD, rows
from obs.diagnostics import MAX_PER_KIND, Diagnostic, Diagnostics
from obs.sanitize import visible


def test_control_characters_are_written_as_escapes() -> None:
    d = Diagnostic("src/a\x1b[31m\nsrc/b", 3, "warning", "column 'x\x07\ny:1: error: forged' \u2028 \udce9")
    line = d.format()
    assert "\n" not in line and "\x1b" not in line and "\x07" not in line and "\u2028" not in line
    assert line == "src/a\\x1b[31m\\nsrc/b:3: warning: column 'x\\x07\\ny:1: error: forged' \\u2028 \ufffd"
    assert Diagnostic(**d.as_dict()) == d  # read back from the cache: the same


def test_visible_keeps_text_and_escapes_only_controls() -> None:
    assert visible("plain ünïcode 😀 tab?") == "plain ünïcode 😀 tab?"
    assert visible("a\tb\rc\x00d\x7fe\x85") == "a\\tb\\rc\\x00d\\x7fe\\x85"


def test_messages_of_one_kind_about_one_file_are_bounded() -> None:
    diags = Diagnostics()
    for line in range(1, 50_001):
        diags.warning("m.jsonl", f"malformed JSON at column {line % 7}: '{{bad {line}'; line skipped", line)
    diags.warning("m.jsonl", "another kind of problem", 3)
    diags.warning("other.jsonl", "malformed JSON at column 1: '{bad'; line skipped", 1)
    about = [d for d in diags.items if d.path == "m.jsonl"]
    assert len(about) == MAX_PER_KIND + 2
    summary = about[MAX_PER_KIND]
    assert summary.line == MAX_PER_KIND + 1
    assert summary.message.startswith(f"and {50_000 - MAX_PER_KIND} more messages like the {MAX_PER_KIND} before")
    assert "'{bad 50000'" in summary.message
    assert [d.path for d in diags.items].count("other.jsonl") == 1


def test_a_csv_cell_past_the_limit_skips_its_row_only(tmp_path: Path) -> None:
    """It used to raise "field larger than field limit" out of the reader and lose the run."""
    path = tmp_path / "metrics.csv"
    path.write_text("step,loss,note\n1,0.5,a\n2,0.4," + "y" * (MAX_CSV_FIELD + 1) + "\n3,0.3,c\n")
    diags = Diagnostics()
    got = list(rows(path, diags))
    assert [r["step"] for _, r in got] == [1, 3]
    assert [(d.line, d.message) for d in diags.items] == [
        (3, f"row not read: field larger than field limit ({MAX_CSV_FIELD})")
    ]


def test_a_utf16_log_is_one_message_not_one_per_line(tmp_path: Path) -> None:
    """100,000 lines of UTF-16 gave 100,002 warnings."""
    from obs.jsonl import iter_jsonl

    path = tmp_path / "metrics.jsonl"
    path.write_bytes("".join(f'{{"step": {i}, "loss": 0.5}}\n' for i in range(1000)).encode("utf-16"))
    diags = Diagnostics()
    assert list(iter_jsonl(path, diags)) == []
    assert [(d.line, d.message) for d in diags.items] == [
        (
            1,
            "the file is UTF-16 (it starts with a UTF-16 byte-order mark); obs reads JSON lines as UTF-8: convert it "
            "(iconv -f UTF-16 -t UTF-8)",
        )
    ]
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00\x00" + bytes(range(256)) * 8)  # a BOM, then not text: read as it is
    diags = Diagnostics()
    list(iter_jsonl(binary, diags))
    assert not any("UTF-32" in d.message for d in diags.items)
