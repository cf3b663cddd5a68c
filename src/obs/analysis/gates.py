"""Gates: a team's pass/fail criteria, declared in obs.yaml and checked for every run.

A gate is one line of text that a person can read and obs can check, e.g.

    renderable >= 100%                 the overall probe rate of a check
    min family exact >= 0.5            the weakest family (or split) on a check
    final.loss <= 0.2                  the final-window mean of a logged metric
    headline >= 0.7 / delta >= 0       the headline value, its delta vs the baseline
    rule reward_variance_collapse not fired
    gate.json passed                   the compiler / gold-asset gate
    held constant clean
    ci_low(delta) > 0                  an interval bound of the delta (or frozen.delta)
    exact >= baseline.exact + 0.03     a reference to the baseline, the frozen baseline or run:ID.
    renderable >= 100% and (exact >= 0.7 or check exact-gate)

Clauses join with `and` / `or` and parentheses (`obs.gate_language`): `and` fails when a part fails and is
n/a when a part is; `or` passes when a part passes.

Each run gets pass, fail or "n/a" per gate. n/a is not a pass: it says the run has nothing the gate
can be judged on (no probe, no reward series, no gate.json), which the leaderboard shows as such.
Evaluation is pure and reads only the per-run summary, so gates can change without re-reading logs.
The language itself (parsing an expression) is `obs.gate_language`: obs.yaml is checked with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from obs.gate_language import GateError, GateSpec, parse_gate
from obs.numbers import num, pct
from obs.sitemodel import DeltaSummary, RunSummary

__all__ = ["FAIL", "NA", "PASS", "GateContext", "GateError", "GateResult", "GateSpec", "evaluate_gate", "parse_gate"]

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
    shown: str = ""  # what the run has, as the strip shows it ("72.0%", "passed", "did not fire")
    needs: str = ""  # what the gate asks for ("≥ 70.0%"); empty for a composite or a result without a threshold

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "status": self.status,
            "value": self.value,
            "shown": self.shown,
            "needs": self.needs,
            "detail": self.detail,
        }


def _fmt_value(value: float, as_percent: bool) -> str:
    return pct(value) if as_percent else num(value)


@dataclass(frozen=True)
class GateContext:
    """What a gate may refer to beyond the run itself: every run by id (`baseline.`, `frozen.`, `run:ID.`), the
    spec's frozen baseline by spec id, and the results of the gates above it (`check NAME`)."""

    runs: Mapping[str, RunSummary] = field(default_factory=dict)
    frozen: Mapping[str, str | None] = field(default_factory=dict)
    done: dict[str, GateResult] = field(default_factory=dict)


def _other(ref: str, s: RunSummary, ctx: GateContext) -> tuple[RunSummary | None, str, str]:
    """(the run a reference reads, the reference within it, what to call that run): `baseline.`, `frozen.`
    (not `frozen.delta`, the run's own delta against the frozen baseline) and `run:ID.` name another run."""
    low = ref.lower()
    if low.startswith("run:"):
        rid, _, rest = ref[4:].partition(".")
        return ctx.runs.get(rid), rest, rid
    if low.startswith("baseline."):
        return (ctx.runs.get(s.baseline) if s.baseline else None), ref[9:], f"baseline {s.baseline or '(none)'}"
    if low.startswith("frozen.") and low != "frozen.delta":
        fid = ctx.frozen.get(s.spec) if s.spec else None
        return (ctx.runs.get(fid) if fid else None), ref[7:], f"frozen baseline {fid or '(none)'}"
    return s, ref, ""


def _two_measurements(s: RunSummary, other: RunSummary) -> str | None:
    """Why a run's value may not be compared with another run's (None: one measurement): a contract key both
    declare differently (analysis.measurement's keys), or the run is not one measurement with its baseline or
    the spec's frozen contract."""
    from obs.analysis.measurement import MEASUREMENT_KEYS

    for key in MEASUREMENT_KEYS:
        a, b = s.fields.get(f"contract.{key}"), other.fields.get(f"contract.{key}")
        if a is not None and b is not None and str(a) != str(b):
            return f"{key}: {a} here, {b} in {other.id}"
    if other.id in (s.baseline, None) and s.not_one_measurement:
        return s.not_one_measurement.split(": the numbers")[0]
    return None


