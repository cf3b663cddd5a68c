"""One answer per comparison: every output that shows a comparison must say the same thing about it.

Two trees are built: the demo, and tests/comparisons.py (every comparison shape: paired probe cases
per scope, pass@k, one run against one run on a series, ablation arms, evaluation items, final
summaries, a seed campaign, two systems on shared items). From each, the outcome of every comparison
is collected from every output that shows it:

* the HTML pages (run page, leaderboard, spec, campaign and arms pages): every element that shows a
  comparison carries `data-cmp` (its key) and `data-outcome`; every suggested verdict `data-suggested`
  and `data-suggested-verdict`;
* each run's analysis.json, the campaign's and the arms group's analysis.json, and index.json;
* `obs summary` (a run's PR comment, and the campaign's) and `obs gate`, read as a reviewer reads them.

The test fails when two outputs disagree about the same comparison (its outcome: significance and
direction, or the suggested verdict), and when a comparison the tree was built to show is missing or
came out otherwise than designed.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from comparisons import EXPECTED, RECIPE_OUTCOME, SUGGESTED
from obs.cli import main
from obs.publish.summary_md import summarize_campaign, summarize_run
from obs.render.format import VERDICT_WORDS

WORDS_TO_OUTCOME = {words: outcome for outcome, words in VERDICT_WORDS.items()}
ARROWS = {"▲": "up", "▼": "down"}
UNTESTED = ("not_tested", "not_one_measurement")  # no test, so no headline rule in obs gate
# the PR comment's headline line: "**Δ −8.8 pp** ▼ vs `base` (95% CI [...] · p = ... · n = ...): <outcome words>"
HEADLINE = (
    r"\*\*Δ [^*]+\*\* ?([▲▼]?) vs `[^`]+`(?: \((.*)\): ([a-z ,]+)$|: (one run each|no standard)[^\n]*"
    r"|: \*\*(not one measurement)[^\n]*)"  # a probe-change rung (the demo's spec03-r5): described, no test
)
# the PR comment's recipe line: "**Recipe, seeds as the unit: Δ +6.0 pp** ▲ vs `base`'s recipe (...): <outcome words>"
RECIPE = r"^\*\*Recipe, seeds as the unit: Δ [^*]+\*\* ?([▲▼]?) vs `[^`]+`'s recipe \((.*)\): ([a-z ,]+)$"
CAMPAIGN_ROW = r"^\| ([^|]+?) \| \d+ \|[^\n]*\| ([a-z ,]+) · \*\*[A-Z]+\*\* \|"
# `obs summary --campaign`'s tested metrics (issue 33): "| `entropy` | secondary | good | ... | <outcome words> |"
TESTED_ROW = r"^\| `([^`]+)` \| (\w+) \| ([^|]+?) \|[^\n]*\| ([a-z ,]+) \|$"
# `obs gate --campaign`'s secondary guardrail lines: "[INFO] entropy (secondary) · good vs base: <outcome words>: ..."
GATE_SECONDARY = r"^  \[(?:INFO|FAIL)\] (\S+) \(secondary\) · (.+?) vs [^:]+: ([a-z ,]+):"


def direction(outcome: str) -> str:
    """What an arrow can say: up, down, or neither."""
    return {"statistically_significant_improvement": "up", "significant_degradation": "down"}.get(outcome, "none")


class Seen:
    """Every output's answer about every comparison: key -> [(where, answer)]."""

    def __init__(self) -> None:
        self.outcomes: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.directions: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.suggested: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.gates: dict[str, list[tuple[str, str]]] = defaultdict(list)  # "run|gate name" -> [(where, status)]

    def outcome(self, key: str, where: str, value: str) -> None:
        assert value in VERDICT_WORDS, (key, where, value)
        self.outcomes[key].append((where, value))

    def arrow(self, key: str, where: str, value: str) -> None:
        self.directions[key].append((where, value))

    def verdict(self, run: str, where: str, value: str | None) -> None:
        self.suggested[run].append((where, value or "none"))

    def gate(self, run: str, name: str, where: str, status: str) -> None:
        assert status in ("pass", "fail", "na"), (run, name, where, status)
        self.gates[f"{run}|{name}"].append((where, status))

    def disagreements(self) -> list[str]:
        bad = []
        for key, seen in self.gates.items():
            if len({v for _, v in seen}) > 1:
                bad.append(f"gate {key}: {sorted(set(seen))}")
        for key, seen in self.outcomes.items():
            if len({v for _, v in seen}) > 1:
                bad.append(f"{key}: {sorted(set(seen))}")
        for key, seen in self.directions.items():
            answers = {v for _, v in seen} | {direction(v) for _, v in self.outcomes.get(key, [])}
            if len(answers) > 1:
                bad.append(f"{key} (direction): {sorted(set(seen))} vs {sorted(set(self.outcomes.get(key, [])))}")
        for run, seen in self.suggested.items():
            if len({v for _, v in seen}) > 1:
                bad.append(f"suggested verdict of {run}: {sorted(set(seen))}")
        return bad


