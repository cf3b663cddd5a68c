"""Diagnostics: every problem with the input becomes one line a reader can act on.

The format is the one compilers use (`path:line: severity: message`) so editors and CI logs can
jump to the place. A bad file never raises out of a reader; it adds a diagnostic and the build goes
on with what could be read.

Two bounds hold for every diagnostic, whoever makes it:

* **one line, nothing a terminal acts on**: control characters in a path or a message (an ESC in a
  CSV header, a newline in a file name) are written as escapes (`\x1b`, `\n`), so an input cannot
  recolour a terminal or forge a `path:1: error:` line in a CI log;
* **at most `MAX_PER_KIND` per file and kind** (a kind is the message with its numbers and quoted
  parts left out): 50,000 malformed lines of one log give the first `MAX_PER_KIND` messages and one
  line saying how many more there were, not 50,000 lines and a 6 MB run page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from obs.sanitize import visible

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
# said of a source folder with no run in it: a warning, an error with --strict (obs.cli)
NO_RUNS = (
    "no run found in this folder: a run is a folder with a run.yaml, or the logs of a format obs reads "
    "(trainer_state.json, TensorBoard events, MLflow, W&B, lm-eval results, metrics.jsonl; docs/adapters.md); "
    "is it the right folder?"
)
MAX_PER_KIND = 20  # messages of one kind about one file; the rest are counted in one more line
_VARIABLE = re.compile(r"'[^']*'|\"[^\"]*\"|\d+(?:\.\d+)?")


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding about the input: where it is, how bad it is and what is wrong."""

    path: str
    line: int | None
    severity: Severity
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", visible(self.path))
        object.__setattr__(self, "message", visible(self.message))

    def format(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.severity}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "severity": self.severity, "message": self.message}


@dataclass
class Diagnostics:
    """Collects diagnostics for one unit of work (a run, the discovery pass, a config file).

    Paths are shown relative to `root` when possible, so messages read the same on every machine.
    """

    root: Path | None = None
    items: list[Diagnostic] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # input files that could not be read (see `unreadable`)
    kinds: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)  # -> [count, index of "more"]

    def shown(self, path: Path | str) -> str:
        """A path as messages name it (relative to the folder above the source root)."""
        return self._where(path)

    def _where(self, path: Path | str) -> str:
        """The path as a reader knows it, relative to the folder above the source root. A link is named
        by itself (its folder resolved, not its target), and a looping one cannot raise here."""
        p = Path(path)
        if self.root is not None:
            try:
                return str((p.parent.resolve() / p.name).relative_to(self.root.resolve().parent))
            except (ValueError, OSError, RuntimeError):
                pass
        return str(p)

    def add(self, severity: Severity, path: Path | str, message: str, line: int | None = None) -> None:
        where = self._where(path)
        key = (where, severity, _VARIABLE.sub("", message))
        seen = self.kinds.setdefault(key, [0, -1])
        seen[0] += 1
        if seen[0] <= MAX_PER_KIND:
            self.items.append(Diagnostic(where, line, severity, message))
            return
        more = seen[0] - MAX_PER_KIND
        first_line = line if seen[1] < 0 else self.items[seen[1]].line  # sorts after the listed ones
        summary = Diagnostic(
            where,
            first_line,
            severity,
            f"and {more} more message{'s' if more > 1 else ''} like the {MAX_PER_KIND} before, from here on; "
            f"not listed (the last: {message[:160]})",
        )
        if seen[1] < 0:
            seen[1] = len(self.items)
            self.items.append(summary)
        else:
            self.items[seen[1]] = summary

    def tally(
        self, severity: Severity, path: Path | str, head: str, tail: str, line: int | None, unit: str = "record"
    ) -> None:
        """One message per (file, `head`) however many records it is about: `head; tail` for one record, else
        `head in N records (first at line L); tail`, placed at the first record's line. For a field of the wrong
        type (`'note' must be text, not a list`), so 50,000 bad records are one line that counts them."""
        where = self._where(path)
        key = (where, severity, "\0" + head)
        seen = self.kinds.get(key)
        if seen is None:
            self.kinds[key] = [1, len(self.items)]
            self.items.append(Diagnostic(where, line, severity, f"{head}; {tail}"))
            return
        seen[0] += 1
        first = self.items[seen[1]].line
        at = f" (first at line {first})" if first is not None else ""
        self.items[seen[1]] = Diagnostic(where, first, severity, f"{head} in {seen[0]:,} {unit}s{at}; {tail}")

    def error(self, path: Path | str, message: str, line: int | None = None) -> None:
        self.add("error", path, message, line)

    def warning(self, path: Path | str, message: str, line: int | None = None) -> None:
        self.add("warning", path, message, line)

    def info(self, path: Path | str, message: str, line: int | None = None) -> None:
        self.add("info", path, message, line)

    def unreadable(self, path: Path | str, exc: OSError, severity: Severity = "error") -> None:
        """An input file the system would not let us read (gone, no permission, an I/O error): one message, and
        remembered, so a build does not keep what it made without the file (the next build reads it again)."""
        self.unread.append(str(path))
        reason = exc.strerror or type(exc).__name__
        self.add(severity, path, f"cannot be read ({reason}); restore it or make it readable, then build again")

    def extend(self, other: Diagnostics | list[Diagnostic]) -> None:
        self.items.extend(other.items if isinstance(other, Diagnostics) else other)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.items if d.severity == severity)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)


def sort_diagnostics(items: list[Diagnostic]) -> list[Diagnostic]:
    """Stable order for printing: by file, then line, then severity."""
    return sorted(items, key=lambda d: (d.path, d.line or 0, SEVERITY_ORDER[d.severity], d.message))
