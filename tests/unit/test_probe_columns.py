"""Native probe files read by column (`plain_cases`) give what reading them one case at a time gives."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import obs.adapters.native as native
from obs.adapters.native import read_probe
from obs.adapters.shared import probe_cases, probe_collector
from obs.diagnostics import Diagnostics

_text = st.text(alphabet="ab 1\n", max_size=6)
_value = st.one_of(
    st.booleans(),
    st.none(),
    st.integers(-2, 2),
    _text,
    st.lists(st.sampled_from([True, False, 0, 1]), max_size=3),  # per-sample results (or an empty list)
    st.lists(_text, max_size=2),
    st.dictionaries(st.sampled_from("xy"), st.integers(0, 2), max_size=2),
)
_ordinary_keys = [
    "exact",
    "renders",
    "split",
    "family",
    "failure_class",
    "prompt",
    "expected",
    "actual",
    "note",
    "score",
]
_keys = st.sampled_from([*_ordinary_keys, "tags", "sample", "selected", "render"])
_record = st.builds(
    lambda case_id, fields: {**({} if case_id is None else {"id": case_id}), **fields},
    st.one_of(st.sampled_from(["c1", "c2", "c3", "c4"]), st.integers(0, 3), st.none()),
    st.dictionaries(_keys, _value, max_size=6),
)
# mostly plain records (so whole batches take the column path), sometimes anything
_plain_record = st.builds(
    lambda i, exact, split, expected, actual, note, extra: {
        "id": f"p{i}",
        "exact": exact,
        "split": split,
        "expected": expected,
        "actual": actual,
        "note": note,
        **extra,
    },
    st.integers(0, 30),
    st.booleans(),
    st.sampled_from(["train", "test", None]),
    st.one_of(st.none(), _text),
    st.one_of(st.none(), _text),
    st.one_of(st.none(), _text),
    st.dictionaries(
        st.sampled_from(["score", "tags", "renders"]), st.one_of(st.booleans(), st.integers(0, 3)), max_size=2
    ),
)


def _read(path: Path, by_column: bool, batch: int) -> tuple[Any, ...]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "PROBE_BATCH", batch)
        if not by_column:
            mp.setattr(probe_collector, "plain_cases", lambda records: None)
        diags = Diagnostics()
        probe = read_probe(path, path.parent, path.parent, diags)
    table = probe.table
    return (
        table.outcomes.to_json(),
        table.pattern.labels,
        table.pattern.codes.tolist(),
        table.lines.tolist(),
        list(table.iter_texts()),
        {k: [(c.id, c.checks, c.sample) for c in v] for k, v in probe.samples.items()},
        [d.as_dict() for d in diags.items],
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_plain_record, _plain_record, _record), max_size=14), st.sampled_from([1, 3, 4096]))
def test_reading_by_column_equals_reading_case_by_case(records: list[dict[str, Any]], batch: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "probe.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        assert _read(path, True, batch) == _read(path, False, batch)


def test_a_plain_probe_takes_the_column_path() -> None:
    records = [(i + 1, {"id": f"c{i}", "exact": i % 2 == 0, "split": "test", "note": None}) for i in range(5)]
    plain = probe_cases.plain_cases(records)
    assert plain is not None and plain.ids == [f"c{i}" for i in range(5)] and plain.lines == [1, 2, 3, 4, 5]
    for special in ({"sample": 0}, {"selected": True}, {"render": "a.png"}, {"pass": [True, False]}, {"prompt": 3}):
        assert probe_cases.plain_cases([(1, {"id": "c", **special})]) is None, special
