"""Find sentences on built pages that contradict the numbers they stand beside.

Each statement (a paragraph, list item, table cell, tile line, definition) is read as a reader reads
it. A contradiction is:

* "p = <" (a comparison sign after an equals sign), or a raw "NaN" where statistics are shown;
* an interval whose two bounds are equal (a zero-width "95% CI");
* "significant" claimed (not negated) where every p beside it is >= alpha;
* a CI said to include 0 (or "compatible with no difference") while the CI beside it excludes 0, or
  said to exclude 0 while it includes it;
* a comparison element (`data-outcome`) whose numbers disagree with its outcome: a significant
  outcome with a CI that includes 0 or p >= alpha, a not-significant one with a CI that excludes 0
  (unless a multiplicity correction is named), a "not tested" one showing a p or a CI;
* a claim "supported" while the CI's lower bound is below the claim (or the reverse).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup, Tag

ALPHA = 0.05
NUMBER = r"[+\-−±]?\d[\d,]*(?:\.\d+)?(?:e[+\-−]?\d+)?"
CI_BRACKET = re.compile(rf"CI\s*\[\s*({NUMBER})\s*%?\s*,\s*({NUMBER})\s*%?\s*\]")
CI_TO = re.compile(rf"CI\s+({NUMBER})(?:\s*pp)?\s+to\s+({NUMBER})")
BRACKET = re.compile(rf"\[\s*({NUMBER})\s*(%|pp)?\s*,\s*({NUMBER})\s*(%|pp)?\s*\]")
P_VALUE = re.compile(r"\bp\s*(=|<)\s*(\d*\.?\d+(?:e-?\d+)?)")
P_EQUALS_SIGN = re.compile(r"\bp\s*=\s*[<>≤≥]")
NEGATED = re.compile(r"\b(?:not|no|in|non)[- ]?significant|insignificant", re.I)
CLAIMED = re.compile(r"\bsignificant(?:ly)?\b", re.I)
INCLUDES_ZERO = re.compile(r"includes (?:0|zero)\b|compatible with no difference", re.I)
EXCLUDES_ZERO = re.compile(r"excludes (?:0|zero)\b", re.I)
CORRECTION = re.compile(r"Holm", re.I)
SUPPORTED = re.compile(rf"by ≥ ({NUMBER}) pp\W+(is supported|is not supported): the CI's lower bound is ({NUMBER})")
# where statistics are shown (a NaN in a data table of logged values is data, shown as it is)
STATS_CONTEXTS = (
    "#at-a-glance",
    "#probe",
    "#decision",
    "#significance",
    "#arm-significance",
    "#paired-systems",
    "#runs-table",
    "#ladder",
)
STATEMENTS = "p, li, td, th, dd, figcaption, caption, div.small, span.sub, h3, h4"


@dataclass(frozen=True)
class Problem:
    where: str
    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.where}: {self.rule}: {self.text[:240]}"


def number(text: str) -> float:
    return float(text.replace("−", "-").replace("±", "").replace(",", "").replace("+", ""))


def intervals(text: str) -> list[tuple[float, float]]:
    """Every CI written in the text, as (low, high)."""
    out = [(number(a), number(b)) for a, b in CI_BRACKET.findall(text)]
    out += [(number(a), number(b)) for a, b in CI_TO.findall(text)]
    return out


def p_values(text: str) -> list[float]:
    """p-values written in the text; "p < 0.001" reads as 0.001 (below any alpha worth using)."""
    return [float(v) for _, v in P_VALUE.findall(text)]


def excludes_zero(iv: tuple[float, float]) -> bool:
    return iv[0] > 0 or iv[1] < 0


def check_statement(text: str, where: str, outcome: str | None = None) -> list[Problem]:
    """The contradictions inside one statement (`outcome`: its data-outcome, when it shows a comparison)."""
    problems: list[Problem] = []
    text = " ".join(text.split())

    def bad(rule: str) -> None:
        problems.append(Problem(where, rule, text))

    if P_EQUALS_SIGN.search(text):
        bad('"p = <"')
    for a, _, b, _ in BRACKET.findall(text):
        if number(a) == number(b):
            bad("an interval with equal bounds")
    ivs = intervals(text)
    if outcome is not None:  # in a comparison's own element a bare [low, high] is its CI of the difference
        ivs += [(number(a), number(b)) for a, _, b, _ in BRACKET.findall(text)]
    ps = p_values(text)
    claimed = bool(CLAIMED.search(NEGATED.sub("", text)))
    if claimed and ps and min(ps) >= ALPHA:
        bad("'significant' beside p >= alpha")
    if INCLUDES_ZERO.search(text) and any(excludes_zero(iv) for iv in ivs):
        bad("a CI said to include 0 that excludes it")
    if EXCLUDES_ZERO.search(text) and ivs and not any(excludes_zero(iv) for iv in ivs):
        bad("a CI said to exclude 0 that includes it")
    for claim, verdict, bound in SUPPORTED.findall(text):
        holds = number(bound) >= number(claim) and number(bound) > 0
        if holds != (verdict == "is supported"):
            bad(f"a claim {verdict} against its lower bound")
    if outcome in (
        "statistically_significant_improvement",
        "significant_degradation",
        "significant_below_min_effect",
        "significant_size_not_established",
    ):
        if ps and min(ps) >= ALPHA:
            bad(f"{outcome} with p >= alpha")
        if ivs and not all(excludes_zero(iv) for iv in ivs):
            bad(f"{outcome} with a CI that includes 0")
    elif outcome == "insufficient_statistical_evidence":
        if ivs and any(excludes_zero(iv) for iv in ivs) and not CORRECTION.search(text):
            bad("not significant, with a CI that excludes 0 and no correction named")
    elif outcome == "not_tested" and (ps or ivs):
        bad("not tested, yet a p or a CI is shown")
    return problems


def check_page(path: Path, site: Path) -> list[Problem]:
    where = path.relative_to(site).as_posix()
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    for hidden in soup(["script", "style"]):
        hidden.decompose()
    problems: list[Problem] = []
    for el in soup.select(STATEMENTS):
        problems += check_statement(el.get_text(" "), where)
    for el in soup.select("[data-outcome]"):
        problems += check_statement(el.get_text(" "), where, str(el["data-outcome"]))
    for el in soup.select(".tile"):
        problems += check_statement(el.get_text(" "), where)
    # a sentence about the headline's CI without its numbers reads the run page's own headline tile
    tile = soup.select_one("#headline-delta")
    tile_ivs = intervals(tile.get_text(" ")) if isinstance(tile, Tag) else []
    for el in soup.select("#decision li, #decision td"):
        text = el.get_text(" ")
        if "CI of the change includes zero" in text and any(excludes_zero(iv) for iv in tile_ivs):
            problems.append(Problem(where, "the decision says the CI includes 0; the tile's excludes it", text))
    for selector in STATS_CONTEXTS:
        for el in soup.select(selector):
            if re.search(r"\bNaN\b", el.get_text(" ")):
                problems.append(Problem(where, "raw NaN among statistics", el.get_text(" ")[:200]))
    return problems


def check_site(site: Path) -> list[Problem]:
    problems: list[Problem] = []
    for page in sorted(site.rglob("*.html")):
        problems += check_page(page, site)
    return problems


def check_markdown(text: str, where: str) -> list[Problem]:
    """A PR comment: each line (a table row, a bullet, a paragraph) is one statement."""
    problems: list[Problem] = []
    for line in text.splitlines():
        problems += check_statement(line.replace("\\", ""), where)
    return problems
