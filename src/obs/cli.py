"""Command line: `obs build`, `obs check`, `obs gate`; `obs summary`, `obs decide`, `obs serve` (obs.publish).

Every diagnostic is printed as `path:line: severity: message`, then one summary line. Exit status:
0 clean, 1 errors (or warnings with --strict), 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from obs import __version__
from obs.argtypes import worker_count
from obs.diagnostics import Diagnostic, sort_diagnostics

DEFAULT_SOURCE = "reports"
DEFAULT_OUT = "site"


def _print_diagnostics(items: list[Diagnostic], quiet: bool) -> None:
    for d in sort_diagnostics(items):
        if quiet and d.severity == "info":
            continue
        print(d.format(), file=sys.stderr)


def _counts(items: list[Diagnostic]) -> tuple[int, int]:
    return sum(d.severity == "error" for d in items), sum(d.severity == "warning" for d in items)


def _replay_if_unchanged(source: Path, out: Path, args: argparse.Namespace) -> int | None:
    """Nothing changed since the last build: replay its result without importing the pipeline."""
    from obs import quickcheck
    from obs.cache import cache_dir_for
    from obs.resources import package_dir, templates_dir

    if args.clean or not source.is_dir():
        return None
    cache_dir = cache_dir_for(out)
    previous = quickcheck.load_previous(cache_dir)
    if previous is None or not quickcheck.unchanged(
        previous, quickcheck.snapshot(source, out, cache_dir, templates_dir(), {}, package_dir())
    ):
        return None
    diagnostics = [Diagnostic(**d) for d in previous["result"]["diagnostics"]]
    _print_diagnostics(diagnostics, args.quiet)
    errors, warnings = _counts(diagnostics)
    print(
        f"obs build: {previous['result']['runs']} runs, nothing changed, {errors} errors, {warnings} warnings -> {out}"
    )
    return 1 if errors or (args.strict and warnings) else 0


def cmd_build(args: argparse.Namespace) -> int:
    if args.single_file:  # obs.publish: one run as one self-contained HTML file
        from obs.publish.commands import cmd_single_file

        return cmd_single_file(args)
    source, out = Path(args.source), Path(args.out or DEFAULT_OUT)
    replayed = None if args.compare_to else _replay_if_unchanged(source, out, args)
    if replayed is not None:
        return replayed
    from obs.build import BuildOptions, build_site
    from obs.publish.extras import PublishExtras
    from obs.write import OutputError

    try:
        result = build_site(
            BuildOptions(
                source=source,
                out=out,
                strict=args.strict,
                quiet=args.quiet,
                clean=args.clean,
                jobs=args.jobs,
                progress=sys.stderr.isatty(),
            ),
            [PublishExtras(compare_to=Path(args.compare_to) if args.compare_to else None)],
        )
    except OutputError as exc:
        print(f"obs build: {exc}", file=sys.stderr)
        return 2
    _print_diagnostics(result.diagnostics, args.quiet)
    what = (
        f"{result.runs} runs ({result.built} built, {result.reused} reused), {result.pages} pages written"
        if result.changed
        else f"{result.runs} runs, nothing changed"
    )
    print(f"obs build: {what}, {result.errors} errors, {result.warnings} warnings in {result.seconds:.2f} s -> {out}")
    return result.exit_code(args.strict)


def cmd_check(args: argparse.Namespace) -> int:
    from obs.ledger import read_ledger
    from obs.pipeline import SourceTree, load_run

    root = Path(args.source).resolve()
    if not root.is_dir():
        print(f"obs check: {args.source}: source folder does not exist", file=sys.stderr)
        return 2
    tree = SourceTree.open(root)
    found, plan = tree.found, tree.plan
    read_ledger(root, tree.diags)  # decisions.jsonl, line by line
    items = list(tree.diags.items)
    for claim in found.claims:
        try:
            rel = claim.folder.resolve().relative_to(root.parent).as_posix()
        except ValueError:
            rel = str(claim.folder)
        notes = f" ({'; '.join(claim.notes)})" if claim.notes else ""
        print(f"{rel}: {claim.adapter}, {claim.runs} run{'s' if claim.runs != 1 else ''}{notes}")
    for planned in plan.runs:  # read each run as a build reads it, and drop it
        items.extend(load_run(tree, planned).diagnostics.items)
    _print_diagnostics(items, args.quiet)
    errors, warnings = _counts(items)
    print(
        f"obs check: {len(plan.runs)} runs, {len(found.specs)} specs, {len(found.campaigns)} campaigns: "
        f"{errors} errors, {warnings} warnings"
    )
    return 1 if errors or (args.strict and warnings) else 0


GATE_MARK = {True: "pass", False: "FAIL", None: "n/a"}


def cmd_gate(args: argparse.Namespace) -> int:
    """`obs gate RUN [SOURCE]`: the promotion rules' verdict for one run, for CI.

    Exit 0 only when the suggestion is "promote"; 1 for any other verdict (or none); 2 when the
    source folder or the run id is unknown. Only the run and its baseline are read, not the tree.
    """
    from obs.pipeline import RunNotFound, SourceTree, load_report

    source = Path(args.source)
    if not source.is_dir():
        print(f"obs gate: {args.source}: source folder does not exist", file=sys.stderr)
        return 2
    try:
        report = load_report(SourceTree.open(source), args.run).report  # the run and its baseline, as a build does
    except RunNotFound as exc:
        print(f"obs gate: {exc}", file=sys.stderr)
        return 2
    run = report.run
    _print_diagnostics([d for d in run.diagnostics.items if d.severity == "error"], quiet=True)
    s = report.suggestion
    against = f"vs baseline {run.baseline}" if run.baseline else "no baseline"
    print(
        f"obs gate: {run.id} ({against}): suggested {s.verdict or 'nothing (cannot judge)'}"
        f"; recorded {run.verdict or 'nothing'}{' (they disagree)' if report.disagrees else ''}"
    )
    if report.baseline_problem:
        print(f"  {report.baseline_problem}")
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
    return 0 if s.verdict == "promote" else 1


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="obs", description="The run observatory: training-run artifacts in, a static website out."
    )
    parser.add_argument("--version", action="version", version=f"obs {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    build = sub.add_parser("build", help="build the site from a folder of run artifacts")
    build.add_argument("source", nargs="?", default=DEFAULT_SOURCE, help="source folder (default: reports/)")
    build.add_argument(
        "-o", "--out", default=None, help="output folder (default: site/); with --single-file the file (RUN.html)"
    )
    build.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    build.add_argument("-q", "--quiet", action="store_true", help="no progress, no info diagnostics")
    build.add_argument("--clean", action="store_true", help="ignore the build cache: rebuild every page")
    build.add_argument("-j", "--jobs", type=worker_count, default=None, help="worker processes (default: all cores)")
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

    gate = sub.add_parser(
        "gate",
        help="the promotion rules' verdict for one run (exit 0 only for promote; for CI)",
        description="Load RUN and its baseline, print the suggested verdict and why. "
        "Exit status: 0 promote, 1 any other verdict or none, 2 unknown run or source.",
    )
    gate.add_argument("run", help="run id (as in run.yaml `id:`)")
    gate.add_argument("source", nargs="?", default=DEFAULT_SOURCE, help="source folder (default: reports/)")
    gate.set_defaults(func=cmd_gate)

    from obs.publish.commands import add_parsers  # summary, decide, serve

    add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
