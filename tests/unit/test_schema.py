"""obs.schema: one declaration per input file gives the validation, the defaults and the docs' tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from obs.adapters import adapter_named
from obs.adapters.base import LoadContext
from obs.config import DEFAULT_THRESHOLDS, SiteConfig, load_config
from obs.diagnostics import Diagnostics
from obs.discover import discover, read_campaign, read_spec
from obs.fields import YamlFields
from obs.model import Run
from obs.safeyaml import load_yaml_text
from obs.schema import (
    CAMPAIGN_YAML,
    DOC_TABLES,
    OBS_YAML,
    RUN_YAML,
    SPEC_YAML,
    TABLE_END,
    Field,
    Nested,
    Schema,
    fill_doc_tables,
)

CONTRACT = Path(__file__).resolve().parents[2] / "docs" / "contract.md"


def messages(diags: Diagnostics) -> list[str]:
    return [d.format() for d in diags.items]


# ---------------------------------------------------------------------------------------------------- docs


def test_docs_tables_are_the_declarations() -> None:
    """docs/contract.md's tables are what scripts/contract_tables.py makes from obs.schema, and all are there."""
    text = CONTRACT.read_text(encoding="utf-8")
    assert fill_doc_tables(text) == text, "run scripts/contract_tables.py to regenerate docs/contract.md's tables"
    for name in DOC_TABLES:
        assert TABLE_END.format(name=name) in text, f"docs/contract.md has no table for {name}"


def test_a_stale_or_unknown_docs_table_is_caught() -> None:
    text = CONTRACT.read_text(encoding="utf-8")
    stale = text.replace("| `seed` | int |", "| `seed` | string |")
    assert stale != text and fill_doc_tables(stale) == text
    with pytest.raises(KeyError):
        fill_doc_tables("<!-- table nothing.yaml: generated from here -->\n<!-- end of table nothing.yaml -->")
    with pytest.raises(ValueError):
        fill_doc_tables("<!-- table run.yaml: generated from here -->\n| a |\n")


def _fields(schema: Schema) -> list[tuple[str, Field]]:
    out = []
    for f in schema.fields:
        out.append((f"{schema.title}:{f.name}", f))
        if isinstance(f.kind, Nested) and f.kind.schema is not None:
            out += _fields(f.kind.schema)
    return out


ALL_FIELDS = [pair for schema in (RUN_YAML, SPEC_YAML, CAMPAIGN_YAML, OBS_YAML) for pair in _fields(schema)]


@pytest.mark.parametrize(("where", "declared"), ALL_FIELDS, ids=[w for w, _ in ALL_FIELDS])
def test_every_default_is_a_value_its_field_accepts(where: str, declared: Field) -> None:
    if declared.default is None or isinstance(declared.kind, Nested):
        return
    doc = load_yaml_text("x: 1\n")
    at = YamlFields(doc, Path("f.yaml"), Diagnostics())
    assert declared.kind.parse(declared.default_value(), at, declared.name) == declared.default, where


def test_every_field_has_a_doc() -> None:
    assert [w for w, f in ALL_FIELDS if not f.doc.strip()] == []


# ---------------------------------------------------------------------------------------------------- run.yaml


def load_run(tmp_path: Path, run_yaml: str) -> tuple[Run, list[str]]:
    folder = tmp_path / "r"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.yaml").write_text(run_yaml)
    (source,) = discover(tmp_path).runs
    ctx = LoadContext(root=tmp_path, config=SiteConfig(), diags=Diagnostics(root=tmp_path))
    run = adapter_named("native").load(source, ctx)
    return run, [m.removeprefix(f"{tmp_path.name}/") for m in messages(ctx.diags)]


def test_run_yaml_fields_are_converted_as_declared(tmp_path: Path) -> None:
    run, said = load_run(
        tmp_path,
        "id: r9\nrevision: 3\nseed: '7'\nstatus: Running\nheld_constant: data\ntags: [1, x]\n"
        "success_criteria: [a, b]\ndate: 2026-03-01\ndecision: {verdict: Promote, rationale: fine}\n",
    )
    assert (run.id, run.revision, run.seed, run.status) == ("r9", "3", 7, "running")
    assert run.held_constant == ["data"] and run.tags == ["1", "x"]
    assert run.success_criteria == "- a\n- b" and run.date == "2026-03-01"
    assert run.decision is not None and (run.decision.verdict, run.decision.rationale) == ("promote", "fine")
    assert said == []


def test_one_bad_run_yaml_field_is_a_warning_on_its_line_and_the_rest_is_kept(tmp_path: Path) -> None:
    run, said = load_run(tmp_path, "id: r9\ntitle: T\nstatus: done\nmodel: 3\nseed: x\nbaselin: r0\nobs_contract: 2\n")
    assert (run.id, run.title, run.status, run.model, run.seed) == ("r9", "T", "unknown", {}, None)  # nothing says
    statuses = "queued, running, finished, failed, crashed, unknown"
    assert f"r/run.yaml:3: warning: 'status' is 'done'; expected one of {statuses}; ignored" in said
    assert "r/run.yaml:4: warning: 'model' should be a mapping, got 3; ignored" in said
    assert "r/run.yaml:5: warning: 'seed' should be an integer, got 'x'; ignored" in said
    assert (  # one typo away from a field: a warning that names it, not a note -q would hide
        "r/run.yaml:6: warning: unknown field 'baselin' (not in contract v1); shown under other fields; "
        "did you mean 'baseline'?" in said
    )
    assert any(m.startswith("r/run.yaml:7: error: obs_contract: 2 is not a version") for m in said)
    assert run.other_fields == {"baselin": "r0"}


