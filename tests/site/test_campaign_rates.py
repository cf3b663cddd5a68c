"""A campaign whose metric is a rate reads as a run page reads one: means in percent, differences and
their intervals in percentage points (not `+0.04622 [-0.006059, 0.09851]`); a metric that is not a rate
keeps its own units. Expected values come from the runs' metrics.jsonl and scipy's Welch test."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from bs4 import BeautifulSoup
from scipy import stats

PAGE = "campaigns/sepa-campaign/index.html"
WINDOW = 20  # campaign.yaml: final_window


def finals(source: Path, condition: str, metric: str) -> list[float]:
    out = []
    for seed in (1, 2, 3):
        lines = (source / "sepa-campaign" / f"{condition}_s{seed}" / "metrics.jsonl").read_text().splitlines()
        values = [json.loads(x)[metric] for x in lines if x.strip() and metric in json.loads(x)]
        out.append(float(np.mean(values[-WINDOW:])))
    return out


def text(tag: object) -> str:
    return " ".join(tag.get_text(" ").split())  # type: ignore[attr-defined]


def signed_pp(x: float) -> str:
    return f"{100 * x:+.1f} pp".replace("-", "−")


def plain_pp(x: float) -> str:
    return f"{100 * x:.1f}".replace("-", "−")


def test_a_rate_campaign_shows_percent_and_pp(demo_site: Path, demo_source: Path) -> None:
    soup = BeautifulSoup((demo_site / PAGE).read_text(encoding="utf-8"), "html.parser")
    base = finals(demo_source, "grpo+none", "correct_rate")
    cand = finals(demo_source, "maxrl+gtpo_sepa", "correct_rate")
    welch = stats.ttest_ind(cand, base, equal_var=False)
    low, high = welch.confidence_interval(0.95)
    delta = float(np.mean(cand) - np.mean(base))
    tile = soup.select("#verdict .tile")[1]
    assert signed_pp(delta) in text(tile.select_one(".big"))
    assert f"95% CI [{plain_pp(low)}, {plain_pp(high)}] pp" in text(tile)
    block = soup.select_one('[data-metric-block="correct_rate"]')
    cells = [text(td) for td in block.select('td[data-label="Δ mean"]')]
    assert f"{signed_pp(delta)} [{plain_pp(low)}, {plain_pp(high)}] pp" in " | ".join(cells)
    means = [text(td) for td in block.select('td[data-label="Mean ± sd"]')]
    assert means[0].startswith(f"{100 * np.mean(base):.1f}% ± {100 * np.std(base, ddof=1):.1f} pp")
    finals_row = soup.select("#finals tbody tr")[0]
    assert text(finals_row.select('td[data-label="Mean ± sd"]')[0]) == (
        f"{100 * np.mean(base):.1f}% ± {100 * np.std(base, ddof=1):.1f} pp"
    )


def test_a_metric_that_is_not_a_rate_keeps_its_units(demo_site: Path) -> None:
    soup = BeautifulSoup((demo_site / PAGE).read_text(encoding="utf-8"), "html.parser")
    for metric in ("completions", "loss", "mean_reward"):
        block = soup.select_one(f'[data-metric-block="{metric}"]')
        shown = " ".join(text(td) for td in block.select("td"))
        assert " pp" not in shown and "%" not in shown, (metric, shown)


def md_cells(md: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header row starts with `header`, each as its cells (unescaped)."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip().replace("\\", "") for c in line.strip("|").split(" | ")])
    return rows


def test_the_pr_summary_says_the_pages_numbers(demo_site: Path, demo_source: Path) -> None:
    """`obs summary --campaign` writes a rate's means, differences and intervals as the campaign page does (issue
    33): the same decision (CampaignStats.in_pp) and the same helpers, so both say the scipy numbers, in % and pp;
    a metric that is not a rate keeps its own units in both."""
    from obs.publish.summary_md import summarize_campaign

    md = summarize_campaign(demo_source, "sepa-campaign")
    soup = BeautifulSoup((demo_site / PAGE).read_text(encoding="utf-8"), "html.parser")
    base = finals(demo_source, "grpo+none", "correct_rate")
    cand = finals(demo_source, "maxrl+gtpo_sepa", "correct_rate")
    welch = stats.ttest_ind(cand, base, equal_var=False)
    low, high = welch.confidence_interval(0.95)
    delta = float(np.mean(cand) - np.mean(base))
    rows = {r[0]: r for r in md_cells(md, "Condition")}
    sepa = rows["MaxRL + GTPO + SEPA"]
    assert sepa[3] == signed_pp(delta) and sepa[4] == f"[{plain_pp(low)}, {plain_pp(high)}] pp", sepa
    baseline = rows["GRPO, no token transform"]
    assert baseline[2] == f"{100 * np.mean(base):.1f}% ± {100 * np.std(base, ddof=1):.1f} pp", baseline
    # every candidate's Δ and CI in the summary's two tables is the text of the page's cell for that metric
    page_rows = {
        text(tr.select_one("th")): text(tr.select_one('td[data-label="Δ mean"]'))
        for tr in soup.select("#campaign-stats tbody tr")
    }
    for label, row in rows.items():
        if row[3] not in ("baseline", "—"):
            assert page_rows[label].lstrip("▲▼ ") == f"{row[3]} {row[4]}", (label, page_rows[label], row)
    tested = md_cells(md, "Metric")
    assert {r[0].strip("`") for r in tested} == {"correct_rate", "mean_reward"}
    for metric, _tier, label, dm, ci, *_ in tested:
        block = soup.select_one(f'[data-metric-block="{metric.strip("`")}"]')
        cells = {
            text(tr.select_one("th")): text(tr.select_one('td[data-label="Δ mean"]'))
            for tr in block.select("tbody tr")
            if tr.select_one('td[data-label="Δ mean"]')
        }
        assert any(shown.endswith(f"{dm} {ci}") for name, shown in cells.items() if label in name), (metric, cells)
        assert (" pp" in dm) == (metric == "`correct_rate`"), (metric, dm)
