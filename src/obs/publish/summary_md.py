"""`obs summary`: a run (or a campaign) as a GitHub-flavoured Markdown pull-request comment.

A reviewer reads the comment before the report: the headline and its delta with the CI, the
recorded and the suggested verdict, then the evidence in decreasing importance. GitHub refuses a
comment over 65,536 characters, so sections carry a priority and the least important ones are
dropped first (the comment says which); the headline, the verdicts and the link to the full report
are never dropped. No image is uploaded anywhere: curves are Unicode sparklines.

Everything that comes from a run is escaped (`mdtext.md_text` / `md_code`); only obs's own words,
numbers and table structure are Markdown. obs's own sentences (reasons, methods, findings) keep their
`code spans` as code (`md_obs`), and what they quote from a run stays inert.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np

from obs import __version__, urls
from obs.analysis.campaign import CampaignStats, CandidateStats, ConditionFinals
from obs.analysis.campaign_gate import GateResult, campaign_gate
from obs.analysis.campaign_view import campaign_view
from obs.analysis.compare import Headline
from obs.analysis.gates import GateResult as RunGateResult
from obs.analysis.report import RunReport
from obs.analysis.tiers import CampaignTiers
from obs.numbers import delta_text, num, pct, plural, pp, signed_num
from obs.numbers import p_text as pval
from obs.pipeline import LoadedRun, SourceTree, campaign_summaries, gate_results, load_report
from obs.publish.mdtext import COMMENT_LIMIT, gh_length, md_code, md_obs, md_text, sparkline, table
from obs.render.format import frozen_line, stat_ci, stat_diff, stat_mean_sd, unit_text, verdict_words

MAX_ROWS = 40
MAX_FAILURE_CLASSES = 10
MAX_SERIES = 12
SPARK_WIDTH = 24


@dataclass
class Section:
    title: str
    body: str
    priority: int  # higher survives longer when the comment must be trimmed


def assemble(head: str, sections: list[Section], foot: str, limit: int = COMMENT_LIMIT) -> str:
    """Head, sections in their order, foot; drop the lowest-priority sections until it fits."""
    kept = [s for s in sections if s.body]
    dropped: list[Section] = []

    def compose() -> str:
        parts = [head]
        parts += [f"#### {s.title}\n\n{s.body}" for s in kept]
        if dropped:
            names = ", ".join(s.title for s in sorted(dropped, key=lambda s: sections.index(s)))
            parts.append(
                f"> **Trimmed to fit GitHub's {COMMENT_LIMIT:,}-character comment limit:** left out {names}. "
                "The full report has everything."
            )
        parts.append(foot)
        return "\n\n".join(parts) + "\n"

    text = compose()
    while gh_length(text) > limit and kept:
        weakest = min(kept, key=lambda s: (s.priority, -sections.index(s)))
        kept.remove(weakest)
        dropped.append(weakest)
        text = compose()
    if gh_length(text) > limit:  # only the never-dropped parts are left: cut at a line boundary
        note = "\n\n> **Cut** to fit GitHub's comment limit.\n"
        budget = limit - gh_length(note)
        cut = text[:budget]
        while gh_length(cut) > budget:
            cut = cut[:-64]
        text = cut[: cut.rfind("\n") if "\n" in cut else len(cut)] + note
    return text


# --------------------------------------------------------------------------- formatting


def _value(value: float | None, is_rate: bool) -> str:
    if value is None:
        return "—"
    return pct(value) if is_rate else num(value)


def _delta(value: float | None, is_rate: bool) -> str:
    return delta_text(value, is_rate)


def _ci(low: float | None, high: float | None, is_rate: bool) -> str:
    if low is None or high is None or np.isnan(low) or np.isnan(high):
        return "no CI"
    if is_rate:
        return f"95% CI [{pp(low, False)}, {pp(high, False)}] pp"
    return f"95% CI [{signed_num(low)}, {signed_num(high)}]"


ARROW = {"statistically_significant_improvement": "▲", "significant_degradation": "▼"}


def report_link(base_url: str, rel: str) -> str | None:
    from obs.publish.single_file import link_base_for

    base = link_base_for(base_url)
    return None if base is None else base + quote(rel)


# --------------------------------------------------------------------------- one run


def run_summary(
    report: RunReport,
    *,
    slug: str,
    base_url: str,
    input_hash: str = "",
    tolerance: float = 0.02,
    limit: int = COMMENT_LIMIT,
    gates: list[RunGateResult] | None = None,
) -> str:
    run = report.run
    title = f"## obs · {md_code(run.id, in_table=False)}"
    if run.title:
        title += f": {md_text(run.title, 160)}"
    lines = [title, ""]
    facts = []
    if run.spec:
        facts.append(f"spec {md_code(run.spec, in_table=False)}")
    if run.revision:
        facts.append(f"revision {md_text(run.revision, 40)}")
    facts.append(f"status {md_text(run.status, 20)}")
    if run.date:
        facts.append(md_text(run.date, 40))
    lines.append(" · ".join(facts))
    lines += ["", _headline_line(report)]
    lines += _ladder_lines(report)
    lines += ["", _verdict_table(report)]
    head = "\n".join(lines)

    sections = [
        Section("Gates (obs.yaml)", _gates(gates or []), 78),
        Section("Regressions", _regressions(report, tolerance), 80),
        Section("Top failure classes", _failures(report), 75),
        Section("Against the baseline", _against_baseline(report), 70),
        Section("Scoreboard", _scoreboard(report), 60),
        Section("Promotion rules", _rules(report), 45),
        Section("pass@k", _passk(report), 35),
        Section("Diagnosis", _diagnosis(report), 40),
        Section("Curves", _curves(report), 30),
    ]
    link = report_link(base_url, urls.run_page(slug))
    foot = (
        f"**[Full report →](<{link}>)**"
        if link
        else f"Full report: `{urls.run_page(slug)}` in the built site (set `base_url` in obs.yaml to link it here)."
    )
    foot += f"\n\n<sub>obs {__version__}" + (f" · inputs sha256 {input_hash[:12]}" if input_hash else "") + "</sub>"
    return assemble(head, sections, foot, limit)


def _headline_line(report: RunReport) -> str:
    h: Headline = report.headline
    if h.value is None and h.missing:
        text = f"**Headline: none**: {md_obs(h.missing, 600)}"
    elif h.value is None:
        text = "**Headline: none** (no probe, metric or eval value to show)"
    else:
        text = f"**{md_text(h.metric or 'headline', 60)}: {_value(h.value, h.is_rate)}** ({md_obs(h.detail, 120)})"
    if h.reason:
        text += f"; {md_obs(h.reason, 200)}"
    d = report.delta
    if d is not None and d.delta is not None and d.verdict == "not_one_measurement":
        base = md_code(d.baseline_id, in_table=False)
        text += f" · **Δ {_delta(d.delta, h.is_rate)}** vs {base}: **{md_obs(d.method, 400)}**"
    elif d is not None and d.delta is not None and d.verdict == "not_tested":
        base = md_code(d.baseline_id, in_table=False)
        text += f" · **Δ {_delta(d.delta, h.is_rate)}** vs {base}: {md_obs(d.method, 200)}"
        if report.seed_level:
            text += f"; {md_obs(report.seed_level, 200)}"
    elif d is not None and d.delta is not None:
        ci = _ci(d.interval.low, d.interval.high, h.is_rate) if d.interval else "no CI"
        extra = [ci] + ([pval(d.p_value)] if d.p_value is not None else []) + [unit_text(d.unit, d.n)]
        base = md_code(d.baseline_id, in_table=False)
        arrow = f" {ARROW[d.verdict]}" if d.verdict in ARROW else ""
        text += (
            f" · **Δ {_delta(d.delta, h.is_rate)}**{arrow} vs {base}"
            f" ({' · '.join(extra)}): {md_obs(verdict_words(d.verdict), 60)}"
        )
        if report.recipe is not None:
            text += (
                "\n\n_This compares two checkpoints (items are its only variation): shown, not used to decide; the "
                "promotion rules read the recipe-level result below._"
            )
        elif d.claim == "checkpoint":
            text += f"\n\n_This {md_obs(d.claim_text, 200)}"
            text += f"; {md_obs(report.seed_level, 200)}" if report.seed_level else ""
            text += f". {md_obs(d.recipe_note[0].upper() + d.recipe_note[1:], 300)}._" if d.recipe_note else "._"
    elif report.baseline_id:
        why = report.baseline_problem or (d.method if d else "no comparable metric")
        text += f" · no delta vs {md_code(report.baseline_id, in_table=False)}: {md_obs(why, 160)}"
    else:
        text += " · no baseline"
    return text + _recipe_line(report)


def _recipe_line(report: RunReport) -> str:
    """The run's recipe against its baseline's recipe, seeds as the unit: what the promotion rules read."""
    r, d, h = report.recipe, report.delta, report.headline
    if r is None or d is None:
        return ""
    extra = [_ci(r.low, r.high, h.is_rate)] if r.ci is not None else [md_obs(r.problem or "no CI", 200)]
    extra += [f"Welch {pval(r.p_value)}"] if r.p_value is not None else []
    arrow = f" {ARROW[r.outcome]}" if r.outcome in ARROW else ""
    seeds = ", ".join(f"{md_code(i, in_table=False)} {_value(v, h.is_rate)}" for i, v, _ in r.members)
    base_seeds = ", ".join(f"{md_code(i, in_table=False)} {_value(v, h.is_rate)}" for i, v, _ in r.members_baseline)
    return (
        f"\n\n**Recipe, seeds as the unit: Δ {_delta(r.estimate, h.is_rate)}**{arrow} vs "
        f"{md_code(d.baseline_id, in_table=False)}'s recipe ({' · '.join(extra)} · {r.n} v {r.n_baseline} seeds): "
        f"{md_obs(verdict_words(r.outcome), 60)}\n\n_Welch's t-test over seeds, one headline value per run: this "
        f"recipe {seeds}; the baseline's {base_seeds}._"
    )


def _ladder_lines(report: RunReport) -> list[str]:
    """The spec's frozen baseline when the run is judged against another one, and the rung's target class."""
    out = []
    frozen, d = report.frozen_baseline, report.delta
    if report.frozen is not None:
        run = md_code(report.run.id, in_table=False)
        out += [
            "",
            f"Δ {md_obs(frozen_line(report.frozen, report.headline.is_rate), 500)}. "
            f"_The promotion rules above judge {run} against its own baseline._",
        ]
    elif frozen and (d is None or d.baseline_id != frozen):
        run = md_code(report.run.id, in_table=False)
        out += [
            "",
            f"_The spec's frozen baseline is {md_code(frozen, in_table=False)}: compare with it by "
            f"{md_code(f'obs summary {report.run.id} --baseline {frozen}', in_table=False)} "
            f"(or `obs gate` the same way); the promotion rules above judge {run} against its own baseline._",
        ]
    if report.target is not None:
        out += ["", f"Target failure class: {md_obs(report.target.text(), 300)}"]
    return out


def _verdict_table(report: RunReport) -> str:
    run, s = report.run, report.suggestion
    if run.decision and run.decision.verdict:
        who = ", ".join(md_text(x, 60) for x in (run.decision.by, run.decision.date) if x)
        recorded = f"**{md_text(run.decision.verdict, 20)}**" + (f" ({who})" if who else "")
        if run.decision.rationale:
            recorded += f": {md_text(run.decision.rationale, 280)}"
        if run.decision.next:
            recorded += f" Next: {md_text(run.decision.next, 120)}"
    else:
        recorded = "pending"
    suggested = f"**{md_text(s.verdict, 20)}**" if s.verdict else "cannot judge"
    if report.disagrees:
        suggested += " ⚠️ disagrees with the recorded decision"
    elif s.verdict and run.verdict:
        suggested += " (agrees)"
    if s.reasons:
        suggested += f": {md_obs(s.reasons[0], 240, in_table=True)}"
    return table(["Decision", "Verdict"], [["Recorded", recorded], ["Suggested by the promotion rules", suggested]])


def _scoreboard(report: RunReport) -> str:
    sb = report.scoreboard
    if sb is None:
        return ""
    header = ["Scope", "Cases"] + [md_code(c) + (" ↓" if c in sb.negative else "") for c in sb.checks]
    rows = []
    scoped = [("all", sb.overall)] + [("split", r) for r in sb.by_split] + [("family", r) for r in sb.by_family]
    for kind, row in scoped[:MAX_ROWS]:
        label = "all" if kind == "all" else f"{kind}: {md_text(row.label, 60)}"
        cells = []
        for c in sb.checks:
            rate = row.rates.get(c)
            cells.append("—" if rate is None or rate.value is None else f"{pct(rate.value)} ({rate.hits}/{rate.n})")
        rows.append([label, str(row.n_cases), *cells])
    out = table(header, rows, ["l", "r"] + ["r"] * len(sb.checks))
    if len(scoped) > MAX_ROWS:
        out += f"\n\n… and {len(scoped) - MAX_ROWS} more rows in the full report."
    if sb.negative:
        out += "\n\n↓ lower is better."
    return out


def _against_baseline(report: RunReport) -> str:
    cmp = report.comparison
    if cmp is None:
        return ""
    rows = []
    for c in cmp.checks:
        pc = cmp.overall.checks.get(c)
        if pc is None:
            continue
        negative = c in cmp.negative
        fixed, broke = (pc.only_b, pc.only_a) if negative else (pc.only_a, pc.only_b)
        rows.append(
            [
                md_code(c) + (" ↓" if negative else ""),
                pct(pc.rate_b),
                pct(pc.rate_a),
                f"{pp(pc.delta)} {ARROW.get(pc.recommendation, '')}".strip(),
                f"[{pp(pc.interval.low, False)}, {pp(pc.interval.high, False)}]",
                pval(pc.p_value) + (f" → {pval(pc.p_adjusted)}" if pc.p_adjusted is not None else ""),
                f"{fixed} / {broke}",
            ]
        )
    head = f"Paired on {plural(cmp.overall.n_shared, 'case')} shared with {md_code(cmp.baseline_id, in_table=False)}"
    if cmp.only_here or cmp.only_baseline:
        head += f" ({len(cmp.only_here)} only in this run, {len(cmp.only_baseline)} only in the baseline, not paired)"
    head += ": cases are the unit; Tango 95% score CI and the McNemar score test it inverts (the exact test below 25 "
    head += "discordant cases)."
    family = next((pc.family for pc in cmp.overall.checks.values() if pc.family), None)
    if family:
        head += f" ▲ / ▼ use the p-values adjusted by {family} (raw → adjusted); the headline is judged on its own."
    return (
        head
        + "\n\n"
        + table(
            [
                "Check",
                "Baseline",
                "This run",
                "Δ",
                "95% CI (pp)",
                "McNemar p (raw → Holm)" if family else "McNemar p",
                "fixed / broke",
            ],
            rows,
            ["l", "r", "r", "r", "r", "r", "r"],
        )
    )


def _regressions(report: RunReport, tolerance: float) -> str:
    """The promotion rules' own regressions (the same list `obs gate` and the run page show)."""
    if report.comparison is None:
        return ""
    regs = report.suggestion.regressions
    m = report.suggestion.tests
    small = report.suggestion.unjudged
    if not regs:
        text = (
            f"None: no split or family is worse than the baseline by more than {pp(tolerance, False)} pp on any check "
            f"(one-sided score tests, Holm over {plural(m, 'cell')})."
        )
        if small:
            text += f" {plural(len(small), 'cell')} too small to judge."
        if report.suggestion.missable:
            text += " What it could have missed (the smallest drop detected with 80% power):\n\n" + "\n".join(
                f"- {md_obs(item, 200)}" for item in report.suggestion.missable
            )
        return text
    ordered = sorted(regs, key=lambda r: -r.worse_by)
    rows = []
    for r in ordered[:MAX_ROWS]:
        pc = r.result
        broke, fixed = r.broke_fixed
        rows.append(
            [
                md_text(r.where, 80),
                md_code(r.check),
                pct(pc.rate_b),
                pct(pc.rate_a),
                f"{pp(pc.delta)} [{pp(pc.interval.low, False)}, {pp(pc.interval.high, False)}]",
                str(pc.n),
                f"{pval(r.p_value)} → {pval(r.p_adjusted)}",
                f"{broke} / {fixed}",
            ]
        )
    out = table(
        ["Where", "Check", "Baseline", "This run", "Δ [95% CI]", "Cases", "p (raw → Holm)", "broke / fixed"],
        rows,
        ["l", "l", "r", "r", "r", "r", "r", "r"],
    )
    if len(regs) > MAX_ROWS:
        out += f"\n\n… and {len(regs) - MAX_ROWS} more in the full report."
    rule = (
        f"a split or family (or another check overall) worse than the baseline by more than {pp(tolerance, False)} "
        f"pp: one-sided score test against that margin, Holm-adjusted over the {plural(m, 'cell')} tested "
        "(the promotion rule)"
    )
    return out + f"\n\nFlagged: {rule}."


