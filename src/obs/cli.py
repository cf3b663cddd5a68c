"""Command line: `obs build`, `obs check`, `obs ls`, `obs gate`; `obs summary`, `obs decide`, `obs serve` (obs.publish).

Every diagnostic is printed as `path:line: severity: message`, then one summary line. Exit status:
0 clean, 1 errors (or warnings with --strict), 2 bad usage (a missing or unreadable source, an
output obs may not write, another build holding the output), 130 after Ctrl-C (SIGINT) and 143
after SIGTERM: one line on stderr, no traceback, the output left as the last complete build.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from obs import __version__
from obs.cliargs import DEFAULT_SOURCE, folder_hint, missing_run_id, source_problem, worker_count
from obs.diagnostics import NO_RUNS, Diagnostic, sort_diagnostics
from obs.numbers import plural
from obs.sanitize import visible

if TYPE_CHECKING:
    from obs.objectstore import Mirror

DEFAULT_OUT = "site"


def _print_diagnostics(items: list[Diagnostic], quiet: bool, shown: Callable[[str], str] | None = None) -> None:
    """Each diagnostic on a line; `shown` names a path otherwise (a bucket's mirrored file as its object's URL)."""
    for d in sort_diagnostics(items):
        if quiet and d.severity == "info":
            continue
        print((replace(d, path=shown(d.path)) if shown else d).format(), file=sys.stderr)


def _print_hidden(hidden: list[str], quiet: bool) -> None:
    """What was read and not shown on purpose (a deleted MLflow run): said once, never counted as unread."""
    if hidden and not quiet:
        shown = "; ".join(visible(h) for h in hidden[:3]) + (f"; +{len(hidden) - 3} more" if len(hidden) > 3 else "")
        print(f"obs build: not shown on purpose: {shown}", file=sys.stderr)


def unread_line(command: str, unread: list[str], shown: int = 5) -> str | None:
    """One line naming the files no adapter read (the site lists them all), or None when every file was read."""
    if not unread:
        return None
    names = ", ".join(visible(u) for u in unread[:shown]) + (
        f" (+{len(unread) - shown} more)" if len(unread) > shown else ""
    )
    return f"obs {command}: {plural(len(unread), 'file')} not read by any format: {names}"


def _counts(items: list[Diagnostic]) -> tuple[int, int]:
    return sum(d.severity == "error" for d in items), sum(d.severity == "warning" for d in items)


def _strict(items: list[Diagnostic], strict: bool) -> list[Diagnostic]:
    """With --strict, "no run found" (a warning: an empty or wrong source folder) is an error: in CI it is
    a mistake, never a wish."""
    if not strict:
        return items
    return [replace(d, severity="error") if d.message == NO_RUNS else d for d in items]


def _replay_if_unchanged(source: Path, out: Path, args: argparse.Namespace, taken: list[Any]) -> int | None:
    """Nothing changed since the last build: replay its result without importing the pipeline.

    The snapshot taken to find out goes into `taken`, for the build to save instead of taking another."""
    from obs import quickcheck
    from obs.cache import cache_dir_for
    from obs.resources import package_dir, templates_dir
    from obs.write import lock_is_free

    if args.clean or not source.is_dir() or not lock_is_free(out):
        return None  # a build in progress: take the normal path, which waits for it or refuses
    cache_dir = cache_dir_for(out)
    previous = quickcheck.load_previous(cache_dir)
    current = quickcheck.snapshot(source, out, cache_dir, templates_dir(), {}, package_dir())
    taken.append(current)
    if previous is None or not quickcheck.unchanged(previous, current):
        return None
    diagnostics = _strict([Diagnostic(**d) for d in previous["result"]["diagnostics"]], args.strict)
    _print_diagnostics(diagnostics, args.quiet, getattr(args, "shown", None))
    line = unread_line("build", previous["result"].get("unread", []))
    if line:
        print(line, file=sys.stderr)
    _print_hidden(previous["result"].get("hidden", []), args.quiet)
    errors, warnings = _counts(diagnostics)
    runs = previous["result"]["runs"]
    counts = f"{plural(errors, 'error')}, {plural(warnings, 'warning')}"
    print(f"obs build: {plural(runs, 'run')}, nothing changed, {counts} -> {out}")
    return 1 if errors or (args.strict and warnings) else 0


def _say(message: str) -> None:
    print(f"obs build: {message}", file=sys.stderr, flush=True)


def _is_url(source: str) -> bool:
    from obs.objectstore import is_url

    return is_url(source)


def _mirror(url: str, out: Path, args: argparse.Namespace) -> Mirror | None:
    """The objects below `url` brought into a local folder (`obs.objectstore`), under the output's lock;
    None once the reason it could not be done is said."""
    from obs.cache import cache_dir_for
    from obs.objectstore import SourceError, mirror
    from obs.write import OutputError, output_lock

    try:
        with output_lock(out, wait=args.wait, on_wait=_say):
            mirrored = mirror(url, cache_dir_for(out))
    except (SourceError, OutputError) as exc:
        print(f"obs build: {exc}", file=sys.stderr)
        return None
    for where, why in mirrored.skipped:
        _say(f"{where}: {why}: a folder cannot hold it, so it is not read")
    return mirrored


def cmd_build(args: argparse.Namespace) -> int:
    if args.extra is not None:
        print(
            f"obs build: two folders given; the output folder goes after -o: obs build {args.source} -o {args.extra}",
            file=sys.stderr,
        )
        return 2
    if args.single_file:  # obs.publish: one run as one self-contained HTML file
        _collect_again()
        from obs.publish.commands import cmd_single_file

        return cmd_single_file(args)
    source, out = Path(args.source), Path(args.out or DEFAULT_OUT)
    bucket = None
    if "://" in args.source and _is_url(args.source):  # s3://bucket/prefix: mirrored, then built as a folder
        mirrored = _mirror(args.source, out, args)
        if mirrored is None:
            return 2
        source = mirrored.folder
        args.shown = mirrored.shown
        bucket = mirrored.bucket() if args.dask else None  # Dask workers read their runs from the bucket
    problem = source_problem(source)
    if problem:
        print(f"obs build: {problem}", file=sys.stderr)
        return 2
    from obs.write import OutputError

    taken: list[Any] = []
    try:
        replayed = None if args.compare_to else _replay_if_unchanged(source, out, args, taken)
    except OutputError:
        replayed = None  # said below, by the normal path
    if replayed is not None:
        return replayed
    from obs.build import BuildOptions, build_site
    from obs.cluster import ClusterError  # imports no dask: that waits for a run to build with --dask
    from obs.publish.extras import PublishExtras
    from obs.write import check_output_location, output_lock

    _collect_again()  # the pipeline is imported: what it made stays, and is never scanned again

    try:
        check_output_location(source, out)
        with output_lock(out, wait=args.wait, on_wait=_say):
            result = build_site(
                BuildOptions(
                    source=source,
                    out=out,
                    strict=args.strict,
                    quiet=args.quiet,
                    clean=args.clean,
                    jobs=args.jobs,
                    progress=sys.stderr.isatty(),
                    force=args.force,
                    snapshot=taken[0] if taken else None,
                    dask=args.dask,
                    bucket=bucket,
                ),
                [PublishExtras(compare_to=Path(args.compare_to) if args.compare_to else None)],
            )
    except OutputError as exc:
        print(f"obs build: {exc}", file=sys.stderr)
        return 2
    except ClusterError as exc:  # --dask: dask missing, no scheduler there, a worker that would differ
        print(f"obs build: {exc}", file=sys.stderr)
        return 2
    result.diagnostics = _strict(result.diagnostics, args.strict)
    _print_diagnostics(result.diagnostics, args.quiet, getattr(args, "shown", None))
    line = unread_line("build", result.unread)
    if line:
        print(line + " (listed on the site's index page)", file=sys.stderr)
    _print_hidden(result.hidden, args.quiet)
    what = (
        f"{plural(result.runs, 'run')} ({result.built} built, {result.reused} reused), "
        f"{plural(result.pages, 'page')} written"
        if result.changed
        else f"{plural(result.runs, 'run')}, nothing changed"
    )
    print(
        f"obs build: {what}, {plural(result.errors, 'error')}, {plural(result.warnings, 'warning')} "
        f"in {result.seconds:.2f} s -> {out}"
    )
    return result.exit_code(args.strict)


def cmd_check(args: argparse.Namespace) -> int:
    from obs.ledger import read_ledger
    from obs.pipeline import SourceTree, check_runs

    problem = source_problem(Path(args.source))
    if problem:
        print(f"obs check: {problem}", file=sys.stderr)
        return 2
    root = Path(args.source).resolve()
    tree = SourceTree.open(root)
    found, plan = tree.found, tree.plan
    read_ledger(root, tree.diags)  # decisions.jsonl, line by line
    items = _strict(list(tree.diags.items), args.strict)
    for claim in found.claims:
        try:
            rel = claim.folder.resolve().relative_to(root.parent).as_posix()
        except ValueError:
            rel = str(claim.folder)
        notes = f" ({'; '.join(claim.notes)})" if claim.notes else ""
        print(f"{visible(rel)}: {claim.adapter}, {plural(claim.runs, 'run')}{notes}")
    for report in check_runs(tree):  # each run read and analysed as a build does, then dropped
        items.extend(report.run.diagnostics.items)
    if found.learning:  # agent-session exports, read as a build reads them
        from obs.publish.learning import check_learning

        print(check_learning(tree.root, found.learning, items))
    _print_diagnostics(items, args.quiet)
    line = unread_line("check", found.unread_rel())
    if line:
        print(line)
    errors, warnings = _counts(items)
    print(
        f"obs check: {plural(len(plan.runs), 'run')}, {plural(len(found.specs), 'spec')}, "
        f"{plural(len(found.campaigns), 'campaign')}: {plural(errors, 'error')}, {plural(warnings, 'warning')}"
    )
    return 1 if errors or (args.strict and warnings) else 0


def cmd_ls(args: argparse.Namespace) -> int:
    """`obs ls [SOURCE] [--json]`: every run's id, format, status and headline (obs.listing)."""
    from obs.listing import as_json, as_table, list_runs
    from obs.pipeline import SourceTree

    problem = source_problem(Path(args.source))
    if problem:
        print(f"obs ls: {problem}", file=sys.stderr)
        return 2
    tree = SourceTree.open(Path(args.source))
    rows = list_runs(tree)
    if not rows:
        print(f"obs ls: {args.source}: {NO_RUNS}", file=sys.stderr)
    print(as_json(rows) if args.json else as_table(rows))
    return 0


