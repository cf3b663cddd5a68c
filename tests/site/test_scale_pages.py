"""The pages over all runs stay bounded at 100,000 runs (issue 32): no page or data file over 2 MB.

Rendered from synthetic summaries (tests/synthetic_site.py), not built runs: these pages are made from
summaries only. At 100,000 runs: the index (given its 10,000 spec ladders: 2.7 MB when it had a tile for
each), its leaderboard data files and the paged spec ladders list, compare.html and its data files,
index.json and its shards, the ledger's pages. The sweeps page's cost is its table rows, so its
bound is checked at 5,000 runs in one group (its chart draws 300, the full table is paged).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from obs import urls
from obs.config import SiteConfig
from obs.manifest import manifest_files
from obs.model import Spec
from obs.render import across_pages as across
from obs.render import index_pages
from obs.render.datafile import read_data_file
from obs.render.site import Renderer, SiteMeta
from synthetic_site import synthetic_summaries

MB2 = 2_000_000


@pytest.fixture(scope="module")
def big() -> list:
    return synthetic_summaries(100_000, decided=0.02)


@pytest.fixture(scope="module")
def renderer() -> Renderer:
    return Renderer(SiteMeta(title="scale", source_name="runs", has_specs=True))


def _site(summaries: list) -> index_pages.SitePages:
    specs = {s.spec: Spec(id=s.spec, source_dir=__import__("pathlib").Path(s.spec)) for s in summaries}
    layout = urls.SiteLayout.make({s.id: s.slug for s in summaries}, specs, [])
    return index_pages.SitePages(SiteConfig(), specs, {}, layout)


def _bounded(pages: dict[str, bytes]) -> None:
    too_big = {rel: len(data) for rel, data in pages.items() if len(data) > MB2}
    assert not too_big, too_big


def test_index_and_leaderboard_data_at_100000_runs(big: list, renderer: Renderer) -> None:
    """With every spec ladder's context passed in, as the build does: 10,000 ladders of 10 runs."""
    site = _site(big)
    ladders = index_pages._spec_tiles(big, site)
    assert len(ladders) == 10_000
    pages = index_pages._index_page(big, site, renderer, ladders, [], {})
    _bounded(pages)
    html = pages[urls.INDEX].decode()
    src = re.search(r'data-rows-src="([^"]+)"', html)
    assert src is not None
    files = src.group(1).split(" ")
    assert files[0] == urls.LEADERBOARD_DATA and len(files) == 10
    ids = []
    for k, name in enumerate(files, start=1):
        meta, records = read_data_file(pages[name])
        assert meta["part"] == k
        ids += [r["id"] for r in records]
    assert len(ids) == len(set(ids)) == 100_000  # every run once, newest first as the page's rows
    # the page holds the newest `leaderboard_rows` runs and as many config diffs, not every run
    assert html.count("<tr") <= 2 * SiteConfig().leaderboard_rows + 10
    # the index holds the most recently active spec ladders; every ladder is on the paged spec ladders list
    shown = re.findall(r'<div class="label">spec</div><h3><a href="specs/([^"]+)\.html"', html)
    assert len(shown) == index_pages.INDEX_SPECS
    assert "<strong>10,000</strong>spec ladders" in html and f'href="{urls.SPEC_LIST}"' in html
    newest = {ctx["slug"]: max(s.date for s in ctx["runs"]) for ctx in ladders}
    cut = newest[shown[-1]]
    assert all(newest[slug] >= cut for slug in shown)
    assert sum(1 for d in newest.values() if d > cut) <= len(shown)  # none newer left off
    lists = [urls.numbered(urls.SPEC_LIST, k) for k in range(1, 21)]  # 10,000 ladders, 500 a page
    assert sorted(rel for rel in pages if rel.startswith("specs")) == sorted(lists)
    listed = [slug for rel in lists for slug in re.findall(r'<h3><a href="specs/([^"]+)\.html"', pages[rel].decode())]
    assert listed == sorted(ctx["slug"] for ctx in ladders)  # every ladder once, by id
    second = pages[lists[1]].decode()
    assert 'href="specs.html" rel="prev"' in second and 'href="specs-3.html" rel="next"' in second
    assert "spec ladders 501–1,000 of 10,000" in second


