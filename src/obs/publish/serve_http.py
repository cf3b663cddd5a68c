"""The HTTP side of `obs serve`: only the published version's regular files, to this machine only.

A preview server still faces a browser that visits other sites, so it answers only what a reader of
the built site needs and nothing an attacker could use:

* **only regular files inside the published version**: no directory listings, no symbolic link
  followed (a link placed in the output folder is carried into each version by the build, and must
  not make the server answer with `/etc/passwd`), no path outside the version;
* **only requests addressed to it**: the `Host` header must name the loopback address or
  `localhost` (a page on another site that rebinds its DNS name to 127.0.0.1 sends its own name);
* **bounded**: each connection has a socket timeout and at most `MAX_CONNECTIONS` are served at once,
  one more being closed at once (idle sockets cannot pile up into thousands of threads, nor queue
  ahead of a reader's request), and a client that goes away mid-answer (a reload, a closed tab) is
  not an error worth a traceback;
* **live reload**: every HTML page it serves gets one more script, `/__obs/live.js`, which asks for
  `/__obs/stamp.js` (the name of the published version) every `POLL_MS` and reloads the page when a
  new build is published. The site on disk holds no such script: opened from a file, nothing polls.
  The pages' policy allows scripts from their own origin only and no `fetch()` (`connect-src 'none'`),
  so the stamp is a script that calls the reloader, not a document it fetches.
"""

from __future__ import annotations

import http.server
import mimetypes
import os
import posixpath
import re
import stat
import sys
import threading
import urllib.parse
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from obs.sanitize import visible

SOCKET_TIMEOUT_S = 15.0
MAX_CONNECTIONS = 32  # served at once; one more is closed at once (waiting would let a flood of idle
# sockets queue ahead of a reader's request for as long as each takes to time out)
POLL_MS = 1000
LIVE_PREFIX = "/__obs/"
# The reloader: the stamp it was served with is in its own URL; each poll adds a script that calls back.
LIVE_JS = """(function () {
  "use strict";
  var me = document.currentScript;
  var first = me ? new URL(me.src).searchParams.get("v") : null;
  var n = 0;
  window.OBS_LIVE_STAMP = function (stamp) {
    if (first !== null && stamp && stamp !== first) { window.location.reload(); }
  };
  function poll() {
    var s = document.createElement("script");
    s.src = "/__obs/stamp.js?n=" + (n++);
    s.onload = s.onerror = function () { s.remove(); window.setTimeout(poll, POLL_MS); };
    document.head.appendChild(s);
  }
  window.setTimeout(poll, POLL_MS);
})();
""".replace("POLL_MS", str(POLL_MS))
ALLOWED_HOSTS = ("127.0.0.1", "localhost")
_HOST = re.compile(r"^(?P<name>\[[^\]]*\]|[^:]*)(?::(?P<port>\d+))?$")
_HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)


def host_allowed(header: str | None, port: int) -> bool:
    """Whether a Host header names this server (absent: an HTTP/1.0 client, which a browser never is)."""
    if header is None:
        return True
    m = _HOST.match(header.strip().lower())
    if m is None or m.group("name") not in ALLOWED_HOSTS:
        return False
    return m.group("port") is None or int(m.group("port")) == port


def regular_file_inside(top: str, url_path: str) -> str | None:
    """The regular file `url_path` names inside `top` (a folder's index.html for a folder), or None.

    Every component is checked with lstat: a symbolic link anywhere on the way is refused, as are
    `..`, device files, FIFOs and sockets.
    """
    path = posixpath.normpath(urllib.parse.unquote(url_path.split("?", 1)[0].split("#", 1)[0]))
    parts = [p for p in path.split("/") if p and p != "."]
    if any(p == ".." or "\0" in p or os.sep in p for p in parts):
        return None
    current = top
    for part in parts:
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except (OSError, ValueError):
            return None
        if stat.S_ISLNK(st.st_mode):
            return None
    try:
        st = os.lstat(current)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        current = os.path.join(current, "index.html")
        try:
            st = os.lstat(current)
        except OSError:
            return None
    return current if stat.S_ISREG(st.st_mode) else None


def with_reloader(page: bytes, stamp: str) -> bytes:
    """An HTML page with the reloader's script before `</head>` (unchanged when it has none)."""
    tag = f'<script src="{LIVE_PREFIX}live.js?v={urllib.parse.quote(stamp)}" defer></script>\n'.encode()
    m = _HEAD_END.search(page)
    return page if m is None else page[: m.start()] + tag + page[m.start() :]


class PreviewHandler(http.server.BaseHTTPRequestHandler):
    """GET and HEAD of the published version's files, the reloader and its stamp; nothing else."""

    server: PreviewServer
    timeout = SOCKET_TIMEOUT_S
    protocol_version = "HTTP/1.0"  # one request per connection: no idle keep-alive sockets
    server_version = "obs-serve"
    sys_version = ""

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _answer(self, *, head: bool) -> None:
        if not host_allowed(self.headers.get("Host"), self.server.server_address[1]):
            self._send(HTTPStatus.MISDIRECTED_REQUEST, b"obs serve answers requests for 127.0.0.1 only\n", "text/plain")
            return
        url_path = urllib.parse.urlsplit(self.path).path
        top, stamp = self.server.published()
        if url_path.startswith(LIVE_PREFIX):
            name = url_path[len(LIVE_PREFIX) :]
            if name == "live.js":
                self._send(HTTPStatus.OK, LIVE_JS.encode(), "text/javascript", head=head)
            elif name == "stamp.js":
                body = f"window.OBS_LIVE_STAMP && window.OBS_LIVE_STAMP({stamp!r});\n".encode()
                self._send(HTTPStatus.OK, body, "text/javascript", head=head)
            else:
                self._not_found(head)
            return
        path = regular_file_inside(top, url_path) if top else None
        if top is None or path is None:
            self._not_found(head)
            return
        if os.path.isdir(os.path.join(top, url_path.lstrip("/"))) and not url_path.endswith("/"):
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)  # relative links in the folder's page need the slash
            self.send_header("Location", url_path + "/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        try:
            with open(path, "rb") as fh:
                body = fh.read()
        except OSError:
            self._not_found(head)
            return
        ctype = self.server.guess_type(path)
        if ctype == "text/html" and stamp:
            body = with_reloader(body, stamp)
        self._send(HTTPStatus.OK, body, ctype, head=head)

    def _not_found(self, head: bool) -> None:
        self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain", head=head)

    def _send(self, status: HTTPStatus, body: bytes, ctype: str, *, head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype + ("; charset=utf-8" if ctype.startswith("text/") else ""))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")  # a preview: always the latest build
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class PreviewServer(http.server.ThreadingHTTPServer):
    """A threading server with a bound on concurrent connections and quiet client aborts."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog (socketserver's default of 5 makes connecting clients wait)

    def __init__(self, address: tuple[str, int], published: Callable[[], tuple[str | None, str]]) -> None:
        super().__init__(address, PreviewHandler)
        self.published = published
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._types = http.server.SimpleHTTPRequestHandler.extensions_map | {".js": "text/javascript"}

    def guess_type(self, path: str) -> str:
        ext = posixpath.splitext(path)[1].lower()
        return self._types.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):  # every slot busy: drop this one, keep serving
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away or fell silent is normal; anything else is one line, never a traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        print(f"obs serve: a request failed: {type(exc).__name__}: {visible(str(exc)[:200])}", file=sys.stderr)
