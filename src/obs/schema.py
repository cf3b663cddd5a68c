"""The input contract as data: one declaration per file (run.yaml, spec.yaml, campaign.yaml, obs.yaml).

Every field is declared once, with its kind (what it accepts), its default and a one-line doc.
Four things come from the declarations, so they can no longer disagree:

* validation (`Schema.read`): a wrong field is a warning on its line saying what was expected,
  and the default is used; the rest of the file is kept; unknown keys are reported;
* the defaults the readers start from (`Schema.defaults`, and `DEFAULT_THRESHOLDS` & co. for
  `obs.config`);
* the tables of docs/contract.md (`markdown_table`, rewritten by scripts/contract_tables.py and
  compared with the file by tests/unit/test_schema.py);
* the model's attributes for each file (`Run`, `Decision`, `Spec`, `Campaign`, `SiteConfig`) and the
  typed mappings that lay a file's values over them (obs.model_code, written by the same script and
  compared by tests/unit/test_declared_fields.py): a field's type there is its kind's `py_type`.

Plain Python: a validation library would add its import to every command for some eighty
fields, and none of them gives line numbers from our YAML reader.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from obs.diagnostics import Severity
from obs.fields import YamlFields, shown
from obs.gate_language import GateError, parse_gate
from obs.model import STATUSES, TIERS, VERDICTS, MetricDecl, MetricWindow
from obs.sanitize import FLOAT_LIMIT, int_in_range
from obs.textbounds import bound_markdown
from obs.vocabulary import names_an_identifier

CONTRACT_VERSIONS = (1,)


class Invalid(Exception):
    """A value its kind cannot take; `expected` says what would have been right when the kind alone cannot.

    `say` is the message when the kind words it itself (a choice: "'status' is 'done'; expected one
    of ..."); what was done instead is added to it.
    """

    def __init__(self, expected: str = "", say: str = "") -> None:
        super().__init__(expected)
        self.expected = expected
        self.say = say


_DIGITS = re.compile(r"-?[0-9]{1,18}")  # what int() takes and a 64-bit integer holds ('²' is a digit too)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------------------------
# kinds: what a field accepts


class Kind:
    """What a field accepts. `expected` is what a message says ("a string"), `type_doc` the docs' type column.

    Kinds are plain classes, not dataclasses: some eighty fields are declared when obs starts, and
    each dataclass costs its generated methods at import time.
    """

    expected = "a value"
    type_doc = "any"
    py_type = "Any"  # the Python type of what `parse` returns: the model's attribute is generated with it

    def __init__(self, *, expected: str | None = None, type_doc: str | None = None) -> None:
        if expected is not None:
            self.expected = expected
        if type_doc is not None:
            self.type_doc = type_doc

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        """The value to use, or `Invalid`. A kind made of entries reports a bad entry itself and keeps the rest."""
        return value

    def describe(self) -> str:
        """The docs' type column."""
        return self.type_doc


class Text(Kind):
    """A string; with `numbers`, a number is accepted and written as text (`revision: 3`)."""

    expected = "a string"
    type_doc = "string"
    py_type = "str"

    def __init__(self, *, numbers: bool = True, expected: str | None = None) -> None:
        super().__init__(expected=expected)
        self.numbers = numbers

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if isinstance(value, str):
            return value
        if self.numbers and _is_number(value):
            return str(value)
        raise Invalid


class WebAddress(Text):
    """An http(s) address (`base_url`): links are made from it, so `javascript:` and the like are refused."""

    expected = "an http:// or https:// address"
    type_doc = "http(s) URL"

    def __init__(self) -> None:
        super().__init__(numbers=False)

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        text = super().parse(value, at, key)
        if text == "" or re.match(r"^https?://[^\s\"'<>]+$", text.strip(), re.IGNORECASE):
            return text
        raise Invalid


class Markdown(Kind):
    """Markdown text, or a list of strings written as a bullet list; cut to what a page can render
    (`obs.textbounds`), each cut a warning on the field's line."""

    expected = "Markdown text or a list of strings"
    type_doc = "Markdown or list of strings"
    py_type = "str"

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if isinstance(value, str):
            text = value
        elif isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            text = "\n".join(f"- {v}" for v in value)
        else:
            raise Invalid
        bounded, cuts = bound_markdown(text)
        for line, message in cuts:
            at.say("warning", key, f"'{at.name(key)}', line {line} of the text: {message}")
        return bounded


class Integer(Kind):
    """A whole number, at least `minimum`; with `text`, digits written as a string are accepted too."""

    expected = "an integer"
    type_doc = "int"
    py_type = "int"

    def __init__(
        self,
        *,
        minimum: int | None = None,
        text: bool = True,
        expected: str | None = None,
        type_doc: str | None = None,
    ) -> None:
        super().__init__(expected=expected, type_doc=type_doc)
        self.minimum = minimum
        self.text = text

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if self.text and isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or not int_in_range(value):
            raise Invalid
        if self.minimum is not None and value < self.minimum:
            raise Invalid
        return value


class Number(Kind):
    """A finite number (as a float) within ±1e150 (obs.sanitize: beyond it, no arithmetic is safe), optionally
    strictly between `above` and `below`, and at least `minimum`."""

    expected = "a number"
    type_doc = "number"
    py_type = "float"

    def __init__(
        self,
        *,
        above: float | None = None,
        below: float | None = None,
        minimum: float | None = None,
        expected: str | None = None,
        type_doc: str | None = None,
    ) -> None:
        super().__init__(expected=expected, type_doc=type_doc)
        self.above = above
        self.below = below
        self.minimum = minimum

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if not _is_number(value) or value != value or value in (float("inf"), float("-inf")):
            raise Invalid
        if abs(value) > FLOAT_LIMIT:  # compared as it is: an int beyond the float range cannot be converted
            shown = f"{value:g}" if isinstance(value, float) else "an integer of more than 150 digits"
            raise Invalid(say=f"'{at.name(key)}' is {shown}, too large to compute with (at most ±1e150)")
        if (self.above is not None and value <= self.above) or (self.below is not None and value >= self.below):
            raise Invalid
        if self.minimum is not None and value < self.minimum:
            raise Invalid
        return float(value)


class Boolean(Kind):
    expected = "true or false"
    type_doc = "true/false"
    py_type = "bool"

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if not isinstance(value, bool):
            raise Invalid
        return value


class Choice(Kind):
    """One of `options`; `fold_case` accepts `Finished`; `keep_unknown` keeps another value (with a warning)."""

    py_type = "str"

    def __init__(self, options: tuple[str, ...], *, fold_case: bool = True, keep_unknown: bool = False) -> None:
        super().__init__(expected=f"one of {', '.join(options)}", type_doc=" ".join(f"`{o}`" for o in options))
        self.options = options
        self.fold_case = fold_case
        self.keep_unknown = keep_unknown

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        text = Text().parse(value, at, key)
        chosen = text.lower() if self.fold_case else text
        if chosen in self.options:
            return chosen
        said = f"'{at.name(key)}' is '{text}'; expected {self.expected}"
        if not self.keep_unknown:
            raise Invalid(self.expected, said)
        at.say("warning", key, f"{said}; kept as written")
        return text


class Mapping_(Kind):
    """A mapping, free and possibly nested (`config:`); with `values`, every value must be of that kind."""

    expected = "a mapping"
    type_doc = "mapping"

    def __init__(self, *, values: Kind | None = None, expected: str | None = None, type_doc: str | None = None) -> None:
        super().__init__(expected=expected, type_doc=type_doc)
        self.values = values
        self.py_type = f"dict[str, {values.py_type if values else 'Any'}]"

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if not isinstance(value, dict):
            raise Invalid
        if self.values is None:
            return value
        return {str(k): self.values.parse(v, at, key) for k, v in value.items()}


class Strings(Kind):
    """A list of strings; `single` accepts one string for a list of one, `numbers` writes numbers as text."""

    expected = "a list of strings"
    type_doc = "list of strings"
    py_type = "list[str]"

    def __init__(self, *, single: bool = True, numbers: bool = True, expected: str | None = None) -> None:
        super().__init__(expected=expected)
        self.single = single
        self.numbers = numbers

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if self.single and isinstance(value, str):
            return [value]
        allowed = str | int | float if self.numbers else str
        if isinstance(value, list) and all(isinstance(v, allowed) for v in value):
            return [str(v) for v in value]
        raise Invalid


class Items(Kind):
    """A list whose entries are checked one by one: a bad entry is reported and skipped, the others kept."""

    expected = "a list"
    type_doc = "list"
    py_type = "list[Any]"

    def __init__(
        self,
        *,
        item: Callable[[Any, YamlFields, str], Any] | None = None,
        expected: str | None = None,
        py_type: str | None = None,
    ) -> None:
        super().__init__(expected=expected or None)
        self.item = item
        if py_type is not None:
            self.py_type = py_type

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if not isinstance(value, list):
            raise Invalid
        if self.item is None:
            return value
        kept = []
        for entry in value:
            parsed = self.item(entry, at, key)
            if parsed is not None:
                kept.append(parsed)
        return kept


class Nested(Kind):
    """A mapping with declared keys of its own (`decision:`, `sweeps:`): each one checked as a field."""

    expected = "a mapping"
    py_type = "Reading"

    def __init__(self, schema: Schema, *, expected: str | None = None) -> None:
        super().__init__(expected=expected)
        self.schema = schema

    def describe(self) -> str:
        return "mapping: " + ", ".join(f"`{f.name}`" for f in self.schema.fields)

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if not isinstance(value, dict):
            raise Invalid
        return self.schema.read(at.child(key, value))


class Gates(Kind):
    """obs.yaml's gates, each parsed by the gate language (obs.gate_language)."""

    expected = "a list of gates (a string, or a mapping with expr, name, label)"
    type_doc = "list of gates"
    py_type = "list[dict[str, str]]"

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if not isinstance(value, list):
            raise Invalid
        gates: list[dict[str, str]] = []
        for number, entry in enumerate(value, 1):
            spec = {"expr": entry} if isinstance(entry, str) else entry
            if not isinstance(spec, dict) or not isinstance(spec.get("expr"), str):
                at.say("warning", key, f"gate {number} should be a string or a mapping with an 'expr' string; skipped")
                continue
            try:
                gate = parse_gate(spec["expr"], _label(spec.get("name")), _label(spec.get("label")))
            except GateError as exc:  # an error: a gate obs cannot read would be n/a on every run
                at.say("error", key, f"gate {number}: {exc}; skipped")
                continue
            unknown = [c for c in gate.checks() if c not in {g["name"] for g in gates}]
            if unknown:
                at.say(
                    "error",
                    key,
                    f"gate {number}: 'check {unknown[0]}' names no gate above it (gates: "
                    f"{', '.join(g['name'] for g in gates) or 'none'}); skipped",
                )
                continue
            if any(g["name"] == gate.name for g in gates):
                at.say("warning", key, f"gate {number}: the name '{gate.name}' is used twice; skipped")
                continue
            gates.append(gate.as_dict())
        return gates


_STEP_RANGE = re.compile(
    r"^\s*(?:steps?\s*:?\s*)?([0-9]+(?:\.[0-9]+)?)\s*(?:-|\.\.|to)\s*([0-9]+(?:\.[0-9]+)?)\s*$", re.I
)
_LAST_N = re.compile(r"^\s*last\s*:?\s*([0-9]+)\s*$", re.I)
WINDOW_EXPECTED = "`final`, a number of last logged points (`20`) or a step range (`400-500`)"
TIER_KEYS = ("tier", "direction", "better", "window", "unit", "min_effect")


def parse_window(value: Any) -> MetricWindow | None:
    """`final`, `20` / `last 20` (the last 20 logged points), `400-500` / `[400, 500]` (steps 400 to 500,
    both included); None when the value is none of these."""
    if isinstance(value, str) and value.strip().lower() == "final":
        return MetricWindow()
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1 and int_in_range(value):
        return MetricWindow("last", n=value)
    if isinstance(value, list) and len(value) == 2 and all(_is_number(v) and v >= 0 for v in value):
        lo, hi = float(value[0]), float(value[1])
    elif isinstance(value, str) and (m := _LAST_N.match(value)) and int(m.group(1)) >= 1:
        return MetricWindow("last", n=int(m.group(1)))
    elif isinstance(value, str) and (m := _STEP_RANGE.match(value)):
        lo, hi = float(m.group(1)), float(m.group(2))
    else:
        return None
    return MetricWindow("steps", lo=lo, hi=hi) if lo <= hi and hi <= FLOAT_LIMIT else None


def _tier_entry(name: str, entry: Any, at: YamlFields, default_tier: str) -> MetricDecl | None:
    """One `name: {tier, direction, window, unit, min_effect}` entry (or a bare name); None when skipped.
    `default_tier` "" (obs.yaml): an entry without `tier:` only sets the metric's direction, window and unit."""
    where = at.name(name)
    if names_an_identifier(name):
        at.say("warning", name, f"'{where}': '{name}' is an identifier of the records, not a metric; skipped")
        return None
    if entry is None or isinstance(entry, str):  # `acc: secondary` is a tier on its own
        entry = {} if entry is None else {"tier": entry}
    if not isinstance(entry, dict):
        at.say(
            "warning",
            name,
            f"'{where}' should be a mapping {{tier, direction, window, unit}}, got {shown(entry)}; skipped",
        )
        return None
    sub = at.child(name, entry)
    unknown = sorted(str(k) for k in entry if k not in TIER_KEYS)
    if unknown:
        sub.say(
            "warning",
            unknown[0],
            f"'{where}': unknown key(s) {', '.join(unknown)} (known: {', '.join(TIER_KEYS)}); ignored",
        )
    tier = entry.get("tier", default_tier)
    if not isinstance(tier, str) or (tier.lower() not in TIERS and not (tier == "" == default_tier)):
        sub.say("warning", "tier", f"'{where}.tier' is {shown(tier)}; expected one of {', '.join(TIERS)}; skipped")
        return None
    direction = entry.get("direction", entry.get("better"))
    higher: bool | None = None
    if direction is not None:
        if not isinstance(direction, str) or direction.lower() not in ("higher", "lower"):
            key = "direction" if "direction" in entry else "better"
            sub.say(
                "warning", key, f"'{where}.{key}' should be higher or lower, got {shown(direction)}; read from the name"
            )
        else:
            higher = direction.lower() == "higher"
    window = MetricWindow()
    if "window" in entry and entry["window"] is not None:
        parsed = parse_window(entry["window"])
        if parsed is None:
            sub.say(
                "warning",
                "window",
                f"'{where}.window' should be {WINDOW_EXPECTED}, got {shown(entry['window'])}; "
                "the final window was used",
            )
        else:
            window = parsed
    unit = entry.get("unit", "")
    if not isinstance(unit, str):
        sub.say("warning", "unit", f"'{where}.unit' should be a string, got {shown(unit)}; ignored")
        unit = ""
    min_effect = entry.get("min_effect")
    if min_effect is not None and (not _is_number(min_effect) or min_effect < 0 or abs(min_effect) > FLOAT_LIMIT):
        sub.say(
            "warning", "min_effect", f"'{where}.min_effect' should be a number >= 0, got {shown(min_effect)}; ignored"
        )
        min_effect = None
    return MetricDecl(
        str(name), tier.lower(), higher, window, unit[:40], None if min_effect is None else float(min_effect)
    )


class MetricTiers(Kind):
    """`metrics:` of campaign.yaml (and obs.yaml): a list of names (the first primary, the rest secondary) or a
    mapping name -> {tier, direction, window, unit, min_effect}. A bad entry is reported on its line and skipped;
    a second primary is read as secondary."""

    expected = "a list of metric names or a mapping of metric name to {tier, direction, window, unit}"
    type_doc = "list of names, or mapping of name → `{tier, direction, window, unit, min_effect}`"
    py_type = "list[MetricDecl]"

    default_tier = "secondary"

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        sub = at.child(key, value if isinstance(value, dict) else {})
        decls: list[MetricDecl] = []
        if isinstance(value, list):
            for i, entry in enumerate(value):
                if not isinstance(entry, str) or not entry.strip():
                    at.say(
                        "warning",
                        key,
                        f"'{at.name(key)}' entry {i + 1} should be a metric name, got {shown(entry)}; skipped",
                    )
                    continue
                decl = _tier_entry(entry, None, sub, "secondary" if decls else "primary")
                if decl is not None:
                    decls.append(decl)
        elif isinstance(value, dict):
            for name, entry in value.items():
                decl = _tier_entry(str(name), entry, sub, self.default_tier)
                if decl is not None:
                    decls.append(decl)
        else:
            raise Invalid
        seen: set[str] = set()
        primary: str | None = None
        out: list[MetricDecl] = []
        for decl in decls:
            if decl.name in seen:
                at.say("warning", key, f"'{at.name(key)}': '{decl.name}' is listed twice; the first is used")
                continue
            seen.add(decl.name)
            if decl.tier == "primary":
                if primary is not None:
                    sub.say(
                        "warning",
                        decl.name,
                        f"'{at.name(key)}': '{primary}' and '{decl.name}' are both primary; one metric is the primary "
                        f"question, so '{decl.name}' was read as secondary",
                    )
                    decl = MetricDecl(
                        decl.name, "secondary", decl.higher_is_better, decl.window, decl.unit, decl.min_effect
                    )
                else:
                    primary = decl.name
            out.append(decl)
        return out


class MetricSettings(MetricTiers):
    """obs.yaml `metrics:`: as campaign.yaml's (tiers used by every campaign without its own `metrics:`), and in
    the mapping form an entry without `tier:` only sets that metric's direction (`better:` or `direction:`),
    window, unit and minimum effect wherever it is read. Read as name -> {"better": ..., "decl": MetricDecl}."""

    expected = "a list of metric names or a mapping of metric name to {better, tier, direction, window, unit}"
    type_doc = "list of names, or mapping of name → `{better, tier, window, unit, min_effect}`"
    py_type = "dict[str, dict[str, Any]]"
    default_tier = ""

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        out: dict[str, dict[str, Any]] = {}
        for decl in super().parse(value, at, key):
            setting: dict[str, Any] = {"decl": decl}
            if decl.higher_is_better is not None:
                setting["better"] = "higher" if decl.higher_is_better else "lower"
            out[decl.name] = setting
        return out


class ContractVersion(Integer):
    """`obs_contract`: a version this obs reads; another one is an error, and the file is read as version 1."""

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        version = super().parse(value, at, key)
        if version not in CONTRACT_VERSIONS:
            at.say(
                "error",
                key,
                f"obs_contract: {version} is not a version this obs understands "
                f"(it reads {', '.join(map(str, CONTRACT_VERSIONS))}); fields were read as version 1",
            )
        return version


# ---------------------------------------------------------------------------------------------------------------
# fields and schemas


@dataclass(frozen=True)
class Field:
    """One key of a file: its kind, its default, and one line of documentation.

    `default_doc` is how the docs (and messages) show a default that is not a plain value ("the
    folder name"); `type_doc` overrides the kind's type column; `outcome_doc` what a wrong value
    leads to when it is not the file's usual consequence.

    The model's attribute of the same name (Run, Spec, Campaign, SiteConfig) is generated from the field
    (obs.model_code): its type is the kind's `py_type` (or `attr_type`, when the reader turns the value into
    a model object), `| None` when there is no default, and its default the declared one (or the Python
    expression `model_default`), with `model_note` as a comment above it (what reads it, what None means).
    `held=False`: the reader uses the value itself and no attribute holds it.
    """

    name: str
    kind: Kind
    doc: str
    default: Any = None
    default_doc: str = ""
    type_doc: str = ""
    outcome_doc: str = ""
    held: bool = True
    attr_type: str = ""
    model_default: str = ""
    model_note: str = ""

    def default_value(self) -> Any:
        return copy.deepcopy(self.default)

    def shown_default(self) -> str:
        """The default as the docs' table shows it (`—` when there is none)."""
        if self.default_doc:
            return self.default_doc
        if self.default is None or self.default in ("", [], {}):
            return "—"
        if isinstance(self.default, str):
            return f"`{self.default}`"
        return f"`{json.dumps(self.default)}`"

    def outcome(self, uses_defaults: bool) -> str:
        """What a wrong value leads to, as a message says it."""
        if self.outcome_doc:
            return self.outcome_doc
        if not uses_defaults:
            return "ignored"
        if isinstance(self.kind, Nested):
            return "the defaults were used" if self.default else "ignored"
        plain = self.shown_default().replace("`", "")
        return "the default was used" if plain == "—" or len(plain) > 40 else f"the default ({plain}) was used"


def did_you_mean(key: str, names: list[str]) -> str | None:
    """The declared name `key` is most probably a typo of (`baselin` -> `baseline`), or None. Close means
    difflib's ratio of 0.8 or more, or the same letters in another case or with `-` for `_`."""
    folded = {n.lower().replace("-", "_"): n for n in names}
    if key.lower().replace("-", "_") in folded:
        return folded[key.lower().replace("-", "_")]
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.8)
    return close[0] if close else None


