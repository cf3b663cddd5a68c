"""obs serve's HTTP side (issue 31): only regular files inside the published version, only to requests
addressed to 127.0.0.1, bounded connections, quiet client aborts, and the live reloader (issue 24)."""

from __future__ import annotations

import http.client
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from obs.publish import serve_http
from obs.publish.serve_http import PreviewServer, host_allowed, regular_file_inside, with_reloader

PAGE = b"<!doctype html><html><head><title>t</title></head><body>hi</body></html>"


class Site:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.stamp = "site.aaa"

    def published(self) -> tuple[str | None, str]:
        return str(self.root / self.stamp), self.stamp


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Site, PreviewServer, int]]:
    s = Site(tmp_path)
    top = tmp_path / s.stamp
    (top / "runs" / "r1").mkdir(parents=True)
    (top / "index.html").write_bytes(PAGE)
    (top / "runs" / "r1" / "index.html").write_bytes(PAGE)
    (top / "runs" / "r1" / "curves.js").write_text("OBS_DATA.push(1);\n")
    (top / "empty").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n")
    (top / "passwd").symlink_to(secret)
    (top / "linked").symlink_to(top / "runs")
    os.mkfifo(top / "fifo")
    server = PreviewServer(("127.0.0.1", 0), s.published)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield s, server, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def get(port: int, path: str, host: str | None = None) -> tuple[int, bytes, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Host": host} if host is not None else {}
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body, dict(r.getheaders())


def test_serves_regular_files_and_folder_pages(site: tuple[Site, PreviewServer, int]) -> None:
    _, _, port = site
    status, body, headers = get(port, "/runs/r1/curves.js")
    assert status == 200 and body == b"OBS_DATA.push(1);\n"
    assert headers["Content-Type"].startswith("text/javascript")
    assert get(port, "/runs/r1/")[0] == 200
    status, _, headers = get(port, "/runs/r1")
    assert status == 301 and headers["Location"] == "/runs/r1/"


@pytest.mark.parametrize(
    "path",
    [
        "/passwd",
        "/linked/r1/index.html",
        "/empty/",
        "/runs/",
        "/fifo",
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/runs/..%2f..%2fsecret.txt",
        "/nothing.html",
        "/%00",
    ],
)
def test_links_listings_special_files_and_traversal_are_not_served(
    site: tuple[Site, PreviewServer, int], path: str
) -> None:
    _, _, port = site
    status, body, _ = get(port, path)
    assert status == 404, (path, status)
    assert b"secret" not in body and b"Directory listing" not in body


def test_regular_file_inside_refuses_links_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("x")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert regular_file_inside(str(tmp_path), "/a/f.txt") == str(tmp_path / "a" / "f.txt")
    assert regular_file_inside(str(tmp_path), "/b/f.txt") is None


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        ("127.0.0.1:8000", True),
        ("localhost:8000", True),
        ("LOCALHOST", True),
        (None, True),
        ("evil.example:8000", False),
        ("127.0.0.1:9000", False),
        ("127.0.0.1.evil.example:8000", False),
        ("", False),
    ],
)
def test_host_header(header: str | None, ok: bool) -> None:
    assert host_allowed(header, 8000) is ok


def test_a_request_for_another_host_is_refused(site: tuple[Site, PreviewServer, int]) -> None:
    """DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 sends its own name."""
    _, _, port = site
    assert get(port, "/index.html", host=f"evil.example:{port}")[0] == 421
    assert get(port, "/index.html", host=f"localhost:{port}")[0] == 200


def test_pages_get_the_reloader_and_the_stamp_follows_the_published_version(
    site: tuple[Site, PreviewServer, int],
) -> None:
    s, _, port = site
    _, body, _ = get(port, "/index.html")
    assert b'<script src="/__obs/live.js?v=site.aaa" defer></script>\n</head>' in body
    _, js, _ = get(port, "/runs/r1/curves.js")
    assert b"live.js" not in js  # only HTML pages
    status, live, _ = get(port, "/__obs/live.js")
    assert status == 200 and b"location.reload" in live
    assert get(port, "/__obs/stamp.js")[1] == b"window.OBS_LIVE_STAMP && window.OBS_LIVE_STAMP('site.aaa');\n"
    (s.root / "site.bbb").mkdir()
    (s.root / "site.bbb" / "index.html").write_bytes(PAGE)
    s.stamp = "site.bbb"
    assert b"'site.bbb'" in get(port, "/__obs/stamp.js")[1]
    assert get(port, "/__obs/other")[0] == 404


def test_with_reloader_leaves_a_page_without_head_alone() -> None:
    assert with_reloader(b"<p>no head</p>", "v") == b"<p>no head</p>"


def test_a_client_that_goes_away_prints_no_traceback(
    site: tuple[Site, PreviewServer, int], capfd: pytest.CaptureFixture[str]
) -> None:
    s, _, port = site
    (s.root / s.stamp / "big.bin").write_bytes(b"x" * (8 << 20))
    for _ in range(5):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET /big.bin HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        sock.recv(10)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # reset
        sock.close()
    time.sleep(0.5)
    assert get(port, "/index.html")[0] == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception" not in err, err


def test_idle_connections_time_out_and_are_bounded(
    site: tuple[Site, PreviewServer, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 idle sockets must not become 2,000 threads, nor keep the server from answering for long."""
    _, server, port = site
    monkeypatch.setattr(serve_http.PreviewHandler, "timeout", 0.5)
    server.slots = threading.BoundedSemaphore(4)
    before = threading.active_count()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(200)]
    try:
        time.sleep(0.3)
        assert threading.active_count() - before <= 4
        started = time.monotonic()
        while True:  # the idle ones are dropped or time out; a reader's request is answered soon after
            try:
                if get(port, "/index.html")[0] == 200:
                    break
            except (ConnectionError, http.client.HTTPException):
                pass
            assert time.monotonic() - started < 10, "the server stayed busy"
            time.sleep(0.1)
        assert idle[0].recv(1) == b""  # the server closed the idle socket
    finally:
        for sock in idle:
            sock.close()
