"""Answer "did anything change since the last build?" before importing anything heavy.

A rebuild with nothing to do must cost a fraction of a second, and importing numpy, jinja2 and
the analysis code alone costs more than that. After every build a snapshot of the source tree
(every file's size, mtime and inode; every folder's mtime), the templates and the options is saved
beside the cache. If a new walk of the tree matches it exactly, the previous result is replayed
(diagnostics included, so the exit status stays honest) and nothing is imported or written.
Anything that does not match simply falls through to the real build, which hashes contents.

The output is a link to the published version (obs.write); the snapshot walks the site through
it and lists the folder of versions beside it, so a site switched, edited or left with the debris
of a killed build is never taken for unchanged.

Only the standard library, orjson and obs.write (the standard library and orjson) are imported here.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from obs import __version__
from obs.write import output_location, versions_dir

SNAPSHOT_FILE = "snapshot.json"


def _key(path: str) -> bytes:
    """A path as bytes for the digest (a name that is not UTF-8 keeps its own bytes)."""
    return os.fsencode(path)


def _walk(root: Path, skip: set[str]) -> str:
    """A digest of the stat of every file and folder under `root` (hidden entries and `skip` paths excluded):
    each folder's mtime, each file's size, mtime and inode, a link as a link, in name order.

    A digest and not the list: the snapshot is compared for equality only, and a list of every file (the
    source's and the published site's, ~10 a run) was ~3 KB a run held by the build and written to disk, 300 MB
    at 100,000 runs (issue 32). Walking holds one folder's entries at a time."""
    h = hashlib.sha256()
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            st = folder.stat()
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        h.update(b"D\0" + _key(str(folder)) + b"\0%d\n" % st.st_mtime_ns)
        subfolders = []
        for entry in entries:
            if entry.name.startswith(".") or entry.name == "__pycache__" or entry.path in skip:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(Path(entry.path))
                elif entry.is_file():
                    est = entry.stat()
                    h.update(b"F\0" + _key(entry.path) + b"\0%d %d %d\n" % (est.st_size, est.st_mtime_ns, est.st_ino))
                elif entry.is_symlink():  # a link changes meaning without changing stat: never quick
                    h.update(b"L\0" + _key(entry.path) + b"\0" + os.urandom(8) + b"\n")
            except OSError:
                continue
        stack.extend(reversed(subfolders))
    return h.hexdigest()


def snapshot(
    source: Path, out: Path, cache_dir: Path, templates: Path, options: dict[str, Any], code: Path
) -> dict[str, Any]:
    source, out = source.resolve(), output_location(out)
    return {
        "version": __version__,
        "options": options,
        "source": str(source),
        "tree": _walk(source, {str(out), str(cache_dir.parent)}),
        "templates": _walk(templates, set()),
        "code": _walk(code, set()),
        "marker": site_state(out),  # the whole output tree: a deleted or edited page is rebuilt
    }


def site_state(out: Path) -> dict[str, Any] | None:
    """The published site's part of a snapshot (None when there is no site yet); `out` is the output's link.

    A build saves the snapshot it took before it read anything, with this part taken again after it
    published: the inputs as read, the site as written."""
    out = output_location(out)
    if not (out / "index.json").is_file():
        return None
    return {"site": _walk(out, set()), "beside": _listing(versions_dir(out)), "link": _link(out)}


def _listing(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _link(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def load_previous(cache_dir: Path) -> dict[str, Any] | None:
    try:
        data = orjson.loads((cache_dir / SNAPSHOT_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def unchanged(previous: dict[str, Any] | None, current: dict[str, Any]) -> bool:
    if previous is None or previous.get("marker") is None:
        return False
    return all(
        previous.get(k) == current[k] for k in ("version", "options", "source", "tree", "templates", "code", "marker")
    )


def forget(cache_dir: Path) -> None:
    """No replay for the next build: this one could not read all of its inputs (obs.build), and a file that
    is readable again (permissions back) shows no change of size, mtime or inode."""
    (cache_dir / SNAPSHOT_FILE).unlink(missing_ok=True)


def save(cache_dir: Path, snap: dict[str, Any], result: dict[str, Any]) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = cache_dir / f".{SNAPSHOT_FILE}.{os.getpid()}"
    tmp.write_bytes(orjson.dumps({**snap, "result": result}))
    os.replace(tmp, cache_dir / SNAPSHOT_FILE)
