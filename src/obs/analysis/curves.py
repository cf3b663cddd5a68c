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

LOSS_KEYS = ("loss", "train_loss", "train/loss", "train_mean_nll", "train/nll", "nll", "train/loss_mean")
GRAD_KEYS = ("grad_norm", "gradient_norm", "train/grad_norm", "optim/grad_norm", "grad_norm/total")
LR_KEYS = ("lr", "learning_rate", "train/lr", "train/learning_rate", "optim/lr")
LOSS_OVERLAY = re.compile(r"(^|[/_])(loss|nll)($|[/_])", re.IGNORECASE)
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

    @property
    def has_training_panel(self) -> bool:
        return any((self.loss, self.grad, self.lr))


def _first(names: set[str], candidates: tuple[str, ...]) -> str | None:
    for c in candidates:
        if c in names:
            return c
    return None


def find_bands(names: set[str]) -> list[Band]:
    """`x_mean`/`x_std`, `x/mean`/`x/std` and TRL's `reward`/`reward_std` pairs."""
    bands: list[Band] = []
    for name in sorted(names):
        for mean_suffix, std_suffix, min_s, max_s in (
            ("_mean", "_std", "_min", "_max"),
            ("/mean", "/std", "/min", "/max"),
        ):
            if name.endswith(mean_suffix):
                base = name[: -len(mean_suffix)]
                std = base + std_suffix
                if std in names:
                    lo, hi = base + min_s, base + max_s
                    bands.append(Band(base, name, std, lo if lo in names else None, hi if hi in names else None))
        if name.endswith("_std") and not name.endswith(("_mean_std",)):
            base = name[: -len("_std")]
            if base in names and f"{base}_mean" not in names:
                bands.append(Band(base, base, name, None, None))
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
    used.update(plan.loss_overlays)
    plan.bands = find_bands(names - used)[:MAX_BANDS]
    for band in plan.bands:
        used.update(n for n in (band.mean, band.std, band.min, band.max) if n)
    plan.others = sorted(names - used)
    return plan
