"""Generic logs: a folder with a JSON-lines log (`*.jsonl`) or a JSON array of records, and no run.yaml.

Each log file is one run, except a file whose records are runs. What the records are is decided
by `obs.adapters.shapes` from the first ones (DESIGN.md §9, "outcomes are not curves"):

* **metrics** (records carry a step, or training quantities): every numeric key a curve, `null`
  "not logged", durations written as `H:MM:SS` read as seconds, other text reported;
* **per-item results** (every record has an outcome: true/false, a 0/1 under an outcome name, a
  score; ids optional, nested outcomes by dotted path): each record is a probe case, so two systems
  evaluated on the same items are compared case by case, and the headline is the file's own
  accuracy (the share of items whose main outcome is true), never the mean of the last lines;
* **runs** (every record names a different run and carries metrics): one run per record.

A run.yaml beside such a file is read as a native run; the registry (`obs.adapters`) hands this
module's reader the log it names with `metrics_file:` (and `step_key:`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from obs.adapters.base import CASE_SECTIONS, Claim, Holds, LoadContext, RunSource, visible_files
from obs.adapters.session_shape import is_learning_file
from obs.adapters.shapes import Shape, classify, leaves, read_items_into, systems_of
from obs.adapters.shared.ids import new_run, run_id_for_file, unread_note
from obs.adapters.shared.json_docs import JsonDoc, element_lines, read_json_document, salvage_array
from obs.adapters.shared.log_records import build_log_metrics
from obs.adapters.shared.text_files import read_head
from obs.adapters.shared.values import is_number
from obs.diagnostics import Diagnostics
from obs.jsonl import iter_jsonl
from obs.ledger import is_reserved
from obs.model import Run
from obs.safepaths import safe_input
from obs.vocabulary import is_stage_key

LOG_SUFFIXES = (".jsonl", ".ndjson")
NOT_LOGS = {
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "adapter_config.json",
    "preprocessor_config.json",
    "vocab.json",
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "manifest.json",
}
ID_KEYS = ("id", "doc_id", "task_id", "question_id", "sample_id", "item_id", "uid", "idx", "index", "i")
SNIFF_RECORDS = 50
RUNS_SNIFF_BYTES = 4 << 20  # a file is checked for records-that-are-runs (in the claim) only up to this size
MAX_RECORD_RUNS = 500
_ARRAY_START = re.compile(rb"^\[\s*(\{|\])")
_RECORDS_KEY = re.compile(rb'"([^"\\]{1,64})"\s*:\s*\[\s*\{')


def is_log_file(path: Path) -> bool:
    """A JSON-lines file, or a JSON document that is (or holds) an array of records."""
    name = path.name.lower()
    if name.endswith(LOG_SUFFIXES):
        return True
    if not name.endswith(".json") or name in NOT_LOGS or name.endswith(".index.json"):
        return False
    head = read_head(path, 65536).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"["):
        return _ARRAY_START.match(head) is not None
    return head.startswith(b"{") and _RECORDS_KEY.search(head) is not None


def campaign_input(path: Path, root: Path) -> bool:
    """A results file that a campaign.yaml above it names (its `paired:` comparisons): not a run of its own."""
    root = root.resolve()
    folder = path.parent.resolve()
    placed = folder / path.name  # the file where the campaign sees it (not where a link leads)
    while True:
        campaign = safe_input(folder / "campaign.yaml", root)
        if campaign is not None:
            rel = placed.relative_to(folder).as_posix()
            try:
                return rel in campaign.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return False
        if folder == root or root not in folder.parents:
            return False
        folder = folder.parent


class GenericJsonlAdapter:
    name = "generic_jsonl"
    holds = Holds("JSON logs", "the log (alone in its folder)", records="the log's records", sections=CASE_SECTIONS)

    def claim(self, folder: Path, root: Path) -> Claim | None:
        files = [f for f in visible_files(folder, root) if not is_reserved(f, root)]  # decisions.jsonl: the ledger
        logs = [f for f in files if is_log_file(f) and not is_learning_file(f)]  # agent sessions: not runs
        used_by_campaign = [f for f in logs if campaign_input(f, root)]
        logs = [f for f in logs if f not in used_by_campaign]
        if not logs and not used_by_campaign:
            return None
        several = len(logs) + len(used_by_campaign) > 1  # ids do not change when a campaign names a file
        sources_list: list[RunSource] = []
        for log in logs:
            file_id = run_id_for_file(folder, root, log, several)
            sniffed = _sniffed_records(log)
            runs = record_runs(log, sniffed)
            systems = systems_of(sniffed) if runs is None and sniffed else None
            if systems is not None:
                column, system_names = systems
                sources_list += [
                    RunSource(
                        self.name,
                        folder,
                        (log,),
                        key=log.name,
                        default_id=f"{file_id}/{_safe_name(name)}",
                        part=(column, name),
                    )
                    for name in system_names
                ]
                continue
            if runs is None:
                sources_list.append(RunSource(self.name, folder, (log,), key=log.name, default_id=file_id))
                continue
            for i, name in enumerate(runs):
                sources_list.append(
                    RunSource(self.name, folder, (log,), key=log.name, default_id=f"{file_id}/{name}", record=i)
                )
        sources = tuple(sources_list)
        notes = []
        if used_by_campaign:
            names = ", ".join(f.name for f in used_by_campaign)
            notes.append(f"{names}: per-item results named in a campaign.yaml (paired:), read there")
        note = unread_note([f for f in files if f not in logs and f not in used_by_campaign], folder, "not a JSON log")
        if note:
            notes.append(note)
        return Claim(runs=sources, owned_dirs=(), notes=tuple(notes))

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        path = source.path / source.key if source.key else source.files[0]
        if source.record is not None:
            run = new_run(source, ctx, title=source.default_id.rsplit("/", 1)[-1])
            read_record_run(run, path, source.record, ctx.diags)
            return run
        if source.part is not None:
            return _load_system(source, path, ctx)
        run = new_run(source, ctx, title=path.stem if source.default_id.endswith(f"/{path.stem}") else source.path.name)
        read_log_into(run, path, ctx.diags, root=ctx.root, same_step=ctx.config.same_step, restarts=ctx.config.restarts)
        return run


def read_log_into(
    run: Run,
    path: Path,
    diags: Diagnostics,
    *,
    step_key: str | None = None,
    root: Path,
    same_step: str = "mean",
    restarts: str = "last",
    keep: Callable[[dict[str, Any]], bool] | None = None,
) -> None:
    """Read one log file (JSONL streamed, or a JSON document) into `run`: metrics or probe cases (`keep`: only the
    records it accepts, e.g. one system's)."""
    try:
        if path.stat().st_size == 0:
            diags.error(path, "file is empty; expected JSON records")
            return
    except OSError as exc:
        diags.unreadable(path, exc)
        return
    records: Iterator[tuple[int | None, dict[str, Any]]]
    if path.name.lower().endswith(".json"):
        records = iter(_document_records(run, path, diags))
    else:
        records = iter_jsonl(path, diags, partial_last_is_normal=True)
    if keep is not None:
        records = ((line, rec) for line, rec in records if keep(rec))
    head = list(itertools.islice(records, SNIFF_RECORDS))
    if not head:
        diags.warning(path, "no JSON records found")
        return
    stream = itertools.chain(head, records)
    shape = classify([rec for _, rec in head]) if not step_key else Shape("metrics")
    if not shape.is_items:
        if shape.kind == "runs":
            run.notices.append(
                f"{path.name} lists runs, one per record ({shape.why}); read here as one log in record order."
            )
        build_log_metrics(run, stream, path, diags, step_key=step_key, same_step=same_step, restarts=restarts)
        if run.metrics is not None and not run.metrics.series:
            diags.warning(path, "no numeric metrics found")
        return
    read_items_into(run, stream, shape, path, diags, root=root)


def _sniffed_records(path: Path) -> list[dict[str, Any]] | None:
    """A small log's records for the claim's look at its shape (runs, systems); None for a large one."""
    try:
        if path.stat().st_size > RUNS_SNIFF_BYTES:
            return None
    except OSError:
        return None
    return [rec for _, rec in _quiet_records(path)]


def _load_system(source: RunSource, path: Path, ctx: LoadContext) -> Run:
    """One system of a file scoring several on shared items: its records only, paired with the others by item id."""
    assert source.part is not None
    column, name = source.part
    run = new_run(source, ctx, title=name)
    if column.startswith("model"):
        run.model["name"] = name
    run.config[column] = name
    read_log_into(
        run,
        path,
        ctx.diags,
        root=ctx.root,
        same_step=ctx.config.same_step,
        restarts=ctx.config.restarts,
        keep=lambda rec: rec.get(column) == name,
    )
    run.notices.append(
        f"{path.name} scores several systems on shared items (column '{column}'): this run is the records of "
        f"'{name}', one run per system, so the systems are compared case by case on the item ids."
    )
    return run


def record_runs(path: Path, sniffed: list[dict[str, Any]] | None = None) -> list[str] | None:
    """The run names of a file whose records are runs (one per record), else None. Small files only."""
    records = sniffed if sniffed is not None else _sniffed_records(path)
    if records is None or len(records) < 2 or len(records) > MAX_RECORD_RUNS:
        return None
    shape = classify(records)
    if shape.kind != "runs" or shape.id_key is None:
        return None
    return [_safe_name(str(rec.get(shape.id_key))) for rec in records]


def _safe_name(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._+=@-]+", "-", text).strip("-.")
    return cleaned[:80] or "run"


def _quiet_records(path: Path) -> list[tuple[int | None, dict[str, Any]]]:
    """Records of a log, problems not reported (the claim only sniffs; loading reports them)."""
    quiet = Diagnostics()
    if path.name.lower().endswith(".json"):
        return list(_document_records(Run(id="", source_dir=path.parent), path, quiet))
    return list(iter_jsonl(path, quiet, partial_last_is_normal=True))


def read_record_run(run: Run, path: Path, index: int, diags: Diagnostics) -> None:
    """One record of a file that lists runs: its numbers are the run's final values, its text its settings."""
    records = (
        _quiet_records(path)
        if path.name.lower().endswith(".json")
        else list(iter_jsonl(path, diags, partial_last_is_normal=True))
    )
    if index >= len(records):
        diags.error(path, f"record {index + 1} is gone (the file has {len(records)} records now)")
        return
    line, rec = records[index]
    shape = classify([r for _, r in records])
    for name, value in leaves(rec):
        if isinstance(value, bool):
            run.config[name] = value
        elif is_number(value):
            run.summary[name] = float(value)
        elif isinstance(value, str) and name != shape.id_key:
            if len(value) <= 500:
                run.config[name] = value
        elif value is not None:
            run.other_fields[name] = value
    stage = next((run.config[k] for k in run.config if is_stage_key(k) and isinstance(run.config[k], str)), None)
    if stage:
        run.tags.append(f"stage:{stage}")
    run.provenance["record"] = f"{path.name}" + (f", line {line}" if line else f", record {index + 1}")
    run.notices.append(
        f"This run is record {index + 1} of {path.name}, which lists {len(records)} runs, one per record "
        f"(named by '{shape.id_key}'): its numbers are final values, not curves."
    )


def _document_records(run: Run, path: Path, diags: Diagnostics) -> Iterable[tuple[int | None, dict[str, Any]]]:
    """A JSON array of records, or an object holding one (the other top-level fields: summary, config)."""
    doc = read_json_document(path, diags)
    if doc is None:
        return []
    key, items = _records_of(doc, run, path, diags)
    lines = element_lines(doc.text, key)
    out: list[tuple[int | None, dict[str, Any]]] = []
    skipped = 0
    first_skipped: int | None = None
    for i, item in enumerate(items):
        line = lines[i] if i < len(lines) else None
        if isinstance(item, dict):
            out.append((line, item))
        else:
            skipped += 1
            first_skipped = first_skipped or line
    if skipped:
        diags.warning(
            path, f"{skipped} element(s) are not JSON objects (first at line {first_skipped}); skipped", first_skipped
        )
    return out


def _records_of(doc: JsonDoc, run: Run, path: Path, diags: Diagnostics) -> tuple[str | None, list[Any]]:
    if not doc.ok:
        stripped = doc.text.lstrip("\ufeff \t\r\n")
        key = None
        if not stripped.startswith("["):
            m = re.search(r'"([^"\\]{1,64})"\s*:\s*\[\s*\{', doc.text)
            if m is None:
                return None, []
            key = m.group(1)
        items, stop = salvage_array(doc.text, key)
        if items:
            diags.warning(path, f"the {len(items)} records before the damage were read; the rest was not", stop)
            run.notices.append(f"{path.name} is damaged or truncated: only its first {len(items)} records are shown.")
        return key, items
    data = doc.data
    if isinstance(data, list):
        return None, data
    if not isinstance(data, dict):
        diags.error(path, f"expected an array of records, found {type(data).__name__}", 1)
        return None, []
    lists = [(k, v) for k, v in data.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v[:5])]
    if not lists:
        diags.error(path, "no array of records found in this JSON object", 1)
        return None, []
    key, items = max(lists, key=lambda kv: len(kv[1]))
    for k, v in data.items():
        if k == key:
            continue
        if is_number(v) or isinstance(v, bool):
            run.summary[k] = float(v)
        elif isinstance(v, str) and len(v) <= 500:
            run.config[k] = v
        elif v is not None and len(repr(v)) <= 4000:
            run.other_fields[k] = v
        elif v is not None:
            diags.info(path, f"top-level field '{k}' is large and is not shown", 1)
    return key, items
