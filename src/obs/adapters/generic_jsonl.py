"""Generic logs: a folder with a JSON-lines log (`*.jsonl`) or a JSON array of records, and no run.yaml.

Each log file is one run. Records that carry a step (`step`, `global_step`, `iteration`,
`current_steps`, `_step`, ...) or no id are **metrics**: every numeric key a curve, `null` "not
logged", durations written as `H:MM:SS` read as seconds, other text reported. Records that carry
an id (`id`, `doc_id`, `task_id`, `i`, ...) and at least one true/false field and no step are
**per-item results**: each record is a probe case, its booleans the checks, so two systems
evaluated on the same items are compared case by case. A run.yaml beside such a file is read as a
native run; the registry (`obs.adapters`) hands this module's reader the log it names with
`metrics_file:` (and `step_key:`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from obs.adapters.base import Claim, LoadContext, RunSource, visible_files
from obs.adapters.common import (
    JsonDoc,
    ProbeCollector,
    build_log_metrics,
    element_lines,
    is_number,
    new_run,
    probe_case_from_record,
    read_head,
    read_json_document,
    run_id_for_file,
    salvage_array,
    unread_note,
)
from obs.diagnostics import Diagnostics
from obs.jsonl import iter_jsonl
from obs.ledger import is_reserved
from obs.model import Run
from obs.series_builder import STEP_KEYS
from obs.sourcetree import safe_input

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
TEXT_ROLES = {
    "prompt": ("prompt", "question", "query", "input", "instruction", "problem"),
    "expected": ("expected", "gold", "target", "answer", "reference", "label", "ground_truth"),
    "actual": ("actual", "pred", "prediction", "output", "response", "completion", "generated", "model_answer"),
}
SNIFF_RECORDS = 20
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

    def claim(self, folder: Path, root: Path) -> Claim | None:
        files = [f for f in visible_files(folder, root) if not is_reserved(f, root)]  # decisions.jsonl: the ledger
        logs = [f for f in files if is_log_file(f)]
        used_by_campaign = [f for f in logs if campaign_input(f, root)]
        logs = [f for f in logs if f not in used_by_campaign]
        if not logs and not used_by_campaign:
            return None
        several = len(logs) + len(used_by_campaign) > 1  # ids do not change when a campaign names a file
        sources = tuple(
            RunSource(self.name, folder, (log,), key=log.name, default_id=run_id_for_file(folder, root, log, several))
            for log in logs
        )
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
        run = new_run(source, ctx, title=path.stem if source.default_id.endswith(f"/{path.stem}") else source.path.name)
        read_log_into(run, path, ctx.diags, root=ctx.root)
        return run


def read_log_into(run: Run, path: Path, diags: Diagnostics, *, step_key: str | None = None, root: Path) -> None:
    """Read one log file (JSONL streamed, or a JSON document) into `run`: metrics or probe cases."""
    try:
        if path.stat().st_size == 0:
            diags.error(path, "file is empty; expected JSON records")
            return
    except OSError as exc:
        diags.error(path, f"cannot be read: {exc.strerror}")
        return
    records: Iterator[tuple[int | None, dict[str, Any]]]
    if path.name.lower().endswith(".json"):
        records = iter(_document_records(run, path, diags))
    else:
        records = iter_jsonl(path, diags, partial_last_is_normal=True)
    head = list(itertools.islice(records, SNIFF_RECORDS))
    if not head:
        diags.warning(path, "no JSON records found")
        return
    stream = itertools.chain(head, records)
    id_key = None if step_key else _per_item_id(head)
    if id_key is None:
        build_log_metrics(run, stream, path, diags, step_key=step_key)
        if run.metrics is not None and not run.metrics.series:
            diags.warning(path, "no numeric metrics found")
        return
    collector = ProbeCollector(path, diags)
    for line, rec in stream:
        collector.add(_case(rec, id_key, line, path, run.source_dir, root, diags), line)
    run.probe = collector.probe()
    checks = collector.check_names
    run.notices.append(
        f"{path.name} holds per-item results: each record is a case (id from '{id_key}'), "
        f"checks: {', '.join(checks) or 'none'}."
    )


def _per_item_id(head: list[tuple[int | None, dict[str, Any]]]) -> str | None:
    first = head[0][1]
    if any(k in first for k in STEP_KEYS):
        return None
    id_key = next((k for k in ID_KEYS if k in first and isinstance(first[k], str | int)), None)
    if id_key is None:
        return None
    if not any(isinstance(v, bool) for _, rec in head for v in rec.values()):
        return None
    return id_key


def _case(
    rec: dict[str, Any], id_key: str, line: int | None, path: Path, run_dir: Path, root: Path, diags: Diagnostics
) -> Any:
    shaped: dict[str, Any] = {}
    used: set[str] = {id_key}
    nested = [v for v in rec.values() if isinstance(v, dict)]
    for role, keys in TEXT_ROLES.items():
        if role in rec:
            continue
        for key in keys:
            if key != id_key and _is_text(rec.get(key)):
                shaped[role] = rec[key]
                used.add(key)
                break
        else:  # one level down, e.g. tau-bench's {"task": {"query": ...}}
            found = next((d[k] for k in keys for d in nested if _is_text(d.get(k))), None)
            if found is not None:
                shaped[role] = found
    if id_key in rec:
        shaped["id"] = rec[id_key]
    for key, value in rec.items():
        if key in used:
            continue
        if key == "id" and id_key != "id":
            shaped["source_id"] = value
            continue
        shaped[key] = value
    return probe_case_from_record(shaped, line or 0, path, run_dir, root, diags)


def _is_text(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


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
