"""Pages made from run summaries only: leaderboard, spec ladders, campaigns, decision ledger.

None of these re-reads a run's logs; everything comes from the per-run summary records, so they
are cheap to rebuild after any change.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from obs.analysis.campaign import campaign_stats, finals_from_summaries, metric_is_rate
from obs.analysis.paired_systems import PairedSpec
from obs.config import SiteConfig
from obs.discover import Discovery
from obs.jsonutil import dumps
from obs.model import Campaign, Spec
from obs.plan import slugify
from obs.render import across_pages as across
from obs.render.site import Renderer

GRID_POINTS = 200


PageMemo = Callable[[str, Any, Callable[[], dict[str, bytes]]], dict[str, bytes]]


def no_memo(group: str, inputs: Any, make: Callable[[], dict[str, bytes]]) -> dict[str, bytes]:
    """Always make the pages. The build passes a memo that reuses a group whose inputs did not change."""
    return make()


def render_site_pages(
    summaries: list[dict[str, Any]],
    found: Discovery,
    cfg: SiteConfig,
    renderer: Renderer,
    memo: PageMemo = no_memo,
) -> dict[str, bytes]:
    """Every page made from summaries. Costly groups (a campaign's statistics and figure) go through
    `memo` with exactly the inputs they depend on, so one changed run re-renders only what it feeds."""
    pages: dict[str, bytes] = {}
    by_id = {s["id"]: s for s in summaries}
    rows = sorted(across.with_gates(summaries, cfg), key=lambda s: (s["date"] or "", s["id"]), reverse=True)
    specs = [spec_context(spec, summaries, by_id) for spec in sorted(found.specs.values(), key=lambda s: s.id)]
    for ctx in specs:  # across runs: what varies along the ladder, and where the headline is heading
        ctx["varies"] = across.varies(ctx["runs"])
        ctx["trends"] = across.spec_trends(ctx["runs"], ctx["primary_metric"], cfg)
        ctx["trend_windows"] = (cfg.trends["recent_runs"], cfg.trends["baseline_runs"])
        ctx["run_ids_all"] = set(by_id)  # a baseline in the site has a diff page
    campaigns = [campaign_card(c, summaries) for c in sorted(found.campaigns.values(), key=lambda c: c.id)]
    provenance = across.provenance_groups(summaries)
    facets = across.provenance_facets(provenance, cfg)
    arm_pages, arm_groups = across.arms_pages(summaries, cfg, renderer, memo, align_curves)
    pages.update(arm_pages)
    pages.update(
        memo("sweeps", across.sweeps_inputs(summaries, cfg), lambda: across.sweeps_page(summaries, cfg, renderer))
    )
    diff_inputs = across.diff_inputs(summaries, cfg)  # both pages read the same fields of each run
    pages.update(memo("diffs", diff_inputs, lambda: across.diff_pages(summaries, cfg, renderer)))
    pages.update(memo("compare", diff_inputs, lambda: across.compare_page(summaries, cfg, renderer)))
    pages["index.html"] = renderer.render(
        "index.html",
        root="",
        nav="index",
        rows=rows,
        specs=specs,
        campaigns=campaigns,
        statuses=sorted({s["status"] for s in summaries}),
        verdicts=sorted({s["verdict"] for s in summaries if s["verdict"]}),
        spec_names=sorted({s["spec"] for s in summaries if s["spec"]}),
        n_decisions=sum(1 for s in summaries if s["verdict"]),
        spec_links={s.id: f"specs/{slugify(s.id)}.html" for s in found.specs.values()},
        gate_specs=cfg.gates,
        facets=facets,
        provenance=[g for g in provenance if g["groups"]],
        prov_attrs={s["id"]: across.provenance_attrs(s, facets) for s in summaries},
        arm_groups=arm_groups,
        diff_pairs=across.diff_pairs(summaries, cfg),
    ).encode()
    for ctx in specs:
        ctx["arm_groups"] = [g for g in arm_groups if g.key[0] == ctx["id"]]
        pages[f"specs/{ctx['slug']}.html"] = renderer.render("spec.html", root="../", spec=ctx).encode()
    for campaign in sorted(found.campaigns.values(), key=lambda c: c.id):
        members = sorted((s for s in summaries if s["campaign"] == campaign.id), key=lambda s: s["id"])
        pages.update(
            memo(
                f"campaign:{campaign.id}",
                [repr(campaign), members, repr(renderer.meta), cfg.trends],
                functools.partial(campaign_pages, campaign, summaries, renderer, cfg),
            )
        )
    pages["ledger.html"] = renderer.render(
        "ledger.html", root="", nav="ledger", entries=ledger_entries(summaries)
    ).encode()
    return pages


def campaign_card(campaign: Campaign, summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """What the index shows of a campaign: cheap, no statistics."""
    runs = [s for s in summaries if s["campaign"] == campaign.id]
    conditions = [c.name for c in campaign.conditions] or sorted({s["condition"] for s in runs if s["condition"]})
    seeds = sorted({s["seed"] for s in runs if s["seed"] is not None} | set(campaign.seeds))
    return {
        "id": campaign.id,
        "slug": slugify(campaign.id),
        "title": campaign.title,
        "table": conditions,
        "seeds": seeds,
        "primary_metric": campaign.primary_metric,
        "runs": len(runs),
    }


def campaign_pages(
    campaign: Campaign, summaries: list[dict[str, Any]], renderer: Renderer, cfg: SiteConfig | None = None
) -> dict[str, bytes]:
    """A campaign's page, its figure and its analysis.json."""
    ctx = campaign_context(campaign, summaries)
    runs = [s for s in summaries if s["campaign"] == campaign.id]
    ctx["varies"] = across.varies(sorted(runs, key=lambda s: (s["condition"] or "", s["seed"] or 0, s["id"])))
    ctx["momentum"] = across.campaign_momentum(
        [(row["name"], row["label"]) for row in ctx["table"]], runs, campaign.final_window, cfg or SiteConfig()
    )
    ctx["momentum_is_rate"] = metric_is_rate(campaign.primary_metric)
    folder = f"campaigns/{ctx['slug']}"
    pages: dict[str, bytes] = {}
    figure = ctx.pop("figure_svg")
    if figure is not None:
        pages[f"{folder}/fig-conditions.svg"] = figure
    pages[f"{folder}/analysis.json"] = dumps(ctx["stats"].as_dict())
    pages[f"{folder}/index.html"] = renderer.render("campaign.html", root="../../", c=ctx).encode()
    return pages


def _rev_key(summary: dict[str, Any]) -> tuple[Any, ...]:
    rev = str(summary["revision"] or "")
    digits = "".join(ch for ch in rev if ch.isdigit())
    return (int(digits) if digits else 10**9, rev, summary["date"] or "", summary["id"])


def spec_context(spec: Spec, summaries: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]) -> dict[str, Any]:
    runs = sorted((s for s in summaries if s["spec"] == spec.id), key=_rev_key)
    return {
        "id": spec.id,
        "slug": slugify(spec.id),
        "title": spec.title,
        "question": spec.question,
        "contract": spec.contract,
        "baseline": spec.baseline,
        "baseline_summary": by_id.get(spec.baseline) if spec.baseline else None,
        "primary_metric": spec.primary_metric,
        "runs": runs,
        "promoted": [s["id"] for s in runs if s["verdict"] == "promote"],
    }


