"""Generic JSON-lines / JSON-array logs: step keys, nulls, text in numeric columns, per-item results."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from adapterkit import DATA_CORPUS, at, load_all, messages, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obs.adapters.generic_jsonl import GenericJsonlAdapter, is_log_file, read_log_into
from obs.adapters.shared.values import parse_duration
from obs.diagnostics import Diagnostics
from obs.discover import discover
from obs.model import Run

CORPUS = DATA_CORPUS / "metrics_jsonl"


def only(root: Path) -> tuple[Run, Diagnostics]:
    runs = load_all(root)
    assert len(runs) == 1, sorted(runs)
    return next(iter(runs.values()))


# ---------------------------------------------------------------------------------------------------- corpus


def test_hf_on_log_dump_eval_rows_and_final_summary_row() -> None:
    run, diags = only(CORPUS / "Mark-Joseph-42__JurisSim")
    assert run.adapter == "generic_jsonl"
    assert run.metrics is not None and run.metrics.step_source == "step"
    assert at(run, "eval_loss", 1713) == 1.6760799884796143
    assert at(run, "eval_mean_token_accuracy", 1713) == 0.6260674033812651
    assert at(run, "loss", 1) == 2.0123932361602783
    assert run.summary["train_runtime"] == 17177.7011
    assert run.summary["train_loss"] == 1.7562796237241853
    assert "train_runtime" not in run.metrics.series
    assert not [t for t in messages(diags) if "warning" in t]  # train + eval rows at one step are not duplicates


def test_same_step_rows_of_one_attempt_are_aggregated_and_restarts_kept_apart() -> None:
    """Defects: several rows at one step kept only the last (min/max differed from the file); then (issue 26) the
    attempts of a restarted log were averaged per step into one curve with no notice; the repeated first record
    (step 20 twice) is an attempt of its own, not two values at one step."""
    run, diags = only(CORPUS / "akawslearn-ai__slm_training")
    lines = (CORPUS / "akawslearn-ai__slm_training/metrics.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines]
    # step 20 twice: two attempts (the loss differs in the 6th digit and the cost `usd` is that of reaching step 20
    # once, as after the restarts at lines 383 and 386), then the counter goes back at line 4
    assert [r["step"] for r in rows[:4]] == [20, 20, 40, 20]
    assert rows[0]["loss"] != rows[1]["loss"] and abs(rows[1]["usd"] - rows[382]["usd"]) < 0.001
    loss = run.metrics.series["loss"]  # type: ignore[union-attr]
    i = int(np.flatnonzero(loss.steps == 20)[0])
    assert loss.values[i] == rows[3]["loss"]  # the last attempt's value, not a mean over the attempts
    assert at(run, "loss", 7760) == 2.2009329944849014
    assert not [t for t in messages(diags) if ": warning: " in t]  # a known, announced reading
    infos = messages(diags, "info")
    assert any("metrics.jsonl:2: info:" in t and "goes back or starts again" in t and "5 attempts" in t for t in infos)
    assert any("5 attempts in one log" in d for d in run.metrics.dropped)  # type: ignore[union-attr]
    assert at(run, "loss", 7520) == rows[385]["loss"]  # logged by three attempts (lines 379, 383, 386): the last
    assert at(run, "loss", 7500) == rows[377]["loss"]  # before the restarts: the one attempt that logged it


def test_same_step_policy_last_and_all(tmp_path: Path) -> None:
    log = write(
        tmp_path / "r" / "log.jsonl",
        "".join(json.dumps({"step": s, "loss": v}) + "\n" for s, v in [(1, 1.0), (1, 3.0), (2, 2.0)]),
    )
    for policy, steps, values in (("last", [1, 2], [3.0, 2.0]), ("all", [1, 1, 2], [1.0, 3.0, 2.0])):
        run = Run(id="r", source_dir=log.parent)
        read_log_into(run, log, Diagnostics(), root=tmp_path, same_step=policy)
        s = run.metrics.series["loss"]  # type: ignore[union-attr]
        assert list(s.steps) == steps and list(s.values) == values and s.n is None


def test_llama_factory_current_steps_and_durations() -> None:
    run, diags = only(CORPUS / "chandlerzuo__rlhf_recsys")
    assert run.metrics is not None and run.metrics.step_source == "current_steps"
    assert at(run, "elapsed_time", 336) == 13 * 60 + 9  # "0:13:09"
    assert at(run, "remaining_time", 10) == 14 * 60 + 35
    assert at(run, "accuracy", 10) == 0.4625000059604645
    assert at(run, "total_steps", 10) == 336
    assert any("H:MM:SS" in n for n in run.notices)
    assert not [t for t in messages(diags) if ": warning: " in t]

    run, _ = only(CORPUS / "hykun1989__360-LLaMA-Factory-grpo")
    assert at(run, "remaining_time", 1) == 3 * 86400 + 17 * 3600 + 51 * 60 + 32  # "3 days, 17:51:32"
    assert at(run, "lr", 202) == 1.980392156862745e-07


def test_tinker_rl_log_sparse_eval_keys() -> None:
    run, _ = only(CORPUS / "sushantmehta-code__tinker-cookbook")
    assert run.metrics is not None
    test_reward = run.metrics.series["test/env/all/reward/total"]
    assert list(test_reward.steps) == [0]
    assert at(run, "env/all/by_group/frac_mixed", 1) == 1.0
    assert len(run.metrics.series["env/all/reward/total"]) == 7


# ---------------------------------------------------------------------------------------------------- synthetic


def test_no_step_key_line_index_nulls_and_text(tmp_path: Path) -> None:
    write(
        tmp_path / "r" / "log.jsonl",
        '{"loss": 1.0, "acc": null, "phase": "warmup"}\n'
        '{"loss": 0.9, "acc": 0.5, "phase": "warmup"}\n'
        '{"loss": "n/a", "acc": 0.6, "phase": "main", "host": "gpu-1"}\n'
        '{"loss": 0.7, "acc": NaN, "phase": "main", "host": "gpu-1"}\n',
    )
    run, diags = only(tmp_path)
    assert run.metrics is not None and run.metrics.step_source == "line index"
    assert any("no step column" in n for n in run.notices)
    assert list(run.metrics.series["loss"].steps) == [0, 1, 3]
    assert list(run.metrics.series["acc"].steps) == [1, 2, 3]  # null: not logged
    assert math.isnan(at(run, "acc", 3))
    assert [s.name for s in run.metrics.stages] == ["warmup", "main"]
    out = messages(diags)
    assert any("log.jsonl:3: warning: 'loss' holds text" in t for t in out)
    assert any("log.jsonl:3: info: host: text values" in t for t in out)
    assert any("log.jsonl:4: warning: 1 line(s) use bare NaN/Infinity" in t for t in out)


def test_bad_lines_utf8_and_half_written_last_line(tmp_path: Path) -> None:
    write(
        tmp_path / "r" / "train.jsonl",
        b'{"iteration": 1, "loss": 3.0}\n'
        b'{"iteration": 2, "loss": \n'
        b"[1, 2]\n"
        b'{"iteration": 3, "loss": 2.5, "tag": "caf\xe9"}\n'
        b'{"loss": 2.4}\n'
        b'{"iteration": 5, "loss": 2.0}\n'
        b'{"iteration": 6, "lo',
    )
    run, diags = only(tmp_path)
    assert run.metrics is not None and run.metrics.step_source == "iteration"
    assert list(run.metrics.series["loss"].steps) == [1, 3, 5]
    out = messages(diags)
    assert any("train.jsonl:2: warning: malformed JSON" in t for t in out)
    assert any("train.jsonl:3: warning: expected a JSON object, found list" in t for t in out)
    assert any("train.jsonl:4: warning:" in t and "UTF-8" in t for t in out)
    assert any("train.jsonl:5: warning: 1 record(s) have no numeric 'iteration'" in t for t in out)
    assert any("train.jsonl:7: info: last line is incomplete" in t for t in out)


def test_json_array_of_records_with_lines(tmp_path: Path) -> None:
    rows = [{"global_step": 10, "loss": 2.0}, {"global_step": 20, "loss": "x"}, {"global_step": 30, "loss": 1.0}]
    write(tmp_path / "r" / "history.json", json.dumps(rows, indent=1))
    run, diags = only(tmp_path)
    assert run.metrics is not None and run.metrics.step_source == "global_step"
    assert list(run.metrics.series["loss"].values) == [2.0, 1.0]
    (warning,) = [d for d in diags.items if d.severity == "warning"]
    assert warning.line == 6 and "'loss' holds text" in warning.message


def test_truncated_json_array_keeps_the_records_before_the_cut(tmp_path: Path) -> None:
    text = json.dumps([{"step": i, "loss": float(i)} for i in range(5)], indent=1)
    write(tmp_path / "r" / "history.json", text[: text.index('"step": 3') + 4])
    run, diags = only(tmp_path)
    assert list(run.metrics.series["loss"].steps) == [0, 1, 2]  # type: ignore[union-attr]
    assert any("truncated" in t and ": error: " in t for t in messages(diags))
    assert any("3 records before the damage" in t for t in messages(diags))


def test_per_item_results_become_probe_cases(tmp_path: Path) -> None:
    doc = {
        "base_model": "m",
        "n": 3,
        "accuracy": 2 / 3,
        "per_q": [
            {"i": 0, "question": "1+1?", "gold": "2", "pred": "2", "correct": True},
            {"i": 1, "question": "2+2?", "gold": "4", "pred": "5", "correct": False},
            {"i": 2, "question": "3+3?", "gold": "6", "pred": "6", "correct": True},
        ],
    }
    write(tmp_path / "eval" / "a.json", json.dumps(doc, indent=2))
    write(tmp_path / "eval" / "b.jsonl", "\n".join(json.dumps(r) for r in doc["per_q"][::-1]) + "\n")
    runs = load_all(tmp_path)
    assert sorted(runs) == ["eval/a", "eval/b"]
    a, diags = runs["eval/a"]
    assert a.probe is not None
    assert [(c.id, c.checks, c.prompt, c.expected, c.actual) for c in a.probe.cases][1] == (
        "1",
        {"correct": False},
        "2+2?",
        "4",
        "5",
    )
    assert a.summary == {"n": 3.0, "accuracy": 2 / 3}
    assert a.config == {"base_model": "m"}
    assert a.metrics is None
    assert not diags.items
    b, _ = runs["eval/b"]
    assert b.probe is not None and sorted(c.id for c in b.probe.cases) == ["0", "1", "2"]


def test_explicit_step_key_and_empty_files(tmp_path: Path) -> None:
    path = write(tmp_path / "r" / "log.jsonl", '{"id": 1, "it": 5, "ok": true, "loss": 1.5}\n')
    write(tmp_path / "r" / "empty.jsonl", "")
    run = Run(id="r", source_dir=path.parent)
    diags = Diagnostics()
    read_log_into(run, path, diags, step_key="it", root=tmp_path)
    assert run.probe is None and at(run, "loss", 5) == 1.5  # a step key given: metrics, not cases
    runs = load_all(tmp_path)
    assert any("file is empty" in t for t in messages(runs["r/empty"][1]))


def test_only_json_documents_that_hold_records_are_logs(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    write(folder / "config.json", '{"architectures": ["X"]}')
    write(folder / "tokenizer.json", '{"added_tokens": [{"id": 0, "special": true}]}')
    write(folder / "settings.json", '{"a": 1}')
    write(folder / "records.json", '{"meta": 1, "rows": [{"step": 1, "x": 2}]}')
    assert [p.name for p in sorted(folder.iterdir()) if is_log_file(p)] == ["records.json"]
    claim = GenericJsonlAdapter().claim(folder, tmp_path)
    assert claim is not None and claim.owned_dirs == ()
    assert "config.json" in claim.notes[0] and "settings.json" in claim.notes[0]


def test_parse_duration() -> None:
    assert parse_duration("0:00:26") == 26
    assert parse_duration("2 days, 12:57:12") == 2 * 86400 + 12 * 3600 + 57 * 60 + 12
    assert parse_duration("1 day, 0:00:00.5") == 86400.5
    assert parse_duration("12:30") is None and parse_duration("soon") is None


# ---------------------------------------------------------------------------------------------------- properties


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400), st.sampled_from(["log.jsonl", "log.json"]))
def test_property_arbitrary_bytes_never_crash(tmp_path: Path, raw: bytes, name: str) -> None:
    shutil.rmtree(tmp_path / "p", ignore_errors=True)
    write(tmp_path / "p" / name, raw)
    load_all(tmp_path)


_finite = st.floats(allow_nan=False, allow_infinity=False)
# no outcome name among the keys: a record of `acc` 0/1 values (and no step) is a per-item result, read as items
_row = st.dictionaries(st.sampled_from(["loss", "lr", "grad_norm", "a/b"]), _finite, min_size=1)
_junk = st.one_of(
    st.binary(max_size=30).map(lambda b: b"{" + b.replace(b"\n", b" ")),
    st.just(b"NaN"),
    st.just(b""),
    st.just(b'"text"'),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_row, _junk), max_size=15), st.sampled_from(["step", "global_step", "iteration", None]))
def test_property_every_well_formed_line_appears(tmp_path: Path, rows: list, step_key: str | None) -> None:
    shutil.rmtree(tmp_path / "w", ignore_errors=True)
    lines = []
    for i, (row, junk) in enumerate(rows):
        record = dict(row)
        if step_key:
            record[step_key] = i * 10
        lines.append(json.dumps(record).encode())
        lines.append(junk)
    write(tmp_path / "w" / "log.jsonl", b"\n".join(lines) + b"\n")
    runs = load_all(tmp_path)
    if not rows:
        return
    run, _ = runs["w"]
    for i, (row, _) in enumerate(rows):
        for key, value in row.items():
            assert run.metrics is not None
            series = run.metrics.series[key]
            if step_key:
                assert at(run, key, i * 10) == value
            else:
                assert value in list(series.values)


def test_jsonl_logs_are_streamed_never_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = "".join(json.dumps({"step": i, "loss": 1 / (i + 1)}) + "\n" for i in range(5000))
    path = write(tmp_path / "big" / "log.jsonl", body)
    original_bytes, original_text = Path.read_bytes, Path.read_text

    def guarded_bytes(self: Path) -> bytes:
        assert self.suffix != ".jsonl", f"{self} read whole"
        return original_bytes(self)

    def guarded_text(self: Path, *args: object, **kwargs: object) -> str:
        assert self.suffix != ".jsonl", f"{self} read whole"
        return original_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_bytes", guarded_bytes)
    monkeypatch.setattr(Path, "read_text", guarded_text)
    run, _ = only(path.parent.parent)
    assert len(run.metrics.series["loss"]) == 5000  # type: ignore[union-attr]


def test_per_item_files_named_by_a_campaign_are_not_runs(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    rows = [{"i": 0, "correct": True}, {"i": 1, "correct": False}]
    write(camp / "evals" / "a.json", json.dumps(rows))
    write(camp / "evals" / "b.json", json.dumps(rows))
    write(camp / "evals" / "extra.json", json.dumps(rows))
    write(camp / "campaign.yaml", "id: camp\npaired:\n  - a: evals/a.json\n    b: evals/b.json\n")
    found = discover(tmp_path)
    (claim,) = [c for c in found.claims if c.adapter == "generic_jsonl"]
    assert claim.runs == 1 and "a.json, b.json: per-item results named in a campaign.yaml" in claim.notes[0]
    assert [s.default_id for s in found.runs] == ["camp/evals/extra"]


def test_a_paired_file_linked_from_elsewhere_in_the_tree_is_refused_not_a_crash(tmp_path: Path) -> None:
    """The link stays inside the source tree but leaves the campaign folder: discovery names the problem."""
    write(tmp_path / "other" / "a.json", '[{"id": 1, "correct": true}]')
    write(tmp_path / "camp" / "evals" / "b.json", '[{"id": 1, "correct": false}]')
    (tmp_path / "camp" / "evals" / "a.json").symlink_to(tmp_path / "other" / "a.json")
    write(tmp_path / "camp" / "campaign.yaml", "id: camp\npaired:\n  - a: evals/a.json\n    b: evals/b.json\n")
    found = discover(tmp_path)
    assert [s.default_id for s in found.runs] == ["other"]  # the linked copy is the campaign's input, not a run
    assert any("'evals/a.json' is outside the campaign folder" in m for m in messages(found.diags))


def test_a_bare_nan_line_is_skipped_not_said_to_be_kept(tmp_path: Path) -> None:
    """A line that is only `NaN` is not a record: it is skipped, and no warning says its value was kept."""
    write(tmp_path / "w" / "log.jsonl", b'{"loss": 0.5}\n{"loss": NaN}\nNaN\n{"loss": 0.25}\n')
    run, diags = load_all(tmp_path)["w"]
    said = messages(diags)
    assert any("expected a JSON object, found float; line skipped" in m for m in said), said
    assert any("1 line(s) use bare NaN/Infinity" in m and "first at line 2" in m for m in said), said
    assert run.metrics is not None and len(run.metrics.series["loss"].values) == 3
