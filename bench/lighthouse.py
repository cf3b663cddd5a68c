"""Lighthouse on pages of a built site, served under a sub-path as GitHub Pages serves it.

    python bench/lighthouse.py SITE [PAGE ...] [--runs 3] [--lighthouse PATH] [--json FILE]

PAGE defaults to the demo's run page and leaderboard. Lighthouse is not a Python package: install
it with npm (`npm install lighthouse@12`; version 12 runs on Node 20) and point --lighthouse (or
$LIGHTHOUSE) at its `lighthouse` binary; it drives Debian's Chromium (/usr/bin/chromium), in the
default mobile profile with simulated throttling. Prints, per page, the median over --runs of the
performance, accessibility and best-practices scores and of the layout shift, LCP and TBT.

This is a benchmark, not a test: it prints numbers and asserts nothing. Figures go to
docs/performance.md.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
SUBPATH = "/obs-demo/"
DEFAULT_PAGES = ["runs/spec03-r2/index.html", "index.html"]
AUDITS = {"cls": "cumulative-layout-shift", "lcp_ms": "largest-contentful-paint", "tbt_ms": "total-blocking-time"}


class _Handler(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0].split("#", 1)[0]
        if not path.startswith(SUBPATH):
            return str(Path(self.directory) / ".missing")
        return super().translate_path("/" + path[len(SUBPATH) :])

    def log_message(self, *args: object) -> None:
        pass


def one_run(lighthouse: str, url: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        subprocess.run(
            [
                lighthouse,
                url,
                f"--chrome-path={CHROMIUM}",
                "--chrome-flags=--headless --no-sandbox --disable-gpu",
                "--only-categories=performance,accessibility,best-practices",
                "--output=json",
                f"--output-path={out}",
                "--quiet",
            ],
            check=True,
        )
        report: dict[str, Any] = json.loads(out.read_text())
    row = {name: round(100 * cat["score"]) for name, cat in report["categories"].items()}
    for key, audit in AUDITS.items():
        row[key] = report["audits"][audit]["numericValue"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("site", type=Path)
    parser.add_argument("pages", nargs="*", default=DEFAULT_PAGES)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lighthouse", default=os.environ.get("LIGHTHOUSE", "lighthouse"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    handler = functools.partial(_Handler, directory=str(args.site.resolve()))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}{SUBPATH}"
    result: dict[str, dict[str, float]] = {}
    try:
        for page in args.pages:
            rows = [one_run(args.lighthouse, base + page) for _ in range(args.runs)]
            result[page] = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
            print(page, json.dumps(result[page]), file=sys.stderr)
    finally:
        server.shutdown()
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
