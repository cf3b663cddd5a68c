"""The Makefile's venv: a Python too old for obs is refused before a venv is made, a venv an old Python
made is made again, a venv whose install failed is removed (no later `make` reuses a broken one), and
`make clean` says what it keeps. Run in a temporary copy of the Makefile, never on the repository's .venv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _is_old(python: str) -> bool:
    """`python` runs and is older than 3.11."""
    check = "import sys; sys.exit(sys.version_info >= (3, 11))"
    try:
        return subprocess.run([python, "-c", check], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _old_python() -> str | None:
    """A Python older than 3.11 on this machine (on PATH or installed by pyenv), if there is one."""
    found = [shutil.which(n) for n in ("python3.10", "python3.9")]
    found += [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.*/bin/python3"))]
    return next((p for p in found if p and _is_old(p)), None)


def make(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", *args], cwd=folder, capture_output=True, text=True, timeout=600, env={**os.environ, **env}
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The Makefile beside a pyproject whose build backend cannot be installed: an install fails at once."""
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["no-such-backend-for-obs-tests==0"]\nbuild-backend = "x"\n'
        '[project]\nname = "obs"\nversion = "0"\n',
        encoding="utf-8",
    )
    return tmp_path


def test_a_python_too_old_is_refused_before_any_venv_is_made(copy: Path) -> None:
    old = _old_python()
    if old is None:
        pytest.skip("no Python older than 3.11 on this machine")
    proc = make(copy, "demo", f"PYTHON={old}")
    assert proc.returncode != 0
    assert "make: obs needs Python 3.11 or newer" in proc.stderr and "Python 3.1" in proc.stderr
    assert not (copy / ".venv").exists()


def test_a_venv_of_an_old_python_is_removed_and_a_failed_install_leaves_none(copy: Path) -> None:
    old = _old_python()
    if old is None:
        pytest.skip("no Python older than 3.11 on this machine")
    subprocess.run([old, "-m", "venv", "--without-pip", str(copy / ".venv")], check=True, timeout=300)
    proc = make(copy, "demo", f"PYTHON={sys.executable}", PIP_NO_INDEX="1")
    assert proc.returncode != 0
    assert "make: .venv was made by Python 3.1" in proc.stderr and "cannot run obs: removing it" in proc.stderr
    assert "make: setting up .venv failed; it is removed, so the next make starts over" in proc.stderr
    assert not (copy / ".venv").exists()


def test_clean_says_what_it_keeps(copy: Path) -> None:
    (copy / "site").mkdir()
    proc = make(copy, "clean")
    assert proc.returncode == 0 and not (copy / "site").exists()
    assert "clean: kept .venv/" in proc.stdout and "bench/corpus/" in proc.stdout
