"""Sweeps: which settings go with good outcomes, across many runs at once (parallel coordinates).

Each run is a line across axes: the config keys that vary in its group (numeric or categorical,
log scale when the values span decades) and the outcome metrics. This module decides the groups,
the axes and each run's position on each axis (0 = bottom, 1 = top, None = missing); drawing is
`obs.render.pcp`. Axes are chosen automatically from the keys that really vary (a key that only
restates another, like a condition name that mirrors a config value, is folded into the first),
or named in obs.yaml.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from obs.analysis.importance import Importance, importance
from obs.analysis.ranking import rank_groups
from obs.analysis.trends import metric_value
from obs.numbers import plural
from obs.sitemodel import RunSummary

RUN_KEYS = ("run.arm", "run.condition", "run.spec", "run.campaign", "run.primary_axis")
LOG_SPAN = 100.0  # a positive axis spanning this factor (two decades) ...
MAX_TICKS = 12  # per axis, whatever the span of its values
LOG_BUNCHED = 0.3  # ... whose distinct values bunch up (this share in the bottom tenth) is drawn on a log scale
MIN_PRESENT = 0.5  # an automatic axis must be set in at least this share of the group's runs


def run_value(summary: RunSummary, key: str) -> Any:
    """What a run has for an axis key: `run.<facet>`, `rate.<check>`, `final.<metric>`, a metric name
    (headline / rate / final value) or a flattened field (`config.train.lr`). None when absent."""
    if key.startswith("run."):
        value = summary.value_of(key[4:])
        return None if value in ("", [], {}, ()) else value
    if key.startswith("rate."):
        return summary.rates.get(key[5:])
    if key.startswith("final."):
        return summary.finals.get(key[6:])
    if key in summary.fields:
        return summary.fields[key]
    return metric_value(summary, key)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _number(v: Any) -> float | None:
    return float(v) if _is_number(v) else None


def value_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value_text(x) for x in v) + "]"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return str(v)


@dataclass
class Tick:
    pos: float  # 0..1 from the bottom of the axis
    text: str


@dataclass
class SweepAxis:
    key: str
    role: str  # setting | outcome
    kind: str  # numeric | categorical
    log: bool = False
    lo: float = 0.0
    hi: float = 1.0
    categories: list[str] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    higher_is_better: bool | None = None  # outcome axes only
    also: list[str] = field(default_factory=list)  # keys folded into this one (same grouping of runs)

    @property
    def label(self) -> str:
        return self.key

    def position(self, value: Any) -> float | None:
        """Where a value sits on this axis (0 bottom .. 1 top); None when missing or not on the axis."""
        if value is None:
            return None
        if self.kind == "categorical":
            text = value_text(value)
            if text not in self.categories:
                return None
            n = len(self.categories)
            return 0.5 if n == 1 else self.categories.index(text) / (n - 1)
        if not _is_number(value) or not math.isfinite(value):
            return None
        x = float(value)
        if self.log:
            if x <= 0:
                return None
            lo, hi, x = math.log10(self.lo), math.log10(self.hi), math.log10(x)
        else:
            lo, hi = self.lo, self.hi
        # halved first: hi - lo overflows for values near ±1.8e308
        return 0.5 if hi == lo else min(1.0, max(0.0, (x / 2 - lo / 2) / (hi / 2 - lo / 2)))


@dataclass
class SweepRun:
    summary: RunSummary
    values: list[Any]  # per axis, raw
    positions: list[float | None]  # per axis, 0..1
    color_value: float | None
    shade: float | None  # 0 (worst) .. 1 (best) along the colour metric
    rank: int | None  # 1 = best by the colour metric
    highlighted: bool


@dataclass
class Sweep:
    name: str
    slug: str
    color_metric: str | None
    higher_is_better: bool
    axes: list[SweepAxis]
    runs: list[SweepRun]
    notes: list[str] = field(default_factory=list)
    importance: Importance | None = None  # every varying setting against the colour metric, over all runs

    @property
    def highlighted(self) -> list[SweepRun]:
        return sorted((r for r in self.runs if r.highlighted), key=lambda r: r.rank or 0)

    @property
    def table_rows(self) -> list[SweepRun]:
        """Runs best first; runs without a value of the colour metric last, by id."""
        return sorted(self.runs, key=lambda r: (r.rank is None, r.rank or 0, r.summary.id))


def nice_step(span: float, target: int = 5) -> float:
    """A 1/2/2.5/5 x 10^k step giving about `target` intervals over `span`."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(1, target)
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _decimals(resolution: float) -> int:
    """The fewest decimals that write `resolution` exactly: 0.25 -> 2, 5 -> 0, 2.5e-6 -> 7."""
    for d in range(0, 16):
        scaled = resolution * 10.0**d
        if abs(scaled - round(scaled)) <= 1e-6 * max(1.0, abs(scaled)):
            return d
    return 16


