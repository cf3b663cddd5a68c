"""obs.safepaths: what may be read from the source tree (links out of it and loops refused, folders listed once)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from obs.diagnostics import Diagnostics
from obs.safepaths import (
    CYCLE,
    LOOP,
    OUTSIDE,
    is_inside,
    list_folder,
    refusal,
    report_refused,
    safe_input,
    walk_files,
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/ with a file, a link inside, a link out, two links at each other, a self link and a link to `..`."""
    root = tmp_path / "root"
    (root / "run" / "sub").mkdir(parents=True)
    (root / "run" / "a.txt").write_text("a")
    (root / "run" / "sub" / "b.txt").write_text("b")
    (tmp_path / "secret.txt").write_text("secret")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "c.txt").write_text("c")
    run = root / "run"
    (run / "inside.txt").symlink_to("a.txt")
    (run / "out.txt").symlink_to(tmp_path / "secret.txt")
    (run / "outdir").symlink_to(tmp_path / "outdir", target_is_directory=True)
    (run / "x").symlink_to("y")
    (run / "y").symlink_to("x")
    (run / "me").symlink_to("me")
    (run / "sub" / "up").symlink_to("..", target_is_directory=True)
    (run / ".hidden").symlink_to(tmp_path / "secret.txt")
    return root


def test_refusal_names_links_out_of_the_tree_and_loops(tree: Path) -> None:
    run = tree / "run"
    assert refusal(run / "a.txt", tree) is None
    assert refusal(run / "inside.txt", tree) is None
    assert refusal(run / "out.txt", tree) == OUTSIDE
    assert refusal(run / "outdir" / "c.txt", tree) == OUTSIDE  # a link anywhere on the way counts
    assert refusal(run / "x", tree) == LOOP
    assert refusal(run / "me", tree) == LOOP
    assert refusal(run / "missing.txt", tree) is None


def test_safe_input_returns_only_readable_files_inside(tree: Path) -> None:
    run = tree / "run"
    assert safe_input(run / "a.txt", tree) == run / "a.txt"
    assert safe_input(run / "inside.txt", tree) == run / "inside.txt"
    for name in ("out.txt", "x", "me", "missing.txt", "sub"):
        assert safe_input(run / name, tree) is None, name
    assert safe_input(run / "outdir" / "c.txt", tree) is None
    assert safe_input(run / "a.txt", run / "sub") is None  # inside the tree, but not inside this root


def test_is_inside_never_raises_on_a_loop(tree: Path) -> None:
    assert is_inside(tree / "run" / "not-yet.txt", tree)
    assert not is_inside(tree / "run" / "x", tree)
    assert not is_inside(tree / "run" / "out.txt", tree)
    assert not is_inside(tree / "run" / "a.txt", tree / "run" / "sub")


def test_listing_sorts_entries_and_refuses_links_out_loops_and_cycles(tree: Path) -> None:
    run = tree / "run"
    listing = list_folder(run, tree)
    assert [p.name for p in listing.files] == ["a.txt", "inside.txt"]
    assert [p.name for p in listing.dirs] == ["sub"]
    assert dict((p.name, why) for p, why in listing.refused) == {
        "me": LOOP,
        "out.txt": OUTSIDE,
        "outdir": OUTSIDE,
        "x": LOOP,
        "y": LOOP,
    }  # hidden names are not listed at all
    assert list_folder(run / "sub", tree).refused == [(run / "sub" / "up", CYCLE)]


def test_walk_lists_each_real_folder_once_even_through_links(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("f")
    (root / "alias").symlink_to("d", target_is_directory=True)  # the same folder under two names
    for name in ("l1", "l2"):  # two links to the root: 2^40 paths for a walk without memory
        (root / "d" / name).symlink_to("..", target_is_directory=True)
    files = walk_files(root, root)
    assert [p.name for p in files] == ["f.txt"]  # once, under one of its names


def test_refused_links_are_reported_under_their_own_name(tree: Path) -> None:
    diags = Diagnostics(root=tree)
    report_refused(diags, list_folder(tree / "run", tree).refused)
    shown = sorted(d.format() for d in diags.items)
    assert "root/run/out.txt: warning: " + OUTSIDE in shown
    assert "root/run/x: warning: " + LOOP in shown
    assert all(d.severity == "warning" for d in diags.items)


def test_a_folder_outside_the_root_lists_nothing(tree: Path, tmp_path: Path) -> None:
    listing = list_folder(tmp_path / "outdir", tree)
    assert listing.files == [] and listing.dirs == [] and listing.refused == []
    assert os.path.exists(tmp_path / "outdir" / "c.txt")


def test_an_unreadable_folder_is_one_error_and_the_rest_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run folder that cannot be listed (no permission; simulated, since root ignores permissions) is
    named in one error; the other runs are still found."""
    from obs.discover import discover

    root = tmp_path / "src"
    for name in ("a", "b"):
        (root / name).mkdir(parents=True)
        (root / name / "run.yaml").write_text(f"id: {name}\n")
        (root / name / "metrics.jsonl").write_text('{"step": 1, "loss": 0.5}\n')
    real_scandir = os.scandir

    def scandir(path: str | os.PathLike[str] = ".") -> object:
        if Path(path).name == "b":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert list_folder(root / "b", root).unreadable == "Permission denied"
    found = discover(root)
    said = [d.format() for d in found.diags.items]
    assert "a" in [r.default_id for r in found.runs]
    assert said == [
        "src/b: error: the folder cannot be listed (Permission denied); what it holds may be skipped: "
        "make it readable, then build again"
    ]


def test_remembered_locations_resolve_as_realpath_does(tmp_path: Path) -> None:
    """Inside a walk, `real` reuses each folder's answer; it must still say what os.path.realpath says,
    for plain paths, links to files and folders, links inside linked folders, loops and missing parts."""
    from obs.safepaths import real, remembered_locations

    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_text("x")
    (tmp_path / "outside").mkdir()
    (root / "to_b").symlink_to(root / "a" / "b")
    (root / "a" / "to_f").symlink_to(root / "a" / "b" / "f.txt")
    (root / "out").symlink_to(tmp_path / "outside")
    (root / "loop1").symlink_to(root / "loop2")
    (root / "loop2").symlink_to(root / "loop1")
    (root / "a" / "up").symlink_to("..")
    paths = [
        root / "a" / "b" / "f.txt",
        root / "to_b" / "f.txt",
        root / "a" / "to_f",
        root / "out" / "missing.txt",
        root / "loop1" / "x",
        root / "a" / "up" / "a" / "b",
        root / "a" / "b" / ".." / "b" / "f.txt",
        root / "missing" / "deeper" / "file",
        Path("relative") / "name",
    ]
    with remembered_locations():
        remembered = [real(p) for p in paths] + [real(p) for p in paths]  # asked twice: the second from memory
    assert remembered == [Path(os.path.realpath(p)) for p in paths] * 2
