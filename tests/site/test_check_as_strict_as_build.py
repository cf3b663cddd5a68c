"""`obs check` finds what `obs build` finds, and `obs summary` and `obs gate` say it too: one validation
(obs.pipeline.analyse) behind every command. A named headline metric the run does not have is an
error on its line with the names there are; a key one typo away from a field is a warning naming it
(not a note -q hides); an empty or wrong source folder is a warning, and an error with --strict."""

from __future__ import annotations

from pathlib import Path

import pytest
from faultkit import make_source

from obs.cli import main

NAMES = "it has: exact, loss"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def typo(tmp_path: Path) -> Path:
    """r1's run.yaml names `primary_metric: exactt` on line 5 and writes `baselin:` for `baseline:`."""
    source = make_source(tmp_path / "src", 2)
    yaml = source / "r1" / "run.yaml"
    lines = yaml.read_text(encoding="utf-8").splitlines()
    lines = [line for line in lines if not line.startswith("baseline:")]
    lines += ["primary_metric: exactt", "baselin: r0", "wandb_url: https://example.org/run"]
    yaml.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return source


def metric_error(source: Path) -> str:
    return f"src/r1/run.yaml:5: error: run r1: primary_metric 'exactt' (run.yaml) is not a metric of this run; {NAMES}"


def test_check_reports_the_unknown_metric_as_build_does(
    typo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", str(typo))
    assert code == 1 and metric_error(typo) in err.splitlines()
    assert out.splitlines()[-1] == "obs check: 2 runs, 0 specs, 0 campaigns: 1 error, 1 warning"
    code, _, err = run_cli(capsys, "build", str(typo), "-o", str(tmp_path / "site"), "-q")
    assert code == 1 and metric_error(typo) in err.splitlines()


def test_summary_and_gate_say_it_and_fail(typo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "summary", "r1", str(typo))
    assert code == 1 and metric_error(typo) in err.splitlines()
    assert "**Headline: none**: primary\\_metric" in out  # the comment says why, not "no value to show"
    code, _, err = run_cli(capsys, "gate", "r1", str(typo))
    assert code == 1 and metric_error(typo) in err.splitlines()


def test_a_typo_of_a_field_is_a_warning_that_names_the_field_even_with_q(
    typo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["check", str(typo)], ["check", str(typo), "-q"]):
        _, _, err = run_cli(capsys, *argv)
        assert (
            "src/r1/run.yaml:6: warning: unknown field 'baselin' (not in contract v1); shown under other fields; "
            "did you mean 'baseline'?"
        ) in err.splitlines()
    # a key unlike any field is still only noted
    _, _, err = run_cli(capsys, "check", str(typo))
    assert "src/r1/run.yaml:7: info: unknown field 'wandb_url' (not in contract v1); shown under other fields" in err
    assert run_cli(capsys, "check", str(typo), "--strict")[0] == 1


def test_an_empty_source_is_a_warning_and_with_strict_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "runs"
    (empty / "notes").mkdir(parents=True)
    for command in (["check", str(empty)], ["build", str(empty), "-o", str(tmp_path / "site")]):
        code, _, err = run_cli(capsys, *command)
        assert code == 0, err
        assert "runs: warning: no run found in this folder" in err
        code, out, err = run_cli(capsys, *command, "--strict")
        assert code == 1
        assert "runs: error: no run found in this folder" in err
        assert "1 error, 0 warnings" in out


def test_a_spec_naming_a_missing_metric_points_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = make_source(tmp_path / "src" / "ladder", 1)
    (source / "spec.yaml").write_text("id: ladder\ntitle: L\nprimary_metric: acc\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(tmp_path / "src"))
    assert code == 1
    assert (
        "src/ladder/spec.yaml:3: error: run r0: primary_metric 'acc' (spec ladder) is not a metric of this run; "
        f"{NAMES}"
    ) in err.splitlines()