@dataclass(frozen=True)
class Reading:
    """What a file (or a nested mapping) said: the valid values given, and the keys the schema does not know."""

    schema: Schema
    values: dict[str, Any]
    unknown: dict[str, Any]
    at: YamlFields

    def line(self, name: str) -> int | None:
        """Where `name` was written, for a message about it found later (a file it names is missing)."""
        return self.at.line(name)

    def get(self, name: str) -> Any:
        """The value given for `name`, else its default."""
        if name in self.values:
            return self.values[name]
        return self.schema.declared(name).default_value()


@dataclass(frozen=True)
class Schema:
    """The declared keys of one file, or of one nested mapping.

    `unknown` is the message for a key it does not declare (`{key}`: the key, `{name}`: its dotted
    name, `{known}`: the declared keys), said with `unknown_severity`; such a key is kept when
    `keep_unknown` (its value checked by `extra` when given). `uses_defaults` says whether a wrong
    value falls back to a declared default ("the default (8) was used") or is just ignored (a
    run.yaml field over an adapter's value).
    """

    title: str
    fields: tuple[Field, ...]
    unknown: str = "unknown field '{name}' (not in contract v1); ignored"
    unknown_severity: Severity = "info"
    keep_unknown: bool = False
    extra: Kind | None = None
    uses_defaults: bool = False
    _index: dict[str, Field] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._index.update((f.name, f) for f in self.fields)

    def declared(self, name: str) -> Field:
        return self._index[name]

    def defaults(self) -> dict[str, Any]:
        return {f.name: f.default_value() for f in self.fields}

    def read(self, at: YamlFields) -> Reading:
        """Check every key of the mapping; `null` means "not set", so the default is used without a word."""
        values: dict[str, Any] = {}
        unknown: dict[str, Any] = {}
        for key, value in at.data.items():
            declared = self._index.get(key)
            if declared is None:
                self._unknown(at, key, value, unknown)
            elif value is not None:
                try:
                    values[key] = declared.kind.parse(value, at, key)
                except Invalid as bad:
                    outcome = declared.outcome(self.uses_defaults)
                    if bad.say:
                        at.say("warning", key, f"{bad.say}; {outcome}")
                    else:
                        at.wrong(key, value, bad.expected or declared.kind.expected, outcome)
        return Reading(self, values, unknown, at)

    def _unknown(self, at: YamlFields, key: str, value: Any, into: dict[str, Any]) -> None:
        known = ", ".join(f.name for f in self.fields)
        message = self.unknown.format(key=key, name=at.name(key), known=known)
        meant = did_you_mean(str(key), [f.name for f in self.fields])
        # a key one typo away from a declared one is a value the author meant to give and lost: a warning
        # (shown by -q, failing --strict) naming it, however quietly an unrelated extra key is noted
        at.say(
            "warning" if meant else self.unknown_severity,
            key,
            f"{message}; did you mean '{meant}'?" if meant else message,
        )
        if not self.keep_unknown:
            return
        if self.extra is None:
            into[key] = value
            return
        try:
            into[key] = self.extra.parse(value, at, key)
        except Invalid:
            at.wrong(key, value, self.extra.expected, "ignored")

    def markdown_table(self) -> str:
        """The docs' table of this schema: key, type, default, meaning."""
        rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
        for f in self.fields:
            kind = f.type_doc or f.kind.describe()
            rows.append(f"| `{f.name}` | {kind} | {f.shown_default()} | {f.doc} |")
        return "\n".join(rows) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# entries of lists, checked one by one


