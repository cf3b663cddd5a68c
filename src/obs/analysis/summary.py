"""The per-run summary: a small JSON-friendly record the index pages are built from.

Index, spec, campaign and ledger pages never re-read a run's logs: they are made from these
records, which is also what `index.json` publishes and what an incremental build caches.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from obs.analysis.decimate import decimate
from obs.analysis.digest import window_stat
from obs.analysis.report import RunReport

CURVE_POINTS = 400


def _float(x: float | None) -> float | None:
    if x is None:
        return None
    return None if np.isnan(x) else float(x)


def summarize(
    report: RunReport, *, slug: str, input_hash: str, campaign_metric: str | None = None, campaign_window: int = 10
) -> dict[str, Any]:
    run = report.run
    delta = report.delta
    summary: dict[str, Any] = {
        "id": run.id,
        "slug": slug,
        "title": run.title,
        "adapter": run.adapter,
        "spec": run.spec,
        "campaign": run.campaign,
        "revision": run.revision,
        "date": run.date,
        "status": run.status,
        "baseline": run.baseline,
        "primary_axis": run.primary_axis,
        "condition": run.condition,
        "seed": run.seed,
        "arm": run.arm,
        "tags": list(run.tags),
        "provenance": dict(run.provenance),
        "headline": report.headline.as_dict(),
        "headline_is_rate": report.headline.is_rate,
        "delta": delta.as_dict() if delta else None,
        "verdict": run.verdict,
        "decision": None,
        "suggested_verdict": report.suggestion.verdict,
        "disagrees": report.disagrees,
        "held_constant_clean": report.held.clean if report.held.baseline_id else None,
        "n_cases": report.scoreboard.n if report.scoreboard else None,
        "n_failing": report.n_failing if report.scoreboard else None,
        "top_failure": report.failures[0].key if report.failures else None,
        "findings": [f.rule for f in report.findings],
        "rates": ({c: r.value for c, r in report.scoreboard.overall.rates.items()} if report.scoreboard else {}),
        "input_hash": input_hash,
        "last_step": run.metrics.last_step if run.metrics else None,
        "campaign_final": None,
        "campaign_curve": None,
        "completions": None,
        "completions_final": None,
    }
    if run.decision:
        summary["decision"] = {
            "verdict": run.decision.verdict,
            "rationale": run.decision.rationale,
            "next": run.decision.next,
            "by": run.decision.by,
            "date": run.decision.date,
        }
    if campaign_metric and run.metrics:
        series = run.metrics.get(campaign_metric)
        if series is not None and len(series):
            stat = window_stat(series.values, series.steps, campaign_window)
            summary["campaign_final"] = stat.as_dict() if stat else None
            finite = np.isfinite(series.values)
            xs, ys = decimate(series.steps[finite], series.values[finite], CURVE_POINTS)
            summary["campaign_curve"] = {"steps": [float(x) for x in xs], "values": [float(y) for y in ys]}
        completions = run.metrics.get("completions")
        if completions is not None and len(completions):
            summary["completions"] = float(np.nansum(completions.values))
            # episodes behind the final-window value: the same last `campaign_window` logged points
            if series is not None and len(series):
                window_steps = series.steps[np.isfinite(series.values)][-max(1, campaign_window) :]
                in_window = np.isin(completions.steps, window_steps)
                summary["completions_final"] = float(np.nansum(completions.values[in_window]))
    return summary
