"""Measure the leaderboard (the site's index page) of a big site in headless Chromium.

    python bench/many_runs.py bench/out/many-corpus --runs 10000 --jobs 2   # builds bench/out/many-site
    python bench/leaderboard_scale.py [SITE] [--loads 5] [--query r000123] [--json FILE]

SITE defaults to bench/out/many-site (what `bench/many_runs.py` builds). The site is served on
127.0.0.1 under a sub-path (as the browser tests serve the demo), without compression; gzip sizes
are computed here (gzip level 6, as a static host would send them). Debian's Chromium
(/usr/bin/chromium, or $OBS_CHROMIUM) through Playwright, 1366x768, a fresh context per load.

For each of `--loads` loads of index.html it records:
  - transfer weight: every response the page loads (HTML, CSS, scripts, fonts, data files), raw and gzip;
  - DOM: elements in the document once the leaderboard is ready, and rows in its table body;
  - time to interactive: navigation start until the search box has filtered the rows (the
    script reads every run from leaderboard.js first; the query is typed as soon as the table
    says it is ready, and the time is taken once the filtered rows are in and a frame is drawn);
  - long tasks (PerformanceObserver 'longtask', buffered) until then: their total and the longest;
  - filtering alone: one input event to rows updated and drawn;
  - sorting by a column (the headline), click to rows drawn;
  - first contentful paint (the page's own rows, before its script loads any data file);
  - paging from the first page to the last with "Older →" (at most --max-pages), total and per page.
Medians over the loads are printed. A benchmark: it prints numbers and asserts nothing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from browserkit import CHROMIUM, CHROMIUM_ARGS, serve
from playwright.sync_api import Page, sync_playwright

LONG_TASKS = """
window.__long = [];
new PerformanceObserver(l => { for (const e of l.getEntries()) window.__long.push([e.startTime, e.duration]); })
  .observe({type: 'longtask', buffered: true});