def ledger_entries(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    entries = [s for s in summaries if s["decision"] and s["decision"]["verdict"]]
    return sorted(entries, key=lambda s: (s["decision"]["date"] or s["date"] or "", s["id"]), reverse=True)


def campaign_context(campaign: Campaign, summaries: list[dict[str, Any]]) -> dict[str, Any]:
    runs = [s for s in summaries if s["campaign"] == campaign.id]
    names = [c.name for c in campaign.conditions] or sorted({s["condition"] for s in runs if s["condition"]})
    labels = {c.name: (c.label or c.name) for c in campaign.conditions}
    seeds = sorted({s["seed"] for s in runs if s["seed"] is not None} | set(campaign.seeds))
    table = []
    curves: list[tuple[str, np.ndarray, np.ndarray, np.ndarray | None]] = []
    bands: list[tuple[np.ndarray, np.ndarray] | None] = []
    for name in names:
        members = [s for s in runs if s["condition"] == name]
        by_seed = {s["seed"]: s for s in members}
        finals = [s["campaign_final"]["mean"] for s in members if s["campaign_final"]]
        table.append(
            {
                "name": name,
                "label": labels.get(name, name),
                "is_baseline": name == campaign.baseline_condition,
                "cells": [by_seed.get(seed) for seed in seeds],
                "n": len(finals),
                "mean": float(np.mean(finals)) if finals else None,
                "sd": float(np.std(finals, ddof=1)) if len(finals) > 1 else None,
                "missing_seeds": [seed for seed in campaign.seeds if seed not in by_seed],
            }
        )
        aligned = align_curves([s["campaign_curve"] for s in members if s["campaign_curve"]])
        if aligned is not None:
            grid, matrix = aligned
            mean = matrix.mean(axis=0)
            sd = matrix.std(axis=0, ddof=1) if matrix.shape[0] > 1 else None
            curves.append((labels.get(name, name), grid, mean, sd))
            if sd is not None:
                from scipy import stats as sps  # campaign pages only

                half = float(sps.t.ppf(0.975, matrix.shape[0] - 1)) * sd / np.sqrt(matrix.shape[0])
                bands.append((mean - half, mean + half))
            else:
                bands.append(None)
    figure = None
    if curves and campaign.primary_metric:
        from obs.render.figures import multi_line_figure

        figure = multi_line_figure(curves, campaign.primary_metric, ci=bands)
    unassigned = [s for s in runs if s["condition"] not in names]
    return {
        "id": campaign.id,
        "slug": slugify(campaign.id),
        "title": campaign.title,
        "question": campaign.question,
        "primary_metric": campaign.primary_metric,
        "baseline_condition": campaign.baseline_condition,
        "final_window": campaign.final_window,
        "alpha": campaign.alpha,
        "evidence": campaign.evidence,
        "litmus": campaign.litmus,
        "seeds": seeds,
        "table": table,
        "runs": sorted(runs, key=lambda s: (s["condition"] or "", s["seed"] if s["seed"] is not None else -1)),
        "unassigned": unassigned,
        "figure_svg": figure,
        "has_figure": figure is not None,
        "stats": campaign_stats(
            campaign,
            finals_from_summaries(runs),
            paired=[p for p in campaign.extra.get("paired") or [] if isinstance(p, PairedSpec)],
        ),
    }


def align_curves(curves: list[dict[str, list[float]]]) -> tuple[np.ndarray, np.ndarray] | None:
    """Put several runs' curves on one step grid over the span every run covers (linear interpolation)."""
    usable = [(np.asarray(c["steps"]), np.asarray(c["values"])) for c in curves if len(c["steps"]) >= 2]
    if not usable:
        return None
    lo = max(float(x[0]) for x, _ in usable)
    hi = min(float(x[-1]) for x, _ in usable)
    if hi <= lo:
        return None
    grid = np.linspace(lo, hi, GRID_POINTS)
    matrix = np.vstack([np.interp(grid, x, y) for x, y in usable])
    return grid, matrix


def group_by(summaries: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in summaries:
        out[str(s.get(key))].append(s)
    return out
