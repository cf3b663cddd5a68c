"""Diagnosis: symptom rules over the scoreboard and the curves.

Each rule that fires says what it saw (the numbers), the likely cause and the next action, so a
reader can check the reasoning instead of trusting a label. Thresholds come from obs.yaml; the
rules, their thresholds and the failure taxonomy they come from are in docs/reading-a-report.md.
A rule that lacks its inputs (no probe, no loss, no reward series) stays silent: the page shows
what is missing elsewhere, and a rule must never fire on data it cannot read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from obs.analysis.advice import NATIVE, AdviceFiles
from obs.analysis.compare import ProbeComparison
from obs.analysis.digest import scaled_mean_sd
from obs.analysis.reward import RewardHealth
from obs.analysis.scoreboard import Rate, Scoreboard, ScoreRow
from obs.model import Metrics
from obs.numbers import num, pct, plural, pp

SEVERITY_ORDER = {"problem": 0, "warning": 1, "note": 2}
MIN_CURVE_POINTS = 20  # curve rules need a curve: fewer points say nothing about a trend


@dataclass(frozen=True)
class Finding:
    rule: str
    title: str
    severity: str  # "problem" | "warning" | "note"
    evidence: list[str]
    cause: str
    action: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "title": self.title,
            "severity": self.severity,
            "evidence": self.evidence,
            "cause": self.cause,
            "action": self.action,
        }


@dataclass
class DiagnosisInput:
    scoreboard: Scoreboard | None
    scoreboard_repaired: Scoreboard | None
    metrics: Metrics | None
    comparison: ProbeComparison | None
    threshold: Callable[[str], float]
    loss_key: str | None = None
    grad_key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    repair_comparison: ProbeComparison | None = None  # repaired probe (a) vs raw probe (b)
    reward: RewardHealth | None = None
    headline_check: str | None = None  # the probe check the run is judged on, when it is one
    final_window: int = 10
    advice: AdviceFiles = NATIVE  # the run's own files, for advice that names one


# --------------------------------------------------------------------------- formatting


def _signed(x: float, digits: int) -> str:
    text = f"{x:+.{digits}f}"
    return "±" + text[1:] if float(text) == 0 else text.replace("-", "−")


def _step(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _rate(r: Rate | None) -> str:
    return "n/a" if r is None or r.value is None else f"{pct(r.value)} ({r.hits}/{r.n})"


# --------------------------------------------------------------------------- inputs


def primary_check(d: DiagnosisInput) -> str | None:
    """The check the scoreboard rules read: the headline check, else `exact`, else the first positive one."""
    sb = d.scoreboard
    if sb is None:
        return None
    if d.headline_check and d.headline_check in sb.checks:
        return d.headline_check
    if "exact" in sb.checks:
        return "exact"
    return next((c for c in sb.checks if c not in sb.negative), None)


def _curve(metrics: Metrics | None, key: str | None) -> tuple[np.ndarray, np.ndarray] | None:
    if metrics is None or key is None or key not in metrics.series:
        return None
    s = metrics.series[key].finite()
    if len(s) < MIN_CURVE_POINTS:
        return None
    return s.steps.astype(np.float64), s.values.astype(np.float64)


def _ce_loss(d: DiagnosisInput) -> tuple[np.ndarray, np.ndarray] | None:
    """The loss curve when it reads as a cross-entropy (all positive).

    A policy-gradient loss (GRPO, PPO) hovers around zero and changes sign: its level and its
    relative changes mean nothing, so the loss rules stay silent on it.
    """
    curve = _curve(d.metrics, d.loss_key)
    if curve is None or not bool(np.all(curve[1] > 0)):
        return None
    return curve


def _final_window(steps: np.ndarray, values: np.ndarray, frac: float) -> tuple[np.ndarray, np.ndarray]:
    frac = min(max(frac, 0.0), 1.0)  # a share of the points, whatever obs.yaml says
    w = min(values.size, max(MIN_CURVE_POINTS // 2, round(frac * values.size)))
    return steps[-w:], values[-w:]


def _trend(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Least-squares line through the window: (fitted change from first to last step, residuals), fitted on the
    values over their largest magnitude so a logged 1e230 does not overflow."""
    scale = _scale(y)
    u = y / scale
    if x[-1] == x[0]:
        return 0.0, (u - u.mean()) * scale
    slope, intercept = np.polyfit(x, u, 1)
    fit = intercept + slope * x
    return float(slope * (x[-1] - x[0])) * scale, (u - fit) * scale


