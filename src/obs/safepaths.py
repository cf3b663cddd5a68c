"""What may be read from the source tree: nothing outside it, and no folder twice round a loop.

A symbolic link can make a harmless name (`notes.md`, `run.yaml`, a `trainer_state.json`) read any
file of the machine into a published site, and links that point at each other, or at a folder
that contains them, make a naive walk of the tree run forever. So every path obs reads goes
through this module: its real location (every link resolved, in every component of the path) must
be inside the source root, and listings enter each real folder once.

Discovery lists every folder it visits with `list_folder` and names each refused link once, in a
warning (`report_refused`); the readers then check again with `safe_input` and skip a refused
file without a second word.

Two more kinds of entry are named by discovery too (`report_unusable`):

* **a name that is not valid UTF-8** (`caf\xe9.txt`, a byte sequence any POSIX file system allows):
  Python keeps such a name surrogate-escaped, which opens the file but cannot be written into a page,
  a JSON file or a hash as text. The entry is read like any other; where its name becomes text (an id,
  a message, a page, the cache's keys) each undecodable byte is U+FFFD (`shown_name`), and one warning
  per folder names those entries: one stray name cannot stop a build, nor hide from `obs check`;
* **what is not a regular file or a folder**: a FIFO (reading it blocks forever), a device, a socket, a
  dangling link. One warning each.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from obs.diagnostics import Diagnostic, Diagnostics

OUTSIDE = "symbolic link to a place outside the source tree; not read"
LOOP = "symbolic link loop (it never reaches a file); not read"
CYCLE = "symbolic link to a folder that contains it (a cycle); not followed"
MAX_SITE_MARKER_BYTES = 64 * 1024 * 1024


_walk = threading.local()  # while a walk of the tree runs: .known (path text -> real path text), .listings

# What a walk remembers is bounded: a memo of every file met held ~3 KB a run at the walk's peak (every file's
# real `Path`, its text twice and its folder's listing), ~500 MB at 100,000 runs (issue 32). The answers are
# asked for again soon after they are found (a folder's listing by the format that claims it, a file's real
# location by the check of what was read), so the most recent suffice; one found again costs one `lstat`.
WALK_MEMO = 65_536  # locations remembered (each ~0.3 KB: its text, its real text, its Path)
WALK_LISTINGS = 4_096  # folders' listings remembered


class _Recent(dict[Any, Any]):
    """A memo that starts again once it holds `limit` entries: bounded, O(1), and no order kept per lookup."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: Any, value: Any) -> None:
        if len(self) >= self.limit:
            self.clear()
        super().__setitem__(key, value)


@contextmanager
def remembered_locations() -> Iterator[None]:
    """While one walk of the tree runs, remember each real location found.

    `os.path.realpath` checks every component of a path (7 system calls for a log 6 folders deep);
    a walk asks for thousands of paths below the same folders. Inside this context a path that is not
    itself a link is its folder's real location plus its name: one check, its folder's answer reused.
    Each folder's listing is remembered too: discovery lists a folder, then the format that claims it
    lists it again for the run's files.
    The memory lasts one walk only, so a link made or removed between two builds of `obs serve` is seen.
    """
    outer = getattr(_walk, "known", None)
    outer_paths = getattr(_walk, "paths", None)
    outer_listings = getattr(_walk, "listings", None)
    _walk.known = _Recent(WALK_MEMO) if outer is None else outer
    _walk.paths = _Recent(WALK_MEMO) if outer_paths is None else outer_paths
    _walk.listings = _Recent(WALK_LISTINGS) if outer_listings is None else outer_listings
    try:
        yield
    finally:
        _walk.known = outer
        _walk.paths = outer_paths
        _walk.listings = outer_listings


