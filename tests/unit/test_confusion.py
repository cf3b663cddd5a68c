"""Confusion matrices of expected vs predicted classes in the probe (issue 27; seed 003's per-layout and
theme/tone confusion matrices), counted per split, shown in the probe section."""

from __future__ import annotations

import json
from pathlib import Path

from obs.analysis.confusion import MAX_CLASSES, pairs_in
from obs.pipeline import SourceTree, load_report


def test_pairs_are_found_by_name() -> None:
    keys = {"expected_layout", "predicted_layout", "gold_theme", "pred_theme", "block_expected", "block_predicted"}
    found = pairs_in(keys | {"expected_only", "note"})
    assert sorted(found) == [
        ("block", "block_expected", "block_predicted"),
        ("layout", "expected_layout", "predicted_layout"),
        ("theme", "gold_theme", "pred_theme"),
    ]


def _run(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    run = tmp_path / "r1"
    run.mkdir(exist_ok=True)
    (run / "run.yaml").write_text("id: r1\nstatus: finished\n")
    (run / "probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_counts_per_split_with_every_class_on_both_axes(tmp_path: Path) -> None:
    rows = []
    truth = ["stack", "stack", "lane", "lane", "grid", "grid"]
    guess = ["stack", "lane", "lane", "lane", "stack", "cards"]  # "cards" is never expected: still a column
    for i, (e, p) in enumerate(zip(truth, guess, strict=True)):
        split = "test" if i % 2 else "dev"
        rows.append({"id": f"c{i}", "exact": e == p, "split": split, "expected_layout": e, "predicted_layout": p})
    rows.append({"id": "c9", "exact": False, "split": "dev", "expected_layout": "grid", "predicted_layout": None})
    report = load_report(SourceTree.open(_run(tmp_path, rows)), "r1").report
    (cf,) = report.confusion
    assert cf.name == "layout"
    overall = cf.matrices[0]
    assert overall.labels == ("cards", "grid", "lane", "stack")
    assert overall.counts == ((0, 0, 0, 0), (1, 0, 0, 1), (0, 0, 2, 0), (0, 0, 1, 1))
    assert (overall.n, overall.agree) == (6, 3)  # the case without a prediction is not counted
    assert [m.scope for m in cf.matrices] == ["all", "split: dev", "split: test"]
    assert sum(m.n for m in cf.matrices[1:]) == overall.n


def test_too_many_classes_are_said_not_drawn(tmp_path: Path) -> None:
    rows = [
        {"id": f"c{i}", "exact": True, "expected_x": f"k{i}", "predicted_x": f"k{i}"} for i in range(MAX_CLASSES + 1)
    ]
    (cf,) = load_report(SourceTree.open(_run(tmp_path, rows)), "r1").report.confusion
    assert cf.too_many == MAX_CLASSES + 1 and cf.matrices == ()


def test_no_pair_no_matrix(tmp_path: Path) -> None:
    rows = [{"id": "c1", "exact": True, "expected_layout": "a"}]
    assert load_report(SourceTree.open(_run(tmp_path, rows)), "r1").report.confusion == []


# ----------------------------------------------------------------- pairs declared in obs.yaml (`confusion:`)


def _declare(root: Path, text: str) -> Path:
    (root / "obs.yaml").write_text(text)
    return root


def test_a_declared_pair_is_counted_whatever_its_names(tmp_path: Path) -> None:
    rows = [
        {"id": "c0", "exact": True, "split": "dev", "layout_gold": "stack", "layout_out": "stack"},
        {"id": "c1", "exact": False, "split": "test", "layout_gold": "stack", "layout_out": "lane"},
        {"id": "c2", "exact": True, "split": "test", "layout_gold": "lane", "layout_out": "lane"},
    ]
    root = _declare(
        _run(tmp_path, rows),
        "confusion:\n  - {expected: layout_gold, predicted: layout_out, name: layout}\n"
        "  - {expected: theme_gold, predicted: theme_out}\n",
    )
    tree = SourceTree.open(root)
    assert not tree.diags.items
    report = load_report(tree, "r1").report
    layout, theme = report.confusion
    assert (layout.name, layout.expected_key, layout.predicted_key, layout.declared) == (
        "layout",
        "layout_gold",
        "layout_out",
        True,
    )
    assert layout.matrices[0].labels == ("lane", "stack")
    assert layout.matrices[0].counts == ((1, 0), (1, 1))
    assert [m.scope for m in layout.matrices] == ["all", "split: dev", "split: test"]
    # declared, and no case carries it: said, not dropped
    assert (theme.name, theme.matrices, theme.declared) == ("theme_gold", (), True)
    assert report.as_dict()["confusion"][0]["declared"] is True


def test_a_pair_found_by_name_and_declared_is_counted_once(tmp_path: Path) -> None:
    rows = [{"id": "c0", "exact": True, "expected_layout": "a", "predicted_layout": "b"}]
    root = _declare(_run(tmp_path, rows), "confusion:\n  - {expected: expected_layout, predicted: predicted_layout}\n")
    (cf,) = load_report(SourceTree.open(root), "r1").report.confusion
    assert cf.matrices[0].n == 1 and cf.declared


def test_bad_entries_are_named_with_their_line(tmp_path: Path) -> None:
    rows = [{"id": "c0", "exact": True, "a": "x", "b": "x"}]
    root = _declare(
        _run(tmp_path, rows),
        "title: t\nconfusion:\n  - {expected: a}\n  - {expected: a, predicted: a}\n  - just text\n"
        "  - {expected: a, predicted: b, colour: red}\n  - {expected: a, predicted: b}\n",
    )
    tree = SourceTree.open(root)
    said = [d.format() for d in tree.diags.items]
    path = f"{root.name}/obs.yaml"  # said relative to the folder above the source
    assert f"{path}:3: warning: 'confusion' entry 1: no predicted probe field name; skipped" in said
    assert f"{path}:4: warning: 'confusion' entry 2: expected and predicted are the same field (a); skipped" in said
    assert any(s.startswith(f"{path}:5: warning: 'confusion' entry 3: should be a mapping") for s in said)
    assert f"{path}:6: warning: 'confusion' entry 4: unknown key(s) colour (known: expected, predicted, name)" in said
    assert f"{path}:7: warning: 'confusion' entry 5: a / b is declared twice; skipped" in said
    assert tree.cfg.confusion == [{"expected": "a", "predicted": "b", "name": "a"}]
    (cf,) = load_report(tree, "r1").report.confusion
    assert cf.matrices[0].counts == ((1,),)
