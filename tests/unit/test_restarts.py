"""Issue 26, "restarts averaged": a log holding several attempts (the step counter goes back) is not averaged per
step into one curve; the last attempt is kept at each step, or each attempt apart (obs.yaml `restarts`), and the
page says so."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from adapterkit import load_all, write

from obs.config import load_config
from obs.diagnostics import Diagnostics
from obs.series_builder import build_metrics


def _attempts() -> list[tuple[int, dict]]:
    """Three attempts: steps 0-9 (loss 10+), 0-9 again (loss 20+), then 0-14 (loss 30+); one record a line."""
    rows = []
    for attempt, last in ((1, 9), (2, 9), (3, 14)):
        rows += [{"step": s, "loss": attempt * 10 + s / 100} for s in range(last + 1)]
    return list(enumerate(rows, 1))


def test_the_last_attempt_is_kept_at_each_step_and_said() -> None:
    diags = Diagnostics()
    m = build_metrics(_attempts(), Path("log.jsonl"), diags)
    loss = m.series["loss"]
    assert loss.steps.tolist() == list(range(15))
    assert np.all(loss.values >= 30)  # attempt 3's values, never a mean with 10+ and 20+
    assert any("3 attempts" in d for d in m.dropped)
    said = [d for d in diags.items if "goes back" in d.message]
    assert len(said) == 1 and said[0].line == 11  # the first record of the second attempt
    assert said[0].severity == "info"


def test_attempts_kept_apart() -> None:
    m = build_metrics(_attempts(), Path("log.jsonl"), Diagnostics(), restarts="apart")
    assert m.series["attempt 1/loss"].steps.tolist() == list(range(10))
    assert np.all(m.series["attempt 2/loss"].values // 10 == 2)
    assert np.all(m.series["loss"].values >= 30) and len(m.series["loss"]) == 15


def test_a_resume_from_a_checkpoint_replaces_only_the_steps_logged_again() -> None:
    rows = [{"step": s, "loss": 1.0} for s in range(0, 80, 10)] + [{"step": s, "loss": 2.0} for s in range(50, 120, 10)]
    m = build_metrics(list(enumerate(rows, 1)), Path("log.jsonl"), Diagnostics())
    loss = m.series["loss"]
    assert loss.steps.tolist() == list(range(0, 120, 10))
    assert loss.values.tolist() == [1.0] * 5 + [2.0] * 7


def test_several_keys_at_one_step_are_not_a_restart() -> None:
    rows = [{"step": s, "loss": 1.0} for s in range(5)] + [{"step": 4, "eval_loss": 0.5}]
    m = build_metrics(list(enumerate(rows, 1)), Path("log.jsonl"), Diagnostics())
    assert not any("goes back" in d for d in m.dropped)


@pytest.mark.parametrize("policy", ["last", "apart"])
def test_a_generic_log_with_restarts_reads_them_per_obs_yaml(tmp_path: Path, policy: str) -> None:
    write(tmp_path / "obs.yaml", f"restarts: {policy}\n")
    write(tmp_path / "r" / "train_log.jsonl", "".join(json.dumps(r) + "\n" for _, r in _attempts()))
    cfg = load_config(tmp_path, Diagnostics())
    (run, _), *_ = load_all(tmp_path, cfg).values()
    assert run.metrics is not None
    assert ("attempt 1/loss" in run.metrics.series) == (policy == "apart")
    assert any("3 attempts" in d for d in run.metrics.dropped)


def test_a_long_pause_between_time_stamped_records_is_said() -> None:
    rows = [{"step": s, "loss": 1.0, "_timestamp": 1.7e9 + 10 * s + (7200 if s >= 50 else 0)} for s in range(100)]
    m = build_metrics(list(enumerate(rows, 1)), Path("log.jsonl"), Diagnostics())
    said = [d for d in m.dropped if "pauses for 2.0 h between step 49 and step 50 (line 51)" in d]
    assert said, m.dropped
    steady = [{"step": s, "loss": 1.0, "_timestamp": 1.7e9 + 10 * s} for s in range(100)]
    assert not build_metrics(list(enumerate(steady, 1)), Path("log.jsonl"), Diagnostics()).dropped


def _fresh_start_rows() -> list[tuple[int, dict]]:
    """Attempt 1 logs its step-0 record and stops; attempt 2 logs step 0 again (loss 9.0) and goes on to step 5: the
    counter never goes back, so only the repeated first record marks the new attempt."""
    rows = [{"step": 0, "loss": 5.0, "lr": 0.1}, {"step": 0, "loss": 9.0, "lr": 0.1}]
    rows += [{"step": s, "loss": 9.0 - s, "lr": 0.1} for s in range(1, 6)]
    return list(enumerate(rows, 1))


def test_a_repeated_step_0_record_is_a_new_attempt_not_two_values_at_one_step() -> None:
    diags = Diagnostics()
    m = build_metrics(_fresh_start_rows(), Path("log.jsonl"), diags)
    loss = m.series["loss"]
    assert loss.steps.tolist() == list(range(6))
    assert loss.values[0] == 9.0  # attempt 2's value, not the mean 7.0 of both attempts
    said = [d for d in diags.items if "starts again" in d.message]
    assert len(said) == 1 and said[0].line == 2 and "2 attempts" in said[0].message
    assert not any("several values at one step" in d for d in m.dropped)


def test_a_repeated_step_0_record_kept_apart() -> None:
    m = build_metrics(_fresh_start_rows(), Path("log.jsonl"), Diagnostics(), restarts="apart")
    assert m.series["attempt 1/loss"].values.tolist() == [5.0]
    assert m.series["loss"].values.tolist() == [9.0, 8.0, 7.0, 6.0, 5.0, 4.0]


def test_a_fresh_start_then_a_step_going_back_counts_three_attempts() -> None:
    rows = [r for _, r in _fresh_start_rows()] + [{"step": s, "loss": 20.0 + s, "lr": 0.1} for s in range(3)]
    m = build_metrics(list(enumerate(rows, 1)), Path("log.jsonl"), Diagnostics(), restarts="apart")
    assert m.series["attempt 1/loss"].values.tolist() == [5.0]
    assert m.series["attempt 2/loss"].steps.tolist() == list(range(6))
    assert m.series["loss"].values.tolist() == [20.0, 21.0, 22.0]
    assert any("3 attempts" in d for d in m.dropped)


def test_an_eval_record_at_step_0_beside_the_train_record_is_not_a_restart() -> None:
    rows = [{"step": 0, "loss": 5.0}, {"step": 0, "eval_loss": 6.0}]
    rows += [{"step": s, "loss": 5.0 - s} for s in range(1, 4)] + [{"step": 3, "eval_loss": 4.0}]
    m = build_metrics(list(enumerate(rows, 1)), Path("log.jsonl"), Diagnostics())
    assert m.series["loss"].values.tolist() == [5.0, 4.0, 3.0, 2.0]
    assert m.series["eval_loss"].steps.tolist() == [0, 3]
    assert not any("attempts" in d for d in m.dropped)


def test_several_records_at_every_step_are_not_a_restart() -> None:
    """Two records per step with the same keys (one per rank): the repeated step-0 record is the logger's habit."""
    rows = [{"step": s, "loss": float(s + rank)} for s in range(4) for rank in (0, 1)]
    m = build_metrics(list(enumerate(rows, 1)), Path("log.jsonl"), Diagnostics())
    assert m.series["loss"].values.tolist() == [0.5, 1.5, 2.5, 3.5]  # the mean per step, as same_step says
    assert not any("attempts" in d for d in m.dropped)


