"""Argument types shared by the command line's subcommands (argparse turns a ValueError-like
`ArgumentTypeError` into `obs build: error: argument -j/--jobs: ...` and exit status 2)."""

from __future__ import annotations

import argparse


def worker_count(text: str) -> int:
    """`-j N`: a whole number of worker processes, 1 or more (1 builds in this process)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of worker processes, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs at least 1 worker process, got {value} (1 builds without workers)")
    return value
