"""Site settings from `obs.yaml`, with defaults for everything.

Thresholds live here (not in the analysis code) so a team can tune what "plateau" or "regression"
means for its own runs, and so the page can say which threshold fired.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from obs.diagnostics import Diagnostics
from obs.fields import YamlFields
from obs.safepaths import safe_input
from obs.safeyaml import load_mapping
from obs.schema import DEFAULT_AXES as DEFAULT_AXES  # re-exported: declared in obs.schema
from obs.schema import OBS_YAML, SWEEPS, THRESHOLDS, Reading
from obs.schema import SWEEP_GROUPINGS as SWEEP_GROUPINGS
from obs.vocabulary import lower_is_better

CONFIG_FILE = "obs.yaml"

# Names of checks whose `true` means a problem (truncated, special_token_leak, ...).
DEFAULT_NEGATIVE_PATTERN = re.compile(r"truncat|leak|error|^missing_|^duplicate_", re.IGNORECASE)


# The defaults are declared with the fields, in obs.schema; these names are what the rest of obs imports.
DEFAULT_THRESHOLDS: dict[str, float] = THRESHOLDS.defaults()
DEFAULT_SWEEPS: dict[str, Any] = SWEEPS.defaults()


def _default(name: str) -> Any:
    """A fresh copy of an obs.yaml default (so no two configs share a list or a mapping)."""
    return OBS_YAML.declared(name).default_value()


@dataclass
class SiteConfig:
    """Everything `obs.yaml` can set (declared in obs.schema). Unknown keys are reported, never silently ignored."""

    # attributes of obs.yaml: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
    title: str = "Run observatory"
    base_url: str = ""
    primary_metric: str = "exact"
    min_effect: float = 0.0
    negative_checks: list[str] = field(default_factory=list)
    max_points: int = 2000
    final_window: int = 10
    axes: dict[str, list[str]] = field(default_factory=lambda: _default("axes"))
    thresholds: dict[str, float] = field(default_factory=lambda: _default("thresholds"))
    higher_is_better: dict[str, bool] = field(default_factory=dict)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    x_axes: dict[str, list[str]] = field(default_factory=dict)
    same_step: str = "mean"
    restarts: str = "last"
    # name, label, expr (obs.analysis.gates)
    gates: list[dict[str, str]] = field(default_factory=list)
    sweeps: dict[str, Any] = field(default_factory=lambda: _default("sweeps"))
    trends: dict[str, int] = field(default_factory=lambda: _default("trends"))
    arms: dict[str, Any] = field(default_factory=lambda: _default("arms"))
    # the leaderboard's filters; None: automatic
    provenance_facets: list[str] | None = None
    leaderboard_rows: int = 500
    seed_keys: list[str] = field(default_factory=list)
    # size_key | series, metric, group_by, label (analysis.sample_efficiency); None: the view is off
    sample_efficiency: dict[str, Any] | None = None
    # proxy, downstream, label (analysis.coupling)
    coupling: list[dict[str, str]] = field(default_factory=list)
    # expected, predicted, name (analysis.confusion)
    confusion: list[dict[str, str]] = field(default_factory=list)
    # component -> weight (analysis.reward)
    reward_components: dict[str, float] = field(default_factory=dict)
    # end of the attributes of obs.yaml
    extra: dict[str, Any] = field(default_factory=dict)

    def is_negative_check(self, name: str) -> bool:
        return name in self.negative_checks or _named_like_a_failure(name)

    def metric_higher_is_better(self, name: str) -> bool:
        """obs.yaml `metrics: {name: {better: ...}}`, then `higher_is_better`, then the vocabulary (obs.vocabulary)."""
        setting = self.metrics.get(name)
        if setting is not None and "better" in setting:
            return setting.get("better") != "lower"
        if name in self.higher_is_better:
            return self.higher_is_better[name]
        if self.is_negative_check(name):
            return False
        return not lower_is_better(name)

    def threshold(self, name: str) -> float:
        return float(self.thresholds.get(name, DEFAULT_THRESHOLDS[name]))

    def fingerprint(self) -> str:
        """Hash of every setting: part of each page's cache key."""
        payload = json.dumps(self.__dict__, sort_keys=True, default=str).encode()
        return hashlib.sha256(payload).hexdigest()[:16]


