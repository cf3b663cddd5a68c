"""Helpers shared by the adapters of foreign formats (HF Trainer, MLflow, lm-eval, W&B, generic logs).

Each format has its own module; what they have in common lives here: turning a stream of loosely
typed log records into the model (durations written as text, summary rows, train and eval rows
logged at the same step, TRL's renamed keys), finding the line of each element of a JSON document
so a diagnostic can point at it, salvaging the readable part of a truncated JSON document, and
saying which files of a folder were not read (nothing is dropped silently).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import orjson

from obs.adapters.base import LoadContext, RunSource
from obs.diagnostics import Diagnostics, Severity
from obs.jsonl import MAX_DEPTH, lenient_decoder, lenient_loads, repeated_keys, too_deep
from obs.jsontypes import type_name
from obs.model import Probe, ProbeCase, Run, chosen_sample
from obs.probetable import CaseText, PlainCases, ProbeTableBuilder
from obs.sanitize import CLEANED, UNSAFE_TEXT, Findings, clean_text, clean_tree, json_may_hold_unsafe
from obs.series_builder import STEP_KEYS, SeriesBuilder
from obs.sourcetree import is_inside, real, shown_name
from obs.textbounds import MAX_CHARS, bound_markdown
from obs.vocabulary import names_a_duration

# ---------------------------------------------------------------------------------------------------------------
# run ids and file accounting


def folder_id(folder: Path, root: Path) -> str:
    """The folder path relative to the source root: the default id of a run found there (text: a byte of a
    folder name that is not UTF-8 is U+FFFD)."""
    try:
        rel = real(folder).relative_to(real(root))  # as Path.resolve(); remembered during a walk of the tree
    except ValueError:
        return shown_name(folder.name)
    text = rel.as_posix()
    return shown_name(text if text not in ("", ".") else folder.name)


def new_run(source: RunSource, ctx: LoadContext, title: str = "") -> Run:
    """The empty run an adapter fills: its id, folder, format, spec and campaign as discovery found them."""
    return Run(
        id=source.default_id or source.path.name,
        source_dir=source.path,
        adapter=source.adapter,
        spec=source.spec,
        campaign=source.campaign,
        title=title,
        input_files=list(source.files),
        diagnostics=ctx.diags,
    )


def run_id_for_file(folder: Path, root: Path, file: Path, several: bool) -> str:
    """One run per file: the folder id when the file is alone, `folder/stem` when it has siblings."""
    base = folder_id(folder, root)
    return f"{base}/{shown_name(file.stem)}" if several else base


def unread_note(files: Iterable[Path], base: Path, why: str = "", limit: int = 8) -> str | None:
    """`not read: a, b, c (+N more)` for the claim notes that `obs check` prints, or None."""
    names = []
    for f in files:
        try:
            names.append(f.relative_to(base).as_posix())
        except ValueError:
            names.append(f.name)
    if not names:
        return None
    shown = ", ".join(names[:limit])
    more = f" (+{len(names) - limit} more)" if len(names) > limit else ""
    return f"not read: {shown}{more}{f' ({why})' if why else ''}"


def read_head(path: Path, size: int = 65536) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


# ---------------------------------------------------------------------------------------------------------------
# values


_DURATION = re.compile(r"^\s*(?:(\d+)\s+days?,\s*)?(\d+):(\d{1,2}):(\d{1,2}(?:\.\d+)?)\s*$")


def parse_duration(text: str) -> float | None:
    """'0:13:09' or '3 days, 17:51:32' (Python's timedelta text) as seconds, else None.

    Which columns hold durations is `duration_value`'s call: '14:23:05' can be a wall-clock time.
    """
    m = _DURATION.match(text)
    if m is None:
        return None
    days, hours, minutes, seconds = m.groups()
    return int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def duration_value(key: str, text: str) -> float | None:
    """Seconds, when `key` names a duration (`elapsed_time`, obs.vocabulary) or the text says days ('3 days, 1:02:03').

    A wall-clock `time` column ('14:23:05') looks like a duration and is not one: it stays text.
    """
    seconds = parse_duration(text)
    if seconds is None:
        return None
    return seconds if names_a_duration(key) or "day" in text else None


def is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def numeric_leaves(data: Any, prefix: str = "", skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, float]]:
    """Every number inside nested mappings, named with `/` (W&B summaries, lm-eval sections)."""
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        name = f"{prefix}{key}"
        if key in skip:
            continue
        if isinstance(value, dict):
            if "_type" in value:  # W&B histograms, tables, images: not a number
                continue
            yield from numeric_leaves(value, f"{name}/", skip)
        elif is_number(value) or isinstance(value, bool):
            yield name, float(value)


def iso_from_timestamp(value: Any) -> str | None:
    """Seconds or milliseconds since the epoch as an ISO 8601 UTC string (None when not a time)."""
    if not is_number(value) or not math.isfinite(value) or value <= 0:
        return None
    seconds = float(value)
    if seconds > 1e11:  # milliseconds
        seconds /= 1000.0
    try:
        stamp = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return stamp.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def typed_scalar(text: str) -> Any:
    """A value written as text (MLflow params): int, float, bool or None when it clearly is one."""
    t = text.strip()
    if t in ("None", "null"):
        return None
    if t in ("True", "true"):
        return True
    if t in ("False", "false"):
        return False
    if re.fullmatch(r"[+-]?\d+", t):
        try:
            return int(t)
        except ValueError:
            return t
    if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan|Infinity|NaN)", t):
        try:
            return float(t)
        except ValueError:
            return t
    return text


# ---------------------------------------------------------------------------------------------------------------
# log records -> metrics


SUMMARY_MARKERS = ("train_runtime", "train_samples_per_second", "train_steps_per_second")
TRL_DPO_REWARD_KEYS = frozenset({"accuracies", "chosen", "rejected", "margins"})


def is_summary_record(record: dict[str, Any]) -> bool:
    """The final entry Trainer logs once: train_runtime, train_loss, total_flos (no per-step metrics)."""
    return any(k in record for k in SUMMARY_MARKERS) and "loss" not in record


def trl_aliases(record: dict[str, Any]) -> dict[str, Any]:
    """Add the names obs' reward-health analysis reads to a TRL record; originals are kept.

    GRPO logged `reward`, `reward_std`, `rewards/<fn>` (older: `reward/<fn>`), `completion_length`
    and, in some versions or forks, `zero_std_ratio`; newer TRL logs `rewards/<fn>/mean|std` and
    `frac_reward_zero_std`. DPO/ORPO's `rewards/chosen|rejected|margins|accuracies` are not GRPO
    reward functions and are left alone.
    """
    extra: dict[str, Any] = {}
    grpo = "reward" in record or "reward_std" in record or "frac_reward_zero_std" in record
    if "reward" in record and "reward_mean" not in record:
        extra["reward_mean"] = record["reward"]
    if "zero_std_ratio" in record and "frac_reward_zero_std" not in record:
        extra["frac_reward_zero_std"] = record["zero_std_ratio"]
    if "completion_length" in record and "completions/mean_length" not in record:
        extra["completions/mean_length"] = record["completion_length"]
    if grpo:
        for key, value in record.items():
            if not key.startswith("reward") or "/" not in key:
                continue
            parts = key.split("/")
            a_reward_fn = len(parts) == 2 and (parts[0] == "reward" or parts[1] not in TRL_DPO_REWARD_KEYS)
            if parts[0] in ("rewards", "reward") and a_reward_fn:
                target = f"rewards/{parts[1]}/mean"
            elif parts[0] == "reward" and len(parts) == 3 and parts[2] in ("mean", "std"):
                target = f"rewards/{parts[1]}/{parts[2]}"
            else:
                continue
            if target not in record:
                extra[target] = value
    if not extra:
        return record
    return {**record, **extra}


@dataclass
class RecordCleaner:
    """Per-record fixes before the SeriesBuilder: durations as seconds, text-only keys remembered."""

    path: Path
    diags: Diagnostics
    durations: dict[str, int] = field(default_factory=dict)
    text_keys: dict[str, int] = field(default_factory=dict)

    def clean(self, record: dict[str, Any], line: int | None) -> dict[str, Any]:
        out: dict[str, Any] | None = None
        for key, value in record.items():
            if not isinstance(value, str):
                continue
            seconds = duration_value(key, value)
            if seconds is None:
                self.text_keys.setdefault(key, line or 0)
                continue
            self.durations.setdefault(key, line or 0)
            if out is None:
                out = dict(record)
            out[key] = seconds
        return record if out is None else out

    def report(self, run: Run, ignore: Iterable[str] = ()) -> None:
        """Say which durations were converted and which keys held only text (after the series are built)."""
        if self.durations:
            names = ", ".join(sorted(self.durations))
            run.notices.append(f"{names}: durations written as H:MM:SS text were read as seconds.")
        skip = set(ignore)
        plotted = run.metrics.series if run.metrics is not None else {}
        text_only = sorted(k for k in self.text_keys if k not in plotted and k not in skip)
        if text_only:
            first = min(self.text_keys[k] for k in text_only)
            self.diags.info(
                self.path,
                f"{', '.join(text_only)}: text values, not metrics (first at line {first}); not plotted",
                first or None,
            )
            if run.metrics is not None:
                run.metrics.dropped.append(f"text columns, not plotted: {', '.join(text_only)}")


def merge_same_step(
    records: Iterable[tuple[int | None, dict[str, Any]]],
    step_key: str,
    path: Path,
    diags: Diagnostics,
) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """Merge consecutive records logged at the same step (a train row and an eval row, say).

    Trainer logs train metrics and eval metrics as separate entries with the same step, each
    carrying `epoch`: they are one point of the curve, not a duplicate. A record that logs a key
    again at that step with another value is not merged: both values go on to the series builder,
    which applies the obs.yaml `same_step` policy (the mean with its band, by default) and says so.
    """
    pending: dict[str, Any] | None = None
    pending_line: int | None = None
    copied = False  # `pending` is the caller's record until a merge needs to change it
    for line, record in records:
        step = record.get(step_key)
        same = pending is not None and step is not None and pending.get(step_key) == step
        if same and pending is not None and not _conflicts(pending, record):
            if not copied:
                pending, copied = dict(pending), True
            pending.update(record)
            continue
        if pending is not None:
            yield pending_line, pending
        pending, pending_line, copied = record, line, False
    if pending is not None:
        yield pending_line, pending


def _conflicts(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """`b` logs a key of `a` again with another value (epoch, the same in both, does not count)."""
    return any(k in a and a[k] != v and not _both_nan(a[k], v) for k, v in b.items())


def _both_nan(a: Any, b: Any) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


def build_log_metrics(
    run: Run,
    records: Iterable[tuple[int | None, dict[str, Any]]],
    path: Path,
    diags: Diagnostics,
    step_key: str | None,
    same_step: str = "mean",
    restarts: str = "last",
) -> None:
    """Trainer-style records -> `run.metrics` (streamed: records may come from a multi-GB log).

    The final summary row goes to `run.summary`; train and eval rows at the same step are merged;
    TRL's GRPO keys get their health-panel names; durations written as text become seconds.
    """
    cleaner = RecordCleaner(path, diags)
    key_holder: list[str] = [step_key] if step_key else []

    def prepared() -> Iterator[tuple[int | None, dict[str, Any]]]:
        for line, rec in records:
            if is_summary_record(rec):
                for k, v in rec.items():
                    if k not in STEP_KEYS and k != step_key and is_number(v):
                        run.summary[k] = float(v)
                continue
            if not key_holder:
                key_holder.append(next((k for k in STEP_KEYS if k in rec), "line index"))
            yield line, trl_aliases(cleaner.clean(rec, line))

    builder = SeriesBuilder(path, diags, step_key=step_key, same_step=same_step, restarts=restarts)
    stream = prepared()
    first = next(stream, None)
    if first is not None:
        chained: Iterable[tuple[int | None, dict[str, Any]]] = _prepend(first, stream)
        if key_holder[0] != "line index":
            chained = merge_same_step(chained, key_holder[0], path, diags)
        for line, record in chained:
            builder.add(record, line)
    run.metrics = builder.finish()
    cleaner.report(run, ignore=[run.metrics.stage_key] if run.metrics.stage_key else ())
    if run.metrics.step_source == "line index" and run.metrics.series:
        run.notices.append(
            f"{path.name} has no step column (looked for {', '.join(STEP_KEYS)}): "
            "the x axis is the record's position in the log."
        )


def _prepend(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


# ---------------------------------------------------------------------------------------------------------------
# JSON documents: element lines and salvage


_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]\n:]')


def element_lines(text: str, key: str | None) -> list[int]:
    """1-based line of each object in the array at the top level (`key=None`) or under top-level `key`.

    A tokenizer that only knows strings, colons and brackets: enough to point a diagnostic at the
    entry of a pretty-printed `log_history` without a second JSON parser.
    """
    lines: list[int] = []
    line = 1
    depth = 0
    last_string: str | None = None
    current_key: str | None = None
    target_depth = 1 if key is None else 2
    in_target = key is None
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok == "\n":
            line += 1
        elif tok[0] == '"':
            if depth == 1:
                last_string = tok[1:-1]
        elif tok == ":":
            if depth == 1:
                current_key = last_string
        elif tok in "{[":
            if tok == "[" and key is not None and depth == 1:
                in_target = current_key == key
            if tok == "{" and in_target and depth == target_depth:
                lines.append(line)
            depth += 1
        else:
            depth -= 1
            if key is not None and depth == 1 and tok == "]":
                in_target = False
    return lines


def salvage_array(text: str, key: str | None) -> tuple[list[Any], int | None]:
    """Parse the elements of a (possibly truncated) JSON array one by one until the first bad one.

    Returns the elements read and the 1-based line where reading stopped (None when the array ended).
    """
    decoder = lenient_decoder(Findings())
    if key is None:
        start = text.find("[")
    else:
        m = re.search(r'"' + re.escape(key) + r'"\s*:\s*\[', text)
        start = m.end() - 1 if m else -1
    if start < 0:
        return [], 1
    pos = start + 1
    items: list[Any] = []
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n:
            return items, text.count("\n", 0, n) + 1
        if text[pos] == "]":
            return items, None
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return items, text.count("\n", 0, pos) + 1
        if too_deep(value):
            return items, text.count("\n", 0, pos) + 1
        items.append(clean_tree(value, Findings()))
        pos = end


def salvage_object(text: str, key: str) -> Any | None:
    """The value of top-level `key` in a document that does not parse as a whole, when it is intact."""
    m = re.search(r'"' + re.escape(key) + r'"\s*:\s*', text)
    if m is None:
        return None
    try:
        value, _ = lenient_decoder(Findings()).raw_decode(text, m.end())
    except (ValueError, RecursionError):
        return None
    return None if too_deep(value) else clean_tree(value, Findings())


def decode_text(raw: bytes, path: Path, diags: Diagnostics) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        diags.warning(path, f"not valid UTF-8 (byte {exc.start}); bad bytes were replaced", line)
        return raw.decode("utf-8", errors="replace")


MAX_TEXT_BYTES = 4 * MAX_CHARS  # a Markdown file is read this far: more than a page shows (obs.textbounds)


def read_text_file(path: Path, diags: Diagnostics, max_bytes: int = MAX_TEXT_BYTES) -> str | None:
    """A text file (notes, MLflow tags) as safe text: at most `max_bytes` read (a larger file is cut at a line
    end, and said so), bad UTF-8 replaced, characters a page cannot hold replaced (`obs.sanitize`)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        diags.unreadable(path, exc)
        return None
    if len(raw) > max_bytes:
        end = raw.rfind(b"\n", 0, max_bytes)
        raw = raw[: end if end > 0 else max_bytes]
        line = raw.count(b"\n") + 1
        diags.warning(path, f"file is {size:,} bytes; only its first {len(raw):,} bytes were read", line)
        while raw and raw[-1] & 0xC0 == 0x80:  # do not end inside a UTF-8 character
            raw = raw[:-1]
        if raw and raw[-1] >= 0xC0:
            raw = raw[:-1]
    text = decode_text(raw, path, diags)
    bad = UNSAFE_TEXT.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        diags.warning(
            path,
            f"text holds characters that cannot be written in a page (control characters); {CLEANED}",
            line,
        )
        text = clean_text(text)
    return text


def bounded_markdown(text: str, path: Path, diags: Diagnostics, first_line: int = 1) -> str:
    """Markdown cut to what a page renders (`obs.textbounds`), each cut a warning at its line of `path`."""
    bounded, cuts = bound_markdown(text)
    for line, message in cuts:
        diags.warning(path, message, line + first_line - 1)
    images = _IMAGE.findall(bounded) if ("![" in bounded or "<img" in bounded.lower()) else []
    if images:
        first = bounded[: bounded.find(images[0])].count("\n") + first_line
        diags.info(
            path,
            f"{len(images)} image{'s' if len(images) > 1 else ''} not shown: pages show no image from Markdown "
            "(one could load from another host); the text around "
            f"{'them' if len(images) > 1 else 'it'} is kept",
            first,
        )
    return bounded


_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)|<img\b[^>]*>", re.IGNORECASE)