GATE_MARK = {True: "pass", False: "FAIL", None: "n/a"}


def cmd_gate(args: argparse.Namespace) -> int:
    """`obs gate RUN [SOURCE]`: the promotion rules' verdict for one run, for CI.

    Exit 0 only when the suggestion is "promote"; 1 for any other verdict (or none); 2 when the
    source folder or the run id is unknown. Only the run and its baseline are read, not the tree.
    """
    from obs.pipeline import RunNotFound, SourceTree, load_report

    if getattr(args, "campaign", None) or getattr(args, "paired", None):
        return _gate_campaign(args)
    if not args.run:
        print("obs gate: give a run id, or --campaign ID (and --paired NAME for one paired claim)", file=sys.stderr)
        return 2
    problem = missing_run_id("gate", args.run, args.source) or source_problem(Path(args.source or DEFAULT_SOURCE))
    if problem:
        print(f"obs gate: {problem}", file=sys.stderr)
        return 2
    source = Path(args.source or DEFAULT_SOURCE)
    try:
        # the run and its baseline (or --baseline), as a build does
        tree = SourceTree.open(source)
        loaded = load_report(tree, args.run, getattr(args, "baseline", None))
        report = loaded.report
    except RunNotFound as exc:
        print(f"obs gate: {exc}{folder_hint(args.run, args.source)}", file=sys.stderr)
        return 2
    run = report.run
    _print_diagnostics([d for d in run.diagnostics.items if d.severity == "error"], quiet=True)
    s = report.suggestion
    against = f"vs baseline {run.baseline}" if run.baseline else "no baseline"
    if not report.measurement.ok:
        against += "; not one measurement"
    print(
        f"obs gate: {run.id} ({against}): suggested {s.verdict or 'nothing (cannot judge)'}"
        f"; recorded {run.verdict or 'nothing'}{' (they disagree)' if report.disagrees else ''}"
    )
    if report.baseline_problem:
        print(f"  {report.baseline_problem}")
    if report.frozen is not None:
        from obs.render.format import frozen_line

        print(f"  {frozen_line(report.frozen, report.headline.is_rate)}")
    for reason in s.reasons:
        print(f"  - {reason}")
    for c in s.checks:
        mark = ("yes" if c.passed else "no") if not c.gate and c.passed is not None else GATE_MARK[c.passed]
        print(f"  [{mark}] {c.rule}: {c.detail}")
        for item in c.items:
            print(f"         {item}")
    problems = [f.title for f in report.findings if f.severity == "problem"]
    if problems:
        print(f"  diagnosis: {'; '.join(problems)}")
    for line in _gate_lines(tree, loaded):
        print(line)
    return 0 if s.verdict == "promote" else 1


