"""A run's complete configuration, as the run page's Configuration section and analysis.json show it.

Every format puts what it knows of the run's settings in `config` (MLflow params, W&B config.yaml,
TensorBoard hparams, lm-eval's config, native `config:`), `model` (the model's config), `contract`
and `data`. All of it is shown, flattened to dotted keys, each key marked when it differs from the
baseline's (the same diff as the held-constant check, obs.analysis.held_constant).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from obs.analysis.held_constant import HeldConstant, flatten
from obs.model import Run

SECTIONS: tuple[tuple[str, str], ...] = (
    ("config", "configuration"),
    ("model", "model"),
    ("contract", "contract"),
    ("data", "data"),
)
OPEN_UP_TO = 60  # a group with more keys starts collapsed (a search opens it)


@dataclass(frozen=True)
class ConfigRow:
    key: str  # dotted, within the section
    value: Any
    differs: bool  # from the baseline's value (or absent there)


@dataclass(frozen=True)
class ConfigGroup:
    section: str
    label: str
    rows: tuple[ConfigRow, ...]

    @property
    def open(self) -> bool:
        return len(self.rows) <= OPEN_UP_TO

    @property
    def n_differ(self) -> int:
        return sum(r.differs for r in self.rows)


@dataclass(frozen=True)
class ConfigView:
    groups: tuple[ConfigGroup, ...]
    baseline_id: str | None
    gone: tuple[str, ...] = field(default_factory=tuple)  # keys the baseline has and this run does not

    @property
    def n_keys(self) -> int:
        return sum(len(g.rows) for g in self.groups)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sections": {g.section: {r.key: r.value for r in g.rows} for g in self.groups},
            "baseline": self.baseline_id,
            "differs_from_baseline": [f"{g.section}.{r.key}" for g in self.groups for r in g.rows if r.differs],
            "only_in_baseline": list(self.gone),
        }


def config_view(run: Run, held: HeldConstant) -> ConfigView:
    changed = {c.key for c in held.changed} if held.baseline_id else set()
    groups = []
    for section, label in SECTIONS:
        values = getattr(run, section)
        if not values:
            continue
        flat = flatten(values)
        rows = tuple(ConfigRow(k, flat[k], f"{section}.{k}" in changed) for k in sorted(flat))
        groups.append(ConfigGroup(section, label, rows))
    shown = {f"{g.section}.{r.key}" for g in groups for r in g.rows}
    gone = tuple(sorted(k for k in changed if k not in shown and k.split(".", 1)[0] in dict(SECTIONS)))
    return ConfigView(tuple(groups), held.baseline_id, gone)
