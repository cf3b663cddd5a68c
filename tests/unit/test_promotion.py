"""Promotion rules: one synthetic run per outcome (promote, repair twice over, reject three ways,
branch, cannot judge), built through the same paired comparison the pages use, and `obs gate` exit
codes on a small source tree. A slice regresses only with evidence (a one-sided score test against the
tolerance, Holm over the cells), and a cell too small to show one says so instead of failing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from obs.analysis.compare import Headline, compare_probes, headline_delta
from obs.analysis.digest import CaseOutcome, RunDigest, WindowStat
from obs.analysis.held_constant import HeldConstant, compare_held_constant, run_fields
from obs.analysis.promotion import PromotionInput, Suggestion, suggest_verdict
from obs.cli import main
from obs.config import SiteConfig
from obs.model import Gate, GateCheck, Run

CFG = SiteConfig()
FAMILIES = ("cards", "lane", "poster", "table")
N = 40  # cases per family


Probe = dict[str, CaseOutcome]


def probe(passes: dict[str, int], n: int = N) -> Probe:
    """Family -> number of passing cases; cases 0..k-1 of each family pass (so runs pair by index)."""
    out: Probe = {}
    for fam in FAMILIES:
        for i in range(n):
            split = "dev" if i % 2 else "test"
            out[f"{fam}-{i:03d}"] = CaseOutcome({"exact": i < passes.get(fam, 0)}, split, fam)
    return out


BASE = probe(dict.fromkeys(FAMILIES, 24))  # 60% everywhere


def judge(
    here: Probe,
    base: Probe | None = BASE,
    *,
    repaired: Probe | None = None,
    held: HeldConstant | None = None,
    status: str = "finished",
    compiler: Gate | None = None,
) -> Suggestion:
    neg = CFG.is_negative_check
    comparison = compare_probes(here, base, "base", neg) if base is not None else None
    rate = sum(o.checks["exact"] for o in here.values()) / len(here)
    headline = Headline("exact", rate, "probe", "exact rate", n=len(here))
    delta = (
        headline_delta(headline, RunDigest("run", probe=here), RunDigest("base", probe=base), neg, 0.05, comparison)
        if base is not None
        else None
    )
    rc = compare_probes(repaired, here, "raw probe", neg) if repaired is not None else None
    return suggest_verdict(
        PromotionInput(
            delta=delta,
            comparison=comparison,
            headline_metric="exact",
            threshold=CFG.threshold,
            status=status,
            repair_comparison=rc,
            held=held,
            headline_is_rate=True,
            compiler_gate=compiler,
        )
    )


def check(s: Suggestion, rule_start: str) -> Any:
    return next(c for c in s.checks if c.rule.startswith(rule_start))


def test_promote_when_the_headline_improves_and_nothing_regresses() -> None:
    s = judge(probe(dict.fromkeys(FAMILIES, 32)))
    assert s.verdict == "promote"
    assert check(s, "headline improves").passed is True
    assert check(s, "no split or family").passed is True
    assert check(s, "headline improves").detail.startswith("exact: +20.0 pp, 95% CI [")


def test_repair_when_the_headline_improves_but_a_family_regresses() -> None:
    s = judge(probe({"cards": 36, "lane": 36, "poster": 36, "table": 10}))
    assert s.verdict == "repair"
    regs = check(s, "no split or family")
    assert regs.passed is False
    assert len(regs.items) == 1
    assert regs.items[0].startswith("family table: exact 60.0% → 25.0% (−35.0 pp, 95% CI [")
    assert "n = 40 paired cases; 14 broken / 0 fixed): worse by more than 2.0 pp" in regs.items[0]
    (reg,) = s.regressions
    assert reg.p_adjusted < 0.05 and reg.m == 6  # 2 splits + 4 families on the one check


def test_a_small_loss_without_evidence_does_not_block() -> None:
    # 3 of 40 cases lost in one family (-7.5 pp): noise at this size, not evidence of a regression
    s = judge(probe({"cards": 36, "lane": 36, "poster": 36, "table": 21}))
    assert s.verdict == "promote"
    assert check(s, "no split or family").passed is True


def test_regression_within_tolerance_does_not_block() -> None:
    # one lost case in a family of 60 is 1.7 pp, inside the 2 pp tolerance
    base = probe(dict.fromkeys(FAMILIES, 36), n=60)
    here = probe({"cards": 50, "lane": 50, "poster": 50, "table": 35}, n=60)
    assert judge(here, base).verdict == "promote"


def test_reject_when_the_headline_gets_worse() -> None:
    s = judge(probe(dict.fromkeys(FAMILIES, 16)))
    assert s.verdict == "reject"
    assert s.reasons[0] == "exact got significantly worse (95% CI below zero)"


def test_reject_when_more_than_one_axis_changed_even_if_better() -> None:
    base_run = Run(id="base", source_dir=Path("."), config={"train": {"lr": 3e-4}}, data={"rows": 100})
    run = Run(id="run", source_dir=Path("."), primary_axis="data", config={"train": {"lr": 6e-4}}, data={"rows": 200})
    held = compare_held_constant(run, "base", run_fields(base_run), CFG.axes)
    s = judge(probe(dict.fromkeys(FAMILIES, 32)), held=held)
    assert s.verdict == "reject"
    assert check(s, "headline improves").passed is True
    assert check(s, "one axis changed").passed is False
    assert "config.train.lr" in s.reasons[0] and "cannot be read as an experiment on data" in s.reasons[0]


def test_repair_when_the_target_family_is_fixed_but_others_regress() -> None:
    # cards +25 pp, lane -25 pp: the overall change is zero, so the CI includes zero
    s = judge(probe({"cards": 34, "lane": 14, "poster": 24, "table": 24}))
    assert s.verdict == "repair"
    assert "the run fixed cards +25.0 pp but other slices regressed" in s.reasons[1]


def test_repair_when_the_misses_are_mostly_repairable() -> None:
    here = probe(dict.fromkeys(FAMILIES, 24))  # no change vs the baseline
    repaired = probe(dict.fromkeys(FAMILIES, 36))  # fixes 12 of 16 misses per family: 75%
    s = judge(here, repaired=repaired)
    assert s.verdict == "repair"
    assert check(s, "raw misses mostly repairable").detail == "the repair pass fixes 48 of 64 raw misses (75%)"
    assert check(s, "raw misses mostly repairable").gate is False


def test_few_repairable_misses_do_not_make_a_repair() -> None:
    here = probe(dict.fromkeys(FAMILIES, 24))
    repaired = probe(dict.fromkeys(FAMILIES, 26))  # 8 of 64 misses
    assert judge(here, repaired=repaired).verdict == "branch"


def test_reject_when_nothing_improved_and_a_slice_regressed() -> None:
    s = judge(probe({"cards": 28, "lane": 12, "poster": 28, "table": 27}))
    assert s.verdict == "reject"
    assert s.reasons == ["exact: the 95% CI of the change includes zero", "and 1 regression beyond tolerance"]


def test_branch_when_nothing_changed() -> None:
    s = judge(probe(dict.fromkeys(FAMILIES, 24)))
    assert s.verdict == "branch"
    assert all(c.passed is not False for c in s.checks if not c.rule.startswith("headline"))


def test_a_cell_too_small_to_judge_says_so_instead_of_failing() -> None:
    # a 3-case family: even losing all three cases could not be evidence of a regression
    base = {**BASE, **{f"tiny-{i}": CaseOutcome({"exact": True}, "dev", "tiny") for i in range(3)}}
    here = {
        **probe(dict.fromkeys(FAMILIES, 32)),
        **{f"tiny-{i}": CaseOutcome({"exact": False}, "dev", "tiny") for i in range(3)},
    }
    s = judge(here, base)
    assert s.verdict == "promote"
    small = check(s, "cells too small to judge")
    assert small.passed is None and small.gate is False
    assert small.items == (
        "family tiny: exact, 3 paired cases: too small to judge (even losing all 3 cases it got right in the "
        "baseline would give p = 0.045, short of the Holm level)",
    )


def test_significant_but_below_the_minimum_effect_is_not_promoted() -> None:
    neg = CFG.is_negative_check
    here = probe(dict.fromkeys(FAMILIES, 27))  # +7.5 pp on every family: significant over 160 cases
    comparison = compare_probes(here, BASE, "base", neg, min_effect=0.15, primary="exact")
    headline = Headline("exact", 0.675, "probe", "exact rate")
    delta = headline_delta(
        headline, RunDigest("run", probe=here), RunDigest("base", probe=BASE), neg, 0.05, comparison, 0.15
    )
    assert delta is not None and delta.verdict == "significant_below_min_effect"
    assert delta.interval is not None and delta.interval.high < 0.15  # the whole CI is below the minimum effect
    s = suggest_verdict(
        PromotionInput(delta, comparison, "exact", CFG.threshold, headline_is_rate=True, min_effect=0.15)
    )
    assert s.verdict == "branch"
    assert s.reasons[0] == (
        "exact changed significantly, but by less than the minimum effect of interest (the whole 95% CI)"
    )
    assert "by at least the minimum effect (15.0 pp)" in check(s, "headline improves").rule


def test_a_gain_whose_interval_straddles_the_minimum_effect_is_not_promoted() -> None:
    """+7.5 pp, 95% CI [+3.5, +11.5] pp with min_effect 10 pp: significant, but the interval does not show
    a 10 pp gain (before: promoted as "at least the minimum effect" on the point estimate's word)."""
    neg = CFG.is_negative_check
    here = probe(dict.fromkeys(FAMILIES, 27))
    comparison = compare_probes(here, BASE, "base", neg, min_effect=0.1, primary="exact")
    headline = Headline("exact", 0.675, "probe", "exact rate")
    delta = headline_delta(
        headline, RunDigest("run", probe=here), RunDigest("base", probe=BASE), neg, 0.05, comparison, 0.1
    )
    assert delta is not None and delta.interval is not None
    assert delta.interval.low < 0.1 < delta.interval.high
    assert delta.verdict == "significant_size_not_established"
    s = suggest_verdict(
        PromotionInput(delta, comparison, "exact", CFG.threshold, headline_is_rate=True, min_effect=0.1)
    )
    assert s.verdict is None and "size of the gain is not established" in s.reasons[0]
    assert "significant, size not established" in check(s, "headline improves").detail


def test_one_run_each_is_never_judged() -> None:
    here = RunDigest("run", finals={"reward": WindowStat(0.4, 0.01, 10, 300.0, 300)})
    base = RunDigest("base", finals={"reward": WindowStat(0.6, 0.01, 10, 300.0, 300)})
    delta = headline_delta(Headline("reward", 0.4, "series", "reward"), here, base, CFG.is_negative_check, 0.05)
    s = suggest_verdict(
        PromotionInput(delta, None, "reward", CFG.threshold, seed_level_hint="the seed-level comparison is elsewhere")
    )
    assert s.verdict is None and s.checks == []
    assert "do not judge one run against one run" in s.reasons[0]
    assert s.reasons[1] == "the seed-level comparison is elsewhere"


def test_cannot_judge_a_running_run_or_one_without_baseline() -> None:
    assert judge(probe(dict.fromkeys(FAMILIES, 32)), status="running").verdict is None
    s = judge(probe(dict.fromkeys(FAMILIES, 32)), base=None)
    assert s.verdict is None and s.reasons[0].startswith("no baseline to compare with")


def test_regression_tolerance_comes_from_obs_yaml() -> None:
    here = probe({"cards": 36, "lane": 36, "poster": 36, "table": 21})
    loose = SiteConfig(thresholds={"regression_tolerance": 0.1})
    neg = CFG.is_negative_check
    comparison = compare_probes(here, BASE, "base", neg)
    headline = Headline("exact", 0.8, "probe", "exact rate")
    delta = headline_delta(headline, RunDigest("run", probe=here), RunDigest("base", probe=BASE), neg, 0.05, comparison)
    s = suggest_verdict(PromotionInput(delta, comparison, "exact", loose.threshold, headline_is_rate=True))
    assert s.verdict == "promote"


def test_demo_ladder_suggestions_match_the_recorded_decisions(demo_site: Path) -> None:
    got = {}
    for run in ("spec03-r1", "spec03-r2", "spec03-r3", "spec03-r4"):
        decision = json.loads((demo_site / f"runs/{run}/analysis.json").read_text())["decision"]
        got[run] = (decision["suggested"]["verdict"], decision["disagree"])
    assert got == {
        "spec03-r1": (None, False),  # no baseline
        "spec03-r2": ("reject", False),  # two axes moved, exact down, pipeline_lane collapsed
        "spec03-r3": ("repair", False),  # exact up significantly, pipeline_lane down 13 of 32 cases
        "spec03-r4": (None, False),  # still running
    }


# --------------------------------------------------------------------------- obs gate


def write_run(root: Path, run_id: str, passes: dict[str, int], **fields: Any) -> None:
    folder = root / run_id
    folder.mkdir(parents=True)
    (folder / "run.yaml").write_text(yaml.safe_dump({"id": run_id, "status": "finished", **fields}))
    lines = [
        json.dumps({"id": k, "split": o.split, "family": o.family, "exact": o.checks["exact"]})
        for k, o in probe(passes).items()
    ]
    (folder / "probe.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture
def gate_tree(tmp_path: Path) -> Path:
    src = tmp_path / "reports"
    write_run(src, "base", dict.fromkeys(FAMILIES, 24))
    write_run(src, "good", dict.fromkeys(FAMILIES, 32), baseline="base", decision={"verdict": "reject"})
    write_run(src, "worse", dict.fromkeys(FAMILIES, 16), baseline="base")
    write_run(src, "flat", dict.fromkeys(FAMILIES, 24), baseline="base")
    return src


def test_gate_exits_0_for_promote_and_says_why(gate_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "good", str(gate_tree)]) == 0
    out = capsys.readouterr().out
    assert "suggested promote; recorded reject (they disagree)" in out
    assert "[pass] headline improves (p < 0.05, 95% CI above zero): exact: +20.0 pp, 95% CI [" in out
    assert "n = 160 (probe cases, paired by id): significant improvement" in out


@pytest.mark.parametrize(("run", "verdict"), [("worse", "reject"), ("flat", "branch")])
def test_gate_exits_1_otherwise(gate_tree: Path, capsys: pytest.CaptureFixture[str], run: str, verdict: str) -> None:
    assert main(["gate", run, str(gate_tree)]) == 1
    assert f"suggested {verdict}" in capsys.readouterr().out


def test_gate_exits_1_without_a_baseline(gate_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "base", str(gate_tree)]) == 1
    assert "cannot judge" in capsys.readouterr().out


