"""Plan a build: give every run its id and page slug, and order runs so baselines come first.

A run's page compares it with its baseline, so the baseline's digest must exist before the run is
analysed; a rung of a spec ladder is also compared with the spec's frozen baseline (`frozen`), so that
run's digest must exist too. Runs are streamed in dependency order and a digest is kept only while a run still
needs it. Ids are peeked from run.yaml without reading any log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from obs.adapters.base import RunSource
from obs.diagnostics import Diagnostics
from obs.safepaths import shown_name
from obs.safeyaml import MAX_YAML_BYTES, YamlError, peek_yaml
from obs.sanitize import clean_text
from obs.urls import unique_slugs


class _LetGo:
    """What a planned run's `source` is once the build has let it go (`release_sources`): reading it is a mistake,
    said where it happens rather than answered with a default."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"a run's source is let go after the run pass; {name!r} was read after it")

    def __repr__(self) -> str:
        return "<source let go>"


LET_GO = cast("RunSource", _LetGo())


@dataclass(slots=True)
class PlannedRun:
    """A run the build will make: its source, id, slug and the runs it reads. Slotted: the plan holds one per run
    to the end of a build (~40 bytes fewer each than with a `__dict__`, issue 32)."""

    source: RunSource
    id: str
    slug: str
    baseline: str | None
    # the spec's frozen baseline, when the run is a rung of a spec and it is neither the run nor its baseline
    # (then the rung's page tests it against the frozen baseline too: analysis.report)
    frozen: str | None = None

    @property
    def needs(self) -> tuple[str, ...]:
        """The runs whose digests this run's analysis reads: its baseline, then the frozen baseline."""
        return tuple(r for r in (self.baseline, self.frozen) if r)


@dataclass
class BuildPlan:
    runs: list[PlannedRun] = field(default_factory=list)  # in processing order
    slugs: dict[str, str] = field(default_factory=dict)  # id -> slug
    dependants: dict[str, int] = field(default_factory=dict)  # id -> number of runs using it as baseline

    def slug(self, run_id: str | None) -> str | None:
        return self.slugs.get(run_id) if run_id else None


Identity = tuple[str | None, str | None]
Peek = Callable[[Path, Callable[[Path], Identity]], Identity]


def read_identity(run_yaml: Path) -> Identity:
    """(id, baseline) as written in a run.yaml, None for what is absent or unreadable.

    Only two top-level strings are needed, so this uses libyaml when PyYAML has it (10x faster
    than the pure-Python parser; aliases cannot hurt here since nothing walks the data). The full,
    bounded, line-aware reading happens when the run itself is loaded.
    """
    try:
        data = peek_yaml(run_yaml)
    except YamlError:
        data = _scan_identity(run_yaml)  # the loading names the file and line; the id written there is kept
    except OSError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    run_id = baseline = None
    if isinstance(data.get("id"), str | int) and not isinstance(data.get("id"), bool) and str(data["id"]):
        run_id = clean_text(str(data["id"]))  # as the full reading of run.yaml will have it
    if isinstance(data.get("baseline"), str | int) and not isinstance(data.get("baseline"), bool):
        baseline = clean_text(str(data["baseline"]))
    return run_id, baseline


# `id: value` or `baseline: value` at the start of a line, the value plain or quoted, a comment allowed after it
_TOP_FIELD = re.compile(
    r"""^(id|baseline):[ \t]+(?:'([^'\n]*)'|"([^"\\\n]*)"|([^\s#'"][^#\n]*?))[ \t]*(?:#.*)?$""", re.M
)


def _scan_identity(run_yaml: Path) -> dict[str, str]:
    """The top-level `id:` and `baseline:` lines of a run.yaml that is not valid YAML (the first of each)."""
    try:
        text = run_yaml.read_bytes()[:MAX_YAML_BYTES].decode("utf-8-sig", "replace")
    except OSError:
        return {}
    found: dict[str, str] = {}
    for m in _TOP_FIELD.finditer(text):
        found.setdefault(m.group(1), next(g for g in m.groups()[1:] if g is not None))
    return found