def tick_text(x: float, resolution: float | None = None) -> str:
    """A tick label. Without `resolution`: short (0.0003 -> 3e-4, 12000 -> 12k, 0.25 -> 0.25).

    With `resolution` (the spacing of the ticks the label sits among): exact to that spacing, so
    labels of different ticks never read the same (0.00101 and 0.00102 at 1e-5 -> 1.01e-3, 1.02e-3;
    rounding both to one digit would write 1e-3 twice).
    """
    a = abs(x)
    if a == 0:
        return "0"
    if not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("∞" if x > 0 else "−∞")
    if a >= 1e9:  # powers of ten past millions: "1.2e12", never "1200000M" (or "infM" near 1.8e308)
        power = math.floor(math.log10(a))
        scale = 10.0**power
        if resolution is None or not resolution > 0:
            return f"{x / scale:.3g}e{power}"
        return f"{x / scale:.{_decimals(resolution / scale)}f}e{power}"
    if resolution is None or not resolution > 0:
        if a >= 1e6:
            return f"{x / 1e6:.3g}M"
        if a >= 1e4:
            return f"{x / 1e3:.3g}k"
        if a < 1e-2:
            mant, exp = f"{x:.1e}".split("e")
            mant = mant.rstrip("0").rstrip(".")
            return f"{mant}e{int(exp)}"
        return f"{x:.4g}"
    if a >= 1e6:
        return f"{x / 1e6:.{_decimals(resolution / 1e6)}f}M"
    if a >= 1e4:
        return f"{x / 1e3:.{_decimals(resolution / 1e3)}f}k"
    if a < 1e-2:
        power = math.floor(math.log10(a))
        scale = 10.0**power
        return f"{x / scale:.{_decimals(resolution / scale)}f}e{power}"
    return f"{x:.{_decimals(resolution)}f}"


def distinct_labels(values: Sequence[float], resolution: float) -> list[str]:
    """Labels of the given values, each exact to `resolution` or finer: the finest needed for no
    two different values to read the same."""
    for _ in range(8):
        texts = [tick_text(v, resolution) for v in values]
        if len(set(texts)) == len(set(values)):
            return texts
        resolution /= 10
    return [f"{v:.12g}" for v in values]


def wants_log(values: Sequence[float]) -> bool:
    """Log scale when the values span decades and a linear axis would squash them at the bottom
    (learning rates 1e-5..1e-2); not for values spread evenly over a wide range (warmup 0..2000)."""
    lo, hi = min(values), max(values)
    if lo <= 0 or hi / lo < LOG_SPAN:
        return False
    distinct = sorted(set(values))
    bottom = sum(1 for v in distinct if v <= lo + 0.1 * (hi - lo))
    return bottom / len(distinct) >= LOG_BUNCHED


