"""Probe cases held by column, so a probe of a million cases costs tens of megabytes, not gigabytes.

Adapters still produce one `model.ProbeCase` per record (the interchange type every format maps
to); `ProbeTableBuilder` takes them one at a time and keeps:

- the outcomes every analysis reads (`CaseOutcomes`): case ids as one numpy array (UTF-8 bytes
  when the ids are short, Python strings otherwise), each check as an int8 column (1 true, 0 false,
  -1 absent), split, family and failure class as categorical codes;
- per case the line it came from and a short *pattern*: the difference that makes near-identical
  failures near-identical (the case's note, or the first line where its output leaves the expected
  one), computed here because the texts themselves are not kept in memory;
- the texts (prompt, expected, actual, render, note, other fields) in a `TextStore`: in memory for
  small probes, in an anonymous temporary file past `SPILL_BYTES`, read back only for the few
  cases a page shows and, in order, for the case browser's data files.

Numbers do not depend on how cases are held: every analysis counts the same cases, and every list
of ids comes out in the order it always had (ids sorted as Python sorts strings; UTF-8 byte order
is code point order).
"""

from __future__ import annotations

import base64
import pickle
import re
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, overload

import numpy as np
import numpy.typing as npt

from obs.diagnostics import Diagnostics
from obs.model import ProbeCase

TRUE, FALSE, ABSENT = 1, 0, -1
CHUNK = 65_536  # ids are converted to an array this many at a time
MAX_BYTES_ID = 64  # ids up to this many UTF-8 bytes are stored as fixed-width bytes
MAX_PATTERNS = 20_000  # distinct patterns kept per probe; later new ones are "other"
PATTERN_CHARS = 80  # each side of a pattern's difference
SPILL_BYTES = 32 * 1024 * 1024  # texts kept in memory up to this many bytes, then in a temporary file

IdArray = npt.NDArray[Any]  # dtype S<n> (UTF-8) or object (str)


# ------------------------------------------------------------------------------------------- ids


def id_at(ids: IdArray, i: int) -> str:
    value = ids[i]
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def ids_list(ids: IdArray) -> list[str]:
    if ids.dtype.kind == "S":
        return [b.decode("utf-8") for b in ids.tolist()]
    return [str(v) for v in ids.tolist()]


class IdList(Sequence[str]):
    """Case ids held as an id array but read as a list of strings (len, iteration, indexing, slices,
    equality with a list). A comparison's lists of flipped cases can hold hundreds of thousands of ids;
    as strings they would cost ~65 bytes each for as long as the report lives. JSON output turns
    one list at a time into strings (`to_json_list`, called by `obs.jsonutil.jsonable`)."""

    __slots__ = ("ids",)

    def __init__(self, ids: IdArray | Sequence[str] = ()) -> None:
        self.ids: IdArray = ids if isinstance(ids, np.ndarray) else _ids_array(list(ids))

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return ids_list(self.ids[i])
        return id_at(self.ids, i)

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self), CHUNK):
            yield from ids_list(self.ids[start : start + CHUNK])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IdList):
            other = other.to_json_list()
        return isinstance(other, list | tuple) and self.to_json_list() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IdList({self[:5]!r}{'…' if len(self) > 5 else ''}, n={len(self)})"

    def to_json_list(self) -> list[str]:
        return ids_list(self.ids)


def _ids_array(values: list[str]) -> IdArray:
    b = IdColumnBuilder()
    for v in values:
        b.add(v)
    return b.finish()


def _as_objects(ids: IdArray) -> IdArray:
    return np.array(ids_list(ids), dtype=object) if ids.dtype.kind == "S" else ids


def comparable(a: IdArray, b: IdArray) -> tuple[IdArray, IdArray]:
    """The two id arrays in one kind (bytes with bytes, strings with strings), so numpy can sort and
    match them together."""
    if a.dtype.kind == b.dtype.kind:
        return a, b
    return _as_objects(a), _as_objects(b)


def _id_array(values: list[str]) -> IdArray | None:
    """Short ids as fixed-width UTF-8 bytes; None when one of them cannot be (long, or ending in a
    NUL, which fixed-width bytes would drop, or not encodable)."""
    try:
        encoded = [v.encode("utf-8") for v in values]
    except UnicodeEncodeError:
        return None
    if any(len(e) > MAX_BYTES_ID or e.endswith(b"\x00") for e in encoded):
        return None
    return np.array(encoded, dtype=f"S{max((len(e) for e in encoded), default=1) or 1}")


