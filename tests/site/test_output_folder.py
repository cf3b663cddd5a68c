"""The output folder's rules (README, "The output folder"): the output is a link switched in one step;
files obs did not write are kept and named (or, with --clean, removed and named); `static/` is copied
into every site and never read as runs; a site is not emptied without --force; and what reads the
site (hard links of unchanged pages, the quick no-op check, --compare-to) works through the link."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from faultkit import debris, make_source, site_files

from obs.build import BuildOptions, build_site
from obs.cache import BuildCache, cache_dir_for
from obs.cli import main
from obs.write import current_version, output_lock


def build(source: Path, out: Path, *args: str) -> int:
    return main(["build", str(source), "-o", str(out), "-j", "1", *args])


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path]:
    source = make_source(tmp_path / "src")
    out = tmp_path / "site"
    assert build(source, out) == 0
    return source, out


def touch_source(source: Path, n: int = 0) -> None:
    """A real input change, so the next build publishes a new version."""
    with (source / "r0" / "metrics.jsonl").open("a") as fh:
        fh.write(json.dumps({"step": 1000 + n, "loss": 0.1}) + "\n")


def runs_in(out: Path) -> list[str]:
    return [r["id"] for r in json.loads((out / "index.json").read_text())["runs"]]


# --- the layout -----------------------------------------------------------------------------------


def test_the_output_is_a_relative_link_to_a_complete_version(built: tuple[Path, Path]) -> None:
    _source, out = built
    target = os.readlink(out)
    assert out.is_symlink() and target.startswith(".site.obs/site.")
    assert (out.parent / target / "index.json").is_file()
    assert sorted(os.listdir(out.parent / ".site.obs")) == sorted(["lock", target[10:], f"{target[10:]}.files"])


def test_each_publish_switches_the_link_and_removes_the_old_version(built: tuple[Path, Path]) -> None:
    source, out = built
    first = os.readlink(out)
    touch_source(source)
    assert build(source, out) == 0
    assert os.readlink(out) != first and not (out.parent / first).exists()
    assert debris(out) == []


def test_unchanged_pages_are_hard_linked_from_the_current_version(built: tuple[Path, Path]) -> None:
    source, out = built
    page = out / "runs" / "r3" / "index.html"  # r3 does not depend on r0's metrics
    inode = page.stat().st_ino
    touch_source(source)
    assert build(source, out) == 0
    assert page.stat().st_ino == inode


def test_the_quick_no_op_check_works_through_the_link(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source, out = built
    capsys.readouterr()
    assert build(source, out) == 0
    replayed = capsys.readouterr().out
    assert "nothing changed" in replayed and " s -> " not in replayed  # the replay prints no timing
    (out.parent / ".site.obs" / "building-killed").mkdir()  # debris: not a state to replay
    assert build(source, out) == 0
    assert " s -> " in capsys.readouterr().out and debris(out) == []


def test_compare_to_reads_another_site_through_its_link(built: tuple[Path, Path], tmp_path: Path) -> None:
    source, out = built
    other = tmp_path / "other"
    assert build(source, other) == 0
    touch_source(source)
    assert build(source, out, "--compare-to", str(other)) == 0
    assert (out / "changes.html").is_file()


def test_a_link_the_user_made_is_followed(built: tuple[Path, Path], tmp_path: Path) -> None:
    source, out = built
    mine = tmp_path / "published"
    mine.symlink_to(out)  # the user's own link to the site
    version = os.readlink(out)
    touch_source(source)
    assert build(source, mine) == 0
    assert mine.is_symlink() and os.readlink(mine) == str(out)  # left as it was
    assert os.readlink(out) != version  # the site it leads to was published


def test_a_plain_folder_from_an_older_obs_is_taken_over(built: tuple[Path, Path]) -> None:
    """An older obs left a real folder: its user files are kept, its stale pages are not."""
    source, out = built
    version = out.parent / os.readlink(out)
    out.unlink()
    shutil.copytree(version, out)
    shutil.rmtree(out.parent / ".site.obs")
    (out / "CNAME").write_text("runs.example.org\n")
    (out / "runs" / "gone").mkdir()
    (out / "runs" / "gone" / "index.html").write_text("a run removed long ago")
    touch_source(source)
    assert build(source, out) == 0
    assert out.is_symlink() and (out / "CNAME").read_text() == "runs.example.org\n"
    assert not (out / "runs" / "gone").exists()
    assert debris(out) == []


def test_the_cache_trusts_only_the_version_it_was_written_for(built: tuple[Path, Path]) -> None:
    _source, out = built
    cache_dir = cache_dir_for(out)
    assert BuildCache.open(cache_dir, site=out).runs  # written for the published version
    real = out.parent / os.readlink(out)
    out.unlink()
    out.symlink_to(real.relative_to(out.parent).parent / f"{real.name}-elsewhere")  # another version
    assert current_version(out) is not None and BuildCache.open(cache_dir, site=out).runs == {}


def test_a_build_inside_the_lock_of_its_own_process_proceeds(tmp_path: Path) -> None:
    """obs serve holds the lock and builds: the lock is re-entrant within one process."""
    source = make_source(tmp_path / "src", 2)
    out = tmp_path / "site"
    with output_lock(out, holder="obs serve"):
        result = build_site(BuildOptions(source=source, out=out, jobs=1))
    assert result.runs == 2


# --- files obs did not write -----------------------------------------------------------------------


def test_files_obs_did_not_write_are_kept_and_named(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source, out = built
    (out / "CNAME").write_text("runs.example.org\n")
    (out / "notes").mkdir()
    (out / "notes" / "todo.txt").write_text("mine")
    capsys.readouterr()
    assert build(source, out) == 0  # a no-op: nothing is published, nothing is touched
    touch_source(source)
    assert build(source, out) == 0  # a new version: the files are carried into it
    assert (out / "CNAME").read_text() == "runs.example.org\n" and (out / "notes" / "todo.txt").read_text() == "mine"
    assert "info: kept 2 files obs did not write: CNAME, notes/todo.txt" in capsys.readouterr().err
    touch_source(source, 1)
    assert build(source, out) == 0  # and into the next one
    assert (out / "CNAME").is_file() and (out / "notes" / "todo.txt").is_file()


def test_clean_removes_them_and_names_each(built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    source, out = built
    (out / "CNAME").write_text("runs.example.org\n")
    (out / "stray.txt").write_text("x")
    capsys.readouterr()
    assert build(source, out, "--clean") == 0
    assert not (out / "CNAME").exists() and not (out / "stray.txt").exists()
    err = capsys.readouterr().err
    assert "warning: --clean removed 2 files obs did not write: CNAME, stray.txt" in err


def test_a_user_file_where_obs_now_writes_a_page_is_named(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source, out = built
    (out / "runs" / "r9").mkdir()
    (out / "runs" / "r9" / "index.html").write_text("hand-made")
    (source / "r9").mkdir()
    (source / "r9" / "run.yaml").write_text("id: r9\n")
    capsys.readouterr()
    assert build(source, out) == 0
    assert "hand-made" not in (out / "runs" / "r9" / "index.html").read_text()
    assert "replaced 1 file obs did not write by obs's page of the same name: runs/r9/index.html" in (
        capsys.readouterr().err
    )


# --- static/ ---------------------------------------------------------------------------------------


def test_static_is_copied_into_every_site_and_not_read_as_runs(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source, out = built
    static = source / "static"
    (static / "img").mkdir(parents=True)
    (static / "CNAME").write_text("runs.example.org\n")
    (static / "img" / "logo.svg").write_text("<svg/>")
    (static / "run.yaml").write_text("id: ghost\n")  # would be a run anywhere else
    assert build(source, out) == 0  # only static/ changed: still published
    assert (out / "CNAME").read_text() == "runs.example.org\n" and (out / "img" / "logo.svg").is_file()
    assert "ghost" not in runs_in(out) and (out / "run.yaml").is_file()
    (static / "CNAME").write_text("other.example.org\n")
    assert build(source, out) == 0
    assert (out / "CNAME").read_text() == "other.example.org\n"
    (static / "img" / "logo.svg").unlink()
    assert build(source, out) == 0
    assert not (out / "img" / "logo.svg").exists()  # obs put it there, so obs takes it away
    assert "obs did not write" not in capsys.readouterr().err


def test_static_follows_no_link_and_never_replaces_a_page(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source, out = built
    static = source / "static"
    static.mkdir()
    secret = source.parent / "secret.txt"
    secret.write_text("outside the sources")
    (static / "secret.txt").symlink_to(secret)
    (static / "index.html").write_text("not the leaderboard")
    capsys.readouterr()
    assert build(source, out) == 0
    assert not (out / "secret.txt").exists()
    assert "not the leaderboard" not in (out / "index.html").read_text()
    err = capsys.readouterr().err
    assert "src/static/secret.txt: warning: is a symbolic link; not copied" in err
    assert "src/static/index.html: warning: obs writes index.html itself" in err


def test_moving_a_site_file_into_static_is_quiet(built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    source, out = built
    (out / "CNAME").write_text("runs.example.org\n")
    (source / "static").mkdir()
    (source / "static" / "CNAME").write_text("runs.example.org\n")
    capsys.readouterr()
    assert build(source, out) == 0
    assert "CNAME" not in capsys.readouterr().err
    assert (out / "CNAME").read_text() == "runs.example.org\n"


# --- no silent emptying --------------------------------------------------------------------------


def test_an_empty_source_does_not_replace_a_site(built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _source, out = built
    empty = out.parent / "empty"
    empty.mkdir()
    before = site_files(out)
    capsys.readouterr()
    assert build(empty, out) == 2
    err = capsys.readouterr().err
    assert err == (
        f"obs build: refusing to replace {out} (4 runs) with a build of 0 runs: is this the right source folder? "
        "Add --force to publish it anyway.\n"
    )
    assert site_files(out) == before and debris(out) == []
    assert build(empty, out, "--force") == 0
    assert runs_in(out) == []


def test_losing_more_than_half_the_runs_needs_force(built: tuple[Path, Path]) -> None:
    source, out = built
    for run in ("r1", "r2", "r3"):
        shutil.rmtree(source / run)
    assert build(source, out) == 2  # 4 -> 1
    assert runs_in(out) == ["r0", "r1", "r2", "r3"]
    assert build(source, out, "--allow-empty") == 0 and runs_in(out) == ["r0"]


def test_losing_half_the_runs_is_allowed(built: tuple[Path, Path]) -> None:
    source, out = built
    for run in ("r2", "r3"):
        shutil.rmtree(source / run)
    assert build(source, out) == 0  # 4 -> 2: half is not more than half
    assert runs_in(out) == ["r0", "r1"]


def test_strict_fails_when_no_run_was_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert build(empty, tmp_path / "site") == 0
    assert build(empty, tmp_path / "site", "--strict") == 1  # the quick replay says so too
    assert build(empty, tmp_path / "other", "--strict") == 1
    err = capsys.readouterr().err
    assert "empty: warning: no run found in this folder" in err  # without --strict: said, and exit 0
    assert err.count("empty: error: no run found in this folder") == 2  # with it: an error, in both paths


def test_an_interrupt_just_after_the_switch_never_removes_the_published_version(tmp_path: Path) -> None:
    """A signal between the rename and the end of commit() unwinds into discard(): the version the
    output already points to must survive it."""
    from obs.write import Staging

    out = tmp_path / "site"
    staging = Staging(out)
    staging.write("index.json", b'{"generator": "obs", "runs": []}')
    staging.commit()
    staging._published = False  # as if the signal came between os.replace and the line after it
    staging.discard()
    assert (out / "index.json").is_file()