def _passk(report: RunReport) -> str:
    pk = report.headline_passk
    if pk is None:
        return ""
    deltas = {d.k: d.result for d in pk.vs_baseline}
    rows = []
    for v in pk.overall.values:
        d = deltas.get(v.k)
        rows.append(
            [
                f"pass@{v.k}",
                f"{pct(v.value)} [{pct(v.interval.low)}, {pct(v.interval.high)}]",
                "—"
                if d is None
                else f"{pp(d.delta)} [{pp(d.interval.low, False)}, {pp(d.interval.high, False)}] "
                f"{pval(d.p_value)}: {verdict_words(d.recommendation)}",
            ]
        )
    out = (
        f"{md_code(pk.check, in_table=False)} over {plural(pk.n_items, 'case')} sampled {pk.samples_min}"
        + (f"–{pk.samples_max}" if pk.samples_max != pk.samples_min else "")
        + " times (unbiased estimator, 95% CI over cases; cases are the unit).\n\n"
    )
    out += table(["k", "pass@k [95% CI]", f"Δ vs baseline ({pk.baseline_items} shared cases)"], rows, ["l", "r", "r"])
    if pk.selector is not None:
        sel = pk.selector
        out += (
            f"\n\nBest-of-n {pct(sel.oracle)} vs the selected sample {pct(sel.selected)} "
            f"on {plural(sel.n_items, 'case')}: "
            f"the selector leaves {plural(sel.left, 'case')} the oracle solves."
        )
    return out