class IdColumnBuilder:
    """Ids appended one by one, converted to arrays a chunk at a time."""

    def __init__(self) -> None:
        self.chunk: list[str] = []
        self.parts: list[IdArray] = []
        self.as_bytes = True

    def add(self, value: str) -> None:
        self.chunk.append(value)
        if len(self.chunk) >= CHUNK:
            self._flush()

    def _flush(self) -> None:
        if not self.chunk:
            return
        part = _id_array(self.chunk) if self.as_bytes else None
        if part is None:
            if self.as_bytes:
                self.as_bytes = False
                self.parts = [_as_objects(p) for p in self.parts]
            part = np.array(self.chunk, dtype=object)
        self.parts.append(part)
        self.chunk = []

    def finish(self) -> IdArray:
        self._flush()
        if not self.parts:
            return np.array([], dtype="S1")
        return np.concatenate(self.parts) if len(self.parts) > 1 else self.parts[0]


# ----------------------------------------------------------------------------------- categorical


def _b64(values: npt.NDArray[Any]) -> str:
    return base64.b64encode(np.ascontiguousarray(values).astype(values.dtype.newbyteorder("<")).tobytes()).decode()


def _unb64(text: str, dtype: str) -> npt.NDArray[Any]:
    return np.frombuffer(base64.b64decode(text), dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype)


@dataclass
class Categorical:
    """A text column with few distinct values: the values once, a code per case (-1: none)."""

    labels: list[str]
    codes: npt.NDArray[np.int32]

    def value(self, i: int) -> str | None:
        code = int(self.codes[i])
        return self.labels[code] if code >= 0 else None

    def take(self, rows: npt.NDArray[np.intp]) -> Categorical:
        return Categorical(self.labels, self.codes[rows])

    def to_json(self) -> list[Any]:
        return [self.labels, _b64(self.codes)]

    @classmethod
    def from_json(cls, data: list[Any]) -> Categorical:
        return cls([str(x) for x in data[0]], _unb64(data[1], "int32"))

    @classmethod
    def of(cls, values: Iterable[str | None]) -> Categorical:
        b = CategoricalBuilder()
        for v in values:
            b.add(v)
        return b.finish()


class CategoricalBuilder:
    def __init__(self, limit: int | None = None) -> None:
        self.index: dict[str, int] = {}
        self.labels: list[str] = []
        self.codes = array("i")
        self.limit = limit

    def add(self, value: str | None) -> None:
        if value is None:
            self.codes.append(-1)
            return
        code = self.index.get(value)
        if code is None:
            if self.limit is not None and len(self.labels) >= self.limit:
                self.codes.append(-1)
                return
            code = self.index[value] = len(self.labels)
            self.labels.append(value)
        self.codes.append(code)

    def set(self, row: int, value: str | None) -> None:
        """Change one row's value (appending and taking the code back keeps one way of coding)."""
        self.add(value)
        self.codes[row] = self.codes.pop()

    def finish(self) -> Categorical:
        return Categorical(self.labels, np.frombuffer(self.codes, dtype=np.int32).copy())


class CheckColumnsBuilder:
    """Boolean checks by column; a check first seen late is absent (-1) for the cases before it."""

    def __init__(self) -> None:
        self.columns: dict[str, array[int]] = {}
        self.n = 0

    def add(self, checks: Mapping[str, bool]) -> None:
        for name in checks:
            if name not in self.columns:
                self.columns[name] = array("b", [ABSENT]) * self.n
        for name, column in self.columns.items():
            value = checks.get(name)
            column.append(ABSENT if value is None else (TRUE if value else FALSE))
        self.n += 1

    def add_many(self, rows: Sequence[Mapping[str, bool]]) -> None:
        """`add` for each of `rows`, a column at a time."""
        for checks in rows:  # columns first seen in this batch, in the order `add` would make them
            for name in checks:
                if name not in self.columns:
                    self.columns[name] = array("b", [ABSENT]) * self.n
        for name, column in self.columns.items():
            column.extend([ABSENT if (v := c.get(name)) is None else (TRUE if v else FALSE) for c in rows])
        self.n += len(rows)

    def set(self, row: int, checks: Mapping[str, bool]) -> None:
        """Change one row's checks (a check new here is absent for every other row)."""
        for name in checks:
            if name not in self.columns:
                self.columns[name] = array("b", [ABSENT]) * self.n
        for name, column in self.columns.items():
            value = checks.get(name)
            column[row] = ABSENT if value is None else (TRUE if value else FALSE)

    def finish(self) -> dict[str, npt.NDArray[np.int8]]:
        return {name: np.frombuffer(col, dtype=np.int8).copy() for name, col in self.columns.items()}


