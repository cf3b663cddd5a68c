"""The rest of seed 003's diagnostic matrix and seed 001's watch metrics, as diagnosis rules.

`analysis.diagnose` holds the scoreboard and curve rules; these read what those do not: a probe check that is
null on every case (the probe path is broken, not the model), two loss implementations that disagree (ck_loss
vs pt_loss: numerical parity), the packing fill rate behind a loss stuck high, a loss spike at a stage boundary
(expected, if it recovers), gold outputs longer than the context, and the GRPO watch metrics (max-token hit
rate, datums per step, uniform/tie reward groups, a placeholder loss). Each rule stays silent without its
inputs, and each threshold is declared in `schema.THRESHOLDS` (obs.yaml `thresholds:`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from obs.analysis.diagnosis_base import DiagnosisInput, Finding, _ce_loss
from obs.numbers import num, pct

PARITY_PAIRS = (("ck_loss", "pt_loss"),)
FILL_RATE_NAMES = ("packing_fill_rate", "fill_rate", "pack_fill_rate", "token_fill_rate")
UNIFORM_NAMES = ("reward_uniform_group_rate", "reward_tie_group_rate")


def _finding(*args: Any) -> Finding:
    return Finding(*args)


def _series(d: DiagnosisInput, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    if d.metrics is None or name not in d.metrics.series:
        return None
    s = d.metrics.series[name].finite()
    if not len(s):
        return None
    return s.steps.astype(np.float64), s.values.astype(np.float64)


def _step(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _tail(values: np.ndarray, frac: float) -> np.ndarray:
    w = max(1, min(values.size, round(max(frac, 0.0) * values.size) or 1))
    return values[-w:]


# ----------------------------------------------------------------------------------------- probe

# words of a probe key that holds a pass/fail result: a null there is a result never computed, while a null
# `error` or `comment` on every case only says there was none
CHECK_WORDS = frozenset(
    {"ok", "valid", "pass", "passed", "match", "exact", "renderable", "materialized", "correct", "success", "parses"}
)


def looks_like_check(key: str) -> bool:
    """`rendered_svg_ok`, `exact_match`, `is_valid`: a key named like a check."""
    return bool(CHECK_WORDS & set(key.lower().replace("-", "_").split("_")))


def rule_null_check(d: DiagnosisInput) -> Finding | None:
    """seed 003: "high exact match, but rendered_svg_ok: null": the probe or compiler path fails silently."""
    n = d.extra.get("n_cases") or 0
    nulls: Mapping[str, int] = d.extra.get("null_checks") or {}
    share = d.threshold("null_check_share")
    hit = sorted(k for k, c in nulls.items() if n and c / n >= share and looks_like_check(k))
    if not hit:
        return None
    evidence = [f"`{k}` is null on {nulls[k]} of the {n} cases (threshold: {pct(share)} of them)" for k in hit]
    sb = d.scoreboard
    if sb is not None:
        rates = [f"{c} {pct(r)}" for c in sb.checks if (r := sb.rate(c)) is not None][:4]
        if rates:
            evidence.append("the other checks were scored: " + ", ".join(rates))
    return _finding(
        "probe_null_check",
        f"{', '.join(hit)} null on every case: a probe plumbing bug",
        "problem",
        evidence,
        "The probe or compiler path failed silently: the model's outputs were produced and scored on the other "
        "checks, but this one was never computed (seed 003: probe/compiler plumbing bug).",
        "Fix the probe pipeline first and probe again; do not retrain until the evaluation is trustworthy.",
    )


def rule_gold_budget(d: DiagnosisInput) -> Finding | None:
    """seed 003: gold output token budget far above the context window: the DSL is too verbose."""
    data: Mapping[str, Any] = d.extra.get("data") or {}
    gold = next((data[k] for k in ("p95_output_tokens", "gold_output_tokens") if _is_num(data.get(k))), None)
    context = next((data[k] for k in ("context", "context_length") if _is_num(data.get(k))), None)
    if gold is None or context is None or context <= 0:
        return None
    share = d.threshold("gold_budget_share")
    if gold <= share * context:
        return None
    return _finding(
        "gold_budget_over_context",
        "Gold outputs need more tokens than the context holds",
        "problem",
        [
            f"p95 gold output {num(gold)} tokens vs context {num(context)} ({num(gold / context)}× the context; "
            f"threshold {pct(share)} of it)"
        ],
        "The DSL is too verbose: it carries fields the compiler could infer, so correct outputs cannot fit.",
        "Run a DSL compression pass before training more (target: output tokens below "
        f"{pct(share)} of the context), or raise the context; more data will not help.",
    )


def _is_num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and np.isfinite(x)


ACTIVE_PLAN = frozenset({"active", "running", "in_progress", "in-progress", "training", "pending", "started"})


def rule_plan_not_final(d: DiagnosisInput) -> Finding | None:
    """seed 003: training_plan.json says "active" after the run completed: the pipeline did not finalise it."""
    status, stage = d.extra.get("plan") or (None, None)
    if d.extra.get("run_status") != "finished" or not status or status.lower() not in ACTIVE_PLAN:
        return None
    return _finding(
        "plan_not_finalized",
        "training_plan.json still says the run is going",
        "note",
        [f"training_plan.json: status '{status}'" + (f", stage '{stage}'" if stage else "") + "; run.yaml: finished"],
        "The pipeline did not finalise the plan's stage status when the run ended (telemetry bookkeeping).",
        "Fix the plan update logic; nothing here reads the plan's status for results.",
    )


# ----------------------------------------------------------------------------------------- curves


def rule_parity(d: DiagnosisInput) -> Finding | None:
    """seed 003: "CK loss ≠ PT loss: numerical parity broken. Stop training."."""
    limit = d.threshold("parity_rel_diff")
    for a_name, b_name in PARITY_PAIRS:
        a, b = _series(d, a_name), _series(d, b_name)
        if a is None or b is None:
            continue
        shared, ia, ib = np.intersect1d(a[0], b[0], return_indices=True)
        if not shared.size:
            continue
        va, vb = a[1][ia], b[1][ib]
        rel = np.abs(va - vb) / np.maximum(np.abs(vb), 1e-12)
        worst = int(np.argmax(rel))
        if rel[worst] <= limit:
            continue
        off = int(np.count_nonzero(rel > limit))
        return _finding(
            "loss_parity",
            f"{a_name} and {b_name} disagree: numerical parity is broken",
            "problem",
            [
                f"at step {_step(shared[worst])}: {a_name} {num(va[worst])} vs {b_name} {num(vb[worst])} "
                f"({pct(rel[worst])} apart; threshold {pct(limit)})",
                f"{off} of {shared.size} shared steps differ by more than the threshold",
            ],
            "The two implementations of the loss no longer compute the same thing (a kernel, precision or "
            "reduction difference); this should never happen.",
            "Stop training. Fix kernel parity before continuing.",
        )
    return None


def rule_packing(d: DiagnosisInput) -> Finding | None:
    """seed 003: loss stuck above 0.5: verify the token packing fill rate (> 0.85)."""
    curve = _ce_loss(d)
    fill = next((f for name in FILL_RATE_NAMES if (f := _series(d, name)) is not None), None)
    if curve is None or fill is None:
        return None
    frac = d.threshold("plateau_window_frac")
    level = float(np.mean(_tail(curve[1], frac)))
    stuck = d.threshold("stuck_loss")
    fill_mean = float(np.mean(_tail(fill[1], frac)))
    floor = d.threshold("packing_fill_rate")
    if level <= stuck or fill_mean >= floor:
        return None
    name = next(n for n in FILL_RATE_NAMES if d.metrics is not None and n in d.metrics.series)
    return _finding(
        "packing_fill_low",
        "The loss is stuck high and the packing fill rate is low",
        "warning",
        [
            f"{d.loss_key} final-window mean {num(level)} > {num(stuck)}",
            f"{name} final-window mean {pct(fill_mean)} < {pct(floor)}",
        ],
        "A data-packing problem: much of each sequence is padding, so the model sees fewer real tokens than the "
        "budget says.",
        "Fix the packing (fill rate above the threshold) before an LR sweep or a bigger model.",
    )


def rule_stage_spike(d: DiagnosisInput) -> Finding | None:
    """seed 003: a sudden loss spike at a stage boundary is expected (new data) if it recovers in 50-100 steps."""
    curve = _ce_loss(d)
    if curve is None or d.metrics is None or len(d.metrics.stages) < 2:
        return None
    x, y = curve
    factor, recovery = d.threshold("stage_spike_factor"), d.threshold("stage_recovery_steps")
    spikes = []
    for stage in d.metrics.stages[1:]:
        before = y[(x < stage.start)][-5:]
        after_mask = (x >= stage.start) & (x <= stage.start + recovery)
        after = y[after_mask]
        if before.size < 2 or after.size < 2:
            continue
        ref = float(np.median(before))
        peak = float(after.max())
        if peak <= factor * ref:
            continue
        back = bool(np.any(after[int(np.argmax(after)) :] <= 1.1 * ref))
        spikes.append((stage, ref, peak, back))
    if not spikes:
        return None
    unrecovered = [s for s in spikes if not s[3]]
    evidence = [
        f"stage '{s.name}' from step {_step(s.start)}: {d.loss_key} {num(ref)} before → peak {num(peak)} "
        f"({num(peak / ref)}×; threshold {num(factor)}×), "
        + ("back within 10% of it" if back else "not back within 10% of it")
        + f" within {_step(recovery)} steps"
        for s, ref, peak, back in spikes
    ]
    return _finding(
        "stage_boundary_spike",
        "A loss spike at a stage boundary" + (" that did not recover" if unrecovered else " (recovered)"),
        "warning" if unrecovered else "note",
        evidence,
        "A new data distribution at the stage transition: expected, not a bug, when it recovers quickly"
        + ("; this one did not, so the new stage's data may conflict with the old." if unrecovered else "."),
        "Watch the recovery; if it does not come back, check the new stage's data (format, packing, duplicates)."
        if unrecovered
        else "Nothing to fix: the spike is the stage change.",
    )


# ----------------------------------------------------------------------------- seed 001 watch metrics


def rule_max_tokens(d: DiagnosisInput) -> Finding | None:
    """seed 001: max_token_hit_rate spikes mean the model is rambling."""
    s = _series(d, "max_token_hit_rate")
    if s is None:
        return None
    limit = d.threshold("max_token_hit_rate")
    over = s[1] >= limit
    if not bool(np.any(over)):
        return None
    i = int(np.argmax(s[1]))
    return _finding(
        "max_token_hits",
        "Generations hit the token limit",
        "warning",
        [
            f"max_token_hit_rate reached {pct(s[1][i])} at step {_step(s[0][i])} (threshold {pct(limit)}); "
            f"{int(np.count_nonzero(over))} of {s[1].size} points at or above it, the first at step "
            f"{_step(s[0][int(np.argmax(over))])}"
        ],
        "The model is rambling: completions run into max_tokens, so their rewards score truncated answers.",
        "Consider raising max_tokens, or look at the long completions for loops.",
    )


def rule_datums_drop(d: DiagnosisInput) -> Finding | None:
    """seed 001: num_datums drops when groups are uninformative (all right or all wrong)."""
    s = _series(d, "num_datums")
    if s is None or s[1].size < 4:
        return None
    peak = float(np.max(s[1]))
    final = float(np.mean(_tail(s[1], d.threshold("plateau_window_frac"))))
    share = d.threshold("datums_drop")
    if peak <= 0 or final >= share * peak:
        return None
    return _finding(
        "datums_drop",
        "Fewer training datums per step",
        "warning",
        [
            f"num_datums final-window mean {num(final)} vs a peak of {num(peak)} "
            f"({pct(final / peak)}; threshold {pct(share)})"
        ],
        "Groups became uninformative (every rollout right or every one wrong), so they give no gradient.",
        "Check the task difficulty against the model (too easy or too hard), or raise the group size.",
    )


def rule_uniform_groups(d: DiagnosisInput) -> Finding | None:
    """seed 001: many groups collapsed to one reward value (feeds the reward-collapse reading)."""
    limit = d.threshold("uniform_group_rate")
    frac = d.threshold("plateau_window_frac")
    hits = []
    for name in UNIFORM_NAMES:
        s = _series(d, name)
        if s is not None and (m := float(np.mean(_tail(s[1], frac)))) >= limit:
            hits.append(f"{name} final-window mean {pct(m)} (threshold {pct(limit)})")
    if not hits:
        return None
    return _finding(
        "uniform_reward_groups",
        "Reward groups collapsed to one value",
        "warning",
        hits,
        "Most prompt groups give every rollout the same reward: the group-relative advantage is zero there, "
        "so little learning signal is left (a reward-variance collapse in the making).",
        "Compare with frac_reward_zero_std and reward_std; vary the prompts' difficulty or the group size.",
    )


def rule_placeholder_loss(d: DiagnosisInput) -> Finding | None:
    """seed 001: loss_is_placeholder true: the backend reports an async placeholder, not the objective."""
    s = _series(d, "loss_is_placeholder")
    if s is None or not bool(np.any(s[1] > 0)):
        return None
    n = int(np.count_nonzero(s[1] > 0))
    return _finding(
        "placeholder_loss",
        "The logged loss is a placeholder",
        "note",
        [
            f"loss_is_placeholder is true on {n} of {s[1].size} points "
            f"(first at step {_step(s[0][int(np.argmax(s[1] > 0))])})"
        ],
        "The backend reports an asynchronous placeholder loss, not the optimiser's objective: the loss rules "
        "say nothing about this run.",
        "Read the reward and correct-rate curves instead of the loss.",
    )


RULES = [
    rule_null_check,
    rule_plan_not_final,
    rule_gold_budget,
    rule_parity,
    rule_packing,
    rule_stage_spike,
    rule_max_tokens,
    rule_datums_drop,
    rule_uniform_groups,
    rule_placeholder_loss,
]
