"""Measure obs builds on a large corpus: cold, no-op, one run changed, one campaign run changed.

    python bench/make_corpus.py bench/corpus          # once: ~1.2 GB, a few minutes
    python bench/run_bench.py bench/corpus [--repeat 3] [--jobs N] [--json bench/out/result.json]

Each figure is the median of several runs of the real `obs build` command in a subprocess
(wall time, as a user sees it); "warm" is the same one-run change rebuilt by a process that has
already built once, as `obs serve` rebuilds (bench/warm_rebuild.py). Peak memory is the largest
sum over the build's whole process tree (the main process and its workers) of each process's
proportional set size (PSS: a page shared by n processes counts 1/n in each), sampled every 100 ms
from /proc; the largest sum of resident sets (RSS, sampled every 20 ms), which counts the pages the
forked workers share with the build process once in each of them, is printed beside it. Builds
run with Python's bytecode cache on, as an installed obs has it, even where the calling shell sets
PYTHONDONTWRITEBYTECODE (recompiling obs's own modules costs every new process ~0.3 s that a user
never pays); `compileall` fills the cache first.
This is a benchmark, not a test: it prints numbers and asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

TARGETS = {"cold_s": 20.0, "noop_s": 0.2, "one_run_s": 1.0, "peak_pss_mb": 400.0, "site_mb": 60.0}


def _children(pid: int) -> list[int]:
    """The direct children of `pid`: from /proc/PID/task/*/children where the kernel keeps it (cheap),
    else by reading every process's parent from /proc/*/stat (~2 ms a sample on a busy machine)."""
    try:
        kids: list[int] = []
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                kids.extend(int(k) for k in fh.read().split())
        return kids
    except (OSError, ValueError):
        pass
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return out


def _proc_kb(pid: int, file: str, field: str) -> int:
    """A size in kB from /proc/PID/FILE (its line starting with FIELD), 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/{file}") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _rss_kb(pid: int) -> int:
    return _proc_kb(pid, "status", "VmRSS:")


USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


LAST_CPU: list[float] = []  # CPU seconds (user + system) of each build's whole process tree
LAST_PSS: list[float] = []  # peak proportional set size of each build's process tree, MB (see run_build)
LAST_PSS_PROC: list[float] = []  # the largest PSS any one process of the tree reached, MB (the 400 MB goal)
PSS_EVERY = 5  # PSS is read on every 5th sample (100 ms): reading it costs ~0.5 ms a process


def _pss_kb(pid: int) -> int:
    """Proportional set size: each page shared by n processes counts 1/n in each (Linux 4.14+), 0 if unknown."""
    return _proc_kb(pid, "smaps_rollup", "Pss:")


def run_build(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS of the process tree in MB); the tree's CPU seconds go to LAST_CPU and
    its peak PSS to LAST_PSS.

    CPU time is what a shared machine does not inflate much: when other jobs hold the cores, the
    wall time of a build grows while its CPU seconds stay close (see docs/performance.md).

    Summed RSS counts a page shared by the build process and its forked workers once in each of
    them (the interpreter, numpy and obs's own modules, imported before the fork: ~70 MB three
    times). PSS splits a shared page between the processes sharing it, so the sum over the tree is
    the memory the build actually holds; both are reported."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=USER_ENV)
    peak = peak_pss = peak_proc = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_pss, peak_proc
        count = 0
        while not stop.is_set():
            tree = [proc.pid, *_children(proc.pid)]
            peak = max(peak, sum(_rss_kb(p) for p in tree))
            if count % PSS_EVERY == 0:
                each = [_pss_kb(p) for p in tree]
                peak_pss = max(peak_pss, sum(each))
                peak_proc = max(peak_proc, *each)
            count += 1
            stop.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)  # usage includes the workers the build waited for
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - start
    LAST_CPU.append(usage.ru_utime + usage.ru_stime)
    stop.set()
    sampler.join()
    LAST_PSS.append(peak_pss / 1024)
    LAST_PSS_PROC.append(peak_proc / 1024)
    if code not in (0, 1):
        raise SystemExit(f"build failed with exit code {code}: {' '.join(cmd)}")
    return elapsed, peak / 1024


def reference_ms() -> float:
    """The wall time of a fixed pure-Python workload, in ms: how fast this shared machine is right now.

    The same build's CPU seconds have varied by 40% between two sittings an hour apart here; a figure is
    comparable with another one taken at a similar reference time."""
    start = time.perf_counter()
    total = 0
    for i in range(2_000_000):
        total += i * i % 7
    return (time.perf_counter() - start) * 1000


