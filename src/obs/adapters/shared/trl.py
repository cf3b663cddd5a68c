"""Trainer and TRL record conventions: the summary row Trainer logs once, and TRL's renamed reward keys given
the names obs' reward-health analysis reads."""

from __future__ import annotations

from typing import Any

SUMMARY_MARKERS = ("train_runtime", "train_samples_per_second", "train_steps_per_second")
TRL_DPO_REWARD_KEYS = frozenset({"accuracies", "chosen", "rejected", "margins"})


def is_summary_record(record: dict[str, Any]) -> bool:
    """The final entry Trainer logs once: train_runtime, train_loss, total_flos (no per-step metrics)."""
    return any(k in record for k in SUMMARY_MARKERS) and "loss" not in record


def trl_aliases(record: dict[str, Any]) -> dict[str, Any]:
    """Add the names obs' reward-health analysis reads to a TRL record; originals are kept.

    GRPO logged `reward`, `reward_std`, `rewards/<fn>` (older: `reward/<fn>`), `completion_length`
    and, in some versions or forks, `zero_std_ratio`; newer TRL logs `rewards/<fn>/mean|std` and
    `frac_reward_zero_std`. DPO/ORPO's `rewards/chosen|rejected|margins|accuracies` are not GRPO
    reward functions and are left alone.
    """
    extra: dict[str, Any] = {}
    grpo = "reward" in record or "reward_std" in record or "frac_reward_zero_std" in record
    if "reward" in record and "reward_mean" not in record:
        extra["reward_mean"] = record["reward"]
    if "zero_std_ratio" in record and "frac_reward_zero_std" not in record:
        extra["frac_reward_zero_std"] = record["zero_std_ratio"]
    if "completion_length" in record and "completions/mean_length" not in record:
        extra["completions/mean_length"] = record["completion_length"]
    if grpo:
        for key, value in record.items():
            if not key.startswith("reward") or "/" not in key:
                continue
            parts = key.split("/")
            a_reward_fn = len(parts) == 2 and (parts[0] == "reward" or parts[1] not in TRL_DPO_REWARD_KEYS)
            if parts[0] in ("rewards", "reward") and a_reward_fn:
                target = f"rewards/{parts[1]}/mean"
            elif parts[0] == "reward" and len(parts) == 3 and parts[2] in ("mean", "std"):
                target = f"rewards/{parts[1]}/{parts[2]}"
            else:
                continue
            if target not in record:
                extra[target] = value
    if not extra:
        return record
    return {**record, **extra}