def _scale(y: np.ndarray) -> float:
    top = float(np.max(np.abs(y))) if y.size else 0.0
    return top if top and np.isfinite(top) else 1.0


def _mean(y: np.ndarray) -> float:
    return scaled_mean_sd(y)[0]


# --------------------------------------------------------------------------- scoreboard rules


def _rates(d: DiagnosisInput, first: str, second: str) -> tuple[float, float] | None:
    """The probe's rates of two checks, or None when it has no scoreboard or lacks either check."""
    sb = d.scoreboard
    a, b = (sb.rate(first), sb.rate(second)) if sb is not None else (None, None)
    return (a, b) if a is not None and b is not None else None


def _rule_drift(d: DiagnosisInput) -> Finding | None:
    rates = _rates(d, "exact", "renderable")
    if rates is None:
        return None
    exact, rend = rates
    if exact < d.threshold("low_exact") and rend >= d.threshold("high_renderable"):
        return Finding(
            "semantic_drift",
            "Valid output, wrong content",
            "problem",
            [
                f"exact {pct(exact)} < {pct(d.threshold('low_exact'))}",
                f"renderable {pct(rend)} ≥ {pct(d.threshold('high_renderable'))}",
            ],
            "The grammar is learned but the choices are wrong: semantic or ordering drift.",
            "Add targeted exactness rows for the drifting families; do not add syntax repair rows.",
        )
    return None


def _rule_grammar(d: DiagnosisInput) -> Finding | None:
    rates = _rates(d, "renderable", "truncated")
    if rates is None:
        return None
    rend, trunc = rates
    if rend < d.threshold("low_renderable") and trunc <= d.threshold("low_truncation"):
        return Finding(
            "grammar_corruption",
            "Outputs do not parse, and not because they were cut off",
            "problem",
            [
                f"renderable {pct(rend)} < {pct(d.threshold('low_renderable'))}",
                f"truncated {pct(trunc)} ≤ {pct(d.threshold('low_truncation'))}",
            ],
            "Grammar corruption: the model emits structurally invalid output within budget.",
            "Protect full-scene replay anchors; reduce fragment-style repair rows; check tokenizer boundaries.",
        )
    return None


def _rule_truncation(d: DiagnosisInput) -> Finding | None:
    sb = d.scoreboard
    trunc = sb.rate("truncated") if sb else None
    if trunc is None or trunc < d.threshold("high_truncation"):
        return None
    return Finding(
        "budget_truncation",
        "Outputs are cut off by the decode budget",
        "problem",
        [f"truncated {pct(trunc)} ≥ {pct(d.threshold('high_truncation'))}"],
        "The decode budget (or context) is too small for the targets.",
        "Raise the decode budget first, then the context only if needed; re-probe before retraining.",
    )


def _rule_materialized(d: DiagnosisInput) -> Finding | None:
    rates = _rates(d, "exact", "materialized")
    if rates is None or rates[0] - rates[1] < d.threshold("materialized_gap"):
        return None
    exact, mat = rates
    return Finding(
        "exact_not_materialized",
        "Exact scenes that do not materialise",
        "problem",
        [f"exact {pct(exact)} vs materialized {pct(mat)} (gap {pct(exact - mat)})"],
        "A compiler, content-binding or probe bug: the model's output matches but the final artefact differs.",
        "Fix the renderer or probe path, not the training data.",
    )


