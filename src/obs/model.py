"""The domain model every adapter produces and every analysis consumes.

Adapters (native files, Hugging Face Trainer, MLflow, ...) all turn their format into these
objects, so pages and analyses never know where a run came from. Objects are plain dataclasses;
numeric series are numpy arrays so long curves stay cheap.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from obs.diagnostics import Diagnostics

if TYPE_CHECKING:
    from obs.probetable import ProbeTable

Verdict = Literal["promote", "reject", "repair", "branch"]
VERDICTS: tuple[str, ...] = ("promote", "reject", "repair", "branch")
STATUSES: tuple[str, ...] = ("queued", "running", "finished", "failed", "crashed", "unknown")
UNKNOWN = "unknown"  # no source says: never shown as a green "finished" (DESIGN.md §9, "never invent")


@dataclass
class Series:
    """One metric over steps. Only logged points are stored (sparse eval metrics stay sparse).

    A very long log is kept reduced (min/max per bucket plus an exact tail): `logged` then says
    how many points the log really had; None means every logged point is stored.

    Several values logged at one step are aggregated (obs.yaml `same_step`, default `mean`): then
    `values` holds their mean and `lo`, `hi`, `n` the min, max and count per step (None when no
    step had more than one value).
    """

    steps: np.ndarray
    values: np.ndarray
    logged: int | None = None
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    n: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.steps.shape[0])

    @property
    def count(self) -> int:
        """Points in the log (not in memory)."""
        return self.logged if self.logged is not None else len(self)

    def finite(self) -> Series:
        keep = np.isfinite(self.values)
        if self.n is None or self.lo is None or self.hi is None:
            return Series(self.steps[keep], self.values[keep], self.logged)
        return Series(self.steps[keep], self.values[keep], self.logged, self.lo[keep], self.hi[keep], self.n[keep])

    @property
    def aggregated(self) -> bool:
        """Some step held several values (shown as their mean with a min–max band)."""
        return self.n is not None and bool(np.any(self.n > 1))

    def extremes(self) -> tuple[float, float] | None:
        """The smallest and largest finite value logged (not only of the means)."""
        lo = self.values if self.lo is None else self.lo
        hi = self.values if self.hi is None else self.hi
        lo, hi = lo[np.isfinite(lo)], hi[np.isfinite(hi)]
        if lo.size == 0 or hi.size == 0:
            return None
        return float(lo.min()), float(hi.max())

    def nonfinite(self) -> list[tuple[float, float]]:
        """(step, value) of every point whose value is NaN or ±∞ (drawn as markers, never dropped silently)."""
        bad = ~np.isfinite(self.values)
        return [(float(s), float(v)) for s, v in zip(self.steps[bad], self.values[bad], strict=True)]


@dataclass
class Stage:
    """A curriculum stage: a labelled span of steps."""

    name: str
    start: float
    end: float


@dataclass
class Metrics:
    """All scalar series of a run, keyed by metric name, plus stage spans.

    `step_source` says where the x axis came from (`step`, `global_step`, `line index`, ...):
    the page states it when it is not a real step counter.
    """

    series: dict[str, Series] = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=list)
    step_source: str = "step"
    source_file: str = ""
    stage_key: str | None = None  # the text column the stages were read from
    dropped: list[str] = field(default_factory=list)  # what the page says was not drawn, and why

    def get(self, name: str) -> Series | None:
        return self.series.get(name)

    @property
    def last_step(self) -> float | None:
        ends = [float(s.steps[-1]) for s in self.series.values() if len(s)]
        return max(ends) if ends else None


@dataclass
class Generations:
    """The completions a run sampled while it trained (an emergence log's generations.jsonl), by column.

    Texts are kept up to `GENERATION_TEXT_CAP` characters each (`cut` counts the shortened ones); the run
    page's generations viewer pages them into data files (obs.render.generations).
    """

    source_file: str
    step: list[float | None] = field(default_factory=list)
    reward: list[float | None] = field(default_factory=list)
    prompt: list[str] = field(default_factory=list)
    completion: list[str] = field(default_factory=list)
    line: list[int] = field(default_factory=list)
    cut: int = 0  # texts shortened to the cap
    without_text: int = 0  # records with neither a prompt nor a completion: skipped

    def __len__(self) -> int:
        return len(self.line)


@dataclass
class ProbeCase:
    """One evaluation case: which checks passed and, when it failed, what it looked like."""

    id: str
    checks: dict[str, bool]
    split: str | None = None
    family: str | None = None
    failure_class: str | None = None
    prompt: str | None = None
    expected: str | None = None
    actual: str | None = None
    render: str | None = None
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    line: int | None = None
    sample: int | None = None  # the sample index, when a case was generated several times (pass@k)
    selected: bool | None = None  # the sample a selector (reranker, verifier) picked, when one did


@dataclass
class Probe:
    """The cases of one probe file (raw or repaired), held by column (`obs.probetable`): a probe
    of a million cases stays small, its texts kept aside until a page shows them.

    The table has one row per case id. When a case was sampled several times (records sharing an id
    with a `sample` index, or a record whose checks are lists), `samples[id]` holds every sample in
    index order and the table's row is the one the selector picked (`selected: true`), else sample 0:
    the scoreboard, the comparison, the failure groups and the case browser read that one, pass@k
    reads them all. `samples` is empty for a probe sampled once per case.
    """

    table: ProbeTable
    source_file: str = ""
    samples: dict[str, list[ProbeCase]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.table)

    @property
    def cases(self) -> list[ProbeCase]:
        """Every case as an object, texts included (built on each call: for small probes and tests);
        a sampled case is its chosen sample (with its `sample` index and `selected` flag)."""
        cases = self.table.cases()
        if not self.samples:
            return cases
        return [chosen_sample(self.samples[c.id]) if c.id in self.samples else c for c in cases]


def chosen_sample(group: list[ProbeCase]) -> ProbeCase:
    """The sample that stands for a sampled case: the one a selector picked, else the first."""
    return next((s for s in group if s.selected), group[0])


@dataclass
class GateCheck:
    name: str
    passed: bool | None
    detail: str = ""


@dataclass
class GateAsset:
    id: str
    passed: bool | None
    score: float | None = None
    render: str | None = None
    note: str = ""


@dataclass
class Gate:
    """The compiler / gold-asset gate: could the target be expressed before training?"""

    passed: bool | None
    parity_score: float | None = None
    threshold: float | None = None
    checks: list[GateCheck] = field(default_factory=list)
    assets: list[GateAsset] = field(default_factory=list)


@dataclass
class Decision:
    """run.yaml's `decision:` (or the ledger's entry for the run, which wins)."""

    # attributes of decision: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
    verdict: str | None = None
    rationale: str = ""
    next: str = ""
    by: str = ""
    date: str = ""
    # end of the attributes of decision


@dataclass
class EvalResult:
    """One evaluation number with its uncertainty, e.g. an lm-eval task metric."""

    task: str
    metric: str
    value: float
    stderr: float | None = None
    n: int | None = None
    higher_is_better: bool | None = None


@dataclass
class Run:
    """Everything obs knows about one training or evaluation run."""

    id: str
    source_dir: Path
    # attributes of run.yaml: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
    title: str = ""
    spec: str | None = None
    campaign: str | None = None
    revision: str | None = None
    date: str | None = None
    status: str = UNKNOWN
    baseline: str | None = None
    primary_axis: str | None = None
    # the failure class this rung targets (analysis.ladder.target_class)
    target_failure_class: str | None = None
    primary_metric: str | None = None
    hypothesis: str = ""
    success_criteria: str = ""
    held_constant: list[str] = field(default_factory=list)
    model: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    contract: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    condition: str | None = None
    seed: int | None = None
    arm: str | None = None
    tags: list[str] = field(default_factory=list)
    lessons: str = ""
    decision: Decision | None = None
    # end of the attributes of run.yaml
    adapter: str = "native"
    # the outcome a reader found to be a per-item file's own (its accuracy): a preference below every declared one
    reader_metric: str | None = None
    reader_metric_from: str | None = None  # which file said so, for the headline's reason
    notes: str = ""
    other_fields: dict[str, Any] = field(default_factory=dict)  # run.yaml's keys that are not declared
    metrics: Metrics | None = None
    probe: Probe | None = None
    probe_repaired: Probe | None = None
    gate: Gate | None = None
    # training_plan.json's status (`status` or `state`) and stage (`stage` or `current_stage`), when the
    # pipeline writes one beside the run (seed 003: a plan still "active" after the run finished)
    plan_status: str | None = None
    plan_stage: str | None = None
    evals: list[EvalResult] = field(default_factory=list)
    generations: Generations | None = None  # sampled completions (emergence/generations.jsonl), for the viewer
    summary: dict[str, float] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    # plain-text fields obs.fieldbounds cut, whole (up to its MAX_KEPT characters): the run page's collapsed block
    full_text: dict[str, str] = field(default_factory=dict)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)

    @property
    def verdict(self) -> str | None:
        return self.decision.verdict if self.decision else None


@dataclass
class Spec:
    """A line of runs answering one question against one frozen contract."""

    id: str
    source_dir: Path
    # attributes of spec.yaml: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
    title: str = ""
    question: str = ""
    contract: dict[str, Any] = field(default_factory=dict)
    baseline: str | None = None
    primary_metric: str | None = None
    min_effect: float | None = None
    # end of the attributes of spec.yaml


@dataclass
class Condition:
    name: str
    label: str = ""
    description: str = ""


TIERS = ("primary", "secondary", "diagnostic")


@dataclass(frozen=True)
class MetricWindow:
    """Which logged values of a run make its one number for a metric: the campaign's final window
    (`final`), the last `n` logged points (`last`), or every value logged at a step in [lo, hi] (`steps`)."""

    kind: str = "final"  # final | last | steps
    n: int | None = None
    lo: float | None = None
    hi: float | None = None

    def text(self, final_window: int) -> str:
        if self.kind == "steps":
            return f"values logged at steps {self.lo:g}-{self.hi:g}"
        n = self.n if self.kind == "last" and self.n else final_window
        return f"last {n} logged values"


@dataclass(frozen=True)
class MetricDecl:
    """One metric of `metrics:` (campaign.yaml or obs.yaml): its tier, direction, window, unit and minimum
    effect. `higher_is_better` None: the campaign's `higher_is_better` for the primary metric, the names'
    vocabulary for the others; `min_effect` None: the campaign's for the primary metric, 0 for the others."""

    name: str
    tier: str  # one of TIERS
    higher_is_better: bool | None = None
    window: MetricWindow = MetricWindow()
    unit: str = ""
    min_effect: float | None = None


