"""The GitHub workflows of docs/publishing.md, replayed here as GitHub would run their shell steps.

The steps are taken from the document itself, so what is tested is what a reader copies. The Pages
workflow must build the demo with exit 0. The PR-comment workflow runs in a git repository with a
base branch and a pull request that changes two runs, removes one and adds one without an `id:`,
with a fake `gh` on PATH that keeps the pull request's comments in a JSON file (its `--jq` filters
go through the real jq): after two pushes there is one comment, edited in place, holding every
changed run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from doccommands import REPO, blocks, workspace

WAIT_S = 600  # an upper bound for a loaded machine

FAKE_GH = r'''#!PYTHON
"""A stand-in for the GitHub CLI: the comments of one pull request, kept in $FAKE_GH_STATE."""
import json, os, subprocess, sys

state_file = os.environ["FAKE_GH_STATE"]
state = json.load(open(state_file)) if os.path.exists(state_file) else {"comments": [], "calls": []}
args = sys.argv[1:]
state["calls"].append(args)


def save():
    json.dump(state, open(state_file, "w"))


def option(name):
    return args[args.index(name) + 1] if name in args else None


repo = os.environ["GITHUB_REPOSITORY"]
if args[:1] == ["api"] and option("--method") == "PATCH":
    path = next(a for a in args[1:] if a.startswith("repos/"))
    assert path.startswith(f"repos/{repo}/issues/comments/"), path
    body = option("-F") or option("--field")
    assert body.startswith("body=@"), body
    wanted = int(path.rsplit("/", 1)[1])
    comment = next(c for c in state["comments"] if c["id"] == wanted)
    comment["body"] = open(body[len("body=@"):]).read()
    save()
    print(json.dumps(comment))
elif args[:1] == ["api"]:
    path = args[1]
    assert path == f"repos/{repo}/issues/{os.environ['PR']}/comments", path
    page = json.dumps(state["comments"])
    jq = option("--jq")
    out = page
    if jq:
        out = subprocess.run(["jq", "-r", jq], input=page, capture_output=True, text=True, check=True).stdout
    save()
    sys.stdout.write(out)
elif args[:2] == ["pr", "comment"]:
    assert args[2] == os.environ["PR"], args
    body = open(option("--body-file")).read()
    state["comments"].append({"id": 1000 + len(state["comments"]), "body": body})
    save()
else:
    sys.exit(f"fake gh: not a call the workflow makes: {args}")
'''


def workflow_blocks() -> list[Any]:
    """The YAML blocks of docs/publishing.md, parsed (a whole workflow, or a list of steps to add)."""
    return [yaml.safe_load(b.text) for b in blocks() if b.doc == "docs/publishing.md" and b.lang == "yaml"]


def workflow(name: str) -> dict[str, Any]:
    return next(w for w in workflow_blocks() if isinstance(w, dict) and w.get("name") == name)


def steps(flow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in flow["jobs"].values() for step in job.get("steps", []) if "run" in step]


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """As GitHub runs a `run:` step: bash --noprofile --norc -eo pipefail."""
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )


def test_the_pages_workflow_builds_the_demo_green(tmp_path: Path) -> None:
    ws, env = workspace(tmp_path)
    ran = []
    for step in steps(workflow("report site")):
        if step["run"].startswith("pip install"):
            continue  # obs is on PATH already: tests/site/test_documented_commands.py says why it is not run
        proc = bash(step["run"], ws, env)
        assert proc.returncode == 0, f"`{step['run']}` exited {proc.returncode}:\n{proc.stderr[-3000:]}"
        ran.append(step["run"])
    assert ran == ["obs build reports -o site"] and (ws / "site/index.html").is_file()


def test_the_compare_steps_build_when_there_is_no_previous_site(tmp_path: Path) -> None:
    """The first deployment: the published index.json cannot be fetched, and the build goes on without it."""
    ws, env = workspace(tmp_path)
    added = next(w for w in workflow_blocks() if isinstance(w, list))
    for step in added:
        step_env = {k: "http://127.0.0.1:9/nothing-here" for k in step.get("env", {})}  # nothing listens on 9
        proc = bash(step["run"], ws, {**env, **step_env})
        assert proc.returncode == 0, f"`{step['run']}`:\n{proc.stderr[-3000:]}"
    assert json.loads((ws / "previous.json").read_text()) == {}
    assert (ws / "site/index.html").is_file() and not (ws / "site/changes.html").exists()


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=120)


@pytest.fixture
def pull_request(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A repository whose `main` holds the demo, on a branch that changes spec03-r2 and spec03-r3, removes
    spec03-r4 and adds a run whose run.yaml has no `id:`; `origin/main` is the base, as checkout makes it."""
    if not shutil.which("git") or not shutil.which("jq"):
        pytest.skip("needs git and jq")
    ws, env = workspace(tmp_path)
    bin_dir = Path(env["PATH"].split(os.pathsep)[0])
    (bin_dir / "gh").write_text(FAKE_GH.replace("PYTHON", sys.executable, 1), encoding="utf-8")
    (bin_dir / "gh").chmod(0o755)
    env.update(
        GH_TOKEN="not-a-token",
        PR="7",
        BASE="main",
        GITHUB_REPOSITORY="someone/runs",
        FAKE_GH_STATE=str(tmp_path / "gh.json"),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
    )
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "reports")
    git(ws, "commit", "-q", "-m", "base")
    git(ws, "update-ref", "refs/remotes/origin/main", "HEAD")
    git(ws, "checkout", "-q", "-b", "pr")
    for run in ("spec03/r2", "spec03/r3"):
        yaml_file = ws / "reports" / run / "run.yaml"
        yaml_file.write_text(yaml_file.read_text(encoding="utf-8").replace("title: ", "title: EDITED ", 1))
    shutil.rmtree(ws / "reports/spec03/r4")
    new = ws / "reports/étude bis"  # git quotes such a name in --name-only output unless -z
    new.mkdir()
    (new / "run.yaml").write_text("title: a run without an id\nstatus: finished\n", encoding="utf-8")
    (new / "metrics.jsonl").write_text("".join(f'{{"step": {s}, "loss": {1 / (1 + s)}}}\n' for s in range(10)))
    git(ws, "add", "-A", "reports")
    git(ws, "commit", "-q", "-m", "pr")
    return ws, env