def test_a_step_0_header_after_later_steps_is_already_a_step_going_back() -> None:
    """Steps 0..50, then a fresh step-0 record, then 51..60: caught by the counter going back (line 52)."""
    rows = [{"step": s, "loss": 1.0} for s in range(51)] + [{"step": 0, "loss": 2.0}]
    rows += [{"step": s, "loss": 2.0} for s in range(51, 61)]
    diags = Diagnostics()
    m = build_metrics(list(enumerate(rows, 1)), Path("log.jsonl"), diags, restarts="apart")
    assert m.series["attempt 1/loss"].steps.tolist() == list(range(51))
    assert m.series["loss"].steps.tolist() == [0, *range(51, 61)]
    said = [d for d in diags.items if "goes back" in d.message]
    assert len(said) == 1 and said[0].line == 52


def test_a_step_key_that_stays_at_0_is_not_a_run_of_restarts() -> None:
    rows = [{"step": 0, "loss": float(i)} for i in range(300)] + [{"step": 1, "loss": 1.0}]
    m = build_metrics(list(enumerate(rows, 1)), Path("log.jsonl"), Diagnostics())
    assert m.series["loss"].values[0] == pytest.approx(149.5)  # the mean of the 300 values at step 0 (same_step)
    assert not any("attempts" in d for d in m.dropped)