@functools.lru_cache(maxsize=4096)
def _named_like_a_failure(name: str) -> bool:
    """The default polarity rule, asked once per check name (it runs for every check of every case)."""
    return bool(DEFAULT_NEGATIVE_PATTERN.search(name))


def load_config(source: Path, diags: Diagnostics) -> SiteConfig:
    """Read `SOURCE/obs.yaml` if it exists; every problem is a diagnostic, defaults fill the rest."""
    cfg = SiteConfig()
    path = safe_input(source / CONFIG_FILE, source)  # a link out of the tree is named by discovery, not read
    if path is None:
        return cfg
    doc = load_mapping(path, diags, "settings")
    if doc is None:
        return cfg
    reading = OBS_YAML.read(YamlFields(doc, path, diags))
    lay_obs_yaml_values(cfg, cast(ObsYamlValues, reading.values))
    cfg.extra = reading.unknown
    return cfg


# values of obs.yaml: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
class ObsYamlValues(TypedDict, total=False):
    """The valid values an obs.yaml gave (`Reading.values` of its declaration), typed."""

    title: str
    base_url: str
    primary_metric: str
    min_effect: float
    negative_checks: list[str]
    max_points: int
    final_window: int
    axes: dict[str, list[str]]
    thresholds: Reading
    higher_is_better: dict[str, bool]
    metrics: dict[str, dict[str, Any]]
    x_axes: dict[str, list[str]]
    same_step: str
    restarts: str
    gates: list[dict[str, str]]
    sweeps: Reading
    trends: Reading
    arms: Reading
    provenance_facets: list[str]
    leaderboard_rows: int
    seed_keys: list[str]
    sample_efficiency: dict[str, Any]
    coupling: list[dict[str, str]]
    confusion: list[dict[str, str]]
    reward_components: dict[str, float]


def lay_obs_yaml_values(cfg: SiteConfig, given: ObsYamlValues) -> None:
    """Each value an obs.yaml gave replaces the SiteConfig's."""
    cfg.title = given.get("title", cfg.title)
    cfg.base_url = given.get("base_url", cfg.base_url)
    cfg.primary_metric = given.get("primary_metric", cfg.primary_metric)
    cfg.min_effect = given.get("min_effect", cfg.min_effect)
    cfg.negative_checks = given.get("negative_checks", cfg.negative_checks)
    cfg.max_points = given.get("max_points", cfg.max_points)
    cfg.final_window = given.get("final_window", cfg.final_window)
    cfg.axes = given.get("axes", cfg.axes)
    if "thresholds" in given:
        cfg.thresholds.update(given["thresholds"].values)
    cfg.higher_is_better = given.get("higher_is_better", cfg.higher_is_better)
    cfg.metrics = given.get("metrics", cfg.metrics)
    cfg.x_axes = given.get("x_axes", cfg.x_axes)
    cfg.same_step = given.get("same_step", cfg.same_step)
    cfg.restarts = given.get("restarts", cfg.restarts)
    cfg.gates = given.get("gates", cfg.gates)
    if "sweeps" in given:
        cfg.sweeps.update(given["sweeps"].values)
    if "trends" in given:
        cfg.trends.update(given["trends"].values)
    if "arms" in given:
        cfg.arms.update(given["arms"].values)
    cfg.provenance_facets = given.get("provenance_facets", cfg.provenance_facets)
    cfg.leaderboard_rows = given.get("leaderboard_rows", cfg.leaderboard_rows)
    cfg.seed_keys = given.get("seed_keys", cfg.seed_keys)
    cfg.sample_efficiency = given.get("sample_efficiency", cfg.sample_efficiency)
    cfg.coupling = given.get("coupling", cfg.coupling)
    cfg.confusion = given.get("confusion", cfg.confusion)
    cfg.reward_components = given.get("reward_components", cfg.reward_components)


# end of the values of obs.yaml
