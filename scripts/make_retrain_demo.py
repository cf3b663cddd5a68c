#!/usr/bin/env python3
"""The retrain-layout part of the demo tree: a campaign as a campaign runner leaves it, no run.yaml anywhere.

`make_demo.py` puts `retrain_tree()` under ``retrain-demo/`` of the demo:

* ``campaign.yaml`` — the campaign's question, conditions, baseline and primary metric; nothing else:
  each run's condition and seed come from its records and its folder's name (obs.layout);
* ``runs/<condition>_s<seed>/metrics.jsonl`` — three conditions x three seeds, 100 steps each, every
  record carrying ``condition`` and ``seed`` as the retrain research guide describes;
* ``runs/<condition>_s<seed>/emergence/steps.jsonl`` and ``generations.jsonl`` — the emergence logger's
  per-step aggregates (every 10 steps) and 4 sampled completions every 20 steps (216 generations in all),
  read with their run: curves ``emergence/...`` and the run page's generations viewer. One completion
  carries hostile text on purpose (markup, a bidi override), as the rest of the demo does.

Deterministic: seeded generators, rounded floats, sorted keys, no clock.
"""

from __future__ import annotations

import json
import math
import zlib
from typing import Any

import numpy as np

SEED = 20261128
BASE = "retrain-demo"
CONDITIONS = [  # name, label, final correct_rate, time constant (steps)
    ("grpo+none", "GRPO (baseline)", 0.34, 45),
    ("maxrl+gtpo_hicra", "MaxRL + GTPO + HICRA", 0.41, 40),
    ("maxrl+gtpo_sepa", "MaxRL + GTPO + SEPA", 0.44, 38),
]
SEEDS = (42, 101, 202)
STEPS = 100
GEN_EVERY = 20
GEN_PER_STEP = 4
HOSTILE = "<script>alert('gen')</script></pre><b>bold?</b> \u202eevil\u202c"


def rng_for(*names: str) -> np.random.Generator:
    return np.random.default_rng([SEED, zlib.crc32("/".join(names).encode())])


def sig(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def _rate(final: float, tau: float, offset: float, step: int) -> float:
    return min(max(0.06 + (final + offset - 0.06) * (1 - math.exp(-step / tau)), 0.01), 0.99)


def metrics(cond: str, seed: int, final: float, tau: float) -> bytes:
    rng = rng_for("metrics", cond, str(seed))
    offset = rng.normal(0, 0.012)
    rows = []
    for s in range(STEPS):
        correct = float(rng.binomial(128, _rate(final, tau, offset, s))) / 128
        rows.append(
            {
                "step": s,
                "condition": cond,
                "seed": seed,
                "correct_rate": sig(correct),
                "mean_reward": sig(0.05 + 0.9 * correct + rng.normal(0, 0.01)),
                "loss": sig(0.05 * math.exp(-s / 60) + rng.normal(0, 0.01)),
                "loss_is_placeholder": False,
            }
        )
    return jsonl(rows)


def _problem(rng: np.random.Generator) -> tuple[list[int], int, str]:
    """A countdown problem: numbers, a target and one expression that reaches it."""
    a, b, c = (int(x) for x in rng.choice([2, 3, 5, 7, 9, 10, 25, 50], size=3, replace=False))
    target = a * b + c
    return [a, b, c], target, f"{a} * {b} + {c}"


def generations(cond: str, seed: int, final: float, tau: float) -> tuple[bytes, bytes]:
    """(steps.jsonl, generations.jsonl) of one run's emergence logger."""
    rng = rng_for("emergence", cond, str(seed))
    gens: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    for s in range(0, STEPS, 10):
        p = _rate(final, tau, 0.0, s)
        steps.append(
            {
                "step": s,
                "mean_reward": sig(p + rng.normal(0, 0.02)),
                "std_reward": sig(math.sqrt(p * (1 - p))),
                "mean_completion_length": sig(180 - 60 * p + rng.normal(0, 5)),
                "planning_token_ratio": sig(0.12 + 0.1 * p),
            }
        )
        if s % GEN_EVERY:
            continue
        for k in range(GEN_PER_STEP):
            numbers, target, expr = _problem(rng)
            correct = bool(rng.random() < p)
            prompt = f"Using the numbers {numbers}, make {target}. Think inside <think> tags, then answer."
            if correct:
                think = (
                    f"I need {target}. Multiplying the first two gives {numbers[0] * numbers[1]}; adding {numbers[2]}."
                )
                answer = expr
            else:
                think = f"Maybe adding everything: {sum(numbers)}. Close enough to {target}?"
                answer = " + ".join(str(n) for n in numbers)
            completion = f"<think>{think}</think> {answer} = {target}"
            if cond == "maxrl+gtpo_sepa" and seed == SEEDS[0] and s == 40 and k == 0:
                completion = f"<think>{HOSTILE}</think> {answer} = {target}"
            gens.append(
                {
                    "step": s,
                    "prompt": prompt,
                    "completion": completion,
                    "reward": 1.0 if correct else 0.0,
                    "tokens": [int(t) for t in rng.integers(100, 5000, size=6)],
                    "planning_token_ratio": sig(0.1 + 0.05 * rng.random()),
                    "metadata": {"target": target, "numbers": numbers, "correctness": correct},
                }
            )
    return jsonl(steps), jsonl(gens)


def campaign_yaml() -> bytes:
    lines = [
        "# A campaign over a campaign runner's own layout: no run.yaml in any run folder. Each run's",
        "# condition and seed are read from its records (and its folder's name, runs/<condition>_s<seed>/).",
        "id: retrain-demo",
        "title: 'SEPA vs HICRA, as retrain leaves it: runs/<condition>_s<seed>/'",
        "question: Does SEPA pooling beat HICRA and the GRPO baseline on `correct_rate` at 100 steps?",
        "baseline_condition: grpo+none",
        "primary_metric: correct_rate",
        "final_window: 10",
        "conditions:",
    ]
    for name, label, _, _ in CONDITIONS:
        lines += [f"  - name: {name}", f"    label: {label}"]
    return ("\n".join(lines) + "\n").encode("utf-8")


def retrain_tree() -> dict[str, bytes]:
    """The campaign's files by path relative to the demo root."""
    files: dict[str, bytes] = {f"{BASE}/campaign.yaml": campaign_yaml()}
    for cond, _, final, tau in CONDITIONS:
        for seed in SEEDS:
            folder = f"{BASE}/runs/{cond}_s{seed}"
            files[f"{folder}/metrics.jsonl"] = metrics(cond, seed, final, tau)
            steps, gens = generations(cond, seed, final, tau)
            files[f"{folder}/emergence/steps.jsonl"] = steps
            files[f"{folder}/emergence/generations.jsonl"] = gens
    return files
