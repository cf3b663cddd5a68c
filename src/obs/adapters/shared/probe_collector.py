"""`ProbeCollector`: cases in input order held by column, repeated ids reported, samples of one case kept
together."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from obs.adapters.shared.probe_cases import is_sample_list, plain_cases, probe_case_from_record, sample_lists
from obs.diagnostics import Diagnostics
from obs.jsontypes import type_name
from obs.model import Probe, ProbeCase, chosen_sample
from obs.probetable import ProbeTableBuilder


class ProbeCollector:
    """Cases in input order, held by column (`obs.probetable`); a repeated id is reported and
    skipped, as in a native probe file, unless the records are samples of one case (a `sample`
    index, or checks given as lists of booleans). Set `path` before adding the cases of another file.

    A sampled case takes one row of the table, where its first sample arrived; when every sample
    is in, that row holds the selected sample (else sample 0), and `Probe.samples` holds them all."""

    def __init__(self, path: Path, diags: Diagnostics) -> None:
        self.builder = ProbeTableBuilder(path, diags)
        self.diags = diags
        self.samples: dict[str, list[ProbeCase]] = {}
        self.sample_rows: dict[str, tuple[int, ProbeCase, int | None]] = {}  # id -> (row, case in it, line)
        # other fields that are not true/false of this file: key -> [records, first line, first value]; a key that
        # is a check in other records is then a check of the wrong type (`_report_loose_checks`)
        self.loose: dict[str, list[Any]] = {}

    @property
    def path(self) -> Path:
        return self.builder.path

    @path.setter
    def path(self, value: Path) -> None:
        self._report_loose_checks()
        self.builder.path = value

    def _note_loose(self, extra: dict[str, Any], line: int | None) -> None:
        for key, value in extra.items():
            if value is None or key == "selected" or is_sample_list(value):
                continue
            seen = self.loose.get(key)
            if seen is None:
                self.loose[key] = [1, line, value]
            else:
                seen[0] += 1

    def _report_loose_checks(self) -> None:
        """One warning per key of this file that is a check (true or false) in some records and another type in
        others (`"passed": "yes"`): those values count neither way, and stay with their cases as other fields."""
        for key in sorted(self.loose.keys() & self.builder.check_names):
            count, line, value = self.loose[key]
            where = f" in {count:,} records (first at line {line})" if count > 1 and line is not None else ""
            self.diags.warning(
                self.path,
                f"check '{key}' must be true or false, not {type_name(value)}{where} (the first: "
                f"{str(value)[:40]}); those records have no result for it, the value is kept as another field",
                line,
            )
        self.loose = {}

    def __len__(self) -> int:
        return len(self.builder)

    @property
    def check_names(self) -> list[str]:
        return sorted(self.builder.check_names)

    def add_native(self, records: list[tuple[int, dict[str, Any]]], run_dir: Path, root: Path) -> None:
        """Records of a native probe file (line, object), a batch at a time: from columns when every record
        of the batch is plain (`plain_cases`) and no sampled case was met yet, else one case at a time.
        Both ways give the same table and the same diagnostics (a property test holds them to it)."""
        plain = plain_cases(records) if not self.sample_rows else None
        if plain is not None:
            self.builder.add_plain(plain)
            for text, line in zip(plain.texts, plain.lines, strict=True):
                if text.extra:
                    self._note_loose(text.extra, line)
            return
        for line, rec in records:
            self.add(probe_case_from_record(rec, line, self.path, run_dir, root, self.diags), line)

    def add(self, case: ProbeCase | None, line: int | None) -> None:
        if case is None:
            return
        if case.extra:
            self._note_loose(case.extra, line)
        lists = sample_lists(case)
        if lists:
            self._add_lists(case, lists, line)
            return
        if case.sample is not None:
            known = self.samples.get(case.id)
            if known is not None:
                if any(s.sample == case.sample for s in known):
                    self.diags.warning(
                        self.path, f"case id '{case.id}' sample {case.sample} already read; this one skipped", line
                    )
                    return
                known.append(case)
                return
            self.samples[case.id] = [case]
            self.sample_rows[case.id] = (len(self.builder), case, line)
        elif case.id in self.sample_rows:
            self._repeated(case.id, line)
            return
        self.builder.add(case, line)

    def _repeated(self, case_id: str, line: int | None) -> None:
        first = self.sample_rows[case_id][2]
        self.diags.warning(self.path, f"case id '{case_id}' already used at line {first or 0}; this one skipped", line)

    def _add_lists(self, case: ProbeCase, lists: dict[str, list[bool]], line: int | None) -> None:
        sizes = {len(v) for v in lists.values()}
        if len(sizes) != 1:
            self.diags.warning(
                self.path, f"case id '{case.id}': its lists of sample results differ in length; skipped", line
            )
            return
        if case.id in self.sample_rows:
            self._repeated(case.id, line)
            return
        picked = case.extra.get("selected")  # with lists, `selected` may name the picked sample's index
        extra = {k: v for k, v in case.extra.items() if k not in lists and k != "selected"}
        samples = [
            replace(
                case,
                checks={**case.checks, **{k: v[i] for k, v in lists.items()}},
                extra=extra,
                sample=i,
                selected=(i == picked) if isinstance(picked, int) and not isinstance(picked, bool) else None,
            )
            for i in range(sizes.pop())
        ]
        self.samples[case.id] = samples
        self.sample_rows[case.id] = (len(self.builder), samples[0], line)
        self.builder.add(samples[0], line)

    def finish(self) -> Probe:
        """The probe: one row per id (the selected sample, else sample 0) and every sample of each
        case sampled at least twice."""
        self._report_loose_checks()
        samples: dict[str, list[ProbeCase]] = {}
        for case_id, group in self.samples.items():
            row, placed, line = self.sample_rows[case_id]
            group = sorted(group, key=lambda s: s.sample or 0)
            chosen = group[0] if len(group) < 2 else chosen_sample(group)
            if chosen is not placed:
                self.builder.set_row(row, chosen, chosen.line if chosen.line is not None else line)
            if len(group) >= 2:
                samples[case_id] = group
        table = self.builder.finish()
        if samples and self.builder.kept is not None:  # a plain record came first with a sampled case's id
            kept = self.builder.kept
            for case_id in list(samples):
                row = self.sample_rows[case_id][0]
                pos = int(np.searchsorted(kept, row))
                if pos >= len(kept) or int(kept[pos]) != row:
                    del samples[case_id]
        return Probe(table=table, source_file=str(self.path), samples=samples)

    def probe(self) -> Probe | None:
        return self.finish() if len(self) else None
