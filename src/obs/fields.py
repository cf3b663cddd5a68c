"""Where each field of a YAML mapping was written, and the one way to say that a field is wrong.

`obs.schema` says what the fields are; this module points at them. Every problem with a field
becomes a diagnostic on its own line (`path:line: warning: 'decision.verdict' should be ...`), so
one bad field never costs the rest of the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from obs.diagnostics import Diagnostics, Severity
from obs.safeyaml import YamlDoc

MAX_SHOWN = 40


def shown(value: Any) -> str:
    """A value as a message quotes it: its repr, cut at 40 characters."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"


class YamlFields:
    """The fields of one mapping in a YAML file (the top level, or a nested one such as `decision:`)."""

    def __init__(
        self,
        doc: YamlDoc,
        path: Path,
        diags: Diagnostics,
        *,
        prefix: str = "",
        data: Mapping[str, Any] | None = None,
        line: int | None = None,
    ) -> None:
        self.doc = doc
        self.path = path
        self.diags = diags
        self.prefix = prefix
        self.data: Mapping[str, Any] = data if data is not None else (doc.data if isinstance(doc.data, dict) else {})
        self._line = line

    def name(self, key: str) -> str:
        """The dotted name a message uses: `sweeps.max_axes`."""
        return f"{self.prefix}{key}"

    def line(self, key: str) -> int | None:
        """The key's line; for an entry the index has no line for (a list item), its mapping's line."""
        return self.doc.line_of(self.name(key)) or self._line

    def child(self, key: str, data: Mapping[str, Any]) -> YamlFields:
        """The nested mapping under `key`, whose messages say `key.sub`."""
        return YamlFields(self.doc, self.path, self.diags, prefix=f"{self.name(key)}.", data=data, line=self.line(key))

    def say(self, severity: Severity, key: str, message: str) -> None:
        self.diags.add(severity, self.path, message, self.line(key))

    def wrong(self, key: str, value: Any, expected: str, outcome: str) -> None:
        """`'key' should be <expected>, got <value>; <what obs did instead>`."""
        self.say("warning", key, f"'{self.name(key)}' should be {expected}, got {shown(value)}; {outcome}")
