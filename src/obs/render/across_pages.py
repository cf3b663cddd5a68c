"""Pages across runs, made from summaries only: sweeps, config diffs, ablation arms, plus the trend,
"what varies" and gate-strip parts of the index, spec and campaign pages.

Each costly group (the arms' statistics and figure; the sweeps chart over every run) goes through
the build's page memo with exactly the inputs it reads, so one changed run re-renders only what it
feeds. matplotlib is reached only through `obs.render.figures`, scipy only inside the campaign
statistics, and both only when a group is really made.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from obs import urls
from obs.analysis import arms as arms_mod
from obs.analysis.config_diff import diff_fields, field_table, what_varies
from obs.analysis.gates import GateContext, GateResult, evaluate_gates, gate_specs_from
from obs.analysis.importance import CI_MIN_RUNS, Importance
from obs.analysis.ranking import RankGroup, rank_groups
from obs.analysis.sweeps import each_sweep, group_sweep, importance_inputs, sweep_importance
from obs.analysis.trends import condition_momentum, series_trends
from obs.cache import hash_json_each
from obs.config import SiteConfig
from obs.jsonutil import dumps
from obs.render import chartdata, paging
from obs.render.datafile import data_file_of_items
from obs.render.format import show_value
from obs.render.site import Renderer
from obs.render.written import WrittenPages
from obs.sitemodel import RunSummary

PageMemo = Callable[[str, Any, Callable[[], Mapping[str, bytes]]], Mapping[str, bytes]]


def no_memo(group: str, inputs: Any, make: Callable[[], Mapping[str, bytes]]) -> Mapping[str, bytes]:
    """Always make the pages. The build passes a memo that reuses a group whose inputs did not change."""
    return make()


SEED_KEYS = ("config.seed", "config.train.seed", "config.training.seed", "config.data_seed")

if TYPE_CHECKING:
    from obs.analysis.campaign import CampaignStats


# ---------------------------------------------------------------------------------------- gates


@dataclass(frozen=True)
class IndexRow:
    """A leaderboard row: the run and its result on each gate of obs.yaml (empty when none are set)."""

    s: RunSummary
    gates: Sequence[GateResult]
    rank: RankGroup = field(default_factory=lambda: RankGroup(""))


def with_gates(
    summaries: list[RunSummary], cfg: SiteConfig, frozen: Mapping[str, str | None] | None = None
) -> list[IndexRow]:
    """Each run with its result on every gate of obs.yaml; `frozen` maps a spec id to its frozen baseline (what
    a gate's `frozen.` reference reads), and every run is there for `baseline.` and `run:ID.`."""
    specs = gate_specs_from(cfg.gates)
    groups = rank_groups(summaries)
    if not specs:  # no gates: no table of every run to read them from, no empty list a row
        return [IndexRow(s, (), groups[s.id]) for s in summaries]
    ctx = GateContext({s.id: s for s in summaries}, frozen or {})
    return [IndexRow(s, evaluate_gates(specs, s, ctx), groups[s.id]) for s in summaries]


# ----------------------------------------------------------------------------------- provenance


PROVENANCE_PRIORITY = ("corpus_hash", "dataset_version", "ontology_catalog", "catalog", "code_commit", "tokenizer")
MAX_AUTO_FACETS = 2  # filter selects on the leaderboard when obs.yaml names none (a phone has little room)


def provenance_groups(summaries: list[RunSummary]) -> list[dict[str, Any]]:
    """Every provenance key with its values and the runs that share each (for grouping and filtering).

    Only keys with 2 to 30 distinct values of which one is shared by two runs or more: a key unique to
    every run (a per-run commit) or the same everywhere groups nothing. Most telling keys first.
    """
    values_by_key: dict[str, dict[str, list[str]]] = {}
    for s in summaries:
        for key, value in sorted(s.fields.items()):
            if key.startswith("provenance."):
                name = key[len("provenance.") :]
                values_by_key.setdefault(name, {}).setdefault(str(value), []).append(s.id)

    def rank(key: str) -> tuple[int, str]:
        return (PROVENANCE_PRIORITY.index(key) if key in PROVENANCE_PRIORITY else len(PROVENANCE_PRIORITY), key)

    out = []
    for key in sorted(values_by_key, key=rank):
        vals = values_by_key[key]
        out.append(
            {
                "key": key,
                "attr": "prov-" + urls.slugify(key).lower().replace(".", "-").replace("_", "-"),
                "options": [{"value": v, "short": _short(v), "runs": ids} for v, ids in sorted(vals.items())],
                "groups": 2 <= len(vals) <= 30 and max(len(ids) for ids in vals.values()) >= 2,
            }
        )
    return out


def provenance_facets(groups: list[dict[str, Any]], cfg: SiteConfig) -> list[dict[str, Any]]:
    """The provenance keys the leaderboard filters by: those named in obs.yaml, else the first telling ones."""
    if cfg.provenance_facets is not None:
        return [g for name in cfg.provenance_facets for g in groups if g["key"] == name]
    return [g for g in groups if g["groups"]][:MAX_AUTO_FACETS]


def _short(value: str) -> str:
    """Hashes are long; a select shows the algorithm and the first 12 hex digits."""
    head, sep, digest = value.partition(":")
    if sep and len(digest) > 16 and all(c in "0123456789abcdef" for c in digest.lower()):
        return f"{head}:{digest[:12]}…"
    if len(value) >= 32 and all(c in "0123456789abcdef" for c in value.lower()):
        return value[:12] + "…"
    return value if len(value) <= 48 else value[:47] + "…"


def provenance_attrs(summary: RunSummary, facets: list[dict[str, Any]]) -> dict[str, str]:
    """The `data-prov-*` attributes of a leaderboard row (the value, or '' when the run lacks the key)."""
    return {f["attr"]: str(summary.fields.get("provenance." + f["key"], "")) for f in facets}


# --------------------------------------------------------------------------------------- sweeps


SWEEP_DRAWN = 300  # lines a sweep's chart draws (and rows its table on the sweeps page lists) at most
SWEEP_PAGE_BUDGET = 1_200_000  # bytes a sweeps page's charts may take, by `_sweep_bytes`'s estimate


def _sweep_bytes(drawn: int, axes: int) -> int:
    """What a chart of `drawn` runs over `axes` axes adds to its page, estimated: ~12 KB of axes, ticks,
    caption and table head, and ~120 bytes a drawn run and axis (its polyline's points and its table cell).
    Measured on the 10,000-run bench site: 173 charts of ~9 runs over 9 axes took 4.0 MB; on 300 runs over 6
    axes, 0.27 MB."""
    return 12_000 + drawn * (axes + 2) * 120


def sweeps_page(
    summaries: list[RunSummary],
    cfg: SiteConfig,
    renderer: Renderer,
    memo: PageMemo | None = None,
    out: MutableMapping[str, bytes] | None = None,
) -> Mapping[str, bytes]:
    """sweeps.html: one parallel-coordinates chart and table per group of runs.

    Bounded for a site of any size (at 10,000 runs one chart of every run was a 19.4 MB page): a chart
    draws at most `SWEEP_DRAWN` lines, the best-ranked, and a group with more runs gets its full table as
    pages of `paging.PAGE_ROWS` rows (`sweeps/<slug>/runs-k.html`); charts past `SWEEP_PAGE_BUDGET` bytes
    (estimated: the 10,000-run bench site, grouped by spec, had 4 MB pages when the budget counted lines
    only) go on sweeps-2.html, sweeps-3.html, ...

    Each sweep's parameter importance is published as `sweeps/<slug>/importance.json`, a page group of its own
    inside "sweeps" (`memo`): a rebuild after one run changed runs the permutation tests of that run's sweep
    only, and reads the others back (they were ~0.1 s of every one-run rebuild of the bench's 240 runs).

    With `out`, each page is written there as it is made and the mapping returned reads them back from it
    (`WrittenPages`): at 10,000 runs the pages held together were ~50 MB, the page phase's largest item. A
    chart's drawing is laid out for its page only, as the page is rendered.
    """
    pages: MutableMapping[str, bytes] = {} if out is None else WrittenPages(out)

    def importance_of(
        slug: str, runs: Sequence[RunSummary], keys: list[tuple[str, list[str]]], outcome: str, hib: bool
    ) -> Importance:
        rel = urls.sweep_importance(slug)
        made = (memo or no_memo)(
            f"sweeps/importance:{slug}",
            importance_inputs(runs, keys, outcome, hib),
            lambda: {rel: dumps(sweep_importance(slug, runs, keys, outcome, hib).as_dict())},
        )
        pages[rel] = made[rel]
        return Importance.from_dict(orjson.loads(pages[rel]), hib)

    # Two passes, so that no sweep is held past its page: the first makes each chart once to know its size
    # (where the pages are cut, and how many there are, which every page's pager says) and its importance
    # (written: `importance.json`); the second makes each page's charts again, reads their importance back, lays
    # them out, writes the page and lets them go. Holding every sweep until the cut was ~2.7 KB a run at 10,000
    # runs, and holding every sweep's importance ~15 MB at 100,000 runs in sweeps of ten (issue 32).
    hib = cfg.metric_higher_is_better
    skipped: list[str] = []
    charts: list[_ChartPlace] = []
    for label, runs, sw, why in each_sweep(summaries, cfg.sweeps, hib, urls.slugify, importance_of):
        if sw is None:
            skipped.append(why or label)
            continue
        charts.append(_ChartPlace(label, runs, _sweep_bytes(min(len(sw.runs), SWEEP_DRAWN), len(sw.axes))))
    cut = paging.cut_by_budget(charts, lambda place: place.cost, SWEEP_PAGE_BUDGET)

    def known_importance(slug: str, runs: Any, keys: Any, outcome: str, higher_is_better: bool) -> Importance:
        """What the first pass wrote (the same object `importance_of` returned it as)."""
        return Importance.from_dict(orjson.loads(pages[urls.sweep_importance(slug)]), higher_is_better)

    first = 1
    for k, part in enumerate(cut, start=1):
        page = urls.numbered(urls.SWEEPS, k)
        nav = paging.pager_of(urls.SWEEPS, k, len(cut), first, first + len(part) - 1, len(charts))
        first += len(part)
        drawn = []
        for place in part:
            sw = group_sweep(place.label, place.runs, cfg.sweeps, hib, urls.slugify, known_importance)
            assert sw is not None  # as in the first pass: the same runs and settings
            drawn.append(_chart(sw, page, renderer, pages))
        pages[page] = renderer.render(
            "sweeps.html",
            root="",
            nav="sweeps",
            charts=drawn,
            skipped=skipped,
            settings=cfg.sweeps,
            n_runs=len(summaries),
            pager=nav,
            importance_ci_runs=CI_MIN_RUNS,
        ).encode()
        del drawn  # drawn: the next page's charts are made when it is
    return pages


@dataclass
class _ChartPlace:
    """A sweep's chart as the first pass leaves it: its group and its estimated bytes on a page."""

    label: str
    runs: list[RunSummary]
    cost: int


def _chart(sw: Any, page: str, renderer: Renderer, pages: MutableMapping[str, bytes]) -> dict[str, Any]:
    """One sweep's chart on `page`: at most `SWEEP_DRAWN` lines (the best-ranked) laid out, and the full table
    as pages of its own when it has more runs."""
    from obs.render.pcp import layout

    rows = sw.table_rows
    shown = sw if len(rows) <= SWEEP_DRAWN else replace(sw, runs=rows[:SWEEP_DRAWN])
    full = None
    if shown is not sw:
        full = {"href": urls.sweep_table(sw.slug, 1), "size": paging.PAGE_ROWS}
        full["pages"] = max(1, -(-len(rows) // paging.PAGE_ROWS))
        _sweep_table_pages(sw, rows, page, renderer, pages)
    hrefs = {r.summary.id: urls.run_page(r.summary.slug) for r in shown.runs}
    return {"sweep": shown, "total": len(rows), "full": full, "all": sw, "pcp": layout(shown, hrefs)}


def _sweep_table_pages(
    sw: Any, rows: list[Any], back: str, renderer: Renderer, pages: MutableMapping[str, bytes]
) -> None:
    """The full table of a sweep whose chart draws only its best-ranked runs, `paging.PAGE_ROWS` a page;
    `back` is the sweeps page that draws its chart."""
    size = paging.PAGE_ROWS
    n = max(1, -(-len(rows) // size))
    for k, chunk in enumerate(paging.chunks(rows, size), start=1):
        page = urls.sweep_table(sw.slug, k)
        pages[page] = renderer.page(
            "sweep_table.html",
            page,
            nav="sweeps",
            sw=sw,
            rows=chunk,
            drawn=SWEEP_DRAWN,
            sweeps_page=back,
            pager=paging.pager(urls.sweep_table(sw.slug, 1), k, n, size, len(rows)),
        )


def _inputs(summaries: Sequence[RunSummary], keep: tuple[str, ...]) -> str:
    """The named fields of each summary, by id: exactly what a page group reads (its memo key), hashed
    one run at a time, so the key of a group over 100,000 runs never holds all their fields at once."""
    return hash_json_each({k: getattr(s, k) for k in keep} for s in sorted(summaries, key=lambda s: s.id))


summary_fields = _inputs


def summaries_key(runs: Sequence[RunSummary]) -> str:
    """Every field of each run, in the order given, hashed one run at a time: the memo key of a group that reads
    whole summaries (a campaign, the runs in none). As a list of every run's `to_json()` it was ~8 KB a run held
    at once, ~800 MB for a site of 100,000 runs with obs.yaml's coupling view (issue 32)."""
    return hash_json_each(s.to_json() for s in runs)


def sweeps_inputs(summaries: list[RunSummary], cfg: SiteConfig) -> list[Any]:
    """Exactly what the sweeps page reads of each run (so unrelated summary changes reuse it)."""
    keep = (
        "id",
        "slug",
        "spec",
        "campaign",
        "condition",
        "seed",
        "arm",
        "primary_axis",
        "headline",
        "rates",
        "finals",
        "fields",
    )
    return [_inputs(summaries, keep), cfg.sweeps]


# ---------------------------------------------------------------------------------- config diff


def diff_context(run: RunSummary, base: RunSummary, cfg: SiteConfig) -> dict[str, Any]:
    diff = diff_fields(base.id, base.fields, run.id, run.fields, cfg.axes)
    return {"run": run, "base": base, "diff": diff}


def _with_baselines(summaries: list[RunSummary]) -> list[tuple[RunSummary, RunSummary]]:
    """(run, its baseline) for every run whose declared baseline is in the site, by run id."""
    by_id = {s.id: s for s in summaries}
    pairs = [(s, by_id.get(s.baseline or "")) for s in sorted(summaries, key=lambda s: s.id)]
    return [(s, base) for s, base in pairs if base is not None]


def diff_pages(summaries: list[RunSummary], cfg: SiteConfig, renderer: Renderer) -> dict[str, bytes]:
    """runs/<slug>/vs-baseline.html for every run whose declared baseline is in the site."""
    return diff_pages_of(_with_baselines(summaries), cfg, renderer)


DIFF_CHUNK = 1000  # diff pages a page group makes (and the build holds) at once


def diff_chunks(summaries: list[RunSummary]) -> list[list[tuple[RunSummary, RunSummary]]]:
    """The (run, baseline) pairs of the diff pages, by run id, `DIFF_CHUNK` a group: at 100,000 runs one
    group of every diff page was ~0.8 GB of pages held at once."""
    pairs = _with_baselines(summaries)
    return [pairs[i : i + DIFF_CHUNK] for i in range(0, len(pairs), DIFF_CHUNK)]


def diff_chunk_inputs(pairs: list[tuple[RunSummary, RunSummary]], cfg: SiteConfig) -> list[Any]:
    """What a group of diff pages reads: each run's and its baseline's fields (their page-memo key)."""
    return [_inputs([s for s, _ in pairs], DIFF_KEYS), _inputs([b for _, b in pairs], DIFF_KEYS), cfg.axes]


def diff_pages_of(pairs: list[tuple[RunSummary, RunSummary]], cfg: SiteConfig, renderer: Renderer) -> dict[str, bytes]:
    """The diff page of each (run, baseline) pair."""
    pages: dict[str, bytes] = {}
    for s, base in pairs:
        page = urls.run_diff(s.slug)
        ctx = diff_context(s, base, cfg)
        pages[page] = renderer.page("diff.html", page, **ctx)
    return pages


def diff_pairs(
    summaries: list[RunSummary],
    cfg: SiteConfig,
    order: Callable[[RunSummary], Any] | None = None,
    limit: int | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The index's list of declared pairs (run, baseline, how many and which keys differ), by run id or by
    `order`, the first `limit` of them diffed, and how many pairs there are in all (at 100,000 runs
    diffing every pair for the 500 the index shows took most of its time)."""
    pairs = _with_baselines(summaries)
    if order is not None:
        pairs.sort(key=lambda pair: order(pair[0]))
    out = []
    for s, base in pairs[:limit]:
        keys = [r.key for r in diff_context(s, base, cfg)["diff"].rows]
        out.append({"id": s.id, "slug": s.slug, "baseline": base.id, "n": len(keys), "which": keys})
    return out, len(pairs)


DIFF_KEYS = (
    *("id", "slug", "title", "spec", "baseline"),
    *("headline", "headline_is_rate", "delta", "fields", "primary_axis"),
)


COMPARE_KEYS = (*DIFF_KEYS, "arm", "condition", "seed", "status", "has", "finals", "rates")


def diff_inputs(summaries: list[RunSummary], cfg: SiteConfig) -> list[Any]:
    """What the diff pages read of each summary (their page-memo key)."""
    return [_inputs(summaries, DIFF_KEYS), cfg.axes]


def compare_inputs(summaries: list[RunSummary], cfg: SiteConfig) -> list[Any]:
    """What compare.html reads of each summary: the diff's fields, and what its overlay groups by and
    its runs table shows (status, final values, probe rates)."""
    return [_inputs(summaries, COMPARE_KEYS), cfg.axes]


def _finite(values: dict[str, float | None]) -> dict[str, float]:
    return {k: v for k, v in sorted(values.items()) if v is not None and math.isfinite(v)}


def default_pair(runs: list[RunSummary]) -> tuple[int, int]:
    """The pair compare.html opens on: the first run (by id) with its declared baseline, else the first two."""
    index = {r.id: i for i, r in enumerate(runs)}
    for i, r in enumerate(runs):
        j = index.get(r.baseline or "")
        if j is not None and j != i:
            return j, i
    return 0, min(1, len(runs) - 1)


COMPARE_INLINE = 2_000  # runs compare.html carries in its own data block; past that, in data files
COMPARE_SHARD = 10_000  # runs a compare data file holds (~1 MB)


def compare_page(summaries: list[RunSummary], cfg: SiteConfig, renderer: Renderer) -> dict[str, bytes]:
    """compare.html: any two runs' config diff, picked in the page (a small local script).

    The page carries every run's fields as a `FieldTable` (JSON, indices into distinct values) and
    is rendered with the diff of a default pair, so it is a complete page without JavaScript too.
    The overlay (assets/overlay.js) groups runs by any of these keys, or by spec, arm, condition or
    seed, which each run's entry carries beside its cells; the runs table (assets/runs-table.js)
    shows any of them with the run's final-window values and probe rates.

    Past `COMPARE_INLINE` runs the page stays small (at 10,000 runs it was 2.6 MB, a box per run): the
    data goes into files of `COMPARE_SHARD` runs beside it (`compare-data-k.js`, loaded by
    assets/compare-data.js), the overlay's pick list is made by its script (a search, a page of runs at
    a time) and each run of the pair is picked by typing its id.
    """
    runs = sorted(summaries, key=lambda s: s.id)
    table = field_table((r.fields for r in runs), cfg.axes, show_value)  # one run's fields at a time
    paged = len(runs) > COMPARE_INLINE

    def entry(r: RunSummary, cells: list[int]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": r.id,
            "slug": r.slug,
            "spec": r.spec,
            "arm": r.arm,
            "condition": r.condition,
            "seed": r.seed,
            "status": r.status,
            "finals": _finite(dict(r.finals)),
            "rates": _finite(r.rates),
            "cells": cells,
        }
        if paged and not r.has.curves:  # the page lists no box per run to say it
            out["curves"] = False
        return out

    head = {"keys": table.keys, "axes": table.axes, "values": table.values}
    pages: dict[str, bytes] = {}
    ctx: dict[str, Any] = {"runs": runs, "groups": [], "data": None, "data_src": None, "a": None, "b": None}
    if paged:
        names = []
        for k, start in enumerate(range(0, len(runs), COMPARE_SHARD), start=1):
            stop = start + COMPARE_SHARD
            part = (entry(r, c) for r, c in zip(runs[start:stop], table.cells[start:stop], strict=True))
            name = urls.compare_data(k)
            meta = {"schema": "obs.compare/1", "kind": "runs", "part": k}
            pages[name] = data_file_of_items(meta, part, within=head if k == 1 else {})  # a run at a time
            names.append(name)
        ctx["data_src"] = " ".join(names)
    else:
        ctx["data"] = {**head, "runs": [entry(r, cells) for r, cells in zip(runs, table.cells, strict=True)]}
        groups: dict[str, list[RunSummary]] = {}
        for r in sorted(runs, key=lambda r: (r.spec is None, r.spec or "", r.id)):
            groups.setdefault(r.spec or "no spec", []).append(r)
        ctx["groups"] = list(groups.items())
    if len(runs) >= 2:
        a, b = default_pair(runs)
        ctx.update(diff_context(runs[b], runs[a], cfg), a=runs[a], b=runs[b])
    pages[urls.COMPARE] = renderer.render("compare.html", root="", **ctx).encode()
    return pages


# ------------------------------------------------------------------------------- what varies


def _column_label(runs: list[RunSummary]) -> str:
    """A column of "what varies": the condition or arm its runs share, else the run id(s)."""
    for facet in ("condition", "arm", "revision"):
        values = {r.value_of(facet) for r in runs}
        if len(values) == 1 and None not in values:
            return str(values.pop())
    return ", ".join(r.id for r in runs[:3]) + (f" +{len(runs) - 3}" if len(runs) > 3 else "")


def varies(runs: list[RunSummary]) -> Any:
    """The "what varies" table of a spec or campaign (seeds and run-level facets left out)."""
    return what_varies(runs, ignore=SEED_KEYS, label_of=_column_label)


# ------------------------------------------------------------------------------------- trends


def spec_trends(runs: list[RunSummary], metric: str | None, cfg: SiteConfig) -> list[Any]:
    """Momentum of the spec's headline metric and of every probe rate the runs share, across the ladder."""
    shared = set.intersection(*[set(r.rates) for r in runs]) if runs else set()
    from obs.analysis.scoreboard import order_checks

    metrics = [m for m in [metric, *order_checks(shared)] if m]
    metrics = list(dict.fromkeys(metrics))
    return series_trends(
        runs,
        metrics,
        cfg.trends["recent_runs"],
        cfg.trends["baseline_runs"],
        cfg.metric_higher_is_better,
        lambda m: m in shared or any(r.headline.metric == m and r.headline_is_rate for r in runs),
    )


def campaign_momentum(
    conditions: list[tuple[str, str]], runs: list[RunSummary], final_window: int, cfg: SiteConfig
) -> list[Any]:
    """Per condition: the primary metric's last logged points against the points before, over seeds."""
    recent = cfg.trends["recent_points"] or final_window
    baseline = cfg.trends["baseline_points"]
    out = []
    for name, label in conditions:
        cm = condition_momentum(name, label, [r for r in runs if r.condition == name], recent, baseline)
        if cm is not None:
            out.append(cm)
    return out


# ---------------------------------------------------------------------------------------- arms


def group_stats(group: arms_mod.ArmGroup, cfg: SiteConfig) -> CampaignStats:
    """The arms of one group compared with its reference arm (seeds as the unit): computed once, read by
    the arms page, its analysis.json, and the leaderboard and spec rows of its runs."""
    metric = group.metric
    hib = cfg.metric_higher_is_better(metric) if metric else True
    return arms_mod.arm_stats(group, hib, cfg.final_window, min_effect=cfg.min_effect)


def arms_group_pages(
    group: arms_mod.ArmGroup, stats: CampaignStats, cfg: SiteConfig, renderer: Renderer
) -> dict[str, bytes]:
    """arms/<slug>/index.html, its figures and its analysis.json."""
    metric = group.metric
    pages: dict[str, bytes] = {}
    figures = []
    for i, name in enumerate(arms_mod.curve_metrics(group)[:3]):
        curves = arms_mod.arm_curves(group, name)
        if not curves:
            continue
        from obs.render.figures import multi_line_figure  # matplotlib: only when an arms page is made

        lines = [
            (
                f"{c.arm} (n={c.n})",
                np.asarray(c.steps),
                np.asarray(c.mean),
                np.asarray(c.sd) if c.sd is not None else None,
            )
            for c in curves
        ]
        svg = multi_line_figure(lines, name)
        file = urls.arms_file(group.slug, f"fig-{i + 1}.svg")
        pages[file] = svg
        seeds = ", ".join(f"{c.arm}: {c.n}" for c in curves)
        figures.append(
            {
                "file": file.rsplit("/", 1)[1],
                "metric": name,
                "alt": f"{name} over steps for each arm ({', '.join(c.arm for c in curves)}): mean over seeds, "
                f"with a ± 1 sd band where an arm has more than one seed",
                "caption": f"{name}: mean over seeds per arm (line) and ± 1 sd (band) on the step range every "
                f"seed covers; seeds per arm: {seeds}.",
            }
        )
    pages[urls.arms_file(group.slug, urls.ANALYSIS)] = dumps(
        {"group": group.title, "arms": group.arms, "stats": stats.as_dict()}
    )
    from obs.analysis.metric_views import arms_metrics  # with the statistics' modules, when an arms page is made

    views = arms_metrics(group, cfg.metric_higher_is_better, cfg.final_window, stats)
    key = f"arms:{group.slug}"
    data = chartdata.conditions_data(key, views)
    charts = None
    if data["metrics"]:
        pages[urls.arms_file(group.slug, urls.CURVES)] = chartdata.chart_file(data)
        charts = {"kind": "conditions", "key": key, "data": urls.CURVES}
    page = urls.arms_page(group.slug)
    pages[page] = renderer.page(
        "arms.html",
        page,
        nav="arms",
        g=group,
        stats=stats,
        figures=figures,
        metric=metric,
        metric_views=[v for v in views if v.curves or v.primary],
        charts=charts,
        chart_metric=next((v.metric for v in views if v.curves), metric),
    )
    return pages


def arms_pages(
    summaries: list[RunSummary], cfg: SiteConfig, renderer: Renderer, memo: PageMemo
) -> tuple[dict[str, bytes], list[tuple[arms_mod.ArmGroup, CampaignStats]]]:
    groups = arms_mod.arm_groups(summaries, cfg.arms.get("metric"), cfg.arms.get("baseline"))
    pages: dict[str, bytes] = {}
    results = []
    for g in groups:
        stats = group_stats(g, cfg)  # outside the memo: the index and spec pages read it too
        results.append((g, stats))
        members = _inputs(
            [s for runs in g.runs.values() for s in runs],
            ("id", "slug", "seed", "arm", "headline", "rates", "finals", "curves", "last_step"),
        )
        pages.update(
            memo(
                f"arms:{g.slug}",
                [
                    g.title,
                    g.arms,
                    g.baseline_arm,
                    g.metric,
                    members,
                    cfg.final_window,
                    cfg.min_effect,
                    repr(renderer.meta),
                    [cfg.higher_is_better, cfg.negative_checks],
                ],
                functools.partial(arms_group_pages, g, stats, cfg, renderer),
            )
        )
    return pages, results
