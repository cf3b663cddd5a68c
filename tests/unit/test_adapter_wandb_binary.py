"""A current W&B client's history, read from its binary run file with the SDK's own reader.

The files are written here with the SDK's own writer (`DataStore.write` of `Record` protocol buffers),
as a client writes them, so the test holds obs to the format's definition, not to a copy of it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from adapterkit import at, load_all, messages, write

wandb_pb = pytest.importorskip("wandb.proto.wandb_internal_pb2", reason="the wandb extra is not installed")
datastore = pytest.importorskip("wandb.sdk.internal.datastore", reason="the wandb extra is not installed")

RUN = "run-20260101_120000-abc123"


def history(step: int, **values: object) -> object:
    record = wandb_pb.Record()
    for key, value in values.items():
        item = record.history.item.add()
        if "/" in key:
            item.nested_key.extend(key.split("/"))
        else:
            item.key = key
        item.value_json = json.dumps(value)
    record.history.step.num = step
    return record


def other_record() -> object:
    record = wandb_pb.Record()
    record.config.update.add(key="lr", value_json="0.001")
    return record


def run_folder(root: Path, records: list[object]) -> Path:
    folder = root / "wandb" / RUN
    write(folder / "files" / "wandb-summary.json", json.dumps({"train/loss": 0.5, "_step": 2}))
    write(folder / "files" / "config.yaml", "lr:\n  value: 0.001\n")
    store = datastore.DataStore()
    store.open_for_write(str(folder / "run-abc123.wandb"))
    for record in records:
        store.write(record)
    store.close()
    return folder


def test_curves_from_the_binary_file(tmp_path: Path) -> None:
    rows = [history(s, **{"train/loss": 2.0 - 0.5 * s, "eval/acc": 0.1 * s, "_runtime": 1.5 * s}) for s in range(3)]
    run_folder(tmp_path, [other_record(), *rows, other_record()])
    runs = load_all(tmp_path)
    run, diags = runs[f"wandb/{RUN}"]
    assert run.metrics is not None
    assert at(run, "train/loss", 2) == pytest.approx(1.0)
    assert at(run, "eval/acc", 1) == pytest.approx(0.1)
    assert not any("No history" in n for n in run.notices)
    assert not messages(diags, "warning")


def test_a_long_history_spans_blocks(tmp_path: Path) -> None:
    """Records written across the format's 32 KiB blocks (first/middle/last chunks) are put back together."""
    big = {f"layer{i}/grad_norm": float(i) for i in range(400)}  # one record longer than a block
    rows = [history(s, loss=1.0 / (s + 1), **big) for s in range(60)]
    folder = run_folder(tmp_path, rows)
    assert (folder / "run-abc123.wandb").stat().st_size > 3 * 32768
    run, diags = load_all(tmp_path)[f"wandb/{RUN}"]
    assert at(run, "loss", 59) == pytest.approx(1 / 60)
    assert at(run, "layer399/grad_norm", 30) == 399.0
    assert not messages(diags, "warning")


def test_a_cut_file_keeps_the_records_before_the_damage(tmp_path: Path) -> None:
    rows = [history(s, loss=float(s)) for s in range(200)]
    folder = run_folder(tmp_path, rows)
    path = folder / "run-abc123.wandb"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 5])  # a client killed mid-record
    run, diags = load_all(tmp_path)[f"wandb/{RUN}"]
    assert run.metrics is not None
    assert at(run, "loss", 198) == 198.0
    warned = messages(diags, "warning")
    assert len(warned) == 1 and "reading stopped at record 200" in warned[0] and "199 records before it" in warned[0]


def test_not_a_wandb_file(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, [history(0, loss=1.0)])
    (folder / "run-abc123.wandb").write_bytes(b"not a leveldb log at all")
    run, diags = load_all(tmp_path)[f"wandb/{RUN}"]
    assert run.metrics is None or not run.metrics.series
    assert any("not a W&B run file" in m for m in messages(diags, "warning"))
    assert run.summary["train/loss"] == 0.5  # the rest of the run is still read


OPENED: list[tuple[str, object]] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and OPENED is not None and str(args[0]).endswith(".wandb"):
        OPENED.append((str(args[0]), args[1]))


sys.addaudithook(_audit)  # records every open() of a .wandb file with its mode (hooks cannot be removed)


def test_the_binary_file_is_opened_read_only(tmp_path: Path) -> None:
    """The SDK's own open_for_scan asks for write access (`r+b`): obs opens a source read-only (root, as in CI,
    may write anything, so the mode is what is checked, through the interpreter's audit hook)."""
    folder = run_folder(tmp_path, [history(s, loss=float(s)) for s in range(3)])
    OPENED.clear()
    run, _ = load_all(tmp_path)[f"wandb/{RUN}"]
    assert at(run, "loss", 2) == 2.0
    modes = [mode for path, mode in OPENED if path == str(folder / "run-abc123.wandb")]
    assert modes and all(mode in ("r", "rb") for mode in modes), modes
