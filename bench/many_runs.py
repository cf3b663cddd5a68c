"""Measure a build of many small runs: the per-run overhead and the pages over all runs, not log size.

    python bench/many_runs.py [CORPUS] [--runs 10000] [--steps 200] [--cases 40] [--repeat 1] [--json FILE]

Makes CORPUS (default bench/many; kept, and made again only when its size differs) with
`make_corpus.py`'s runs at a small size: `--runs` spec runs in ladders of 10, each with a
`--steps`-step metrics log and a `--cases`-case probe, compared with its ladder's baseline, plus a
2-condition x 3-seed campaign. Then times cold builds of the real `obs build` command (medians of
`--repeat`) and one no-op rebuild, with the peak RSS of the whole process tree (as run_bench.py
measures it), and reports the size of the site and of its index page. A benchmark: it prints
numbers and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from run_bench import USER_ENV, dir_mb, obs_package_dir, run_build


def make(corpus: Path, runs: int, steps: int, cases: int) -> float:
    stamp = corpus / ".many_runs.json"
    wanted = {"runs": runs, "steps": steps, "cases": cases}
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted:
        return 0.0
    start = time.perf_counter()
    args = ["--runs", str(runs), "--steps", str(steps), "--cases", str(cases), "--conditions", "2", "--seeds", "3"]
    subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("make_corpus.py")),
            str(corpus),
            *args,
            "--campaign-steps",
            "200",
        ],
        check=True,
        env=USER_ENV,
    )
    stamp.write_text(json.dumps(wanted))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, default=Path("bench/many"))
    parser.add_argument("--out", type=Path, default=Path("bench/out/many-site"))
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    made = make(args.corpus, args.runs, args.steps, args.cases)
    if made:
        print(f"  made {args.corpus} in {made:.0f} s", file=sys.stderr)
    obs = [sys.executable, "-m", "obs.cli", "build", str(args.corpus), "-o", str(args.out), "-q"]
    if args.jobs:
        obs += ["-j", str(args.jobs)]
    out = args.out.absolute()
    subprocess.run([sys.executable, "-m", "compileall", "-q", obs_package_dir()], env=USER_ENV, check=True)
    cold: list[float] = []
    rss: list[float] = []
    for i in range(args.repeat):
        if out.is_symlink():
            out.unlink()
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(out.parent / f".{out.name}.obs", ignore_errors=True)
        shutil.rmtree(out.parent / ".obs-cache", ignore_errors=True)
        t, peak = run_build(obs)
        cold.append(t)
        rss.append(peak)
        print(f"  cold build {i + 1}: {t:.1f} s, peak RSS {peak:.0f} MB", file=sys.stderr)
    noop, _ = run_build(obs)
    total = args.runs + 6
    report = {
        "corpus": {"path": str(args.corpus), "runs": total, "mb": round(dir_mb(args.corpus))},
        "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
        "jobs": args.jobs or os.cpu_count(),
        "cold_s": statistics.median(cold),
        "cold_samples": cold,
        "per_run_ms": 1000 * statistics.median(cold) / total,
        "noop_s": noop,
        "peak_rss_mb": max(rss),
        "site_mb": dir_mb(out),
        "index_html_mb": (out / "index.html").stat().st_size / 1e6,
    }
    print(
        f"\nobs build of many small runs: {total} runs, {report['corpus']['mb']} MB of input, {os.cpu_count()} cores\n"
    )
    for label, key, unit in (
        ("cold build", "cold_s", "s"),
        ("per run", "per_run_ms", "ms"),
        ("no-op rebuild", "noop_s", "s"),
        ("peak RSS (process tree)", "peak_rss_mb", "MB"),
        ("site size", "site_mb", "MB"),
        ("index.html", "index_html_mb", "MB"),
    ):
        print(f"{label:<26}{report[key]:>10.1f} {unit}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