def _gate_lines(tree: Any, loaded: Any) -> list[str]:
    """obs.yaml's gates on this run (`pipeline.gate_results`: as the leaderboard's strip judges them). Shown,
    not part of the exit status."""
    from obs.pipeline import gate_results

    results = gate_results(tree, loaded)
    if not results:
        return []
    return ["  gates (obs.yaml):"] + [f"  [{GATE_MARK_OF[r.status]}] {r.label}: {r.detail}" for r in results]


GATE_MARK_OF = {"pass": "pass", "fail": "FAIL", "na": "n/a"}


def _gate_campaign(args: argparse.Namespace) -> int:
    """`obs gate --campaign ID [--paired NAME] [SOURCE]`: the campaign's claim (or one paired claim) as PASS or FAIL,
    in the campaign page's own words (obs.analysis.campaign_gate). Exit 0 PASS, 1 FAIL, 2 unknown campaign/source."""
    from obs.analysis.campaign_gate import campaign_gate
    from obs.analysis.campaign_view import campaign_view
    from obs.pipeline import CampaignNotFound, SourceTree, campaign_summaries

    source_arg = args.source or args.run  # `obs gate --campaign ID SOURCE`: the one positional is the source
    if not args.campaign:
        print("obs gate: --paired NAME needs --campaign ID (the campaign whose paired: lists it)", file=sys.stderr)
        return 2
    if args.run and args.source:
        print("obs gate: with --campaign, give no run id (obs gate --campaign ID [SOURCE])", file=sys.stderr)
        return 2
    source = Path(source_arg or DEFAULT_SOURCE)
    problem = source_problem(source)
    if problem:
        print(f"obs gate: {problem}", file=sys.stderr)
        return 2
    try:
        tree = SourceTree.open(source)
        campaign, summaries = campaign_summaries(tree, args.campaign)
    except CampaignNotFound as exc:
        print(f"obs gate: {exc}", file=sys.stderr)
        return 2
    view = campaign_view(campaign, summaries, tree.cfg.metric_higher_is_better)
    names = [p.name for p in view.stats.paired]
    if args.paired and args.paired not in names:
        known = ", ".join(names) or "none"
        print(
            f"obs gate: campaign {campaign.id} has no paired comparison '{args.paired}' (paired: {known})",
            file=sys.stderr,
        )
        return 2
    result = campaign_gate(view, args.paired)
    print(f"obs gate: {result.subject}: {result.verdict}")
    for line in result.lines:
        print(f"  {line.text()}")
    print(f"  rule: {result.rule}")
    return result.exit_code


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="obs", description="The run observatory: training-run artifacts in, a static website out."
    )
    parser.add_argument("--version", action="version", version=f"obs {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    build = sub.add_parser("build", help="build the site from a folder of run artifacts")
    build.add_argument("source", nargs="?", default=DEFAULT_SOURCE, help="source folder (default: reports/)")
    build.add_argument("extra", nargs="?", default=None, help=argparse.SUPPRESS)  # `obs build SRC OUT`: say -o
    build.add_argument(
        "-o", "--out", default=None, help="output folder (default: site/); with --single-file the file (RUN.html)"
    )
    build.add_argument("--strict", action="store_true", help="exit 1 on warnings too, and when no run was found")
    build.add_argument("-q", "--quiet", action="store_true", help="no progress, no info diagnostics")
    build.add_argument(
        "--clean",
        action="store_true",
        help="ignore the build cache and rebuild every page; files in the site that obs did not write are "
        "removed (each one named) instead of kept",
    )
    build.add_argument(
        "--force",
        "--allow-empty",
        dest="force",
        action="store_true",
        help="publish even when the new site has no runs, or less than half the runs of the site it replaces",
    )
    build.add_argument(
        "--wait", action="store_true", help="when another build is writing the output, wait for it instead of exiting"
    )
    build.add_argument("-j", "--jobs", type=worker_count, default=None, help="worker processes (default: all cores)")
    build.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="build the runs as tasks on a Dask cluster: a scheduler's address (tcp://host:8786), or 'local' "
        "for a LocalCluster of --jobs workers; needs dask.distributed, the obs[dask] extra (docs/scale.md)",
    )
    build.add_argument("--single-file", metavar="RUN", help="write only RUN's report, as one self-contained HTML file")
    build.add_argument(
        "--compare-to", metavar="OLD", help="another build (its folder or index.json): add changes.html against it"
    )
    build.set_defaults(func=cmd_build)

    check = sub.add_parser("check", help="validate the artifacts against the input contract, build nothing")
    check.add_argument("source", nargs="?", default=DEFAULT_SOURCE, help="source folder (default: reports/)")
    check.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    check.add_argument("-q", "--quiet", action="store_true", help="hide info diagnostics")
    check.set_defaults(func=cmd_check)

    ls = sub.add_parser(
        "ls",
        help="list the runs: id, format, status, headline (one line each)",
        description="Read every run as a build does and print its id (what every other command takes), its "
        "format, its status and its headline. Nothing is written.",
    )
    ls.add_argument("source", nargs="?", default=DEFAULT_SOURCE, help="source folder (default: reports/)")
    ls.add_argument("--json", action="store_true", help="a JSON list instead of columns")
    ls.set_defaults(func=cmd_ls)

    gate = sub.add_parser(
        "gate",
        help="the promotion rules' verdict for one run (exit 0 only for promote; for CI)",
        description="Load RUN and its baseline, print the suggested verdict and why. "
        "Exit status: 0 promote, 1 any other verdict or none, 2 unknown run or source. "
        "With --campaign ID: the campaign's claim (or, with --paired NAME, one paired claim) as PASS or FAIL in the "
        "campaign page's words; exit 0 PASS, 1 FAIL, 2 unknown campaign, paired name or source.",
    )
    gate.add_argument("run", nargs="?", default=None, help="run id (as in run.yaml `id:`; omit with --campaign)")
    gate.add_argument("source", nargs="?", default=None, help="source folder (default: reports/)")
    gate.add_argument(
        "--campaign",
        metavar="ID",
        help="judge a campaign's claim instead (PASS/FAIL: its primary metric, secondary guardrails, paired claims)",
    )
    gate.add_argument("--paired", metavar="NAME", help="with --campaign: only this paired comparison's claim")
    gate.add_argument(
        "--baseline", metavar="RUN", help="judge against this run instead of the run's baseline (as obs summary does)"
    )
    gate.set_defaults(func=cmd_gate)

    from obs.publish.commands import add_parsers  # summary, decide, serve

    add_parsers(sub)
    return parser


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM in the main process: unwinds like Ctrl-C, so every `finally` and
    `except BaseException` cleans up (the staging folder, obs serve's temporary folder)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop_note(args: argparse.Namespace) -> str:
    """What an interrupted command left, said truly: a build into an output that has no site yet left
    none (the first build), not "the last complete build"."""
    if args.command == "serve":
        return "stopped"
    if args.command != "build":
        return "interrupted"
    out = Path(args.out or (f"{args.single_file}.html" if args.single_file else DEFAULT_OUT))
    if args.single_file:
        return f"interrupted; {out} {'is as it was' if out.exists() else 'was not written'}"
    if out.exists():
        return "interrupted; the output holds the last complete build"
    return f"interrupted; nothing was published (there was no site in {out} yet)"


@contextlib.contextmanager
def _signals_as_interrupts(args: argparse.Namespace) -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted in this process; a second one exits at once.

    Forked worker processes inherit this handler: there SIGINT is ignored (a terminal sends it
    to the whole process group; the main process stops the pool) and SIGTERM ends the worker.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    main_pid = os.getpid()
    stopping = False

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        if os.getpid() != main_pid:
            if signum == signal.SIGTERM:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)
            return
        if stopping:  # asked twice: stop now; the next build removes what is left
            _stop_line(args, signum)
            os._exit(128 + signum)
        stopping = True
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _stop_line(args: argparse.Namespace, signum: int) -> None:
    print(f"obs {args.command}: {_stop_note(args)} ({signal.Signals(signum).name})", file=sys.stderr, flush=True)