def _condition(entry: Any, at: YamlFields, key: str) -> dict[str, str] | None:
    if _is_number(entry) or isinstance(entry, str):
        return {"name": str(entry)}
    if isinstance(entry, dict) and "name" in entry:
        return {
            "name": str(entry["name"]),
            "label": str(entry.get("label") or ""),
            "description": str(entry.get("description") or ""),
        }
    at.say("warning", key, "each condition is a name or a mapping with 'name'; one was skipped")
    return None


def _seed(entry: Any, at: YamlFields, key: str) -> int | None:
    if isinstance(entry, int) and not isinstance(entry, bool):
        return entry
    at.say("warning", key, f"seed {entry!r} is not an integer; skipped")
    return None


def _label(value: Any) -> str | None:
    return str(value) if _is_number(value) or isinstance(value, str) else None


# ---------------------------------------------------------------------------------------------------------------
# run.yaml

CONTRACT = Field(
    "obs_contract",
    ContractVersion(),
    "contract version; another number than one this obs reads is an error, and the file is read as version 1",
    default=1,
    held=False,
)
_MARKDOWN = Markdown()
_TEXT = Text()
_FREE_MAPPING = Mapping_()  # free and nested (`config:`, `data:`, ...)


def _names(expected: str | None = None) -> Strings:
    """A list of names or keys (never one string for a list of one, never numbers): obs.yaml's lists."""
    return Strings(single=False, numbers=False, expected=expected)


