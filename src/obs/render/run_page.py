"""Everything written for one run: its page, its chart data, copies of its renders, analysis.json.

`render_run` returns the files as bytes keyed by their path inside the run's folder of the site;
the build writes them. A site's run page draws its curves in the browser from `curves.js`
(`obs.render.chartdata`), so building it never imports matplotlib; a page that must stand alone
without script (`obs build --single-file`, frozen reports) gets static SVG figures instead
(`interactive=False`). Every image a page shows is copied from inside the run folder only.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from obs import urls
from obs.analysis.curves import Band
from obs.analysis.gates import GateResult
from obs.analysis.report import RunReport
from obs.diagnostics import sort_diagnostics
from obs.jsonutil import dumps_compact
from obs.model import Metrics
from obs.numbers import num
from obs.render import cases, chartdata, generations
from obs.render.sections import SECTIONS, Section, place
from obs.render.site import Renderer
from obs.render.standalone import Standalone, data_uri


@dataclass
class FigureFile:
    file: str
    svg: bytes
    alt: str
    caption: str
    height: int
    inline: bool = False  # on a page standing alone: the figure is a data: URI, not a file beside it

    @property
    def src(self) -> str:
        return data_uri(self.svg, self.file) if self.inline else self.file


@dataclass
class RunPageLinks:
    root: str
    baseline: str | None = None
    spec: str | None = None
    campaign: str | None = None
    seed_level: str | None = None  # the page with the seed-level comparison of the run's group
    frozen: str | None = None  # the spec's frozen baseline's page

    def as_dict(self) -> dict[str, str | None]:
        return {
            "baseline": self.baseline,
            "spec": self.spec,
            "campaign": self.campaign,
            "seed_level": self.seed_level,
            "frozen": self.frozen,
        }


@dataclass
class RunOutput:
    files: dict[str, bytes] = field(default_factory=dict)
    # files made while they are written (the case browser's data: a big probe's would not fit in memory)
    streamed: list[Callable[[], Iterator[tuple[str, bytes]]]] = field(default_factory=list)

    def all_files(self) -> Iterator[tuple[str, bytes]]:
        yield from sorted(self.files.items())
        for make in self.streamed:
            yield from make()


def _svg_height(svg: bytes) -> int:
    match = re.search(rb'height="([0-9.]+)pt"', svg[:2000])
    width = re.search(rb'width="([0-9.]+)pt"', svg[:2000])
    if not match or not width:
        return 400
    return round(730 * float(match.group(1)) / float(width.group(1)))


def _describe(report: RunReport, name: str) -> str:
    metrics = report.run.metrics
    if metrics is None or name not in metrics.series:
        return name
    s = metrics.series[name].finite()
    if not len(s):
        return f"{name}: no finite values"
    i_min, i_max = int(np.argmin(s.values)), int(np.argmax(s.values))
    return (
        f"{name} goes from {num(float(s.values[0]))} at step {num(float(s.steps[0]))} to "
        f"{num(float(s.values[-1]))} at step {num(float(s.steps[-1]))} "
        f"(min {num(float(s.values[i_min]))}, max {num(float(s.values[i_max]))})"
    )


def make_figures(report: RunReport, max_points: int) -> list[FigureFile]:
    plan = report.curves
    metrics = report.run.metrics
    if plan is None or metrics is None:
        return []
    from obs.render import figures  # heavy import (matplotlib), only when a run has curves

    out: list[FigureFile] = []
    if plan.has_training_panel:
        svg = figures.training_figure(metrics, plan, max_points)
        parts = [n for n in (plan.loss, *plan.loss_overlays, plan.grad, plan.lr) if n]
        alt = "; ".join(_describe(report, n) for n in parts)
        out.append(FigureFile("fig-training.svg", svg, alt, training_caption(report, static=True), _svg_height(svg)))
    for i, band in enumerate(_band_figures(report)):
        svg = figures.band_figure(metrics, band, max_points)
        out.append(
            FigureFile(f"fig-band-{i + 1}.svg", svg, _describe(report, band.mean), band_caption(band), _svg_height(svg))
        )
    if plan.bands_not_drawn:
        run_notes = report.run.metrics.dropped if report.run.metrics is not None else []
        note = f"mean ± std pairs not drawn as bands (at most {len(plan.bands)}): {', '.join(plan.bands_not_drawn)}"
        if note not in run_notes:
            run_notes.append(note)
    return out


def _band_figures(report: RunReport) -> list[Band]:
    in_reward_figure = reward_keys(report)
    return [b for b in (report.curves.bands if report.curves else []) if b.mean not in in_reward_figure]


def training_caption(report: RunReport, *, static: bool = False) -> str:
    """The training panel's caption. The static figure shades same-step ranges and marks non-finite
    values; the browser's chart draws neither, so its caption says which values it leaves out."""
    plan, metrics = report.curves, report.run.metrics
    if plan is None or metrics is None or not plan.has_training_panel:
        return ""
    stages = ", ".join(f"{st.name} from step {num(st.start)}" for st in metrics.stages)
    parts = [n for n in (plan.loss, *plan.loss_overlays, plan.grad, plan.lr) if n]
    caption = (
        "Loss"
        + (f" with stages ({stages})" if stages else "")
        + (", grad norm" if plan.grad else "")
        + (", learning rate" if plan.lr else "")
        + "."
        + _series_notes(metrics, parts, static=static)
    )
    if plan.loss_not_drawn:
        caption += (
            f" {len(plan.loss_not_drawn)} more loss series not drawn here (at most {1 + len(plan.loss_overlays)} "
            f"per chart): {', '.join(plan.loss_not_drawn)}; see the table below."
        )
    return caption


