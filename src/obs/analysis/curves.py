"""Decide which curve panels a run gets, from the names of its metrics (no drawing here).

The training panel answers "how did optimisation behave" (loss with stages, grad norm, lr); band
panels show a mean ± std pair such as reward; every other logged metric is kept and drawn as a
sparkline in the series table, so nothing a run logged is silently dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from obs.model import Metrics
from obs.vocabulary import stat_groups

LOSS_KEYS = ("loss", "train_loss", "train/loss", "train_mean_nll", "train/nll", "nll", "train/loss_mean")
GRAD_KEYS = ("grad_norm", "gradient_norm", "train/grad_norm", "optim/grad_norm", "grad_norm/total")
LR_KEYS = ("lr", "learning_rate", "train/lr", "train/learning_rate", "optim/lr")
# a loss of another split or part (eval_loss, train/nll_total); not the mixed-precision loss scale (65,536 drawn on
# the loss's axis flattens the loss to a line at 0)
LOSS_OVERLAY = re.compile(r"(^|[/_])(loss|nll)($|[/_](?!scal))", re.IGNORECASE)
MAX_LOSS_OVERLAYS = 4
MAX_BANDS = 6


@dataclass(frozen=True)
class Band:
    """A mean ± std pair (optionally with min/max envelope) drawn as one band."""

    label: str
    mean: str
    std: str
    min: str | None = None
    max: str | None = None


@dataclass
class CurvePlan:
    loss: str | None = None
    loss_overlays: list[str] = field(default_factory=list)
    grad: str | None = None
    lr: str | None = None
    bands: list[Band] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    loss_not_drawn: list[str] = field(default_factory=list)  # loss series past MAX_LOSS_OVERLAYS: in the table only
    bands_not_drawn: list[str] = field(default_factory=list)

    @property
    def has_training_panel(self) -> bool:
        return any((self.loss, self.grad, self.lr))


def _first(names: set[str], candidates: tuple[str, ...]) -> str | None:
    for c in candidates:
        if c in names:
            return c
    return None


def find_bands(names: set[str]) -> list[Band]:
    """Mean ± std pairs in any spelling obs.vocabulary knows (`x_mean`/`x_std`, `x/mean`/`x/std`,
    `mean_x`/`std_x`, ...) and TRL's `reward`/`reward_std` (a plain name with a std beside it)."""
    bands: list[Band] = []
    for base, stats in sorted(stat_groups(frozenset(names)).items()):
        std = stats.get("std")
        mean = stats.get("mean") or (base if base in names else None)
        if std is None or mean is None:
            continue
        bands.append(Band(base, mean, std, stats.get("min"), stats.get("max")))
    return bands


def plan_curves(metrics: Metrics) -> CurvePlan:
    names = {n for n, s in metrics.series.items() if len(s) and np.isfinite(s.values).any()}
    plan = CurvePlan()
    plan.loss = _first(names, LOSS_KEYS)
    if plan.loss is None:
        losses = sorted(n for n in names if LOSS_OVERLAY.search(n) and not n.startswith(("eval", "test", "val")))
        plan.loss = losses[0] if losses else None
    plan.grad = _first(names, GRAD_KEYS)
    plan.lr = _first(names, LR_KEYS)
    used = {n for n in (plan.loss, plan.grad, plan.lr) if n}
    overlays = sorted(n for n in names - used if LOSS_OVERLAY.search(n))
    if plan.loss is None and overlays:
        plan.loss, overlays = overlays[0], overlays[1:]
        used.add(plan.loss)
    plan.loss_overlays = overlays[:MAX_LOSS_OVERLAYS]
    plan.loss_not_drawn = overlays[MAX_LOSS_OVERLAYS:]
    used.update(plan.loss_overlays)
    bands = find_bands(names - used)
    plan.bands = bands[:MAX_BANDS]
    plan.bands_not_drawn = [b.label for b in bands[MAX_BANDS:]]
    for band in plan.bands:
        used.update(n for n in (band.mean, band.std, band.min, band.max) if n)
    plan.others = sorted(names - used)
    return plan