DECISION = Schema(
    "decision",
    (
        Field(
            "verdict",
            Choice(VERDICTS, keep_unknown=True),
            "the decision; another word is kept as written, with a warning",
        ),
        Field("rationale", _MARKDOWN, "why", default=""),
        Field("next", _TEXT, "the next run or step", default=""),
        Field("by", _TEXT, "who decided", default=""),
        Field("date", _TEXT, "when (ISO 8601)", default=""),
    ),
)

RUN_YAML = Schema(
    "run.yaml",
    (
        CONTRACT,
        Field("id", _TEXT, "unique run id", default_doc="the folder path relative to the source root"),
        Field("title", _TEXT, "a human title for the run", default=""),
        Field("spec", _TEXT, "the spec this run belongs to", default_doc="the enclosing spec folder"),
        Field("campaign", _TEXT, "the campaign this run belongs to", default_doc="the enclosing campaign folder"),
        Field(
            "revision",
            _TEXT,
            "rung/revision within the spec (`r2`, `3`); orders the ladder",
            type_doc="string or int",
        ),
        Field("date", _TEXT, "when the run started (ISO 8601)", type_doc="date or datetime"),
        Field(
            "status",
            Choice(STATUSES),
            "lifecycle; without it the run's format decides when its files say (an MLflow status, a trainer "
            "state that reached `max_steps`), else the status is `unknown`",
            default_doc="`unknown`",
            attr_type="str",
            model_default="UNKNOWN",
        ),
        Field("baseline", _TEXT, "id of the run this one is compared with"),
        Field(
            "primary_axis",
            _TEXT,
            "the one thing this run changes: `dsl`, `compiler`, `data`, `budget`, `capacity`, `repair`, `tokenizer`, "
            "`probe`, ...",
        ),
        Field(
            "target_failure_class",
            _TEXT,
            "the one failure class this rung sets out to fix (a probe `failure_class` label): its case count in "
            "the baseline and in this run is shown on the run page and the spec ladder",
            model_note="the failure class this rung targets (analysis.ladder.target_class)",
        ),
        Field(
            "primary_metric",
            _TEXT,
            "the headline metric (overrides the spec, campaign and `obs.yaml` choice)",
        ),
        Field("hypothesis", _MARKDOWN, "why the run exists", default="", type_doc="Markdown"),
        Field("success_criteria", _MARKDOWN, "what counts as success, written before the run", default=""),
        Field(
            "held_constant",
            Strings(),
            "what the run deliberately did not change; checked against the baseline",
            default=[],
            type_doc="list of axis names",
        ),
        Field("model", _FREE_MAPPING, "model configuration (name, params, layers, d_model, context, ...)", default={}),
        Field(
            "config",
            _FREE_MAPPING,
            "training configuration; diffed against the baseline's",
            default={},
            type_doc="mapping (free, nested)",
        ),
        Field(
            "contract",
            _FREE_MAPPING,
            "versions of the contracts the run trained against: `dsl`, `compiler`, `tokenizer`, `probe`, ...; "
            "when one of those four differs from the baseline's or the spec's, the two are not one measurement: "
            "no significance claim, no promote",
            default={},
        ),
        Field(
            "data",
            _FREE_MAPPING,
            "`dataset_version`, `rows`, `packed_tokens`, `effective_epochs`, `tokenizer_size`, `reserved_tokens`, "
            "`context`, `p95_prompt_tokens`, `p95_output_tokens`, `decode_budget`",
            default={},
        ),
        Field(
            "provenance",
            _FREE_MAPPING,
            "where data and code came from: `corpus_hash`, `dataset_version`, `ontology_catalog`, `code_commit`, "
            "`tokenizer`, `chat_template`, adapter hashes, ...; shown on the run card, diffed against the baseline, "
            "and the leaderboard filters and groups runs by it",
            default={},
        ),
        Field("condition", _TEXT, "campaign condition"),
        Field("seed", Integer(), "random seed"),
        Field(
            "arm",
            _TEXT,
            "ablation arm (runs of one spec/campaign/condition with different arms get an overlay page, "
            "`arms/<group>/`)",
        ),
        Field("tags", Strings(), "free labels", default=[]),
        Field("lessons", _MARKDOWN, "what was learned", default=""),
        Field("decision", Nested(DECISION), "the recorded decision", attr_type="Decision"),
        Field("step_key", _TEXT, "for a generic metrics log: the key that holds the step", held=False),
        Field(
            "metrics_file",
            _TEXT,
            "a metrics log with another name than `metrics.jsonl` (relative, inside the run folder)",
            held=False,
        ),
    ),
    unknown="unknown field '{name}' (not in contract v1); shown under other fields",
    keep_unknown=True,
)

