"""Faults, as real processes: SIGKILL at each step of a build and of its publish step, two builds at
once, a build while `obs serve` holds the output, a read-only output, an unwritable cache, an
unreadable source, `obs decide` killed mid-way, and Ctrl-C / SIGTERM.

The promise under test: the output path always holds a complete site (the old one or the new one),
the next build leaves no debris and is identical to a clean build, and an interrupted command says
one line and exits 130 (SIGINT) or 143 (SIGTERM).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from faultkit import Obs, debris, make_source, run_obs, site_files

PUBLISH_STEPS_BEFORE_SWITCH = ["staging", "staged", "recorded", "renamed", "linked"]
RESUME = "OBS_TEST_RESUME_FILE"  # a paused build goes on once this file exists (obs.write.fault_point)


@pytest.fixture(scope="module")
def ladder_made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], dict[str, str]]:
    """Once per module: a source built into `site` (old), then changed; what a clean build of each holds."""
    root = tmp_path_factory.mktemp("ladder")
    source = make_source(root / "src")
    out = root / "site"
    assert run_obs("build", str(source), "-o", str(out), "-j", "1").returncode == 0
    old = site_files(out)
    make_source(source, 5, tag=" (edited)")  # every title changes and a run is added
    clean = root / "clean" / "site"
    assert run_obs("build", str(source), "-o", str(clean), "-j", "1").returncode == 0
    new = site_files(clean)
    shutil.rmtree(clean.parent)
    return root, old, new


@pytest.fixture
def ladder(
    ladder_made: tuple[Path, dict[str, str], dict[str, str]], tmp_path: Path
) -> tuple[Path, Path, dict[str, str], dict[str, str]]:
    """A private copy: the changed source, the old site (its link, versions and cache) beside it."""
    made, old, new = ladder_made
    root = tmp_path / "w"
    shutil.copytree(made, root, symlinks=True)
    return root / "src", root / "site", old, new


def build(source: Path, out: Path, *args: str, pause: str | None = None) -> Obs:
    return Obs("build", str(source), "-o", str(out), "-j", "1", *args, pause=pause)


@pytest.mark.parametrize("step", [*PUBLISH_STEPS_BEFORE_SWITCH, "switched"])
def test_sigkill_at_each_step_leaves_a_complete_site_and_no_debris(
    ladder: tuple[Path, Path, dict[str, str], dict[str, str]], step: str
) -> None:
    source, out, old, new = ladder
    proc = build(source, out, pause=step)
    proc.paused(step)
    proc.kill()
    assert site_files(out) == (new if step == "switched" else old)  # never a mix, never missing
    after = run_obs("build", str(source), "-o", str(out), "-j", "1")
    assert after.returncode == 0, after.stderr
    assert site_files(out) == new  # identical to a clean build: nothing trusted from the killed one
    assert debris(out) == []


def test_sigkill_while_runs_are_being_built(ladder: tuple[Path, Path, dict[str, str], dict[str, str]]) -> None:
    source, out, old, new = ladder
    proc = Obs("build", str(source), "-o", str(out), "-j", "2")
    beside = out.parent / ".site.obs"
    while proc.proc.poll() is None and not any(beside.glob("building-*/runs/*/index.html")):
        pass  # until the first page of the new build exists
    proc.kill()
    assert site_files(out) in (old, new)
    assert run_obs("build", str(source), "-o", str(out), "-j", "1").returncode == 0
    assert site_files(out) == new and debris(out) == []


def test_debris_of_an_older_obs_is_removed_too(ladder: tuple[Path, Path, dict[str, str], dict[str, str]]) -> None:
    source, out, _old, new = ladder
    for name in (".site.building-x1", ".site.old-x2"):  # what the two-rename swap left when killed
        (out.parent / name / "runs").mkdir(parents=True)
    assert run_obs("build", str(source), "-o", str(out), "-j", "1").returncode == 0
    assert site_files(out) == new and debris(out) == []


def test_a_second_build_is_refused_while_one_is_running(
    ladder: tuple[Path, Path, dict[str, str], dict[str, str]],
) -> None:
    source, out, old, new = ladder
    first = build(source, out, pause="staged")
    first.paused("staged")
    second = run_obs("build", str(source), "-o", str(out), "-j", "1")
    assert second.returncode == 2
    assert second.stderr.count("\n") == 1 and "Traceback" not in second.stderr
    assert f"is being written by obs build (pid {first.proc.pid})" in second.stderr and "--wait" in second.stderr
    first.kill()
    assert site_files(out) == old
    assert run_obs("build", str(source), "-o", str(out), "-j", "1").returncode == 0
    assert site_files(out) == new and debris(out) == []


def test_two_builds_at_once_with_wait_equal_a_clean_build(
    ladder: tuple[Path, Path, dict[str, str], dict[str, str]],
) -> None:
    source, out, _old, new = ladder
    procs = [build(source, out, "--wait") for _ in range(2)]
    assert [p.finish() for p in procs] == [0, 0]
    assert site_files(out) == new and debris(out) == []
    again = run_obs("build", str(source), "-o", str(out), "-j", "1")
    assert "nothing changed" in again.stdout and site_files(out) == new


def test_two_builds_at_once_without_wait_never_mix(ladder: tuple[Path, Path, dict[str, str], dict[str, str]]) -> None:
    """The issue's case: builds started moments apart into one output. Each finishes or is refused."""
    source, out, _old, new = ladder
    procs = [build(source, out) for _ in range(2)]
    codes = [p.finish() for p in procs]
    assert sorted(codes) in ([0, 0], [0, 2]), [p.err for p in procs]
    for p, code in zip(procs, codes, strict=True):
        if code == 2:
            assert "is being written by" in "".join(p.err)
    assert site_files(out) == new and debris(out) == []
    later = run_obs("build", str(source), "-o", str(out), "-j", "1")
    assert later.returncode == 0 and site_files(out) == new


