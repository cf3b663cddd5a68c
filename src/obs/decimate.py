"""Min/max decimation of long curves before plotting.

A 700-pixel-wide plot cannot show 2 million points, and drawing them costs seconds. Keeping the
minimum and maximum of each of ~max_points/2 buckets (in their original order), plus the first and
last point exactly, draws the same picture: every spike and dip survives, and the final value a
reader looks for is exact. Cost is linear and vectorised (about 2 ms for 200k points).

After rounding, the points that lie on the straight line between their neighbours are dropped too
(`on_line`): a constant loss scale, a step counter or a flat learning-rate phase is drawn by its
two ends as well as by hundreds of points, and the data file a page loads is that much smaller.
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-D array without NaN: np.unique's answer, without the numpy.ma
    import (~10 ms) numpy 2 makes on a process's first plain np.unique call."""
    ordered = np.sort(values)
    if ordered.size < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def _first_index_per_bucket(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    positions = np.flatnonzero(mask)
    bucket_of = np.searchsorted(starts, positions, side="right") - 1
    _, first = np.unique(bucket_of, return_index=True)
    return positions[first]


def bucket_starts(n: int, max_points: int) -> np.ndarray:
    """First index of each of the ~max_points/2 equal buckets a series of n points is cut into."""
    buckets = max(1, (max_points - 2) // 2)
    return distinct(np.linspace(0, n, buckets + 1).astype(np.int64)[:-1])


def minmax_indices(values: np.ndarray, max_points: int) -> np.ndarray:
    """Sorted indices of the points to keep (all of them when there are few enough)."""
    n = int(values.shape[0])
    if n <= max_points or n <= 2:
        return np.arange(n)
    starts = bucket_starts(n, max_points)
    lengths = np.diff(np.append(starts, n))
    mins = np.minimum.reduceat(values, starts)
    maxs = np.maximum.reduceat(values, starts)
    imin = _first_index_per_bucket(values == np.repeat(mins, lengths), starts)
    imax = _first_index_per_bucket(values == np.repeat(maxs, lengths), starts)
    return distinct(np.concatenate(([0, n - 1], imin, imax)))


def on_line(x: np.ndarray, *ys: np.ndarray) -> np.ndarray:
    """Which points lie on the straight line between their two neighbours, in every one of `ys`.

    Dropping all of them at once draws the same lines: consecutive flagged points share one slope,
    so a run of them lies on the segment between the unflagged points at its ends. The first and
    last points are never flagged. The test is exact for flat stretches (equal values) and holds
    within double rounding otherwise (cross products of the differences), far below a pixel.
    """
    n = int(x.shape[0])
    flagged = np.zeros(n, dtype=bool)
    if n < 3:
        return flagged
    dx1 = x[1:-1] - x[:-2]
    dx2 = x[2:] - x[1:-1]
    inner = np.ones(n - 2, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for y in ys:
            inner &= (y[1:-1] - y[:-2]) * dx2 == (y[2:] - y[1:-1]) * dx1
    flagged[1:-1] = inner
    return flagged


def decimate(steps: np.ndarray, values: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Decimate a finite series to at most about `max_points` points (see module doc)."""
    keep = minmax_indices(values, max_points)
    return steps[keep], values[keep]


def decimate_band(
    steps: np.ndarray, mean: np.ndarray, spread: np.ndarray, max_points: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decimate a mean ± spread band, keeping the extremes of both edges."""
    n = int(steps.shape[0])
    if n <= max_points:
        return steps, mean, spread
    keep = distinct(
        np.concatenate(
            (
                minmax_indices(mean + spread, max_points // 2),
                minmax_indices(mean - spread, max_points // 2),
            )
        )
    )
    return steps[keep], mean[keep], spread[keep]
