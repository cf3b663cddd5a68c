"""The run page's generations viewer: the completions a run sampled while it trained (an emergence log's
`generations.jsonl`, obs.adapters.side_logs), filtered by step range, reward and text, two steps side by side.

The page carries a short description and a summary that reads without JavaScript; the generations
themselves live in data files beside the page, written with the case browser's machinery
(obs.render.datafile; `assets/obs.js`'s `DataFiles` loads them for both browsers):

    gens-rows-<k>.js   ROWS_PER_FILE generations each: step, reward, line in the log
    gens-text-<k>.js   TEXT_ROWS_PER_FILE generations each: prompt, completion

so 100,000 generations are five small rows files, read whole for the step and reward filters, and text
files read only as far as a text search or the shown generations need. Every text reaches the page
through `textContent` (`assets/generations.js`), never as markup.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from obs.analysis.report import RunReport
from obs.model import Generations
from obs.render.datafile import data_file

SCHEMA = "obs.generations/1"
PREFIX = "gens-"
ROWS_PER_FILE = 20_000
TEXT_ROWS_PER_FILE = 400
STEPS_LISTED = 5_000  # distinct steps the side-by-side can choose from (the rest by typing a step)


@dataclass
class GenerationsSummary:
    """What the section says before any script runs: counts, the step span and the mean reward by end."""

    n: int
    source: str
    steps: int  # distinct steps
    first_step: float | None
    last_step: float | None
    with_reward: int
    mean_first: float | None  # mean reward at the first and the last step (a description, not a test)
    n_first: int
    mean_last: float | None
    n_last: int
    cut: int
    cap: int


@dataclass
class Viewer:
    """The viewer's description (embedded in the page) and its data files (written beside it)."""

    spec: dict[str, Any]
    generations: Generations = field(repr=False)
    key: str = ""

    def files(self) -> Iterator[tuple[str, bytes]]:
        g, n = self.generations, len(self.generations)
        for page, start in enumerate(range(0, n, ROWS_PER_FILE), start=1):
            stop = min(n, start + ROWS_PER_FILE)
            rows = [[g.step[i], g.reward[i], g.line[i]] for i in range(start, stop)]
            yield f"{PREFIX}rows-{page}.js", self._file("rows", page, rows)
        for page, start in enumerate(range(0, n, TEXT_ROWS_PER_FILE), start=1):
            stop = min(n, start + TEXT_ROWS_PER_FILE)
            texts = [[g.prompt[i], g.completion[i]] for i in range(start, stop)]
            yield f"{PREFIX}text-{page}.js", self._file("text", page, texts)

    def _file(self, kind: str, page: int, body: Any) -> bytes:
        return data_file({"schema": SCHEMA, "kind": kind, "run": self.key, "page": page}, body)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _finite(values: list[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def summary(report: RunReport) -> GenerationsSummary | None:
    g = report.run.generations
    if g is None or not len(g):
        return None
    steps = sorted(set(_finite(g.step)))
    first, last = (steps[0], steps[-1]) if steps else (None, None)
    at_first = _finite([r for s, r in zip(g.step, g.reward, strict=True) if s == first])
    at_last = _finite([r for s, r in zip(g.step, g.reward, strict=True) if s == last])
    return GenerationsSummary(
        n=len(g),
        source=_source_name(report),
        steps=len(steps),
        first_step=first,
        last_step=last,
        with_reward=len(_finite(g.reward)),
        mean_first=_mean(at_first),
        n_first=len(at_first),
        mean_last=_mean(at_last),
        n_last=len(at_last),
        cut=g.cut,
        cap=_cap(),
    )


def _cap() -> int:
    from obs.adapters.side_logs import GENERATION_TEXT_CAP

    return GENERATION_TEXT_CAP


def _source_name(report: RunReport) -> str:
    g = report.run.generations
    if g is None:
        return ""
    path = Path(g.source_file)
    try:
        return path.relative_to(report.run.source_dir).as_posix()
    except ValueError:
        return path.name


def viewer(report: RunReport) -> Viewer | None:
    g = report.run.generations
    if g is None or not len(g):
        return None
    n = len(g)
    steps = sorted(set(_finite(g.step)))
    rewards = _finite(g.reward)
    spec: dict[str, Any] = {
        "schema": SCHEMA,
        "run": report.run.id,
        "n": n,
        "prefix": PREFIX,
        "rowsPerFile": ROWS_PER_FILE,
        "textRowsPerFile": TEXT_ROWS_PER_FILE,
        "rowFiles": -(-n // ROWS_PER_FILE),
        "textFiles": -(-n // TEXT_ROWS_PER_FILE),
        "steps": steps[:STEPS_LISTED],
        "stepsListed": len(steps) <= STEPS_LISTED,
        "stepMin": steps[0] if steps else None,
        "stepMax": steps[-1] if steps else None,
        "rewardMin": min(rewards) if rewards else None,
        "rewardMax": max(rewards) if rewards else None,
        "source": _source_name(report),
    }
    return Viewer(spec, g, report.run.id)


def section_context(report: RunReport) -> dict[str, Any]:
    """The generations section's partial reads `generations` (the summary; None when the run logged none)."""
    return {"generations": summary(report)}
