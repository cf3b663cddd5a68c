"""Sample efficiency and coupling for runs that form no campaign (issue 33): the index links a page of obs.yaml's
`sample_efficiency:` and `coupling:` over those runs. Nothing there says which runs are seeds of one another, so a
line is a recipe without its size (runs identical but for seed and data size) and n counts its seeds; a run that
differs in anything else is a line of its own. Numbers against scipy (t interval, Spearman's ρ)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup
from scipy import stats as sps

from obs.cli import main

SIZES = (1000, 4000)
SEEDS = (1, 2, 3)


def _acc(method: str, size: int, seed: int) -> float:
    return round(0.3 + (0.1 if method == "curriculum" else 0.0) + 0.05 * np.log2(size / 1000) + 0.013 * seed, 4)


def _run(root: Path, name: str, method: str, size: int, seed: int | None, lr: float = 2e-5) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    seed_line = f"seed: {seed}\n" if seed is not None else ""
    (folder / "run.yaml").write_text(
        f"obs_contract: 1\nid: {name}\n{seed_line}status: finished\n"
        f"config:\n  method: {method}\n  data:\n    train_examples: {size}\n  train:\n    lr: {lr}\n"
    )
    acc = _acc(method, size, seed or 0)
    rows = [
        {"step": s, "eval/accuracy": acc, "reward_mean": round(0.5 * acc + 0.001 * s + 0.01 * (seed or 0), 4)}
        for s in range(5)
    ]
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eff") / "src"
    k = 0
    for method in ("sft", "curriculum"):
        for size in SIZES:
            for seed in SEEDS:
                k += 1
                _run(root, f"r{k:02d}", method, size, seed)
    _run(root, "r99", "sft", 1000, None, lr=1e-4)  # another recipe: its own line, never pooled with the seeds
    (root / "obs.yaml").write_text(
        "sample_efficiency:\n  size_key: config.data.train_examples\n  metric: eval/accuracy\n"
        "  group_by: config.method\n  label: training examples\n"
        "coupling:\n- proxy: reward_mean\n  downstream: eval/accuracy\nfinal_window: 1\n"
    )
    out = root.parent / "site"
    assert main(["build", str(root), "-o", str(out), "--quiet"]) == 0
    return out


def test_lines_are_recipes_and_n_counts_seeds(built: Path) -> None:
    numbers = json.loads((built / "efficiency.json").read_text())
    se = numbers["sample_efficiency"]
    assert numbers["runs"] == 13 and se["unit"] == "seed" and se["group_by"] == "recipe"
    lines = {line["group"]: line for line in se["lines"]}
    assert sorted(lines) == ["curriculum", "sft", "sft (2)"]
    for method in ("sft", "curriculum"):
        for point, size in zip(lines[method]["points"], SIZES, strict=True):
            values = [_acc(method, size, s) for s in SEEDS]
            low, high = sps.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=sps.sem(values))
            assert point["size"] == size and point["n"] == 3
            assert point["mean"] == pytest.approx(np.mean(values)) and point["ci"] == pytest.approx([low, high])
    (alone,) = lines["sft (2)"]["points"]
    assert alone["n"] == 1 and alone["ci"] is None and alone["runs"] == ["r99"]


def test_coupling_over_the_runs_is_spearman_with_runs_as_the_unit(built: Path) -> None:
    (pair,) = json.loads((built / "efficiency.json").read_text())["coupling"]
    x = [p["proxy"] for p in pair["points"]]
    y = [p["downstream"] for p in pair["points"]]
    assert pair["n"] == 13 and pair["unit"] == "run"
    assert pair["rho"] == pytest.approx(sps.spearmanr(x, y).statistic)


def test_the_index_links_the_page_and_it_says_n_and_unit(built: Path) -> None:
    index = BeautifulSoup((built / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert index.select_one('#across a[href="efficiency.html"]') is not None
    page = BeautifulSoup((built / "efficiency.html").read_text(encoding="utf-8"), "html.parser")
    text = " ".join(page.get_text(" ").split())
    assert "the 13 runs that belong to no campaign" in text
    assert "runs identical but for their seed and their data size" in text
    assert "The unit of replication is the seed" in text and "The unit is the run" in text
    assert "n = 13" in text  # ρ's sentence: unit = run, n = 13


def test_no_page_without_a_declaration(tmp_path: Path) -> None:
    _run(tmp_path / "src", "r01", "sft", 1000, 1)
    assert main(["build", str(tmp_path / "src"), "-o", str(tmp_path / "site"), "--quiet"]) == 0
    assert not (tmp_path / "site" / "efficiency.html").exists()
    assert "efficiency.html" not in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_a_perfect_rank_order_has_no_zero_width_interval() -> None:
    """ρ = ±1 over four runs or more: no interval (Fisher's z is infinite there), never `CI +1.00 to +1.00`."""
    from obs.analysis.coupling import across_runs
    from summaries import make_summary

    runs = [make_summary(id=f"r{i}", finals={"reward_mean": float(i), "eval/accuracy": 0.1 * i}) for i in range(5)]
    pair = across_runs(runs, {"proxy": "reward_mean", "downstream": "eval/accuracy"})
    assert pair.rho == pytest.approx(sps.spearmanr(range(5), range(5)).statistic) == 1.0
    assert pair.ci is None
    words = pair.words()
    assert "no interval: Fisher's z is infinite at ±1" in words and "every run in the same order" in words
    assert "+1.00 to +1.00" not in words
