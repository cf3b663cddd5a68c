"""The shared pieces of the adapters: element lines, salvage of truncated documents, merging, durations."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from obs.adapters.shared.json_docs import element_lines, salvage_array, salvage_object
from obs.adapters.shared.log_records import merge_same_step
from obs.adapters.shared.trl import trl_aliases
from obs.adapters.shared.values import iso_from_timestamp, parse_duration, typed_scalar
from obs.diagnostics import Diagnostics
from obs.sanitize import Findings, clean_tree, json_int

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=10,
)
_records = st.lists(st.dictionaries(st.text(max_size=5), _json, max_size=4), max_size=8)


def as_read(records: list[dict]) -> list[dict]:
    """Records as obs reads them (obs.sanitize): control characters replaced, integers past 64 bits as floats."""
    return clean_tree(json.loads(json.dumps(records), parse_int=json_int), Findings())


@settings(max_examples=100, deadline=None)
@given(_records, st.sampled_from([None, 1, 2]))
def test_property_element_lines_point_at_each_record(records: list[dict], indent: int | None) -> None:
    text = json.dumps({"a": [{"x": 1}], "log_history": records, "z": [{}]}, indent=indent)
    lines = element_lines(text, "log_history")
    assert len(lines) == len(records)
    if indent:
        rows = text.splitlines()
        for line in lines:
            assert rows[line - 1].strip().startswith("{")
    assert len(element_lines(json.dumps(records, indent=indent), None)) == len(records)


@settings(max_examples=100, deadline=None)
@given(_records, st.floats(0, 1), st.sampled_from([None, "log_history"]))
def test_property_salvage_reads_a_prefix_of_the_records(records: list[dict], cut: float, key: str | None) -> None:
    doc = records if key is None else {key: records, "after": 1}
    text = json.dumps(doc, indent=1)
    items, stop = salvage_array(text[: int(len(text) * cut)], key)
    assert items == as_read(records)[: len(items)]
    whole, stop = salvage_array(text, key)
    assert whole == as_read(records) and stop is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.sampled_from([None, "log_history", "results"]))
def test_property_helpers_never_raise_on_any_text(text: str, key: str | None) -> None:
    element_lines(text, key)
    salvage_array(text, key)
    salvage_object(text, key or "results")
    parse_duration(text)
    typed_scalar(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.dictionaries(st.sampled_from("abc"), st.integers(0, 3))), max_size=12))
def test_property_merge_keeps_every_value_and_merges_only_what_does_not_conflict(rows: list) -> None:
    """Same-step rows are merged unless a key would get a second value: then both rows go on to the
    series builder, which aggregates them (obs.yaml same_step); no value is ever lost."""
    records = [(i + 1, {"step": step, **values}) for i, (step, values) in enumerate(rows)]
    merged = [m for _, m in merge_same_step(records, "step", Path("x"), Diagnostics())]
    triples = {(r["step"], k, v) for _, r in records for k, v in r.items() if k != "step"}
    assert {(m["step"], k, v) for m in merged for k, v in m.items() if k != "step"} == triples
    for a, b in itertools.pairwise(merged):
        if a["step"] == b["step"]:
            assert any(k in a and a[k] != v for k, v in b.items()), (a, b)  # split only on a conflict


def test_merge_does_not_modify_the_callers_records() -> None:
    a, b = {"step": 1, "loss": 1.0}, {"step": 1, "eval_loss": 2.0}
    (merged,) = merge_same_step([(1, a), (2, b)], "step", Path("x"), Diagnostics())
    assert merged == (1, {"step": 1, "loss": 1.0, "eval_loss": 2.0})
    assert a == {"step": 1, "loss": 1.0}


def test_trl_aliases() -> None:
    grpo = trl_aliases({"reward": 1.0, "rewards/fmt": 0.5, "reward/acc/std": 0.1, "completion_length": 9})
    assert grpo["reward_mean"] == 1.0 and grpo["rewards/fmt/mean"] == 0.5 and grpo["rewards/acc/std"] == 0.1
    assert grpo["completions/mean_length"] == 9
    dpo = {"rewards/chosen": 1.0, "rewards/margins": 2.0, "loss": 0.1}
    assert trl_aliases(dpo) is dpo
    newer = {"reward": 1.0, "reward_mean": 0.9, "rewards/f/mean": 0.3}
    assert trl_aliases(newer)["reward_mean"] == 0.9  # an alias never overwrites a logged key


def test_values_from_text() -> None:
    assert typed_scalar("None") is None and typed_scalar("True") is True and typed_scalar("5") == 5
    assert typed_scalar("1e-06") == 1e-06 and math.isinf(typed_scalar("inf"))
    assert typed_scalar("SGD") == "SGD" and typed_scalar("1.2.3") == "1.2.3"
    assert iso_from_timestamp(1757713665779) == "2025-09-12T21:47:45Z"
    assert iso_from_timestamp(1712926095.8492224) == "2024-04-12T12:48:15Z"
    assert iso_from_timestamp("x") is None and iso_from_timestamp(float("nan")) is None
