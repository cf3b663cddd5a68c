"""What a run's curves.js offers as other x axes (`chartdata.x_axes`), and the whole-step grid of
campaign and arms curves (`campaign_view.step_grid`)."""

from __future__ import annotations

import numpy as np
import pytest

from obs.analysis.campaign_view import GRID_POINTS, align_curves, step_grid
from obs.model import Metrics, Series
from obs.render.chartdata import declared_axes, x_axes, x_kind
from obs.sitemodel import Curve


def series(values: list[float]) -> Series:
    return Series(np.arange(len(values), dtype=np.float64), np.asarray(values, dtype=np.float64))


@pytest.mark.parametrize(
    ("name", "values", "kind"),
    [
        ("_timestamp", [1.7e9, 1.7e9 + 2, 1.7e9 + 5], "wall"),
        ("time", [0.0, 2.0, 5.0], "elapsed"),  # a clock that starts at zero is time since the start
        ("_runtime", [0.0, 1.5, 3.0], "elapsed"),
        ("train/elapsed_time", [1.0, 2.0, 3.0], "elapsed"),
        ("epoch", [0.0, 0.5, 1.0], "epoch"),
        ("train/epoch", [0.0, 0.5, 1.0], "epoch"),
        ("num_input_tokens_seen", [0.0, 4096.0, 8192.0], "counter"),
        ("examples_seen", [0.0, 32.0, 64.0], "counter"),
        ("tokens_per_second", [4000.0, 4100.0, 4200.0], None),  # a rate, even when it grows
        ("train/samples_per_second", [1.0, 2.0, 3.0], None),
        ("epoch", [1.0, 1.0, 1.0], None),  # constant: not an axis
        ("tokens_seen", [0.0, 10.0, 5.0], None),  # goes back: not an axis
        ("loss", [3.0, 2.0, 1.0], None),
        ("epoch_loss", [0.0, 1.0, 2.0], None),
        ("tokens", [7.0], None),  # one point
    ],
)
def test_which_series_may_be_an_x_axis(name: str, values: list[float], kind: str | None) -> None:
    assert x_kind(name, series(values)) == kind


def test_a_wall_clock_keeps_a_tenth_of_a_second_over_a_day() -> None:
    start = 1_767_225_600.123
    t = start + np.linspace(0, 86_400, 5001)
    metrics = Metrics(
        series={"_timestamp": Series(np.arange(t.size, dtype=np.float64), t), "loss": series([1.0] * 5001)}
    )
    axis = x_axes(metrics)["_timestamp"]
    assert axis["kind"] == "wall" and axis["start"] == start
    steps = np.cumsum(axis["dx"])
    back = start + np.asarray(axis["y"], dtype=np.float64)
    assert np.max(np.abs(back - t[steps.astype(int)])) < 0.1
    assert list(x_axes(metrics)) == ["_timestamp"]


def test_campaign_grid_is_whole_steps_for_whole_step_logs() -> None:
    assert step_grid(0, 50, whole=True).tolist() == list(range(51))
    big = step_grid(0, 1000, whole=True)
    assert big.size == GRID_POINTS and np.all(np.mod(big, 1) == 0) and big[0] == 0 and big[-1] == 1000
    assert step_grid(0.5, 3.5, whole=False).size == GRID_POINTS
    a = Curve(steps=(0, 10, 20, 30), values=(0.0, 1.0, 2.0, 3.0))
    b = Curve(steps=(5, 15, 25, 35), values=(1.0, 1.0, 1.0, 1.0))
    aligned = align_curves([a, b])
    assert aligned is not None
    grid, matrix = aligned
    assert grid.tolist() == list(range(5, 31))
    assert matrix[0].tolist() == pytest.approx([x / 10 for x in range(5, 31)])


def test_a_declared_counter_is_one_axis_whatever_each_run_calls_it() -> None:
    """obs.yaml `x_axes: {tokens: [num_input_tokens_seen, train/tokens]}`: each run's first series that
    it logged becomes the axis `tokens`, a name no token rule would have recognised included."""
    declared = {"tokens": ["num_input_tokens_seen", "train/tok"]}
    hf = Metrics(series={"num_input_tokens_seen": series([0.0, 512.0, 1024.0]), "loss": series([3.0, 2.0, 1.0])})
    other = Metrics(series={"train/tok": series([10.0, 20.0, 40.0]), "loss": series([3.0, 2.0, 1.0])})
    for metrics, name, last in ((hf, "num_input_tokens_seen", 1024), (other, "train/tok", 30)):
        chosen, faults = declared_axes(metrics, declared)
        assert chosen == {"tokens": name} and faults == []
        axes = x_axes(metrics, declared=chosen)
        assert list(axes) == ["tokens"]  # the series is not offered a second time under its own name
        assert axes["tokens"]["kind"] == "counter" and axes["tokens"]["series"] == name
        assert axes["tokens"]["start"] == 0.0 and axes["tokens"]["y"][-1] - axes["tokens"]["y"][0] == last


def test_a_declared_counter_that_goes_back_is_named_and_not_an_axis() -> None:
    metrics = Metrics(
        series={"seen": Series(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 8.0, 4.0, 12.0])), "ok": series([1, 2])}
    )
    chosen, faults = declared_axes(metrics, {"examples": ["seen", "ok"], "absent": ["nothing"]})
    assert chosen == {"examples": "ok"}  # the next declared series is used
    assert faults == [
        "x_axes.examples: the series 'seen' goes back at step 2 (from 8 to 4); it is not offered as an x axis"
    ]
    flat = Metrics(series={"c": series([5.0, 5.0, 5.0]), "d": series([float("nan"), 1.0])})
    assert declared_axes(flat, {"a": ["c"], "b": ["d"]})[1] == [
        "x_axes.a: the series 'c' never grows; it is not offered as an x axis",
        "x_axes.b: the series 'd' has fewer than two finite values; it is not offered as an x axis",
    ]


def test_a_declared_axis_may_not_take_the_name_of_one_obs_offers() -> None:
    metrics = Metrics(series={"my_epoch": series([0.0, 0.5, 1.0])})
    chosen, faults = declared_axes(metrics, {"epoch": ["my_epoch"], "Epochs": ["my_epoch"]})
    assert chosen == {"Epochs": "my_epoch"}
    assert faults == ["x_axes.epoch: 'epoch' is an x axis obs offers itself; give the counter another name"]
