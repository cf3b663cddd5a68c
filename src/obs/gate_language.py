"""The gate language of obs.yaml: one line a person can read and obs can check (see
`obs.analysis.gates` for what each form means and how a run is judged by it).

A gate is one clause or several joined by `and` / `or` (`and` binds tighter; parentheses group):

    renderable >= 100%                               a probe rate (a percent or a fraction)
    min family exact >= 0.5                          the weakest (max, mean) family or split
    split.test.exact >= 0.7  /  family.lane.exact >= 0.5
    final.loss <= 0.2  /  headline >= 0.7  /  delta >= 0
    ci_low(delta) > 0  /  ci_high(frozen.delta) < 0.1      an interval bound of a delta
    frozen.delta >= 0.03                             the rung against the spec's frozen baseline
    exact >= baseline.exact + 0.03                   a reference to the run's baseline, the spec's frozen
    exact >= frozen.exact  /  exact >= run:r7.exact  baseline (`frozen.`) or any run (`run:ID.`)
    rule reward_variance_collapse not fired  /  gate.json passed  /  held constant clean
    check renderable-ok                              another gate of obs.yaml, by name (defined above it)
    renderable >= 100% and (exact >= 0.7 or ci_low(delta) > 0)

Parsed once by a small recursive-descent parser (no dependency: the grammar is a dozen rules). Every
reference is checked when obs.yaml is read: an unknown prefix (`delta.ci_low`, `rate.test.exact`) is an
error there, with obs.yaml's path and line, never an "n/a" on every run later. Run ids named by `run:` are
checked against the source tree when it is opened (`check_run_refs`).

Parsing lives in the core, below the analyses, because obs.yaml is validated with it (`obs.schema`)
before anything is analysed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

_NUMBER = re.compile(r"^(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?P<pct>%)?$")
_TOKEN = re.compile(r"\s*(>=|<=|==|!=|>|<|=|\(|\)|[^\s()<>=!]+)")
_OPS = (">=", "<=", "==", "!=", ">", "<", "=")
_FUNCS = ("ci_low", "ci_high")
_DELTAS = ("delta", "frozen.delta")
_SCOPES = ("family", "families", "split", "splits")
_WORDS = ("and", "or", "not", "rule", "diagnosis", "gate", "gate.json", "compiler", "held", "held_constant", "check")
_ID = re.compile(r"^[A-Za-z0-9_.:@/-]+$")


class GateError(ValueError):
    """A gate expression obs cannot read; the message says what it expected."""


@dataclass(frozen=True)
class GateSpec:
    """One parsed gate clause, or a composite (`kind` "all" / "any" with `parts`).

    `kind` is compare, rule, gate, held, check, all or any; the other fields depend on it. A compare's left
    side is `ref` (`func` "ci_low"/"ci_high" when it is an interval bound); its right side `value`, plus the
    value of `rhs_ref` when it names one."""

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
    func: str | None = None
    rhs_ref: str | None = None
    check: str = ""  # kind "check": the name of the other gate
    parts: tuple[GateSpec, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "expr": self.expr}

    def refs(self) -> Iterable[str]:
        """Every reference in the gate (for checks against the tree: `run:ID.` ids, `check` names)."""
        if self.parts:
            for p in self.parts:
                yield from p.refs()
        else:
            yield from (r for r in (self.ref, self.rhs_ref) if r)

    def checks(self) -> Iterable[str]:
        if self.kind == "check":
            yield self.check
        for p in self.parts:
            yield from p.checks()


def check_ref(ref: str) -> str:
    """The reference if obs knows its form, else GateError naming the forms it knows."""
    low = ref.lower()
    target = low
    for prefix in ("baseline.", "frozen."):
        if low.startswith(prefix) and low != "frozen.delta":
            target = low[len(prefix) :]
    if low.startswith("run:"):
        head, dot, rest = low[4:].partition(".")
        if not head or not dot or not rest:
            raise GateError(f"'{ref}': a run reference is run:ID.<name>, e.g. run:spec03-r1.exact")
        target = rest
    parts = target.split(".")
    head = parts[0]
    known = (
        (head in ("headline", "delta") and len(parts) == 1)
        or (target == "frozen.delta")
        or (head in ("rate", "final") and len(parts) == 2 and parts[1] != "")
        or (head in ("split", "family") and len(parts) == 3 and all(parts[1:]))
        or (len(parts) == 1 and bool(_ID.match(head)) and head not in ("rate", "final", "split", "family"))
    )
    if not known:
        raise GateError(
            f"unknown reference '{ref}': expected a check or metric name, headline, delta, frozen.delta, "
            "rate.<check>, final.<metric>, split.<name>.<check>, family.<name>.<check>, ci_low(delta), "
            "ci_high(frozen.delta), or one of these after baseline., frozen. or run:ID."
        )
    return ref


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise GateError(f"'{self.text}' ends too early")
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        got = self.peek()
        if got is None or got.lower() != tok:
            raise GateError(f"expected '{tok}' in '{self.text}', found {repr(got) if got else 'the end'}")
        self.i += 1

    def parse(self) -> Any:
        node = self.any_of()
        if self.peek() is not None:
            raise GateError(f"unexpected '{self.peek()}' in '{self.text}' (join clauses with 'and' / 'or')")
        return node

    def any_of(self) -> Any:
        items = [self.all_of()]
        while (tok := self.peek()) is not None and tok.lower() == "or":
            self.i += 1
            items.append(self.all_of())
        return items[0] if len(items) == 1 else ("any", items)

    def all_of(self) -> Any:
        items = [self.atom()]
        while (tok := self.peek()) is not None and tok.lower() == "and":
            self.i += 1
            items.append(self.atom())
        return items[0] if len(items) == 1 else ("all", items)

    def atom(self) -> Any:
        if self.peek() == "(" and not self._func_call():
            self.i += 1
            node = self.any_of()
            self.expect(")")
            return node
        start = self.i
        depth = 0
        while (tok := self.peek()) is not None:
            low = tok.lower()
            if depth == 0 and (low in ("and", "or") or tok == ")"):
                break
            depth += tok == "("
            depth -= tok == ")"
            self.i += 1
        if self.i == start:
            raise GateError(
                f"expected a clause in '{self.text}', found {repr(self.peek()) if self.peek() else 'the end'}"
            )
        return ("clause", self.tokens[start : self.i])

    def _func_call(self) -> bool:
        prev = self.tokens[self.i - 1] if self.i else None
        return prev is not None and prev.lower() in _FUNCS


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        if m.group(1):
            out.append(m.group(1))
        pos = m.end()
    return out


def _number(tok: str) -> tuple[float, bool] | None:
    m = _NUMBER.match(tok)
    if m is None:
        return None
    return float(m["num"]) / (100.0 if m["pct"] else 1.0), bool(m["pct"])


def _clause(tokens: list[str], name: str, label: str) -> GateSpec:
    """One comparison or named condition of a gate (the parser splits and/or and parentheses off first)."""
    text = " ".join(tokens)
    if tokens[:1] and tokens[0].lower() == "diagnosis":  # 'diagnosis rule X not fired' reads as 'rule X not fired'
        tokens = tokens[1:]
    named = _named_clause(tokens, name, label, text)
    if named is not None:
        return named
    ops = [k for k, t in enumerate(tokens) if t in _OPS]
    if len(ops) != 1:
        raise GateError(
            f"cannot read gate '{text}': expected '<reference> >= <number>' (or <=, >, <, ==, !=), "
            "'min family <check> >= <number>', 'rule <name> not fired', 'gate.json passed', 'held constant clean' "
            "or 'check <gate name>'"
        )
    k = ops[0]
    op = tokens[k]
    ref, agg, scope, func = _left_side(tokens[:k], text)
    value, is_pct, rhs_ref = _right_side(tokens[k + 1 :], text)
    return GateSpec(
        name,
        label,
        text,
        "compare",
        ref=ref,
        agg=agg,
        scope=scope,
        op="==" if op == "=" else op,
        value=value,
        is_percent=is_pct,
        func=func,
        rhs_ref=rhs_ref,
    )


def _named_clause(tokens: list[str], name: str, label: str, text: str) -> GateSpec | None:
    """A clause that is a named condition rather than a comparison: 'rule X (not) fired', 'gate.json passed',
    'held constant clean', 'check <gate name>'; None for anything else."""
    low = [t.lower() for t in tokens]
    if low[:1] == ["rule"] and len(low) in (3, 4) and low[-1] == "fired" and (len(low) == 3 or low[2] == "not"):
        return GateSpec(name, label, text, "rule", rule=tokens[1], fired_ok=len(low) == 3)
    if low in (["gate.json", "passed"], ["gate", "passed"], ["compiler", "gate", "passed"]):
        return GateSpec(name, label, text, "gate")
    if low in (["held", "constant", "clean"], ["held_constant", "clean"]):
        return GateSpec(name, label, text, "held")
    if low[:1] == ["check"] and len(tokens) == 2:
        return GateSpec(name, label, text, "check", check=tokens[1])
    return None


def _left_side(left: list[str], text: str) -> tuple[str, str | None, str | None, str | None]:
    """The reference a comparison reads, with its aggregate over a scope ('min family exact') or its interval
    bound ('ci_low(delta)'): (reference, aggregate, scope, function)."""
    agg = scope = func = None
    if len(left) == 2 and left[0].lower() in ("min", "max", "mean") and "." in left[1]:
        head, _, rest = left[1].partition(".")  # "min family.exact"
        if head.lower() in _SCOPES:
            left = [left[0], head, rest]
    if len(left) == 3 and left[0].lower() in ("min", "max", "mean") and left[1].lower() in _SCOPES:
        agg, scope = left[0].lower(), left[1].lower().rstrip("s").replace("familie", "family")
        left = left[2:]
    if len(left) == 4 and left[0].lower() in _FUNCS and left[1] == "(" and left[3] == ")":
        func, left = left[0].lower(), [left[2]]
        if left[0].lower() not in _DELTAS:
            raise GateError(f"'{text}': {func}() takes delta or frozen.delta, not '{left[0]}'")
    if len(left) != 1:
        raise GateError(
            f"cannot read the left side of '{text}': expected one reference, e.g. exact, rate.exact, ci_low(delta)"
        )
    ref = left[0] if scope else check_ref(left[0])
    if scope and "." in ref:
        raise GateError(f"'{text}': 'min {scope}' takes a check name, not '{ref}'")
    return ref, agg, scope, func


def _right_side(right: list[str], text: str) -> tuple[float, bool, str | None]:
    """What a comparison compares with: a number (0.7, 70%), or another run's value (baseline.<name>,
    frozen.<name>, run:ID.<name>) plus or minus a number: (number, given in percent, reference)."""
    if len(right) == 1 and (n := _number(right[0])) is not None:
        return n[0], n[1], None
    if not (len(right) in (1, 3) and _number(right[0]) is None):
        raise GateError(f"cannot read the right side of '{text}': expected a number (0.7, 70%) or a reference")
    if not right[0].lower().startswith(("baseline.", "frozen.", "run:")) or right[0].lower() == "frozen.delta":
        raise GateError(
            f"cannot read the right side of '{text}': expected a number (0.7, 70%) or a reference to another "
            "run: baseline.<name>, frozen.<name> or run:ID.<name> (+ or - a number)"
        )
    rhs_ref = check_ref(right[0])
    if len(right) == 1:
        return 0.0, False, rhs_ref
    n = _number(right[2])
    if right[1] not in ("+", "-") or n is None:
        raise GateError(f"cannot read the right side of '{text}': expected <reference> + <number> or - <number>")
    return (n[0] if right[1] == "+" else -n[0]), n[1], rhs_ref


def _build(node: Any, name: str, label: str, text: str) -> GateSpec:
    if node[0] == "clause":
        return _clause(node[1], name, label)
    parts = tuple(_build(n, f"{name}.{i + 1}", "", text) for i, n in enumerate(node[1]))
    return GateSpec(name, label, text, node[0], parts=parts)


def parse_gate(expr: str, name: str | None = None, label: str | None = None) -> GateSpec:
    """Read one gate expression (see the module doc), or raise GateError saying what was expected."""
    text = " ".join(str(expr).split())
    if not text:
        raise GateError("a gate needs an expression, e.g. 'renderable >= 100%'")
    nm = name or re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "gate"
    lb = label or text
    spec = _build(_Parser(text).parse(), nm, lb, text)
    return spec if spec.expr == text else GateSpec(**{**spec.__dict__, "expr": text})


def run_refs(spec: GateSpec) -> list[str]:
    """The run ids a gate names with `run:ID.`."""
    return sorted({r[4:].partition(".")[0] for r in spec.refs() if r.lower().startswith("run:")})
