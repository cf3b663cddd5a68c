"""cohorts.html: each tag's runs against the runs of the same headline metric without it (`obs.analysis.cohorts`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from obs import urls
from obs.analysis.cohorts import Cohort
from obs.render import paging
from obs.render.learning_pages import interval_parts
from obs.render.site import Renderer


def render_cohorts(
    cohorts: list[Cohort], slugs: dict[str, str], renderer: Renderer, tagged: dict[str, list[str]] | None = None
) -> bytes:
    """The page; `tagged` (tag -> its runs) names the tags that split no comparable set, and their runs."""
    return render_cohort_pages(cohorts, slugs, renderer, tagged)[urls.COHORTS]


def render_cohort_pages(
    cohorts: Sequence[Cohort],
    slugs: dict[str, str],
    renderer: Renderer,
    tagged: dict[str, list[str]] | None = None,
    write: Callable[[str, bytes], None] | None = None,
) -> dict[str, bytes]:
    """cohorts.html, and cohorts-2.html, ... when there are more than `paging.PAGE_ROWS` cohorts (a site of
    10,000 tagged runs in 1,000 comparable sets had a 5.2 MB page); the tags not compared on the first. With
    `write`, each page is written as it is made and none is returned (~0.5 KB a run held together, issue 32)."""
    compared = {c.tag for c in cohorts} if tagged else set()  # read only when some tag may stand alone
    alone = [
        (tag, [(i, slugs.get(i)) for i in ids]) for tag, ids in sorted((tagged or {}).items()) if tag not in compared
    ]
    size = paging.PAGE_ROWS
    n = max(1, -(-len(cohorts) // size))
    pages: dict[str, bytes] = {}
    put = write or pages.__setitem__
    for k, chunk in enumerate(paging.chunks(cohorts, size), start=1):
        rows = [
            {
                "c": c,
                "delta": interval_parts(c.diff),
                "with": [(i, slugs.get(i)) for i in c.with_ids],
                "without": c.diff.n_b,
            }
            for c in chunk
        ]
        page = urls.numbered(urls.COHORTS, k)
        put(
            page,
            renderer.render(
                "cohorts.html",
                root=urls.root_of(urls.COHORTS),
                rows=rows,
                alone=alone if k == 1 else [],
                pager=paging.pager(urls.COHORTS, k, n, size, len(cohorts)),
            ).encode("utf-8"),
        )
    return pages
