"""Publishing and review: outputs read outside a browser tab (PR comments, one-file reports, GitHub
Pages), build-to-build changes, and the decision ledger with its frozen reports.

Two names in the source tree belong to obs and are never runs: `decisions.jsonl` (the append-only
decision ledger, written by `obs decide`) and the `archive/` folder beside it (frozen reports). Both
live at the top of the source tree; discovery skips `archive/` and no adapter reads the ledger as a
metrics log.
"""

from __future__ import annotations

from pathlib import Path

LEDGER_FILE = "decisions.jsonl"
ARCHIVE_DIR = "archive"


def is_reserved(path: Path, root: Path) -> bool:
    """True for the ledger file and the archive folder at the top of the source tree."""
    if path.name not in (LEDGER_FILE, ARCHIVE_DIR):
        return False
    try:
        return path.parent.resolve() == root.resolve()
    except OSError:
        return False
