"""Sparklines: a tiny inline line for every logged series, drawn without matplotlib.

A run can log dozens of bookkeeping metrics (tokens, throughput, memory, epoch, ...). Each one gets
a sparkline in the series table instead of a full matplotlib panel: a full panel costs ~60 ms to
draw and ~20 KB to store, a sparkline ~0.1 ms and ~1 KB, and it still shows the shape, the spikes
(min/max decimation keeps them) and the end.
"""

from __future__ import annotations

import numpy as np

from obs.decimate import decimate, on_line
from obs.model import Series

WIDTH = 160
HEIGHT = 28
POINTS = 120


def sparkline_points(series: Series, width: int = WIDTH, height: int = HEIGHT, points: int = POINTS) -> str:
    """The `points` attribute of an SVG polyline in a width×height box ('' when nothing to draw)."""
    keep = np.isfinite(series.values)
    x, y = series.steps[keep], series.values[keep]
    if x.size == 0:
        return ""
    x, y = decimate(x, y, points)
    x0, x1 = float(x[0]), float(x[-1])
    y0, y1 = float(np.min(y)), float(np.max(y))
    pad = 2.0
    sx = (width - 2 * pad) / (x1 - x0) if x1 > x0 else 0.0
    sy = (height - 2 * pad) / (y1 - y0) if y1 > y0 else 0.0
    xs = pad + (x - x0) * sx if sx else np.full(x.shape, width / 2)
    ys = height - pad - (y - y0) * sy if sy else np.full(y.shape, height / 2)
    # Tenths of a pixel, as written; a point on the line between its neighbours there (a repeat, a straight
    # stretch) draws nothing the others do not, and is left out.
    tx, ty = np.round(xs * 10), np.round(ys * 10)
    keep = ~on_line(tx, ty)
    return " ".join(f"{a / 10:.1f},{b / 10:.1f}" for a, b in zip(tx[keep].tolist(), ty[keep].tolist(), strict=True))
