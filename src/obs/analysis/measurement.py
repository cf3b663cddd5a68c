"""One measurement or none: may a run's numbers be compared with its baseline's at all?

A paired test says whether two runs differ on the same cases, scored the same way. When the probe,
the compiler, the tokenizer or the DSL changed between them (or between the run and its spec's
frozen contract), the two numbers are two different measurements: a "significant improvement" would
be the change of ruler read as a gain (seed 003: "if the probe contract changes, version it; do not
compare old and new runs as if they were the same measurement").

`one_measurement` is the one rule that decides it. Every output reads its result: the headline
delta tile and the ladder row (through the delta's outcome, `NOT_ONE_MEASUREMENT`), the promotion
rules (no promote), `obs summary` and `obs gate` (exit 1).

Probe identity is not only the version string: a probe edited under the same name is caught by a
content hash of its case ids and expected outputs (`ProbeFingerprint`), made when the run is read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from obs.model import Probe
from obs.probetable import CaseOutcomes, _b64, _unb64, align, id_at

if TYPE_CHECKING:
    from obs.analysis.compare import HeadlineDelta, ProbeComparison

# The contract keys that define the measurement: a change in any of them makes two runs' numbers
# two measurements (seed 003's three contracts, plus the probe).
MEASUREMENT_KEYS: tuple[str, ...] = ("probe", "compiler", "tokenizer", "dsl")


@dataclass(frozen=True, eq=False)
class ProbeFingerprint:
    """A probe's identity by content: one hash of its sorted case ids with their expected outputs (`content`,
    what the ladder shows and counts looks on), and each case's expected-output hash in the probe table's row
    order (`per_case`, 0: no expected output recorded), so a case whose expected output was edited under the
    same id and version is found."""

    n: int
    content: str
    per_case: npt.NDArray[np.uint64]

    def short(self) -> str:
        return self.content[:12]

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "content": self.content, "per_case": _b64(self.per_case)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ProbeFingerprint | None:
        if not data:
            return None
        return cls(int(data["n"]), str(data["content"]), _unb64(str(data["per_case"]), "uint64"))


def _case_hash(expected: str | None) -> int:
    if expected is None:
        return 0
    digest = hashlib.blake2b(expected.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little") or 1


def probe_fingerprint(probe: Probe | None) -> ProbeFingerprint | None:
    """The content hash of a probe's case ids and expected outputs (None: no probe)."""
    if probe is None or not probe.size:
        return None
    table = probe.table
    per_case = np.fromiter((_case_hash(t.expected) for t in table.iter_texts()), dtype=np.uint64, count=len(table))
    content = hashlib.sha256()
    ids = table.outcomes.ids
    for i in np.argsort(ids, kind="stable"):
        key = id_at(ids, int(i)).encode("utf-8", "surrogatepass")
        content.update(len(key).to_bytes(8, "little") + key + int(per_case[i]).to_bytes(8, "little"))
    return ProbeFingerprint(len(table), content.hexdigest(), per_case)


@dataclass(frozen=True)
class Difference:
    """One way the two numbers are not one measurement."""

    key: str  # probe | compiler | tokenizer | dsl | probe content
    against: str  # "baseline <id>" or "the frozen contract of spec <id>"
    this: str
    other: str

    def text(self) -> str:
        return f"{self.key}: {self.this} here, {self.other} in {self.against}"

    def as_dict(self) -> dict[str, str]:
        return {"key": self.key, "against": self.against, "this": self.this, "other": self.other, "text": self.text()}


@dataclass(frozen=True)
class Measurement:
    """The verdict of `one_measurement`: `differences` empty means one measurement."""

    differences: tuple[Difference, ...] = ()
    checked: tuple[str, ...] = field(default_factory=tuple)  # what was compared, for the record

    @property
    def ok(self) -> bool:
        return not self.differences

    def what_differs(self) -> str:
        return "; ".join(d.text() for d in self.differences)

    def text(self) -> str:
        """One sentence for the tile, the ladder, the PR summary and `obs gate`."""
        if self.ok:
            return "one measurement"
        return (
            f"not one measurement: {self.what_differs()}: the numbers are not comparable, so no significance "
            "is claimed and the run cannot be promoted"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "one_measurement": self.ok,
            "differences": [d.as_dict() for d in self.differences],
            "checked": list(self.checked),
            "text": self.text(),
        }