def test_gate_exits_2_for_an_unknown_run(gate_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "god", str(gate_tree)]) == 2
    assert "did you mean good" in capsys.readouterr().err


def test_gate_exits_2_for_a_missing_source(tmp_path: Path) -> None:
    assert main(["gate", "good", str(tmp_path / "nowhere")]) == 2


# --------------------------------------------------------------------------- the compiler gate (gate.json)


def test_a_failed_compiler_gate_blocks_promotion() -> None:
    """Seed 003: compiler fidelity is a gate, not a note. A significant gain measured through a compiler that
    fails its own gold-asset gate is not promoted (repair: a compiler pass, then measure again)."""
    better = probe(dict.fromkeys(FAMILIES, 32))
    failed = Gate(False, 0.82, 0.9, [GateCheck("round_trip", True), GateCheck("parity", False)])
    s = judge(better, compiler=failed)
    assert s.verdict == "repair"
    rule = check(s, "compiler gate passes (gate.json)")
    assert rule.passed is False and rule.gate
    assert rule.detail == (
        "gate.json failed: gold-asset parity 82.0% (threshold 90.0%); 1 of 2 checks passed (failed: parity)"
    )
    assert any("the compiler gate failed (gate.json)" in r for r in s.reasons)
    assert check(s, "headline improves").passed is True  # the gain itself is still shown as such
    # the same run with a passing gate is promoted, and the rule says so
    passed = judge(better, compiler=Gate(True, 0.96, 0.9))
    assert passed.verdict == "promote"
    assert check(passed, "compiler gate passes").passed is True
    assert check(passed, "compiler gate passes").detail == "gate.json passed: gold-asset parity 96.0% (threshold 90.0%)"
    # no gate.json: no such rule; a gate.json without an overall result: shown, not judged, not blocking
    assert not [c for c in judge(better).checks if c.rule.startswith("compiler gate")]
    unknown = judge(better, compiler=Gate(None))
    assert unknown.verdict == "promote" and check(unknown, "compiler gate passes").passed is None


