"""Side logs: what a trainer writes beside a run's main log, read with that run, never as runs of their own.

An RL trainer's emergence logger (retrain, textpolicy) writes `emergence/steps.jsonl` (one record of
aggregates per step) and `emergence/generations.jsonl` (one record per sampled completion: step, prompt,
completion, reward, tokens, ...) inside the run's folder. Read as logs of their own they became phantom
runs (the generations file's mean reward a headline); inside a run.yaml folder they were not read at all.

Here they belong to their run (discovery attaches every file of a side folder to the run of the folder
above it, and a `generations.jsonl` or `steps.jsonl` beside a run's `metrics.jsonl` or run.yaml to that
run; `RunSource.side` names the ones read):

* `steps.jsonl`: its series join the run's curves as `emergence/<name>` (`steps/<name>` for one beside
  the run's log; the run's own curves keep their names);
* `generations.jsonl`: the run page's generations viewer (`Run.generations`);
* any other file of a side folder is the run's too, and listed as not read.

Not an input format (no `claim`): the registry's formats and discovery use it, so it imports none of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from obs.diagnostics import Diagnostics
from obs.jsonl import iter_jsonl
from obs.model import Generations, Metrics, Run
from obs.safepaths import walk_files
from obs.sanitize import clean_text
from obs.series_builder import SeriesBuilder

SIDE_DIRS = ("emergence",)  # folders of side logs inside a run folder
STEPS = "steps.jsonl"
GENERATIONS = "generations.jsonl"
READ = frozenset({STEPS, GENERATIONS})
GENERATION_TEXT_CAP = 8_000  # characters kept of each prompt and completion
# where each part of a generation record may be (retrain's names first, then common alternatives)
PROMPT_KEYS = ("prompt", "query", "input", "question")
COMPLETION_KEYS = ("completion", "response", "output", "text", "generation")
REWARD_KEYS = ("reward", "score", "rew")
STEP_KEYS = ("step", "global_step", "iteration")
# run-folder markers: a folder holding one is a run (or a spec or campaign) of its own, never a side folder
MARKERS = frozenset({"run.yaml", "metrics.jsonl", "spec.yaml", "campaign.yaml"})


def side_folders(folder: Path, names: frozenset[str] | set[str]) -> list[Path]:
    """The side folders of a run folder (by the names of its subfolders)."""
    return [folder / name for name in SIDE_DIRS if name in names]


def side_files(folder: Path, root: Path) -> list[Path]:
    """Every readable file below a side folder, or [] when one of them marks a run of its own."""
    files = walk_files(folder, root, recursive=True)
    return [] if any(f.name in MARKERS for f in files) else files


def is_read(path: Path) -> bool:
    """Whether obs reads this side file (the others of a side folder are listed as not read)."""
    return path.name in READ


def read_side_logs(run: Run, files: tuple[Path, ...] | list[Path], diags: Diagnostics, *, restarts: str) -> None:
    """Read the run's side logs into it: step aggregates as `<folder>/<name>` curves, generations for the viewer."""
    for path in files:
        if path.name == STEPS:
            _merge_steps(run, path, diags, restarts=restarts)
        elif path.name == GENERATIONS:
            run.generations = read_generations(path, diags)


def _merge_steps(run: Run, path: Path, diags: Diagnostics, *, restarts: str) -> None:
    builder = SeriesBuilder(path, diags, step_key=None, restarts=restarts)
    for line, record in iter_jsonl(path, diags, partial_last_is_normal=True):
        builder.add(record, line)
    side = builder.finish()
    if not side.series:
        if str(path) not in diags.unread:
            diags.warning(path, "no numeric series found in this side log")
        return
    prefix = path.parent.name if path.parent.name in SIDE_DIRS else path.stem  # emergence/x, or steps/x beside
    if run.metrics is None:
        run.metrics = Metrics(source_file=str(path), step_source=side.step_source)
    for name, series in side.series.items():
        run.metrics.series[f"{prefix}/{name}"] = series


def _first(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if key in record:
            return record[key]
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        number = float(value)
        return number if number == number and abs(number) != float("inf") else None
    return None


def _text(value: Any, generations: Generations) -> str:
    if value is None:
        return ""
    text = clean_text(value if isinstance(value, str) else str(value))
    if len(text) > GENERATION_TEXT_CAP:
        generations.cut += 1
        return text[:GENERATION_TEXT_CAP]
    return text


def read_generations(path: Path, diags: Diagnostics) -> Generations:
    """One row per record of a generations log: step, reward, prompt and completion (texts capped)."""
    generations = Generations(source_file=str(path))
    for line, record in iter_jsonl(path, diags, partial_last_is_normal=True):
        prompt, completion = _first(record, PROMPT_KEYS), _first(record, COMPLETION_KEYS)
        if prompt is None and completion is None:
            generations.without_text += 1
            continue
        generations.step.append(_number(_first(record, STEP_KEYS)))
        generations.reward.append(_number(_first(record, REWARD_KEYS)))
        generations.prompt.append(_text(prompt, generations))
        generations.completion.append(_text(completion, generations))
        generations.line.append(line)
    if generations.without_text:
        diags.warning(
            path,
            f"{generations.without_text} record(s) have no prompt or completion "
            f"({'/'.join(PROMPT_KEYS[:2])}, {'/'.join(COMPLETION_KEYS[:2])}): not shown",
        )
    if generations.cut:
        diags.info(path, f"{generations.cut} text(s) longer than {GENERATION_TEXT_CAP} characters shown cut there")
    return generations
