"""Issue 24: a page open in `obs serve` reloads itself after a rebuild, with the page's own CSP in force
(no fetch: the reloader polls a stamp script), and a page opened from disk holds no reloader."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from browserkit import new_watched_context
from playwright.sync_api import Browser

WAIT_S = 120


def _lines(proc: subprocess.Popen[str], into: queue.Queue[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        into.put(line)


def test_the_open_page_reloads_after_a_rebuild(
    browser: Browser, browser_context_args: dict[str, Any], tmp_path: Path
) -> None:
    src = tmp_path / "src" / "r1"
    src.mkdir(parents=True)
    (src / "run.yaml").write_text("id: r1\ntitle: Before the edit\nstatus: finished\n")
    (src / "metrics.jsonl").write_text('{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.4}\n')
    out = tmp_path / "site"
    proc = subprocess.Popen(
        [sys.executable, "-m", "obs.cli", "serve", str(src.parent), "-o", str(out), "--port", "0", "--interval", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(proc, lines), daemon=True).start()
    context = None
    try:
        base = None
        deadline = time.monotonic() + WAIT_S
        while base is None and time.monotonic() < deadline:
            try:
                m = re.search(r"(http://127\.0\.0\.1:\d+)/index\.html", lines.get(timeout=1))
            except queue.Empty:
                assert proc.poll() is None, "obs serve exited"
                continue
            base = m.group(1) if m else None
        assert base, "obs serve never said where it serves"
        context, watch = new_watched_context(browser, browser_context_args, allowed=(base + "/", "data:"))
        page = context.new_page()
        page.goto(base + "/runs/r1/index.html")
        assert "Before the edit" in page.inner_text("body")
        page.evaluate("() => { window.notReloaded = true; }")  # gone when the page reloads
        (src / "run.yaml").write_text("id: r1\ntitle: After the edit\nstatus: finished\n")
        page.wait_for_function("() => document.body.innerText.includes('After the edit')", timeout=WAIT_S * 1000)
        assert page.evaluate("() => window.notReloaded === undefined")
        watch.assert_clean("live reload")
    finally:
        if context is not None:
            context.close()
        proc.terminate()
        proc.wait(timeout=30)
    assert "live.js" not in (out / "runs" / "r1" / "index.html").read_text()  # from disk: nothing polls
