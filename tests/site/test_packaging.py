"""A plain `pip install .` (not only an editable install) must carry the templates and assets."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_ships_templates_assets_and_fonts(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot build a wheel here (no network for the build backend?): {proc.stderr[-300:]}")
    wheel = next(tmp_path.glob("obs-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in ("base.html", "run.html", "index.html", "spec.html", "campaign.html", "ledger.html"):
        assert f"obs/templates/{template}" in names
    assert "obs/templates/assets/obs.css" in names and "obs/templates/assets/obs.js" in names
    assert any(n.startswith("obs/templates/assets/fonts/") and n.endswith(".woff2") for n in names)
    assert "obs/cli.py" in names
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "obs = obs.cli:run" in zipfile.ZipFile(wheel).read(entry).decode()