# Parsed, a JSON document takes up to ten times its size in memory; a build keeps to ~400 MB. A log that
# size is JSON lines, which is streamed. Summaries, metadata, gates and final results are small.
MAX_JSON_DOCUMENT_BYTES = 32 * 1024 * 1024
MAX_SMALL_DOCUMENT_BYTES = 8 * 1024 * 1024


@dataclass
class JsonDoc:
    """A JSON document read tolerantly: `data` when it parsed, else `None` and `text` for salvage."""

    data: Any
    text: str
    ok: bool


def read_json_document(
    path: Path,
    diags: Diagnostics,
    max_bytes: int = MAX_JSON_DOCUMENT_BYTES,
    hint: str = "a log this long should be written as JSON lines, which obs streams",
) -> JsonDoc | None:
    """Read a JSON document whole (they are small: states, results, summaries); report what is wrong.

    orjson parses it; a document orjson refuses (bare NaN, a lone surrogate escape, a number past the
    float range) gets the stdlib parser. Either way the data is made safe as a JSON-lines record is
    (`obs.jsonl`, `obs.sanitize`): nothing nested deeper than MAX_DEPTH, no unwritable text, no
    integer beyond 64 bits. A file over `max_bytes` (what a file of its kind can reasonably be) is
    not read. Returns None only when the file cannot be read at all (unreadable, empty, too large,
    too deep).
    """
    try:
        size = path.stat().st_size
        if size > max_bytes:
            diags.error(
                path,
                f"file is {size / 2**20:,.1f} MB; obs reads a JSON document like this one up to "
                f"{max_bytes // 2**20} MB, so it was not read ({hint})",
            )
            return None
        raw = path.read_bytes()
    except OSError as exc:
        diags.unreadable(path, exc)
        return None
    if not raw.strip():
        diags.error(path, "file is empty; expected a JSON document")
        return None
    text = decode_text(raw, path, diags)
    findings = Findings()
    constants: list[str] = []
    lenient = False
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        lenient = True
        try:
            data = lenient_loads(text, findings, constants=constants)
        except json.JSONDecodeError as exc:
            truncated = exc.pos >= len(text.rstrip()) - 1
            hint = "; the file looks truncated (cut off before its end)" if truncated else ""
            diags.error(path, f"invalid JSON: {exc.msg} at column {exc.colno}{hint}", exc.lineno)
            return JsonDoc(None, text, False)
        except RecursionError:
            diags.error(path, f"JSON nested more than {MAX_DEPTH} levels deep; not read", 1)
            return None
    if too_deep(data):
        diags.error(path, f"JSON nested more than {MAX_DEPTH} levels deep; not read", _line_of(text, _DEEP))
        return None
    if constants:  # real bare constants, not the text "NaN" inside a string
        line = _first_bare_constant_line(text)
        diags.warning(
            path,
            f"uses bare NaN/Infinity ({len(constants)} value(s), first at line {line}), "
            "which is not JSON; the values were kept",
            line,
        )
    if lenient or json_may_hold_unsafe(text):
        data = clean_tree(data, findings)
    for line, message in findings.messages():
        pattern = _UNSAFE_TEXT if CLEANED in message else _BIG_NUMBER
        diags.warning(path, message, line or _line_of(text, pattern))
    repeated = repeated_keys(text, data)
    if repeated:
        key = repeated[0]
        more = f" ({len(repeated)} keys are)" if len(repeated) > 1 else ""
        second = list(re.finditer(r'"' + re.escape(key) + r'"\s*:', text))[1:2]
        line = text.count("\n", 0, second[0].start()) + 1 if second else None
        diags.warning(path, f"key '{key}' is written twice in one object{more}; the last value was kept", line)
    return JsonDoc(data, text, True)


