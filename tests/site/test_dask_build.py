"""Builds on a Dask cluster (`obs build --dask`, obs.cluster): the same bytes as a local build, every run
built by a Dask task, and a one-line message for each way the cluster cannot be used."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from obs import cluster
from obs.build import BuildOptions, BuildResult
from obs.cli import main
from obs.publish.extras import build_published
from sitefiles import tree_digest

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'obs[dask]')")

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def threads_cluster() -> Iterator[object]:
    """Two single-threaded workers inside this process: starts in a fraction of a second (a cluster of
    worker processes is the command-line test's, below)."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, silence_logs=50
    ) as local:
        yield local


def _run_tasks(local) -> list[str]:  # type: ignore[no-untyped-def]
    """The slugs of the runs the cluster's scheduler saw finish as tasks (keys `obs-run-<slug>-<token>`)."""
    keys = {str(t[0]) for t in local.scheduler.transition_log if str(t[0]).startswith("obs-run-") and t[2] == "memory"}
    return [k.removeprefix("obs-run-").rsplit("-", 1)[0] for k in keys]


def test_a_build_on_a_two_worker_cluster_writes_the_local_builds_bytes(
    demo_source: Path, demo_build: tuple[Path, BuildResult], tmp_path: Path, threads_cluster
) -> None:
    out = tmp_path / "site"
    result = build_published(
        BuildOptions(source=demo_source, out=out, quiet=True, dask=threads_cluster.scheduler_address)
    )
    local_site, local = demo_build
    assert result.errors == local.errors == 0
    assert result.built == result.runs == local.runs > 20
    tasks = _run_tasks(threads_cluster)
    assert sorted(set(tasks)) == sorted(s.slug for s in local.summaries)  # each one a Dask task
    # a first build makes the runs judged at the recipe level twice: first without the result of their seeds
    # (no previous build's summaries), then with it (docs/architecture.md)
    assert sorted({s for s in tasks if tasks.count(s) > 1}) == ["spec03-r3", "spec03-r3-s18", "spec03-r3-s19"]
    assert [d.as_dict() for d in result.diagnostics] == [d.as_dict() for d in local.diagnostics]
    mine, theirs = tree_digest(out), tree_digest(local_site)
    assert len(mine) > 100 and mine == theirs

    again = build_published(  # nothing changed: every run reused, no task sent
        BuildOptions(source=demo_source, out=out, quiet=True, dask=threads_cluster.scheduler_address)
    )
    assert again.reused == again.runs and len(_run_tasks(threads_cluster)) == len(tasks)


def test_the_command_line_builds_on_a_local_cluster_of_worker_processes(
    demo_source: Path, demo_build: tuple[Path, BuildResult], tmp_path: Path
) -> None:
    """`--dask local`: a LocalCluster of spawned worker processes, so the tree, the tasks and the results
    are pickled between processes as they are on a real cluster."""
    out = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    code = "import sys; sys.argv[0] = 'obs'; from obs.cli import run; run()"
    done = subprocess.run(
        [sys.executable, "-c", code, "build", str(demo_source), "-o", str(out), "-q", "--dask", "local", "-j", "2"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    runs = demo_build[1].runs
    assert f"{runs} runs ({runs} built, 0 reused)" in done.stdout
    assert tree_digest(out) == tree_digest(demo_build[0])


def test_without_dask_installed_the_build_says_how_to_get_it(
    demo_source: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    out = tmp_path / "site"
    code = main(["build", str(demo_source), "-o", str(out), "-q", "--dask", "local"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "obs build: --dask needs dask.distributed, which is not installed: pip install 'dask[distributed]' into "
        "obs's environment (the obs[dask] extra)"
    ]
    assert not (out / "index.html").exists()


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("nonsense", "--dask nonsense: not a Dask scheduler address"),
        ("tcp://127.0.0.1:9", "--dask tcp://127.0.0.1:9: cannot reach a Dask scheduler there"),
    ],
)
def test_a_scheduler_that_cannot_be_used_is_one_line(
    address: str, said: str, demo_source: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    out = tmp_path / "site"
    assert main(["build", str(demo_source), "-o", str(out), "-q", "--dask", address]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"obs build: {said}")
    assert not (out / "index.html").exists()


def test_workers_with_other_obs_code_are_refused_before_any_run(
    demo_source: Path, tmp_path: Path, threads_cluster, monkeypatch, capsys
) -> None:
    real = cluster.identity

    def older(root: str) -> tuple[str, str, str, bool]:
        _, code, templates, visible = real(root)
        return "0.0.1", code, templates, visible

    monkeypatch.setattr(cluster, "identity", older)
    out = tmp_path / "site"
    assert main(["build", str(demo_source), "-o", str(out), "-q", "--dask", threads_cluster.scheduler_address]) == 2
    err = capsys.readouterr().err
    assert "runs other obs code (version 0.0.1)" in err and "install the same obs on every worker" in err
    assert not (out / "index.html").exists()


def test_workers_that_cannot_see_the_source_are_named(
    demo_source: Path, tmp_path: Path, threads_cluster, monkeypatch, capsys
) -> None:
    real = cluster.identity
    monkeypatch.setattr(cluster, "identity", lambda root: (*real(root)[:3], False))
    out = tmp_path / "site"
    assert main(["build", str(demo_source), "-o", str(out), "-q", "--dask", threads_cluster.scheduler_address]) == 2
    err = capsys.readouterr().err
    assert f"cannot see the source folder {demo_source.resolve()}" in err and "same path on every worker" in err


def test_a_build_without_dask_or_a_url_imports_neither_dask_nor_fsspec(demo_source: Path, tmp_path: Path) -> None:
    """dask.distributed costs ~1-2 s to import and fsspec's drivers more: only `--dask` and a URL source pay."""
    code = (
        "import sys; from obs.cli import main; code = main(['build', sys.argv[1], '-o', sys.argv[2], '-q']); "
        "print(code, sorted(m for m in ('distributed', 'dask', 'fsspec', 's3fs') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(demo_source), str(tmp_path / "site")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        cwd=tmp_path,
        timeout=240,
        check=False,
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stderr


def _explode(ctx, planned, baseline, input_hash, frozen=None, recipe=None, gate_others=None):  # type: ignore[no-untyped-def]
    raise RuntimeError(f"a task failed on {planned.id}")


def test_a_failed_task_stops_the_build_and_nothing_is_published(
    demo_source: Path, tmp_path: Path, threads_cluster, monkeypatch
) -> None:
    monkeypatch.setattr(cluster, "build_remote", _explode)
    out = tmp_path / "site"
    with pytest.raises(RuntimeError, match="a task failed on "):
        build_published(BuildOptions(source=demo_source, out=out, quiet=True, dask=threads_cluster.scheduler_address))
    assert not (out / "index.html").exists()
    with distributed.Client(threads_cluster.scheduler_address) as client:  # the cluster is left as it was
        assert client.submit(sum, [1, 2], pure=False).result() == 3
