"""What the adapter tests share: discover and load every run of a tree, read a point of a series, list messages.

Imported by name (`from adapterkit import ...`) like tests/browser/browserkit.py: pytest puts this folder on
the import path for the test modules beside it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from obs.adapters import adapter_named
from obs.adapters.base import LoadContext
from obs.config import SiteConfig
from obs.diagnostics import Diagnostics
from obs.discover import discover
from obs.model import Run

DATA_CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"


def load_all(root: Path, config: SiteConfig | None = None) -> dict[str, tuple[Run, Diagnostics]]:
    """Every run discovery finds under `root`, loaded as a build would (an exception fails the test)."""
    out = {}
    for source in discover(root).runs:
        ctx = LoadContext(root=root, config=config or SiteConfig(), diags=Diagnostics(root=root))
        out[source.default_id] = (adapter_named(source.adapter).load(source, ctx), ctx.diags)
    return out


def at(run: Run, key: str, step: float) -> float:
    """The value of series `key` at `step`, which must have been logged exactly once."""
    assert run.metrics is not None
    s = run.metrics.series[key]
    idx = np.flatnonzero(s.steps == step)
    assert idx.size == 1, (key, step, s.steps)
    return float(s.values[idx[0]])


def messages(diags: Diagnostics, severity: str | None = None) -> list[str]:
    """Diagnostics as the terminal shows them (`path:line: severity: message`), optionally of one severity."""
    return [d.format() for d in diags.items if severity is None or d.severity == severity]


def write(path: Path, body: str | bytes) -> Path:
    """Write a file of a synthetic run, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body)
    return path
