"""The generations viewer's data (obs.render.generations, issue 33): 100,000 generations become a handful of
rows files and text files of a few hundred each, every value traceable to its line of the log; the section's
summary says what the samples show, computed here independently."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np

from obs.analysis.report import RunReport
from obs.model import Generations, Run
from obs.render.datafile import read_data_file
from obs.render.generations import ROWS_PER_FILE, TEXT_ROWS_PER_FILE, summary, viewer


def _report(n: int, tmp_path: Path) -> RunReport:
    rng = np.random.default_rng(7)
    steps = (np.arange(n) // 200).astype(float)  # 200 generations a step
    rewards = rng.random(n).round(3)
    g = Generations(
        source_file=str(tmp_path / "emergence" / "generations.jsonl"),
        step=[float(s) for s in steps],
        reward=[float(r) for r in rewards],
        prompt=[f"prompt {i}" for i in range(n)],
        completion=[f"<b>completion</b> {i}" for i in range(n)],
        line=list(range(1, n + 1)),
    )
    run = Run(id="r1", source_dir=tmp_path, generations=g)
    return cast(RunReport, SimpleNamespace(run=run))


def test_a_hundred_thousand_generations_page_into_small_files(tmp_path: Path) -> None:
    n = 100_000
    report = _report(n, tmp_path)
    v = viewer(report)
    assert v is not None
    assert v.spec["n"] == n and v.spec["rowFiles"] == 5 and v.spec["textFiles"] == n // TEXT_ROWS_PER_FILE
    assert v.spec["steps"][:3] == [0.0, 1.0, 2.0] and v.spec["stepMax"] == 499.0
    assert v.spec["source"] == "emergence/generations.jsonl"
    files = dict(v.files())
    rows = [name for name in files if name.startswith("gens-rows-")]
    texts = [name for name in files if name.startswith("gens-text-")]
    assert len(rows) == 5 and len(texts) == 250
    assert max(len(files[name]) for name in rows) < 400_000  # each rows file is read whole
    assert max(len(files[name]) for name in texts) < 40_000
    meta, data = read_data_file(files["gens-rows-2.js"])
    assert meta == {"schema": "obs.generations/1", "kind": "rows", "run": "r1", "page": 2}
    g = report.run.generations
    assert g is not None
    i = ROWS_PER_FILE + 17
    assert data[17] == [g.step[i], g.reward[i], i + 1]  # step, reward, line of the log
    _, text = read_data_file(files["gens-text-3.js"])
    assert text[5] == [f"prompt {2 * TEXT_ROWS_PER_FILE + 5}", f"<b>completion</b> {2 * TEXT_ROWS_PER_FILE + 5}"]
    assert b"<b>" not in files["gens-text-3.js"]  # compressed: no text of a run reaches the file as is


def test_summary_describes_the_first_and_last_step(tmp_path: Path) -> None:
    report = _report(1_000, tmp_path)
    s = summary(report)
    assert s is not None
    g: Any = report.run.generations
    rewards, steps = np.array(g.reward), np.array(g.step)
    assert (s.n, s.steps, s.first_step, s.last_step) == (1_000, 5, 0.0, 4.0)
    assert s.n_first == s.n_last == 200
    assert s.mean_first is not None and s.mean_last is not None
    assert np.isclose(s.mean_first, np.mean(rewards[steps == 0]), rtol=1e-12, atol=0)
    assert np.isclose(s.mean_last, np.mean(rewards[steps == 4]), rtol=1e-12, atol=0)


def test_no_generations_no_viewer(tmp_path: Path) -> None:
    report = cast(RunReport, SimpleNamespace(run=Run(id="r", source_dir=tmp_path)))
    assert viewer(report) is None and summary(report) is None
