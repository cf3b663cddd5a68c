"""`obs serve`: a local preview that rebuilds when the sources change.

The site is built with the normal pipeline (incremental, so a rebuild after one edited run costs
that run plus the index pages), served from 127.0.0.1 only by the standard library's HTTP server,
and the source tree and templates are polled for changed sizes and modification times. Polling
needs no dependency and works the same on every file system; a preview can afford a second.

The build swaps the new site in with a rename, so a request never sees a half-written site: it is
answered from the old folder or the new one.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

from obs.build import BuildOptions, BuildResult, build_site
from obs.cache import cache_dir_for
from obs.publish.extras import PublishExtras
from obs.resources import templates_dir
from obs.write import OutputError


class _Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")  # a preview: always the latest build
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def fingerprint(folders: list[Path], skip: set[Path]) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every visible file under `folders`, `skip` folders excluded."""
    out: dict[str, tuple[int, int]] = {}
    skipped = {str(p) for p in skip}
    for top in folders:
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if not d.startswith(".") and os.path.join(folder, d) not in skipped]
            for name in files:
                if name.startswith("."):
                    continue
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                out[path] = (st.st_size, st.st_mtime_ns)
    return out


def _build(opts: BuildOptions) -> BuildResult | None:
    started = time.perf_counter()
    try:
        result = build_site(opts, [PublishExtras()])
    except OutputError:
        raise
    except Exception as exc:  # keep serving the last good site
        print(f"obs serve: build failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return None
    for d in result.diagnostics:
        if d.severity != "info":
            print(d.format(), file=sys.stderr)
    print(
        f"obs serve: built {result.runs} runs ({result.built} rebuilt), {result.errors} errors, "
        f"{result.warnings} warnings in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    return result


def serve(source: Path, out: Path | None, port: int, interval: float = 1.0, jobs: int | None = None) -> int:
    root = source.resolve()
    if not root.is_dir():
        print(f"obs serve: {source}: source folder does not exist", file=sys.stderr)
        return 2
    scratch = None
    if out is None:
        scratch = Path(tempfile.mkdtemp(prefix="obs-serve-"))
        out = scratch / "site"
    opts = BuildOptions(source=root, out=out, quiet=True, jobs=jobs)
    watched = [root, templates_dir()]
    skip = {out.resolve(), cache_dir_for(out).parent}
    try:
        _build(opts)
    except OutputError as exc:
        print(f"obs serve: {exc}", file=sys.stderr)
        return 2
    handler = functools.partial(_Handler, directory=str(out.resolve()))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        print(f"obs serve: cannot listen on 127.0.0.1:{port}: {exc.strerror}", file=sys.stderr)
        return 2
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    print(f"obs serve: http://127.0.0.1:{server.server_address[1]}/index.html (Ctrl-C to stop)", flush=True)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    seen = fingerprint(watched, skip)
    try:
        while True:
            time.sleep(interval)
            now = fingerprint(watched, skip)
            if now != seen:
                print("obs serve: sources changed, rebuilding", flush=True)
                _build(opts)
                seen = fingerprint(watched, skip)
    except KeyboardInterrupt:
        print("obs serve: stopped", flush=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.shutdown()
        server.server_close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)  # the site and its build cache
    return 0
