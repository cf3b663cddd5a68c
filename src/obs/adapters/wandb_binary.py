"""The history of a current W&B client, read from its binary `run-<id>.wandb` file.

Current clients no longer write `wandb-history.jsonl`: every logged row is a protocol-buffer `Record`
in `run-<id>.wandb`, a LevelDB-style log (32 KiB blocks, checksummed chunks). obs reads it with the
wandb SDK's own reader (`wandb.sdk.internal.datastore.DataStore` for the framing,
`wandb.proto.wandb_internal_pb2.Record` for the records) rather than a copy of the format: the SDK
is the format's definition. It is an optional extra (`pip install 'obs[wandb]'`): the SDK takes
about a second to import, so it is imported only for a run that has a binary file and no JSON history.
SDK releases from 0.26 on ship no Python reader (it moved into their compiled core), hence the
version range of the extra.

The SDK's `open_for_scan` opens the file for writing too (`r+b`); obs opens it read-only and hands
the reader the open file, so a read-only source is read and nothing in it can be changed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from obs.diagnostics import Diagnostics

EXTRA = "pip install 'obs[wandb]'"
STEP = "_step"
# the client writes the run record (group, tags, config) before any history; looking further is scanning history
RUN_RECORD_SCAN = 64


class ReaderMissing(Exception):
    """The wandb SDK (with its Python reader) is not installed."""


def _sdk() -> tuple[Any, Any]:
    """The SDK's reader class and record type, or ReaderMissing saying what to install."""
    try:
        from wandb.proto import wandb_internal_pb2
        from wandb.sdk.internal import datastore
    except ImportError as exc:  # not installed, or a release without the Python reader
        raise ReaderMissing(
            f"the wandb SDK with its Python reader is not installed ({exc.name or exc}): {EXTRA}"
        ) from None
    # the module picks its protobuf generation (v5/v6/v7) at import time, so a type checker may not see Record
    return datastore.DataStore, cast(Any, wandb_internal_pb2).Record


def _open(store_type: Any, path: Path) -> Any:
    """A DataStore scanning `path`, opened read-only (the SDK's own open_for_scan asks for write access)."""
    store = store_type()
    store._fname = str(path)
    store._fp = open(path, "rb")  # noqa: SIM115 - closed by history_rows
    store._index = 0
    store._size_bytes = os.fstat(store._fp.fileno()).st_size
    store._opened_for_scan = True
    store._read_header()
    return store


def _row(history: Any) -> dict[str, Any]:
    """One logged row: each item's key (nested keys joined with '/') and its JSON value, and the step."""
    row: dict[str, Any] = {}
    for item in history.item:
        key = "/".join(item.nested_key) if item.nested_key else item.key
        try:
            row[key] = json.loads(item.value_json)
        except ValueError:
            continue  # a value that is not JSON (never written by the SDK) is not a number to draw
    if history.HasField("step"):
        row[STEP] = history.step.num
    return row


def history_rows(path: Path, diags: Diagnostics) -> Iterator[tuple[int, dict[str, Any]]]:
    """(record number, row) for each history record of a `.wandb` file, in the order they were written.

    Raises ReaderMissing when the SDK is not installed. A damaged or cut file yields the rows before the
    damage and one warning naming the record where reading stopped (a run still writing ends mid-block).
    """
    store_type, record_type = _sdk()
    try:
        store = _open(store_type, path)
    except Exception as exc:  # the SDK raises bare Exception, AssertionError or struct.error on a foreign file
        diags.warning(path, f"not a W&B run file the SDK can read ({exc or type(exc).__name__}); no curves from it")
        return
    number = 0
    try:
        while True:
            try:
                data = store.scan_data()
            except Exception as exc:  # the SDK asserts on a bad checksum or chunk, struct fails on a cut header
                diags.warning(
                    path,
                    f"reading stopped at record {number + 1} ({exc or 'damaged chunk'}): "
                    f"the curves hold the {number} records before it",
                )
                return
            if data is None:
                return
            number += 1
            record = record_type()
            try:
                record.ParseFromString(data)
            except Exception:  # protobuf's DecodeError: one damaged record, the rest still readable
                diags.warning(path, f"record {number} is not a W&B record; skipped")
                continue
            if record.WhichOneof("record_type") == "history":
                yield number, _row(record.history)
    finally:
        store._fp.close()


@dataclass(frozen=True)
class RunInfo:
    """What the run record of a `.wandb` file says about the run's place: `wandb.init(group=..., tags=[...])`."""

    group: str
    tags: tuple[str, ...]
    job_type: str


def run_info(path: Path) -> RunInfo | None:
    """The run record's group, tags and job type: the first `run` record among the file's first RUN_RECORD_SCAN
    records (the client writes it first). None when there is none there or the file cannot be read: discovery
    asks this of every run that says nothing else of its condition, and the history's reading names a damaged
    file. Raises ReaderMissing when the SDK is not installed."""
    store_type, record_type = _sdk()
    try:
        store = _open(store_type, path)
    except Exception:  # a foreign or cut file: named when its history is read
        return None
    try:
        for _ in range(RUN_RECORD_SCAN):
            try:
                data = store.scan_data()
            except Exception:  # a damaged chunk
                return None
            if data is None:
                return None
            record = record_type()
            try:
                record.ParseFromString(data)
            except Exception:
                continue
            if record.WhichOneof("record_type") == "run":
                run = record.run
                return RunInfo(str(run.run_group), tuple(str(t) for t in run.tags), str(run.job_type))
        return None
    finally:
        store._fp.close()