# ---------------------------------------------------------------------------------------------------------------
# spec.yaml and campaign.yaml

_MIN_EFFECT = Number(minimum=0.0, expected="a number >= 0", type_doc="number ≥ 0")


def _folder_head(what: str, question: str) -> tuple[Field, ...]:
    """The fields a spec.yaml and a campaign.yaml begin with: contract version, id (by default the folder's
    name), title and the question the folder's runs answer."""
    return (
        CONTRACT,
        Field("id", _TEXT, f"{what} id", default_doc="the folder name"),
        Field("title", _TEXT, "title", default=""),
        Field("question", _MARKDOWN, question, default="", type_doc="Markdown"),
    )


SPEC_YAML = Schema(
    "spec.yaml",
    (
        *_folder_head("spec", "what this spec line is trying to prove"),
        Field(
            "contract",
            _FREE_MAPPING,
            "the frozen contract versions of the line; a rung whose `dsl`, `compiler`, `tokenizer` or `probe` "
            "differs is not one measurement with the line (no significance claim, no promote)",
            default={},
        ),
        Field(
            "baseline",
            _TEXT,
            "the run id of the frozen baseline (the last promoted run): the ladder shows every rung against it "
            "beside its tested delta against its own `baseline:`",
        ),
        Field("primary_metric", _TEXT, "the headline metric of the runs in the spec"),
        Field(
            "min_effect",
            _MIN_EFFECT,
            "smallest change of the headline worth acting on, in its units (`0.03` = 3 pp for a rate): a "
            "significant change smaller than this is reported as such and is not promoted",
            default_doc="`obs.yaml`'s `min_effect`",
        ),
    ),
)

EVIDENCE = Schema(
    "evidence",
    (
        Field("min_seeds", Number(), "runs with a final value, per condition"),
        Field("min_steps", Number(), "last logged step, every run"),
        Field("min_completions", Number(), "`completions` summed over the runs of a condition"),
    ),
    unknown="unknown evidence minimum '{key}' (known: {known}); not checked",
    keep_unknown=True,
    extra=Number(),
)
LITMUS = Schema(
    "litmus",
    (
        Field(
            "min_delta",
            Number(),
            "older name of the campaign's `min_effect` (used when `min_effect` is not set)",
        ),
    ),
    unknown="unknown litmus threshold '{key}' (known: {known}); not used",
    keep_unknown=True,
    extra=Number(),
)


def _settings(title: str, fields: tuple[Field, ...], *, one: str = "", uses_defaults: bool = True) -> Schema:
    """A nested mapping of obs.yaml settings (`thresholds:`, `sweeps:`, ...): an unknown key is a warning naming
    the known ones (`one`: what a key is called, by default "<title> setting"); a wrong value falls back to its
    declared default when `uses_defaults`."""
    return Schema(
        title,
        fields,
        unknown=f"unknown {one or title + ' setting'} '{{key}}' (known: {{known}})",
        unknown_severity="warning",
        uses_defaults=uses_defaults,
    )


# The views across runs and within a run that read declared series (analysis/sample_efficiency.py,
# analysis/coupling.py, analysis/reward.py's weighted components).

SAMPLE_EFFICIENCY = _settings(
    "sample_efficiency",
    (
        Field(
            "size_key",
            Text(numbers=False, expected="a dotted key (e.g. config.data.train_examples)"),
            "the run's data size as a dotted key of its run.yaml (`config.data.train_examples`): the final "
            "value of `metric` against it, one point per size",
            default_doc="— (this or `series`)",
        ),
        Field(
            "series",
            Text(numbers=False, expected="a logged series name"),
            "a logged counter of examples or tokens seen (`examples_seen`): `metric` over it, one curve per group",
            default_doc="— (this or `size_key`)",
        ),
        Field(
            "metric",
            Text(numbers=False, expected="a metric name"),
            "the metric drawn",
            default_doc="the campaign's primary metric",
        ),
        Field(
            "group_by",
            Text(numbers=False, expected="a dotted key"),
            "what makes a line: `run.condition` or a dotted key (`config.method`) when each condition is one size",
            default="run.condition",
        ),
        Field("label", Text(numbers=False), "the x axis' name", default_doc="the key's or series' name"),
    ),
    uses_defaults=False,
)


class SampleEfficiencyKind(Nested):
    """obs.yaml `sample_efficiency:`: exactly one of `size_key` and `series`, else the view is off and said."""

    py_type = "dict[str, Any]"

    def __init__(self) -> None:
        super().__init__(SAMPLE_EFFICIENCY, expected="a mapping with size_key or series (and metric, group_by)")

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        reading = super().parse(value, at, key)
        given = [name for name in ("size_key", "series") if name in reading.values]
        if len(given) != 1:
            what = "both" if given else "neither"
            raise Invalid(say=f"'{at.name(key)}' needs exactly one of size_key and series, got {what}")
        return {f.name: reading.get(f.name) for f in SAMPLE_EFFICIENCY.fields}


class _NamedPairs(Kind):
    """A list of {first, second} mappings naming two series or fields (`coupling:`, `confusion:`): each bad entry
    is named on its own line with its number and skipped, the others kept; a pair declared twice is kept once."""

    FIRST = SECOND = EXTRA = NOUN = SAME = SEP = ""

    @property
    def known(self) -> tuple[str, str, str]:
        return (self.FIRST, self.SECOND, self.EXTRA)

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if not isinstance(value, list):
            raise Invalid
        out: list[dict[str, str]] = []
        first, second = self.FIRST, self.SECOND
        for i, entry in enumerate(value):
            line = at.doc.line_of(f"{at.name(key)}.{i}") or at.line(key)

            def say(message: str, line: int | None = line, number: int = i + 1) -> None:
                at.diags.add("warning", at.path, f"'{at.name(key)}' entry {number}: {message}", line)

            if not isinstance(entry, dict):
                say(f"should be a mapping {{{first}, {second}}}, got {entry!r:.40}; skipped")
                continue
            missing = [n for n in (first, second) if not isinstance(entry.get(n), str) or not entry.get(n)]
            if missing:
                say(f"no {' and no '.join(missing)} {self.NOUN}; skipped")
                continue
            a, b = str(entry[first]), str(entry[second])
            unknown = sorted(str(k) for k in entry if k not in self.known)
            if unknown:
                say(f"unknown key(s) {', '.join(unknown)} (known: {', '.join(self.known)})")
            if a == b:
                say(f"{first} and {second} are the same {self.SAME} ({a}); skipped")
                continue
            if any(p[first] == a and p[second] == b for p in out):
                say(f"{a}{self.SEP}{b} is declared twice; skipped")
                continue
            out.append({first: a, second: b, self.EXTRA: self.extra(a, entry.get(self.EXTRA), say)})
        return out

    def extra(self, first: str, value: Any, say: Callable[[str], None]) -> str:
        """The entry's third, optional key as kept."""
        return str(value or "")