def _frozen_delta(s: RunSummary, ctx: GateContext) -> DeltaSummary | None:
    fid = ctx.frozen.get(s.spec) if s.spec else None
    if s.frozen_delta is not None:
        return s.frozen_delta
    return s.delta if fid and s.baseline == fid else None


def _lookup(
    ref: str, s: RunSummary, ctx: GateContext | None = None, func: str | None = None
) -> tuple[float | None, bool, str]:
    """The number a reference names in a summary, whether it is a rate, and where it came from."""
    ctx = ctx or GateContext()
    run, ref, whose = _other(ref, s, ctx)
    if run is None:
        return None, False, f"{whose}: not in this build"
    if run is not s and (why := _two_measurements(s, run)):
        return None, False, f"{whose}: not one measurement ({why})"
    found, is_rate, where = _own(ref, run, ctx, func)
    return found, is_rate, f"{whose} {where}".strip()


def _own(ref: str, s: RunSummary, ctx: GateContext, func: str | None) -> tuple[float | None, bool, str]:
    rates: Mapping[str, float | None] = s.rates
    finals: Mapping[str, float | None] = s.finals
    headline = s.headline
    low = ref.lower()
    if low in ("delta", "frozen.delta"):
        d = s.delta if low == "delta" else _frozen_delta(s, ctx)
        what = "delta vs baseline" if low == "delta" else "delta vs frozen baseline"
        if func is None:
            return (d.delta if d else None), s.headline_is_rate, what
        ci = d.ci if d is not None and d.verdict not in ("not_tested", "not_one_measurement") else None
        bound = (ci.low if func == "ci_low" else ci.high) if ci is not None else None
        return bound, s.headline_is_rate, f"{func}({what}{', no interval' if ci is None else ''})"
    if low == "headline":
        return headline.value, s.headline_is_rate, f"headline {headline.metric or ''}".strip()
    for prefix, source, is_rate in (("rate.", rates, True), ("final.", finals, False)):
        if low.startswith(prefix):
            key = ref[len(prefix) :]
            return source.get(key), is_rate, f"{prefix[:-1]} {key}"
    if low.startswith(("split.", "family.")):
        scope, label, check = ref.split(".", 2)
        table = s.split_rates if scope.lower() == "split" else s.family_rates
        return (table.get(check) or {}).get(label), True, f"{scope} {label} {check}"
    if ref in rates:
        return rates[ref], True, f"probe rate {ref}"
    if headline.metric == ref and headline.value is not None:
        return headline.value, s.headline_is_rate, f"headline {ref}"
    if ref in finals:
        return finals[ref], False, f"final {ref}"
    return None, False, ref


def _combine(spec: GateSpec, results: list[GateResult]) -> GateResult:
    """Three-valued: `and` fails when a part fails, else is n/a when a part is; `or` passes when a part passes,
    else is n/a when a part is."""
    st = [r.status for r in results]
    if spec.kind == "all":
        status = FAIL if FAIL in st else NA if NA in st else PASS
    else:
        status = PASS if PASS in st else NA if NA in st else FAIL
    join = " and " if spec.kind == "all" else " or "
    detail = join.join(f"({r.detail}: {r.status})" for r in results)
    return GateResult(spec.name, spec.label, status, None, detail)