def _rule_split_gap(d: DiagnosisInput) -> Finding | None:
    """Train ≫ dev ≫ test: the generalisation gradient, read on the headline check."""
    sb, check = d.scoreboard, primary_check(d)
    if sb is None or check is None:
        return None
    rows = {r.label.lower(): r for r in sb.by_split if r.rates.get(check) and r.rates[check].value is not None}
    train = rows.get("train")
    held = [r for label, r in rows.items() if label != "train"]
    if train is None or not held:
        return None
    negative = check in sb.negative
    sign = -1.0 if negative else 1.0

    def value(r: ScoreRow) -> float:
        v = r.rates[check].value
        return 0.0 if v is None else v

    weakest = min(held, key=lambda r: sign * value(r))
    gap = sign * (value(train) - value(weakest))
    limit = d.threshold("split_gap")
    if gap < limit:
        return None
    chain = " → ".join(f"{r.label} {_rate(r.rates[check])}" for r in sb.by_split if r.label.lower() in rows)
    return Finding(
        "split_gap",
        "Much better on train prompts than on held-out ones",
        "warning",
        [
            f"{check} by split: {chain}",
            f"train − {weakest.label}: {pp(sign * gap)} (threshold {100 * limit:.0f} pp)",
        ],
        "Overfitting to the train distribution: the prompts seen in training are learned, the held-out "
        "surface (paraphrases, new topic × family combinations) is not.",
        "Widen held-out prompt coverage in training (more topic × family combinations); reduce epochs if the "
        "train loss is very low. Report prompt-surface and semantic-breadth splits separately.",
    )


def _rule_family_imbalance(d: DiagnosisInput) -> Finding | None:
    """One family near zero while the others are high: a curriculum imbalance, not a general failure."""
    sb, check = d.scoreboard, primary_check(d)
    if sb is None or check is None or check in sb.negative:
        return None
    rows = [r for r in sb.by_family if r.rates.get(check) and r.rates[check].value is not None]
    if len(rows) < 2:
        return None
    low, high = d.threshold("family_near_zero"), d.threshold("family_high")
    collapsed = []
    for r in rows:
        v = r.rates[check].value
        median = float(np.median([x for o in rows if o is not r and (x := o.rates[check].value) is not None]))
        if v is not None and v <= low and median >= high:
            collapsed.append((r, median))
    if not collapsed:
        return None
    evidence = []
    for r, median in collapsed:
        evidence.append(
            f"{r.label}: {check} {_rate(r.rates[check])} ≤ {pct(low)}, while the other families' median is "
            f"{pct(median)} ≥ {pct(high)}"
        )
        if d.comparison is not None:
            scope = next((s for s in d.comparison.by_family if s.label == r.label), None)
            pc = scope.checks.get(check) if scope else None
            if pc is not None:
                evidence.append(
                    f"{r.label} vs the baseline {d.comparison.baseline_id}: {pct(pc.rate_b)} → {pct(pc.rate_a)} "
                    f"({pp(pc.delta)}; {pc.only_b} broken, {pc.only_a} fixed)"
                )
    rest = ", ".join(f"{r.label} {pct(r.rates[check].value)}" for r in rows if all(r is not c for c, _ in collapsed))
    evidence.append(f"other families: {rest}")
    names = ", ".join(r.label for r, _ in collapsed)
    return Finding(
        "family_imbalance",
        f"One family collapsed while the others learned: {names}",
        "problem",
        evidence,
        "Curriculum imbalance: the collapsed family got less training pressure than the others (for example its "
        "replay rows were cut), or its grammar is harder.",
        "Add family-specific anchor and replay rows for the collapsed family and tune family weights; keep the "
        "replay of every solved family.",
    )


def _rule_repair_regression(d: DiagnosisInput) -> Finding | None:
    """A deterministic repair pass must never turn a correct output into a wrong one."""
    rc = d.repair_comparison
    if rc is None:
        return None
    broken: dict[str, Sequence[str]] = {f.check: f.broke for f in rc.flips if f.broke}
    ids = sorted({i for cases in broken.values() for i in cases})
    if not ids or len(ids) < d.threshold("repair_broken_cases"):
        return None
    evidence = []
    for f in rc.flips:
        if f.broke:
            shown = ", ".join(f.broke[:8]) + (f", … ({len(f.broke)} in all)" if len(f.broke) > 8 else "")
            evidence.append(
                f"{f.check}: {plural(len(f.broke), 'case')} right in the raw output, "
                f"wrong after repair ({shown}); the repair fixed {len(f.fixed)}"
            )
    return Finding(
        "repair_regression",
        "The repair pass breaks cases the raw model got right",
        "warning",
        evidence,
        "A repair rule rewrites output that was already correct (for example a dedupe or rebalance rule "
        "that is too broad).",
        "Inspect these cases in probe_repaired.jsonl and narrow the rule that touched them before shipping the "
        "repair pass as the default decode path.",
    )


