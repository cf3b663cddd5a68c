"""Issue 16: every file that no format reads is listed by `obs build` and `obs check` (one summary line)
and on the site (index page and index.json), e.g. `.txt` predictions beside an lm-eval results file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bs4 import BeautifulSoup

from obs.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "corpus"


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    lm = DATA / "lm_eval" / "saucam__model_evals" / "saucam" / "Orpomis-Prime-7B" / "openllm"
    shutil.copytree(lm, src / "lm")
    (src / "lm" / "predictions.txt").write_text("18\n7\n")
    hf = DATA / "trainer_state" / "202520030411__Distill-Safety-Aligned-Models" / "outputs" / "dpo"
    shutil.copytree(hf, src / "dpo")
    (src / "dpo" / "checkpoint-30").mkdir()
    (src / "dpo" / "checkpoint-30" / "optimizer.pt").write_bytes(b"\0" * 8)  # inside a folder a format owns
    return src


def test_check_and_build_name_the_files_no_format_read(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    src = _source(tmp_path)
    assert main(["check", str(src)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "not read by any format" in line]
    assert lines == ["obs check: 2 files not read by any format: dpo/checkpoint-30/optimizer.pt, lm/predictions.txt"]
    site = tmp_path / "site"
    assert main(["build", str(src), "-o", str(site), "-q"]) == 0
    err = capsys.readouterr().err
    assert "obs build: 2 files not read by any format: dpo/checkpoint-30/optimizer.pt, lm/predictions.txt" in err
    manifest = json.loads((site / "index.json").read_text())
    assert manifest["not_read"] == ["dpo/checkpoint-30/optimizer.pt", "lm/predictions.txt"]
    page = BeautifulSoup((site / "index.html").read_text(), "html.parser")
    listed = [li.get_text() for li in page.select("#not-read ul.not-read li")]
    assert listed == ["dpo/checkpoint-30/optimizer.pt", "lm/predictions.txt"]
    assert main(["build", str(src), "-o", str(site), "-q"]) == 0  # nothing changed: the replay says it too
    assert "2 files not read by any format" in capsys.readouterr().err


def test_a_deleted_mlflow_run_is_named_as_hidden_on_purpose_not_as_unread(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The deleted run's meta.yaml was read (that is how it is known to be deleted): its files are one line with
    the reason on the index page, in index.json and in the build's output, and none is in `not_read`."""
    src = tmp_path / "src"
    shutil.copytree(DATA / "mlflow" / "1010sb__ImageClass", src / "img")
    site = tmp_path / "site"
    assert main(["build", str(src), "-o", str(site)]) == 0
    err = capsys.readouterr().err
    why = (
        "img/mlruns/586757370402886605/3a9af4bdab714eb69a4ed7582c387268: MLflow run 'mysterious-goose-781' "
        "marked deleted (lifecycle_stage) (11 files)"
    )
    assert f"obs build: not shown on purpose: {why}" in err
    assert "not read by any format" not in err
    manifest = json.loads((site / "index.json").read_text())
    assert manifest["not_read"] == []
    assert manifest["hidden"] == [why]
    assert [r["id"] for r in manifest["runs"]] == ["img/mlruns/586757370402886605/6cb9a32fd38a464f8402979dbdd3191f"]
    page = BeautifulSoup((site / "index.html").read_text(), "html.parser")
    assert [li.get_text() for li in page.select("#not-read ul.hidden-inputs li")] == [why]
