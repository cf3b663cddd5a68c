"""decisions.jsonl: appended, never rewritten; the latest line for a run wins over run.yaml."""

from __future__ import annotations

from pathlib import Path

from obs.diagnostics import Diagnostics
from obs.ledger import LedgerEntry, append_entry, is_reserved, ledger_path, overlay, read_ledger
from obs.model import Decision, Run

H1, H2 = "a" * 64, "b" * 64


def entry(run: str, verdict: str, h: str = H1, **kw: str) -> LedgerEntry:
    fields = {"rationale": "why", "next": "", "by": "me", "date": "2026-01-01T00:00:00Z"} | kw
    return LedgerEntry(run, verdict, input_hash=h, archive=None, suggested=None, baseline=None, line=0, **fields)


def test_append_then_read_keeps_every_line_and_the_latest_wins(tmp_path: Path) -> None:
    append_entry(tmp_path, entry("r1", "reject"))
    before = ledger_path(tmp_path).read_bytes()
    append_entry(tmp_path, entry("r2", "promote"))
    append_entry(tmp_path, entry("r1", "repair", H2, date="2026-02-01T00:00:00Z"))
    assert ledger_path(tmp_path).read_bytes().startswith(before)  # appended, nothing rewritten
    ledger = read_ledger(tmp_path)
    assert [e.verdict for e in ledger.entries] == ["reject", "promote", "repair"]
    latest = ledger.latest("r1")
    assert latest is not None and latest.verdict == "repair" and latest.input_hash == H2
    assert [e.verdict for e in ledger.history("r1")] == ["reject", "repair"]
    assert ledger.latest("nope") is None


def test_bad_lines_are_reported_with_their_line_and_skipped(tmp_path: Path) -> None:
    good = '{"run": "r1", "verdict": "promote", "input_hash": "' + H1 + '"}'
    ledger_path(tmp_path).write_text(
        "\n".join(
            [
                good,
                "not json",
                '{"run": "r1", "verdict": "maybe", "input_hash": "' + H1 + '"}',
                '{"run": "r1", "verdict": "reject", "input_hash": "short"}',
                '{"run": "r1", "verdict": "reject", "input_hash": "' + H1 + '", "archive": "../../etc/passwd"}',
                '{"run": "r1", "verdict": "rej',
            ]
        )
    )
    diags = Diagnostics(root=tmp_path)
    ledger = read_ledger(tmp_path, diags)
    assert [e.line for e in ledger.entries] == [1]
    assert sorted(d.line for d in diags.items if d.line) == [2, 3, 4, 5, 6]
    assert any("half-written" in d.message for d in diags.items if d.line == 6)


def test_an_append_after_a_half_written_line_starts_a_new_line(tmp_path: Path) -> None:
    ledger_path(tmp_path).write_text('{"run": "r1", "verd')
    append_entry(tmp_path, entry("r2", "branch"))
    assert [e.run for e in read_ledger(tmp_path).entries] == ["r2"]


def test_overlay_replaces_the_run_yaml_decision_as_a_whole(tmp_path: Path) -> None:
    append_entry(tmp_path, entry("r1", "reject", rationale="ledger says no", next=""))
    run = Run(id="r1", source_dir=tmp_path)
    run.decision = Decision("promote", "yaml says yes", next="r2", by="yaml")
    got = overlay(run, read_ledger(tmp_path))
    assert got is not None
    assert run.decision == Decision("reject", "ledger says no", "", "me", "2026-01-01T00:00:00Z")
    assert any("takes precedence" in n for n in run.notices)
    other = Run(id="r9", source_dir=tmp_path)
    other.decision = Decision("promote")
    assert overlay(other, read_ledger(tmp_path)) is None and other.decision == Decision("promote")


def test_reserved_names_only_at_the_top_of_the_tree(tmp_path: Path) -> None:
    assert is_reserved(tmp_path / "decisions.jsonl", tmp_path)
    assert is_reserved(tmp_path / "archive", tmp_path)
    assert not is_reserved(tmp_path / "run" / "decisions.jsonl", tmp_path)
    assert not is_reserved(tmp_path / "metrics.jsonl", tmp_path)
