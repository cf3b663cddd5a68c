"""Issue 16, "unrelated runs ranked together": the leaderboard's headline sort and the sweeps page rank
runs only within a comparable set, and a run kept apart says why."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from obs.analysis.ranking import rank_groups
from obs.analysis.sweeps import sweep_groups
from obs.sitemodel import RunSummary
from summaries import make_summary


def _s(run_id: str, metric: str, comparable: str, probe_key: str | None = None) -> RunSummary:
    return make_summary(id=run_id, headline={"metric": metric}, comparable=comparable, probe_key=probe_key)


def test_same_metric_in_two_families_is_two_sets() -> None:
    dpo = _s("trainer_state/a/dpo", "loss", comparable="loss · trainer_state/a")
    stt = _s("mlruns/1/x", "loss", comparable="loss · MLflow experiment stt")
    groups = rank_groups([dpo, stt])
    assert groups[dpo.id].group != groups[stt.id].group
    assert {label for label, _ in sweep_groups([dpo, stt], "metric")} == {
        "loss · trainer_state/a",
        "loss · MLflow experiment stt",
    }


def test_a_running_smaller_probe_is_marked_and_kept_apart() -> None:
    done = [_s(f"r{i}", "exact", comparable="exact · spec s", probe_key="160 cases") for i in range(3)]
    live = replace(_s("live", "exact", comparable="exact · spec s", probe_key="50 cases"), status="running")
    groups = rank_groups([*done, live])
    assert len({groups[s.id].group for s in done}) == 1
    assert groups["live"].group != groups["r0"].group
    assert groups["live"].marks == (
        "ranked apart: 50 cases; the others: 160 cases",
        "running: not ranked with finished runs",
    )


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["loss · a", "loss · b", "acc · a"]),
            st.sampled_from([None, "50 cases", "160 cases"]),
            st.sampled_from(["finished", "running", "unknown"]),
        ),
        max_size=12,
    )
)
def test_property_two_runs_share_a_group_only_when_set_probe_and_finishedness_agree(rows: list) -> None:
    runs = [replace(_s(f"r{i}", c.split(" · ")[0], c, p), status=st_) for i, (c, p, st_) in enumerate(rows)]
    groups = rank_groups(runs)
    for a in runs:
        for b in runs:
            if groups[a.id].group == groups[b.id].group:
                assert a.comparable == b.comparable
                assert (a.status == "running") == (b.status == "running")
            if a.comparable != b.comparable:
                assert groups[a.id].group != groups[b.id].group
        if groups[a.id].group != a.comparable:
            assert groups[a.id].marks  # kept apart: always said
