"""Gates: a team's pass/fail criteria, declared in obs.yaml and checked for every run.

A gate is one line of text that a person can read and obs can check, e.g.

    renderable >= 100%                 the overall probe rate of a check
    min family exact >= 0.5            the weakest family (or split) on a check
    final.loss <= 0.2                  the final-window mean of a logged metric
    headline >= 0.7 / delta >= 0       the headline value, its delta vs the baseline
    rule reward_variance_collapse not fired
    gate.json passed                   the compiler / gold-asset gate
    held constant clean

Each run gets pass, fail or "n/a" per gate. n/a is not a pass: it says the run has nothing the gate
can be judged on (no probe, no reward series, no gate.json), which the leaderboard shows as such.
Evaluation is pure and reads only the per-run summary, so gates can change without re-reading logs.
The language itself (parsing an expression) is `obs.gate_language`: obs.yaml is checked with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from obs.gate_language import GateError, GateSpec, parse_gate
from obs.numbers import num, pct
from obs.sitemodel import RunSummary

__all__ = ["FAIL", "NA", "PASS", "GateError", "GateResult", "GateSpec", "evaluate_gate", "parse_gate"]

PASS, FAIL, NA = "pass", "fail", "na"

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": lambda x, y: x >= y,
    ">": lambda x, y: x > y,
    "<=": lambda x, y: x <= y,
    "<": lambda x, y: x < y,
    "==": lambda x, y: math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12),
    "!=": lambda x, y: not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12),
}
OP_WORDS = {">=": "≥", "<=": "≤", "==": "=", "!=": "≠", ">": ">", "<": "<"}

# What a diagnosis rule needs to have been checked at all: without it, "not fired" says nothing.
RULE_NEEDS = {
    "reward_variance_collapse": "reward",
    "loss_plateau": "curves",
    "loss_oscillation": "curves",
    "grad_collapse": "curves",
    "grad_spikes": "curves",
    "missing_stage_labels": "curves",
    "memorised": "probe",
}


@dataclass(frozen=True)
class GateResult:
    name: str
    label: str
    status: str  # pass | fail | na
    value: float | None
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "status": self.status,
            "value": self.value,
            "detail": self.detail,
        }


def _fmt_value(value: float, as_percent: bool) -> str:
    return pct(value) if as_percent else num(value)


def _lookup(ref: str, s: RunSummary) -> tuple[float | None, bool, str]:
    """The number a reference names in a summary, whether it is a rate, and where it came from."""
    rates: Mapping[str, float | None] = s.rates
    finals: Mapping[str, float | None] = s.finals
    headline = s.headline
    low = ref.lower()
    if low == "headline":
        return headline.value, s.headline_is_rate, f"headline {headline.metric or ''}".strip()
    if low == "delta":
        return (s.delta.delta if s.delta else None), s.headline_is_rate, "delta vs baseline"
    for prefix, source, is_rate in (("rate.", rates, True), ("final.", finals, False)):
        if low.startswith(prefix):
            key = ref[len(prefix) :]
            return source.get(key), is_rate, f"{prefix[:-1]} {key}"
    if ref in rates:
        return rates[ref], True, f"probe rate {ref}"
    if headline.metric == ref and headline.value is not None:
        return headline.value, s.headline_is_rate, f"headline {ref}"
    if ref in finals:
        return finals[ref], False, f"final {ref}"
    return None, False, ref


def evaluate_gate(spec: GateSpec, s: RunSummary) -> GateResult:
    """One gate on one run summary: a diagnosis rule, gate.json's result, the held-constant check, or a
    comparison of a number (a per-scope aggregate, or one the reference names) with the gate's value."""
    if spec.kind == "rule":
        return _rule_gate(spec, s)
    if spec.kind == "gate":
        passed = s.gate_passed
        if passed is None:
            detail = "no gate.json result" if not s.has.gate else "gate.json has no overall result"
            return _result(spec, NA, None, detail)
        return _result(spec, PASS if passed else FAIL, None, "gate.json passed" if passed else "gate.json failed")
    if spec.kind == "held":
        clean = s.held_constant_clean
        if clean is None:
            return _result(spec, NA, None, "no baseline to check against")
        detail = "only the primary axis changed" if clean else "more than one axis changed"
        return _result(spec, PASS if clean else FAIL, None, detail)
    compared = _scope_value(spec, s) if spec.scope else _ref_value(spec, s)
    if isinstance(compared, GateResult):
        return compared
    value, is_rate, where = compared
    ok = OPS[spec.op](value, spec.value)
    shown = _fmt_value(value, is_rate or spec.is_percent)
    target = _fmt_value(spec.value, spec.is_percent or (is_rate and spec.value <= 1.0))
    return _result(spec, PASS if ok else FAIL, value, f"{where} = {shown} (needs {OP_WORDS[spec.op]} {target})")


def _result(spec: GateSpec, status: str, value: float | None, detail: str) -> GateResult:
    return GateResult(spec.name, spec.label, status, value, detail)


def _rule_gate(spec: GateSpec, s: RunSummary) -> GateResult:
    """Whether a diagnosis rule fired (or did not, as the gate wants); not checked when the run lacks the data the
    rule reads and it did not fire."""
    need = RULE_NEEDS.get(spec.rule, "")
    fired = spec.rule in s.findings
    if need and not getattr(s.has, need, False) and not fired:
        return _result(spec, NA, None, f"not checked: the run has no {need} data for rule {spec.rule}")
    ok = fired if spec.fired_ok else not fired
    return _result(spec, PASS if ok else FAIL, None, f"rule {spec.rule} {'fired' if fired else 'did not fire'}")


def _scope_value(spec: GateSpec, s: RunSummary) -> tuple[float, bool, str] | GateResult:
    """The min, max or mean of a check's per-family or per-split rates (a rate), and where it came from; a
    not-checked result when the run has none."""
    table = s.family_rates if spec.scope == "family" else s.split_rates
    per = table.get(spec.ref) or {}
    if not per:
        return _result(spec, NA, None, f"no per-{spec.scope} {spec.ref} rates")
    agg = spec.agg or "min"
    items = sorted(per.items())
    if agg == "mean":
        return sum(v for _, v in items) / len(items), True, f"mean of {len(items)} {spec.scope} rates"
    pick = min if agg == "min" else max
    label, value = pick(items, key=lambda kv: kv[1])
    return value, True, f"{agg} {spec.scope}: {label}"


def _ref_value(spec: GateSpec, s: RunSummary) -> tuple[float, bool, str] | GateResult:
    """The finite number the gate's reference names (`_lookup`), or a not-checked result."""
    found, is_rate, where = _lookup(spec.ref, s)
    if found is None or not isinstance(found, int | float) or not math.isfinite(found):
        return _result(spec, NA, None, f"no value for {spec.ref}")
    return float(found), is_rate, where


def evaluate_gates(specs: list[GateSpec], s: RunSummary) -> list[GateResult]:
    return [evaluate_gate(spec, s) for spec in specs]


def gate_specs_from(raw: list[dict[str, str]]) -> list[GateSpec]:
    """Settings (already validated by obs.config) to parsed gates; an unreadable one is skipped."""
    specs = []
    for item in raw:
        try:
            specs.append(parse_gate(item["expr"], item.get("name"), item.get("label")))
        except (GateError, KeyError):
            continue
    return specs
