"""Nesting-error counts by block type (issue 27; seed 003's block_nesting_failure: "nesting error rate by block
type"): both shapes of the field, cases without it not counted, unreadable values said, per split, on the page."""

from __future__ import annotations

import json
from pathlib import Path

from bs4 import BeautifulSoup

from obs.analysis.nesting import block_counts
from obs.pipeline import SourceTree, load_report
from obs.render.run_page import render_run
from obs.render.site import Renderer


def _tree(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    run = tmp_path / "r1"
    run.mkdir(exist_ok=True)
    (run / "run.yaml").write_text("id: r1\nstatus: finished\n")
    (run / "probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


ROWS: list[dict[str, object]] = [
    {"id": "c0", "exact": False, "split": "dev", "nesting_errors": {"section_card": 2, "table_row": 1}},
    {"id": "c1", "exact": False, "split": "dev", "nesting_errors": ["table_row"]},
    {"id": "c2", "exact": True, "split": "test", "nesting_errors": []},
    {"id": "c3", "exact": False, "split": "test", "nesting_errors": {"table_row": 3, "compare_bar": 0}},
    {"id": "c4", "exact": True, "split": "test"},  # no field: not counted
    {"id": "c5", "exact": False, "split": "test", "nesting_errors": "table_row"},  # neither shape: said
]


def test_the_two_shapes_and_what_is_not_one() -> None:
    assert block_counts({"a": 2, "b": 0}) == {"a": 2}
    assert block_counts(["a", "b", "a"]) == {"a": 2, "b": 1}
    assert block_counts([]) == {} and block_counts({}) == {}
    for bad in ("a", 3, {"a": -1}, {"a": True}, {"a": 1.5}, ["a", 2], [""]):
        assert block_counts(bad) is None, bad


def test_counts_by_block_type_overall_and_per_split(tmp_path: Path) -> None:
    ne = load_report(SourceTree.open(_tree(tmp_path, ROWS)), "r1").report.nesting
    assert ne is not None
    assert ne.key == "nesting_errors" and ne.unreadable == 1
    o = ne.overall
    assert (o.cases, o.with_errors, o.errors) == (4, 3, 7)  # c0, c1, c2, c3 carry it; c2 has none
    assert [(b.block, b.errors, b.cases) for b in o.blocks] == [("table_row", 5, 3), ("section_card", 2, 1)]
    dev, test = ne.by_split
    assert (dev.scope, dev.cases, dev.with_errors, dev.errors) == ("dev", 2, 2, 4)
    assert (test.scope, test.cases, test.with_errors, test.errors) == ("test", 2, 1, 3)
    assert [(b.block, b.errors, b.cases) for b in test.blocks] == [("table_row", 3, 1)]


def test_shown_in_the_probe_section(tmp_path: Path) -> None:
    tree = SourceTree.open(_tree(tmp_path, ROWS))
    loaded = load_report(tree, "r1")
    out = render_run(loaded.report, Renderer(tree.meta), loaded.links, source_rel="r1", max_points=100, slug="r1")
    page = BeautifulSoup(out.files["index.html"].decode(), "html.parser")
    table = page.find(id="nesting-0")
    assert table is not None
    assert "3 of 4 cases with a nesting error (75.0%), 7 errors in all" in table.caption.get_text(" ")
    rows = [[c.get_text(" ", strip=True) for c in tr.find_all(["th", "td"])] for tr in table.tbody.find_all("tr")]
    assert rows == [["table_row", "5", "3", "75.0%"], ["section_card", "2", "1", "25.0%"]]
    note = page.find(id="nesting-errors").find_next("p").get_text(" ")
    assert "1 case whose value was neither a mapping of counts nor a list of block types" in note
    doc = json.loads(out.files["analysis.json"])
    assert doc["nesting_errors"]["overall"]["errors"] == 7


def test_no_field_no_table(tmp_path: Path) -> None:
    rows = [{"id": "c1", "exact": True}]
    assert load_report(SourceTree.open(_tree(tmp_path, rows)), "r1").report.nesting is None
