"""A campaign's sentences write its numbers in the units of the tables beside them (issue 33): a rate's means in
percent and its differences, intervals and minimum effect in percentage points (not `+8.333e−04`), a metric that
is not a rate as plain signed numbers. Expected numbers come from scipy's Welch test on the same seed values."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from scipy import stats as sps

from obs.analysis.campaign import RunFinal, Units, campaign_stats, reads_in_pp
from obs.model import Campaign, Condition

BASE = [0.7692, 0.8003, 0.7511]
CAND = [0.7704, 0.8012, 0.7515]  # a difference of 8.3e-04: the litmus line read `+8.333e−04`


def _campaign(metric: str, **kw: object) -> Campaign:
    return Campaign(
        id="t",
        source_dir=Path("."),
        conditions=[Condition("base"), Condition("cand")],
        baseline_condition="base",
        primary_metric=metric,
        **kw,  # type: ignore[arg-type]
    )


def _runs(scale: float = 1.0) -> list[RunFinal]:
    return [
        RunFinal(run_id=f"{c}-{i}", condition=c, seed=i, final=v * scale)
        for c, vals in (("base", BASE), ("cand", CAND))
        for i, v in enumerate(vals)
    ]


def _pp(x: float) -> str:
    return f"{100 * x:+.1f}".replace("-", "−")


def test_a_rate_reads_in_pp_in_the_sentence_and_the_litmus() -> None:
    stats = campaign_stats(_campaign("eval/accuracy", min_effect=0.02), _runs())
    assert stats.in_pp
    k = stats.candidates[0]
    ref = sps.ttest_ind(CAND, BASE, equal_var=False)
    ci = ref.confidence_interval(0.95)
    delta = float(np.mean(CAND) - np.mean(BASE))
    interval = f"{_pp(ci.low)} to {_pp(ci.high)} pp"
    assert f"a difference of {_pp(delta)} pp" in k.sentence
    assert f"95% Welch CI {interval}" in k.sentence
    assert f"averaged {100 * np.mean(CAND):.1f}% eval/accuracy" in k.sentence
    details = " | ".join(t.detail for t in k.litmus.thresholds)
    assert f"observed change {_pp(delta)} pp (higher is better: an improvement)" in details
    assert f"the 95% CI's lower bound {_pp(ci.low)} pp is not at or above +2.0 pp, the minimum effect" in details
    assert f"95% CI {interval}" in details
    for text in (k.sentence, details, k.power_for):
        assert "e−0" not in text and "e-0" not in text, text


def test_a_metric_that_is_not_a_rate_keeps_its_numbers() -> None:
    stats = campaign_stats(_campaign("mean_reward"), _runs())
    assert not stats.in_pp
    k = stats.candidates[0]
    assert not re.search(r"\d pp\b|\d%", k.sentence.replace("95%", "").replace("80%", "")), k.sentence
    assert "+8.333e−04" in k.sentence  # the number as num() writes it, where no pp applies
    # named as a rate but not a proportion: not read in pp either
    assert not campaign_stats(_campaign("accuracy"), _runs(scale=100.0)).in_pp


def test_reads_in_pp_and_units() -> None:
    assert reads_in_pp("correct_rate", [0.1, 0.9]) and not reads_in_pp("correct_rate", [])
    assert not reads_in_pp("correct_rate", [0.1, 1.2]) and not reads_in_pp("loss", [0.1])
    u = Units(True)
    assert (u.value(0.825), u.diff(-0.031), u.size(0.03), u.interval(-0.061, 0.063)) == (
        "82.5%",
        "−3.1 pp",
        "3.0 pp",
        "−6.1 to +6.3 pp",
    )
    assert Units(False).interval(-0.061, 0.063) == "−0.061 to +0.063"
    assert Units(True).diff(float("nan")) == "n/a"


def test_the_sample_efficiency_table_of_a_rate_reads_in_percent(demo_site: Path) -> None:
    """data-scaling's eval/accuracy: its statistics read in % and pp, so does its sample-efficiency table."""
    import json

    from bs4 import BeautifulSoup

    view = json.loads((demo_site / "campaigns/data-scaling/analysis.json").read_text())["sample_efficiency"]
    soup = BeautifulSoup((demo_site / "campaigns/data-scaling/index.html").read_text(encoding="utf-8"), "html.parser")
    table = " ".join(soup.select_one("#sample-efficiency table").get_text(" ").split())
    assert "in percent" in table
    for line in view["lines"]:
        for p in line["points"]:
            low, high = p["ci"]
            assert f"{100 * p['mean']:.1f}% [{100 * low:.1f}%, {100 * high:.1f}%] n = {p['n']}" in table


def _litmus_line(stats: object) -> str:
    return next(t.detail for t in stats.candidates[0].litmus.thresholds if t.key == "min_effect")  # type: ignore[attr-defined]


def test_the_litmus_line_follows_the_metrics_direction() -> None:
    """ "observed improvement −48.7 pp" read backwards: the line prints the difference as it is (candidate −
    baseline, as the tables do) and says from its sign and the metric's direction what it means, the interval's
    bound on the worse side against the signed minimum effect. Numbers from scipy's Welch test."""
    base, worse = [0.80, 0.82, 0.79], [0.31, 0.33, 0.35]  # the candidate loses about 48.7 pp of a rate
    runs = [
        RunFinal(run_id=f"{c}-{i}", condition=c, seed=i, final=v)
        for c, vals in (("base", base), ("cand", worse))
        for i, v in enumerate(vals)
    ]
    ref = sps.ttest_ind(worse, base, equal_var=False)
    ci = ref.confidence_interval(0.95)
    delta = float(np.mean(worse) - np.mean(base))
    # higher is better: the drop is a worsening, the lower bound is far from the +1.0 pp it must reach
    up = _litmus_line(campaign_stats(_campaign("eval/accuracy", min_effect=0.01), runs))
    assert up == (
        f"observed change {_pp(delta)} pp (higher is better: a worsening); the 95% CI's lower bound "
        f"{_pp(ci.low)} pp is not at or above +1.0 pp, the minimum effect (the bound must reach it)"
    ), up
    # lower is better (an error rate): the same drop is an improvement, its upper bound below −1.0 pp meets it
    down_stats = campaign_stats(_campaign("eval/error_rate", min_effect=0.01, higher_is_better=False), runs)
    down = _litmus_line(down_stats)
    assert down == (
        f"observed change {_pp(delta)} pp (lower is better: an improvement); the 95% CI's upper bound "
        f"{_pp(ci.high)} pp is at or below −1.0 pp, the minimum effect (the bound must reach it)"
    ), down
    assert next(t for t in down_stats.candidates[0].litmus.thresholds if t.key == "min_effect").met
    assert "improvement −" not in up + down and "reduction" not in up + down
    # no minimum effect: the bound need only be on the better side of 0
    bare = _litmus_line(campaign_stats(_campaign("eval/error_rate", higher_is_better=False), runs))
    assert bare.endswith(f"so the 95% CI's upper bound need only be below 0: it is {_pp(ci.high)} pp"), bare


def test_change_words() -> None:
    from obs.analysis.campaign import change_words

    assert change_words(0.1, True) == "higher is better: an improvement"
    assert change_words(0.1, False) == "lower is better: a worsening"
    assert change_words(-0.1, False) == "lower is better: an improvement"
    assert change_words(0.0, True) == "higher is better: no change"
