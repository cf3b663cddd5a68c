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
