"""A run page judged at the recipe level: seeds as the unit on the page, in the promotion rule and in the cache.

A run whose recipe and whose baseline's recipe both have seed replicates (runs identical but for the seed) is
judged with Welch's t-test over seeds; its page shows that verdict, its paired checkpoint test beside it, and
the suggested verdict follows the recipe. The page reads other runs' results, so the build's cache key of a
run includes its recipe-level result: a changed sibling seed rebuilds it, an unrelated change does not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import scipy.stats as sps
from bs4 import BeautifulSoup

from obs.analysis import stats as S
from obs.build import BuildOptions
from obs.cli import main
from obs.publish.extras import build_published

FINALS = {"base": [0.601, 0.585, 0.617], "new": [0.660, 0.648, 0.675]}


def _write_tree(src: Path, finals: dict[str, list[float]]) -> None:
    (src / "ladder").mkdir(parents=True, exist_ok=True)
    (src / "ladder" / "spec.yaml").write_text("id: ladder\n")
    for recipe, values in finals.items():
        for seed, value in enumerate(values, start=1):
            run = src / "ladder" / f"{recipe}_s{seed}"
            run.mkdir(exist_ok=True)
            baseline = "" if recipe == "base" else f"baseline: base-s{seed}\n"
            lr = 0.001 if recipe == "base" else 0.002
            (run / "run.yaml").write_text(
                f"id: {recipe}-s{seed}\nspec: ladder\nseed: {seed}\nstatus: finished\n{baseline}"
                f"primary_metric: accuracy\nprimary_axis: optimizer\nconfig: {{train: {{lr: {lr}}}}}\n"
            )
            (run / "metrics.jsonl").write_text("".join(f'{{"step": {s}, "accuracy": {value}}}\n' for s in range(12)))


def _page(out: Path, run: str) -> BeautifulSoup:
    return BeautifulSoup((out / "runs" / run / "index.html").read_text(encoding="utf-8"), "html.parser")


def _build(src: Path, out: Path) -> object:
    return build_published(BuildOptions(source=src, out=out, quiet=True, jobs=2))


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path]:
    src, out = tmp_path / "src", tmp_path / "site"
    _write_tree(src, FINALS)
    _build(src, out)
    return src, out


def test_the_run_page_shows_the_recipe_verdict_and_the_rule_reads_it(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = built
    ref = sps.ttest_ind(FINALS["new"], FINALS["base"], equal_var=False)
    soup = _page(out, "new-s1")
    level = soup.find(id="recipe-level")
    assert level is not None and level["data-outcome"] == S.IMPROVEMENT
    text = level.get_text(" ", strip=True)
    low, high = ref.confidence_interval(0.95)
    assert f"95% CI [{100 * low:.1f}, {100 * high:.1f}] pp" in text
    assert f"Welch p = {ref.pvalue:.3f}" in text and "3 v 3 seeds" in text
    tile = soup.find(id="headline-delta").get_text(" ", strip=True)
    assert "seeds as the unit" in tile
    # every seed's value is on the page, linked to its run
    note = soup.find(id="recipe-note")
    assert {a.get_text() for a in note.find_all("a")} == {"new-s1", "new-s2", "new-s3", "base-s1", "base-s2", "base-s3"}
    assert "66.0%" in note.get_text() and "58.5%" in note.get_text()
    # the rule reads the recipe: promote, said with the seed-level evidence, on the page, in analysis.json, obs gate
    decision = soup.find(id="recorded-decision")
    assert decision["data-suggested-verdict"] == "promote"
    doc = json.loads((out / "runs/new-s1/analysis.json").read_text())
    assert doc["recipe_level"]["p_value"] == pytest.approx(ref.pvalue, abs=1e-12)
    assert doc["recipe_level"]["key"] == level["data-cmp"]
    assert doc["decision"]["suggested"]["verdict"] == "promote"
    assert main(["gate", "new-s1", str(src)]) == 0
    gate = capsys.readouterr().out
    assert "recipe improves (Welch's t over seeds" in gate and f"Welch p = {ref.pvalue:.3f}" in gate
    index = json.loads((out / "index.json").read_text())
    row = next(r for r in index["runs"] if r["id"] == "new-s1")
    assert row["seed_level"]["key"] == level["data-cmp"] and row["suggested_verdict"] == "promote"


def test_a_changed_sibling_seed_rebuilds_the_pages_that_read_it(built: tuple[Path, Path]) -> None:
    src, out = built
    before = {r: (out / "runs" / r / "index.html").read_bytes() for r in ("new-s1", "new-s2", "new-s3", "base-s1")}
    # base-s2 now matches the new recipe: the recipe is no longer better, on every page of the new recipe
    metrics = src / "ladder/base_s2/metrics.jsonl"
    metrics.write_text(metrics.read_text().replace("0.585", "0.672"))
    result = _build(src, out)
    assert result.built == 4 and result.reused == 2  # type: ignore[attr-defined]  # base-s2 and the new recipe
    ref = sps.ttest_ind(FINALS["new"], [0.601, 0.672, 0.617], equal_var=False)
    for run in ("new-s1", "new-s2", "new-s3"):
        page = (out / "runs" / run / "index.html").read_bytes()
        assert page != before[run], run
        soup = _page(out, run)
        assert soup.find(id="recipe-level")["data-outcome"] == S.INSUFFICIENT
        assert f"Welch p = {ref.pvalue:.2f}" in soup.find(id="recipe-level").get_text(" ")
        assert soup.find(id="recorded-decision")["data-suggested-verdict"] != "promote"
    assert (out / "runs/base-s1/index.html").read_bytes() == before["base-s1"]
    # a change that moves no seed's value rebuilds the run that changed, not the pages that read its value
    (src / "ladder/base_s3/notes.md").write_text("a note\n")
    result = _build(src, out)
    assert result.built == 1 and result.reused == 5  # type: ignore[attr-defined]
    # and a second build with nothing changed builds nothing
    result = _build(src, out)
    assert result.built == 0  # type: ignore[attr-defined]


def test_without_replicates_the_page_says_it_compares_checkpoints(tmp_path: Path) -> None:
    """One seed of the baseline recipe: no recipe-level verdict; the tile says it compares two checkpoints."""
    src, out = tmp_path / "src", tmp_path / "site"
    _write_tree(src, {"base": [0.601], "new": [0.660, 0.648, 0.675]})
    for seed in (2, 3):
        run = (src / f"ladder/new_s{seed}/run.yaml").read_text().replace(f"base-s{seed}", "base-s1")
        (src / f"ladder/new_s{seed}/run.yaml").write_text(run)
    (src / "ladder/base_s1/probe.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "exact": i % 2 == 0}) + "\n" for i in range(60))
    )
    (src / "ladder/new_s1/probe.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "exact": i % 3 != 0}) + "\n" for i in range(60))
    )
    for run in ("base_s1", "new_s1"):
        meta = src / "ladder" / run / "run.yaml"
        meta.write_text(meta.read_text().replace("primary_metric: accuracy", "primary_metric: exact"))
    _build(src, out)
    soup = _page(out, "new-s1")
    assert soup.find(id="recipe-level") is None
    note = soup.find(id="checkpoint-note")
    assert note is not None and "two checkpoints, not two recipes" in note.get_text()
    assert "seed-to-seed variation is unknown" in note.get_text()
    index = json.loads((out / "index.json").read_text())
    assert next(r for r in index["runs"] if r["id"] == "new-s1")["seed_level"] is None


def test_seeds_that_are_copies_are_not_tested_and_promote_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The new recipe's three seeds gave one value (copies of one run): no significance on any surface, and the
    checkpoint's comparison does not stand in for the recipe's."""
    src, out = tmp_path / "src", tmp_path / "site"
    _write_tree(src, {"base": [0.601, 0.585, 0.617], "new": [0.66, 0.66, 0.66]})
    _build(src, out)
    level = _page(out, "new-s1").find(id="recipe-level")
    assert level["data-outcome"] == S.NOT_TESTED
    assert "copies of one run, not replicates" in level.get_text(" ")
    assert "p =" not in level.get_text(" ") and "CI [" not in level.get_text(" ")
    assert _page(out, "new-s1").find(id="recorded-decision")["data-suggested-verdict"] == "none"
    assert main(["gate", "new-s1", str(src)]) == 1
    gate = capsys.readouterr().out
    assert "suggested nothing (cannot judge)" in gate and "not tested (no variation observed" in gate
    index = json.loads((out / "index.json").read_text())
    row = next(r for r in index["runs"] if r["id"] == "new-s1")
    assert row["seed_level"]["outcome"] == S.NOT_TESTED and row["suggested_verdict"] is None
