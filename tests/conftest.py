"""Shared fixtures: the demo source tree and one site built from it per test session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from obs.build import BuildOptions, BuildResult
from obs.publish.extras import build_published

REPO = Path(__file__).resolve().parents[1]
REPORTS = REPO / "reports"


@pytest.fixture(scope="session")
def demo_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of reports/ (tests must never write into the repository's source tree)."""
    dst = tmp_path_factory.mktemp("demo") / "reports"
    shutil.copytree(REPORTS, dst)
    return dst


@pytest.fixture(scope="session")
def demo_build(demo_source: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildResult]:
    out = tmp_path_factory.mktemp("site") / "site"
    result = build_published(BuildOptions(source=demo_source, out=out, quiet=True))
    return out, result


@pytest.fixture(scope="session")
def demo_site(demo_build: tuple[Path, BuildResult]) -> Path:
    return demo_build[0]


@pytest.fixture(scope="session")
def shapes_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """tests/comparisons.py's tree (every comparison shape) and the site built from it."""
    from comparisons import make_tree

    source = make_tree(tmp_path_factory.mktemp("shapes") / "src")
    site = tmp_path_factory.mktemp("shapes-site") / "site"
    result = build_published(BuildOptions(source=source, out=site, quiet=True))
    assert result.errors == 0
    return source, site


@pytest.fixture(scope="session")
def single_file_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`obs build --single-file spec03-r2` of a private copy of the demo."""
    from obs.cli import main

    src = tmp_path_factory.mktemp("single-src") / "reports"
    shutil.copytree(REPORTS, src)
    out = tmp_path_factory.mktemp("single-out") / "report.html"
    assert main(["build", str(src), "--single-file", "spec03-r2", "-o", str(out)]) == 0
    return out
