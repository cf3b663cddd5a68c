"""Build several small source trees one after another in one process, as `obs build` builds each.

    python tests/site/build_many.py SRC OUT [SRC OUT ...]

For the bad-input test's trees that differ only in a file at their top (obs.yaml, decisions.jsonl):
a process per tree would spend most of its time importing. Each build is `obs build SRC -o OUT -j 1`
through `obs.cli.main`, its stderr captured; anything that escapes it is printed as the traceback a
user would have seen. One JSON line per build on stdout: exit code, seconds, stderr, and the
process's peak RSS so far (ru_maxrss: the largest any build needed, since builds run in turn).
"""

from __future__ import annotations

import contextlib
import io
import json
import resource
import sys
import time
import traceback

from obs.cli import main


def build(source: str, out: str) -> dict[str, object]:
    err = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        try:
            code = main(["build", source, "-o", out, "-j", "1"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
    return {
        "source": source,
        "code": code,
        "seconds": time.perf_counter() - start,
        "stderr": err.getvalue(),
        "peak_mb": peak_mb(),
    }


def peak_mb() -> float:
    """This process's peak RSS so far. On Linux from /proc (VmHWM, the peak of this program's own memory):
    ru_maxrss also keeps the peak of the process that started it, from before exec() (a long pytest run)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 / 1024 if sys.platform == "darwin" else peak / 1024


if __name__ == "__main__":
    pairs = sys.argv[1:]
    for src, dst in zip(pairs[::2], pairs[1::2], strict=True):
        print(json.dumps(build(src, dst)), flush=True)
