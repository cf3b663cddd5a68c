"""The generated bad-input test (issue 18): every bad file gives a diagnostic and the site is still built.

The cases come from `badinputs.catalogue()`: for every file type obs reads, the shapes of a broken
file and every value of `badinputs.VALUES` in every field. They are built in few builds, not one
each: all run, spec and campaign cases side by side in one source tree (one `obs build`), and the
root-level files (obs.yaml, decisions.jsonl) a pair per tree, all trees in one process
(tests/site/build_many.py). For each build: exit code 0 or 1, no traceback, under 400 MB. For each
case: a message naming its file (with a line number where the file has lines), unless the case is
valid input (`QUIET`), and the good runs' pages are there.

The 50 MB-line cases (one build of twelve files, each with one 50 MB line) take ~20 s and 600 MB of disk.
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from badinputs import (
    GOOD_RUNS,
    HARDENING,
    ROOT_KINDS,
    Case,
    Hardened,
    case_path,
    catalogue,
    root_groups,
    slug,
    write_hardening,
    write_root_tree,
    write_tree,
)
from faultkit import obs_command

HERE = Path(__file__).parent
PEAK_MB = 400
MAX_PAGE = 2 * 1024 * 1024
CPU_S_PER_CASE = 1.0  # far above what a case costs (about 0.13 s); catches a case that runs away

# Cases that are valid input and need no message: any text is valid Markdown (the values appear as
# text in notes.md), null is an absent field, an empty YAML file is an empty mapping, numbers a metric
# log or trainer state can hold, blank MLflow metric files, an empty ledger, and a W&B summary's free-form
# values.
QUIET_KINDS_VALUES = {
    "metrics.jsonl": {"int", "negative", "float", "huge-int", "tiny-float"},
    "trainer_state.json": {"zero", "negative", "float", "huge-int", "tiny-float"},
}


def quiet(case: Case) -> bool:
    if case.kind == "notes.md" and (case.name.startswith("value-") or case.name in ("empty", "blank")):
        return True
    if case.kind.endswith(".yaml") and case.name in ("empty", "every-field-null"):
        return True
    if case.kind == "mlflow metric" and case.name in ("blank", "many-blank"):
        return True
    if case.kind == "decisions.jsonl" and case.name in ("empty", "blank", "many-blank"):
        return True
    if case.kind == "wandb summary" and case.name.startswith("every-field-"):
        return True
    value = case.name.removeprefix("every-field-")
    return value in QUIET_KINDS_VALUES.get(case.kind, set())


# Known gaps, kept visible: a metric of an lm-eval results file given as a mapping (or a list) is
# skipped without a word, as are the metrics of a task given as something else (tested by `test_known_gaps`).


def gap(case: Case) -> bool:
    return case.kind == "lm-eval results" and case.name == "every-field-mapping"


LINE_KINDS = ("run.yaml", "spec.yaml", "campaign.yaml", "obs.yaml", "notes.md", "mlflow metric")
# messages about a whole file, with no line to name
FILE_LEVEL = re.compile(r"file is \d+ bytes|logged more than once|not valid UTF-8|is empty")


def line_expected(case: Case) -> bool:
    """JSON documents (gate.json, trainer_state.json, lm-eval, W&B) have lines only for parse errors."""
    return case.line and (case.kind in LINE_KINDS or case.kind.endswith(".jsonl"))


# Runs a command and writes its CPU seconds and peak RSS (KB on Linux, bytes on macOS) to a file. The build
# is this small process's child, not the test process's: on Linux a process keeps the peak of the memory it
# had before exec(), so a child started straight from a test process holding 600 MB of generated input
# (or a long pytest session) would report that as its own peak.
MEASURE = """import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(f"{u.ru_utime + u.ru_stime} {u.ru_maxrss}")
sys.exit(code)
"""


def build(source: Path, out: Path) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """`obs build` in a process of its own: the result, its CPU seconds and its peak memory (MB)."""
    usage = source.parent / "build-usage.txt"
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(usage), *obs_command("build", str(source), "-o", str(out), "-j", "1")],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=source.parent,
    )
    cpu, peak = (float(v) for v in usage.read_text().split())
    peak_kb = peak / 1024 if sys.platform == "darwin" else peak
    return proc, cpu, peak_kb / 1024


def check_case(case: Case, source: Path, lines: list[str]) -> str | None:
    """What is wrong with the messages about `case`, or None."""
    path = case_path(case, source)
    about = [line for line in lines if line.startswith(path + ":")]
    if not about and case.kind == "mlflow metric":  # steps logged twice are reported for the metrics folder
        about = [line for line in lines if line.startswith(path.rsplit("/", 1)[0] + ":")]
    if not about:
        if quiet(case):
            return None
        return f"no message names {path}"
    if line_expected(case) and not any(
        re.match(re.escape(path) + r":\d+: ", line) or FILE_LEVEL.search(line) for line in about
    ):
        return f"no message about {path} names a line: {about[:3]}"
    return None


def check_site(out: Path) -> None:
    for run in GOOD_RUNS:
        assert (out / "runs" / run / "index.html").is_file(), f"{run}'s page is missing"
    assert (out / "index.html").is_file()


@pytest.fixture(scope="module")
def corpus_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Case], list[Hardened], Path, list[str]]:
    """All run, spec and campaign cases and the issue-31 cases in one tree, one build."""
    cases = [c for c in catalogue() if c.kind not in ROOT_KINDS]
    root = tmp_path_factory.mktemp("bad")
    source = write_tree(root / "src", cases)
    hardened = write_hardening(source)
    proc, cpu, peak = build(source, root / "site")
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-5000:]
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"
    assert cpu < CPU_S_PER_CASE * (len(cases) + len(hardened)), f"{cpu:.0f} s of CPU for {len(cases)} cases"
    check_site(root / "site")
    return cases, hardened, source, proc.stderr.splitlines()


@pytest.fixture(scope="module")
def run_cases_build(
    corpus_build: tuple[list[Case], list[Hardened], Path, list[str]],
) -> tuple[list[Case], Path, list[str]]:
    cases, _, source, lines = corpus_build
    return cases, source, lines


def test_every_run_spec_and_campaign_case(run_cases_build: tuple[list[Case], Path, list[str]]) -> None:
    cases, source, lines = run_cases_build
    kinds = {c.kind for c in cases}
    assert kinds == {c.kind for c in catalogue() if c.kind not in ROOT_KINDS}
    assert len(cases) > 400
    problems = [f"{c.folder}: {p}" for c in cases if not gap(c) and (p := check_case(c, source, lines))]
    assert not problems, "\n".join(problems[:40]) + f"\n({len(problems)} cases)"


def test_known_gaps(run_cases_build: tuple[list[Case], Path, list[str]]) -> None:
    """The gaps listed above are still gaps: when one is fixed, move it out of `gap()`."""
    cases, source, lines = run_cases_build
    fixed = [c.folder for c in cases if gap(c) and check_case(c, source, lines) is None]
    assert not fixed, f"no longer gaps (remove them from gap()): {fixed}"


def test_every_issue_31_case(corpus_build: tuple[list[Case], list[Hardened], Path, list[str]]) -> None:
    """Names, special files, types, ids and sizes: each case's message, its runs kept or not read."""
    _, hardened, source, lines = corpus_build
    ids = site_ids(source.parent / "site")
    problems = []
    for case in hardened:
        where = f"{source.name}/{HARDENING}/{case.folder}" + (f"/{case.target}" if case.target else "")
        about = [line for line in lines if line.startswith(where + ":")]
        if case.message is not None and not any(case.message in line for line in about):
            problems.append(f"{case.folder}: no message about {where} says {case.message!r}: {about[:3]}")
        problems += [f"{case.folder}: run {i!r} is missing" for i in case.ids if i not in ids]
        problems += [f"{case.folder}: {i!r} was read as a run" for i in ids for n in case.not_runs if n in i]
    assert not problems, "\n".join(problems)


