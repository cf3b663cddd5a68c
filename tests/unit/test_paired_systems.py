"""Tests for obs.analysis.paired_systems and the `paired:` section of campaign.yaml.

The data in tests/data/paired/ are trimmed copies of real per-item evaluation dumps: the first 300
GSM8K questions of two Qwen3.5-9B adapters (a JSON object with a `per_q` list keyed by `i`), and
100 tau-bench tasks of two runs (a JSON list keyed by `task_id` with a `success` flag).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from obs.analysis.paired_systems import ItemFileError, compare_systems, parse_item_results
from obs.analysis.stats import exact_mcnemar, paired_items_needed, score_test, tango_interval
from obs.build import BuildOptions
from obs.diagnostics import Diagnostics
from obs.discover import read_campaign
from obs.model import PairedSpec
from obs.publish.extras import build_published

DATA = Path(__file__).resolve().parents[1] / "data" / "paired"
SPO = DATA / "gsm8k_spo_full_seed42.json"
RHO = DATA / "gsm8k_rho070_seed42.json"


def _spec(a: Path, b: Path, claim: float | None = None) -> PairedSpec:
    return PairedSpec(
        name="t",
        label_a="A",
        label_b="B",
        file_a=a.name,
        file_b=b.name,
        claim_pp=claim,
        a=parse_item_results(a.read_bytes()),
        b=parse_item_results(b.read_bytes()),
    )


# --------------------------------------------------------------------------- parsing


def test_parses_object_with_per_item_list() -> None:
    res = parse_item_results(SPO.read_bytes())
    doc = json.loads(SPO.read_text())
    assert (res.id_key, res.correct_key) == ("i", "correct")
    assert len(res.outcomes) == doc["n"] == 300
    assert sum(res.outcomes.values()) == doc["correct"]
    assert res.problems == ()


def test_parses_list_of_records() -> None:
    res = parse_item_results((DATA / "tau_20251031.json").read_bytes())
    assert (res.id_key, res.correct_key) == ("task_id", "success")
    assert len(res.outcomes) == 100 and sum(res.outcomes.values()) == 82


def test_parses_jsonl_and_reports_what_it_skipped() -> None:
    lines = [
        '{"id": "q1", "correct": true}',
        '{"id": "q2", "correct": 0}',
        "not json",
        '{"id": "q3", "correct": "yes"}',
        '{"correct": true}',
        '{"id": "q1", "correct": false}',
        "",
        "[1, 2]",
    ]
    res = parse_item_results("\n".join(lines).encode())
    assert res.outcomes == {"q1": False, "q2": False}  # the repeated id keeps its last record
    assert res.duplicates == 1 and res.skipped == 4
    text = " | ".join(res.problems)
    assert "line 3" in text and "no usable 'id'" in text and "no true/false 'correct'" in text
    assert "1 repeated" in text and "not an object" in text


def test_named_keys_and_unusable_files() -> None:
    data = json.dumps({"rows": [{"qid": 1, "ok": True}, {"qid": 2, "ok": False}], "other": [{"x": 1}]}).encode()
    with pytest.raises(ItemFileError, match="several lists"):
        parse_item_results(data)
    res = parse_item_results(data, items_key="rows", id_key="qid", correct_key="ok")
    assert res.outcomes == {"1": True, "2": False}
    with pytest.raises(ItemFileError, match="no correct key"):
        parse_item_results(b'[{"id": 1, "score": 0.5}]')
    with pytest.raises(ItemFileError):
        parse_item_results(b"\x00\x01 garbage")


# --------------------------------------------------------------------------- comparing


def test_gap_ci_and_mcnemar_match_scipy_on_real_items() -> None:
    spec = _spec(SPO, RHO, claim=20.0)
    res = compare_systems(spec)
    a, b = spec.a.outcomes, spec.b.outcomes  # type: ignore[union-attr]
    ids = sorted(a, key=int)
    xa = np.array([a[i] for i in ids], dtype=float)
    xb = np.array([b[i] for i in ids], dtype=float)
    c = res.comparison
    assert c is not None and c.n == res.shared == 300
    assert c.delta == pytest.approx(xa.mean() - xb.mean(), abs=1e-12)
    only_a, only_b = int(np.sum((xa == 1) & (xb == 0))), int(np.sum((xa == 0) & (xb == 1)))
    assert (c.only_a, c.only_b) == (only_a, only_b)
    both = int(np.sum((xa == 1) & (xb == 1)))
    table = [[both, only_a], [only_b, c.n - both - only_a - only_b]]
    assert c.p_value == pytest.approx(mcnemar(table, exact=False, correction=False).pvalue, rel=1e-9)
    assert c.interval == tango_interval(only_a, only_b, c.n)
    assert c.interval.excludes_zero() == (c.p_value < 0.05)
    # The claim is judged on the CI's lower bound, not on the point estimate.
    assert res.claim_supported is (c.interval.low >= 0.20)
    # items for 80% power: the paired (Connor) formula at the observed discordance and gap
    assert res.items_needed == paired_items_needed((only_a + only_b) / c.n, c.delta)
    assert c.recommendation == "statistically_significant_improvement"
    assert "beats B by ≥ 20 pp" in res.sentence


def test_claim_needs_the_lower_bound_not_the_point_estimate() -> None:
    spec = _spec(SPO, RHO)
    c = compare_systems(spec).comparison
    assert c is not None
    below = math.floor(100 * c.interval.low) - 1  # a claim the lower bound clears
    between = (100 * c.interval.low + 100 * c.delta) / 2  # above the bound, below the estimate
    assert compare_systems(_spec(SPO, RHO, claim=below)).claim_supported is True
    assert compare_systems(_spec(SPO, RHO, claim=between)).claim_supported is False
    assert compare_systems(spec).claim_supported is None


def test_close_systems_are_insufficient_evidence() -> None:
    res = compare_systems(_spec(DATA / "tau_20251031.json", DATA / "tau_20251103.json", claim=1.0))
    c = res.comparison
    assert c is not None and c.n == 100
    assert c.recommendation == "insufficient_statistical_evidence"
    assert res.claim_supported is False
    score_p = score_test(c.only_a, c.only_b, c.n).p_value
    assert c.p_value == (max(score_p, exact_mcnemar(c.only_a, c.only_b)) if c.exact else score_p)


def test_a_system_against_itself_supports_no_claim() -> None:
    res = compare_systems(_spec(SPO, SPO, claim=0.0))
    c = res.comparison
    assert c is not None and c.only_a == c.only_b == 0 and c.delta == 0
    assert c.interval.low < 0 < c.interval.high  # never a zero-width interval
    assert res.claim_supported is False
    assert "is not supported" in res.sentence and res.items_needed is None


def test_items_in_one_file_only_are_counted_not_dropped_silently() -> None:
    doc = json.loads(RHO.read_text())
    doc["per_q"] = [*doc["per_q"][5:], {"i": 9999, "correct": True}]
    spec = PairedSpec(
        "t", "A", "B", "a", "b", a=parse_item_results(SPO.read_bytes()), b=parse_item_results(json.dumps(doc).encode())
    )
    res = compare_systems(spec)
    assert (res.items_a, res.items_b, res.shared) == (300, 296, 295)
    assert (res.only_in_a, res.only_in_b) == (5, 1)
    assert res.only_in_a_ids == ["0", "1", "2", "3", "4"] and res.only_in_b_ids == ["9999"]
    assert res.comparison is not None and res.comparison.n == 295


def test_unreadable_side_gives_a_reason_not_numbers() -> None:
    spec = PairedSpec("t", "A", "B", "a.json", "../b.json", a=parse_item_results(SPO.read_bytes()), problems=("x",))
    res = compare_systems(spec)
    assert res.comparison is None and res.claim_supported is None and res.sentence.startswith("Not compared")


# --------------------------------------------------------------------------- campaign.yaml and the page


def _campaign_folder(root: Path, paired_yaml: str) -> Path:
    folder = root / "camp"
    (folder / "evals").mkdir(parents=True)
    shutil.copy(SPO, folder / "evals" / "spo.json")
    shutil.copy(RHO, folder / "evals" / "rho.json")
    (folder / "campaign.yaml").write_text(
        "id: camp\nconditions: [base, cand]\nbaseline_condition: base\nprimary_metric: correct_rate\n" + paired_yaml
    )
    return folder


def test_read_campaign_reads_pairs_and_refuses_files_outside(tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text('[{"id": 1, "correct": true}]')
    folder = _campaign_folder(
        tmp_path,
        "paired:\n"
        "  - name: SPO vs rho\n"
        "    a: {file: evals/spo.json, label: SPO}\n"
        "    b: evals/rho.json\n"
        "    claim_pp: 1.0\n"
        "  - a: ../secret.json\n"
        "    b: evals/missing.json\n"
        "  - a: evals/spo.json\n"
        "    b: evals/rho.json\n"
        "    claim_pp: lots\n"
        "  - just a string\n",
    )
    diags = Diagnostics(root=tmp_path)
    camp = read_campaign(folder, diags)
    assert camp is not None
    pairs = camp.paired
    assert [p.name for p in pairs] == ["SPO vs rho", "secret vs missing", "spo vs rho"]
    first, outside, bad_claim = pairs
    assert (first.label_a, first.label_b, first.claim_pp) == ("SPO", "rho", 1.0)
    assert first.a is not None and len(first.a.outcomes) == 300
    assert outside.a is None and outside.b is None
    assert "outside the campaign folder" in outside.problems[0] and "does not exist" in outside.problems[1]
    assert bad_claim.claim_pp is None
    messages = [d.message for d in diags.items]
    assert any("../secret.json' is outside the campaign folder" in m for m in messages)
    assert any("claim_pp should be a number" in m for m in messages)
    assert any("should be a mapping with 'a' and 'b'" in m for m in messages)
    assert all(d.line == 5 for d in diags.items if "campaign.yaml" in str(d.path))


def test_campaign_page_shows_the_paired_comparison(tmp_path: Path) -> None:
    src = tmp_path / "src"
    folder = _campaign_folder(
        src, "paired:\n  - a: {file: evals/spo.json, label: SPO}\n    b: {file: evals/rho.json, label: rho}\n"
    )
    (folder / "campaign.yaml").write_text((folder / "campaign.yaml").read_text() + "    claim_pp: 20\n")
    for cond in ("base", "cand"):
        run = folder / f"{cond}_s1"
        run.mkdir()
        (run / "run.yaml").write_text(f"id: {cond}-s1\ncondition: {cond}\nseed: 1\n")
        (run / "metrics.jsonl").write_text("".join(f'{{"step": {s}, "correct_rate": 0.{s + 3}}}\n' for s in range(5)))
    out = tmp_path / "site"
    build_published(BuildOptions(source=src, out=out, quiet=True))
    page = (out / "campaigns" / "camp" / "index.html").read_text()
    assert "Two systems on the same items" in page
    assert "claim ≥ 20 pp" in page and "McNemar score test" in page
    doc = json.loads((out / "campaigns" / "camp" / "analysis.json").read_text())
    (pair,) = doc["paired"]
    assert pair["shared"] == 300 and pair["comparison"]["n"] == 300
    assert pair["claim_supported"] is (pair["comparison"]["interval"]["low"] >= 0.2)
    # One seed per condition: no comparison of conditions ("not tested", never "not significant"); the page says why.
    (cand,) = doc["candidates"]
    assert cand["recommendation"] == "not_tested"
    assert cand["litmus"]["verdict"] == "INCONCLUSIVE"
