"""obs decide: an append-only ledger in the source tree, frozen reports copied into the site byte for
byte, never re-rendered; and obs build still never writes into the source tree."""

from __future__ import annotations

import json
import re
import shutil
import stat
from pathlib import Path

import pytest

from obs.build import BuildOptions
from obs.cli import main
from obs.discover import discover
from obs.pipeline import SourceTree, input_hash
from obs.plan import plan_build
from obs.publish.decide import decide
from obs.publish.extras import build_published
from obs.publish.single_file import is_frozen_report
from sitefiles import tree_digest

REPORTS = Path(__file__).resolve().parents[2] / "reports"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "reports"
    shutil.copytree(REPORTS, src)
    return src


def test_decide_appends_and_freezes(source: Path) -> None:
    first = decide(
        source, "spec03-r2", "reject", "it regressed | <b>", "spec03-r3", by="ana", date="2026-04-01T00:00:00Z"
    )
    ledger = source / "decisions.jsonl"
    line1 = ledger.read_bytes()
    second = decide(source, "spec03-r2", "repair", "on reflection", by="bo", date="2026-04-02T00:00:00Z")
    assert ledger.read_bytes().startswith(line1)
    rows = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert [r["verdict"] for r in rows] == ["reject", "repair"]
    assert rows[0]["by"] == "ana" and rows[0]["next"] == "spec03-r3" and rows[0]["suggested"] == "reject"
    tree = SourceTree.open(source)
    assert rows[0]["input_hash"] == input_hash(tree, tree.planned("spec03-r2"))
    # same artifacts, second decision: its own folder, the first one untouched
    assert first.archive != second.archive and first.archive.parent.name + ".2" == second.archive.parent.name
    for d in (first, second):
        data = d.archive.read_bytes()
        assert is_frozen_report(data) and b"<script" not in data
        assert not d.archive.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    assert (
        b"Frozen report." in first.archive.read_bytes()
        and b"reject</strong> was decided by ana" in first.archive.read_bytes()
    )


def test_the_build_reads_the_ledger_and_archive_but_writes_neither(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs_before = {p.id for p in plan_build(discover(source).runs, discover(source).diags).runs}
    decided = decide(source, "spec03-r3", "promote", "ship it", by="ana", date="2026-04-01T00:00:00Z")
    frozen = decided.archive.read_bytes()
    rel = decided.archive.relative_to(source).as_posix()
    before = tree_digest(source)
    out = tmp_path / "site"
    result = build_published(BuildOptions(source=source, out=out, jobs=1))
    assert tree_digest(source) == before  # obs build never writes the source tree
    # neither archive/ nor decisions.jsonl became a run
    assert {s.id for s in result.summaries} == runs_before
    assert not [d for d in result.diagnostics if "decisions.jsonl" in d.path or "archive" in d.path]
    assert (out / rel).read_bytes() == frozen
    manifest = json.loads((out / "index.json").read_text())
    assert {r["id"]: r["verdict"] for r in manifest["runs"]}["spec03-r3"] == "promote"  # ledger over run.yaml (repair)
    ledger_page = (out / "ledger.html").read_text()
    row = ledger_page[ledger_page.index('id="decision-spec03-r3"') :].split("</tr>")[0]
    assert 'href="runs/spec03-r3/index.html"' in row and f'href="{rel}"' in row and "artifacts changed" not in row
    run_page = (out / "runs/spec03-r3/index.html").read_text()
    assert "ship it" in run_page and "takes precedence" in run_page

    # a newer template and changed artifacts: live pages change, the frozen report does not
    templates = tmp_path / "templates"
    shutil.copytree(Path(__file__).resolve().parents[2] / "templates", templates)
    base = templates / "base.html"
    newer, n = re.subn(r"(<body[^\n]*>)", r"\1\n<!-- newer template -->", base.read_text(), count=1)
    assert n == 1, "base.html has a <body> line to mark"
    base.write_text(newer)
    monkeypatch.setattr("obs.build.templates_dir", lambda: templates)
    monkeypatch.setattr("obs.render.site.templates_dir", lambda: templates)
    with (source / "spec03/r3/probe.jsonl").open("a") as fh:
        fh.write('{"id": "extra-1", "split": "test", "family": "poster_stack", "exact": false}\n')
    build_published(BuildOptions(source=source, out=out, jobs=1))
    assert "newer template" in (out / "runs/spec03-r3/index.html").read_text()
    assert (out / rel).read_bytes() == frozen and (source / rel).read_bytes() == frozen
    row = (out / "ledger.html").read_text().split('id="decision-spec03-r3"')[1].split("</tr>")[0]
    assert "artifacts changed since this decision" in row


def test_a_hand_made_archive_file_is_not_published(source: Path, tmp_path: Path) -> None:
    decided = decide(source, "spec03-r1", "promote", "baseline", by="ana")
    decided.archive.chmod(0o644)
    decided.archive.write_text("<!DOCTYPE html><html><script>alert(1)</script></html>")
    out = tmp_path / "site"
    result = build_published(BuildOptions(source=source, out=out, jobs=1))
    assert not (out / decided.archive.relative_to(source)).exists()
    assert any("not published" in d.message for d in result.diagnostics)
    row = (out / "ledger.html").read_text().split('id="decision-spec03-r1"')[1].split("</tr>")[0]
    assert "no frozen report" in row


def test_decide_command_line(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["decide", "spec03-r4", str(source), "--verdict", "branch", "--rationale", "budget is spent", "--by", "cy"]
    )
    assert code == 0 and "frozen report" in capsys.readouterr().out
    assert main(["decide", "no-such-run", str(source), "--verdict", "branch", "--rationale", "x"]) == 2
    with pytest.raises(SystemExit):
        main(["decide", "spec03-r4", str(source), "--verdict", "maybe", "--rationale", "x"])


def test_obs_check_reads_the_ledger(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (source / "decisions.jsonl").write_text('{"run": "spec03-r1", "verdict": "maybe"}\n')
    main(["check", str(source)])
    err = capsys.readouterr().err
    assert "decisions.jsonl:1: warning: 'verdict' must be one of" in err
