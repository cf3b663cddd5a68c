"""What the site tests compare two builds by: every file of a site and its bytes' hash."""

from __future__ import annotations

import hashlib
from pathlib import Path


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under `root` (a link to a published site followed) and the SHA-256 of its bytes."""
    root = root.resolve()
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