def _show(value: Any) -> str:
    return "(not declared)" if value is None else str(value)


def one_measurement(
    contract: Mapping[str, Any],
    probe: tuple[CaseOutcomes, ProbeFingerprint] | None = None,
    *,
    baseline_id: str | None = None,
    baseline_contract: Mapping[str, Any] | None = None,
    baseline_probe: tuple[CaseOutcomes, ProbeFingerprint] | None = None,
    frozen_contract: Mapping[str, Any] | None = None,
    spec_id: str | None = None,
) -> Measurement:
    """Do this run and its baseline (and the spec's frozen contract) measure the same thing?

    A contract key differs when both sides declare it with different values; a key one side leaves out
    is not a difference (nothing says it moved). The probe content differs when a case both probes hold
    (by id) has another expected output in each (cases only one side holds are counted by the paired
    comparison, not here: a dev-split subset of the frozen probe is still the frozen probe).
    """
    diffs: list[Difference] = []
    checked: list[str] = []
    if baseline_contract is not None and baseline_id is not None:
        against = f"baseline {baseline_id}"
        for key in MEASUREMENT_KEYS:
            a, b = contract.get(key), baseline_contract.get(key)
            if a is not None and b is not None:
                checked.append(f"{key} vs {against}")
                if str(a) != str(b):
                    diffs.append(Difference(key, against, _show(a), _show(b)))
        if probe is not None and baseline_probe is not None:
            checked.append(f"probe content vs {against}")
            diffs.extend(_content_differences(probe, baseline_probe, against))
    if frozen_contract:
        against = f"the frozen contract of spec {spec_id}" if spec_id else "the spec's frozen contract"
        for key in MEASUREMENT_KEYS:
            a, b = contract.get(key), frozen_contract.get(key)
            if a is not None and b is not None:
                checked.append(f"{key} vs {against}")
                if str(a) == str(b):
                    continue
                same = next((i for i, d in enumerate(diffs) if (d.key, d.this, d.other) == (key, str(a), str(b))), None)
                if same is None:
                    diffs.append(Difference(key, against, _show(a), _show(b)))
                else:  # the same change against both: said once
                    diffs[same] = replace(diffs[same], against=f"{diffs[same].against} and in {against}")
    return Measurement(tuple(diffs), tuple(checked))


def _content_differences(
    here: tuple[CaseOutcomes, ProbeFingerprint], base: tuple[CaseOutcomes, ProbeFingerprint], against: str
) -> list[Difference]:
    (h_cases, h_fp), (b_cases, b_fp) = here, base
    if h_fp.content == b_fp.content:
        return []
    matched = align(h_cases, b_cases)
    a, b = h_fp.per_case[matched.here], b_fp.per_case[matched.base]
    edited = int(np.count_nonzero((a != 0) & (b != 0) & (a != b)))
    if not edited:
        return []
    return [
        Difference(
            "probe content",
            against,
            f"{edited} of the {matched.here.size} shared cases have other expected outputs (probe hash {h_fp.short()})",
            f"probe hash {b_fp.short()}",
        )
    ]


def described_delta(delta: HeadlineDelta, measurement: Measurement) -> HeadlineDelta:
    """The headline delta across two measurements: the difference is shown, no interval, no p-value, no
    significance (`NOT_ONE_MEASUREMENT`), and the method says what differs."""
    from obs.analysis.stats import NOT_ONE_MEASUREMENT

    if delta.delta is None:
        return delta
    return replace(
        delta,
        interval=None,
        p_value=None,
        method=measurement.text(),
        verdict=NOT_ONE_MEASUREMENT,
        unit="none",
        claim=None,
        recipe_note=None,
    )


def comparison_without_claims(comparison: ProbeComparison) -> ProbeComparison:
    """The paired probe table across two measurements: the same counts and differences, every cell's
    outcome `NOT_ONE_MEASUREMENT` (no arrow, no "significant"), so no table claims what the tile does not."""
    from obs.analysis.stats import NOT_ONE_MEASUREMENT

    def scope(s: Any) -> Any:
        return replace(s, checks={k: replace(pc, recommendation=NOT_ONE_MEASUREMENT) for k, pc in s.checks.items()})

    return replace(
        comparison,
        overall=scope(comparison.overall),
        by_split=[scope(s) for s in comparison.by_split],
        by_family=[scope(s) for s in comparison.by_family],
    )
