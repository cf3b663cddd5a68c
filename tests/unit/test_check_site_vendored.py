"""`make check-site` and CI run the site checker vendored in tools/check_site/, which must match the
hashes its PROVENANCE.md records (a local edit is either recorded there or a mistake)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENDORED = REPO / "tools" / "check_site"


def test_the_makefile_runs_the_vendored_checker() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^CHECK_SITE\s+\?= tools/check_site/check-site$", makefile, re.M)
    assert "../shared" not in makefile
    assert "make check-site" in (REPO / ".ci" / "run").read_text()


def test_the_vendored_files_match_their_provenance() -> None:
    recorded = dict(re.findall(r"\| `([^`]+)` \| `([0-9a-f]{64})` \|", (VENDORED / "PROVENANCE.md").read_text()))
    assert set(recorded) == {"check-site", "check_site.py"}
    for name, digest in recorded.items():
        assert hashlib.sha256((VENDORED / name).read_bytes()).hexdigest() == digest, name
    assert os.access(VENDORED / "check-site", os.X_OK)


def test_the_checker_starts() -> None:
    proc = subprocess.run([str(VENDORED / "check-site"), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "nu-html" in proc.stdout