def numeric_axis(key: str, role: str, values: Sequence[float]) -> SweepAxis:
    lo, hi = min(values), max(values)
    log = wants_log(values)
    axis = SweepAxis(key, role, "numeric", log, lo, hi)
    at: list[float] = []  # the tick values
    resolution: float | None = None  # their spacing (a linear axis)
    if log:
        e_lo, e_hi = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        stride = max(1, math.ceil((e_hi - e_lo) / MAX_TICKS))  # 5e-324 .. 1e308: not 600 ticks
        for e in range(e_lo, e_hi + 1, stride):
            for m in (1,) if e_hi - e_lo > 2 else (1, 3):
                x = m * 10.0**e
                if lo * (1 - 1e-9) <= x <= hi * (1 + 1e-9):
                    at.append(x)
    elif hi > lo:
        step = nice_step(hi / 2 - lo / 2, 2)  # halved: hi - lo overflows near ±1.8e308
        if all(float(v).is_integer() for v in values):
            step = max(1.0, step)  # epochs 3 and 4: no 3.25 between them
        resolution = step
        start = math.ceil(lo / step - 1e-9) * step
        # by index, not by adding: near 1e20 a step of 5,000 is lost in rounding and `x += step` never ends
        for i in range(MAX_TICKS + 1):
            x = start + i * step
            if x > hi + step * 1e-9:
                break
            at.append(round(x, 12))
    if hi <= lo:
        axis.ticks = [Tick(0.5, tick_text(lo))]
        return axis
    # always label both ends: the reader needs the range, not just round numbers inside it
    pos = {v: axis.position(v) or 0.0 for v in [*at, lo, hi]}
    ends = [e for e in (lo, hi) if all(abs(pos[t] - pos[e]) > 0.08 for t in at)]
    if resolution is None:  # log ticks (1, 3 × 10^k): short labels
        texts = [tick_text(v) for v in [*at, *ends]]
    else:  # grid ticks exact to the grid; the ends are data values, written a digit finer
        texts = [tick_text(v, resolution) for v in at] + [tick_text(v, resolution / 10) for v in ends]
    values = [*at, *ends]
    if len(set(texts)) < len(set(values)):  # still alike: finer until no two values read the same
        finest = resolution / 10 if resolution else min(abs(v) for v in values if v) / 100
        texts = distinct_labels(values, finest)
    axis.ticks = sorted((Tick(pos[v], t) for v, t in zip(values, texts, strict=True)), key=lambda t: t.pos)
    return axis


def categorical_axis(key: str, role: str, values: Sequence[Any]) -> SweepAxis:
    texts = sorted({value_text(v) for v in values}, key=_natural)
    axis = SweepAxis(key, role, "categorical", categories=texts)
    axis.ticks = [Tick(axis.position(t) or 0.0, t) for t in texts]
    return axis


def _natural(text: str) -> tuple[Any, ...]:
    """Sort '2' before '10' and numbers before words."""
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text.lower())


def make_axis(key: str, role: str, values: Sequence[Any]) -> SweepAxis | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    if all(_is_number(v) for v in present):
        finite = [float(v) for v in present if math.isfinite(v)]  # inf and NaN sit on no numeric axis
        return numeric_axis(key, role, finite) if finite else categorical_axis(key, role, present)
    return categorical_axis(key, role, present)


def _partition(values: Sequence[Any]) -> tuple[int, ...]:
    """Which runs share a value: first-occurrence labels, so two keys that group runs alike compare equal."""
    seen: dict[str, int] = {}
    return tuple(seen.setdefault(repr(v), len(seen)) for v in values)


def is_seed_key(key: str) -> bool:
    """Seeds vary by design, not as a setting under study (the campaign and arms pages show their spread)."""
    leaf = key.rsplit(".", 1)[-1].lower()
    return leaf == "seed" or leaf.endswith("_seed")


