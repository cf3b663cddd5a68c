"""Deterministic SVG figures with matplotlib's object-oriented API.

This is the only module that imports matplotlib (0.4 s to import), so nothing else pays for it
when no figure has to be drawn. Figures are built with `Figure` and the SVG canvas directly (no
pyplot global state, safe in worker processes), decimated before drawing, and saved with a fixed
hash salt and no date so the same input gives the same bytes.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, LogFormatterSciNotation, MaxNLocator, ScalarFormatter
from matplotlib.typing import RcKeyType

from obs.analysis.curves import Band, CurvePlan
from obs.analysis.reward import RewardHealth
from obs.decimate import decimate, decimate_band
from obs.model import Metrics, Series, Stage

# Figures draw whatever the logs hold: matplotlib's remarks about it (a glyph the font lacks, a log axis
# asked for a zero) are not the reader's business, and would reach a build's output as internals. The
# figure is drawn regardless; what is wrong with the input was said when it was read.
warnings.filterwarnings("ignore", category=UserWarning, module=r"matplotlib\.|obs\.render\.figures")

INK = "#1f2933"
MUTED = "#6b7280"
GRID = "#e5e7eb"
PALETTE = ["#2f5d9e", "#d9822b", "#3f8f5f", "#9b4dca", "#c2410c", "#0f766e", "#be185d", "#4b5563"]
STAGE_SHADE = "#f1f5f9"

STYLE: dict[RcKeyType, Any] = {
    "svg.hashsalt": "obs",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 8.5,
    "axes.titlesize": 9.5,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "axes.labelsize": 8.5,
    "axes.edgecolor": "#9ca3af",
    "axes.labelcolor": INK,
    "axes.linewidth": 0.8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "axes.prop_cycle": cycler(color=PALETTE),
    "grid.color": GRID,
    "grid.linewidth": 0.7,
    "xtick.color": MUTED,
    "ytick.color": MUTED,
    "text.color": INK,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "lines.linewidth": 1.4,
    "path.simplify": True,
}
WIDTH_IN = 7.6


def _new_figure(height: float) -> Figure:
    fig = Figure(figsize=(WIDTH_IN, height), dpi=96)
    FigureCanvasSVG(fig)
    return fig


_PATH_DATA = re.compile(rb'( d="[^"]*")')
_DIGITS_AFTER_FIRST_DECIMAL = re.compile(rb"(?<=\.\d)\d+")  # removed with a literal b"": no template to expand
_IMPLICIT_LINETO = re.compile(rb"\s*\n\s*L ")


def _round_path_data(svg: bytes) -> bytes:
    """Cut path coordinates to one decimal (a tenth of a point, invisible): about half the bytes.

    matplotlib writes six decimals; curve figures are mostly path data, and a site of hundreds of
    runs should stay small enough to publish and to keep in git.
    """
    return _PATH_DATA.sub(lambda m: _compact_path(_DIGITS_AFTER_FIRST_DECIMAL.sub(b"", m.group(1))), svg)


def _compact_path(d: bytes) -> bytes:
    """A polyline's repeated `L` commands are implicit after M/L in SVG path syntax: drop them."""
    if b"Q" in d or b"C" in d:  # glyph outlines: curves, left as they are
        return d
    return _IMPLICIT_LINETO.sub(b" ", d).replace(b" \n", b"")


def _literal_text(fig: Figure) -> None:
    """Titles, axis labels, annotations and legend entries are names from the input (metrics, stages,
    conditions): shown as written, never parsed as mathtext (`$\\frac{` in a metric name would stop the
    figure). Tick labels keep mathtext: a log axis writes its powers of ten with it."""
    texts = list(fig.texts)
    for ax in fig.axes:
        titles = [getattr(ax, name, None) for name in ("_left_title", "_right_title")]  # set_title(loc=...)
        texts += [*ax.texts, ax.title, *(t for t in titles if t is not None), ax.xaxis.label, ax.yaxis.label]
        legend = ax.get_legend()
        if legend is not None:
            texts += [*legend.get_texts(), legend.get_title()]
    for legend in fig.legends:
        texts += [*legend.get_texts(), legend.get_title()]
    for text in texts:
        text.set_parse_math(False)


