"""The memory of a build's page phase at N runs: every page made over all runs, from summaries held as a
build holds them (issue 32).

    python bench/scale_phase.py /tmp/phase100k --runs 100000            # summaries lazy, as obs build holds them
    python bench/scale_phase.py /tmp/phase30k --runs 30000 --objects    # every RunSummary held (before)
    python bench/scale_phase.py /tmp/phase5k --runs 5000 --trace        # each family's own peak (tracemalloc)

A cold build of 100,000 tiny runs spends hours on the runs themselves; the pages over all runs are made
from summaries only. This makes N synthetic summaries (tests/synthetic_site.py), turns each into its
JSON bytes as the build cache holds it (`cache.exact_bytes`), then resets the process's peak RSS
(/proc/self/clear_refs) and runs what `build._site_pages` runs: every page family
(`render_site_pages`: arms, campaigns, seed levels, sweeps, config diffs, compare, index and
leaderboard files, spec pages, ledger) writing each page to disk as it comes, then index.json and its
shards. It prints the phase's CPU and wall time and peak RSS (VmHWM since the reset); with `--trace`, each
family's peak of Python memory above what was held when it started, and what it left held (tracemalloc:
the structures a family builds over all runs, which is what grows with the runs). The synthetic
summaries are small (no curves, a 4-key config), so the figures are a lower bound for real summaries'
decoding time. A benchmark: it asserts nothing; run it by hand.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
import tracemalloc
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from obs import urls
from obs.cache import exact_bytes
from obs.config import SiteConfig
from obs.lazysummary import lazy_summaries
from obs.manifest import manifest_files
from obs.model import Spec
from obs.render import index_pages
from obs.render.site import Renderer, SiteMeta
from obs.sitemodel import RunSummary
from synthetic_site import synthetic_summaries


def status_mb(name: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Written(MutableMapping[str, bytes]):
    """Pages written as they come (as `build.StagedPages` does), their sizes remembered."""

    def __init__(self, root: Path) -> None:
        self.root, self.sizes = root, {}  # type: ignore[var-annotated]

    def __setitem__(self, rel: str, data: bytes) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.sizes[rel] = len(data)

    def __getitem__(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def __delitem__(self, rel: str) -> None:
        raise TypeError

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.sizes))

    def __len__(self) -> int:
        return len(self.sizes)


def family_peaks(
    summaries: list[Any], site: index_pages.SitePages, renderer: Renderer, pages: Written
) -> dict[str, dict[str, int]]:
    """Render every family in order as `render_site_pages` does (one `SiteBuild`, so what a family leaves
    for the next is counted where it is made), each family's peak and what it left, in bytes a run."""
    n = max(1, len(summaries))
    build = index_pages.SiteBuild(summaries, site, renderer, index_pages.no_memo, out=pages)
    tracemalloc.start()
    report = {}
    for family in index_pages.FAMILIES:
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        pages.update(family.make(build))
        now, peak = tracemalloc.get_traced_memory()
        report[family.name] = {"peak_above_start": (peak - start) // n, "left_held": (now - start) // n}
    tracemalloc.stop()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument(
        "--objects", action="store_true", help="hold every RunSummary (the build before lazy summaries)"
    )
    parser.add_argument("--trace", action="store_true", help="each family's own peak (tracemalloc; slower)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    made = synthetic_summaries(args.runs)
    data = []
    for i, s in enumerate(made):  # each summary as the cache holds it: its exact JSON bytes
        data.append(exact_bytes(orjson.dumps(s.to_json())))
        made[i] = None  # type: ignore[call-overload]
    del made
    summaries = [RunSummary.from_json(d) for d in data] if args.objects else lazy_summaries(data)
    ids = {s.id: s.slug for s in summaries}
    specs = {s.spec: Spec(id=s.spec, source_dir=Path(s.spec)) for s in summaries if s.spec}
    layout = urls.SiteLayout.make(ids, specs, [])
    del ids
    site = index_pages.SitePages(SiteConfig(), specs, {}, layout)
    renderer = Renderer(SiteMeta(title="scale", source_name="runs", has_specs=True))
    if args.out.exists():
        shutil.rmtree(args.out)
    pages = Written(args.out)
    before = status_mb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS: the peak from here on
    cpu, wall = time.process_time(), time.perf_counter()
    families = family_peaks(summaries, site, renderer, pages) if args.trace else None
    if families is None:
        index_pages.render_site_pages(summaries, site, renderer, pages=pages)
    files = manifest_files(summaries, title="scale", specs=specs, campaigns={}, errors=0, warnings=0)
    for rel, body in files.items():
        pages[rel] = body
    del files
    report: dict[str, Any] = {
        "runs": args.runs,
        "summaries": "objects" if args.objects else "lazy",
        "phase_cpu_s": round(time.process_time() - cpu, 1),
        "phase_wall_s": round(time.perf_counter() - wall, 1),
        "rss_before_phase_mb": round(before),
        "peak_rss_phase_mb": round(status_mb("VmHWM")),
        "files": len(pages.sizes),
        "largest": sorted(pages.sizes.items(), key=lambda kv: -kv[1])[:5],
        "over_2mb": [rel for rel, n in pages.sizes.items() if n > 2_000_000],
    }
    if families is not None:
        report["families_bytes_per_run"] = families
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
