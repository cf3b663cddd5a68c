"""A site of many synthetic runs for the scale tests (issue 32): summaries, not built runs.

Building thousands of runs through the pipeline takes minutes; the pages over all runs (leaderboard,
sweeps, ledger, compare, index.json) are made from `RunSummary` records only, so the tests render those
pages from generated summaries: ladders of 10 runs (each compared with its ladder's first), random
configs and tags, a third with a recorded decision. Seeded: the same `n` gives the same site.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from obs import urls
from obs.config import SiteConfig
from obs.manifest import manifest_files
from obs.model import Spec
from obs.render.index_pages import SitePages, render_site_pages
from obs.render.site import Renderer, SiteMeta
from obs.resources import templates_dir
from obs.sitemodel import RunSummary
from summaries import make_summary

TAGS = ["ablation", "long-context", "distill", "lora", "sweep", "rerun", "fp8"]


def synthetic_summaries(n: int, seed: int = 32, decided: float = 1 / 3) -> list[RunSummary]:
    """`n` runs in ladders of 10; a fraction `decided` of them with a recorded decision. Each is a copy of
    one checked summary with its own values (`dataclasses.replace`: 100,000 in about a second)."""
    rng = random.Random(seed)
    base = make_summary(
        id="template",
        has={"curves": True, "probe": True},
        decision={"verdict": "reject", "rationale": "template"},
    )
    assert base.decision is not None
    out = []
    for i in range(n):
        spec_index, rev = divmod(i, 10)
        spec = f"s{spec_index:05d}"
        run_id = f"{spec}-r{rev}"
        value = round(min(0.99, max(0.01, 0.5 + 0.02 * rev + rng.gauss(0, 0.08))), 4)
        date = f"2026-{1 + (i // 300) % 12:02d}-{1 + (i // 10) % 28:02d}"
        fields: dict[str, Any] = {
            "config.train.lr": rng.choice([1e-4, 3e-4, 1e-3]),
            "config.train.batch_size": rng.choice([64, 128, 256]),
            "config.train.optimizer": rng.choice(["adamw", "lion", "sgd"]),
            "config.data.mix": rng.choice(["web", "code", "math"]),
        }
        verdict = ("promote" if value > 0.6 else "reject") if rng.random() < decided else None
        decision = replace(base.decision, verdict=verdict, rationale=f"rung {rev}", date=date) if verdict else None
        out.append(
            replace(
                base,
                id=run_id,
                slug=run_id,
                spec=spec,
                revision=f"r{rev}",
                date=date,
                tags=tuple(sorted(rng.sample(TAGS, rng.randint(0, 2)))),
                headline=replace(base.headline, value=value),
                rates={"exact": value},
                fields=fields,
                finals={"loss": round(1.5 - value, 4)},
                baseline=f"{spec}-r0" if rev else None,
                verdict=verdict,
                decision=decision,
                input_hash=f"h{i}",
            )
        )
    return out


def synthetic_pages(summaries: list[RunSummary]) -> dict[str, bytes]:
    """Every page made from the summaries, and index.json with its shards."""
    specs = {s.spec: Spec(id=s.spec, source_dir=Path(s.spec), baseline=f"{s.spec}-r0") for s in summaries if s.spec}
    layout = urls.SiteLayout.make({s.id: s.slug for s in summaries}, specs, [])
    cfg = SiteConfig()
    meta = SiteMeta(title="scale", source_name="runs", has_specs=True)
    pages = dict(render_site_pages(summaries, SitePages(cfg, specs, {}, layout), Renderer(meta)))
    pages.update(manifest_files(summaries, title="scale", specs=specs, campaigns=[], errors=0, warnings=0))
    return pages


def write_site(summaries: list[RunSummary], out: Path) -> Path:
    """The pages over all runs written into `out` with the site's assets (run pages are not made)."""
    for rel, data in synthetic_pages(summaries).items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    shutil.copytree(templates_dir() / "assets", out / "assets", dirs_exist_ok=True)
    return out