# --------------------------------------------------------------------------- curve rules


def _rule_memorised(d: DiagnosisInput) -> Finding | None:
    curve, sb, check = _ce_loss(d), d.scoreboard, primary_check(d)
    if curve is None or sb is None or check is None or check in sb.negative:
        return None
    rate = sb.rate(check)
    final = _mean(curve[1][-max(1, d.final_window) :])
    if rate is None or final >= d.threshold("memorised_loss") or rate >= d.threshold("low_exact"):
        return None
    return Finding(
        "memorised",
        "Low loss, low probe score: memorised, not learned",
        "problem",
        [
            f"final {d.loss_key} {num(final)} (mean of the last {min(d.final_window, curve[1].size)} points) "
            f"< {num(d.threshold('memorised_loss'))}",
            f"{check} {pct(rate)} < {pct(d.threshold('low_exact'))}",
        ],
        "The model fits the training distribution but not the contract: the representation, tokenizer coverage "
        "or held-out diversity is wrong, not the budget.",
        "Check tokenizer coverage and held-out prompt diversity, and that the training rows cover every "
        "family × topic combination the probe asks for. More steps will not help.",
    )


def _rule_plateau(d: DiagnosisInput) -> Finding | None:
    curve = _ce_loss(d)
    if curve is None:
        return None
    x, y = _final_window(*curve, d.threshold("plateau_window_frac"))
    change, _ = _trend(x, y)
    level = _mean(y)
    rel = change / level
    limit = d.threshold("plateau_rel_change")
    floor = d.threshold("memorised_loss")
    if abs(rel) >= limit or level < floor:
        return None
    sb, check = d.scoreboard, primary_check(d)
    rate = sb.rate(check) if sb is not None and check is not None and check not in sb.negative else None
    probe_ok = rate is not None and rate >= d.threshold("low_exact")
    evidence = [
        f"{d.loss_key} changed by {_signed(100 * rel, 2)}% over the final {y.size} points "
        f"(steps {_step(x[0])}–{_step(x[-1])}, fitted trend): |change| < {100 * limit:g}%",
        f"level {num(level)} ≥ {num(floor)} (a flat loss near zero is convergence, not a plateau)",
    ]
    if rate is not None and check is not None:
        evidence.append(f"{check} {pct(rate)}")
    stuck_high = level > 0.5
    return Finding(
        "loss_plateau",
        "The loss stopped falling",
        "note" if probe_ok else "warning",
        evidence,
        (
            "A capacity wall, too low a learning rate or a data-packing problem (the loss is stuck high)."
            if stuck_high
            else "A capacity or data ceiling: the model has taken what this data and budget give."
        ),
        (
            "Check grad norms for saturation, try a learning-rate sweep, verify the packing fill rate (> 0.85)."
            if stuck_high
            else "If the probe is also stuck: more epochs, richer edit pairs or an LR restart; if it is fine, "
            "stop here: more steps on a flat loss buy nothing."
        ),
    )


def _rule_oscillation(d: DiagnosisInput) -> Finding | None:
    curve = _ce_loss(d)
    if curve is None:
        return None
    x, y = _final_window(*curve, d.threshold("plateau_window_frac"))
    _, resid = _trend(x, y)
    level = _mean(y)
    cv = scaled_mean_sd(resid)[1] / level
    limit = d.threshold("oscillation_cv")
    if cv <= limit:
        return None
    return Finding(
        "loss_oscillation",
        "The loss oscillates instead of converging",
        "warning",
        [
            f"sd of {d.loss_key} around its trend over the final {y.size} points is {100 * cv:.0f}% of its level "
            f"{num(level)} (threshold {100 * limit:.0f}%)",
        ],
        "Too high a learning rate, or conflicting signals in the data (the same prompt with different targets).",
        "Verify dataset uniqueness (duplicate or contradictory rows), then try a lower learning rate.",
    )