class Couplings(_NamedPairs):
    """obs.yaml `coupling:`: a list of (proxy, downstream) pairs."""

    expected = "a list of {proxy, downstream} mappings"
    type_doc = "list of `{proxy, downstream, label}`"
    py_type = "list[dict[str, str]]"
    FIRST, SECOND, EXTRA, NOUN, SAME, SEP = "proxy", "downstream", "label", "series name", "series", " → "


class ConfusionPairs(_NamedPairs):
    """obs.yaml `confusion:`: probe fields declared as an expected and a predicted class (analysis.confusion), for
    names the name-pair rule does not find."""

    expected = "a list of {expected, predicted} mappings"
    type_doc = "list of `{expected, predicted, name}`"
    py_type = "list[dict[str, str]]"
    FIRST, SECOND, EXTRA, NOUN, SAME, SEP = "expected", "predicted", "name", "probe field name", "field", " / "

    def extra(self, first: str, value: Any, say: Callable[[str], None]) -> str:
        """The matrix's name; the expected field's name when none (or no text) is given."""
        if value is not None and (not isinstance(value, str) or not value):
            say(f"'name' should be a text, got {value!r:.40}; the field names are used")
            value = None
        return str(value or first)


class Weights(Kind):
    """obs.yaml `reward_components:`: component name -> weight (a finite number); a bad weight is named and
    skipped, the other components kept."""

    expected = "a mapping of reward component name to its weight"
    type_doc = "mapping of component → weight"
    py_type = "dict[str, float]"

    def parse(self, value: Any, at: YamlFields, key: str) -> Any:
        if not isinstance(value, dict):
            raise Invalid
        out: dict[str, float] = {}
        for name, weight in value.items():
            if not _is_number(weight) or not math.isfinite(float(weight)):
                at.say(
                    "warning",
                    key,
                    f"'{at.name(key)}.{name}' should be a number (its weight), got {weight!r:.40}; skipped",
                )
                continue
            out[str(name)] = float(weight)
        return out


CAMPAIGN_YAML = Schema(
    "campaign.yaml",
    (
        *_folder_head("campaign", "what the campaign is trying to show"),
        Field(
            "conditions",
            Items(
                expected="a list of condition names or {name, label, description} mappings",
                item=_condition,
                py_type="list[dict[str, str]]",
            ),
            "the conditions compared",
            default=[],
            outcome_doc="ignored",
            type_doc="list of names, or of mappings `{name, label, description}`",
            attr_type="list[Condition]",
        ),
        Field("baseline_condition", _TEXT, "the condition the others are compared with"),
        Field("primary_metric", _TEXT, "metric compared across conditions (e.g. `correct_rate`)"),
        Field("higher_is_better", Boolean(), "`false` for losses", default=True),
        Field(
            "seeds",
            Items(expected="a list of integers", item=_seed, py_type="list[int]"),
            "the planned seeds (to show which are missing)",
            default=[],
            outcome_doc="ignored",
            type_doc="list of ints",
        ),
        Field(
            "final_window",
            Integer(minimum=1, expected="a positive integer", type_doc="int > 0"),
            "number of final logged points averaged into a run's final value",
            default=10,
        ),
        Field(
            "alpha",
            Number(above=0, below=1, expected="a number between 0 and 1", type_doc="number in (0, 1)"),
            "significance level",
            default=0.05,
        ),
        Field(
            "evidence",
            Nested(EVIDENCE),
            "minimums for a litmus verdict, checked for each candidate and the baseline condition",
            default={},
            attr_type="dict[str, float]",
        ),
        Field(
            "min_effect",
            _MIN_EFFECT,
            "smallest difference of the mean worth acting on, in the metric's units: a significant difference "
            "smaller than this is its own outcome and never CONFIRMED (`litmus.min_delta` is its older name)",
            default_doc="`litmus.min_delta`, else 0",
        ),
        Field("litmus", Nested(LITMUS), "thresholds of the litmus verdict", default={}, attr_type="dict[str, float]"),
        Field(
            "metrics",
            MetricTiers(),
            "the metrics compared, in tiers: a list of names (the first `primary`, the rest `secondary`) or a mapping "
            "name → `{tier, direction, window, unit, min_effect}` (tier `primary`, `secondary` or `diagnostic`; "
            "direction `higher` or `lower`; window `final`, a number of last points or a step range such as "
            "`400-500`). Primary and secondary metrics are tested (Holm over every metric × candidate test); "
            "diagnostics are shown, never tested; identifiers (`seed`, `condition`, `*_id`) are refused",
            default=[],
            default_doc="obs.yaml's tiers, else `primary_metric` alone",
            outcome_doc="ignored",
        ),
        Field(
            "expected_order",
            Strings(single=False, expected="a list of condition names"),
            "conditions in the order you expect them, worst to best in each tested metric's good direction "
            "(`[baseline, a, b]`): each adjacent pair is checked (holds, reversed, or undetermined at α)",
            default=[],
        ),
        Field(
            "paired",
            Items(expected="a list of {a, b} mappings"),
            "two-system comparisons on the same evaluation items (see below)",
            default=[],
            outcome_doc="ignored",
            type_doc="list of `{a, b, ...}`",
            attr_type="list[PairedSpec]",
            model_note="each with its two result files read: a changed file changes the campaign and its pages",
        ),
        Field(
            "sample_efficiency",
            SampleEfficiencyKind(),
            "this campaign's sample-efficiency view; replaces obs.yaml's (see obs.yaml's `sample_efficiency`)",
            model_note="analysis/sample_efficiency.py; None: obs.yaml's applies",
            outcome_doc="obs.yaml's declaration, if any, is used",
            default_doc="obs.yaml's",
        ),
        Field(
            "coupling",
            Couplings(),
            "(proxy, downstream) pairs read across this campaign's runs; replaces obs.yaml's (see its `coupling`)",
            model_note="analysis/coupling.py; None: obs.yaml's applies",
            outcome_doc="ignored",
            default_doc="obs.yaml's",
        ),
    ),
    unknown="unknown field '{name}' (not in contract v1); not used",
    keep_unknown=True,
    uses_defaults=True,
)

# ---------------------------------------------------------------------------------------------------------------
# obs.yaml

DEFAULT_AXES: dict[str, list[str]] = {
    "dsl": ["contract.dsl"],
    "compiler": ["contract.compiler"],
    "tokenizer": ["contract.tokenizer", "data.tokenizer_size", "data.reserved_tokens"],
    "probe": ["contract.probe"],
    "data": ["data.dataset_version", "data.rows", "provenance.corpus_hash", "config.data"],
    "budget": [
        "data.packed_tokens",
        "data.effective_epochs",
        "data.decode_budget",
        "data.context",
        "config.train.epochs",
        "config.train.max_steps",
        "config.decode",
    ],
    "capacity": ["model"],
    "optimizer": ["config.train.lr", "config.train.batch_size", "config.train.warmup", "config.optim"],
    "repair": ["config.repair"],
}


def _threshold(name: str, default: float, doc: str) -> Field:
    return Field(name, Number(), doc, default=default)


