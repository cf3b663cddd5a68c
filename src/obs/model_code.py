"""The model's declared attributes, written from obs.schema: each YAML field is declared once.

run.yaml, spec.yaml, campaign.yaml and obs.yaml are declared in obs.schema (name, kind, default, doc).
The classes that hold what they say (`Run`, its `Decision`, `Spec`, `Campaign` in obs.model, `SiteConfig` in obs.config)
are plain typed dataclasses, which mypy and the readers of the code see as they are; the attributes that
come from a file are written into them from the declaration, between two marker comments, by
scripts/contract_tables.py (as the tables of docs/contract.md are). So are the typed mappings that lay a
file's values over its object (`RunYamlValues` and `lay_run_yaml_values` in obs.adapters.native,
`ObsYamlValues` in obs.config, `SpecYamlValues` and `CampaignYamlValues` in obs.discover): explicit
assignments, checked by mypy, instead of a `setattr` by the field's name. tests/unit/test_declared_fields.py
fails when a marked block differs from what its declaration makes.

Generated rather than built at import time (a class made by `make_dataclass`): mypy and an editor read
the attributes and their types from the file; and the model stays in the bottom layer, importing no schema.
Nothing imports this module when obs runs: only the script and the tests.

A marker names its block: `# attributes of run.yaml: generated ...` (the attributes of the file's fields
inside the class), `# values of run.yaml: generated ...` (the TypedDict of the values read, and the function
that lays them over the object).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from obs.schema import CAMPAIGN_YAML, DECISION, OBS_YAML, RUN_YAML, SPEC_YAML, Field, Schema

# the files, and run.yaml's `decision:` (held by its own class, `Decision`)
SCHEMAS: dict[str, Schema] = {s.title: s for s in (RUN_YAML, DECISION, SPEC_YAML, CAMPAIGN_YAML, OBS_YAML)}
MAX_LINE = 120  # ruff's line length (pyproject.toml)
# declared, held, and written by hand as the class's first attribute: a required argument, not a default
HEAD = ("id",)


@dataclass(frozen=True)
class Values:
    """How one file's values are laid over its object: `target` (a `Run`, named `run`), the fields set by hand
    (`by_hand`: a run.yaml's `decision` replaces the run's even when empty), and whether an empty value
    (`""`, `[]`, `{}`) leaves the object's value as it was (a run.yaml over what another format read)."""

    typed_dict: str
    function: str
    target: str
    target_type: str
    by_hand: tuple[str, ...] = ()
    keep_on_empty: bool = False
    said_as: str = ""  # how the docstrings name what gave the values; by default "a <file>"


VALUES: dict[str, Values] = {
    "run.yaml": Values("RunYamlValues", "lay_run_yaml_values", "run", "Run", by_hand=("decision",), keep_on_empty=True),
    "decision": Values(
        "DecisionValues", "lay_decision_values", "decision", "Decision", said_as="run.yaml's `decision:`"
    ),
    "obs.yaml": Values("ObsYamlValues", "lay_obs_yaml_values", "cfg", "SiteConfig"),
    # the id (by default the folder's name) is the constructor's; the reader turns these into model objects
    "spec.yaml": Values("SpecYamlValues", "lay_spec_yaml_values", "spec", "Spec", by_hand=("id",)),
    "campaign.yaml": Values(
        "CampaignYamlValues",
        "lay_campaign_yaml_values",
        "campaign",
        "Campaign",
        by_hand=("id", "conditions", "evidence", "litmus", "metrics", "paired", "sample_efficiency", "coupling"),
    ),
}

# The files holding marked blocks, relative to src/.
FILES = ("obs/model.py", "obs/config.py", "obs/adapters/native.py", "obs/discover.py")

START = "# {what} of {file}: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit"
END = "# end of the {what} of {file}"
_MARKER = re.compile(r"^( *)# (attributes|values) of (\S+): generated from .*$", re.M)


def attribute_type(f: Field) -> str:
    """The model attribute's annotation: the kind's Python type (or the field's own), `| None` without a default."""
    kind = f.attr_type or f.kind.py_type
    return f"{kind} | None" if f.default is None and not f.model_default else kind


