"""A bounded YAML reader that also remembers on which line each key was written.

`yaml.safe_load` keeps aliases as shared references: a tiny "billion laughs" file loads instantly
and explodes later when the data is walked or serialised. Run metadata never needs aliases, so
they are refused outright, and so are very large files and nesting deeper than `MAX_DEPTH` (the
composer and every reader after it recurse once per level). Line numbers let a diagnostic point at
the exact line of a bad field.

A value that parses but cannot be used is kept, made usable, and reported on its line
(`YamlDoc.problems`): text with a lone surrogate or a control character (replaced, see
`obs.sanitize`), an integer beyond 64 bits (kept as text), a float beyond the largest double (read
as infinity), a tagged value that is not what its tag says (`!!float abc`, a date like 2026-02-30:
kept as text), and a key written twice (the last value is used).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from obs.diagnostics import Diagnostics
from obs.sanitize import CLEANED, clean_text, digits_text, has_unsafe_text, int_in_range, join_pairs

MAX_YAML_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64  # levels of nested mappings and lists
MAX_PROBLEMS = 20  # problems reported per file; the rest are counted
MAX_INT_DIGITS = 4000  # Python refuses int() of more than 4,300 digits; such a number is text anyway


class YamlError(ValueError):
    """A YAML file that cannot be used; `line` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader without aliases, with a nesting bound, and with values made usable (see the module)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.problems: list[tuple[int | None, str]] = []
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise YamlError(
                "YAML aliases (*name) are not allowed in obs files (they can expand without bound)",
                event.start_mark.line + 1,
            )
        if self._depth >= MAX_DEPTH:
            raise YamlError(
                f"nested more than {MAX_DEPTH} levels deep; obs reads flatter files",
                self.peek_event().start_mark.line + 1,
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def problem(self, node: yaml.Node, message: str) -> None:
        self.problems.append((node.start_mark.line + 1, message))

    def construct_yaml_str(self, node: yaml.ScalarNode) -> Any:
        value = super().construct_yaml_str(node)
        if isinstance(value, str) and has_unsafe_text(value):
            value = join_pairs(value)  # "\ud83d\ude00", as json.dumps writes an emoji, is that emoji
        if isinstance(value, str) and has_unsafe_text(value):
            self.problem(
                node,
                "text holds a character that cannot be written in a page (a lone surrogate such as \\ud800, "
                f"or a control character); {CLEANED}",
            )
            return clean_text(value)
        return value

    def construct_yaml_int(self, node: yaml.ScalarNode) -> Any:
        text = str(self.construct_scalar(node))
        digits = text.replace("_", "").lstrip("+-")
        if len(digits) > MAX_INT_DIGITS and digits.isdigit():
            value: Any = None
        else:
            try:
                value = super().construct_yaml_int(node)
            except ValueError:
                return self._kept_as_text(node, text, "is tagged as an integer but is not one")
            if int_in_range(value):
                return value
        self.problem(node, f"integer {digits_text(text)} is beyond 64 bits; it was kept as text, not as a number")
        return clean_text(text)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> Any:
        text = str(self.construct_scalar(node))
        try:
            value = super().construct_yaml_float(node)
        except ValueError:
            return self._kept_as_text(node, text, "is tagged as a number but is not one")
        if math.isinf(value) and "inf" not in text.lower():
            self.problem(node, f"{text[:40]} is beyond the largest 64-bit float; it was read as infinity")
        return value

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
        text = str(self.construct_scalar(node))
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError) as exc:
            return self._kept_as_text(node, text, f"looks like a date but is not one ({exc})")

    def construct_yaml_binary(self, node: yaml.ScalarNode) -> Any:
        self.problem(node, "binary data (!!binary) is not read; its text was kept")
        return clean_text(str(self.construct_scalar(node)))

    def construct_yaml_set(self, node: yaml.MappingNode) -> Any:
        """A set as the list of its members (the rest of obs sees only JSON-like data)."""
        return sorted(self.construct_mapping(node, deep=True), key=str)

    def construct_yaml_omap(self, node: yaml.SequenceNode) -> Any:
        """An ordered mapping (`!!omap`, `!!pairs`) as a list of one-key mappings."""
        steps = super().construct_yaml_omap(node)
        pairs = next(steps)
        for _ in steps:
            pass
        return [{key: value} for key, value in pairs]

    def _kept_as_text(self, node: yaml.Node, text: str, what: str) -> str:
        self.problem(node, f"{clean_text(text[:40])!r} {what}; it was kept as text")
        return clean_text(text)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        if isinstance(node, yaml.MappingNode):
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key = (key_node.tag, key_node.value)
                    line = key_node.start_mark.line + 1
                    if key in seen:
                        self.problems.append(
                            (
                                line,
                                f"key '{clean_text(key_node.value[:40])}' is written twice (first at line "
                                f"{seen[key]}); the last value is used",
                            )
                        )
                    seen.setdefault(key, line)
        return super().construct_mapping(node, deep=deep)