def _id_line(run_yaml: Path) -> int | None:
    """The line of the top-level `id:` of a run.yaml (for a message), None when there is none."""
    try:
        text = run_yaml.read_bytes()[:MAX_YAML_BYTES].decode("utf-8-sig", "replace")
    except OSError:
        return None
    m = re.search(r"^id:", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _direct_peek(
    run_yaml: Path, read: Callable[[Path], tuple[str | None, str | None]]
) -> tuple[str | None, str | None]:
    return read(run_yaml)


def peek_identity(source: RunSource, peek: Peek = _direct_peek) -> tuple[str, str | None]:
    """The run's id and baseline, from run.yaml when there is one (cheap: no logs are read)."""
    run_id: str = source.default_id or shown_name(source.path.name)
    run_yaml = source.path / "run.yaml"
    if source.adapter == "native" or run_yaml.is_file():
        peeked_id, baseline = peek(run_yaml, read_identity)
        return peeked_id or run_id, baseline
    return run_id, None


def plan_build(
    sources: list[RunSource],
    diags: Diagnostics,
    peek: Peek = _direct_peek,
    frozen: Mapping[str, str | None] | None = None,
) -> BuildPlan:
    """Ids, slugs and the processing order; `frozen` maps a spec id to its frozen baseline's run id."""
    plan = BuildPlan()
    seen: dict[str, Path] = {}
    accepted: list[tuple[str, str | None, RunSource]] = []
    identities = sorted(((peek_identity(s, peek), s) for s in sources), key=lambda t: (t[0][0], str(t[1].path)))
    for (run_id, baseline), source in identities:
        if run_id in seen:
            run_yaml = source.path / "run.yaml"
            native = source.adapter == "native"
            diags.error(
                run_yaml if native else source.path,
                f"run id '{run_id}' is already used by {diags.shown(seen[run_id])}; this run was skipped",
                _id_line(run_yaml) if native else None,
            )
            continue
        seen[run_id] = source.path
        accepted.append((run_id, baseline, source))
    plan.slugs = unique_slugs(run_id for run_id, _, _ in accepted)
    items = [PlannedRun(source, run_id, plan.slugs[run_id], baseline) for run_id, baseline, source in accepted]

    by_id = {p.id: p for p in items}
    for p in items:
        if p.baseline and p.baseline not in by_id:
            where = p.source.path / "run.yaml"
            diags.warning(where, f"baseline '{p.baseline}' is not a run in this source tree; no comparison is made")
        if p.baseline == p.id:
            diags.warning(p.source.path / "run.yaml", "a run cannot be its own baseline")
            p.baseline = None
        elif p.baseline in by_id:
            p.baseline = by_id[p.baseline].id  # the baseline's own id, not an equal string (~6 MB at 100,000 runs)
    plan.runs = _dependency_order(items, by_id, diags)
    if frozen:
        _add_frozen(plan.runs, by_id, frozen)
        plan.runs = _dependency_order(plan.runs, by_id, diags)  # acyclic: _add_frozen adds no cycle
    for p in plan.runs:
        if p.baseline in by_id:
            plan.dependants[p.baseline] = plan.dependants.get(p.baseline, 0) + 1
    return plan


def _dependency_order(items: list[PlannedRun], by_id: dict[str, PlannedRun], diags: Diagnostics) -> list[PlannedRun]:
    """Baselines before the runs compared with them; a cycle is reported and broken."""
    order: list[PlannedRun] = []
    state: dict[str, int] = {}  # 1 = visiting, 2 = done

    def visit(p: PlannedRun, chain: list[str]) -> None:
        if state.get(p.id) == 2:
            return
        if state.get(p.id) == 1:
            diags.warning(
                p.source.path / "run.yaml",
                f"baseline cycle: {' -> '.join([*chain, p.id])}; the comparison of {chain[-1]} is skipped",
            )
            by_id[chain[-1]].baseline = None
            return
        state[p.id] = 1
        if p.baseline and p.baseline in by_id:
            visit(by_id[p.baseline], [*chain, p.id])
        if p.frozen and p.frozen in by_id:
            visit(by_id[p.frozen], [*chain, p.id])
        state[p.id] = 2
        order.append(p)

    for p in items:
        visit(p, [])
    return order


def _add_frozen(runs: list[PlannedRun], by_id: dict[str, PlannedRun], frozen: Mapping[str, str | None]) -> None:
    """Give each rung its spec's frozen baseline as a second dependency, unless the frozen baseline itself
    depends on the rung (a ladder whose frozen baseline was compared with one of its later rungs): that
    dependency is left out and the rung's page says the frozen baseline was not read."""
    for p in runs:
        target = frozen.get(p.source.spec) if p.source.spec else None
        if not target or target not in by_id or target in (p.id, p.baseline):
            continue
        if p.id not in _reachable(by_id[target], by_id):
            p.frozen = target


def _reachable(start: PlannedRun, by_id: dict[str, PlannedRun]) -> set[str]:
    """Every run `start` depends on, through baselines and frozen baselines."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        p = stack.pop()
        for dep in p.needs:
            if dep in by_id and dep not in seen:
                seen.add(dep)
                stack.append(by_id[dep])
    return seen