def _failures(report: RunReport) -> str:
    if not report.failures:
        return "Every probe case passed every check." if report.scoreboard else ""
    total = report.n_failing
    rows = [
        [md_text(g.key, 80), str(g.count), pct(g.count / total) if total else "—", md_text(g.source, 30)]
        for g in report.failures[:MAX_FAILURE_CLASSES]
    ]
    out = f"{total} failing of {report.scoreboard.n if report.scoreboard else '?'} cases.\n\n"
    out += table(["Failure class", "Cases", "Share", "Grouped by"], rows, ["l", "r", "r", "l"])
    rest = report.failures[MAX_FAILURE_CLASSES:]
    if rest:
        cases = plural(sum(g.count for g in rest), "case")
        out += f"\n\n… and {plural(len(rest), 'more class', 'more classes')} ({cases})."
    return out


def _rules(report: RunReport) -> str:
    checks = report.suggestion.checks
    if not checks:
        return ""
    marks = {True: "✅", False: "❌", None: "➖"}
    out = []
    for c in checks:
        mark = marks[c.passed] if c.gate else ("yes" if c.passed else "no" if c.passed is not None else "n/a")
        out.append(f"- {mark} {md_obs(c.rule, 120)}: {md_obs(c.detail, 240)}")
        out += [f"  - {md_obs(item, 240)}" for item in c.items[:10]]
    return "\n".join(out)


