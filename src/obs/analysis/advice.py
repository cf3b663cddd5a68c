"""Where advice on a run page sends the reader: the files of the run's own format.

A run read from HF Trainer, W&B, MLflow, TensorBoard, lm-eval or CSV files has no metrics.jsonl or probe.jsonl,
so advice that says "add a field to metrics.jsonl" is wrong for it. Each format says once what its files hold
(`obs.adapters.base.Holds`); the pipeline turns that into an `AdviceFiles` and hands it in, so analysis/ stays
pure (it imports no adapter and no renderer) and still names the right file.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AdviceFiles:
    """The words advice uses for one run's files."""

    label: str = "run folders"  # the format's files as a subject: "HF Trainer logs"
    # where a logged field goes, to follow "add a `stage` field to": "metrics.jsonl lines",
    # "the `log_history` entries of trainer_state.json"; "" when the format's files take no text field
    records: str = "metrics.jsonl lines"
    declare: str = "run.yaml"  # where a declared field goes: "run.yaml", "a run.yaml beside trainer_state.json"
    native: bool = True

    def no_metric(self) -> str:
        """What to do when nothing logged is an outcome or a loss."""
        if self.native:
            return "no metric found: add probe.jsonl or metrics.jsonl, or set primary_metric"
        log = f"log one in {self.records}, or " if self.records else ""
        return (
            f"no metric found: nothing read from this run is an outcome or a loss; {log}"
            f"set primary_metric in {self.declare}"
        )

    def stage_field(self) -> str:
        """How to get curriculum stages labelled."""
        if not self.records:
            return f"{self.label} hold no stage labels; infer boundaries from step counts, not from the curve."
        where = "on every metrics.jsonl line" if self.native else f"in {self.records}"
        return f"Log a `stage` field {where}; until then, infer boundaries from step counts, not from the curve."


NATIVE = AdviceFiles()
