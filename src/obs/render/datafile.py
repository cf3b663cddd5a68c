"""Data files beside a page: one JSON value appended to `OBS_DATA`, its body gzip-compressed.

Pages must work from `file://`, where a page cannot fetch() a file but may load a script from its own
folder (`script-src 'self'`), so data travels as `.js` files that only push a value (see also
obs.render.chartdata). The value's `data` is stored as base64 of gzip of its JSON (`gz`): probe texts
and case lists shrink 5 to 40 times, which keeps a site of many runs, or one run of a million cases,
a reasonable size; the page's script inflates it with the browser's DecompressionStream. The
compression is deterministic (no timestamp), so the same input gives the same bytes.
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Iterable
from typing import Any

import orjson

PREFIX = b"(self.OBS_DATA=self.OBS_DATA||[]).push("
SUFFIX = b");\n"


def data_file(meta: dict[str, Any], data: Any) -> bytes:
    """`meta` (schema, kind, key, page, ...) stays plain JSON; `data` is compressed into `gz`."""
    return _packed(meta, orjson.dumps(data))


def data_file_of_items(meta: dict[str, Any], items: Iterable[Any], *, within: dict[str, Any] | None = None) -> bytes:
    """`data_file(meta, list(items))`, each item made into JSON as it comes: a list of 10,000 leaderboard records
    held as dicts was ~22 MB, as their JSON ~5 MB (issue 32). orjson writes a list as its items' JSON joined by
    commas in brackets, so the bytes are the same. With `within`, the data is `{**within, "runs": list(items)}`.

    Each item's JSON is copied into one growing buffer and let go at once: orjson returns its output in the
    buffer it wrote into (~32 KB for a leaderboard record of ~0.6 KB), so joining the items' outputs held
    ~160 MB for a file of 10,000 records, 50 times the JSON (issue 32)."""
    listed = bytearray()
    if within is not None:
        listed += orjson.dumps({**within, "runs": []})[: -len(b"[]}")]  # its last key: the list goes where [] is
    listed += b"["
    for k, item in enumerate(items):
        if k:
            listed += b","
        listed += orjson.dumps(item)
    listed += b"]" if within is None else b"]}"
    return _packed(meta, listed)


def _packed(meta: dict[str, Any], data_json: bytes | bytearray) -> bytes:
    packed = base64.b64encode(gzip.compress(data_json, compresslevel=6, mtime=0)).decode("ascii")
    return PREFIX + orjson.dumps({**meta, "gz": packed}) + SUFFIX


def read_data_file(raw: bytes) -> tuple[dict[str, Any], Any]:
    """(meta, data) of a file made by `data_file` (tests and tools)."""
    if not raw.startswith(PREFIX) or not raw.endswith(SUFFIX):
        raise ValueError("not an obs data file")
    value = orjson.loads(raw[len(PREFIX) : -len(SUFFIX)])
    data = orjson.loads(gzip.decompress(base64.b64decode(value.pop("gz"))))
    return value, data