def _diagnosis(report: RunReport) -> str:
    if not report.findings:
        return ""
    icons = {"problem": "🔴", "warning": "🟠", "note": "🔵"}
    out = []
    for f in report.findings[:12]:
        line = f"- {icons.get(f.severity, '')} **{md_obs(f.title, 160)}**"
        if f.evidence:
            line += f": {md_obs(f.evidence[0], 240)}"
        line += f" → {md_obs(f.action, 240)}"
        out.append(line)
    return "\n".join(out)


def _curves(report: RunReport) -> str:
    metrics = report.run.metrics
    plan = report.curves
    if metrics is None or not metrics.series:
        return ""
    wanted: list[str] = []
    if plan is not None:
        wanted += [n for n in (plan.loss, *plan.loss_overlays, plan.grad, plan.lr) if n]
        wanted += [b.mean for b in plan.bands]
    if report.headline.kind == "series" and report.headline.metric:
        wanted.insert(0, report.headline.metric)
    wanted += sorted(metrics.series)
    names = list(dict.fromkeys(n for n in wanted if n in metrics.series))[:MAX_SERIES]
    rows = []
    for name in names:
        s = metrics.series[name].finite()
        if not len(s):
            continue
        rows.append(
            [
                md_code(name),
                f"`{sparkline(s.values, SPARK_WIDTH)}`",
                num(float(s.values[0])),
                num(float(s.values.min())),
                num(float(s.values.max())),
                num(float(s.values[-1])),
                num(float(s.steps[-1])),
            ]
        )
    more = len(metrics.series) - len(names)
    out = table(
        ["Series", "Shape", "First", "Min", "Max", "Last", "Last step"], rows, ["l", "l", "r", "r", "r", "r", "r"]
    )
    return out + (f"\n\n… and {more} more series in the full report." if more > 0 else "")


