"""Incremental and parallel builds: the cache never serves stale output, and the result is the
same bytes whichever way it was made."""

from __future__ import annotations

import hashlib
import itertools
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from obs.build import BuildOptions
from obs.cli import main
from obs.decimate import bucket_starts, decimate, minmax_indices
from obs.publish.extras import build_published

REPORTS = Path(__file__).resolve().parents[2] / "reports"


def digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "reports"
    shutil.copytree(REPORTS, source)
    out = tmp_path / "site"
    build_published(BuildOptions(source=source, out=out, jobs=2))
    return source, out


def rebuild(source: Path, out: Path, **kw: object) -> tuple[dict[str, str], object]:
    result = build_published(BuildOptions(source=source, out=out, jobs=2, **kw))  # type: ignore[arg-type]
    return digests(out), result


def test_nothing_changed_nothing_written(workspace: tuple[Path, Path]) -> None:
    source, out = workspace
    before = digests(out)
    after, result = rebuild(source, out)
    assert after == before
    assert result.changed is False and result.built == 0  # type: ignore[attr-defined]


def test_one_byte_of_a_leaf_run_rebuilds_that_run_only(workspace: tuple[Path, Path]) -> None:
    source, out = workspace
    before = digests(out)
    notes = source / "spec03/r4/notes.md"
    notes.write_bytes(notes.read_bytes() + b"!")
    after, result = rebuild(source, out)
    assert result.built == 1  # type: ignore[attr-defined]
    diff = changed(before, after)
    assert "runs/spec03-r4/index.html" in diff
    assert {d.split("/")[1] for d in diff if d.startswith("runs/")} == {"spec03-r4"}
    # the page reflects the change, and the manifest records the new input hash
    assert "index.json" in diff


def test_a_baseline_change_reaches_its_dependants(workspace: tuple[Path, Path]) -> None:
    source, out = workspace
    before = digests(out)
    probe = source / "spec03/r1/probe.jsonl"
    probe.write_text(probe.read_text().replace('"exact": false', '"exact": true', 1))
    after, _result = rebuild(source, out)
    runs = {d.split("/")[1] for d in changed(before, after) if d.startswith("runs/")}
    # r2 and r3 compare with r1; r3-s18 and r3-s19 show the r1 recipe's seeds (r1 among them) on their pages;
    # r4 (parent r3) and r5 are tested against the spec's frozen baseline r1 too, so a page of theirs changes when
    # what it shows of r1 does (r5's described delta; r4's 50 shared cases may not)
    must = {"spec03-r1", "spec03-r2", "spec03-r3", "spec03-r3-s18", "spec03-r3-s19"}
    # r1's own seed replicates are tested against it as the frozen baseline too
    assert must <= runs <= must | {"spec03-r4", "spec03-r5", "spec03-r1-s18", "spec03-r1-s19"}


