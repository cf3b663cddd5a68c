"""`obs summary --changed`: which run, campaign or removed file each changed path stands for, and one
comment that holds them all within GitHub's limit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from obs.numbers import pct
from obs.pipeline import SourceTree, load_report
from obs.publish.mdtext import COMMENT_LIMIT, gh_length, md_text
from obs.publish.pr_comment import MARKER, MAX_FULL, changed_in, pr_comment, read_paths

REPORTS = Path(__file__).resolve().parents[2] / "reports"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> SourceTree:
    root = tmp_path_factory.mktemp("pr") / "reports"
    shutil.copytree(REPORTS, root)
    return SourceTree.open(root)


def test_each_path_is_mapped_to_what_holds_it(tree: SourceTree) -> None:
    cwd = tree.root.parent
    listing = "\n".join(
        [
            "reports/spec03/r2/probe.jsonl",  # a file of a run
            "reports/spec03/r2/run.yaml",  # the same run again: once
            "reports/sepa-campaign/maxrl+gtpo_s1/metrics.jsonl",  # a campaign's run: the run
            "reports/sepa-campaign/campaign.yaml",  # the campaign's own file: the campaign
            "reports/obs.yaml",  # under the source, in no run
            "reports/gone/run.yaml",  # deleted
            "README.md",  # outside the source
            "",
        ]
    )
    changed = changed_in(tree, read_paths(listing), cwd)
    assert changed.runs == [r for r in (p.id for p in tree.plan.runs) if r in {"spec03-r2", "sepa-maxrl+gtpo_s1"}]
    assert changed.campaigns == ["sepa-campaign"]
    assert changed.other == ["reports/obs.yaml"] and changed.removed == ["reports/gone/run.yaml"]
    assert changed.outside == 1


def test_every_run_changed_fits_one_comment(tree: SourceTree) -> None:
    every = [str(p.source.path.relative_to(tree.root.parent) / "run.yaml") for p in tree.plan.runs]
    changed = changed_in(tree, every, tree.root.parent)
    text, errors = pr_comment(tree, changed)
    assert errors == []
    assert text.startswith(MARKER + "\n# obs · 73 runs changed in this pull request")
    assert gh_length(text) <= COMMENT_LIMIT
    full = [p.id for p in tree.plan.runs][:MAX_FULL]
    for rid in full:
        assert f"## obs · `{rid}`" in text
    rest = [p.id for p in tree.plan.runs][MAX_FULL:]
    assert f"**{len(rest)} more runs changed**" in text
    tail = text.split("more runs changed**", 1)[1]
    listed = [line for line in tail.splitlines() if line.startswith("- ")]
    assert [line.split("`")[1] for line in listed] == rest  # one line each, linked to its page (base_url is set)
    h = load_report(tree, rest[0]).report.headline  # as its page says it
    assert h.metric and h.value is not None
    assert listed[0].endswith(f": {md_text(h.metric)} {pct(h.value)}")


def test_nothing_changed_says_so(tree: SourceTree) -> None:
    text, errors = pr_comment(tree, changed_in(tree, [], tree.root.parent))
    assert errors == [] and "# obs · 0 runs changed in this pull request" in text
    assert "No run's files changed, so there is no run to summarise." in text


def test_paths_are_read_nul_ended_or_one_a_line() -> None:
    assert read_paths("reports/a b/run.yaml\0reports/é/x.jsonl\0") == ["reports/a b/run.yaml", "reports/é/x.jsonl"]
    assert read_paths("reports/a/run.yaml\n\n  reports/b/run.yaml \n") == ["reports/a/run.yaml", "reports/b/run.yaml"]
    assert read_paths("") == []
