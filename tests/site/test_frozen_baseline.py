"""The frozen baseline (issue 27): `obs gate RUN --baseline OTHER` and `obs summary RUN --baseline OTHER`
judge against the same run and say the same thing; the spec page shows each rung against its parent
and against the spec's frozen baseline, and counts the looks taken at the frozen probe."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from obs.cli import main

REPORTS = Path(__file__).resolve().parents[2] / "reports"
SUGGESTED = re.compile(r"Suggested by the promotion rules \| (?:\*\*(\w+)\*\*|cannot judge)")
DELTA = re.compile(r"\*\*Δ ([^*]+)\*\*")


@pytest.mark.parametrize("run", ["spec03-r3", "spec03-r4"])
@pytest.mark.parametrize("baseline", [None, "spec03-r1", "spec03-r2"])
def test_gate_and_summary_agree_on_any_baseline(run: str, baseline: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    extra = ["--baseline", baseline] if baseline else []
    capsys.readouterr()
    code = main(["gate", run, str(REPORTS), *extra])
    gate = capsys.readouterr().out
    assert main(["summary", run, str(REPORTS), *extra]) == 0
    summary = capsys.readouterr().out.replace("\\", "")
    first = gate.splitlines()[0]
    suggested = re.search(r"suggested (\w+)", first)
    assert suggested is not None
    gate_verdict = None if suggested.group(1) == "nothing" else suggested.group(1)
    m = SUGGESTED.search(summary)
    assert m is not None, summary
    assert gate_verdict == m.group(1)
    assert code == (0 if gate_verdict == "promote" else 1)
    against = baseline or {"spec03-r3": "spec03-r1", "spec03-r4": "spec03-r3"}[run]
    assert f"vs baseline {against}" in first
    assert f"vs `{against}`" in summary


def test_gate_refuses_an_unknown_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "spec03-r3", str(REPORTS), "--baseline", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
