"""The decision ledger: `decisions.jsonl` at the top of the source tree, one JSON object per decision.

Why a ledger beside run.yaml: a decision is an event (who decided what, when, on which artifacts),
and events are appended, never edited. `obs decide` appends a line; nothing rewrites or deletes one.
Reading it, the **latest line for a run wins** and replaces that run's `decision:` from run.yaml as
a whole (verdict, rationale, next, by, date): mixing the `next` of one decision with the verdict of
another would state something nobody decided. A run without a ledger line keeps run.yaml's decision.

Each line records the content hash of the run's input files when it was decided, so a later build
can say "the artifacts changed after this decision", and where its frozen report was archived.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from obs.diagnostics import Diagnostics
from obs.jsonl import bounded_lines, lenient_loads, repeated_keys, too_deep
from obs.model import VERDICTS, Decision, Run
from obs.safepaths import safe_input
from obs.sanitize import Findings, clean_tree, json_may_hold_unsafe
from obs.textbounds import bound_markdown

# Two names at the top of the source tree belong to obs and are never runs: the ledger and the
# archive folder of frozen reports beside it. Discovery skips `archive/`; no adapter reads the ledger
# as a metrics log.
LEDGER_FILE = "decisions.jsonl"
ARCHIVE_DIR = "archive"


def is_reserved(path: Path, root: Path) -> bool:
    """True for the ledger file and the archive folder at the top of the source tree."""
    if path.name not in (LEDGER_FILE, ARCHIVE_DIR):
        return False
    try:
        return path.parent.resolve() == root.resolve()
    except OSError:
        return False


SCHEMA = "obs.decision/1"
HASH_RE = re.compile(r"^[0-9a-f]{64}$")
# archive/<run slug>/<folder>/index.html, as `obs decide` writes it (see obs.publish.decide)
ARCHIVE_RE = re.compile(r"^archive/[A-Za-z0-9._+-]{1,80}/[0-9a-f]{16}(\.[0-9]{1,4})?/index\.html$")
MAX_TEXT = 20_000
MAX_LEDGER_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024  # a decision with its rationale is a few kB


@dataclass(frozen=True)
class LedgerEntry:
    run: str
    verdict: str
    rationale: str
    next: str
    by: str
    date: str
    input_hash: str
    archive: str | None
    suggested: str | None
    baseline: str | None
    line: int

    def decision(self) -> Decision:
        return Decision(verdict=self.verdict, rationale=self.rationale, next=self.next, by=self.by, date=self.date)

    def as_dict(self) -> dict[str, Any]:
        """The JSON line (without the line number), keys in a fixed order."""
        return {
            "schema": SCHEMA,
            "run": self.run,
            "verdict": self.verdict,
            "rationale": self.rationale,
            "next": self.next,
            "by": self.by,
            "date": self.date,
            "input_hash": self.input_hash,
            "archive": self.archive,
            "suggested": self.suggested,
            "baseline": self.baseline,
        }


@dataclass
class Ledger:
    entries: list[LedgerEntry] = field(default_factory=list)  # file order = time order

    def latest(self, run_id: str) -> LedgerEntry | None:
        for entry in reversed(self.entries):
            if entry.run == run_id:
                return entry
        return None

    def history(self, run_id: str) -> list[LedgerEntry]:
        return [e for e in self.entries if e.run == run_id]


def ledger_path(root: Path) -> Path:
    return root / LEDGER_FILE


def _text(rec: dict[str, Any], key: str) -> str:
    value = rec.get(key)
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _markdown(rec: dict[str, Any], key: str) -> str:
    """Markdown text (the rationale) as a page can render it (obs.textbounds); the cuts are reported by `_parse`."""
    return bound_markdown(_text(rec, key))[0]


def parse_entry(rec: Any, line: int) -> tuple[LedgerEntry | None, str | None]:
    """One ledger line: the entry, or None and what is wrong with it."""
    if not isinstance(rec, dict):
        return None, "expected a JSON object"
    run = rec.get("run")
    if not isinstance(run, str) or not run:
        return None, "'run' (the run id) is missing"
    verdict = rec.get("verdict")
    if verdict not in VERDICTS:
        return None, f"'verdict' must be one of {', '.join(VERDICTS)}"
    input_hash = rec.get("input_hash")
    if not isinstance(input_hash, str) or not HASH_RE.match(input_hash):
        return None, "'input_hash' must be the 64-hex-digit hash of the run's input files"
    archive = rec.get("archive")
    if archive is not None and (not isinstance(archive, str) or not ARCHIVE_RE.match(archive)):
        return None, "'archive' must be archive/<run>/<hash>/index.html"
    suggested = rec.get("suggested")
    baseline = rec.get("baseline")
    return (
        LedgerEntry(
            run=run,
            verdict=str(verdict),
            rationale=_markdown(rec, "rationale"),
            next=_text(rec, "next"),
            by=_text(rec, "by"),
            date=_text(rec, "date"),
            input_hash=input_hash,
            archive=archive,
            suggested=suggested if suggested in VERDICTS else None,
            baseline=baseline if isinstance(baseline, str) else None,
            line=line,
        ),
        None,
    )


_CACHE: dict[str, tuple[tuple[int, int, int], Ledger, list[tuple[int, str]]]] = {}


def read_ledger(root: Path, diags: Diagnostics | None = None) -> Ledger:
    """The ledger of a source tree (empty when there is none). Bad lines are skipped and reported.

    Parsed once per process and file version: every run's cache key and every worker asks for it.
    """
    path = ledger_path(root)
    if safe_input(path, root) is None:  # missing, or a link out of the tree (discovery names it)
        return Ledger()
    try:
        st = path.stat()
    except OSError:
        return Ledger()
    stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
    known = _CACHE.get(str(path))
    if known is None or known[0] != stamp:
        known = (stamp, *_parse(path, st.st_size))
        _CACHE[str(path)] = known
    _, ledger, problems = known
    if diags is not None:
        for line, message in problems:
            diags.warning(path, message, line)
    return ledger


def _parse(path: Path, size: int) -> tuple[Ledger, list[tuple[int, str]]]:
    ledger = Ledger()
    problems: list[tuple[int, str]] = []
    if size > MAX_LEDGER_BYTES:
        return ledger, [(1, f"the ledger is over {MAX_LEDGER_BYTES} bytes; not read")]
    findings = Findings()
    try:
        with path.open("rb") as fh:
            for number, (raw, length) in enumerate(bounded_lines(fh, MAX_LINE_BYTES), start=1):
                if raw is None:
                    problems.append((number, f"line is {length:,} bytes, longer than a decision can be; line ignored"))
                    continue
                if not raw.strip():
                    continue
                rec = _record(raw, number, findings)
                if rec is None:
                    last = not raw.endswith(b"\n")
                    problems.append(
                        (number, "half-written last line; ignored" if last else "not valid JSON; line ignored")
                    )
                    continue
                for key in repeated_keys(raw, rec)[:1]:  # JSON parsers keep the last value silently
                    problems.append((number, f"key '{key}' is written twice in one record; the last value was kept"))
                entry, problem = parse_entry(rec, number)
                if entry is None:
                    problems.append((number, f"{problem}; line ignored"))
                else:
                    problems += [(number, f"'rationale': {cut}") for _, cut in bound_markdown(entry.rationale)[1]]
                    ledger.entries.append(entry)
    except OSError as exc:
        return Ledger(), [(1, f"cannot be read: {exc.strerror}")]
    problems += [(line or 1, message) for line, message in findings.messages()]
    return ledger, problems


def _record(raw: bytes, number: int, findings: Findings) -> Any:
    """One line parsed and made safe (obs.sanitize), or None when it is not JSON (or nested too deeply)."""
    try:
        rec = orjson.loads(raw)
        lenient = False
    except orjson.JSONDecodeError:
        try:
            rec = lenient_loads(raw.decode("utf-8", "replace"), findings, number)
        except (ValueError, RecursionError):
            return None
        lenient = True
    if too_deep(rec):
        return None
    return clean_tree(rec, findings, number) if lenient or json_may_hold_unsafe(raw) else rec


@contextmanager
def ledger_lock(root: Path) -> Iterator[Callable[[LedgerEntry], None]]:
    """Hold the ledger's exclusive lock; yields `append(entry)`.

    `obs decide` picks its archive folder and appends its line under one lock, so two decisions at
    once never take the same folder nor interleave their bytes. The lock (flock) dies with its
    process: a killed decide never blocks the next one.
    """
    path = ledger_path(root)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _lock(fd)
        yield lambda entry: _append_locked(fd, path, entry)
    finally:
        os.close(fd)


def append_entry(root: Path, entry: LedgerEntry) -> None:
    """Append one line (and nothing else) to the ledger, under an exclusive lock, flushed to disk."""
    with ledger_lock(root) as append:
        append(entry)


def _append_locked(fd: int, path: Path, entry: LedgerEntry) -> None:
    """One line, written whole (short writes continued), then fsync'd: once this returns the
    decision survives a crash; a kill before leaves at most a half line, which the next append
    ends with a newline and readers skip with a warning. Never two copies of one decision."""
    line = json.dumps(entry.as_dict(), ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    size = os.fstat(fd).st_size
    if size:
        with open(path, "rb") as fh:  # a half-written last line must not swallow this one
            fh.seek(size - 1)
            if fh.read(1) != b"\n":
                line = b"\n" + line
    view = memoryview(line)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: appends are still one write each
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def overlay(run: Run, ledger: Ledger) -> LedgerEntry | None:
    """Give the run its latest ledger decision (which replaces run.yaml's); return that entry."""
    entry = ledger.latest(run.id)
    if entry is None:
        return None
    before = run.decision
    run.decision = entry.decision()
    if before is not None and before.verdict and before.verdict != entry.verdict:
        run.notices.append(
            f"run.yaml records the decision '{before.verdict}'; the later entry of {LEDGER_FILE} "
            f"('{entry.verdict}', {entry.date or 'undated'}) takes precedence."
        )
    return entry


def entry_key(root: Path, run_id: str) -> dict[str, Any] | None:
    """What a run's page depends on in the ledger (part of its cache key)."""
    entry = read_ledger(root).latest(run_id)
    return entry.as_dict() if entry else None
