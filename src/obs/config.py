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
from typing import Any

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

    title: str = field(default_factory=lambda: _default("title"))
    base_url: str = field(default_factory=lambda: _default("base_url"))
    primary_metric: str = field(default_factory=lambda: _default("primary_metric"))
    min_effect: float = field(default_factory=lambda: _default("min_effect"))
    negative_checks: list[str] = field(default_factory=lambda: _default("negative_checks"))
    max_points: int = field(default_factory=lambda: _default("max_points"))
    final_window: int = field(default_factory=lambda: _default("final_window"))
    axes: dict[str, list[str]] = field(default_factory=lambda: _default("axes"))
    thresholds: dict[str, float] = field(default_factory=lambda: _default("thresholds"))
    higher_is_better: dict[str, bool] = field(default_factory=lambda: _default("higher_is_better"))
    metrics: dict[str, dict[str, Any]] = field(default_factory=lambda: _default("metrics"))
    x_axes: dict[str, list[str]] = field(default_factory=lambda: _default("x_axes"))
    same_step: str = field(default_factory=lambda: _default("same_step"))
    restarts: str = field(default_factory=lambda: _default("restarts"))
    gates: list[dict[str, str]] = field(default_factory=list)  # name, label, expr (obs.analysis.gates)
    sweeps: dict[str, Any] = field(default_factory=lambda: _default("sweeps"))
    trends: dict[str, int] = field(default_factory=lambda: _default("trends"))
    arms: dict[str, Any] = field(default_factory=lambda: _default("arms"))
    provenance_facets: list[str] | None = None  # provenance keys the leaderboard filters by; None: automatic
    leaderboard_rows: int = field(default_factory=lambda: _default("leaderboard_rows"))
    seed_keys: list[str] = field(default_factory=lambda: _default("seed_keys"))
    # size_key | series, metric, group_by, label (analysis.sample_efficiency); None: the view is off
    sample_efficiency: dict[str, Any] | None = None
    coupling: list[dict[str, str]] = field(default_factory=list)  # proxy, downstream, label (analysis.coupling)
    confusion: list[dict[str, str]] = field(default_factory=list)  # expected, predicted, name (analysis.confusion)
    reward_components: dict[str, float] = field(default_factory=dict)  # component -> weight (analysis.reward)
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
    for name, value in reading.values.items():
        if isinstance(value, Reading):  # thresholds, sweeps, trends, arms: each setting given replaces its default
            getattr(cfg, name).update(value.values)
        else:
            setattr(cfg, name, value)
    cfg.extra = reading.unknown
    return cfg
