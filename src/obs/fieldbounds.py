"""Plain-text fields of a run cut to a length a page can lay out, with a notice.

A title, a date or a status is one line of text shown in several places of several pages (the run
card, the leaderboard, the spec ladder, the compare picker, index.json). Nothing bounds what a file
may hold there: a 200,000-character title took a browser 36 s to lay out, a date of that size 137 s,
and a 2 MB W&B `startedAt` kept a page from ever loading. So after a run is loaded, each such field
longer than its bound below is cut (at the bound, with an ellipsis) and one warning per field names
its full length. A run's field up to `MAX_KEPT` characters is also kept whole (`Run.full_text`), and
the run page shows it in a collapsed block: closed, the browser does not lay it out, so it costs the
page nothing until a reader asks for it. Lists of short labels (tags, held-constant keys) are bounded
in count too. Text that is Markdown (hypothesis, notes, lessons) has its own bounds (`obs.textbounds`).
Ids are not cut: an id is a reference other files make, and its page name is bounded by `obs.urls`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from obs.diagnostics import Diagnostics
from obs.model import Run

# field -> characters shown
MAX_FIELD = {
    "title": 300,
    "date": 64,
    "status": 64,
    "revision": 120,
    "spec": 200,
    "campaign": 200,
    "condition": 200,
    "arm": 200,
    "primary_metric": 200,
    "primary_axis": 200,
    "target_failure_class": 200,
}
MAX_GROUP_FIELD = {"title": 300}  # a spec's or a campaign's
MAX_LABEL = 200  # one tag or one held-constant key
MAX_LABELS = 100  # tags, held-constant keys
MAX_KEPT = 20_000  # a cut field of a run up to this long is kept whole for the run page's collapsed block


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bound_fields(obj: Any, limits: dict[str, int], diags: Diagnostics, where: Path) -> None:
    """Cut each plain-text field of `obj` named in `limits`, one warning per field that was cut; the whole
    text kept in `obj.full_text` (a run's) when it is at most `MAX_KEPT` characters."""
    kept: dict[str, str] | None = getattr(obj, "full_text", None)
    for name, limit in limits.items():
        value: Any = getattr(obj, name, None)
        if isinstance(value, str) and len(value) > limit:
            setattr(obj, name, cut(value, limit))
            whole = ""
            if kept is not None and len(value) <= MAX_KEPT:
                kept[name] = value
                whole = ", the whole text in a collapsed block on the run page"
            diags.warning(where, f"'{name}' is {len(value):,} characters long; pages show its first {limit}{whole}")


def bound_run_fields(run: Run, diags: Diagnostics) -> None:
    """Cut the plain-text fields of `run` to their bounds, one warning per field that was cut."""
    where = run.source_dir / "run.yaml" if (run.source_dir / "run.yaml").is_file() else run.source_dir
    bound_fields(run, MAX_FIELD, diags, where)
    for name in ("tags", "held_constant"):
        items: list[Any] = getattr(run, name)
        long = [i for i in items if isinstance(i, str) and len(i) > MAX_LABEL]
        if long or len(items) > MAX_LABELS:
            setattr(run, name, [cut(i, MAX_LABEL) if isinstance(i, str) else i for i in items[:MAX_LABELS]])
            diags.warning(
                where,
                f"'{name}' holds {len(items):,} entries ({len(long)} longer than {MAX_LABEL} characters); pages show "
                f"the first {min(len(items), MAX_LABELS)}, each cut to {MAX_LABEL} characters",
            )