def obs_package_dir() -> str:
    """Where the obs that `python -m obs.cli` runs lives (an editable install points into src/)."""
    spec = importlib.util.find_spec("obs")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("obs is not installed in this Python: pip install -e . first")
    return str(next(iter(spec.submodule_search_locations)))


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def touch_run(metrics: Path, n: int) -> None:
    """A real change: one more logged step, different on every repetition."""
    with metrics.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"step": 10_000_000 + n, "loss": 0.5 + n / 1000}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--out", type=Path, default=Path("bench/out/site"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    obs = [sys.executable, "-m", "obs.cli", "build", str(args.corpus), "-o", str(args.out), "-q"]
    if args.jobs:
        obs += ["-j", str(args.jobs)]
    out = args.out.absolute()
    cache = out.parent / ".obs-cache"  # beside the output link (not beside the version it points to)
    versions = out.parent / f".{out.name}.obs"  # the site's versions (see obs.write)
    leaf = sorted(args.corpus.glob("spec*/r[1-9]/metrics.jsonl"))[-1]
    camp = sorted(args.corpus.glob("campaign/*/metrics.jsonl"))[-1]
    backups = {p: p.read_bytes() for p in (leaf, camp)}
    results: dict[str, list[float]] = {
        "cold_s": [],
        "cold_cpu_s": [],
        "noop_s": [],
        "one_run_s": [],
        "one_run_cpu_s": [],
        "one_campaign_run_s": [],
        "one_run_warm_s": [],
        "peak_rss_mb": [],
        "peak_pss_mb": [],
        "load_1min": [],
        "reference_ms": [],
    }
    try:
        subprocess.run([sys.executable, "-m", "compileall", "-q", obs_package_dir()], env=USER_ENV, check=True)
        for i in range(args.repeat):
            if out.is_symlink():
                out.unlink()
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(versions, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
            results["load_1min"].append(os.getloadavg()[0])
            results["reference_ms"].append(reference_ms())
            t, rss = run_build(obs)
            results["cold_s"].append(t)
            results["cold_cpu_s"].append(LAST_CPU[-1])
            results["peak_rss_mb"].append(rss)
            results["peak_pss_mb"].append(LAST_PSS[-1])
            memory = f"peak PSS {LAST_PSS[-1]:.0f} MB, RSS {rss:.0f} MB"
            print(f"  cold build {i + 1}: {t:.1f} s ({LAST_CPU[-1]:.1f} s CPU), {memory}", file=sys.stderr)
        for _ in range(args.repeat * 2):
            results["noop_s"].append(run_build(obs)[0])
        for i in range(args.repeat * 2):
            touch_run(leaf, i)
            results["load_1min"].append(os.getloadavg()[0])
            results["reference_ms"].append(reference_ms())
            results["one_run_s"].append(run_build(obs)[0])
            results["one_run_cpu_s"].append(LAST_CPU[-1])
        for i in range(args.repeat * 2):
            touch_run(camp, i)
            results["one_campaign_run_s"].append(run_build(obs)[0])
        warm = [
            sys.executable,
            str(Path(__file__).with_name("warm_rebuild.py")),
            str(args.corpus),
            str(args.out),
            str(leaf),
            "--repeat",
            str(args.repeat * 2),
        ] + (["--jobs", str(args.jobs)] if args.jobs else [])
        results["one_run_warm_s"] = json.loads(
            subprocess.run(warm, check=True, capture_output=True, text=True, env=USER_ENV).stdout
        )
    finally:
        for path, data in backups.items():
            path.write_bytes(data)
    corpus_mb = dir_mb(args.corpus)
    runs = len(list(args.corpus.glob("**/run.yaml")))
    summary = {k: statistics.median(v) for k, v in results.items()}
    summary["site_mb"] = dir_mb(args.out)
    report = {
        "corpus": {"path": str(args.corpus), "runs": runs, "mb": round(corpus_mb)},
        "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
        "jobs": args.jobs or os.cpu_count(),
        "medians": summary,
        "samples": results,
        "targets": TARGETS,
    }
    print(f"\nobs build benchmark: {runs} runs, {corpus_mb:.0f} MB of input, {os.cpu_count()} cores\n")
    print(f"{'measure':<28}{'median':>10}{'target':>10}  samples")
    rows = [
        ("cold build (s)", "cold_s"),
        ("  its CPU time (s)", "cold_cpu_s"),
        ("no-op rebuild (s)", "noop_s"),
        ("one run changed (s)", "one_run_s"),
        ("  its CPU time (s)", "one_run_cpu_s"),
        ("one campaign run changed (s)", "one_campaign_run_s"),
        ("one run changed, warm (s)", "one_run_warm_s"),
        ("peak memory, PSS (MB)", "peak_pss_mb"),
        ("  RSS summed (MB)", "peak_rss_mb"),
        ("site size (MB)", "site_mb"),
        ("load average, 1 min", "load_1min"),
        ("reference workload (ms)", "reference_ms"),
    ]
    for label, key in rows:
        target = TARGETS.get(key)
        samples = ", ".join(f"{v:.2f}" for v in results.get(key, [summary[key]]))
        mark = "" if target is None else (" ok" if summary[key] <= target else " MISSED")
        print(f"{label:<28}{summary[key]:>10.2f}{(f'{target:g}' if target else '—'):>10}  {samples}{mark}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