def _collect_again() -> None:
    """Turn the garbage collector back on after `run` held it off for the imports (see there).

    The objects the imports made are moved out of its reach (`gc.freeze`): they live as long as the
    process, and a forked worker then shares their memory instead of copying it as a collection
    touches them."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.command != "build":
        _collect_again()
    with _signals_as_interrupts(args):
        try:
            return int(args.func(args))
        except KeyboardInterrupt as exc:
            signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
            _stop_line(args, signum)
            return 128 + signum
        except OSError as exc:  # a file or folder obs could not read or write: say which, no traceback
            out = getattr(args, "out", None)
            where = f"{visible(str(exc.filename))}: " if exc.filename else (f"{out}: " if out else "")
            if exc.errno in WRITE_FAILURES:  # the disk, not the input: the output is the last complete build
                kept = " (the output holds the last complete build, if any)" if args.command == "build" else ""
                print(f"obs {args.command}: cannot write {where}{exc.strerror or exc}{kept}", file=sys.stderr)
                return WRITE_FAILED
            print(f"obs {args.command}: {where}{exc.strerror or exc}", file=sys.stderr)
            return 1


FAST_EXIT_COMMANDS = frozenset({"build"})
WRITE_FAILED = 3  # the output or the cache could not be written (disk full, read-only): not the input's fault
WRITE_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


def run() -> None:
    """The `obs` command: `main`, then exit.

    After a build, the interpreter's own shutdown (tearing down ~600 modules and every object a
    build made) costs ~50-70 ms of a one-run rebuild's ~1 s; every file the build wrote is closed
    and its workers are gone by then, so `obs build` flushes its output and leaves at once
    (`os._exit`). Other commands, and `main()` called from Python, exit as usual."""
    argv = sys.argv[1:]
    # Importing what a build needs makes ~400,000 objects that all live as long as the process; the garbage
    # collector would scan them again and again while they are made (~5% of a one-run rebuild, paired
    # runs). It is off until they are made (`_collect_again`).
    gc.disable()
    code = main(argv)
    if argv and argv[0] in FAST_EXIT_COMMANDS:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