# -------------------------------------------------------------------------------------- outcomes


@dataclass(frozen=True)
class CaseOutcome:
    """One case's outcome, as small code and tests write it (`CaseOutcomes` holds many)."""

    checks: dict[str, bool]
    split: str | None
    family: str | None
    failure_class: str | None = None
    # when the case was sampled several times: check -> (samples, samples where the check is true)
    samples: dict[str, tuple[int, int]] | None = None


SampleCounts = dict[str, tuple[int, int]]


@dataclass
class CaseOutcomes:
    """Every case's checks, split, family and failure class, by column (what comparisons need).

    `samples` is a side table for the few cases sampled several times (pass@k): case id -> check ->
    (samples, samples where the check is true); the columns hold the chosen sample's outcome."""

    ids: IdArray
    checks: dict[str, npt.NDArray[np.int8]]
    split: Categorical
    family: Categorical
    failure_class: Categorical
    samples: dict[str, SampleCounts] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def id(self, i: int) -> str:
        return id_at(self.ids, i)

    def ids_list(self) -> list[str]:
        return ids_list(self.ids)

    def check_names(self, rows: npt.NDArray[np.intp] | None = None) -> set[str]:
        """Checks that at least one case (of `rows`) has."""
        out = set()
        for name, col in self.checks.items():
            sel = col if rows is None else col[rows]
            if bool(np.any(sel >= 0)):
                out.add(name)
        return out

    def outcome(self, i: int) -> CaseOutcome:
        checks = {name: bool(col[i] == TRUE) for name, col in self.checks.items() if col[i] >= 0}
        counts = self.samples.get(self.id(i)) if self.samples else None
        return CaseOutcome(checks, self.split.value(i), self.family.value(i), self.failure_class.value(i), counts)

    def get(self, case_id: str) -> CaseOutcome | None:
        """One case by id (a scan: for tests and small look-ups, not for loops)."""
        for i, value in enumerate(self.ids_list()):
            if value == case_id:
                return self.outcome(i)
        return None

    def take(self, rows: npt.NDArray[np.intp]) -> CaseOutcomes:
        return CaseOutcomes(
            self.ids[rows],
            {k: v[rows] for k, v in self.checks.items()},
            self.split.take(rows),
            self.family.take(rows),
            self.failure_class.take(rows),
            self.samples,
        )

    def to_json(self) -> dict[str, Any]:
        """Plain, compact data for the build cache: columns as base64 of their bytes (ids too, when
        they are stored as bytes: a million ids never become a million Python strings)."""
        ids: Any = self.ids_list() if self.ids.dtype.kind != "S" else [self.ids.dtype.itemsize, _b64(self.ids)]
        out: dict[str, Any] = {
            "ids": ids,
            "checks": {k: _b64(v) for k, v in self.checks.items()},
            "split": self.split.to_json(),
            "family": self.family.to_json(),
            "failure_class": self.failure_class.to_json(),
        }
        if self.samples:
            out["samples"] = {i: {c: list(v) for c, v in counts.items()} for i, counts in self.samples.items()}
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CaseOutcomes:
        raw = data["ids"]
        if len(raw) == 2 and isinstance(raw[0], int) and isinstance(raw[1], str):  # [width, base64]
            ids = np.frombuffer(base64.b64decode(raw[1]), dtype=f"S{raw[0]}").copy()
        else:
            ids = _ids_array([str(v) for v in raw])
        return cls(
            ids,
            {str(k): _unb64(v, "int8") for k, v in data["checks"].items()},
            Categorical.from_json(data["split"]),
            Categorical.from_json(data["family"]),
            Categorical.from_json(data["failure_class"]),
            {
                str(i): {str(c): (int(v[0]), int(v[1])) for c, v in counts.items()}
                for i, counts in data.get("samples", {}).items()
            },
        )

    @classmethod
    def from_mapping(cls, outcomes: Mapping[str, CaseOutcome]) -> CaseOutcomes:
        ids = IdColumnBuilder()
        checks = CheckColumnsBuilder()
        split, family, fclass = CategoricalBuilder(), CategoricalBuilder(), CategoricalBuilder()
        samples: dict[str, SampleCounts] = {}
        for case_id, o in outcomes.items():
            if o.samples:
                samples[case_id] = dict(o.samples)
            ids.add(case_id)
            checks.add(o.checks)
            split.add(o.split)
            family.add(o.family)
            fclass.add(o.failure_class)
        return cls(ids.finish(), checks.finish(), split.finish(), family.finish(), fclass.finish(), samples)

    @classmethod
    def of(cls, value: CaseOutcomes | Mapping[str, CaseOutcome]) -> CaseOutcomes:
        return value if isinstance(value, CaseOutcomes) else cls.from_mapping(value)


