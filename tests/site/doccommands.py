"""Helpers for test_documented_commands.py: the fenced blocks of README.md and docs/*.md, the shell
commands in them, and a workspace to run them in (a copy of the repository's demo and code, with an
`obs` command on PATH that runs this checkout)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Block:
    doc: str  # relative to the repository
    line: int  # of the opening fence
    lang: str
    text: str


@dataclass(frozen=True)
class Command:
    doc: str
    line: int  # where the command starts
    text: str  # continuation lines joined, as the shell reads them

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks() -> list[Block]:
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            line = text[: m.start()].count("\n") + 1
            out.append(Block(path.relative_to(REPO).as_posix(), line, m.group(1), m.group(2)))
    return out


def commands(block: Block) -> list[Command]:
    """The block's commands: one a line, a trailing backslash joining the next; blank lines and
    whole-line comments skipped (a trailing comment stays: the shell ignores it)."""
    out: list[Command] = []
    pending, start = "", 0
    for i, raw in enumerate(block.text.splitlines(), start=block.line + 1):
        if not pending:
            start = i
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        out.append(Command(block.doc, start, pending + raw))
        pending = ""
    return out


def shell_commands() -> list[Command]:
    return [c for b in blocks() if b.lang in SHELL for c in commands(b)]


def _script(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def workspace(root: Path) -> tuple[Path, dict[str, str]]:
    """A copy of what the documents' commands touch (the demo in reports/, the code, the Makefile), and
    an environment whose `obs` (on PATH, and in a stand-in venv for `make`) runs this checkout."""
    ws = root / "ws"
    ws.mkdir()
    for name in ("reports", "src", "templates"):
        shutil.copytree(REPO / name, ws / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(REPO / name, ws / name)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    _script(bin_dir / "obs", f'#!/bin/sh\nexec "{sys.executable}" -m obs.cli "$@"\n')
    venv = ws / ".venv-docs"  # `make VENV=.venv-docs`: installed already (its stamp is newer than pyproject)
    (venv / "bin").mkdir(parents=True)
    _script(venv / "bin" / "obs", f'#!/bin/sh\nexec "{sys.executable}" -m obs.cli "$@"\n')
    (venv / "pyvenv.cfg").write_text("home = stand-in for the tests\n", encoding="utf-8")
    (venv / ".installed").touch()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ws / "src"),
    }
    return ws, env
