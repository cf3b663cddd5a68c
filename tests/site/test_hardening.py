"""Issue 31, hardening round two: names, types, ids, special files and bounded, clean messages.

One source tree holds every case (one `obs check` and one `obs build`, in this process), beside good
runs; each test reads what those printed and built. The generated fault corpus
(tests/site/badinputs.py) holds the same cases too, for the no-traceback and memory bounds.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from obs.cli import main

HERE_ID = "good-base"


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def make_tree(src: Path) -> Path:
    write(src / "base/run.yaml", f"id: {HERE_ID}\ntitle: the baseline\nstatus: finished\n")
    write(src / "base/metrics.jsonl", "".join(json.dumps({"step": s, "loss": 1 / (s + 1)}) + "\n" for s in range(20)))
    # names that are not UTF-8, beside a run and as a folder of their own
    write(src / "base/caf\udce9.txt".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape"), "x")
    os.makedirs(os.fsencode(src) + b"/stray\xff\xfe", exist_ok=True)
    write(Path(os.fsdecode(os.fsencode(src) + b"/stray\xff\xfe/run.yaml")), "id: in-a-bad-name\n")
    # ids a quick look at run.yaml used to lose
    write(src / "bad-date/run.yaml", "id: dated\ndate: 2024-13-45\nbaseline: good-base\nstatus: finished\n")
    write(src / "emoji/run.yaml", 'id: "smile-\\ud83d\\ude00"\ntitle: "\\ud83d\\ude00 run"\n')
    write(src / "broken/run.yaml", "id: broken-id  # the id\nbaseline: 'good-base'\ntitle: [unclosed\n")
    write(src / "dup/run.yaml", "id: dated\n")  # the id of bad-date/, whose date libyaml refuses
    # gate.json fields of the wrong type
    write(src / "gate-types/run.yaml", "id: gate-types\n")
    write(src / "gate-types/gate.json", json.dumps({"passed": True, "assets": "x" * 5000, "checks": 7}))
    write(src / "gate-bool/run.yaml", "id: gate-bool\n")
    write(
        src / "gate-bool/gate.json",
        json.dumps({"assets": True, "checks": [{"name": "a", "passed": "yes"}, {"name": "b", "passed": 1}, "c"]}),
    )
    # special files in place of inputs
    write(src / "fifo-run/metrics.jsonl", '{"step": 1, "loss": 1}\n')
    os.mkfifo(src / "fifo-run/run.yaml")
    write(src / "fifo-metrics/run.yaml", "id: fifo-metrics\n")
    os.mkfifo(src / "fifo-metrics/metrics.jsonl")
    write(src / "dir-notes/run.yaml", "id: dir-notes\n")
    (src / "dir-notes/notes.md").mkdir()
    (src / "dir-notes/probe.jsonl").symlink_to("missing.jsonl")
    # plain-text fields far past what a page can lay out, and fields of the wrong type in other formats
    write(src / "long/run.yaml", "id: long\ntitle: " + "T" * 200_000 + '\ndate: "' + "2" * 200_000 + '"\n')
    write(src / "long-spec/spec.yaml", "id: long-spec\ntitle: " + "S" * 100_000 + "\n")
    write(src / "long-spec/r1/run.yaml", "id: long-spec-r1\n")
    write(src / "wandb/files/wandb-summary.json", json.dumps({"loss": 0.5, "_step": 10}))
    write(src / "wandb/files/wandb-metadata.json", json.dumps({"startedAt": "2" * 2_000_000, "state": ["x"]}))
    mlrun = src / "mlruns/1/0123456789abcdef"
    write(src / "mlruns/1/meta.yaml", "experiment_id: '1'\nname: exp\nlifecycle_stage: active\n")
    write(mlrun / "meta.yaml", "run_id: 0123456789abcdef\nrun_name: {a: 1}\nstatus: 3\nstart_time: soon\n")
    write(mlrun / "metrics/loss", "1700000000000 0.5 1\n1700000000001 0.4 2\n")
    return src


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str], list[str], int, int]:
    root = tmp_path_factory.mktemp("hardening")
    src = make_tree(root / "src")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        check_code = main(["check", str(src)])
    check_lines = (out.getvalue() + err.getvalue()).splitlines()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        build_code = main(["build", str(src), "-o", str(root / "site")])
    build_lines = (out.getvalue() + err.getvalue()).splitlines()
    return src, root / "site", check_lines, build_lines, check_code, build_code


def messages(lines: list[str]) -> list[str]:
    return [line for line in lines if re.match(r"src[/:]", line) and re.search(r": (warning|error): ", line)]


def test_a_name_that_is_not_utf8_is_named_once_per_folder_and_check_and_build_agree(outputs) -> None:  # type: ignore[no-untyped-def]
    _, site, check, build, _, build_code = outputs
    assert build_code == 1  # the broken run.yaml; the build went through and published
    assert (site / "runs" / HERE_ID / "index.html").is_file()
    expected = [
        "src/base: warning: an entry whose name is not valid UTF-8 ('caf\ufffd.txt'): read, with each byte that is "
        "not UTF-8 shown as U+FFFD in messages and pages; rename it to keep its name",
        "src: warning: an entry whose name is not valid UTF-8 ('stray\ufffd\ufffd'): read, with each byte that is "
        "not UTF-8 shown as U+FFFD in messages and pages; rename it to keep its name",
    ]
    for line in expected:
        assert check.count(line) == 1, check
        assert build.count(line) == 1, build
    assert sorted(messages(check)) == sorted(messages(build))


def test_ids_survive_what_libyaml_refuses_and_duplicates_are_found(outputs) -> None:  # type: ignore[no-untyped-def]
    _, site, _, build, _, _ = outputs
    index = json.loads((site / "index.json").read_text())
    ids = {r["id"] for r in index["runs"]}
    assert {"dated", "smile-\U0001f600", "broken-id", HERE_ID, "in-a-bad-name"} <= ids
    assert "src/dup/run.yaml:1: error: run id 'dated' is already used by src/bad-date; this run was skipped" in build
    assert any(line.startswith("src/broken/run.yaml:3: error: invalid YAML") for line in build)
    page = (site / "runs" / "smile" / "index.html").read_text()
    assert "\U0001f600 run" in page  # the pair joined, not two U+FFFD
    dated = next(r for r in index["runs"] if r["id"] == "dated")
    assert dated.get("baseline") == HERE_ID


def test_gate_fields_of_the_wrong_type_are_one_message_each(outputs) -> None:  # type: ignore[no-untyped-def]
    _, site, _, build, _, _ = outputs
    gate = [m for m in build if m.startswith("src/gate-types/gate.json")]
    assert gate == [
        "src/gate-types/gate.json: warning: 'assets' must be a list of gate assets, not a text of 5000 characters; "
        "ignored",
        "src/gate-types/gate.json: warning: 'checks' must be a list of gate checks, not a number; ignored",
    ]
    assert (site / "runs" / "gate-types" / "index.html").is_file()
    other = [m for m in build if m.startswith("src/gate-bool/gate.json")]
    assert other == [
        "src/gate-bool/gate.json: warning: 'assets' must be a list of gate assets, not a boolean; ignored",
        "src/gate-bool/gate.json: warning: 'checks[]' must be an object (a gate check), not a text; ignored",
        "src/gate-bool/gate.json: warning: 'checks[].passed' must be true or false; 2 values are not (the first is "
        "a text); ignored",
    ]
    assert not [m for m in build if "could not be read" in m]


def test_special_files_are_named_once_and_never_read_as_runs(outputs) -> None:  # type: ignore[no-untyped-def]
    _, site, check, build, _, _ = outputs
    for lines in (check, build):
        assert lines.count("src/fifo-run/run.yaml: warning: a named pipe (FIFO), not a regular file: not read") == 1
        assert (
            lines.count("src/fifo-metrics/metrics.jsonl: warning: a named pipe (FIFO), not a regular file: not read")
            == 1
        )
        assert lines.count("src/dir-notes/notes.md: warning: a folder, not a regular file: not read") == 1
        assert (
            lines.count(
                "src/dir-notes/probe.jsonl: warning: a symbolic link to nothing (its target is missing), "
                "not a regular file: not read"
            )
            == 1
        )
    ids = {r["id"] for r in json.loads((site / "index.json").read_text())["runs"]}
    assert not any(i.startswith("fifo-run") for i in ids)  # not three generic runs
    assert {"fifo-metrics", "dir-notes"} <= ids
    page = BeautifulSoup((site / "runs" / "fifo-metrics" / "index.html").read_text(), "html.parser")
    assert page.title is not None


def test_plain_text_fields_are_cut_with_one_notice_each(outputs) -> None:  # type: ignore[no-untyped-def]
    _, site, _, build, _, _ = outputs
    assert "src/long/run.yaml: warning: 'title' is 200,000 characters long; pages show its first 300" in build
    assert "src/long/run.yaml: warning: 'date' is 200,000 characters long; pages show its first 64" in build
    assert "src/wandb: warning: 'date' is 2,000,000 characters long; pages show its first 64" in build
    assert "src/long-spec/spec.yaml: warning: 'title' is 100,000 characters long; pages show its first 300" in build
    for page in site.rglob("*.html"):
        assert page.stat().st_size < 2_000_000, page
    long_page = (site / "runs" / "long" / "index.html").read_text()
    assert "T" * 299 + "…" in long_page and "T" * 301 not in long_page


def test_wandb_and_mlflow_fields_of_the_wrong_type_are_named(outputs) -> None:  # type: ignore[no-untyped-def]
    _, _, _, build, _, _ = outputs
    assert "src/wandb/files/wandb-metadata.json: warning: 'state' must be text, not a list; ignored" in build
    meta = "src/mlruns/1/0123456789abcdef/meta.yaml: warning: "
    assert meta + "'run_name' must be text, not an object; ignored" in build
    assert meta + "'start_time' must be a number, not a text; ignored" in build


def test_a_full_disk_has_its_own_exit_code_and_names_the_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It exited 1 ("a run could not be read") with no path; now 3, naming the output."""
    import errno

    from obs import write

    src = tmp_path / "src"
    write_run = src / "r" / "run.yaml"
    write_run.parent.mkdir(parents=True)
    write_run.write_text("id: r\n")

    def full(self: object, rel: str, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(write.Staging, "write", full)
    out = tmp_path / "site"
    assert main(["build", str(src), "-o", str(out)]) == 3
    err = capsys.readouterr().err
    assert f"obs build: cannot write {out}: No space left on device" in err
    assert "Traceback" not in err
    assert not out.exists()  # nothing half-written was published


def test_a_damaged_event_file_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TensorBoard's reader stops at damage without a word: the run said its files "hold no scalars"."""
    pytest.importorskip("tensorboard")
    folder = tmp_path / "src" / "tb"
    folder.mkdir(parents=True)
    (folder / "events.out.tfevents.1700000000.host.1").write_bytes(bytes(range(256)) * 12)
    assert main(["check", str(tmp_path / "src")]) == 0
    out = capsys.readouterr()
    lines = (out.out + out.err).splitlines()
    assert (
        "src/tb/events.out.tfevents.1700000000.host.1: warning: no event record could be read from this 3,072-byte "
        "file (damaged, cut off at its first record, or not a TensorBoard event file)" in lines
    )
    assert "src/tb: warning: no scalars were read from the TensorBoard event files" in lines


def test_base_url_must_be_a_web_address(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    (src / "r").mkdir(parents=True)
    (src / "r" / "run.yaml").write_text("id: r\n")
    (src / "obs.yaml").write_text('base_url: "javascript:alert(1)"\n')
    main(["check", str(src)])
    out = capsys.readouterr()
    assert (
        "src/obs.yaml:1: warning: 'base_url' should be an http:// or https:// address, got 'javascript:alert(1)'; "
        "the default was used" in (out.out + out.err).splitlines()
    )


def test_images_in_notes_are_named_not_dropped_silently(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    (src / "r").mkdir(parents=True)
    (src / "r" / "run.yaml").write_text("id: r\n")
    (src / "r" / "notes.md").write_text("# notes\n\ntext\n\n![plot](plot.png) and ![b](http://x.example/b.png)\n")
    main(["check", str(src)])
    out = capsys.readouterr()
    assert (
        "src/r/notes.md:5: info: 2 images not shown: pages show no image from Markdown (one could load from "
        "another host); the text around them is kept" in (out.out + out.err).splitlines()
    )
