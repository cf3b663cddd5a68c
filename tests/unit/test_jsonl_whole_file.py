"""obs.jsonl reads a small file whole when nothing in it needs reporting; what it yields and says must not
depend on that: the same records, line numbers, counts and diagnostics as reading it line by line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import obs.jsonl as jsonl
from obs.diagnostics import Diagnostics

_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=5)
)
_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2),
    max_leaves=4,
)
_object_line = st.dictionaries(st.sampled_from(["step", "loss", "a", "b:", '"', "é"]), _value, max_size=4).map(
    json.dumps
)
_odd_line = st.sampled_from(
    [
        "",
        "   ",
        "[1, 2]",
        "3",
        "not json",
        '{"a": NaN}',
        '{"a": 1, "a": 2}',  # a key written twice
        '{"a" : 1}',  # a space before the colon
        '{"t": "x\\": y"}',  # '":' inside text
        '{"a": {"b": [1, {"c": 2}]}}',
        '{"x": "\\u0007"}',  # text to clean
        '{"x": "\\ud800"}',
        '{"a": 1},{"b": 2}',
        "[" * 70 + "]" * 70,
        '{"d": ' + "[" * 70 + "]" * 70 + "}",
        '{"n": 123456789012345678901234567890}',
        '{"f": 1e999}',
    ]
)


def _read(path: Path, whole: bool) -> tuple[Any, ...]:
    with pytest.MonkeyPatch.context() as mp:
        if not whole:
            mp.setattr(jsonl, "WHOLE_FILE_BYTES", -1)  # every file is streamed
        diags = Diagnostics()
        stats = jsonl.JsonlStats()
        records = list(jsonl.iter_jsonl(path, diags, stats=stats))
    return repr(records), [d.as_dict() for d in diags.items], stats.lines, stats.blank, stats.records  # NaN == NaN


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_object_line, _object_line, _odd_line), max_size=8), st.booleans())
@example(['{"step": 1, "loss": 0.5}', "", '{"step": 2, "loss": 0.25}'], True)
@example(['{"step": 1}', '{"step": 2'], False)  # a cut last line
def test_reading_whole_equals_reading_line_by_line(lines: list[str], final_newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        assert _read(path, True) == _read(path, False)


def test_a_clean_file_is_read_whole() -> None:
    body = b'{"step": 1, "loss": 0.5}\n\n{"step": 2, "loss": 0.25, "m": {"a": 1}}\n'
    assert jsonl._clean_file(body) == (
        [(1, {"step": 1, "loss": 0.5}), (3, {"step": 2, "loss": 0.25, "m": {"a": 1}})],
        3,
        1,
        2,
    )
    for odd in (b'{"a": 1}', b'{"a": 1, "a": 2}\n', b"[1]\n", b'{"a": NaN}\n'):
        assert jsonl._clean_file(odd) is None, odd
