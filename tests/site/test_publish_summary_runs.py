"""obs summary: what a reviewer reads first, safe to post, never over GitHub's limit."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from obs.cli import main
from obs.publish.mdtext import COMMENT_LIMIT, WORD_JOINER, gh_length
from obs.publish.summary_md import summarize_campaign, summarize_run

REPORTS = Path(__file__).resolve().parents[2] / "reports"
EVIL = "x|<img src=x onerror=alert(1)>`@org/team #1 [a](javascript:alert(1))"


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def check_tables(md: str) -> int:
    """Every row of every table has as many cell separators as its header. Returns the rows seen."""
    rows = 0
    header = None
    for line in md.splitlines():
        if line.startswith("|"):
            if header is None:
                header = unescaped_pipes(line)
            assert unescaped_pipes(line) == header, line
            rows += 1
        else:
            header = None
    return rows


def check_no_markup_from_input(md: str) -> None:
    """Outside code spans (where nothing is markup) no tag can start that obs did not write, and the
    things GitHub links after rendering (@mentions, #refs) are broken by a word joiner."""
    prose = re.sub(r"(`+)(.+?)(?<!`)\1(?!`)", "", md)  # drop code spans
    prose = re.sub(r"</?sub>|\(<https?://[^>\s]+>\)", "", prose)  # obs's own tags and link
    assert not re.search(r"(?<!\\)<[A-Za-z/!?]", prose), "a tag that obs did not write"
    for token in ("<img", "[a]", "(javascript", "`@", "|<"):
        assert not re.search(r"(?<!\\)" + re.escape(token), prose), f"{token} from the input reached the comment"
    assert "\\<img" in prose  # it is there, as text
    assert not re.search(r"@[A-Za-z]|#[0-9]", prose.replace("\\", ""))


def write_run(folder: Path, run_id: str, cases: list[dict[str, object]], **fields: object) -> None:
    folder.mkdir(parents=True)
    meta = {"id": run_id, "status": "finished", **fields}
    (folder / "run.yaml").write_text(json.dumps(meta))  # JSON is YAML
    (folder / "probe.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    steps = [{"step": s, "loss": 3.0 / (1 + s), EVIL: s % 7} for s in range(0, 200, 10)]
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in steps))


def test_demo_run_summary_reads_right() -> None:
    md = summarize_run(REPORTS, "spec03-r2")
    assert md.startswith("## obs · `spec03-r2`")
    assert "**Δ −8.8 pp** ▼ vs `spec03-r1`" in md and "95% CI [−15.8, −2.2] pp" in md
    assert "n = 160 paired cases" in md and ": significant degradation" in md
    assert "| Recorded | **reject**" in md and "**reject** (agrees)" in md
    for title in ("Regressions", "Top failure classes", "Against the baseline", "Scoreboard", "Curves"):
        assert f"#### {title}" in md
    assert re.search(r"\| family pipeline\\_lane \| `exact` \| 75\.0% \| 18\.8% \|", md)
    assert "| layout\\_drift | 16 |" in md
    assert "(<https://example.github.io/obs-demo/runs/spec03-r2/index.html>)" in md
    assert re.search(r"\| `loss` \| `[▁▂▃▄▅▆▇█]{24}` \|", md)
    assert check_tables(md) > 20 and "Trimmed" not in md


def test_baseline_override_and_campaign() -> None:
    md = summarize_run(REPORTS, "spec03-r3", baseline="spec03-r2")
    assert "vs `spec03-r2`" in md
    camp = summarize_campaign(REPORTS, "sepa-campaign")
    assert "## obs · campaign `sepa-campaign`" in camp and "**CONFIRMED**" in camp and "**FAILED**" in camp
    assert "significant improvement · **CONFIRMED**" in camp  # the same outcome as the campaign page
    assert "campaigns/sepa-campaign/index.html" in camp
    assert check_tables(camp) >= 5