def attribute_default(f: Field) -> str:
    """The model attribute's default, as Python source."""
    if f.model_default:
        return f.model_default
    value = f.default
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value == []:
        return "field(default_factory=list)"
    if value == {}:
        return "field(default_factory=dict)"
    # a non-empty list or mapping: a fresh copy of the declared default (the module defines `_default`)
    return f'field(default_factory=lambda: _default("{f.name}"))'


def attributes(schema: Schema, indent: str) -> list[str]:
    """The lines declaring the attributes of `schema`'s held fields (the `HEAD` ones are written by hand)."""
    lines = []
    for f in schema.fields:
        if f.held and f.name not in HEAD:
            if f.model_note:
                lines.append(f"{indent}# {f.model_note}")
                if len(lines[-1]) > MAX_LINE:
                    raise ValueError(f"{schema.title} {f.name}: model_note longer than a line of code ({MAX_LINE})")
            lines.append(f"{indent}{f.name}: {attribute_type(f)} = {attribute_default(f)}")
    return lines


def values(schema: Schema, how: Values) -> list[str]:
    """The TypedDict of the values a reading gives, and the function laying them over the object."""
    held = [f for f in schema.fields if f.held]
    source = how.said_as or f"{'an' if schema.title[0] in 'aeiou' else 'a'} {schema.title}"
    lines = [
        f"class {how.typed_dict}(TypedDict, total=False):",
        f'    """The valid values {source} gave (`Reading.values` of its declaration), typed."""',
        "",
        *(f"    {f.name}: {f.kind.py_type}" for f in held),
        "",
        "",
        f"def {how.function}({how.target}: {how.target_type}, given: {how.typed_dict}) -> None:",
        f'    """Each value {source} gave replaces the {how.target_type}\'s'
        + (' (an empty one, `""`, `[]` or `{}`, leaves it)' if how.keep_on_empty else "")
        + ('."""' if not how.by_hand else f'.\n\n    Set by the reader itself: {", ".join(how.by_hand)}.\n    """'),
    ]
    name = "given"
    if how.keep_on_empty:  # what other files said stays unless the value is a real one (a seed of 0 is)
        name = "kept"
        lines.append(
            f'    kept = cast({how.typed_dict}, {{k: v for k, v in given.items() if v not in ("", [], {{}})}})'
        )
    for f in held:
        if f.name in how.by_hand:
            continue
        if f.kind.py_type == "Reading":  # a nested mapping: each setting given replaces its default
            lines.append(f'    if "{f.name}" in {name}:')
            lines.append(f'        {how.target}.{f.name}.update({name}["{f.name}"].values)')
        else:  # one line, no branch: what was given, else the object's own value
            lines.append(f'    {how.target}.{f.name} = {name}.get("{f.name}", {how.target}.{f.name})')
    return [*lines, "", ""]  # as ruff formats a comment after a function


def fill_code_blocks(text: str) -> str:
    """`text` (a module's source) with each marked block rewritten from its declaration.

    An unknown file or block name, or a start without its end, is an error rather than stale code.
    """
    out: list[str] = []
    rest = text
    while (m := _MARKER.search(rest)) is not None:
        indent, what, file = m.group(1), m.group(2), m.group(3)
        if file not in SCHEMAS or (what == "values" and file not in VALUES):
            raise KeyError(f"generated {what} of '{file}': not declared in obs.model_code")
        end = f"{indent}{END.format(what=what, file=file)}"
        stop = rest.find(end + "\n", m.end())
        if stop < 0:
            raise ValueError(f"generated {what} of '{file}' have no end marker ({end.strip()})")
        schema = SCHEMAS[file]
        body = attributes(schema, indent) if what == "attributes" else values(schema, VALUES[file])
        out.append(rest[: m.start()])
        out.append("\n".join([f"{indent}{START.format(what=what, file=file)}", *body, end]))
        rest = rest[stop + len(end) :]
    out.append(rest)
    return "".join(out)


def stale_files(src: Path) -> list[Path]:
    """The files of `FILES` under `src` whose marked blocks differ from what the declarations make."""
    return [
        src / name
        for name in FILES
        if fill_code_blocks((src / name).read_text("utf-8")) != (src / name).read_text("utf-8")
    ]
