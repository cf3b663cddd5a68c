"""Seeded generator of a large synthetic source tree for the build benchmark.

    python bench/make_corpus.py [OUT] [--runs 200] [--steps 20000] [--cases 1500] [--seeds 8] [--conditions 5]

Default: 200 spec runs (20 spec ladders of 10 rungs, each compared with its ladder's frozen
baseline) with 20,000 logged steps and a 1,500-case probe each, plus a 5-condition × 8-seed
campaign. About 1.2 GB of JSONL. Deterministic for the same arguments.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np

FAMILIES = ["poster_stack", "comparison_span_chart", "pipeline_lane", "dashboard_cards", "table_grid"]
SPLITS = ["train", "dev", "test"]
CLASSES = [
    "layout_drift",
    "renderable_but_not_exact",
    "scene_suffix_failure",
    "budget_truncation",
    "theme_tone_drift",
    "special_token_leak",
]


def write_metrics(path: Path, rng: np.random.Generator, steps: int, quality: float) -> None:
    s = np.arange(steps)
    frac = s / max(1, steps - 1)
    loss = 3.5 * np.exp(-6 * frac) + 0.15 + 0.1 * (1 - quality) + rng.normal(0, 0.03, steps)
    grad = 1.0 + 4 * np.exp(-8 * frac) + np.abs(rng.normal(0, 0.2, steps))
    spikes = rng.random(steps) < 0.001
    grad[spikes] *= 12
    warm = max(1, steps // 20)
    lr = np.where(s < warm, 3e-4 * s / warm, 3e-4 * (0.5 + 0.5 * np.cos(np.pi * (s - warm) / max(1, steps - warm))))
    tokens = (s + 1) * 8192
    throughput = 41000 + rng.normal(0, 900, steps)
    memory = 17.2 + 0.4 * np.sin(s / 500) + rng.normal(0, 0.05, steps)
    stage_edges = (int(steps * 0.05), int(steps * 0.8))
    with path.open("w", encoding="utf-8") as fh:
        for i in range(steps):
            stage = "warmup" if i < stage_edges[0] else ("main" if i < stage_edges[1] else "anneal")
            line = (
                f'{{"step": {i}, "loss": {loss[i]:.5f}, "grad_norm": {grad[i]:.4f}, "lr": {lr[i]:.4e}, '
                f'"tokens": {tokens[i]}, "epoch": {3 * frac[i]:.4f}, "stage": "{stage}", '
                f'"throughput_tok_s": {throughput[i]:.1f}, "memory_gb": {memory[i]:.3f}, '
                f'"loss_scale": 65536.0, "grad_norm_clipped": {min(grad[i], 1.0):.4f}, '
                f'"time_s": {0.21 * i:.2f}'
            )
            if i % 500 == 0:
                line += f', "eval_loss": {loss[i] + 0.05:.5f}'
            fh.write(line + "}\n")


def write_probe(path: Path, rng: np.random.Generator, cases: int, quality: float) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(cases):
            family = FAMILIES[i % len(FAMILIES)]
            p = quality * (0.4 if family == "pipeline_lane" and quality < 0.7 else 1.0)
            exact = bool(rng.random() < p)
            renderable = exact or bool(rng.random() < 0.7)
            truncated = (not renderable) and bool(rng.random() < 0.3)
            rec: dict[str, object] = {
                "id": f"case-{i:05d}",
                "split": SPLITS[i % 3],
                "family": family,
                "exact": exact,
                "renderable": renderable,
                "materialized": exact,
                "truncated": truncated,
            }
            if not exact:
                rec["failure_class"] = CLASSES[int(rng.integers(len(CLASSES)))]
                rec["prompt"] = f"[task:svg] [layout:{family}] [topic:t{i}] [OUT]"
                rec["expected"] = "\n".join(f"[scene] [layout:{family}] [slot:{k}]" for k in range(12))
                rec["actual"] = "\n".join(f"[scene] [layout:{FAMILIES[(i + k) % 5]}] [slot:{k}]" for k in range(12))
            fh.write(json.dumps(rec) + "\n")


def run_yaml(run_id: str, spec: str, rev: int, baseline: str | None, quality: float) -> str:
    lines = [
        f"id: {run_id}",
        f"spec: {spec}",
        f"revision: r{rev}",
        f"date: 2026-0{1 + rev % 9}-1{rev % 10}",
        "status: finished",
        "primary_axis: data",
        f"hypothesis: rung {rev} of {spec}",
        "held_constant: [compiler, tokenizer, capacity]",
        "model: {name: bench-38m, layers: 8, d_model: 512}",
        f"config: {{train: {{lr: 0.0003, epochs: 3}}, data: {{mix: v{rev}}}}}",
        "contract: {dsl: v3, compiler: c3, tokenizer: t3}",
        f"data: {{rows: {18000 + rev}, context: 1024, p95_prompt_tokens: 60, p95_output_tokens: 400}}",
        f"decision: {{verdict: {'promote' if quality > 0.75 else 'reject'}, rationale: bench}}",
    ]
    if baseline:
        lines.append(f"baseline: {baseline}")
    return "\n".join(lines) + "\n"


def write_campaign(root: Path, rng: np.random.Generator, conditions: int, seeds: int, steps: int) -> None:
    camp = root / "campaign"
    camp.mkdir(parents=True)
    names = [f"cond{c}" for c in range(conditions)]
    (camp / "campaign.yaml").write_text(
        f"id: bench-campaign\nprimary_metric: correct_rate\nbaseline_condition: cond0\nconditions: {names}\n"
        f"seeds: {list(range(1, seeds + 1))}\nfinal_window: 50\nalpha: 0.05\n"
        "evidence: {min_seeds: 3, min_steps: 100}\nlitmus: {min_delta: 0.01}\n"
    )
    s = np.arange(steps)
    for c, name in enumerate(names):
        for seed in range(1, seeds + 1):
            folder = camp / f"{name}_s{seed}"
            folder.mkdir()
            (folder / "run.yaml").write_text(
                f"id: bench-{name}-s{seed}\ncondition: {name}\nseed: {seed}\nstatus: finished\ndate: 2026-03-01\n"
            )
            rate = 0.1 + (0.3 + 0.02 * c) * (1 - np.exp(-s / (steps / 4))) + rng.normal(0, 0.03, steps)
            with (folder / "metrics.jsonl").open("w", encoding="utf-8") as fh:
                for i in range(steps):
                    fh.write(
                        f'{{"step": {i}, "correct_rate": {rate[i]:.4f}, "loss": {1 - rate[i]:.4f}, '
                        f'"completions": 128}}\n'
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", nargs="?", type=Path, default=Path("bench/corpus"))
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--cases", type=int, default=1500)
    parser.add_argument("--conditions", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--campaign-steps", type=int, default=2000)
    parser.add_argument("--per-spec", type=int, default=10)
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    rng = np.random.default_rng(20261122)
    for r in range(args.runs):
        spec_index, rev = divmod(r, args.per_spec)
        spec = f"spec{spec_index:02d}"
        spec_dir = args.out / spec
        if rev == 0:
            spec_dir.mkdir()
            (spec_dir / "spec.yaml").write_text(f"id: {spec}\nbaseline: {spec}-r0\nprimary_metric: exact\n")
        folder = spec_dir / f"r{rev}"
        folder.mkdir()
        quality = float(np.clip(0.6 + 0.03 * rev + rng.normal(0, 0.05), 0.05, 0.95))
        baseline = f"{spec}-r0" if rev else None
        (folder / "run.yaml").write_text(run_yaml(f"{spec}-r{rev}", spec, rev, baseline, quality))
        write_metrics(folder / "metrics.jsonl", rng, args.steps, quality)
        write_probe(folder / "probe.jsonl", rng, args.cases, quality)
    write_campaign(args.out, rng, args.conditions, args.seeds, args.campaign_steps)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"{args.out}: {args.runs} spec runs + {args.conditions * args.seeds} campaign runs, {size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