# --------------------------------------------------------------------------- a campaign


def _tested_metrics(tiers: CampaignTiers) -> str:
    """Every tested metric x candidate (the family the labels are adjusted over), then each order check."""
    rows = []
    for t in tiers.tested:
        for k in t.stats.candidates:
            iv = k.welch.interval
            rows.append(
                [
                    md_code(t.name),
                    t.tier,
                    md_text(k.label, 80),
                    stat_diff(k.delta, t.stats.in_pp) if k.n else "—",
                    stat_ci(iv, t.stats.in_pp) if iv else md_obs(k.welch.problem or "—", 80, in_table=True),
                    f"{pval(k.p_value)} → {pval(k.p_adjusted)}" if k.tested else "—",
                    md_obs(verdict_words(k.recommendation), 60, in_table=True),
                ]
            )
    out = [
        md_obs(tiers.declared[0].upper() + tiers.declared[1:], 500) + ".",
        "",
        md_obs(f"Family: {tiers.family}.", 300),
    ]
    if rows:
        out += [
            "",
            table(
                ["Metric", "Tier", "Candidate", "Δ vs baseline", "95% CI", "Welch p (raw → Holm)", "Outcome"],
                rows,
                ["l", "l", "l", "r", "r", "r", "l"],
            ),
        ]
    untested = [f"{md_code(t.name)} ({t.tier})" for t in tiers.metrics if not t.tested]
    if untested:
        out += ["", f"Shown on the page, not tested: {', '.join(untested[:12])}{' …' if len(untested) > 12 else ''}."]
    if tiers.not_metrics:
        out += ["", md_obs(f"Not metrics (never tested): {', '.join(tiers.not_metrics[:8])}.", 400)]
    for t in tiers.tested:
        if t.order is not None:
            out += ["", md_obs(t.order.sentence, 400)]
    for t in tiers.tested:
        for p in t.planning:
            if p.directional:
                out += ["", md_obs(f"{t.name} · {p.label}: {p.advice}", 300)]
    return "\n".join(out)