@dataclass
class Campaign:
    """Conditions × seeds: the design that lets a difference be called real or not."""

    id: str
    source_dir: Path
    # attributes of campaign.yaml: generated from src/obs/schema.py by scripts/contract_tables.py; do not edit
    title: str = ""
    question: str = ""
    conditions: list[Condition] = field(default_factory=list)
    baseline_condition: str | None = None
    primary_metric: str | None = None
    higher_is_better: bool = True
    seeds: list[int] = field(default_factory=list)
    final_window: int = 10
    alpha: float = 0.05
    evidence: dict[str, float] = field(default_factory=dict)
    min_effect: float | None = None
    litmus: dict[str, float] = field(default_factory=dict)
    metrics: list[MetricDecl] = field(default_factory=list)
    expected_order: list[str] = field(default_factory=list)
    # each with its two result files read: a changed file changes the campaign and its pages
    paired: list[PairedSpec] = field(default_factory=list)
    # analysis/sample_efficiency.py; None: obs.yaml's applies
    sample_efficiency: dict[str, Any] | None = None
    # analysis/coupling.py; None: obs.yaml's applies
    coupling: list[dict[str, str]] | None = None
    # end of the attributes of campaign.yaml
    metrics_from: str = ""  # "campaign.yaml", "obs.yaml", or "" when no `metrics:` was declared
    extra: dict[str, Any] = field(default_factory=dict)
    inferred: str = ""  # how discovery formed a campaign that no campaign.yaml declares (obs.layout), else ""

    def condition_order(self, present: Iterable[str | None] = ()) -> list[str]:
        """The one order of the conditions on the campaign's page, in its analysis.json and in `obs summary
        --campaign`: the baseline condition first (the reference), then the others in campaign.yaml's order (a
        campaign that names none: its runs' conditions `present`, sorted). Within a pair the later one is named
        first and the difference is later minus earlier, so a pair with the baseline reads candidate − baseline
        in the cards and in the matrix alike."""
        names = [c.name for c in self.conditions] or sorted({p for p in present if p})
        base = self.baseline_condition
        return ([base] if base in names else []) + [n for n in names if n != base]


