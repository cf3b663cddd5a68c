"""The one interface every input format implements.

Discovery asks each adapter, in order, whether it recognises a folder (`claim`). A claim names the
runs found there as `RunSource`s: cheap descriptions (paths, files to hash) that can be loaded
later, in another process, by `load`. Loading turns the files into a `Run`; every problem is a
diagnostic on that run, never an exception out of the adapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from obs.config import SiteConfig
from obs.diagnostics import Diagnostics
from obs.model import Run
from obs.safepaths import walk_files

_SEP = "\0"  # never in a path


class PathText:
    """A `RunSource`'s folder kept as its text, a `Path` made anew when read (~1 µs). A `Path` also holds its parts
    as a list and caches its text: ~0.4 KB of each run discovery holds until the build ends, ~40 MB at 100,000
    runs (issue 32). A data descriptor on a frozen dataclass, as `PackedPaths`; no default (reading it from the
    class raises, which a dataclass takes for none)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.text = f"_{name}_text"

    def __get__(self, obj: object, owner: type | None = None) -> Path:
        if obj is None:
            raise AttributeError(self.text)
        return Path(obj.__dict__[self.text])

    def __set__(self, obj: object, value: Path) -> None:
        obj.__dict__[self.text] = str(value)


class PackedPaths:
    """A `RunSource` field of paths, kept as one string: the names below the run's folder when all are there, as
    they almost always are. A `Path` is ~350 bytes (its parts list, name and text); a run's three or four files
    were ~1.4 KB of each run discovery holds until the build ends, ~140 MB at 100,000 runs (issue 32). Read, it
    is the same tuple of `Path`s, made anew (a few microseconds a run, read a few times a build).

    A data descriptor on a frozen dataclass: the generated `__init__` (and `replace`) sets the field through
    it, after `path` (declared before it); a pickled source carries the string."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.packed = f"_{name}_packed"

    def __get__(self, obj: object, owner: type | None = None) -> tuple[Path, ...]:
        if obj is None:
            return ()  # the dataclass field's default
        packed: tuple[str, str] = obj.__dict__[self.packed]
        base, names = packed
        if not names:
            return ()
        if base:
            return tuple(Path(f"{base}/{name}") for name in names.split(_SEP))
        return tuple(Path(name) for name in names.split(_SEP))

    def __set__(self, obj: object, value: tuple[Path, ...]) -> None:
        texts = [str(p) for p in value]
        base = obj.__dict__.get("_path_text", "")  # the folder's text (`PathText`), set before
        head = base + "/"
        if base and base != "/" and all(t.startswith(head) and len(t) > len(head) for t in texts):
            obj.__dict__[self.packed] = ("", "") if not texts else (base, _SEP.join(t[len(head) :] for t in texts))
        else:
            obj.__dict__[self.packed] = ("", _SEP.join(texts))


@dataclass(frozen=True)
class Claim:
    """What an adapter found in a folder.

    `runs` are the runs to load; `owned_dirs` are folders the adapter consumed (discovery does not
    descend into them); `hidden` are files read and deliberately not shown, each group with why (a deleted
    MLflow run): the site names them apart from the files no format reads, never as "not read".
    """

    runs: tuple[RunSource, ...]
    owned_dirs: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()
    hidden: tuple[tuple[str, tuple[Path, ...]], ...] = ()


@dataclass(frozen=True)
class RunSource:
    """A run that discovery found but has not read yet.

    `base` is set by the registry when a run.yaml lies over another format's files: the other
    format's run, whose files hold the data the run.yaml is laid over.
    """

    adapter: str
    path: Path = PathText()  # type: ignore[assignment]  # no default: `PathText` reads as none from the class
    files: tuple[Path, ...] = PackedPaths()  # type: ignore[assignment]  # every source names its files
    key: str = ""
    default_id: str = ""
    spec: str | None = None
    campaign: str | None = None
    base: RunSource | None = None
    record: int | None = None  # one record (0-based) of a file that lists runs, one per record
    part: tuple[str, str] | None = None  # (column, value): the records of one system in a file scoring several
    extras: tuple[RunSource, ...] = ()  # other formats' files in this run's folder, merged in by the registry
    # the run's place in a campaign as discovery inferred it (obs.layout): a run.yaml's own fields win
    condition: str | None = None
    seed: int | None = None
    side: tuple[Path, ...] = ()  # side logs of the run (emergence/steps.jsonl, ...): read with it (side_logs.py)


@dataclass
class LoadContext:
    root: Path
    config: SiteConfig
    diags: Diagnostics = field(default_factory=Diagnostics)


@dataclass(frozen=True)
class Holds:
    """What a format's files can hold, said once by the format: the run page collapses the sections
    they cannot fill into one line that says where to add them (a run.yaml beside `beside`).

    `sections` are run-page section ids (`obs.render.sections`); `None` means every section (the
    native format, and run.yaml laid over another format).
    """

    label: str  # "HF Trainer logs": the subject of "... hold no hypothesis"
    beside: str  # what a run.yaml is put beside to add the rest: "trainer_state.json"
    records: str = ""  # where the logged records are, for advice about a field of them
    cases: str = ""  # where the format's own files give per-item cases, when they can: lm-eval's samples files
    sections: frozenset[str] | None = None
    # whether a run.yaml beside the files is read (laid over them); when not, `beside` says where it is not
    takes_run_yaml: bool = True


# what every format that reads a log can fill: the card, the curves, the rules that read them, the configuration
LOG_SECTIONS = frozenset({"run-card", "curves", "diagnosis", "config"})
# ... and a format whose files may hold per-item outcomes (read as probe cases)
CASE_SECTIONS = LOG_SECTIONS | {"probe", "failures"}


class Adapter(Protocol):
    """An input format. `name` is shown by `obs check` next to every folder it claims; `holds` says
    which run-page sections its files can fill."""

    name: str
    holds: Holds

    def claim(self, folder: Path, root: Path) -> Claim | None:
        """Return the runs in `folder` when this format recognises it, else None."""
        ...

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        """Read one run. Never raises for bad input: problems go to `ctx.diags`."""
        ...


def list_files(folder: Path, root: Path) -> tuple[Path, ...]:
    """Every readable file under `folder`, sorted: hidden entries and refused links skipped (obs.safepaths)."""
    return tuple(walk_files(folder, root))


def visible_files(folder: Path, root: Path, *, recursive: bool = False) -> list[Path]:
    """Readable files of a folder (optionally below it), sorted, the same way."""
    return walk_files(folder, root, recursive=recursive)
