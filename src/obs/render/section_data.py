"""What some run-page sections show beyond the report's own fields: the data table and its token
budget, and every logged series at a glance. Each is a section's `context` in `obs.render.sections`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from obs.analysis.report import RunReport
from obs.numbers import num
from obs.render.sparkline import sparkline_points


def series_table(report: RunReport) -> list[dict[str, Any]]:
    metrics = report.run.metrics
    rows: list[dict[str, Any]] = []
    if metrics is None:
        return rows
    for name, s in sorted(metrics.series.items()):
        extremes = s.extremes()
        bad = s.nonfinite()
        notes = []
        if bad:
            first_step, first_value = bad[0]
            notes.append(f"{len(bad)} non-finite ({num(first_value)} first at step {num(first_step)})")
        if s.aggregated and s.n is not None:
            notes.append(f"{int(np.count_nonzero(s.n > 1))} steps with several values (mean shown)")
        rows.append(
            {
                "name": name,
                "spark": sparkline_points(s),
                "points": s.count if s.n is None else int(s.n.sum()),
                "first": float(s.values[0]) if len(s) else None,
                "min": extremes[0] if extremes else None,
                "max": extremes[1] if extremes else None,
                "last": float(s.values[-1]) if len(s) else None,
                "last_step": float(s.steps[-1]) if len(s) else None,
                "note": "; ".join(notes),
            }
        )
    return rows


DATA_FIELDS: list[tuple[str, str, str]] = [
    ("dataset_version", "Dataset version", ""),
    ("rows", "Rows", "training examples"),
    ("packed_tokens", "Packed tokens", "tokens per epoch after packing"),
    ("effective_epochs", "Effective epochs", "passes over the data"),
    ("tokenizer_size", "Tokenizer size", "vocabulary"),
    ("reserved_tokens", "Reserved tokens", "explicit structural tokens"),
    ("context", "Context", "tokens"),
    ("p95_prompt_tokens", "p95 prompt tokens", ""),
    ("p95_output_tokens", "p95 output tokens", ""),
    ("decode_budget", "Decode budget", "max new tokens at probe time"),
]


def data_rows(report: RunReport) -> tuple[list[tuple[str, str, str]], dict[str, str] | None]:
    """The data section's table, known fields first, and the token-budget verdict."""
    data = report.run.data
    rows: list[tuple[str, str, str]] = []
    known = {k for k, _, _ in DATA_FIELDS}
    for key, label, note in DATA_FIELDS:
        if key in data:
            rows.append((label, _show(data[key]), note))
    for key in sorted(set(data) - known):
        rows.append((key, _show(data[key]), ""))
    return rows, budget_check(data)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def budget_check(data: dict[str, Any]) -> dict[str, str] | None:
    """Does the p95 prompt + output fit in 80% of the context, and the output in the decode budget?"""
    ctx, p_in, p_out = (_number(data.get(k)) for k in ("context", "p95_prompt_tokens", "p95_output_tokens"))
    if ctx is None or p_in is None or p_out is None or ctx <= 0:
        return None
    total = p_in + p_out
    used = total / ctx
    if used > 1:
        cls, text = (
            "bad",
            f"p95 prompt + output ({num(total)} tokens) exceeds the context ({num(ctx)}): long cases are cut off.",
        )
    elif used > 0.8:
        cls, text = (
            "warn",
            (
                f"p95 prompt + output uses {used:.0%} of the context: above the 80% budget guideline, "
                "truncation is likely on the longest cases."
            ),
        )
    else:
        cls, text = (
            "good",
            (
                f"p95 prompt + output uses {used:.0%} of the context ({num(total)} of {num(ctx)} tokens): "
                "within the 80% budget guideline."
            ),
        )
    decode = _number(data.get("decode_budget"))
    if decode is not None and decode < p_out:
        cls, text = (
            "bad",
            text
            + (f" The decode budget ({num(decode)}) is below the p95 output length ({num(p_out)}): expect truncation."),
        )
    return {"cls": cls, "text": text}


def _show(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return num(value)
    return str(value)