_UNSAFE_TEXT = re.compile(r"\\u(?:00[01]|00[89]|007[fF]|[dD][89a-fA-F])|[\x7f-\x9f]")
_BIG_NUMBER = re.compile(r"\d[eE]\+?\d{3,}|\d{309,}")
_DEEP = re.compile(r"(?:[\[{]\s*){" + str(MAX_DEPTH) + "}")
_STRING_OR_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def _line_of(text: str, pattern: re.Pattern[str]) -> int | None:
    """The line of the first match of `pattern` in `text` (for a finding about a whole document)."""
    m = pattern.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _first_bare_constant_line(text: str) -> int | None:
    for m in _STRING_OR_CONSTANT.finditer(text):
        if m.group(1):
            return text.count("\n", 0, m.start()) + 1
    return None


def read_json_object(
    path: Path,
    diags: Diagnostics,
    severity: Severity | None = "error",
    complaint: str = "expected a JSON object",
    max_bytes: int = MAX_SMALL_DOCUMENT_BYTES,
) -> dict[str, Any] | None:
    """A JSON document that must be an object (a summary, metadata, a gate): None when it is not.

    A document that is not an object is reported once with `severity` (not at all when None). Such
    documents are small: one over `max_bytes` is reported and not read.
    """
    doc = read_json_document(path, diags, max_bytes, "it should hold a summary, not a log: is it the right file?")
    if doc is None or not doc.ok:
        return None
    if not isinstance(doc.data, dict):
        if severity is not None:
            diags.add(severity, path, complaint, 1)
        return None
    return doc.data