# docs/reading-a-report.md explains each diagnosis and promotion rule and the thresholds it reads.
THRESHOLDS = _settings(
    "thresholds",
    (
        _threshold("low_exact", 0.5, "headline probe rate below this is low"),
        _threshold("high_renderable", 0.8, "renderable at or above this is high"),
        _threshold("low_renderable", 0.7, "renderable below this is low"),
        _threshold("low_truncation", 0.05, "truncation below this is low"),
        _threshold("high_truncation", 0.1, "truncation above this is high"),
        _threshold("materialized_gap", 0.05, "exact minus materialized above this is a gap"),
        _threshold("memorised_loss", 0.1, "final train loss below this with a low headline: memorised, not learned"),
        _threshold("plateau_window_frac", 0.2, "the final window: this share of the loss points"),
        _threshold(
            "plateau_rel_change", 0.01, "fitted change over the final window / its mean level below this: a plateau"
        ),
        _threshold("oscillation_cv", 0.15, "sd of the detrended final window / its mean level above this: oscillation"),
        _threshold("grad_spike_factor", 10.0, "a grad norm this many times the trailing median is a spike"),
        _threshold("grad_spike_window", 25, "points in that trailing median"),
        _threshold("grad_collapse", 1e-6, "median grad norm of the final window below this: collapse"),
        _threshold("split_gap", 0.2, "train minus the weakest held-out split above this: a gap"),
        _threshold("family_near_zero", 0.25, "a family at or below this ..."),
        _threshold("family_high", 0.6, "... while the median of the other families is at least this"),
        _threshold(
            "zero_std_frac", 0.5, "rolling mean of frac_reward_zero_std staying at or above this: reward collapse"
        ),
        _threshold("zero_std_window", 10, "points in the rolling means of reward health"),
        _threshold("reward_std_drop", 0.25, "rolling reward_std staying at or below this share of its peak: collapse"),
        _threshold("repair_broken_cases", 1, "cases the repair pass turns from right to wrong before it is flagged"),
        _threshold(
            "regression_tolerance",
            0.02,
            "a split or family regresses when shown to be worse than the baseline by more than this (one-sided "
            "score test, Holm over the cells)",
        ),
        _threshold(
            "family_gain", 0.1, "a family whose headline rate rose significantly, by at least this, counts as fixed"
        ),
        _threshold("repairable_share", 0.5, "share of the raw misses the repair pass fixes for mostly repairable"),
        _threshold("null_check_share", 1.0, "a probe key null on at least this share of the cases: probe plumbing bug"),
        _threshold("parity_rel_diff", 0.01, "ck_loss and pt_loss further apart than this (relative): parity broken"),
        _threshold("stuck_loss", 0.5, "a final-window loss above this is stuck high"),
        _threshold("packing_fill_rate", 0.85, "... and a packing fill rate below this: a data-packing problem"),
        _threshold("stage_spike_factor", 2.0, "a loss this many times its level before a stage boundary: a spike"),
        _threshold("stage_recovery_steps", 100, "steps after the boundary the spike has to recover in"),
        _threshold(
            "gold_budget_share", 0.8, "gold output tokens (data.p95_output_tokens) above this share of data.context"
        ),
        _threshold("max_token_hit_rate", 0.2, "max_token_hit_rate at or above this: generations hit the limit"),
        _threshold("datums_drop", 0.5, "num_datums final-window mean below this share of its peak: a drop"),
        _threshold("uniform_group_rate", 0.5, "reward_uniform/tie_group_rate final-window mean at or above this"),
    ),
    one="threshold",
)

SWEEP_GROUPINGS = ("metric", "spec", "campaign", "all")
_POSITIVE = Integer(minimum=1, text=False, expected="a positive whole number", type_doc="int > 0")

SWEEPS = _settings(
    "sweeps",
    (
        Field(
            "keys",
            _names("a list of dotted keys"),
            "axes, as dotted keys: `config.train.lr`, `model.d_model`, `data.dataset_version`, "
            "`provenance.corpus_hash`, `run.arm`, `run.condition`. Automatic: every key set in at least half of the "
            "group's runs whose value varies, except seeds and text that differs in every run (hashes); keys that "
            "group the runs exactly alike are one axis, named in the caption",
            default_doc="automatic",
        ),
        Field(
            "metrics",
            _names("a list of dotted keys"),
            "outcome axes: metric names, `rate.<check>`, `final.<metric>`",
            default_doc="the headline metric and two more probe rates the runs share",
        ),
        Field(
            "color",
            Text(numbers=False, expected="a metric name"),
            "the metric lines are coloured and ranked by",
            default_doc="the group's headline metric",
        ),
        Field(
            "group_by",
            Choice(SWEEP_GROUPINGS, fold_case=False),
            "one chart per group",
            default="metric",
        ),
        Field("max_axes", _POSITIVE, "axes per chart (settings beyond it are listed as not drawn)", default=8),
        Field("highlight", _POSITIVE, "runs drawn strong", default=5),
        Field("min_runs", _POSITIVE, "smaller groups get no chart (listed as skipped)", default=3),
    ),
)

_AT_LEAST_ZERO = Integer(minimum=0, text=False, expected="a whole number >= 0", type_doc="int ≥ 0")
TRENDS = _settings(
    "trends",
    (
        Field("recent_runs", _AT_LEAST_ZERO, "spec ladders: the last runs by date in the recent window", default=5),
        Field("baseline_runs", _AT_LEAST_ZERO, "spec ladders: the runs before them in the baseline window", default=20),
        Field(
            "recent_points",
            _AT_LEAST_ZERO,
            "campaigns: the last logged points of each run in the recent window (at most 256 in all)",
            default=0,
            default_doc="`0`: the campaign's `final_window`",
        ),
        Field("baseline_points", _AT_LEAST_ZERO, "campaigns: the logged points before them", default=100),
        Field("recent_sessions", _POSITIVE, "agent learning keys: the last sessions in the recent window", default=10),
        Field("baseline_sessions", _POSITIVE, "agent learning keys: the sessions before them", default=50),
    ),
)

ARMS = _settings(
    "arms",
    (
        Field(
            "metric",
            Text(numbers=False),
            "the metric compared (final-window mean, or the headline / probe rate)",
            default_doc="the members' most common headline metric",
        ),
        Field(
            "baseline",
            Text(numbers=False),
            "the reference arm",
            default_doc="`full` (or `all`, `baseline`, `control`) when present, else the first arm",
        ),
    ),
)

_POSITIVE_INTEGER = Integer(minimum=1, text=False, expected="a positive integer", type_doc="int > 0")


def _settings_field(
    schema: Schema, doc: str, attr_type: str, *, expected: str | None = None, type_doc: str = "", default_doc: str = ""
) -> Field:
    """obs.yaml's field holding the nested settings `schema` (`sweeps:`): each setting given replaces its default,
    the others keep theirs; documented in a table of its own ("below")."""
    return Field(
        schema.title,
        Nested(schema, expected=expected),
        doc,
        default=schema.defaults(),
        type_doc=type_doc,
        default_doc=default_doc or "below",
        attr_type=attr_type,
    )


