"""`obs ls SRC`: the runs obs finds, one line each: id, format, status and headline.

Run ids are often long paths (`hf/llama-7b/checkpoint-500`), and every other command takes one; this
is where to find them. Each run is read and analysed as a build does (`pipeline.check_runs`), so the
headline is the one its page leads with; nothing is written. `--json` gives the same as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from obs.analysis.compare import Headline
from obs.numbers import num, pct
from obs.pipeline import SourceTree, check_runs
from obs.sanitize import visible


@dataclass(frozen=True)
class Listed:
    id: str
    format: str
    status: str
    folder: str  # relative to the folder above the source root, as diagnostics name it
    headline: Headline

    def headline_text(self) -> str:
        h = self.headline
        if h.value is None:
            return "no headline" + (f" ({h.missing})" if h.missing else "")
        return f"{h.metric} {pct(h.value) if h.is_rate else num(h.value)}"

    def as_dict(self) -> dict[str, object]:
        h = self.headline
        return {
            "id": self.id,
            "format": self.format,
            "status": self.status,
            "folder": self.folder,
            "headline": None if h.value is None else {"metric": h.metric, "value": h.value, "is_rate": h.is_rate},
        }


def list_runs(tree: SourceTree) -> list[Listed]:
    """Every run of the tree, in the build's order (baselines first)."""
    out = []
    for report in check_runs(tree):
        run = report.run
        planned = tree.planned(run.id)
        out.append(Listed(run.id, run.adapter, run.status, tree.source_rel(planned), report.headline))
    return out


def as_table(rows: list[Listed]) -> str:
    """Aligned columns with a header, one run a line; a control character from a run is shown as its
    escape (`sanitize.visible`), so an id cannot recolour the terminal or break the line."""
    cells = [("ID", "FORMAT", "STATUS", "HEADLINE")]
    cells += [(visible(r.id), r.format, visible(r.status), visible(r.headline_text())) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    return "\n".join(f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d}".rstrip() for a, b, c, d in cells)


def as_json(rows: list[Listed]) -> str:
    return json.dumps([r.as_dict() for r in rows], indent=2, ensure_ascii=False)