def test_an_unknown_verdict_is_kept_and_flagged(tmp_path: Path) -> None:
    run, said = load_run(tmp_path, "decision:\n  verdict: hold\n  whom: me\n")
    assert run.decision is not None and run.decision.verdict == "hold"
    verdicts = "promote, reject, repair, branch"
    assert f"r/run.yaml:2: warning: 'decision.verdict' is 'hold'; expected one of {verdicts}; kept as written" in said
    assert any(m.startswith("r/run.yaml:3: info: unknown field 'decision.whom'") for m in said)


# ---------------------------------------------------------------------------------------------------- obs.yaml


def config(tmp_path: Path, text: str) -> tuple[SiteConfig, list[str]]:
    (tmp_path / "obs.yaml").write_text(text)
    diags = Diagnostics(root=tmp_path)
    return load_config(tmp_path, diags), messages(diags)


def test_obs_yaml_bad_setting_falls_back_to_its_declared_default(tmp_path: Path) -> None:
    cfg, said = config(tmp_path, "title: Mine\nmax_points: -1\nthresholds: {low_exact: x, split_gap: 0.3}\n")
    assert cfg.title == "Mine" and cfg.max_points == 2000
    assert cfg.thresholds == {**DEFAULT_THRESHOLDS, "split_gap": 0.3}
    where = tmp_path.name + "/obs.yaml"
    assert f"{where}:2: warning: 'max_points' should be a positive integer, got -1; the default (2000) was used" in said
    assert f"{where}:3: warning: 'thresholds.low_exact' should be a number, got 'x'; the default (0.5) was used" in said


def test_obs_yaml_null_means_not_set(tmp_path: Path) -> None:
    cfg, said = config(tmp_path, "title:\nmax_points:\ngates:\nsweeps:\n")
    assert said == [] and cfg == SiteConfig()


def test_obs_yaml_defaults_are_the_declared_ones() -> None:
    cfg = SiteConfig()
    for name, value in OBS_YAML.defaults().items():
        assert getattr(cfg, name) == value, name
    assert cfg.axes is not SiteConfig().axes  # each config its own copy


# ---------------------------------------------------------------------------------------------------- spec and campaign


def test_campaign_yaml_wrong_values_are_reported_not_silently_dropped(tmp_path: Path) -> None:
    (tmp_path / "campaign.yaml").write_text(
        "obs_contract: 1\nfinal_window: 0\nhigher_is_better: 'yes'\nseeds: '1,2'\n"
        "evidence: {min_seeds: three, min_steps: 10, min_runs: 4}\nalpha: 2\nhypothesis: x\n"
    )
    diags = Diagnostics(root=tmp_path)
    camp = read_campaign(tmp_path, diags)
    assert camp is not None
    assert (camp.final_window, camp.higher_is_better, camp.seeds, camp.alpha) == (10, True, [], 0.05)
    assert camp.evidence == {"min_steps": 10.0, "min_runs": 4.0}
    assert camp.extra == {"hypothesis": "x"}
    said = " | ".join(messages(diags))
    for line, fragment in [
        (2, "'final_window' should be a positive integer, got 0; the default (10) was used"),
        (3, "'higher_is_better' should be true or false, got 'yes'; the default (true) was used"),
        (4, "'seeds' should be a list of integers, got '1,2'; ignored"),
        (5, "'evidence.min_seeds' should be a number, got 'three'; ignored"),
        (5, "info: unknown evidence minimum 'min_runs'"),
        (6, "'alpha' should be a number between 0 and 1, got 2; the default (0.05) was used"),
        (7, "info: unknown field 'hypothesis' (not in contract v1)"),
    ]:
        assert f"campaign.yaml:{line}: " in said and fragment in said, fragment
    assert len(diags.items) == 7  # one message per problem: a string of seeds is not read character by character


def test_spec_yaml_declares_the_contract_version_and_reports_unknown_keys(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text("obs_contract: 1\ntitle: T\ncontract: x\nfoo: 1\n")
    diags = Diagnostics(root=tmp_path)
    spec = read_spec(tmp_path, diags)
    assert spec is not None and (spec.id, spec.title, spec.contract) == (tmp_path.name, "T", {})
    said = messages(diags)
    assert len(said) == 2
    assert said[0].endswith("spec.yaml:3: warning: 'contract' should be a mapping, got 'x'; ignored")
    assert said[1].endswith("spec.yaml:4: info: unknown field 'foo' (not in contract v1); ignored")
