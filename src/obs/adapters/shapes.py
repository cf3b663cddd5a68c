"""What a file of records is: a time series, per-item outcomes, or a list of runs.

DESIGN.md §9, "outcomes are not curves": one record per item is an evaluation (accuracy over the
items), not a curve over the line index; one record per run is a list of runs. Read as curves, a
file scoring 53 % showed 90 % (the mean of its last 10 lines). This module decides from the first
records, for the generic reader (and for anything else that gets records without knowing their
shape):

* **metrics** (a time series): the records carry a step (`step`, `global_step`, `epoch`, ...), or
  training quantities (`loss`, `lr`, `grad_norm`), or nothing below applies;
* **items**: every record (ids optional) has an outcome: a true/false value, a 0/1 under an
  outcome name (`correct`, `success`, `acc`, `exact_match`, ...), or a score under a score name
  (`score`, `f1`, `bleu`, ...); nested outcomes are found by dotted path (`result.correct`);
* **runs**: every record names a different run (`run_id`, `run`, `run_name`, `model`, `checkpoint`,
  ...) and carries metric numbers: one run per record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from obs.adapters.shared.probe_cases import probe_case_from_record
from obs.adapters.shared.probe_collector import ProbeCollector
from obs.adapters.shared.values import is_number
from obs.diagnostics import Diagnostics
from obs.model import EvalResult, Run
from obs.series_builder import STEP_KEYS
from obs.vocabulary import tokens

TIME_KEYS = (*STEP_KEYS, "epoch", "iter", "it", "update", "updates", "batch", "timestep")
TRAINING_TOKENS = frozenset({"loss", "lr", "grad", "gradient", "learning", "nll", "perplexity", "ppl"})
ID_KEYS = (
    "id",
    "doc_id",
    "task_id",
    "question_id",
    "sample_id",
    "item_id",
    "instance_id",
    "problem_id",
    "example_id",
    "uid",
    "idx",
    "index",
    "i",
)
RUN_KEYS = (
    "run_id",
    "run",
    "run_name",
    "experiment",
    "experiment_name",
    "exp",
    "exp_name",
    "checkpoint",
    "ckpt",
    "model",
    "model_name",
)
# 0/1 numbers are outcomes only under names like these (a 0/1 `label` or `pred` is a class, not a result)
OUTCOME_TOKENS = frozenset(
    {
        "correct",
        "success",
        "successful",
        "passed",
        "pass",
        "solved",
        "resolved",
        "acc",
        "accuracy",
        "exact",
        "em",
        "match",
        "hit",
        "right",
        "win",
        "won",
        "ok",
    }
)
# ... and never under a name that says it is a fraction (`output_match_rate` may be 0.5 for another item)
FRACTION_TOKENS = frozenset({"rate", "ratio", "fraction", "share", "pct", "percent", "frac"})
SCORE_TOKENS = frozenset({"score", "f1", "bleu", "rouge", "rougel", "similarity", "reward", "grade", "judge"})
# the outcome that is "the file's own accuracy", in this order, when several are present
MAIN_OUTCOMES = (
    "correct",
    "is_correct",
    "success",
    "passed",
    "pass",
    "solved",
    "resolved",
    "accuracy",
    "acc",
    "exact_match",
    "em",
    "match",
    "hit",
)
MIN_SHARE = 0.9  # an outcome must be in at least this share of the records
# a true/false field that describes how the record was made, not how it went (`git_dirty`, `use_cache`): never an
# outcome unless its name says it is one
CONFIG_TOKENS = frozenset(
    {
        "dirty",
        "git",
        "debug",
        "use",
        "enable",
        "enabled",
        "disable",
        "disabled",
        "fp16",
        "bf16",
        "amp",
        "shuffle",
        "resume",
        "resumed",
        "verbose",
        "cuda",
        "gpu",
        "distributed",
        "dry",
        "overwrite",
        "push",
        "cache",
        "cached",
        "deterministic",
        "compile",
        "greedy",
        "streaming",
        "chat",
        "template",
        "lora",
        "quantized",
        "trust",
        "remote",
        "flag",
    }
)
PASS_AT_K = re.compile(r"^pass(@|_at_)\d+$", re.IGNORECASE)  # pass@1, pass_at_10: per item, 0/1 or an estimate


@dataclass(frozen=True)
class Shape:
    kind: str  # metrics | items | runs
    id_key: str | None = None  # items: the id field (None: ids are positions 1..n); runs: the run field
    outcomes: tuple[str, ...] = ()  # items: dotted paths of true/false (or 0/1) outcomes
    scores: tuple[str, ...] = ()  # items: dotted paths of per-item scores
    main: str | None = None  # items: the outcome that is the file's accuracy
    why: str = ""

    @property
    def is_items(self) -> bool:
        return self.kind == "items"


@dataclass
class _Column:
    present: int = 0
    bools: int = 0
    trues: int = 0
    sample_lists: int = 0  # lists of true/false (or 0/1), one per sample of the item (`correct: [8 booleans]`)
    zero_one: int = 0
    numbers: int = 0
    texts: set[str] = field(default_factory=set)
    text_count: int = 0

    def add(self, value: Any, n: int) -> None:
        """Count one record's value (`n` records in all: more distinct texts than that are not kept)."""
        self.present += 1
        if isinstance(value, bool):
            self.bools += 1
            self.trues += value
        elif _is_sample_list(value):
            self.sample_lists += 1
        elif _is_number(value):
            self.numbers += 1
            if value in (0, 1):
                self.zero_one += 1
        elif isinstance(value, str):
            self.text_count += 1
            if len(self.texts) < n + 1:
                self.texts.add(value)


