"""Helpers for the fault tests: a small source tree, obs as a real process, pausing it at a named
step (OBS_TEST_PAUSE_AT, see obs.write.fault_point) and killing it there, and what a site holds."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

WAIT_S = 120  # an upper bound for slow shared machines, not a speed requirement
PAUSED = "obs: paused at "


def make_source(root: Path, runs: int = 4, *, tag: str = "") -> Path:
    """A ladder of `runs` runs, each the baseline of the next, with curves and a 40-case probe.

    Small enough to build in about a second, but every page but the first depends on its
    baseline's digest: results mixed from two builds show as a changed delta.
    """
    root.mkdir(parents=True, exist_ok=True)
    for i in range(runs):
        folder = root / f"r{i}"
        folder.mkdir(exist_ok=True)
        lines = [f"id: r{i}", f"title: run {i}{tag}", "status: finished", "date: 2026-01-0" + str(i % 9 + 1)]
        if i:
            lines.append(f"baseline: r{i - 1}")
        (folder / "run.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        with (folder / "metrics.jsonl").open("w", encoding="utf-8") as fh:
            for step in range(0, 200, 10):
                fh.write(json.dumps({"step": step, "loss": 2.0 / (1 + step / 50) + i * 0.01}) + "\n")
        with (folder / "probe.jsonl").open("w", encoding="utf-8") as fh:
            for case in range(40):
                exact = (case * 7 + i * 3) % 10 < 5 + i
                fh.write(json.dumps({"id": f"c{case}", "split": "test", "family": f"f{case % 3}", "exact": exact}))
                fh.write("\n")
    return root


def obs_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "obs.cli", *args]


def run_obs(
    *args: str, env: dict[str, str] | None = None, prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, *obs_command(*args)],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        env={**os.environ, **(env or {})},
    )


class Obs:
    """obs in its own process group (as a shell runs it), its stderr read line by line."""

    def __init__(
        self, *args: str, pause: str | None = None, env: dict[str, str] | None = None, prefix: tuple[str, ...] = ()
    ) -> None:
        extra = {"OBS_TEST_PAUSE_AT": pause} if pause else {}
        self.proc = subprocess.Popen(
            [*prefix, *obs_command(*args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            env={**os.environ, **(env or {}), **extra},
        )
        self.err: list[str] = []
        self.out: list[str] = []
        self._lines: queue.Queue[tuple[str, str | None]] = queue.Queue()
        for name, stream in (("err", self.proc.stderr), ("out", self.proc.stdout)):
            threading.Thread(target=self._read, args=(name, stream), daemon=True).start()

    def _read(self, name: str, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self._lines.put((name, line))
        self._lines.put((name, None))

    def wait_for(self, text: str, timeout: float = WAIT_S) -> str:
        """Wait for a line containing `text` on stdout or stderr; fail if the process ends first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                name, line = self._lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if line is None:
                continue
            (self.err if name == "err" else self.out).append(line)
            if text in line:
                return line
        raise AssertionError(f"never saw {text!r}; stderr so far: {''.join(self.err)}")

    def paused(self, step: str) -> None:
        self.wait_for(PAUSED + step)

    def signal_group(self, sig: int) -> None:
        """As a terminal does for Ctrl-C: every process of the group (workers included) gets it."""
        os.killpg(self.proc.pid, sig)

    def finish(self, timeout: float = WAIT_S) -> int:
        code = self.proc.wait(timeout=timeout)
        deadline = time.monotonic() + 5
        ended = 0
        while ended < 2 and time.monotonic() < deadline:
            try:
                name, line = self._lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if line is None:
                ended += 1
            else:
                (self.err if name == "err" else self.out).append(line)
        return code

    def kill(self) -> None:
        """SIGKILL the whole group: the build and any worker it started."""
        with _suppress_lookup():
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=WAIT_S)

    def stderr_after_pause(self) -> list[str]:
        return [line for line in self.err if not line.startswith(PAUSED)]


class _suppress_lookup:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is ProcessLookupError


def site_files(out: Path) -> dict[str, str]:
    """Every file of the site at `out` (through its link) with its content hash."""
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def debris(out: Path) -> list[str]:
    """What lies beside the output besides the lock, the published version and its record."""
    beside = out.parent / f".{out.name}.obs"
    version = os.readlink(out).split("/")[-1] if out.is_symlink() else None
    keep = {"lock", version, f"{version}.files"}
    found = sorted(name for name in os.listdir(beside) if name not in keep) if beside.is_dir() else []
    found += sorted(
        p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.") and p.name != f".{out.name}.obs"
    )
    return found