@dataclass(frozen=True)
class Alignment:
    """The cases two outcome tables share, matched by id, in sorted id order."""

    ids: IdArray
    here: npt.NDArray[np.intp]  # rows of the first table
    base: npt.NDArray[np.intp]  # rows of the second
    only_here: IdArray  # sorted
    only_base: IdArray  # sorted


def align(here: CaseOutcomes, base: CaseOutcomes) -> Alignment:
    """Match the two tables' cases by id (ids are unique within each). One sort of the baseline's ids
    and a binary search per case: a million cases align in well under a second and a few tens of MB."""
    a, b = comparable(here.ids, base.ids)
    if len(a) == 0 or len(b) == 0:
        empty = np.array([], dtype=np.intp)
        return Alignment(a[:0], empty, empty, np.sort(a, kind="stable"), np.sort(b, kind="stable"))
    order_b = np.argsort(b, kind="stable")
    sorted_b = b[order_b]
    pos = np.minimum(np.searchsorted(sorted_b, a), len(sorted_b) - 1)
    found = sorted_b[pos] == a
    del sorted_b
    ih = np.flatnonzero(found)
    ib = order_b[pos[ih]]
    del pos, order_b
    by_id = np.argsort(a[ih], kind="stable")
    ih, ib = ih[by_id].astype(np.intp), ib[by_id].astype(np.intp)
    in_base = np.zeros(len(b), dtype=bool)
    in_base[ib] = True
    return Alignment(a[ih], ih, ib, np.sort(a[~found], kind="stable"), np.sort(b[~in_base], kind="stable"))


# ------------------------------------------------------------------------------------------ texts


@dataclass(frozen=True)
class CaseText:
    prompt: str | None = None
    expected: str | None = None
    actual: str | None = None
    render: str | None = None
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


EMPTY_TEXT = CaseText()


def _fields(text: CaseText) -> tuple[Any, ...]:
    return (text.prompt, text.expected, text.actual, text.render, text.note, text.extra)


@dataclass
class PlainCases:
    """A batch of cases by column, in input order (what `ProbeTableBuilder.add_plain` takes)."""

    ids: list[str] = field(default_factory=list)
    checks: list[dict[str, bool]] = field(default_factory=list)
    split: list[str | None] = field(default_factory=list)
    family: list[str | None] = field(default_factory=list)
    failure_class: list[str | None] = field(default_factory=list)
    texts: list[CaseText] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


class TextStore:
    """Each case's texts, pickled one record after another (as a plain tuple: a dataclass pickles and
    unpickles 2-3x slower, ~5 µs a case on a 1,500-case probe): in memory until `spill_bytes`, then in
    an anonymous temporary file (deleted by the system when closed or when the process ends)."""

    def __init__(self, spill_bytes: int = SPILL_BYTES) -> None:
        self.spill_bytes = spill_bytes
        self.memory: list[bytes] | None = []
        self.file: IO[bytes] | None = None
        self.offsets = array("q", [0])
        self.size = 0

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def append(self, text: CaseText) -> None:
        data = b"" if text == EMPTY_TEXT else pickle.dumps(_fields(text), protocol=5)
        if self.memory is not None:
            self.memory.append(data)
            if self.size + len(data) > self.spill_bytes:
                self._spill()
        else:
            assert self.file is not None
            self.file.write(data)
        self.size += len(data)
        self.offsets.append(self.size)

    def _spill(self) -> None:
        self.file = tempfile.TemporaryFile(prefix="obs-probe-texts-")  # noqa: SIM115 (lives as long as the table)
        for data in self.memory or []:
            self.file.write(data)
        self.memory = None

    def get(self, i: int) -> CaseText:
        if self.memory is not None:
            data = self.memory[i]
        else:
            assert self.file is not None
            start, end = self.offsets[i], self.offsets[i + 1]
            self.file.seek(start)
            data = self.file.read(end - start)
            self.file.seek(0, 2)
        return CaseText(*pickle.loads(data)) if data else EMPTY_TEXT

    def iter(self, start: int = 0, stop: int | None = None) -> Iterator[CaseText]:
        """Records start..stop in order, read sequentially (a few MB at a time from the file)."""
        stop = len(self) if stop is None else stop
        if self.memory is not None:
            for data in self.memory[start:stop]:
                yield CaseText(*pickle.loads(data)) if data else EMPTY_TEXT
            return
        assert self.file is not None
        i = start
        while i < stop:
            j = min(stop, i + 4096)
            first, last = self.offsets[i], self.offsets[j]
            self.file.seek(first)
            block = self.file.read(last - first)
            for k in range(i, j):
                data = block[self.offsets[k] - first : self.offsets[k + 1] - first]
                yield CaseText(*pickle.loads(data)) if data else EMPTY_TEXT
            i = j
        self.file.seek(0, 2)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


