"""`obs serve`: a local preview that rebuilds when the sources change.

The site is built with the normal pipeline (incremental, so a rebuild after one edited run costs
that run plus the index pages), served from 127.0.0.1 only by the standard library's HTTP server,
and the source tree and templates are polled for changed sizes and modification times. Polling
needs no dependency and works the same on every file system; a preview can afford a second.

The build publishes the new site by switching the output's link in one rename (obs.write), and the
server resolves the link once per request, so a request never sees a half-written site: it is answered
from the old version or the new one. What the server answers, and to whom, is `serve_http.py`'s: only
the version's regular files, to requests addressed to this machine, with the page reloading itself
when a new version is published.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from obs.build import BuildOptions, BuildResult, build_site
from obs.cache import cache_dir_for
from obs.numbers import plural
from obs.publish.extras import PublishExtras
from obs.publish.serve_http import PreviewServer
from obs.resources import templates_dir
from obs.write import OutputError, check_output_location, output_location, output_lock, versions_dir


class _Published:
    """The published version of an output, resolved at each request (None until the first build)."""

    def __init__(self) -> None:
        self.out: Path | None = None

    def __call__(self) -> tuple[str | None, str]:
        if self.out is None:
            return None, ""
        top = os.path.realpath(output_location(self.out))
        return (top, os.path.basename(top)) if os.path.isdir(top) else (None, "")


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


def _build(opts: BuildOptions, *, first: bool = False) -> BuildResult | None:
    started = time.perf_counter()
    try:
        result = build_site(opts, [PublishExtras()])
    except OutputError as exc:  # a rebuild that would empty the site: keep serving the last one
        if first:
            raise
        print(f"obs serve: build refused: {exc}", file=sys.stderr, flush=True)
        return None
    except Exception as exc:  # keep serving the last good site
        print(f"obs serve: build failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return None
    for d in result.diagnostics:
        if d.severity != "info":
            print(d.format(), file=sys.stderr)
    print(
        f"obs serve: built {plural(result.runs, 'run')} ({result.built} rebuilt), {plural(result.errors, 'error')}, "
        f"{plural(result.warnings, 'warning')} in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    return result


def serve(
    source: Path, out: Path | None, port: int, interval: float = 1.0, jobs: int | None = None, *, force: bool = False
) -> int:
    """Serve OUT (a temporary folder by default), rebuilding it while the sources change.

    The port is taken first, so a busy port ends here before anything is built or created. The
    output's lock is held for as long as the preview runs: a concurrent `obs build` into the same
    output is refused with a message, never mixed with this one. Every way out (Ctrl-C, SIGTERM,
    a refused output, an error) removes the temporary folder; cli.main prints the one line.
    """
    root = source.resolve()
    try:
        published = _Published()
        server = PreviewServer(("127.0.0.1", port), published)
    except OSError as exc:
        print(f"obs serve: cannot listen on 127.0.0.1:{port}: {exc.strerror}", file=sys.stderr)
        return 2
    scratch = None
    thread: threading.Thread | None = None
    try:
        if out is None:
            scratch = Path(tempfile.mkdtemp(prefix="obs-serve-"))
            out = scratch / "site"
        opts = BuildOptions(source=root, out=out, quiet=True, jobs=jobs, force=force)
        try:
            check_output_location(root, out)  # before the lock makes a folder beside it
            with output_lock(out, holder="obs serve"):
                watched, skip = _watched(opts, root)
                seen = fingerprint(watched, skip)  # before the build: a change made during it is a change
                _build(opts, first=True)
                published.out = out  # the link: each request sees the latest build
                thread = threading.Thread(target=server.serve_forever, daemon=True)
                thread.start()
                url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
                print(f"obs serve: {url} (Ctrl-C to stop)", flush=True)
                _watch(opts, watched, skip, seen, interval)
        except OutputError as exc:
            print(f"obs serve: {exc}", file=sys.stderr)
            return 2
    finally:
        if thread is not None:
            server.shutdown()
        server.server_close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)  # the site, its versions and its build cache
    return 0


def _watched(opts: BuildOptions, root: Path) -> tuple[list[Path], set[Path]]:
    """The folders whose files are watched (sources, templates) and the output folders inside them."""
    loc = output_location(opts.out)
    return [root, templates_dir()], {loc, versions_dir(loc), cache_dir_for(opts.out).parent}


def _watch(
    opts: BuildOptions, watched: list[Path], skip: set[Path], seen: dict[str, tuple[int, int]], interval: float
) -> None:
    """Rebuild after every change of the sources or the templates, until interrupted.

    Each fingerprint is taken before the build it leads to, never after: a file saved while a
    build runs (or while the first one starts serving) is seen by the next poll, not lost.
    """
    while True:
        time.sleep(interval)
        now = fingerprint(watched, skip)
        if now != seen:
            print("obs serve: sources changed, rebuilding", flush=True)
            seen = now
            _build(opts)