def test_no_run_with_a_readable_id_is_lost(corpus_build: tuple[list[Case], list[Hardened], Path, list[str]]) -> None:
    """Every case whose run.yaml is good (the bad file is another) is a run of the site under its id."""
    cases, _, source, _ = corpus_build
    ids = site_ids(source.parent / "site")
    expected = []
    for c in cases:
        rid = f"{slug(c.kind)}-{c.name}"
        if c.kind in ("metrics.jsonl", "probe.jsonl", "probe_repaired.jsonl", "gate.json", "notes.md"):
            expected.append(rid)
        elif c.kind == "spec.yaml":
            expected.append(f"{rid}-r1")
        elif c.kind == "campaign.yaml":
            expected += [f"{rid}-a1", f"{rid}-b1"]
    lost = [i for i in expected if i not in ids]
    assert len(expected) > 300
    assert not lost, f"{len(lost)} runs lost: {lost[:20]}"


def test_no_page_over_2_mb_and_no_raw_control_character(
    corpus_build: tuple[list[Case], list[Hardened], Path, list[str]],
) -> None:
    _, _, source, lines = corpus_build
    site = source.parent / "site"
    big = [
        (p.relative_to(site).as_posix(), p.stat().st_size) for p in site.rglob("*.html") if p.stat().st_size > MAX_PAGE
    ]
    assert not big, big
    raw = [line for line in lines if re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", line)]
    assert not raw, raw[:5]  # an input cannot recolour a terminal or forge a message line


def site_ids(site: Path) -> set[str]:
    return {r["id"] for r in json.loads((site / "index.json").read_text())["runs"]}


def test_every_root_level_case(tmp_path: Path) -> None:
    """obs.yaml and decisions.jsonl cases, a pair per tree, every tree built in one process."""
    cases = [c for c in catalogue() if c.kind in ROOT_KINDS]
    groups = root_groups(cases)
    args: list[str] = []
    for i, group in enumerate(groups):
        tree = tmp_path / f"t{i:02d}"
        write_root_tree(tree / "src", group)
        args += [str(tree / "src"), str(tree / "site")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, str(HERE / "build_many.py"), *args],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(groups)
    problems = []
    for i, (group, result) in enumerate(zip(groups, results, strict=True)):
        tree = tmp_path / f"t{i:02d}"
        assert result["code"] in (0, 1), result
        assert "Traceback" not in result["stderr"], result["stderr"][-5000:]
        check_site(tree / "site")
        lines = result["stderr"].splitlines()
        problems += [f"{c.folder}: {p}" for c in group if (p := check_case(c, tree / "src", lines))]
    peaks = [(r["peak_mb"], r["source"]) for r in results]  # the process's peak so far, after each build
    top, where = max(peaks)
    assert top < PEAK_MB, f"peak {top:.0f} MB, first reached by {where}; all: {[round(p) for p, _ in peaks]}"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 60 * len(groups)  # CPU seconds, not the wall clock: a loaded machine does not fail it
    assert not problems, "\n".join(problems)


def test_a_50_mb_line_in_every_file_type(tmp_path: Path) -> None:
    cases = [c for c in catalogue(slow=True) if c.kind not in ROOT_KINDS]
    source = write_tree(tmp_path / "src", cases)
    proc, cpu, peak = build(source, tmp_path / "site")
    assert proc.returncode in (0, 1)
    assert "Traceback" not in proc.stderr, proc.stderr[-5000:]
    check_site(tmp_path / "site")
    lines = proc.stderr.splitlines()
    problems = [f"{c.folder}: {p}" for c in cases if (p := check_case(c, source, lines))]
    assert not problems, "\n".join(problems)
    assert cpu < 60 * len(cases)
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"
