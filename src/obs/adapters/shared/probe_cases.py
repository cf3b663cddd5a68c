"""Per-item results as probe cases: one record as a `ProbeCase` (its render path checked), or a batch of plain
records as columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from obs.diagnostics import Diagnostics
from obs.jsontypes import type_name
from obs.model import ProbeCase
from obs.probetable import CaseText, PlainCases
from obs.safepaths import is_inside, real

IMAGE_SUFFIXES = (".svg", ".png", ".jpg", ".jpeg", ".webp", ".gif")
CASE_TEXT_FIELDS = ("prompt", "expected", "actual", "note", "split", "family", "failure_class", "render")


def probe_case_from_record(
    rec: dict[str, Any], line: int, path: Path, run_dir: Path, root: Path, diags: Diagnostics
) -> ProbeCase | None:
    """One record of a native probe file (or a record another format shaped like one) as a case.

    Booleans are the checks, the text fields of the contract are kept as text, everything else is
    kept with the case; a render path must name an image inside the run folder.
    """
    raw_id = rec.get("id")
    if raw_id is None or isinstance(raw_id, bool | dict | list):
        head = (
            "case has no 'id' (a text or a number)"
            if raw_id is None
            else f"'id' must be a text or a number, not {type_name(raw_id)}"
        )
        diags.tally("warning", path, head, "skipped", line)
        return None
    checks: dict[str, bool] = {}
    extra: dict[str, Any] = {}
    texts: dict[str, str | None] = {}
    sample = rec.get("sample")
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 0):
        diags.tally(
            "warning",
            path,
            "'sample' must be a whole number >= 0 (the sample index)",
            f"ignored (the first: {str(sample)[:40]})",
            line,
        )
        sample = None
    selected = rec.get("selected")
    for key, value in rec.items():
        if key == "id" or (key == "sample" and sample is not None) or (key == "selected" and isinstance(value, bool)):
            continue
        if isinstance(value, bool):
            checks[key] = value
        elif key in CASE_TEXT_FIELDS:
            if value is None:
                texts[key] = None
            elif isinstance(value, str | int | float):
                texts[key] = str(value)
            else:
                diags.tally("warning", path, f"'{key}' must be text, not {type_name(value)}", "ignored", line)
        else:
            extra[key] = value
    render = texts.pop("render", None)
    if render is not None:
        render = checked_render(render, run_dir, root, path, line, diags)
    return ProbeCase(
        id=str(raw_id),
        checks=checks,
        render=render,
        extra=extra,
        line=line,
        sample=sample,
        selected=selected if isinstance(selected, bool) else None,
        **texts,  # the contract's other text fields (CASE_TEXT_FIELDS), each a field of ProbeCase
    )


def checked_render(render: str, run_dir: Path, root: Path, path: Path, line: int, diags: Diagnostics) -> str | None:
    """A render path must be a relative image file inside the run folder."""
    if render.startswith(("/", "\\")) or ":" in render:
        diags.warning(path, f"render '{render[:80]}' must be a relative path inside the run folder; ignored", line)
        return None
    target = run_dir / render
    if not is_inside(target, run_dir) or not is_inside(target, root):
        diags.warning(path, f"render '{render[:80]}' points outside the run folder; ignored", line)
        return None
    if target.suffix.lower() not in IMAGE_SUFFIXES:
        diags.warning(path, f"render '{render[:80]}' is not an image ({', '.join(IMAGE_SUFFIXES)}); ignored", line)
        return None
    if not target.is_file():
        diags.warning(path, f"render '{render[:80]}' does not exist", line)
        return None
    return real(target).relative_to(real(run_dir)).as_posix()


def is_sample_list(value: Any) -> bool:
    """A check given as a list of results, one per sample (HumanEval style): booleans, or 0 and 1."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, bool) or (isinstance(v, int | float) and v in (0, 1)) for v in value)
    )


def sample_lists(case: ProbeCase) -> dict[str, list[bool]]:
    """The checks of a record given as lists of booleans (one per sample: HumanEval-style results)."""
    return {key: [bool(v) for v in value] for key, value in case.extra.items() if is_sample_list(value)}


# Keys whose records take the general path: a sample index or a selector's pick (samples of one case), and a
# render path (checked against the file system).
_SPECIAL_KEYS = frozenset({"sample", "selected", "render"})
_PLAIN_TEXT_KEYS = frozenset(CASE_TEXT_FIELDS) - {"render"}


def plain_cases(records: list[tuple[int, dict[str, Any]]]) -> PlainCases | None:
    """The records as the columns `probe_case_from_record` and `ProbeCollector.add` would make of them, or
    None when one record needs their general path (see `ProbeCollector.add_native`).

    A plain record has a text id, booleans (its checks), text or null in the contract's text fields and any
    other values (kept with the case), and none of the keys or values that make a record special: a sample
    index, a selector's pick, a render path, a list of per-sample results, a text field that is not text.
    Most probe files hold only such records; building the table from columns costs a little over half of
    building it one `ProbeCase` at a time (a 1,500-case probe of the bench corpus: ~20 ms instead of ~36 ms).
    """
    out = PlainCases()
    for line, rec in records:
        case_id = rec.get("id")
        if type(case_id) is not str:
            return None
        checks: dict[str, bool] = {}
        texts: dict[str, str | None] = {}
        extra: dict[str, Any] = {}
        for key, value in rec.items():
            if value is True or value is False:
                if key in _SPECIAL_KEYS:
                    return None
                checks[key] = value
            elif key in _PLAIN_TEXT_KEYS:
                if value is not None and type(value) is not str:
                    return None
                texts[key] = value
            elif key in _SPECIAL_KEYS or is_sample_list(value):
                return None
            elif key != "id":
                extra[key] = value
        out.ids.append(case_id)
        out.checks.append(checks)
        out.split.append(texts.get("split"))
        out.family.append(texts.get("family"))
        out.failure_class.append(texts.get("failure_class"))
        get = texts.get
        out.texts.append(CaseText(get("prompt"), get("expected"), get("actual"), None, get("note"), extra))
        out.lines.append(line)
    return out