def test_compare_page_at_100000_runs(big: list, renderer: Renderer) -> None:
    pages = across.compare_page(big, SiteConfig(), renderer)
    _bounded(pages)
    html = pages[urls.COMPARE].decode()
    assert 'id="compare-data"' not in html and "data-paged" in html
    assert html.count('type="checkbox"') < 10  # no box per run: the pick list is searched, a page at a time
    assert "<option" not in html.split('id="compare-pick"')[1].split("</div>")[0]  # runs typed by id, no list
    src = re.search(r'data-compare-src="([^"]+)"', html)
    assert src is not None
    names = src.group(1).split(" ")
    assert names == [urls.compare_data(k) for k in range(1, 11)]
    first, data = read_data_file(pages[names[0]])
    assert first["part"] == 1 and {"keys", "axes", "values", "runs"} <= set(data)
    assert sum(len(read_data_file(pages[n])[1]["runs"]) for n in names) == 100_000


def test_manifest_shards_at_100000_runs(big: list) -> None:
    files = manifest_files(big, title="t", specs=[], campaigns=[], errors=0, warnings=0)
    _bounded(files)
    doc = json.loads(files[urls.MANIFEST])
    assert doc["run_count"] == 100_000 and len(files[urls.MANIFEST]) < 100_000
    assert sum(s["count"] for s in doc["run_shards"]) == 100_000


