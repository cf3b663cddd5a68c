"""Rebuild after one run changed, in a process that has already built once (as `obs serve` does).

    python bench/warm_rebuild.py CORPUS OUT METRICS_FILE [--repeat N]

`obs serve` keeps one process alive and calls `build_site` on every change, so matplotlib, polars,
numpy and the templates are imported once, not per rebuild. This script does the same: a first
build warms the process, then each repetition appends one step to METRICS_FILE and times
`build_site`. It prints the seconds as a JSON list. run_bench.py restores the file afterwards.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from obs.build import BuildOptions
from obs.publish.extras import build_published


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("--repeat", type=int, default=6)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    opts = BuildOptions(source=args.corpus, out=args.out, quiet=True, jobs=args.jobs)
    build_published(opts)  # warm: imports, templates, and an up-to-date cache
    times = []
    for i in range(args.repeat):
        with args.metrics.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"step": 20_000_000 + i, "loss": 0.5}) + "\n")
        start = time.perf_counter()
        result = build_published(opts)
        times.append(time.perf_counter() - start)
        assert result.built >= 1, "the changed run was not rebuilt"
    print(json.dumps(times))


if __name__ == "__main__":
    main()
