"""Scale benchmarks of issue 18: one run with a very large probe, and a site of very many runs.

    python bench/scale.py probe [--cases 1000000] [--work bench/out/scale] [--json FILE]
    python bench/scale.py index [--runs 10000]   [--work bench/out/scale] [--json FILE]

`probe` writes a source tree with a run and its baseline, each with CASES probe cases (the shapes
of bench/make_corpus.py: ids, split, family, four checks; failing cases carry a failure class, a
prompt and 12-line expected/actual texts), builds it with `obs build` in a subprocess (wall time
and the peak RSS of the whole process tree, sampled every 20 ms), and opens the run page in
Debian's Chromium: bytes of the page and of everything it loads, the time until `load`, and the
time until the case browser shows its first page of cases.

`index` writes RUNS small runs (run.yaml, a 40-case probe, a baseline for most; spec ladders of
10), builds them, and measures the leaderboard in Chromium: bytes, time until `load`, time until
the table is interactive (its filter form shown), one column sort, one text filter.

Figures go to docs/performance.md. This is a benchmark, not a test: it prints numbers and asserts
nothing. Generated trees are kept in --work between runs (delete it to regenerate).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_corpus import write_probe  # a sibling script, not a package
from run_bench import USER_ENV, dir_mb, run_build

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


# ------------------------------------------------------------------------------------------ trees


def make_probe_tree(root: Path, cases: int) -> None:
    """A baseline and a run, each with `cases` probe cases (~330 bytes a case on average)."""
    if (root / ".complete").exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    rng = np.random.default_rng(20261118)
    for name, quality, baseline in (("big-base", 0.72, None), ("big-run", 0.75, "big-base")):
        folder = root / name
        folder.mkdir(parents=True)
        lines = [f"id: {name}", "title: a run with a very large probe", "status: finished", "date: 2026-03-01"]
        if baseline:
            lines.append(f"baseline: {baseline}")
        (folder / "run.yaml").write_text("\n".join(lines) + "\n")
        write_probe(folder / "probe.jsonl", rng, cases, quality)
    (root / ".complete").write_text("")


def make_index_tree(root: Path, runs: int) -> None:
    """`runs` small runs in spec ladders of 10 (rung 0 is each ladder's baseline)."""
    if (root / ".complete").exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    rng = np.random.default_rng(20261119)
    verdicts = ["promote", "reject", "repair", "branch"]
    for r in range(runs):
        spec_index, rev = divmod(r, 10)
        spec = f"spec{spec_index:04d}"
        folder = root / spec / f"r{rev}"
        folder.mkdir(parents=True)
        if rev == 0:
            (root / spec / "spec.yaml").write_text(f"id: {spec}\nbaseline: {spec}-r0\nprimary_metric: exact\n")
        quality = float(np.clip(0.6 + 0.02 * rev + rng.normal(0, 0.05), 0.05, 0.95))
        lines = [
            f"id: {spec}-r{rev}",
            f"spec: {spec}",
            f"revision: r{rev}",
            f"title: rung {rev} of {spec}: {['data', 'budget', 'repair', 'capacity'][rev % 4]} change",
            f"date: 2026-{1 + r % 12:02d}-{1 + r % 28:02d}",
            "status: finished",
            f"tags: [t{r % 7}, {['sft', 'rl', 'ablation'][r % 3]}]",
            f"decision: {{verdict: {verdicts[r % 4]}, rationale: bench}}" if r % 3 else "",
        ]
        if rev:
            lines.append(f"baseline: {spec}-r0")
        (folder / "run.yaml").write_text("\n".join(line for line in lines if line) + "\n")
        write_probe(folder / "probe.jsonl", rng, 40, quality)
    (root / ".complete").write_text("")


# ---------------------------------------------------------------------------------------- build


def build(source: Path, out: Path) -> dict[str, float]:
    for path in (out, out.parent / f".{out.name}.obs", out.parent / ".obs-cache"):
        if path.is_symlink():
            path.unlink()
        shutil.rmtree(path, ignore_errors=True)
    cmd = [sys.executable, "-m", "obs.cli", "build", str(source), "-o", str(out), "-q", "--force"]
    wall, rss = run_build(cmd)
    return {"build_s": round(wall, 1), "peak_rss_mb": round(rss), "site_mb": round(dir_mb(out), 1)}


# -------------------------------------------------------------------------------------- browser


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def serve(root: Path) -> tuple[str, http.server.ThreadingHTTPServer]:
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server


BYTES_LOADED = """() => performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"))
    .reduce((n, e) => n + (e.decodedBodySize || 0), 0)"""
SETTLE = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def _open(page: Any, url: str) -> dict[str, float]:
    """Load `url` with an empty cache: the time until `load`, and the bytes of the page and of
    everything it loaded by then (decoded sizes, from the browser's resource timing)."""
    start = time.perf_counter()
    page.goto(url, wait_until="load", timeout=300_000)
    load_s = time.perf_counter() - start
    return {"load_s": load_s, "loaded_mb": page.evaluate(BYTES_LOADED) / 1e6, "start": start}


def measure_run_page(site: Path, slug: str) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    base, server = serve(site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            opened = _open(page, f"{base}runs/{slug}/index.html")
            shown = None
            if page.locator("[data-case-browser]").count():
                page.wait_for_selector("[data-case-browser][data-ready]", timeout=120_000)
                shown = time.perf_counter() - opened["start"]
            height = page.evaluate("document.scrollingElement.scrollHeight")
            loaded_after = page.evaluate(BYTES_LOADED) / 1e6
            browser.close()
    finally:
        server.shutdown()
    html = site / "runs" / slug / "index.html"
    cases = site / "runs" / slug / "cases"
    return {
        "page_mb": round(html.stat().st_size / 1e6, 2),
        "loaded_at_load_mb": round(opened["loaded_mb"], 2),
        "loaded_with_first_cases_mb": round(loaded_after, 2),
        "load_s": round(opened["load_s"], 2),
        "cases_shown_s": round(shown, 2) if shown is not None else float("nan"),
        "page_height_px": height,
        "case_files_mb": round(dir_mb(cases), 1) if cases.is_dir() else 0,
    }


def measure_index(site: Path) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    base, server = serve(site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            opened = _open(page, f"{base}index.html")
            page.wait_for_selector("form.filters:not([hidden])", timeout=120_000)
            interactive = time.perf_counter() - opened["start"]
            sort_button = page.locator("#runs-table thead button.sort").nth(4)  # Headline
            start = time.perf_counter()
            sort_button.click()
            page.evaluate(SETTLE)
            sort_s = time.perf_counter() - start
            start = time.perf_counter()
            page.locator("form.filters input[type=search]").fill("spec0042")
            page.evaluate(SETTLE)
            filter_s = time.perf_counter() - start
            rows = page.evaluate("document.querySelectorAll('#runs-table tbody tr').length")
            browser.close()
    finally:
        server.shutdown()
    return {
        "index_mb": round((site / "index.html").stat().st_size / 1e6, 2),
        "loaded_mb": round(opened["loaded_mb"], 2),
        "load_s": round(opened["load_s"], 2),
        "interactive_s": round(interactive, 2),
        "sort_s": round(sort_s, 2),
        "filter_s": round(filter_s, 2),
        "rows_in_dom": rows,
    }


# ----------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["probe", "index"])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--work", type=Path, default=Path("bench/out/scale"))
    parser.add_argument("--no-build", action="store_true", help="measure the site already built in --work")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    os.environ.update(USER_ENV)
    work = args.work.absolute()
    if args.what == "probe":
        source, out = work / f"probe-{args.cases}", work / f"probe-{args.cases}-site"
        t0 = time.perf_counter()
        make_probe_tree(source, args.cases)
        print(f"source: {source} ({dir_mb(source):.0f} MB, {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
        result: dict[str, Any] = {"cases": args.cases, "input_mb": round(dir_mb(source))}
        if not args.no_build:
            result.update(build(source, out))
        result.update(measure_run_page(out, "big-run"))
    else:
        source, out = work / f"index-{args.runs}", work / f"index-{args.runs}-site"
        t0 = time.perf_counter()
        make_index_tree(source, args.runs)
        print(f"source: {source} ({dir_mb(source):.0f} MB, {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
        result = {"runs": args.runs}
        if not args.no_build:
            result.update(build(source, out))
        result.update(measure_index(out))
    result["machine"] = {"cores": os.cpu_count(), "python": sys.version.split()[0]}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
