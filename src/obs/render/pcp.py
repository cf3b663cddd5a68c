"""Layout of the sweeps page's parallel-coordinates chart, drawn as inline SVG by a template.

No matplotlib: the chart is lines and text, and as real SVG text in the page its labels stay crisp,
selectable, readable by a screen reader and measurable by the browser tests. Labels are set in the
site's monospace font, whose advance width is exactly 0.6 em, so their width is known here and every
label is cut to the room it has: axis titles alternate between two rows (each gets twice the axis
spacing), tick labels sit right of their axis and end before the next one, and ticks closer than a
line height are thinned. Nothing can overlap, whatever the keys and the number of runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from obs.analysis.sweeps import Sweep, SweepAxis, SweepRun, tick_text, value_text

TITLE_PX = 11
TICK_PX = 10
CHAR_EM = 0.6  # advance width of the monospace font, in em
TARGET_WIDTH = 960
MIN_SPACING = 104
LEFT = 24
RIGHT = 78
TITLE_ROWS = (15, 33)  # baselines of the two rows of axis titles
TOP = 54  # top of the axes
PLOT_H = 250
NA_GAP = 22  # the "n/a" slot below each axis, for runs without a value
MIN_TICK_GAP = 14  # px between tick label baselines
LEGEND_W = 200

# viridis from 0.55 down to 0: every line at least 3:1 against the white chart (the lighter greens and
# yellows vanish on white); the best runs get the dark end
STOPS = ["#1f9e89", "#2a788e", "#414487", "#440154"]
NO_VALUE = "#6b7280"


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return int(hex_color[1:3], 16), int(hex_color[3:5], 16), int(hex_color[5:7], 16)


def shade_color(shade: float | None) -> str:
    """A colour along the palette: 0 = worst (teal), 1 = best (dark purple)."""
    if shade is None:
        return NO_VALUE
    t = min(1.0, max(0.0, shade)) * (len(STOPS) - 1)
    i = min(int(t), len(STOPS) - 2)
    f = t - i
    a, b = _rgb(STOPS[i]), _rgb(STOPS[i + 1])
    r, g, bl = (round(a[k] + (b[k] - a[k]) * f) for k in range(3))
    return f"#{r:02x}{g:02x}{bl:02x}"


def fit_text(text: str, width_px: float, px: int) -> str:
    """`text` cut (with …) to what fits in `width_px` at `px` in the monospace font."""
    room = int(width_px / (CHAR_EM * px) + 1e-9)
    if len(text) <= room:
        return text
    if room <= 1:
        return "…" if room == 1 else ""
    return text[: room - 1] + "…"


def fit_tail(text: str, width_px: float, px: int) -> str:
    """`text` cut from the front (…v1.4-remix): the end of a category name is usually what differs."""
    room = int(width_px / (CHAR_EM * px) + 1e-9)
    if len(text) <= room:
        return text
    if room <= 1:
        return "…" if room == 1 else ""
    return "…" + text[-(room - 1) :]


def common_prefix(texts: list[str]) -> str:
    """The shared start of several category names, cut back to a separator (`scene-corpus-`)."""
    if len(texts) < 2:
        return ""
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    prefix = first[:n]
    cut = max(prefix.rfind(c) for c in "-_./: ")
    return prefix[: cut + 1] if cut >= 3 else ""


def fit_key(key: str, width_px: float, px: int) -> str:
    """A dotted key in the room it has: whole, else its last segments (`train.lr`, `lr`), else cut."""
    room = int(width_px / (CHAR_EM * px) + 1e-9)
    if len(key) <= room:
        return key
    parts = key.split(".")
    for i in range(1, len(parts)):
        tail = "…" + ".".join(parts[i:])
        if len(tail) <= room:
            return tail
    return fit_text(parts[-1], width_px, px)


@dataclass
class Label:
    x: float
    y: float
    text: str
    full: str
    anchor: str = "start"
    bold: bool = False


@dataclass
class AxisLayout:
    x: float
    title: Label
    ticks: list[Label]
    outcome: bool
    has_na: bool
    na: Label | None
    direction: str  # "↑ better" / "↓ better" / ""


@dataclass
class LineLayout:
    run_id: str
    href: str
    points: str
    color: str
    highlighted: bool
    rank: int | None
    tooltip: str


@dataclass
class PcpLayout:
    width: int
    height: int
    top: int
    bottom: int
    axes: list[AxisLayout]
    faded: list[LineLayout]
    strong: list[LineLayout]
    faded_opacity: float
    legend_y: int
    legend_stops: list[tuple[float, str]]
    legend_lo: Label | None
    legend_hi: Label | None
    legend_text: Label | None
    labels: list[Label] = field(default_factory=list)


def _value_text(axis: SweepAxis, value: object) -> str:
    if value is None:
        return "n/a"
    if axis.kind == "numeric" and isinstance(value, float):
        return tick_text(value)
    return value_text(value)


def layout(sweep: Sweep, run_href: dict[str, str]) -> PcpLayout:
    """Pixel positions of everything in the chart (see the module doc for the no-overlap rules)."""
    n = len(sweep.axes)
    spacing = max(MIN_SPACING, (TARGET_WIDTH - LEFT - RIGHT) / max(1, n - 1))
    frame = _Frame(
        xs=[LEFT + i * spacing for i in range(n)],
        spacing=spacing,
        width=int(LEFT + spacing * max(0, n - 1) + RIGHT),
        bottom=TOP + PLOT_H,
    )
    axes = [_axis_layout(sweep, i, axis, frame) for i, axis in enumerate(sweep.axes)]
    faded: list[LineLayout] = []
    strong: list[LineLayout] = []
    for run in sweep.runs:
        line = _line_layout(sweep, run, run_href, frame)
        (strong if run.highlighted else faded).append(line)
    # the best run is drawn last, so it is on top
    strong.sort(key=lambda line: -(line.rank or 0))
    legend_y = frame.na_y + 28
    stops = [(k / (len(STOPS) - 1), STOPS[k]) for k in range(len(STOPS))]
    lo_label, hi_label, legend_text = _legend(sweep, legend_y, frame.width, len(strong))
    height = legend_y + 32
    # the rest are thin but opaque (a faded line under 3:1 could not be read); the best stand out by width
    faded_opacity = 1.0
    return PcpLayout(
        frame.width,
        height,
        TOP,
        frame.bottom,
        axes,
        faded,
        strong,
        faded_opacity,
        legend_y,
        stops,
        lo_label,
        hi_label,
        legend_text,
    )


@dataclass(frozen=True)
class _Frame:
    """Where the axes stand: their x positions, the spacing between them, the chart's width and the
    bottom of the plot (the n/a row sits below it)."""

    xs: list[float]
    spacing: float
    width: int
    bottom: int

    @property
    def na_y(self) -> int:
        return self.bottom + NA_GAP

    def y_of(self, pos: float | None) -> float:
        return self.na_y if pos is None else self.bottom - pos * PLOT_H


def _axis_layout(sweep: Sweep, i: int, axis: SweepAxis, frame: _Frame) -> AxisLayout:
    """One axis: its title (alternating rows, kept between its neighbours), ticks and n/a mark."""
    xs, n, gap = frame.xs, len(frame.xs), 10.0
    x = xs[i]
    left = (xs[i - 2] + x) / 2 + gap / 2 if i >= 2 else 2.0
    right = (x + xs[i + 2]) / 2 - gap / 2 if i + 2 < n else frame.width - 2.0
    text = fit_key(axis.key, right - left, TITLE_PX)
    w = len(text) * CHAR_EM * TITLE_PX
    start = min(max(x - w / 2, left), right - w)
    title = Label(round(start, 1), TITLE_ROWS[i % 2], text, axis.key, "start", axis.role == "outcome")
    room = (frame.spacing - 12) if i + 1 < n else (RIGHT - 8)
    any_na = any(r.positions[i] is None for r in sweep.runs)
    na = Label(round(x + 5, 1), frame.na_y, fit_text("n/a", room, TICK_PX), "no value") if any_na else None
    direction = ""
    if axis.role == "outcome" and axis.higher_is_better is not None:
        direction = "higher is better" if axis.higher_is_better else "lower is better"
    ticks = _tick_labels(axis, x, room, frame)
    return AxisLayout(round(x, 1), title, ticks, axis.role == "outcome", any_na, na, direction)


def _tick_labels(axis: SweepAxis, x: float, room: float, frame: _Frame) -> list[Label]:
    """An axis' tick labels, bottom to top, skipping any closer than MIN_TICK_GAP to the one below."""
    ticks: list[Label] = []
    last_y: float | None = None
    shared = common_prefix(axis.categories) if axis.kind == "categorical" else ""
    for tick in sorted(axis.ticks, key=lambda t: t.pos):
        y = frame.y_of(tick.pos)
        if last_y is not None and last_y - y < MIN_TICK_GAP:
            continue
        if axis.kind == "categorical":
            shown = "…" + tick.text[len(shared) :] if shared and len(tick.text) > len(shared) else tick.text
            text = fit_tail(shown, room, TICK_PX)
        else:
            text = fit_text(tick.text, room, TICK_PX)
        ticks.append(Label(round(x + 5, 1), round(y, 1), text, tick.text))
        last_y = y
    return ticks


