"""Writing the site: built in a staging folder, published in one step, one build at a time.

The output path (`site` below) is a symbolic link to a complete version of the site. Beside it:

    site -> .site.obs/site.<id>       the published site: a relative link, switched in one rename
    .site.obs/
        lock                          held by the build (or `obs serve`) writing this output
        site.<id>/                    the version the link points to (complete)
        site.<id>.files               the files obs wrote into it (JSON), to tell a user's files apart
        building-<id>/                a build in progress (debris if that build was killed)
        link-<id>                     the new link, for the moment before it is renamed over `site`
    .obs-cache/site/                  the build cache (obs.cache)

Why a link: rename(2) replaces a link with another in one step (POSIX; Linux and macOS alike), so
a reader, `obs serve` or a deploy step opening `site/index.html` sees the old version or the new
one, never a missing or half-written site, whatever moment a build is killed at. A folder cannot
be replaced that way: its swap takes two renames with no site in between.

The rules kept here:
- the output may never be, contain or sit inside the source tree; a non-empty folder that obs did
  not make is never replaced (`obs build -o ~` cannot wipe a home folder);
- one build per output at a time (`output_lock`); whoever holds the lock removes the debris of
  builds that were killed;
- files in the site that obs did not write (a CNAME, a user's notes) are carried into the new
  version and named; `--clean` drops them and names each one. A source-side `static/` folder is
  copied into every version;
- a build that would replace a site having runs by one with none, or with less than half of them,
  is refused unless forced.
"""

from __future__ import annotations

import bisect
import contextlib
import filecmp
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import orjson

from obs.diagnostics import Diagnostic, Severity
from obs.numbers import plural
from obs.safepaths import is_obs_site, site_marker

MARKER = "index.json"
STATIC_DIR = "static"  # at the top of the source tree: copied into every site, never read as runs
LOCK_FILE = "lock"
PAUSE_ENV = "OBS_TEST_PAUSE_AT"  # tests: stop at a named step (see fault_point)
RESUME_ENV = "OBS_TEST_RESUME_FILE"  # tests: ... until this file exists
# Names a site made by an obs without the written-files record may hold: what is not among them,
# nor written by the new build, is a user's file and is kept.
LEGACY_OBS_NAMES = frozenset(
    {
        MARKER,
        ".nojekyll",
        "404.html",
        "sitemap.xml",
        "index.html",
        "changes.html",
        "compare.html",
        "ledger.html",
        "sweeps.html",
        "archive",
        "arms",
        "assets",
        "campaigns",
        "runs",
        "specs",
    }
)
MAX_NAMED = 8  # files named in one message; the rest are counted
MAX_LINK_HOPS = 40


class OutputError(Exception):
    """The output cannot be written as asked: a usage problem (exit 2), never a crash."""


class OutputBusy(OutputError):
    """Another obs process holds the output's lock."""


class EmptyingRefused(OutputError):
    """The new build would replace a site with runs by one with none or far fewer."""


def fault_point(name: str) -> None:
    """Pause here when OBS_TEST_PAUSE_AT names this step, so a test can kill the process at it.

    The fault tests need to kill a build between two given syscalls; a sleep-and-hope test cannot
    hit a window of microseconds. With OBS_TEST_RESUME_FILE set, the pause ends when that file
    exists (a test changes the source mid-build, then lets the build go on). Costs one environment
    lookup otherwise.
    """
    if os.environ.get(PAUSE_ENV) == name:
        sys.stderr.write(f"obs: paused at {name}\n")
        sys.stderr.flush()
        resume = os.environ.get(RESUME_ENV)
        while not (resume and os.path.exists(resume)):
            time.sleep(0.05 if resume else 60)


# --- where things are -------------------------------------------------------------------------


def output_location(out: Path) -> Path:
    """The output path with its folder resolved and its own name kept.

    The name is our link; resolving it would name one version instead of the output. A link that
    obs did not make (`site -> /var/www/html`) is followed: the output is where it points.
    """
    path = Path(os.path.abspath(out))
    loc = path.parent.resolve() / path.name
    for _ in range(MAX_LINK_HOPS):  # follow the user's links one at a time, stopping at ours
        if not loc.is_symlink() or _our_version(loc) is not None:
            return loc
        target = Path(os.path.abspath(loc.parent / os.readlink(loc)))
        loc = target.parent.resolve() / target.name
    raise OutputError(f"{out}: too many levels of symbolic links")


