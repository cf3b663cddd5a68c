"""Writing the site: into a staging folder beside the target, swapped in at the very end.

A crash or Ctrl-C during a build leaves the previous site untouched. The target is only replaced
when it is empty or was itself made by obs (so `obs build -o ~` cannot wipe a home folder), and
it may never be, contain, or sit inside the source tree: obs never writes there.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

MARKER = "index.json"


class OutputError(Exception):
    pass


def check_output_location(source: Path, out: Path) -> None:
    src, dst = source.resolve(), out.resolve()
    if dst == src or src.is_relative_to(dst) or dst.is_relative_to(src):
        raise OutputError(f"the output folder {out} must be outside the source tree {source} (obs never writes there)")
    if dst.exists() and not dst.is_dir():
        raise OutputError(f"{out} exists and is not a folder")
    if dst.is_dir() and any(dst.iterdir()) and not _is_obs_site(dst):
        raise OutputError(f"{out} is not empty and was not made by obs; refusing to replace it (choose another -o)")


def _is_obs_site(folder: Path) -> bool:
    marker = folder / MARKER
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("generator") == "obs"


class Staging:
    """A temporary folder next to the output; `commit()` swaps it in, `discard()` removes it."""

    def __init__(self, out: Path) -> None:
        self.out = out.resolve()
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.building-", dir=self.out.parent))
        self._folders: set[Path] = {self.path}

    def _folder_for(self, rel: str) -> Path:
        """The staging path of `rel`, its folder made once per build (a mkdir per file is a syscall each)."""
        target = self.path / rel
        if target.parent not in self._folders:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._folders.update(target.parents)
        return target

    def write(self, rel: str, data: bytes) -> None:
        """Write `rel`; when the current site already has exactly these bytes, hard-link that file instead.

        Most pages of a rebuild come out byte-identical; a link is one cheap syscall where a write
        allocates and fills new blocks, and both leave the same bytes in the new site.
        """
        target = self._folder_for(rel)
        previous = self.out / rel
        try:
            if previous.stat().st_size == len(data) and previous.read_bytes() == data:
                os.link(previous, target)
                return
        except OSError:
            pass
        target.write_bytes(data)

    def link(self, rel: str, src: Path) -> None:
        """Put the existing file `src` into the new site as `rel` (a hard link, or a copy across devices)."""
        target = self._folder_for(rel)
        try:
            os.link(src, target)
        except OSError:
            shutil.copy2(src, target)

    def copy_tree(self, src: Path, rel: str) -> None:
        for path in sorted(src.rglob("*")):
            if path.is_file():
                self.write(f"{rel}/{path.relative_to(src).as_posix()}", path.read_bytes())

    def commit(self) -> None:
        os.chmod(self.path, 0o755)
        old: Path | None = None
        if self.out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-", dir=self.out.parent))
            os.rmdir(old)
            os.replace(self.out, old)
        os.replace(self.path, self.out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
