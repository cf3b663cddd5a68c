"""A campaign's conditions from W&B's own group and tags (issue 33): `wandb.init(group=..., tags=[...])` is kept
only in the run record of the binary `run-<id>.wandb`, read with the SDK's reader. The files are written here
with the SDK's own writer (`DataStore.write` of `Record` protocol buffers), as a client writes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from obs.pipeline import SourceTree, load_run

wandb_pb = pytest.importorskip("wandb.proto.wandb_internal_pb2", reason="the wandb extra is not installed")
datastore = pytest.importorskip("wandb.sdk.internal.datastore", reason="the wandb extra is not installed")


def _wandb_run(root: Path, name: str, *, group: str = "", tags: tuple[str, ...] = (), config: str = "") -> Path:
    folder = root / "wandb" / f"run-20250101_000000-{name}"
    (folder / "files").mkdir(parents=True)
    (folder / "files" / "wandb-summary.json").write_text(json.dumps({"correct_rate": 0.5, "_step": 2}))
    (folder / "files" / "config.yaml").write_text(config or "lr:\n  value: 0.001\n")
    store = datastore.DataStore()
    store.open_for_write(str(folder / f"run-{name}.wandb"))
    run = wandb_pb.Record()
    run.run.run_id = name
    run.run.run_group = group
    run.run.tags.extend(tags)
    run.run.job_type = "train"
    store.write(run)
    for step in range(3):
        row = wandb_pb.Record()
        item = row.history.item.add()
        item.key = "correct_rate"
        item.value_json = json.dumps(0.1 * step)
        row.history.step.num = step
        store.write(row)
    store.close()
    return folder


def test_the_group_is_the_condition_and_a_seed_tag_the_seed(tmp_path: Path) -> None:
    for cond in ("grpo", "sepa"):
        for seed in (1, 2):
            _wandb_run(tmp_path, f"{cond}{seed}", group=cond, tags=(f"seed:{seed}", "v2"))
    tree = SourceTree.open(tmp_path)
    campaign = tree.found.campaigns["wandb"]
    assert [c.name for c in campaign.conditions] == ["grpo", "sepa"] and campaign.seeds == [1, 2]
    assert "the W&B runs' group (wandb.init(group=...), from their run-*.wandb files)" in campaign.inferred
    assert "the W&B runs' tags seed:<n>" in campaign.inferred
    # no log to take a first record from: the summary's final values name the primary metric
    assert campaign.primary_metric == "correct_rate" and "primary metric correct_rate" in campaign.inferred
    notices = [d.message for d in tree.diags.items if d.severity == "info" and "inferred" in d.message]
    assert notices == [campaign.inferred]
    run = load_run(tree, next(p for p in tree.plan.runs if p.id.endswith("sepa2")))
    assert (run.campaign, run.condition, run.seed) == ("wandb", "sepa", 2)
    assert run.tags == ["seed:2", "v2"] and run.provenance["wandb_group"] == "sepa"
    assert run.metrics is not None and run.metrics.get("correct_rate") is not None


def test_a_condition_tag_wins_over_the_group_and_the_config_over_both(tmp_path: Path) -> None:
    _wandb_run(tmp_path, "a1", group="sweep-7", tags=("condition:base", "seed=1"))
    _wandb_run(tmp_path, "a2", group="sweep-7", tags=("condition=base", "seed-2"))
    _wandb_run(tmp_path, "b1", group="sweep-7", tags=("condition:cand", "seed_1"))
    _wandb_run(tmp_path, "b2", group="sweep-7", tags=("seed:2",), config="condition:\n  value: cand\n")
    tree = SourceTree.open(tmp_path)
    campaign = tree.found.campaigns["wandb"]
    assert [c.name for c in campaign.conditions] == ["base", "cand"] and campaign.seeds == [1, 2]
    assert "the W&B runs' tags condition:<name>" in campaign.inferred
    assert "W&B config (condition)" in campaign.inferred
    assert "group" not in campaign.inferred  # the group said nothing: every run's is the same sweep


def test_tags_that_name_no_place_and_one_group_form_no_campaign(tmp_path: Path) -> None:
    for name in ("x1", "x2", "y1"):
        _wandb_run(tmp_path, name, group="one-group", tags=("baseline", "debug"))
    tree = SourceTree.open(tmp_path)
    assert "wandb" not in tree.found.campaigns  # one condition: seeds of one recipe, not a campaign
    run = load_run(tree, tree.plan.runs[0])
    assert run.condition is None and run.campaign is None  # a run in no campaign keeps what its files say
