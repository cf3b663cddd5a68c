"""Sample efficiency: a campaign's metric against how much data each run trained on, by group.

Why a view of its own: "is method B better?" often has the answer "only with little data" or "it gets
there with half the examples", which a comparison at one data size cannot show. obs.yaml's
`sample_efficiency:` names where a run's data size is (analysis only reads what it declares):

- `size_key` (a dotted key of run.yaml, `config.data.train_examples`): each run is one point, its
  final-window value of the metric at its size; the runs of a group at one size are its seeds, and
  each size gets the mean over seeds with a t interval (the unit of replication is the seed, n seeds).
- `series` (a logged counter, `examples_seen` or `tokens`): each run's metric curve is put on that
  counter's axis (the counter read at the metric's steps by linear interpolation), and a group's
  curves are averaged over seeds on the span all of them cover, with the same 95% t band as the
  campaign's curves (`campaign_view.condition_curve`).

Lines are the runs' condition, or any dotted key (`group_by: config.method`) when a campaign's
conditions are method x size. A run with no size, no final value or no seed is named, never guessed.
Pure: summaries in, numbers out.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from obs.analysis.campaign_view import ConditionCurve, condition_curve
from obs.analysis.sweeps import run_value, value_text
from obs.sitemodel import Curve, RunSummary

LEVEL = 0.95


@dataclass(frozen=True)
class SizePoint:
    """One group at one data size: the mean of its seeds' final values and its t interval (n >= 2)."""

    size: float
    n: int
    mean: float
    sd: float | None
    ci: tuple[float, float] | None
    runs: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "n": self.n,
            "mean": self.mean,
            "sd": self.sd,
            "ci": list(self.ci) if self.ci else None,
            "runs": list(self.runs),
        }


@dataclass(frozen=True)
class EfficiencyLine:
    """One group's line: points by size (`size_key`), or its mean curve over the counter (`series`)."""

    group: str
    points: list[SizePoint] = field(default_factory=list)
    curve: ConditionCurve | None = None
    seeds: int = 0  # runs drawn in the curve (series mode)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"group": self.group, "points": [p.as_dict() for p in self.points]}
        if self.curve is not None:
            out["curve_runs"] = self.seeds
            out["curve_span"] = [float(self.curve.grid[0]), float(self.curve.grid[-1])]
        return out


@dataclass(frozen=True)
class SampleEfficiency:
    metric: str
    mode: str  # "size" | "series"
    source: str  # the size key or the counter series
    x_label: str
    group_by: str
    lines: list[EfficiencyLine]
    left_out: list[str]  # one sentence per run left out, saying why
    window: int = 1  # the logged values averaged into a run's final value (the campaign's final_window)
    level: float = LEVEL

    @property
    def in_pct(self) -> bool:
        """A rate reads in percent in the table, as the campaign's statistics beside it (campaign.reads_in_pp): its
        name says so and every run's value is a proportion."""
        from obs.analysis.campaign import reads_in_pp

        values = [v for line in self.lines for p in line.points for v in (p.mean, *(p.ci or ()))]
        values += [float(v) for line in self.lines if line.curve is not None for v in line.curve.mean]
        return reads_in_pp(self.metric, values)

    @property
    def drawn(self) -> bool:
        return any(len(line.points) >= 1 or line.curve is not None for line in self.lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "mode": self.mode,
            "source": self.source,
            "x_label": self.x_label,
            "group_by": self.group_by,
            "level": self.level,
            "unit": "seed",
            "lines": [line.as_dict() for line in self.lines],
            "left_out": self.left_out,
            "final_window": self.window,
        }


def t_interval(values: Sequence[float], level: float = LEVEL) -> tuple[float, float | None, tuple[float, float] | None]:
    """Mean, sd and the t interval of the mean over independent replicates (sd and interval None below two)."""
    x = np.asarray(values, dtype=np.float64)
    mean = float(x.mean())
    if x.size < 2:
        return mean, None, None
    from scipy import special  # stdtrit: scipy.stats.t.ppf without its import

    sd = float(x.std(ddof=1))
    half = float(special.stdtrit(x.size - 1, 0.5 + level / 2)) * sd / math.sqrt(x.size)
    return mean, sd, (mean - half, mean + half)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _final(s: RunSummary, metric: str, primary: str | None) -> float | None:
    if metric == primary and s.campaign_final is not None:
        return _number(s.campaign_final.mean)
    return _number(s.finals.get(metric))


