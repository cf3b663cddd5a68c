"""`hparams.yaml`, the settings file Lightning's CSV and TensorBoard loggers write beside their logs: its entries
added to a run's configuration, never over what the run's own files gave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from obs.diagnostics import Diagnostics
from obs.safeyaml import YamlError, load_yaml_file


def add_hparams(config: dict[str, Any], path: Path, diags: Diagnostics) -> None:
    """The top-level entries of the YAML file at `path` into `config` where it has none; a file that cannot be
    read is a warning at its line."""
    try:
        data = load_yaml_file(path).data
    except (YamlError, OSError) as exc:
        diags.warning(path, f"not read: {exc}", getattr(exc, "line", None))
        return
    if isinstance(data, dict):
        for key, value in data.items():
            config.setdefault(str(key), value)
