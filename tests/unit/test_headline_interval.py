"""The headline tile's own interval (`analysis.headline.level_interval`), checked against scipy: the
Wilson score interval of a probe rate, and value ± z·stderr for an evaluation result whose file gives
a stderr; no interval where the source does not honestly give one."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from obs.analysis.compare import Headline
from obs.analysis.headline import NORMAL_975, level_interval
from obs.render.format import level_ci


def test_the_normal_quantile_is_scipys() -> None:
    assert pytest.approx(stats.norm.ppf(0.975), abs=1e-12) == NORMAL_975


@pytest.mark.parametrize(("k", "n"), [(101, 160), (0, 12), (50, 50), (37, 50), (1, 3)])
def test_a_probe_rate_gets_the_wilson_interval_over_its_cases(k: int, n: int) -> None:
    lv = level_interval(Headline("exact", k / n, "probe", "", n=n))
    assert lv is not None
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    assert (lv.low, lv.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert lv.method == f"Wilson score, {n} cases" and lv.stderr is None


def test_an_eval_result_with_a_stderr_gets_a_normal_interval_cut_to_a_rate() -> None:
    lv = level_interval(Headline("mmlu/acc", 0.524, "eval", "", stderr=0.004))
    assert lv is not None and lv.stderr == 0.004
    z = stats.norm.ppf(0.975)
    assert (lv.low, lv.high) == pytest.approx((0.524 - z * 0.004, 0.524 + z * 0.004))
    assert lv.method == "± 1.96 × the file's stderr"
    assert level_ci(lv, Headline("mmlu/acc", 0.524, "eval", "")) == "95% CI [51.6, 53.2]%"
    near_one = level_interval(Headline("arc/acc", 0.99, "eval", "", stderr=0.01))
    assert near_one is not None and near_one.high == 1.0 and near_one.method.endswith("cut at 0 and 100%")
    score = level_interval(Headline("bleu", 31.2, "eval", "", stderr=0.5))  # not a rate: never cut
    assert score is not None and score.high == pytest.approx(31.2 + z * 0.5)
    assert level_ci(score, Headline("bleu", 31.2, "eval", "")) == "95% CI [30.22, 32.18]"


@pytest.mark.parametrize(
    "headline",
    [
        Headline("loss", 0.31, "series", "", n=10),  # a final window: neighbouring steps, not draws
        Headline("mmlu/acc", 0.5, "eval", ""),  # the file gave no stderr
        Headline("mmlu/acc", 0.5, "eval", "", stderr=0.0),
        Headline("mmlu/acc", 0.5, "eval", "", stderr=math.nan),
        Headline("exact", None, "probe", "", n=10),
        Headline("exact", 0.5, "probe", "", n=0),
        Headline("score", 3.0, "summary", ""),
    ],
)
def test_no_interval_where_the_source_gives_none(headline: Headline) -> None:
    assert level_interval(headline) is None