def versions_dir(loc: Path) -> Path:
    """The hidden folder beside the output: versions, the lock, builds in progress."""
    return loc.parent / f".{loc.name}.obs"


def _our_version(loc: Path) -> str | None:
    """The version folder name our link at `loc` points to; None when `loc` is not our link."""
    try:
        target = Path(os.readlink(loc))
    except OSError:
        return None
    if target.parent.as_posix() == f".{loc.name}.obs" and target.name.startswith(f"{loc.name}."):
        return target.name
    return None


def current_version(out: Path) -> str | None:
    """The published version of `out` (None for no site, or a plain folder made by an older obs)."""
    return _our_version(output_location(out))


def check_output_location(source: Path, out: Path) -> None:
    """Refuse an output obs may not replace: in or around the source, a file, a folder obs did not make."""
    loc = output_location(out)
    src, dst = source.resolve(), loc.resolve()
    if dst == src or src.is_relative_to(dst) or dst.is_relative_to(src) or loc.is_relative_to(src):
        raise OutputError(f"the output folder {out} must be outside the source tree {source} (obs never writes there)")
    if dst.exists() and not dst.is_dir():
        raise OutputError(f"{out} exists and is not a folder")
    if dst.is_dir() and not is_obs_site(dst):
        entries = sorted(p.name for p in dst.iterdir())
        if entries:
            raise OutputError(
                f"{out} is not empty and was not made by obs (it holds {_name_some(entries)}); refusing to "
                f"replace it. Choose another -o; files meant for the site go in {source}/{STATIC_DIR}/"
            )


def site_run_count(folder: Path) -> int | None:
    """How many runs the obs site in `folder` lists (None when it is not an obs site)."""
    data = site_marker(folder, max_bytes=None)  # an output site of any size is still ours
    if data is None:
        return None
    runs = data.get("runs")
    return len(runs) if isinstance(runs, list) else 0


def _name_some(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return shown + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


# --- one build at a time ----------------------------------------------------------------------

_HELD: dict[Path, int] = {}  # lock file -> depth, for this process (obs serve builds while it holds it)


@contextlib.contextmanager
def output_lock(
    out: Path, *, wait: bool = False, holder: str = "obs build", on_wait: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold the output's lock: one build (or `obs serve`) per output at a time.

    Two builds into one output would hard-link each other's half-made pages and share one cache;
    the issue that asked for this lock saw them mix results silently. The lock is an flock on a
    file that is never deleted, so it dies with its process (a killed build never leaves a stale
    lock) and works on Linux and macOS. Re-entrant within a process. Windows has no fcntl: there
    the lock is not taken (obs does not support Windows publishing; see docs/publishing.md).

    Whoever takes the lock first removes what killed builds left behind: nobody else can be
    writing there while it is held.
    """
    loc = output_location(out)
    folder = versions_dir(loc)
    path = folder / LOCK_FILE
    if path in _HELD:
        _HELD[path] += 1
        try:
            yield
        finally:
            _HELD[path] -= 1
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise OutputError(f"cannot write beside {out}: {exc.strerror} ({exc.filename or folder})") from exc
    try:
        if not _try_lock(fd):
            who = _read_holder(fd)
            if not wait:
                raise OutputBusy(
                    f"{out} is being written by {who}; try again when it has finished, or add --wait to queue"
                )
            if on_wait is not None:
                on_wait(f"waiting for {who} to finish with {out}")
            _lock(fd)
        _write_holder(fd, holder)
        _HELD[path] = 1
        remove_debris(loc)
        yield
    finally:
        _HELD.pop(path, None)
        os.close(fd)  # releases the lock


def lock_is_free(out: Path) -> bool:
    """True when no other process holds the output's lock (the quick no-op check asks first)."""
    path = versions_dir(output_location(out)) / LOCK_FILE
    if path in _HELD:
        return True
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return True  # no lock file: nobody has ever built here
    try:
        return _try_lock(fd)
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows: no lock (see output_lock)
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _lock(fd: int) -> None:
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX)


def _read_holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 200).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "another obs process"


