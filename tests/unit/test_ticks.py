"""Axis tick labels: distinct, evenly spaced, readable, in the static figures and the sweeps chart.

The first version rounded every label to one significant digit, so a learning-rate axis read
"2e-06, 2e-06, 8e-07, 0" and equally spaced ticks read "2e-04, 3e-04, 5e-04, 6e-04". Static
figures now use matplotlib's own formatters; the sweeps chart (drawn without matplotlib) writes
each label exact to the spacing of its axis.
"""

from __future__ import annotations

import math
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from obs.analysis.curves import plan_curves
from obs.analysis.sweeps import numeric_axis, tick_text
from obs.model import Metrics, Series, Stage
from obs.render import figures

TICK = re.compile(r'<g id="(matplotlib\.axis_\d+|[xy]tick_\d+)">|<!-- (.*?) -->')


def svg_tick_labels(svg: str) -> dict[str, list[str]]:
    """Per axis of a matplotlib SVG, the text of each tick label (matplotlib writes every text as a
    comment before its glyph outlines)."""
    axes: dict[str, list[str]] = {}
    axis, in_tick = None, False
    for m in TICK.finditer(svg):
        if m.group(1) and m.group(1).startswith("matplotlib.axis"):
            axis, in_tick = m.group(1), False
            axes[axis] = []
        elif m.group(1):
            in_tick = True
        elif in_tick and axis is not None:
            axes[axis].append(m.group(2))
            in_tick = False
    return axes


def label_value(text: str) -> float:
    """A label as a number: mathtext and the Unicode minus removed, an SI suffix applied."""
    plain = re.sub(r"\$\\mathdefault\{(.*?)\}\$", r"\1", text).replace("\u2212", "-").strip()
    scale = {"k": 1e3, "M": 1e6, "G": 1e9, "m": 1e-3, "µ": 1e-6, "n": 1e-9}
    if plain and plain[-1] in scale:
        return float(plain[:-1]) * scale[plain[-1]]
    return float(plain)


def assert_readable(axes: dict[str, list[str]]) -> None:
    """Every axis: no label twice; on a linear axis the labels read as evenly spaced numbers."""
    for axis, labels in axes.items():
        shown = [t for t in labels if t]
        assert len(shown) == len(set(shown)), f"{axis}: repeated tick labels {shown}"
        if any("10^" in t for t in shown):  # a log axis: powers of ten
            continue
        values = [label_value(t) for t in shown]
        assert values == sorted(values), f"{axis}: labels out of order {shown}"
        gaps = np.diff(values)
        assert len(gaps) < 2 or np.allclose(gaps, gaps[0], rtol=1e-6), f"{axis}: unevenly spaced {shown}"


def metrics_with(lr: np.ndarray) -> Metrics:
    steps = np.arange(lr.size, dtype=float)
    loss = 3.0 * np.exp(-steps / 400) + 0.1
    return Metrics(
        series={
            "loss": Series(steps, loss),
            "grad_norm": Series(steps, 1.0 + 0.2 * np.sin(steps / 30)),
            "lr": Series(steps, lr),
        },
        stages=[Stage("warmup", 0, 99), Stage("main", 100, float(lr.size - 1))],
    )


def test_a_small_learning_rate_axis_reads_distinct_evenly_spaced_values() -> None:
    steps = np.arange(3000)
    lr = np.where(steps < 150, 6e-4 * steps / 150, 6e-4 * (0.5 + 0.5 * np.cos(np.pi * (steps - 150) / 2850)))
    m = metrics_with(lr)
    axes = svg_tick_labels(figures.training_figure(m, plan_curves(m), 2000).decode())
    assert_readable(axes)
    lr_axis = list(axes.values())[-1]
    assert "$\\mathdefault{2}$" in lr_axis and "$\\mathdefault{4}$" in lr_axis  # with ×10⁻⁴ at the axis end


def test_values_that_differ_past_the_first_digit_get_the_digits_they_need() -> None:
    """4.1e-6 .. 5.3e-6 used to read 4e-06, 4e-06, 5e-06, 5e-06."""
    x = np.linspace(0, 1000, 200)
    mean = 4.1e-6 + 1.2e-6 * x / 1000
    svg = figures.multi_line_figure([("a", x, mean, None), ("b", x, mean * 1.01, None)], "tiny").decode()
    assert_readable(svg_tick_labels(svg))


def test_steps_read_with_si_prefixes() -> None:
    x = np.linspace(0, 20_000, 50)
    svg = figures.multi_line_figure([("a", x, np.sqrt(x), None)], "y").decode()
    steps = svg_tick_labels(svg)["matplotlib.axis_1"]
    assert steps[:3] == ["0", "2.5k", "5k"] or steps[:3] == ["0", "5k", "10k"], steps


@settings(max_examples=200, deadline=None)
@given(
    lo=st.floats(min_value=-1e7, max_value=1e7, allow_nan=False),
    span=st.floats(min_value=1e-9, max_value=1e7, allow_nan=False),
    n=st.integers(min_value=2, max_value=12),
)
def test_sweep_axis_labels_are_never_repeated(lo: float, span: float, n: int) -> None:
    if span < abs(lo) * 1e-9:  # below float resolution there is nothing to tell apart
        return
    values = [lo + span * i / (n - 1) for i in range(n)]
    axis = numeric_axis("k", "setting", values)
    texts = [t.text for t in axis.ticks]
    positions = [t.pos for t in axis.ticks]
    assert len(texts) == len(set(texts)), (values, texts)
    assert positions == sorted(positions)


def test_sweep_axis_labels_the_issue_examples() -> None:
    for values in ([2e-6, 2.3e-6, 8e-7, 0.0], [4.1e-6, 4.4e-6, 4.6e-6, 5.1e-6, 5.3e-6], [0.00101, 0.00105]):
        texts = [t.text for t in numeric_axis("lr", "setting", values).ticks]
        assert len(texts) == len(set(texts)), texts
        for t in texts:  # each label is a number a reader can type back in
            assert math.isfinite(float(t.replace("k", "e3").replace("M", "e6")))


def test_tick_text_is_exact_to_its_resolution() -> None:
    assert [tick_text(x, 1e-5) for x in (0.00101, 0.00102)] == ["1.01e-3", "1.02e-3"]
    assert [tick_text(x, 2500) for x in (0, 2500, 5000, 12500)] == ["0", "2500", "5000", "12.5k"]
    assert tick_text(0.25, 0.05) == "0.25" and tick_text(0.3, 0.05) == "0.30"
