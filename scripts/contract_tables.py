"""Rewrite the field tables of docs/contract.md from their declarations in src/obs/schema.py.

    python scripts/contract_tables.py          # rewrite the tables in place
    python scripts/contract_tables.py --check  # exit 1 when the docs differ from the declarations

tests/unit/test_schema.py runs the same check, so a field changed in the code without its docs fails
the test suite.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from obs.schema import fill_doc_tables

CONTRACT = Path(__file__).resolve().parents[1] / "docs" / "contract.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the tables are up to date")
    args = parser.parse_args(argv)
    text = CONTRACT.read_text(encoding="utf-8")
    filled = fill_doc_tables(text)
    if filled == text:
        print(f"{CONTRACT}: tables up to date")
        return 0
    if args.check:
        print(f"{CONTRACT}: tables differ from src/obs/schema.py; run scripts/contract_tables.py", file=sys.stderr)
        return 1
    CONTRACT.write_text(filled, encoding="utf-8")
    print(f"{CONTRACT}: tables rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
