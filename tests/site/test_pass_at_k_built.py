"""pass@k on a built run page and in its analysis.json, checked against a hand computation.

Two tiny runs of six cases each. The baseline writes every sample as its own record (`sample`
index, a `selected` flag); the candidate gives each check as a list of results, one per sample
(HumanEval style, `selected` as an index). The expected numbers are worked out here by hand from
1 - C(n - c, k) / C(n, k) (Chen et al. 2021), not with obs's estimator.
"""

from __future__ import annotations

import json
from math import comb
from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup

from obs.build import BuildOptions
from obs.publish.extras import build_published

# (family, right/wrong per sample, selected sample) for six cases, four samples each
BASE = [
    ("cards", [False, False, False, False], 0),
    ("cards", [True, False, False, False], 1),
    ("lane", [False, True, False, True], 1),
    ("lane", [True, True, True, True], 0),
    ("tree", [False, False, True, False], 0),
    ("tree", [True, True, False, False], 2),
]
HERE = [
    ("cards", [True, False, False, False], 0),
    ("cards", [True, True, False, False], 1),
    ("lane", [True, True, True, False], 3),
    ("lane", [True, True, True, True], 0),
    ("tree", [False, True, True, False], 1),
    ("tree", [True, True, True, False], 3),
]


def hand(cases: list[tuple[str, list[bool], int]], k: int, family: str | None = None) -> float:
    """Mean over cases of 1 - C(n - c, k) / C(n, k), written out by hand."""
    values = []
    for fam, samples, _ in cases:
        if family is None or fam == family:
            n, c = len(samples), sum(samples)
            values.append(1 - comb(n - c, k) / comb(n, k))
    return sum(values) / len(values)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    src = tmp_path_factory.mktemp("passk") / "src"
    _write(src / "obs.yaml", "title: pass@k by hand\nprimary_metric: exact\n")
    _write(src / "b" / "run.yaml", yaml.safe_dump({"id": "b", "status": "finished"}))
    rows = []
    for i, (family, samples, picked) in enumerate(BASE):
        for s, ok in enumerate(samples):
            rows.append(
                {"id": f"c{i}", "split": "test", "family": family, "exact": ok, "sample": s, "selected": s == picked}
            )
    _write(src / "b" / "probe.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    _write(src / "a" / "run.yaml", yaml.safe_dump({"id": "a", "status": "finished", "baseline": "b"}))
    rows = [
        {"id": f"c{i}", "split": "test", "family": family, "exact": samples, "selected": picked}
        for i, (family, samples, picked) in enumerate(HERE)
    ]
    _write(src / "a" / "probe.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    site = tmp_path_factory.mktemp("passk-site") / "site"
    result = build_published(BuildOptions(source=src, out=site, quiet=True))
    assert result.errors == 0
    runs = {r["id"]: r for r in json.loads((site / "index.json").read_text())["runs"]}
    return site, {rid: json.loads((site / r["analysis"]).read_text()) for rid, r in runs.items()}


@pytest.mark.parametrize(("run", "cases"), [("a", HERE), ("b", BASE)])
def test_analysis_json_pass_at_k_matches_the_hand_computation(
    built: tuple[Path, dict[str, Any]], run: str, cases: list[tuple[str, list[bool], int]]
) -> None:
    (pk,) = built[1][run]["pass_at_k"]
    assert pk["check"] == "exact" and pk["k"] == [1, 2, 4] and pk["n_items"] == 6
    for k in (1, 2, 4):
        assert pk["overall"]["pass_at_k"][str(k)]["value"] == pytest.approx(hand(cases, k), abs=1e-12)
        for fam in pk["by_family"]:
            assert fam["pass_at_k"][str(k)]["value"] == pytest.approx(hand(cases, k, fam["label"]), abs=1e-12)
        ci = pk["overall"]["pass_at_k"][str(k)]["ci"]
        assert ci["low"] < hand(cases, k) < ci["high"] or hand(cases, k) in (ci["low"], ci["high"])
    # best-of-n (any sample right) against the selected sample
    sel = pk["selector"]
    assert sel["best_of_n"]["value"] == pytest.approx(sum(any(s) for _, s, _ in cases) / 6)
    assert sel["selected"]["value"] == pytest.approx(sum(s[p] for _, s, p in cases) / 6)


def test_pass_at_k_against_the_baseline_is_the_hand_difference(built: tuple[Path, dict[str, Any]]) -> None:
    (pk,) = built[1]["a"]["pass_at_k"]
    assert pk["vs_baseline"]["items"] == 6
    for k in (1, 2, 4):
        res = pk["vs_baseline"]["by_k"][str(k)]
        assert res["delta"] == pytest.approx(hand(HERE, k) - hand(BASE, k), abs=1e-12)


def test_the_run_page_shows_the_same_pass_at_k(built: tuple[Path, dict[str, Any]]) -> None:
    site, _ = built
    index = {r["id"]: r for r in json.loads((site / "index.json").read_text())["runs"]}
    soup = BeautifulSoup((site / index["a"]["page"]).read_text(encoding="utf-8"), "html.parser")
    table = soup.select_one("#pass-at-k-table")
    assert table is not None
    heads = [th.get_text(strip=True) for th in table.select("thead th")]
    assert heads[-3:] == ["pass@1", "pass@2", "pass@4"]
    first = table.select("tbody tr")[0].select("td")
    shown = [td.contents[0].strip() for td in first[1:]]
    assert shown == [f"{100 * hand(HERE, k):.1f}%" for k in (1, 2, 4)]
    assert soup.select_one("#pass-at-k-vs-baseline") is not None and soup.select_one("#best-of-n") is not None


def test_the_pass_at_k_page_says_what_its_numbers_say(built: tuple[Path, dict[str, Any]]) -> None:
    from wordcheck import check_site

    problems = check_site(built[0])
    assert not problems, "\n".join(map(str, problems))
