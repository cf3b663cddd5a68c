"""Run ids and file accounting: the id of a run found in a folder or a file, the empty run an adapter fills,
and the note that names the files of a folder that were not read (nothing is dropped silently)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from obs.adapters.base import LoadContext, RunSource
from obs.model import Run
from obs.safepaths import real, shown_name


def folder_id(folder: Path, root: Path) -> str:
    """The folder path relative to the source root: the default id of a run found there (text: a byte of a
    folder name that is not UTF-8 is U+FFFD)."""
    try:
        rel = real(folder).relative_to(real(root))  # as Path.resolve(); remembered during a walk of the tree
    except ValueError:
        return shown_name(folder.name)
    text = rel.as_posix()
    return shown_name(text if text not in ("", ".") else folder.name)


def new_run(source: RunSource, ctx: LoadContext, title: str = "") -> Run:
    """The empty run an adapter fills: its id, folder, format, spec and campaign as discovery found them."""
    return Run(
        id=source.default_id or source.path.name,
        source_dir=source.path,
        adapter=source.adapter,
        spec=source.spec,
        campaign=source.campaign,
        title=title,
        diagnostics=ctx.diags,
    )


def run_id_for_file(folder: Path, root: Path, file: Path, several: bool) -> str:
    """One run per file: the folder id when the file is alone, `folder/stem` when it has siblings."""
    base = folder_id(folder, root)
    return f"{base}/{shown_name(file.stem)}" if several else base


def unread_note(files: Iterable[Path], base: Path, why: str = "", limit: int = 8) -> str | None:
    """`not read: a, b, c (+N more)` for the claim notes that `obs check` prints, or None."""
    names = []
    for f in files:
        try:
            names.append(f.relative_to(base).as_posix())
        except ValueError:
            names.append(f.name)
    if not names:
        return None
    shown = ", ".join(names[:limit])
    more = f" (+{len(names) - limit} more)" if len(names) > limit else ""
    return f"not read: {shown}{more}{f' ({why})' if why else ''}"