def varying_keys(runs: Sequence[RunSummary], exclude: Sequence[str] = ()) -> list[tuple[str, list[str]]]:
    """Keys (flattened fields and run facets) that vary across `runs`, each with the keys folded into it.

    A key must be set in at least half the runs; seeds are left out, and so is a text key with a
    different value in every run (a commit hash, a run name: it says nothing about settings); keys
    that group the runs exactly alike are one axis (the first in key order, config before run facets).
    """
    n = len(runs)
    keys = sorted({k for r in runs for k in r.fields}) + list(RUN_KEYS)
    chosen: list[tuple[str, list[str]]] = []
    partitions: dict[tuple[int, ...], int] = {}
    for key in keys:
        if is_seed_key(key) or any(key == p or key.startswith(p + ".") for p in exclude):
            continue
        values = [run_value(r, key) for r in runs]
        present = [v for v in values if v is not None]
        if len(present) < max(2, math.ceil(MIN_PRESENT * n)):
            continue
        distinct = {repr(v) for v in present}
        if len(distinct) < 2:
            continue
        numeric = all(_is_number(v) for v in present)
        if not numeric and len(distinct) == len(present) and len(present) > 3:
            continue
        part = _partition(values)
        if part in partitions and len(distinct) < len(present):  # all-distinct values group nothing alike
            chosen[partitions[part]][1].append(key)
            continue
        partitions.setdefault(part, len(chosen))
        chosen.append((key, []))
    return chosen


def _shade(value: float | None, lo: float, hi: float, higher_is_better: bool) -> float | None:
    if value is None:
        return None
    if hi == lo:
        return 1.0
    t = (value - lo) / (hi - lo)
    return t if higher_is_better else 1.0 - t


# What computes a sweep's parameter importance: (slug, runs, keys with the keys folded into them, outcome, its
# direction) -> Importance. The pages pass one that keeps each sweep's result from build to build.
ImportanceOf = Callable[[str, Sequence[RunSummary], list[tuple[str, list[str]]], str, bool], Importance]


def sweep_importance(
    slug: str, runs: Sequence[RunSummary], keys: list[tuple[str, list[str]]], outcome: str, higher_is_better: bool
) -> Importance:
    """A sweep's parameter importance, computed (its permutation tests are most of a sweep's cost)."""
    return importance(runs, keys, outcome, higher_is_better, run_value)


def importance_inputs(
    runs: Sequence[RunSummary], keys: list[tuple[str, list[str]]], outcome: str, higher_is_better: bool
) -> list[Any]:
    """Everything `sweep_importance` reads: the keys, the outcome and each run's values of them."""
    names = [outcome, *(k for k, _ in keys)]
    return [outcome, higher_is_better, keys, [[run_value(r, k) for k in names] for r in runs]]


def build_sweep(
    name: str,
    slug: str,
    runs: Sequence[RunSummary],
    settings: Mapping[str, Any],
    higher_is_better: Callable[[str], bool],
    default_metric: str | None,
    importance_of: ImportanceOf | None = None,
) -> Sweep | None:
    """One parallel-coordinates chart over `runs`, or None when nothing varies among them.

    The steps: the outcomes drawn (the colour metric and two check rates unless `metrics` names them), the
    settings drawn (`keys`, else those that vary, at most `max_axes` axes in all), their axes, then each run
    placed on them, shaded and ranked by the colour metric."""
    notes: list[str] = []
    color = settings.get("color") or default_metric
    max_axes = int(settings.get("max_axes") or 8)
    outcome_keys = _outcome_keys(runs, settings, color, notes)
    chosen = _chosen_settings(runs, settings, outcome_keys, max(1, max_axes - len(outcome_keys)), max_axes, notes)
    if not chosen:
        return None
    axes = _axes(runs, chosen, outcome_keys, higher_is_better)
    hib = higher_is_better(color) if color else True
    out_runs = _placed_runs(runs, axes, color, hib, int(settings.get("highlight") or 5))
    imp = None
    if color:  # every setting that varies, also those past max_axes; named ones when `keys` names them
        keys = [(k, []) for k in settings["keys"]] if settings.get("keys") else varying_keys(runs, outcome_keys)
        tested = [(k, also) for k, also in keys if k != color]
        imp = (importance_of or sweep_importance)(slug, runs, tested, color, hib)
    return Sweep(name, slug, color, hib, axes, out_runs, notes, imp)


