"""Issue 33, "the retrain layout read natively": `runs/<condition>_s<seed>/metrics.jsonl` folders, records carrying
condition and seed, or W&B configs naming them form a campaign without a campaign.yaml (obs.layout), with a notice
that says how and which campaign.yaml makes it explicit; a campaign.yaml over such folders needs no run.yaml.
Trees are written here, shaped as the retrain research guide (seed 001) describes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from obs.analysis.campaign import campaign_stats
from obs.layout import parse_folder_name
from obs.pipeline import SourceTree, campaign_summaries, load_run


def _log(folder: Path, rows: int = 12, **fields: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"step": s, **fields, "correct_rate": 0.1 + 0.01 * s, "loss": 1.0 - 0.01 * s}) for s in range(rows)
    ]
    (folder / "metrics.jsonl").write_text("\n".join(lines) + "\n")


def _retrain(root: Path, conditions: tuple[str, ...] = ("grpo+none", "maxrl+gtpo_sepa"), seeds=(42, 101)) -> None:
    for c in conditions:
        for s in seeds:
            _log(root / "runs" / f"{c}_s{s}", condition=c, seed=s)


@pytest.mark.parametrize(
    ("name", "declared", "expected"),
    [
        ("maxrl+gtpo_sepa_s42", (), ("maxrl+gtpo_sepa", 42)),
        ("lr_1e-4_s1", (), ("lr_1e-4", 1)),  # an underscore and a minus inside the condition
        ("lr_1e-4_s1", ("lr", "lr_1e-4"), ("lr_1e-4", 1)),  # the longest declared condition
        ("lr_s1", ("lr", "lr_1e-4"), ("lr", 1)),
        ("baseline-seed3", (), ("baseline", 3)),
        ("a_s1_s2", (), ("a_s1", 2)),  # the last seed suffix is the seed
        ("warmup_steps", (), None),  # `_s` followed by letters is a word, not a seed
        ("s1", (), None),  # a seed folder alone names no condition
        ("other_s1", ("lr",), None),  # declared conditions: only their names are conditions
    ],
)
def test_folder_names(name: str, declared: tuple[str, ...], expected: tuple[str, int] | None) -> None:
    assert parse_folder_name(name, declared) == expected


def test_retrain_layout_without_yaml_is_one_campaign(tmp_path: Path) -> None:
    _retrain(tmp_path)
    tree = SourceTree.open(tmp_path)
    assert list(tree.found.campaigns) == [tmp_path.name]
    campaign = tree.found.campaigns[tmp_path.name]
    assert [c.name for c in campaign.conditions] == ["grpo+none", "maxrl+gtpo_sepa"]
    assert campaign.seeds == [42, 101]
    assert campaign.primary_metric == "correct_rate"  # an outcome before a loss (the headline rule's classes)
    assert campaign.baseline_condition is None  # never guessed
    notices = [d.message for d in tree.diags.items if d.severity == "info" and "inferred" in d.message]
    assert len(notices) == 1
    assert "2 conditions (grpo+none, maxrl+gtpo_sepa) x 2 seeds" in notices[0]
    assert "write campaign.yaml with id:" in notices[0] and "baseline_condition: <one of them>" in notices[0]
    assert campaign.inferred == notices[0]
    runs = {p.id: load_run(tree, p) for p in tree.plan.runs}
    assert runs["runs/maxrl+gtpo_sepa_s101"].condition == "maxrl+gtpo_sepa"
    assert runs["runs/maxrl+gtpo_sepa_s101"].seed == 101
    assert {r.campaign for r in runs.values()} == {tmp_path.name}
    # the one thing missing is said as what to write, not as a file that is not there
    (problem,) = campaign_stats(campaign, []).problems
    assert problem.startswith("no baseline_condition in a campaign.yaml (there is none: this campaign was inferred")


def test_folder_names_alone_form_a_campaign(tmp_path: Path) -> None:
    """No condition or seed in the records: the names `<condition>_s<seed>` say it, below a nested folder."""
    for c in ("lr_1e-4", "lr_3e-4"):
        for s in (1, 2):
            _log(tmp_path / "sweeps" / "lr" / f"{c}_s{s}")
    tree = SourceTree.open(tmp_path)
    campaign = tree.found.campaigns["sweeps/lr"]  # the folder holding the run folders
    assert [c.name for c in campaign.conditions] == ["lr_1e-4", "lr_3e-4"]
    assert "folder names <condition>_s<seed>" in campaign.inferred
    assert "write sweeps/lr/campaign.yaml" in campaign.inferred


def test_records_win_over_the_folder_name(tmp_path: Path) -> None:
    _log(tmp_path / "runs" / "a_s1", condition="a", seed=7)
    _log(tmp_path / "runs" / "b_s1", condition="b", seed=1)
    tree = SourceTree.open(tmp_path)
    by_id = {p.id: p.source for p in tree.plan.runs}
    assert by_id["runs/a_s1"].seed == 7
    warnings = [d.message for d in tree.diags.items if d.severity == "warning"]
    assert any("the folder name says seed 1, its records 7" in w for w in warnings)


def test_a_seed_folder_alone_or_one_condition_is_no_campaign(tmp_path: Path) -> None:
    _log(tmp_path / "one" / "runs" / "a_s1")  # a single run
    for s in (1, 2, 3):
        _log(tmp_path / "reps" / "runs" / f"a_s{s}")  # one condition's seeds: replicates, not a campaign
    tree = SourceTree.open(tmp_path)
    assert tree.found.campaigns == {}
    assert not [d for d in tree.diags.items if "inferred" in d.message]


def test_mixed_run_yaml_and_none(tmp_path: Path) -> None:
    """A run.yaml that adds a hypothesis leaves the folder's place as its name says; one that names a condition wins."""
    _retrain(tmp_path, seeds=(1, 2))
    (tmp_path / "runs" / "grpo+none_s1" / "run.yaml").write_text("hypothesis: the baseline learns\n")
    (tmp_path / "runs" / "grpo+none_s2" / "run.yaml").write_text("condition: control\nseed: 9\n")
    tree = SourceTree.open(tmp_path)
    campaign = tree.found.campaigns[tmp_path.name]
    assert [c.name for c in campaign.conditions] == ["control", "grpo+none", "maxrl+gtpo_sepa"]
    runs = {p.id: load_run(tree, p) for p in tree.plan.runs}
    assert runs["runs/grpo+none_s1"].adapter == "native"
    assert (runs["runs/grpo+none_s1"].condition, runs["runs/grpo+none_s1"].seed) == ("grpo+none", 1)
    assert (runs["runs/grpo+none_s2"].condition, runs["runs/grpo+none_s2"].seed) == ("control", 9)


