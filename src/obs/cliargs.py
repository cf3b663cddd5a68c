"""What the command line accepts, shared by every subcommand (obs.cli and obs.publish.commands):
argument types (argparse turns an `ArgumentTypeError` into `obs build: error: argument -j/--jobs: ...`
and exit status 2) and the checks of a source folder or run id that say what to do instead."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

DEFAULT_SOURCE = "reports"


def worker_count(text: str) -> int:
    """`-j N`: a whole number of worker processes, 1 or more (1 builds in this process)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of worker processes, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs at least 1 worker process, got {value} (1 builds without workers)")
    return value


def source_problem(source: Path) -> str | None:
    """What is wrong with `source` as a source folder, said so a user knows what to do (None: fine)."""
    if source.is_file():
        return f"{source} is a file, not a folder: give the folder that holds the runs"
    if not source.is_dir():
        return f"{source}: source folder does not exist"
    try:
        with os.scandir(source) as entries:
            next(entries, None)
    except OSError as exc:
        return f"{source}: the source folder cannot be read ({exc.strerror})"
    return None


def missing_run_id(command: str, run: str | None, source: str | None) -> str | None:
    """`obs gate reports`: the one word given names a folder and no source was given: the run id is missing."""
    if run and source is None and Path(run).is_dir() and not Path(DEFAULT_SOURCE).is_dir():
        return f"a run id is missing ({run} is a folder): obs {command} RUN {run}"
    return None


def folder_hint(run: str | None, source: str | None) -> str:
    """Added to "no run X" when X is a folder: the user meant it as the source."""
    if run and source is None and Path(run).is_dir():
        return f" ({run} is a folder; did you mean it as the source, after a run id?)"
    return ""
