"""Figures are deterministic bytes, whatever was drawn before them in the same process."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from obs.analysis.curves import plan_curves
from obs.model import Metrics, Series, Stage
from obs.render import figures


def metrics(seed: int, stages: bool, grad_spread: float) -> Metrics:
    rng = np.random.default_rng(seed)
    steps = np.arange(3000, dtype=float)
    series = {
        "loss": Series(steps, 3 * np.exp(-steps / 800) + rng.normal(0, 0.02, steps.size)),
        "grad_norm": Series(steps, np.abs(rng.normal(1, grad_spread, steps.size)) + 1e-6),
        "lr": Series(steps, np.minimum(steps / 100, 1) * 3e-4),
        "eval_loss": Series(steps[::250], 3 * np.exp(-steps[::250] / 800) + 0.1),
    }
    st = [Stage("warmup", 0, 99), Stage("main", 100, 2400), Stage("anneal", 2400, 2999)] if stages else []
    return Metrics(series=series, stages=st)


def draw(m: Metrics) -> str:
    return hashlib.sha256(figures.training_figure(m, plan_curves(m), 2000)).hexdigest()


def test_same_bytes_fresh_or_after_other_figures(tmp_path: Path) -> None:
    a, b, c = metrics(1, True, 0.3), metrics(2, False, 500.0), metrics(3, True, 0.1)  # b: log-scale grad norm
    figures._TRAINING_LAYOUTS.clear()
    first = [draw(a), draw(b), draw(c)]
    figures._TRAINING_LAYOUTS.clear()
    reverse = [draw(c), draw(b), draw(a)]
    assert first == reverse[::-1]
    assert draw(a) == first[0]  # and again, after everything else


def test_svg_has_no_date_and_a_fixed_salted_id() -> None:
    svg = figures.training_figure(metrics(4, True, 0.3), plan_curves(metrics(4, True, 0.3)), 2000)
    assert b"<dc:date>" not in svg
    assert svg == figures.training_figure(metrics(4, True, 0.3), plan_curves(metrics(4, True, 0.3)), 2000)
