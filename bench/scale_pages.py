"""The pages over all runs of a site of N synthetic runs, for the browser's timings at 100,000 runs.

    python bench/scale_pages.py /tmp/pages100k --runs 100000
    python bench/leaderboard_scale.py /tmp/pages100k --query s00123-r4 --loads 3 --max-pages 20

Building 100,000 runs takes hours on two cores; the pages over all runs are made from summaries only, so
this renders them from the synthetic summaries of the scale tests (tests/synthetic_site.py: ladders of
10, random configs and tags, a third decided): the index and its leaderboard files, compare.html and its
data files, index.json and its shards, the ledger's and the sweeps' pages, with the site's assets; the
index gets every spec ladder's context as the build passes it, so its spec tiles and the paged spec ladders
list (specs.html, ...) are made too (no run page, no spec page, no config diff). It prints each family's
CPU seconds, the process's peak RSS and the largest file. A benchmark: it asserts nothing; run it by hand.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from obs import urls
from obs.config import SiteConfig
from obs.manifest import manifest_files
from obs.model import Spec
from obs.render import across_pages as across
from obs.render import index_pages
from obs.render.site import Renderer, SiteMeta
from obs.resources import templates_dir
from synthetic_site import synthetic_summaries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--families", default="index,compare,manifest,ledger,sweeps", help="which pages to make")
    args = parser.parse_args()
    families = set(args.families.split(","))
    timings: dict[str, float] = {}

    def timed(name: str, make: Any) -> Any:
        start = time.process_time()
        out = make()
        timings[name] = round(time.process_time() - start, 2)
        print(f"  {name}: {timings[name]:.1f} s of CPU", file=sys.stderr)
        return out

    summaries = timed("summaries", lambda: synthetic_summaries(args.runs))
    specs = {s.spec: Spec(id=s.spec, source_dir=Path(s.spec)) for s in summaries if s.spec}
    layout = urls.SiteLayout.make({s.id: s.slug for s in summaries}, specs, [])
    site = index_pages.SitePages(SiteConfig(), specs, {}, layout)
    cfg = SiteConfig()
    renderer = Renderer(SiteMeta(title="scale", source_name="runs", has_specs=True))
    if args.out.exists():
        shutil.rmtree(args.out)
    sizes: dict[str, int] = {}

    def write(pages: Any) -> None:
        for rel, data in pages.items():
            path = args.out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            sizes[rel] = len(data)

    if "index" in families:
        by_id = {s.id: s for s in summaries}
        ladders = timed("spec ladders", lambda: index_pages._spec_tiles(summaries, site))
        write(timed("index", lambda: index_pages._index_page(summaries, site, renderer, ladders, [], {})))
        del ladders, by_id
    if "compare" in families:
        write(timed("compare", lambda: across.compare_page(summaries, cfg, renderer)))
    manifest = lambda: manifest_files(summaries, title="scale", specs=specs, campaigns=[], errors=0, warnings=0)  # noqa: E731
    if "manifest" in families:
        write(timed("index.json", manifest))
    ledger: dict[str, bytes] = {}
    if "ledger" in families:
        timed("ledger", lambda: index_pages._ledger_page(summaries, renderer, index_pages.no_memo, ledger))
        write(ledger)
    if "sweeps" in families:
        write(timed("sweeps", lambda: across.sweeps_page(summaries, cfg, renderer)))
    shutil.copytree(templates_dir() / "assets", args.out / "assets", dirs_exist_ok=True)
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    report = {
        "runs": args.runs,
        "cpu_s": timings,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "files": len(sizes),
        "largest": largest,
        "over_2mb": [rel for rel, n in sizes.items() if n > 2_000_000],
    }
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
