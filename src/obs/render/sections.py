"""The run page's sections, in the order every run page shows them: the one place a section is declared.

A section is three things: the analysis that fills it (a field of `RunReport`), its partial
(`templates/sections/<id>.html`, the body of the section: the page wraps it in its `<section>` and
`<h2>`) and one `Section` line below. The run page (`templates/run.html`) loops over `SECTIONS`; the
table of contents, the section numbers, the golden test's contract order and the collapsing of what a
run's format cannot hold all read it (docs/architecture.md, "Adding a section").

Runs read from another format (an HF Trainer folder, an MLflow run, ...) have no run.yaml: the
sections their format cannot fill (`obs.adapters.base.Holds`) and that stay empty are not shown as a
row of "not provided" boxes but collapse, a run of neighbours at a time, into one line that says what
the files lack and where a run.yaml goes to give it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from obs.adapters import holds_of
from obs.adapters.base import Holds
from obs.analysis.report import RunReport
from obs.render import generations, section_data


def _always(report: RunReport) -> bool:
    return True


@dataclass(frozen=True)
class Section:
    """One section of the run page."""

    id: str  # its anchor (`#probe`), stable: links and tests use it
    title: str
    partial: str  # template of its body, under templates/
    # what the partial reads beyond the page's context (run, r, links, renders, ...), made from the report
    context: Callable[[RunReport], dict[str, Any]] | None = None
    aside: Callable[[RunReport], str] | None = None  # the short note at the right of its heading
    # whether the run's files gave it anything; a section a format cannot fill collapses only when not
    filled: Callable[[RunReport], bool] = _always
    lacks: str = ""  # for the collapsed line: what the files lack ("hypothesis")
    lacks_many: bool = False  # ... a plural ("probe cases"): "to give them"
    given_by: str = "run.yaml"  # ... and the file that gives it
    index: tuple[str, ...] = ()  # the RunSummary fields the index pages read from it (analysis/summary.py)
    heading_id: str = ""  # its <h2>'s id, "h-<id>" unless set

    @property
    def heading(self) -> str:
        return self.heading_id or f"h-{self.id}"


def _curves_aside(r: RunReport) -> str:
    m = r.run.metrics
    return f"{len(m.series)} series · x = {m.step_source}" if m else ""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _data_context(r: RunReport) -> dict[str, Any]:
    rows, budget = section_data.data_rows(r)
    return {"data_rows": rows, "budget": budget}


SECTIONS: tuple[Section, ...] = (
    Section("run-card", "Run card", "sections/run_card.html", index=("id", "title", "status", "spec", "provenance")),
    Section(
        "hypothesis",
        "Hypothesis",
        "sections/hypothesis.html",
        filled=lambda r: bool(r.run.hypothesis or r.run.success_criteria),
        lacks="hypothesis",
    ),
    Section(
        "held-constant",
        "Held constant",
        "sections/held_constant.html",
        filled=lambda r: bool(r.held.baseline_id or r.run.held_constant),
        lacks="baseline",
        index=("held_constant_clean",),
        heading_id="h-held",
    ),
    Section(
        "data",
        "Data and tokenizer",
        "sections/data.html",
        context=_data_context,
        filled=lambda r: bool(r.run.data),
        lacks="data",
    ),
    Section(
        "gate",
        "Compiler and gold gate",
        "sections/gate.html",
        filled=lambda r: r.run.gate is not None,
        lacks="gate",
        given_by="gate.json",
        index=("gate_passed",),
    ),
    Section(
        "curves",
        "Training curves",
        "sections/curves.html",
        context=lambda r: {"series_table": section_data.series_table(r)},
        aside=_curves_aside,
        index=("curves", "finals", "last_step"),
    ),
    Section(
        "probe",
        "Probe summary",
        "sections/probe.html",
        aside=lambda r: f"{r.scoreboard.n} cases" if r.scoreboard else "",
        filled=lambda r: bool(r.scoreboard or r.run.evals),
        lacks="probe cases",
        lacks_many=True,
        given_by="probe.jsonl",
        index=("n_cases", "rates", "family_rates", "split_rates"),
    ),
    Section("diagnosis", "Diagnosis", "sections/diagnosis.html", index=("findings",)),
    Section(
        "failures",
        "Failure gallery",
        "sections/failures.html",
        aside=lambda r: f"{r.n_failing} failing of {r.scoreboard.n}" if r.scoreboard else "",
        filled=lambda r: r.scoreboard is not None,
        lacks="failing cases",
        lacks_many=True,
        given_by="probe.jsonl",
        index=("n_failing", "top_failure"),
    ),
    Section(
        "generations",
        "Generations",
        "sections/generations.html",
        context=generations.section_context,
        aside=lambda r: f"{len(r.run.generations):,} sampled" if r.run.generations else "",
        filled=lambda r: bool(r.run.generations),
        lacks="generations",
        lacks_many=True,
        given_by="emergence/generations.jsonl",
    ),
    Section(
        "lessons",
        "Lessons",
        "sections/lessons.html",
        filled=lambda r: bool(r.run.lessons or r.run.notes),
        lacks="lessons",
        lacks_many=True,
    ),
    Section(
        "decision",
        "Decision",
        "sections/decision.html",
        filled=lambda r: bool(r.run.verdict or r.suggestion.verdict),
        lacks="decision",
        index=("verdict", "decision", "suggested_verdict", "disagrees"),
    ),
    Section(
        "config",
        "Configuration",
        "sections/config.html",
        aside=lambda r: _plural(r.config.n_keys, "key") if r.config and r.config.n_keys else "",
    ),
)


@dataclass(frozen=True)
class PlacedSection:
    """A section as one page shows it: its number and what its partial reads."""

    collapsed: ClassVar[bool] = False
    section: Section
    number: int
    aside: str
    context: dict[str, Any]

    @property
    def id(self) -> str:
        return self.section.id

    @property
    def title(self) -> str:
        return self.section.title

    @property
    def heading(self) -> str:
        return self.section.heading

    @property
    def partial(self) -> str:
        return self.section.partial


@dataclass(frozen=True)
class CollapsedSections:
    """Neighbouring sections a run's format cannot fill, shown as one line."""

    collapsed: ClassVar[bool] = True
    sections: tuple[PlacedSection, ...]
    holds: Holds
    first: bool  # the page's first collapsed line carries the example run.yaml

    @property
    def note(self) -> str:
        lacks = [p.section.lacks for p in self.sections]
        files = ["run.yaml", *sorted({p.section.given_by for p in self.sections} - {"run.yaml"})]
        them = "it" if len(lacks) == 1 and not self.sections[0].section.lacks_many else "them"
        if not self.holds.takes_run_yaml:
            return (
                f"{self.holds.label} hold no {_words(lacks, 'or')}: obs reads {them} from a run.yaml, "
                f"which is not read inside {self.holds.beside}"
            )
        return (
            f"{self.holds.label} hold no {_words(lacks, 'or')}: "
            f"add {_words(['a ' + files[0], *files[1:]], 'and')} beside {self.holds.beside} to give {them}"
        )

    @property
    def example(self) -> bool:
        """Whether this line shows the example run.yaml (the page's first, when a run.yaml can be added)."""
        return self.first and self.holds.takes_run_yaml