OBS_YAML = Schema(
    "obs.yaml",
    (
        Field("title", Text(numbers=False), "the site's title", default="Run observatory"),
        Field("base_url", WebAddress(), "where the site is published (used in PR summaries)", default=""),
        Field("primary_metric", Text(numbers=False), "the default headline metric", default="exact"),
        Field(
            "min_effect",
            _MIN_EFFECT,
            "smallest headline change worth acting on, in the metric's units (`0.03` = 3 pp for a rate); a spec's "
            "or campaign's own `min_effect` wins. `0`: any significant change counts",
            default=0.0,
        ),
        Field(
            "negative_checks",
            _names("a list of check names"),
            "checks whose `true` is a failure, beside the names that say so (`truncat`, `leak`, `error`, ...)",
            default=[],
        ),
        Field(
            "max_points",
            _POSITIVE_INTEGER,
            "points per curve after decimation",
            default=2000,
        ),
        Field(
            "final_window",
            _POSITIVE_INTEGER,
            "final logged points averaged into a run's final value (a campaign's own `final_window` wins)",
            default=10,
        ),
        Field(
            "axes",
            Mapping_(
                values=_names(),
                expected="a mapping of axis name to a list of dotted keys",
                type_doc="mapping of axis → list of dotted keys",
            ),
            "which keys belong to which axis (for the held-constant check); replaces the defaults",
            default=DEFAULT_AXES,
            default_doc="`dsl`, `compiler`, `tokenizer`, `probe`, `data`, `budget`, `capacity`, `optimizer`, `repair`",
        ),
        _settings_field(
            THRESHOLDS,
            "diagnosis and promotion thresholds, each one separately: see docs/reading-a-report.md",
            "dict[str, float]",
            expected="a mapping of threshold name to number",
            type_doc="mapping of name → number",
            default_doc="docs/reading-a-report.md",
        ),
        Field(
            "higher_is_better",
            Mapping_(values=Boolean(), expected="a mapping of metric name to true/false", type_doc="mapping"),
            "metric name → `true`/`false`, for metrics whose name does not say (`loss`, `error`, ... are lower-better)",
            default={},
        ),
        Field(
            "metrics",
            MetricSettings(),
            "per metric: `{better: higher|lower}`, for names whose direction obs cannot tell from the vocabulary "
            "(docs/adapters.md); wins over `higher_is_better`. With `tier:` (or as a list of names), the metric tiers "
            "of every campaign without its own `metrics:` (campaign.yaml's `metrics`); `window`, `unit` and "
            "`min_effect` set there apply wherever the metric is tested",
            default={},
        ),
        Field(
            "x_axes",
            Mapping_(
                values=Strings(single=True, numbers=False),
                expected="a mapping of axis name to a series name (or a list of them, the first a run logged is used)",
                type_doc="mapping of axis → series name(s)",
            ),
            "counters offered as an x axis on run pages and compare.html beside the step, e.g. "
            "`{tokens: num_input_tokens_seen}`: one axis name for the series different runs log it as; "
            "a series that goes back is named on the run page, not drawn against. Series named like "
            "`tokens_seen` or `examples` are offered without it",
            default={},
        ),
        Field(
            "same_step",
            Choice(("mean", "last", "all"), fold_case=True),
            "several values of a series logged at one step: their `mean` (drawn with its min–max band and count), "
            "the `last` one, or `all` of them",
            default="mean",
        ),
        Field(
            "restarts",
            Choice(("last", "apart"), fold_case=True),
            "a log whose step counter goes back, or whose first record is repeated at its first step (a restarted "
            "or resumed process appending to it): keep the `last` "
            "attempt's value at each step (as TensorBoard does), or each attempt `apart` as its own series "
            "(`attempt 1/loss`, ...); either way the page says so",
            default="last",
        ),
        Field(
            "gates",
            Gates(),
            "pass/fail marks per run on the leaderboard (below)",
            model_note="name, label, expr (obs.analysis.gates)",
            default=[],
            outcome_doc="no gate is checked",
        ),
        _settings_field(SWEEPS, "the sweeps page (below)", "dict[str, Any]"),
        _settings_field(
            TRENDS, "momentum windows on spec, campaign and agent learning pages (below)", "dict[str, int]"
        ),
        _settings_field(ARMS, "ablation-arm pages (below)", "dict[str, Any]"),
        Field(
            "provenance_facets",
            _names("a list of provenance keys (e.g. corpus_hash)"),
            "provenance keys the leaderboard filters by (below)",
            model_note="the leaderboard's filters; None: automatic",
            default_doc="automatic",
        ),
        Field(
            "leaderboard_rows",
            _POSITIVE_INTEGER,
            "runs written into the leaderboard's page; with more, the page lists the newest and its script "
            "shows every run a page at a time from `leaderboard.js`",
            default=500,
        ),
        Field(
            "seed_keys",
            _names("a list of dotted config keys"),
            "config keys that hold a run's seed (`training.seed`), beside a declared `seed:` and any key named "
            "`seed`: runs that differ only by them are replicates of one recipe (docs/statistics.md)",
            default=[],
        ),
        Field(
            "sample_efficiency",
            SampleEfficiencyKind(),
            "a campaign's metric against the data each run trained on, by condition, with intervals over seeds (below)",
            model_note="size_key | series, metric, group_by, label (analysis.sample_efficiency); None: the view is off",
            outcome_doc="no sample-efficiency view",
            default_doc="off",
        ),
        Field(
            "coupling",
            Couplings(),
            "(proxy, downstream) series pairs: windows where the proxy rose while the downstream fell within a run, "
            "and their final values' rank correlation across a campaign's runs",
            model_note="proxy, downstream, label (analysis.coupling)",
            default=[],
            outcome_doc="ignored",
        ),
        Field(
            "confusion",
            ConfusionPairs(),
            "probe fields holding an expected and a predicted class (`{expected: layout_gold, predicted: "
            "layout_out, name: layout}`): a confusion matrix for each, beside the pairs found by name "
            "(`expected_X` / `predicted_X`, `gold_X` / `pred_X`, `X_expected` / `X_predicted`)",
            model_note="expected, predicted, name (analysis.confusion)",
            default=[],
            outcome_doc="ignored",
        ),
        Field(
            "reward_components",
            Weights(),
            "reward component name → weight (`{format: 0.2, correctness: 0.8}`): the weighted decomposition of the "
            "reward on the run page, checked against the logged total",
            model_note="component -> weight (analysis.reward)",
            default={},
        ),
    ),
    unknown="unknown setting '{key}' kept but not used by this version",
    keep_unknown=True,
    uses_defaults=True,
)

# The tables of docs/contract.md, by the name of their marker there.
DOC_TABLES: dict[str, Schema] = {
    s.title: s
    for s in (
        RUN_YAML,
        DECISION,
        SPEC_YAML,
        CAMPAIGN_YAML,
        EVIDENCE,
        LITMUS,
        OBS_YAML,
        SWEEPS,
        TRENDS,
        ARMS,
        SAMPLE_EFFICIENCY,
    )
}

TABLE_START = "<!-- table {name}: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit -->"
TABLE_END = "<!-- end of table {name} -->"


def fill_doc_tables(text: str) -> str:
    """`text` (docs/contract.md) with each marked table rewritten from its declaration.

    A marker names a schema of `DOC_TABLES`; an unknown name, or a start without its end, is an
    error rather than a silently stale table.
    """
    out: list[str] = []
    rest = text
    marker = re.compile(r"<!-- table (\S+): generated from [^>]*-->")
    while (m := marker.search(rest)) is not None:
        name = m.group(1)
        if name not in DOC_TABLES:
            raise KeyError(f"docs table '{name}' is not declared in obs.schema.DOC_TABLES")
        end = TABLE_END.format(name=name)
        stop = rest.find(end, m.end())
        if stop < 0:
            raise ValueError(f"docs table '{name}' has no end marker ({end})")
        out.append(rest[: m.start()])
        out.append(f"{TABLE_START.format(name=name)}\n{DOC_TABLES[name].markdown_table()}{end}")
        rest = rest[stop + len(end) :]
    out.append(rest)
    return "".join(out)
