"""Helpers for the browser tests: serve a site under a sub-path, watch what a page does, wait until a
page is what a reader would see. The fixtures that use them are in conftest.py.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Request, Response, Route

CHROMIUM = os.environ.get("OBS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SUBPATH = "/obs-demo/"  # as GitHub Pages serves a project site: https://user.github.io/obs-demo/
DESKTOP: dict[str, int] = {"width": 1366, "height": 768}
PHONE: dict[str, int] = {"width": 390, "height": 844}
HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "output"  # failure artefacts (git-ignored)
# How long a step may wait for what it expects (a locator, a function, a navigation). A local page
# needs far less, but on a machine shared with other builds a step can stall for seconds; a wait
# that passes returns at once, so a long bound costs only a failing test its time.
TIMEOUT_MS = 30_000


def chromium_available() -> bool:
    return Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)


# ---------------------------------------------------------------------------------------------
# serving a site under a sub-path


class _SubPathHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site only below SUBPATH; anything else is a 404, so a root-relative link breaks."""

    def translate_path(self, path: str) -> str:
        clean = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
        if not clean.startswith(SUBPATH):
            return str(Path(self.directory) / ".no-such-file-outside-the-sub-path")
        return super().translate_path(urllib.parse.quote("/" + clean[len(SUBPATH) :]))

    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class ServedSite:
    root: Path
    base: str  # e.g. http://127.0.0.1:40123/obs-demo/
    server: http.server.ThreadingHTTPServer

    def url(self, rel: str) -> str:
        return self.base + rel

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(root: Path) -> ServedSite:
    """Serve `root` on 127.0.0.1 (any free port) below SUBPATH, in a background thread."""
    handler = functools.partial(_SubPathHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return ServedSite(root, f"http://127.0.0.1:{server.server_address[1]}{SUBPATH}", server)


def site_pages(root: Path) -> list[str]:
    """Every HTML page of a built site, as paths relative to its root."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))


def run_pages(root: Path) -> list[str]:
    return [p for p in site_pages(root) if p.startswith("runs/") and p.endswith("/index.html")]


# ---------------------------------------------------------------------------------------------
# watching what a page does


ABORTED_BY_NAVIGATION = frozenset({"net::ERR_ABORTED"})


@dataclass
class PageWatch:
    """Records everything a page should not do. `allowed` are the URL prefixes it may load."""

    allowed: tuple[str, ...]
    foreign: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)  # cancelled by a navigation: seen, not a problem

    def _route(self, route: Route) -> None:
        url = route.request.url
        if url.startswith(self.allowed):
            route.continue_()
        else:
            self.foreign.append(url)
            route.abort("blockedbyclient")

    def _console(self, msg: ConsoleMessage) -> None:
        if msg.type == "error":
            loc = msg.location
            self.console_errors.append(f"{msg.text} ({loc.get('url', '')}:{loc.get('lineNumber', '')})")

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.failed.append(f"HTTP {response.status} {response.url}")

    def _request_failed(self, request: Request) -> None:
        """A request that failed, except one cancelled by the page itself: a navigation to the next
        page (or a closed page) aborts the requests still in flight, reported as net::ERR_ABORTED.
        That is the test moving on, not the site failing, and it happens more often the busier the
        machine is; a missing file is an HTTP 404 (seen by `_response`) or ERR_FILE_NOT_FOUND."""
        if request.url in self.foreign:
            return
        if request.failure in ABORTED_BY_NAVIGATION:
            self.aborted.append(request.url)
            return
        self.failed.append(f"{request.failure} {request.url}")

    def attach(self, context: BrowserContext) -> None:
        context.route("**/*", self._route)
        context.on("page", self.attach_page)
        for page in context.pages:
            self.attach_page(page)

    def attach_page(self, page: Page) -> None:
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.page_errors.append(f"{exc.name}: {exc.message}"))
        page.on("response", self._response)
        page.on("requestfailed", self._request_failed)

    def problems(self) -> list[str]:
        return (
            [f"request outside the site's origin: {u}" for u in self.foreign]
            + [f"console error: {m}" for m in self.console_errors]
            + [f"uncaught exception: {m}" for m in self.page_errors]
            + [f"failed request: {m}" for m in self.failed]
        )

    def assert_clean(self, where: str = "") -> None:
        problems = self.problems()
        assert not problems, f"{where}:\n  " + "\n  ".join(problems)

    def clear(self) -> None:
        for bucket in (self.foreign, self.console_errors, self.page_errors, self.failed, self.aborted):
            bucket.clear()


def new_watched_context(
    browser: Browser, args: dict[str, Any], allowed: tuple[str, ...], **extra: Any
) -> tuple[BrowserContext, PageWatch]:
    """A context of its own (other viewport, file:// origin, ...), routed and watched."""
    context = browser.new_context(**{**args, **extra})
    context.set_default_timeout(TIMEOUT_MS)
    watch = PageWatch(allowed=allowed)
    watch.attach(context)
    return context, watch


def settle(page: Page) -> None:
    """Wait until what a reader would see is final: loaded, images decoded, web fonts ready, the
    charts in view drawn (charts.js loads uPlot and chart data when a chart comes near), and every
    block a run page draws only when the reader comes near it (obs.js `drawAllLater`) drawn, as
    after a reader went through the whole page: what the tests check is then all there.
    test_run_page.py's test of those blocks opens pages without this."""
    page.wait_for_load_state("load")
    page.evaluate("() => window.obs && window.obs.drawAllLater && window.obs.drawAllLater()")
    page.evaluate(
        """async () => {
             await Promise.all([...document.images].map(img => img.decode().catch(() => null)));
             await document.fonts.ready;
           }"""
    )
    # With chart script on the page: two frames first, since IntersectionObserver reports (which start
    # chart loads) come after a rendering step, so a check made at once can pass before the first load
    # has begun (seen as ERR_ABORTED on uPlot when a test moved to the next page); a timer too, since a
    # page in the background gets no frames and evaluate() has no timeout. With JavaScript off no timer
    # or frame callback ever runs, and there is no chart script to wait for.
    if page.evaluate("() => !!window.obsCharts"):
        page.evaluate(
            "() => new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 250); })"
        )
        page.wait_for_function("() => !window.obsCharts.busy()")


def wait_until(page: Page, condition: Callable[[], bool], what: str, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait until `condition()` (a check on what the test's event handlers recorded) holds, letting
    Playwright deliver events meanwhile: a deadline instead of a fixed pause, which a loaded machine
    outruns."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_ms / 1000:.0f} s for {what}")
        page.wait_for_timeout(20)


def next_frame(page: Page) -> None:
    """Wait for the page's next two animation frames: work a handler put off to the next frame is done."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def steady_box(page: Page, locator: Any, timeout_ms: int = TIMEOUT_MS) -> dict[str, float]:
    """`locator`'s box once two measurements two frames apart agree: a pointer aimed at a box measured while
    something above it was still being drawn (a chart whose data just loaded) lands elsewhere on a loaded
    machine."""
    last: dict[str, float] | None = None
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        box = locator.bounding_box()
        if box is not None and box == last:
            return box
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_ms / 1000:.0f} s for {locator} to stop moving")
        last = box
        next_frame(page)


def add_css_rule(page: Page, rule: str) -> None:
    """Serve the site's own obs.css with one more rule at its end (no inline style: the CSP holds)."""

    def handle(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response, body=response.text() + "\n" + rule + "\n")

    page.route("**/assets/obs.css", handle)
