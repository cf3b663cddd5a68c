"""A bounded YAML reader that also remembers on which line each key was written.

`yaml.safe_load` keeps aliases as shared references: a tiny "billion laughs" file loads instantly
and explodes later when the data is walked or serialised. Run metadata never needs aliases, so
they are refused outright, and so are very large files. Line numbers let a diagnostic point at
the exact line of a bad field.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from obs.diagnostics import Diagnostics

MAX_YAML_BYTES = 4 * 1024 * 1024


class YamlError(ValueError):
    """A YAML file that cannot be used; `line` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class _NoAliasLoader(yaml.SafeLoader):
    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise YamlError(
                "YAML aliases (*name) are not allowed in obs files (they can expand without bound)",
                event.start_mark.line + 1,
            )
        return super().compose_node(parent, index)


@dataclass
class YamlDoc:
    """Loaded data plus `lines`: dotted key path ("decision.verdict") -> 1-based line number."""

    data: Any
    lines: dict[str, int] = field(default_factory=dict)

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key)


def _index_lines(node: yaml.Node, prefix: str, out: dict[str, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                path = f"{prefix}.{key_node.value}" if prefix else str(key_node.value)
                out.setdefault(path, key_node.start_mark.line + 1)
                _index_lines(value_node, path, out)


def _plain(value: Any) -> Any:
    """Dates become ISO strings so the rest of the code sees only JSON-like data."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def load_yaml_text(text: str) -> YamlDoc:
    try:
        loader = _NoAliasLoader(text)  # the reader refuses control characters (NUL, ...) right here
    except yaml.reader.ReaderError as exc:
        bad_line = text[: exc.position].count("\n") + 1
        raise YamlError(f"invalid YAML: character #x{exc.character:04x} is not allowed in YAML", bad_line) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDoc(None)
        lines: dict[str, int] = {}
        _index_lines(node, "", lines)
        data = loader.construct_document(node)
    except YamlError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        last_line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
        line = min(mark.line + 1, last_line) if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.context_mark is not None and exc.problem:
            problem += f" ({exc.context} that starts at line {exc.context_mark.line + 1})"
        raise YamlError(f"invalid YAML: {problem}", line) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    return YamlDoc(_plain(data), lines)


def load_yaml_file(path: Path) -> YamlDoc:
    size = path.stat().st_size
    if size > MAX_YAML_BYTES:
        raise YamlError(f"file is {size} bytes; obs reads YAML files up to {MAX_YAML_BYTES} bytes")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YamlError(f"not valid UTF-8 (byte {exc.start})", line) from None
    return load_yaml_text(text)


def peek_yaml(path: Path) -> Any:
    """Load a small YAML file fast (libyaml when available), for a quick look at a few top-level keys.

    Unlike `load_yaml_file` it keeps no line numbers and does not refuse aliases: callers read a
    couple of scalar fields and never walk or serialise the result.
    """
    if path.stat().st_size > MAX_YAML_BYTES:
        raise YamlError("file too large")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(path.read_bytes(), Loader=loader)
    except (yaml.YAMLError, ValueError) as exc:
        raise YamlError(f"invalid YAML: {exc}") from None


def load_mapping(path: Path, diags: Diagnostics, what: str = "fields") -> YamlDoc | None:
    """A YAML file that must hold a mapping (run.yaml, spec.yaml, campaign.yaml, obs.yaml); None when it cannot be used.

    An empty file is an empty mapping. Every problem is an error naming the file (and line): the
    caller then goes on with its defaults.
    """
    try:
        doc = load_yaml_file(path)
    except YamlError as exc:
        diags.error(path, str(exc), exc.line)
        return None
    except OSError as exc:
        diags.error(path, f"cannot be read: {exc.strerror}")
        return None
    if doc.data is None:
        doc.data = {}
    if not isinstance(doc.data, dict):
        diags.error(path, f"expected a mapping of {what} at the top level", 1)
        return None
    return doc
