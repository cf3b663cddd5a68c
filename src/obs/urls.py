"""The site's layout: where every page and file lives, in one place.

Python and templates both ask here (templates through the `urls` global) instead of writing
`runs/<slug>/index.html` themselves, so the layout can change in one module. Paths are relative to
the site root and use `/`; a page links to another with `root_of(page) + path`, which works from
`file://`, from a web server and under a sub-path such as GitHub Pages' `/<repo>/`.

Ids become file names through `slugify`; `SiteLayout` makes them unique per kind (two ids that map
to one name, such as `a/b` and `a:b`, get `a-b` and `a-b-2`), so no page is silently shared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")
MAX_SLUG = 80

INDEX = "index.html"
LEDGER = "ledger.html"
SPEC_LIST = "specs.html"  # every spec ladder's tile, paged, when the index shows only the most recently active
SWEEPS = "sweeps.html"
COMPARE = "compare.html"
CHANGES = "changes.html"
COHORTS = "cohorts.html"  # tag cohorts: each tag's runs against the runs without it
EFFICIENCY = "efficiency.html"  # sample efficiency and coupling of the runs that form no campaign
EFFICIENCY_DATA = "efficiency.json"  # ... its numbers
COHORTS_DATA = (
    "cohorts.json"  # ... their numbers per comparable set (cohorts-2.json, ... past 1.5 MB), reused by the next build
)
NOT_FOUND = "404.html"
SITEMAP = "sitemap.xml"
MANIFEST = "index.json"
ASSETS = "assets"
RUNS = "runs"
SPECS = "specs"
CAMPAIGNS = "campaigns"
ARMS = "arms"
ANALYSIS = "analysis.json"
DIFF = "vs-baseline.html"
SEED_LEVELS = "seed-levels.json"  # every run's seed-level result (campaign, arms, recipe): index.json embeds it
LEADERBOARD_DATA = "leaderboard.js"  # every run of the leaderboard, when its page holds only the newest
CAMPAIGN_FIGURE = "fig-conditions.svg"
LEARNING = "learning"  # agent learning keys: learning/index.html and a page per key
CURVES = "curves.js"  # a run's chart data (obs.render.chartdata); campaign and arms pages have one too
MANIFEST_SHARDS = "index"  # index.json's runs, a page of them a file, when a site has more than fit in it
COMPARE_DATA = "compare-data"  # compare.html's runs, a page of them a file (compare-data-1.js, ...)


def slugify(name: str) -> str:
    """A file-name-safe form of an id (not unique on its own: see `unique_slugs`)."""
    slug = SLUG_UNSAFE.sub("-", name).strip("-.")
    return slug[:MAX_SLUG] or "run"


def unique_slugs(ids: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Slug per id, in the given order; a clash (compared without case, as macOS file systems do)
    gets `-2`, `-3`, ..."""
    used = {t.lower() for t in taken}
    out: dict[str, str] = {}
    for ident in ids:
        slug = base = slugify(ident)
        n = 2
        while slug.lower() in used:
            slug = f"{base}-{n}"
            n += 1
        used.add(slug.lower())
        out[ident] = slug
    return out


def root_of(page: str) -> str:
    """The relative way back to the site root from `page` (`runs/x/index.html` -> `../../`)."""
    return "../" * page.count("/")


def relative(from_page: str, to: str) -> str:
    """The shortest relative link from `from_page` to `to` (both site paths): `runs/a/index.html` ->
    `runs/b/index.html` is `../b/index.html`, -> `specs/s.html` is `../../specs/s.html`."""
    here = from_page.split("/")[:-1]
    there = to.split("/")
    common = 0
    while common < len(here) and common < len(there) - 1 and here[common] == there[common]:
        common += 1
    return "../" * (len(here) - common) + "/".join(there[common:])


def numbered(page: str, k: int) -> str:
    """Page `k` (from 1) of a paged page or data file: the first keeps its name (`ledger.html`), the next are
    `ledger-2.html`, `ledger-3.html`, ... in the same folder, so links to the first page never change."""
    if k <= 1:
        return page
    stem, dot, ext = page.rpartition(".")
    return f"{stem}-{k}.{ext}" if dot else f"{page}-{k}"


def manifest_shard(k: int) -> str:
    """Shard `k` (from 1) of index.json's runs: `index/runs-0001.json`."""
    return f"{MANIFEST_SHARDS}/runs-{k:04d}.json"


