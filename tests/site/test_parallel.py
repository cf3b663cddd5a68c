"""Parallel builds: the same bytes under every start method (macOS and Windows use spawn), `-j`
checked, and no worker outliving a killed build."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from obs.build import BuildOptions
from obs.cli import main
from obs.publish.extras import build_published
from sitefiles import tree_digest


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_every_start_method_builds_the_same_bytes_as_fork(demo_source: Path, tmp_path: Path, method: str) -> None:
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} is not available on this platform")
    sites = {}
    for m in ("fork", method) if "fork" in multiprocessing.get_all_start_methods() else (method,):
        out = tmp_path / m
        result = build_published(BuildOptions(source=demo_source, out=out, quiet=True, jobs=2, start_method=m))
        assert result.errors == 0 and result.built == result.runs > 3  # the pool was used
        sites[m] = tree_digest(out)
    first, *rest = sites.values()
    for other in rest:
        assert other == first


def test_workers_hold_a_few_runs_each_and_get_the_tree_without_its_run_list(
    demo_source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ready run was handed to the pool at once, and each result waited for among all of them (at 100,000
    runs, ~10,000 futures a result); the workers now hold `IN_FLIGHT_PER_WORKER` runs each. The tree they are
    given has no run list: each task carries its run."""
    from obs import build

    seen: list[int] = []
    contexts: list[Any] = []
    collect, start = build._RunPass._collect, build._start_pool

    def counting(self: Any) -> None:
        seen.append(len(self.running))
        collect(self)

    def starting(jobs: int, ctx: Any, method: str | None) -> Any:
        contexts.append(ctx)
        return start(jobs, ctx, method)

    monkeypatch.setattr(build._RunPass, "_collect", counting)
    monkeypatch.setattr(build, "_start_pool", starting)
    result = build_published(BuildOptions(source=demo_source, out=tmp_path / "site", quiet=True, jobs=2))
    assert result.errors == 0 and result.built == result.runs > 3 * 2 * build.IN_FLIGHT_PER_WORKER
    assert seen and max(seen) == 2 * build.IN_FLIGHT_PER_WORKER  # full, never more
    assert contexts  # a pool per pass that builds (the recipe and gate passes build some runs again)
    for ctx in contexts:
        assert ctx.tree.plan.runs == [] and ctx.tree.found.runs == []
        assert len(ctx.tree.plan.slugs) == result.runs  # every run's page name, for links


@pytest.mark.parametrize("jobs", ["0", "-2", "two"])
def test_jobs_must_be_a_positive_whole_number(jobs: str, demo_source: Path, tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["build", str(demo_source), "-o", str(tmp_path / "site"), "-j", jobs])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "-j/--jobs" in err and ("at least 1" in err or "whole number" in err)
    assert not (tmp_path / "site").exists()


def _long_source(root: Path, runs: int = 24, steps: int = 40_000) -> Path:
    """Enough JSONL runs that a 2-worker build takes several seconds."""
    for i in range(runs):
        folder = root / f"run{i:02d}"
        folder.mkdir(parents=True)
        lines = (json.dumps({"step": s, "loss": 1.0 / (1 + s + i), "grad_norm": 1.0}) for s in range(steps))
        (folder / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _children(pid: int) -> set[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True, check=False)
    return {int(x) for x in out.stdout.split()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.is_file() and stat.read_text().split(") ", 1)[-1].startswith("Z"))  # a zombie is gone


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table with ps --ppid")
def test_workers_die_with_a_killed_build(tmp_path: Path) -> None:
    source = _long_source(tmp_path / "src")
    proc = subprocess.Popen(
        [sys.executable, "-m", "obs.cli", "build", str(source), "-o", str(tmp_path / "site"), "-j", "2", "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    deadline = time.monotonic() + 120
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        time.sleep(0.05)
    assert len(workers) >= 2, "the build never started its workers"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 120  # an upper bound for a loaded machine: they die within a second when idle
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)], "workers outlived the build"
