"""Config diff and "what varies": only the keys that differ, flattened, values side by side."""

from __future__ import annotations

from typing import Any

from obs.analysis.config_diff import (
    MAX_TEXT,
    compact_fields,
    diff_fields,
    field_table,
    same_setting_key,
    what_varies,
)
from obs.analysis.held_constant import flatten
from obs.sitemodel import RunSummary
from summaries import make_summary


def test_diff_lists_only_differing_keys_with_both_values() -> None:
    a = flatten({"config": {"train": {"lr": 3e-4, "epochs": 3}, "repair": {"on": False}}, "data": {"rows": 10}})
    b = flatten({"config": {"train": {"lr": 6e-4, "epochs": 3}, "repair": {"on": False}}, "model": {"d": 512}})
    d = diff_fields("base", a, "run", b, {"optimizer": ["config.train.lr"], "capacity": ["model"]})
    assert [r.key for r in d.rows] == ["config.train.lr", "data.rows", "model.d"]
    lr, rows, model = d.rows
    assert (lr.a, lr.b, lr.status, lr.axis) == (3e-4, 6e-4, "changed", "optimizer")
    assert rows.status == "only in A" and rows.b is None
    assert model.status == "only in B" and model.axis == "capacity"
    assert d.same == ["config.repair.on", "config.train.epochs"]
    assert [section for section, _ in d.by_section()] == ["config", "data", "model"]


def test_integers_and_floats_are_the_same_setting_but_booleans_are_not_numbers() -> None:
    d = diff_fields("a", {"x": 1, "y": True, "z": [1, 2]}, "b", {"x": 1.0, "y": 1, "z": [1, 2]})
    assert [r.key for r in d.rows] == ["y"]
    assert d.same == ["x", "z"]


def test_a_value_missing_on_one_side_differs_even_from_null() -> None:
    d = diff_fields("a", {"k": None}, "b", {})
    assert [(r.key, r.in_a, r.in_b) for r in d.rows] == [("k", True, False)]


def test_compact_fields_bound_size_and_stay_json_friendly() -> None:
    long = "x" * 1000
    out = compact_fields({"b": long, "a": [1, 2, 3], "c": list(range(100)), "d": {}, "e": {"k": 1}})
    assert list(out) == ["a", "b", "c", "d", "e"]
    assert out["a"] == [1, 2, 3]
    assert len(out["b"]) == MAX_TEXT and out["b"].endswith("…")
    assert out["c"] == "[100 items]"
    assert out["d"] == "{}"


def runs(*configs: dict[str, Any]) -> list[RunSummary]:
    return [make_summary(id=f"r{i}", fields=flatten(c)) for i, c in enumerate(configs)]


def test_what_varies_keeps_only_varying_keys_and_groups_identical_configs() -> None:
    rs = runs(
        {"config": {"mode": "grpo", "lr": 1e-6, "seed": 1}},
        {"config": {"mode": "grpo", "lr": 1e-6, "seed": 2}},
        {"config": {"mode": "maxrl", "lr": 1e-6, "seed": 1}},
        {"config": {"mode": "maxrl", "lr": 1e-6, "seed": 2, "extra": True}},
    )
    v = what_varies(rs, ignore=["config.seed"])
    assert v.keys == ["config.extra", "config.mode"]
    assert v.n_same == 1  # config.lr
    assert v.partial == {"config.extra": 3}
    assert [[r.id for r in c.runs] for c in v.columns] == [["r0", "r1"], ["r2"], ["r3"]]
    assert v.columns[2].values == {"config.extra": True, "config.mode": "maxrl"}
    assert "config.extra" not in v.columns[0].values


def test_what_varies_is_empty_when_only_seeds_differ() -> None:
    rs = runs({"config": {"a": 1, "seed": 1}}, {"config": {"a": 1, "seed": 2}})
    v = what_varies(rs, ignore=["config.seed"], label_of=lambda members: "same")
    assert v.empty and v.n_runs == 2 and len(v.columns) == 1 and v.columns[0].label == "same"


TRICKY: list[dict[str, Any]] = [
    {"lr": 1, "flag": True, "layers": [1, 2], "note": None, "name": "a"},
    {"lr": 1.0, "flag": 1, "layers": [1.0, 2], "note": None, "name": "a", "extra": "x"},
    {"lr": 2, "flag": False, "layers": [2, 1], "name": "b"},
    {"lr": "1", "flag": "True", "layers": "[1, 2]", "note": "None", "name": "a", "extra": "x"},
    {},
]


def test_field_table_diffs_every_pair_exactly_as_diff_fields() -> None:
    """The compare page diffs by value index; it must agree with `diff_fields` on every pair,
    including 1 vs 1.0 (same), True vs 1 (not), lists, None, text that looks like a number, and
    keys missing on one side or both."""
    table = field_table(TRICKY, {"optimizer": ["lr"]}, repr)
    for i, a in enumerate(TRICKY):
        for j, b in enumerate(TRICKY):
            expected = [r.key for r in diff_fields("a", a, "b", b).rows]
            assert table.differing(i, j) == expected, (i, j)
    assert table.axes[table.keys.index("lr")] == "optimizer"
    lr = table.keys.index("lr")
    assert table.cells[0][lr] == table.cells[1][lr] != table.cells[3][lr]
    assert table.values[lr] == ["1", "2", "'1'"]  # distinct values once each, shown as first seen
    assert all(cell == -1 for cell in table.cells[4])


def test_field_table_reads_one_run_at_a_time_and_numbers_as_the_whole_list_did() -> None:
    """Given a generator (the compare page's 100,000 runs, each run's fields decoded when reached), the table is
    the one every run's fields at once gave: keys sorted, each key's values numbered as the runs meet them, -1
    where a run lacks a key, whichever run first has a key."""
    rows = [{"z": 1}, *TRICKY, {"a": 3, "lr": 1}, {"zz": None, "a": 3.0}]
    table = field_table((dict(f) for f in rows), None, repr)
    keys = sorted({k for f in rows for k in f})
    assert table.keys == keys and table.axes == [None] * len(keys)
    for k, key in enumerate(keys):
        shown: list[str] = []
        tokens: list[object] = []
        for n, f in enumerate(rows):
            if key not in f:
                assert table.cells[n][k] == -1
                continue
            token = same_setting_key(f[key])
            if token not in tokens:
                tokens.append(token)
                shown.append(repr(f[key]))
            assert table.cells[n][k] == tokens.index(token), (n, key)
        assert table.values[k] == shown
    assert all(len(row) == len(keys) for row in table.cells)


def test_what_varies_uses_the_same_notion_of_same_as_the_pairwise_diff() -> None:
    """1 and 1.0 (and NaN and NaN) are one setting, True and 1 are two, as in `diff_fields`."""
    nan = float("nan")
    rs = runs({"lr": 1, "x": nan, "on": True}, {"lr": 1.0, "x": float("nan"), "on": 1})
    v = what_varies(rs)
    assert v.keys == ["on"] and v.n_same == 2 and len(v.columns) == 2
    assert [r.key for r in diff_fields("a", rs[0].fields, "b", rs[1].fields).rows] == ["on"]
    rs = runs({"lr": 1, "on": True}, {"lr": 1.0, "on": True})
    assert what_varies(rs).empty