def _write_holder(fd: int, holder: str) -> None:
    """Say who holds the lock, for the message another build shows."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{holder} (pid {os.getpid()})\n".encode())


def remove_debris(loc: Path) -> list[str]:
    """Remove what killed builds left: builds in progress, links, versions no link points to.

    Only called under the lock. Folders an older obs left beside the output (`.site.building-*`,
    `.site.old-*`) go too, the old ones only while a site is in place: after a kill between that
    version's two renames, `.site.old-*` was the only complete copy.
    """
    removed: list[str] = []
    folder = versions_dir(loc)
    keep = {LOCK_FILE}
    version = _our_version(loc)
    if version is not None:
        keep |= {version, f"{version}.files"}
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name not in keep:
                _remove(Path(entry.path))
                removed.append(entry.name)
    site_in_place = loc.is_dir()
    with contextlib.suppress(OSError):
        for entry in os.scandir(loc.parent):
            if entry.name.startswith(f".{loc.name}.building-") or (
                site_in_place and entry.name.startswith(f".{loc.name}.old-")
            ):
                _remove(Path(entry.path))
                removed.append(entry.name)
    return removed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


# --- the staging folder and the publish step ----------------------------------------------------


FOLDERS_KEPT = 4096  # folders a staging area remembers having made (every run's was ~0.15 KB a run, issue 32)


class Staging:
    """A new version of the site, built beside the output; `commit()` publishes it, `discard()` drops it."""

    def __init__(self, out: Path) -> None:
        self.given = out  # as the user wrote it, for messages
        self.out = output_location(out)
        self.versions = versions_dir(self.out)
        self.versions.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix="building-", dir=self.versions))
        self.version = f"{self.out.name}.{self.path.name.removeprefix('building-')}"
        self._root = os.fspath(self.path)
        self._folders: set[str] = {self._root}
        self._record: tuple[SortedNames, list[str]] | None = None  # what obs wrote, what static/ gave (finish())
        self._published = False
        fault_point("staging")

    def _folder_for(self, rel: str) -> str:
        """The staging path of `rel`, its folder made once per build (a mkdir per file is a syscall each).

        Plain strings, not Path objects: a rebuild links every file of every reused run (thousands),
        and pathlib's joins and hashes cost several times the link itself."""
        target = f"{self._root}/{rel}"
        folder = target.rpartition("/")[0]
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            if len(self._folders) >= FOLDERS_KEPT:  # a run's files are written together: the recent ones do
                self._folders = {self._root}
            while folder not in self._folders and len(folder) > len(self._root):
                self._folders.add(folder)
                folder = folder.rpartition("/")[0]
        return target

    def write(self, rel: str, data: bytes) -> None:
        """Write `rel`; when the current site already has exactly these bytes, hard-link that file instead.

        Most pages of a rebuild come out byte-identical; a link is one cheap syscall where a write
        allocates and fills new blocks, and both leave the same bytes in the new site.
        """
        target = self._folder_for(rel)
        previous = self.out / rel
        try:
            if previous.stat().st_size == len(data) and previous.read_bytes() == data:
                os.link(previous, target)
                return
        except OSError:
            pass
        with open(target, "wb") as fh:
            fh.write(data)

    def remove(self, rel: str) -> None:
        """Take `rel` out of the new site (a run built again: its next files must not be written through a hard
        link into the published site's copy)."""
        Path(f"{self._root}/{rel}").unlink(missing_ok=True)

    def link(self, rel: str, src: str | Path) -> None:
        """Put the existing file `src` into the new site as `rel` (a hard link, or a copy across devices)."""
        target = self._folder_for(rel)
        try:
            os.link(src, target)
        except OSError:
            shutil.copy2(src, target)

    def copy_file(self, rel: str, src: Path) -> None:
        """Copy `src` (outside the site) in as `rel`; hard-link the current site's copy when identical.

        Never a hard link to `src` itself: editing the site must not edit the sources.
        """
        target = self._folder_for(rel)
        previous = self.out / rel
        try:
            if previous.stat().st_size == src.stat().st_size and filecmp.cmp(previous, src, shallow=False):
                os.link(previous, target)
                return
        except OSError:
            pass
        shutil.copyfile(src, target)

    def copy_tree(self, src: Path, rel: str) -> None:
        for path in sorted(src.rglob("*")):
            if path.is_file():
                self.write(f"{rel}/{path.relative_to(src).as_posix()}", path.read_bytes())

    def finish(self, source_root: Path, *, clean: bool = False) -> list[Diagnostic]:
        """Add what obs does not make: `static/` from the sources, and the user's files of the current site.

        Call it once every page is written (before the manifest, so the manifest counts its
        warnings). Everything in the staging folder at that point was written by obs; that list is
        kept with the version, so the next build can tell the user's files from obs's.
        """
        diags: list[Diagnostic] = []
        made = SortedNames(sorted_entries(self.path))
        made.add(MARKER)
        static = self._copy_static(source_root, made, diags)
        self._carry_user_files(made, static, clean, diags)
        self._record = (made, sorted(static))
        return diags

    def _copy_static(self, source_root: Path, taken: SortedNames, diags: list[Diagnostic]) -> set[str]:
        """Copy SOURCE/static/ into the site as it is; a file obs writes itself is not replaced."""

        def warn(path: Path, message: str) -> None:  # named as written, not where a link leads
            diags.append(Diagnostic(path.relative_to(source_root.parent).as_posix(), None, "warning", message))

        files, problems = static_files(source_root)
        for path, problem in problems:
            warn(path, problem)
        copied: set[str] = set()
        for rel, path in files:
            if rel in taken:
                warn(path, f"obs writes {rel} itself; this file was not copied into the site")
            else:
                self.copy_file(rel, path)
                copied.add(rel)
        return copied

    def _carry_user_files(self, made: SortedNames, static: set[str], clean: bool, diags: list[Diagnostic]) -> None:
        """Keep the current site's files that obs did not write (the rule in README, "The output folder").

        A file of the same name that obs now writes wins, and is named: a page from the templates, or
        one from static/ (moving a CNAME into static/ is the intended way; same bytes say nothing).
        """
        if site_run_count(self.out) is None:
            return  # no obs site here yet (check_output_location refused a foreign one)
        recorded = self._current_record()
        current = _entries_under(self.out)
        if recorded is None:  # made by an obs that kept no record: obs's own names are known
            top = {rel.split("/", 1)[0] for rel in made} | LEGACY_OBS_NAMES
            theirs = [rel for rel in current if rel.split("/", 1)[0] not in top]
        else:
            theirs = [rel for rel in current if rel not in recorded]
        if clean:
            if theirs:
                diags.append(
                    _note(self.given, "warning", f"--clean removed {_count(theirs)} obs did not write", theirs)
                )
            return
        by_page = [rel for rel in theirs if rel in made]
        by_static = [rel for rel in theirs if rel in static and not _same_file(self.out / rel, self.path / rel)]
        kept = [rel for rel in theirs if rel not in made and rel not in static]
        for rel in kept:
            self._carry(rel)
        if kept:
            diags.append(_note(self.given, "info", f"kept {_count(kept)} obs did not write", kept))
        if by_page:
            what = f"replaced {_count(by_page)} obs did not write by obs's page of the same name"
            diags.append(_note(self.given, "warning", what, by_page))
        if by_static:
            what = f"replaced {_count(by_static)} obs did not write by the {STATIC_DIR}/ file of the same name"
            diags.append(_note(self.given, "info", what, by_static))

    def _current_record(self) -> SortedNames | None:
        record = read_record(self.out)
        return None if record is None else SortedNames(sorted(record["written"] + record["static"]))

    def _carry(self, rel: str) -> None:
        src = self.out / rel
        target = self._folder_for(rel)
        if src.is_symlink():
            os.symlink(os.readlink(src), target)
        else:
            self.link(rel, src)

    def commit(self, runs: int | None = None, *, force: bool = False) -> None:
        """Publish the staged site: one rename of a new link over the output makes it visible.

        Steps, each safe to be killed after: (1) record the files obs wrote, (2) rename the staging
        folder to its version name, (3) make a link to it, (4) rename the link over the output: the
        switch, (5) remove the versions no link points to. Before (4) the old site is in place; from
        (4) the new one; leftovers of any step are removed by the next build under the lock. The one
        exception is the first build over a plain folder made by an older obs: that folder is moved
        aside before the link takes its place, two renames, once.
        """
        if runs is not None and not force:
            check_not_emptying(self.out, self.given, runs)
        fault_point("staged")
        written, static = self._record or (sorted_entries(self.path), [])
        version = self.version
        os.chmod(self.path, 0o755)
        _write_atomic(self.versions / f"{version}.files", _record_chunks(written, static))
        fault_point("recorded")
        final = self.versions / version
        os.rename(self.path, final)
        self.path = final
        fault_point("renamed")
        link = self.versions / f"link-{version}"
        os.symlink(f"{self.versions.name}/{version}", link)
        fault_point("linked")
        if self.out.is_dir() and not self.out.is_symlink():  # a plain folder: an older obs made it
            os.rename(self.out, self.versions / f"{self.out.name}.legacy-{os.urandom(4).hex()}")
        os.replace(link, self.out)
        self._published = True
        fault_point("switched")
        remove_debris(self.out)

    def discard(self) -> None:
        """Drop the staged site and its leftovers, unless the output already points at it (a signal
        arriving just after the switch)."""
        if self._published or _our_version(self.out) == self.version:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        for leftover in (f"{self.version}.files", f"link-{self.version}", f".{self.version}.files.{os.getpid()}"):
            _remove(self.versions / leftover)


