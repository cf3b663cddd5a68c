"""Sources in object storage: `obs build s3://bucket/prefix -o site` (gs://, az://, any fsspec URL).

The prefix is mirrored into a folder beside the build cache, and the build runs on that folder
unchanged: the same adapters, discovery, cache and pages as for a local folder, so a bucket holding a
copy of a tree gives the site of that tree, byte for byte. Listing the prefix once gives each object's
key, size and ETag (generation on GCS); an object is downloaded again only when its ETag or size
changed, never because of when it was listed, and an unchanged object keeps its mirrored file (and
its modification time: the build's quick no-op check sees nothing changed). A file whose object is
gone is removed from the mirror. Nothing is ever written to the bucket; credentials come only from
each SDK's own environment and config (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, ~/.aws/config, ...).

Diagnostics name the objects (`s3://bucket/key:line: ...`): `Mirror.shown` maps a mirrored path back.
The drivers are optional extras (`obs[s3]`: s3fs; `obs[gcs]`: gcsfs), imported only for a URL source.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

STATE = "objects.json"  # beside the mirrored tree: each object's ETag and size when it was downloaded
URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
EXTRAS = {  # scheme -> (obs's extra, the fsspec driver it installs)
    "s3": ("s3", "s3fs"),
    "s3a": ("s3", "s3fs"),
    "gs": ("gcs", "gcsfs"),
    "gcs": ("gcs", "gcsfs"),
    "az": ("azure", "adlfs"),
    "abfs": ("azure", "adlfs"),
    "abfss": ("azure", "adlfs"),
}


class SourceError(Exception):
    """The bucket cannot be read (no driver, no such prefix, refused): one line for the command line."""


def is_url(source: str) -> bool:
    """A source given as a URL (`s3://...`), not a local folder; `file://` is a local folder too."""
    found = URL.match(source)
    return found is not None and found.group(1).lower() != "file"


@dataclass
class Mirror:
    """A bucket prefix mirrored into `folder`, and how many objects this build downloaded or kept."""

    url: str
    folder: Path
    downloaded: int = 0
    kept: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (URL, why) of objects a folder cannot hold
    objects: dict[str, tuple[str | None, int]] = field(default_factory=dict)  # rel -> (version, size) listed

    def bucket(self) -> BucketRuns:
        """What Dask workers need to read the runs from the bucket themselves (`obs build --dask`)."""
        return BucketRuns(self.url, os.fspath(self.folder), dict(self.objects))

    def shown(self, path: str) -> str:
        """A diagnostic's path as the object's URL (`s3://bucket/key`); other paths unchanged.

        Diagnostics name a file from the folder above the source (`reports/spec03/r2/probe.jsonl`), so
        a path below the mirror starts with its name; an absolute one with its location."""
        url = self.url.rstrip("/")
        for here in (self.folder.name, os.fspath(self.folder)):
            if path == here:
                return url
            if path.startswith(here + os.sep):
                return url + "/" + Path(path[len(here) + 1 :]).as_posix()
        return path


def mirror_folder(url: str, cache_root: Path) -> Path:
    """Where a URL's objects are mirrored: below the build cache, one folder per URL, named after the
    prefix's last part (the site names its source folder, so a bucket's copy of `reports/` reads the same)."""
    name = PurePosixPath(URL.sub("", url).rstrip("/")).name or "source"
    key = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
    return cache_root / "sources" / key / name


def mirror(url: str, cache_root: Path) -> Mirror:
    """Bring the objects below `url` into a local folder, downloading only those that changed."""
    fs, prefix = _filesystem(url)
    folder = mirror_folder(url, cache_root)
    try:
        listing: dict[str, dict[str, Any]] = fs.find(prefix, detail=True)
    except Exception as exc:  # each driver has its own (botocore's EndpointConnectionError, ...): one line
        raise SourceError(f"{url}: cannot list the objects there ({_reason(exc)})") from exc
    if not listing:
        raise SourceError(f"{url}: no objects there (the source must hold the runs' files)")
    state_path = folder.parent / STATE
    try:
        state: dict[str, list[Any]] = orjson.loads(state_path.read_bytes())
    except (OSError, ValueError):
        state = {}
    wanted: dict[str, tuple[str, list[Any]]] = {}
    result = Mirror(url, folder)
    base = prefix.rstrip("/")
    for key, info in sorted(listing.items()):
        if info.get("type", "file") != "file" or key.endswith("/"):
            continue  # a folder marker
        rel = key[len(base) :].lstrip("/") if key.startswith(base + "/") else PurePosixPath(key).name
        if not rel or PurePosixPath(rel).as_posix() != rel or ".." in PurePosixPath(rel).parts:
            result.skipped.append((f"{url.rstrip('/')}/{rel}", "a key with an empty, '.' or '..' part"))
            continue  # never written: it could land elsewhere, or two keys on one file
        wanted[rel] = (key, [_version(info), int(info.get("size") or 0)])
        result.objects[rel] = (_version(info), int(info.get("size") or 0))
    folders = {str(parent) for rel in wanted for parent in PurePosixPath(rel).parents}
    for rel in sorted(rel for rel in wanted if rel in folders):
        wanted.pop(rel)
        result.skipped.append((f"{url.rstrip('/')}/{rel}", "an object named like a folder of other objects"))
    fetch: list[tuple[str, str]] = []
    for rel, (key, ident) in sorted(wanted.items()):
        target = folder / rel
        if ident[0] is not None and state.get(rel) == ident and _has_size(target, ident[1]):
            result.kept += 1
            continue
        state.pop(rel, None)
        target.parent.mkdir(parents=True, exist_ok=True)
        fetch.append((key, os.fspath(target)))
    if fetch:
        _save(state_path, state)  # the entries about to change are gone first: an interrupted copy is redone
        try:
            fs.get([k for k, _ in fetch], [t for _, t in fetch])
        except Exception as exc:  # as above
            raise SourceError(f"{url}: cannot download the objects ({_reason(exc)})") from exc
        for _key, local in fetch:
            got = Path(local).relative_to(folder).as_posix()
            state[got] = wanted[got][1]
        result.downloaded = len(fetch)
    result.removed = _remove_gone(folder, set(wanted))
    _save(state_path, {rel: state[rel] for rel in sorted(state) if rel in wanted})
    return result


def _filesystem(url: str) -> tuple[Any, str]:
    found = URL.match(url)
    if found is None:
        raise SourceError(f"{url}: not a storage URL (s3://bucket/prefix)")
    scheme = found.group(1).lower()
    extra, driver = EXTRAS.get(scheme, (None, None))
    hint = f"pip install {driver} into obs's environment (the obs[{extra}] extra)" if extra else "install its driver"
    try:
        from fsspec.core import url_to_fs
    except ImportError as exc:
        raise SourceError(f"{url}: reading {scheme}:// sources needs fsspec: {hint}") from exc
    try:
        fs, prefix = url_to_fs(url, skip_instance_cache=True)  # credentials as the environment says now
    except ImportError as exc:
        raise SourceError(f"{url}: reading {scheme}:// sources needs its fsspec driver: {hint}") from exc
    except ValueError as exc:  # a scheme fsspec does not know
        raise SourceError(f"{url}: not a storage URL obs can read ({exc})") from exc
    return fs, prefix


def _version(info: dict[str, Any]) -> str | None:
    """What changes when an object is rewritten: its ETag (S3, Azure), generation (GCS) or content hash."""
    for name in ("ETag", "etag", "generation", "md5Hash", "content_md5"):
        value = info.get(name)
        if value:
            return str(value).strip('"')
    return None  # nothing to tell: downloaded every build


def _has_size(path: Path, size: int) -> bool:
    try:
        return path.stat().st_size == size
    except OSError:
        return False


def _remove_gone(folder: Path, wanted: set[str]) -> int:
    """Delete mirrored files whose objects are no longer listed, then the folders left empty."""
    removed = 0
    if not folder.is_dir():
        return 0
    for path in sorted(folder.rglob("*"), reverse=True):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() or path.is_symlink():
            if rel not in wanted:
                path.unlink()
                removed += 1
        elif path.is_dir() and not any(path.iterdir()):
            shutil.rmtree(path, ignore_errors=True)
    return removed


def _save(path: Path, state: dict[str, list[Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(state, option=orjson.OPT_SORT_KEYS))
    os.replace(tmp, path)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


_FETCHED: dict[tuple[str, str], tuple[str | None, int]] = {}  # (local file, rel) -> what it holds, per process
_FETCH_LOCK = threading.Lock()  # a worker in threads mode runs tasks side by side


@dataclass(frozen=True)
class BucketRuns:
    """A bucket source as a Dask worker reads it (docs/scale.md): each task downloads its run's objects from
    the bucket into the worker's own folder (`local_root`: one per worker process, named like the client's
    mirror, so the pages and diagnostics name the same paths) and builds from there, so workers on other
    machines need no shared storage. An object is downloaded again only when the version and size the
    client listed differ from what the worker's copy holds. The client still mirrors the prefix: discovery
    and the build's cache keys read every file."""

    url: str
    mirror: str  # the client's mirror folder: the source tree's root
    objects: dict[str, tuple[str | None, int]]  # rel -> (version, size) as the client listed them

    def local_root(self) -> Path:
        key = hashlib.sha256(self.url.rstrip("/").encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / "obs-objects" / f"{key}-{os.getpid()}" / Path(self.mirror).name

    def fetch(self, rels: Iterable[str]) -> list[str]:
        """Bring these objects (paths relative to the source) into `local_root`; the ones downloaded."""
        local = self.local_root()
        todo: list[tuple[str, str]] = []
        with _FETCH_LOCK:
            for rel in sorted(set(rels)):
                want = self.objects.get(rel)
                if want is None:
                    continue  # not an object of the listing (the client found it in its mirror: gone since)
                target = local / rel
                held = _FETCHED.get((os.fspath(target), rel))
                if want[0] is not None and held == want and _has_size(target, want[1]):
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                todo.append((rel, os.fspath(target)))
            if not todo:
                return []
            fs, prefix = _filesystem(self.url)
            base = prefix.rstrip("/")
            try:
                fs.get([f"{base}/{rel}" for rel, _ in todo], [t for _, t in todo])
            except Exception as exc:  # each driver has its own: one line
                raise SourceError(f"{self.url}: a worker cannot download its run's objects ({_reason(exc)})") from exc
            for rel, got in todo:
                _FETCHED[(got, rel)] = self.objects[rel]
        return [rel for rel, _ in todo]
