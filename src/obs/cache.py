"""The build cache: what the previous build made from which inputs, so a rebuild can reuse it.

A page is a pure function of its inputs, so a hash of those inputs decides whether it must be made
again. File contents are hashed once and remembered by (size, mtime, inode): a no-op rebuild stats
files instead of reading gigabytes. The cache lives beside the output folder, never in the source
tree, and a damaged or foreign cache is simply ignored (the build then starts from scratch).

The cache describes one published version of the site and is trusted only for it: `save()` (called
after the publish step) records the version the output's link points to, and `open()` trusts
nothing when the output points elsewhere: a build killed between its publish and its cache write,
or a site replaced by hand, costs a full rebuild, never pages mixed from two builds. The cache is
only changed by the holder of the output's lock (obs.write.output_lock).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
import threading
from array import array
from bisect import bisect_left
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from obs import __version__
from obs.safepaths import real
from obs.urls import run_dir
from obs.write import OutputError, current_version, output_location

CACHE_FORMAT = 5
# A SQLite file (the standard library's): the header and each page group as a row of `lines`, each input file's
# hash a row of `files`, each run.yaml's identity a row of `peeks` and each run's entry a row of `runs`; a file's
# hash, a peek and a run's summary are read when asked for, never all held (format 3 held every file's hash: ~1.6 KB
# a run; format 4 every run.yaml's peek, ~0.3 KB a run).
# Format 1 was one JSON document (its parse took ~6 times the file's size at once: ~2 GB at 100,000 runs);
# format 2 a JSON line each, every run's summary held from the start to the end of a build (~2.4 KB a run of
# the ~20 KB a run the build process held at 10,000 runs, issue 32).
STATE_FILE = "state.sqlite"
_SCHEMA = (
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE lines (kind TEXT, key TEXT, value BLOB)",
    "CREATE TABLE runs (id TEXT PRIMARY KEY, entry BLOB, summary BLOB)",
    "CREATE TABLE files (path TEXT PRIMARY KEY, value BLOB)",
    "CREATE TABLE peeks (path TEXT PRIMARY KEY, value BLOB)",
)


def cache_dir_for(out: Path) -> Path:
    """`.obs-cache/<name>` beside the output (named after the output, not the version it links to)."""
    loc = output_location(out)
    return loc.parent / ".obs-cache" / loc.name


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def tree_hash(folder: Path, pattern: str = "*") -> str:
    """Hash of the files under `folder` matching `pattern` (names and contents)."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob(pattern) if p.is_file()):
        h.update(os.fsencode(path.relative_to(folder).as_posix()) + b"\0")
        h.update(sha256_file(path).encode())
    return h.hexdigest()


def hash_json(value: Any) -> str:
    option = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
    try:
        data = orjson.dumps(value, option=option, default=str)
    except TypeError:  # a name that is not UTF-8, kept surrogate-escaped: hashed by its bytes
        data = orjson.dumps(_bytes_escaped(value), option=option, default=str)
    return hashlib.sha256(data).hexdigest()


def hash_json_each(values: Iterable[Any]) -> str:
    """The values hashed one after the other (each as `hash_json` does), in the order given: the key of something
    made from many runs' summaries, with none but the current one's JSON held (a list of every summary's JSON
    was ~8-12 KB a run, issue 32)."""
    digest = hashlib.sha256()
    for value in values:
        digest.update(hash_json(value).encode())
    return digest.hexdigest()


def exact_bytes(data: bytes) -> bytes:
    """`data` in a bytes object of its own size. orjson.dumps returns its output in the buffer it wrote
    into (~32 KB for a run's summary of ~2.4 KB: the object reports the short length, the allocation
    keeps the buffer's), so a build holding one summary a run held ~13 times their size (3 GB at 100,000
    runs, read back from the cache); a copy costs a microsecond."""
    return bytes(memoryview(data))


def _bytes_escaped(value: Any) -> Any:
    """`value` with each string that holds a surrogate escape written with its bytes as `\\xNN` (distinct)."""
    if isinstance(value, str):
        return value if _text(value) else os.fsencode(value).decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {_bytes_escaped(k): _bytes_escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_bytes_escaped(v) for v in value]
    if isinstance(value, Path):
        return _bytes_escaped(str(value))
    return value