def test_run_yaml_alone_is_left_as_written(tmp_path: Path) -> None:
    """Runs whose run.yaml names conditions but no campaign were never a campaign: still not one."""
    for c in ("a", "b"):
        _log(tmp_path / c)
        (tmp_path / c / "run.yaml").write_text(f"condition: {c}\nseed: 1\n")
    assert SourceTree.open(tmp_path).found.campaigns == {}


def test_campaign_yaml_over_the_layout_needs_no_run_yaml(tmp_path: Path) -> None:
    conditions = ("grpo+none", "maxrl+gtpo_hicra", "maxrl+gtpo_sepa")
    for c in conditions:
        for s in (1, 2, 3):
            _log(tmp_path / "runs" / f"{c}_s{s}")  # nothing in the records: the declared names parse the folders
    (tmp_path / "campaign.yaml").write_text(
        "id: sepa\nprimary_metric: correct_rate\nbaseline_condition: grpo+none\nconditions:\n"
        + "".join(f"  - name: {c}\n" for c in conditions)
    )
    tree = SourceTree.open(tmp_path)
    assert list(tree.found.campaigns) == ["sepa"]
    assert not [d for d in tree.diags.items if d.severity == "error"]
    campaign, summaries = campaign_summaries(tree, "sepa")
    assert sorted((s.condition, s.seed) for s in summaries) == [(c, s) for c in conditions for s in (1, 2, 3)]
    assert not campaign.inferred


def test_wandb_config_names_condition_and_seed(tmp_path: Path) -> None:
    for c in ("a", "b"):
        for s in (1, 2):
            files = tmp_path / "wandb" / f"run-20250101_00000{s}-{c}{s}x" / "files"
            files.mkdir(parents=True)
            (files / "config.yaml").write_text(f"condition:\n  value: {c}\nseed:\n  value: {s}\n")
            (files / "wandb-summary.json").write_text(json.dumps({"correct_rate": 0.5}))
    tree = SourceTree.open(tmp_path)
    campaign = tree.found.campaigns["wandb"]
    assert [c.name for c in campaign.conditions] == ["a", "b"] and campaign.seeds == [1, 2]
    assert "W&B config (condition)" in campaign.inferred


def test_spec_runs_and_arms_are_never_inferred_into_a_campaign(tmp_path: Path) -> None:
    """Ablation arms named `<arm>_s<seed>` below a spec.yaml are the spec's arms (analysis/arms.py), and arms
    outside one too: neither becomes a campaign, nor gets a condition from its folder's name."""
    for arm in ("full", "no-schema"):
        for s in (1, 2):
            _log(tmp_path / "onto" / f"{arm}_s{s}")
            (tmp_path / "onto" / f"{arm}_s{s}" / "run.yaml").write_text(f"id: onto-{arm}-{s}\narm: {arm}\nseed: {s}\n")
            _log(tmp_path / "loose" / f"{arm}_s{s}")
            (tmp_path / "loose" / f"{arm}_s{s}" / "run.yaml").write_text(f"id: loose-{arm}-{s}\narm: {arm}\n")
    (tmp_path / "onto" / "spec.yaml").write_text("id: onto\n")
    tree = SourceTree.open(tmp_path)
    assert tree.found.campaigns == {}
    assert all(p.source.condition is None and p.source.campaign is None for p in tree.plan.runs)


def test_obs_yaml_primary_metric_leads_an_inferred_campaign(tmp_path: Path) -> None:
    _retrain(tmp_path)
    (tmp_path / "obs.yaml").write_text("primary_metric: loss\n")
    campaign = SourceTree.open(tmp_path).found.campaigns[tmp_path.name]
    assert campaign.primary_metric == "loss" and "primary metric loss (obs.yaml's primary_metric)" in campaign.inferred


@pytest.mark.parametrize("value", ["9" * 5000, 10**30, "²", "١٢", True, 1.5, float("inf")])
def test_an_implausible_seed_in_a_record_is_no_seed(value: object) -> None:
    """A seed is a machine integer: huge numbers, non-ASCII digits, booleans and fractions are not seeds (the
    first two once raised out of the build)."""
    from obs.layout import _seed

    assert _seed(value) is None