def real(path: Path) -> Path:
    """`path` with every link resolved (never raises: a loop or a missing part is left as written)."""
    known: dict[str, str] | None = getattr(_walk, "known", None)
    if known is None:
        return Path(os.path.realpath(path))
    text = os.fspath(path)
    paths: dict[str, Path] = _walk.paths
    hit = paths.get(text)
    if hit is None:  # a Path is made once per location: making one costs more than finding its text
        hit = paths[text] = Path(_real_text(text, known))
    return hit


def _real_text(text: str, known: dict[str, str]) -> str:
    hit = known.get(text)
    if hit is None:
        parent, name = os.path.split(text)
        if os.path.isabs(text) and parent != text and name not in ("", ".", "..") and not os.path.islink(text):
            hit = os.path.join(_real_text(parent, known), name)
        else:
            hit = os.path.realpath(text)
        known[text] = hit
    return hit


def refusal(path: Path, root: Path) -> str | None:
    """Why `path` must not be read (`OUTSIDE` or `LOOP`), or None: it is inside `root`, or nothing is there."""
    return _refusal(path, real(root))


def _refusal(path: Path, root_real: Path) -> str | None:
    try:
        target = Path(os.path.realpath(path, strict=True))
    except OSError as exc:
        return LOOP if exc.errno == errno.ELOOP else None
    return None if target.is_relative_to(root_real) else OUTSIDE


def is_inside(path: Path, root: Path) -> bool:
    """True when the real location of `path` (which need not exist) is inside `root`; False for a loop."""
    root_real = real(root)
    return _refusal(path, root_real) != LOOP and real(path).is_relative_to(root_real)


def safe_input(path: Path, root: Path) -> Path | None:
    """`path` when it is a regular file obs may read, else None (missing, not a file, or a refused link).

    Silent on purpose: discovery has named every refused link already, once.
    """
    try:
        st = os.lstat(path)  # the common case, a name that is not there, costs one call
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode) and _in_walked_folder(path, root):
        return path  # a plain file (not a link) in a folder the walk has placed inside the tree
    if refusal(path, root) is not None or not path.is_file():
        return None
    return path


def _in_walked_folder(path: Path, root: Path) -> bool:
    """Whether the folder of `path` is inside `root`, by the real locations a walk of the tree remembers
    (False outside a walk: then `refusal` resolves the whole path)."""
    if getattr(_walk, "known", None) is None:
        return False
    return real(path.parent).is_relative_to(real(root))


@dataclass
class Listing:
    """One folder's visible entries (hidden names skipped): readable files, folders to enter, refused links."""

    files: list[Path] = field(default_factory=list)
    dirs: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)
    unreadable: str | None = None  # why the folder could not be listed (Permission denied, ...)
    bad_names: list[Path] = field(default_factory=list)  # names that are not valid UTF-8 (read, and named)
    special: list[tuple[Path, str]] = field(default_factory=list)  # FIFOs, devices, sockets, dangling links

    @property
    def names(self) -> set[str]:
        return {p.name for p in self.files}


def list_folder(folder: Path, root: Path) -> Listing:
    """The entries of `folder`, sorted. Only links are resolved (an entry that is not a link stays in place).

    Within `remembered_locations` a folder is listed once (callers only read the listing)."""
    listings: dict[tuple[str, str], Listing] | None = getattr(_walk, "listings", None)
    if listings is None:
        return _list_folder(folder, root)
    memo = (os.fspath(folder), os.fspath(root))
    listing = listings.get(memo)
    if listing is None:
        listing = listings[memo] = _list_folder(folder, root)
    return listing


def _list_folder(folder: Path, root: Path) -> Listing:
    out = Listing()
    root_real = real(root)
    here = real(folder)
    if not here.is_relative_to(root_real):
        return out
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        out.unreadable = exc.strerror or type(exc).__name__
        return out
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = folder / entry.name
        if not valid_name(entry.name):
            out.bad_names.append(path)  # read, surrogate-escaped; named in one message (report_unusable)
        if entry.is_symlink():
            reason = _refusal(path, root_real)
            if reason is None and path.is_dir() and here.is_relative_to(real(path)):
                reason = CYCLE
            if reason is not None:
                out.refused.append((path, reason))
                continue
        try:
            if entry.is_dir():
                out.dirs.append(path)
            elif entry.is_file():
                out.files.append(path)
            else:
                out.special.append((path, special_kind(path)))
        except OSError:
            continue
    return out