# ---------------------------------------------------------------------------------------------------------------
# per-item results -> probe cases

IMAGE_SUFFIXES = (".svg", ".png", ".jpg", ".jpeg", ".webp", ".gif")
CASE_TEXT_FIELDS = ("prompt", "expected", "actual", "note", "split", "family", "failure_class", "render")


def probe_case_from_record(
    rec: dict[str, Any], line: int, path: Path, run_dir: Path, root: Path, diags: Diagnostics
) -> ProbeCase | None:
    """One record of a native probe file (or a record another format shaped like one) as a case.

    Booleans are the checks, the text fields of the contract are kept as text, everything else is
    kept with the case; a render path must name an image inside the run folder.
    """
    raw_id = rec.get("id")
    if raw_id is None or isinstance(raw_id, bool | dict | list):
        head = (
            "case has no 'id' (a text or a number)"
            if raw_id is None
            else f"'id' must be a text or a number, not {type_name(raw_id)}"
        )
        diags.tally("warning", path, head, "skipped", line)
        return None
    checks: dict[str, bool] = {}
    extra: dict[str, Any] = {}
    texts: dict[str, str | None] = {}
    sample = rec.get("sample")
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 0):
        diags.tally(
            "warning",
            path,
            "'sample' must be a whole number >= 0 (the sample index)",
            f"ignored (the first: {str(sample)[:40]})",
            line,
        )
        sample = None
    selected = rec.get("selected")
    for key, value in rec.items():
        if key == "id" or (key == "sample" and sample is not None) or (key == "selected" and isinstance(value, bool)):
            continue
        if isinstance(value, bool):
            checks[key] = value
        elif key in CASE_TEXT_FIELDS:
            if value is None:
                texts[key] = None
            elif isinstance(value, str | int | float):
                texts[key] = str(value)
            else:
                diags.tally("warning", path, f"'{key}' must be text, not {type_name(value)}", "ignored", line)
        else:
            extra[key] = value
    render = texts.get("render")
    if render is not None:
        render = checked_render(render, run_dir, root, path, line, diags)
    return ProbeCase(
        id=str(raw_id),
        checks=checks,
        split=texts.get("split"),
        family=texts.get("family"),
        failure_class=texts.get("failure_class"),
        prompt=texts.get("prompt"),
        expected=texts.get("expected"),
        actual=texts.get("actual"),
        render=render,
        note=texts.get("note"),
        extra=extra,
        line=line,
        sample=sample,
        selected=selected if isinstance(selected, bool) else None,
    )