def test_a_build_while_obs_serve_holds_the_output_is_refused(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src")
    out = tmp_path / "site"
    server = Obs("serve", str(source), "-o", str(out), "--port", "0", "-j", "1")
    try:
        server.wait_for("http://127.0.0.1:")
        refused = run_obs("build", str(source), "-o", str(out), "-j", "1")
        assert refused.returncode == 2 and "is being written by obs serve" in refused.stderr
        server.signal_group(signal.SIGINT)
        assert server.finish() == 130
    finally:
        if server.proc.poll() is None:
            server.kill()
    assert server.err == ["obs serve: stopped (SIGINT)\n"]
    assert run_obs("build", str(source), "-o", str(out), "-j", "1").returncode == 0


# --- signals: one line, exit 130 / 143, nothing left behind --------------------------------------


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_a_build_gives_one_line(
    ladder: tuple[Path, Path, dict[str, str], dict[str, str]], sig: int, code: int
) -> None:
    source, out, old, _new = ladder
    proc = build(source, out, pause="staged")
    proc.paused("staged")
    proc.signal_group(sig)
    assert proc.finish() == code
    name = signal.Signals(sig).name
    assert proc.stderr_after_pause() == [f"obs build: interrupted; the output holds the last complete build ({name})\n"]
    assert site_files(out) == old and debris(out) == []  # the staging folder went with it


def test_ctrl_c_on_a_first_build_does_not_claim_a_previous_one(tmp_path: Path) -> None:
    """With no site in the output yet, there is no "last complete build" to point at."""
    source, out = make_source(tmp_path / "src", 2), tmp_path / "site"
    proc = build(source, out, pause="staged")
    proc.paused("staged")
    proc.signal_group(signal.SIGINT)
    assert proc.finish() == 130
    assert proc.stderr_after_pause() == [
        f"obs build: interrupted; nothing was published (there was no site in {out} yet) (SIGINT)\n"
    ]
    assert not out.exists() and debris(out) == []


def test_ctrl_c_reaching_the_workers_too_gives_one_line(
    ladder: tuple[Path, Path, dict[str, str], dict[str, str]],
) -> None:
    """A terminal sends SIGINT to every process of the group: the workers must not print tracebacks."""
    source, out, old, _new = ladder
    proc = Obs("build", str(source), "-o", str(out), "-j", "2", "--clean")
    beside = out.parent / ".site.obs"
    while proc.proc.poll() is None and not any(beside.glob("building-*/runs/*/index.html")):
        pass
    proc.signal_group(signal.SIGINT)
    code = proc.finish()
    if code == 0:
        pytest.skip("the build finished before the signal arrived")
    assert code == 130
    assert proc.err == ["obs build: interrupted; the output holds the last complete build (SIGINT)\n"]
    assert site_files(out) == old and debris(out) == []


def test_ctrl_c_during_summary_and_decide(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src")
    summary = Obs("summary", "r1", str(source), "-o", str(tmp_path / "s.md"), pause="summary")
    summary.paused("summary")
    summary.signal_group(signal.SIGINT)
    assert summary.finish() == 130
    assert summary.stderr_after_pause() == ["obs summary: interrupted (SIGINT)\n"]
    assert not (tmp_path / "s.md").exists()
    decide = Obs("decide", "r1", str(source), "--verdict", "reject", "--rationale", "x", pause="decide-frozen")
    decide.paused("decide-frozen")
    decide.signal_group(signal.SIGINT)
    assert decide.finish() == 130
    assert decide.stderr_after_pause() == ["obs decide: interrupted (SIGINT)\n"]


@pytest.fixture
def tmpdir_for_obs() -> Iterator[Path]:
    """A TMPDIR of its own, to see every temporary folder obs serve makes (and that none is left)."""
    folder = Path(tempfile.mkdtemp(prefix="obs-tmpdir-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_serve_checks_its_port_before_building_and_leaves_no_temporary_folder(
    tmp_path: Path, tmpdir_for_obs: Path
) -> None:
    source = make_source(tmp_path / "src", 2)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_obs("serve", str(source), "--port", str(port), env={"TMPDIR": str(tmpdir_for_obs)})
    assert result.returncode == 2
    assert result.stderr == f"obs serve: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    assert "built" not in result.stdout  # it did not build first
    assert list(tmpdir_for_obs.iterdir()) == []


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_stopping_serve_removes_its_temporary_folder(tmp_path: Path, tmpdir_for_obs: Path, sig: int, code: int) -> None:
    source = make_source(tmp_path / "src", 2)
    server = Obs("serve", str(source), "--port", "0", "-j", "1", env={"TMPDIR": str(tmpdir_for_obs)})
    server.wait_for("http://127.0.0.1:")
    assert [p.name[:10] for p in tmpdir_for_obs.iterdir()] == ["obs-serve-"]
    server.signal_group(sig)
    assert server.finish() == code
    assert server.err == [f"obs serve: stopped ({signal.Signals(sig).name})\n"]
    assert list(tmpdir_for_obs.iterdir()) == []


# --- permissions: one clear message, no traceback --------------------------------------------------

NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder another user can enter: as root, obs runs as `nobody`, since root ignores permissions."""
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: permissions cannot be tested")
    folder = Path(tempfile.mkdtemp(prefix="obs-perm-"))
    folder.chmod(0o755)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(folder, ignore_errors=True)


def as_other(*args: str) -> tuple[int, str, str]:
    prefix = NOBODY if os.geteuid() == 0 else ()
    result = run_obs(*args, prefix=prefix, env={"HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"})
    return result.returncode, result.stdout, result.stderr


def test_a_read_only_output_folder(shared_dir: Path) -> None:
    source = make_source(shared_dir / "src", 2)
    parent = shared_dir / "pub"
    parent.mkdir()
    assert run_obs("build", str(source), "-o", str(parent / "site"), "-j", "1").returncode == 0
    before = site_files(parent / "site")
    make_source(source, 3)
    parent.chmod(0o555)
    code, out, err = as_other("build", str(source), "-o", str(parent / "site"), "-j", "1")
    assert code == 2, err
    assert err.startswith(f"obs build: cannot write beside {parent / 'site'}: Permission denied")
    assert err.count("\n") == 1 and out == ""
    assert site_files(parent / "site") == before


def test_an_unwritable_build_cache(shared_dir: Path) -> None:
    source = make_source(shared_dir / "src", 2)
    parent = shared_dir / "pub"
    parent.mkdir()
    parent.chmod(0o777)
    (parent / ".obs-cache").mkdir(mode=0o555)
    (parent / ".obs-cache").chmod(0o555)
    code, _out, err = as_other("build", str(source), "-o", str(parent / "site"), "-j", "1")
    assert code == 2
    assert err == (
        f"obs build: the build cache {parent / '.obs-cache' / 'site'} cannot be written (Permission denied); "
        "make it writable or delete it\n"
    )
    assert not (parent / "site").exists()


def test_an_unreadable_source_folder(shared_dir: Path) -> None:
    source = make_source(shared_dir / "src", 1)
    source.chmod(0o000)
    code, out, err = as_other("build", str(source), "-o", str(shared_dir / "site"))
    assert (code, out) == (2, "")
    assert err == f"obs build: {source}: the source folder cannot be read (Permission denied)\n"
    assert not (shared_dir / ".site.obs").exists()


@pytest.mark.parametrize("how", ["removed", "unreadable"])
def test_a_source_file_that_goes_away_mid_build(shared_dir: Path, how: str) -> None:
    """The build has planned and hashed its inputs when a run's log goes away (deleted, or no longer
    readable): one message names it, the new site is complete (every page of this build), and the run
    is not kept for reuse: once the file is back, the next build equals a clean one."""
    source = make_source(shared_dir / "src", 3)
    pub = shared_dir / "pub"
    pub.mkdir(mode=0o777)
    pub.chmod(0o777)
    out = pub / "site"
    prefix = NOBODY if os.geteuid() == 0 else ()
    env = {"HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"}
    assert run_obs("build", str(source), "-o", str(out), "-j", "1", prefix=prefix, env=env).returncode == 0
    before = site_files(out)
    log = source / "r1" / "metrics.jsonl"
    with log.open("a") as fh:  # r1 changed: it must be read again
        fh.write('{"step": 500, "loss": 0.25}\n')
    kept = log.read_bytes()
    resume = shared_dir / "resume"
    obs = Obs(
        "build", str(source), "-o", str(out), "-j", "1", pause="run", prefix=prefix, env={**env, RESUME: str(resume)}
    )
    obs.paused("run")
    if how == "removed":
        log.unlink()
    else:
        log.chmod(0o000)
    resume.touch()
    assert obs.finish() == 1
    said = [line for line in obs.stderr_after_pause() if "r1/metrics.jsonl" in line]
    reason = "No such file or directory" if how == "removed" else "Permission denied"
    assert said == [
        f"src/r1/metrics.jsonl: error: cannot be read ({reason}); restore it or make it readable, then build again\n"
    ], obs.err
    assert not any("Traceback" in line for line in obs.err)
    after = site_files(out)
    assert set(before) - set(after) == {"runs/r1/curves.js"}  # no curves without the log; every page is there
    assert set(after) <= set(before)
    assert "cannot be read" in (out / "runs" / "r1" / "index.html").read_text()
    if how == "removed":
        log.write_bytes(kept)
    else:
        log.chmod(0o644)
    assert run_obs("build", str(source), "-o", str(out), "-j", "1", prefix=prefix, env=env).returncode == 0
    clean = pub / "clean"
    assert run_obs("build", str(source), "-o", str(clean), "-j", "1", prefix=prefix, env=env).returncode == 0
    assert site_files(out) == site_files(clean)  # nothing of the build without the file was kept


# --- obs decide: the ledger never loses or duplicates a line ----------------------------------------


def ledger_lines(source: Path) -> list[dict[str, object]]:
    path = source / "decisions.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def test_decide_killed_between_archive_and_ledger_adds_no_line(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src", 2)
    killed = Obs("decide", "r1", str(source), "--verdict", "reject", "--rationale", "a", pause="decide-frozen")
    killed.paused("decide-frozen")
    killed.kill()
    assert ledger_lines(source) == []  # the frozen report may stay, unreferenced; never a line without it
    ok = run_obs("decide", "r1", str(source), "--verdict", "repair", "--rationale", "b")
    assert ok.returncode == 0, ok.stderr
    lines = ledger_lines(source)
    assert [line["verdict"] for line in lines] == ["repair"]
    assert (source / str(lines[0]["archive"])).is_file()


def test_concurrent_decides_each_add_one_line_and_one_archive(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src", 2)
    procs = [Obs("decide", "r1", str(source), "--verdict", "reject", "--rationale", f"n{i}") for i in range(3)]
    assert [p.finish() for p in procs] == [0, 0, 0], [p.err for p in procs]
    lines = ledger_lines(source)
    assert sorted(str(line["rationale"]) for line in lines) == ["n0", "n1", "n2"]
    archives = [str(line["archive"]) for line in lines]
    assert len(set(archives)) == 3 and all((source / a).is_file() for a in archives)


def test_decide_killed_at_any_moment_keeps_the_ledger_whole(tmp_path: Path) -> None:
    """Kill decides at growing delays; every line left is whole JSON and names an existing report."""
    source = make_source(tmp_path / "src", 2)
    finished = 0
    for delay in (0.3, 0.8, 1.5, 3.0):
        proc = Obs("decide", "r1", str(source), "--verdict", "branch", "--rationale", f"d{delay}")
        try:
            proc.proc.wait(timeout=delay)
            finished += 1
        except Exception:
            proc.kill()
    lines = ledger_lines(source)  # json.loads fails on a broken line
    assert finished <= len(lines) <= 4
    assert len({str(line["rationale"]) for line in lines}) == len(lines)  # no duplicate
    assert all((source / str(line["archive"])).is_file() for line in lines)


def test_a_cache_is_not_trusted_for_a_site_its_build_did_not_finish(
    ladder: tuple[Path, Path, dict[str, str], dict[str, str]],
) -> None:
    """Killed after publishing but before writing its cache, a build leaves the cache describing the
    previous site. Reverting the sources then matches that cache's keys exactly: trusting it would
    hard-link the killed build's pages (another title, other comparisons) into a site said to be
    the old one."""
    source, out, old, new = ladder
    proc = build(source, out, pause="switched")
    proc.paused("switched")
    proc.kill()
    assert site_files(out) == new
    shutil.rmtree(source / "r4")
    make_source(source, 4)  # back to the sources the cache was written for
    assert run_obs("build", str(source), "-o", str(out), "-j", "1").returncode == 0
    assert site_files(out) == old and debris(out) == []
