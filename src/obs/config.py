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
from obs.safeyaml import YamlError, load_yaml_file
from obs.sourcetree import safe_input

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


# Across-runs pages (docs/contract.md, "obs.yaml"): sweeps, trends, ablation arms, provenance facets.
DEFAULT_SWEEPS: dict[str, Any] = {
    "keys": None,  # axes: dotted keys (config.train.lr, run.arm, ...); None: every key that varies
    "metrics": None,  # outcome axes; None: the group's headline metric and the shared probe rates
    "color": None,  # the metric lines are coloured by; None: the group's headline metric
    "group_by": "metric",  # metric (one chart per headline metric), spec, campaign or all
    "max_axes": 8,
    "highlight": 5,  # the best runs drawn on top at full strength; the rest faded
    "min_runs": 3,
}
DEFAULT_TRENDS: dict[str, int] = {
    "recent_runs": 5,  # spec ladders: the last N runs by date ...
    "baseline_runs": 20,  # ... against the N runs before them
    "recent_points": 0,  # within a campaign run: the last N logged points (0: the campaign's final_window) ...
    "baseline_points": 100,  # ... against the N points before them
}
DEFAULT_ARMS: dict[str, Any] = {
    "metric": None,  # None: the members' shared headline metric
    "baseline": None,  # the reference arm; None: "full" when present, else the first arm
}
SWEEP_GROUPINGS = ("metric", "spec", "campaign", "all")


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
    gates: list[dict[str, str]] = field(default_factory=list)  # name, label, expr (obs.analysis.gates)
    sweeps: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_SWEEPS))
    trends: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_TRENDS))
    arms: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_ARMS))
    provenance_facets: list[str] | None = None  # provenance keys the leaderboard filters by; None: automatic
    extra: dict[str, Any] = field(default_factory=dict)

    def is_negative_check(self, name: str) -> bool:
        return name in self.negative_checks or _named_like_a_failure(name)

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


@functools.lru_cache(maxsize=4096)
def _named_like_a_failure(name: str) -> bool:
    """The default polarity rule, asked once per check name (it runs for every check of every case)."""
    return bool(DEFAULT_NEGATIVE_PATTERN.search(name))


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
    "gates",
    "sweeps",
    "trends",
    "arms",
    "provenance_facets",
}


def load_config(source: Path, diags: Diagnostics) -> SiteConfig:
    """Read `SOURCE/obs.yaml` if it exists; every problem is a diagnostic, defaults fill the rest."""
    cfg = SiteConfig()
    path = safe_input(source / CONFIG_FILE, source)  # a link out of the tree is named by discovery, not read
    if path is None:
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
        elif key in ("gates", "sweeps", "trends", "arms", "provenance_facets"):
            _across_runs_setting(cfg, key, value, path, doc.line_of, diags)
        else:
            cfg.extra[key] = value
            if key not in _KNOWN:
                diags.info(path, f"unknown setting '{key}' kept but not used by this version", doc.line_of(key))
    return cfg


def _across_runs_setting(cfg: SiteConfig, key: str, value: Any, path: Path, line_of: Any, diags: Diagnostics) -> None:
    """gates, sweeps, trends, arms, provenance_facets: each bad entry is a warning, the rest is kept."""
    from obs.analysis.gates import GateError, parse_gate  # pure, small; only when obs.yaml sets gates

    def warn(sub: str, message: str) -> None:
        diags.warning(path, message, line_of(sub) or line_of(key))

    if key == "gates":
        if not isinstance(value, list):
            warn(key, "'gates' should be a list of gates (a string, or a mapping with expr, name, label)")
            return
        names: set[str] = set()
        for i, item in enumerate(value):
            entry = {"expr": item} if isinstance(item, str) else item
            if not isinstance(entry, dict) or not isinstance(entry.get("expr"), str):
                warn(f"gates.{i}", f"gate {i + 1} should be a string or a mapping with an 'expr' string; skipped")
                continue
            try:
                spec = parse_gate(entry["expr"], _text(entry.get("name")), _text(entry.get("label")))
            except GateError as exc:
                warn(f"gates.{i}", f"gate {i + 1}: {exc}; skipped")
                continue
            if spec.name in names:
                warn(f"gates.{i}", f"gate {i + 1}: the name '{spec.name}' is used twice; skipped")
                continue
            names.add(spec.name)
            cfg.gates.append(spec.as_dict())
    elif key == "provenance_facets":
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            cfg.provenance_facets = list(value)
        else:
            warn(key, "'provenance_facets' should be a list of provenance keys (e.g. corpus_hash); automatic used")
    elif not isinstance(value, dict):
        warn(key, f"'{key}' should be a mapping; the defaults were used")
    elif key == "trends":
        for name, v in value.items():
            if name not in DEFAULT_TRENDS:
                warn(f"trends.{name}", f"unknown trends setting '{name}' (known: {', '.join(DEFAULT_TRENDS)})")
            elif isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                cfg.trends[name] = v
            else:
                warn(f"trends.{name}", f"trends.{name} should be a whole number >= 0; the default was used")
    elif key == "arms":
        for name, v in value.items():
            if name not in DEFAULT_ARMS:
                warn(f"arms.{name}", f"unknown arms setting '{name}' (known: {', '.join(DEFAULT_ARMS)})")
            elif v is None or isinstance(v, str):
                cfg.arms[name] = v
            else:
                warn(f"arms.{name}", f"arms.{name} should be a string; the default was used")
    else:  # sweeps
        for name, v in value.items():
            sub = f"sweeps.{name}"
            if name not in DEFAULT_SWEEPS:
                warn(sub, f"unknown sweeps setting '{name}' (known: {', '.join(DEFAULT_SWEEPS)})")
            elif name in ("keys", "metrics"):
                if v is None or (isinstance(v, list) and all(isinstance(x, str) for x in v)):
                    cfg.sweeps[name] = list(v) if v is not None else None
                else:
                    warn(sub, f"{sub} should be a list of dotted keys; automatic used")
            elif name == "color":
                if v is None or isinstance(v, str):
                    cfg.sweeps[name] = v
                else:
                    warn(sub, f"{sub} should be a metric name; the headline metric used")
            elif name == "group_by":
                if v in SWEEP_GROUPINGS:
                    cfg.sweeps[name] = v
                else:
                    warn(sub, f"{sub} should be one of {', '.join(SWEEP_GROUPINGS)}; 'metric' used")
            elif isinstance(v, int) and not isinstance(v, bool) and v > 0:
                cfg.sweeps[name] = v
            else:
                warn(sub, f"{sub} should be a positive whole number; the default was used")


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else None
