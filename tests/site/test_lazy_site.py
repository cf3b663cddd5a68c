"""The demo built with every summary held lazily (as a build past `EAGER_UP_TO` runs holds them) is the same
bytes as the demo built with decoded summaries (as a build of its 73 runs holds them): the lazy path is what
100,000 runs take, and no demo-sized build would otherwise exercise it."""

from __future__ import annotations

from pathlib import Path

import pytest

from obs import lazysummary
from obs.build import BuildOptions
from obs.publish.extras import build_published
from sitefiles import tree_digest


def test_the_demo_from_lazy_summaries_is_the_same_bytes(
    demo_source: Path, demo_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lazysummary, "EAGER_UP_TO", 0)
    made: list[object] = []
    real = lazysummary.LazySummary.__init__

    def counted(
        self: lazysummary.LazySummary,
        data: bytes,
        over: dict[str, object] | None = None,
        names: tuple[str, str] = ("", ""),
    ) -> None:
        made.append(names)
        real(self, data, over, names)

    monkeypatch.setattr(lazysummary.LazySummary, "__init__", counted)
    out = tmp_path / "site"
    result = build_published(BuildOptions(source=demo_source, out=out, quiet=True))
    assert result.errors == 0 and len(made) >= result.runs > 50  # every run's summary was held lazily
    assert sum(1 for n in made if n != ("", "")) >= 2 * result.runs  # each given the plan's names (two passes)
    assert tree_digest(out) == tree_digest(demo_site)