def band_caption(band: Band) -> str:
    extra = f", min–max envelope from {band.min}/{band.max}" if band.min and band.max else ""
    return f"{band.label}: mean ± std ({band.mean} ± {band.std}){extra}."


# What a training caption says of series with several values at one step and of non-finite values: the static
# figure shades the first and marks the second; the browser's chart draws finite values only, so it says so.
_SERIES_NOTES = {
    True: (
        " Shaded: the min–max of several values logged at one step (the line is their mean).",
        " Red markers at the edge: NaN (×) or infinite (▲ ▼) values at their step: {which}.",
    ),
    False: (
        " Where several values were logged at one step, the line is their mean.",
        " NaN or infinite values are not drawn (see the table below): {which}.",
    ),
}


def _series_notes(metrics: Metrics, names: list[str], *, static: bool) -> str:
    """What the figure (`static`) or the browser's chart shows of the named series beyond their lines."""
    aggregated, nonfinite = _SERIES_NOTES[static]
    series = [metrics.series[n] for n in names if n in metrics.series]
    notes = ""
    if any(s.aggregated for s in series):
        notes += aggregated
    bad = [(n, len(s.nonfinite())) for n, s in zip(names, series, strict=False) if s.nonfinite()]
    if bad:
        notes += nonfinite.format(which=", ".join(f"{n} ({k})" for n, k in bad))
    return notes


def reward_keys(report: RunReport) -> set[str]:
    """Series drawn in the reward-health figure (their generic band panels would repeat it)."""
    return chartdata.reward_keys(report.reward)


def reward_caption(report: RunReport) -> str:
    h = report.reward
    if h is None:
        return ""
    parts = []
    if h.mean is not None:
        parts.append(f"{h.mean.key} ± {h.std.key}" if h.std else h.mean.key)
    if h.zero_std is not None:
        parts.append(f"{h.zero_std.key} against the threshold {num(h.zero_std_threshold)}")
    if h.adv_mean is not None or h.adv_std is not None:
        parts.append("advantage mean ± std" if h.adv_mean and h.adv_std else "advantage")
    if h.components:
        parts.append("reward components (" + ", ".join(c.name for c in h.components) + ")")
    caption = ("Panels: " if len(parts) > 1 else "Panel: ") + "; ".join(parts) + "."
    if h.onset_step is not None:
        caption += f" Dashed red line: the learning signal is lost from step {num(h.onset_step)}."
    return caption


def make_reward_figure(report: RunReport, max_points: int) -> FigureFile | None:
    """The "Reward health" figure of section 6, only for runs that logged reward series."""
    h, metrics = report.reward, report.run.metrics
    if h is None or metrics is None:
        return None
    from obs.render import figures  # heavy import (matplotlib), only when a run has reward series

    svg = figures.reward_health_figure(metrics, h, max_points)
    onset = h.onset_step
    caption = reward_caption(report)
    alt_parts = [_describe(report, s.key) for s in (h.mean, h.std, h.zero_std, h.adv_std) if s is not None]
    if onset is not None:
        alt_parts.append(f"collapse onset at step {num(onset)}")
    return FigureFile("fig-reward.svg", svg, "; ".join(alt_parts), caption, _svg_height(svg))


