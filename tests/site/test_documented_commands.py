"""Every shell command in README.md and docs/*.md runs as written, in a copy of the repository's demo.

A reader follows the documents literally; so does this test. Each fenced `bash`/`sh` block is split
into commands, and each command is run in a fresh workspace (tests/site/doccommands.py) with `obs`
running this checkout. A command that cannot run here is in SKIP with the reason; one that needs a
stand-in (a placeholder path, a port other tests may hold) is rewritten by SUBSTITUTE, the rewrite
kept as small as the stand-in needs. A new command in a document is run by this test the day it is
written. The GitHub workflows in docs/publishing.md are replayed by test_publishing_workflows.py.
"""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from doccommands import Command, shell_commands, workspace

WAIT_S = 600  # an upper bound for a loaded machine, not a speed requirement

SKIP = {
    r"^make test\b": "the whole test suite, this test among them",
    r"^pip install \.": "installs into the Python running the tests; tests/site/test_packaging.py builds the wheel",
    r"^\.venv/bin/python bench/": "the benchmark: writes a 1.1 GB corpus and builds it for minutes; run by hand",
    r"^make browser\b|^\.venv/bin/pytest -q tests/browser": "the browser test suite itself",
    r"^make snapshots\b": "re-takes the reference screenshots in the repository on purpose",
    r"^make check-site\b": "needs Java and npm packages (make check-site-tools); .ci/run runs it on every CI run",
    r"^pip install ('dask\[distributed\]'|s3fs)": "installs into the Python running the tests; the dev extra has it",
    r"--dask tcp://": "needs a running Dask scheduler; tests/site/test_dask_build.py builds on one in this process",
    r"--dask local": "tests/site/test_dask_build.py runs this command on the demo (a LocalCluster of 2 processes)",
    r"^(obs build|export) .*s3://|^export AWS_": "needs a bucket; tests/site/test_object_store.py builds from one "
    "(SeaweedFS's S3 gateway on loopback)",
}

SUBSTITUTE = [
    (r"path/to/runs", "reports"),  # the README's placeholder for the reader's own runs: the demo
    (r"^make demo\b", "make demo VENV=.venv-docs"),  # obs is installed in the stand-in venv already
]

PREPARE = {  # what a command assumes the reader has already (the document says where it comes from)
    r"--compare-to old-site/": "obs build reports -o old-site -q",
}

AFTER = {  # what each command must have left, beyond exit status 0 and no traceback
    r"^make demo\b": ["site/index.html"],
    r"^obs build path/to/runs -o site": ["site/index.html"],
    r"^obs summary spec03-r2 reports -o summary.md": ["summary.md"],
    r"--single-file spec03-r2 -o report.html": ["report.html"],
    r"--compare-to old-site/": ["site/changes.html"],
    r"^obs decide spec03-r2 reports": ["reports/decisions.jsonl"],
}

COMMANDS = shell_commands()


def rewrite(text: str) -> str:
    for pattern, replacement in SUBSTITUTE:
        text = re.sub(pattern, replacement, text)
    return text


def matching(table: dict[str, object], text: str) -> list[object]:
    return [value for pattern, value in table.items() if re.search(pattern, text)]


def run(ws: Path, env: dict[str, str], text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail\n{text}"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )


def serve(ws: Path, env: dict[str, str], text: str) -> None:
    """`obs serve ... --port 8000`: on a port of its own choosing (other tests may hold 8000); the page it
    names must be served; Ctrl-C stops it with 130."""
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {text.replace('--port 8000', '--port 0')}"],
        cwd=ws,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout or []], daemon=True).start()
    try:
        deadline, url, seen = time.monotonic() + WAIT_S, None, []
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                seen.append(lines.get(timeout=1))
            except queue.Empty:
                continue
            m = re.search(r"(http://127\.0\.0\.1:\d+/index\.html)", seen[-1])
            url = m.group(1) if m else None
        assert url, "obs serve never said where it serves:\n" + "".join(seen)
        with urllib.request.urlopen(url, timeout=30) as response:  # a local test server
            assert response.status == 200 and b"<html" in response.read(2000).lower()
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=WAIT_S)
    assert code == 130


@pytest.mark.parametrize("command", COMMANDS, ids=[c.where for c in COMMANDS])
def test_the_documented_command_runs(command: Command, tmp_path: Path) -> None:
    reasons = matching(SKIP, command.text)
    if reasons:
        pytest.skip(f"{command.where}: {reasons[0]}")
    ws, env = workspace(tmp_path)
    for setup in matching(PREPARE, command.text):
        assert run(ws, env, str(setup)).returncode == 0
    text = rewrite(command.text)
    if re.match(r"obs serve\b", text):
        serve(ws, env, text)
        return
    proc = run(ws, env, text)
    assert proc.returncode == 0, f"{command.where}: `{text}` exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr
    for files in matching(AFTER, command.text):
        for rel in files:  # type: ignore[attr-defined]
            assert (ws / rel).exists(), f"{command.where}: `{text}` left no {rel}"


def test_every_skip_and_stand_in_is_still_used() -> None:
    """A rule for a command no document has any more is dead weight that could hide the next one."""
    texts = [c.text for c in COMMANDS]
    for table in (SKIP, dict(SUBSTITUTE), PREPARE, AFTER):
        for pattern in table:
            assert any(re.search(pattern, t) for t in texts), f"no documented command matches {pattern!r}"


def test_the_documents_hold_the_commands_a_reader_needs() -> None:
    """The extraction itself: the README's set-up and build commands are among those found and run."""
    texts = [c.text for c in COMMANDS]
    assert any(t.startswith("make demo") for t in texts)
    assert any(t.startswith("obs build path/to/runs -o site") for t in texts)
    decide = next(c for c in COMMANDS if c.text.startswith("obs decide"))
    assert "--rationale" in decide.text and "--by mkarim" in decide.text  # a continued line is one command