def leaves(record: dict[str, Any], prefix: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every non-mapping value, three levels deep at most."""
    for key, value in record.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and depth < 3:
            yield from leaves(value, f"{path}.", depth + 1)
        else:
            yield path, value


def get_path(record: dict[str, Any], path: str) -> Any:
    """The value at a dotted path (a key with a dot in it is tried whole first)."""
    if path in record:
        return record[path]
    head, dot, rest = path.partition(".")
    while dot:
        if head in record and isinstance(record[head], dict):
            return get_path(record[head], rest)
        more, dot, rest = rest.partition(".")
        head = f"{head}.{more}"
    return None


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _named(path: str, names: frozenset[str]) -> bool:
    return any(t in names for t in tokens(path.rsplit(".", 1)[-1])) or path.rsplit(".", 1)[-1].lower() in names


def classify(records: Sequence[dict[str, Any]]) -> Shape:
    """The shape of a file from its first records (a few dozen are enough): a log when the records carry a
    step; else runs when each names a different run and has no outcome; a log when they hold training
    quantities and no outcome; items when they have outcomes (or scores and ids); else a log in record order."""
    if not records:
        return Shape("metrics", why="no records")
    n = len(records)
    step = next((k for k in TIME_KEYS if sum(k in r for r in records) >= MIN_SHARE * n), None)
    if step is not None:
        return Shape("metrics", why=f"records carry a step ('{step}')")
    cols = _profile(records)
    common = {p: c for p, c in cols.items() if c.present >= MIN_SHARE * n}
    outcomes, scores = _outcomes_and_scores(common)
    run_key = _run_key(common, n)
    # before training quantities: a registry's records hold their `lr`
    if run_key and n >= 2 and not outcomes and any(c.numbers == c.present and p != run_key for p, c in common.items()):
        return Shape("runs", id_key=run_key, why=f"each record names a different run ('{run_key}')")
    training = [p for p, c in common.items() if c.numbers and _named(p, TRAINING_TOKENS)]
    if training and not outcomes:
        return Shape("metrics", why=f"training quantities ({', '.join(sorted(training)[:3])})")
    id_key = next((k for k in ID_KEYS if k in common and _distinct_ids(records, k)), None)
    if outcomes or (scores and id_key):  # a score without ids could be a log in record order
        return _items_shape(id_key, outcomes, scores)
    return Shape("metrics", why="no step, no per-item outcome: read as a log in record order")


def _run_key(common: dict[str, _Column], n: int) -> str | None:
    """The field that names a different run in each record (always text, `n` distinct values), if any."""
    return next(
        (
            k
            for k in RUN_KEYS
            if k in common and common[k].text_count == common[k].present and len(common[k].texts) == n
        ),
        None,
    )


def _items_shape(id_key: str | None, outcomes: list[str], scores: list[str]) -> Shape:
    main = _main(outcomes) or (sorted(scores)[0] if not outcomes else None)
    return Shape(
        "items",
        id_key=id_key,
        outcomes=tuple(sorted(outcomes)),
        scores=tuple(sorted(s for s in scores if s not in outcomes)),
        main=main,
        why=f"each record has an outcome: {', '.join(sorted(outcomes or scores)[:3])}",
    )


def _profile(records: Sequence[dict[str, Any]]) -> dict[str, _Column]:
    """What each dotted path holds across the records: how often, and of which kinds of value."""
    n = len(records)
    cols: dict[str, _Column] = {}
    for rec in records:
        for path, value in leaves(rec):
            cols.setdefault(path, _Column()).add(value, n)
    return cols


def _outcomes_and_scores(common: dict[str, _Column]) -> tuple[list[str], list[str]]:
    """The paths that are per-item outcomes (true/false, 0/1 named as outcomes, lists of per-sample results;
    top-level ones first), and those that are per-item scores."""
    bools = [p for p, c in common.items() if c.bools == c.present and _outcome_like(p, c)]
    zero_one = [
        p
        for p, c in common.items()
        if c.numbers == c.present == c.zero_one and _named_outcome(p) and not _named(p, FRACTION_TOKENS)
    ]
    lists = [p for p, c in common.items() if c.sample_lists == c.present and "." not in p]
    scores = [
        p
        for p, c in common.items()
        if c.numbers == c.present and p not in zero_one and (_named(p, SCORE_TOKENS) or _is_pass_at_k(p))
    ]
    top_level = [p for p in bools + zero_one + lists if "." not in p]
    outcomes = top_level or [p for p in bools + zero_one if _named_outcome(p)]
    return outcomes, scores


SYSTEM_KEYS = (
    "system",
    "model",
    "model_name",
    "model_id",
    "agent",
    "method",
    "policy",
    "checkpoint",
    "variant",
    "submission",
    "run",
    "run_name",
    "run_id",
)
MAX_SYSTEMS = 50


def systems_of(records: Sequence[dict[str, Any]]) -> tuple[str, list[str]] | None:
    """(column, systems in file order) when a file of per-item records scores several systems on shared items: a
    text column naming 2..50 systems, and an id field whose ids repeat across the systems but not within one.
    Each system is then one run (paired with the others on the item ids); read as one run, their outcomes mixed."""
    n = len(records)
    if n < 4:
        return None
    for key in SYSTEM_KEYS:
        values = [r.get(key) for r in records]
        if not all(isinstance(v, str) and v for v in values):
            continue
        systems = list(dict.fromkeys(str(v) for v in values))
        if not 2 <= len(systems) <= MAX_SYSTEMS or len(systems) * 2 > n:
            continue
        by_system: dict[str, list[dict[str, Any]]] = {}
        for r in records:
            by_system.setdefault(str(r[key]), []).append(r)
        if not all(classify(rs).is_items for rs in by_system.values() if len(rs) >= 2):
            continue
        for id_key in ID_KEYS:
            if id_key == key or not all(id_key in r for r in records):
                continue
            within = all(_distinct_ids(rs, id_key) for rs in by_system.values())
            ids = [{r[id_key] for r in rs if isinstance(r[id_key], str | int)} for rs in by_system.values()]
            if within and len(set.intersection(*ids)) > 0 and not _distinct_ids(records, id_key):
                return key, systems
    return None


def _named_outcome(path: str) -> bool:
    return _named(path, OUTCOME_TOKENS) or _is_pass_at_k(path)


def _is_pass_at_k(path: str) -> bool:
    return PASS_AT_K.match(path.rsplit(".", 1)[-1]) is not None


def _outcome_like(path: str, col: _Column) -> bool:
    """A true/false column is an outcome when its name says so, or when it varies and its name is not a setting's
    (`git_dirty`, `use_cache`); a constant one (every record true) says nothing about the items."""
    if _named_outcome(path):
        return True
    if col.trues in (0, col.bools):
        return False
    return not _named(path, CONFIG_TOKENS)


def _is_sample_list(value: Any) -> bool:
    """A list of per-sample results of one item: booleans, or 0 and 1 (HumanEval-style `passed: [...]`)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)) for v in value)
    )


