"""RL reward health: is there still a learning signal?

GRPO-style training normalises rewards within a group of completions of the same prompt. When every
completion of a group gets the same reward (all right or all wrong), the group's advantages are zero
and the prompt teaches nothing. So the reward mean alone is a poor health read: it can look fine
while the signal vanishes. The canaries are the spread of the reward (`reward_std`, the band), the
fraction of groups with zero reward variance (TRL's `frac_reward_zero_std`) and the advantage
statistics. This module finds those series under the names trainers actually log, summarises them
and detects when a collapse began. Pure: metrics in, numbers out; no drawing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from obs.model import Metrics, Series
from obs.vocabulary import stat_groups, tokens

# Names as logged by common trainers, most specific first. A `train/` prefix (W&B exports) is accepted.
MEAN_NAMES = ("reward_mean", "rewards_mean", "reward/mean", "rewards/mean", "reward", "mean_reward")
STD_NAMES = ("reward_std", "rewards_std", "reward/std", "rewards/std")
MIN_NAMES = ("reward_min", "rewards_min", "reward/min", "rewards/min")
MAX_NAMES = ("reward_max", "rewards_max", "reward/max", "rewards/max")
# the share of groups whose completions all got the same reward (so zero advantage): TRL, older TRL, then the
# names other GRPO implementations use; any other name saying "zero std/advantage" or "tied/uniform groups" and a
# share is read as the same canary (`_zero_std_like`)
ZERO_STD_NAMES = (
    "frac_reward_zero_std",
    "zero_std_ratio",
    "zero_advantage_fraction",
    "frac_zero_advantage",
    "zero_adv_frac",
    "zero_std_frac",
    "frac_zero_std",
)
_SHARE = frozenset({"frac", "fraction", "rate", "ratio", "share", "pct", "percent", "prop", "proportion"})
_ZERO_OF = frozenset({"std", "adv", "advantage", "advantages", "variance", "var", "spread"})
_TIED = frozenset({"tie", "tied", "ties", "uniform", "degenerate", "identical"})
ADV_MEAN_NAMES = ("advantage_mean", "advantages_mean", "advantage/mean", "advantages/mean")
ADV_STD_NAMES = ("advantage_std", "advantages_std", "advantage/std", "advantages/std")
# Per-reward-function components: TRL logs `rewards/<fn>/mean` and `/std` (older: `rewards/<fn>`).
COMPONENT = re.compile(r"^rewards?/(?P<fn>[^/]+?)(?:/(?P<stat>mean|std))?$")
# DPO/ORPO's rewards/chosen|rejected|margins|accuracies are implicit rewards of a preference pair, not
# reward functions of a policy-gradient run: no reward-health panel for them.
NOT_COMPONENTS = frozenset({"mean", "std", "min", "max", "chosen", "rejected", "margins", "accuracies"})
REWARD_BASES = ("reward", "rewards")
PREFIX = "train/"


@dataclass(frozen=True)
class SeriesStat:
    """One series in numbers: first value, mean of the final window, range and where it ends."""

    key: str
    first: float
    final: float
    min: float
    max: float
    last_step: float
    points: int
    last: float = math.nan  # the last logged finite value

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "first": self.first,
            "final": self.final,
            "min": self.min,
            "max": self.max,
            "last_step": self.last_step,
            "points": self.points,
        }


@dataclass(frozen=True)
class Onset:
    """Where a collapse began: the first step after which the rolling mean stays past the threshold."""

    key: str
    step: float
    threshold: float
    window: int
    direction: str  # "above" | "below"
    sustained: int  # rolling-mean points past the threshold from the onset to the end

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "step": self.step,
            "threshold": self.threshold,
            "window": self.window,
            "direction": self.direction,
            "sustained_points": self.sustained,
        }


@dataclass(frozen=True)
class Component:
    name: str
    mean: SeriesStat
    std_key: str | None = None
    weight: float | None = None  # declared in obs.yaml `reward_components:`

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "mean": self.mean.as_dict(), "std_key": self.std_key, "weight": self.weight}


SUM_TOLERANCE = 1e-3  # |weighted sum - logged total| within this (plus this share of |total|) is a match: logs round


@dataclass(frozen=True)
class Decomposition:
    """The declared weights times the logged components, against the logged total reward.

    Compared at the steps where every component and the total were logged: the largest and the mean
    absolute difference, and the step of the largest. Within SUM_TOLERANCE (plus that share of the
    total's size, for values rounded when logged) the weighted sum is the total; else the page says by how
    much it is not (wrong weights, a component not declared, a penalty or a scale not in the sum).
    """

    weights: dict[str, float]  # component name -> weight, as declared
    keys: dict[str, str]  # component name -> the logged series
    missing: list[str]  # declared components this run did not log
    total_key: str | None
    compared: int = 0  # steps where the sum and the total were both known
    max_diff: float | None = None
    max_diff_step: float | None = None
    mean_diff: float | None = None
    tolerance: float = SUM_TOLERANCE
    undeclared: list[str] = field(default_factory=list)  # logged components without a weight

    @property
    def matches(self) -> bool | None:
        return None if self.max_diff is None else self.max_diff <= self.tolerance

    def words(self) -> str:
        """What the check found, in one sentence made from its numbers."""
        if self.missing:
            return (
                f"The weighted sum cannot be formed: {', '.join(self.missing)} "
                f"{'is' if len(self.missing) == 1 else 'are'} declared in obs.yaml's reward_components but not logged."
            )
        if self.total_key is None:
            return "No total reward is logged (reward_mean or a name like it), so the weighted sum is not checked."
        if self.compared == 0 or self.max_diff is None:
            return f"The components and {self.total_key} share no logged step: the weighted sum is not checked."
        terms = " + ".join(f"{w:g} × {n}" for n, w in self.weights.items())
        if self.matches:
            text = (
                f"{terms} matches the logged {self.total_key} at all {self.compared:,} shared steps "
                f"(largest difference {self.max_diff:.2g}, within the tolerance of {self.tolerance:.2g})."
            )
        else:
            text = (
                f"{terms} differs from the logged {self.total_key}: by up to {self.max_diff:.3g} "
                f"(at step {self.max_diff_step:g}), {self.mean_diff:.3g} on average over {self.compared:,} shared "
                "steps. The declared weights, or the components, do not make the total."
            )
        if self.undeclared:
            text += f" Logged but given no weight: {', '.join(self.undeclared)}."
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "weights": self.weights,
            "keys": self.keys,
            "missing": self.missing,
            "total": self.total_key,
            "compared_steps": self.compared,
            "max_abs_difference": self.max_diff,
            "max_abs_difference_step": self.max_diff_step,
            "mean_abs_difference": self.mean_diff,
            "tolerance": self.tolerance,
            "matches": self.matches,
            "undeclared": self.undeclared,
            "words": self.words(),
        }


@dataclass
class RewardHealth:
    window: int
    mean: SeriesStat | None = None
    std: SeriesStat | None = None
    min: SeriesStat | None = None
    max: SeriesStat | None = None
    zero_std: SeriesStat | None = None
    adv_mean: SeriesStat | None = None
    adv_std: SeriesStat | None = None
    components: list[Component] = field(default_factory=list)
    decomposition: Decomposition | None = None  # when obs.yaml declares `reward_components:` weights
    zero_std_threshold: float = 0.5
    zero_std_onset: Onset | None = None
    std_drop: float = 0.25
    std_peak: float | None = None  # highest rolling mean of reward_std
    std_peak_step: float | None = None
    std_onset: Onset | None = None

    @property
    def collapsed(self) -> bool:
        return self.zero_std_onset is not None or self.std_onset is not None

    @property
    def onset_step(self) -> float | None:
        """The earliest detected onset: the step from which the learning signal is considered gone."""
        steps = [o.step for o in (self.zero_std_onset, self.std_onset) if o is not None]
        return min(steps) if steps else None

    @property
    def points_needed(self) -> int:
        """A collapse is a rolling mean past its threshold for a full window of rolling means: 2 windows - 1 points."""
        return 2 * self.window - 1

    @property
    def judged(self) -> bool:
        """Enough points of a spread signal to say "no collapse" (else there is no verdict either way)."""
        return any(s is not None and s.points >= self.points_needed for s in (self.std, self.zero_std))

    @property
    def last_tied(self) -> str | None:
        """The last logged step already has no spread (every group tied), whatever the rolling rule says yet."""
        z, s = self.zero_std, self.std
        if z is not None and z.last >= self.zero_std_threshold:
            return f"the last logged {z.key} is {z.last:.3g} (step {z.last_step:g})"
        if s is not None and s.last == 0:
            return f"the last logged {s.key} is 0 (step {s.last_step:g})"
        return None

    @property
    def can_detect(self) -> bool:
        """Collapse needs a spread signal: without std or zero-std fraction only the mean is known."""
        return self.std is not None or self.zero_std is not None

    def table(self) -> list[dict[str, Any]]:
        """The numbers the page shows under the figure, one row per logged series."""
        rows: list[tuple[str, SeriesStat | None, str]] = [
            ("reward mean", self.mean, ""),
            ("reward std", self.std, "spread within the batch: the collapse canary"),
            ("reward min", self.min, ""),
            ("reward max", self.max, ""),
            ("zero-std groups", self.zero_std, "fraction of groups whose completions all got the same reward"),
            ("advantage mean", self.adv_mean, "≈ 0 by construction under group normalisation"),
            ("advantage std", self.adv_std, "signal strength: falls as groups tie"),
        ]
        rows += [(f"component: {c.name}", c.mean, "") for c in self.components]
        return [
            {
                "label": label,
                "key": s.key,
                "first": s.first,
                "final": s.final,
                "min": s.min,
                "max": s.max,
                "note": note,
            }
            for label, s, note in rows
            if s is not None
        ]

    def as_dict(self) -> dict[str, Any]:
        def d(s: SeriesStat | Onset | None) -> dict[str, Any] | None:
            return s.as_dict() if s is not None else None

        return {
            "window": self.window,
            "reward_mean": d(self.mean),
            "reward_std": d(self.std),
            "reward_min": d(self.min),
            "reward_max": d(self.max),
            "frac_zero_std": d(self.zero_std),
            "advantage_mean": d(self.adv_mean),
            "advantage_std": d(self.adv_std),
            "components": [c.as_dict() for c in self.components],
            "decomposition": self.decomposition.as_dict() if self.decomposition else None,
            "zero_std_threshold": self.zero_std_threshold,
            "zero_std_onset": d(self.zero_std_onset),
            "reward_std_drop": self.std_drop,
            "reward_std_peak": self.std_peak,
            "reward_std_peak_step": self.std_peak_step,
            "reward_std_onset": d(self.std_onset),
            "collapsed": self.collapsed,
            "onset_step": self.onset_step,
        }


# --------------------------------------------------------------------------- helpers


def rolling_mean(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing mean over full windows only: element i covers values[i : i + window].

    Full windows only, so one noisy point at the start cannot pass for a sustained level.
    """
    w = max(1, int(window))
    if values.size < w:
        return np.empty(0, dtype=np.float64)
    csum = np.cumsum(np.concatenate(([0.0], values.astype(np.float64))))
    out: np.ndarray = (csum[w:] - csum[:-w]) / w
    return out


def sustained_onset(
    steps: np.ndarray,
    values: np.ndarray,
    threshold: float,
    window: int,
    *,
    above: bool = True,
    start: int = 0,
) -> tuple[float, int] | None:
    """First step after which the rolling mean stays at or past `threshold` until the end.

    Returns (step, number of rolling points past the threshold) or None. A crossing must hold for
    at least one full window of rolling means to count: a level seen in the last few points only is
    not yet "staying". `start` skips rolling points before that index (e.g. before a peak).
    The step reported is the last step of the first window whose mean passed the threshold.
    """
    w = max(1, int(window))
    keep = np.isfinite(values)
    x, y = steps[keep], values[keep]
    roll = rolling_mean(y, w)
    if roll.size == 0:
        return None
    past = roll >= threshold if above else roll <= threshold
    past[: max(0, start)] = False
    if not past[-1]:
        return None
    misses = np.flatnonzero(~past)
    first = int(misses[-1]) + 1 if misses.size else 0
    sustained = int(roll.size - first)
    if sustained < w:
        return None
    return float(x[first + w - 1]), sustained


def _stat(key: str, series: Series, window: int) -> SeriesStat | None:
    s = series.finite()
    if not len(s):
        return None
    v = s.values
    return SeriesStat(
        key=key,
        first=float(v[0]),
        final=float(np.mean(v[-max(1, window) :])),
        min=float(np.min(v)),
        max=float(np.max(v)),
        last_step=float(s.steps[-1]),
        points=int(v.size),
        last=float(v[-1]),
    )


def _names(metrics: Metrics) -> dict[str, str]:
    """Canonical name -> logged key; an unprefixed key wins over its `train/` twin."""
    out: dict[str, str] = {}
    for key, series in metrics.series.items():
        if not len(series) or not np.isfinite(series.values).any():
            continue
        canon = key[len(PREFIX) :] if key.startswith(PREFIX) else key
        if canon not in out or key == canon:
            out[canon] = key
    return out


def _pick(names: dict[str, str], candidates: tuple[str, ...], stat: str | None = None) -> str | None:
    """The first of `candidates` logged; else any name obs.vocabulary reads as that statistic of the reward
    (`std_reward`, `reward_stdev`, `mean/reward`, ...)."""
    for c in candidates:
        if c in names:
            return names[c]
    if stat is not None:
        groups = stat_groups(frozenset(names))
        for base in REWARD_BASES:
            logged = groups.get(base, {}).get(stat)
            if logged is not None:
                return names[logged]
    return None


def _zero_std_like(names: dict[str, str]) -> str | None:
    """A share of groups with no reward spread under another name: `uniform_group_rate`, `tie_rate`,
    `frac_groups_tied`, `zero_adv_share`, ..."""
    for canon in sorted(names):
        toks = set(tokens(canon))
        zero = "zero" in toks and bool(toks & _ZERO_OF)
        tied = bool(toks & _TIED) and bool(toks & (_SHARE | {"group", "groups"}))
        if zero or tied:
            return names[canon]
    return None


def find_components(names: dict[str, str]) -> list[tuple[str, str, str | None]]:
    """(function name, mean key, std key or None) for each reward component, sorted by name."""
    means: dict[str, str] = {}
    stds: dict[str, str] = {}
    for canon, key in names.items():
        m = COMPONENT.match(canon)
        if not m or m.group("fn") in NOT_COMPONENTS:
            continue
        fn, stat = m.group("fn"), m.group("stat")
        if stat == "std":
            stds[fn] = key
        elif stat == "mean" or fn not in means:
            means[fn] = key
    return [(fn, means[fn], stds.get(fn)) for fn in sorted(means)]


# --------------------------------------------------------------------------- analysis


def declared_component_key(names: dict[str, str], found: dict[str, str], name: str) -> str | None:
    """The logged series of a declared component: a found `rewards/<name>` component, else a series named
    exactly `name` (with or without `train/`), `reward/<name>` or `reward_<name>`."""
    if name in found:
        return found[name]
    for candidate in (name, f"reward/{name}", f"rewards/{name}", f"reward_{name}", f"rewards_{name}"):
        if candidate in names:
            return names[candidate]
    return None


def decompose(
    metrics: Metrics, names: dict[str, str], weights: Mapping[str, float], total_key: str | None, found: dict[str, str]
) -> Decomposition:
    """The weighted sum of the declared components against the logged total (see `Decomposition`)."""
    keys = {n: k for n in weights if (k := declared_component_key(names, found, n)) is not None}
    missing = [n for n in weights if n not in keys]
    undeclared = sorted(n for n in found if n not in keys and found[n] not in keys.values())
    base = Decomposition(dict(weights), keys, missing, total_key, undeclared=undeclared)
    if missing or total_key is None or not keys:
        return base
    parts = [metrics.series[k].finite() for k in keys.values()]
    total = metrics.series[total_key].finite()
    common = total.steps
    for p in parts:
        common = np.intersect1d(common, p.steps)
    if common.size == 0:
        return base

    def at(series: Series) -> np.ndarray:
        # one value per step (a series aggregated at each step); the last wins should a step repeat
        index = {float(x): float(v) for x, v in zip(series.steps, series.values, strict=True)}
        return np.array([index[float(x)] for x in common])

    weighted = sum(w * at(p) for w, p in zip(weights.values(), parts, strict=True))
    diff = np.abs(np.asarray(weighted) - at(total))
    i = int(np.argmax(diff))
    scale = float(np.max(np.abs(at(total)))) if common.size else 0.0
    return Decomposition(
        base.weights,
        keys,
        [],
        total_key,
        int(common.size),
        float(diff[i]),
        float(common[i]),
        float(diff.mean()),
        SUM_TOLERANCE * (1 + scale),
        undeclared,
    )


def reward_health(
    metrics: Metrics | None, threshold: Callable[[str], float], weights: Mapping[str, float] | None = None
) -> RewardHealth | None:
    """Reward health of a run, or None when it logged no reward series at all.

    Thresholds (obs.yaml): `zero_std_frac` and `zero_std_window` (collapse when the rolling mean of
    the zero-std fraction stays at or above the fraction), `reward_std_drop` (collapse when the
    rolling mean of reward_std stays at or below that share of its peak, after the peak).
    """
    if metrics is None:
        return None
    names = _names(metrics)
    window = max(1, int(threshold("zero_std_window")))
    keys = {
        "mean": _pick(names, MEAN_NAMES, "mean"),
        "std": _pick(names, STD_NAMES, "std"),
        "min": _pick(names, MIN_NAMES, "min"),
        "max": _pick(names, MAX_NAMES, "max"),
        "zero_std": _pick(names, ZERO_STD_NAMES) or _zero_std_like(names),
        "adv_mean": _pick(names, ADV_MEAN_NAMES),
        "adv_std": _pick(names, ADV_STD_NAMES),
    }
    comps = find_components(names)
    weights = dict(weights or {})
    logged = {fn: key for fn, key, _ in comps}
    declared_only = [  # a declared component logged under a plain name (`reward_format`) joins the components
        (n, k, None) for n in weights if n not in logged and (k := declared_component_key(names, logged, n)) is not None
    ]
    comps = sorted([*comps, *declared_only])
    if keys["mean"] is None and keys["std"] is None and keys["zero_std"] is None and not comps:
        return None
    stats = {k: _stat(v, metrics.series[v], window) if v else None for k, v in keys.items()}
    health = RewardHealth(
        window=window,
        mean=stats["mean"],
        std=stats["std"],
        min=stats["min"],
        max=stats["max"],
        zero_std=stats["zero_std"],
        adv_mean=stats["adv_mean"],
        adv_std=stats["adv_std"],
        zero_std_threshold=threshold("zero_std_frac"),
        std_drop=threshold("reward_std_drop"),
    )
    for fn, mean_key, std_key in comps:
        st = _stat(mean_key, metrics.series[mean_key], window)
        if st is not None:
            health.components.append(Component(fn, st, std_key, weights.get(fn)))
    if weights:
        health.decomposition = decompose(
            metrics, names, weights, keys["mean"], {c.name: c.mean.key for c in health.components}
        )

    if keys["zero_std"]:
        s = metrics.series[keys["zero_std"]]
        found = sustained_onset(s.steps, s.values, health.zero_std_threshold, window, above=True)
        if found:
            health.zero_std_onset = Onset(
                keys["zero_std"], found[0], health.zero_std_threshold, window, "above", found[1]
            )
    if keys["std"]:
        s = metrics.series[keys["std"]].finite()
        roll = rolling_mean(s.values, window)
        if roll.size:
            peak_i = int(np.argmax(roll))
            health.std_peak = float(roll[peak_i])
            health.std_peak_step = float(s.steps[peak_i + window - 1])
            limit = health.std_drop * health.std_peak
            found = sustained_onset(s.steps, s.values, limit, window, above=False, start=peak_i)
            if found and not math.isnan(limit):
                health.std_onset = Onset(keys["std"], found[0], limit, window, "below", found[1])
    return health