def _gate_text(gate: GateResult) -> str:
    lines = [f"**obs gate: {gate.verdict}** ({md_obs(gate.rule, 400)})", ""]
    lines += [f"- {md_obs(ln.text(), 500)}" for ln in gate.lines]
    return "\n".join(lines)


def _paired_head(stats: CampaignStats) -> list[str]:
    """A campaign of paired evaluations only: its lead is the paired result, not an empty conditions table."""
    out: list[str] = []
    for p in stats.paired:
        out += ["", f"**{md_text(p.name, 120)}**: {md_obs(p.sentence, 700)}"]
        sides = [x for x in (p.side_a, p.side_b) if x is not None]
        if sides:
            out += [
                "",
                "; ".join(
                    f"{md_text(x.label, 60)} {pct(x.rate)} ({x.correct:,}/{x.n:,} items, {x.level:.0%} Wilson CI "
                    f"{pct(x.low)} to {pct(x.high)})"
                    for x in sides
                ),
            ]
    return out


def campaign_summary(
    stats: CampaignStats,
    *,
    title: str,
    question: str,
    slug: str,
    base_url: str,
    curves: dict[str, list[float]],
    limit: int = COMMENT_LIMIT,
    tiers: CampaignTiers | None = None,
    gate: GateResult | None = None,
) -> str:
    """`stats` from obs.analysis.campaign; `curves` is each condition's mean curve (for sparklines); `tiers`
    every tested metric (obs.analysis.tiers) and `gate` the campaign's PASS/FAIL (obs.analysis.campaign_gate)."""
    head_lines = _campaign_title(stats, title, question)
    if not stats.conditions and stats.paired:
        head_lines += _paired_head(stats)
        if gate is not None:
            head_lines += ["", _gate_text(gate)]
        foot = _campaign_foot(base_url, slug, "")
        return assemble("\n".join(head_lines), [], foot, limit)
    head_lines += ["", _design_line(stats)]
    for p in stats.problems:
        head_lines += ["", f"> ⚠️ {md_obs(p, 300)}"]
    head_lines += ["", _conditions_table(stats, curves)]
    head = "\n".join(head_lines)
    if gate is not None:
        head += "\n\n" + _gate_text(gate)
    foot = _campaign_foot(base_url, slug, " (set `base_url` in obs.yaml to link it here)")
    return assemble(head, _campaign_sections(stats, tiers), foot, limit)


