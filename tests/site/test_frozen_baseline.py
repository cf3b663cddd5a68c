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
    rows = {  # a long id breaks at its separators on the page: "spec03- r3- s19"
        tr.find("td", attrs={"data-label": "Run"}).find("a").get_text("", strip=True).replace(" ", ""): tr
        for tr in table.find_all("tr")
        if tr.find("td", attrs={"data-label": "Run"})
    }

    def cell(run: str, label: str) -> str:
        return rows[run].find("td", attrs={"data-label": label}).get_text(" ", strip=True)

    assert cell("spec03-r1", "Δ vs frozen baseline") == "frozen baseline"
    r3 = cell("spec03-r3", "Δ vs frozen baseline")  # r3's parent is r1: its tested delta is this one
    # three looks at r1's probe: r2, r3's recipe (r3 and its seeds 18 and 19, one look judged over seeds against
    # r1's three seeds) and r4; r1's own seed replicates are its seeds, not rungs
    assert "the same as Δ vs its baseline" in r3 and "Holm over 3" in r3
    assert "judged as spec03-r3's recipe (3 v 3 seeds)" in r3 and "Welch" in r3
    s19 = cell("spec03-r3-s19", "Δ vs frozen baseline")
    assert "+13.8 pp" in s19 and "this seed; judged as spec03-r3's recipe (3 v 3 seeds)" in s19
    assert "a seed of the frozen baseline's recipe: not a rung" in cell("spec03-r1-s18", "Δ vs frozen baseline")
    # r4 (parent r3) is tested against r1 by its own build, on the 50 cases both hold (paired), and the
    # column's arrow is the Holm-adjusted one over the three looks
    r4 = cell("spec03-r4", "Δ vs frozen baseline")
    assert "+12.0 pp" in r4 and "n = 50 paired cases" in r4 and "Holm over 3: p = 0.033" in r4 and "▲" in r4
    claim = page.find(id="ladder-claim")
    assert claim is not None
    text = claim.get_text(" ", strip=True)
    # the best of them (r4, +12.0 pp): Holm's step-down finds it, its simultaneous interval reaches below zero
    # (Holm controls the family-wise error: the gain is shown, its size is not established)
    assert "spec03-r4" in text and "the best of 3" in text and "significant, size not established" in text
    assert "not significant" not in text
    assert "Holm's step-down finds it significant" in text and "its size is not established" in text
    assert "significant improvements after Holm: spec03-r3's recipe (3 v 3 seeds), spec03-r4" in text
    # r2 and r3 were decided against a baseline on the frozen probe; r1 was compared with nothing
    looks = page.find(id="looks")
    assert looks is not None and "2 recorded decisions" in looks.get_text(" ", strip=True)
    assert "look 1 of 2 on the frozen probe (0 before)" in cell("spec03-r2", "Verdict")
    assert "look 2 of 2 on the frozen probe (1 before)" in cell("spec03-r3", "Verdict")
    assert "look" not in cell("spec03-r1", "Verdict") and "look" not in cell("spec03-r4", "Verdict")


def test_the_pr_summary_and_gate_show_the_rung_against_the_frozen_baseline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = "vs the spec's frozen baseline spec03-r1: +12.0 pp"
    capsys.readouterr()
    assert main(["summary", "spec03-r4", str(REPORTS)]) == 0  # judged against its parent r3, tested against r1
    text = capsys.readouterr().out.replace("\\", "")
    assert line in text and "n = 50 paired cases" in text and "not adjusted for the ladder's other rungs" in text
    main(["gate", "spec03-r4", str(REPORTS)])
    gate = capsys.readouterr().out
    assert line in gate
    assert main(["summary", "spec03-r4", str(REPORTS), "--baseline", "spec03-r1"]) == 0
    assert line not in capsys.readouterr().out.replace("\\", "")  # the frozen baseline is the baseline now
    assert main(["summary", "spec03-r3", str(REPORTS)]) == 0  # its parent is the frozen baseline
    assert line.split(":")[0] not in capsys.readouterr().out.replace("\\", "")