def _rule_grad_collapse(d: DiagnosisInput) -> Finding | None:
    curve = _curve(d.metrics, d.grad_key)
    if curve is None:
        return None
    steps, g = curve
    collapse = d.threshold("grad_collapse")
    _, tail = _final_window(steps, g, d.threshold("plateau_window_frac"))
    final_median = float(np.median(tail))
    if final_median < collapse:
        return Finding(
            "grad_collapse",
            "Gradients vanished",
            "problem",
            [
                f"median {d.grad_key} over the final {tail.size} points is {num(final_median)} < {num(collapse)}",
                f"median over the first {tail.size} points: {num(float(np.median(g[: tail.size])))}",
            ],
            "Vanishing gradients: the loss no longer depends on the parameters (saturated activations, a detached "
            "graph, or a collapse after an instability).",
            "Check the loss path and max_grad_norm clipping; if it followed a spike, restart from an earlier "
            "checkpoint with a lower learning rate.",
        )
    return None


def _spike_ratios(g: np.ndarray, k: int, factor: float, chunk: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """For each point after the first `k`, its ratio to the median of the `k` points before it.

    Returns (ratio, medians) with ratio 0 where the median is not positive. A median is never
    below its window's minimum, so a point under `factor` times that minimum cannot be a spike:
    the (costly) medians are taken only for the few points that pass this cheap test, and the
    ratio of every other point is left at 0. Chunks keep a long log from holding n × k floats.
    """
    windows = sliding_window_view(g[:-1], k)
    later = g[k:]
    lows = np.concatenate([windows[i : i + chunk].min(axis=1) for i in range(0, windows.shape[0], chunk)])
    maybe = np.flatnonzero(later >= factor * lows) if factor > 0 else np.arange(later.size)
    medians = np.zeros(later.shape)
    ratio = np.zeros(later.shape)
    for i in range(0, maybe.size, chunk):
        idx = maybe[i : i + chunk]
        medians[idx] = np.median(windows[idx], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio[maybe] = np.where(medians[maybe] > 0, later[maybe] / medians[maybe], 0.0)
    return ratio, medians


def _rule_grad_spikes(d: DiagnosisInput) -> Finding | None:
    curve = _curve(d.metrics, d.grad_key)
    if curve is None:
        return None
    steps, g = curve
    # a step whose gradient is exactly 0 had no gradient (every group tied, a skipped batch): not a scale to
    # spike against; left in, runs of them pulled the trailing median down and ordinary steps read as spikes
    has_grad = g != 0
    zeros = int(g.size - np.count_nonzero(has_grad))
    steps, g = steps[has_grad], g[has_grad]
    k = max(3, int(d.threshold("grad_spike_window")))
    factor = d.threshold("grad_spike_factor")
    if g.size <= k:
        return None
    ratio, medians = _spike_ratios(g, k, factor)  # ratio[j]: g[j + k] over the median of g[j : j + k]
    later = g[k:]
    spikes = np.flatnonzero(ratio >= factor)
    if spikes.size == 0:
        return None
    worst = spikes[np.argsort(-ratio[spikes], kind="stable")[:3]]
    evidence = [
        f"{plural(int(spikes.size), 'point')} of {d.grad_key} ≥ {factor:g}× the median of the "
        f"previous {k} points" + (f" (the {zeros} steps with a gradient of exactly 0 left out)" if zeros else ""),
    ]
    stage_starts = [st.start for st in (d.metrics.stages if d.metrics else [])[1:]]
    span = float(steps[-1] - steps[0]) or 1.0
    for j in worst:
        at = float(steps[k + j])
        near = [s for s in stage_starts if abs(at - s) <= 0.01 * span]
        where = " (at a stage boundary: expected if it recovers)" if near else ""
        evidence.append(
            f"step {_step(at)}: {num(float(later[j]))} vs median {num(float(medians[j]))} "
            f"({float(ratio[j]):.0f}×){where}"
        )
    return Finding(
        "grad_spikes",
        "Gradient-norm spikes",
        "warning",
        evidence,
        "Training instability: exploding gradients from a degenerate batch or too high a learning rate.",
        "Check max_grad_norm clipping; if the spikes persist, lower the learning rate or look for degenerate "
        "sequences in the data packing.",
    )


def _rule_stages(d: DiagnosisInput) -> Finding | None:
    """Supervised curves only: a policy-gradient run usually has no curriculum stages to label."""
    curve = _ce_loss(d)
    if curve is None or d.metrics is None:
        return None
    stages = d.metrics.stages
    if len(stages) > 1:
        return None
    steps = curve[0]
    if stages:
        only = stages[0]
        evidence = [
            f"every one of the {steps.size} loss points (steps {_step(steps[0])}–{_step(steps[-1])}) is labelled "
            f"'{only.name}'"
        ]
    else:
        evidence = [f"no `stage` field on any of the {steps.size} loss points"]
    return Finding(
        "missing_stage_labels",
        "No curriculum stages in the curves",
        "note",
        evidence,
        "Telemetry bookkeeping: stage transitions are not recorded (or the run really has one stage), so a "
        "jump in the loss cannot be told apart from a stage boundary.",
        d.advice.stage_field(),
    )


def _rule_reward_collapse(d: DiagnosisInput) -> Finding | None:
    h = d.reward
    if h is None or not h.collapsed:
        return None
    evidence = []
    if h.zero_std_onset is not None and h.zero_std is not None:
        o = h.zero_std_onset
        evidence.append(
            f"{o.key}: rolling mean ({o.window} points) ≥ {num(o.threshold)} from step {_step(o.step)} to the end "
            f"(final {num(h.zero_std.final)}, first {num(h.zero_std.first)})"
        )
    if h.std_onset is not None and h.std is not None and h.std_peak is not None and h.std_peak_step is not None:
        o = h.std_onset
        evidence.append(
            f"{o.key}: rolling mean ≤ {100 * h.std_drop:.0f}% of its peak ({num(h.std_peak)} at step "
            f"{_step(h.std_peak_step)}) from step {_step(o.step)}; final {num(h.std.final)}"
        )
    if h.adv_std is not None:
        evidence.append(f"{h.adv_std.key}: {num(h.adv_std.first)} at the start → {num(h.adv_std.final)} at the end")
    if h.mean is not None:
        evidence.append(f"{h.mean.key}: {num(h.mean.first)} → {num(h.mean.final)} (max {num(h.mean.max)})")
    onset = h.onset_step
    return Finding(
        "reward_variance_collapse",
        f"The learning signal vanished from step {_step(onset) if onset is not None else '?'}",
        "problem",
        evidence,
        "Most groups tie (every completion gets the same reward), so their advantages are zero and those prompts "
        "teach nothing: the prompt pool became too easy (reward saturating) or is too hard (reward near zero).",
        "Do not extend this run: filter prompts by difficulty (drop groups whose pass rate is ≈ 1 or ≈ 0), refresh "
        "the pool with harder prompts, or raise the group size or sampling temperature.",
    )


RULES: list[Callable[[DiagnosisInput], Finding | None]] = [
    _rule_drift,
    _rule_grammar,
    _rule_truncation,
    _rule_materialized,
    _rule_family_imbalance,
    _rule_split_gap,
    _rule_repair_regression,
    _rule_memorised,
    _rule_plateau,
    _rule_oscillation,
    _rule_grad_collapse,
    _rule_grad_spikes,
    _rule_reward_collapse,
    _rule_stages,
]


def diagnose(d: DiagnosisInput) -> list[Finding]:
    findings = [f for rule in RULES if (f := rule(d)) is not None]
    return sorted(findings, key=lambda f: SEVERITY_ORDER.get(f.severity, 3))