def test_ledger_pages_at_100000_runs(big: list, renderer: Renderer) -> None:
    pages: dict[str, bytes] = {}
    index_pages._ledger_page(big, renderer, index_pages.no_memo, pages)
    _bounded(pages)
    decided = sum(1 for s in big if s.decision and s.decision.verdict)
    n = -(-decided // 500)
    assert sorted(pages) == sorted(urls.numbered(urls.LEDGER, k) for k in range(1, n + 1))
    rows = [
        re.findall(r'<tr id="decision-([^"]+)"', pages[urls.numbered(urls.LEDGER, k)].decode()) for k in range(1, n + 1)
    ]
    assert all(len(r) == 500 for r in rows[:-1])
    assert len({slug for r in rows for slug in r}) == decided  # every decision on exactly one page
    second = pages[urls.numbered(urls.LEDGER, 2)].decode()
    assert 'href="ledger.html" rel="prev"' in second and 'href="ledger-3.html" rel="next"' in second


def test_sweeps_bounded_with_a_paged_full_table(renderer: Renderer) -> None:
    runs = synthetic_summaries(5_000, decided=0)
    pages = across.sweeps_page(runs, SiteConfig(), renderer)
    _bounded(pages)
    html = pages[urls.SWEEPS].decode()
    assert "the 300 best-ranked of the group's 5,000 runs" in html
    assert html.count('<tr>\n<td class="num" data-sort=') == 300
    tables = sorted(rel for rel in pages if rel.startswith("sweeps/") and rel.endswith(".html"))
    assert "sweeps/exact/importance.json" in pages  # the group's parameter importance, published
    assert tables[0] == "sweeps/exact/runs-10.html" and len(tables) == 10  # 5,000 rows, 500 a page
    listed = [
        m for rel in tables for m in re.findall(r'<td data-sort="([^"]+)" data-label="Run">', pages[rel].decode())
    ]
    assert sorted(listed) == sorted(s.id for s in runs)
    assert 'href="../../sweeps.html#sweep-exact"' in pages[urls.sweep_table("exact", 1)].decode()


def test_many_small_sweeps_are_cut_into_pages_under_2mb(renderer: Renderer) -> None:
    """Grouped by spec, 10,000 runs are 1,000 small charts: their fixed parts (axes, ticks, table heads)
    counted too, every sweeps page stays under 2 MB (4 MB pages when only drawn lines were counted)."""
    runs = synthetic_summaries(10_000, decided=0)
    cfg = SiteConfig()
    cfg.sweeps = {**cfg.sweeps, "group_by": "spec"}
    pages = across.sweeps_page(runs, cfg, renderer)
    _bounded(pages)
    n = sum(1 for rel in pages if re.fullmatch(r"sweeps(-\d+)?\.html", rel))
    assert n > 1
    charts = sum(pages[urls.numbered(urls.SWEEPS, k)].decode().count('<svg class="pcp"') for k in range(1, n + 1))
    assert charts == 1_000


def test_tag_cohorts_are_paged(renderer: Renderer) -> None:
    """The tag cohorts page lists 500 cohorts a page (1,000 comparable sets × tags: 5.2 MB in one page)."""
    from obs.analysis.cohorts import RunPoint, cohorts_by_group, ordered
    from obs.render.cohort_page import render_cohort_pages

    runs = synthetic_summaries(6_000, decided=0)
    points = [RunPoint(s.id, s.tags, s.spec, s.headline.value, True) for s in runs]
    cohorts = ordered([c for _, cs in cohorts_by_group(points, {}).values() for c in cs])
    assert len(cohorts) > 1_000
    pages = render_cohort_pages(cohorts, {s.id: s.slug for s in runs}, renderer, {})
    _bounded(pages)
    n = -(-len(cohorts) // 500)
    assert sorted(pages) == sorted(urls.numbered(urls.COHORTS, k) for k in range(1, n + 1))
    rows = sum(pages[rel].decode().split("<tbody>")[1].count("<tr>") for rel in pages)
    assert rows == len(cohorts)


def test_cohorts_data_is_paged_without_run_lists(tmp_path) -> None:
    """cohorts.json was 7.3 MB at 10,000 runs: each cohort listed its runs with and without the tag. The sets'
    statistics alone, cut into files of 1.5 MB (cohorts-2.json, ...), read back whole by the next build."""
    from obs.analysis.cohorts import RunPoint, cohorts_by_group, groups_from_json
    from obs.publish.extras import COHORTS_PART, cohorts_data, read_cohorts_data

    runs = synthetic_summaries(20_000, decided=0)
    points = [RunPoint(s.id, s.tags, s.spec, s.headline.value, True) for s in runs]  # 2,000 sets
    points += [RunPoint(f"one-{s.id}", s.tags, "one set", s.headline.value, True) for s in runs[:10_000]]
    groups = cohorts_by_group(points, {})
    files = dict(cohorts_data(groups))
    _bounded(files)
    assert len(files) > 1 and sorted(files) == sorted(
        urls.numbered(urls.COHORTS_DATA, k) for k in range(1, len(files) + 1)
    )
    first = json.loads(files[urls.COHORTS_DATA])
    assert first["parts"] == [urls.numbered(urls.COHORTS_DATA, k) for k in range(1, len(files) + 1)]
    assert all(json.loads(data)["part"] == k for k, data in enumerate(files.values(), start=1))
    # each part within the budget as written, or one set alone
    assert all(len(data) <= COHORTS_PART or len(json.loads(data)["groups"]) == 1 for data in files.values())
    assert max(len(data) for data in files.values()) > 0.9 * COHORTS_PART  # the budget is used, not undershot
    assert not any(b"s00001-r1" in data for data in files.values())  # no run listed
    for rel, data in files.items():
        (tmp_path / rel).write_bytes(data)
    stored = read_cohorts_data(tmp_path / urls.COHORTS_DATA)
    assert set(stored) == set(groups)  # every set once, over all parts
    known = groups_from_json(stored)
    assert cohorts_by_group(points, known) == groups  # reused with their runs derived: as computed afresh
    (tmp_path / urls.numbered(urls.COHORTS_DATA, 2)).write_bytes(b"{broken")
    assert len(read_cohorts_data(tmp_path / urls.COHORTS_DATA)) < len(groups)  # one bad part loses its own sets


def test_cohorts_data_files_are_made_one_at_a_time() -> None:
    """Every set's statistics and every data file were held together (the cohorts' peak, ~1.5 KB a cohort): made in
    turn, twice the sets make twice the files for about the same peak, the memory of one file's sets."""
    import tracemalloc

    from obs.analysis.cohorts import RunPoint, cohorts_by_group
    from obs.publish.extras import cohorts_data

    runs = synthetic_summaries(16_000, decided=0)

    def peak_of(n: int) -> tuple[int, int]:
        points = [RunPoint(s.id, s.tags, s.spec, s.headline.value, True) for s in runs[:n]]
        groups = cohorts_by_group(points, {})
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            files = sum(1 for _ in cohorts_data(groups))  # each let go as the next is made
            return files, tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()

    (few, small), (many, large) = peak_of(8_000), peak_of(16_000)
    assert many >= 2 * few - 1 and few >= 2, (few, many)
    assert large < 1.4 * small, f"{few} files peaked at {small} bytes, {many} at {large}"


def _cohort_points(n: int) -> list:
    """`n` runs in ladders of ten with 0-3 of six tags and a headline, some sets of equal headlines (no interval)."""
    import random

    from obs.analysis.cohorts import RunPoint

    rng = random.Random(7)
    tags = ["a", "b", "c", "d", "e", "f"]
    points = []
    for i in range(n):
        spec = i // 10
        value = 0.5 if spec % 7 == 0 else rng.random()  # every seventh set: no variation, each cohort a problem
        points.append(
            RunPoint(
                f"s{spec}-r{i % 10}", tuple(rng.sample(tags, rng.randint(0, 3))), f"m · s{spec}", value, spec % 3 > 0
            )
        )
    return points


def test_packed_cohorts_are_the_cohorts_welch_gives_in_page_order() -> None:
    """`cohorts_by_group` holds its cohorts as columns (`PackedGroups`): each read back is the cohort made
    directly from the runs with `diff` (floats, Nones and problems alike), and `in_page_order` is `ordered`'s
    order of those."""
    from obs.analysis.cohorts import Cohort, cohorts_by_group, ordered
    from obs.analysis.learning import diff

    points = _cohort_points(600)
    expected: dict[str, list[Cohort]] = {}
    for name in sorted({p.group for p in points}):
        group = [p for p in points if p.group == name]
        for tag in sorted({t for p in group for t in p.tags}):
            with_tag = [p for p in group if tag in p.tags]
            without = [p for p in group if tag not in p.tags]
            if with_tag and without:
                d = diff([p.value for p in with_tag], [p.value for p in without], "runs")
                c = Cohort(tag, name, group[0].higher_is_better, tuple(p.id for p in with_tag), d)
                expected.setdefault(name, []).append(c)
    groups = cohorts_by_group(points)
    assert {name: cs for name, (_, cs) in groups.items()} == expected
    made = [c for cs in expected.values() for c in cs]
    assert any(c.diff.problem for c in made) and any(c.diff.low is not None for c in made)  # both kinds packed
    assert list(groups.in_page_order()) == ordered(made)
    assert groups.in_page_order()[3:9] == ordered(made)[3:9] and groups.tags() == {c.tag for c in made}


def test_cohorts_are_held_packed() -> None:
    """A `Cohort` with its `Diff`, floats and runs held ~440 bytes, ~37 MB for the ~80,000 cohorts of 100,000
    runs, held from the tests to the last page (the build's peak, issue 32); here, with its set's share, it was
    ~600 bytes. Packed it is ~200 (~150 a cohort, ~270 a set of ~6 cohorts)."""
    import gc
    import tracemalloc

    from obs.analysis.cohorts import cohorts_by_group

    points = _cohort_points(20_000)
    cohorts_by_group(points[:50])  # the statistics' imports, before counting
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        groups = cohorts_by_group(points)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    n = sum(len(cs) for _, cs in groups.values())
    assert n > 10_000 and held / n < 250, f"{held / n:.0f} bytes a cohort"


def _most_alive_at(monkeypatch: pytest.MonkeyPatch, cls: type, module: object, function: str) -> list[int]:
    """Count the live objects of `cls`; the returned list's one number becomes the most alive at any call of
    `module.function` (the moment a page's charts are laid out)."""
    live, most = [0], [0]
    made, real = cls.__init__, getattr(module, function)

    def init(self: object, *args: object, **kw: object) -> None:
        made(self, *args, **kw)
        live[0] += 1

    def gone(self: object) -> None:
        live[0] -= 1

    def counted(*args: object, **kw: object) -> object:
        most[0] = max(most[0], live[0])
        return real(*args, **kw)

    monkeypatch.setattr(cls, "__init__", init)
    monkeypatch.setattr(cls, "__del__", gone, raising=False)
    monkeypatch.setattr(module, function, counted)
    return most


def test_sweeps_are_made_a_page_at_a_time(renderer: Renderer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's place on its chart (`SweepRun`) lives while its page is made, never all runs' at once: holding
    every sweep until the pages were cut was ~2.7 KB a run at 10,000 runs. Counted as the charts are laid out."""
    from obs.analysis import sweeps as sweeps_mod
    from obs.render import pcp

    runs = synthetic_summaries(2_000, decided=0)
    cfg = SiteConfig()
    cfg.sweeps = {**cfg.sweeps, "group_by": "spec"}  # 200 charts of 10 runs, on several pages
    most = _most_alive_at(monkeypatch, sweeps_mod.SweepRun, pcp, "layout")
    pages = across.sweeps_page(runs, cfg, renderer)
    n = sum(1 for rel in pages if re.fullmatch(r"sweeps(-\d+)?\.html", rel))
    assert n >= 3 and most[0] > 0
    assert most[0] <= 2 * len(runs) // n, (most[0], n)  # a page's charts (~1/n of the runs), not all 2,000


def test_a_sweeps_importance_is_read_back_with_its_page(renderer: Renderer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each sweep's parameter importance is written by the first pass and read back for its chart by the second:
    every sweep's held from the first pass to the last page was ~15 MB at 100,000 runs in sweeps of ten. Read
    back, it draws the same pages again (the 2,000-run site is byte-identical to the one that held them)."""
    from obs.analysis import importance as importance_mod
    from obs.render import pcp

    runs = synthetic_summaries(2_000, decided=0)
    cfg = SiteConfig()
    cfg.sweeps = {**cfg.sweeps, "group_by": "spec"}  # 200 charts of 10 runs, on several pages
    most = _most_alive_at(monkeypatch, importance_mod.Importance, pcp, "layout")
    pages = dict(across.sweeps_page(runs, cfg, renderer))
    n = sum(1 for rel in pages if re.fullmatch(r"sweeps(-\d+)?\.html", rel))
    assert n >= 3 and most[0] > 0 and sum(1 for rel in pages if rel.endswith("importance.json")) == 200
    assert most[0] <= 2 * 200 // n, (most[0], n)  # a page's sweeps (~1/n of them), not all 200
    monkeypatch.undo()
    assert pages == dict(across.sweeps_page(runs, cfg, renderer))


def test_a_spec_ladder_is_analysed_with_its_page_only(renderer: Renderer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index lists every ladder from its tile (id, runs, promoted); a ladder's analyses (history, claim,
    looks, trends) are made when its page is, and not at all when its page is kept from the previous build.
    Held for every spec from the index to the last spec page they were ~3.7 KB a run at 10,000 runs."""
    runs = synthetic_summaries(600, decided=0.1)
    site = _site(runs)
    made: list[str] = []
    real_context = index_pages.spec_context

    def counted(spec: Spec, *args: object, **kw: object) -> dict:
        made.append(spec.id)
        return real_context(spec, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(index_pages, "spec_context", counted)
    by_name = {f.name: f for f in index_pages.FAMILIES}
    order = [by_name[n] for n in ("arms", "campaigns", "seed levels", "efficiency", "index")]
    pages = index_pages.render_site_pages(runs, site, renderer, families=order)
    assert made == [] and urls.INDEX in pages  # the index and its tiles: no ladder analysed
    pages = index_pages.render_site_pages(runs, site, renderer, families=[*order, by_name["specs"]])
    assert sorted(made) == sorted(site.specs) and len(made) == len(set(made))  # each ladder once, with its page
    assert all(urls.spec_page(site.layout.spec_slug(sid)) in pages for sid in site.specs)
    made.clear()

    def kept(group: str, inputs: object, make: object) -> dict[str, bytes]:
        return {} if group.startswith("spec:") else make()  # type: ignore[operator]

    index_pages.render_site_pages(runs, site, renderer, kept, families=[*order, by_name["specs"]])
    assert made == []  # every spec page kept: no ladder analysed again


def test_tag_cohorts_are_written_as_made_with_the_bytes_made_all_at_once(renderer: Renderer, tmp_path: Path) -> None:
    """`cohorts_page` writes its data files, then each page, as made, holding none of them together (at 100,000
    tagged runs they were ~2 KB a run at the end of a build): the same files and bytes as making every page and
    data file first, the tags no set compares listed on the first page."""
    import dataclasses

    from obs.analysis.cohorts import RunPoint, cohorts_by_group, ordered
    from obs.publish.extras import cohorts_data, cohorts_page
    from obs.render.cohort_page import render_cohort_pages

    runs = [dataclasses.replace(s, comparable=f"accuracy · {s.spec}") for s in synthetic_summaries(1_500, decided=0)]
    runs[0] = dataclasses.replace(runs[0], tags=(*runs[0].tags, "only-here"))  # splits no set: listed alone
    points = [
        RunPoint(s.id, s.tags, s.comparable + (f" · {s.probe_key}" if s.probe_key else ""), s.headline.value, True)
        for s in runs
    ]
    groups = cohorts_by_group(points, {})
    cohorts = ordered([c for _, cs in groups.values() for c in cs])
    tagged: dict[str, list[str]] = {}
    for s in runs:
        for tag in s.tags:
            tagged.setdefault(tag, []).append(s.id)
    expected = {
        **render_cohort_pages(cohorts, {s.id: s.slug for s in runs}, renderer, tagged),
        **dict(cohorts_data(groups)),
    }
    written: list[tuple[str, bytes]] = []
    n_pages = cohorts_page(runs, renderer, tmp_path / "none.json", lambda rel, data: written.append((rel, data)))
    assert dict(written) == expected and len(written) == len(expected)
    assert n_pages == sum(1 for rel in expected if rel.endswith(".html")) > 1
    assert "only-here" in expected[urls.COHORTS].decode()