def read_pages(site: Path, seen: Seen) -> None:
    for page in sorted(site.rglob("*.html")):
        where = page.relative_to(site).as_posix()
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for el in soup.select("[data-cmp][data-outcome]"):
            if el["data-outcome"] != "none":
                seen.outcome(el["data-cmp"], where, el["data-outcome"])
        for el in soup.select("[data-suggested]"):
            verdict = el["data-suggested-verdict"]
            seen.verdict(el["data-suggested"].removeprefix("run:"), where, None if verdict == "none" else verdict)
        # obs.yaml's gates: the run page's strip, and the leaderboard's strip in each row
        tile = soup.select_one("#recorded-decision[data-suggested]")
        for el in soup.select("#gates .gate-chips [data-gate]"):
            assert tile is not None, where
            seen.gate(tile["data-suggested"].removeprefix("run:"), el["data-gate"], where, el["data-gate-status"])
        for cell in soup.select("td[data-gate-run]"):
            for el in cell.select("[data-gate]"):
                seen.gate(cell["data-gate-run"], el["data-gate"], f"{where} (leaderboard)", el["data-gate-status"])


def read_json(site: Path, seen: Seen) -> None:
    index = json.loads((site / "index.json").read_text())
    for r in index["runs"]:
        if r["delta"] and r["delta"]["delta"] is not None:
            seen.outcome(f"run:{r['id']}", "index.json", r["delta"]["verdict"])
        seen.verdict(r["id"], "index.json", r["suggested_verdict"])
        if r["seed_level"] and r["seed_level"]["outcome"]:
            seen.outcome(r["seed_level"]["key"], "index.json", r["seed_level"]["outcome"])
        doc = json.loads((site / r["analysis"]).read_text())
        where = r["analysis"]
        d = doc["delta_vs_baseline"]
        if d and d["delta"] is not None:
            seen.outcome(f"run:{r['id']}", where, d["verdict"])
        seen.verdict(r["id"], where, doc["decision"]["suggested"]["verdict"])
        for g in doc["gates"]:
            seen.gate(r["id"], g["name"], where, g["status"])
        if doc["recipe_level"]:
            seen.outcome(doc["recipe_level"]["key"], where, doc["recipe_level"]["outcome"])
        cmp = doc["comparison"]
        if cmp:
            for scope in [cmp["overall"], *cmp["by_split"], *cmp["by_family"]]:
                for check, pc in scope["checks"].items():
                    key = f"run:{r['id']}|{scope['scope']}:{scope['label']}|{check}"
                    seen.outcome(key, where, pc["recommendation"])
        for pk in doc["pass_at_k"]:
            for k, res in pk["vs_baseline"]["by_k"].items():
                seen.outcome(f"run:{r['id']}|pass@{k}:{pk['check']}", where, res["recommendation"])
    for analysis in sorted(site.glob("campaigns/*/analysis.json")):
        doc = json.loads(analysis.read_text())
        where = analysis.relative_to(site).as_posix()
        for c in doc["candidates"]:
            seen.outcome(f"campaign:{doc['campaign_id']}|{c['condition']}", where, c["recommendation"])
        for p in doc["paired"]:
            if p["comparison"]:
                seen.outcome(f"paired:{doc['campaign_id']}|{p['name']}", where, p["comparison"]["recommendation"])
        for m in doc["tiers"]["metrics"]:  # every tested metric (issue 33) and its candidate-vs-candidate matrix
            if m["tested"] and m["tier"] != "primary":
                for c in m["stats"]["candidates"]:
                    seen.outcome(
                        f"campaign:{doc['campaign_id']}|{m['name']}|{c['condition']}", where, c["recommendation"]
                    )
            for cell in m["matrix"]:
                key = f"matrix:{doc['campaign_id']}|{m['name']}|{cell['b']}-{cell['a']}"
                seen.outcome(key, where, cell["outcome"])
    for analysis in sorted(site.glob("arms/*/analysis.json")):
        doc = json.loads(analysis.read_text())
        slug = analysis.parent.name
        for c in doc["stats"]["candidates"]:
            seen.outcome(f"arms:{slug}|{c['condition']}", analysis.relative_to(site).as_posix(), c["recommendation"])


