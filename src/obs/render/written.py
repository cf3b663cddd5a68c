"""A page group written through to the site as it is made, never held whole (issue 32).

A family that makes many pages in one memo group (the sweeps pages and their full tables, ~1.5 MB a page:
~50 MB at 10,000 runs, the largest thing the page phase held) writes each page into the build's output
mapping as it comes. The group's `make` still returns a mapping of its pages, as the memo needs their
names: this one holds the names only and reads a page's bytes back from the output when asked.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping


class WrittenPages(MutableMapping[str, bytes]):
    """The pages a group wrote into `out`, by name; a page's bytes are read back from `out`."""

    def __init__(self, out: MutableMapping[str, bytes]) -> None:
        self.out = out
        self.names: dict[str, None] = {}  # in the order written

    def __setitem__(self, rel: str, data: bytes) -> None:
        self.out[rel] = data
        self.names[rel] = None

    def __getitem__(self, rel: str) -> bytes:
        if rel not in self.names:
            raise KeyError(rel)
        return self.out[rel]

    def __delitem__(self, rel: str) -> None:
        raise TypeError("a written page is not taken back")

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def written_to(self, out: object) -> bool:
        """Whether these pages are already in `out` (then adding them there again is nothing to do)."""
        return out is self.out