def _save(fig: Figure) -> bytes:
    _literal_text(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return _round_path_data(buf.getvalue())


def _finite(series: Series) -> tuple[np.ndarray, np.ndarray]:
    keep = np.isfinite(series.values)
    return series.steps[keep], series.values[keep]


def _value_formatter() -> ScalarFormatter:
    """matplotlib's own formatter: it gives every label the digits that keep the ticks distinct, and
    moves a common power of ten (×10⁻⁴) or offset to the axis end instead of rounding it away."""
    formatter = ScalarFormatter(useMathText=True)
    formatter.set_powerlimits((-3, 4))
    return formatter


def _style_axes(ax: Axes, ylabel: str, log: bool = False) -> None:
    ax.set_ylabel(ylabel)
    ax.xaxis.set_major_locator(MaxNLocator(8, steps=[1, 2, 2.5, 5, 10]))
    ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # steps: 0, 2.5k, 5k, 7.5k
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(LogFormatterSciNotation())
    else:
        ax.yaxis.set_major_locator(MaxNLocator(5, steps=[1, 2, 2.5, 5, 10]))
        ax.yaxis.set_major_formatter(_value_formatter())
    ax.margins(x=0.01)


def _wants_log(values: np.ndarray) -> bool:
    positive = values[values > 0]
    with np.errstate(over="ignore"):  # 1e10 / 5e-324 is infinite: a log axis, said without a warning
        return positive.size == values.size and positive.size > 1 and positive.max() / positive.min() > 1e3


NONFINITE = "#b91c1c"
MAX_MARKERS = 200


def _plot_line(ax: Axes, series: Series, max_points: int, **kwargs: object) -> bool:
    """The series' finite points as a line; where several values shared a step, their min–max band;
    NaN and ±∞ as markers at their step (top edge for NaN and +∞, bottom for −∞), never dropped."""
    _mark_nonfinite(ax, series)
    x, y = _finite(series)
    if x.size == 0:
        return False
    _draw_spread(ax, series, max_points, kwargs.get("color"))
    x, y = decimate(x, y, max_points)
    if x.size == 1:
        ax.plot(x, y, marker="o", markersize=3, **kwargs)  # type: ignore[arg-type]
    else:
        ax.plot(x, y, **kwargs)  # type: ignore[arg-type]
    return True


def _draw_spread(ax: Axes, series: Series, max_points: int, color: object) -> None:
    if not series.aggregated or series.lo is None or series.hi is None:
        return
    ok = np.isfinite(series.lo) & np.isfinite(series.hi)
    if not ok.any():
        return
    lo, hi = series.lo[ok], series.hi[ok]
    xs, mid, half = decimate_band(series.steps[ok], (lo + hi) / 2, (hi - lo) / 2, max_points)
    ax.fill_between(
        xs, mid - half, mid + half, color=color if isinstance(color, str) else PALETTE[0], alpha=0.18, linewidth=0
    )


def _mark_nonfinite(ax: Axes, series: Series) -> None:
    bad = series.nonfinite()
    if not bad:
        return
    trans = ax.get_xaxis_transform()
    for kind, y, marker in (("nan", 1.0, "x"), ("+inf", 1.0, "^"), ("-inf", 0.0, "v")):
        xs = [
            s for s, v in bad if (math.isnan(v) if kind == "nan" else v == (math.inf if kind == "+inf" else -math.inf))
        ]
        if xs:
            xs = xs[:: max(1, len(xs) // MAX_MARKERS)]
            ax.plot(
                xs,
                [y] * len(xs),
                linestyle="none",
                marker=marker,
                markersize=5,
                color=NONFINITE,
                transform=trans,
                clip_on=False,
                zorder=4,
            )


def _draw_stages(ax: Axes, stages: Sequence[Stage], label: bool) -> None:
    if len(stages) < 2 and not (stages and label):
        return
    trans = ax.get_xaxis_transform()
    lo, hi = ax.get_xlim()
    span = float(hi - lo) or 1.0
    last_label_x: float | None = None
    level = 0
    for i, stage in enumerate(stages):
        end = stages[i + 1].start if i + 1 < len(stages) else stage.end
        if i % 2 == 1:
            ax.axvspan(stage.start, end, color=STAGE_SHADE, zorder=0, linewidth=0)
        if i > 0:
            ax.axvline(stage.start, color="#94a3b8", linewidth=0.8, linestyle="--", zorder=1)
        if label:
            # stagger the labels of stages that start close together so they never overlap
            close = last_label_x is not None and (stage.start - last_label_x) / span < 0.09
            level = (level + 1) % 2 if close else 0
            ax.text(
                stage.start,
                1.02 + 0.1 * level,
                f" {stage.name}",
                transform=trans,
                fontsize=7.5,
                color=MUTED,
                ha="left",
                va="bottom",
                clip_on=False,
            )
            last_label_x = stage.start


# Figures of the same layout are reused within a process: creating a Figure with its Axes, axis
# and tick objects is half the cost of drawing one. Every artist a run adds is removed before the
# next run draws, so the bytes do not depend on what was drawn before (a test checks it).
_TRAINING_LAYOUTS: dict[tuple[str, ...], tuple[Figure, list[Axes]]] = {}


def _training_axes(titles: tuple[str, ...]) -> tuple[Figure, list[Axes]]:
    cached = _TRAINING_LAYOUTS.get(titles)
    if cached is not None:
        fig, axes = cached
        for ax in axes:
            for artist in [*ax.lines, *ax.patches, *ax.texts, *ax.collections]:
                artist.remove()
            legend = ax.get_legend()
            if legend is not None:
                legend.remove()
            ax.set_yscale("linear")
            ax.set_xlabel("")
            ax.relim()
            ax.autoscale(enable=True)
        return fig, axes
    heights = [2.2 if title == "loss" else 1.15 for title in titles]
    total = sum(heights) + 0.75
    fig = _new_figure(total)
    grid = fig.subplots(len(titles), 1, sharex=True, gridspec_kw={"height_ratios": heights}, squeeze=False)
    fig.subplots_adjust(left=0.09, right=0.985, top=1 - 0.36 / total, bottom=0.42 / total, hspace=0.28)
    axes = [row[0] for row in grid]
    _TRAINING_LAYOUTS[titles] = (fig, axes)
    return fig, axes


def training_figure(metrics: Metrics, plan: CurvePlan, max_points: int) -> bytes:
    """Loss (with stage boundaries and overlays such as eval loss), grad norm and lr, stacked."""
    rows: list[tuple[str, list[str]]] = []
    if plan.loss:
        rows.append(("loss", [plan.loss, *plan.loss_overlays]))
    if plan.grad:
        rows.append(("grad norm", [plan.grad]))
    if plan.lr:
        rows.append(("learning rate", [plan.lr]))
    with matplotlib.rc_context(STYLE):
        fig, axes = _training_axes(tuple(title for title, _ in rows))
        for ax, (title, names) in zip(axes, rows, strict=True):
            values = np.concatenate([_finite(metrics.series[n])[1] for n in names])
            log = title == "grad norm" and _wants_log(values)
            for j, name in enumerate(names):
                _plot_line(
                    ax,
                    metrics.series[name],
                    max_points,
                    color=PALETTE[j % len(PALETTE)],
                    label=name,
                    linewidth=1.4 if j == 0 else 1.1,
                )
            _draw_stages(ax, metrics.stages, label=(ax is axes[0]))
            _style_axes(ax, title, log=log)
            if len(names) > 1:
                ax.legend(loc="upper right", ncols=min(len(names), 3))
        axes[-1].set_xlabel(_xlabel(metrics))
        return _save(fig)


def _xlabel(metrics: Metrics) -> str:
    return "step" if metrics.step_source in ("step", "global_step", "_step") else metrics.step_source


def _draw_band(ax: Axes, metrics: Metrics, band: Band, max_points: int, color: str = PALETTE[0]) -> None:
    """Mean ± std as a shaded band on `ax`, min/max as a light envelope when both are logged."""
    mean = metrics.series[band.mean]
    std = metrics.series[band.std]
    common, mi, si = np.intersect1d(mean.steps, std.steps, return_indices=True)
    m, s = mean.values[mi], std.values[si]
    keep = np.isfinite(m) & np.isfinite(s)
    x, m, s = common[keep], m[keep], s[keep]
    if band.min and band.max:
        lo, hi = metrics.series[band.min], metrics.series[band.max]
        c2, li, hi_i = np.intersect1d(lo.steps, hi.steps, return_indices=True)
        lv, hv = lo.values[li], hi.values[hi_i]
        ok = np.isfinite(lv) & np.isfinite(hv)
        if ok.any():
            xs, mid, half = decimate_band(c2[ok], (lv[ok] + hv[ok]) / 2, (hv[ok] - lv[ok]) / 2, max_points)
            ax.fill_between(xs, mid - half, mid + half, color=color, alpha=0.08, linewidth=0, label="min–max")
    if x.size:
        xs, ms, ss = decimate_band(x, m, s, max_points)
        ax.fill_between(xs, ms - ss, ms + ss, color=color, alpha=0.25, linewidth=0, label="± std")
        xl, ml = decimate(x, m, max_points)
        ax.plot(xl, ml, color=color, label="mean")


def band_figure(metrics: Metrics, band: Band, max_points: int) -> bytes:
    """Mean ± std as a shaded band, min/max as a light envelope when logged."""
    with matplotlib.rc_context(STYLE):
        fig = _new_figure(2.6)
        ax = fig.subplots()
        fig.subplots_adjust(left=0.09, right=0.985, top=0.9, bottom=0.17)
        _draw_band(ax, metrics, band, max_points)
        _draw_stages(ax, metrics.stages, label=False)
        _style_axes(ax, band.label)
        ax.set_xlabel(_xlabel(metrics))
        ax.legend(loc="best", ncols=3)
        return _save(fig)


def multi_line_figure(
    lines: Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray | None]],
    ylabel: str,
    xlabel: str = "step",
    ci: Sequence[tuple[np.ndarray, np.ndarray] | None] | None = None,
) -> bytes:
    """Several labelled mean lines with an optional ± band and an optional CI band each.

    Used for campaign conditions and ablation arms: `lines` is (label, x, mean, sd-or-None).
    Bands are computed by the caller with numpy (seaborn's bootstrap bands cost ~1,000x more).
    """
    with matplotlib.rc_context(STYLE):
        fig = _new_figure(3.0)
        ax = fig.subplots()
        fig.subplots_adjust(left=0.09, right=0.985, top=0.9, bottom=0.15)
        for i, (label, x, mean, sd) in enumerate(lines):
            color = PALETTE[i % len(PALETTE)]
            if sd is not None:
                ax.fill_between(x, mean - sd, mean + sd, color=color, alpha=0.08, linewidth=0)
            band = ci[i] if ci is not None and i < len(ci) else None
            if band is not None:
                ax.fill_between(x, band[0], band[1], color=color, alpha=0.22, linewidth=0)
            ax.plot(x, mean, color=color, label=label)
        _style_axes(ax, ylabel)
        ax.set_xlabel(xlabel)
        ax.legend(loc="best", ncols=min(3, max(1, len(lines))))
        return _save(fig)


ONSET = "#b91c1c"


def reward_health_figure(metrics: Metrics, health: RewardHealth, max_points: int) -> bytes:
    """The RL health panels, stacked on one step axis, with the collapse onset marked on each.

    Reward mean ± std (min–max envelope), the fraction of zero-variance groups against its
    threshold, the advantage mean ± std and the reward components: a band that narrows while the
    zero-std fraction climbs is the learning signal vanishing, whatever the mean does.
    """
    panels = _reward_panels(health)
    heights = [1.9 if p == "reward" else 1.35 for p in panels]
    total = sum(heights) + 0.8
    onset = health.onset_step
    with matplotlib.rc_context(STYLE):
        fig = _new_figure(total)
        grid = fig.subplots(len(panels), 1, sharex=True, gridspec_kw={"height_ratios": heights}, squeeze=False)
        fig.subplots_adjust(left=0.09, right=0.985, top=1 - 0.4 / total, bottom=0.42 / total, hspace=0.3)
        axes = [row[0] for row in grid]
        for ax, panel in zip(axes, panels, strict=True):
            _REWARD_PANELS[panel](ax, metrics, health, max_points)
            if onset is not None:
                ax.axvline(onset, color=ONSET, linewidth=1.0, linestyle="--", zorder=3)
            _draw_stages(ax, metrics.stages, label=False)
            _style_axes(ax, panel)
            ax.legend(loc="best", ncols=4, fontsize=7.5)
        if onset is not None:
            _label_onset(axes[0], onset)
        axes[-1].set_xlabel(_xlabel(metrics))
        return _save(fig)


def _reward_panels(health: RewardHealth) -> list[str]:
    """The panels the run's reward series fill, top to bottom (the reward std alone when nothing else)."""
    panels: list[str] = []
    if health.mean is not None:
        panels.append("reward")
    if health.zero_std is not None:
        panels.append("zero-std groups")
    if health.adv_mean is not None or health.adv_std is not None:
        panels.append("advantage")
    if health.components:
        panels.append("components")
    return panels or ["reward std"]


def _reward_panel(ax: Axes, metrics: Metrics, health: RewardHealth, max_points: int) -> None:
    if health.mean is None:
        return
    if health.std is not None:
        lo = health.min.key if health.min and health.max else None
        hi = health.max.key if health.min and health.max else None
        _draw_band(ax, metrics, Band("reward", health.mean.key, health.std.key, lo, hi), max_points)
    else:
        _plot_line(ax, metrics.series[health.mean.key], max_points, color=PALETTE[0], label="mean")


def _reward_std_panel(ax: Axes, metrics: Metrics, health: RewardHealth, max_points: int) -> None:
    if health.std is not None:
        _plot_line(ax, metrics.series[health.std.key], max_points, color=PALETTE[0], label=health.std.key)


def _zero_std_panel(ax: Axes, metrics: Metrics, health: RewardHealth, max_points: int) -> None:
    if health.zero_std is None:
        return
    _plot_line(ax, metrics.series[health.zero_std.key], max_points, color=PALETTE[1], label="fraction")
    ax.axhline(health.zero_std_threshold, color=MUTED, linewidth=0.9, linestyle=":", label="threshold")
    ax.set_ylim(bottom=0)


def _advantage_panel(ax: Axes, metrics: Metrics, health: RewardHealth, max_points: int) -> None:
    if health.adv_mean is not None and health.adv_std is not None:
        band = Band("advantage", health.adv_mean.key, health.adv_std.key, None, None)
        _draw_band(ax, metrics, band, max_points, color=PALETTE[2])
        return
    only = health.adv_mean or health.adv_std
    if only is not None:
        _plot_line(ax, metrics.series[only.key], max_points, color=PALETTE[2], label=only.key)


def _components_panel(ax: Axes, metrics: Metrics, health: RewardHealth, max_points: int) -> None:
    for j, comp in enumerate(health.components):
        color = PALETTE[(j + 3) % len(PALETTE)]
        _plot_line(ax, metrics.series[comp.mean.key], max_points, color=color, label=comp.name)


_REWARD_PANELS: dict[str, Callable[[Axes, Metrics, RewardHealth, int], None]] = {
    "reward": _reward_panel,
    "reward std": _reward_std_panel,
    "zero-std groups": _zero_std_panel,
    "advantage": _advantage_panel,
    "components": _components_panel,
}


def _label_onset(ax: Axes, onset: float) -> None:
    """The collapse onset's label above the top panel, on the side with room for it."""
    lo, hi = ax.get_xlim()
    right_half = onset > lo + 0.5 * (hi - lo)
    ax.text(
        onset,
        1.02,
        f"signal lost from step {onset:g} " if right_half else f" signal lost from step {onset:g}",
        transform=ax.get_xaxis_transform(),
        fontsize=7.5,
        color=ONSET,
        ha="right" if right_half else "left",
        va="bottom",
        clip_on=False,
    )
