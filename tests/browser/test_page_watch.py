"""The guard of every browser test, tested: a request the page cancelled by moving on (net::ERR_ABORTED)
is not a failure, while a real 404 still is. Without the first, tests fail when the machine is busy
(a chart's data file still in flight when the test opens the next page); without the second, a
missing file would pass.

The pages are served by a tiny server of this test's own, whose /slow.js answers only when the test
lets it, so the abort happens every time instead of only under load.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browserkit import new_watched_context, wait_until
from playwright.sync_api import Browser

# each page names its icon inline: else Chromium may ask this server for /favicon.ico (a 404) at a moment that
# depends on the machine's speed, and the watch would count it, failing the test only sometimes
ICON = '<link rel="icon" href="data:,">'
PAGES = {
    "waits.html": f'<!DOCTYPE html><html lang="en"><title>a</title>{ICON}<script src="slow.js"></script></html>',
    "next.html": f'<!DOCTYPE html><html lang="en"><title>b</title>{ICON}<p>next</p></html>',
    "broken.html": f'<!DOCTYPE html><html lang="en"><title>c</title>{ICON}<img src="missing.png" alt=""></html>',
}


class _Handler(http.server.SimpleHTTPRequestHandler):
    asked: threading.Event
    release: threading.Event

    def do_GET(self) -> None:
        if self.path.endswith("/slow.js"):
            self.asked.set()
            self.release.wait(60)  # held until the test has moved the page on
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/javascript")
                self.end_headers()
                self.wfile.write(b"window.slow = 1;\n")
            except OSError:
                pass  # the browser gave up on it: that is the point
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def slow_server(tmp_path: Path) -> Iterator[tuple[str, threading.Event, threading.Event]]:
    for name, html in PAGES.items():
        (tmp_path / name).write_text(html, encoding="utf-8")
    asked, release = threading.Event(), threading.Event()
    handler = type("Handler", (_Handler,), {"asked": asked, "release": release})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", asked, release
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def test_a_request_aborted_by_the_next_navigation_is_not_a_failure(
    browser: Browser, browser_context_args: dict[str, Any], slow_server: tuple[str, threading.Event, threading.Event]
) -> None:
    base, asked, release = slow_server
    context, watch = new_watched_context(browser, browser_context_args, (base,))
    try:
        page = context.new_page()
        page.goto(base + "waits.html", wait_until="commit")
        # not asked.wait(): the watch's router answers in this thread, so it must keep running
        wait_until(page, asked.is_set, "the page to ask for slow.js")
        page.goto(base + "next.html")  # slow.js is still in flight: the navigation cancels it
        wait_until(page, lambda: bool(watch.aborted), "the browser to report slow.js as aborted")
        # slow.js is aborted; so may be the page left behind, when its document was still arriving (seen in CI)
        assert base + "slow.js" in watch.aborted
        assert set(watch.aborted) <= {base + "slow.js", base + "waits.html"}
        assert watch.problems() == []
    finally:
        release.set()
        context.close()


def test_a_missing_file_is_still_a_failed_request(
    browser: Browser, browser_context_args: dict[str, Any], slow_server: tuple[str, threading.Event, threading.Event]
) -> None:
    base, _, _ = slow_server
    context, watch = new_watched_context(browser, browser_context_args, (base,))
    try:
        page = context.new_page()
        page.goto(base + "broken.html")
        wait_until(page, lambda: bool(watch.failed), "the 404 of missing.png")
        assert watch.failed == [f"HTTP 404 {base}missing.png"]
        assert watch.aborted == []
        with pytest.raises(AssertionError, match="failed request: HTTP 404"):
            watch.assert_clean("broken.html")
    finally:
        context.close()