def compare_data(k: int) -> str:
    """Shard `k` (from 1) of compare.html's runs."""
    return f"{COMPARE_DATA}-{k}.js"


def sweep_table(slug: str, k: int) -> str:
    """Page `k` (from 1) of the full table of a sweep with more runs than its chart draws: a folder per
    sweep (`sweeps/<slug>/runs.html`, `runs-2.html`, ...), so one sweep's pages never take another's name."""
    return numbered(f"sweeps/{slug}/runs.html", k)


def sweep_importance(slug: str) -> str:
    """A sweep's parameter importance (obs.analysis.importance) as JSON: published for other tools, and read
    back by the next build when the sweep's runs did not change (its permutation tests are not run again)."""
    return f"sweeps/{slug}/importance.json"


def run_dir(slug: str) -> str:
    return f"{RUNS}/{slug}/"


def run_page(slug: str) -> str:
    return f"{RUNS}/{slug}/{INDEX}"


def run_file(slug: str, name: str) -> str:
    """A file of a run's folder in the site (its analysis.json, figures, renders)."""
    return f"{RUNS}/{slug}/{name}"


def run_curves(slug: str) -> str:
    """The run's chart data, loaded by its page and by compare.html's overlay."""
    return run_file(slug, CURVES)


def run_analysis(slug: str) -> str:
    return run_file(slug, ANALYSIS)


def run_diff(slug: str) -> str:
    """The run's config diff against its baseline."""
    return run_file(slug, DIFF)


def spec_page(slug: str) -> str:
    return f"{SPECS}/{slug}.html"


def spec_history(slug: str) -> str:
    """The spec page's chart data: its rungs' probe rates across the ladder (analysis.ladder_history)."""
    return f"{SPECS}/{slug}.history.js"


def campaign_page(slug: str) -> str:
    return f"{CAMPAIGNS}/{slug}/{INDEX}"


def campaign_file(slug: str, name: str) -> str:
    return f"{CAMPAIGNS}/{slug}/{name}"


def arms_page(slug: str) -> str:
    return f"{ARMS}/{slug}/{INDEX}"


def arms_file(slug: str, name: str) -> str:
    return f"{ARMS}/{slug}/{name}"


def learning_index() -> str:
    return f"{LEARNING}/index.html"


def learning_page(slug: str) -> str:
    return f"{LEARNING}/{slug}.html"


def asset(name: str) -> str:
    return f"{ASSETS}/{name}"


def run_page_of(page_path: str) -> str | None:
    """The run slug of a page under runs/ (None for any other page)."""
    parts = page_path.split("/")
    return parts[1] if len(parts) >= 3 and parts[0] == RUNS else None


@dataclass(frozen=True)
class SiteLayout:
    """Unique slugs for the runs, specs and campaigns of one site."""

    runs: dict[str, str] = field(default_factory=dict)  # run id -> slug (made by the build plan)
    specs: dict[str, str] = field(default_factory=dict)
    campaigns: dict[str, str] = field(default_factory=dict)

    @classmethod
    def make(cls, run_slugs: dict[str, str], spec_ids: Iterable[str], campaign_ids: Iterable[str]) -> SiteLayout:
        return cls(dict(run_slugs), unique_slugs(sorted(spec_ids)), unique_slugs(sorted(campaign_ids)))

    def renamed(self) -> list[tuple[str, str, str]]:
        """(kind, id, slug) for every spec or campaign whose page name is not its plain slug."""
        return [
            (kind, ident, slug)
            for kind, table in (("spec", self.specs), ("campaign", self.campaigns))
            for ident, slug in sorted(table.items())
            if slug != slugify(ident)
        ]

    def run(self, run_id: str | None) -> str | None:
        """The run's page, or None for a run that is not in the site."""
        slug = self.runs.get(run_id) if run_id else None
        return run_page(slug) if slug else None

    def spec(self, spec_id: str | None) -> str | None:
        slug = self.specs.get(spec_id) if spec_id else None
        return spec_page(slug) if slug else None

    def campaign(self, campaign_id: str | None) -> str | None:
        slug = self.campaigns.get(campaign_id) if campaign_id else None
        return campaign_page(slug) if slug else None

    def spec_slug(self, spec_id: str) -> str:
        return self.specs.get(spec_id) or slugify(spec_id)

    def campaign_slug(self, campaign_id: str) -> str:
        return self.campaigns.get(campaign_id) or slugify(campaign_id)