class SummaryStore:
    """Run summaries (JSON bytes) and file hashes in a SQLite file, read by run id or path: the previous build's
    state file. One connection, used from any thread under a lock (a Dask build takes results in from its
    client's threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.con = self._connect(path)

    def _connect(self, path: Path) -> sqlite3.Connection:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)

    def summary(self, run_id: str) -> bytes:
        with self.lock:
            row = self.con.execute("SELECT summary FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(run_id)
        return bytes(row[0])

    def file(self, path: str, table: str = "files") -> list[Any] | None:
        """A remembered file's [size, mtime_ns, inode, sha256] (`table` "files") or run.yaml's [size, mtime_ns,
        inode, id, baseline] ("peeks"), or None."""
        with self.lock:
            row = self.con.execute(f"SELECT value FROM {table} WHERE path = ?", (path,)).fetchone()
        return None if row is None else list(orjson.loads(row[0]))

    def files(self, table: str = "files") -> Iterator[tuple[str, bytes]]:
        """Every remembered file's path and value (JSON) in `table`, read a row at a time."""
        with self.lock:
            rows = self.con.execute(f"SELECT path, value FROM {table}")
        yield from rows

    def reopen(self, path: Path) -> None:
        """Read from `path` from now on (the saved state, which holds every run this one held)."""
        with self.lock:
            self.con.close()
            self.path = path
            self.con = SummaryStore._connect(self, path)  # read-only, also for a spill store: the state is saved

    def close(self) -> None:
        with self.lock:
            self.con.close()


class SpillStore(SummaryStore):
    """This build's summaries and file hashes, written to a file beside the state until the state is saved
    (then read from the saved state, and the spill file deleted): a build holds none of them in memory."""

    def _connect(self, path: Path) -> sqlite3.Connection:
        con = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, entry BLOB, summary BLOB)")
        con.execute("CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, value BLOB)")
        con.execute("CREATE TABLE IF NOT EXISTS peeks (path TEXT PRIMARY KEY, value BLOB)")
        return con

    def put(self, run_id: str, summary: bytes) -> None:
        with self.lock:
            self.con.execute("INSERT OR REPLACE INTO runs (id, entry, summary) VALUES (?, NULL, ?)", (run_id, summary))

    def put_file(self, path: str, value: list[Any], table: str = "files") -> None:
        with self.lock:
            self.con.execute(f"INSERT OR REPLACE INTO {table} VALUES (?, ?)", (path, orjson.dumps(value)))

    def settle(self, state: Path) -> None:
        """The state is saved with every row this held: read from it from now on, and delete the spill file."""
        spill = self.path
        self.reopen(state)
        spill.unlink(missing_ok=True)


