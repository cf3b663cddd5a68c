"""The run page's case browser and failure groups, and a campaign's item-by-item view of two systems,
as a reader uses them in Chromium. Expected results are computed here from the run's probe.jsonl and
analysis.json, not from what the script does.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browserkit import PageWatch, ServedSite, new_watched_context, serve, settle
from playwright.sync_api import Browser, Page

from obs.build import BuildOptions
from obs.publish.extras import build_published

RUN = "runs/spec03-r2/index.html"
REPO = Path(__file__).resolve().parents[2]
COUNT = "() => document.querySelectorAll('#cases .case-item').length"
TEXT_FIELDS = ("id", "prompt", "expected", "actual", "note", "failure_class")


def probe(demo_source: Path) -> list[dict[str, Any]]:
    path = demo_source / "spec03/r2/probe.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def status(page: Page) -> str:
    # textContent: a section far below is laid out only near the viewport (content-visibility: auto),
    # and until then its innerText is empty
    return page.locator("#cases .case-status").text_content() or ""


def matching(page: Page) -> int:
    """The number of matching cases the browser reports ("Showing 20 of 59 matching cases ...")."""
    text = status(page)
    assert " of " in text, text
    return int(text.split(" of ")[1].split()[0].replace(",", "").rstrip("+"))


def listed(page: Page) -> None:
    """Wait until the browser has listed the cases of its current filter (it is aria-busy while it
    reads their data files): a condition, not a pause, so a loaded machine cannot outrun it."""
    page.wait_for_selector("#cases[data-ready]:not([aria-busy])", state="attached")


def show_all(page: Page) -> list[str]:
    """Press "show more" until every match is listed; the ids listed."""
    more = page.locator("#cases [data-more]")
    listed(page)
    while more.is_visible():
        more.click()
        listed(page)
    return page.eval_on_selector_all("#cases .case-item .cid", "els => els.map(e => e.textContent)")


@pytest.fixture
def browser_page(page: Page, watch: PageWatch, served_demo: ServedSite) -> Page:
    page.goto(served_demo.url(RUN))
    settle(page)
    # the browser fills its list only when it nears the viewport (cases.js), and sections far below
    # are laid out (and their text readable) only then too
    page.locator("#cases").scroll_into_view_if_needed()
    page.wait_for_selector("#cases[data-ready]")
    return page


def test_the_browser_fills_only_when_the_reader_nears_it(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    """Opened at its top, the page does not read the case data (the browser's first fill is one of the
    longest tasks of the load); scrolled to, the browser fills before it is in view."""
    page.goto(served_demo.url(RUN))
    settle(page)
    page.wait_for_timeout(300)
    assert page.evaluate(COUNT) == 0
    assert page.eval_on_selector("#cases", "c => !c.hasAttribute('data-ready')")
    assert page.evaluate("performance.getEntriesByType('resource').every(e => !/cases-rows/.test(e.name))")
    assert page.eval_on_selector("#cases form.case-filters", "f => !f.hidden")  # wired: its controls are there
    # one screen above the browser is near enough
    page.evaluate(
        "scrollTo(0, document.querySelector('#cases').getBoundingClientRect().top + scrollY - 1.5 * innerHeight)"
    )
    page.wait_for_selector("#cases[data-ready]", state="attached")
    assert page.evaluate(COUNT) == 20


def test_every_case_is_listed_and_pages_in(browser_page: Page, demo_source: Path) -> None:
    cases = probe(demo_source)
    assert matching(browser_page) == len(cases)
    assert browser_page.evaluate(COUNT) == 20
    assert sorted(show_all(browser_page)) == sorted(c["id"] for c in cases)


@pytest.mark.parametrize(
    ("control", "value", "keep"),
    [
        ("split", "dev", lambda c: c.get("split") == "dev"),
        ("family", "pipeline_lane", lambda c: c.get("family") == "pipeline_lane"),
        ("group", "layout_drift (16)", lambda c: c.get("failure_class") == "layout_drift"),
    ],
)
def test_filters_keep_the_cases_they_name(
    browser_page: Page, demo_source: Path, control: str, value: str, keep: Any
) -> None:
    browser_page.locator(f'#cases select[name="{control}"]').select_option(label=value)
    browser_page.wait_for_function("() => document.querySelector('#cases .case-status').textContent.includes('of')")
    wanted = sorted(c["id"] for c in probe(demo_source) if keep(c))
    assert matching(browser_page) == len(wanted)
    assert sorted(show_all(browser_page)) == wanted
    assert f"{control}=" in browser_page.evaluate("location.hash")


def test_outcome_filter_counts_the_failing_cases(browser_page: Page, served_demo: ServedSite) -> None:
    analysis = json.loads((served_demo.root / "runs/spec03-r2/analysis.json").read_text(encoding="utf-8"))
    failing = sorted(i for g in analysis["failures"] for i in g["case_ids"])
    browser_page.locator('#cases select[name="outcome"]').select_option("failing")
    listed(browser_page)
    assert matching(browser_page) == len(failing)
    assert sorted(show_all(browser_page)) == failing
    browser_page.locator('#cases select[name="outcome"]').select_option("passing")
    listed(browser_page)
    assert matching(browser_page) == 160 - len(failing)


def test_flip_filter_matches_the_paired_comparison(browser_page: Page, served_demo: ServedSite) -> None:
    analysis = json.loads((served_demo.root / "runs/spec03-r2/analysis.json").read_text(encoding="utf-8"))
    flips = {f["check"]: f for f in analysis["comparison"]["flips"]}
    for check in ("exact", "renderable"):
        browser_page.locator('#cases select[name="check"]').select_option(check)
        for flip, key in (("broke", "right_to_wrong"), ("fixed", "wrong_to_right")):
            browser_page.locator('#cases select[name="flip"]').select_option(flip)
            listed(browser_page)
            assert sorted(show_all(browser_page)) == sorted(flips[check][key]), (check, flip)
    # side by side: a case that broke shows ✗ here, "was ✓", and the baseline's ✓
    browser_page.locator('#cases select[name="check"]').select_option("exact")
    browser_page.locator('#cases select[name="flip"]').select_option("broke")
    listed(browser_page)
    first = browser_page.locator("#cases .case-item").first
    sides = first.locator(".ci-side")
    assert sides.count() == 2
    here, base = sides.nth(0).text_content() or "", sides.nth(1).text_content() or ""
    assert here.startswith("This run") and "✗ exact failed (was ✓)" in here
    assert base.startswith("Baseline") and "✗" not in base


def test_text_search_reaches_prompts_and_outputs(browser_page: Page, demo_source: Path) -> None:
    for query in ("gpu_vs_cpu", "LAYOUT_DRIFT", "poster-00"):
        browser_page.locator('#cases input[name="q"]').fill(query)
        browser_page.wait_for_function(
            "(q) => location.hash.includes('q=' + encodeURIComponent(q).replace(/%20/g, '+'))", arg=query
        )
        listed(browser_page)
        q = query.lower()
        wanted = sorted(
            c["id"] for c in probe(demo_source) if any(q in str(c.get(k) or "").lower() for k in TEXT_FIELDS)
        )
        assert sorted(show_all(browser_page)) == wanted, query


def test_a_case_opens_to_its_texts(browser_page: Page) -> None:
    browser_page.locator('#cases select[name="group"]').select_option(label="layout_drift (16)")
    listed(browser_page)
    item = browser_page.locator("#cases .case-item").first
    toggle = item.locator(".ci-toggle")
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    detail = item.locator(".ci-detail")
    detail.locator(".ci-text").first.wait_for()
    labels = detail.locator(".field-label").all_text_contents()
    assert {"Prompt", "Expected", "Actual", "Note"} <= set(labels)
    assert "layout:pipeline_lane" in detail.inner_text()
    assert toggle.get_attribute("aria-expanded") == "true"


def test_group_and_pattern_links_filter_the_browser_and_the_hash_restores_it(browser_page: Page) -> None:
    group = browser_page.locator(".fgroup").first
    n = int(group.locator("table.patterns tbody tr td").first.text_content() or "")
    group.locator("a.browse", has_text="all").first.click()  # the biggest pattern's "all N →"
    browser_page.wait_for_function("() => location.hash.startsWith('#cases?pattern=')")
    listed(browser_page)
    assert matching(browser_page) == n
    assert "Only the pattern" in browser_page.locator("#cases .case-pinned").inner_text()
    hash_ = browser_page.evaluate("location.hash")
    browser_page.reload()
    browser_page.wait_for_selector("#cases[data-ready]")
    assert browser_page.evaluate("location.hash") == hash_
    assert matching(browser_page) == n
    browser_page.locator("#cases .case-pinned button").click()
    listed(browser_page)
    assert matching(browser_page) == 160


def test_without_javascript_the_failure_groups_remain(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite, demo_source: Path
) -> None:
    context = browser.new_context(**browser_context_args, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(served_demo.url(RUN))
        counts = [int(t) for t in page.locator("#failures ul.groups .count").all_text_contents()]
        failing = sum(1 for c in probe(demo_source) if c.get("failure_class"))
        assert sum(counts) >= failing and len(counts) >= 5
        assert page.locator("#failures .fgroup table.patterns").count() == len(counts)
        assert page.locator("#failures .fgroup table.patterns").first.is_visible()
        assert page.locator("#cases .case-nojs").is_visible()
        assert not page.locator("#cases form.case-filters").is_visible()
    finally:
        context.close()


def test_the_case_browser_works_from_a_file_url(
    browser: Browser, browser_context_args: dict[str, Any], demo_site: Path
) -> None:
    context, watch = new_watched_context(browser, browser_context_args, ("file://", "data:"))
    try:
        page = context.new_page()
        page.goto((demo_site / RUN).resolve().as_uri() + "#cases?outcome=failing")
        page.wait_for_selector("#cases[data-ready]")
        assert "of 59 matching" in status(page)
        watch.assert_clean("case browser from file://")
    finally:
        context.close()


# ------------------------------------------------------------- two systems, item by item


@pytest.fixture(scope="module")
def paired_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    src = tmp_path_factory.mktemp("paired-src") / "src"
    (src / "camp" / "evals").mkdir(parents=True)
    for name in ("tau_20251031.json", "tau_20251103.json"):
        shutil.copy(REPO / "tests/data/paired" / name, src / "camp" / "evals" / name)
    (src / "camp" / "campaign.yaml").write_text(
        "id: tau-pair\ntitle: two checkpoints on the same tasks\npaired:\n"
        "  - name: November vs October\n"
        "    a: {file: evals/tau_20251103.json, label: Nov}\n"
        "    b: {file: evals/tau_20251031.json, label: Oct}\n",
        encoding="utf-8",
    )
    out = tmp_path_factory.mktemp("paired-site") / "site"
    build_published(BuildOptions(source=src, out=out, quiet=True, force=True))
    site = serve(out)
    yield site
    site.close()


def outcomes(name: str) -> dict[str, bool]:
    doc = json.loads((REPO / "tests/data/paired" / name).read_text(encoding="utf-8"))
    records = doc if isinstance(doc, list) else next(v for v in doc.values() if isinstance(v, list))
    id_key = next(k for k in ("id", "task_id", "item_id") if k in records[0])
    ok_key = next(k for k in ("correct", "success", "passed", "reward") if k in records[0])
    return {str(r[id_key]): bool(r[ok_key]) for r in records}


def test_two_systems_side_by_side_item_by_item(page: Page, paired_site: ServedSite) -> None:
    page.goto(paired_site.url("campaigns/tau-pair/index.html"))
    view = page.locator("[data-paired-view]")
    page.wait_for_selector("[data-paired-view][data-ready]")
    a, b = outcomes("tau_20251103.json"), outcomes("tau_20251031.json")
    shared = set(a) & set(b)
    rows = lambda: view.locator("tbody tr")  # noqa: E731
    # by default: the items where they disagree, each with both outcomes
    disagree = sorted(i for i in shared if a[i] != b[i])
    assert sorted(rows().locator("th").all_inner_texts()) == disagree
    first = rows().first
    cells = first.locator("td").all_inner_texts()
    item = first.locator("th").inner_text()
    assert cells == [("✓ right" if a[item] else "✗ wrong"), ("✓ right" if b[item] else "✗ wrong")]
    select = view.locator('select[name="agree"]')
    for value, keep in (
        ("both", lambda i: a[i] and b[i]),
        ("onlyA", lambda i: a[i] and not b[i]),
        ("neither", lambda i: not a[i] and not b[i]),
    ):
        select.select_option(value)
        more = view.locator("[data-more]")
        while more.is_visible():
            more.click()
        assert sorted(rows().locator("th").all_inner_texts()) == sorted(i for i in shared if keep(i)), value
    select.select_option("")
    view.locator('input[name="q"]').fill(item)
    page.wait_for_function(  # the search applies after a pause in typing: wait until only matches are listed
        "q => [...document.querySelectorAll('[data-paired-view] tbody th')].every("
        "th => th.textContent.toLowerCase().includes(q))",
        arg=item.lower(),
    )
    assert item in rows().locator("th").all_inner_texts()
