"""obs serve: serves the built site on 127.0.0.1 and rebuilds after a source change."""

from __future__ import annotations

import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPORTS = Path(__file__).resolve().parents[2] / "reports"
WAIT_S = 120  # an upper bound for slow machines, not a speed requirement


def _lines(proc: subprocess.Popen[str], into: queue.Queue[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        into.put(line)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:  # a local test server
        return r.read().decode()


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_serve_builds_serves_and_rebuilds(tmp_path: Path) -> None:
    src = tmp_path / "reports"
    shutil.copytree(REPORTS, src)
    out = tmp_path / "site"
    proc = subprocess.Popen(
        [sys.executable, "-m", "obs.cli", "serve", str(src), "-o", str(out), "--port", "0", "--interval", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(proc, lines), daemon=True).start()
    try:
        url = None
        deadline = time.monotonic() + WAIT_S
        while url is None and time.monotonic() < deadline:
            try:
                m = re.search(r"(http://127\.0\.0\.1:\d+)/index\.html", lines.get(timeout=1))
            except queue.Empty:
                assert proc.poll() is None, "obs serve exited"
                continue
            url = m.group(1) if m else None
        assert url, "obs serve never said where it serves"
        index = _get(url + "/index.html")
        assert "Keyed scene DSL v3 baseline" in index and "Content-Security-Policy" in index
        assert '<script src="/__obs/live.js?v=site.' in index  # the live reloader, added by the server only
        stamp = _get(url + "/__obs/stamp.js")
        (out / "passwd").symlink_to("/etc/passwd")  # a link placed in the published version
        (out / "here.txt").write_text("a user's file\n")

        run_yaml = src / "spec03/r1/run.yaml"
        run_yaml.write_text(run_yaml.read_text().replace("Keyed scene DSL v3 baseline", "Renamed while serving"))
        while time.monotonic() < deadline:
            if "Renamed while serving" in _get(url + "/index.html"):
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the site was not rebuilt after the source changed")
        assert "Renamed while serving" in _get(url + "/runs/spec03-r1/index.html")
        assert _get(url + "/__obs/stamp.js") != stamp  # what makes an open page reload itself
        assert _status(url + "/passwd") == 404  # carried into the new version, never followed
        assert _status(url + "/runs/") == 404  # no listings
        assert "live.js" not in (out / "index.html").read_text()  # opened from disk: nothing polls
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.returncode == 143  # SIGTERM stops it cleanly, with the conventional 128 + 15
    assert (out / "index.json").is_file()