def checked_render(render: str, run_dir: Path, root: Path, path: Path, line: int, diags: Diagnostics) -> str | None:
    """A render path must be a relative image file inside the run folder."""
    if render.startswith(("/", "\\")) or ":" in render:
        diags.warning(path, f"render '{render[:80]}' must be a relative path inside the run folder; ignored", line)
        return None
    target = run_dir / render
    if not is_inside(target, run_dir) or not is_inside(target, root):
        diags.warning(path, f"render '{render[:80]}' points outside the run folder; ignored", line)
        return None
    if target.suffix.lower() not in IMAGE_SUFFIXES:
        diags.warning(path, f"render '{render[:80]}' is not an image ({', '.join(IMAGE_SUFFIXES)}); ignored", line)
        return None
    if not target.is_file():
        diags.warning(path, f"render '{render[:80]}' does not exist", line)
        return None
    return real(target).relative_to(real(run_dir)).as_posix()


def _is_sample_list(value: Any) -> bool:
    """A check given as a list of results, one per sample (HumanEval style): booleans, or 0 and 1."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, bool) or (isinstance(v, int | float) and v in (0, 1)) for v in value)
    )


def _sample_lists(case: ProbeCase) -> dict[str, list[bool]]:
    """The checks of a record given as lists of booleans (one per sample: HumanEval-style results)."""
    return {key: [bool(v) for v in value] for key, value in case.extra.items() if _is_sample_list(value)}


# Keys whose records take the general path: a sample index or a selector's pick (samples of one case), and a
# render path (checked against the file system).
_SPECIAL_KEYS = frozenset({"sample", "selected", "render"})
_PLAIN_TEXT_KEYS = frozenset(CASE_TEXT_FIELDS) - {"render"}


def plain_cases(records: list[tuple[int, dict[str, Any]]]) -> PlainCases | None:
    """The records as the columns `probe_case_from_record` and `ProbeCollector.add` would make of them, or
    None when one record needs their general path (see `ProbeCollector.add_native`).

    A plain record has a text id, booleans (its checks), text or null in the contract's text fields and any
    other values (kept with the case), and none of the keys or values that make a record special: a sample
    index, a selector's pick, a render path, a list of per-sample results, a text field that is not text.
    Most probe files hold only such records; building the table from columns costs a little over half of
    building it one `ProbeCase` at a time (a 1,500-case probe of the bench corpus: ~20 ms instead of ~36 ms).
    """
    out = PlainCases()
    for line, rec in records:
        case_id = rec.get("id")
        if type(case_id) is not str:
            return None
        checks: dict[str, bool] = {}
        texts: dict[str, str | None] = {}
        extra: dict[str, Any] = {}
        for key, value in rec.items():
            if value is True or value is False:
                if key in _SPECIAL_KEYS:
                    return None
                checks[key] = value
            elif key in _PLAIN_TEXT_KEYS:
                if value is not None and type(value) is not str:
                    return None
                texts[key] = value
            elif key in _SPECIAL_KEYS or _is_sample_list(value):
                return None
            elif key != "id":
                extra[key] = value
        out.ids.append(case_id)
        out.checks.append(checks)
        out.split.append(texts.get("split"))
        out.family.append(texts.get("family"))
        out.failure_class.append(texts.get("failure_class"))
        get = texts.get
        out.texts.append(CaseText(get("prompt"), get("expected"), get("actual"), None, get("note"), extra))
        out.lines.append(line)
    return out


class ProbeCollector:
    """Cases in input order, held by column (`obs.probetable`); a repeated id is reported and
    skipped, as in a native probe file, unless the records are samples of one case (a `sample`
    index, or checks given as lists of booleans). Set `path` before adding the cases of another file.

    A sampled case takes one row of the table, where its first sample arrived; when every sample
    is in, that row holds the selected sample (else sample 0), and `Probe.samples` holds them all."""

    def __init__(self, path: Path, diags: Diagnostics) -> None:
        self.builder = ProbeTableBuilder(path, diags)
        self.first_path = path
        self.diags = diags
        self.samples: dict[str, list[ProbeCase]] = {}
        self.sample_rows: dict[str, tuple[int, ProbeCase, int | None]] = {}  # id -> (row, case in it, line)
        # other fields that are not true/false of this file: key -> [records, first line, first value]; a key that
        # is a check in other records is then a check of the wrong type (`_report_loose_checks`)
        self.loose: dict[str, list[Any]] = {}

    @property
    def path(self) -> Path:
        return self.builder.path

    @path.setter
    def path(self, value: Path) -> None:
        self._report_loose_checks()
        self.builder.path = value

    def _note_loose(self, extra: dict[str, Any], line: int | None) -> None:
        for key, value in extra.items():
            if value is None or key == "selected" or _is_sample_list(value):
                continue
            seen = self.loose.get(key)
            if seen is None:
                self.loose[key] = [1, line, value]
            else:
                seen[0] += 1

    def _report_loose_checks(self) -> None:
        """One warning per key of this file that is a check (true or false) in some records and another type in
        others (`"passed": "yes"`): those values count neither way, and stay with their cases as other fields."""
        for key in sorted(self.loose.keys() & self.builder.check_names):
            count, line, value = self.loose[key]
            where = f" in {count:,} records (first at line {line})" if count > 1 and line is not None else ""
            self.diags.warning(
                self.path,
                f"check '{key}' must be true or false, not {type_name(value)}{where} (the first: "
                f"{str(value)[:40]}); those records have no result for it, the value is kept as another field",
                line,
            )
        self.loose = {}

    def __len__(self) -> int:
        return len(self.builder)

    @property
    def check_names(self) -> list[str]:
        return sorted(self.builder.check_names)

    def add_native(self, records: list[tuple[int, dict[str, Any]]], run_dir: Path, root: Path) -> None:
        """Records of a native probe file (line, object), a batch at a time: from columns when every record
        of the batch is plain (`plain_cases`) and no sampled case was met yet, else one case at a time.
        Both ways give the same table and the same diagnostics (a property test holds them to it)."""
        plain = plain_cases(records) if not self.sample_rows else None
        if plain is not None:
            self.builder.add_plain(plain)
            for text, line in zip(plain.texts, plain.lines, strict=True):
                if text.extra:
                    self._note_loose(text.extra, line)
            return
        for line, rec in records:
            self.add(probe_case_from_record(rec, line, self.path, run_dir, root, self.diags), line)

    def add(self, case: ProbeCase | None, line: int | None) -> None:
        if case is None:
            return
        if case.extra:
            self._note_loose(case.extra, line)
        lists = _sample_lists(case)
        if lists:
            self._add_lists(case, lists, line)
            return
        if case.sample is not None:
            known = self.samples.get(case.id)
            if known is not None:
                if any(s.sample == case.sample for s in known):
                    self.diags.warning(
                        self.path, f"case id '{case.id}' sample {case.sample} already read; this one skipped", line
                    )
                    return
                known.append(case)
                return
            self.samples[case.id] = [case]
            self.sample_rows[case.id] = (len(self.builder), case, line)
        elif case.id in self.sample_rows:
            self._repeated(case.id, line)
            return
        self.builder.add(case, line)

    def _repeated(self, case_id: str, line: int | None) -> None:
        first = self.sample_rows[case_id][2]
        self.diags.warning(self.path, f"case id '{case_id}' already used at line {first or 0}; this one skipped", line)

    def _add_lists(self, case: ProbeCase, lists: dict[str, list[bool]], line: int | None) -> None:
        sizes = {len(v) for v in lists.values()}
        if len(sizes) != 1:
            self.diags.warning(
                self.path, f"case id '{case.id}': its lists of sample results differ in length; skipped", line
            )
            return
        if case.id in self.sample_rows:
            self._repeated(case.id, line)
            return
        picked = case.extra.get("selected")  # with lists, `selected` may name the picked sample's index
        extra = {k: v for k, v in case.extra.items() if k not in lists and k != "selected"}
        samples = [
            replace(
                case,
                checks={**case.checks, **{k: v[i] for k, v in lists.items()}},
                extra=extra,
                sample=i,
                selected=(i == picked) if isinstance(picked, int) and not isinstance(picked, bool) else None,
            )
            for i in range(sizes.pop())
        ]
        self.samples[case.id] = samples
        self.sample_rows[case.id] = (len(self.builder), samples[0], line)
        self.builder.add(samples[0], line)

    def finish(self) -> Probe:
        """The probe: one row per id (the selected sample, else sample 0) and every sample of each
        case sampled at least twice."""
        self._report_loose_checks()
        samples: dict[str, list[ProbeCase]] = {}
        for case_id, group in self.samples.items():
            row, placed, line = self.sample_rows[case_id]
            group = sorted(group, key=lambda s: s.sample or 0)
            chosen = group[0] if len(group) < 2 else chosen_sample(group)
            if chosen is not placed:
                self.builder.set_row(row, chosen, chosen.line if chosen.line is not None else line)
            if len(group) >= 2:
                samples[case_id] = group
        table = self.builder.finish()
        if samples and self.builder.kept is not None:  # a plain record came first with a sampled case's id
            kept = self.builder.kept
            for case_id in list(samples):
                row = self.sample_rows[case_id][0]
                pos = int(np.searchsorted(kept, row))
                if pos >= len(kept) or int(kept[pos]) != row:
                    del samples[case_id]
        return Probe(table=table, source_file=str(self.path), samples=samples)

    def probe(self) -> Probe | None:
        return self.finish() if len(self) else None
