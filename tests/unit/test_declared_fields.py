"""Each YAML file's fields are declared in obs.schema and held by a model class (Run, Spec, Campaign, SiteConfig):
the two must name the same fields with the same defaults, so a field added to one and not the other fails here
instead of being dropped (or never validated) in silence. The exceptions are listed, each with its reason."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from obs.config import SiteConfig
from obs.model import Campaign, Run, Spec
from obs.schema import CAMPAIGN_YAML, OBS_YAML, RUN_YAML, SPEC_YAML, Schema

# declared fields that are not attributes: read once by the reader itself
READ_NOT_HELD = {
    "run.yaml": {"obs_contract", "step_key", "metrics_file"},  # the contract version; how the log is read
    "spec.yaml": {"obs_contract"},
    "campaign.yaml": {"obs_contract"},
    "obs.yaml": set(),
}
# attributes that no file field gives: where the model found the thing, or what another input filled
NOT_DECLARED = {
    "run.yaml": {
        "adapter",
        "source_dir",
        "diagnostics",
        "other_fields",
        "full_text",
        "notices",  # how it was read
        "metrics",
        "probe",
        "probe_repaired",
        "gate",
        "notes",
        "evals",
        "summary",
        "generations",  # the other files (generations: emergence/generations.jsonl)
        "reader_metric",
        "reader_metric_from",  # a format's own headline metric
    },
    "spec.yaml": {"source_dir"},
    # extra: the unknown keys, kept and reported; metrics_from: the file its metric tiers came from (or obs.yaml);
    # inferred: how discovery formed a campaign that no campaign.yaml declares (obs.layout)
    "campaign.yaml": {"source_dir", "extra", "metrics_from", "inferred"},
    "obs.yaml": {"extra"},
}
# a default the model sets where the declaration has none: an id is required; a run's status reads "unknown"
MODEL_DEFAULTS = {("run.yaml", "id"), ("spec.yaml", "id"), ("campaign.yaml", "id"), ("run.yaml", "status")}

PAIRS: list[tuple[str, Schema, type[Any]]] = [
    ("run.yaml", RUN_YAML, Run),
    ("spec.yaml", SPEC_YAML, Spec),
    ("campaign.yaml", CAMPAIGN_YAML, Campaign),
    ("obs.yaml", OBS_YAML, SiteConfig),
]


@pytest.mark.parametrize(("file", "schema", "model"), PAIRS, ids=[p[0] for p in PAIRS])
def test_the_schema_and_the_model_name_the_same_fields(file: str, schema: Schema, model: type[Any]) -> None:
    declared = {f.name for f in schema.fields}
    held = {f.name for f in dataclasses.fields(model)}
    assert declared - held == READ_NOT_HELD[file], "declared in obs.schema, but no attribute of the model"
    assert held - declared == NOT_DECLARED[file], "an attribute of the model that obs.schema does not declare"


@pytest.mark.parametrize(("file", "schema", "model"), PAIRS, ids=[p[0] for p in PAIRS])
def test_the_model_starts_from_the_declared_defaults(file: str, schema: Schema, model: type[Any]) -> None:
    declared = schema.defaults()
    for f in dataclasses.fields(model):
        if f.name not in declared or (file, f.name) in MODEL_DEFAULTS:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        else:
            assert f.default_factory is not dataclasses.MISSING, f"{model.__name__}.{f.name} has no default"
            default = f.default_factory()
        assert default == declared[f.name], f"{model.__name__}.{f.name}"
