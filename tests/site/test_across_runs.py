"""Across-runs pages on the demo site: sweeps, config diffs, what varies, trends, arms, provenance, gates.

Expected values are computed here from the source files (run.yaml, metrics.jsonl, probe.jsonl,
gate.json), not from obs's own summaries.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from bs4 import BeautifulSoup

from obs.analysis.held_constant import flatten
from obs.build import BuildOptions
from obs.publish.extras import build_published
from obs.urls import slugify

REPORTS = Path(__file__).resolve().parents[2] / "reports"
SEED_LEAVES = ("seed",)


def text_of(tag: Any) -> str:
    """A cell's text as read: identifiers carry <wbr> break points, which split its strings."""
    return " ".join(tag.get_text().split())


def soup_of(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def run_docs(source: Path) -> dict[str, dict[str, Any]]:
    """Every run of the demo: its run.yaml, or for a run folder without one (retrain-demo's layout) its id, the
    folder's path."""
    docs = {}
    for path in sorted(source.rglob("run.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        doc["_dir"] = path.parent
        docs[doc["id"]] = doc
    for path in sorted(source.rglob("metrics.jsonl")):
        if not (path.parent / "run.yaml").exists():
            rid = path.parent.relative_to(source).as_posix()
            docs[rid] = {"id": rid, "_dir": path.parent}
    return docs


def fields(doc: dict[str, Any]) -> dict[str, Any]:
    return flatten({k: doc[k] for k in ("model", "config", "contract", "data", "provenance") if doc.get(k)})


def final_mean(run_dir: Path, metric: str, window: int = 10) -> float:
    values = []
    for line in (run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if metric in row:
            values.append(float(row[metric]))
    return float(np.mean(values[-window:]))


# ------------------------------------------------------------------------------------- sweeps


def test_sweeps_page_has_a_chart_and_a_table_per_metric_group(demo_site: Path, demo_source: Path) -> None:
    soup = soup_of(demo_site / "sweeps.html")
    docs = run_docs(demo_source)
    sections = soup.select("main section.section")
    names = [s.find("h2").contents[0].strip() for s in sections]
    # one chart per comparable set: the headline metric within one spec, campaign or folder (issue 16)
    assert names == [
        "correct_rate · campaign retrain-demo",
        "correct_rate · campaign sepa-campaign",
        "eval/accuracy · campaign data-scaling",
        "eval/accuracy · top level",
        "exact · spec spec03",
        "relational_f1 · spec onto-arms",
    ]
    for section in sections:
        svg = section.select_one("svg.pcp")
        assert svg is not None and svg.get("role") == "img"
        assert svg.find("desc") is not None and svg.find("title") is not None
        rows = section.select("table[data-export^='sweep-'] tbody tr")
        lines = svg.select("polyline title")
        assert len(rows) == len(lines) >= 3  # one line and one row per run
    exact = sections[names.index("exact · spec spec03")]
    run_ids = [tr.select("td")[1].get_text(strip=True) for tr in exact.select("table[data-export^='sweep-'] tbody tr")]
    spec_runs = sorted(  # one measurement: spec03-r5 measured another probe (probe-v4), so it is not ranked here
        i
        for i in docs
        if i.startswith("spec03-")
        and docs[i].get("status") != "running"
        and docs[i]["contract"]["probe"] == "probe-v3 (160 cases)"
    )
    assert sorted(run_ids) == spec_runs  # a running run is not ranked among finished ones: its own group
    skipped = soup.get_text(" ", strip=True)
    assert "exact · spec spec03 · probe-v3 (160 cases) · 50 cases · not finished: 1 run" in skipped

    # the best run by exact (from the probe files) is ranked first
    def exact_rate(rid: str) -> float:
        recs = [json.loads(x) for x in (docs[rid]["_dir"] / "probe.jsonl").read_text().splitlines() if x.strip()]
        return sum(bool(r["exact"]) for r in recs) / len(recs)

    assert run_ids[0] == max(spec_runs, key=exact_rate)
    headers = [th.get_text(" ", strip=True) for th in exact.select("table[data-export^='sweep-'] thead th")]
    assert any("config.train.lr" in h for h in headers)  # r2 changed lr: a varying setting
    assert not any("seed" in h for h in headers)
    assert soup.select_one('nav.topnav a[aria-current="page"]').get_text() == "Sweeps"


def test_parameter_importance_matches_scipy_on_the_sweeps_own_table(demo_site: Path) -> None:
    """Each sweep's importance table, recomputed with scipy from the values its runs table shows."""
    from scipy import stats

    soup = soup_of(demo_site / "sweeps.html")
    checked = 0
    for section in soup.select("main section.section"):
        table = section.select_one("table[data-export^='sweep-']")
        imp = section.select_one("table[data-export^='importance-']")
        heads = [th.select_one("button").get_text(strip=True) for th in table.select("thead th")]
        metric = section.find("h2").contents[0].strip().split(" · ")[0]
        assert section.find("h3").get_text(strip=True) == f"Which settings go with {metric} (parameter importance)"
        if imp is None:  # a sweep whose every key is unknown says so instead
            assert "Unknown for every setting" in section.get_text(" ", strip=True)
            continue
        caption = imp.select_one("caption").get_text(" ", strip=True)
        assert caption.startswith("An association across these ") and "not an effect" in caption
        rows = [
            [td.get("data-sort", td.get_text(strip=True)) for td in tr.select("td")] for tr in table.select("tbody tr")
        ]
        col = {h: [r[i] for r in rows] for i, h in enumerate(heads)}
        for tr in imp.select("tbody tr"):
            key = tr.select_one("td code").get_text(strip=True)
            cells = {td["data-label"]: td for td in tr.select("td")}
            if key not in col or "unknown" in cells["Share"].get_text():
                continue  # a key past the chart's axes is not in its table
            pairs = [(v, y) for v, y in zip(col[key], col[metric], strict=True) if v not in ("", "—") and y != ""]
            y = [float(b) for _, b in pairs]
            share = float(cells["Share"]["data-sort"])
            if cells["Spearman ρ"].get("data-sort"):
                assert share == pytest.approx(stats.spearmanr([float(a) for a, _ in pairs], y)[0] ** 2)
            else:
                names = sorted({a for a, _ in pairs})
                groups = [[b for a, b in pairs if a == g] for g in names]
                assert share == pytest.approx(stats.kruskal(*groups).statistic / (len(y) - 1))
            assert int(cells["n"].get_text()) == len(y)
            checked += 1
    assert checked >= 3


def test_relational_sweep_axes_are_the_ablation_settings(demo_site: Path) -> None:
    soup = soup_of(demo_site / "sweeps.html")
    sections = soup.select("main section.section")
    section = next(s for s in sections if s.find("h2").contents[0].strip() == "relational_f1 · spec onto-arms")
    titles = [t.get_text() for t in section.select("text.pcp-title")]
    full = [t.find("title").get_text() if t.find("title") else t.get_text() for t in section.select("text.pcp-title")]
    assert full[-1] == "relational_f1"
    assert "config.data.ontology" in full and "config.data.schema_views" in full
    assert all(len(t) <= len(f) for t, f in zip(titles, full, strict=True))


# -------------------------------------------------------------------------------- config diff


def test_diff_page_lists_exactly_the_keys_that_differ(demo_site: Path, demo_source: Path) -> None:
    docs = run_docs(demo_source)
    for rid, doc in docs.items():
        page = demo_site / "runs" / rid / "vs-baseline.html"
        base = doc.get("baseline")
        if not base or base not in docs:
            assert not page.exists(), rid
            continue
        a, b = fields(docs[base]), fields(doc)
        expected = sorted(k for k in set(a) | set(b) if a.get(k, "∅") != b.get(k, "∅"))
        soup = soup_of(page)
        rows = soup.select("#diff-table tbody tr")
        assert [text_of(r.find("th")) for r in rows] == expected, rid
        for r in rows:
            key = text_of(r.find("th"))
            cells = r.select("td.kv")
            if key in a and isinstance(a[key], str):
                assert text_of(cells[0]) == a[key]
            if key in b and isinstance(b[key], str):
                assert text_of(cells[1]) == b[key]


def test_spec03_r2_diff_is_data_and_lr(demo_site: Path) -> None:
    soup = soup_of(demo_site / "runs/spec03-r2/vs-baseline.html")
    keys = [r.find("th").get_text(strip=True) for r in soup.select("#diff-table tbody tr")]
    assert keys == ["config.train.lr", "data.dataset_version", "provenance.corpus_hash"]
    lr = soup.select("#diff-table tbody tr")[0]
    assert [td.get_text(strip=True) for td in lr.select("td.kv")] == ["3.000e−04", "6.000e−04"]


def test_run_page_has_the_config_diff_inside_held_constant(demo_site: Path) -> None:
    soup = soup_of(demo_site / "runs/spec03-r2/index.html")
    held = soup.find("section", id="held-constant")
    sub = held.find("h3", id="config-diff")
    assert sub is not None and sub.get_text() == "Config diff vs baseline"
    assert held.find("a", href="vs-baseline.html") is not None
    keys = [r.find("th").get_text(strip=True) for r in held.select("#config-diff-table tbody tr")]
    assert keys == ["config.train.lr", "data.dataset_version", "provenance.corpus_hash"]
    # no baseline, no diff subsection
    r1 = soup_of(demo_site / "runs/spec03-r1/index.html")
    assert r1.find("h3", id="config-diff") is None


def test_index_links_each_declared_pair_to_its_diff(demo_site: Path, demo_source: Path) -> None:
    docs = run_docs(demo_source)
    soup = soup_of(demo_site / "index.html")
    rows = soup.select("#diff-pairs tbody tr")
    linked = {tr.find("a")["href"] for tr in rows}
    expected = {f"runs/{rid}/vs-baseline.html" for rid, d in docs.items() if d.get("baseline") in docs}
    assert linked == expected
    for href in linked:
        assert (demo_site / href).is_file()
    r2 = next(tr for tr in rows if tr.find("a").get_text() == "spec03-r2")
    assert [td.get_text(strip=True) for td in r2.select("td")[1:3]] == ["spec03-r1", "3"]
    # the leaderboard keeps one link per run (its page); pairs are listed under "Across runs"
    assert not soup.select("#runs-table a[href$='vs-baseline.html']")


def test_a_big_site_lists_only_the_newest_config_diffs(demo_source: Path, tmp_path: Path) -> None:
    """Past `leaderboard_rows` the index's config diffs table, like the leaderboard, holds the newest runs
    (at 10,000 runs all 9,000 pairs were 3.3 MB of the page) and says how many there are in all."""
    src = tmp_path / "reports"
    shutil.copytree(demo_source, src)
    with (src / "obs.yaml").open("a", encoding="utf-8") as fh:
        fh.write("\nleaderboard_rows: 5\n")
    out = tmp_path / "site"
    build_published(BuildOptions(source=src, out=out, quiet=True, jobs=1))
    docs = run_docs(src)
    pairs = sum(1 for d in docs.values() if d.get("baseline") in docs)
    soup = soup_of(out / "index.html")
    listed = [tr.find("a").get_text() for tr in soup.select("#diff-pairs tbody tr")]
    newest = [a.get_text() for a in soup.select("#runs-table tbody tr td a[href^='runs/']")]
    assert len(listed) == 5 < pairs
    assert listed == [rid for rid in newest if rid in listed][:5]  # in the leaderboard's order: newest first
    summary = soup.select_one("#config-diffs + details > summary").get_text()
    assert summary.startswith(f"the newest 5 of {pairs} runs against their baseline")


# ------------------------------------------------------------------------------- what varies


def varying(docs: list[dict[str, Any]]) -> set[str]:
    fs = [fields(d) for d in docs]
    keys = {k for f in fs for k in f}
    return {
        k
        for k in keys
        if k.rsplit(".", 1)[-1] not in SEED_LEAVES and len({json.dumps(f.get(k, "∅"), default=str) for f in fs}) > 1
    }


def test_spec_page_what_varies(demo_site: Path, demo_source: Path) -> None:
    docs = run_docs(demo_source)
    for spec, page in (("onto-arms", "specs/onto-arms.html"), ("spec03", "specs/spec03.html")):
        members = [d for d in docs.values() if d["id"].startswith(spec.split("-")[0] + "-")]
        soup = soup_of(demo_site / page)
        table = soup.select_one("#what-varies table")
        keys = {text_of(tr.find("th")).split(" ")[0] for tr in table.select("tbody tr")}
        assert keys == varying(members), spec
    arms = soup_of(demo_site / "specs/onto-arms.html").select_one("#what-varies table")
    assert len(arms.select("thead th")) == 1 + 3  # one column per arm: the seeds share it


def test_campaign_page_what_varies_and_momentum(demo_site: Path, demo_source: Path) -> None:
    docs = [d for d in run_docs(demo_source).values() if d.get("condition") and d["id"].startswith("sepa-")]
    soup = soup_of(demo_site / "campaigns/sepa-campaign/index.html")
    keys = {text_of(tr.find("th")) for tr in soup.select("#what-varies tbody tr")}
    assert keys == varying(docs) == {"config.advantage_mode", "config.transform_mode"}
    rows = soup.select("#momentum-table tbody tr")
    assert len(rows) == 3
    # hand-computed: per seed, mean of the last 20 correct_rate points minus the 100 before; mean over seeds
    cond = "grpo+none"
    deltas = []
    for d in docs:
        if d["condition"] != cond:
            continue
        vals = [json.loads(x)["correct_rate"] for x in (d["_dir"] / "metrics.jsonl").read_text().splitlines() if x]
        deltas.append(np.mean(vals[-20:]) - np.mean(vals[-120:-20]))
    shown = rows[0].select("td")[2].find("span").get_text()
    assert shown == f"{100 * np.mean(deltas):+.1f} pp".replace("-", "−")


def test_spec_trend_matches_the_runs_by_date(demo_site: Path, demo_source: Path) -> None:
    docs = [d for d in run_docs(demo_source).values() if d["id"].startswith("onto-")]
    ordered = sorted(docs, key=lambda d: (str(d["date"]), d["id"]))
    values = [final_mean(d["_dir"], "relational_f1") for d in ordered]
    recent, base = np.mean(values[-2:]), np.mean(values[-9:-2])  # obs.yaml of the demo: 2 recent runs
    soup = soup_of(demo_site / "specs/onto-arms.html")
    row = soup.select_one("#trends-table tbody tr")
    cells = row.select("td")
    assert cells[0].contents[0].strip() == f"{100 * recent:.1f}%"
    assert cells[1].contents[0].strip() == f"{100 * base:.1f}%"
    assert "2 vs 7 of 9 runs" in cells[3].get_text()


# --------------------------------------------------------------------------------------- arms


def test_arms_page_overlays_the_arms_and_compares_them(demo_site: Path, demo_source: Path) -> None:
    docs = [d for d in run_docs(demo_source).values() if d.get("arm")]
    folder = demo_site / "arms/onto-arms"
    soup = soup_of(folder / "index.html")
    figs = soup.select("#arm-curves figure img")
    assert figs and all((folder / img["src"]).is_file() for img in figs)
    assert all(img.get("alt") for img in figs)
    rows = soup.select("#arm-runs tbody tr")
    assert [r.find("th").contents[0].strip() for r in rows] == ["full", "no-ontology", "no-schema"]
    for r in rows:
        arm = r.find("th").contents[0].strip()
        expected = [
            final_mean(d["_dir"], "relational_f1") for d in sorted(docs, key=lambda d: d["seed"]) if d["arm"] == arm
        ]
        shown = [float(a.get_text().replace("−", "-")) for a in r.select("td a")]
        assert shown == pytest.approx(expected, abs=5e-5)
    stats = soup.select("#campaign-stats tbody tr")
    assert [r.find("th").get_text(strip=True) for r in stats] == ["no-ontology", "no-schema"]
    analysis = json.loads((folder / "analysis.json").read_text())
    assert analysis["stats"]["baseline_condition"] == "full"
    index = soup_of(demo_site / "index.html")
    assert index.select_one('#arms ~ .cards a[href="arms/onto-arms/index.html"]') is not None


# ---------------------------------------------------------------------------------- provenance


def test_leaderboard_filters_by_corpus_hash(demo_site: Path, demo_source: Path) -> None:
    docs = run_docs(demo_source)
    soup = soup_of(demo_site / "index.html")
    select = soup.select_one('select[data-facet="prov-corpus-hash"]')
    assert select is not None
    hashes = {d["provenance"]["corpus_hash"] for d in docs.values() if d.get("provenance")}
    options = {o["value"] for o in select.find_all("option") if o["value"]}
    assert options == hashes
    for tr in soup.select("#runs-table tbody tr"):
        rid = tr.find("td").find("a").get_text()  # the id may carry <wbr> break points
        assert tr["data-prov-corpus-hash"] == (docs[rid].get("provenance") or {}).get("corpus_hash", "")


# --------------------------------------------------------------------------------------- gates


def expected_gates(doc: dict[str, Any]) -> list[str]:
    """The demo's first four gates, by hand from the source files: ✓ pass, ✗ fail, – not applicable."""
    d = doc["_dir"]
    out = []
    probe = d / "probe.jsonl"
    if probe.exists():
        recs = [json.loads(x) for x in probe.read_text().splitlines() if x.strip()]
        out.append("✓" if all(r["renderable"] for r in recs) else "✗")
        fams: dict[str, list[bool]] = {}
        for r in recs:
            fams.setdefault(r["family"], []).append(bool(r["exact"]))
        out.append("✓" if min(sum(v) / len(v) for v in fams.values()) >= 0.5 else "✗")
    else:
        out += ["–", "–"]
    # the reward-collapse canary: only runs that log reward series are checked; grpo-rl-07 collapsed
    has_reward = False
    if (d / "metrics.jsonl").exists():
        first = json.loads((d / "metrics.jsonl").read_text().splitlines()[0])
        has_reward = any("reward" in k for k in first)
    out.append("✗" if doc["id"] == "grpo-rl-07" else ("✓" if has_reward else "–"))
    gate = d / "gate.json"
    out.append(("✓" if json.loads(gate.read_text())["passed"] else "✗") if gate.exists() else "–")
    return out


def _exact_rate(d: Path) -> float:
    recs = [json.loads(x) for x in (d / "probe.jsonl").read_text().splitlines() if x.strip()]
    return sum(bool(r["exact"]) for r in recs) / len(recs)


def composite_gate(doc: dict[str, Any], docs: dict[str, dict[str, Any]], compiler: str) -> str | None:
    """The demo's fifth gate where its outcome follows from the files alone (None where it needs the paired
    interval, which tests/unit/test_gates.py checks): a failed compiler gate fails it; a rung on the frozen probe
    at least 5 pp above the frozen baseline passes its "or", leaving the compiler gate's answer."""
    if compiler == "✗":
        return "✗"
    frozen = docs.get("spec03-r1")
    d = doc["_dir"]
    same_probe = frozen is not None and doc.get("contract", {}).get("probe") == frozen.get("contract", {}).get("probe")
    if frozen is None or doc.get("spec") != "spec03" or not same_probe or not (d / "probe.jsonl").exists():
        return None
    if _exact_rate(d) >= _exact_rate(frozen["_dir"]) + 0.05:
        return compiler
    return None


def test_gate_strip_matches_hand_computed_expectations(demo_site: Path, demo_source: Path) -> None:
    docs = run_docs(demo_source)
    soup = soup_of(demo_site / "index.html")
    headers = [th.get_text(" ", strip=True) for th in soup.select("#runs-table thead th")]
    assert headers[-1].startswith("Gates")
    seen = 0
    for tr in soup.select("#runs-table tbody tr"):
        rid = tr.find("td").find("a").get_text()  # the id may carry <wbr> break points
        marks = tr.select("td.gates .gate-strip > span")
        texts = [m.get_text() for m in marks]
        assert texts[:4] == expected_gates(docs[rid]), rid
        # the composite gate: compiler and (ci_low(frozen.delta) > 0 or exact >= frozen.exact + 0.05), three-valued
        # (a failed part fails an "and", an unknown one leaves it unknown); by hand where the rates decide it
        assert len(texts) == 5
        composite = composite_gate(docs[rid], docs, texts[3])
        if composite is not None:
            assert texts[4] == composite, rid
        for m in marks:  # a text alternative on every mark, not colour alone
            assert m["role"] == "img" and m["aria-label"].split(":")[0] in {
                "renderable = 100%",
                "no family below 50% exact",
                "reward-collapse canary not fired",
                "compiler gate (gate.json)",
                "compiler clean and beats the frozen baseline",
            }
            word = {"✓": "passed", "✗": "failed", "–": "not applicable"}[m.get_text()]
            assert f": {word} (" in m["aria-label"]
        seen += 1
    assert seen == len(docs)
    r2 = soup.select_one('#runs-table tbody tr td a[href="runs/spec03-r2/index.html"]').find_parent("tr")
    family = r2.select("td.gates .gate-strip > span")[1]
    assert "pipeline_lane" in family["aria-label"] and "18.8%" in family["aria-label"]  # 6/32 exact


# --------------------------------------------------------------------------------- incremental


def test_one_changed_run_re_renders_only_the_arm_group_it_feeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "reports"
    shutil.copytree(REPORTS, source)
    out = tmp_path / "site"
    build_published(BuildOptions(source=source, out=out, jobs=1, quiet=True))
    import obs.render.across_pages as across

    made: list[str] = []
    real = across.arms_group_pages

    def counting(group: Any, *args: Any) -> dict[str, bytes]:
        made.append(group.slug)
        return real(group, *args)

    monkeypatch.setattr(across, "arms_group_pages", counting)
    notes = source / "spec03/r4/notes.md"
    notes.write_text(notes.read_text() + "\nOne more line.\n")
    build_published(BuildOptions(source=source, out=out, jobs=1, quiet=True))
    assert made == []  # a spec03 run does not feed the arms page
    assert (out / "arms/onto-arms/fig-1.svg").is_file()
    metrics = source / "onto-arms/no-schema_s2/metrics.jsonl"
    metrics.write_text(metrics.read_text().replace('"relational_f1": 0.', '"relational_f1": 0.0', 1))
    build_published(BuildOptions(source=source, out=out, jobs=1, quiet=True))
    assert made == ["onto-arms"]


# -------------------------------------------------------------------------------- any two runs


def compare_data(site: Path) -> dict[str, Any]:
    node = soup_of(site / "compare.html").find("script", id="compare-data")
    assert node is not None and node.get("type") == "application/json"
    return json.loads(node.string)


def test_compare_page_data_diffs_every_pair_as_the_run_yaml_says(demo_site: Path, demo_source: Path) -> None:
    """The page's table (what its script diffs) agrees with the run.yaml files for every pair of runs."""
    docs = run_docs(demo_source)
    data = compare_data(demo_site)
    runs = data["runs"]
    assert sorted(r["id"] for r in runs) == sorted(docs)
    keys = data["keys"]
    for ra in runs:
        fa = fields(docs[ra["id"]])
        for rb in runs:
            fb = fields(docs[rb["id"]])
            expected = sorted(k for k in set(fa) | set(fb) if fa.get(k, "∅") != fb.get(k, "∅"))
            got = [k for i, k in enumerate(keys) if ra["cells"][i] != rb["cells"][i]]
            assert got == expected, (ra["id"], rb["id"])
    # a value is shown as the site shows it everywhere else
    spec_r2 = next(r for r in runs if r["id"] == "spec03-r2")
    lr = keys.index("config.train.lr")
    assert data["values"][lr][spec_r2["cells"][lr]] == "6.000e−04"


def test_compare_page_without_script_shows_the_first_declared_pair(demo_site: Path, demo_source: Path) -> None:
    docs = run_docs(demo_source)
    first = min(rid for rid, d in docs.items() if d.get("baseline") in docs)
    base = docs[first]["baseline"]
    soup = soup_of(demo_site / "compare.html")
    assert soup.select_one("#compare-a option[selected]")["value"] == base
    assert soup.select_one("#compare-b option[selected]")["value"] == first
    assert soup.find(id="compare-pick").has_attr("hidden")  # the pickers need the script
    shown = [r.find("th").get_text(strip=True) for r in soup.select("#compare-table tbody tr")]
    static = soup_of(demo_site / "runs" / first / "vs-baseline.html")
    assert shown == [r.find("th").get_text(strip=True) for r in static.select("#diff-table tbody tr")]
    # every run can be picked, grouped by spec
    options = [o["value"] for o in soup.select("#compare-a option")]
    assert sorted(options) == sorted(slugify(rid) for rid in docs)  # a run id with "/" has a page name without
    groups = {g["label"] for g in soup.select("#compare-a optgroup")}
    assert {d["spec"] for d in docs.values() if d.get("spec")} <= groups


def test_compare_page_is_linked_from_the_index_and_each_diff_page(demo_site: Path) -> None:
    assert soup_of(demo_site / "index.html").select_one("#across a[href='compare.html']") is not None
    link = soup_of(demo_site / "runs/spec03-r2/vs-baseline.html").select_one("a[href*='compare.html']")
    assert link is not None and link["href"] == "../../compare.html?a=spec03-r1&b=spec03-r2"