@dataclass
class RunCharts:
    """What the page's interactive charts draw: panel groups by where they sit, and the data file."""

    groups: dict[str, list[dict[str, Any]]]
    data_file: str
    series: list[str]  # every series in the data file, for the explorer's picker
    explore: str  # the series the explorer opens on
    captions: dict[str, str]

    def spec(self, slug: str) -> dict[str, Any]:
        """The page's inert JSON block (and the template's context): the run's data file, the panels
        to draw from it, and what the explorer offers."""
        return {
            "slug": slug,
            "data": self.data_file,
            "groups": self.groups,
            "series": self.series,
            "explore": self.explore,
            "captions": self.captions,
        }


@dataclass
class _ChartPanels:
    """The panels of section 6 by group: training (with the mean ± std bands), reward health, reward components,
    and one group a declared coupling pair."""

    training: list[dict[str, Any]]
    reward: list[dict[str, Any]]
    components: list[dict[str, Any]]
    coupling: list[list[dict[str, Any]]]

    @classmethod
    def of(cls, report: RunReport, metrics: Metrics) -> _ChartPanels:
        plan, health = report.curves, report.reward
        training = chartdata.training_panels(plan, metrics) if plan else []
        training += chartdata.band_panels(plan, metrics, health) if plan else []
        return cls(
            training,
            chartdata.reward_panels(health, metrics) if health else [],
            chartdata.component_panels(health) if health else [],
            [chartdata.coupling_panels(c) for c in report.coupling if not c.missing],
        )

    def all(self) -> list[dict[str, Any]]:
        """Every panel, in the order the data file lists them."""
        return [*self.training, *self.reward, *self.components, *(p for c in self.coupling for p in c)]

    def groups(self) -> dict[str, list[dict[str, Any]]]:
        """The groups that have panels, by the name the page's script draws them under."""
        named = [("training", self.training), ("reward", self.reward), ("components", self.components)]
        named += [(f"coupling-{i}", panels) for i, panels in enumerate(self.coupling)]
        return {name: panels for name, panels in named if panels}


def make_charts(
    report: RunReport, slug: str, max_points: int, x_axes: Mapping[str, Sequence[str]] | None = None
) -> tuple[RunCharts, bytes] | None:
    """The panels of section 6 and the run's data file (no drawing: the browser draws). `x_axes` is
    obs.yaml's declared counters; one this run logged but cannot be drawn against is a warning."""
    metrics = report.run.metrics
    if metrics is None or not metrics.series:
        return None
    declared, faults = chartdata.declared_axes(metrics, x_axes or {})
    for fault in faults:
        report.run.diagnostics.warning(metrics.source_file or report.run.source_dir, fault)
    panels = _ChartPanels.of(report, metrics)
    bands = _band_figures(report)
    bands += chartdata.reward_bands(report.reward) if report.reward else []
    points = min(max_points, chartdata.CHART_POINTS)
    data = chartdata.chart_data(
        metrics,
        run_id=report.run.id,
        slug=slug,
        panels=panels.all(),
        bands=bands,
        finals={k: v.mean for k, v in report.digest.finals.items()},
        points=points,
        declared=declared,
    )
    derived = chartdata.derived_series(metrics, report.reward)
    if derived:  # beside the logged series, never among them: `series` holds only what the log holds
        encoded = {n: chartdata.encode_series(d, points) for n, d in derived.items()}
        data["derived"] = {n: e for n, e in encoded.items() if e is not None}
    for panel in panels.all():
        panel["desc"] = "; ".join(name if name in derived else _describe(report, name) for name in panel["lines"])
    series = sorted(data["series"])
    explore = _explore_series(report, series, chartdata.panel_series([*panels.training, *panels.reward]))
    captions = {
        "training": " ".join([training_caption(report), *(band_caption(b) for b in _band_figures(report))]).strip(),
        "reward": reward_caption(report),
    }
    charts = RunCharts(panels.groups(), urls.CURVES, series, explore, captions)
    return charts, chartdata.chart_file(data)


