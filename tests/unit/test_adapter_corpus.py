"""Every file of the corpus of real run artifacts is read by some adapter or reported: none is dropped silently.

Runs over the copies in tests/data/corpus always, and over the whole shared corpus (`../shared/corpus` or
`/work/shared/corpus`, or the folder named by $OBS_CORPUS) when it is present; those tests skip cleanly when it is not.
"""

from __future__ import annotations

import csv
import json
import os
from collections import Counter
from pathlib import Path

import pytest
import yaml
from adapterkit import load_all

from obs.build import BuildOptions
from obs.discover import discover
from obs.model import Run
from obs.publish.extras import build_published

REPO = Path(__file__).resolve().parents[2]
COPIES = REPO / "tests" / "data" / "corpus"
SHARED_CANDIDATES = [REPO.parent / "shared" / "corpus", Path("/work/shared/corpus")]
SHARED = Path(os.environ.get("OBS_CORPUS") or next((p for p in SHARED_CANDIDATES if p.is_dir()), SHARED_CANDIDATES[0]))
CORPUS_METADATA = {"README.md", "SOURCES.tsv"}

needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared corpus not found at {SHARED}")


def unaccounted_files(root: Path) -> list[str]:
    """Files under `root` that no run reads and no claim note names (by path, or by a folder `name/` above them)."""
    found = discover(root)
    read = {f.resolve() for source in found.runs for f in source.files}
    notes = [(claim.folder.resolve(), " ".join(claim.notes)) for claim in found.claims]
    missing = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or any(part.startswith(".") for part in rel.parts):
            continue
        if path.resolve() in read or (len(rel.parts) == 1 and rel.name in CORPUS_METADATA):
            continue
        named = False
        for folder, text in notes:
            if folder in path.resolve().parents:
                inner = path.resolve().relative_to(folder)
                named = named or inner.as_posix() in text or any(f"{part}/" in text for part in inner.parts[:-1])
        if not named:
            missing.append(rel.as_posix())
    return missing


def has_content(run: Run) -> bool:
    return bool(
        (run.metrics and run.metrics.series) or run.evals or run.probe or run.summary or run.config or run.notices
    )


@pytest.mark.parametrize("root", [COPIES, pytest.param(SHARED, marks=needs_shared)], ids=["copies", "shared"])
def test_no_file_is_silently_dropped(root: Path) -> None:
    assert unaccounted_files(root) == []


@pytest.mark.parametrize("root", [COPIES, pytest.param(SHARED, marks=needs_shared)], ids=["copies", "shared"])
def test_every_run_loads_with_content_and_no_error(root: Path) -> None:
    runs = load_all(root)
    assert len(runs) >= 20
    for run_id, (run, diags) in runs.items():
        assert has_content(run), run_id
        assert not diags.has_errors, (run_id, [d.format() for d in diags.items])
    adapters = {run.adapter for run, _ in runs.values()}
    assert adapters == {"hf_trainer", "mlflow", "lm_eval", "wandb", "generic_jsonl"}


def test_adapter_named_per_folder_for_obs_check() -> None:
    found = discover(COPIES)
    by_folder = {c.folder.relative_to(COPIES).as_posix(): c.adapter for c in found.claims}
    assert by_folder["trainer_state/202520030411__Distill-Safety-Aligned-Models/outputs/dpo"] == "hf_trainer"
    assert by_folder["mlflow/1010sb__ImageClass/mlruns"] == "mlflow"
    assert by_folder["wandb/Sustella__qwen_sapiens/wandb/run-20260610_160541-52gwgh3i"] == "wandb"
    assert by_folder["metrics_jsonl/akawslearn-ai__slm_training"] == "generic_jsonl"
    assert by_folder["lm_eval/saucam__model_evals/saucam/Orpomis-Prime-7B/openllm"] == "lm_eval"


@needs_shared
def test_shared_only_files_values() -> None:
    runs = load_all(SHARED)
    rho, _ = runs["paired_eval/Sunshine535__nips-grpo-dynamics/results/fullset_eval/rho070_seed42"]
    spo, _ = runs["paired_eval/Sunshine535__nips-grpo-dynamics/results/fullset_eval/spo_full_seed42"]
    assert rho.probe is not None and spo.probe is not None
    assert len(rho.probe.cases) == len(spo.probe.cases) == 1319
    assert sum(c.checks["correct"] for c in rho.probe.cases) == 576
    assert sum(c.checks["correct"] for c in spo.probe.cases) == 939
    assert [c.id for c in rho.probe.cases] == [c.id for c in spo.probe.cases]  # paired by item
    assert rho.summary["accuracy"] == 0.43669446550416985
    tau, _ = runs["paired_eval/Ray-Cheng-11__Tau-Bench-Model-Training/results/test_results_20251031_095003"]
    assert tau.probe is not None and sum(c.checks["success"] for c in tau.probe.cases) == 82
    sft, _ = runs[
        "metrics_jsonl/FloatingStory__CSE-5525-Default-Project/logs/sft-meta-llama-Llama-3.2-1B-20260411-141502"
    ]
    assert sft.metrics is not None
    assert len(sft.metrics.series["train_mean_nll"]) == 2500
    assert len(sft.metrics.series["test/nll"]) < 100  # sparse eval metric stays sparse


@needs_shared
def test_obs_build_over_the_whole_corpus(tmp_path: Path) -> None:
    result = build_published(
        BuildOptions(source=SHARED, out=tmp_path / "site", quiet=True, cache_dir=tmp_path / "cache")
    )
    assert result.errors == 0, [d.format() for d in result.diagnostics if d.severity == "error"]
    assert (tmp_path / "site" / "index.html").is_file()
    if not (SHARED / "SOURCES.tsv").is_file():
        pytest.skip("this corpus has no SOURCES.tsv to count its runs from")
    index = json.loads((tmp_path / "site" / "index.json").read_text(encoding="utf-8"))
    built = Counter(run["id"].split("/", 1)[0] for run in index["runs"])
    assert built == runs_listed(SHARED)
    assert result.runs == sum(built.values())


def runs_listed(corpus: Path) -> Counter[str]:
    """Runs per format counted from the corpus' own list of files (SOURCES.tsv, one row per file copied,
    stored as `<format>/<owner>__<repo>/<path>`) by the layouts its README describes, not by obs: one run
    per listed file, except W&B (one per `run-*` folder) and MLflow (one per run folder,
    `mlruns/<experiment>/<run>/...`, that its meta.yaml does not mark deleted)."""
    runs: dict[str, set[tuple[str, ...]]] = {}
    with (corpus / "SOURCES.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            fmt, parts = row["format"], (row["repository"].replace("/", "__"), *row["path"].split("/"))
            if fmt == "wandb":
                key = parts[: next(i for i, p in enumerate(parts) if p.startswith("run-")) + 1]
            elif fmt == "mlflow":
                at = parts.index("mlruns")
                if len(parts) - at < 4:  # an experiment's own meta.yaml
                    continue
                key = parts[: at + 3]
                meta = corpus.joinpath(fmt, *key, "meta.yaml")
                if (
                    meta.is_file()
                    and yaml.safe_load(meta.read_text(encoding="utf-8")).get("lifecycle_stage") == "deleted"
                ):
                    continue
            else:
                key = parts
            runs.setdefault(fmt, set()).add(key)
    return Counter({fmt: len(keys) for fmt, keys in runs.items()})
