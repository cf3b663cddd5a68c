"""Issue 16, "non-finite values": a diverged run is never "no metric", a NaN is never invisible, and the
text "NaN" inside a JSON string is not a bare NaN."""

from __future__ import annotations

import json
import math
from pathlib import Path

from adapterkit import load_all, write

from obs.adapters.shared.json_docs import read_json_document
from obs.analysis.report import RunContext, analyse_run
from obs.analysis.summary import summarize
from obs.config import SiteConfig
from obs.diagnostics import Diagnostics
from obs.render.format import summary_value
from obs.sitemodel import RunSummary


def test_nan_inside_a_string_is_not_a_bare_nan(tmp_path: Path) -> None:
    doc = write(tmp_path / "r.json", json.dumps({"note": "loss was NaN at step 3; Infinity next", "x": 1}))
    diags = Diagnostics()
    assert read_json_document(doc, diags) is not None and not diags.items
    bare = write(tmp_path / "b.json", '{\n "note": "NaN",\n "x": NaN\n}')
    diags = Diagnostics()
    read_json_document(bare, diags)
    (d,) = diags.items
    assert d.severity == "warning" and d.line == 3 and "bare NaN/Infinity (1 value(s), first at line 3)" in d.message


def test_a_nan_in_a_log_is_named_with_key_step_and_line_and_kept(tmp_path: Path) -> None:
    rows = [{"step": 1, "loss": 2.0}, {"step": 2, "loss": "NaN"}, {"step": 3, "loss": 1.0}]
    write(tmp_path / "r" / "log.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    (run, diags), *_ = load_all(tmp_path).values()
    loss = run.metrics.series["loss"]  # type: ignore[union-attr]
    assert math.isnan(loss.values[1]) and [s for s, _ in loss.nonfinite()] == [2.0]
    (warning,) = [d for d in diags.items if d.severity == "warning"]
    assert warning.line == 2 and "'loss' is NaN at step 2 (line 2" in warning.message


def test_a_run_that_ended_diverged_has_an_infinite_headline_flagged_in_the_summary(tmp_path: Path) -> None:
    rows = [{"step": i, "loss": 1.0 / (i + 1)} for i in range(12)] + [{"step": 12, "loss": "Infinity"}]
    write(tmp_path / "r" / "log.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    (run, _), *_ = load_all(tmp_path).values()
    report = analyse_run(run, RunContext(), SiteConfig())
    assert report.headline.metric == "loss" and report.headline.value == math.inf
    assert "is ∞" in report.headline.detail and report.as_dict()["headline"]["nonfinite"] == "inf"
    summary = summarize(report, slug="r", input_hash="x")
    data = json.loads(json.dumps(summary.to_json()))
    assert data["headline"]["value"] is None and data["headline"]["nonfinite"] == "inf"  # never "no metric"
    back = RunSummary.from_json(data)
    assert summary_value(back) == "∞"
