"""Typed reading of fields from a YAML mapping, reporting wrong types with the field's line.

Each reader returns a usable value (or the default) and adds a diagnostic when the input does not
match the contract, so one bad field never costs the rest of the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from obs.diagnostics import Diagnostics
from obs.safeyaml import YamlDoc


class FieldReader:
    def __init__(self, doc: YamlDoc, path: Path, diags: Diagnostics, prefix: str = "") -> None:
        self.doc = doc
        self.data: Mapping[str, Any] = doc.data if isinstance(doc.data, dict) else {}
        self.path = path
        self.diags = diags
        self.prefix = prefix

    def line(self, key: str) -> int | None:
        return self.doc.line_of(self.prefix + key)

    def _bad(self, key: str, expected: str, value: Any) -> None:
        shown = repr(value)
        if len(shown) > 40:
            shown = shown[:40] + "…"
        self.diags.warning(
            self.path, f"'{self.prefix}{key}' should be {expected}, got {shown}; ignored", self.line(key)
        )

    def text(self, key: str, default: str | None = None) -> str | None:
        """A string; numbers are accepted and converted (revision: 3 is fine)."""
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        self._bad(key, "a string", value)
        return default

    def markdown(self, key: str) -> str:
        """Markdown text, or a list of strings rendered as a bullet list."""
        value = self.data.get(key)
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            return "\n".join(f"- {v}" for v in value)
        self._bad(key, "Markdown text or a list of strings", value)
        return ""

    def integer(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        self._bad(key, "an integer", value)
        return None

    def mapping(self, key: str) -> dict[str, Any]:
        value = self.data.get(key)
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        self._bad(key, "a mapping", value)
        return {}

    def string_list(self, key: str) -> list[str]:
        value = self.data.get(key)
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            return [str(v) for v in value]
        self._bad(key, "a list of strings", value)
        return []

    def choice(self, key: str, allowed: tuple[str, ...], default: str | None) -> str | None:
        value = self.text(key)
        if value is None:
            return default
        if value.lower() in allowed:
            return value.lower()
        self.diags.warning(
            self.path,
            f"'{self.prefix}{key}' is '{value}'; expected one of {', '.join(allowed)}",
            self.line(key),
        )
        return default if default is not None else value

    def child(self, key: str) -> FieldReader:
        sub = FieldReader(self.doc, self.path, self.diags, prefix=f"{self.prefix}{key}.")
        sub.data = self.mapping(key)
        return sub
