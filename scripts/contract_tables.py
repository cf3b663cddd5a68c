"""Rewrite what is written from the declarations of src/obs/schema.py: the field tables of docs/contract.md,
and the model's attributes and typed mappings of each YAML file (obs.model_code: in obs/model.py, obs/config.py,
obs/adapters/native.py).

    python scripts/contract_tables.py          # rewrite the tables and the code in place
    python scripts/contract_tables.py --check  # exit 1 when the docs or the code differ from the declarations

tests/unit/test_schema.py and tests/unit/test_declared_fields.py run the same checks, so a field changed in the
declarations without its docs or its attributes fails the test suite.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from obs.model_code import FILES, fill_code_blocks
from obs.schema import fill_doc_tables

REPO = Path(__file__).resolve().parents[1]
CONTRACT = REPO / "docs" / "contract.md"
SRC = REPO / "src"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the tables and code are up to date")
    args = parser.parse_args(argv)
    targets = [(CONTRACT, fill_doc_tables)] + [(SRC / name, fill_code_blocks) for name in FILES]
    stale = 0
    for path, fill in targets:
        text = path.read_text(encoding="utf-8")
        filled = fill(text)
        if filled == text:
            print(f"{path}: up to date")
        elif args.check:
            print(f"{path}: differs from src/obs/schema.py; run scripts/contract_tables.py", file=sys.stderr)
            stale += 1
        else:
            path.write_text(filled, encoding="utf-8")
            print(f"{path}: rewritten")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