@dataclass
class RunPageSections:
    """The run page's sections as one run shows them: every section, in order, and the items the
    page renders (a section, or a line of collapsed ones)."""

    holds: Holds  # what the format holding the run's data can hold
    has_run_yaml: bool
    placed: list[PlacedSection]
    items: list[PlacedSection | CollapsedSections] = field(default_factory=list)

    @property
    def log_name(self) -> str:
        """The run's log, named for advice about what to log."""
        if self.holds.sections is None:
            return "metrics.jsonl"
        return self.holds.records or f"the log beside {self.holds.beside}"

    @property
    def run_yaml(self) -> str:
        """Where advice sends a field: the run's run.yaml, or one to put beside another format's files."""
        if self.has_run_yaml:
            return "run.yaml"
        if not self.holds.takes_run_yaml:
            return f"a run.yaml (not read inside {self.holds.beside})"
        return f"a run.yaml beside {self.holds.beside}"

    @property
    def cases_hint(self) -> str:
        """Where a run read from another format gets per-item cases: that format's own files when they hold
        some (lm-eval's samples), else a probe.jsonl with a run.yaml beside its files."""
        if self.holds.cases:
            return f"per-item cases come from {self.holds.cases}"
        if not self.holds.takes_run_yaml:
            return f"{self.holds.label} hold no per-item cases"
        return f"add `probe.jsonl` (one case per line) and {self.run_yaml}"

    @property
    def toc(self) -> list[tuple[str, str]]:
        return [(p.id, p.title) for p in self.placed]

    @property
    def filled(self) -> set[str]:
        """The ids of the sections shown whole (not folded into a collapsed line): the phone's jump menu
        offers one-tap links only to these."""
        return {item.id for item in self.items if isinstance(item, PlacedSection)}

    @property
    def context(self) -> dict[str, Any]:
        """What every section's partial reads beyond the page's context (one dict for the page); a name
        two sections give is an error in the registry, not a partial silently reading another's data."""
        joined: dict[str, Any] = {}
        given_by: dict[str, str] = {}
        for p in self.placed:
            for key, value in p.context.items():
                if key in joined:
                    raise ValueError(f"sections {given_by[key]!r} and {p.id!r} both give their partial {key!r}")
                joined[key], given_by[key] = value, p.id
        return joined


def _words(items: Sequence[str], last: str) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {last} " + items[-1]


def place(report: RunReport, sections: Sequence[Section] = SECTIONS) -> RunPageSections:
    """The sections of one run's page: numbered, their context made, and what its format cannot
    fill (and the run left empty) collapsed, neighbours into one line."""
    adapter = report.run.adapter
    page = RunPageSections(holds_of(adapter), adapter.split("+", 1)[0] == "native", [])
    can_fill = None if page.has_run_yaml else page.holds.sections
    run: list[PlacedSection] = []
    for number, s in enumerate(sections, start=1):
        placed = PlacedSection(s, number, s.aside(report) if s.aside else "", s.context(report) if s.context else {})
        page.placed.append(placed)
        if can_fill is not None and s.id not in can_fill and not s.filled(report):
            run.append(placed)
            continue
        _flush(page, run)
        page.items.append(placed)
    _flush(page, run)
    return page


def _flush(page: RunPageSections, run: list[PlacedSection]) -> None:
    if run:
        first = not any(isinstance(i, CollapsedSections) for i in page.items)
        page.items.append(CollapsedSections(tuple(run), page.holds, first))
        run.clear()
