"""The per-run summary (`sitemodel.RunSummary`): the small record the index pages are built from.

Index, spec, campaign and ledger pages never re-read a run's logs: they are made from these
records, which is also what `index.json` publishes and what an incremental build caches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from obs.analysis.compare import Headline, HeadlineDelta
from obs.analysis.config_diff import compact_fields
from obs.analysis.digest import WindowStat, scaled_mean_sd, window_stat
from obs.analysis.held_constant import run_fields
from obs.analysis.report import RunReport
from obs.decimate import decimate
from obs.model import Decision, MetricDecl, Metrics, MetricWindow
from obs.numbers import plural
from obs.sitemodel import (
    Curve,
    DecisionSummary,
    DeltaSummary,
    HeadlineSummary,
    Inputs,
    IntervalSummary,
    RunSummary,
    WindowSummary,
    finite_or_none,
    nonfinite_of,
)
from obs.vocabulary import names_a_flag

CURVE_POINTS = 400
# Runs of a campaign or an ablation arm carry a decimated curve of every logged metric (up to
# CARRIED_CURVES of them), so their pages can plot and test any metric, not only the primary one;
# 200 points per metric is ~4 KB of summary, and other runs carry none.
ARM_CURVE_POINTS = 200
CARRIED_CURVES = 32
MAX_FINALS = 80
TAIL_POINTS = 256  # exact last points of the campaign metric: trend windows within the run


def comparable_set(report: RunReport) -> tuple[str, str | None]:
    """(metric · family, probe version · cases): runs are ranked against each other only inside one set.

    The family is what says two runs answer the same question: a spec, a campaign, an MLflow
    experiment, else the folder holding the run (runs side by side). A DPO loss and a speech-to-text
    loss are both "loss" and still different sets.
    """
    run, headline = report.run, report.headline
    if run.spec:
        family = f"spec {run.spec}"
    elif run.campaign:
        family = f"campaign {run.campaign}"
    elif run.provenance.get("mlflow_experiment"):
        family = f"MLflow experiment {run.provenance['mlflow_experiment']}"
    else:
        family = run.id.rpartition("/")[0] or "top level"
    metric = headline.metric or "no metric"
    probe = None
    if headline.kind == "probe" and headline.n is not None:
        version = run.contract.get("probe") if isinstance(run.contract, dict) else None
        named = f"{version}" if str(version).lower().startswith("probe") else f"probe {version}"
        probe = f"{named + ' · ' if version else ''}{plural(headline.n, 'case')}"
    return f"{metric} · {family}", probe


def metric_window(
    series_values: np.ndarray, steps: np.ndarray, window: MetricWindow, final: int
) -> WindowSummary | None:
    """A run's one number for a metric over the metric's declared window: the last N logged points (the campaign's
    final window by default, `window_stat`'s rule), or the mean of every finite value logged at a step in [lo, hi]."""
    if window.kind != "steps":
        stat = window_stat(series_values, steps, window.n if window.kind == "last" and window.n else final)
        return window_summary(stat) if stat else None
    keep = np.isfinite(series_values) & (steps >= (window.lo or 0.0)) & (steps <= (window.hi or 0.0))
    values = series_values[keep]
    if values.size == 0:
        return None
    mean, sd = scaled_mean_sd(values)
    return WindowSummary(
        mean, finite_or_none(sd), int(values.size), float(steps[keep][-1]), int(np.isfinite(series_values).sum())
    )


def _metric_windows(metrics: Metrics | None, decls: Sequence[MetricDecl], final: int) -> dict[str, WindowSummary]:
    out: dict[str, WindowSummary] = {}
    for decl in decls:
        series = metrics.get(decl.name) if metrics else None
        if series is not None and len(series):
            value = metric_window(series.values, series.steps, decl.window, final)
            if value is not None:
                out[decl.name] = value
    return out


def _flags(metrics: Metrics | None) -> tuple[str, ...]:
    """Series that are yes/no flags: a name that asks a question and no value other than 0 or 1."""
    if metrics is None:
        return ()
    out = []
    for name, series in sorted(metrics.series.items()):
        if names_a_flag(name):
            finite = series.values[np.isfinite(series.values)]
            if finite.size and bool(np.all((finite == 0.0) | (finite == 1.0))):
                out.append(name)
    return tuple(out)


def summarize(
    report: RunReport,
    *,
    slug: str,
    input_hash: str,
    campaign_metric: str | None = None,
    campaign_window: int = 10,
    campaign_metrics: Sequence[MetricDecl] = (),
    carried: tuple[str, ...] = (),
) -> RunSummary:
    """The run's summary; `campaign_metric` (its campaign's primary metric) is summarised over the last
    `campaign_window` logged points and carried as a curve, `campaign_metrics` over their declared windows."""
    run = report.run
    board = report.scoreboard
    campaign = _campaign_values(run.metrics, campaign_metric, campaign_window)
    return RunSummary(
        id=run.id,
        slug=slug,
        title=run.title,
        adapter=run.adapter,
        spec=run.spec,
        campaign=run.campaign,
        revision=run.revision,
        date=run.date,
        status=run.status,
        baseline=run.baseline,
        primary_axis=run.primary_axis,
        condition=run.condition,
        seed=run.seed,
        arm=run.arm,
        tags=tuple(run.tags),
        provenance=dict(run.provenance),
        headline=headline_summary(report.headline),
        headline_is_rate=report.headline.is_rate,
        delta=delta_summary(report.delta) if report.delta else None,
        verdict=run.verdict,
        decision=_decision(run.decision),
        suggested_verdict=report.suggestion.verdict,
        disagrees=report.disagrees,
        held_constant_clean=report.held.clean if report.held.baseline_id else None,
        n_cases=board.n if board else None,
        n_failing=report.n_failing if board else None,
        top_failure=report.failures[0].key if report.failures else None,
        findings=tuple(f.rule for f in report.findings),
        rates={c: r.value for c, r in board.overall.rates.items()} if board else {},
        input_hash=input_hash,
        last_step=run.metrics.last_step if run.metrics else None,
        fields=compact_fields(run_fields(run)),
        finals=_finals(report),
        family_rates=_rates_by(report, "family"),
        split_rates=_rates_by(report, "split"),
        has=Inputs(
            probe=board is not None,
            curves=bool(run.metrics and run.metrics.series),
            reward=report.reward is not None,
            gate=run.gate is not None,
        ),
        gate_passed=run.gate.passed if run.gate else None,
        curves=_carried_curves(report, campaign_metric, carried) if run.arm or run.campaign else None,
        campaign_final=campaign.final,
        campaign_curve=campaign.curve,
        campaign_tail=campaign.tail,
        completions=campaign.completions,
        completions_final=campaign.completions_final,
        comparable=comparable_set(report)[0],
        probe_key=comparable_set(report)[1],
        not_one_measurement=None if report.measurement.ok else report.measurement.text(),
        probe_hash=report.digest.probe_fingerprint.short() if report.digest.probe_fingerprint else None,
        target_class=report.target.as_dict() if report.target else None,
        frozen_delta=delta_summary(report.frozen.delta) if report.frozen and report.frozen.delta else None,
        frozen_problem=report.frozen.problem if report.frozen else None,
        check_counts={c: (r.hits, r.n) for c, r in board.overall.rates.items() if r.n} if board else {},
        family_counts=_counts_by_family(report),
        metric_windows=_metric_windows(run.metrics, campaign_metrics, campaign_window) if run.campaign else {},
        flags=_flags(run.metrics) if run.campaign or run.arm else (),
    )


@dataclass(frozen=True)
class _CampaignValues:
    """What a campaign run's summary carries of its campaign's primary metric."""

    final: WindowSummary | None = None  # the mean of the last `campaign_window` logged points
    curve: Curve | None = None  # decimated, for the campaign page's chart
    tail: Curve | None = None  # the exact last TAIL_POINTS points: trend windows within the run
    completions: float | None = None  # the episodes logged (`completions`) over the run
    completions_final: float | None = None  # and over the final window's steps


def _campaign_values(metrics: Metrics | None, metric: str | None, window: int) -> _CampaignValues:
    """The campaign metric's final window, curve and tail, and the completions behind it."""
    if not metric or not metrics:
        return _CampaignValues()
    series = metrics.get(metric)
    logged = series is not None and len(series) > 0
    values = _CampaignValues()
    if series is not None and logged:
        stat = window_stat(series.values, series.steps, window)
        finite = np.isfinite(series.values)
        values = _CampaignValues(
            final=window_summary(stat) if stat else None,
            curve=_decimated(series.steps[finite], series.values[finite], CURVE_POINTS),
            tail=Curve(
                tuple(float(x) for x in series.steps[finite][-TAIL_POINTS:]),
                tuple(float(y) for y in series.values[finite][-TAIL_POINTS:]),
            ),
        )
    counts = metrics.get("completions")
    if counts is None or not len(counts):
        return values
    completions_final = None
    if series is not None and logged:
        # episodes behind the final-window value: the same last `window` logged points
        window_steps = series.steps[np.isfinite(series.values)][-max(1, window) :]
        completions_final = float(np.nansum(counts.values[np.isin(counts.steps, window_steps)]))
    return replace(values, completions=float(np.nansum(counts.values)), completions_final=completions_final)


def headline_summary(h: Headline) -> HeadlineSummary:
    return HeadlineSummary(
        h.metric,
        finite_or_none(h.value),
        h.kind,
        h.detail,
        h.higher_is_better,
        h.n,
        finite_or_none(h.stderr),
        nonfinite_of(h.value),
    )


def delta_summary(d: HeadlineDelta) -> DeltaSummary:
    iv = d.interval
    ci = IntervalSummary(finite_or_none(iv.low), finite_or_none(iv.high), iv.level) if iv is not None else None
    return DeltaSummary(
        d.baseline_id,
        finite_or_none(d.baseline_value),
        finite_or_none(d.delta),
        ci,
        finite_or_none(d.p_value),
        d.method,
        d.n,
        d.verdict,
        d.unit,
        d.pairs,
    )


def window_summary(stat: WindowStat) -> WindowSummary:
    return WindowSummary(stat.mean, finite_or_none(stat.sd), stat.n, stat.last_step, stat.points)


def _decision(d: Decision | None) -> DecisionSummary | None:
    if d is None:
        return None
    return DecisionSummary(d.verdict, d.rationale, d.next, d.by, d.date)


def _decimated(steps: np.ndarray, values: np.ndarray, points: int) -> Curve:
    xs, ys = decimate(steps, values, points)
    return Curve(tuple(float(x) for x in xs), tuple(float(y) for y in ys))


def _finals(report: RunReport) -> dict[str, float]:
    """Final-window mean of every logged metric (and eval results), for sweeps axes and gates."""
    out: dict[str, float] = {}
    for name in sorted(report.digest.finals)[:MAX_FINALS]:
        value = report.digest.finals[name].mean
        if np.isfinite(value):
            out[name] = float(value)
    for name, (value, _err) in sorted(report.digest.evals.items())[: max(0, MAX_FINALS - len(out))]:
        if isinstance(value, int | float) and np.isfinite(value):
            out.setdefault(name, float(value))
    return out


def _counts_by_family(report: RunReport) -> dict[str, dict[str, tuple[int, int]]]:
    """Probe counts per family: check -> family -> (hits, n), for the spec page's history across rungs."""
    board = report.scoreboard
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for row in board.by_family if board else []:
        for check, rate in row.rates.items():
            if rate.n:
                out.setdefault(check, {})[row.label] = (rate.hits, rate.n)
    return out


def _rates_by(report: RunReport, scope: str) -> dict[str, dict[str, float]]:
    """Probe rates per family (or split): check -> label -> rate, for gates such as "no family below 50%"."""
    board = report.scoreboard
    if board is None:
        return {}
    rows = board.by_family if scope == "family" else board.by_split
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        for check, rate in row.rates.items():
            if rate.value is not None:
                out.setdefault(check, {})[row.label] = float(rate.value)
    return out


def _curve(metrics: Metrics, name: str) -> Curve | None:
    series = metrics.get(name)
    if series is None or not len(series):
        return None
    finite = np.isfinite(series.values)
    if not finite.any():
        return None
    return _decimated(series.steps[finite], series.values[finite], ARM_CURVE_POINTS)


def _carried_curves(report: RunReport, campaign_metric: str | None, carried: tuple[str, ...] = ()) -> dict[str, Curve]:
    """Decimated curves of a campaign or arm run, for the campaign and arms pages' metric picker:
    the headline metric when it is logged over steps, the campaign metric, the series obs.yaml's views
    name (`carried`: sample efficiency's counter, coupling pairs), the reward mean and the loss first,
    then every other logged metric by name (CARRIED_CURVES in all)."""
    metrics = report.run.metrics
    if metrics is None:
        return {}
    wanted = [
        report.headline.metric if report.headline.kind == "series" else None,
        report.run.primary_metric,
        campaign_metric,
        *carried,
        report.reward.mean.key if report.reward and report.reward.mean else None,
        report.curves.loss if report.curves else None,
        *sorted(metrics.series),
    ]
    out: dict[str, Curve] = {}
    for name in wanted:
        if name and name not in out and len(out) < CARRIED_CURVES:
            curve = _curve(metrics, name)
            if curve is not None:
                out[name] = curve
    return out