# --------------------------------------------------------------------------------------- pattern

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def _short(text: str, limit: int = PATTERN_CHARS) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_pattern(expected: str | None, actual: str | None, note: str | None) -> str | None:
    """What near-identical failures share: the case's note, or where its output leaves the expected
    one; digits become '#' so "slot 3" and "slot 4" read as one pattern. None: nothing to compare."""
    if note and note.strip():
        return _DIGITS.sub("#", _short(note, 2 * PATTERN_CHARS))
    if expected is None or actual is None or expected == actual:
        return None
    if not actual.strip():
        return "no output"
    exp_lines, act_lines = expected.splitlines(), actual.splitlines()
    for exp, act in zip(exp_lines, act_lines, strict=False):
        if exp != act:
            return _DIGITS.sub("#", f"expected “{_short(exp)}”, got “{_short(act)}”")
    if len(act_lines) < len(exp_lines):
        return "output stops before the expected end"
    if len(act_lines) > len(exp_lines):
        return "output continues past the expected end"
    return "differs in whitespace only"


# ------------------------------------------------------------------------------------------ table


@dataclass
class ProbeTable:
    """The cases of one probe, by column, with their texts stored aside."""

    outcomes: CaseOutcomes
    pattern: Categorical
    lines: npt.NDArray[np.int64]  # 0: unknown
    texts: TextStore
    text_rows: npt.NDArray[np.int64] | None = None  # case -> text record, when duplicates were dropped

    def __len__(self) -> int:
        return len(self.outcomes)

    def text(self, i: int) -> CaseText:
        return self.texts.get(int(self.text_rows[i]) if self.text_rows is not None else i)

    def iter_texts(self, start: int = 0, stop: int | None = None) -> Iterator[CaseText]:
        stop = len(self) if stop is None else stop
        if self.text_rows is None:
            yield from self.texts.iter(start, stop)
        else:
            for i in range(start, stop):
                yield self.text(i)

    def case(self, i: int) -> ProbeCase:
        o, t = self.outcomes.outcome(i), self.text(i)
        line = int(self.lines[i])
        return ProbeCase(
            id=self.outcomes.id(i),
            checks=o.checks,
            split=o.split,
            family=o.family,
            failure_class=o.failure_class,
            prompt=t.prompt,
            expected=t.expected,
            actual=t.actual,
            render=t.render,
            note=t.note,
            extra=dict(t.extra),
            line=line or None,
        )

    def cases(self) -> list[ProbeCase]:
        return [self.case(i) for i in range(len(self))]