for _tag, _method in (
    ("str", _NoAliasLoader.construct_yaml_str),
    ("int", _NoAliasLoader.construct_yaml_int),
    ("float", _NoAliasLoader.construct_yaml_float),
    ("timestamp", _NoAliasLoader.construct_yaml_timestamp),
    ("binary", _NoAliasLoader.construct_yaml_binary),
    ("set", _NoAliasLoader.construct_yaml_set),
    ("omap", _NoAliasLoader.construct_yaml_omap),
    ("pairs", _NoAliasLoader.construct_yaml_omap),
):
    _NoAliasLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _method)


@dataclass
class YamlDoc:
    """Loaded data plus `lines`: dotted key path ("decision.verdict") -> 1-based line number."""

    data: Any
    lines: dict[str, int] = field(default_factory=dict)
    problems: list[tuple[int | None, str]] = field(default_factory=list)

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key)


def _index_lines(node: yaml.Node, prefix: str, out: dict[str, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                path = f"{prefix}.{key_node.value}" if prefix else str(key_node.value)
                out.setdefault(path, key_node.start_mark.line + 1)
                _index_lines(value_node, path, out)
    elif isinstance(node, yaml.SequenceNode) and prefix:  # a list's entries as `key.0`, `key.1`, ...
        for i, item in enumerate(node.value):
            out.setdefault(f"{prefix}.{i}", item.start_mark.line + 1)
            _index_lines(item, f"{prefix}.{i}", out)


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
        problems = loader.problems
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
    return YamlDoc(_plain(data), lines, problems)


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


# Nesting libyaml would have to follow: more flow brackets than MAX_DEPTH, or a line whose indentation
# (spaces and the `- ? :` of compact nested blocks) reaches it. libyaml recurses in C without a bound.
_DEEP_BLOCK = re.compile(rb"^[ \t?:-]{%d}" % MAX_DEPTH, re.MULTILINE)


PEEKS_KEPT = 1024  # the last files peeked at, by path and stat (a run.yaml is ~1 KB parsed)
_peeked: OrderedDict[tuple[str, int, int, int], Any] = OrderedDict()


def peek_yaml(path: Path) -> Any:
    """Load a small YAML file fast (libyaml when available), for a quick look at a few top-level keys.

    Unlike `load_yaml_file` it keeps no line numbers and does not refuse aliases: callers read a
    couple of scalar fields and never walk, change or serialise the result. A file nested deeply enough to
    be refused goes through the bounded reader instead (libyaml's recursion has no bound).

    The last `PEEKS_KEPT` results are kept by path, size, mtime and inode: planning reads each run.yaml's
    place (obs.layout) and then which log it names (obs.adapters.native), and parsing it twice was ~10 % of
    a one-run rebuild of the bench's 240 runs.
    """
    st = path.stat()
    if st.st_size > MAX_YAML_BYTES:
        raise YamlError("file too large")
    key = (str(path), st.st_size, st.st_mtime_ns, st.st_ino)
    if key in _peeked:
        _peeked.move_to_end(key)
        return _peeked[key]
    data = _peek(path)
    _peeked[key] = data
    if len(_peeked) > PEEKS_KEPT:
        _peeked.popitem(last=False)
    return data


def forget_peeks() -> None:
    """Let go of the files peeked at: a build's planning is done with them (~3.6 MB for `PEEKS_KEPT` run.yaml
    files, otherwise held to the end of a build of any size)."""
    _peeked.clear()


def _peek(path: Path) -> Any:
    raw = path.read_bytes()
    if raw.count(b"[") + raw.count(b"{") >= MAX_DEPTH or _DEEP_BLOCK.search(raw):
        try:
            return load_yaml_text(raw.decode("utf-8-sig")).data
        except UnicodeDecodeError:
            raise YamlError("not valid UTF-8") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(raw, Loader=loader)
    except (yaml.YAMLError, ValueError, RecursionError):
        pass
    # libyaml refuses what the bounded reader keeps and reports (a date like 2024-13-45, a surrogate
    # escape, a key written twice...): a quick look must see the same fields as the full reading
    try:
        return load_yaml_text(raw.decode("utf-8-sig")).data
    except UnicodeDecodeError:
        raise YamlError("not valid UTF-8") from None


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
        diags.unreadable(path, exc)
        return None
    for line, message in doc.problems[:MAX_PROBLEMS]:
        diags.warning(path, message, line)
    if len(doc.problems) > MAX_PROBLEMS:
        rest = doc.problems[MAX_PROBLEMS:]
        diags.warning(path, f"{len(rest)} more such problem(s) after line {rest[0][0]}; not listed", rest[0][0])
    if doc.data is None:
        doc.data = {}
    if not isinstance(doc.data, dict):
        diags.error(path, f"expected a mapping of {what} at the top level", 1)
        return None
    return doc
