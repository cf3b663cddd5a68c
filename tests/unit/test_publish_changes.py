"""Changes since another build, read from its manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from obs.manifest import record_json
from obs.publish.changes import ManifestError, compare, read_manifest
from obs.sitemodel import ChangeState, RunSummary
from summaries import make_summary


def summary(run_id: str, **kw: Any) -> RunSummary:
    s: dict[str, Any] = {
        "id": run_id,
        "headline": {"metric": "exact", "value": 0.5, "higher_is_better": True},
        "headline_is_rate": True,
        "rates": {"exact": 0.5, "truncated": 0.1},
        "suggested_verdict": "branch",
        "input_hash": "h-" + run_id,
    }
    s.update(kw)
    return make_summary(**s)


def manifest(tmp_path: Path, runs: list[RunSummary]) -> Path:
    records = [record_json(s) for s in runs]
    path = tmp_path / "index.json"
    path.write_text(json.dumps({"generator": "obs", "obs_version": "0.0.9", "runs": records}))
    return path


def test_new_removed_verdicts_and_moved_metrics(tmp_path: Path) -> None:
    old = read_manifest(manifest(tmp_path, [summary("a"), summary("b"), summary("gone", verdict="promote")]))
    new = [
        summary("a", verdict="promote"),
        summary(
            "b",
            headline={"metric": "exact", "value": 0.6, "higher_is_better": True},
            rates={"exact": 0.6, "truncated": 0.2},
        ),
        summary("fresh"),
    ]
    c = compare(old, new, lambda name: name == "truncated")
    assert [s.id for s in c.new] == ["fresh"]
    assert [r["id"] for r in c.removed] == ["gone"] and c.removed[0]["slug"] == "gone"
    assert [(v.id, v.which, v.old, v.new) for v in c.verdicts] == [("a", "recorded", None, "promote")]
    moved = {(m.id, m.metric): m for m in c.moved}
    assert set(moved) == {("b", "exact"), ("b", "truncated")}
    assert moved[("b", "exact")].delta == pytest.approx(0.1) and moved[("b", "exact")].better is True
    assert moved[("b", "truncated")].delta == pytest.approx(0.1) and moved[("b", "truncated")].better is False
    assert c.states["a"].state == "changed" and c.states["fresh"].state == "new"
    assert {r["summary"].id for r in c.changed_runs(new)} == {"a", "b"}
    assert not c.empty


def test_identical_builds_have_no_changes_but_changed_artifacts_are_noted(tmp_path: Path) -> None:
    runs = [summary("a"), summary("b")]
    old = read_manifest(manifest(tmp_path, runs))
    assert compare(old, runs).empty
    c = compare(old, [summary("a"), summary("b", input_hash="other")])
    assert [s.id for s in c.inputs_only] == ["b"] and c.moved == []
    assert c.states["b"] == ChangeState(old.token, "changed", ("artifacts",))


def test_the_token_identifies_the_compared_build(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    a = read_manifest(manifest(tmp_path / "x", [summary("a")]).parent)  # a site folder works too
    b = read_manifest(manifest(tmp_path / "y", [summary("a", verdict="reject")]))
    assert a.token != b.token


def test_a_foreign_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "index.json"
    bad.write_text(json.dumps({"runs": []}))
    with pytest.raises(ManifestError, match="not an obs manifest"):
        read_manifest(bad)
    bad.write_text("{nope")
    with pytest.raises(ManifestError, match="not valid JSON"):
        read_manifest(bad)
    with pytest.raises(ManifestError, match="cannot be read"):
        read_manifest(tmp_path / "missing.json")
