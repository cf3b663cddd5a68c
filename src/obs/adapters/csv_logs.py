"""CSV metric logs: Lightning's CSVLogger, Keras' CSVLogger, Ultralytics' results.csv and a generic one.

Recognised: `metrics.csv` (Lightning: `lightning_logs/version_<n>/metrics.csv`, with `hparams.yaml`
beside it), `results.csv` (Ultralytics), `progress.csv` (Stable-Baselines), `training.log`,
`history.csv`, `log.csv`, `training_log.csv` (Keras' CSVLogger, whose file name is the user's) and
any other `*.csv` whose header names a step column (`step`, `global_step`, `epoch`, `iteration`,
...). Each file is one run; several in one folder are `folder/<stem>`.

* The header may be padded with spaces (Ultralytics: `      train/box_loss`): names are stripped.
* Empty cells are "not logged": Lightning writes train and validation metrics on separate rows of
  the same step, and those rows are merged into one point (as a trainer state's train and eval rows).
* The x axis is the first of `step`, `global_step`, ... present, else `epoch` (Keras, Ultralytics).
* Numbers written as text are numbers; `nan`, `inf` are kept as such (and reported); other text is a
  text column, not plotted, said on the page.
* A CSV of per-item outcomes (an id and a 0/1 or true/false column) or of runs (one row per run) is
  read as such, as for JSON logs (obs.adapters.shapes): outcomes are not curves.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from obs.adapters.base import CASE_SECTIONS, Claim, Holds, LoadContext, RunSource, visible_files
from obs.adapters.shapes import TIME_KEYS, classify, read_items_into
from obs.adapters.shared.hparams import add_hparams
from obs.adapters.shared.ids import new_run, run_id_for_file, unread_note
from obs.adapters.shared.log_records import build_log_metrics
from obs.adapters.shared.text_files import read_head
from obs.diagnostics import Diagnostics
from obs.model import Run
from obs.series_builder import STEP_KEYS

KNOWN_NAMES = (
    "metrics.csv",
    "results.csv",
    "progress.csv",
    "training.log",
    "history.csv",
    "log.csv",
    "training_log.csv",
    "train_log.csv",
)
HPARAMS_YAML = "hparams.yaml"
SNIFF_ROWS = 50
MAX_CSV_FIELD = 131_072  # characters in one cell (Python's csv default): a metric log's cell is far shorter
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_SPECIAL = {
    "nan": float("nan"),
    "inf": float("inf"),
    "+inf": float("inf"),
    "-inf": float("-inf"),
    "infinity": float("inf"),
    "-infinity": float("-inf"),
}
LAYOUTS = {
    "metrics.csv": "Lightning CSVLogger",
    "results.csv": "Ultralytics results.csv",
    "progress.csv": "Stable-Baselines progress.csv",
}


def header_of(path: Path) -> list[str] | None:
    """The header row, names stripped, when the file's first line looks like a CSV header."""
    head = read_head(path, 8192).decode("utf-8-sig", errors="replace")
    first = head.split("\n", 1)[0].strip("\r")
    if "," not in first:
        return None
    try:
        names = next(csv.reader(io.StringIO(first)))
    except (csv.Error, StopIteration):
        return None
    names = [n.strip() for n in names]
    if len(names) < 2 or any(not n for n in names) or any(_NUMBER.match(n) for n in names):
        return None
    return names


def is_csv_log(path: Path) -> bool:
    name = path.name.lower()
    if name in KNOWN_NAMES:
        return header_of(path) is not None
    if not name.endswith(".csv"):
        return False
    header = header_of(path)
    return header is not None and any(h.lower() in TIME_KEYS for h in header)


def step_column(header: list[str]) -> str | None:
    lowered = {h.lower(): h for h in header}
    for key in (*STEP_KEYS, "epoch", "timesteps", "time/total_timesteps", "iter"):
        if key in lowered:
            return lowered[key]
    return None


