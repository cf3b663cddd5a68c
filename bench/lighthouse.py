"""Lighthouse on pages of a built site: performance, accessibility, best practices, layout shift.

    python bench/lighthouse.py SITE [PAGE ...] [--runs 3] [--preset mobile|desktop] [--json FILE]

PAGE defaults to the demo's run page (runs/spec03-r2/index.html). Lighthouse comes from the npm
registry, installed once into ~/.cache/obs-lighthouse (12.8.2: 13.x needs Node >= 22.19), and
drives Debian's Chromium (CHROME_PATH=/usr/bin/chromium, --headless --no-sandbox). The site is
served on 127.0.0.1 under /obs-demo/, gzip-compressed, as GitHub Pages serves a project site. Each page is audited
`--runs` times; the medians are printed (Lighthouse's scores move by a few points between runs
on a shared machine). This is a measurement, not a test: it asserts nothing.

The mobile preset (Lighthouse's default: a mid-range phone, 4x CPU slowdown, slow 4G) is the hard
one; --preset desktop is the one a researcher at a desk sees.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import urllib.parse
from pathlib import Path
from typing import Any

LIGHTHOUSE = "lighthouse@12.8.2"
CACHE = Path.home() / ".cache" / "obs-lighthouse"
CHROMIUM = os.environ.get("OBS_CHROMIUM", "/usr/bin/chromium")
CHROME_FLAGS = (
    "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync"
)
SUBPATH = "/obs-demo/"
CATEGORIES = ("performance", "accessibility", "best-practices")
METRICS = {
    "cumulative-layout-shift": "CLS",
    "largest-contentful-paint": "LCP ms",
    "total-blocking-time": "TBT ms",
    "first-contentful-paint": "FCP ms",
    "speed-index": "SI ms",
}


COMPRESSED = (".html", ".css", ".js", ".json", ".svg")


class _SubPath(http.server.SimpleHTTPRequestHandler):
    """The site below SUBPATH, text files gzip-compressed when the browser accepts it (as GitHub
    Pages and any ordinary web server send them; Python's http.server alone does not)."""

    def translate_path(self, path: str) -> str:
        clean = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
        if not clean.startswith(SUBPATH):
            return str(Path(self.directory) / ".not-under-the-sub-path")
        return super().translate_path(urllib.parse.quote("/" + clean[len(SUBPATH) :]))

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        if not path.is_file() or path.suffix not in COMPRESSED or "gzip" not in self.headers.get("Accept-Encoding", ""):
            super().do_GET()
            return
        body = gzip.compress(path.read_bytes(), mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def lighthouse_bin() -> Path:
    binary = CACHE / "node_modules" / ".bin" / "lighthouse"
    if not binary.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--silent", LIGHTHOUSE], check=True
        )
    return binary


def audit(binary: Path, url: str, preset: str, out_dir: Path) -> dict[str, Any]:
    out = out_dir / "report.json"
    cmd = [
        str(binary),
        url,
        "--quiet",
        f"--chrome-flags={CHROME_FLAGS}",
        "--output=json",
        f"--output-path={out}",
        f"--only-categories={','.join(CATEGORIES)}",
    ]
    if preset == "desktop":
        cmd.append("--preset=desktop")
    subprocess.run(cmd, check=True, env={**os.environ, "CHROME_PATH": CHROMIUM}, stdout=subprocess.DEVNULL)
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    row: dict[str, Any] = {c: round(100 * (report["categories"][c]["score"] or 0)) for c in CATEGORIES}
    for key, label in METRICS.items():
        row[label] = report["audits"][key]["numericValue"]
    row["failed"] = sorted(
        k
        for c in ("accessibility", "best-practices")
        for ref in report["categories"][c]["auditRefs"]
        if ref["weight"] and (k := ref["id"]) and report["audits"][k]["score"] not in (None, 1)
    )
    shifts = report["audits"].get("layout-shifts", {}).get("details", {}).get("items", [])
    row["long_tasks"] = [
        (t.get("url", "")[-40:], round(t.get("duration", 0)))
        for t in report["audits"]["long-tasks"]["details"]["items"]
    ]
    row["lcp_element"] = report["audits"]["largest-contentful-paint-element"]["details"]["items"][0]["items"][0][
        "node"
    ]["snippet"]
    row["shifts"] = [
        {"score": round(i.get("score", 0), 4), "node": (i.get("node") or {}).get("snippet", "")[:100]} for i in shifts
    ]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("site", type=Path)
    parser.add_argument("pages", nargs="*", default=["runs/spec03-r2/index.html"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--preset", choices=("mobile", "desktop"), default="mobile")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if not shutil.which("npm"):
        raise SystemExit("npm is needed to install Lighthouse (Node 18.16 or later)")
    binary = lighthouse_bin()
    handler = functools.partial(_SubPath, directory=str(args.site.resolve()))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}{SUBPATH}"
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for page in args.pages:
                rows = [audit(binary, base + page, args.preset, Path(tmp)) for _ in range(args.runs)]
                keys = [*CATEGORIES, *METRICS.values()]
                medians = {k: statistics.median(r[k] for r in rows) for k in keys}
                results[page] = {"preset": args.preset, "medians": medians, "runs": rows}
                print(f"\n{page} ({args.preset}, median of {args.runs})")
                for k in keys:
                    samples = ", ".join(f"{r[k]:.3g}" for r in rows)
                    print(f"  {k:<16}{medians[k]:>10.3g}   {samples}")
                failed = sorted({a for r in rows for a in r["failed"]})
                print(f"  failed audits: {', '.join(failed) or 'none'}")
                worst = max((s for r in rows for s in r["shifts"]), key=lambda s: s["score"], default=None)
                if worst:
                    print(f"  largest layout shift: {worst['score']} at {worst['node']}")
    finally:
        server.shutdown()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