def read_record(loc: Path) -> dict[str, list[str]] | None:
    """What obs wrote into the published version at `loc`: {"written": pages, "static": from static/}."""
    version = _our_version(loc)
    if version is None:
        return None
    try:
        data = orjson.loads((versions_dir(loc) / f"{version}.files").read_bytes())
        return {"written": [str(x) for x in data["written"]], "static": [str(x) for x in data["static"]]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def static_files(source_root: Path) -> tuple[list[tuple[str, Path]], list[tuple[Path, str]]]:
    """The regular files under SOURCE/static/ (relative name, path), and what was left out and why.

    No link is followed, at any depth: a link could publish a file from outside the sources.
    """
    folder = source_root / STATIC_DIR
    files: list[tuple[str, Path]] = []
    problems: list[tuple[Path, str]] = []
    if folder.is_symlink():
        return files, [(folder, "is a symbolic link; static files are not read through links (nothing copied)")]
    for dirpath, dirnames, filenames in os.walk(folder):
        base = Path(dirpath)
        for name in sorted(dirnames + filenames):
            path = base / name
            if path.is_symlink():
                problems.append((path, "is a symbolic link; not copied into the site (links are not followed)"))
            elif name in filenames:
                if path.is_file():
                    files.append((path.relative_to(folder).as_posix(), path))
                else:
                    problems.append((path, "is not a regular file; not copied into the site"))
    return sorted(files), problems


def static_unchanged(source_root: Path, out: Path) -> bool:
    """True when the published site holds exactly the current `static/` files, byte for byte.

    A build whose pages are all reusable still publishes when static/ changed, and when a static
    file is left out (a link, a page obs writes): its warning is said on every build, not once.
    """
    loc = output_location(out)
    record = read_record(loc)
    files, problems = static_files(source_root)
    if record is None:
        return not files and not problems
    written = set(record["written"])
    if problems or any(rel in written for rel, _ in files):
        return False
    if sorted(rel for rel, _ in files) != sorted(record["static"]):
        return False
    try:
        return all(filecmp.cmp(path, loc / rel, shallow=False) for rel, path in files)
    except OSError:
        return False


def check_not_emptying(loc: Path, given: Path, runs: int) -> None:
    """Refuse to replace a site having runs by one with none, or with less than half of them.

    An empty or wrong source folder builds fine and would silently publish an empty site.
    """
    before = site_run_count(loc)
    if not before or (runs and 2 * (before - runs) <= before):
        return
    raise EmptyingRefused(
        f"refusing to replace {given} ({plural(before, 'run')}) with a build of {plural(runs, 'run')}: "
        "is this the right source folder? Add --force to publish it anyway."
    )


class SortedNames:
    """Relative names in sorted order, looked up by bisection, held as text a few hundred names a string.

    A site of 100,000 runs has ~600,000 files: as a list of strings their names were ~55 MB held from the walk
    to the record's write at the end of a build (issue 32), as a set ~50 bytes a name more. Here each `CHUNK`
    sorted names are one string joined by NUL (which no file name holds), ~30 bytes a name; a lookup bisects
    the chunks' first names, then the one chunk's names."""

    CHUNK = 512
    __slots__ = ("_chunks", "_count", "_firsts")

    def __init__(self, names: Iterable[str]) -> None:
        """`names`: sorted, each once (read once, as they come: a walk's names need not be held together)."""
        self._chunks: list[str] = []
        self._firsts: list[str] = []  # each chunk's first name
        self._count = 0
        batch: list[str] = []
        for name in names:
            batch.append(name)
            if len(batch) == self.CHUNK:
                self._keep(batch)
                batch = []
        if batch:
            self._keep(batch)

    def _keep(self, batch: list[str]) -> None:
        self._chunks.append("\0".join(batch))
        self._firsts.append(batch[0])
        self._count += len(batch)

    def _chunk_for(self, rel: str) -> int:
        """The chunk that holds `rel` if any does (-1: before the first name)."""
        return bisect.bisect_right(self._firsts, rel) - 1

    def __contains__(self, rel: object) -> bool:
        if not isinstance(rel, str):
            return False
        i = self._chunk_for(rel)
        if i < 0:
            return False
        names = self._chunks[i].split("\0")
        j = bisect.bisect_left(names, rel)
        return j < len(names) and names[j] == rel

    def __iter__(self) -> Iterator[str]:
        for chunk in self._chunks:
            yield from chunk.split("\0")

    def __len__(self) -> int:
        return self._count

    def add(self, rel: str) -> None:
        if rel in self:
            return
        if not self._chunks:
            self._keep([rel])
            return
        i = max(self._chunk_for(rel), 0)
        names = self._chunks[i].split("\0")
        bisect.insort(names, rel)
        self._chunks[i], self._firsts[i] = "\0".join(names), names[0]
        self._count += 1


def sorted_entries(root: Path) -> Iterator[str]:
    """Relative paths of the files and links under `root` (links are listed, not followed), in sorted order, as
    the walk comes to them: what `os.walk` over every file, then a sort, gives, without holding the names to sort.

    In a folder, a file sorts by its name and a folder by its name and "/", which is where every path below it
    sorts among the folder's other paths (no name holds "/"), so going into each folder in that order gives the
    paths in order. Folders that cannot be read are passed over, as `os.walk` does."""

    def listing(path: str) -> list[str]:
        try:
            with os.scandir(path) as it:
                return sorted(e.name + "/" if e.is_dir(follow_symlinks=False) else e.name for e in it)
        except OSError:
            return []

    def walk(path: str, prefix: str) -> Iterator[str]:
        for key in listing(path):
            if key.endswith("/"):
                yield from walk(os.path.join(path, key[:-1]), prefix + key)
            else:
                yield prefix + key

    yield from walk(os.fspath(root), "")


def _entries_under(root: Path) -> list[str]:
    """Relative paths of the files and links under `root` (links are listed, not followed), sorted.

    Plain strings, not Path objects: this walks every file of a site on every publish.
    """
    return list(sorted_entries(root))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def _count(rels: list[str]) -> str:
    return plural(len(rels), "file")


def _note(where: Path, severity: Severity, what: str, rels: list[str]) -> Diagnostic:
    hint = f" (files for the site belong in the source's {STATIC_DIR}/ folder)" if severity == "warning" else ""
    return Diagnostic(str(where), None, severity, f"{what}: {_name_some(sorted(rels))}{hint}")


def _write_atomic(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write `data` (or its chunks, each written as it comes) beside `path`, then rename it over `path`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    with open(tmp, "wb") as fh:
        if isinstance(data, bytes):
            fh.write(data)
        else:
            for chunk in data:
                fh.write(chunk)
    os.replace(tmp, path)


def _record_chunks(written: Iterable[str], static: list[str]) -> Iterator[bytes]:
    """The record `{"written": [...], "static": [...]}` as `json.dumps(record, indent=0)` writes it, in UTF-8, a
    few thousand names at a time: a site's record of 600,000 files was ~25 MB of text made at once, twice (the
    string and its bytes), and its names need not be a list (`SortedNames`)."""

    def items(values: Iterable[str]) -> Iterator[str]:
        first = True
        for value in values:
            yield ("[\n" if first else ",\n") + json.dumps(value)
            first = False
        yield "[]" if first else "\n]"

    def pieces() -> Iterator[str]:
        yield '{\n"written": '
        yield from items(written)
        yield ',\n"static": '
        yield from items(static)
        yield "\n}"

    batch: list[str] = []
    for piece in pieces():
        batch.append(piece)
        if len(batch) >= 4096:
            yield "".join(batch).encode("utf-8")
            batch.clear()
    if batch:
        yield "".join(batch).encode("utf-8")
