"""obs build --single-file: one HTML file that needs nothing beside it (Chromium opens it with every
other request blocked in tests/browser/test_single_file_offline.py)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from obs.cli import main

REPORTS = Path(__file__).resolve().parents[2] / "reports"


@pytest.fixture(scope="module")
def single(single_file_report: Path) -> Path:
    return single_file_report


def test_the_file_needs_nothing_beside_it(single: Path) -> None:
    html = single.read_text()
    assert not re.search(r'<(link|script)[^>]+(href|src)="(?!data:)', html)
    assert not re.search(r'<img[^>]+src="(?!data:)', html)
    assert "@font-face" in html and "data:font/woff2;base64," in html
    assert "https://example.github.io/obs-demo/runs/spec03-r1/index.html" in html  # base_url links


def test_command_line_defaults_and_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "reports"
    shutil.copytree(REPORTS, src)
    monkeypatch.chdir(tmp_path)
    assert main(["build", str(src), "--single-file", "grpo-rl-07"]) == 0
    assert (tmp_path / "grpo-rl-07.html").read_bytes().startswith(b"<!DOCTYPE html>")
    assert main(["build", str(src), "--single-file", "grpo-rl-07", "-o", str(src / "x.html")]) == 2
    assert not (src / "x.html").exists()
    assert main(["build", str(src), "--single-file", "no-such-run", "-o", "y.html"]) == 2
