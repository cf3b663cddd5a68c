"""Screenshot pages of a built site in headless Chromium (Debian's /usr/bin/chromium).

    python scripts/screenshot.py SITE PAGE [PAGE ...] [-o OUTDIR] [--size 1366x768] [--full]

Used to make the README screenshot and to look at pages while developing. Serves SITE on
127.0.0.1 (a random free port) so pages load exactly as they would from a web server.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("site", type=Path)
    parser.add_argument("pages", nargs="+", help="paths inside the site, e.g. runs/spec03-r2/index.html#failures")
    parser.add_argument("-o", "--out", type=Path, default=Path("/tmp/obs-shots"))
    parser.add_argument("--size", default="1366x768")
    parser.add_argument("--full", action="store_true", help="full-page screenshot")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    handler = functools.partial(_Quiet, directory=str(args.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
        for rel in args.pages:
            page.goto(base + rel)
            page.wait_for_load_state("networkidle")
            page.evaluate("document.fonts.ready")
            name = rel.replace("/", "_").replace("#", "--").replace(".html", "") + f"-{args.size}.png"
            page.screenshot(path=str(args.out / name), full_page=args.full, animations="disabled", caret="hide")
            print(args.out / name)
        browser.close()
    server.shutdown()


if __name__ == "__main__":
    main()
