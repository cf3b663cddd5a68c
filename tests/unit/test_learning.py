"""Agent learning numbers, checked against a hand computation from the demo's sessions file.

The expected values are computed here from the raw JSON lines with the json module, and the intervals
with scipy.stats / statsmodels, never with obs.analysis: the windows, the fired-vs-not deltas, the
adoption rates and their Wilson intervals, the impact score's delta-method interval, the task-mix check.
"""

from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from obs.adapters import LEARNING
from obs.analysis.learning import BASELINE_WINDOW, RECENT_WINDOW, KeyReport, key_report
from obs.diagnostics import Diagnostics

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_learning_demo.py"
EXPORT = "agents/results/learning"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = importlib.util.spec_from_file_location("make_learning_demo", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    root = tmp_path_factory.mktemp("learning")
    for rel, blob in module.learning_tree().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(blob)
    return root


@pytest.fixture(scope="module")
def raw(tree: Path) -> list[dict]:
    lines = (tree / EXPORT / "sessions.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def report(tree: Path, key: str) -> KeyReport:
    diags = Diagnostics(root=tree)
    data = LEARNING.load(LEARNING.files(tree / EXPORT, tree), diags)
    assert not [d for d in diags.items if d.severity != "info"], [d.format() for d in diags.items]
    return key_report(data, key, lambda s: s.source.name, lambda p: p.source.name)


def ordered(raw: list[dict], key: str) -> list[dict]:
    rows = [r for r in raw if r["learning_key"] == key]
    return sorted(rows, key=lambda r: r["created_at"])  # every demo session has a distinct created_at


def welch_ci(a: list[float], b: list[float]) -> tuple[float, float]:
    """Welch's interval as obs.analysis.stats.welch defines it: scipy's Welch test when the groups are the same
    size; with unequal sizes the same standard error with Hsu's conservative df = min(n) - 1 (docs/statistics.md)."""
    if len(a) == len(b):
        ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
        return float(ci.low), float(ci.high)
    se = math.sqrt(stats.tvar(a) / len(a) + stats.tvar(b) / len(b))
    delta = sum(a) / len(a) - sum(b) / len(b)
    half = stats.t.ppf(0.975, min(len(a), len(b)) - 1) * se
    return delta - half, delta + half


def fired(r: dict, entry: str) -> bool:
    return any(u["entry_id"] == entry and u["cue_hit"] for u in r["metadata"]["learning_usage"]["session"]["entries"])


def adopted(r: dict, entry: str) -> bool:
    return any(
        u["entry_id"] == entry and u["cue_hit"] and u["adopted"]
        for u in r["metadata"]["learning_usage"]["session"]["entries"]
    )


@pytest.mark.parametrize("key", ["incident-triage", "sql-repair"])
def test_momentum_windows_and_welch_interval(tree: Path, raw: list[dict], key: str) -> None:
    rows = ordered(raw, key)
    rewards = [r["session_reward"]["score"] for r in rows]
    recent = rewards[-RECENT_WINDOW:]
    baseline = rewards[-RECENT_WINDOW - BASELINE_WINDOW : -RECENT_WINDOW]
    rep = report(tree, key)
    m = rep.momentum
    assert rep.sessions == len(rows)
    assert (m.recent_n, m.baseline_n) == (RECENT_WINDOW, BASELINE_WINDOW)
    assert m.diff.mean_a == pytest.approx(sum(recent) / len(recent))
    assert m.diff.mean_b == pytest.approx(sum(baseline) / len(baseline))
    low, high = welch_ci(recent, baseline)
    assert (m.diff.low, m.diff.high) == (pytest.approx(low), pytest.approx(high))
    assert (
        m.recent_first == len(rows) - RECENT_WINDOW and m.baseline_first == len(rows) - RECENT_WINDOW - BASELINE_WINDOW
    )
    assert rep.latest_score == rewards[-1]


def test_modes_review_models(tree: Path, raw: list[dict]) -> None:
    rows = ordered(raw, "incident-triage")
    rep = report(tree, "incident-triage")
    modes = {c.name: c.sessions for c in rep.modes}
    assert modes == {m: sum(1 for r in rows if r["execution_mode"] == m) for m in {r["execution_mode"] for r in rows}}
    review = {c.name: c.sessions for c in rep.review}
    assert review["pending"] == sum(1 for r in rows if r["review_status"] == "pending")
    assert rep.review_warning is not None and "mixed" in rep.review_warning
    student = [r for r in rows if r["models"]["student"] == "gpt-4o-mini"]
    row = next(m for m in rep.models if m.role == "student" and m.model == "gpt-4o-mini")
    assert row.sessions == len(student)
    assert row.reward_mean == pytest.approx(sum(r["session_reward"]["score"] for r in student) / len(student))
    assert row.latest_score == student[-1]["session_reward"]["score"]


@pytest.mark.parametrize("entry", ["pb-01", "pb-03", "pb-05"])
def test_entry_impact_against_hand_computation(tree: Path, raw: list[dict], entry: str) -> None:
    rows = ordered(raw, "incident-triage")
    on = [r for r in rows if fired(r, entry)]
    off = [r for r in rows if not fired(r, entry)]
    hits, adoptions = len(on), sum(1 for r in on if adopted(r, entry))
    e = next(x for x in report(tree, "incident-triage").entries if x.entry_id == entry)
    assert (e.cue_hits, e.adoptions) == (hits, adoptions)
    assert e.adoption_rate == pytest.approx(adoptions / hits)
    wl, wh = proportion_confint(adoptions, hits, alpha=0.05, method="wilson")
    assert (e.adoption_low, e.adoption_high) == (pytest.approx(wl), pytest.approx(wh))
    a = [r["session_reward"]["score"] for r in on]
    b = [r["session_reward"]["score"] for r in off]
    delta = sum(a) / len(a) - sum(b) / len(b)
    assert e.reward.delta == pytest.approx(delta)
    assert (e.reward.low, e.reward.high) == tuple(pytest.approx(x) for x in welch_ci(a, b))
    ta = [r["token_usage"]["total_tokens"] for r in on]
    tb = [r["token_usage"]["total_tokens"] for r in off]
    assert e.tokens.delta == pytest.approx(sum(ta) / len(ta) - sum(tb) / len(tb))
    assert (e.tokens.low, e.tokens.high) == tuple(pytest.approx(x) for x in welch_ci(ta, tb))
    # impact = adoption x delta; delta-method interval with Welch's standard error
    rate = adoptions / hits
    se_delta = math.sqrt(stats.tvar(a) / len(a) + stats.tvar(b) / len(b))
    se = math.sqrt(delta**2 * rate * (1 - rate) / hits + rate**2 * se_delta**2)
    z = stats.norm.ppf(0.975)
    assert e.impact == pytest.approx(rate * delta)
    assert (e.impact_low, e.impact_high) == (pytest.approx(rate * delta - z * se), pytest.approx(rate * delta + z * se))
    tasks = {r["task_id"] for r in on}
    assert e.tasks_fired == len(tasks) and e.transfer == (len(tasks) >= 2)
    retries = [r["metadata"]["learning_usage"]["session"]["retry_count"] for r in on]
    assert e.retries_fired == pytest.approx(sum(retries) / len(retries))
    failed = [r["metadata"]["learning_usage"]["session"]["failure_events"] > 0 for r in on]
    assert e.failure_rate_fired == pytest.approx(sum(failed) / len(failed))
    # within task: per task (both groups present) mean difference, weighted by fired sessions
    shared = sorted({r["task_id"] for r in on} & {r["task_id"] for r in off})
    num = den = 0.0
    for t in shared:
        fa = [r["session_reward"]["score"] for r in on if r["task_id"] == t]
        fb = [r["session_reward"]["score"] for r in off if r["task_id"] == t]
        num += len(fa) * (sum(fa) / len(fa) - sum(fb) / len(fb))
        den += len(fa)
    assert e.within_task.delta == pytest.approx(num / den)


def test_harmful_entry_listed_first_and_never_fired_last(tree: Path) -> None:
    entries = report(tree, "incident-triage").entries
    assert entries[0].entry_id == "pb-03" and entries[0].impact is not None and entries[0].impact < 0
    assert entries[0].impact_high is not None and entries[0].impact_high < 0  # the demo's harmful entry is clear
    assert entries[-1].entry_id == "pb-06" and entries[-1].cue_hits == 0 and entries[-1].impact is None


def test_single_task_entry_flags_the_task_mix(tree: Path) -> None:
    e = next(x for x in report(tree, "incident-triage").entries if x.entry_id == "pb-05")
    assert not e.transfer and e.tasks_fired == 1
    assert e.confounded is not None and "task mix" in e.confounded


def test_quality_and_lifecycle(tree: Path) -> None:
    doc = json.loads((tree / EXPORT / "playbook.json").read_text())
    weights = doc["rubric_weights"]
    rep = report(tree, "incident-triage")
    q = rep.quality
    assert q is not None and q.candidates == 6 and q.weights_given
    by_hand = [sum(weights[k] * e["rubric_scores"][k] for k in weights) for e in doc["playbook_entries"]]
    assert q.weighted_mean == pytest.approx(sum(by_hand) / len(by_hand))
    assert dict(q.gate_failures) == {"generality": 1}
    assert q.rejected == 1
    lc = rep.lifecycle
    assert lc is not None
    assert dict((scope, (a, d)) for scope, a, d in lc.rows) == {"reinforcement": (2, 1), "differentiation": (2, 0)}
    assert lc.rejected == 1
    sql = report(tree, "sql-repair").quality
    assert sql is not None and not sql.weights_given and sql.candidates == 2  # the default weights, said so


def test_tag_cohorts_against_scipy() -> None:
    from obs.analysis.cohorts import RunPoint, tag_cohorts

    runs = [
        RunPoint("a1", ("full",), "f1 · spec s", 0.61, True),
        RunPoint("a2", ("full",), "f1 · spec s", 0.58, True),
        RunPoint("a3", ("full",), "f1 · spec s", 0.60, True),
        RunPoint("b1", ("lite",), "f1 · spec s", 0.49, True),
        RunPoint("b2", (), "f1 · spec s", 0.52, True),
        RunPoint("b3", ("lite",), "f1 · spec s", 0.47, True),
        RunPoint("c1", ("full",), "loss · folder x", 1.0, False),  # another set: never mixed in
    ]
    cohorts = {(c.tag, c.group): c for c in tag_cohorts(runs)}
    assert set(cohorts) == {("full", "f1 · spec s"), ("lite", "f1 · spec s")}  # c1 has nothing to compare with
    full = cohorts[("full", "f1 · spec s")]
    with_tag, without = [0.61, 0.58, 0.60], [0.49, 0.52, 0.47]
    assert full.diff.delta == pytest.approx(sum(with_tag) / 3 - sum(without) / 3)
    assert (full.diff.low, full.diff.high) == tuple(pytest.approx(x) for x in welch_ci(with_tag, without))
    assert full.better is True and full.with_ids == ("a1", "a2", "a3") and full.diff.n_b == 3  # b1, b2, b3


def test_tag_cohorts_reuse_an_unchanged_set_and_recompute_a_changed_one() -> None:
    import json as _json

    from obs.analysis.cohorts import RunPoint, cohorts_by_group, groups_from_json, groups_json
    from obs.jsonutil import dumps

    runs = [RunPoint(f"r{i}", ("t",) if i < 3 else (), "m · spec s", 0.1 * i, True) for i in range(6)]
    first = cohorts_by_group(runs)
    stored = _json.loads(dumps(groups_json(first)))  # through cohorts.json and back: no run listed in it
    assert "r4" not in dumps(stored).decode() and stored["m · spec s"]["cohorts"][0]["diff"]["n_b"] == 3
    known = groups_from_json(stored)
    assert known["m · spec s"][1][0].with_ids == () and cohorts_by_group(runs, known) == first  # runs derived
    key, (cohort,) = first["m · spec s"]
    marker = {"m · spec s": (key, [replace(cohort, diff=replace(cohort.diff, delta=9.0))])}
    reused = cohorts_by_group(runs, marker)["m · spec s"][1][0]  # a reused set is not tested again
    assert reused.diff.delta == 9.0 and reused.with_ids == ("r0", "r1", "r2") and reused.diff.n_b == 3
    moved = [*runs[:-1], RunPoint("r5", (), "m · spec s", 0.9, True)]
    again = cohorts_by_group(moved, marker)["m · spec s"][1][0]
    assert again.diff.delta != 9.0 and again.diff.mean_b == pytest.approx((0.3 + 0.4 + 0.9) / 3)
