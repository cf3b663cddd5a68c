"""Nothing outside the source tree reaches a site: a symbolic link for every input file name is refused and named.

Every input obs reads (native files, spec/campaign/obs yaml, a paired result file, each adapter's files, a
linked folder) is planted as a link to a file outside the source, each carrying its own marker. The same tree
built with real copies instead of links shows every marker (so each one would be visible if it were read);
built with the links, no marker appears anywhere in the site, every link is named in a warning, and links that
loop or point back at their own folder do not hang the build.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from obs.build import BuildOptions, build_site

# (path inside the source, content of the outside file it points to, marker a page shows when it is read)
LINKED_FILES: list[tuple[str, str, str]] = [
    ("obs.yaml", "title: SECRET-obs\n", "SECRET-obs"),
    ("spec-a/spec.yaml", "id: spec-a\ntitle: SECRET-spec\n", "SECRET-spec"),
    ("camp/campaign.yaml", "id: camp\ntitle: SECRET-campaign\n", "SECRET-campaign"),
    ("lost/run.yaml", "id: SECRET-runyaml\ntitle: SECRET-runyaml\n", "SECRET-runyaml"),
    ("spec-a/r1/notes.md", "SECRET-notes\n", "SECRET-notes"),
    ("spec-a/r1/probe.jsonl", '{"id": "c1", "exact": false, "prompt": "SECRET-probe"}\n', "SECRET-probe"),
    ("spec-a/r1/probe_repaired.jsonl", '{"id": "c1", "exact": true, "SECRET_fixed": true}\n', "SECRET_fixed"),
    ("spec-a/r1/gate.json", '{"checks": [{"name": "SECRET-gate", "passed": false}]}', "SECRET-gate"),
    ("render-run/renders/c2.png", "SECRET-render", "SECRET-render"),
    ("native-metrics/metrics.jsonl", '{"step": 1, "SECRET_native": 1.0}\n', "SECRET_native"),
    ("named-log/log.jsonl", '{"step": 1, "SECRET_named": 1.0}\n', "SECRET_named"),
    ("hf/trainer_state.json", '{"global_step": 1, "log_history": [{"step": 1, "SECRET_hf": 1.0}]}', "SECRET_hf"),
    ("hf-side/config.json", '{"_name_or_path": "SECRET-hfconfig"}', "SECRET-hfconfig"),
    ("wandb/run-20240101_000000-abc/files/wandb-summary.json", '{"SECRET_wandb": 1.5}', "SECRET_wandb"),
    ("mlruns/1/r0/params/lr", "SECRET-mlflow-param", "SECRET-mlflow-param"),
    ("mlruns/1/r0/tags/mlflow.note.content", "SECRET-mlflow-note", "SECRET-mlflow-note"),
    (
        "lm/results_2024-01-01T00-00-00.json",
        '{"results": {"SECRET_task": {"acc,none": 0.5}}, "versions": {"SECRET_task": 1}}',
        "SECRET_task",
    ),
    ("generic/log.jsonl", '{"step": 1, "SECRET_generic": 1.0}\n', "SECRET_generic"),
    ("camp2/evals/a.json", '[{"id": "SECRET-paired", "correct": true}]', "SECRET-paired"),
]
LINKED_DIR = ("dirlink", "SECRET-dirrun")  # a link to a whole run folder outside
LOOPS = ("spec-a/r1/loop_a", "spec-a/r1/loop_b", "spec-a/r1/self", "spec-a/r1/up", "generic/up2")


def real_files(src: Path) -> None:
    """The files around the links: runs for the linked files to belong to, each readable on its own."""
    files = {
        "spec-a/r1/run.yaml": "id: r1\n",
        "spec-a/r1/metrics.jsonl": '{"step": 1, "loss": 1.0}\n',
        "render-run/run.yaml": "id: render-run\n",
        "render-run/probe.jsonl": '{"id": "c2", "exact": false, "render": "renders/c2.png"}\n',
        "camp/c1/run.yaml": "id: c1\ncondition: a\nseed: 1\n",
        "lost/metrics.jsonl": '{"step": 1, "loss": 1.0}\n',
        "native-metrics/run.yaml": "id: native-metrics\n",
        "named-log/run.yaml": "id: named-log\nmetrics_file: log.jsonl\n",
        "hf-side/trainer_state.json": '{"global_step": 1, "log_history": [{"step": 1, "loss": 1.0}]}',
        "wandb/run-20240101_000000-abc/files/config.yaml": "lr: {value: 0.1}\n",
        "mlruns/1/meta.yaml": "experiment_id: '1'\nname: exp\n",
        "mlruns/1/r0/meta.yaml": "run_id: r0\nexperiment_id: '1'\nstatus: 3\n",
        "mlruns/1/r0/metrics/loss": "1700000000000 1.0 0\n",
        "camp2/campaign.yaml": "id: camp2\npaired:\n  - a: evals/a.json\n    b: evals/b.json\n",
        "camp2/evals/b.json": '[{"id": "other", "correct": true}]',
        "generic/other.jsonl": '{"step": 1, "loss": 2.0}\n',
    }
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)


def make_tree(base: Path, *, links: bool) -> Path:
    """The source tree at `base/src`; the inputs are links to files in `base/outside` or, for the control, copies."""
    src, outside = base / "src", base / "outside"
    real_files(src)
    for i, (rel, text, _) in enumerate(LINKED_FILES):
        target = outside / f"{i}-{Path(rel).name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        place = src / rel
        place.parent.mkdir(parents=True, exist_ok=True)
        if links:
            place.symlink_to(target)
        else:
            shutil.copyfile(target, place)
    run_dir = outside / "a-run"
    run_dir.mkdir()
    (run_dir / "run.yaml").write_text(f"id: {LINKED_DIR[1]}\n")
    (run_dir / "metrics.jsonl").write_text('{"step": 1, "loss": 1.0}\n')
    if links:
        (src / LINKED_DIR[0]).symlink_to(run_dir, target_is_directory=True)
        (src / LOOPS[0]).symlink_to(LOOPS[1].rsplit("/", 1)[1])
        (src / LOOPS[1]).symlink_to(LOOPS[0].rsplit("/", 1)[1])
        (src / LOOPS[2]).symlink_to("self")
        (src / LOOPS[3]).symlink_to(".", target_is_directory=True)
        (src / LOOPS[4]).symlink_to("..", target_is_directory=True)
    else:
        shutil.copytree(run_dir, src / LINKED_DIR[0])
    return src


def site_text(out: Path) -> str:
    """Every file name and every byte of the site, as one text to search."""
    parts = []
    for path in sorted(out.rglob("*")):
        parts.append(path.relative_to(out).as_posix())
        if path.is_file():
            parts.append(path.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(parts)


def obs_build(src: Path, out: Path) -> tuple[int, str, float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "obs.cli", "build", str(src), "-o", str(out), "-j", "1"],
        capture_output=True,
        text=True,
        timeout=300,  # a hang fails here instead of blocking the suite
    )
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started


def test_control_copies_show_every_marker(tmp_path: Path) -> None:
    """Without links the same files are read and published: each marker is a fair probe of a leak."""
    src = make_tree(tmp_path, links=False)
    out = tmp_path / "site"
    code, output, _ = obs_build(src, out)
    assert "Traceback" not in output and code in (0, 1), output
    text = site_text(out)
    missing = [marker for _, _, marker in LINKED_FILES if marker not in text]
    assert missing == []
    assert LINKED_DIR[1] in text


def test_no_link_publishes_an_outside_file_and_each_is_named(tmp_path: Path) -> None:
    src = make_tree(tmp_path, links=True)
    out = tmp_path / "site"
    code, output, _ = obs_build(src, out)  # a link loop followed for ever fails the run's timeout, not a clock
    assert "Traceback" not in output and code in (0, 1), output
    leaked = sorted(set(re.findall(r"SECRET[-_][a-z]+", site_text(out))))
    assert leaked == []
    warned = {line.split(": warning: ")[0] for line in output.splitlines() if ": warning: symbolic link" in line}
    expected = {f"src/{rel}" for rel, _, _ in LINKED_FILES} | {f"src/{LINKED_DIR[0]}"} | {f"src/{p}" for p in LOOPS}
    assert expected - warned == set()


def test_a_run_yaml_linked_out_of_the_tree_keeps_its_folder_unread(tmp_path: Path) -> None:
    """The folder is a run's (it has a run.yaml), so no other format reads its metrics.jsonl instead."""
    src = make_tree(tmp_path, links=True)
    out = tmp_path / "site"
    obs_build(src, out)
    manifest = json.loads((out / "index.json").read_text())
    assert "lost" not in {run["id"] for run in manifest["runs"]}