def _outcome_keys(
    runs: Sequence[RunSummary], settings: Mapping[str, Any], color: str | None, notes: list[str]
) -> list[str]:
    """The outcome axes: `metrics`, else the colour metric and the first two check rates every run has; those
    no run has are named in `notes`."""
    metrics: list[str] = list(settings.get("metrics") or [])
    if not metrics:
        metrics = [color] if color else []
        shared_rates = set.intersection(*[set(r.rates) for r in runs]) if runs else set()
        from obs.analysis.scoreboard import order_checks

        metrics += [c for c in order_checks(shared_rates) if c != color][:2]
    outcome_keys = [m for m in metrics if any(run_value(r, m) is not None for r in runs)]
    missing_metrics = [m for m in metrics if m not in outcome_keys]
    if missing_metrics:
        notes.append(f"no run here has {', '.join(missing_metrics)}")
    return outcome_keys


def _chosen_settings(
    runs: Sequence[RunSummary],
    settings: Mapping[str, Any],
    outcome_keys: list[str],
    n_settings: int,
    max_axes: int,
    notes: list[str],
) -> list[tuple[str, list[str]]]:
    """The setting axes (key, the keys that vary with it): `keys` when given, else the varying ones, at most
    `n_settings`; what is left out is named in `notes`."""
    chosen: list[tuple[str, list[str]]]
    if settings.get("keys"):
        wanted = list(settings["keys"])
        chosen = [(k, []) for k in wanted if any(run_value(r, k) is not None for r in runs)]
        absent = [k for k in wanted if k not in {c for c, _ in chosen}]
        if absent:
            notes.append(f"not set in any run of this group: {', '.join(absent)}")
    else:
        chosen = varying_keys(runs, exclude=outcome_keys)
    if len(chosen) > n_settings:
        dropped = [k for k, _ in chosen[n_settings:]]
        notes.append(
            f"{plural(len(dropped), 'more varying key')} not drawn (max_axes {max_axes}): "
            + ", ".join(dropped[:8])
            + (" …" if len(dropped) > 8 else "")
        )
        chosen = chosen[:n_settings]
    return chosen


def _axes(
    runs: Sequence[RunSummary],
    chosen: list[tuple[str, list[str]]],
    outcome_keys: list[str],
    higher_is_better: Callable[[str], bool],
) -> list[SweepAxis]:
    """The settings' axes, then the outcomes' (an axis with nothing to draw is left out)."""
    axes: list[SweepAxis] = []
    for key, also in chosen:
        axis = make_axis(key, "setting", [run_value(r, key) for r in runs])
        if axis is not None:
            axis.also = also
            axes.append(axis)
    for key in outcome_keys:
        axis = make_axis(key, "outcome", [run_value(r, key) for r in runs])
        if axis is not None:
            axis.higher_is_better = higher_is_better(key)
            axes.append(axis)
    return axes


def _placed_runs(
    runs: Sequence[RunSummary], axes: list[SweepAxis], color: str | None, hib: bool, top: int
) -> list[SweepRun]:
    """Each run's values and positions on the axes, its shade and rank by the colour metric (best first, ties by
    id), the `top` best highlighted."""
    color_values = [_number(run_value(r, color)) if color else None for r in runs]
    numeric_colors = [v for v in color_values if v is not None]
    lo, hi = (min(numeric_colors), max(numeric_colors)) if numeric_colors else (0.0, 1.0)
    order = sorted(
        (i for i, v in enumerate(color_values) if v is not None),
        key=lambda i: (-(color_values[i] or 0.0) if hib else (color_values[i] or 0.0), runs[i].id),
    )
    ranks = {i: k + 1 for k, i in enumerate(order)}
    out_runs = []
    for i, r in enumerate(runs):
        values = [run_value(r, a.key) for a in axes]
        cv = color_values[i]
        out_runs.append(
            SweepRun(
                summary=r,
                values=values,
                positions=[a.position(v) for a, v in zip(axes, values, strict=True)],
                color_value=cv,
                shade=_shade(cv, lo, hi, hib),
                rank=ranks.get(i),
                highlighted=ranks.get(i, top + 1) <= top,
            )
        )
    return out_runs


