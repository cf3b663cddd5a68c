"""The run page's section registry (obs.render.sections): adding a section is one analysis, one partial
and one registry line; a run read from another format collapses what its files cannot hold into one
line that says where a run.yaml goes, and the example it shows does fill those sections."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jinja2
import pytest
from bs4 import BeautifulSoup

from obs.adapters import ADAPTERS
from obs.analysis.report import RunReport
from obs.pipeline import LoadedRun, SourceTree, load_report
from obs.render.run_page import render_run
from obs.render.sections import SECTIONS, Section, place
from obs.render.site import Renderer
from obs.resources import templates_dir
from obs.sitemodel import RunSummary

RUN_YAML = """id: native-run
hypothesis: A smaller learning rate converges.
lessons: It did.
"""


def write_source(root: Path) -> Path:
    native = root / "native"
    native.mkdir(parents=True)
    (native / "run.yaml").write_text(RUN_YAML, encoding="utf-8")
    (native / "notes.md").write_text("three little words\n", encoding="utf-8")
    lines = [json.dumps({"step": i, "loss": 1 / (i + 1)}) for i in range(1, 21)]
    (native / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    hf = root / "hf" / "outputs"
    hf.mkdir(parents=True)
    history = [{"step": i, "loss": 2 / (i + 1), "learning_rate": 1e-5, "epoch": i / 20} for i in range(1, 21)]
    state = {"log_history": history, "global_step": 20, "max_steps": 20}
    (hf / "trainer_state.json").write_text(json.dumps(state), encoding="utf-8")
    return root


def loaded(root: Path, run_id: str) -> LoadedRun:
    return load_report(SourceTree.open(root), run_id)


def page_of(
    run: LoadedRun, renderer: Renderer | None = None, sections: tuple[Section, ...] = SECTIONS
) -> BeautifulSoup:
    renderer = renderer or Renderer(run.tree.meta)
    out = render_run(
        run.report,
        renderer,
        run.links,
        source_rel=run.source_rel,
        max_points=run.tree.cfg.max_points,
        slug=run.slug,
        sections=sections,
    )
    return BeautifulSoup(out.files["index.html"].decode("utf-8"), "html.parser")


def section_ids(soup: BeautifulSoup) -> list[str]:
    return [s["id"] for s in soup.select("main section.section")]


# ---------- the registry ----------


def test_every_section_has_a_unique_anchor_heading_and_an_existing_partial() -> None:
    ids = [s.id for s in SECTIONS]
    assert len(set(ids)) == len(ids)
    assert len({s.heading for s in SECTIONS}) == len(SECTIONS)
    for s in SECTIONS:
        assert (templates_dir() / s.partial).is_file(), s.partial


def test_what_the_index_reads_from_a_section_is_a_field_of_the_site_model() -> None:
    fields = {f.name for f in dataclasses.fields(RunSummary)}
    for s in SECTIONS:
        assert set(s.index) <= fields, (s.id, set(s.index) - fields)


def test_what_a_format_can_fill_names_sections_that_exist() -> None:
    ids = {s.id for s in SECTIONS}
    for adapter in ADAPTERS:
        holds = adapter.holds
        assert holds.sections is None or holds.sections <= ids, adapter.name
        assert holds.label and holds.beside, adapter.name


# ---------- adding a section ----------


def notes_in_numbers(report: RunReport) -> dict[str, int]:
    """The trivial section's analysis: how many words the run's notes hold."""
    return {"n_note_words": len(report.run.notes.split())}


def test_adding_a_section_is_one_analysis_one_partial_and_one_registry_line(tmp_path: Path) -> None:
    run = loaded(write_source(tmp_path / "src"), "native-run")
    partials = tmp_path / "templates"
    (partials / "sections").mkdir(parents=True)
    # the partial: the section's body (the page gives it its <section>, number and heading)
    (partials / "sections" / "notes_in_numbers.html").write_text(
        '<p class="note" id="word-count">{{ n_note_words }} words of notes.</p>\n', encoding="utf-8"
    )
    # the registry line, after "Lessons"
    new = Section("notes-in-numbers", "Notes in numbers", "sections/notes_in_numbers.html", context=notes_in_numbers)
    at = [s.id for s in SECTIONS].index("lessons") + 1
    sections = (*SECTIONS[:at], new, *SECTIONS[at:])

    renderer = Renderer(run.tree.meta)
    renderer.env.loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(partials)), renderer.env.loader])
    soup = page_of(run, renderer, sections)

    assert section_ids(soup) == [s.id for s in sections]
    assert [a["href"] for a in soup.select("nav.toc a")] == [f"#{s.id}" for s in sections]
    added = soup.find("section", id="notes-in-numbers")
    assert added.find("h2").get_text(" ", strip=True) == f"{at + 1} Notes in numbers"
    assert added.find(id="word-count").get_text() == "3 words of notes."
    # the sections after it are numbered on
    assert soup.find("section", id="decision").find("span", class_="secno").get_text() == str(at + 2)


# ---------- runs read from another format ----------

COLLAPSED_TOP = ["hypothesis", "held-constant", "data", "gate"]


def test_a_foreign_run_collapses_what_its_format_cannot_hold_into_one_line(tmp_path: Path) -> None:
    root = write_source(tmp_path / "src")
    soup = page_of(loaded(root, "hf/outputs"))
    # the contract holds: every section, in order, with its anchor and heading
    assert section_ids(soup) == [s.id for s in SECTIONS]
    groups = soup.select(".collapsed-sections")
    assert [s["id"] for s in groups[0].select("section.section")] == COLLAPSED_TOP
    line = groups[0].find("p").get_text(" ", strip=True)
    assert line == (
        "HF Trainer logs hold no hypothesis, baseline, data or gate: "
        "add a run.yaml and gate.json beside trainer_state.json to give them."
    )
    collapsed = {s["id"] for g in groups for s in g.select("section.section")}
    assert {"probe", "failures", "lessons", "decision"} <= collapsed
    assert not {"run-card", "curves", "diagnosis", "config"} & collapsed
    # no "Not provided" box for what is collapsed, and advice names the format's file
    for sid in collapsed:
        assert not soup.find("section", id=sid).select(".missing")
    tile = soup.find(id="headline-delta").get_text(" ", strip=True)
    assert "add baseline: to a run.yaml beside trainer_state.json" in tile


def test_a_native_run_collapses_nothing(tmp_path: Path) -> None:
    soup = page_of(loaded(write_source(tmp_path / "src"), "native-run"))
    assert not soup.select(".collapsed-sections")
    assert "to run.yaml" in soup.find(id="held-constant").get_text(" ", strip=True)


def test_the_example_run_yaml_fills_what_was_collapsed(tmp_path: Path) -> None:
    root = write_source(tmp_path / "src")
    soup = page_of(loaded(root, "hf/outputs"))
    example = soup.find(id="run-yaml-example").find("pre").get_text()
    (root / "hf" / "outputs" / "run.yaml").write_text(example, encoding="utf-8")

    tree = SourceTree.open(root)
    run = load_report(tree, "hf/outputs")
    assert run.report.run.adapter == "native+hf_trainer"
    problems = [d for d in run.report.run.diagnostics.items if d.severity != "info" and d.path.endswith("run.yaml")]
    assert not problems, [d.format() for d in problems]
    soup = page_of(run)
    assert not soup.select(".collapsed-sections")
    assert "A lower learning rate" in soup.find(id="hypothesis").get_text()
    assert "promote" in soup.find(id="decision").get_text()


@pytest.mark.parametrize("sid", COLLAPSED_TOP)
def test_a_collapsed_section_that_the_run_fills_is_shown(tmp_path: Path, sid: str) -> None:
    """A section is collapsed only when the format cannot fill it and it is empty."""
    root = write_source(tmp_path / "src")
    run = loaded(root, "hf/outputs")
    placed = place(run.report)
    assert sid in {p.id for item in placed.items if item.collapsed for p in item.sections}
    fill = next(s for s in SECTIONS if s.id == sid)
    always = dataclasses.replace(fill, filled=lambda r: True)
    sections = tuple(always if s.id == sid else s for s in SECTIONS)
    placed = place(run.report, sections)
    assert sid in {item.id for item in placed.items if not item.collapsed}


def test_a_format_whose_folders_take_no_run_yaml_does_not_send_the_reader_to_add_one() -> None:
    """MLflow runs live inside an mlruns folder, where a run.yaml is not read: the line says so and
    shows no example."""
    from obs.adapters.mlflow import MlflowAdapter
    from obs.render.sections import CollapsedSections, PlacedSection

    hypothesis = next(s for s in SECTIONS if s.id == "hypothesis")
    line = CollapsedSections((PlacedSection(hypothesis, 2, "", {}),), MlflowAdapter.holds, first=True)
    assert (
        line.note
        == "MLflow runs hold no hypothesis: obs reads it from a run.yaml, which is not read inside an mlruns folder"
    )
    assert not line.example


def test_no_two_sections_give_their_partials_the_same_name(tmp_path: Path) -> None:
    """Each section's context joins the page's: a name given twice would hand one partial another's data."""
    run = loaded(write_source(tmp_path / "src"), "native-run")
    names = [k for p in place(run.report).placed for k in p.context]
    assert len(names) == len(set(names)), names
    page_names = {"run", "r", "links", "sections", "renders", "charts", "figures", "root", "standalone"}
    assert not set(names) & page_names
