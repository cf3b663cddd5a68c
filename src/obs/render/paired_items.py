"""Two systems on the same evaluation items, item by item: the data a campaign page's per-item view
reads (a campaign's `paired:` entries, obs.analysis.paired_systems).

The statistics say whether A beats B; the spot check a reader needs next is *which* items they
disagree on. Each pair gets `campaigns/<slug>/paired-<k>.js`: every item id with A's and B's outcome
(1 right, 0 wrong, null: not in that file), shared items first in the comparison's order. The page
shows them through `assets/cases.js` (`[data-paired-view]`), filtered by agreement and searched by
id, a page at a time.
"""

from __future__ import annotations

from typing import Any

from obs.model import PairedSpec
from obs.render.datafile import data_file

SCHEMA = "obs.paired/1"


def _order(ids: set[str]) -> list[str]:
    """Numeric ids in numeric order, the rest alphabetically (as the comparison lists them)."""
    return sorted(ids, key=lambda s: (0, int(s), "") if s.lstrip("-").isdigit() else (1, 0, s))


def paired_file(k: int) -> str:
    return f"paired-{k}.js"


def paired_views(specs: list[PairedSpec], campaign_id: str) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """(what the page embeds per pair, the data files by name) for every pair whose two files were read."""
    views: list[dict[str, Any]] = []
    files: dict[str, bytes] = {}
    for k, spec in enumerate(specs, start=1):
        if spec.a is None or spec.b is None:
            continue
        a, b = spec.a.outcomes, spec.b.outcomes
        shared = _order(set(a) & set(b))
        rows = [[i, int(a[i]), int(b[i])] for i in shared]
        rows += [[i, int(a[i]), None] for i in _order(set(a) - set(b))]
        rows += [[i, None, int(b[i])] for i in _order(set(b) - set(a))]
        counts = {
            "both": sum(1 for i in shared if a[i] and b[i]),
            "onlyA": sum(1 for i in shared if a[i] and not b[i]),
            "onlyB": sum(1 for i in shared if b[i] and not a[i]),
            "neither": sum(1 for i in shared if not a[i] and not b[i]),
            "aOnly": len(a) - len(shared),
            "bOnly": len(b) - len(shared),
        }
        view = {
            "schema": SCHEMA,
            "key": f"{campaign_id}#{k}",
            "file": paired_file(k),
            "index": k,
            "name": spec.name,
            "labelA": spec.label_a,
            "labelB": spec.label_b,
            "n": len(rows),
            "shared": len(shared),
            "counts": counts,
        }
        files[paired_file(k)] = data_file({"schema": SCHEMA, "kind": "items", "key": view["key"]}, rows)
        views.append(view)
    return views, files
