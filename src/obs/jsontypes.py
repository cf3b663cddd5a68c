"""Declared types for the fields of JSON inputs: one declaration per document, checked before use.

YAML files have `schema.py`. A JSON document (gate.json, ...) gets the same promise here, smaller: each
field is declared with the type it must have, a value of another type is dropped (the rest of the
record is kept), and a file gets **one message per field**, however many records hold the wrong type:
a `checks` given as a 2 MB string is one warning, not one per character, and `assets: 7` is a warning
naming the file, not a run lost to "'int' object is not iterable".

Types: `TEXT` (a string; a number or boolean is shown as written), `NUMBER` (int or float, not a
boolean), `BOOL`, and a list of records (`Records`, each item a mapping with its own declaration and
its required keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from obs.diagnostics import Diagnostics

TEXT, NUMBER, BOOL = "text", "a number", "true or false"


@dataclass(frozen=True)
class Records:
    """A list of mappings, each checked against `fields`; an item without every `required` key is skipped."""

    what: str  # "gate check"
    fields: dict[str, Any]
    required: tuple[str, ...] = ()


def type_name(value: Any) -> str:
    """What a JSON value is, in a reader's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return f"a text of {len(value)} characters" if len(value) > 40 else "a text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _fits(kind: str, value: Any) -> Any:
    """The value as `kind` holds it, or `_WRONG`."""
    if kind == TEXT:
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        return _WRONG
    if kind == NUMBER:
        return value if isinstance(value, int | float) and not isinstance(value, bool) else _WRONG
    if kind == BOOL:
        return value if isinstance(value, bool) else _WRONG
    raise ValueError(kind)


_WRONG = object()


@dataclass
class _Tally:
    """Wrong values of one field in one file: counted, the first kept for the message."""

    count: int = 0
    first: str = ""


@dataclass
class TypedReader:
    """Checks the fields of one file's records; `report()` says once per field what was dropped."""

    path: Path
    diags: Diagnostics
    wrong: dict[str, _Tally] = field(default_factory=dict)
    expected: dict[str, str] = field(default_factory=dict)

    def _saw(self, name: str, kind: str, value: Any) -> None:
        tally = self.wrong.setdefault(name, _Tally())
        tally.count += 1
        if tally.count == 1:
            tally.first = type_name(value)
            self.expected[name] = kind

    def fields(self, data: dict[str, Any], decl: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        """The declared fields of `data` that have their type (absent and null fields are left out)."""
        out: dict[str, Any] = {}
        for name, kind in decl.items():
            value = data.get(name)
            if value is None:
                continue
            label = prefix + name
            if isinstance(kind, Records):
                out[name] = self.records(value, kind, label)
                continue
            got = _fits(kind, value)
            if got is _WRONG:
                self._saw(label, kind, value)
            else:
                out[name] = got
        return out

    def checked(self, data: dict[str, Any], decl: dict[str, Any]) -> dict[str, Any]:
        """`data` with each declared field that has a wrong type left out (undeclared fields kept as they are)."""
        typed = self.fields(data, decl)
        return {**{k: v for k, v in data.items() if k not in decl}, **typed}

    def records(self, value: Any, decl: Records, label: str) -> list[dict[str, Any]]:
        if not isinstance(value, list):
            self._saw(label, f"a list of {decl.what}s", value)
            return []
        out = []
        for item in value:
            if not isinstance(item, dict):
                self._saw(f"{label}[]", f"an object (a {decl.what})", item)
                continue
            missing = [k for k in decl.required if item.get(k) is None]
            if missing:
                self._saw(f"{label}[].{missing[0]}", f"present in every {decl.what}", None)
                continue
            got = self.fields(item, decl.fields, f"{label}[].")
            if all(k in got for k in decl.required):
                out.append(got)
        return out

    def report(self) -> None:
        """One warning per field that held a wrong value."""
        for name, tally in self.wrong.items():
            kind = self.expected[name]
            if kind.startswith("present in every"):
                times = f" from {tally.count} entries" if tally.count > 1 else ""
                message = f"'{name}' is missing{times}: it must be {kind}; skipped"
            elif tally.count == 1:
                message = f"'{name}' must be {kind}, not {tally.first}; ignored"
            else:
                message = f"'{name}' must be {kind}; {tally.count} values are not (the first is {tally.first}); ignored"
            self.diags.warning(self.path, message)
