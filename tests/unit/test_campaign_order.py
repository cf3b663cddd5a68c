"""One order of a campaign's conditions everywhere (issue 33): the baseline first, then campaign.yaml's order;
within a pair the candidate is named first and the difference is candidate − baseline, in the statistics, the
candidate cards, the tiers' tables, the matrix and `obs summary --campaign`. Before, a card listed the two
conditions in campaign.yaml's order (the baseline first or second depending on where it was listed) and the
matrix said `baseline − candidate` when the baseline came later."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup
from scipy import stats as sps

from obs.analysis.campaign_view import campaign_view, condition_names
from obs.model import Campaign, Condition, MetricDecl
from obs.publish.summary_md import summarize_campaign
from obs.vocabulary import lower_is_better
from summaries import make_summary

VALUES = {"a": [0.44, 0.45, 0.43, 0.46], "base": [0.40, 0.42, 0.41, 0.39], "b": [0.50, 0.52, 0.49, 0.51]}


def _campaign() -> Campaign:
    # the baseline listed in the middle: neither first nor last
    return Campaign(
        id="c",
        source_dir=Path("."),
        conditions=[Condition("a"), Condition("base"), Condition("b")],
        baseline_condition="base",
        primary_metric="acc",
        metrics=[MetricDecl("acc", "primary")],
        metrics_from="campaign.yaml",
    )


def _runs() -> list:
    return [
        make_summary(id=f"{c}_s{i}", campaign="c", condition=c, seed=i, finals={"acc": v})
        for c, vals in VALUES.items()
        for i, v in enumerate(vals)
    ]


def test_the_baseline_comes_first_and_every_pair_with_it_is_candidate_minus_baseline() -> None:
    view = campaign_view(_campaign(), _runs(), lambda n: not lower_is_better(n))
    assert [r.name for r in view.table] == ["base", "a", "b"] == condition_names(_campaign(), _runs())
    assert [c.name for c in view.stats.conditions] == ["base", "a", "b"]
    assert [k.condition for k in view.stats.candidates] == ["a", "b"]
    matrix = view.tiers.primary.matrix if view.tiers.primary else []
    assert [(c.b, c.a) for c in matrix] == [("a", "base"), ("b", "base"), ("b", "a")]
    for k in view.stats.candidates:
        cell = next(c for c in matrix if c.b == k.condition and c.a == "base")
        expected = float(np.mean(VALUES[k.condition]) - np.mean(VALUES["base"]))
        assert cell.delta == pytest.approx(expected) == pytest.approx(k.delta)
        res = sps.ttest_ind(VALUES[k.condition], VALUES["base"], equal_var=False)
        assert cell.p_value == pytest.approx(res.pvalue, rel=1e-9) == pytest.approx(k.p_value, rel=1e-9)


def test_a_campaign_naming_no_conditions_puts_its_baseline_first() -> None:
    c = Campaign(id="c", source_dir=Path("."), baseline_condition="m", primary_metric="acc")
    assert c.condition_order(["z", "m", "a", None, "a"]) == ["m", "a", "z"]
    assert Campaign(id="c", source_dir=Path(".")).condition_order(["z", "a"]) == ["a", "z"]


def test_cards_matrix_and_summary_in_one_order(demo_site: Path, demo_source: Path) -> None:
    """data-scaling lists its baseline (sft-16k) third: every card still reads candidate then baseline."""
    soup = BeautifulSoup((demo_site / "campaigns/data-scaling/index.html").read_text(encoding="utf-8"), "html.parser")
    cards = soup.select("#significance article.finding")
    assert len(cards) == 5
    for card in cards:
        candidate = card.h3.get_text(" ", strip=True).split(" vs ")[0]
        shown = [dt.get_text(" ", strip=True) for dt in card.select("dt") if dt.get_text().startswith("Final values")]
        assert shown == [f"Final values · {candidate}", "Final values · sft-16k"], shown
    pairs = [th.get_text(" ", strip=True) for th in soup.select('[data-matrix="eval/accuracy"] tbody th')]
    assert not any(p.startswith("sft-16k −") for p in pairs), pairs
    assert sum(p.endswith("− sft-16k") for p in pairs) == 5
    rows = [th.get_text(" ", strip=True) for th in soup.select("#finals tbody th")]
    assert rows[0].startswith("sft-16k") and "baseline" in rows[0]
    md = summarize_campaign(demo_source, "data-scaling")
    table = [ln for ln in md.splitlines() if ln.startswith("| ") and "sft" in ln]
    assert table[0].startswith("| sft\\-16k |") and "| baseline |" in table[0], table  # Markdown-escaped
