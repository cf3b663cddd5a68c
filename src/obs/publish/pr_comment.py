"""`obs summary --changed FILE`: one PR comment for every run a pull request touched.

A workflow hands over the paths `git diff --name-only` printed (added, changed or deleted files);
each is mapped to the run whose folder holds it (the deepest such folder), else to the campaign
whose folder holds it. A path that no longer exists and lies in no run is a removed file (a deleted
run's `run.yaml`, say). No path is parsed as YAML here: a run without `id:` is found by its folder,
as every command finds it.

The comment opens with a marker line (`MARKER`), so a workflow finds its own comment and edits it in
place on every push instead of adding one. The runs share GitHub's 65,536-character limit: each of
the first `MAX_FULL` gets an equal part (its least important sections are dropped first, as for one
run), the rest get one line each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from obs import urls
from obs.diagnostics import Diagnostic
from obs.numbers import num, pct, plural
from obs.pipeline import LoadedRun, SourceTree, load_report
from obs.publish.mdtext import COMMENT_LIMIT, gh_length, md_code, md_text
from obs.publish.summary_md import campaign_comment, report_link, summary_of_loaded

MARKER = "<!-- obs-summary: one comment per pull request, updated in place -->"
MAX_FULL = 10  # runs summarised in full; more are listed one line each
MAX_LISTED = 30  # paths listed as removed or outside every run


@dataclass
class Changed:
    """What a list of changed paths touches in a source tree."""

    runs: list[str] = field(default_factory=list)  # run ids, in the build's order
    campaigns: list[str] = field(default_factory=list)  # campaigns whose own files changed
    removed: list[str] = field(default_factory=list)  # gone, and in no run that is still there
    other: list[str] = field(default_factory=list)  # under the source, in no run or campaign (obs.yaml, ...)
    outside: int = 0  # not under the source at all


def read_paths(text: str) -> list[str]:
    """The paths `git diff --name-only -z` prints, each ended by a NUL (git quotes a name with other than
    plain ASCII in it without -z); without a NUL, one path a line. Empty entries are skipped."""
    if "\0" in text:
        return [p for p in text.split("\0") if p]
    return [line.strip() for line in text.splitlines() if line.strip()]


def changed_in(tree: SourceTree, paths: list[str], cwd: Path) -> Changed:
    """Map each path (relative to `cwd`, or absolute) to the run or campaign that holds it."""
    folders: dict[Path, list[str]] = {}
    for planned in tree.plan.runs:
        folders.setdefault(planned.source.path.resolve(), []).append(planned.id)
    campaign_dirs = {c.source_dir.resolve(): cid for cid, c in tree.found.campaigns.items()}
    out = Changed()
    runs: set[str] = set()
    campaigns: set[str] = set()
    for given in paths:
        path = (cwd / given).resolve()
        if not path.is_relative_to(tree.root):
            out.outside += 1
            continue
        holders = [path, *path.parents]
        run_dir = next((d for d in holders if d in folders), None)
        if run_dir is not None:
            runs.update(folders[run_dir])
        elif not path.exists():
            out.removed.append(given)
        elif (camp := next((campaign_dirs[d] for d in holders if d in campaign_dirs), None)) is not None:
            campaigns.add(camp)
        else:
            out.other.append(given)
    out.runs = [p.id for p in tree.plan.runs if p.id in runs]
    out.campaigns = sorted(campaigns)
    return out


def _listed(paths: list[str]) -> str:
    shown = ", ".join(md_code(p, in_table=False) for p in paths[:MAX_LISTED])
    return shown + (f" and {len(paths) - MAX_LISTED} more" if len(paths) > MAX_LISTED else "")


def _one_line(tree: SourceTree, loaded: LoadedRun) -> str:
    h = loaded.report.headline
    shown = pct(h.value) if h.is_rate else num(h.value)
    value = "no headline" if h.value is None else f"{md_text(h.metric or 'headline', 60)} {shown}"
    link = report_link(tree.cfg.base_url, urls.run_page(loaded.slug))
    rid = md_code(loaded.report.run.id, in_table=False)
    return f"- {f'[{rid}](<{link}>)' if link else rid}: {value}"


def pr_comment(tree: SourceTree, changed: Changed) -> tuple[str, list[Diagnostic]]:
    """The comment, and the errors a build would report about the runs in it."""
    loaded = [load_report(tree, rid) for rid in changed.runs]
    errors = [d for lr in loaded for d in lr.report.run.diagnostics.items if d.severity == "error"]
    what = [plural(len(changed.runs), "run")]
    if changed.campaigns:
        what.append(plural(len(changed.campaigns), "campaign"))
    head = [MARKER, f"# obs · {' and '.join(what)} changed in this pull request", ""]
    if changed.removed:
        head.append(f"Removed: {_listed(changed.removed)}.")
    if changed.other:
        head.append(f"Changed outside any run: {_listed(changed.other)}.")
    if not changed.runs and not changed.campaigns:
        head.append("No run's files changed, so there is no run to summarise.")
    full, rest = loaded[:MAX_FULL], loaded[MAX_FULL:]
    tail = ""
    if rest:
        tail = f"\n\n---\n\n**{plural(len(rest), 'more run')} changed** (summarised one line each):\n\n"
        tail += "\n".join(_one_line(tree, lr) for lr in rest)
    top = "\n".join(head).rstrip()
    parts = len(full) + len(changed.campaigns)
    budget = COMMENT_LIMIT - gh_length(top) - gh_length(tail) - 16 * (parts + 1)
    share = budget // parts if parts else 0
    bodies = [summary_of_loaded(tree, lr, limit=share).rstrip() for lr in full]
    bodies += [campaign_comment(tree, cid, limit=share).rstrip() for cid in changed.campaigns]
    text = "\n\n---\n\n".join([top, *bodies]) + tail + "\n"
    return text, errors
