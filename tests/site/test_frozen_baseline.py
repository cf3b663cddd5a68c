"""The frozen baseline (issue 27): `obs gate RUN --baseline OTHER` and `obs summary RUN --baseline OTHER`
judge against the same run and say the same thing; the spec page shows each rung against its parent
and against the spec's frozen baseline, and counts the looks taken at the frozen probe."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from obs.cli import main

REPORTS = Path(__file__).resolve().parents[2] / "reports"
SUGGESTED = re.compile(r"Suggested by the promotion rules \| (?:\*\*(\w+)\*\*|cannot judge)")
DELTA = re.compile(r"\*\*Δ ([^*]+)\*\*")


@pytest.mark.parametrize("run", ["spec03-r3", "spec03-r4"])
@pytest.mark.parametrize("baseline", [None, "spec03-r1", "spec03-r2"])
def test_gate_and_summary_agree_on_any_baseline(
    run: str, baseline: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--baseline", baseline] if baseline else []
    capsys.readouterr()
    code = main(["gate", run, str(REPORTS), *extra])
    gate = capsys.readouterr().out
    assert main(["summary", run, str(REPORTS), *extra]) == 0
    summary = capsys.readouterr().out.replace("\\", "")
    first = gate.splitlines()[0]
    suggested = re.search(r"suggested (\w+)", first)
    assert suggested is not None
    gate_verdict = None if suggested.group(1) == "nothing" else suggested.group(1)
    m = SUGGESTED.search(summary)
    assert m is not None, summary
    assert gate_verdict == m.group(1)
    assert code == (0 if gate_verdict == "promote" else 1)
    against = baseline or {"spec03-r3": "spec03-r1", "spec03-r4": "spec03-r3"}[run]
    assert f"vs baseline {against}" in first
    assert f"vs `{against}`" in summary


def test_gate_refuses_an_unknown_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "spec03-r3", str(REPORTS), "--baseline", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("frozen") / "site"
    assert main(["build", str(REPORTS), "-o", str(out), "-q", "-j", "1"]) == 0
    return out


def test_the_ladder_shows_the_frozen_baseline_and_the_looks(demo_site: Path) -> None:
    from bs4 import BeautifulSoup

    page = BeautifulSoup((demo_site / "specs" / "spec03.html").read_text(encoding="utf-8"), "html.parser")
    table = page.find(id="ladder-table")
    assert table is not None
    heads = [th.get_text(strip=True) for th in table.find_all("th")]
    assert "Δ vs its baseline" in heads and "Δ vs frozen baseline" in heads
    rows = {
        tr.find("td", attrs={"data-label": "Run"}).get_text(" ", strip=True).split()[0]: tr
        for tr in table.find_all("tr")
        if tr.find("td", attrs={"data-label": "Run"})
    }

    def cell(run: str, label: str) -> str:
        return rows[run].find("td", attrs={"data-label": label}).get_text(" ", strip=True)

    assert cell("spec03-r1", "Δ vs frozen baseline") == "frozen baseline"
    assert "the same as Δ vs its baseline (tested)" in cell("spec03-r3", "Δ vs frozen baseline")  # r3's parent is r1
    # r4 (parent r3) holds 50 dev-split cases against r1's 160: no described difference of two case sets
    assert "50 and 160 cases" in cell("spec03-r4", "Δ vs frozen baseline")
    # r2 and r3 were decided against a baseline on the frozen probe; r1 was compared with nothing
    looks = page.find(id="looks")
    assert looks is not None and "2 recorded decisions" in looks.get_text(" ", strip=True)
    assert "look 1 of 2 on the frozen probe (0 before)" in cell("spec03-r2", "Verdict")
    assert "look 2 of 2 on the frozen probe (1 before)" in cell("spec03-r3", "Verdict")
    assert "look" not in cell("spec03-r1", "Verdict") and "look" not in cell("spec03-r4", "Verdict")


def test_the_pr_summary_names_the_frozen_baseline_when_judged_against_another(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = "The spec's frozen baseline is `spec03-r1`"
    capsys.readouterr()
    assert main(["summary", "spec03-r4", str(REPORTS)]) == 0  # judged against its parent r3
    text = capsys.readouterr().out
    assert line in text and "`obs summary spec03-r4 --baseline spec03-r1`" in text
    assert main(["summary", "spec03-r4", str(REPORTS), "--baseline", "spec03-r1"]) == 0
    assert line not in capsys.readouterr().out
    assert main(["summary", "spec03-r3", str(REPORTS)]) == 0  # its parent is the frozen baseline
    assert line not in capsys.readouterr().out
