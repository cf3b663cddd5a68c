"""Pages made from run summaries only: leaderboard, spec ladders, campaigns, decision ledger.

None of these re-reads a run's logs; everything comes from the per-run `RunSummary` records, so
they are cheap to rebuild after any change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from obs import urls
from obs.analysis import ladder
from obs.analysis.arms import ArmGroup
from obs.analysis.campaign_gate import campaign_gate
from obs.analysis.campaign_view import CampaignView, campaign_view, condition_names
from obs.analysis.ladder_history import chart_data as history_chart
from obs.analysis.ladder_history import ladder_history
from obs.cache import hash_json
from obs.config import SiteConfig
from obs.jsonutil import dumps
from obs.model import Campaign, Spec
from obs.numbers import delta_text
from obs.render import across_pages as across
from obs.render import chartdata, paging
from obs.render.format import css_token as format_css_token
from obs.render.format import delta_ci
from obs.render.leaderboard import leaderboard_data, run_record
from obs.render.paired_items import paired_views
from obs.render.site import Renderer
from obs.sitemodel import RunSummary

if TYPE_CHECKING:
    from obs.analysis.campaign import CampaignStats
    from obs.analysis.recipes import RecipeLevel

LEADERBOARD_SHARD = 10_000  # runs a leaderboard data file holds (~0.8 MB; a site of 100,000 runs has 10)
INDEX_SPECS = 200  # spec tiles the index holds (~0.2 KB each; 10,000 ladders put it over 2 MB); past that,
# the most recently active, and every ladder on the paged spec ladders list (specs.html, specs-2.html, ...)

PageMemo = across.PageMemo
no_memo = across.no_memo  # always make the pages; the build passes a memo that reuses unchanged groups


@dataclass(frozen=True)
class SitePages:
    """What the pages made from summaries need besides the summaries: settings, specs and campaigns
    found, and their page names."""

    cfg: SiteConfig
    specs: dict[str, Spec]
    campaigns: dict[str, Campaign]
    layout: urls.SiteLayout
    not_read: tuple[str, ...] = ()  # files of the source no format read
    hidden: tuple[str, ...] = ()  # what was read and not shown on purpose, a line each with why


@dataclass
class SiteBuild:
    """What the page families share while the site's pages are made: the inputs, and what a family made that a
    later one reads (the arms' results, each campaign's statistics, every run's seed-level result)."""

    summaries: list[RunSummary]
    site: SitePages
    renderer: Renderer
    memo: PageMemo
    arm_results: list[tuple[ArmGroup, CampaignStats]] = field(default_factory=list)  # family "arms"
    campaign_stats: dict[str, dict[str, Any]] = field(default_factory=dict)  # family "campaigns"
    seed_levels: dict[str, Any] = field(default_factory=dict)  # family "seed levels"
    efficiency: bool = False  # family "efficiency": whether the runs in no campaign got their page
    out: MutableMapping[str, bytes] = field(default_factory=dict)  # where the families of many pages write

    @functools.cached_property
    def by_id(self) -> dict[str, RunSummary]:
        return {s.id: s for s in self.summaries}

    @functools.cached_property
    def specs(self) -> list[dict[str, Any]]:
        """Each spec's ladder as its tile (the index lists them); its page's context is made with the page."""
        return _spec_tiles(self.summaries, self.site)

    @property
    def arm_groups(self) -> list[ArmGroup]:
        return [g for g, _ in self.arm_results]


@dataclass(frozen=True)
class PageFamily:
    """One family of pages made from summaries (a Pelican generator): its name, the function that makes its
    pages, and the families whose results it reads (they come before it in `FAMILIES`)."""

    name: str
    make: Callable[[SiteBuild], dict[str, bytes]]
    reads: tuple[str, ...] = ()


def _arms(b: SiteBuild) -> dict[str, bytes]:
    pages, b.arm_results = across.arms_pages(b.summaries, b.site.cfg, b.renderer, b.memo)
    return pages


def _campaigns(b: SiteBuild) -> dict[str, bytes]:
    pages: dict[str, bytes] = {}
    b.campaign_stats = _campaign_pages(b.summaries, b.site, b.renderer, b.memo, pages)
    return pages


def _seed_levels(b: SiteBuild) -> dict[str, bytes]:
    """Every run's seed-level result (a campaign's, an arm group's, else its recipe's), one file."""
    site = b.site
    b.seed_levels = dict(seed_level_results(site.campaigns, b.campaign_stats, b.summaries, b.arm_results, site.layout))
    b.seed_levels.update(recipe_results(b.summaries, site, frozenset(b.seed_levels)))
    return {urls.SEED_LEVELS: dumps({run: _seed_level_json(level) for run, level in sorted(b.seed_levels.items())})}


def _efficiency(b: SiteBuild) -> dict[str, bytes]:
    """obs.yaml's sample-efficiency and coupling views of the runs that form no campaign, on a page of their own
    (each campaign's page has its own views of its runs); no page when neither view has a run to show."""
    cfg = b.site.cfg
    if not (cfg.sample_efficiency or cfg.coupling):
        return {}
    runs = sorted((s for s in b.summaries if s.campaign is None), key=lambda s: s.id)
    pages = b.memo(
        "efficiency",
        [across.summaries_key(runs), repr(b.renderer.meta), cfg.sample_efficiency, cfg.coupling, cfg.final_window],
        functools.partial(efficiency_pages, runs, cfg, b.renderer),
    )
    b.efficiency = bool(pages)
    return dict(pages)


def efficiency_pages(runs: list[RunSummary], cfg: SiteConfig, renderer: Renderer) -> dict[str, bytes]:
    """The page of `_efficiency`, and its numbers as JSON beside it (`efficiency.json`)."""
    from obs.analysis.coupling import across_runs
    from obs.analysis.sample_efficiency import outside_campaigns
    from obs.render import campaign_views

    declared = {**cfg.sample_efficiency} if cfg.sample_efficiency else {}
    if declared and not declared.get("metric"):
        declared["metric"] = cfg.primary_metric  # no campaign's primary metric here: obs.yaml's
    se = outside_campaigns(declared, runs, cfg.seed_keys, cfg.final_window) if declared else None
    pairs = [
        across_runs(runs, pair)
        for pair in cfg.coupling
        if any(pair["proxy"] in s.finals or pair["downstream"] in s.finals for s in runs)
    ]
    if se is None and not pairs:
        return {}
    ctx = {
        "n_runs": len(runs),
        "final_window": cfg.final_window,
        "size_source": str(declared.get("size_key") or declared.get("series") or ""),
        "size_metric": declared.get("metric"),
        "sample_efficiency": se,
        "sample_efficiency_chart": campaign_views.efficiency_chart(se) if se is not None else None,
        "coupling": [{"pair": p, "plot": campaign_views.scatter(p)} for p in pairs],
    }
    numbers = {
        "runs": len(runs),
        "sample_efficiency": se.as_dict() if se is not None else None,
        "coupling": [p.as_dict() for p in pairs],
    }
    return {
        urls.EFFICIENCY: renderer.render("efficiency.html", root="", e=ctx, nav="efficiency").encode(),
        urls.EFFICIENCY_DATA: dumps(numbers),
    }


# The families of many pages write them into `SiteBuild.out` as they come (never all held) and return none.


def _across(b: SiteBuild) -> dict[str, bytes]:
    _across_pages(b.summaries, b.site.cfg, b.renderer, b.memo, b.out)
    return {}


def _specs(b: SiteBuild) -> dict[str, bytes]:
    _spec_pages(b.specs, b.site, b.by_id, b.arm_groups, b.seed_levels, b.renderer, b.memo, b.out)
    return {}


def _ledger(b: SiteBuild) -> dict[str, bytes]:
    _ledger_page(b.summaries, b.renderer, b.memo, b.out)
    return {}


FAMILIES: tuple[PageFamily, ...] = (
    PageFamily("arms", _arms),
    PageFamily("campaigns", _campaigns),
    PageFamily("seed levels", _seed_levels, reads=("arms", "campaigns")),
    PageFamily("efficiency", _efficiency),
    PageFamily("across runs", _across),
    PageFamily(
        "index",
        lambda b: _index_page(
            b.summaries, b.site, b.renderer, b.specs, b.arm_groups, b.seed_levels, efficiency=b.efficiency, out=b.out
        ),
        reads=("arms", "seed levels", "efficiency"),
    ),
    PageFamily(
        "specs",
        _specs,
        reads=("arms", "seed levels"),
    ),
    PageFamily("ledger", _ledger),
)


def render_site_pages(
    summaries: list[RunSummary],
    site: SitePages,
    renderer: Renderer,
    memo: PageMemo = no_memo,
    families: Sequence[PageFamily] = FAMILIES,
    pages: MutableMapping[str, bytes] | None = None,
) -> MutableMapping[str, bytes]:
    """Every page made from summaries: each family's, in `families`' order, into `pages` (a dict unless
    given: the build passes one that writes each page into its staging folder as it comes, so a site of
    many runs never holds all of its pages at once; the families of many pages, the across-runs pages,
    specs and the ledger, write there themselves). Costly groups (a campaign's statistics and figure) go
    through `memo` with exactly the inputs they depend on, so one changed run re-renders only what it
    feeds."""
    if pages is None:
        pages = {}
    build = SiteBuild(summaries, site, renderer, memo, out=pages)
    for family in families:
        pages.update(family.make(build))
    return pages


def _spec_tiles(summaries: list[RunSummary], site: SitePages) -> list[dict[str, Any]]:
    """Each spec's ladder as the index and the spec ladders list show it (`m.spec_tile`): its runs, newest rung
    last, and what they promoted. The ladder's analyses (history, claim, looks, what varies, trends) are made
    for its page only, as it is rendered (`_spec_pages`): held for every spec from the index to the last spec
    page they were ~3.7 KB a run at 10,000 runs, the page phase's largest item (issue 32)."""
    by_spec: dict[str, list[RunSummary]] = {}  # one pass: filtering every run per spec was quadratic
    for s in summaries:
        if s.spec:
            by_spec.setdefault(s.spec, []).append(s)
    tiles = []
    for spec in sorted(site.specs.values(), key=lambda s: s.id):
        runs = sorted(by_spec.get(spec.id, []), key=_rev_key)
        tiles.append(
            {
                "id": spec.id,
                "slug": site.layout.spec_slug(spec.id),
                "title": spec.title,
                "baseline": spec.baseline,
                "runs": runs,
                "promoted": [s.id for s in runs if s.verdict == "promote"],
            }
        )
    return tiles


def _spec_context(
    tile: dict[str, Any], site: SitePages, by_id: dict[str, RunSummary], all_ids: frozenset[str]
) -> dict[str, Any]:
    """A spec page's context: its ladder, with what varies along it and where its headline is heading."""
    cfg = site.cfg
    ctx = spec_context(site.specs[tile["id"]], tile["runs"], by_id, site.layout, cfg.seed_keys)
    ctx["varies"] = across.varies(ctx["runs"])
    ctx["trends"] = across.spec_trends(ctx["runs"], ctx["primary_metric"], cfg)
    ctx["trend_windows"] = (cfg.trends["recent_runs"], cfg.trends["baseline_runs"])
    ctx["run_ids_all"] = all_ids  # a baseline in the site has a diff page
    return ctx


def _campaign_pages(
    summaries: list[RunSummary], site: SitePages, renderer: Renderer, memo: PageMemo, pages: MutableMapping[str, bytes]
) -> dict[str, dict[str, Any]]:
    """Each campaign's pages into `pages`; returns each campaign's statistics (its analysis.json).

    Each campaign's statistics are computed once, for its pages, and published in its analysis.json; the
    leaderboard and spec rows of its runs read that file. A campaign whose inputs did not change keeps its
    pages (memo) and its statistics are not computed again (nor scipy imported for them).
    """
    cfg = site.cfg
    campaign_stats: dict[str, dict[str, Any]] = {}
    for campaign in sorted(site.campaigns.values(), key=lambda c: c.id):
        members = sorted((s for s in summaries if s.campaign == campaign.id), key=lambda s: s.id)
        slug = site.layout.campaign_slug(campaign.id)
        made = memo(
            f"campaign:{campaign.id}",
            [
                repr(campaign),
                slug,
                across.summaries_key(members),
                repr(renderer.meta),
                cfg.trends,
                [cfg.higher_is_better, cfg.negative_checks],
                repr(cfg.metrics),  # obs.yaml's metric directions (cfg.metric_higher_is_better) and tiers
                [cfg.sample_efficiency, cfg.coupling],
            ],
            functools.partial(_campaign_pages_of, campaign, members, slug, renderer, cfg),
        )
        pages.update(made)
        campaign_stats[campaign.id] = orjson.loads(made[urls.campaign_file(slug, urls.ANALYSIS)])
    return campaign_stats


def _across_pages(
    summaries: list[RunSummary], cfg: SiteConfig, renderer: Renderer, memo: PageMemo, pages: MutableMapping[str, bytes]
) -> None:
    """The sweeps pages, each run's config diff page (a thousand a group) and the compare page."""
    pages.update(
        memo(
            "sweeps",
            across.sweeps_inputs(summaries, cfg),
            lambda: across.sweeps_page(summaries, cfg, renderer, memo, out=pages),
        )
    )
    for k, pairs in enumerate(across.diff_chunks(summaries), start=1):
        make = functools.partial(across.diff_pages_of, pairs, cfg, renderer)
        pages.update(memo("diffs" if k == 1 else f"diffs:{k}", across.diff_chunk_inputs(pairs, cfg), make))
    compare_inputs = across.compare_inputs(summaries, cfg)
    pages.update(memo("compare", compare_inputs, lambda: across.compare_page(summaries, cfg, renderer)))


def _index_page(
    summaries: list[RunSummary],
    site: SitePages,
    renderer: Renderer,
    specs: list[dict[str, Any]],
    arm_groups: list[ArmGroup],
    seed_levels: dict[str, Any],
    *,
    efficiency: bool = False,
    out: MutableMapping[str, bytes] | None = None,
) -> dict[str, bytes]:
    """The index: the leaderboard (its rows past `leaderboard_rows` as a data file), specs, campaigns,
    provenance groups, arm groups and the newest config diffs. With `out`, each page and data file is written
    there as it is made (at 100,000 runs the leaderboard's files held together were ~70 MB) and none returned."""
    cfg, layout = site.cfg, site.layout
    made: dict[str, bytes] = {}
    pages: MutableMapping[str, bytes] = made if out is None else out  # each shard under 2 MB
    frozen = {sid: spec.baseline for sid, spec in site.specs.items()}
    rows = sorted(across.with_gates(summaries, cfg, frozen), key=lambda r: (r.s.date or "", r.s.id), reverse=True)
    campaigns = [campaign_card(c, summaries, layout) for c in sorted(site.campaigns.values(), key=lambda c: c.id)]
    provenance = across.provenance_groups(summaries)
    facets = across.provenance_facets(provenance, cfg)
    spec_links = {ident: urls.spec_page(slug) for ident, slug in layout.specs.items()}
    shown_rows = rows[: cfg.leaderboard_rows]
    prov_attrs = {r.s.id: across.provenance_attrs(r.s, facets) for r in shown_rows}  # the rest made a record each
    # the config diffs table lists the newest pairs, as many as the leaderboard's rows (at 10,000 runs all
    # 9,000 pairs were 3.3 MB of a 4.3 MB page, parsed in one ~1 s task); every run page links its own diff
    newest = {r.s.id: i for i, r in enumerate(rows)}
    diff_pairs, n_diff_pairs = across.diff_pairs(summaries, cfg, lambda s: newest[s.id], cfg.leaderboard_rows)
    rows_src: list[str] = []
    if len(rows) > len(shown_rows):  # a very large site: the page holds the newest, the script loads the rest
        # in files of LEADERBOARD_SHARD runs (each under 2 MB), each made and written before the next
        shards = list(paging.chunks(rows, LEADERBOARD_SHARD))
        for k, chunk in enumerate(shards, start=1):
            records = (  # each made into JSON as it comes
                run_record(
                    r.s,
                    r.gates if cfg.gates else None,
                    spec_links,
                    across.provenance_attrs(r.s, facets),
                    r.rank,
                    seed_levels.get(r.s.id),
                )
                for r in chunk
            )
            name = urls.numbered(urls.LEADERBOARD_DATA, k)
            pages[name] = leaderboard_data(records, k if len(shards) > 1 else None)
            rows_src.append(name)
    shown_specs = specs
    if len(specs) > INDEX_SPECS:
        shown_specs = newest_specs(specs, INDEX_SPECS)
        pages.update(spec_list_pages(specs, renderer))
    pages[urls.INDEX] = renderer.render(
        "index.html",
        root="",
        nav="index",
        rows=shown_rows,
        n_runs=len(rows),
        rows_src=" ".join(rows_src) or None,
        specs=shown_specs,
        n_specs=len(specs),
        campaigns=campaigns,
        statuses=sorted({s.status for s in summaries}),
        verdicts=sorted({s.verdict for s in summaries if s.verdict}),
        spec_names=sorted({s.spec for s in summaries if s.spec}),
        n_decisions=sum(1 for s in summaries if s.verdict),
        spec_links=spec_links,
        gate_specs=cfg.gates,
        facets=facets,
        provenance=[g for g in provenance if g["groups"]],
        prov_attrs=prov_attrs,
        arm_groups=arm_groups,
        diff_pairs=diff_pairs,
        n_diff_pairs=n_diff_pairs,
        seed_levels=seed_levels,
        not_read=site.not_read,
        hidden=site.hidden,
        efficiency=efficiency,
    ).encode()
    return made


def newest_specs(specs: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The `n` spec ladders whose newest run is newest (then by id), in that order: what the index shows of
    a site with more ladders than it holds."""

    def newest(ctx: dict[str, Any]) -> str:
        return max((s.date or "" for s in ctx["runs"]), default="")

    by_id = sorted(specs, key=lambda ctx: ctx["id"])
    return sorted(by_id, key=newest, reverse=True)[:n]


def spec_list_pages(specs: list[dict[str, Any]], renderer: Renderer) -> dict[str, bytes]:
    """Every spec ladder's tile in the given order (by id), `paging.PAGE_ROWS` a page: specs.html,
    specs-2.html, ... (~0.1 MB a page), each linking the others."""
    size = paging.PAGE_ROWS
    n = max(1, -(-len(specs) // size))
    pages: dict[str, bytes] = {}
    for k, chunk in enumerate(paging.chunks(specs, size), start=1):
        page = urls.numbered(urls.SPEC_LIST, k)
        nav = paging.pager(urls.SPEC_LIST, k, n, size, len(specs))
        pages[page] = renderer.render(
            "spec_list.html", root="", nav="index", specs=chunk, n_specs=len(specs), pager=nav
        ).encode()
    return pages


def _spec_pages(
    tiles: list[dict[str, Any]],
    site: SitePages,
    by_id: dict[str, RunSummary],
    arm_groups: list[ArmGroup],
    seed_levels: dict[str, Any],
    renderer: Renderer,
    memo: PageMemo,
    pages: MutableMapping[str, bytes],
) -> None:
    """Each spec's ladder page into `pages`, its context made (and let go) with it; a changed run re-renders its
    own ladder only, and a ladder whose page is kept is not analysed again."""
    # what every spec page reads of the whole site, hashed once (hashing it per spec was quadratic in runs)
    site_wide = hash_json([sorted(by_id), repr(sorted(seed_levels.items()))])
    all_ids = frozenset(by_id)  # one set for every spec (a set per spec was 0.5 MB each at 10,000 runs)
    for tile in tiles:
        groups = [g for g in arm_groups if g.key[0] == tile["id"]]
        page = urls.spec_page(tile["slug"])
        spec = site.specs[tile["id"]]
        members = [s.to_json() for s in tile["runs"]]
        base = by_id.get(spec.baseline) if spec.baseline else None
        baseline = base.to_json() if base else None
        inputs = [repr(spec), tile["slug"], members, baseline, site_wide, [g.slug for g in groups]]
        pages.update(
            memo(
                f"spec:{tile['id']}",
                [
                    *inputs,
                    repr(renderer.meta),
                    site.cfg.trends,
                    site.cfg.fingerprint(),
                ],
                functools.partial(_spec_page_of, tile, groups, site, by_id, all_ids, page, renderer, seed_levels),
            )
        )


def _ledger_page(
    summaries: list[RunSummary], renderer: Renderer, memo: PageMemo, pages: MutableMapping[str, bytes]
) -> None:
    """The decision ledger: every recorded decision, newest first, `paging.PAGE_ROWS` a page (ledger.html,
    ledger-2.html, ...): at 100,000 runs one page of every decision would be ~6 MB. Each page is its own
    memo group, so a new decision re-renders the pages it shifts, not a fixed cost per page."""
    entries = ledger_entries(summaries)
    size = paging.PAGE_ROWS
    n = max(1, -(-len(entries) // size))
    for k, chunk in enumerate(paging.chunks(entries, size), start=1):
        ledger_inputs = across.summary_fields(
            chunk, ("id", "slug", "spec", "date", "decision", "suggested_verdict", "disagrees", "ledger")
        )
        page = urls.numbered(urls.LEDGER, k)
        nav = paging.pager(urls.LEDGER, k, n, size, len(entries))
        pages.update(
            memo(
                "ledger" if k == 1 else f"ledger:{k}",
                [ledger_inputs, [s.id for s in chunk], repr(renderer.meta), [k, n, len(entries)]],
                functools.partial(_ledger_one, page, list(chunk), nav, renderer),
            )
        )


def _ledger_one(page: str, entries: list[RunSummary], nav: paging.Pager, renderer: Renderer) -> dict[str, bytes]:
    return {page: renderer.render("ledger.html", root="", nav="ledger", entries=entries, pager=nav).encode()}


def _spec_page_of(
    tile: dict[str, Any],
    arm_groups: list[ArmGroup],
    site: SitePages,
    by_id: dict[str, RunSummary],
    all_ids: frozenset[str],
    page: str,
    renderer: Renderer,
    seed_levels: dict[str, Any],
) -> dict[str, bytes]:
    ctx = _spec_context(tile, site, by_id, all_ids)
    ctx["arm_groups"] = arm_groups
    return _spec_page(ctx, page, renderer, seed_levels)


def _spec_page(ctx: dict[str, Any], page: str, renderer: Renderer, seed_levels: dict[str, Any]) -> dict[str, bytes]:
    """The spec page, and the chart data of its history across rungs (the campaign pages' chart)."""
    out: dict[str, bytes] = {}
    ctx["charts"] = None
    history = ctx.get("history")
    if history is not None:
        key = f"spec:{ctx['slug']}"
        data = history_chart(key, history)
        if data["metrics"]:
            path = urls.spec_history(ctx["slug"])
            out[path] = chartdata.chart_file(data)
            ctx["charts"] = {"kind": "conditions", "key": key, "data": urls.relative(page, path), "xLabel": "rung"}
    out[page] = renderer.page("spec.html", page, spec=ctx, seed_levels=seed_levels)
    return out


@dataclass(frozen=True)
class SeedLevel:
    """A run's group compared with seeds as the unit (a campaign condition, an ablation arm), as its
    leaderboard and spec rows show it: the same result object as the campaign or arms page."""

    key: str  # the comparison's key in the data-cmp attributes of every page that shows it
    label: str
    href: str  # from the site root
    outcome: str | None  # a stats.Recommendation; None for the baseline condition / reference arm
    n: int
    n_baseline: int


def recipe_results(summaries: Sequence[RunSummary], site: SitePages, skip: frozenset[str]) -> dict[str, RecipeLevel]:
    """Runs judged against their baseline at the seed level because both recipes have replicates (runs that
    differ only by seed), beside the campaign and arms groups (`skip`): `analysis.recipes.site_recipe_pairs`
    judged, the same computation the build handed each run's page and promotion rule."""
    from obs.analysis.recipes import recipe_levels, site_recipe_pairs

    levels = recipe_levels(site_recipe_pairs(summaries, site.cfg, site.specs, site.campaigns, _run_page_of))
    return {run: level for run, level in levels.items() if run not in skip}


def _run_page_of(s: RunSummary) -> str:
    return urls.run_page(s.slug)


def _seed_level_json(level: SeedLevel | RecipeLevel) -> dict[str, Any]:
    """A run's seed-level result as index.json carries it."""
    if isinstance(level, SeedLevel):
        return {
            "key": level.key,
            "label": level.label,
            "page": level.href,
            "unit": "seeds (one value per run)",
            "outcome": level.outcome,
            "n": level.n,
            "n_baseline": level.n_baseline,
        }
    return {**level.as_dict(), "page": level.href}


def seed_level_results(
    campaigns: Mapping[str, Campaign],
    campaign_stats: Mapping[str, dict[str, Any]],
    summaries: Sequence[RunSummary],
    arm_results: list[tuple[ArmGroup, CampaignStats]],
    layout: urls.SiteLayout,
) -> dict[str, SeedLevel]:
    """run id -> its group's seed-level comparison: for a campaign, from the statistics its analysis.json
    publishes (`campaign_stats`, that file's content); for an arm group, from its one computation."""
    out: dict[str, SeedLevel] = {}

    def add(runs: list[RunSummary], stats: dict[str, Any], kind: str, ident: str, name: str, page: str) -> None:
        cand = next((c for c in stats["candidates"] if c["condition"] == name), None)
        if cand is None:
            if name != stats["baseline_condition"]:
                return
            label = f"{'reference arm' if kind == 'arms' else 'baseline condition'} of {ident}"
            level = SeedLevel(f"{kind}:{ident}|{name}", label, page, None, 0, 0)
        else:
            label = f"{name} vs {stats['baseline_label']}, {cand['n']} v {cand['n_baseline']} seeds"
            anchor = f"#cand-{format_css_token(name)}"
            level = SeedLevel(
                f"{kind}:{ident}|{name}", label, page + anchor, cand["recommendation"], cand["n"], cand["n_baseline"]
            )
        for s in runs:
            out[s.id] = level

    for cid, stats in campaign_stats.items():
        page = urls.campaign_page(layout.campaign_slug(cid))
        runs = [s for s in summaries if s.campaign == cid]
        for name in condition_names(campaigns[cid], runs):
            add([s for s in runs if s.condition == name], stats, "campaign", cid, name, page)
    for group, arm_stats in arm_results:
        stats = arm_stats.as_dict()
        for arm, runs in group.runs.items():
            add(runs, stats, "arms", group.slug, arm, urls.arms_page(group.slug))
    return out


def design_text(per_condition: Sequence[int]) -> str:
    """A campaign's design as it is: "4 conditions × 3 seeds" only when every condition has that many runs,
    else "4 conditions, 2-5 seeds each (5, 2, 3, 2)" (a 5/2/3/2 design is not "4 × 5")."""
    k = len(per_condition)
    conditions = f"{k} condition{'s' if k != 1 else ''}"
    if not per_condition:
        return f"{conditions}, no runs"
    lo, hi = min(per_condition), max(per_condition)
    if lo == hi:
        return f"{conditions} × {hi} seed{'s' if hi != 1 else ''}"
    return f"{conditions}, {lo}-{hi} seeds each ({', '.join(map(str, per_condition))})"


def campaign_card(campaign: Campaign, summaries: list[RunSummary], layout: urls.SiteLayout) -> dict[str, Any]:
    """What the index shows of a campaign: cheap, no statistics."""
    runs = [s for s in summaries if s.campaign == campaign.id]
    conditions = condition_names(campaign, runs)
    seeds = sorted({s.seed for s in runs if s.seed is not None} | set(campaign.seeds))
    return {
        "design": design_text([sum(1 for s in runs if s.condition == c) for c in conditions]),
        "id": campaign.id,
        "slug": layout.campaign_slug(campaign.id),
        "title": campaign.title,
        "table": conditions,
        "seeds": seeds,
        "primary_metric": campaign.primary_metric,
        "runs": len(runs),
    }


def _campaign_pages_of(
    campaign: Campaign, members: list[RunSummary], slug: str, renderer: Renderer, cfg: SiteConfig
) -> dict[str, bytes]:
    return campaign_pages(campaign_view(campaign, members, cfg.metric_higher_is_better), slug, renderer, cfg)


def campaign_pages(view: CampaignView, slug: str, renderer: Renderer, cfg: SiteConfig) -> dict[str, bytes]:
    """A campaign's page, its figure and its analysis.json."""
    # the statistics' modules load when a campaign page is made, not for a rebuild that keeps it
    from obs.analysis.campaign import metric_is_rate
    from obs.analysis.metric_views import campaign_metrics

    campaign = view.campaign
    ctx = campaign_context(view, slug)
    ctx["varies"] = across.varies(sorted(view.runs, key=lambda s: (s.condition or "", s.seed or 0, s.id)))
    ctx["momentum"] = across.campaign_momentum(
        [(row.name, row.label) for row in view.table], view.runs, campaign.final_window, cfg
    )
    ctx["momentum_is_rate"] = metric_is_rate(campaign.primary_metric)
    pages: dict[str, bytes] = {}
    figure = campaign_figure(view)
    if figure is not None:
        pages[urls.campaign_file(slug, urls.CAMPAIGN_FIGURE)] = figure
    ctx["has_figure"] = figure is not None
    ctx["metric_views"] = campaign_metrics(view)
    ctx["charts"] = None
    key = f"campaign:{slug}"
    data = chartdata.conditions_data(key, ctx["metric_views"])
    if data["metrics"]:
        pages[urls.campaign_file(slug, urls.CURVES)] = chartdata.chart_file(data)
        ctx["charts"] = {"kind": "conditions", "key": key, "data": urls.CURVES}
    views = declared_views(view, cfg)
    ctx.update(views)
    analysis = {**view.stats.as_dict(), "tiers": view.tiers.as_dict()}
    if views["sample_efficiency"] is not None:
        analysis["sample_efficiency"] = views["sample_efficiency"].as_dict()
    if views["coupling"]:
        analysis["coupling"] = [item["pair"].as_dict() for item in views["coupling"]]
    pages[urls.campaign_file(slug, urls.ANALYSIS)] = dumps(analysis)
    paired = campaign.paired
    ctx["paired_views"], paired_files = paired_views(paired, campaign.id)
    pages.update({urls.campaign_file(slug, name): data for name, data in paired_files.items()})
    page = urls.campaign_page(slug)
    pages[page] = renderer.page("campaign.html", page, c=ctx)
    return pages


def declared_views(view: CampaignView, cfg: SiteConfig) -> dict[str, Any]:
    """obs.yaml's sample-efficiency and coupling views of a campaign's runs (analysis/sample_efficiency.py,
    analysis/coupling.py), with what their sections draw (render/campaign_views.py)."""
    from obs.analysis.coupling import across_runs
    from obs.analysis.sample_efficiency import sample_efficiency
    from obs.render import campaign_views

    runs = [*view.runs, *view.unassigned]
    declared = view.campaign.sample_efficiency or cfg.sample_efficiency  # campaign.yaml's wins
    pairs_declared = view.campaign.coupling or cfg.coupling
    se = (
        sample_efficiency(
            declared,
            runs,
            view.campaign.primary_metric,
            view.campaign.final_window,
            order=[row.name for row in view.table],
        )
        if declared
        else None
    )
    pairs = [  # a pair none of these runs logged either side of is not this campaign's business
        across_runs(runs, pair)
        for pair in pairs_declared
        if any(pair["proxy"] in s.finals or pair["downstream"] in s.finals for s in runs)
    ]
    return {
        "sample_efficiency": se,
        "sample_efficiency_chart": campaign_views.efficiency_chart(se) if se is not None else None,
        "coupling": [{"pair": p, "plot": campaign_views.scatter(p)} for p in pairs],
    }


def campaign_figure(view: CampaignView) -> bytes | None:
    """Each condition's mean curve of the primary metric over seeds, with its 95% band."""
    if not view.curves or not view.campaign.primary_metric:
        return None
    from obs.render.figures import multi_line_figure  # matplotlib: only when a campaign page is made

    return multi_line_figure(
        [(c.label, c.grid, c.mean, c.sd) for c in view.curves],
        view.campaign.primary_metric,
        ci=[c.band for c in view.curves],
    )


def _rev_key(summary: RunSummary) -> tuple[Any, ...]:
    rev = str(summary.revision or "")
    digits = "".join(ch for ch in rev if ch.isdecimal())[:18]  # '²' is a digit int() refuses; 5,000 digits too
    return (int(digits) if digits else 10**9, rev, summary.date or "", summary.id)


def spec_context(
    spec: Spec,
    summaries: list[RunSummary],
    by_id: dict[str, RunSummary],
    layout: urls.SiteLayout,
    seed_keys: Sequence[str] = (),
) -> dict[str, Any]:
    """What a spec's page shows; `summaries` may be every run or only the spec's own."""
    runs = sorted((s for s in summaries if s.spec == spec.id), key=_rev_key)
    frozen = by_id.get(spec.baseline) if spec.baseline else None
    frozen_rows = {}
    for s in runs:
        fd = ladder.frozen_delta(s, frozen, spec)
        if fd is not None:
            text = delta_text(fd.delta, s.headline_is_rate) if fd.delta is not None else None
            frozen_rows[s.id] = {
                "delta": text,
                "tested": fd.tested_as_parent,
                "why_not": fd.why_not,
                "paired": fd.tested,  # the rung's own build tested it against the frozen baseline
                "ci": delta_ci(fd.tested, s.headline_is_rate) if fd.tested else None,
                "problem": s.frozen_problem,
            }
    looks = ladder.looks(runs, spec)
    claim = ladder.ladder_claim(runs, spec, min_effect=spec.min_effect or 0.0, seed_keys=seed_keys)
    return {
        "history": (history := ladder_history(runs, spec, seed_keys=seed_keys)),
        # the chart's metric picker reads `metric`, `primary` and `curves` (the campaign pages' MetricView)
        "history_views": [
            {"metric": c.check, "primary": c.check == history.headline, "curves": True} for c in history.checks
        ]
        if history
        else [],
        "frozen_rows": frozen_rows,
        "claim": claim,
        "claim_is_rate": bool(claim and by_id.get(claim.best) and by_id[claim.best].headline_is_rate),
        "looks": looks,
        "looks_total": len(looks),
        "id": spec.id,
        "slug": layout.spec_slug(spec.id),
        "title": spec.title,
        "question": spec.question,
        "contract": spec.contract,
        "baseline": spec.baseline,
        "baseline_summary": by_id.get(spec.baseline) if spec.baseline else None,
        "primary_metric": spec.primary_metric,
        "runs": runs,
        "promoted": [s.id for s in runs if s.verdict == "promote"],
    }


def ledger_entries(summaries: list[RunSummary]) -> list[RunSummary]:
    entries = [s for s in summaries if s.decision and s.decision.verdict]
    return sorted(
        entries, key=lambda s: ((s.decision.date if s.decision else None) or s.date or "", s.id), reverse=True
    )


def campaign_context(view: CampaignView, slug: str) -> dict[str, Any]:
    campaign = view.campaign
    return {
        "id": campaign.id,
        "slug": slug,
        "title": campaign.title,
        "question": campaign.question,
        "inferred": campaign.inferred,
        "primary_metric": campaign.primary_metric,
        "baseline_condition": campaign.baseline_condition,
        "final_window": campaign.final_window,
        "alpha": campaign.alpha,
        "evidence": campaign.evidence,
        "litmus": campaign.litmus,
        "seeds": view.seeds,
        "table": view.table,
        "design": design_text([sum(1 for c in row.cells if c is not None) for row in view.table]),
        "runs": view.runs,
        "unassigned": view.unassigned,
        "stats": view.stats,
        "tiers": view.tiers,
        "gate": campaign_gate(view),
        "paired_only": not view.table and bool(view.stats.paired),
    }
