"""JSON output that other tools can parse: strict JSON, sorted keys, no NaN or Infinity.

Non-finite numbers become null (JSON has no NaN); pages show them as NaN/∞ themselves.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import orjson


def jsonable(value: Any) -> Any:
    to_list = getattr(value, "to_json_list", None)  # obs.probetable.IdList: turned into strings only here
    if to_list is not None:
        return to_list()
    if type(value).__name__ == "LazySummary":  # obs.lazysummary: never written as its repr by the fallback below
        raise TypeError("a lazy run summary is written through its to_json()")
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return [jsonable(v) for v in items]
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, str | int | bool):
        return value
    return str(value)


def dumps(value: Any) -> bytes:
    """Indented (diff-friendly), sorted, strict JSON: orjson writes NaN and infinities as null."""
    return (
        orjson.dumps(
            value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=jsonable
        )
        + b"\n"
    )


def dumps_compact(value: Any) -> bytes:
    """Sorted, strict JSON on one line: for machine-read files where size matters more than diffs."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=jsonable) + b"\n"
