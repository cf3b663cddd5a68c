"""Where obs finds its own files (templates and assets), importable without any heavy dependency."""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path


@functools.cache
def templates_dir() -> Path:
    """`obs/templates` inside an installed wheel, else the checkout's top-level `templates/`."""
    packaged = Path(str(resources.files("obs"))) / "templates"
    if (packaged / "base.html").is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "templates"
    if (checkout / "base.html").is_file():
        return checkout
    raise FileNotFoundError("obs templates not found: reinstall obs (pip install .)")


def package_dir() -> Path:
    """The folder of obs's own code (part of every cache key: edited code rebuilds every page)."""
    return Path(__file__).resolve().parent