def test_a_hostile_run_cannot_inject_markup(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "obs.yaml").write_text("base_url: https://example.github.io/demo/\n")
    cases = [
        {
            "id": f"c{i}",
            "split": EVIL,
            "family": EVIL if i % 2 else "ok",
            EVIL: i % 3 == 0,
            "exact": i % 2 == 0,
            "failure_class": EVIL if i % 2 else None,
        }
        for i in range(40)
    ]
    write_run(src / "base", "base", cases)
    flipped = [dict(c, exact=not c["exact"]) for c in cases]
    write_run(
        src / "evil",
        "evil",
        flipped,
        baseline="base",
        title=EVIL,
        decision={"verdict": "reject", "rationale": EVIL, "next": EVIL, "by": EVIL},
    )
    md = summarize_run(src, "evil")
    assert check_tables(md) > 10
    check_no_markup_from_input(md)
    assert "@" + WORD_JOINER + "org" in md


def test_an_oversized_summary_is_trimmed_to_fit(tmp_path: Path) -> None:
    src = tmp_path / "src"
    checks = [f"check_{'x' * 30}_{i:02d}" for i in range(80)]

    def cases(flip: bool) -> list[dict[str, object]]:
        return [
            {
                "id": f"c{i}",
                "split": "test",
                "family": f"family_{i % 39:02d}_{'y' * 40}",
                "failure_class": f"class_{i % 30}_{'z' * 50}",
                **{c: (i + j + flip) % 3 == 0 for j, c in enumerate(checks)},
            }
            for i in range(156)
        ]

    write_run(src / "a", "a", cases(False))
    write_run(src / "b", "b", cases(True), baseline="a")
    md = summarize_run(src, "b")
    assert gh_length(md) <= COMMENT_LIMIT
    assert "Trimmed to fit GitHub's 65,536-character comment limit:** left out" in md
    kept = re.findall(r"^#### (.+)$", md, re.M)
    assert "Regressions" in kept and "Curves" not in kept  # least important goes first
    assert md.rstrip().endswith("</sub>") and "Full report: `runs/b/index.html`" in md
    check_tables(md)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "reports"
    shutil.copytree(REPORTS, src)
    assert main(["summary", "spec03-r3", str(src)]) == 0
    assert capsys.readouterr().out.startswith("## obs · `spec03-r3`")
    out = tmp_path / "comment.md"
    assert main(["summary", "spec03-r3", str(src), "--baseline", "spec03-r2", "-o", str(out)]) == 0
    assert "vs `spec03-r2`" in out.read_text()
    assert main(["summary", "--campaign", "sepa-campaign", str(src)]) == 0
    assert "campaign `sepa-campaign`" in capsys.readouterr().out
    assert main(["summary", "nope", str(src)]) == 2
    assert main(["summary", "--campaign", "nope", str(src)]) == 2
    assert main(["summary", "spec03-r3", str(src), "-o", str(src / "x.md")]) == 2  # never into the source tree
    assert not (src / "x.md").exists()


@pytest.mark.parametrize("run_id", ["spec03-r2", "spec03-r3", "spec03-r4", "grpo-rl-07"])
def test_the_pr_summary_and_obs_gate_list_the_same_regressions(run_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    """One regression rule: the PR comment's table and obs gate's rule items name the same scopes."""
    md = summarize_run(REPORTS, run_id)
    section = md.split("#### Regressions", 1)[1].split("####", 1)[0] if "#### Regressions" in md else ""
    in_md = re.findall(r"^\| ((?:family|split) \S+|all shared cases) \| `(\w+)` \|", section, re.M)
    main(["gate", run_id, str(REPORTS)])
    out = capsys.readouterr().out
    in_gate = re.findall(r"^\s{9}((?:family|split) \S+|all shared cases): (\w+) ", out, re.M)
    assert sorted((w.replace("\\", ""), c) for w, c in in_md) == sorted(in_gate)
    assert in_gate or run_id != "spec03-r2"  # the demo's rejected run has seven
