"""How features outside the core attach to a build: plugins called at named events.

The build (`obs.build`) knows nothing of publishing. The command line hands it plugins (today
`obs.publish.extras.PublishExtras`: the decision ledger's view with frozen reports, the changes page
of `--compare-to`, 404.html and sitemap.xml) and the build calls each one at these points, in the
spirit of MkDocs' plugin events:

    on_tree(tree)                          after discovery: read what the plugin needs, report problems
                                           into tree.diags
    on_summaries(summaries) -> summaries   before the index pages are keyed and rendered: annotate
                                           (return new records; the cache keeps the originals)
    on_post_build(staging, summaries) -> n after every page is made: write extra files, return the
                                           number of HTML pages written
    manifest_sections() -> dict            sections the plugin adds to index.json (e.g. `learning`)
    fingerprint() -> json                  the plugin's options: part of the no-op check, so another
                                           --compare-to is not mistaken for "nothing changed"
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from obs.pipeline import SourceTree
    from obs.sitemodel import RunSummary
    from obs.write import Staging


class BuildPlugin(Protocol):
    name: str

    def fingerprint(self) -> Any: ...

    def on_tree(self, tree: SourceTree) -> None: ...

    def on_summaries(self, summaries: list[RunSummary]) -> list[RunSummary]: ...

    def on_post_build(self, staging: Staging, summaries: list[RunSummary]) -> int: ...

    def manifest_sections(self) -> dict[str, Any]: ...
