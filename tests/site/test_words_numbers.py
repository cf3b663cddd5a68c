"""Words made from the numbers they describe: no sentence on a built page, a PR comment or `obs gate`
contradicts the numbers beside it (tests/wordcheck.py says what a contradiction is).

Checked on the demo and on tests/comparisons.py's tree (every comparison shape), and the checker is
shown to catch each kind of contradiction on hand-written sentences (the ones the issue found on the
first version's pages).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from obs.cli import main
from obs.publish.summary_md import summarize_campaign, summarize_run
from wordcheck import check_markdown, check_site, check_statement


@pytest.mark.parametrize(
    ("text", "outcome", "rule"),
    [
        ("the 95 % CI of the change includes zero: 95% CI [+5.0, +40.0] pp", None, "include 0"),
        ("the data are compatible with no difference (95% CI 0.02 to 0.09)", None, "include 0"),
        ("A significant improvement, p = 0.1 (3 vs 3 seeds)", None, "p >= alpha"),
        ("−3.1 pp [0.1, 0.1] · p = 0.5", None, "equal bounds"),
        ("95% CI [−12.5, −12.5] pp", None, "equal bounds"),
        ("McNemar p = < 0.001", None, '"p = <"'),
        ('The claim "A beats B by ≥ 0 pp" is supported: the CI\'s lower bound is −2.3 pp.', None, "supported"),
        ("−9.7 pp 95% CI [−10.7, −8.7] pp · p = 0.2", "significant_degradation", "p >= alpha"),
        ("+4.1 pp [−1.0, +9.2] · p = 0.03", "statistically_significant_improvement", "includes 0"),
        ("+4.1 pp 95% CI [+1.0, +9.2] pp · p = 0.03", "insufficient_statistical_evidence", "excludes 0"),
        ("−9.7 pp 95% CI [−10.7, −8.7] pp · p < 0.001", "not_tested", "not tested"),
        ("+4.0 pp 95% CI [−0.4, +10.0] pp · p = 0.08", "significant_size_not_established", "p >= alpha"),
        ("+4.0 pp 95% CI [−0.4, +10.0] pp · p = 0.04", "significant_size_not_established", "includes 0"),
    ],
)
def test_the_checker_catches_each_contradiction(text: str, outcome: str | None, rule: str) -> None:
    problems = check_statement(text, "hand", outcome)
    assert problems and any(rule in p.rule for p in problems), problems


@pytest.mark.parametrize(
    ("text", "outcome"),
    [
        ("Not significant at α = 0.05: the 95% CI includes 0, so the data are compatible with no difference.", None),
        ("Welch p = 0.07, 95% Welch CI −0.006 to +0.099: not significant", None),
        ("The 95% CI excludes 0, but after Holm's correction for 2 candidates the adjusted p is not below α", None),
        ("+8.8 pp 95% CI [+1.0, +16.6] pp · p = 0.027 · n = 160 paired cases", "statistically_significant_improvement"),
        ("−9.7 pp one run each: no test; seed-to-seed variation unknown", "not_tested"),
        ("A statistically significant improvement at α = 0.05. p = 0.003, Holm-adjusted p = 0.007", None),
        (
            "+4.0 pp 95% CI [+0.4, +10.0] pp · p = 0.03: significant, size not established",
            "significant_size_not_established",
        ),
        ("+2.1 pp [+0.3, +4.6] · raw p = 0.04 · Holm p = 0.62", "insufficient_statistical_evidence"),
        ("family lane (32 cases): could miss a drop smaller than −40.4 pp in exact", None),
    ],
)
def test_the_checker_passes_honest_sentences(text: str, outcome: str | None) -> None:
    assert not check_statement(text, "hand", outcome)


def test_demo_pages_say_what_their_numbers_say(demo_site: Path) -> None:
    problems = check_site(demo_site)
    assert not problems, "\n".join(map(str, problems))


def test_every_comparison_shape_says_what_its_numbers_say(shapes_build: tuple[Path, Path]) -> None:
    problems = check_site(shapes_build[1])
    assert not problems, "\n".join(map(str, problems))


def test_pr_comments_and_gate_say_what_their_numbers_say(
    shapes_build: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source, site = shapes_build
    problems = []
    for r in json.loads((site / "index.json").read_text())["runs"]:
        problems += check_markdown(summarize_run(source, r["id"]), f"obs summary {r['id']}")
        main(["gate", r["id"], str(source)])
        problems += check_markdown(capsys.readouterr().out, f"obs gate {r['id']}")
    problems += check_markdown(summarize_campaign(source, "camp"), "obs summary --campaign camp")
    assert not problems, "\n".join(map(str, problems))


def test_comparison_cells_show_raw_and_holm_p_and_name_the_family(shapes_build: tuple[Path, Path]) -> None:
    """Issue 28: the run page's table of checks x scopes labels each cell on its Holm-adjusted p over the
    table's other cells (before: raw p < 0.05, 14 cells marked on one page); the raw p is shown as raw."""
    from bs4 import BeautifulSoup

    _, site = shapes_build
    analysis = json.loads((site / "runs" / "repair" / "analysis.json").read_text())
    cmp = analysis["comparison"]
    assert cmp["family"].startswith("Holm over the ") and "other cells" in cmp["family"]
    soup = BeautifulSoup((site / "runs" / "repair" / "index.html").read_text(), "html.parser")
    assert cmp["family"] in soup.get_text(" ")
    cells = [c for c in soup.select("td[data-cmp]") if "|split:" in c["data-cmp"] or "|family:" in c["data-cmp"]]
    assert cells
    for cell in cells:
        text = cell.get_text(" ")
        assert "raw p" in text and "Holm p" in text, text
    for scope in [*cmp["by_split"], *cmp["by_family"]]:
        for pc in scope["checks"].values():
            significant = pc["recommendation"] in ("statistically_significant_improvement", "significant_degradation")
            assert pc["p_adjusted"] is not None and pc["family"] == cmp["family"]
            assert not significant or pc["p_adjusted"] < 0.05