def sample_efficiency(
    declared: Mapping[str, Any],
    runs: Sequence[RunSummary],
    primary_metric: str | None,
    final_window: int = 1,
    order: Sequence[str] = (),
) -> SampleEfficiency | None:
    """The view a campaign's page shows; None when no metric is known or no run has the declared size (or
    counter): obs.yaml's declaration is the site's, and a campaign that is no scaling study shows nothing."""
    metric = declared.get("metric") or primary_metric
    if not metric:
        return None
    group_by = str(declared.get("group_by") or "run.condition")
    size_key, series = declared.get("size_key"), declared.get("series")
    source = str(size_key or series)
    label = str(declared.get("label") or source.rsplit(".", 1)[-1])
    if not any(_has_source(s, size_key, series) for s in runs):  # a site-wide declaration these runs have nothing of
        return None
    left_out: list[str] = []
    groups: dict[str, list[RunSummary]] = {}
    for s in sorted(runs, key=lambda r: r.id):
        group = run_value(s, group_by)
        if group is None:
            left_out.append(f"{s.id}: no {group_by}")
            continue
        groups.setdefault(value_text(group), []).append(s)
    rank = {name: i for i, name in enumerate(order)}  # the campaign's condition order, else by name
    groups = dict(sorted(groups.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
    if size_key:
        lines = [
            _size_line(g, members, str(size_key), metric, primary_metric, left_out) for g, members in groups.items()
        ]
        mode = "size"
    else:
        lines = [_series_line(g, members, str(series), metric, left_out) for g, members in groups.items()]
        mode = "series"
    return SampleEfficiency(metric, mode, source, label, group_by, lines, left_out, final_window)


def outside_campaigns(
    declared: Mapping[str, Any], runs: Sequence[RunSummary], seed_keys: Sequence[str], final_window: int
) -> SampleEfficiency | None:
    """The same view of the runs that form no campaign (the index's page of them), where nothing says which runs
    are seeds of one another: a line is a *recipe without its size*, the runs identical but for their seed and
    their data size (`recipes.recipe_key` with the size left out: same config, model, data, spec, condition,
    headline metric), so the runs pooled at one size are seeds of one recipe and n counts seeds. A line is named
    by `group_by`'s value when obs.yaml sets one, else by its condition or its first run; names that two recipes
    share are numbered. `metric` is obs.yaml's `sample_efficiency.metric`, else its `primary_metric` (the caller's
    `declared`); None when there is none or no run has the size (or counter)."""
    from obs.analysis.recipes import recipe_key  # only when the index has such a page to make

    metric = declared.get("metric")
    size_key, series = declared.get("size_key"), declared.get("series")
    if not metric or not any(_has_source(s, size_key, series) for s in runs):
        return None
    source = str(size_key or series)
    group_by = str(declared.get("group_by") or "")
    by_recipe: dict[str, list[RunSummary]] = {}
    for s in sorted(runs, key=lambda r: r.id):
        sizeless = dataclasses.replace(s, fields={k: v for k, v in s.fields.items() if k != size_key})
        by_recipe.setdefault(recipe_key(sizeless, seed_keys), []).append(s)
    named: dict[str, list[RunSummary]] = {}
    for members in sorted(by_recipe.values(), key=lambda m: m[0].id):
        first = members[0]
        given = run_value(first, group_by) if group_by and group_by != "run.condition" else None
        name = value_text(given) if given is not None else (first.condition or f"like {first.id}")
        k = 2
        label = name
        while label in named:
            label, k = f"{name} ({k})", k + 1
        named[label] = members
    left_out: list[str] = []
    if size_key:
        lines = [_size_line(g, m, str(size_key), metric, None, left_out) for g, m in named.items()]
    else:
        lines = [_series_line(g, m, str(series), metric, left_out) for g, m in named.items()]
    label = str(declared.get("label") or source.rsplit(".", 1)[-1])
    return SampleEfficiency(
        metric, "size" if size_key else "series", source, label, "recipe", lines, left_out, final_window
    )


def _has_source(s: RunSummary, size_key: Any, series: Any) -> bool:
    if size_key:
        return run_value(s, str(size_key)) is not None
    return str(series) in (s.curves or {})


def _size_line(
    group: str, members: list[RunSummary], key: str, metric: str, primary: str | None, left_out: list[str]
) -> EfficiencyLine:
    by_size: dict[float, list[tuple[RunSummary, float]]] = {}
    for s in members:
        size = _number(run_value(s, key))
        final = _final(s, metric, primary)
        if size is None:
            left_out.append(f"{s.id}: no number at {key}")
        elif final is None:
            left_out.append(f"{s.id}: no final value of {metric}")
        else:
            by_size.setdefault(size, []).append((s, final))
    points = []
    for size in sorted(by_size):
        cell = by_size[size]
        seeds = [s.seed for s, _ in cell]
        if len(set(seeds)) < len(seeds):  # two runs of one seed are copies, not replicates: say so, keep the first
            kept: dict[int | None, tuple[RunSummary, float]] = {}
            for s, v in cell:
                if s.seed in kept:
                    left_out.append(
                        f"{s.id}: {'no seed' if s.seed is None else f'seed {s.seed}'} is already "
                        f"{kept[s.seed][0].id} at {value_text(size)} (a copy is not a replicate)"
                    )
                else:
                    kept[s.seed] = (s, v)
            cell = list(kept.values())
        mean, sd, ci = t_interval([v for _, v in cell])
        points.append(SizePoint(size, len(cell), mean, sd, ci, tuple(s.id for s, _ in cell)))
    return EfficiencyLine(group, points=points)


def _series_line(
    group: str, members: list[RunSummary], counter: str, metric: str, left_out: list[str]
) -> EfficiencyLine:
    curves: list[Curve] = []
    for s in members:
        mine, seen = (s.curves or {}).get(metric), (s.curves or {}).get(counter)
        if mine is None or seen is None:
            left_out.append(f"{s.id}: no logged {metric if mine is None else counter}")
            continue
        x = np.interp(np.asarray(mine.steps), np.asarray(seen.steps), np.asarray(seen.values))
        if np.any(np.diff(x) < 0):
            left_out.append(f"{s.id}: {counter} goes down as the steps go up (not a count of data seen)")
            continue
        curves.append(Curve(tuple(float(v) for v in x), mine.values))
    curve = condition_curve(group, group, curves) if curves else None
    if curves and curve is None:
        left_out.append(f"{group}: its runs cover no common span of {counter}")
    return EfficiencyLine(group, curve=curve, seeds=len(curves) if curve is not None else 0)