def valid_name(name: str) -> bool:
    """Whether a file name read from the system is text (an undecodable byte is kept as a lone surrogate)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(path: Path | str) -> str:
    """A path as messages and pages show it: each byte that is not UTF-8 as U+FFFD."""
    return os.fsencode(path).decode("utf-8", "replace")


def special_kind(path: Path) -> str:
    """What a name that is neither a regular file nor a folder is, in a reader's words."""
    try:
        st = os.stat(path)
    except OSError:
        return "a symbolic link to nothing (its target is missing)"
    if stat.S_ISFIFO(st.st_mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(st.st_mode):
        return "a socket"
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        return "a device"
    return "not a regular file"


def walk_files(folder: Path, root: Path, *, recursive: bool = True) -> list[Path]:
    """Every readable file of `folder` (and below it), sorted; each real folder is listed once."""
    out: list[Path] = []
    seen: set[Path] = set()
    stack = [folder]
    while stack:
        current = stack.pop()
        where = real(current)
        if where in seen:
            continue
        seen.add(where)
        listing = list_folder(current, root)
        out.extend(listing.files)
        if recursive:
            stack.extend(listing.dirs)
    return sorted(out)


def report_refused(diags: Diagnostics, refused: list[tuple[Path, str]]) -> None:
    """One warning per refused link, under the link's own name (not its target's)."""
    for path, reason in refused:
        diags.items.append(Diagnostic(_shown(path, diags.root), None, "warning", reason))


MAX_NAMED = 5  # bad names listed in the one message about a folder


def report_unusable(diags: Diagnostics, folder: Path, listing: Listing) -> None:
    """One warning per folder for names that are not UTF-8, one per special file (see the module)."""
    if listing.bad_names:
        names = [shown_name(p.name) for p in listing.bad_names]
        more = f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
        what = "an entry whose name is" if len(names) == 1 else f"{len(names)} entries whose names are"
        one = len(names) == 1
        diags.warning(
            folder,
            f"{what} not valid UTF-8 ({', '.join(repr(n) for n in names[:MAX_NAMED])}{more}): read, with each "
            f"byte that is not UTF-8 shown as U+FFFD in messages and pages; rename {'it' if one else 'them'} to "
            f"keep {'its name' if one else 'their names'}",
        )
    for path, kind in listing.special:
        diags.items.append(
            Diagnostic(_shown(path, diags.root), None, "warning", f"{kind}, not a regular file: not read")
        )


def _shown(path: Path, root: Path | None) -> str:
    """The link's path as diagnostics show paths (relative to the source's parent), its folder resolved only."""
    placed = real(path.parent) / path.name
    if root is not None:
        try:
            return str(placed.relative_to(real(root).parent))
        except ValueError:
            pass
    return str(path)


def site_marker(folder: Path, max_bytes: int | None = MAX_SITE_MARKER_BYTES) -> dict[str, Any] | None:
    """The `index.json` of a site obs built in `folder` (it says `"generator": "obs"`), else None.

    The one test of "is this an obs site": discovery skips such folders in the sources (pages, not
    runs; a marker over `max_bytes` is not read), the output folder checks what it may replace.
    """
    marker = folder / "index.json"
    try:
        if max_bytes is not None and marker.stat().st_size > max_bytes:
            return None
        data = orjson.loads(marker.read_bytes())  # several times a build: orjson, ~10x json's speed
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and data.get("generator") == "obs" else None


def is_obs_site(folder: Path, listing: Listing | None = None) -> bool:
    """A site obs built; `listing`, when the folder was listed already, saves opening a missing file."""
    if listing is not None and "index.json" not in listing.names:
        return False
    return site_marker(folder) is not None