def test_a_template_change_rebuilds_every_page(
    workspace: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source, out = workspace
    templates = tmp_path / "templates"
    shutil.copytree(REPORTS.parent / "templates", templates)
    (templates / "run.html").write_text(
        (templates / "run.html").read_text().replace("Machine-readable:", "Machine readable:")
    )
    monkeypatch.setattr("obs.build.templates_dir", lambda: templates)
    monkeypatch.setattr("obs.render.site.templates_dir", lambda: templates)
    before = digests(out)
    after, result = rebuild(source, out)
    assert result.built == 73  # type: ignore[attr-defined]
    pages = {d for d in changed(before, after) if d.endswith("/index.html") and d.startswith("runs/")}
    assert len(pages) == 73


def test_a_config_change_rebuilds_what_depends_on_it(workspace: tuple[Path, Path]) -> None:
    source, out = workspace
    cfg = source / "obs.yaml"
    cfg.write_text(cfg.read_text().replace("title: ", "title: Renamed ", 1))
    _after, result = rebuild(source, out)
    assert result.built == 73  # type: ignore[attr-defined]
    assert "Renamed " in (out / "index.html").read_text()


def test_clean_incremental_serial_and_parallel_builds_are_identical(
    workspace: tuple[Path, Path], tmp_path: Path
) -> None:
    source, out = workspace
    probe = source / "spec03/r1/probe.jsonl"
    probe.write_text(probe.read_text().replace('"exact": true', '"exact": false', 1))
    incremental, _ = rebuild(source, out)
    serial = tmp_path / "serial"
    build_published(BuildOptions(source=source, out=serial, jobs=1, clean=True))
    parallel = tmp_path / "parallel"
    build_published(BuildOptions(source=source, out=parallel, jobs=4, clean=True))
    assert digests(serial) == incremental
    assert digests(parallel) == incremental


def test_a_deleted_output_file_is_rebuilt(workspace: tuple[Path, Path]) -> None:
    source, out = workspace
    (out / "runs/spec03-r2/curves.js").unlink()
    assert main(["build", str(source), "-o", str(out), "-q"]) == 0
    assert (out / "runs/spec03-r2/curves.js").is_file()


def test_decimation_keeps_every_bucket_extreme_and_the_last_point() -> None:
    rng = np.random.default_rng(7)
    for n, max_points in ((200_000, 2000), (2_000_003, 2000), (5_000, 100), (1999, 2000)):
        y = rng.normal(size=n).cumsum()
        y[rng.integers(0, n, 5)] += rng.normal(0, 100, 5)  # spikes
        x = np.arange(n, dtype=float)
        xs, ys = decimate(x, y, max_points)
        assert xs[-1] == x[-1] and ys[-1] == y[-1]
        assert xs[0] == x[0]
        assert ys.max() == y.max() and ys.min() == y.min()
        assert len(xs) <= max(max_points, n if n <= max_points else 0) + 2
        assert np.all(np.diff(xs) > 0)
        if n > max_points:
            kept = set(minmax_indices(y, max_points).tolist())
            edges = [*bucket_starts(n, max_points).tolist(), n]
            assert len(edges) - 1 >= max_points // 2 - 2
            for lo, hi in itertools.pairwise(edges):  # every bucket's extremes survive
                seg = y[lo:hi]
                assert lo + int(np.argmax(seg)) in kept and lo + int(np.argmin(seg)) in kept


def test_a_run_outside_the_campaign_changed_leaves_its_statistics_alone(tmp_path: Path) -> None:
    """The campaign's pages are kept and its statistics not computed again (scipy is not even imported);
    the leaderboard still reads the campaign's seed-level results, from the analysis.json it published."""
    import subprocess
    import sys

    source = tmp_path / "reports"
    source.mkdir()
    for name in ("sepa-campaign", "grpo-rl-07", "obs.yaml"):
        src = REPORTS / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, source / name)
    out = tmp_path / "site"
    build_published(BuildOptions(source=source, out=out, jobs=1))
    before = digests(out)
    with (source / "grpo-rl-07" / "metrics.jsonl").open("a") as fh:
        fh.write('{"step": 99999, "loss": 0.5}\n')
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from obs.build import BuildOptions\n"
        "from obs.publish.extras import build_published\n"
        f"build_published(BuildOptions(source=Path({str(source)!r}), out=Path({str(out)!r}), jobs=1, quiet=True))\n"
        "print(sorted(m for m in sys.modules if m.startswith('scipy')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert run.stdout.strip() == "[]", run.stdout
    after = digests(out)
    moved = changed(before, after)
    assert any(k.startswith("runs/grpo-rl-07/") for k in moved)
    assert not any(k.startswith("campaigns/") for k in moved), sorted(moved)
    index = (out / "index.html").read_text()
    # the seed-level results of the campaign's runs, still on the leaderboard
    assert "maxrl+gtpo_sepa vs GRPO, no token transform, 3 v 3 seeds" in index


def test_a_changed_run_tests_the_importance_of_its_own_sweep_only(
    workspace: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sweep's parameter importance is a page group inside the sweeps page's (sweeps/<slug>/importance.json):
    a rebuild runs the permutation tests of the sweeps whose runs changed only, and keeps the others' groups
    even across a rebuild that kept the whole sweeps page (or the next change would test every sweep again)."""
    from obs.analysis import sweeps

    source, out = workspace
    tested: list[set[str | None]] = []
    real = sweeps.importance

    def counted(runs: Any, *args: Any) -> Any:
        tested.append({r.spec for r in runs})
        return real(runs, *args)

    monkeypatch.setattr(sweeps, "importance", counted)
    notes = source / "spec03/r4/notes.md"
    notes.write_bytes(notes.read_bytes() + b"!")  # read by no sweep: the sweeps page is kept
    rebuild(source, out)
    assert tested == []
    run_yaml = source / "spec03/r2/run.yaml"  # in the sweep of spec03 (r4 and r5 are not)
    run_yaml.write_text(run_yaml.read_text().replace("lr: 0.0006", "lr: 0.0005"))
    after, _ = rebuild(source, out)
    assert tested == [{"spec03"}]
    assert len(list(out.glob("sweeps/*/importance.json"))) > 3
    clean = build_published(BuildOptions(source=source, out=tmp_path / "clean", jobs=2))
    assert clean.errors == 0 and digests(tmp_path / "clean") == after
