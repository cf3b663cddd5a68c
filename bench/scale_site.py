"""Measure a cold build of many tiny runs (issue 32): time, CPU, peak memory, and the weight of the index pages.

    python bench/scale_corpus.py /tmp/c100k --runs 100000           # once (~6 KB a run)
    nice -n 19 python bench/scale_site.py /tmp/c100k --out /tmp/s100k [--jobs 2] [--dask local] [--json FILE]
    python bench/leaderboard_scale.py /tmp/s100k --query s00123-r4   # the browser's timings of its index

Runs the real `obs build` once, cold, in a subprocess (the obs that `python -m obs.cli` imports: set
PYTHONPATH to measure a checkout), sampling memory as `run_bench.py` does: the peak of the tree's summed
proportional set size (PSS) and the largest PSS any one process reached (the issue's "largest process").
Then it weighs the site: every file outside `runs/`, `arms/` and `campaigns/` (the pages and data files
over all runs), the largest of them, and how many exceed 2 MB. A benchmark: it prints numbers and
asserts nothing; run it by hand, never from the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from run_bench import LAST_CPU, LAST_PSS, LAST_PSS_PROC, USER_ENV, dir_mb, obs_package_dir, run_build

PER_RUN_FOLDERS = ("runs", "arms", "campaigns", "assets")


def index_weight(site: Path) -> dict[str, object]:
    """The files over all runs (not one run's, campaign's or arm group's folder, nor the fixed assets)."""
    files = [p for p in site.rglob("*") if p.is_file() and p.relative_to(site).parts[0] not in PER_RUN_FOLDERS]
    sizes = sorted(((p.stat().st_size, p.relative_to(site).as_posix()) for p in files), reverse=True)
    return {
        "files": len(sizes),
        "mb": round(sum(s for s, _ in sizes) / 1e6, 2),
        "largest": [[name, round(size / 1e6, 3)] for size, name in sizes[:8]],
        "over_2mb": [name for size, name in sizes if size > 2_000_000],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--dask", default=None, help="an address, or 'local' for a LocalCluster")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    out = args.out.absolute()
    if out.is_symlink():
        out.unlink()
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(out.parent / f".{out.name}.obs", ignore_errors=True)
    shutil.rmtree(out.parent / ".obs-cache", ignore_errors=True)
    cmd = [sys.executable, "-m", "obs.cli", "build", str(args.corpus), "-o", str(out), "-q"]
    if args.jobs:
        cmd += ["-j", str(args.jobs)]
    if args.dask:
        cmd += ["--dask", args.dask]
    subprocess.run([sys.executable, "-m", "compileall", "-q", obs_package_dir()], env=USER_ENV, check=True)
    runs = sum(1 for _ in args.corpus.rglob("run.yaml"))
    wall, rss = run_build(cmd)
    report = {
        "corpus": str(args.corpus),
        "runs": runs,
        "obs": obs_package_dir(),
        "cores": os.cpu_count(),
        "jobs": args.jobs or os.cpu_count(),
        "dask": args.dask,
        "wall_s": round(wall, 1),
        "cpu_s": round(LAST_CPU[-1], 1),
        "cpu_ms_per_run": round(1000 * LAST_CPU[-1] / max(1, runs), 2),
        "peak_pss_tree_mb": round(LAST_PSS[-1]),
        "peak_pss_one_process_mb": round(LAST_PSS_PROC[-1]),
        "peak_rss_tree_mb": round(rss),
        "site_mb": round(dir_mb(out), 1),
        "index": index_weight(out),
    }
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
