"""Mistakes a new user makes on the command line get one message that says what to do, the
documented exit status (2: usage), and nothing written that was not asked for."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from faultkit import make_source

from obs.cli import main


@pytest.fixture
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    """Run in an empty folder: no reports/ to fall back on."""
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def outcome(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_missing_source_exits_2_and_writes_nothing(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert outcome(capsys, "build", "nope", "-o", "site") == (2, "", "obs build: nope: source folder does not exist\n")
    assert sorted(os.listdir(in_tmp)) == []  # no site, no lock, no cache: no summary line naming them


def test_a_file_given_as_the_source_says_so(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (in_tmp / "runs.jsonl").write_text("{}\n")
    for command in (["build", "runs.jsonl"], ["check", "runs.jsonl"], ["serve", "runs.jsonl"]):
        code, _out, err = outcome(capsys, *command)
        assert code == 2
        assert err == f"obs {command[0]}: runs.jsonl is a file, not a folder: give the folder that holds the runs\n"


def test_two_folders_for_build_suggest_dash_o(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_source(in_tmp / "runs", 1)
    code, _out, err = outcome(capsys, "build", "runs", "public")
    assert code == 2
    assert err == "obs build: two folders given; the output folder goes after -o: obs build runs -o public\n"
    assert not (in_tmp / "public").exists()


@pytest.mark.parametrize(
    "argv",
    [["summary", "runs"], ["gate", "runs"], ["decide", "runs", "--verdict", "reject", "--rationale", "x"]],
)
def test_a_folder_without_a_run_id_says_the_run_id_is_missing(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    make_source(in_tmp / "runs", 1)
    code, _out, err = outcome(capsys, *argv)
    assert code == 2
    assert err == f"obs {argv[0]}: a run id is missing (runs is a folder): obs {argv[0]} RUN runs\n"
    assert not (in_tmp / "runs" / "decisions.jsonl").exists()


def test_the_default_source_as_a_run_id_gets_a_hint(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_source(in_tmp / "reports", 1)
    code, _out, err = outcome(capsys, "gate", "reports")
    assert code == 2
    assert err.startswith("obs gate: no run with id 'reports'")
    assert err.endswith("(reports is a folder; did you mean it as the source, after a run id?)\n")


def test_summary_into_an_existing_folder(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = make_source(in_tmp / "runs", 2)
    (in_tmp / "out").mkdir()
    code, _out, err = outcome(capsys, "summary", "r1", str(source), "-o", "out")
    assert code == 2
    assert err == "obs summary: out is a folder; -o takes a file name (for example -o out/summary.md)\n"
    assert os.listdir(in_tmp / "out") == []


def test_an_output_inside_the_source_is_refused_before_anything_is_made(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_source(in_tmp / "runs", 1)
    before = sorted(p.name for p in source.iterdir())
    for command in ("build", "serve"):
        code, _out, err = outcome(capsys, command, "runs", "-o", "runs/site", *(["--port", "0"] * (command == "serve")))
        assert code == 2 and "must be outside the source tree" in err
    assert sorted(p.name for p in source.iterdir()) == before


def test_a_foreign_folder_is_named_with_what_it_holds(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_source(in_tmp / "runs", 1)
    (in_tmp / "docs").mkdir()
    (in_tmp / "docs" / "thesis.tex").write_text("years of work")
    code, _out, err = outcome(capsys, "build", "runs", "-o", "docs")
    assert code == 2
    assert "docs is not empty and was not made by obs (it holds thesis.tex)" in err
    assert "runs/static/" in err
    assert sorted(os.listdir(in_tmp)) == ["docs", "runs"]
