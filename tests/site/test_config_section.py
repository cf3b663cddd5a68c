"""Issue 16: a run's own configuration on its page (MLflow params, W&B config.yaml, native `config:`), searchable,
collapsible, keys that differ from the baseline marked, and the same data in analysis.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bs4 import BeautifulSoup

from obs.build import BuildOptions, build_site

DATA = Path(__file__).resolve().parents[1] / "data" / "corpus"


def _build(src: Path, tmp_path: Path) -> Path:
    out = tmp_path / "site"
    result = build_site(BuildOptions(source=src, out=out, quiet=True, jobs=1, cache_dir=tmp_path / "cache"))
    assert result.errors == 0, [d.format() for d in result.diagnostics]
    return out


def _page(site: Path, slug_part: str) -> tuple[BeautifulSoup, dict]:
    (folder,) = [p for p in (site / "runs").iterdir() if slug_part in p.name]
    page = BeautifulSoup((folder / "index.html").read_text(), "html.parser")
    return page, json.loads((folder / "analysis.json").read_text())


def test_mlflow_params_and_wandb_config_are_on_the_run_page(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(DATA / "mlflow" / "10-Academy-Batch-4-Week-4__Swahili-Speech-To-Text", src / "stt")
    shutil.copytree(DATA / "wandb" / "tsebaka__T-Lab-2024-LLM-Alignment", src / "wb")
    site = _build(src, tmp_path)
    page, analysis = _page(site, "stt-")
    section = page.find("section", id="config")
    assert section is not None and page.find("form", class_="config-search") is not None
    params = sorted(p.name for p in next((src / "stt").rglob("params")).iterdir())
    keys = [th.get_text() for th in section.select("table.config-table th")]
    assert keys == params and len(keys) == 20  # SOURCES.tsv says 19 autolog params; the folder holds 20
    assert analysis["configuration"]["sections"]["config"]["opt_name"] == "SGD"
    row = next(tr for tr in section.select("tr") if tr.th.get_text() == "batch_size")
    assert row.td.get_text() == "null"  # the file says None: not a dash that reads as "not recorded"
    page, analysis = _page(site, "wvk49vqj")
    config = analysis["configuration"]["sections"]["config"]
    assert len(config) > 200 and config["learning_rate"] is not None
    group = page.find("details", id="config-config")
    assert group is not None and not group.has_attr("open")  # a long group starts collapsed; search opens it


def test_keys_that_differ_from_the_baseline_are_marked(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for name, lr, extra in (("base", 0.1, ""), ("new", 0.2, "  warmup: 10\n")):
        (src / name).mkdir(parents=True)
        baseline = "baseline: base\n" if name == "new" else ""
        body = f"model: {{name: tiny}}\nconfig:\n  train:\n    lr: {lr}\n    epochs: 3\n{extra}"
        (src / name / "run.yaml").write_text(f"{baseline}status: finished\n{body}")
    site = _build(src, tmp_path)
    page, analysis = _page(site, "new")
    marked = {tr.th.get_text() for tr in page.select("#config tr.differs")}
    assert marked == {"train.lr", "warmup"}
    assert sorted(analysis["configuration"]["differs_from_baseline"]) == ["config.train.lr", "config.warmup"]
    page, _ = _page(site, "base")
    assert not page.select("#config tr.differs")  # no baseline: nothing marked
