"""The gate language of obs.yaml: one line a person can read and obs can check (see
`obs.analysis.gates` for what each form means and how a run is judged by it).

Parsing lives in the core, below the analyses, because obs.yaml is validated with it
(`obs.schema`) before anything is analysed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_NUMBER = r"(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<pct>%)?"
_COMPARE = re.compile(
    r"^(?:(?P<agg>min|max|mean)\s+(?P<scope>family|families|split|splits)[\s.]+)?(?P<ref>[^\s<>=!]+)\s*"
    r"(?P<op>>=|<=|==|!=|>|<|=)\s*" + _NUMBER + r"$",
    re.IGNORECASE,
)
_RULE = re.compile(
    r"^(?:diagnosis\s+)?rule\s+(?P<rule>[A-Za-z0-9_.-]+)\s+(?P<neg>not\s+)?fired$",
    re.IGNORECASE,
)
_GATE = re.compile(r"^(?:compiler\s+)?gate(?:\.json)?\s+passed$", re.IGNORECASE)
_HELD = re.compile(r"^held[ _]constant\s+clean$", re.IGNORECASE)


class GateError(ValueError):
    """A gate expression obs cannot read; the message says what it expected."""


@dataclass(frozen=True)
class GateSpec:
    """One parsed gate. `kind` is compare, rule, gate or held; the other fields depend on it."""

    name: str
    label: str
    expr: str
    kind: str
    ref: str = ""
    agg: str | None = None
    scope: str | None = None
    op: str = ">="
    value: float = 0.0
    is_percent: bool = False
    rule: str = ""
    fired_ok: bool = False  # "rule X fired" (rare) instead of "not fired"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "expr": self.expr}


def parse_gate(expr: str, name: str | None = None, label: str | None = None) -> GateSpec:
    """Read one gate expression (see the module doc), or raise GateError saying what was expected."""
    text = " ".join(str(expr).split())
    if not text:
        raise GateError("a gate needs an expression, e.g. 'renderable >= 100%'")
    nm = name or re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "gate"
    lb = label or text
    if m := _RULE.match(text):
        return GateSpec(nm, lb, text, "rule", rule=m["rule"], fired_ok=not m["neg"])
    if _GATE.match(text):
        return GateSpec(nm, lb, text, "gate")
    if _HELD.match(text):
        return GateSpec(nm, lb, text, "held")
    if m := _COMPARE.match(text):
        value = float(m["num"]) / (100.0 if m["pct"] else 1.0)
        scope = m["scope"].lower().rstrip("s").replace("familie", "family") if m["scope"] else None
        return GateSpec(
            nm,
            lb,
            text,
            "compare",
            ref=m["ref"],
            agg=m["agg"].lower() if m["agg"] else None,
            scope=scope,
            op="==" if m["op"] == "=" else m["op"],
            value=value,
            is_percent=bool(m["pct"]),
        )
    raise GateError(
        f"cannot read gate '{text}': expected '<metric> >= <number>', 'min family <check> >= <number>', "
        "'rule <name> not fired', 'gate.json passed' or 'held constant clean'"
    )
