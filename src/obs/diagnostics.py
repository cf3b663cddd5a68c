"""Diagnostics: every problem with the input becomes one line a reader can act on.

The format is the one compilers use (`path:line: severity: message`) so editors and CI logs can
jump to the place. A bad file never raises out of a reader; it adds a diagnostic and the build goes
on with what could be read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
# said of a source folder with no run in it: a warning, an error with --strict (obs.cli)
NO_RUNS = (
    "no run found in this folder: a run is a folder with a run.yaml, or the logs of a format obs reads "
    "(trainer_state.json, TensorBoard events, MLflow, W&B, lm-eval results, metrics.jsonl; docs/adapters.md); "
    "is it the right folder?"
)


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding about the input: where it is, how bad it is and what is wrong."""

    path: str
    line: int | None
    severity: Severity
    message: str

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
        self.items.append(Diagnostic(self._where(path), line, severity, message))

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
