"""What a campaign says about pooled episode counts when its primary metric is read over a declared window
(issue 33): the runs' summaries count completions only behind the primary metric's final window, so a step window
(`window: 250-299`) has no count of its episodes. Before, the reason read "no completions logged by ..." of runs
that had logged them, and the litmus's min_completions said they "did not log completions"."""

from __future__ import annotations

from pathlib import Path

from obs.analysis.tiers import campaign_tiers
from obs.model import Campaign, Condition, MetricDecl, MetricWindow
from obs.sitemodel import WindowSummary
from obs.vocabulary import lower_is_better
from summaries import make_summary

VALUES = {"base": [0.40, 0.42, 0.41], "cand": [0.47, 0.45, 0.46]}


def _campaign(window: MetricWindow) -> Campaign:
    return Campaign(
        id="c",
        source_dir=Path("."),
        conditions=[Condition("base"), Condition("cand")],
        baseline_condition="base",
        primary_metric="correct_rate",
        metrics=[MetricDecl("correct_rate", "primary", window=window)],
        metrics_from="campaign.yaml",
        evidence={"min_completions": 1000.0},
    )


def _runs(completions: float | None) -> list:
    return [
        make_summary(
            id=f"{c}_s{i}",
            campaign="c",
            condition=c,
            seed=i,
            finals={"correct_rate": v},
            completions=completions,
            campaign_final={"mean": v, "sd": None, "n": 10, "last_step": 299.0, "points": 300},
            metric_windows={"correct_rate": WindowSummary(v, None, 50, 299.0, 300)},
        )
        for c, vals in VALUES.items()
        for i, v in enumerate(vals)
    ]


def _candidate(window: MetricWindow, completions: float | None):  # type: ignore[no-untyped-def]
    tiers = campaign_tiers(_campaign(window), _runs(completions), lambda n: not lower_is_better(n))
    assert tiers.primary is not None
    return tiers.primary.stats.candidates[0]


def test_a_step_window_says_the_completions_are_not_counted_over_it() -> None:
    k = _candidate(MetricWindow("steps", lo=250.0, hi=299.0), 38400.0)
    assert k.pooled is None
    reason = k.pooled_absent or ""
    assert "no completions logged" not in reason
    assert reason.startswith("the runs logged completions, but obs counts the episodes only behind")
    assert "the last 10 logged values" in reason and "correct_rate over its declared window" in reason
    # the evidence minimum sums what each run logged, whatever the window: 3 × 38,400 per condition
    check = next(c for c in k.litmus.evidence if c.key == "min_completions")
    assert check.met and check.observed == 3 * 38400.0 and "did not log" not in check.detail


def test_runs_that_logged_no_completions_are_named() -> None:
    k = _candidate(MetricWindow("steps", lo=250.0, hi=299.0), None)
    assert (k.pooled_absent or "").startswith("no completions logged by cand_s0, cand_s1, cand_s2, base_s0")
    check = next(c for c in k.litmus.evidence if c.key == "min_completions")
    assert not check.met and "did not log completions" in check.detail


def test_the_final_window_still_pools() -> None:
    k = _candidate(MetricWindow(), 38400.0)
    assert k.pooled is not None and k.pooled_absent is None
    # 38,400 completions over 300 points, 10 in the window: 1,280 a run, estimated pro rata
    assert k.pooled.total == 3 * 1280 and k.pooled.estimated