def evaluate_gate(spec: GateSpec, s: RunSummary, ctx: GateContext | None = None) -> GateResult:
    """One gate on one run summary (`ctx`: other runs and the gates already judged, for references): a composite,
    another gate's result, a diagnosis rule, gate.json's result, the held-constant check, or a comparison of a
    number (a per-scope aggregate, or one the reference names) with the gate's value or another run's."""
    ctx = ctx or GateContext()
    if spec.kind in ("all", "any"):
        return _combine(spec, [evaluate_gate(p, s, ctx) for p in spec.parts])
    if spec.kind == "check":
        other = ctx.done.get(spec.check)
        if other is None:
            return _result(spec, NA, None, f"gate {spec.check} was not judged before this one")
        return _result(spec, other.status, other.value, f"gate {spec.check}", other.shown, other.needs)
    if spec.kind == "rule":
        return _rule_gate(spec, s)
    if spec.kind == "gate":
        passed = s.gate_passed
        if passed is None:
            detail = "no gate.json result" if not s.has.gate else "gate.json has no overall result"
            return _result(spec, NA, None, detail)
        word = "passed" if passed else "failed"
        return _result(spec, PASS if passed else FAIL, None, f"gate.json {word}", word)
    if spec.kind == "held":
        clean = s.held_constant_clean
        if clean is None:
            return _result(spec, NA, None, "no baseline to check against")
        detail = "only the primary axis changed" if clean else "more than one axis changed"
        return _result(spec, PASS if clean else FAIL, None, detail, "clean" if clean else "not clean")
    compared = _scope_value(spec, s) if spec.scope else _ref_value(spec, s, ctx)
    if isinstance(compared, GateResult):
        return compared
    value, is_rate, where = compared
    target = _target(spec, s, ctx, value)
    if isinstance(target, GateResult):
        return target
    target_value, target_text = target
    ok = OPS[spec.op](value, target_value)
    shown = _fmt_value(value, is_rate or spec.is_percent)
    as_rate = spec.is_percent or (is_rate and (spec.rhs_ref is not None or abs(target_value) <= 1.0))
    needs = f"{OP_WORDS[spec.op]} {_fmt_value(target_value, as_rate)}{target_text}"
    return _result(spec, PASS if ok else FAIL, value, f"{where} = {shown} (needs {needs})", shown, needs)


def _result(
    spec: GateSpec, status: str, value: float | None, detail: str, shown: str = "", needs: str = ""
) -> GateResult:
    return GateResult(spec.name, spec.label, status, value, detail, shown, needs)


def _rule_gate(spec: GateSpec, s: RunSummary) -> GateResult:
    """Whether a diagnosis rule fired (or did not, as the gate wants); not checked when the run lacks the data the
    rule reads and it did not fire."""
    need = RULE_NEEDS.get(spec.rule, "")
    fired = spec.rule in s.findings
    if need and not getattr(s.has, need, False) and not fired:
        return _result(spec, NA, None, f"not checked: the run has no {need} data for rule {spec.rule}")
    ok = fired if spec.fired_ok else not fired
    said = "fired" if fired else "did not fire"
    return _result(spec, PASS if ok else FAIL, None, f"rule {spec.rule} {said}", said)


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


def _ref_value(spec: GateSpec, s: RunSummary, ctx: GateContext) -> tuple[float, bool, str] | GateResult:
    """The finite number the gate's left side names (`_lookup`, an interval bound with `func`), or not checked."""
    found, is_rate, where = _lookup(spec.ref, s, ctx, spec.func)
    if found is None or not isinstance(found, int | float) or not math.isfinite(found):
        named = spec.ref if not spec.func else f"{spec.func}({spec.ref})"
        return _result(spec, NA, None, f"no value for {named} ({where})")
    return float(found), is_rate, where


def _target(spec: GateSpec, s: RunSummary, ctx: GateContext, value: float) -> tuple[float, str] | GateResult:
    """The right side: the gate's number, or another run's value (`rhs_ref`) plus it, with the words for it."""
    if not spec.rhs_ref:
        return spec.value, ""
    rhs, rate, where = _lookup(spec.rhs_ref, s, ctx)
    if rhs is None or not isinstance(rhs, int | float) or not math.isfinite(rhs):
        return _result(spec, NA, value, f"no value for {spec.rhs_ref} ({where})")
    shift = (
        ""
        if not spec.value
        else f" {'+' if spec.value > 0 else '−'} {_fmt_value(abs(spec.value), spec.is_percent or rate)}"
    )
    return float(rhs) + spec.value, f" ({where} {_fmt_value(float(rhs), rate)}{shift})"


def evaluate_gates(specs: list[GateSpec], s: RunSummary, ctx: GateContext | None = None) -> list[GateResult]:
    """Every gate of obs.yaml on one run, in order (a `check` names a gate above it)."""
    base = ctx or GateContext()
    run_ctx = GateContext(base.runs, base.frozen, {})
    results = []
    for spec in specs:
        r = evaluate_gate(spec, s, run_ctx)
        run_ctx.done[spec.name] = r
        results.append(r)
    return results


def gate_specs_from(raw: list[dict[str, str]]) -> list[GateSpec]:
    """Settings (already validated by obs.config) to parsed gates; an unreadable one is skipped."""
    specs = []
    for item in raw:
        try:
            specs.append(parse_gate(item["expr"], item.get("name"), item.get("label")))
        except (GateError, KeyError):
            continue
    return specs
