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
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from obs import __version__
from obs.safepaths import real
from obs.write import OutputError, current_version, output_location

CACHE_FORMAT = 2
# One JSON document a line: a header, then each page group ("g"), file hash ("f"), run.yaml peek ("p") and
# run entry ("r"), each parsed on its own. As one document (format 1) parsing took ~6 times the file's size
# at once (orjson's parse arena: 41 MB for 2,000 runs, ~2 GB at 100,000); writing it held a second copy.
STATE_FILE = "state.jsonl"


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


@dataclass
class RunEntry:
    """What the cache remembers of one built run. Its summary is kept as its compact JSON bytes: a build
    holds one entry per run, and at 10,000 runs the summaries as parsed dicts were as large again as
    the `RunSummary` objects made from them (`RunSummary.from_json` reads the bytes)."""

    key: str
    slug: str
    files: list[str]
    summary: bytes
    digest_hash: str
    diagnostics: list[dict[str, Any]]

    def __post_init__(self) -> None:
        if not isinstance(self.summary, bytes):  # read back from the cache file as JSON
            self.summary = exact_bytes(orjson.dumps(self.summary))

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "slug": self.slug,
            "files": self.files,
            "summary": orjson.Fragment(self.summary),
            "digest_hash": self.digest_hash,
            "diagnostics": self.diagnostics,
        }


@dataclass
class BuildCache:
    folder: Path
    file_hashes: dict[str, list[Any]] = field(default_factory=dict)  # path -> [size, mtime_ns, ino, sha]
    runs: dict[str, RunEntry] = field(default_factory=dict)
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)  # group -> {key, files}
    peeks: dict[str, list[Any]] = field(default_factory=dict)  # run.yaml -> [size, mtime_ns, ino, id, baseline]
    hits: int = 0
    site: Path | None = None  # the output this cache describes (None: not tied to one, as in tests)

    @classmethod
    def open(cls, folder: Path, *, clean: bool = False, site: Path | None = None) -> BuildCache:
        """The cache in `folder`, empty when `clean`, unusable, or made for another version of `site`.

        Raises OutputError when the folder cannot be written: better said before building than as
        a traceback at the end.
        """
        _check_writable(folder)
        cache = cls(folder, site=site)
        for stale in (folder / "digests").glob("*.json.new"):  # a killed build's (we hold the lock)
            stale.unlink(missing_ok=True)
        if clean:
            return cache
        try:
            with (folder / STATE_FILE).open("rb") as fh:
                state = orjson.loads(fh.readline())
                if state.get("format") != CACHE_FORMAT or state.get("obs_version") != __version__:
                    return cache
                if site is not None and state.get("site_version") != current_version(site):
                    return cache  # made for another version of the site: its build did not finish
                for line in fh:
                    kind, key, value = orjson.loads(line)
                    if kind == "r":
                        cache.runs[key] = RunEntry(**value)
                    elif kind == "f":
                        cache.file_hashes[key] = value
                    elif kind == "p":
                        cache.peeks[key] = value
                    elif kind == "g":
                        cache.pages[key] = value
        except (OSError, ValueError, KeyError, TypeError):
            return cls(folder, site=site)
        return cache

    def file_sha(self, path: Path) -> str:
        """Content hash of a file, recomputed only when its size, mtime or inode changed."""
        st = path.stat()
        key = str(path)
        known = self.file_hashes.get(key)
        if known and known[0] == st.st_size and known[1] == st.st_mtime_ns and known[2] == st.st_ino:
            return str(known[3])
        sha = sha256_file(path)
        self.file_hashes[key] = [st.st_size, st.st_mtime_ns, st.st_ino, sha]
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
        known = self.peeks.get(key)
        if known and known[:3] == [st.st_size, st.st_mtime_ns, st.st_ino]:
            return known[3], known[4]
        run_id, baseline = read(run_yaml)
        self.peeks[key] = [st.st_size, st.st_mtime_ns, st.st_ino, run_id, baseline]
        return run_id, baseline

    def save(self, live_files: set[str]) -> None:
        """Write the state atomically (a new file renamed over the old), an entry a line; forget hashes of
        files that no longer exist."""
        self.file_hashes = {k: v for k, v in self.file_hashes.items() if k in live_files}
        header = {
            "format": CACHE_FORMAT,
            "obs_version": __version__,
            "site_version": current_version(self.site) if self.site is not None else None,
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{STATE_FILE}.{os.getpid()}"
        with tmp.open("wb") as fh:
            fh.write(orjson.dumps(header) + b"\n")
            for group, made in self.pages.items():  # the site's group lists every page: ~100,000 names
                fh.write(orjson.dumps(["g", group, made], option=orjson.OPT_NON_STR_KEYS) + b"\n")
            for key, value in self.file_hashes.items():
                fh.write(_line("f", key, value))
            for key, value in self.peeks.items():
                if key in live_files:
                    fh.write(_line("p", key, value))
            for run_id, entry in sorted(self.runs.items()):
                fh.write(orjson.dumps(["r", run_id, entry.as_dict()]) + b"\n")
        os.replace(tmp, self.folder / STATE_FILE)


def _line(kind: str, key: str, value: Any) -> bytes:
    """One remembered file's line; none for a path whose name is not UTF-8 (its file is hashed again next time)."""
    try:
        return orjson.dumps([kind, key, value]) + b"\n"
    except TypeError:
        return b""


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