class RunEntry:
    """What the cache remembers of one built run. Its summary (compact JSON bytes) is either held or, for an
    entry read from the cache or spilled by the build, read from its `SummaryStore` each time it is asked for:
    at 100,000 runs the summaries held were ~240 MB of a build's memory (issue 32).

    A build holds an entry per run, so the rest is kept small too: the run's files as one string (their names
    below `runs/<slug>/` when all are there, as a run's always are: ~120 bytes where a list of five paths was
    ~470), no list for no diagnostics, and the entry itself is what reads its summary back (`__call__`)."""

    __slots__ = ("_files", "_id", "_store", "_summary", "diagnostics", "digest_hash", "key", "slug")

    def __init__(
        self,
        key: str,
        slug: str,
        files: Sequence[str],
        summary: bytes | dict[str, Any] | None,
        digest_hash: str,
        diagnostics: Sequence[dict[str, Any]],
        *,
        store: SummaryStore | None = None,
        run_id: str = "",
    ) -> None:
        self.key, self.slug, self._files = key, slug, _pack(files, slug)
        self.digest_hash, self.diagnostics = digest_hash, (diagnostics or ())
        if summary is not None and not isinstance(summary, bytes):  # a summary as JSON
            summary = exact_bytes(orjson.dumps(summary))
        self._summary, self._store, self._id = summary, store, run_id

    @property
    def files(self) -> list[str]:
        """The run's files in the site (relative to its root), in the order the run's build listed them."""
        return _unpack(self._files, self.slug)

    @property
    def summary(self) -> bytes:
        if self._summary is not None:
            return self._summary
        assert self._store is not None
        return self._store.summary(self._id)

    def __call__(self) -> bytes:
        return self.summary

    def summary_source(self) -> bytes | Callable[[], bytes]:
        """The summary's bytes when held, else what reads them: the entry itself (for `obs.lazysummary`, which
        then holds no bytes; a `functools.partial` per run was ~250 bytes more at 100,000 runs)."""
        if self._summary is not None:
            return self._summary
        return self

    def spill(self, store: SpillStore, run_id: str) -> None:
        """Move the held summary into `store` (this build's spill file)."""
        if self._summary is not None:
            store.put(run_id, self._summary)
            self._summary, self._store, self._id = None, store, run_id

    def entry_json(self) -> bytes:
        """Everything but the summary, as JSON."""
        return orjson.dumps([self.key, self.slug, self.files, self.digest_hash, self.diagnostics])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunEntry):
            return NotImplemented
        return self.entry_json() == other.entry_json() and self.summary == other.summary

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RunEntry(key={self.key!r}, slug={self.slug!r}, files={len(self.files)})"


_SEP = "\0"  # never in a file name
_WHOLE = "\1"  # marks files packed with their whole names (some not below the run's folder)


def _pack(files: Sequence[str], slug: str) -> str:
    """A run's file names as one string: below its folder, the names there; else, marked, the whole names."""
    head = run_dir(slug)
    if all(len(f) > len(head) and f.startswith(head) for f in files):
        return _SEP.join(f[len(head) :] for f in files)
    return _WHOLE + _SEP.join(files)


def _unpack(packed: str, slug: str) -> list[str]:
    if packed.startswith(_WHOLE):
        return packed[1:].split(_SEP) if len(packed) > 1 else []
    if not packed:
        return []
    head = run_dir(slug)
    return [head + name for name in packed.split(_SEP)]


class LiveNames:
    """The names of the files this build's runs read, as a sorted array of their hashes: which remembered files
    `BuildCache.save` keeps. As a set of paths, at the end of a 100,000-run build, they were ~400,000 strings,
    ~50 MB held while the state was written (issue 32); this is 8 bytes a name. A name whose hash equals a live
    one's (about 1 in 2**64 a pair) only keeps a row another build would have dropped, and a remembered row is
    used only when its file's size, mtime and inode still match."""

    def __init__(self, names: Iterable[str]) -> None:
        self._hashes = array("q", sorted(hash(name) for name in names))

    def __contains__(self, name: object) -> bool:
        h = hash(name)
        i = bisect_left(self._hashes, h)
        return i < len(self._hashes) and self._hashes[i] == h

    def __len__(self) -> int:
        return len(self._hashes)