def _distinct_ids(records: Sequence[dict[str, Any]], key: str) -> bool:
    values = [r.get(key) for r in records]
    ok = [v for v in values if isinstance(v, str | int) and not isinstance(v, bool)]
    return len(ok) >= MIN_SHARE * len(values) and len(set(ok)) == len(ok)


def _main(outcomes: Sequence[str]) -> str | None:
    for name in MAIN_OUTCOMES:
        for path in outcomes:
            if path.rsplit(".", 1)[-1].lower() == name:
                return path
    for path in outcomes:
        if _named(path, OUTCOME_TOKENS):
            return path
    return outcomes[0] if outcomes else None


# --------------------------------------------------------------------------- per-item records -> probe cases

TEXT_ROLES = {
    "prompt": ("prompt", "question", "query", "input", "instruction", "problem"),
    # `gt` and the other ground-truth spellings before `answer`: beside a `gt`, an `answer` is the model's
    "expected": (
        "expected",
        "gt",
        "gold",
        "ground_truth",
        "groundtruth",
        "gt_answer",
        "gold_answer",
        "correct_answer",
        "reference_answer",
        "target",
        "answer",
        "reference",
        "label",
    ),
    "actual": (
        "actual",
        "pred",
        "prediction",
        "output",
        "response",
        "completion",
        "generated",
        "model_answer",
        "model_output",
        "answer",
    ),
}


