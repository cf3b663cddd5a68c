"""Points dropped from a curve's data file must lie on the line the kept points draw."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from obs.decimate import distinct, on_line
from obs.render.chartdata import encode, encode_edges


def drawn(entry: dict[str, list[float]], key: str, at: np.ndarray) -> np.ndarray:
    kept_x = np.cumsum(entry["dx"]).astype(np.float64)
    return np.interp(at, kept_x, np.asarray(entry[key], dtype=np.float64))


# Curves made of flat stretches, integer ramps (a step or token counter) and noise, on irregular steps.
pieces = st.lists(
    st.tuples(
        st.sampled_from(["flat", "ramp", "noise"]),
        st.integers(1, 40),
        st.integers(-1000, 1000),
        st.integers(-50, 50),
    ),
    min_size=1,
    max_size=8,
)


def curve(spec: list[tuple[str, int, int, int]], gaps: list[int]) -> tuple[np.ndarray, np.ndarray]:
    ys: list[float] = []
    rng = np.random.default_rng(len(spec))
    for kind, length, level, slope in spec:
        if kind == "flat":
            ys += [float(level)] * length
        elif kind == "ramp":
            ys += [float(level + slope * i) for i in range(length)]
        else:
            ys += list(rng.normal(level, 10, length))
    steps = np.cumsum([1 + gaps[i % len(gaps)] for i in range(len(ys))]).astype(np.float64)
    return steps, np.asarray(ys)


@settings(max_examples=200, deadline=None)
@given(pieces, st.lists(st.integers(0, 3), min_size=1, max_size=5))
def test_dropped_points_are_on_the_drawn_line(spec: list[tuple[str, int, int, int]], gaps: list[int]) -> None:
    x, y = curve(spec, gaps)
    entry = encode(x, y)
    kept = np.cumsum(entry["dx"])
    assert kept[0] == x[0] and kept[-1] == x[-1]  # the ends are always kept
    assert set(kept.tolist()) <= set(x.tolist())  # only logged points
    assert len(entry["y"]) == len(kept)
    expected = np.array([float(f"{v:.6g}") for v in y])
    assert np.allclose(drawn(entry, "y", x), expected, rtol=1e-12, atol=1e-9)


def test_a_constant_series_is_its_two_ends_and_a_counter_too() -> None:
    steps = np.arange(0, 20000, 1.0)
    assert encode(steps, np.full(steps.size, 65536.0)) == {"dx": [0, 19999], "y": [65536, 65536]}
    assert encode(steps, 16.0 * (steps + 1)) == {"dx": [0, 19999], "y": [16, 320000]}
    # past 6 significant digits the rounded values leave the line: those points stay (nothing is approximated)
    assert len(encode(steps, 8192.0 * (steps + 1))["y"]) > 2
    wiggle = encode(steps[:5], np.array([0.0, 1.0, 0.0, 1.0, 0.0]))
    assert wiggle["y"] == [0, 1, 0, 1, 0]  # nothing on a line: every point stays


def test_band_edges_keep_a_point_either_edge_needs() -> None:
    x = np.arange(6, dtype=np.float64)
    lo = np.zeros(6)
    hi = np.array([1.0, 1.0, 3.0, 1.0, 1.0, 1.0])
    entry = encode_edges(x, lo, hi)
    assert np.cumsum(entry["dx"]).tolist() == [0, 1, 2, 3, 5]
    assert np.allclose(drawn(entry, "hi", x), hi) and np.allclose(drawn(entry, "lo", x), lo)


def test_on_line_never_flags_the_ends_or_short_series() -> None:
    assert not on_line(np.array([0.0, 1.0]), np.array([1.0, 1.0])).any()
    flags = on_line(np.arange(4.0), np.ones(4))
    assert flags.tolist() == [False, True, True, False]


@given(st.lists(st.integers(-5, 5) | st.floats(-1e6, 1e6, allow_nan=False), max_size=60))
def test_distinct_is_numpys_unique(values: list[float]) -> None:
    array = np.asarray(values, dtype=np.float64)
    assert np.array_equal(distinct(array), np.unique(array))
