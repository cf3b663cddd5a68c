"""The plan's second dependency (issue 27): a rung of a spec waits for the spec's frozen baseline too, so its
build can test it against the frozen baseline's digest; no cycle is made through it."""

from __future__ import annotations

from pathlib import Path

from obs.adapters.base import RunSource
from obs.diagnostics import Diagnostics
from obs.plan import Identity, plan_build


def _plan(ids: dict[str, str | None], spec_of: dict[str, str], frozen: dict[str, str | None]) -> dict[str, object]:
    sources = [RunSource("native", Path(f"/x/{i}"), (), spec=spec_of.get(i)) for i in ids]

    def peek(path: Path, read: object) -> Identity:
        return path.parent.name, ids[path.parent.name]

    plan = plan_build(sources, Diagnostics(root=Path("/x")), peek=peek, frozen=frozen)
    return {"order": [p.id for p in plan.runs], "frozen": {p.id: p.frozen for p in plan.runs}, "plan": plan}


def test_a_rung_depends_on_its_frozen_baseline() -> None:
    # r0 is the frozen baseline; r3's parent is r2; names sort so that r3 comes before r0 without the dependency
    ids = {"a-r3": "a-r2", "a-r2": "z-r0", "z-r0": None}
    got = _plan(ids, {k: "s" for k in ids}, {"s": "z-r0"})
    assert got["frozen"] == {"z-r0": None, "a-r2": None, "a-r3": "z-r0"}  # r2's parent is the frozen baseline
    order = got["order"]
    assert isinstance(order, list) and order.index("z-r0") < order.index("a-r3")
    ids = {"b-r3": None, "z-r0": None}  # no parent at all: still waits for the frozen baseline
    got = _plan(ids, {k: "s" for k in ids}, {"s": "z-r0"})
    assert got["order"] == ["z-r0", "b-r3"] and got["frozen"] == {"z-r0": None, "b-r3": "z-r0"}


def test_no_cycle_through_the_frozen_baseline() -> None:
    # the frozen baseline r0 was itself compared with r3 (baseline: r3): r3 cannot wait for r0
    ids = {"r0": "r3", "r3": None}
    got = _plan(ids, {k: "s" for k in ids}, {"s": "r0"})
    assert got["frozen"] == {"r3": None, "r0": None} and got["order"] == ["r3", "r0"]


def test_runs_outside_the_spec_have_no_frozen_dependency() -> None:
    ids = {"r1": None, "other": None}
    got = _plan(ids, {"r1": "s"}, {"s": "r1"})
    assert got["frozen"] == {"other": None, "r1": None}


def test_a_baseline_is_its_runs_own_id() -> None:
    """A run's `baseline` is the baseline run's id string itself, not an equal string peeked from its run.yaml:
    the plan is held to the end of a build (~6 MB at 100,000 runs, issue 32)."""
    ids = {"base-run": None, "next-run": "".join(["base", "-run"]), "c": "gone-run"}
    got = _plan(ids, {}, {})
    plan = got["plan"]
    by_id = {p.id: p for p in plan.runs}  # type: ignore[attr-defined]
    assert by_id["next-run"].baseline == "base-run" and by_id["next-run"].baseline is by_id["base-run"].id
    assert by_id["c"].baseline == "gone-run"  # not a run here: kept as written (and warned about)