def read_items_into(
    run: Run,
    records: Iterable[tuple[int | None, dict[str, Any]]],
    shape: Shape,
    path: Path,
    diags: Diagnostics,
    *,
    root: Path,
) -> None:
    """Per-item records -> probe cases; the headline is the file's own accuracy (or mean score)."""
    collector = ProbeCollector(path, diags)
    scores: dict[str, list[float]] = {s: [] for s in shape.scores}
    for index, (line, rec) in enumerate(records, 1):
        for s in shape.scores:
            value = get_path(rec, s)
            if is_number(value) and math.isfinite(value):
                scores[s].append(float(value))
        collector.add(_case(rec, shape, index, line, path, run.source_dir, root, diags), line)
    run.probe = collector.probe()
    checks = collector.check_names
    ids = f"id from '{shape.id_key}'" if shape.id_key else "no id field: items are numbered in file order"
    if shape.main in checks and run.probe is not None:
        run.reader_metric, run.reader_metric_from = shape.main, f"{path.name}'s own per-item outcome"
        column = run.probe.table.outcomes.checks[shape.main]  # 1 true, 0 false, -1 absent
        hits = int((column == 1).sum())
        n = int((column >= 0).sum())
        said = f"the headline is the share of items where '{shape.main}' is true ({hits} of {n})"
    else:
        said = "no true/false outcome: the headline is the mean score over the items"
    for s, values in scores.items():
        if values:
            mean = float(np.mean(values))
            stderr = float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else None
            run.evals.append(EvalResult(task=path.stem, metric=s, value=mean, stderr=stderr, n=len(values)))
            if shape.main == s:
                run.reader_metric = f"{path.stem}/{s}"
                run.reader_metric_from = f"{path.name}'s own per-item score"
    run.notices.append(
        f"{path.name} holds per-item results, not a time series ({shape.why}): each of its {len(collector)} "
        f"records is a case ({ids}); checks: {', '.join(checks) or 'none'}"
        + (f"; scores: {', '.join(shape.scores)}" if shape.scores else "")
        + f"; {said}."
    )


def _case(
    rec: dict[str, Any],
    shape: Shape,
    index: int,
    line: int | None,
    path: Path,
    run_dir: Path,
    root: Path,
    diags: Diagnostics,
) -> Any:
    id_key = shape.id_key or ""
    rec = _outcomes_on_top(rec, shape)
    shaped: dict[str, Any] = {}
    used: set[str] = {id_key}
    nested = [v for v in rec.values() if isinstance(v, dict)]
    for role, keys in TEXT_ROLES.items():
        if role in rec:
            continue
        for key in keys:
            if key not in used and _is_text(rec.get(key)):
                shaped[role] = rec[key]
                used.add(key)
                break
        else:  # one level down, e.g. tau-bench's {"task": {"query": ...}}
            found = next((d[k] for k in keys for d in nested if _is_text(d.get(k))), None)
            if found is not None:
                shaped[role] = found
    if id_key in rec:
        shaped["id"] = rec[id_key]
    elif not id_key:
        shaped["id"] = index  # no id field: the position in the file (so files of the same items pair by position)
    for key, value in rec.items():
        if key in used:
            continue
        if key == "id" and id_key != "id":
            shaped["source_id"] = value
            continue
        shaped[key] = value
    return probe_case_from_record(shaped, line or 0, path, run_dir, root, diags)


def _outcomes_on_top(rec: dict[str, Any], shape: Shape) -> dict[str, Any]:
    """Outcomes as top-level true/false fields: 0/1 numbers as booleans, nested ones by their dotted path."""
    out = dict(rec)
    for path in shape.outcomes:
        value = get_path(rec, path)
        if is_number(value) and value in (0, 1):
            out[path] = bool(value)
        elif isinstance(value, bool) and path not in rec:
            out[path] = value
    return out


def _is_text(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)
