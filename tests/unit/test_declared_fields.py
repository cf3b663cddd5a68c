"""Each YAML file's fields are declared in obs.schema and held by a model class (Run, Spec, Campaign, SiteConfig),
whose attributes are written from the declaration (obs.model_code, by scripts/contract_tables.py): the written code
must be what the declarations make, and the two must name the same fields with the same defaults, so a field added
to one and not the other fails here instead of being dropped (or never validated) in silence. The exceptions are
listed, each with its reason."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from obs.adapters.native import DecisionValues, RunYamlValues, lay_decision_values, lay_run_yaml_values
from obs.config import ObsYamlValues, SiteConfig, lay_obs_yaml_values
from obs.diagnostics import Diagnostics
from obs.discover import CampaignYamlValues, SpecYamlValues, lay_campaign_yaml_values, lay_spec_yaml_values
from obs.fields import YamlFields
from obs.model import Campaign, Decision, MetricDecl, Run, Spec
from obs.model_code import FILES, fill_code_blocks, stale_files
from obs.safeyaml import load_yaml_text
from obs.schema import CAMPAIGN_YAML, DECISION, OBS_YAML, RUN_YAML, SPEC_YAML, Reading, Schema

SRC = Path(__file__).resolve().parents[2] / "src"

# declared fields that are not attributes: read once by the reader itself
READ_NOT_HELD = {
    "run.yaml": {"obs_contract", "step_key", "metrics_file"},  # the contract version; how the log is read
    "decision": set(),
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
        "plan_status",
        "plan_stage",  # training_plan.json's status and stage (issue 27)
        "reader_metric",
        "reader_metric_from",  # a format's own headline metric
    },
    "decision": set(),
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
    ("decision", DECISION, Decision),  # run.yaml's decision:
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


@pytest.mark.parametrize(("file", "schema", "model"), PAIRS, ids=[p[0] for p in PAIRS])
def test_the_fields_no_attribute_holds_are_declared_so(file: str, schema: Schema, model: type[Any]) -> None:
    assert {f.name for f in schema.fields if not f.held} == READ_NOT_HELD[file]


def test_the_generated_attributes_and_mappings_are_the_declarations() -> None:
    assert stale_files(SRC) == [], "run scripts/contract_tables.py to write them again from src/obs/schema.py"
    text = "".join((SRC / name).read_text("utf-8") for name in FILES)
    for file in ("run.yaml", "decision", "spec.yaml", "campaign.yaml", "obs.yaml"):
        assert f"# end of the attributes of {file}\n" in text, f"no class holds the attributes of {file}"
        assert f"# end of the values of {file}\n" in text, f"no typed mapping lays the values of {file}"


def test_a_stale_or_unknown_generated_block_is_caught() -> None:
    model = (SRC / "obs/model.py").read_text("utf-8")
    stale = model.replace("    seed: int | None = None\n", "    seed: str | None = None\n", 1)
    assert stale != model and fill_code_blocks(stale) == model
    with pytest.raises(KeyError):
        fill_code_blocks("# attributes of nothing.yaml: generated from here\n# end of the attributes of nothing.yaml\n")
    with pytest.raises(KeyError):  # a nested mapping's values are not laid over anything by generated code
        fill_code_blocks("# values of thresholds: generated from here\n# end of the values of thresholds\n")
    with pytest.raises(ValueError):
        fill_code_blocks("    # attributes of run.yaml: generated from here\n    title: str\n")


def test_every_run_yaml_value_given_replaces_the_runs_except_the_decision() -> None:
    """Each held field reaches its attribute (the decision is laid by hand: written empty, it clears the run's)."""
    given = {name: object() for name in RunYamlValues.__annotations__}
    run = Run("r", Path("."))
    lay_run_yaml_values(run, given)  # type: ignore[arg-type]
    reached = {name for name, value in given.items() if getattr(run, name) is value}
    assert reached == {f.name for f in RUN_YAML.fields if f.held} - {"decision"}
    assert run.decision is None


@pytest.mark.parametrize(
    ("schema", "typed", "lay", "model", "by_hand"),
    [
        (DECISION, DecisionValues, lay_decision_values, lambda *_: Decision(), set()),
        (SPEC_YAML, SpecYamlValues, lay_spec_yaml_values, Spec, {"id"}),
        (
            CAMPAIGN_YAML,
            CampaignYamlValues,
            lay_campaign_yaml_values,
            Campaign,
            # what obs.discover.read_campaign makes model objects of, or reads only when given
            {"id", "conditions", "evidence", "litmus", "metrics", "paired", "sample_efficiency", "coupling"},
        ),
    ],
    ids=["decision", "spec.yaml", "campaign.yaml"],
)
def test_every_decision_spec_and_campaign_value_given_replaces_the_objects_but_those_read_by_hand(
    schema: Schema, typed: type[Any], lay: Any, model: Any, by_hand: set[str]
) -> None:
    given = {name: object() for name in typed.__annotations__}
    target = model("x", Path("."))
    lay(target, given)
    reached = {name for name, value in given.items() if getattr(target, name) is value}
    assert reached == {f.name for f in schema.fields if f.held} - by_hand
    assert set(given) == {f.name for f in schema.fields if f.held}


def test_an_empty_run_yaml_value_leaves_the_runs_but_a_seed_of_0_is_a_seed() -> None:
    run = Run("r", Path("."), title="from the trainer", tags=["hf"], config={"lr": 1}, seed=7)
    given: RunYamlValues = {"title": "", "tags": [], "config": {}, "seed": 0, "id": ""}
    lay_run_yaml_values(run, given)
    assert (run.id, run.title, run.tags, run.config, run.seed) == ("r", "from the trainer", ["hf"], {"lr": 1}, 0)


def test_every_obs_yaml_value_given_replaces_the_settings_and_a_nested_one_each_setting() -> None:
    nested = {"thresholds", "sweeps", "trends", "arms"}
    given: dict[str, Any] = {
        name: SimpleNamespace(values={"given": object()}) if name in nested else object()
        for name in ObsYamlValues.__annotations__
    }
    cfg = SiteConfig()
    lay_obs_yaml_values(cfg, given)  # type: ignore[arg-type]
    for name, value in given.items():
        if name in nested:  # the setting given is added, the defaults of the others kept
            held = getattr(cfg, name)
            assert held["given"] is value.values["given"] and set(held) - {"given"} == set(getattr(SiteConfig(), name))
        else:
            assert getattr(cfg, name) is value, name
    assert set(given) == {f.name for f in OBS_YAML.fields}


# Values of every shape, and one a field of each kind accepts, to be written in every field.
SAMPLES: list[Any] = [
    "text",
    3,
    0.5,
    True,
    ["a", "b"],
    [1, 2],
    {"a": "b"},
    {"a": ["b"]},
    {"a": True},
    {"a": 1.5},
    "promote",
    "finished",
    "mean",
    "last",
    "https://example.org/",
    [{"name": "a"}],
    {"acc": {"tier": "primary"}},
    [{"proxy": "a", "downstream": "b"}],
    {"size_key": "config.n"},
    ["exact >= 0.5"],
]
TYPES = {"Any": Any, "Reading": Reading, "MetricDecl": MetricDecl}


def conforms(value: Any, annotation: Any) -> bool:
    """`value` is of the type `annotation` (the subset of types the kinds name), element by element."""
    if annotation is Any:
        return True
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list:
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(conforms(k, args[0]) and conforms(v, args[1]) for k, v in value.items())
    if annotation is float:
        return type(value) is float
    return type(value) is annotation  # a bool is not an int here


@pytest.mark.parametrize(("file", "schema", "model"), PAIRS, ids=[p[0] for p in PAIRS])
def test_what_a_field_reads_is_of_the_type_its_attribute_is_written_with(
    file: str, schema: Schema, model: type[Any]
) -> None:
    """The generated attributes and mappings take their types from the kinds' `py_type`: whatever is written in a
    field, what the reading keeps is of that type (and every field keeps at least one of the samples)."""
    kept_one: set[str] = set()
    for f in schema.fields:
        annotation = eval(f.kind.py_type, dict(TYPES))  # a declaration's type, e.g. "list[str]"
        for sample in SAMPLES:
            doc = load_yaml_text(json.dumps({f.name: sample}))
            reading = schema.read(YamlFields(doc, Path(file), Diagnostics()))
            if f.name in reading.values:
                kept_one.add(f.name)
                assert conforms(reading.values[f.name], annotation), (f.name, sample, reading.values[f.name])
    assert kept_one == {f.name for f in schema.fields}
