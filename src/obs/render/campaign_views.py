"""What the campaign page's sample-efficiency and coupling sections draw, laid out for their templates.

The sample-efficiency chart is drawn in the browser by `assets/charts.js` (the campaign curves' Group,
from a JSON block on the page: each group's line and its interval band); its table is the same numbers
for readers without script and for print. The coupling scatter is small (one point per run), so it is
inline SVG laid out here in pixels, like the sweeps page's parallel coordinates (`pcp.py`), and works
without script. No statistics here: `analysis/sample_efficiency.py` and `analysis/coupling.py` made them.
"""

from __future__ import annotations

import math
from typing import Any

from obs.analysis.coupling import AcrossRuns
from obs.analysis.sample_efficiency import SampleEfficiency
from obs.numbers import num

# the charts' palette (charts.js PALETTE), so a condition has one colour on the page
PALETTE = ("#2f5d9e", "#d9822b", "#3f8f5f", "#9b4dca", "#c2410c", "#0f766e", "#be185d", "#4b5563")


def _listed(values: Any) -> list[float | None]:
    return [float(v) if v is not None and math.isfinite(float(v)) else None for v in values]


def efficiency_chart(view: SampleEfficiency) -> dict[str, Any]:
    """The JSON block of the sample-efficiency chart: one line per group (and its band where it has one)."""
    lines = []
    for line in view.lines:
        if line.curve is not None:
            c = line.curve
            entry: dict[str, Any] = {"label": line.group, "x": _listed(c.grid), "mean": _listed(c.mean)}
            if c.band is not None:
                entry["lo"], entry["hi"] = _listed(c.band[0]), _listed(c.band[1])
            lines.append(entry)
        elif line.points:
            pts = line.points
            entry = {"label": line.group, "x": [p.size for p in pts], "mean": [p.mean for p in pts], "points": True}
            if all(p.ci is not None for p in pts) and len(pts) > 1:  # a band only where every size has one
                entry["lo"] = [p.ci[0] for p in pts if p.ci is not None]
                entry["hi"] = [p.ci[1] for p in pts if p.ci is not None]
            lines.append(entry)
    return {"xLabel": view.x_label, "metric": view.metric, "lines": lines}


W, H = 420, 300
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 12, 44


def _scale(values: list[float], lo_px: float, hi_px: float) -> tuple[list[float], float, float]:
    lo, hi = min(values), max(values)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.06
    lo, hi = lo - pad, hi + pad
    return [lo_px + (v - lo) / (hi - lo) * (hi_px - lo_px) for v in values], lo, hi


def scatter(pair: AcrossRuns) -> dict[str, Any] | None:
    """One circle per run (final proxy across, final downstream up), coloured by condition, with the
    axes' end values; None below two runs."""
    if pair.n < 2:
        return None
    xs, x_lo, x_hi = _scale([p.proxy for p in pair.points], LEFT, W - RIGHT)
    ys, y_lo, y_hi = _scale([p.downstream for p in pair.points], H - BOTTOM, TOP)
    groups = list(dict.fromkeys(p.group or "—" for p in pair.points))
    colour = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
    points = [
        {
            "x": round(x, 1),
            "y": round(y, 1),
            "colour": colour[p.group or "—"],
            "title": f"{p.run_id}: {pair.proxy} {num(p.proxy)}, {pair.downstream} {num(p.downstream)}",
        }
        for p, x, y in zip(pair.points, xs, ys, strict=True)
    ]
    # the axes' ends, written inside the frame's corners (first: left / bottom, last: right / top)
    ticks_x = [(LEFT, num(x_lo)), (W - RIGHT, num(x_hi))]
    ticks_y = [(H - BOTTOM, num(y_lo)), (TOP + 9, num(y_hi))]
    return {
        "width": W,
        "height": H,
        "plot": {"left": LEFT, "right": W - RIGHT, "top": TOP, "bottom": H - BOTTOM},
        "points": points,
        "ticks_x": ticks_x,
        "ticks_y": ticks_y,
        "legend": [{"label": g, "colour": colour[g]} for g in groups],
    }
