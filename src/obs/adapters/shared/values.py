"""Values written loosely by foreign formats: durations as text ('0:13:09'), numbers nested in mappings,
timestamps in seconds or milliseconds, scalars written as text (MLflow params)."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterator
from typing import Any, TypeGuard

from obs.vocabulary import names_a_duration

_DURATION = re.compile(r"^\s*(?:(\d+)\s+days?,\s*)?(\d+):(\d{1,2}):(\d{1,2}(?:\.\d+)?)\s*$")


def parse_duration(text: str) -> float | None:
    """'0:13:09' or '3 days, 17:51:32' (Python's timedelta text) as seconds, else None.

    Which columns hold durations is `duration_value`'s call: '14:23:05' can be a wall-clock time.
    """
    m = _DURATION.match(text)
    if m is None:
        return None
    days, hours, minutes, seconds = m.groups()
    return int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def duration_value(key: str, text: str) -> float | None:
    """Seconds, when `key` names a duration (`elapsed_time`, obs.vocabulary) or the text says days ('3 days, 1:02:03').

    A wall-clock `time` column ('14:23:05') looks like a duration and is not one: it stays text.
    """
    seconds = parse_duration(text)
    if seconds is None:
        return None
    return seconds if names_a_duration(key) or "day" in text else None


def is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def numeric_leaves(data: Any, prefix: str = "", skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, float]]:
    """Every number inside nested mappings, named with `/` (W&B summaries, lm-eval sections)."""
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        name = f"{prefix}{key}"
        if key in skip:
            continue
        if isinstance(value, dict):
            if "_type" in value:  # W&B histograms, tables, images: not a number
                continue
            yield from numeric_leaves(value, f"{name}/", skip)
        elif is_number(value) or isinstance(value, bool):
            yield name, float(value)


def iso_from_timestamp(value: Any) -> str | None:
    """Seconds or milliseconds since the epoch as an ISO 8601 UTC string (None when not a time)."""
    if not is_number(value) or not math.isfinite(value) or value <= 0:
        return None
    seconds = float(value)
    if seconds > 1e11:  # milliseconds
        seconds /= 1000.0
    try:
        stamp = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return stamp.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def typed_scalar(text: str) -> Any:
    """A value written as text (MLflow params): int, float, bool or None when it clearly is one."""
    t = text.strip()
    if t in ("None", "null"):
        return None
    if t in ("True", "true"):
        return True
    if t in ("False", "false"):
        return False
    if re.fullmatch(r"[+-]?\d+", t):
        try:
            return int(t)
        except ValueError:
            return t
    if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan|Infinity|NaN)", t):
        try:
            return float(t)
        except ValueError:
            return t
    return text
