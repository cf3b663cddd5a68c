"""Properties of a build as a whole: deterministic bytes, a read-only source, atomic output, and
one bad run never taking the others down."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from obs.build import BuildOptions
from obs.cli import main
from obs.publish.extras import build_published
from obs.write import OutputError
from sitefiles import tree_digest


def tree_stat(root: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def test_two_builds_are_byte_identical(demo_source: Path, demo_site: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_published(BuildOptions(source=demo_source, out=again))
    first, second = tree_digest(demo_site), tree_digest(again)
    assert first.keys() == second.keys()
    different = [k for k in first if first[k] != second[k]]
    assert different == []


def test_the_source_tree_is_never_written(tmp_path: Path) -> None:
    source = tmp_path / "reports"
    shutil.copytree(Path(__file__).resolve().parents[2] / "reports", source)
    before = tree_stat(source)
    build_published(BuildOptions(source=source, out=tmp_path / "site"))
    assert tree_stat(source) == before


def test_output_inside_the_source_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    with pytest.raises(OutputError):
        build_published(BuildOptions(source=source, out=source / "site"))


def test_a_foreign_non_empty_output_folder_is_not_replaced(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    with pytest.raises(OutputError):
        build_published(BuildOptions(source=source, out=out))
    assert (out / "thesis.tex").read_text() == "years of work"


def test_a_crash_leaves_the_previous_site_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "src"
    (source / "r1").mkdir(parents=True)
    (source / "r1" / "run.yaml").write_text("id: r1\n")
    out = tmp_path / "site"
    build_published(BuildOptions(source=source, out=out))
    before = tree_digest(out)

    def boom(*args: object, **kwargs: object) -> dict[str, bytes]:
        raise KeyboardInterrupt

    monkeypatch.setattr("obs.render.index_pages.render_site_pages", boom)
    (source / "r2").mkdir()
    (source / "r2" / "run.yaml").write_text("id: r2\n")
    with pytest.raises(KeyboardInterrupt):
        build_published(BuildOptions(source=source, out=out))
    assert tree_digest(out) == before
    # no staging folder left: beside the output only the lock, the published version and its record
    version = os.readlink(out).split("/")[-1]
    assert sorted(os.listdir(tmp_path / ".site.obs")) == sorted(["lock", version, f"{version}.files"])
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.") and p.name != ".site.obs"] == []


def test_one_unreadable_run_does_not_stop_the_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "src"
    good, bad, worse = source / "good", source / "bad", source / "worse"
    for d in (good, bad, worse):
        d.mkdir(parents=True)
    (good / "run.yaml").write_text("id: good\nstatus: finished\n")
    (good / "metrics.jsonl").write_text('{"step": 0, "loss": 2.0}\n{"step": 1, "loss": 1.0}\n')
    (bad / "run.yaml").write_text("id: [unclosed\n")
    (worse / "run.yaml").write_text("id: worse\n")
    (worse / "probe.jsonl").write_bytes(b"\xff\xfe not json\n")
    out = tmp_path / "site"
    code = main(["build", str(source), "-o", str(out)])
    captured = capsys.readouterr()
    assert code == 1  # an error was reported
    assert "bad/run.yaml:1: error: invalid YAML" in captured.err
    assert "worse/probe.jsonl:1: warning:" in captured.err
    assert "obs build: 3 runs" in captured.out
    assert (out / "runs" / "good" / "index.html").is_file()
    assert (out / "runs" / "worse" / "index.html").is_file()


def test_strict_turns_warnings_into_failure(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "r").mkdir(parents=True)
    (source / "r" / "run.yaml").write_text("id: r\nstatus: sideways\n")
    assert main(["build", str(source), "-o", str(tmp_path / "a")]) == 0
    assert main(["build", str(source), "-o", str(tmp_path / "b"), "--strict"]) == 1


def test_check_validates_without_building(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "src"
    (source / "r").mkdir(parents=True)
    (source / "r" / "run.yaml").write_text("id: r\ndecision:\n  verdict: maybe\n")
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        code = main(["check", str(source)])
    finally:
        os.chdir(cwd)
    out = capsys.readouterr()
    assert code == 0
    assert "src/r/run.yaml:3: warning: 'decision.verdict' is 'maybe'" in out.err
    assert "src/r: native, 1 run" in out.out
    assert not (tmp_path / "site").exists()