def _campaign_title(stats: CampaignStats, title: str, question: str) -> list[str]:
    """The comment's heading (the campaign's id and title) and its question."""
    lines = [
        f"## obs · campaign {md_code(stats.campaign_id, in_table=False)}"
        + (f": {md_text(title, 160)}" if title else "")
    ]
    if question:
        lines += ["", md_text(question, 400)]
    return lines


def _design_line(stats: CampaignStats) -> str:
    """What the table below tests: the primary metric and its window, the unit, the baseline, α and correction."""
    metric = md_code(stats.primary_metric or "no primary metric", in_table=False)
    direction = "higher is better" if stats.higher_is_better else "lower is better"
    baseline = stats.baseline_label or stats.baseline_condition or "none"
    return (
        f"Primary metric {metric} ({direction}), mean of the last {stats.final_window} logged points per run, "
        f"seeds as the unit; baseline condition **{md_text(baseline, 80)}**, "
        f"α = {stats.alpha:g}, {md_obs(stats.correction, 300)}."
    )


def _conditions_table(stats: CampaignStats, curves: dict[str, list[float]]) -> str:
    """One row a condition: its seeds and mean, and for a candidate its test against the baseline."""
    by_name = {c.condition: c for c in stats.candidates}
    rows = [
        _condition_row(cond, by_name.get(cond.name), curves.get(cond.name), stats.in_pp) for cond in stats.conditions
    ]
    return table(
        [
            "Condition",
            "Seeds",
            "Mean ± sd",
            "Δ vs baseline",
            "95% CI",
            "Welch p (raw → Holm)",
            "Outcome · litmus",
            "Mean curve",
        ],
        rows,
        ["l", "r", "r", "r", "r", "r", "l", "l"],
    )


def _condition_row(
    cond: ConditionFinals, cand: CandidateStats | None, curve: list[float] | None, in_pp: bool
) -> list[str]:
    """A condition's row: label, seeds, mean ± sd, and (a candidate's) delta, Welch interval, p and litmus, in the
    campaign page's units and words (`in_pp`: a rate, in % and pp, as `CampaignStats.in_pp` decided)."""
    mean = stat_mean_sd(cond.mean, cond.sd if cond.n > 1 else None, in_pp) if cond.n else "—"
    if cand is None:
        delta = "baseline" if cond.is_baseline else "—"
        ci = p = litmus = "—"
    else:
        delta = stat_diff(cand.delta, in_pp)
        iv = cand.welch.interval
        ci = stat_ci(iv, in_pp) if iv else md_obs(cand.welch.problem or "—", 80, in_table=True)
        p = f"{pval(cand.p_value)} → {pval(cand.p_adjusted)}" if cand.tested else "—"
        words = md_obs(verdict_words(cand.recommendation), 60, in_table=True)
        litmus = f"{words} · **{md_text(cand.litmus.verdict, 20)}**"
    spark = f"`{sparkline(curve, SPARK_WIDTH)}`" if curve else "—"
    return [md_text(cond.label or cond.name, 80), str(cond.n), mean, delta, ci, p, litmus, spark]