def read_summaries(source: Path, site: Path, seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    """`obs summary` and `obs gate` for every run with a baseline, `obs summary --campaign` per campaign."""
    index = json.loads((site / "index.json").read_text())
    for r in index["runs"]:
        if not r["baseline"]:
            continue
        rid = r["id"]
        md = summarize_run(source, rid)
        head = next(line for line in md.splitlines() if line.startswith("**")).replace("\\", "")
        m = re.search(HEADLINE, head)
        assert m, head
        if m.group(3):
            seen.outcome(f"run:{rid}", "obs summary", WORDS_TO_OUTCOME[m.group(3)])
            seen.arrow(f"run:{rid}", "obs summary (arrow)", ARROWS.get(m.group(1), "none"))
        elif m.group(5):
            seen.outcome(f"run:{rid}", "obs summary", "not_one_measurement")
        else:
            seen.outcome(f"run:{rid}", "obs summary", "not_tested")
        level = r["seed_level"] if r["seed_level"] and r["seed_level"]["key"].startswith("recipe:") else None
        recipe = re.search(RECIPE, md.replace("\\", ""), re.M)
        assert bool(recipe) == bool(level), md  # the recipe line exactly when the run is judged at the seed level
        if recipe and level:
            seen.outcome(level["key"], "obs summary", WORDS_TO_OUTCOME[recipe.group(3)])
            seen.arrow(level["key"], "obs summary (arrow)", ARROWS.get(recipe.group(1), "none"))
        suggested = re.search(r"\| Suggested by the promotion rules \| (?:\*\*(\w+)\*\*|cannot judge)", md)
        assert suggested, md
        seen.verdict(rid, "obs summary", suggested.group(1))
        against = md.split("#### Against the baseline", 1)
        if len(against) == 2:
            table = against[1].split("####", 1)[0]
            for row in re.findall(r"^\| `([^`]+)`(?: ↓)? \| [^|]+ \| [^|]+ \| ([^|]+) \|", table, re.M):
                check, delta = row[0].replace("\\_", "_"), row[1]
                arrow = next((ARROWS[a] for a in ARROWS if a in delta), "none")
                seen.arrow(f"run:{rid}|all:all shared cases|{check}", "obs summary (against the baseline)", arrow)
        assert main(["gate", rid, str(source)]) in (0, 1)
        out = capsys.readouterr().out
        read_gate_lines(rid, site / r["analysis"], md, out, seen)
        gate = re.search(r"suggested (\w+|nothing \(cannot judge\))", out)
        assert gate, out
        seen.verdict(rid, "obs gate", None if gate.group(1).startswith("nothing") else gate.group(1))
        rule = re.search(r"\] headline improves \(p < [^)]*\)[^:]*: .*: ([a-z ,]+)$", out, re.M)
        tested = r["delta"] and r["delta"]["delta"] is not None and r["delta"]["verdict"] not in UNTESTED
        judged = tested and r["status"] not in ("running", "queued") and level is None
        assert bool(rule) == bool(judged), out  # untested comparisons get no headline rule at all
        if rule:
            seen.outcome(f"run:{rid}", "obs gate", WORDS_TO_OUTCOME[rule.group(1)])
        # judged at the seed level: the recipe rule decides, the checkpoint's paired test is shown beside it
        by_seeds = re.search(r"\] recipe improves \(Welch's t over seeds[^)]*\)[^:]*: .*: ([a-z ,]+)$", out, re.M)
        assert bool(by_seeds) == bool(level and level["outcome"] != "not_tested"), out
        if by_seeds and level:
            seen.outcome(level["key"], "obs gate", WORDS_TO_OUTCOME[by_seeds.group(1)])
        checkpoint = re.search(
            r"^  \[(?:yes|no)\] this checkpoint vs the baseline's \([^)]*\): .*: ([a-z ,]+)$", out, re.M
        )
        if checkpoint:
            seen.outcome(f"run:{rid}", "obs gate (checkpoint)", WORDS_TO_OUTCOME[checkpoint.group(1)])
    for analysis in sorted(site.glob("campaigns/*/analysis.json")):
        doc = json.loads(analysis.read_text())
        md = summarize_campaign(source, doc["campaign_id"])
        labels = {c["label"]: c["name"] for c in doc["conditions"]}
        for label, words in re.findall(CAMPAIGN_ROW, md, re.M):
            key = f"campaign:{doc['campaign_id']}|{labels[label.replace(chr(92), '')]}"
            seen.outcome(key, "obs summary --campaign", WORDS_TO_OUTCOME[words])
        tested = md.split("#### Tested metrics", 1)[1].split("####", 1)[0] if "#### Tested metrics" in md else ""
        for metric, tier, label, words in re.findall(TESTED_ROW, tested, re.M):
            if tier != "primary":
                key = (
                    f"campaign:{doc['campaign_id']}|{metric.replace(chr(92), '')}|{labels[label.replace(chr(92), '')]}"
                )
                seen.outcome(key, "obs summary --campaign (tested metrics)", WORDS_TO_OUTCOME[words])
        code = main(["gate", "--campaign", doc["campaign_id"], str(source)])
        gate_out = capsys.readouterr().out
        # the campaign's gate: one verdict from the command (and its exit code), the PR comment and the page
        said = re.search(r"^obs gate: campaign [^:]+: (PASS|FAIL)$", gate_out, re.M)
        assert said and code == (0 if said.group(1) == "PASS" else 1), gate_out
        seen.verdict(f"gate:{doc['campaign_id']}", "obs gate --campaign", said.group(1))
        md_gate = re.search(r"\*\*obs gate: (PASS|FAIL)\*\*", md)
        assert md_gate, md
        seen.verdict(f"gate:{doc['campaign_id']}", "obs summary --campaign", md_gate.group(1))
        page = BeautifulSoup((analysis.parent / "index.html").read_text(encoding="utf-8"), "html.parser")
        badge = page.select_one("#gate h2 .badge")
        assert badge is not None
        seen.verdict(f"gate:{doc['campaign_id']}", analysis.parent.relative_to(site).as_posix(), badge.get_text())
        page_lines = [" ".join(li.get_text(" ").split()) for li in page.select("#gate li")]
        for line in re.findall(r"^  \[(?:PASS|FAIL|INFO)\] (.+)$", gate_out, re.M):  # the same words, line by line
            assert any(" ".join(line.split()) in shown for shown in page_lines), (line, page_lines)
        for metric, label, words in re.findall(GATE_SECONDARY, gate_out, re.M):
            key = f"campaign:{doc['campaign_id']}|{metric}|{labels[label]}"
            seen.outcome(key, "obs gate --campaign", WORDS_TO_OUTCOME[words])
        for p in doc["paired"]:
            if not p["comparison"]:
                continue
            if f"{p['label_a']} is significantly better" in md:
                said = "statistically_significant_improvement"
            elif f"{p['label_b']} is significantly better" in md:
                said = "significant_degradation"
            else:
                assert "Insufficient statistical evidence of a difference" in md
                said = "insufficient_statistical_evidence"
            seen.outcome(f"paired:{doc['campaign_id']}|{p['name']}", "obs summary --campaign", said)


GATE_WORDS = {"pass": "pass", "FAIL": "fail", "n/a": "na", "✅ pass": "pass", "❌ fail": "fail"}


def read_gate_lines(rid: str, analysis: Path, md: str, out: str, seen: Seen) -> None:
    """obs.yaml's gates as `obs gate` prints them and as the PR summary's table lists them (by label), and the
    run page's evidence in `obs gate`'s own words, line by line."""
    gates = json.loads(analysis.read_text())["gates"]
    by_label = {g["label"]: g["name"] for g in gates}
    lines = re.findall(r"^  \[(pass|FAIL|n/a)\] (.+)$", out.split("  gates (obs.yaml):", 1)[-1], re.M) if gates else []
    assert len(lines) == len(gates), out
    page = BeautifulSoup((analysis.parent / "index.html").read_text(encoding="utf-8"), "html.parser")
    shown = [" ".join(li.get_text(" ").split()) for li in page.select("#gates .gate-evidence li")]
    assert len(shown) == len(gates), (rid, shown)
    for (mark, text), on_page, g in zip(lines, shown, gates, strict=True):
        label = text.split(": ", 1)[0]
        seen.gate(rid, by_label[label], "obs gate", GATE_WORDS[mark])
        assert on_page == " ".join(f"[{mark}] {text}".split()), (rid, on_page, text)  # the same words
        assert label == g["label"]
    table = md.replace("\\", "").split("#### Gates (obs.yaml)", 1)
    rows = (
        re.findall(r"^\| (.+?) \| (✅ pass|❌ fail|n/a) \|", table[1].split("####", 1)[0], re.M)
        if len(table) == 2
        else []
    )
    assert len(rows) == len(gates), (rid, md[:300])
    for label, mark in rows:
        seen.gate(rid, by_label[label], "obs summary", GATE_WORDS[mark])


def collect(source: Path, site: Path, capsys: pytest.CaptureFixture[str]) -> Seen:
    seen = Seen()
    read_pages(site, seen)
    read_json(site, seen)
    read_summaries(source, site, seen, capsys)
    return seen


def test_every_output_gives_one_answer_per_comparison(
    shapes_build: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source, site = shapes_build
    seen = collect(source, site, capsys)
    assert not seen.disagreements(), "\n".join(seen.disagreements())
    # every designed shape is there, came out as designed, and is shown by more than one output
    for key, outcome in EXPECTED.items():
        answers = seen.outcomes.get(key, [])
        assert {v for _, v in answers} == {outcome}, (key, answers)
        assert len({w.split("/")[0] for w, _ in answers}) >= 2, (key, answers)
    for run, verdict in SUGGESTED.items():
        assert {v for _, v in seen.suggested[run]} == {verdict or "none"}, (run, seen.suggested[run])
        assert len(seen.suggested[run]) >= 5  # run page, leaderboard, analysis.json, index.json, summary, gate
    # the seed-level results reach the leaderboard rows of the runs in those groups
    index = BeautifulSoup((site / "index.html").read_text(), "html.parser")
    shown = {el["data-cmp"] for el in index.select("#runs-table [data-cmp]")}
    assert {"arms:abl|no-x", "arms:abl|no-y", "campaign:camp|good", "campaign:camp|same"} <= shown
    # the recipe judged with seeds as the unit: one answer on the run page, leaderboard, spec page, index.json,
    # analysis.json, obs summary and obs gate; its checkpoint's paired test (another answer) promotes nothing
    run, outcome = RECIPE_OUTCOME
    key = json.loads((site / "index.json").read_text())
    level = next(r["seed_level"] for r in key["runs"] if r["id"] == run)
    answers = seen.outcomes[level["key"]]
    assert {v for _, v in answers} == {outcome}, answers
    assert {"obs summary", "obs gate", "index.json", f"runs/{run}/analysis.json", f"runs/{run}/index.html"} <= {
        w for w, _ in answers
    }, answers
    # and in the same words: the outcome, Welch's p as p_text writes it, the seeds on each side
    from obs.numbers import p_text

    said = [
        f"Welch {p_text(level['p_value'])}",
        f"{level['n']} v {level['n_baseline']} seeds",
        VERDICT_WORDS[outcome],
    ]
    page = BeautifulSoup((site / f"runs/{run}/index.html").read_text(), "html.parser")
    row = next(el for el in index.select("#runs-table [data-cmp]") if el["data-cmp"] == level["key"])
    assert main(["gate", run, str(source)]) == 1
    surfaces = {
        "run page": page.find(id="recipe-level").get_text(" ", strip=True),
        "obs summary": summarize_run(source, run).replace("\\", ""),
        "obs gate": capsys.readouterr().out,
    }
    for where, text in surfaces.items():
        for words in said:
            assert words in text, (where, words, text[:600])
    assert VERDICT_WORDS[outcome] in row.get_text(" ") and said[1] in row.get_text(" ")
    # pass@k and per-scope cells are compared too
    assert any(k.startswith("run:s-new|pass@") for k in seen.outcomes)
    assert any(k.startswith("run:repair|family:lane|") for k in seen.outcomes)
    assert "paired:camp|A vs B" in seen.outcomes


def test_the_demo_gives_one_answer_per_comparison(
    demo_source: Path, demo_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = collect(demo_source, demo_site, capsys)
    assert not seen.disagreements(), "\n".join(seen.disagreements())
    # the ablation run pages make no significance claim from single runs, and agree with the arms page
    for seed in (1, 2, 3):
        for arm in ("no-ontology", "no-schema"):
            assert {v for _, v in seen.outcomes[f"run:onto-{arm}_s{seed}"]} == {"not_tested"}
            assert {v for _, v in seen.suggested[f"onto-{arm}_s{seed}"]} == {"none"}
    assert {v for _, v in seen.outcomes["arms:onto-arms|no-schema"]} == {"significant_degradation"}
    assert len(seen.outcomes["arms:onto-arms|no-schema"]) >= 4  # arms page, analysis.json, leaderboard, spec
    # obs.yaml's gates: one status per run and gate on the run page's strip, the leaderboard's, analysis.json, the
    # PR summary and obs gate (the disagreements above); every run with a baseline is seen by all five
    index = json.loads((demo_site / "index.json").read_text())
    for r in index["runs"]:
        if r["baseline"]:
            for name in ("renderable", "families", "canary", "compiler", "ladder"):
                where = {w.split(" (")[0].split("/")[0] for w, _ in seen.gates[f"{r['id']}|{name}"]}
                assert {"runs", "index.html", "obs gate", "obs summary"} <= where, (r["id"], name, where)
    # the composite gate as designed on the ladder: r2 regressed (fails it), the frozen baseline itself is n/a
    assert {v for _, v in seen.gates["spec03-r2|ladder"]} == {"fail"}
    assert {v for _, v in seen.gates["spec03-r2|compiler"]} == {"pass"}
    assert {v for _, v in seen.gates["spec03-r2|renderable"]} == {"fail"}


def test_the_check_catches_a_disagreement() -> None:
    seen = Seen()
    seen.outcome("run:x", "page", "significant_degradation")
    seen.outcome("run:x", "json", "insufficient_statistical_evidence")
    seen.arrow("run:y", "md", "up")
    seen.outcome("run:y", "page", "insufficient_statistical_evidence")
    seen.verdict("x", "page", "reject")
    seen.verdict("x", "gate", None)
    assert len(seen.disagreements()) == 3
