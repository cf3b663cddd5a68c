"""`obs ls`: every run's id, format, status and headline, one line each (or JSON); and a wrong run id
anywhere in the command line names the closest ids, or lists them, instead of "28 runs found"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faultkit import make_source

from obs.cli import main
from obs.numbers import num, pct
from obs.pipeline import SourceTree, load_report

REPO = Path(__file__).resolve().parents[2]
HF = REPO / "tests/data/corpus/trainer_state"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_ls_lists_every_run_with_the_headline_its_page_leads_with(capsys: pytest.CaptureFixture[str]) -> None:
    tree = SourceTree.open(HF)
    ids = [p.id for p in tree.plan.runs]
    code, out, err = run_cli(capsys, "ls", str(HF))
    assert code == 0 and err == ""
    header, *lines = out.splitlines()
    assert header.split() == ["ID", "FORMAT", "STATUS", "HEADLINE"]
    assert [line.split()[0] for line in lines] == ids
    for line, rid in zip(lines, ids, strict=True):
        report = load_report(tree, rid).report
        h = report.headline
        shown = f"{h.metric} {pct(h.value) if h.is_rate else num(h.value)}" if h.value is not None else "no headline"
        assert line.split()[1:3] == ["hf_trainer", report.run.status]
        assert line.endswith(shown), (line, shown)


def test_ls_json_holds_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    tree = SourceTree.open(HF)
    code, out, _ = run_cli(capsys, "ls", str(HF), "--json")
    rows = json.loads(out)
    assert code == 0 and [r["id"] for r in rows] == [p.id for p in tree.plan.runs]
    first = load_report(tree, rows[0]["id"]).report.headline
    assert rows[0]["headline"] == {"metric": first.metric, "value": first.value, "is_rate": first.is_rate}
    assert rows[0]["format"] == "hf_trainer" and rows[0]["folder"].startswith("trainer_state/")


def test_ls_of_an_empty_folder_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "ls", str(tmp_path))
    assert code == 0 and out.split() == ["ID", "FORMAT", "STATUS", "HEADLINE"]
    assert "no run found in this folder" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["gate", "{id}", "{src}"],
        ["summary", "{id}", "{src}"],
        ["summary", "r1", "{src}", "--baseline", "{id}"],
        ["decide", "{id}", "{src}", "--verdict", "reject", "--rationale", "x"],
        ["build", "{src}", "--single-file", "{id}", "-o", "{tmp}/one.html"],
    ],
)
def test_a_wrong_run_id_names_the_closest_or_lists_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    src = make_source(tmp_path / "src", 3)
    fill = {"src": str(src), "tmp": str(tmp_path)}
    code, _, err = run_cli(capsys, *(a.format(id="r11", **fill) for a in argv))
    assert code == 2 and "no run with id 'r11'" in err and "(did you mean r1" in err, err
    code, _, err = run_cli(capsys, *(a.format(id="zzz", **fill) for a in argv))
    assert code == 2 and "no run with id 'zzz'" in err and "(3 runs: r0, r1, r2)" in err, err


def test_a_long_list_of_ids_is_cut_and_points_to_obs_ls() -> None:
    from obs.pipeline import closest_ids

    ids = [f"sweep/lr-{i:02d}" for i in range(28)]
    assert closest_ids("lr-07", ids) == "did you mean sweep/lr-07?"  # contained in an id
    said = closest_ids("baseline", ids)
    assert said.startswith("28 runs: sweep/lr-00, sweep/lr-01,") and said.endswith("(+18 more; obs ls lists them)")
    assert closest_ids("x", []) == "there is no run in this folder"


def test_a_control_character_in_an_id_is_shown_as_its_escape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = make_source(tmp_path / "src", 1)
    yaml_file = src / "r0" / "run.yaml"
    yaml_file.write_text(yaml_file.read_text().replace("id: r0", 'id: "r0\\e[31mred"'), encoding="utf-8")
    code, out, _ = run_cli(capsys, "ls", str(src))
    assert code == 0 and "\x1b" not in out
    listed = json.loads(run_cli(capsys, "ls", str(src), "--json")[1])[0]["id"]
    assert out.splitlines()[1].split()[0] == listed and listed.startswith("r0") and "red" in listed