def test_the_run_page_tests_the_rung_against_the_frozen_baseline_as_obs_gate_baseline_does(demo_site: Path) -> None:
    """One computation: the rung page's comparison with the frozen baseline is the one `obs gate RUN --baseline
    FROZEN` (and `obs summary --baseline`) makes, numbers and verdict alike."""
    import json

    from bs4 import BeautifulSoup

    from obs.pipeline import SourceTree, load_report

    tree = SourceTree.open(REPORTS)
    own = load_report(tree, "spec03-r4").report
    against = load_report(SourceTree.open(REPORTS), "spec03-r4", "spec03-r1").report
    assert own.frozen is not None and own.frozen.delta is not None and against.delta is not None
    assert own.frozen.baseline_id == "spec03-r1" and own.delta is not None and own.delta.baseline_id == "spec03-r3"
    for key in ("delta", "p_value", "n", "verdict", "baseline_value"):
        assert getattr(own.frozen.delta, key) == getattr(against.delta, key), key
    assert own.frozen.delta.interval == against.delta.interval
    published = json.loads((demo_site / "runs" / "spec03-r4" / "analysis.json").read_text(encoding="utf-8"))
    assert published["vs_frozen_baseline"]["delta"]["p_value"] == against.delta.p_value
    page = BeautifulSoup((demo_site / "runs" / "spec03-r4" / "index.html").read_text(encoding="utf-8"), "html.parser")
    section = page.find(id="vs-frozen")
    assert section is not None and "spec03-r1" in section.get_text()
    line = page.find(id="vs-frozen-delta")
    assert line is not None
    text = line.get_text(" ", strip=True)
    assert "+12.0 pp" in text and "n = 50 paired cases" in text and "significant improvement" in text
    note = page.find(id="frozen-baseline-note")
    assert note is not None and "+12.0 pp (p = 0.031, unadjusted)" in note.get_text(" ", strip=True)
    # r3's parent is the frozen baseline: no second comparison, the page says the first one is it
    r3 = BeautifulSoup((demo_site / "runs" / "spec03-r3" / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert r3.find(id="vs-frozen-delta") is None
    said = r3.find(id="vs-frozen")
    assert said is not None and "is the spec's frozen baseline" in said.get_text()


def test_the_spec_page_shows_the_history_across_rungs(demo_site: Path) -> None:
    """The family x rung table of the demo's hand-written notes (spec03/r3/notes.md), made from the rungs' probes,
    and the chart's data beside the page."""
    from bs4 import BeautifulSoup

    page = BeautifulSoup((demo_site / "specs" / "spec03.html").read_text(encoding="utf-8"), "html.parser")
    table = page.find(id="history-table")
    assert table is not None
    heads = [th.get_text(" ", strip=True) for th in table.find("thead").find_all("th")]
    # a column a rung; seed replicates of one revision are told apart by their seed, never "r1" three times
    assert heads == [
        "exact",
        *(f"r1 · seed {k}" for k in (17, 18, 19)),
        "r2",
        *(f"r3 · seed {k}" for k in (17, 18, 19)),
        "r4",
        "r5 another probe",
    ]
    rows = {tr.find("th").get_text(strip=True): tr for tr in table.find("tbody").find_all("tr")}
    # the notes' table (r1, r2, r3, each seed 17): pipeline_lane 24/32, 6/32, 11/32; table_grid 21/32, 21/32, 30/32
    notes = [heads.index(h) - 1 for h in ("r1 · seed 17", "r2", "r3 · seed 17")]
    lane = [td.get_text(" ", strip=True).split()[0] for td in rows["pipeline_lane"].find_all("td")]
    grid = [td.get_text(" ", strip=True).split()[0] for td in rows["table_grid"].find_all("td")]
    assert [lane[i] for i in notes] == ["24/32", "6/32", "11/32"] and [grid[i] for i in notes] == [
        "21/32",
        "21/32",
        "30/32",
    ]
    data = (demo_site / "specs" / "spec03.history.js").read_text(encoding="utf-8")
    assert '"obs.conditions/1"' in data and '"pipeline_lane"' in data
    assert page.find(id="chart-conditions") is not None


def test_obs_gate_judges_the_composite_gate_and_never_across_two_measurements(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The demo's composite gate (obs.yaml `ladder`): passes on r4 (its interval against the frozen baseline
    is above 0), and reads n/a on the probe-change rung r5, whose probe-v4 numbers are not compared with r1's."""
    capsys.readouterr()
    main(["gate", "spec03-r4", str(REPORTS)])
    r4 = capsys.readouterr().out
    assert "gates (obs.yaml):" in r4
    assert "[pass] compiler clean and beats the frozen baseline" in r4
    assert main(["gate", "spec03-r5", str(REPORTS)]) == 1
    r5 = capsys.readouterr().out
    assert "not one measurement" in r5.splitlines()[0] and "suggested nothing" in r5.splitlines()[0]
    assert "[n/a] compiler clean and beats the frozen baseline" in r5
    assert "frozen baseline spec03-r1: not one measurement (probe: probe-v4" in r5
    assert main(["summary", "spec03-r4", str(REPORTS)]) == 0  # the PR summary shows the same results
    md = capsys.readouterr().out.replace("\\", "")
    assert "#### Gates (obs.yaml)" in md
    assert "| compiler clean and beats the frozen baseline | ✅ pass |" in md
