"""Seeded generator of many tiny runs, for the 100,000-run site (issue 32). Run by hand, never by the tests.

    python bench/scale_corpus.py OUT [--runs 100000] [--steps 40] [--cases 12] [--per-spec 10]

Each run is small on purpose (the cost measured is the per-run overhead and the pages over all runs,
not reading logs): a `run.yaml` with a random config (optimizer, learning rate, batch size, warmup,
dropout, data mix, model width) and 0-3 random tags, a `--steps`-step `metrics.jsonl` and a
`--cases`-case `probe.jsonl`. Runs come in spec ladders of `--per-spec` rungs, each rung compared with
its ladder's first run; a third of them carry a recorded decision (the ledger), a tenth are still
running. Deterministic for the same arguments; writes ~6 KB a run.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from pathlib import Path

TAGS = ["ablation", "baseline", "long-context", "distill", "lora", "sweep", "rerun", "fp8", "curriculum", "dedup"]
OPTIMIZERS = ["adamw", "lion", "sgd", "adafactor"]
MIXES = ["web", "code", "math", "web+code", "web+math"]
FAMILIES = ["poster_stack", "pipeline_lane", "table_grid", "dashboard_cards"]
CLASSES = ["layout_drift", "budget_truncation", "theme_tone_drift", "special_token_leak"]


def run_yaml(rng: random.Random, run_id: str, spec: str, rev: int, baseline: str | None, day: int) -> tuple[str, float]:
    """The run.yaml text and the run's latent quality (what its probe and loss are drawn from)."""
    lr = rng.choice([1e-4, 2e-4, 3e-4, 6e-4, 1e-3])
    batch = rng.choice([64, 128, 256, 512])
    warmup = rng.choice([100, 500, 1000, 2000])
    dropout = rng.choice([0.0, 0.05, 0.1])
    opt = rng.choice(OPTIMIZERS)
    mix = rng.choice(MIXES)
    width = rng.choice([256, 512, 768])
    quality = min(0.95, max(0.05, 0.55 + 0.02 * rev + (0.05 if opt == "adamw" else 0) + rng.gauss(0, 0.06)))
    tags = sorted(rng.sample(TAGS, rng.randint(0, 3)))
    status = "running" if rng.random() < 0.1 else "finished"
    lines = [
        f"id: {run_id}",
        f"spec: {spec}",
        f"revision: r{rev}",
        f"date: 2026-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}",
        f"status: {status}",
        f"hypothesis: rung {rev} of {spec}",
        f"tags: {json.dumps(tags)}",
        f"model: {{name: tiny-{width}, d_model: {width}}}",
        f"config: {{train: {{lr: {lr}, batch_size: {batch}, warmup: {warmup}, optimizer: {opt}, dropout: {dropout}}},"
        f" data: {{mix: '{mix}'}}, seed: {rng.randint(0, 9)}}}",
    ]
    if baseline:
        lines.append(f"baseline: {baseline}")
    if status == "finished" and rng.random() < 1 / 3:
        verdict = "promote" if quality > 0.7 else rng.choice(["reject", "repair", "branch"])
        lines.append(f"decision: {{verdict: {verdict}, rationale: 'scale bench, rung {rev}'}}")
    return "\n".join(lines) + "\n", quality


def metrics_lines(rng: random.Random, steps: int, quality: float) -> str:
    out = []
    for i in range(steps):
        loss = 3.0 * 0.9**i + 0.2 + 0.3 * (1 - quality) + rng.gauss(0, 0.02)
        out.append(f'{{"step": {i * 10}, "loss": {loss:.4f}, "lr": 0.0003, "grad_norm": {1 + rng.random():.3f}}}')
    return "\n".join(out) + "\n"


def probe_lines(rng: random.Random, cases: int, quality: float) -> str:
    out = []
    for i in range(cases):
        exact = rng.random() < quality
        rec: dict[str, object] = {"id": f"c{i:03d}", "family": FAMILIES[i % len(FAMILIES)], "exact": exact}
        rec["renderable"] = exact or rng.random() < 0.7
        if not exact:
            rec["failure_class"] = rng.choice(CLASSES)
        out.append(json.dumps(rec))
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--cases", type=int, default=12)
    parser.add_argument("--per-spec", type=int, default=10)
    args = parser.parse_args()
    stamp = args.out / ".scale_corpus.json"
    wanted = {"runs": args.runs, "steps": args.steps, "cases": args.cases, "per_spec": args.per_spec}
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted:
        print(f"{args.out}: already made with {wanted}")
        return
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    start = time.perf_counter()
    rng = random.Random(20261127)
    for r in range(args.runs):
        spec_index, rev = divmod(r, args.per_spec)
        spec = f"s{spec_index:05d}"
        spec_dir = args.out / spec[:3] / spec  # at most 1,000 ladders a folder
        if rev == 0:
            spec_dir.mkdir(parents=True)
            (spec_dir / "spec.yaml").write_text(f"id: {spec}\nbaseline: {spec}-r0\nprimary_metric: exact\n")
        folder = spec_dir / f"r{rev}"
        folder.mkdir()
        text, quality = run_yaml(rng, f"{spec}-r{rev}", spec, rev, f"{spec}-r0" if rev else None, r // 37)
        (folder / "run.yaml").write_text(text)
        (folder / "metrics.jsonl").write_text(metrics_lines(rng, args.steps, quality))
        (folder / "probe.jsonl").write_text(probe_lines(rng, args.cases, quality))
    stamp.write_text(json.dumps(wanted))
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"{args.out}: {args.runs} runs, {size / 1e6:.0f} MB, made in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
