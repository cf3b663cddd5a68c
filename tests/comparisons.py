"""A source tree with every shape of comparison obs makes, for the one-answer and words-vs-numbers tests.

* a spec ladder on a 160-case probe (3 splits x 5 families x 3 checks): a run significantly better
  than the baseline, one worse, one flat, one better overall with a collapsed family (repair), one
  better but by less than the spec's minimum effect;
* two sampled runs (4 samples per case, a `selected` flag): pass@k against each other, best-of-n;
* one run against one run on a logged series (no seed group), and the same as ablation arms (three
  seeds per arm, each run compared with the reference arm's seed 1);
* two lm-eval results with standard errors (items as the unit) and two W&B runs with final summaries
  only (no replicates);
* a campaign: four conditions x three seeds (one clearly better, one not, one whose seeds are copies of
  one run), runs compared with the baseline condition's run of the same seed, and a `paired:` comparison
  of two systems on shared items.

Everything is drawn from fixed seeds, so the expected outcomes below hold exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

FAMILIES = ("cards", "lane", "poster", "table", "tree")
SPLITS = ("train", "dev", "test")
N_CASES = 160


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _run(folder: Path, **fields: Any) -> None:
    _write(folder / "run.yaml", yaml.safe_dump({"status": "finished", **fields}, sort_keys=True))


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    _write(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def _probe(
    rng: np.random.Generator, rates: dict[str, float], base: list[dict[str, Any]] | None = None, flip: float = 0.05
) -> list[dict[str, Any]]:
    """160 cases; with `base`, each case keeps its baseline outcome except for a few flips, and exact
    moves to the family's new rate (cases that are right in both stay right)."""
    rows = []
    for i in range(N_CASES):
        family, split = FAMILIES[i % 5], SPLITS[(i // 5) % 3]
        if base is None:
            exact = bool(rng.random() < rates[family])
            renderable = exact or bool(rng.random() < 0.6)
            truncated = (not renderable) and bool(rng.random() < 0.3)
        else:
            b = base[i]
            target, before = rates[family], sum(r["exact"] for r in base if r["family"] == family) / 32
            if target >= before:
                exact = b["exact"] or bool(rng.random() < (target - before) / max(1e-9, 1 - before))
            else:
                exact = b["exact"] and not bool(rng.random() < (before - target) / max(1e-9, before))
            if rng.random() < flip:
                exact = not exact
            renderable = exact or (b["renderable"] if rng.random() > flip else not b["renderable"])
            truncated = (not renderable) and b["truncated"]
        rows.append(
            {
                "id": f"c{i:03d}",
                "split": split,
                "family": family,
                "exact": exact,
                "renderable": renderable,
                "truncated": truncated,
            }
        )
    return rows


def _samples(rng: np.random.Generator, rows: list[dict[str, Any]], p_right: float) -> list[dict[str, Any]]:
    """Four samples per case (sample 0 is the row); the selector picks the first sample that renders."""
    out = []
    for r in rows:
        group = [dict(r)]
        for _ in range(3):
            ok = bool(rng.random() < p_right)
            group.append({**r, "exact": ok, "renderable": ok or bool(rng.random() < 0.5), "truncated": False})
        pick = next((i for i, g in enumerate(group) if g["renderable"]), 0)
        for i, g in enumerate(group):
            g["sample"], g["selected"] = i, i == pick
        out += group
    return out


def _series(rng: np.random.Generator, final: float, steps: int = 300, key: str = "score") -> list[dict[str, Any]]:
    level = final + rng.normal(0, 0.004)
    rows, e = [], 0.0
    for s in range(0, steps, 5):
        e = 0.4 * e + rng.normal(0, 0.006)
        rows.append({"step": s, key: round(level * (1 - np.exp(-s / 60)) + e, 5), "completions": 128})
    return rows


def make_tree(root: Path) -> Path:
    """Write the tree under `root` and return it."""
    rng = np.random.default_rng(20260415)
    _write(root / "obs.yaml", "title: every comparison shape\nprimary_metric: exact\n")

    # ---- a spec ladder on a paired probe
    spec = root / "ladder"
    _write(spec / "spec.yaml", yaml.safe_dump({"id": "ladder", "baseline": "base", "min_effect": 0.0}))
    base = _probe(rng, dict(zip(FAMILIES, (0.5, 0.6, 0.6, 0.7, 0.55), strict=True)))
    shapes = {
        "better": {f: 0.85 for f in FAMILIES},
        "worse": {"cards": 0.3, "lane": 0.4, "poster": 0.4, "table": 0.5, "tree": 0.35},
        "flat": None,
        "repair": {"cards": 0.9, "lane": 0.0, "poster": 0.95, "table": 0.95, "tree": 0.9},
    }
    _run(spec / "base", id="base", spec="ladder")
    _jsonl(spec / "base" / "probe.jsonl", base)
    for name, rates in shapes.items():
        before = {f: sum(r["exact"] for r in base if r["family"] == f) / 32 for f in FAMILIES}
        rows = _probe(rng, rates or before, base, flip=0.01 if name == "repair" else 0.05)
        _run(spec / name, id=name, spec="ladder", baseline="base", primary_axis="data")
        _jsonl(spec / name / "probe.jsonl", rows)
    # a small but significant gain, below a spec's minimum effect of 20 pp
    small = root / "small"
    _write(small / "spec.yaml", yaml.safe_dump({"id": "small", "min_effect": 0.2}))
    _run(small / "small-base", id="small-base", spec="small")
    _jsonl(small / "small-base" / "probe.jsonl", base)
    rows = _probe(
        rng,
        {f: min(1.0, sum(r["exact"] for r in base if r["family"] == f) / 32 + 0.12) for f in FAMILIES},
        base,
        flip=0.0,
    )
    _run(small / "small-gain", id="small-gain", spec="small", baseline="small-base")
    _jsonl(small / "small-gain" / "probe.jsonl", rows)

    # ---- sampled runs: pass@k against each other, best-of-n against the selector
    sampled = root / "sampled"
    _run(sampled / "s-base", id="s-base")
    _jsonl(sampled / "s-base" / "probe.jsonl", _samples(rng, base, 0.45))
    _run(sampled / "s-new", id="s-new", baseline="s-base")
    _jsonl(sampled / "s-new" / "probe.jsonl", _samples(rng, _probe(rng, {f: 0.8 for f in FAMILIES}, base), 0.75))

    # ---- one run against one run on a logged series, no seed group
    _run(root / "series" / "b", id="series-b", primary_metric="score")
    _jsonl(root / "series" / "b" / "metrics.jsonl", _series(rng, 0.6))
    _run(root / "series" / "a", id="series-a", baseline="series-b", primary_metric="score")
    _jsonl(root / "series" / "a" / "metrics.jsonl", _series(rng, 0.5))

    # ---- ablation arms: three seeds per arm, runs compared with the reference arm's seed 1
    abl = root / "abl"
    _write(abl / "spec.yaml", yaml.safe_dump({"id": "abl", "primary_metric": "score"}))
    for arm, final in (("full", 0.6), ("no-x", 0.5), ("no-y", 0.598)):
        for seed in (1, 2, 3):
            rid = f"abl-{arm}-s{seed}"
            baseline = None if (arm, seed) == ("full", 1) else "abl-full-s1"
            _run(
                abl / f"{arm}_s{seed}",
                id=rid,
                spec="abl",
                arm=arm,
                seed=seed,
                baseline=baseline,
                primary_metric="score",
            )
            _jsonl(abl / f"{arm}_s{seed}" / "metrics.jsonl", _series(rng, final + rng.normal(0, 0.005)))

    # ---- evaluation results with standard errors (items as the unit), and final summaries only
    for rid, acc, base_id in (("ev-base", 0.61, None), ("ev-new", 0.66, "ev-base")):
        folder = root / "evals" / rid
        _write(
            folder / "results_2026-01-01T00-00-00.json",
            json.dumps(
                {
                    "results": {"arc": {"acc,none": acc, "acc_stderr,none": 0.012}},
                    "versions": {"arc": 1},
                    "n-samples": {"arc": {"original": 1172, "effective": 1172}},
                }
            ),
        )
        _run(folder, id=rid, baseline=base_id, primary_metric="arc/acc")
    for rid, acc, base_id in (("wb-base", 0.70, None), ("wb-new", 0.74, "wb-base")):
        folder = root / "wandb" / rid
        _write(folder / "wandb-summary.json", json.dumps({"val_accuracy": acc, "_step": 100}))
        _run(folder, id=rid, baseline=base_id, primary_metric="val_accuracy")

    # ---- a campaign: conditions x seeds, and two systems on shared items
    camp = root / "camp"
    items_a = [{"id": i, "correct": bool(rng.random() < 0.72)} for i in range(300)]
    items_b = [
        {"id": i, "correct": a["correct"] if rng.random() < 0.8 else bool(rng.random() < 0.5)}
        for i, a in enumerate(items_a)
    ]
    _write(camp / "evals" / "a.json", json.dumps(items_a))
    _write(camp / "evals" / "b.json", json.dumps(items_b))
    _write(
        camp / "campaign.yaml",
        yaml.safe_dump(
            {
                "id": "camp",
                "conditions": ["base", "good", "same", "copies"],
                "baseline_condition": "base",
                "primary_metric": "correct_rate",
                "seeds": [1, 2, 3],
                "final_window": 10,
                "evidence": {"min_seeds": 3},
                "metrics": {"correct_rate": {"tier": "primary"}, "entropy": {"tier": "secondary"}},
                "paired": [
                    {
                        "name": "A vs B",
                        "a": {"file": "evals/a.json", "label": "A"},
                        "b": {"file": "evals/b.json", "label": "B"},
                        "claim_pp": 1.0,
                    }
                ],
            },
            sort_keys=False,
        ),
    )
    entropy_rng = np.random.default_rng(33)  # apart from `rng`, so the outcomes designed before stay as they were
    for cond, final in (("base", 0.40), ("good", 0.46), ("same", 0.401)):
        for seed in (1, 2, 3):
            folder = camp / f"{cond}_s{seed}"
            _run(
                folder,
                id=f"camp-{cond}-s{seed}",
                condition=cond,
                seed=seed,
                baseline=None if cond == "base" else f"camp-base-s{seed}",
                primary_metric="correct_rate",
            )
            rows = _series(rng, final + rng.normal(0, 0.006), key="correct_rate")
            # a secondary metric (issue 33): "good" loses entropy, "same" keeps it
            level = (0.7 if cond == "good" else 1.0) + entropy_rng.normal(0, 0.01)
            _jsonl(
                folder / "metrics.jsonl",
                [{**r, "entropy": round(level + entropy_rng.normal(0, 0.01), 5)} for r in rows],
            )
    # a condition whose seed changed nothing: three copies of one run, better than the baseline's mean.
    # Before issue 28 it read "significant improvement" beside "copies of one run, not replicates".
    copied = _series(rng, 0.53, key="correct_rate")
    for seed in (1, 2, 3):
        folder = camp / f"copies_s{seed}"
        _run(folder, id=f"camp-copies-s{seed}", condition="copies", seed=seed, primary_metric="correct_rate")
        _jsonl(folder / "metrics.jsonl", copied)
    return root


# the outcomes the tree is built to produce (the consistency test also checks that they appear)
EXPECTED = {
    "run:better": "statistically_significant_improvement",
    "run:worse": "significant_degradation",
    "run:flat": "insufficient_statistical_evidence",
    "run:repair": "statistically_significant_improvement",
    "run:small-gain": "significant_below_min_effect",
    "run:series-a": "not_tested",
    "run:abl-no-x-s2": "not_tested",
    "run:wb-new": "not_tested",
    "run:ev-new": "statistically_significant_improvement",
    "run:s-new": "statistically_significant_improvement",
    "run:camp-good-s1": "not_tested",
    "arms:abl|no-x": "significant_degradation",
    "arms:abl|no-y": "insufficient_statistical_evidence",
    "campaign:camp|good": "statistically_significant_improvement",
    "campaign:camp|same": "insufficient_statistical_evidence",
    "campaign:camp|copies": "not_tested",
    "campaign:camp|entropy|good": "significant_degradation",
    "campaign:camp|entropy|same": "insufficient_statistical_evidence",
}
SUGGESTED = {
    "better": "promote",
    "worse": "reject",
    "flat": "branch",
    "repair": "repair",
    "small-gain": "branch",
    "series-a": None,
    "abl-no-x-s2": None,
    "wb-new": None,
    "ev-new": "promote",
    "camp-good-s1": None,
}
