"""cohorts.html: each tag's runs against the runs of the same headline metric without it (`obs.analysis.cohorts`)."""

from __future__ import annotations

from obs import urls
from obs.analysis.cohorts import Cohort
from obs.render.learning_pages import interval_parts
from obs.render.site import Renderer


def render_cohorts(
    cohorts: list[Cohort], slugs: dict[str, str], renderer: Renderer, tagged: dict[str, list[str]] | None = None
) -> bytes:
    """The page; `tagged` (tag -> its runs) names the tags that split no comparable set, and their runs."""
    compared = {c.tag for c in cohorts}
    alone = [
        (tag, [(i, slugs.get(i)) for i in ids]) for tag, ids in sorted((tagged or {}).items()) if tag not in compared
    ]
    rows = [
        {
            "c": c,
            "delta": interval_parts(c.diff),
            "with": [(i, slugs.get(i)) for i in c.with_ids],
            "without": len(c.without_ids),
        }
        for c in cohorts
    ]
    return renderer.render("cohorts.html", root=urls.root_of(urls.COHORTS), rows=rows, alone=alone).encode("utf-8")
