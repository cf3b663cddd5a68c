"""The data a run's interactive charts read, and the panels its page draws.

Every run gets one data file, `runs/<slug>/curves.js`: each logged series, min/max-decimated
(every bucket's extremes and the last point kept, so spikes survive and the final value is exact),
its stage spans, its mean ± std bands and its final-window values. The run page draws it in the
browser (`assets/charts.js` with the vendored uPlot); compare.html loads the files of the runs a
reader picks to overlay them.

Why a `.js` file and not JSON: pages must work from `file://`, where `fetch()` of a local file is
refused, while a `<script src>` from the site's own folder is what the pages' policy
(`script-src 'self'`) allows, from disk and from a server alike. The file only appends one JSON
value to a list (`OBS_DATA`); JSON is valid JavaScript, and orjson escapes every string, so a
series name from a run can never become code.

No drawing here and no matplotlib: a run's page costs a few milliseconds of number formatting
instead of a ~100 ms figure, and a one-run rebuild never imports a plotting library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from obs.analysis.coupling import RunCoupling
from obs.analysis.curves import Band, CurvePlan
from obs.analysis.reward import RewardHealth
from obs.decimate import decimate, decimate_band, on_line
from obs.model import Metrics, Series
from obs.vocabulary import DURATION_TOKENS, tokens

if TYPE_CHECKING:
    from obs.analysis.metric_views import MetricView

CHART_POINTS = 1000  # per series drawn in a panel: ~1.4 px per min/max bucket at the page's width
OTHER_BUDGET = 4800  # points shared by the series only the explorer and overlays draw
OTHER_POINTS = (60, 400)  # ... each gets this many at least / at most
SIGNIFICANT = 6  # digits kept of each value: exact for what logs write, invisible on a chart
SCHEMA = "obs.curves/1"
PREFIX = b"(self.OBS_DATA=self.OBS_DATA||[]).push("
SUFFIX = b");\n"


def _value(v: float) -> float | int:
    """A value as the file stores it: 6 significant digits, whole numbers without a decimal point."""
    r = float(f"{v:.{SIGNIFICANT}g}")
    return int(r) if r.is_integer() and abs(r) < 2**53 else r


def _values(y: np.ndarray) -> list[float | int]:
    """`_value` of every element, vectorised (see `_rounded`)."""
    return _listed(_rounded(y))


def _listed(rounded: np.ndarray) -> list[float | int]:
    """Rounded values as JSON writes them: whole numbers without a decimal point."""
    return [int(v) if v.is_integer() and abs(v) < 2**53 else v for v in rounded.tolist()]


def _rounded(y: np.ndarray) -> np.ndarray:
    """Each value rounded to 6 significant digits as an integer scaled by an exact power of ten, so the
    double is the one nearest the decimal and JSON writes it back as that short decimal (0.15234, not
    0.15234000000000001)."""
    y = np.asarray(y, dtype=np.float64)
    out = y.copy()
    nz = np.isfinite(y) & (y != 0)
    if nz.any():
        digits = SIGNIFICANT - 1 - np.floor(np.log10(np.abs(y[nz]))).astype(np.int64)
        vals = y[nz]
        up = digits >= 0
        scale = 10.0 ** np.abs(digits)
        vals = np.where(up, np.round(vals * scale) / scale, np.round(vals / scale) * scale)
        out[nz] = vals
    return out


def _steps(x: np.ndarray) -> dict[str, list[Any]]:
    """Whole steps as differences from the previous one ("dx": small numbers, a third of the bytes);
    any other x (epochs, seconds) as values."""
    if x.size and np.all(np.mod(x, 1) == 0) and float(np.max(np.abs(x))) < 2**53:
        ints = x.astype(np.int64)
        return {"dx": np.diff(ints, prepend=0).tolist()}
    return {"x": _values(x)}


def encode(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """x and y as stored: y rounded, then the points on the line between their neighbours dropped
    (`decimate.on_line`: the same line drawn, a constant series is two points)."""
    yr = _rounded(y)
    keep = ~on_line(np.asarray(x, dtype=np.float64), yr)
    return {**_steps(np.asarray(x)[keep]), "y": _listed(yr[keep])}


def encode_edges(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> dict[str, Any]:
    """A band's lower and upper edges as stored, a point dropped only where it is on the line in both."""
    lo_r, hi_r = _rounded(lo), _rounded(hi)
    keep = ~on_line(np.asarray(x, dtype=np.float64), lo_r, hi_r)
    return {**_steps(np.asarray(x)[keep]), "lo": _listed(lo_r[keep]), "hi": _listed(hi_r[keep])}


