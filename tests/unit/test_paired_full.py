"""Paired evaluations in full: each side's own interval (against statsmodels' Wilson), the matched-control
check of the sides' `config:`, the pair formation rate, the config x metric table built from per-item files
(pass@1 against the unbiased estimator computed here by hand, oracle pass@K), `obs gate --campaign/--paired`
and a campaign of paired evaluations only, which leads with its paired result."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from obs.analysis.paired_systems import compare_systems, config_table, parse_item_results
from obs.cli import main
from obs.diagnostics import Diagnostics
from obs.discover import read_campaign
from obs.model import PairedSpec
from obs.publish.summary_md import summarize_campaign

K = 4
# item -> (judged, greedy, samples): A solves more than B; B lacks items 38 and 39
A = {i: (i % 3 != 0, i % 2 == 0, [(i + j) % 3 != 0 for j in range(K)]) for i in range(40)}
B = {i: (i % 3 == 1, i % 2 == 1, [(i + j) % 4 == 0 for j in range(K)]) for i in range(38)}


def _jsonl(items: dict[int, tuple[bool, bool, list[bool]]]) -> bytes:
    rows = [{"item_id": f"q{i}", "correct": c, "greedy_ok": g, "samples": s} for i, (c, g, s) in items.items()]
    return "\n".join(json.dumps(r) for r in rows).encode()


def _spec(
    config_a: dict | None = None, config_b: dict | None = None, varies: tuple[str, ...] = (), claim: float | None = None
) -> PairedSpec:
    return PairedSpec(
        name="A vs B",
        label_a="A",
        label_b="B",
        file_a="a.jsonl",
        file_b="b.jsonl",
        claim_pp=claim,
        a=parse_item_results(_jsonl(A)),
        b=parse_item_results(_jsonl(B)),
        config_a=config_a or {},
        config_b=config_b or {},
        varies=varies,
    )


def test_each_side_has_its_wilson_interval_and_the_pairs_their_formation_rate() -> None:
    p = compare_systems(_spec())
    k_a = sum(1 for c, _, _ in A.values() if c)
    assert p.side_a is not None and p.side_a.correct == k_a and p.side_a.n == 40
    low, high = proportion_confint(k_a, 40, alpha=0.05, method="wilson")
    assert (p.side_a.low, p.side_a.high) == pytest.approx((low, high), rel=1e-9)
    k_b = sum(1 for c, _, _ in B.values() if c)
    assert p.side_b is not None and (p.side_b.low, p.side_b.high) == pytest.approx(
        proportion_confint(k_b, 38, alpha=0.05, method="wilson"), rel=1e-9
    )
    assert p.formation_rate == pytest.approx(38 / 40)
    assert "Pairs formed for 95.0% of the items (38 on both sides of 40 on either)." in p.sentence


def test_the_matched_control_names_each_difference() -> None:
    same = {"selector": "s-3B", "K": 8, "temperature": 1.0}
    ok = compare_systems(_spec({**same, "validators": "collab"}, {**same, "validators": "indep"}, ("validators",)))
    assert ok.control is not None and ok.control.matched
    assert ok.control.sentence == (
        "Matched control: K, selector, temperature the same on both sides "
        "(validators differs: collab vs indep, as declared in varies)."
    )
    bad = compare_systems(
        _spec(
            {**same, "validators": "collab"},
            {**same, "selector": "s-orpo", "validators": "indep", "planner": "p"},
            ("validators",),
        )
    )
    assert bad.control is not None and not bad.control.matched
    assert "selector differs: s-3B vs s-orpo" in bad.control.sentence
    assert "planner is set for B only (p), not for A" in bad.control.sentence
    assert bad.gate is not None and bad.gate.verdict == "FAIL" and bad.gate.reason == bad.control.sentence
    one = compare_systems(_spec(same, None))
    assert one.control is not None and not one.control.declared and "only A has a config" in one.control.sentence


def test_the_gate_of_a_paired_claim() -> None:
    c = compare_systems(_spec(claim=0.0))
    assert c.comparison is not None and c.gate is not None
    assert c.gate.verdict == ("PASS" if c.comparison.interval.low > 0 else "FAIL")
    assert c.gate.reason.lower() in c.sentence.lower()  # the page's own words
    assert compare_systems(_spec(claim=90.0)).gate.verdict == "FAIL"  # type: ignore[union-attr]


def _pass_at(n: int, c: int, k: int) -> float:
    return 1.0 - comb(n - c, k) / comb(n, k)


def test_the_config_table_is_built_from_the_per_item_files() -> None:
    spec = _spec({"K": K, "selector": "vote"}, {"K": K, "selector": "vote"})
    table = config_table([spec])
    assert table is not None
    titles = dict(table.columns)
    assert titles["pass1:samples"] == "pass@1 (samples)" and titles["passK:samples"] == f"oracle pass@{K} (samples)"
    assert table.settings == ["K", "selector"]
    row = {r.label: r for r in table.rows}["A"]
    judged = row.cells["judged:correct"]
    k_a = sum(1 for c, _, _ in A.values() if c)
    assert judged is not None and judged.value == pytest.approx(k_a / 40) and judged.n == 40
    assert (judged.low, judged.high) == pytest.approx(proportion_confint(k_a, 40, method="wilson"))
    greedy = row.cells["col:greedy_ok"]
    assert greedy is not None and greedy.value == pytest.approx(sum(g for _, g, _ in A.values()) / 40)
    pass1 = row.cells["pass1:samples"]
    want = sum(_pass_at(K, sum(s), 1) for _, _, s in A.values()) / 40
    assert pass1 is not None and pass1.value == pytest.approx(want)
    oracle = row.cells["passK:samples"]
    solved = [i for i, (_, _, s) in A.items() if any(s)]
    assert oracle is not None and oracle.value == pytest.approx(len(solved) / 40)
    assert oracle.value == pytest.approx(sum(_pass_at(K, sum(s), K) for _, _, s in A.values()) / 40)
    sel = row.cells["sel:samples"]
    assert sel is not None and sel.n == len(solved)
    assert sel.value == pytest.approx(sum(A[i][0] for i in solved) / len(solved))


def _campaign_tree(tmp_path: Path, claim: float) -> Path:
    camp = tmp_path / "src" / "evals"
    camp.mkdir(parents=True)
    (camp / "a.jsonl").write_bytes(_jsonl(A))
    (camp / "b.jsonl").write_bytes(_jsonl(B))
    (camp / "campaign.yaml").write_text(
        "id: evals\n"
        "paired:\n"
        "  - name: A vs B\n"
        f"    claim_pp: {claim}\n"
        "    varies: [validators]\n"
        "    a: {file: a.jsonl, label: A, config: {K: 4, validators: collab}}\n"
        "    b: {file: b.jsonl, label: B, config: {K: 4, validators: indep}}\n",
        encoding="utf-8",
    )
    return tmp_path / "src"


def test_config_and_varies_are_read_from_campaign_yaml(tmp_path: Path) -> None:
    src = _campaign_tree(tmp_path, 1)
    c = read_campaign(src / "evals", Diagnostics(root=src))
    assert c is not None
    spec = c.paired[0]
    assert spec.config_a == {"K": 4, "validators": "collab"} and spec.varies == ("validators",)


@pytest.mark.parametrize(("claim", "code"), [(0, 0), (60, 1)])
def test_obs_gate_for_a_paired_claim_and_a_campaign(
    tmp_path: Path, claim: float, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _campaign_tree(tmp_path, claim)
    spec = read_campaign(src / "evals", Diagnostics(root=src)).paired[0]  # type: ignore[union-attr]
    page_words = compare_systems(spec).gate.reason  # type: ignore[union-attr]
    assert main(["gate", "--campaign", "evals", "--paired", "A vs B", str(src)]) == code
    out = capsys.readouterr().out
    assert out.startswith(f"obs gate: campaign evals, paired A vs B: {'PASS' if code == 0 else 'FAIL'}\n")
    assert page_words in out
    assert main(["gate", "--campaign", "evals", str(src)]) == code
    assert main(["gate", "--campaign", "evals", "--paired", "nope", str(src)]) == 2
    assert "has no paired comparison 'nope' (paired: A vs B)" in capsys.readouterr().err
    assert main(["gate", "--campaign", "nope", str(src)]) == 2


def test_a_paired_only_campaign_leads_with_its_paired_result(tmp_path: Path) -> None:
    src = _campaign_tree(tmp_path, 0)
    md = summarize_campaign(src, "evals")
    assert "0 conditions" not in md and "conditions ×" not in md
    assert md.index("**A vs B**") < md.index("obs gate: PASS")
    assert "Wilson CI" in md
    out = tmp_path / "site"
    assert main(["build", str(src), "-o", str(out), "-q"]) == 0
    page = (out / "campaigns" / "evals" / "index.html").read_text(encoding="utf-8")
    assert "0 conditions" not in page and "1 paired evaluation on shared items" in page
    assert page.index('id="verdict"') < page.index('id="gate"')
    assert "Configurations × metrics" in page and "Pair formation" in page