def _line_layout(sweep: Sweep, run: SweepRun, run_href: dict[str, str], frame: _Frame) -> LineLayout:
    """One run's polyline and its description."""
    pts = " ".join(f"{frame.xs[i]:.1f},{frame.y_of(p):.1f}" for i, p in enumerate(run.positions))
    rid = run.summary.id
    parts = [f"{a.key} = {_value_text(a, v)}" for a, v in zip(sweep.axes, run.values, strict=True)]
    rank = f"#{run.rank} " if run.rank else ""
    return LineLayout(
        rid,
        run_href.get(rid, ""),
        pts,
        shade_color(run.shade),
        run.highlighted,
        run.rank,
        f"{rank}{rid}: " + "; ".join(parts),
    )


def _legend(
    sweep: Sweep, legend_y: float, width: int, n_strong: int
) -> tuple[Label | None, Label | None, Label | None]:
    """The colour legend's ends (worst, best) and its sentence, when the runs are coloured by a metric."""
    colors = [r.color_value for r in sweep.runs if r.color_value is not None]
    if not (colors and sweep.color_metric):
        return None, None, None
    worst, best = (min(colors), max(colors)) if sweep.higher_is_better else (max(colors), min(colors))
    lo_label = Label(LEFT, legend_y + 22, fit_text(tick_text(worst), LEGEND_W / 2 - 6, TICK_PX), "worst")
    hi_label = Label(
        LEFT + LEGEND_W, legend_y + 22, fit_text(tick_text(best), LEGEND_W / 2 - 6, TICK_PX), "best", "end"
    )
    x = LEFT + LEGEND_W + 14
    words = f"colour: {sweep.color_metric}, darker is better; the best {n_strong} drawn strong"
    legend_text = Label(x, legend_y + 9, fit_text(words, width - x - 4, TICK_PX), words)
    return lo_label, hi_label, legend_text