def comment_step() -> str:
    step = next(s for s in steps(workflow("run summary")) if s.get("name") == "summarise the changed runs")
    assert set(step["env"]) == {"GH_TOKEN", "PR", "BASE"}  # what the fixture sets, as GitHub would
    return str(step["run"])


def test_the_pr_workflow_keeps_one_comment_holding_every_changed_run(pull_request: tuple[Path, dict[str, str]]) -> None:
    ws, env = pull_request
    script = comment_step()
    first = bash(script, ws, env)
    assert first.returncode == 0, first.stderr[-3000:]
    state = json.loads(Path(env["FAKE_GH_STATE"]).read_text())
    assert len(state["comments"]) == 1
    body = state["comments"][0]["body"]
    assert body.startswith("<!-- obs-summary")
    assert "# obs · 3 runs changed in this pull request" in body
    for run in ("`spec03-r2`", "`spec03-r3`", "`étude bis`"):  # no id: the folder is the id, as for every command
        assert f"## obs · {run}" in body, run
    assert "Removed: `reports/spec03/r4/" in body and "## obs · `spec03-r4`" not in body
    assert "EDITED " in body

    # a second push: one more run changed; the same comment is edited, none added
    yaml_file = ws / "reports/spec03/r1/run.yaml"
    yaml_file.write_text(yaml_file.read_text(encoding="utf-8") + "\n# touched\n", encoding="utf-8")
    git(ws, "commit", "-q", "-am", "second push")
    second = bash(script, ws, env)
    assert second.returncode == 0, second.stderr[-3000:]
    state = json.loads(Path(env["FAKE_GH_STATE"]).read_text())
    assert len(state["comments"]) == 1 and state["comments"][0]["id"] == 1000
    assert "# obs · 4 runs changed in this pull request" in state["comments"][0]["body"]
    assert "## obs · `spec03-r1`" in state["comments"][0]["body"]
    assert [c[:2] for c in state["calls"]].count(["pr", "comment"]) == 1  # posted once, then edited


def test_a_run_with_an_error_fails_the_step_after_the_comment_is_posted(
    pull_request: tuple[Path, dict[str, str]],
) -> None:
    ws, env = pull_request
    yaml_file = ws / "reports/spec03/r2/run.yaml"
    yaml_file.write_text(yaml_file.read_text(encoding="utf-8") + "primary_metric: exactt\n", encoding="utf-8")
    git(ws, "commit", "-q", "-am", "a typo")
    proc = bash(comment_step(), ws, env)
    assert proc.returncode == 1
    assert "primary_metric 'exactt' (run.yaml) is not a metric of this run" in proc.stderr
    body = json.loads(Path(env["FAKE_GH_STATE"]).read_text())["comments"][0]["body"]
    assert "**Headline: none**: primary\\_metric" in body


def test_the_step_text_is_what_the_document_shows() -> None:
    """The replay reads the document: the step holds the commands a reader copies, unchanged."""
    text = (REPO / "docs/publishing.md").read_text(encoding="utf-8")
    assert textwrap.indent(comment_step().rstrip("\n"), " " * 10) in text
