"""The publish commands of the command line: `obs summary`, `obs decide`, `obs serve`, and
`obs build --single-file`. cli.py only registers them (`add_parsers`); the work is here, imported
when a command runs, so `obs build` stays as light as it was.

Exit status as for every obs command: 0 done, 1 done with errors, 2 bad usage (unknown run, bad
path, an output inside the source tree); 130/143 after SIGINT/SIGTERM (see obs.cli.main).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from obs.cliargs import folder_hint, missing_run_id, source_problem, worker_count
from obs.write import fault_point

DEFAULT_SOURCE = "reports"


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    summary = sub.add_parser(
        "summary",
        help="a run (or a campaign) as Markdown for a pull-request comment",
        description="Print GitHub-flavoured Markdown for a review comment: headline and delta with its CI, "
        "verdicts, scoreboard, regressions, failure classes, sparklines and a link to the full report "
        "(base_url in obs.yaml). Never longer than GitHub's 65,536-character limit.",
    )
    summary.add_argument("run", nargs="?", help="run id (omit with --campaign)")
    summary.add_argument("source", nargs="?", default=None, help="source folder (default: reports/)")
    summary.add_argument("--campaign", metavar="ID", help="summarise a campaign instead of a run")
    summary.add_argument(
        "--changed",
        metavar="FILE",
        help="one comment for every run the paths in FILE touch (as `git diff --name-only -z` prints them, "
        "or one path a line; - reads standard input); omit the run id",
    )
    summary.add_argument("--baseline", metavar="RUN", help="compare with this run instead of the run's baseline")
    summary.add_argument("-o", "--out", metavar="FILE", help="write to FILE instead of standard output")
    summary.add_argument(
        "--compare-to",
        metavar="OLD",
        help="summarise the agent learning keys of SOURCE against another build (its folder or index.json): "
        "`obs summary --compare-to OLD_SITE [SOURCE]`",
    )
    summary.set_defaults(func=cmd_summary)

    decide = sub.add_parser(
        "decide",
        help="record a decision in decisions.jsonl and freeze the run's report in archive/",
        description="Append a decision (who, when, verdict, rationale, next, the hash of the run's artifacts) "
        "to SOURCE/decisions.jsonl and freeze the run's report as decided under SOURCE/archive/. "
        "The ledger's latest entry for a run takes precedence over run.yaml's decision.",
    )
    decide.add_argument("run", help="run id")
    decide.add_argument("source", nargs="?", default=None, help="source folder (default: reports/)")
    decide.add_argument("--verdict", required=True, choices=["promote", "reject", "repair", "branch"])
    decide.add_argument("--rationale", required=True, help="why (Markdown)")
    decide.add_argument("--next", default="", dest="next_run", help="the next run")
    decide.add_argument("--by", default=None, help="who decides (default: $OBS_USER, $GIT_AUTHOR_NAME or $USER)")
    decide.set_defaults(func=cmd_decide)

    serve = sub.add_parser(
        "serve",
        help="build, serve the site on 127.0.0.1 and rebuild when the sources change",
        description="A preview server: builds SOURCE into OUT, serves OUT on 127.0.0.1 only, and rebuilds "
        "when a file under SOURCE (or a template) changes. Stop it with Ctrl-C.",
    )
    serve.add_argument("source", nargs="?", default=DEFAULT_SOURCE, help="source folder (default: reports/)")
    serve.add_argument("-o", "--out", default=None, help="output folder (default: a temporary folder)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    serve.add_argument("--interval", type=float, default=1.0, help="seconds between checks for changes")
    serve.add_argument("-j", "--jobs", type=worker_count, default=None, help="worker processes (default: all cores)")
    serve.add_argument(
        "--force",
        "--allow-empty",
        dest="force",
        action="store_true",
        help="rebuild even when the new site has no runs, or less than half the runs of the one it replaces",
    )
    serve.set_defaults(func=cmd_serve)


def _write_or_print(text: str, out: str | None, source: Path) -> int:
    if not out:
        sys.stdout.write(text)
        return 0
    target = Path(out).resolve()
    if target.is_relative_to(source.resolve()):
        print(f"obs summary: {out} is inside the source tree {source}; obs never writes there", file=sys.stderr)
        return 2
    if target.is_dir():
        hint = Path(out) / "summary.md"
        print(f"obs summary: {out} is a folder; -o takes a file name (for example -o {hint})", file=sys.stderr)
        return 2
    _atomic_write(target, text.encode("utf-8"))
    return 0


def _atomic_write(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cmd_summary(args: argparse.Namespace) -> int:
    from obs.diagnostics import Diagnostic
    from obs.pipeline import CampaignNotFound, RunNotFound, SourceTree, load_report
    from obs.publish.summary_md import summarize_campaign, summary_of_loaded

    run, source = args.run, args.source
    if getattr(args, "compare_to", None):
        return _learning_summary(args)
    whole = args.campaign or args.changed  # no run id: `obs summary --campaign ID SOURCE`, `--changed FILE SOURCE`
    if whole and run and source is None:
        run, source = None, run
    problem = (None if whole else missing_run_id("summary", run, source)) or source_problem(
        Path(source or DEFAULT_SOURCE)
    )
    if problem:
        print(f"obs summary: {problem}", file=sys.stderr)
        return 2
    source_path = Path(source or DEFAULT_SOURCE)
    if sum(map(bool, (args.campaign, args.changed, run))) != 1:
        print("obs summary: give one of a run id, --campaign ID or --changed FILE", file=sys.stderr)
        return 2
    if args.changed:
        return _summary_of_changes(args.changed, source_path, args.out)
    errors: list[Diagnostic] = []
    try:
        if args.campaign:
            text = summarize_campaign(source_path, args.campaign)
        else:
            tree = SourceTree.open(source_path)
            loaded = load_report(tree, run, args.baseline)
            errors = [d for d in loaded.report.run.diagnostics.items if d.severity == "error"]
            text = summary_of_loaded(tree, loaded)
    except (RunNotFound, CampaignNotFound) as exc:
        print(f"obs summary: {exc}{'' if args.campaign else folder_hint(run, source)}", file=sys.stderr)
        return 2
    fault_point("summary")
    for d in errors:  # what a build would say about this run: the summary is written, and the exit says it
        print(d.format(), file=sys.stderr)
    return _write_or_print(text, args.out, source_path) or (1 if errors else 0)


def _summary_of_changes(listing: str, source: Path, out: str | None) -> int:
    """`obs summary --changed FILE`: every run the listed paths touch, as one comment (obs.publish.pr_comment)."""
    from obs.pipeline import SourceTree
    from obs.publish.pr_comment import changed_in, pr_comment, read_paths

    try:
        text = sys.stdin.read() if listing == "-" else Path(listing).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(
            f"obs summary: --changed {listing}: cannot be read ({getattr(exc, 'strerror', None) or exc})",
            file=sys.stderr,
        )
        return 2
    tree = SourceTree.open(source)
    comment, errors = pr_comment(tree, changed_in(tree, read_paths(text), Path.cwd()))
    fault_point("summary")
    for d in errors:
        print(d.format(), file=sys.stderr)
    return _write_or_print(comment, out, source) or (1 if errors else 0)


def _learning_summary(args: argparse.Namespace) -> int:
    """`obs summary --compare-to OLD [SOURCE]`: the learning keys and what moved, as Markdown."""
    from obs.publish.learning import learning_summary

    if args.campaign or (args.run and args.source):
        print(
            "obs summary: --compare-to summarises the agent learning keys of a source: give only SOURCE",
            file=sys.stderr,
        )
        return 2
    source = Path(args.run or args.source or DEFAULT_SOURCE)
    old = Path(args.compare_to)
    problem = source_problem(source) or (None if old.exists() else f"--compare-to {old}: no such file or folder")
    if problem:
        print(f"obs summary: {problem}", file=sys.stderr)
        return 2
    text, error = learning_summary(source, old)
    if error:
        print(f"obs summary: {error}", file=sys.stderr)
        return 2
    fault_point("summary")
    return _write_or_print(text, args.out, source)


def cmd_decide(args: argparse.Namespace) -> int:
    from obs.pipeline import RunNotFound
    from obs.publish.decide import decide

    problem = missing_run_id("decide", args.run, args.source) or source_problem(Path(args.source or DEFAULT_SOURCE))
    if problem:
        print(f"obs decide: {problem}", file=sys.stderr)
        return 2
    source = Path(args.source or DEFAULT_SOURCE)
    try:
        done = decide(source, args.run, args.verdict, args.rationale, args.next_run, args.by)
    except RunNotFound as exc:
        print(f"obs decide: {exc}{folder_hint(args.run, args.source)}", file=sys.stderr)
        return 2
    e = done.entry
    print(
        f"obs decide: {e.run}: {e.verdict} by {e.by or 'unknown'} at {e.date}"
        f" (rules suggested {e.suggested or 'nothing'})"
    )
    print(f"  ledger: {done.ledger}")
    print(f"  frozen report: {done.archive}")
    return 0


def cmd_single_file(args: argparse.Namespace) -> int:
    """`obs build --single-file RUN [-o FILE]`: the run's page as one self-contained HTML file."""
    from obs import urls
    from obs.pipeline import RunNotFound, SourceTree, load_report
    from obs.publish.single_file import SingleFileOptions, link_base_for, render_single_file

    source = Path(args.source)
    problem = source_problem(source)
    if problem:
        print(f"obs build: {problem}", file=sys.stderr)
        return 2
    try:
        tree = SourceTree.open(source)
        loaded = load_report(tree, args.single_file)
    except RunNotFound as exc:
        print(f"obs build: {exc}", file=sys.stderr)
        return 2
    out = args.out or f"{loaded.slug}.html"
    html = render_single_file(
        loaded, SingleFileOptions(page_dir=urls.run_dir(loaded.slug), link_base=link_base_for(tree.cfg.base_url))
    )
    code = _write_or_print_bytes(html, out, source)
    errors = [d for d in loaded.report.run.diagnostics.items if d.severity == "error"]
    for d in errors:
        print(d.format(), file=sys.stderr)
    if code == 0:
        print(f"obs build: {loaded.report.run.id} -> {out} ({len(html) / 1024:.0f} KB, self-contained)")
    return code or (1 if errors else 0)


def _write_or_print_bytes(data: bytes, out: str, source: Path) -> int:
    target = Path(out).resolve()
    if target.is_relative_to(source.resolve()):
        print(f"obs build: {out} is inside the source tree {source}; obs never writes there", file=sys.stderr)
        return 2
    if target.is_dir():
        print(f"obs build: {out} is a folder; --single-file writes one file (-o report.html)", file=sys.stderr)
        return 2
    _atomic_write(target, data)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from obs.publish.serve import serve

    problem = source_problem(Path(args.source))
    if problem:
        print(f"obs serve: {problem}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else None
    return serve(Path(args.source), out, args.port, args.interval, args.jobs, force=args.force)