def _explore_series(report: RunReport, series: list[str], drawn: set[str]) -> str:
    """The series the explorer opens on: the headline curve (or a member of a mean over eval sets), else the
    first series no panel draws, else the first series."""
    lead = [report.headline.metric, *report.headline.members]
    explore = next((n for n in lead if n in series), None)
    return explore or next((n for n in series if n not in drawn), series[0] if series else "")


def render_run(
    report: RunReport,
    renderer: Renderer,
    links: RunPageLinks,
    *,
    source_rel: str,
    max_points: int,
    slug: str = "",
    x_axes: Mapping[str, Sequence[str]] | None = None,
    interactive: bool = True,
    sections: Sequence[Section] = SECTIONS,
    standalone: Standalone | None = None,
    gates: Sequence[GateResult] = (),
) -> RunOutput:
    """The run's files. `interactive` pages draw their curves in the browser from `curves.js`;
    otherwise (a page that must stand alone, without script) the curves are static SVG figures.
    `sections` are the page's sections in order (the registry, `obs.render.sections`). With
    `standalone` the page is the variant that works as one file (figures and renders as data: URIs;
    obs.render.standalone), and `interactive` must be False. `x_axes`: obs.yaml's declared counters. `gates`:
    obs.yaml's gates judged on this run (`pipeline.judge_gates`), shown as the page's gate strip."""
    run = report.run
    out = RunOutput()
    figures: list[FigureFile] = []
    reward_fig: FigureFile | None = None
    charts: RunCharts | None = None
    if interactive:
        made = make_charts(report, slug or urls.slugify(run.id), max_points, x_axes)
        if made is not None:
            charts, data = made
            out.files[charts.data_file] = data
    else:
        figures = make_figures(report, max_points)
        reward_fig = make_reward_figure(report, max_points)
        for f in [*figures, *([reward_fig] if reward_fig else [])]:
            f.inline = standalone is not None
            out.files[f.file] = f.svg

    renders: dict[str, str] = {}
    shown = cases.gallery(report)
    wanted = set(shown.renders)
    if run.gate:
        wanted |= {a.render for a in run.gate.assets if a.render}
    for rel in sorted(wanted):
        src = run.source_dir / rel
        try:
            data = src.read_bytes()
        except OSError:
            run.diagnostics.warning(src, "render could not be read; not shown")
            continue
        if standalone is not None:
            renders[rel] = data_uri(data, rel)
        elif src.suffix.lower() == ".svg":
            # An SVG file served from the site's origin runs its own scripts when opened by itself.
            # As a data: URI in an <img> it never can: images do not run scripts, and browsers
            # refuse to open data: URLs as pages.
            renders[rel] = "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")
        else:
            out.files[f"renders/{rel}"] = data
            renders[rel] = f"renders/{rel}"

    case_browser = cases.browser(report, links.baseline)
    if case_browser is not None:
        out.streamed.append(case_browser.files)
    gen_viewer = generations.viewer(report) if standalone is None else None  # data files beside a site's page
    if gen_viewer is not None:
        out.streamed.append(gen_viewer.files)
    placed = place(report, sections)
    diagnostics = [d.format() for d in sort_diagnostics(run.diagnostics.items)]
    html = renderer.render(
        "run.html",
        root=links.root,
        standalone=standalone,
        r=report,
        run=run,
        links=links.as_dict(),
        sections=placed,
        **placed.context,
        figures=figures,
        reward_fig=reward_fig,
        charts=charts.spec(slug or urls.slugify(run.id)) if charts else None,
        preload_fonts=interactive,  # a site page (a page made to stand alone inlines its fonts)
        renders=renders,
        gallery=shown,
        case_spec=case_browser.spec if case_browser else None,
        gen_spec=gen_viewer.spec if gen_viewer else None,
        ids_shown=cases.IDS_SHOWN,
        diagnostics=diagnostics,
        source_rel=source_rel,
        gate_results=gates,
    )
    out.files[urls.INDEX] = html.encode("utf-8")
    out.files[urls.ANALYSIS] = dumps_compact({**report.as_dict(), "gates": [g.as_dict() for g in gates]})
    return out
