"""compare.html in Chromium: any two runs' config diff, computed by the page's script.

Expected rows are computed here from the runs' own run.yaml files (flattened), not from the page's
data, so the test checks what a reader sees against the source of truth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from browserkit import PageWatch, ServedSite, settle
from playwright.sync_api import Page

from obs.analysis.held_constant import flatten

ROWS = """() => [...document.querySelectorAll('#compare-table tbody tr')].map(r => ({
  key: r.cells[0].textContent.trim(),
  a: r.cells[2].textContent.trim(),
  b: r.cells[3].textContent.trim(),
}))"""


def run_fields(source: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(source.rglob("run.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        sections = ("model", "config", "contract", "data", "provenance")
        out[doc["id"]] = flatten({k: doc[k] for k in sections if doc.get(k)})
    return out


def differing(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k, "∅") != b.get(k, "∅"))


@pytest.fixture
def compare(page: Page, watch: PageWatch, served_demo: ServedSite) -> Page:
    page.goto(served_demo.url("compare.html?a=spec03-r1&b=spec03-r2"))
    settle(page)
    return page


def test_the_pair_in_the_url_is_shown(compare: Page) -> None:
    rows = compare.evaluate(ROWS)
    assert [r["key"] for r in rows] == ["config.train.lr", "data.dataset_version", "provenance.corpus_hash"]
    assert (rows[0]["a"], rows[0]["b"]) == ("3.000e−04", "6.000e−04")
    assert compare.locator("#compare-pick").is_visible()
    assert compare.input_value("#compare-a") == "spec03-r1"
    assert compare.inner_text("#compare-status").startswith("Keys that differ: 3 · the same: ")
    hrefs = compare.eval_on_selector_all("#compare-title a", "links => links.map(a => a.getAttribute('href'))")
    assert hrefs == ["runs/spec03-r1/index.html", "runs/spec03-r2/index.html"]


def test_picking_any_two_runs_shows_exactly_their_differences(
    compare: Page, demo_source: Path, served_demo: ServedSite
) -> None:
    fields = run_fields(demo_source)
    for a, b in [("grpo-rl-07", "onto-full_s1"), ("onto-full_s1", "onto-full_s2"), ("spec03-r4", "spec03-r4")]:
        compare.select_option("#compare-a", a)
        compare.select_option("#compare-b", b)
        rows = compare.evaluate(ROWS)
        assert [r["key"] for r in rows] == differing(fields[a], fields[b]), (a, b)
        for r in rows:
            if r["key"] not in fields[a]:
                assert r["a"] == "not set"
            elif isinstance(fields[a][r["key"]], str):
                assert r["a"] == fields[a][r["key"]]
        both = set(fields[a]) & set(fields[b])
        same = len(both) - sum(1 for r in rows if r["key"] in both)
        assert compare.inner_text("#compare-status") == f"Keys that differ: {len(rows)} · the same: {same}"
        assert compare.url == served_demo.url(f"compare.html?a={a}&b={b}")  # a link to this very pair


def test_swap_exchanges_the_two_runs(compare: Page) -> None:
    before = compare.evaluate(ROWS)
    compare.click("#compare-swap")
    after = compare.evaluate(ROWS)
    assert (compare.input_value("#compare-a"), compare.input_value("#compare-b")) == ("spec03-r2", "spec03-r1")
    assert [(r["key"], r["b"], r["a"]) for r in after] == [(r["key"], r["a"], r["b"]) for r in before]