def test_a_failed_compiler_gate_is_said_beside_any_verdict() -> None:
    worse = judge(probe(dict.fromkeys(FAMILIES, 16)), compiler=Gate(False))
    assert worse.verdict == "reject"
    assert worse.reasons[-1].startswith("the compiler gate failed (gate.json)")


def test_page_summary_and_gate_agree_on_a_failed_compiler_gate(
    gate_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bs4 import BeautifulSoup

    from obs.publish.summary_md import summarize_run

    (gate_tree / "good" / "gate.json").write_text(json.dumps({"passed": False, "parity_score": 0.8, "threshold": 0.9}))
    assert main(["gate", "good", str(gate_tree)]) == 1
    out = capsys.readouterr().out
    assert "suggested repair" in out
    assert "[FAIL] compiler gate passes (gate.json): gate.json failed: gold-asset parity 80.0% (threshold 90.0%)" in out
    md = summarize_run(gate_tree, "good").replace("\\", "")
    assert "| Suggested by the promotion rules | **repair**" in md
    assert "compiler gate passes (gate.json)" in md
    site = tmp_path / "site"
    assert main(["build", str(gate_tree), "-o", str(site), "-q", "-j", "1"]) == 0
    page = BeautifulSoup((site / "runs" / "good" / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert page.select_one("#recorded-decision")["data-suggested-verdict"] == "repair"
    row = next(tr for tr in page.select("#decision tr") if "compiler gate passes (gate.json)" in tr.get_text())
    assert "fail" in row.get_text(" ") and "parity 80.0% (threshold 90.0%)" in row.get_text(" ")