"""

# resolve after two frames (the change is drawn), with a timer as a fallback for a page in the background
FRAMES = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def count_text(page: Page) -> str:
    return page.eval_on_selector("form.filters [data-count]", "e => e.textContent") or ""


def one_load(page: Page, url: str, query: str, max_pages: int) -> dict[str, Any]:
    sizes: dict[str, bytes] = {}

    def on_response(response: Any) -> None:
        try:
            sizes[response.url] = response.body()
        except Exception:  # a redirect or an aborted request has no body
            sizes.setdefault(response.url, b"")

    page.on("response", on_response)
    page.add_init_script(LONG_TASKS)
    page.goto(url, wait_until="commit")
    page.wait_for_selector("#runs-table[data-ready]", state="attached", timeout=120_000)
    box = page.locator("form.filters input[type=search]")
    before = count_text(page)
    box.fill(query)
    page.wait_for_function("(b) => document.querySelector('form.filters [data-count]').textContent !== b", arg=before)
    tti = page.evaluate(f"async () => {{ await {FRAMES}; return performance.now(); }}")
    paint = page.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {startTime: 0}).startTime")
    long_tasks = page.evaluate("window.__long")
    upto = [d for start, d in long_tasks if start < tti]
    filtered = count_text(page)
    elements = page.evaluate("document.getElementsByTagName('*').length")
    box.fill("")
    page.wait_for_function("() => document.querySelector('#runs-table').tBodies[0].rows.length >= 100")
    rows = page.evaluate("document.querySelector('#runs-table').tBodies[0].rows.length")
    # filtering alone: one input event, in the page, to the rows drawn
    filter_ms = page.evaluate(
        f"""async (q) => {{
          const box = document.querySelector('form.filters input[type=search]');
          const t0 = performance.now();
          box.value = q; box.dispatchEvent(new Event('input', {{bubbles: true}}));
          await {FRAMES};
          const t = performance.now() - t0;
          box.value = ''; box.dispatchEvent(new Event('input', {{bubbles: true}}));
          await {FRAMES};
          return t;
        }}""",
        query,
    )
    sort_ms = page.evaluate(
        f"""async () => {{
          const th = [...document.querySelectorAll('#runs-table thead th')]
            .find(h => h.textContent.includes('Headline'));
          const t0 = performance.now();
          th.querySelector('button.sort').click();
          await {FRAMES};
          return performance.now() - t0;
        }}"""
    )
    paging = page.evaluate(
        f"""async () => {{
          const older = () => [...document.querySelectorAll('nav.pager button')]
            .find(b => b.textContent.includes('Older'));
          const times = [];
          const t0 = performance.now();
          while (older() && !older().disabled && times.length + 1 < {max_pages}) {{
            const t = performance.now();
            older().click();
            await {FRAMES};
            times.push(performance.now() - t);
          }}
          return {{total: performance.now() - t0, pages: times.length + 1, times,
                   where: document.querySelector('nav.pager .pager-where').textContent}};
        }}"""
    )
    raw = sum(len(b) for b in sizes.values())
    gz = sum(len(gzip.compress(b, 6)) for b in sizes.values())
    return {
        "first_paint_ms": paint,
        "tti_ms": tti,
        "long_tasks_ms": sum(upto),
        "longest_task_ms": max(upto, default=0.0),
        "long_tasks": len(upto),
        "filter_ms": filter_ms,
        "sort_ms": sort_ms,
        "page_all_ms": paging["total"],
        "page_one_ms": statistics.median(paging["times"]) if paging["times"] else 0.0,
        "pages": paging["pages"],
        "last_page": paging["where"],
        "elements": elements,
        "rows": rows,
        "filtered": filtered,
        "requests": len(sizes),
        "raw_bytes": raw,
        "gzip_bytes": gz,
        "resources": {u.split("/obs-demo/", 1)[-1]: [len(b), len(gzip.compress(b, 6))] for u, b in sizes.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("site", nargs="?", type=Path, default=Path("bench/out/many-site"))
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--query", default="spec123-r4", help="typed into the search box (default: one run's id)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--max-pages", type=int, default=10**9, help="stop paging after this many pages")
    args = parser.parse_args()
    site = args.site.resolve()
    served = serve(site)
    loads: list[dict[str, Any]] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for i in range(args.loads):
                context = browser.new_context(viewport={"width": 1366, "height": 768}, device_scale_factor=1)
                page = context.new_page()
                page.set_default_timeout(120_000)
                loads.append(one_load(page, served.url("index.html"), args.query, args.max_pages))
                context.close()
                print(f"  load {i + 1}: interactive after {loads[-1]['tti_ms']:.0f} ms", file=sys.stderr)
            version = browser.version
            browser.close()
    finally:
        served.close()

    def med(key: str) -> float:
        return float(statistics.median(x[key] for x in loads))

    cores = os.cpu_count()
    print(f"\nthe leaderboard of {args.site} ({len(loads)} loads, medians; Chromium {version}, {cores} cores)\n")
    rows = [
        ("requests", med("requests"), ""),
        ("transfer, raw", med("raw_bytes") / 1e6, "MB"),
        ("transfer, gzip", med("gzip_bytes") / 1e6, "MB"),
        ("DOM elements", med("elements"), ""),
        ("rows in the table", med("rows"), ""),
        ("first contentful paint", med("first_paint_ms"), "ms"),
        ("time to interactive", med("tti_ms"), "ms"),
        ("long tasks until then", med("long_tasks_ms"), "ms"),
        ("longest task", med("longest_task_ms"), "ms"),
        ("filter (one input event)", med("filter_ms"), "ms"),
        ("sort by the headline", med("sort_ms"), "ms"),
        ("one page (Older →)", med("page_one_ms"), "ms"),
        ("first to last page", med("page_all_ms"), "ms"),
    ]
    for label, value, unit in rows:
        print(f"{label:<28}{value:>12,.2f} {unit}" if unit == "MB" else f"{label:<28}{value:>12,.0f} {unit}")
    print(f"{'pages':<28}{loads[0]['pages']:>12} ({loads[0]['last_page']})")
    print(f"{'after the query':<28}{loads[0]['filtered']:>12}")
    print("\nlargest resources (raw / gzip bytes, first load):")
    for name, (raw, gz) in sorted(loads[0]["resources"].items(), key=lambda kv: -kv[1][0])[:6]:
        print(f"  {name:<50}{raw:>12,}{gz:>12,}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"site": str(site), "chromium": version, "loads": loads}, indent=1))


if __name__ == "__main__":
    main()