@dataclass(frozen=True)
class ItemResults:
    """Right/wrong per item id, read from one result file, with what had to be skipped and why."""

    outcomes: dict[str, bool]
    id_key: str
    correct_key: str
    skipped: int = 0
    duplicates: int = 0
    problems: tuple[str, ...] = ()
    # the other per-item outcomes of the file: yes/no columns (`planner_correct`, `oracle`) and lists of K
    # sampled outcomes (`samples: [true, false, ...]`, kept as (n, correct) per item), for the config x metric table
    columns: dict[str, dict[str, bool]] = field(default_factory=dict)
    samples: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)


@dataclass(frozen=True)
class PairedSpec:
    """One ``paired:`` entry of campaign.yaml after discovery read its two files.

    ``a``/``b`` are ``None`` when a file could not be used; ``problems`` then says why (the same
    messages are also reported as diagnostics, with file and line).
    """

    name: str
    label_a: str
    label_b: str
    file_a: str
    file_b: str
    claim_pp: float | None = None
    a: ItemResults | None = None
    b: ItemResults | None = None
    problems: tuple[str, ...] = ()
    config_a: dict[str, Any] = field(default_factory=dict)
    config_b: dict[str, Any] = field(default_factory=dict)
    varies: tuple[str, ...] = ()  # the settings meant to differ; every other one must match
