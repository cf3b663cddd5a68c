"""`obs decide RUN --verdict ... --rationale ...`: record a decision and freeze the report it was made on.

The only command that writes into the source tree (`obs build` never does), and only twice: first
the frozen report, `archive/<run slug>/<first 16 hex of the input hash>/index.html`, written to a
temporary folder and renamed into place, read-only, never overwritten (a second decision on the
same artifacts gets `<hash>.2/`, ...); then one appended line of `decisions.jsonl`
pointing at it. In that order, so a crash between the two leaves an unreferenced archive folder,
never a ledger line pointing at nothing. Both happen under the ledger's lock (obs.ledger), so two
decisions at once never pick the same folder; the page is rendered before, outside the lock.

The frozen report is the single-file page (see obs.publish.single_file) without script, so a build
can verify it cannot run code before it copies it, byte for byte, into the published site.
"""

from __future__ import annotations

import getpass
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from obs import urls
from obs.ledger import ARCHIVE_DIR, LEDGER_FILE, LedgerEntry, ledger_lock
from obs.model import VERDICTS, Decision
from obs.pipeline import LoadedRun, SourceTree, load_report
from obs.publish.single_file import SingleFileOptions, render_single_file
from obs.write import fault_point

MAX_SUFFIX = 9999


@dataclass
class Decided:
    entry: LedgerEntry
    archive: Path  # the frozen report's file
    ledger: Path


def default_author() -> str:
    for var in ("OBS_USER", "GIT_AUTHOR_NAME", "USER"):
        if os.environ.get(var):
            return os.environ[var]
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


def utc_now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def decide(
    source: Path,
    run_id: str,
    verdict: str,
    rationale: str,
    next_run: str = "",
    by: str | None = None,
    date: str | None = None,
) -> Decided:
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}")
    tree = SourceTree.open(source)
    loaded = load_report(tree, run_id)
    entry = LedgerEntry(
        run=loaded.report.run.id,
        verdict=verdict,
        rationale=rationale,
        next=next_run,
        by=default_author() if by is None else by,
        date=date or utc_now(),
        input_hash=loaded.input_hash,
        archive=None,  # set under the lock, with the folder
        suggested=loaded.report.suggestion.verdict,
        baseline=loaded.report.baseline_id,
        line=0,
    )
    html = frozen_report(loaded, entry)  # the banner does not name the folder: rendered before the lock
    with ledger_lock(tree.root) as append:
        folder = _free_folder(tree.root / ARCHIVE_DIR / loaded.slug, loaded.input_hash[:16])
        entry = replace(entry, archive=f"{ARCHIVE_DIR}/{loaded.slug}/{folder.name}/index.html")
        _write_frozen(folder, html)
        fault_point("decide-frozen")
        append(entry)
    return Decided(entry, folder / "index.html", tree.root / LEDGER_FILE)


def frozen_report(loaded: LoadedRun, entry: LedgerEntry) -> bytes:
    """The run's page with this decision recorded, self-contained, without script."""
    from obs.render.site import Renderer

    run = loaded.report.run
    run.decision = Decision(entry.verdict, entry.rationale, entry.next, entry.by, entry.date)
    run.notices = [n for n in run.notices if LEDGER_FILE not in n]  # about earlier decisions: not this one
    renderer = Renderer(loaded.tree.meta)
    banner = renderer.env.get_template("partials/frozen_banner.html").render(
        e=entry, live=f"../../../{urls.run_page(loaded.slug)}"
    )
    return render_single_file(
        loaded,
        SingleFileOptions(page_dir=urls.run_dir(loaded.slug), link_base="../../../", with_script=False, banner=banner),
    )


def _free_folder(parent: Path, name: str) -> Path:
    candidate = parent / name
    n = 2
    while candidate.exists():
        if n > MAX_SUFFIX:
            raise RuntimeError(f"too many decisions on the same artifacts in {parent}")
        candidate = parent / f"{name}.{n}"
        n += 1
    return candidate


def _write_frozen(folder: Path, html: bytes) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".freezing-", dir=folder.parent))
    try:
        target = tmp / "index.html"
        target.write_bytes(html)
        os.chmod(target, 0o444)
        os.chmod(tmp, 0o755)
        os.rename(tmp, folder)  # fails rather than replace an existing archive
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
