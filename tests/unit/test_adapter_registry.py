"""The registry owns the order of the formats and how they combine; no adapter module imports another."""

from __future__ import annotations

import ast
from pathlib import Path

import obs.adapters
from obs.adapters import ADAPTERS, LEARNING

PACKAGE = Path(obs.adapters.__file__).parent
# the registry, the interface, shared helpers, one format's reader of a binary file (W&B's, for wandb.py), and the
# side logs read with a run of any format (emergence/*.jsonl)
SHARED = {"__init__", "base", "shapes", "session_shape", "wandb_binary", "side_logs"}
ADAPTER_MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in SHARED)


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth of the file (function-local imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_registration_order() -> None:
    assert [a.name for a in ADAPTERS] == [
        "native",
        "hf_trainer",
        "mlflow",
        "lm_eval",
        "wandb",
        "tensorboard",
        "csv_logs",
        "generic_jsonl",
    ]


def test_every_adapter_module_is_registered() -> None:
    # the agent-sessions input is registered beside the run formats: it reads sessions, not runs
    assert sorted([*(a.name for a in ADAPTERS), LEARNING.name]) == ADAPTER_MODULES


def test_no_adapter_module_imports_another() -> None:
    others = {f"obs.adapters.{name}" for name in ADAPTER_MODULES}
    for name in ADAPTER_MODULES:
        imported = imported_modules(PACKAGE / f"{name}.py") & others
        assert imported == set(), f"adapters/{name}.py imports {sorted(imported)}: shared code goes to adapters/shared/"


def test_shared_modules_import_no_adapter() -> None:
    others = {f"obs.adapters.{name}" for name in ADAPTER_MODULES}
    for name in (
        "base",
        "shapes",
        "session_shape",
        "wandb_binary",
        *(f"shared/{p.stem}" for p in (PACKAGE / "shared").glob("*.py")),
    ):
        assert imported_modules(PACKAGE / f"{name}.py") & others == set(), name