class CsvLogAdapter:
    name = "csv_logs"
    holds = Holds(
        "CSV logs", "the CSV log (alone in its folder)", records="the rows of the CSV log", sections=CASE_SECTIONS
    )

    def claim(self, folder: Path, root: Path) -> Claim | None:
        files = visible_files(folder, root)
        logs = [f for f in files if is_csv_log(f)]
        if not logs:
            return None
        several = len(logs) > 1
        hparams = [f for f in files if f.name == HPARAMS_YAML]
        sources = tuple(
            RunSource(
                self.name,
                folder,
                (log, *hparams),
                key=log.name,
                default_id=run_id_for_file(folder, root, log, several),
            )
            for log in logs
        )
        notes = [f"{log.name}: {LAYOUTS.get(log.name.lower(), 'a CSV metric log')}" for log in logs]
        note = unread_note([f for f in files if f not in logs and f not in hparams], folder, "not a CSV log")
        if note:
            notes.append(note)
        return Claim(runs=sources, owned_dirs=(), notes=tuple(notes))

    def load(self, source: RunSource, ctx: LoadContext) -> Run:
        path = source.path / source.key if source.key else source.files[0]
        stem_id = source.default_id.endswith(f"/{path.stem}")
        run = new_run(source, ctx, title=path.stem if stem_id else source.path.name)
        read_csv_into(run, path, ctx, step_key=None)
        for extra in source.files:
            if extra.name == HPARAMS_YAML:
                add_hparams(run.config, extra, ctx.diags)
        return run


def rows(path: Path, diags: Diagnostics) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) per data row: header names stripped, empty cells left out, numbers as numbers."""
    try:
        fh = path.open("r", encoding="utf-8-sig", errors="replace", newline="")
    except OSError as exc:
        diags.error(path, f"cannot be read: {exc.strerror}")
        return
    with fh:
        csv.field_size_limit(MAX_CSV_FIELD)  # the module's default, said here: a cell past it skips its row
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            diags.error(path, "file is empty; expected a header row and rows of values")
            return
        except csv.Error as exc:
            diags.error(path, f"the header row cannot be read ({exc}); the file was not read", reader.line_num)
            return
        short = 0
        first_short: int | None = None
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:  # a cell over MAX_CSV_FIELD characters, a NUL: that row only
                diags.warning(path, f"row not read: {exc}", reader.line_num)
                continue
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                short += 1
                first_short = first_short or line
            record: dict[str, Any] = {}
            for name, cell in zip(header, row, strict=False):
                value = cell.strip()
                if value:
                    record[name] = _value(value)
            yield line, record
        if short:
            diags.warning(
                path,
                f"{short} row(s) have another number of cells than the header (first at line {first_short}); "
                "their cells were read in order",
                first_short,
            )


def _value(text: str) -> Any:
    if _NUMBER.match(text):
        number = float(text)
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    special = _SPECIAL.get(text.lower())
    if special is not None:
        return special
    if text in ("True", "true", "False", "false"):
        return text.lower() == "true"
    return text


def read_csv_into(run: Run, path: Path, ctx: LoadContext, *, step_key: str | None) -> None:
    """A CSV log into `run`: metrics (x = its step column), or per-item outcomes, as its rows say."""
    diags = ctx.diags
    stream = rows(path, diags)
    head = list(itertools.islice(stream, SNIFF_ROWS))
    if not head:
        diags.warning(path, "no rows of values")
        return
    records = itertools.chain(head, stream)
    shape = classify([r for _, r in head])
    if shape.is_items:
        read_items_into(run, records, shape, path, diags, root=ctx.root)
        return
    header = list(head[0][1])
    for _, r in head[1:]:
        header += [k for k in r if k not in header]
    key = step_key or step_column(header)
    build_log_metrics(
        run, records, path, diags, step_key=key, same_step=ctx.config.same_step, restarts=ctx.config.restarts
    )
    layout = LAYOUTS.get(path.name.lower())
    if layout:
        run.notices.append(f"{path.name} is read as a {layout}; x = {key or 'the row position'}.")
    if run.metrics is not None and not run.metrics.series:
        diags.warning(path, "no numeric columns")
