"""Fields of the wrong type in probe records: one warning per field and file, with the count and the first
line, and the run kept with every valid record (issue 31)."""

from __future__ import annotations

import base64
import contextlib
import gzip
import io
import json
from pathlib import Path

from obs.cli import main


def run_check(src: Path) -> list[str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(["check", str(src)])
    return (out.getvalue() + err.getvalue()).splitlines()


def test_wrong_typed_probe_fields_are_one_message_per_field(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "r").mkdir(parents=True)
    (src / "r/run.yaml").write_text("id: typed\nstatus: finished\n", encoding="utf-8")
    records: list[dict[str, object]] = [{"id": f"ok-{i}", "passed": i % 2 == 0, "note": "fine"} for i in range(10)]
    records += [{"id": f"yes-{i}", "passed": "yes"} for i in range(30)]  # lines 11-40
    records += [{"id": ["a", i], "passed": True} for i in range(25)]  # lines 41-65
    records += [{"id": f"note-{i}", "passed": False, "note": ["x"]} for i in range(22)]  # lines 66-87
    records += [{"id": f"s-{i}", "passed": True, "sample": "one"} for i in range(3)]  # lines 88-90
    records += [{"id": f"c-{i}", "passed": True, "checks": "all"} for i in range(2)]
    (src / "r/probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    lines = [line for line in run_check(src) if "probe.jsonl" in line]
    assert lines == [
        "src/r/probe.jsonl:11: warning: check 'passed' must be true or false, not a text in 30 records (first at "
        "line 11) (the first: yes); those records have no result for it, the value is kept as another field",
        "src/r/probe.jsonl:41: warning: 'id' must be a text or a number, not a list in 25 records (first at line 41); "
        "skipped",
        "src/r/probe.jsonl:66: warning: 'note' must be text, not a list in 22 records (first at line 66); ignored",
        "src/r/probe.jsonl:88: warning: 'sample' must be a whole number >= 0 (the sample index) in 3 records (first "
        "at line 88); ignored (the first: one)",
    ], lines
    # the run is kept with what was valid: every record with an id, results only where they are booleans
    site = tmp_path / "site"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["build", str(src), "-o", str(site)]) in (0, 1)
    html = (site / "runs/typed/index.html").read_text(encoding="utf-8")
    assert "67 cases" in html  # 92 records, 25 of them without a usable id
    rows = (site / "runs/typed/cases-rows-1.js").read_text(encoding="utf-8")
    packed = json.loads(rows[rows.index("(", rows.index("push")) + 1 : rows.rindex(")")])
    assert "yes-29" in gzip.decompress(base64.b64decode(packed["gz"])).decode("utf-8")


def test_a_check_of_the_wrong_type_is_found_in_plain_records_too(tmp_path: Path) -> None:
    """Records that are all plain take the columnar path (`plain_cases`); the check is found there as well."""
    src = tmp_path / "src"
    (src / "r").mkdir(parents=True)
    (src / "r/run.yaml").write_text("id: plain\n", encoding="utf-8")
    records = [{"id": f"y-{i}", "exact": 1} for i in range(4)] + [{"id": f"ok-{i}", "exact": True} for i in range(4)]
    (src / "r/probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert [line for line in run_check(src) if "probe.jsonl" in line] == [
        "src/r/probe.jsonl:1: warning: check 'exact' must be true or false, not a number in 4 records (first at "
        "line 1) (the first: 1); those records have no result for it, the value is kept as another field"
    ]