class ProbeTableBuilder:
    """Cases in input order. A repeated id keeps its first case: the others are reported (with the
    file and line they came from) and dropped when the table is finished."""

    def __init__(self, path: Path, diags: Diagnostics, spill_bytes: int = SPILL_BYTES) -> None:
        self.diags = diags
        self.paths: list[Path] = [path]
        self.path_codes = array("h")
        self.ids = IdColumnBuilder()
        self.checks = CheckColumnsBuilder()
        self.split, self.family, self.failure_class = CategoricalBuilder(), CategoricalBuilder(), CategoricalBuilder()
        self.pattern = CategoricalBuilder(limit=MAX_PATTERNS)
        self.lines = array("q")
        self.texts = TextStore(spill_bytes)
        self.check_names: set[str] = set()
        self.text_rows: dict[int, int] = {}  # row -> text record, for rows set again (`set_row`)
        self.kept: npt.NDArray[np.intp] | None = None  # after `finish`: rows kept, when a repeat was dropped

    @property
    def path(self) -> Path:
        return self.paths[-1]

    @path.setter
    def path(self, value: Path) -> None:
        if value != self.paths[-1]:
            self.paths.append(value)

    def __len__(self) -> int:
        return len(self.lines)

    def add(self, case: ProbeCase, line: int | None) -> None:
        self.path_codes.append(len(self.paths) - 1)
        self.ids.add(case.id)
        self.checks.add(case.checks)
        self.check_names.update(case.checks)
        self.split.add(case.split)
        self.family.add(case.family)
        self.failure_class.add(case.failure_class)
        self.pattern.add(failure_pattern(case.expected, case.actual, case.note))
        self.lines.append(line or 0)
        self.texts.append(CaseText(case.prompt, case.expected, case.actual, case.render, case.note, case.extra))

    def add_plain(self, cases: PlainCases) -> None:
        """Cases given by column (`obs.adapters.shared.probe_cases.plain_cases`): the rows `add` makes one at a time."""
        n = len(cases.ids)
        self.path_codes.extend(array("h", [len(self.paths) - 1]) * n)
        for case_id in cases.ids:
            self.ids.add(case_id)
        self.checks.add_many(cases.checks)
        self.check_names.update(self.checks.columns)
        for column, values in (
            (self.split, cases.split),
            (self.family, cases.family),
            (self.failure_class, cases.failure_class),
        ):
            for value in values:
                column.add(value)
        for text in cases.texts:
            self.pattern.add(failure_pattern(text.expected, text.actual, text.note))
            self.texts.append(text)
        self.lines.extend(cases.lines)

    def set_row(self, row: int, case: ProbeCase, line: int | None) -> None:
        """Put another case with the same id in an added row (a sampled case: the selected sample
        is known only once every sample is read)."""
        self.checks.set(row, case.checks)
        self.check_names.update(case.checks)
        self.split.set(row, case.split)
        self.family.set(row, case.family)
        self.failure_class.set(row, case.failure_class)
        self.pattern.set(row, failure_pattern(case.expected, case.actual, case.note))
        self.lines[row] = line or 0
        self.text_rows[row] = len(self.texts)
        self.texts.append(CaseText(case.prompt, case.expected, case.actual, case.render, case.note, case.extra))

    def finish(self) -> ProbeTable:
        ids = self.ids.finish()
        outcomes = CaseOutcomes(
            ids, self.checks.finish(), self.split.finish(), self.family.finish(), self.failure_class.finish()
        )
        lines = np.frombuffer(self.lines, dtype=np.int64).copy()
        text_rows: npt.NDArray[np.int64] | None = None
        if self.text_rows:
            text_rows = np.arange(len(lines), dtype=np.int64)
            for row, record in self.text_rows.items():
                text_rows[row] = record
        table = ProbeTable(outcomes, self.pattern.finish(), lines, self.texts, text_rows)
        keep = self._first_of_each_id(ids, lines)
        self.kept = keep
        if keep is None:
            return table
        rows = text_rows[keep] if text_rows is not None else keep.astype(np.int64)
        return ProbeTable(outcomes.take(keep), table.pattern.take(keep), lines[keep], self.texts, rows)

    def _first_of_each_id(self, ids: IdArray, lines: npt.NDArray[np.int64]) -> npt.NDArray[np.intp] | None:
        """Rows to keep when an id repeats (None when none does); each repeat is reported."""
        if len(ids) < 2:
            return None
        order = np.argsort(ids, kind="stable")
        ordered = ids[order]
        repeat = ordered[1:] == ordered[:-1]
        if not bool(np.any(repeat)):
            return None
        drop = np.zeros(len(ids), dtype=bool)
        first_row = int(order[0])
        for k in range(1, len(order)):
            row = int(order[k])
            if repeat[k - 1]:
                drop[row] = True
                where = self.paths[self.path_codes[row]]
                first_line = int(lines[first_row])
                self.diags.warning(
                    where,
                    f"case id '{id_at(ids, row)}' already used at line {first_line}; this one skipped",
                    int(lines[row]) or None,
                )
            else:
                first_row = row
        return np.flatnonzero(~drop)


def table_of(cases: Iterable[ProbeCase]) -> ProbeTable:
    """A table from cases in memory (tests, code that builds cases itself); a repeated id keeps its
    first case."""
    b = ProbeTableBuilder(Path(), Diagnostics())
    for case in cases:
        b.add(case, case.line)
    return b.finish()
