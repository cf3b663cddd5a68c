"""Turn a stream of per-step records (dicts) into columnar metric series.

Every log format obs reads (native metrics.jsonl, HF `log_history`, generic JSONL) ends up as a
sequence of `{step, key: value, ...}` records; this module is the one place that decides what a
value means: numbers become series points, `null` means "not logged", a string in a numeric
column is reported (once per key, with its line), nested objects are flattened with `/`, a text
column named like a stage (obs.vocabulary) labels stages, non-finite values are kept and reported
with their key, step and line, and several values at one step are aggregated by the obs.yaml
`same_step` policy: `mean` (default; min, max and count kept for the band), `last` or `all`. A
finite number beyond ±1e150 (`obs.sanitize`) is kept as logged and said (statistics over it are computed
scaled, never clamped to infinity); a step that large is no step, and its record is skipped.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from obs.decimate import decimate
from obs.diagnostics import Diagnostics
from obs.model import Metrics, Series, Stage
from obs.numbers import num
from obs.numbers import step as step_text
from obs.sanitize import FLOAT_LIMIT
from obs.vocabulary import is_stage_key

STEP_KEYS: tuple[str, ...] = ("step", "global_step", "iteration", "current_steps", "_step", "steps")
STAGE_KEYS: tuple[str, ...] = ("stage", "phase")  # the usual names; any text column obs.vocabulary.is_stage_key
SAME_STEP_POLICIES: tuple[str, ...] = ("mean", "last", "all")
MAX_NONFINITE_KEYS = 8  # keys named one by one in the non-finite warnings; the rest counted
POINTS_PER_CHUNK = 4000  # min/max-decimated points kept per chunk and series (plots use ~2,000)
EXACT_TAIL = 2000  # the last points of every series stay exact: final-window values need them
TIME_STAMP_KEYS = ("timestamp", "_timestamp", "wall_time", "walltime", "time")
PAUSE_FACTOR = 20  # a pause this many times the median gap between time-stamped records ...
PAUSE_MIN_SECONDS = 600  # ... and at least this long is said on the page
SPILL_POINTS = 250_000  # a column longer than this is reduced as it grows (see ReducedColumn)


class StagePoints:
    """Every (step, stage label) point of a log, in arrival order, at 12 bytes a point.

    All of them are kept: a point that arrives out of step order (a restart, a late record) can
    fall inside an earlier run of one label, so no point can be dropped as it arrives without
    changing the spans (the fast path's property test found exactly that). Two million steps
    cost 24 MB.
    """

    def __init__(self) -> None:
        self.steps = array("d")
        self.codes = array("I")
        self.names: dict[str, int] = {}

    def add(self, step: float, label: str) -> None:
        self.steps.append(step)
        self.codes.append(self.names.setdefault(label, len(self.names)))

    def change_points(self) -> list[tuple[float, str]]:
        steps = np.frombuffer(self.steps, dtype=np.float64) if self.steps else np.empty(0)
        codes = np.frombuffer(self.codes, dtype=np.uint32) if self.codes else np.empty(0, dtype=np.uint32)
        return stage_change_points(steps, codes, list(self.names))


def stage_change_points(steps: np.ndarray, codes: np.ndarray, names: Sequence[str]) -> list[tuple[float, str]]:
    """The (step, label) points, in step order (ties in arrival order), where the label changes,
    plus the last one: `stages_from_points` builds the same spans from these as from every point,
    and a 2M-step log does not turn into 2M Python tuples. `codes` index into `names`."""
    if steps.size == 0:
        return []
    order = np.argsort(steps, kind="stable")
    st, cd = steps[order], codes[order]
    change = np.ones(st.size, dtype=bool)
    change[1:] = cd[1:] != cd[:-1]
    change[-1] = True
    return [(float(st[i]), names[int(cd[i])]) for i in np.flatnonzero(change)]


class ReducedColumn:
    """One series of a very long log: min/max-decimated chunks plus the exact last points.

    Chunks must arrive in order of strictly increasing steps. Memory stays bounded whatever the
    log's length, every bucket's extremes and the last EXACT_TAIL points are exact, and `logged`
    counts the real points.
    """

    def __init__(self) -> None:
        self.steps: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.tail_steps = np.empty(0)
        self.tail_values = np.empty(0)
        self.logged = 0

    @property
    def last_step(self) -> float:
        return float(self.tail_steps[-1]) if self.tail_steps.size else -math.inf

    def add(self, steps: np.ndarray, values: np.ndarray) -> None:
        keep = ~np.isnan(values)
        st, va = steps[keep], values[keep]
        if st.size == 0:
            return
        self.logged += int(st.size)
        ds, dv = decimate(st, va, POINTS_PER_CHUNK)
        self.steps.append(ds)
        self.values.append(dv)
        self.tail_steps = np.concatenate((self.tail_steps, st))[-EXACT_TAIL:]
        self.tail_values = np.concatenate((self.tail_values, va))[-EXACT_TAIL:]

    def finish(self) -> Series:
        steps = np.concatenate([*self.steps, self.tail_steps])
        values = np.concatenate([*self.values, self.tail_values])
        uniq, first = np.unique(steps, return_index=True)  # steps are strictly increasing: no real duplicates
        return Series(uniq, values[first], self.logged)


# more repeats of the first record at the first step than this are how the logger writes (a step key that
# stays 0, one row per batch of an epoch), not restarts; it also bounds what is noted while deciding
MAX_FRESH_STARTS = 100


@dataclass
class _KeyNotes:
    """Per key, for one diagnostic each: non-finite values and steps logged more than once."""

    nonfinite: int = 0
    first_bad: tuple[float, float, int | None] | None = None  # step, value, line
    repeat_line: int | None = None  # first line whose step is not after the key's previous one
    last_step: float = -math.inf
    attempt: int = 1  # restarts met so far + 1


@dataclass
class _FreshStarts:
    """A record at the log's first step with the first record's keys, met again before the log moves past that
    step: the process started again (its first attempt stopped before a second step), so the counter never goes
    back and the per-key check cannot see it. Decided once the second step's records are read: a logger that
    writes several records with those keys at every step (one per rank, per batch) is not restarting; nor is one
    whose obs.yaml says `same_step: all` (every record at a step is a value to keep)."""

    first_step: float | None = None
    first_keys: frozenset[str] = frozenset()
    phase: int = 0  # 0: still at the first step; 1: at the second step; 2: decided
    second_step: float = 0.0
    second_seen: int = 0  # records at the second step with the first record's keys
    marks: list[tuple[int | None, dict[str, int]]] = field(default_factory=list)  # (line, column lengths then)


@dataclass
class _Column:
    steps: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)


@dataclass
class SeriesBuilder:
    """Accumulates records; `finish()` returns the Metrics.

    `step_key=None` means: use the first key of STEP_KEYS found in the first record, or the
    record index when none is present (and say so through `step_source`).
    """

    path: Path
    diags: Diagnostics
    step_key: str | None = None
    ignore_keys: frozenset[str] = frozenset()
    _columns: dict[str, _Column] = field(default_factory=dict)
    _stage_points: StagePoints = field(default_factory=StagePoints)
    _string_keys: dict[str, tuple[int, int]] = field(default_factory=dict)
    _step_source: str | None = None
    _index: int = 0
    _missing_step_lines: list[int] = field(default_factory=list)
    spill_points: int = SPILL_POINTS
    same_step: str = "mean"
    key_path: Callable[[str], Path] | None = None  # a file per key (MLflow): where a key's diagnostic points
    _reduced: dict[str, ReducedColumn] = field(default_factory=dict)
    _late_points: int = 0
    _duplicates: int = 0
    _stage_key: str | None = None
    _notes: dict[str, _KeyNotes] = field(default_factory=dict)
    _huge_values: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (first line, count)
    _huge_steps: list[int] = field(default_factory=list)
    # obs.yaml `restarts`: keep the `last` attempt at each step, or each attempt `apart`; `off` for a format whose
    # points carry their step in any order (MLflow: a point logged for an earlier step is not a restart)
    restarts: str = "last"
    _restarts: dict[tuple[int | None, float, float], int] = field(default_factory=dict)  # (line, from, to) -> attempt
    _stamps: list[tuple[float, float, int | None]] = field(default_factory=list)  # (wall time, step, line)
    _fresh: _FreshStarts = field(default_factory=_FreshStarts)
    _attempt_base: int = 1  # the attempt a key first met now belongs to (after confirmed fresh starts)

    def add(self, record: dict[str, Any], line: int | None = None) -> None:
        if self._step_source is None:
            self._step_source = self._choose_step_key(record)
        key = self._step_source
        step: float
        if key == "line index":
            step = float(self._index)
        else:
            raw = record.get(key)
            if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
                self._missing_step_lines.append(line if line is not None else self._index + 1)
                self._index += 1
                return
            step = float(raw)
            if not -FLOAT_LIMIT <= step <= FLOAT_LIMIT:
                self._huge_steps.append(line if line is not None else self._index + 1)
                self._index += 1
                return
        self._index += 1
        self._clock(record, step, line)
        if self._fresh.phase < 2 and self.restarts != "off" and self.same_step != "all":
            self._watch_fresh_start(record, key, step, line)
        for name, value in _flatten(record):
            if name == key or name in self.ignore_keys:
                continue
            if isinstance(value, str) and self._is_stage(name):
                self._add_stage_point(step, value)
                continue
            self._add_value(name, value, step, line)

    def _is_stage(self, name: str) -> bool:
        """The first text column named like a stage is the stage labels; another one stays text."""
        if self._stage_key is None and is_stage_key(name):
            self._stage_key = name
        return name == self._stage_key

    def _add_stage_point(self, step: float, label: str) -> None:
        self._stage_points.add(step, label)

    def _spill(self, name: str, col: _Column) -> None:
        """Move a long column's points into its reduced form, so memory stays bounded."""
        series, dups = _to_series(col, "last" if self.same_step == "all" else self.same_step)  # no band kept
        reduced = self._reduced.setdefault(name, ReducedColumn())
        late = series.steps <= reduced.last_step
        self._late_points += int(late.sum())
        self._duplicates = max(self._duplicates, dups)
        reduced.add(series.steps[~late], series.values[~late])
        col.steps.clear()
        col.values.clear()

    def _choose_step_key(self, record: dict[str, Any]) -> str:
        if self.step_key:
            return self.step_key
        for candidate in STEP_KEYS:
            if candidate in record:
                return candidate
        return "line index"

    def _add_value(self, name: str, value: Any, step: float, line: int | None) -> None:
        if value is None:
            return
        if isinstance(value, bool):
            value = float(value)
        if isinstance(value, int | float):
            number = float(value)
            huge = not -FLOAT_LIMIT <= number <= FLOAT_LIMIT and math.isfinite(number)
            if huge:  # kept as logged (a finite number stays finite on the page), and said once per key (finish)
                first, count = self._huge_values.get(name, (line or 0, 0))
                self._huge_values[name] = (first, count + 1)
            col = self._columns.get(name)
            if col is None:
                col = self._columns[name] = _Column()
            notes = self._notes.get(name)
            if notes is None:
                notes = self._notes[name] = _KeyNotes(attempt=self._attempt_base)
            if not math.isfinite(number) and not huge:
                notes.nonfinite += 1
                if notes.first_bad is None:
                    notes.first_bad = (step, number, line)
            restart = step < notes.last_step and self.restarts != "off" and name not in self._reduced
            if restart:  # the counter went back: a restarted process appending to the log
                self._restart(name, col, notes, step, line)
            elif step <= notes.last_step and notes.repeat_line is None:
                notes.repeat_line = line
            notes.last_step = step
            col.steps.append(step)
            col.values.append(number)
            if len(col.steps) >= self.spill_points:
                self._spill(name, col)
            return
        if isinstance(value, str):
            parsed = _parse_number_string(value)
            if parsed is not None:
                self._add_value(name, parsed, step, line)
                return
            first, count = self._string_keys.get(name, (line or 0, 0))
            self._string_keys[name] = (first, count + 1)

    def _clock(self, record: dict[str, Any], step: float, line: int | None) -> None:
        """The record's wall-clock time stamp, when it has one (`timestamp`, `_timestamp`, `wall_time`, `time` in
        seconds since 1970): a long pause between two records is a stop and a resume, said on the page."""
        for key in TIME_STAMP_KEYS:
            value = record.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and 1e9 <= value <= 1e10:
                if not self._stamps or value >= self._stamps[-1][0]:
                    self._stamps.append((float(value), step, line))
                return

    def _report_pause(self) -> str | None:
        """The longest pause between two time-stamped records, when it is at least PAUSE_FACTOR times the median
        gap and PAUSE_MIN_SECONDS long."""
        if len(self._stamps) < 3:
            return None
        times = np.array([t for t, _, _ in self._stamps])
        gaps = np.diff(times)
        i = int(np.argmax(gaps))
        typical = float(np.median(gaps))
        if gaps[i] < PAUSE_MIN_SECONDS or gaps[i] < PAUSE_FACTOR * max(typical, 1.0):
            return None
        (_, before, _), (_, after, line) = self._stamps[i], self._stamps[i + 1]
        hours = gaps[i] / 3600
        span = f"{hours:.1f} h" if hours >= 1 else f"{gaps[i] / 60:.0f} min"
        text = (
            f"the log pauses for {span} between step {step_text(before)} and step {step_text(after)}"
            f"{f' (line {line})' if line else ''}, against a median {typical:.3g} s between records: the run was "
            "probably stopped and resumed there"
        )
        self.diags.info(self.path, text, line)
        return text

    def _restart(self, name: str, col: _Column, notes: _KeyNotes, step: float, line: int | None) -> None:
        """A key's step went back (a resumed or restarted process appending to the same log): keep the last
        attempt's points from `step` on (as TensorBoard does), or move the earlier attempt to `attempt k/<key>`."""
        self._restarts.setdefault((line, notes.last_step, step), notes.attempt + 1)
        if self.restarts == "apart":
            moved = self._columns.setdefault(f"attempt {notes.attempt}/{name}", _Column())
            moved.steps += col.steps
            moved.values += col.values
            col.steps.clear()
            col.values.clear()
        else:
            keep = [i for i, st in enumerate(col.steps) if st < step]
            col.steps[:] = [col.steps[i] for i in keep]
            col.values[:] = [col.values[i] for i in keep]
        notes.attempt += 1

    def _watch_fresh_start(self, record: dict[str, Any], key: str, step: float, line: int | None) -> None:
        """Note each repeat of the first record at the first step; decide when the second step's records end."""
        fs = self._fresh
        keys = frozenset(n for n, _ in _flatten(record) if n != key and n not in self.ignore_keys)
        if fs.first_step is None:
            fs.first_step, fs.first_keys = step, keys
            return
        if fs.phase == 0:
            if step == fs.first_step:
                if keys == fs.first_keys:
                    fs.marks.append((line, {n: len(c.steps) for n, c in self._columns.items()}))
                    if len(fs.marks) > MAX_FRESH_STARTS:  # that many at one step: the logger's habit, not restarts
                        self._decide_fresh_starts(False)
                return
            if step < fs.first_step:
                self._decide_fresh_starts(False)
                return
            fs.phase, fs.second_step = 1, step
        if step == fs.second_step:
            fs.second_seen += keys == fs.first_keys
            if fs.second_seen > 1:  # several such records at every step: the logger's habit, not a restart
                self._decide_fresh_starts(False)
            return
        self._decide_fresh_starts(True)

    def _decide_fresh_starts(self, confirmed: bool) -> None:
        """Split the first step's points into attempts at each noted repeat, as `_restart` does for a step going
        back: the `last` attempt that logged a key at the first step keeps it, or each attempt `apart`."""
        fs = self._fresh
        fs.phase = 2
        if not confirmed or not fs.marks or self._reduced:
            return
        count = len(fs.marks)
        mark_lines = {line for line, _ in fs.marks}
        for name, col in list(self._columns.items()):
            starts = [0] + [lengths.get(name, 0) for _, lengths in fs.marks]  # where each attempt's points begin
            ends = [*starts[1:], len(col.steps)]
            if self.restarts == "apart":
                for k in range(count):
                    if ends[k] > starts[k]:
                        moved = self._columns.setdefault(f"attempt {k + 1}/{name}", _Column())
                        moved.steps += col.steps[starts[k] : ends[k]]
                        moved.values += col.values[starts[k] : ends[k]]
                cut = starts[-1]
            else:
                cut = max(
                    (starts[k] for k in range(1, count + 1) if fs.first_step in col.steps[starts[k] : ends[k]]),
                    default=0,
                )
            del col.steps[:cut], col.values[:cut]
            notes = self._notes[name]
            notes.attempt += count
            if notes.repeat_line in mark_lines:
                notes.repeat_line = None
        for k, (line, _) in enumerate(fs.marks, 2):
            assert fs.first_step is not None
            self._restarts.setdefault((line, fs.first_step, fs.first_step), k)
        self._attempt_base += count

    def _report_restarts(self) -> str | None:
        if not self._restarts:
            return None
        by_attempt: dict[int, tuple[int | None, float, float]] = {}
        for (line, back_from, to), attempt in sorted(self._restarts.items(), key=lambda kv: kv[1]):
            by_attempt.setdefault(attempt, (line, back_from, to))
        points = [by_attempt[k] for k in sorted(by_attempt)]
        shown = "; ".join(
            f"{'line ' + str(line) + ': ' if line else ''}"
            + (
                f"from step {step_text(a)} back to {step_text(b)}"
                if a != b
                else f"step {step_text(a)} again, like the first record"
            )
            for line, a, b in points[:3]
        ) + (f" (+{len(points) - 3} more)" if len(points) > 3 else "")
        attempts = max(by_attempt)
        if self.restarts == "apart":
            what = "each earlier attempt is its own series, 'attempt k/<name>'; the plain names hold the last attempt"
        else:
            what = (
                "at each step the last attempt's value was kept (points an earlier attempt logged at steps a later "
                "one logged again were replaced); obs.yaml `restarts: apart` keeps each attempt as its own series"
            )
        back, again = any(a != b for _, a, b in points), any(a == b for _, a, b in points)
        how = "the step counter goes back" + (" or starts again" if again else "") if back else "the log starts again"
        text = f"{how} ({shown}): {attempts} attempts in one log, not averaged: {what}"
        first = next((line for line, _, _ in points if line), None)
        self.diags.info(self.path, text, first)  # how the file was read, said on the page: not a problem in it
        return text

    def finish(self) -> Metrics:
        source = self._step_source or "step"
        if self._fresh.phase < 2:  # the log ended at its first or second step
            self._decide_fresh_starts(self._fresh.phase == 1 and self._fresh.second_seen <= 1)
        if self._missing_step_lines:
            first = self._missing_step_lines[0]
            self.diags.warning(
                self.path,
                f"{len(self._missing_step_lines)} record(s) have no numeric '{source}' "
                f"(first at line {first}); they were skipped",
                first,
            )
        if self._huge_steps:
            first = self._huge_steps[0]
            self.diags.warning(
                self.path,
                f"{len(self._huge_steps)} record(s) have a '{source}' beyond ±{FLOAT_LIMIT:g}, too large to be a step "
                f"(first at line {first}); they were skipped",
                first,
            )
        for name, (first, count) in sorted(self._huge_values.items()):
            self.diags.info(
                self.path,
                f"'{name}' has {count} value(s) beyond ±{FLOAT_LIMIT:g} (first at line {first}); they are kept as "
                "logged, and its final-window mean and sd are computed scaled, so they do not overflow",
                first or None,
            )
        for name, (first, count) in sorted(self._string_keys.items()):
            if name in self._columns:
                self.diags.warning(
                    self.path,
                    f"'{name}' holds text in {count} record(s) where numbers were expected "
                    f"(first at line {first}); those values were skipped",
                    first,
                )
        series: dict[str, Series] = {}
        duplicates = self._duplicates
        repeated: dict[str, int] = {}
        for name in sorted(self._columns):
            col = self._columns[name]
            if name in self._reduced:
                if col.steps:
                    self._spill(name, col)
                series[name] = self._reduced[name].finish()
                continue
            s, dups = _to_series(col, self.same_step)
            duplicates = max(duplicates, dups)
            if dups:
                repeated[name] = dups
            series[name] = s
        if self._late_points:
            self.diags.warning(
                self.path,
                f"{self._late_points} point(s) repeat or go back to steps logged more than "
                f"{self.spill_points:,} points earlier; this log is too long to keep whole, so the "
                "first value of each was kept",
            )
        dropped: list[str] = []
        restarted = self._report_restarts()
        if restarted:
            dropped.append(restarted)
        paused = self._report_pause()
        if paused:
            dropped.append(paused)
        if repeated:
            dropped.append(self._report_repeats(repeated, series))
        elif duplicates:  # only in the reduced columns of a very long log
            self.diags.warning(
                self.path, f"{duplicates} step(s) are logged more than once; the last value of each was kept"
            )
        dropped += self._report_nonfinite()
        if self._string_keys:
            mixed = sorted(k for k in self._string_keys if k in self._columns)
            if mixed:
                dropped.append(f"text values in numeric columns were skipped: {', '.join(mixed)}")
        if self._missing_step_lines:
            dropped.append(f"{len(self._missing_step_lines)} record(s) without a numeric '{source}' were skipped")
        return Metrics(
            series=series,
            stages=stages_from_points(self._stage_points.change_points()),
            step_source=source,
            source_file=str(self.path),
            stage_key=self._stage_key,
            dropped=dropped,
        )

    def _report_repeats(self, repeated: dict[str, int], series: dict[str, Series]) -> str:
        """One diagnostic for the keys logged more than once at a step, saying what was done with them."""
        names = sorted(repeated)
        steps = max(repeated.values())
        lines = [n.repeat_line for n in (self._notes.get(k) for k in names) if n and n.repeat_line]
        first = min(lines) if lines else None
        where = f" (first at line {first})" if first else ""
        shown = ", ".join(names[:MAX_NONFINITE_KEYS]) + (
            f" and {len(names) - MAX_NONFINITE_KEYS} more" if len(names) > MAX_NONFINITE_KEYS else ""
        )
        done = {
            "mean": "each step shows the mean of its values, with their min–max band and count",
            "last": "the last value of each step was kept (obs.yaml same_step: last)",
            "all": "every value is kept (obs.yaml same_step: all)",
        }[self.same_step if self.same_step in SAME_STEP_POLICIES else "mean"]
        at = self.path
        if self.key_path is not None:
            lines_of = {k: n.repeat_line for k in names if (n := self._notes.get(k)) is not None}
            at = self.key_path(next((k for k in names if lines_of.get(k) == first), names[0]))
        self.diags.info(at, f"{shown}: up to {steps} step(s) logged more than once{where}; {done}", first)
        return f"{shown}: several values at one step ({steps} step(s) at most per key); {done}"

    def _report_nonfinite(self) -> list[str]:
        """One warning per key holding NaN or ±∞, naming the first one's step and line; they stay in the data."""
        bad = sorted((k, n) for k, n in self._notes.items() if n.nonfinite)
        out = []
        for name, notes in bad[:MAX_NONFINITE_KEYS]:
            assert notes.first_bad is not None
            at_step, value, line = notes.first_bad
            where = f"line {line}, " if line else ""
            more = f" ({notes.nonfinite} in all)" if notes.nonfinite > 1 else ""
            self.diags.warning(
                self.key_path(name) if self.key_path is not None else self.path,
                f"'{name}' is {num(value)} at step {step_text(at_step)} ({where}first non-finite value){more}; "
                "kept and drawn as a marker",
                line,
            )
            first_at = f"first {num(value)} at step {step_text(at_step)}"
            out.append(f"{name}: {notes.nonfinite} non-finite value(s), {first_at}")
        if len(bad) > MAX_NONFINITE_KEYS:
            rest = len(bad) - MAX_NONFINITE_KEYS
            self.diags.warning(self.path, f"{rest} more key(s) hold NaN or infinite values; kept and drawn as markers")
            out.append(f"{rest} more key(s) with non-finite values")
        return out


def build_metrics(
    records: Iterable[tuple[int | None, dict[str, Any]]],
    path: Path,
    diags: Diagnostics,
    step_key: str | None = None,
    same_step: str = "mean",
    restarts: str = "last",
) -> Metrics:
    builder = SeriesBuilder(path, diags, step_key=step_key, same_step=same_step, restarts=restarts)
    for line, record in records:
        builder.add(record, line)
    return builder.finish()


def _flatten(record: dict[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, f"{name}/")
        else:
            yield name, value


_NUMBER_WORDS = {
    "nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "-inf": -math.inf,
    "infinity": math.inf,
    "-infinity": -math.inf,
}


def _parse_number_string(text: str) -> float | None:
    """Some loggers write numbers as strings ("0.25", "NaN"); accept those, nothing else."""
    t = text.strip().lower()
    if t in _NUMBER_WORDS:
        return _NUMBER_WORDS[t]
    try:
        return float(t) if t and (t[0].isdigit() or t[0] in "+-.") else None
    except ValueError:
        return None


def _to_series(col: _Column, same_step: str) -> tuple[Series, int]:
    return to_series(np.asarray(col.steps, dtype=np.float64), np.asarray(col.values, dtype=np.float64), same_step)


def to_series(steps: np.ndarray, values: np.ndarray, same_step: str = "last") -> tuple[Series, int]:
    """Sort by step (stable); several values at one step by `same_step`. Also return how many steps repeat.

    `last` keeps the last value logged at a step; `all` keeps every value; `mean` keeps the mean of
    the finite values (a step with none keeps its first non-finite value), with their min, max and
    the count of values in `lo`, `hi`, `n`.
    """
    if not (steps.size > 1 and np.any(np.diff(steps) <= 0)):
        return Series(steps, values), 0
    order = np.argsort(steps, kind="stable")
    steps, values = steps[order], values[order]
    uniq, start, counts = np.unique(steps, return_index=True, return_counts=True)
    dups = int(np.count_nonzero(counts > 1))
    if dups == 0 or same_step == "all":
        return Series(steps, values), dups
    if same_step != "mean":
        return Series(uniq, values[start + counts - 1]), dups  # the last occurrence of each step
    finite = np.isfinite(values)
    safe = np.where(finite, values, 0.0)
    n_finite = np.add.reduceat(finite.astype(np.int64), start)
    sums = np.add.reduceat(safe, start)
    lo = np.minimum.reduceat(np.where(finite, values, np.inf), start)
    hi = np.maximum.reduceat(np.where(finite, values, -np.inf), start)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n_finite > 0, sums / np.maximum(n_finite, 1), values[start])
    lo = np.where(n_finite > 0, lo, np.nan)
    hi = np.where(n_finite > 0, hi, np.nan)
    return Series(uniq, mean, None, lo, hi, counts.astype(np.int64)), dups


def stages_from_points(points: list[tuple[float, str]]) -> list[Stage]:
    """(step, stage name) points -> stage spans; a change of name starts a new stage."""
    stages: list[Stage] = []
    for step, name in sorted(points, key=lambda p: p[0]):
        if stages and stages[-1].name == name:
            stages[-1].end = step
        else:
            if stages:
                stages[-1].end = max(stages[-1].end, step)
            stages.append(Stage(name=name, start=step, end=step))
    return stages
