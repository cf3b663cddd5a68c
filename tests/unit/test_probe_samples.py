"""Samples of one case (pass@k) in the column store: one table row per case id, every sample beside it."""

from __future__ import annotations

import json
from pathlib import Path

from obs.adapters.native import read_probe
from obs.analysis.digest import digest_from_dict, digest_to_dict, make_digest
from obs.diagnostics import Diagnostics
from obs.model import Run


def _write(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    path = tmp_path / "probe.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_selected_sample_takes_the_row_in_input_order(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {"id": "a", "sample": 1, "passed": False, "actual": "a1", "split": "dev"},
            {"id": "plain", "passed": True},
            {"id": "a", "sample": 0, "passed": False, "actual": "a0", "split": "dev"},
            {"id": "a", "sample": 2, "passed": True, "actual": "a2", "selected": True, "split": "dev"},
            {"id": "b", "passed": [True, False, False], "selected": 2, "actual": "b"},
            {"id": "a", "sample": 2, "passed": False},  # a repeated sample: skipped
            {"id": "plain", "passed": False},  # a repeated id: skipped
        ],
    )
    diags = Diagnostics()
    probe = read_probe(path, tmp_path, tmp_path, diags)
    assert probe.table.outcomes.ids_list() == ["a", "plain", "b"]
    cases = probe.cases
    assert [c.checks["passed"] for c in cases] == [True, True, False]
    assert cases[0].actual == "a2" and cases[0].selected and cases[0].sample == 2
    assert probe.table.case(0).actual == "a2"  # the texts of the selected sample, read from the store
    assert cases[2].sample == 2 and cases[2].selected
    assert [s.sample for s in probe.samples["a"]] == [0, 1, 2]
    assert [s.checks["passed"] for s in probe.samples["b"]] == [True, False, False]
    assert "plain" not in probe.samples
    assert sum("already" in d.message for d in diags.items) == 2

    digest = make_digest(Run(id="r", source_dir=tmp_path, probe=probe), 10)
    assert digest.probe is not None
    assert digest.probe.samples == {"a": {"passed": (3, 1)}, "b": {"passed": (3, 1)}}
    assert probe.table.outcomes.samples == {}  # the table itself is not changed by the digest
    again = digest_from_dict(json.loads(json.dumps(digest_to_dict(digest))))
    assert again.probe is not None and again.probe.samples == digest.probe.samples
    outcome = again.probe.get("a")
    assert outcome is not None and outcome.samples == {"passed": (3, 1)} and outcome.checks == {"passed": True}


def test_sampled_records_after_a_plain_case_with_that_id_are_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"id": "a", "passed": True}, {"id": "a", "sample": 0, "passed": False}])
    probe = read_probe(path, tmp_path, tmp_path, Diagnostics())
    assert [c.checks for c in probe.cases] == [{"passed": True}]
    assert probe.samples == {}