@dataclass
class BuildCache:
    folder: Path
    # path -> [size, mtime_ns, ino, sha] of a cache with no spill file (made in memory, as in tests, or a
    # throwaway one); an opened cache keeps this build's in its spill file and reads the last build's by path
    file_hashes: dict[str, list[Any]] = field(default_factory=dict)
    runs: dict[str, RunEntry] = field(default_factory=dict)
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)  # group -> {key, files}
    # run.yaml -> [size, mtime_ns, ino, id, baseline] of a cache with no spill file; an opened cache keeps this
    # build's in its spill file and reads the last build's by path (as `file_hashes`)
    peeks: dict[str, list[Any]] = field(default_factory=dict)
    hits: int = 0
    site: Path | None = None  # the output this cache describes (None: not tied to one, as in tests)
    previous: SummaryStore | None = None  # the summaries of the state file read (the previous build's)
    spilled: SpillStore | None = None  # the summaries and file hashes this build made, until the state is saved
    spills: bool = False  # opened from a folder (`open`): this build's summaries and file hashes go to disk

    @classmethod
    def open(cls, folder: Path, *, clean: bool = False, site: Path | None = None) -> BuildCache:
        """The cache in `folder`, empty when `clean`, unusable, or made for another version of `site`.

        Raises OutputError when the folder cannot be written: better said before building than as
        a traceback at the end.
        """
        _check_writable(folder)
        cache = cls(folder, site=site, spills=True)
        for stale in (folder / "digests").glob("*.json.new"):  # a killed build's (we hold the lock)
            stale.unlink(missing_ok=True)
        for stale in folder.glob(f".{STATE_FILE}.*"):
            stale.unlink(missing_ok=True)
        (folder / "state.jsonl").unlink(missing_ok=True)  # format 2's, never read again
        if clean or not (folder / STATE_FILE).is_file():
            return cache
        store = None
        try:
            store = SummaryStore(folder / STATE_FILE)
            meta = dict(store.con.execute("SELECT name, value FROM meta").fetchall())
            if meta.get("format") != str(CACHE_FORMAT) or meta.get("obs_version") != __version__:
                store.close()
                return cache
            if site is not None and meta.get("site_version") != str(current_version(site)):
                store.close()
                return cache  # made for another version of the site: its build did not finish
            for _, key, value in store.con.execute("SELECT kind, key, value FROM lines WHERE kind = 'g'"):
                cache.pages[key] = orjson.loads(value)
            for run_id, entry in store.con.execute("SELECT id, entry FROM runs"):
                key, slug, files, digest_hash, diagnostics = orjson.loads(entry)
                cache.runs[run_id] = RunEntry(
                    key, slug, files, None, digest_hash, diagnostics, store=store, run_id=run_id
                )
        except (sqlite3.Error, ValueError, KeyError, TypeError):
            if store is not None:
                store.close()
            return cls(folder, site=site, spills=True)
        cache.previous = store
        return cache

    def _spill(self) -> SpillStore:
        if self.spilled is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.spilled = SpillStore(self.folder / f".{STATE_FILE}.{os.getpid()}.spill")
        return self.spilled

    def keep(self, run_id: str, entry: RunEntry) -> RunEntry:
        """`entry` with its summary moved to this build's spill file (read back when asked for)."""
        if self.spills:
            entry.spill(self._spill(), run_id)
        return entry

    def known_file(
        self, key: str, matches: Callable[[list[Any]], bool] = lambda known: True, table: str = "files"
    ) -> list[Any] | None:
        """What is remembered of a file that `matches`: this build's hash (or, `table` "peeks", run.yaml's
        identity), else the last build's (looked up in the last build's table first: a file read again this build
        no longer matches the stat that table has)."""
        known = (self.file_hashes if table == "files" else self.peeks).get(key)
        if known is not None or not _text(key):  # a name that is not UTF-8 is never in a table
            return known if known is not None and matches(known) else None
        for store in (self.previous, self.spilled):
            known = store.file(key, table) if store is not None else None
            if known is not None and matches(known):
                return known
        return None

    def file_sha(self, path: Path) -> str:
        """Content hash of a file, recomputed only when its size, mtime or inode changed."""
        st = path.stat()
        key = str(path)
        known = self.known_file(key, lambda k: k[0] == st.st_size and k[1] == st.st_mtime_ns and k[2] == st.st_ino)
        if known is not None:
            return str(known[3])
        sha = sha256_file(path)
        value = [st.st_size, st.st_mtime_ns, st.st_ino, sha]
        if self.spills and _text(key):
            self._spill().put_file(key, value)
        else:
            self.file_hashes[key] = value
        return sha

    def input_hash(self, files: tuple[Path, ...], root: Path) -> str:
        """Hash of a run's input files: relative names and content hashes."""
        h = hashlib.sha256()
        root_resolved = real(root)  # remembered within safepaths.remembered_locations (a build's planning)
        for path in files:
            try:
                rel = real(path).relative_to(root_resolved).as_posix()
            except ValueError:
                rel = path.name
            try:
                sha = self.file_sha(path)
            except OSError:
                sha = "<unreadable>"
            h.update(os.fsencode(rel) + f"\0{sha}\0".encode())  # a name may hold any byte but / and NUL
        return h.hexdigest()

    def digest_path(self, slug: str) -> Path:
        return self.folder / "digests" / f"{slug}.json"

    def fresh_digest_path(self, slug: str) -> Path:
        """Digests made by this build wait here until the build has been swapped in."""
        return self.folder / "digests" / f"{slug}.json.new"

    def commit_fresh_digests(self) -> None:
        folder = self.folder / "digests"
        if folder.is_dir():
            for path in folder.glob("*.json.new"):
                os.replace(path, path.with_suffix(""))

    def peek_identity(
        self, run_yaml: Path, read: Callable[[Path], tuple[str | None, str | None]]
    ) -> tuple[str | None, str | None]:
        """(id, baseline) of a run.yaml, re-read only when the file changed (YAML parsing is slow)."""
        try:
            st = run_yaml.stat()
        except OSError:
            return None, None
        key = str(run_yaml)
        stat = [st.st_size, st.st_mtime_ns, st.st_ino]
        known = self.known_file(key, lambda k: k[:3] == stat, table="peeks")
        if known is not None:
            return known[3], known[4]
        run_id, baseline = read(run_yaml)
        if self.spills and _text(key):
            self._spill().put_file(key, [*stat, run_id, baseline], table="peeks")
        else:
            self.peeks[key] = [*stat, run_id, baseline]
        return run_id, baseline

    def save(self, live_files: Container[str]) -> None:
        """Write the state atomically (a new file renamed over the old), a row per entry, each run's summary
        copied from where it is (held, the previous state or this build's spill file) one at a time; forget
        hashes of files that no longer exist. The summaries are read from the saved state afterwards."""
        self.file_hashes = {k: v for k, v in self.file_hashes.items() if k in live_files}
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{STATE_FILE}.{os.getpid()}"
        tmp.unlink(missing_ok=True)
        con = sqlite3.connect(tmp, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode=OFF")
            con.execute("PRAGMA synchronous=OFF")
            con.execute("BEGIN")
            for statement in _SCHEMA:
                con.execute(statement)
            meta = {
                "format": str(CACHE_FORMAT),
                "obs_version": __version__,
                "site_version": str(current_version(self.site)) if self.site is not None else "None",
            }
            con.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            con.executemany("INSERT INTO lines VALUES (?, ?, ?)", self._lines())
            # file hashes, this build's first: a file hashed again replaces what the last build knew of it
            con.executemany(
                "INSERT INTO files VALUES (?, ?)",
                ((k, orjson.dumps(v)) for k, v in self.file_hashes.items() if _text(k)),
            )
            con.executemany(
                "INSERT INTO peeks VALUES (?, ?)",
                ((k, orjson.dumps(v)) for k, v in self.peeks.items() if k in live_files and _text(k)),
            )
            for table in ("files", "peeks"):
                for store in (self.spilled, self.previous):
                    if store is not None:
                        con.executemany(
                            f"INSERT OR IGNORE INTO {table} VALUES (?, ?)",
                            ((k, v) for k, v in store.files(table) if k in live_files),
                        )
            con.executemany(
                "INSERT INTO runs VALUES (?, ?, ?)",
                ((run_id, entry.entry_json(), entry.summary) for run_id, entry in sorted(self.runs.items())),
            )
            con.execute("COMMIT")
        finally:
            con.close()
        os.replace(tmp, self.folder / STATE_FILE)
        # every entry of this cache is in the saved state, by its id
        if self.previous is not None:
            self.previous.reopen(self.folder / STATE_FILE)
        if self.spilled is not None:
            self.spilled.settle(self.folder / STATE_FILE)

    def _lines(self) -> Iterator[tuple[str, str, bytes]]:
        for group, made in self.pages.items():  # the site's group lists every page: ~100,000 names
            yield "g", group, orjson.dumps(made, option=orjson.OPT_NON_STR_KEYS)


def _text(key: str) -> bool:
    try:
        key.encode()
    except UnicodeEncodeError:
        return False
    return True


def _check_writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise OutputError(
            f"the build cache {folder} cannot be written ({exc.strerror}); make it writable or delete it"
        ) from exc
