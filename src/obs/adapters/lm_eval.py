"""lm-evaluation-harness results: an evaluation run with per-task metrics, and per-sample cases.

Each results file (`results_<date>.json`, or any JSON document with the harness's `results` +
`versions`/`config` layout) is one run. Both layouts are read: v0.3 (`"acc"`, `"acc_stderr"`) and
v0.4+ (`"acc,none"`, `"acc_stderr,none"`, one pair per filter). Groups (`groups`, `group_subtasks`)
are evaluations too; their members are listed in the provenance. `samples_<task>_<date>.jsonl`
beside the results become probe cases, id `<task>/<doc_id>`, so two models evaluated on the same
documents are compared case by case.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from obs.adapters.base import CASE_SECTIONS, Claim, Holds, LoadContext, RunSource, visible_files
from obs.adapters.shared.ids import folder_id, new_run, run_id_for_file, unread_note
from obs.adapters.shared.json_docs import read_json_document, salvage_object
from obs.adapters.shared.probe_cases import probe_case_from_record
from obs.adapters.shared.probe_collector import ProbeCollector
from obs.adapters.shared.text_files import read_head
from obs.adapters.shared.values import is_number, iso_from_timestamp
from obs.diagnostics import Diagnostics
from obs.jsonl import iter_jsonl
from obs.model import EvalResult, Probe, Run

RESULTS_NAME = re.compile(r"^results.*\.json$")
SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+?)(?:_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.:]+))?\.jsonl$")
RESULTS_DATE = re.compile(r"(\d{4}-\d{2}-\d{2}T[\d\-.:]+)$")
HEAD_MARKERS = (b'"versions"', b'"n-shot"', b'"group_subtasks"', b'"configs"', b'"config"')
PROVENANCE_KEYS = (
    "git_hash",
    "upper_git_hash",
    "transformers_version",
    "lm_eval_version",
    "model_source",
    "chat_template_sha",
    "system_instruction_sha",
    "fewshot_as_multiturn",
    "max_length",
)
SAMPLE_TEXT_KEYS = ("arguments", "target", "resps", "filtered_resps", "doc", "filter", "metrics", "doc_id")


SAMPLE_FIELDS = frozenset({"resps", "filtered_resps"})  # what only the harness's per-sample records hold ...
SAMPLE_CONTEXT = frozenset({"doc", "arguments", "target"})  # ... beside a doc_id and one of these


def is_samples_file(path: Path) -> bool:
    """`samples_<task>_<date>.jsonl`, or any JSON-lines file whose first record has the harness's per-sample
    fields (`doc_id`, `resps` or `filtered_resps`, and `doc`, `arguments` or `target`): a dump saved under another
    name is the same evaluation, not a curve over the line index."""
    if SAMPLES_NAME.match(path.name):
        return True
    if not path.name.lower().endswith(".jsonl"):
        return False
    if b'"doc_id"' not in read_head(path, 65536):  # the harness writes doc_id first: most logs stop here
        return False
    first = read_head(path, 1 << 20).split(b"\n", 1)[0]
    if b'"doc_id"' not in first:  # cheap refusal before parsing a line that may be anything
        return False
    try:
        rec = json.loads(first)
    except (ValueError, RecursionError):  # a line nested deeper than the parser's stack is no sample record
        return False
    return (
        isinstance(rec, dict)
        and "doc_id" in rec
        and bool(SAMPLE_FIELDS & rec.keys())
        and bool(SAMPLE_CONTEXT & rec.keys())
    )


def _task_of(path: Path) -> str:
    m = SAMPLES_NAME.match(path.name)
    return m.group("task") if m else path.stem


def is_results_file(path: Path) -> bool:
    """`results*.json` with a `results` key (or empty: reported when read), `results_<date>.json` whatever it
    holds (the harness's own name: a damaged one is reported when read, not skipped without a word); other
    names need the full layout."""
    if RESULTS_NAME.match(path.name) and RESULTS_DATE.search(path.stem):
        return True
    head = read_head(path, 1 << 20)
    if RESULTS_NAME.match(path.name):
        return b'"results"' in head or not head.strip()
    return b'"results"' in head and any(m in head for m in HEAD_MARKERS)


class LmEvalAdapter:
    name = "lm_eval"
    holds = Holds(
        "lm-evaluation-harness results",
        "the results file (alone in its folder)",
        cases="the samples_<task>_<date>.jsonl files lm-eval writes beside the results with --log_samples",
        sections=CASE_SECTIONS,
    )

    def claim(self, folder: Path, root: Path) -> Claim | None:
        files = visible_files(folder, root)
        results = [f for f in files if f.suffix == ".json" and is_results_file(f)]
        if not results:
            return samples_only_claim(self.name, folder, root, files)
        samples = [f for f in files if is_samples_file(f)]
        several = len(results) > 1
        sources = []
        used: set[Path] = set(results)
        for res in results:
            mine = samples_for(res, samples, several)
            used.update(mine)
            sources.append(
                RunSource(
                    self.name,
                    folder,
                    (res, *mine),
                    key=res.name,
                    default_id=run_id_for_file(folder, root, res, several),
                )
            )
        notes = []
        note = unread_note([f for f in files if f not in used], folder, "not lm-eval output")
        if note:
            notes.append(note)
        return Claim(runs=tuple(sources), owned_dirs=(), notes=tuple(notes))

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        if not source.key:  # per-sample files without their results file
            return load_samples_only(source, ctx)
        results_path = source.path / source.key if source.key else source.files[0]
        run = new_run(source, ctx, title=results_path.stem)
        load_results(run, results_path, ctx.diags)
        samples = [p for p in source.files if p != results_path and is_samples_file(p)]
        if samples:
            run.probe = load_samples(samples, source.path, ctx.root, ctx.diags)
        return run


def samples_only_claim(name: str, folder: Path, root: Path, files: list[Path]) -> Claim | None:
    """`samples_<task>_<date>.jsonl` alone in a folder (no results file): one evaluation run per date stamp,
    read from its samples. Without this they were a generic log: a curve over the line index."""
    samples = [f for f in files if is_samples_file(f)]
    if not samples:
        return None
    stamps: dict[str, list[Path]] = {}
    for f in samples:
        m = SAMPLES_NAME.match(f.name)
        stamps.setdefault((m.group("date") if m else None) or "", []).append(f)
    several = len(stamps) > 1
    sources = tuple(
        RunSource(
            name,
            folder,
            tuple(group),
            key="",
            default_id=f"{folder_id(folder, root)}/samples_{stamp}" if several and stamp else folder_id(folder, root),
        )
        for stamp, group in sorted(stamps.items())
    )
    notes = [f"per-sample files without a results file: {len(samples)} file(s), {len(stamps)} run(s)"]
    note = unread_note([f for f in files if f not in samples], folder, "not lm-eval output")
    if note:
        notes.append(note)
    return Claim(runs=sources, owned_dirs=(), notes=tuple(notes))


def load_samples_only(source: RunSource, ctx: LoadContext) -> Run:
    """An evaluation run known from its per-sample files: each document a case, each metric a check."""
    files = sorted(source.files)
    tasks = sorted({_task_of(f) for f in files})
    run = new_run(source, ctx, title=" + ".join(tasks) or source.path.name)
    run.probe = load_samples(files, source.path, ctx.root, ctx.diags)
    m = SAMPLES_NAME.match(files[0].name)
    if m and m.group("date"):
        run.date = m.group("date")
    n = run.probe.size if run.probe else 0
    run.notices.append(
        "An evaluation run (lm-evaluation-harness) read from its per-sample files "
        f"({', '.join(f.name for f in files)}) without their results file: {n} documents, each a case; "
        "the headline is the share of documents a metric marks correct, not a curve."
    )
    return run


def samples_for(results: Path, samples: list[Path], several: bool) -> list[Path]:
    """The per-sample files written with a results file: same date stamp, or all when it is alone."""
    m = RESULTS_DATE.search(results.stem)
    if m:
        stamp = m.group(1)
        return [s for s in samples if s.stem.endswith(stamp)]
    return [] if several else list(samples)


def load_results(run: Run, path: Path, diags: Diagnostics) -> None:
    doc = read_json_document(path, diags)
    if doc is None:
        run.notices.append(f"{path.name} could not be read: no task metrics.")
        return
    data: Any = doc.data
    if not doc.ok:
        salvaged = salvage_object(doc.text, "results")
        if isinstance(salvaged, dict):
            data = {"results": salvaged}
            for key in ("groups", "group_subtasks", "n-samples", "higher_is_better", "versions", "n-shot"):
                part = salvage_object(doc.text, key)
                if isinstance(part, dict):
                    data[key] = part
            kept = _salvage_scalars(doc.text)
            config = {k: kept.pop(k) for k in ("model", "model_args") if k in kept}
            if config and not isinstance(data.get("config"), dict):
                data["config"] = config
            data.update(kept)
            diags.warning(path, "the 'results' section before the damage was intact and was read")
            said = f" ({', '.join(sorted([*config, *kept]))} kept from before the damage)" if config or kept else ""
            run.notices.append(
                f"{path.name} is damaged or truncated: task metrics were recovered, the details after the damage "
                f"were not{said}."
            )
        else:
            run.notices.append(f"{path.name} is damaged or truncated: no task metrics could be read.")
            return
    if not isinstance(data, dict):
        diags.error(path, f"expected a JSON object with 'results', found {type(data).__name__}", 1)
        return
    results = data.get("results")
    if not isinstance(results, dict):
        diags.error(path, "no 'results' mapping: not an lm-eval results file?", 1)
        return
    groups: dict[str, Any] = _mapping(data, "groups")
    n_samples: dict[str, Any] = _mapping(data, "n-samples")
    hib: dict[str, Any] = _mapping(data, "higher_is_better")
    seen: set[tuple[str, str]] = set()
    for section in (results, groups):
        for task, metrics in section.items():
            if not isinstance(metrics, dict):
                diags.warning(path, f"results for '{task}' should be an object; skipped")
                continue
            for ev in task_evals(str(task), metrics, n_samples.get(task), hib.get(task)):
                if (ev.task, ev.metric) not in seen:
                    seen.add((ev.task, ev.metric))
                    run.evals.append(ev)
    if not run.evals:
        diags.warning(path, "no numeric task metrics in 'results'")
    _run_fields(run, data, path)
    if doc.ok:
        run.status = "finished"  # the harness writes its results file once, when the evaluation is done


SALVAGED_SCALARS = ("model_name", "model", "model_args", "date", *PROVENANCE_KEYS)
_SCALAR = r'\s*:\s*("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false)(?=\s*[,}\]])'


def _salvage_scalars(text: str) -> dict[str, Any]:
    """The identity a truncated results file still holds before its damage (the model, its arguments, the date,
    versions): each key's first complete text or number; a value the damage cut is not read."""
    out: dict[str, Any] = {}
    for key in SALVAGED_SCALARS:
        m = re.search('"' + re.escape(key) + '"' + _SCALAR, text)
        if m is None:
            continue
        try:
            out[key] = json.loads(m.group(1))
        except ValueError:
            continue
    return out


def _mapping(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def task_evals(task: str, metrics: dict[str, Any], n_samples: Any, hib: Any) -> list[EvalResult]:
    """One task's `results` entry -> EvalResults (v0.3 `acc`/`acc_stderr`, v0.4 `acc,none`/`acc_stderr,none`)."""
    n: int | None = None
    if isinstance(n_samples, dict):
        eff = n_samples.get("effective", n_samples.get("original"))
        n = int(eff) if is_number(eff) and math.isfinite(eff) else None
    elif is_number(n_samples) and math.isfinite(n_samples):
        n = int(n_samples)
    out = []
    for key, value in metrics.items():
        if not is_number(value) or key == "alias":
            continue
        metric, _, flt = key.partition(",")
        if metric.endswith("_stderr"):
            continue
        stderr_raw = metrics.get(f"{metric}_stderr,{flt}" if flt else f"{metric}_stderr")
        stderr = float(stderr_raw) if is_number(stderr_raw) else None
        name = metric if flt in ("", "none") else f"{metric},{flt}"
        higher: bool | None = None
        if isinstance(hib, dict) and isinstance(hib.get(metric), bool):
            higher = hib[metric]
        out.append(EvalResult(task=task, metric=name, value=float(value), stderr=stderr, n=n, higher_is_better=higher))
    return out


def _run_fields(run: Run, data: dict[str, Any], path: Path) -> None:
    config = data.get("config")
    if isinstance(config, dict):
        run.config.update({k: v for k, v in config.items() if v is not None and v != []})
    n_shot = data.get("n-shot")
    if isinstance(n_shot, dict) and n_shot:
        run.config["n-shot"] = n_shot
    model_name = data.get("model_name")
    if not model_name and isinstance(config, dict):
        args = str(config.get("model_args") or "")
        m = re.search(r"(?:pretrained|model)=([^,]+)", args)
        model_name = m.group(1) if m else None
    if model_name:
        run.model["name"] = str(model_name)
        run.title = f"{model_name} · {path.stem}"
    run.date = iso_from_timestamp(data.get("date")) or run.date
    for key in PROVENANCE_KEYS:
        if data.get(key) is not None:
            run.provenance[key] = data[key]
    for key in ("task_hashes", "versions"):
        if isinstance(data.get(key), dict) and data[key]:
            run.provenance["task_versions" if key == "versions" else key] = data[key]
    subtasks = data.get("group_subtasks")
    if isinstance(subtasks, dict):
        groups = {g: members for g, members in subtasks.items() if isinstance(members, list) and members}
        if groups:
            run.provenance["groups"] = groups
    elapsed = data.get("total_evaluation_time_seconds")
    try:
        if elapsed is not None:
            run.summary["total_evaluation_time_seconds"] = float(elapsed)
    except (TypeError, ValueError):
        pass
    run.notices.append("An evaluation run (lm-evaluation-harness): task metrics, no training curves.")


def load_samples(paths: list[Path], run_dir: Path, root: Path, diags: Diagnostics) -> Probe | None:
    """samples_*.jsonl -> one probe case per (task, doc); filters become separate checks of the case."""
    collector = ProbeCollector(paths[0], diags)
    for path in sorted(paths):
        task = _task_of(path)
        cases: dict[str, tuple[int, dict[str, Any]]] = {}
        for line, rec in iter_jsonl(path, diags, partial_last_is_normal=True):
            doc_id = rec.get("doc_id")
            if doc_id is None or isinstance(doc_id, bool | dict | list):
                diags.warning(path, "sample has no 'doc_id'; skipped", line)
                continue
            case_id = f"{task}/{doc_id}"
            flt = rec.get("filter")
            suffix = "" if flt in (None, "none") else f",{flt}"
            first = cases.get(case_id)
            merged = first[1] if first else {"id": case_id, "family": task}
            _sample_into(merged, rec, suffix)
            if first is None:
                cases[case_id] = (line, merged)
        before = len(collector)
        for line, merged in cases.values():
            collector.path = path
            collector.add(probe_case_from_record(merged, line, path, run_dir, root, diags), line)
        if len(collector) == before:
            diags.warning(path, "no per-sample cases found")
    return collector.probe()


def _sample_into(merged: dict[str, Any], rec: dict[str, Any], suffix: str) -> None:
    """One filter's sample record merged into its document's case: its results, texts and hashes."""
    _results_into(merged, rec, suffix)
    _texts_into(merged, rec, suffix)
    for key in ("doc_hash", "prompt_hash", "target_hash"):
        if isinstance(rec.get(key), str):
            merged[key] = rec[key]


def _results_into(merged: dict[str, Any], rec: dict[str, Any], suffix: str) -> None:
    """The record's metrics (those it lists under `metrics`, else every other key) named `<metric><suffix>`:
    true/false and 0/1 as checks, lists of them as per-sample results (pass@k), other numbers as scores."""
    metric_names = rec.get("metrics") if isinstance(rec.get("metrics"), list) else None
    candidates = metric_names or [k for k in rec if k not in SAMPLE_TEXT_KEYS and not k.endswith("_hash")]
    for name in candidates:
        if not isinstance(name, str) or name not in rec:
            continue
        value = rec[name]
        key = f"{name}{suffix}"
        if isinstance(value, bool):
            merged[key] = value
        elif is_number(value) and value in (0, 1):
            merged[key] = bool(value)
        elif isinstance(value, list) and value and all(isinstance(v, bool) or v in (0, 1) for v in value):
            merged[key] = [bool(v) for v in value]  # one result per sample (repeats): pass@k
        elif is_number(value):
            merged.setdefault("scores", {})[key] = value


def _texts_into(merged: dict[str, Any], rec: dict[str, Any], suffix: str) -> None:
    """The prompt and target (the first filter's), and the answer: a filter whose answer differs from the
    first's keeps it under `actual_by_filter`."""
    if "prompt" not in merged:
        prompt = _prompt(rec.get("arguments"))
        if prompt is not None:
            merged["prompt"] = prompt
    if "expected" not in merged and rec.get("target") is not None:
        target = rec["target"]
        merged["expected"] = target if isinstance(target, str) else _short(target)
    actual = _actual(rec.get("filtered_resps"))
    if actual is None:
        actual = _actual(rec.get("resps"))
    if actual is not None:
        if "actual" not in merged:
            merged["actual"] = actual
        elif merged["actual"] != actual and suffix:
            merged.setdefault("actual_by_filter", {})[suffix.lstrip(",")] = actual


def _prompt(arguments: Any) -> str | None:
    """v0.4 `[[context, continuation or gen_kwargs], ...]`; newer `{"gen_args_0": {"arg_0": context}}`."""
    if isinstance(arguments, dict):
        first = next(iter(arguments.values()), None)
        if isinstance(first, dict):
            arg0 = first.get("arg_0")
            return arg0 if isinstance(arg0, str) else None
        return None
    if isinstance(arguments, list) and arguments:
        first = arguments[0]
        if isinstance(first, list) and first and isinstance(first[0], str):
            return first[0]
        if isinstance(first, str):
            return first
    return None


def _actual(resps: Any) -> str | None:
    """The model's answer: generated text, or for multiple choice the index of the most likely choice."""
    if isinstance(resps, str):
        return resps
    if not isinstance(resps, list) or not resps:
        return None
    flat = [r[0] if isinstance(r, list) and len(r) == 1 else r for r in resps]
    if all(isinstance(r, str) for r in flat):
        return str(flat[0])
    scores = []
    for r in flat:
        if isinstance(r, list) and r and is_number(r[0]):
            scores.append(float(r[0]))
        elif is_number(r):
            scores.append(float(r))
        else:
            return _short(resps)
    if len(scores) > 1:
        best = max(range(len(scores)), key=lambda i: scores[i])
        return f"choice {best}"
    return _short(resps)


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 2000 else text[:2000] + "…"
