"""Input formats. Discovery asks each adapter in this order; the first that recognises a folder wins.

The native format comes first so that a `run.yaml` placed beside another format's files (to add a
hypothesis or a decision to, say, a Hugging Face output folder) is read by the native adapter,
which then overlays it on what the other format provides (see `native.load_native_run`). The
generic JSON-log reader comes last: it recognises the most folders, so it is only asked when no
specific format did.
"""

from __future__ import annotations

from obs.adapters.base import Adapter
from obs.adapters.generic_jsonl import GenericJsonlAdapter
from obs.adapters.hf_trainer import HfTrainerAdapter
from obs.adapters.lm_eval import LmEvalAdapter
from obs.adapters.mlflow import MlflowAdapter
from obs.adapters.native import NativeAdapter
from obs.adapters.wandb import WandbAdapter

ADAPTERS: list[Adapter] = [
    NativeAdapter(),
    HfTrainerAdapter(),
    MlflowAdapter(),
    LmEvalAdapter(),
    WandbAdapter(),
    GenericJsonlAdapter(),
]


def adapter_named(name: str) -> Adapter:
    for adapter in ADAPTERS:
        if adapter.name == name:
            return adapter
    raise KeyError(name)