def encode_series(series: Series, points: int) -> dict[str, Any] | None:
    """A series' finite points, decimated to about `points`, with its true point count."""
    keep = np.isfinite(series.values)
    if not keep.any():
        return None
    x, y = decimate(series.steps[keep], series.values[keep], points)
    out = encode(x, y)
    out["n"] = int(series.count)
    dropped = int(keep.size - np.count_nonzero(keep))
    if dropped:
        out["nonfinite"] = dropped
    return out


def band_key(band: Band) -> str:
    return f"{band.mean}±{band.std}"


def envelope_key(band: Band) -> str:
    return f"{band.min}…{band.max}"


def _joined(metrics: Metrics, a: str, b: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Two series on the steps both logged with finite values."""
    sa, sb = metrics.series.get(a), metrics.series.get(b)
    if sa is None or sb is None:
        return None
    common, ia, ib = np.intersect1d(sa.steps, sb.steps, return_indices=True)
    va, vb = sa.values[ia], sb.values[ib]
    ok = np.isfinite(va) & np.isfinite(vb)
    if not ok.any():
        return None
    return common[ok], va[ok], vb[ok]


def encode_band(metrics: Metrics, band: Band, points: int) -> dict[str, dict[str, Any]]:
    """mean ± std (and the min–max envelope when both are logged) as lower and upper edges."""
    out: dict[str, dict[str, Any]] = {}
    ms = _joined(metrics, band.mean, band.std)
    if ms is not None:
        x, m, s = ms
        xs, mid, half = decimate_band(x, m, s, points)
        out[band_key(band)] = encode_edges(xs, mid - half, mid + half)
    if band.min and band.max:
        env = _joined(metrics, band.min, band.max)
        if env is not None:
            x, lo, hi = env
            xs, mid, half = decimate_band(x, (lo + hi) / 2, (hi - lo) / 2, points)
            out[envelope_key(band)] = encode_edges(xs, mid - half, mid + half)
    return out


# ------------------------------------------------------------------------------------------ panels


def reward_bands(health: RewardHealth) -> list[Band]:
    out = []
    if health.mean is not None and health.std is not None:
        lo = health.min.key if health.min and health.max else None
        hi = health.max.key if health.min and health.max else None
        out.append(Band("reward", health.mean.key, health.std.key, lo, hi))
    if health.adv_mean is not None and health.adv_std is not None:
        out.append(Band("advantage", health.adv_mean.key, health.adv_std.key))
    return out


def reward_keys(health: RewardHealth | None) -> set[str]:
    """Series drawn in the reward-health panels (their generic band panels would repeat them)."""
    if health is None:
        return set()
    stats = [
        health.mean,
        health.std,
        health.min,
        health.max,
        health.zero_std,
        health.adv_mean,
        health.adv_std,
        *(c.mean for c in health.components),
    ]
    return {s.key for s in stats if s is not None}


def _band_panel(title: str, band: Band, metrics: Metrics) -> dict[str, Any]:
    bands: list[dict[str, Any]] = [{"key": band_key(band), "label": "± std", "series": band.mean}]
    if band.min and band.max and band.min in metrics.series and band.max in metrics.series:
        bands.insert(0, {"key": envelope_key(band), "label": "min–max", "series": band.mean, "faint": True})
    return {"title": title, "lines": [band.mean], "bands": bands}


def training_panels(plan: CurvePlan, metrics: Metrics) -> list[dict[str, Any]]:
    """Loss (with stages and loss-like overlays), grad norm (log when it spans decades), lr."""
    panels: list[dict[str, Any]] = []
    if plan.loss:
        panels.append({"title": "loss", "lines": [plan.loss, *plan.loss_overlays], "stages": True, "tall": True})
    if plan.grad:
        panels.append({"title": "grad norm", "lines": [plan.grad], "log": _wants_log(metrics.series[plan.grad])})
    if plan.lr:
        panels.append({"title": "learning rate", "lines": [plan.lr]})
    return panels


def band_panels(plan: CurvePlan, metrics: Metrics, health: RewardHealth | None) -> list[dict[str, Any]]:
    in_reward = reward_keys(health)
    return [_band_panel(b.label, b, metrics) for b in plan.bands if b.mean not in in_reward]


def reward_panels(health: RewardHealth, metrics: Metrics) -> list[dict[str, Any]]:
    """The RL health panels on one step axis, the collapse onset marked on each."""
    panels: list[dict[str, Any]] = []
    bands = {b.label: b for b in reward_bands(health)}
    if "reward" in bands:
        panels.append(_band_panel("reward", bands["reward"], metrics))
    elif health.mean is not None:
        panels.append({"title": "reward", "lines": [health.mean.key]})
    elif health.std is not None:
        panels.append({"title": "reward std", "lines": [health.std.key]})
    if health.zero_std is not None:
        panels.append(
            {
                "title": "zero-std groups",
                "lines": [health.zero_std.key],
                "hlines": [{"y": health.zero_std_threshold, "label": "threshold"}],
                "ymin": 0,
                "colorOffset": 1,
            }
        )
    if "advantage" in bands:
        panels.append({**_band_panel("advantage", bands["advantage"], metrics), "colorOffset": 2})
    else:
        only = health.adv_mean or health.adv_std
        if only is not None:
            panels.append({"title": "advantage", "lines": [only.key], "colorOffset": 2})
    onset = health.onset_step
    if onset is not None:
        for p in panels:
            p["vlines"] = [{"x": onset, "label": f"signal lost from step {onset:g}"}]
    return panels


WEIGHTED_SUM = "Σ weight × component"


def weighted_name(name: str, weight: float) -> str:
    return f"{weight:g} × {name}"


def component_panels(health: RewardHealth) -> list[dict[str, Any]]:
    """Reward components as small multiples (one panel each, its own y scale), then, with declared weights,
    the weighted decomposition: each weight × component, their sum and the logged total on one panel."""
    panels: list[dict[str, Any]] = []
    for i, c in enumerate(health.components):
        title = c.name if c.weight is None else f"{c.name} (weight {c.weight:g})"
        panels.append({"title": title, "lines": [c.mean.key], "colorOffset": 3 + i})
    d = health.decomposition
    if d is not None and not d.missing and d.keys:
        # in the small multiples' order, so each component keeps its colour on every panel
        order = [c.name for c in health.components if c.name in d.weights]
        lines = [weighted_name(n, d.weights[n]) for n in order]
        lines += [WEIGHTED_SUM] + ([d.total_key] if d.total_key else [])
        panels.append({"title": "weighted decomposition", "lines": lines, "colorOffset": 3, "tall": True})
    return panels


def coupling_panels(pair: RunCoupling) -> list[dict[str, Any]]:
    """A declared (proxy, downstream) pair on one step axis, the largest diverging window marked on both."""
    marks = []
    if pair.worst is not None:
        w = pair.worst
        marks = [{"x": w.start, "label": "largest diverging window"}, {"x": w.end, "label": ""}]
    return [
        {"title": f"proxy: {pair.proxy}", "lines": [pair.proxy], "vlines": marks},
        {"title": f"downstream: {pair.downstream}", "lines": [pair.downstream], "vlines": marks, "colorOffset": 1},
    ]


def derived_series(metrics: Metrics, health: RewardHealth | None) -> dict[str, Series]:
    """Series the decomposition panel draws that the log does not hold: weight × component, and their sum at
    the steps every component was logged. The data file keeps them apart from the logged series (`derived`)."""
    d = health.decomposition if health is not None else None
    if d is None or d.missing or not d.keys:
        return {}
    out: dict[str, Series] = {}
    parts = []
    for name, weight in d.weights.items():
        series = metrics.series[d.keys[name]].finite()
        out[weighted_name(name, weight)] = Series(series.steps, weight * series.values)
        parts.append(out[weighted_name(name, weight)])
    common = parts[0].steps
    for part in parts[1:]:
        common = np.intersect1d(common, part.steps)
    total = np.zeros(common.size)
    for part in parts:
        total += part.values[np.searchsorted(part.steps, common)]
    out[WEIGHTED_SUM] = Series(common, total)
    return out


def _wants_log(series: Series) -> bool:
    values = series.values[np.isfinite(series.values)]
    positive = values[values > 0]
    return bool(positive.size == values.size and positive.size > 1 and positive.max() / positive.min() > 1e3)


# ------------------------------------------------------------------------------ other x axes

WALL_TOKENS = frozenset({"timestamp", "walltime", "wallclock", "time"})
COUNTER_TOKENS = frozenset({"tokens", "examples", "samples", "sequences", "images", "consumed", "processed"})
RATE_TOKENS = frozenset({"per", "rate", "throughput", "second", "sec", "s"})
EPOCH_SECONDS = 1e8  # a wall-clock time as seconds since 1970 is past this (1973); a duration rarely is


def x_kind(name: str, series: Series) -> str | None:
    """What a series is when a reader may put it on the x axis instead of the step: `wall` (seconds
    since 1970), `elapsed` (seconds since the run started), `epoch`, `counter` (tokens or examples
    seen), or None. Told by its name's tokens and checked on its values: finite, two points or more,
    never decreasing with the step and not constant (a throughput or a per-step count is not an axis)."""
    toks = tokens(name)
    if not toks or toks[-1] in RATE_TOKENS or RATE_TOKENS & set(toks[1:]):
        return None
    values = series.values[np.isfinite(series.values)]
    if values.size < 2 or np.any(np.diff(values) < 0) or values[-1] <= values[0]:
        return None
    if set(toks) & DURATION_TOKENS or toks[-1] == "runtime":
        return "elapsed"
    if set(toks) & WALL_TOKENS:
        return "wall" if values[0] > EPOCH_SECONDS else "elapsed"
    if toks[-1] == "epoch":
        return "epoch"
    if set(toks) & COUNTER_TOKENS:
        return "counter"
    return None


BUILT_IN_AXES = frozenset({"step", "wall", "relative", "epoch"})  # the axes' names in the pages' links (x=)


def _axis_fault(series: Series) -> str | None:
    """Why a declared counter cannot be an x axis, or None: it must be finite at two steps or more and
    never go back (a counter that restarts at a resume would give one x two places)."""
    keep = np.isfinite(series.values)
    values, steps = series.values[keep], series.steps[keep]
    if values.size < 2:
        return "has fewer than two finite values"
    back = np.flatnonzero(np.diff(values) < 0)
    if back.size:
        i = int(back[0]) + 1
        return f"goes back at step {steps[i]:g} (from {values[i - 1]:g} to {values[i]:g})"
    if values[-1] <= values[0]:
        return "never grows"
    return None


def declared_axes(metrics: Metrics, declared: Mapping[str, Sequence[str]]) -> tuple[dict[str, str], list[str]]:
    """obs.yaml's `x_axes` for one run: each axis name to the first of its series the run logged and
    that can be an axis, and a sentence for each declared axis the run logged but cannot use."""
    chosen: dict[str, str] = {}
    faults: list[str] = []
    for axis in sorted(declared):
        if axis in BUILT_IN_AXES:  # said by the runs that log one of its series
            if any(n in metrics.series for n in declared[axis]):
                faults.append(f"x_axes.{axis}: '{axis}' is an x axis obs offers itself; give the counter another name")
            continue
        for name in declared[axis]:
            series = metrics.series.get(name)
            if series is None:
                continue
            fault = _axis_fault(series)
            if fault is None:
                chosen[axis] = name
                break
            faults.append(f"x_axes.{axis}: the series '{name}' {fault}; it is not offered as an x axis")
    return chosen, faults


def x_axes(metrics: Metrics, points: int = CHART_POINTS, declared: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Per series that may be an x axis (see `x_kind`), its kind and values over the steps, keyed by
    its name; and per axis obs.yaml declares (`declared`: axis name to the run's series, from
    `declared_axes`), a counter keyed by the axis name with the series it reads (`series`), so runs
    that log tokens under different names share one axis. A series a declared axis reads is not
    offered a second time under its own name.

    A wall-clock time is stored as `start` (exact) plus seconds since it, so six significant digits
    keep a tenth of a second over a day, where 1.7e9 seconds to six digits would keep only 1000 s.
    The browser maps a point's step to the axis by linear interpolation between the kept points (a
    monotone series decimated by min/max keeps each bucket's first and last value)."""
    declared = declared or {}
    taken = set(declared.values())
    kinds: dict[str, tuple[str, str]] = {}  # key -> (kind, series)
    for name in sorted(metrics.series):
        kind = x_kind(name, metrics.series[name])
        if kind is not None and name not in taken and name not in declared:
            kinds[name] = (kind, name)
    for axis, name in declared.items():
        if name in metrics.series:
            kinds[axis] = ("counter", name)
    out: dict[str, Any] = {}
    for key in sorted(kinds):
        kind, name = kinds[key]
        series = metrics.series[name]
        keep = np.isfinite(series.values)
        steps, values = series.steps[keep], series.values[keep]
        start = float(values[0]) if kind == "wall" else 0.0
        x, y = decimate(steps, values - start, points)
        out[key] = {"kind": kind, "start": start, **encode(x, y)}
        if key in declared:
            out[key]["series"] = name
    return out


# --------------------------------------------------------------------------------------- the file


def panel_series(panels: Sequence[dict[str, Any]]) -> set[str]:
    return {name for p in panels for name in p.get("lines", [])}


def chart_data(
    metrics: Metrics,
    *,
    run_id: str,
    slug: str,
    panels: Sequence[dict[str, Any]],
    bands: Sequence[Band],
    finals: dict[str, float],
    points: int = CHART_POINTS,
    declared: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Everything the charts of one run read (see the module doc); `declared` is obs.yaml's x axes
    for this run (`declared_axes`)."""
    drawn = panel_series(panels)
    others = [n for n in sorted(metrics.series) if n not in drawn]
    other_points = max(OTHER_POINTS[0], min(OTHER_POINTS[1], OTHER_BUDGET // max(1, len(others))))
    series: dict[str, Any] = {}
    for name in sorted(metrics.series):
        encoded = encode_series(metrics.series[name], points if name in drawn else min(points, other_points))
        if encoded is not None:
            series[name] = encoded
    band_data: dict[str, Any] = {}
    for band in bands:
        band_data.update(encode_band(metrics, band, points))
    return {
        "schema": SCHEMA,
        "id": run_id,
        "slug": slug,
        "x": "step" if metrics.step_source in ("step", "global_step", "_step") else metrics.step_source,
        "series": series,
        "xaxes": x_axes(metrics, points, declared),
        "bands": band_data,
        "stages": [[st.name, _value(st.start), _value(st.end)] for st in metrics.stages],
        "finals": {k: _value(v) for k, v in sorted(finals.items()) if np.isfinite(v)},
    }


def chart_file(data: dict[str, Any]) -> bytes:
    """The data as a script that appends it to `OBS_DATA` (sorted keys: the same run, the same bytes)."""
    return PREFIX + orjson.dumps(data, option=orjson.OPT_SORT_KEYS) + SUFFIX


# ------------------------------------------------------------------ campaign and arms pages


def conditions_data(key: str, views: Sequence[MetricView]) -> dict[str, Any]:
    """Per metric, each condition's (or arm's) mean curve over seeds with its 95% CI and ± sd bands."""
    metrics: dict[str, Any] = {}
    for view in views:
        if not view.curves:
            continue
        conditions = []
        for curve in view.curves:  # each condition on its own grid: the span its seeds all cover
            entry: dict[str, Any] = {
                "name": curve.name,
                "label": curve.label,
                "x": _values(curve.grid),
                "mean": _values(curve.mean),
            }
            if curve.band is not None:
                entry["ci_lo"] = _values(curve.band[0])
                entry["ci_hi"] = _values(curve.band[1])
            if curve.sd is not None:
                entry["sd_lo"] = _values(curve.mean - curve.sd)
                entry["sd_hi"] = _values(curve.mean + curve.sd)
            conditions.append(entry)
        metrics[view.metric] = {"conditions": conditions}
    return {"schema": "obs.conditions/1", "slug": key, "metrics": metrics}
