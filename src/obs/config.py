"""Site settings from `obs.yaml`, with defaults for everything.

Thresholds live here (not in the analysis code) so a team can tune what "plateau" or "regression"
means for its own runs, and so the page can say which threshold fired.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from obs.diagnostics import Diagnostics
from obs.safeyaml import YamlError, load_yaml_file

CONFIG_FILE = "obs.yaml"

DEFAULT_AXES: dict[str, list[str]] = {
    "dsl": ["contract.dsl"],
    "compiler": ["contract.compiler"],
    "tokenizer": ["contract.tokenizer", "data.tokenizer_size", "data.reserved_tokens"],
    "probe": ["contract.probe"],
    "data": ["data.dataset_version", "data.rows", "provenance.corpus_hash", "config.data"],
    "budget": [
        "data.packed_tokens",
        "data.effective_epochs",
        "data.decode_budget",
        "data.context",
        "config.train.epochs",
        "config.train.max_steps",
        "config.decode",
    ],
    "capacity": ["model"],
    "optimizer": ["config.train.lr", "config.train.batch_size", "config.train.warmup", "config.optim"],
    "repair": ["config.repair"],
}

# Names of checks whose `true` means a problem (truncated, special_token_leak, ...).
DEFAULT_NEGATIVE_PATTERN = re.compile(r"truncat|leak|error|^missing_|^duplicate_", re.IGNORECASE)

# Metric names for which lower is better when nothing says otherwise.
LOWER_IS_BETTER_PATTERN = re.compile(
    r"loss|nll|perplexity|ppl|error|wer|cer|bpb|bits_per|regret|latency", re.IGNORECASE
)

DEFAULT_THRESHOLDS: dict[str, float] = {
    # diagnosis (docs/reading-a-report.md explains each rule and its thresholds)
    "low_exact": 0.5,  # headline probe rate below this is "low"
    "high_renderable": 0.8,
    "low_renderable": 0.7,
    "low_truncation": 0.05,
    "high_truncation": 0.1,
    "materialized_gap": 0.05,  # exact minus materialized
    "memorised_loss": 0.1,  # final train loss below this with low exact: memorised, not learned
    "plateau_window_frac": 0.2,  # final window: this share of the loss points
    "plateau_rel_change": 0.01,  # |fitted change over the final window| / its mean level below this: a plateau
    "oscillation_cv": 0.15,  # sd of the detrended final window / its mean level above this: oscillation
    "grad_spike_factor": 10.0,  # a grad norm this many times the trailing median is a spike
    "grad_spike_window": 25,  # points in that trailing median
    "grad_collapse": 1e-6,  # median grad norm of the final window below this: collapse
    "split_gap": 0.2,  # train minus the weakest held-out split
    "family_near_zero": 0.25,  # a family at or below this ...
    "family_high": 0.6,  # ... while the median of the other families is at least this
    "zero_std_frac": 0.5,  # rolling mean of frac_reward_zero_std staying at or above this: collapse
    "zero_std_window": 10,  # points in the rolling means of reward health
    "reward_std_drop": 0.25,  # rolling reward_std staying at or below this share of its peak: collapse
    "repair_broken_cases": 1,  # cases the repair pass turns from right to wrong before it is flagged
    # promotion
    "regression_tolerance": 0.02,  # a split or family may lose at most this much of the headline rate
    "family_gain": 0.1,  # a family whose headline rate rose this much counts as fixed
    "repairable_share": 0.5,  # share of the raw misses the repair pass fixes for "mostly repairable"
}


@dataclass
class SiteConfig:
    """Everything `obs.yaml` can set. Unknown keys are reported, never silently ignored."""

    title: str = "Run observatory"
    base_url: str = ""
    primary_metric: str = "exact"
    negative_checks: list[str] = field(default_factory=list)
    max_points: int = 2000
    final_window: int = 10
    axes: dict[str, list[str]] = field(default_factory=lambda: {k: list(v) for k, v in DEFAULT_AXES.items()})
    thresholds: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    higher_is_better: dict[str, bool] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def is_negative_check(self, name: str) -> bool:
        if name in self.negative_checks:
            return True
        return bool(DEFAULT_NEGATIVE_PATTERN.search(name))

    def metric_higher_is_better(self, name: str) -> bool:
        if name in self.higher_is_better:
            return self.higher_is_better[name]
        if self.is_negative_check(name):
            return False
        return not LOWER_IS_BETTER_PATTERN.search(name)

    def threshold(self, name: str) -> float:
        return float(self.thresholds.get(name, DEFAULT_THRESHOLDS[name]))

    def fingerprint(self) -> str:
        """Hash of every setting: part of each page's cache key."""
        payload = json.dumps(self.__dict__, sort_keys=True, default=str).encode()
        return hashlib.sha256(payload).hexdigest()[:16]


_KNOWN = {
    "title",
    "base_url",
    "primary_metric",
    "negative_checks",
    "max_points",
    "final_window",
    "axes",
    "thresholds",
    "higher_is_better",
}


def load_config(source: Path, diags: Diagnostics) -> SiteConfig:
    """Read `SOURCE/obs.yaml` if it exists; every problem is a diagnostic, defaults fill the rest."""
    cfg = SiteConfig()
    path = source / CONFIG_FILE
    if not path.is_file():
        return cfg
    try:
        doc = load_yaml_file(path)
    except YamlError as exc:
        diags.error(path, str(exc), exc.line)
        return cfg
    data = doc.data
    if data is None:
        return cfg
    if not isinstance(data, dict):
        diags.error(path, "expected a mapping of settings at the top level", 1)
        return cfg

    def bad(key: str, expected: str) -> None:
        diags.warning(path, f"'{key}' should be {expected}; the default was used", doc.line_of(key))

    for key, value in data.items():
        if key == "title" or key == "base_url" or key == "primary_metric":
            if isinstance(value, str):
                setattr(cfg, key, value)
            else:
                bad(key, "a string")
        elif key == "negative_checks":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                cfg.negative_checks = list(value)
            else:
                bad(key, "a list of check names")
        elif key in ("max_points", "final_window"):
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                setattr(cfg, key, value)
            else:
                bad(key, "a positive integer")
        elif key == "axes":
            if isinstance(value, dict) and all(
                isinstance(v, list) and all(isinstance(x, str) for x in v) for v in value.values()
            ):
                cfg.axes = {str(k): list(v) for k, v in value.items()}
            else:
                bad(key, "a mapping of axis name to a list of dotted keys")
        elif key == "thresholds":
            if not isinstance(value, dict):
                bad(key, "a mapping of threshold name to number")
                continue
            for tname, tval in value.items():
                line = doc.line_of(f"thresholds.{tname}")
                if tname not in DEFAULT_THRESHOLDS:
                    known = ", ".join(sorted(DEFAULT_THRESHOLDS))
                    diags.warning(path, f"unknown threshold '{tname}' (known: {known})", line)
                elif isinstance(tval, int | float) and not isinstance(tval, bool):
                    cfg.thresholds[tname] = float(tval)
                else:
                    diags.warning(path, f"threshold '{tname}' should be a number", line)
        elif key == "higher_is_better":
            if isinstance(value, dict) and all(isinstance(v, bool) for v in value.values()):
                cfg.higher_is_better = {str(k): v for k, v in value.items()}
            else:
                bad(key, "a mapping of metric name to true/false")
        else:
            cfg.extra[key] = value
            if key not in _KNOWN:
                diags.info(path, f"unknown setting '{key}' kept but not used by this version", doc.line_of(key))
    return cfg