def test_a_linked_decision_ledger_is_not_read(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "r1").mkdir(parents=True)
    (src / "r1/run.yaml").write_text("id: r1\n")
    secret = tmp_path / "decisions.jsonl"
    entry = {"run": "r1", "verdict": "promote", "rationale": "SECRET-ledger", "input_hash": "0" * 64}
    secret.write_text(json.dumps(entry) + "\n")
    (src / "decisions.jsonl").symlink_to(secret)
    out = tmp_path / "site"
    build_site(BuildOptions(source=src, out=out, quiet=True))
    assert "SECRET-ledger" not in site_text(out)


def test_an_obs_site_inside_the_sources_is_skipped_with_a_notice(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "r1").mkdir(parents=True)
    (src / "r1/run.yaml").write_text("id: r1\n")
    (src / "r1/metrics.jsonl").write_text('{"step": 1, "loss": 1.0}\n')
    first = build_site(BuildOptions(source=src, out=tmp_path / "site", quiet=True))
    assert first.runs == 1
    shutil.copytree(tmp_path / "site", src / "old-site")  # e.g. a site committed beside its sources
    again = build_site(BuildOptions(source=src, out=tmp_path / "site2", quiet=True))
    assert again.runs == 1
    notices = [d for d in again.diagnostics if d.path == "src/old-site" and d.severity == "info"]
    assert notices and "built by obs" in notices[0].message
