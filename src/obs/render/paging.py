"""Bounded pages for very large sites: a long list cut into numbered pages, a pager to walk them.

At 10,000 runs the sweeps page was 19.4 MB and the ledger 2 MB, and both grow with every run; a page of
a static site must stay small enough to open (issue 32: no page over 2 MB at 100,000 runs). A list past
its page size is cut into pages of a fixed number of items (`urls.numbered`: `ledger.html`,
`ledger-2.html`, ...); each page links the others through `pager`. Cutting is by count, in the list's
own order, so the same list gives the same pages (and the same bytes) on every build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from obs import urls

T = TypeVar("T")

PAGE_ROWS = 500  # rows of a paged table (ledger, a sweep's full table): ~0.3-0.6 MB of HTML a page
WINDOW = 3  # page links shown either side of the current one


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """`items` in consecutive slices of `size` (the last may be shorter); one empty slice for no items."""
    if size < 1:
        raise ValueError("a page holds at least one item")
    if not items:
        yield items[:0]
        return
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass(frozen=True)
class PageLink:
    k: int
    href: str | None  # None: the current page, or a gap ("…")
    label: str


@dataclass(frozen=True)
class Pager:
    """Where page `k` of `n` stands, with links relative to the folder its pages share."""

    k: int
    n: int
    first_item: int  # 1-based numbers of the items this page holds, and of all of them
    last_item: int
    total: int
    prev: str | None
    next: str | None
    links: tuple[PageLink, ...]

    @property
    def paged(self) -> bool:
        return self.n > 1


def pager(first_page: str, k: int, n: int, size: int, total: int) -> Pager:
    """The pager of page `k` of `n` of a list of `total` items, `size` a page, whose first page is
    `first_page` (links are file names: the pages share one folder)."""
    return pager_of(first_page, k, n, (k - 1) * size + 1 if total else 0, min(total, k * size), total)


def pager_of(first_page: str, k: int, n: int, first_item: int, last_item: int, total: int) -> Pager:
    """The pager of page `k` of `n` holding items `first_item`..`last_item` (1-based) of `total`."""

    def name(i: int) -> str:
        return urls.numbered(first_page, i).rsplit("/", 1)[-1]

    shown = sorted({1, n, *range(max(1, k - WINDOW), min(n, k + WINDOW) + 1)})
    links: list[PageLink] = []
    for i, page in enumerate(shown):
        if i and page - shown[i - 1] > 1:
            links.append(PageLink(0, None, "…"))
        links.append(PageLink(page, None if page == k else name(page), str(page)))
    return Pager(
        k=k,
        n=n,
        first_item=first_item,
        last_item=last_item,
        total=total,
        prev=name(k - 1) if k > 1 else None,
        next=name(k + 1) if k < n else None,
        links=tuple(links),
    )


def cut_by_budget(items: Sequence[T], cost: Callable[[T], int], budget: int) -> list[list[T]]:
    """`items` in order, cut into pages whose summed `cost` stays within `budget` (an item costlier than
    the budget gets a page of its own); one empty page for no items."""
    pages: list[list[T]] = [[]]
    spent = 0
    for item in items:
        c = cost(item)
        if pages[-1] and spent + c > budget:
            pages.append([])
            spent = 0
        pages[-1].append(item)
        spent += c
    return pages