def _campaign_sections(stats: CampaignStats, tiers: CampaignTiers | None) -> list[Section]:
    """The comment's sections below the table, each with its priority when the comment must be cut.

    Evidence minimums (seeds, steps, completions) stand apart from thresholds the evidence failed
    (significance, the minimum effect) and from why a candidate was not tested: three different reasons,
    three headings."""
    sentences = "\n".join(f"- {md_obs(c.sentence, 600)}" for c in stats.candidates)
    unmet = "\n".join(
        f"- {md_text(c.label, 80)}: {md_obs(e.detail, 200)}"
        for c in stats.candidates
        for e in c.litmus.evidence
        if not e.met
    )
    failed = "\n".join(
        f"- {md_text(c.label, 80)}: {md_obs(t.detail, 200)}"
        for c in stats.candidates
        if c.litmus.verdict == "FAILED"
        for t in c.litmus.thresholds
        if not t.met
    )
    untested = "\n".join(
        f"- {md_text(c.label, 80)}: {md_obs(c.welch.problem or '', 200)}"
        for c in stats.candidates
        if not c.tested and c.welch.problem
    )
    paired_rows = [[md_text(p.name, 120), md_obs(p.sentence, 400, in_table=True)] for p in stats.paired]
    return [
        Section("Tested metrics", _tested_metrics(tiers) if tiers is not None else "", 75),
        Section("Reading", sentences, 70),
        Section("Unmet evidence minimums", unmet, 60),
        Section("Thresholds not met", failed, 58),
        Section("Not tested", untested, 56),
        Section("Paired systems", table(["Comparison", "Result"], paired_rows) if paired_rows else "", 50),
        Section("Notes", "\n".join(f"- {md_obs(n, 300)}" for n in stats.notes), 20),
    ]


def _campaign_foot(base_url: str, slug: str, hint: str) -> str:
    """The link to the campaign's page (or its path in the built site, with `hint`) and obs's version."""
    link = report_link(base_url, urls.campaign_page(slug))
    foot = (
        f"**[Full campaign page →](<{link}>)**"
        if link
        else f"Full page: `{urls.campaign_page(slug)}` in the built site{hint}."
    )
    return foot + f"\n\n<sub>obs {__version__}</sub>"


# --------------------------------------------------------------------------- entry points (read the tree)


GATE_MARKS = {"pass": "✅ pass", "fail": "❌ fail", "na": "n/a"}


def _gates(results: list[RunGateResult]) -> str:
    """obs.yaml's gates on the run, as `obs gate` and the leaderboard's strip judge them."""
    if not results:
        return ""
    return table(
        ["gate", "result", "evidence"],
        [[md_text(r.label, 80), GATE_MARKS[r.status], md_obs(r.detail, 300, in_table=True)] for r in results],
    )


def summarize_run(source: Path, run_id: str, baseline: str | None = None) -> str:
    """The run (and its baseline) analysed by the build's own pipeline, as a PR comment."""
    tree = SourceTree.open(source)
    return summary_of_loaded(tree, load_report(tree, run_id, baseline))


def summary_of_loaded(tree: SourceTree, loaded: LoadedRun, limit: int = COMMENT_LIMIT) -> str:
    """A run already analysed (`pipeline.load_report`) as a PR comment of at most `limit` characters."""
    return run_summary(
        loaded.report,
        slug=loaded.slug,
        base_url=tree.cfg.base_url,
        input_hash=loaded.input_hash,
        tolerance=tree.cfg.threshold("regression_tolerance"),
        limit=limit,
        gates=gate_results(tree, loaded),
    )


def summarize_campaign(source: Path, campaign_id: str) -> str:
    """The campaign's runs analysed by the build's own pipeline, and the campaign page's own view."""
    return campaign_comment(SourceTree.open(source), campaign_id)


def campaign_comment(tree: SourceTree, campaign_id: str, limit: int = COMMENT_LIMIT) -> str:
    """A campaign of an open source tree as a PR comment of at most `limit` characters."""
    campaign, summaries = campaign_summaries(tree, campaign_id)
    view = campaign_view(campaign, summaries, tree.cfg.metric_higher_is_better)
    return campaign_summary(
        view.stats,
        title=campaign.title,
        question=campaign.question,
        slug=tree.layout.campaign_slug(campaign.id),
        base_url=tree.cfg.base_url,
        curves={c.name: view.mean_curve(c.name) for c in view.curves},
        limit=limit,
        tiers=view.tiers,
        gate=campaign_gate(view),
    )