def sweep_groups(summaries: Sequence[RunSummary], group_by: str) -> list[tuple[str, list[RunSummary]]]:
    """Runs grouped for one chart each: by comparable set (default `metric`: the headline metric within one
    family, see obs.analysis.ranking, so unrelated runs that both log "loss" are never ranked together),
    spec, campaign, or all together."""
    if group_by == "all":
        return [("all runs", list(summaries))]
    groups: dict[str, list[RunSummary]] = {}
    if group_by == "metric":
        ranks = rank_groups(summaries)
        for s in summaries:
            if s.headline.metric:
                groups.setdefault(ranks[s.id].group, []).append(s)
        return sorted(groups.items())
    for s in summaries:
        label = s.value_of(group_by)
        if label:
            groups.setdefault(str(label), []).append(s)
    return sorted(groups.items())


def each_sweep(
    summaries: Sequence[RunSummary],
    settings: Mapping[str, Any],
    higher_is_better: Callable[[str], bool],
    slugify: Callable[[str], str],
    importance_of: ImportanceOf | None = None,
) -> Iterator[tuple[str, list[RunSummary], Sweep | None, str | None]]:
    """Each group's chart, one at a time (label, its runs by id, the sweep, why there is none): a caller that
    lays out pages as it goes holds one sweep, not every run's place on every chart (~2.7 KB a run at 10,000
    runs, issue 32). `importance_of` computes a sweep's parameter importance (`sweep_importance`, unless the
    caller keeps them from build to build)."""
    group_by = str(settings.get("group_by") or "metric")
    min_runs = int(settings.get("min_runs") or 3)
    for label, runs in sweep_groups(summaries, group_by):
        runs = sorted(runs, key=lambda s: s.id)
        if len(runs) < min_runs:
            yield label, runs, None, f"{label}: {plural(len(runs), 'run')} (fewer than {min_runs})"
            continue
        sweep = group_sweep(label, runs, settings, higher_is_better, slugify, importance_of)
        why = None if sweep is not None else f"{label}: no setting varies across its {len(runs)} runs"
        yield label, runs, sweep, why


def group_sweep(
    label: str,
    runs: Sequence[RunSummary],
    settings: Mapping[str, Any],
    higher_is_better: Callable[[str], bool],
    slugify: Callable[[str], str],
    importance_of: ImportanceOf | None = None,
) -> Sweep | None:
    """One group's chart (`runs` by id), coloured by the group's most common headline metric."""
    counts: dict[str, int] = {}
    for r in runs:
        m = r.headline.metric
        if m:
            counts[m] = counts.get(m, 0) + 1
    metric = max(sorted(counts), key=lambda m: counts[m]) if counts else None
    return build_sweep(label, slugify(label), runs, settings, higher_is_better, metric, importance_of)


def build_sweeps(
    summaries: Sequence[RunSummary],
    settings: Mapping[str, Any],
    higher_is_better: Callable[[str], bool],
    slugify: Callable[[str], str],
    importance_of: ImportanceOf | None = None,
) -> tuple[list[Sweep], list[str]]:
    """Every chart of the sweeps page, and what was left out and why (`each_sweep`, all held)."""
    sweeps: list[Sweep] = []
    skipped: list[str] = []
    for _, _, sweep, why in each_sweep(summaries, settings, higher_is_better, slugify, importance_of):
        if sweep is not None:
            sweeps.append(sweep)
        elif why:
            skipped.append(why)
    return sweeps, skipped
