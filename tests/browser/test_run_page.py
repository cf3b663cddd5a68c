"""A run page as a reader uses it: the 12 report sections reachable from the table of contents, the
links inside the page landing where they say, and long model outputs collapsed until asked for.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from browserkit import PHONE, PageWatch, ServedSite, run_pages, settle
from playwright.sync_api import Browser, Page, expect

from obs.render.format import TEXT_PREVIEW_CHARS, TEXT_PREVIEW_LINES
from obs.render.sections import SECTIONS

GALLERY_RUN = "runs/spec03-r2/index.html"  # rejected rung with many failing cases, some collapsed

IN_VIEW = """(id) => { const r = document.getElementById(id).getBoundingClientRect();
  return r.top >= -1 && r.top < innerHeight - 20; }"""


def test_every_run_page_has_the_13_sections_in_order(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    pages = run_pages(served_demo.root)
    assert len(pages) >= 5
    wanted = [s.id for s in SECTIONS]
    assert len(wanted) == 13  # the 12th: the run's configuration (issue 16); the 10th: generations (issue 33)
    for rel in pages:
        page.goto(served_demo.url(rel))
        toc = page.eval_on_selector_all("nav.toc a", "els => els.map(a => a.getAttribute('href'))")
        assert toc == [f"#{sid}" for sid in wanted], rel
        found = page.eval_on_selector_all("main section.section[id]", "els => els.map(s => s.id)")
        assert found == wanted, rel
        watch.assert_clean(rel)


def test_section_links_scroll_to_their_section(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    page.goto(served_demo.url(GALLERY_RUN))
    settle(page)
    for sid, title in ((s.id, s.title) for s in SECTIONS):
        page.locator("nav.toc").get_by_role("link", name=title, exact=True).click()
        page.wait_for_function(IN_VIEW, arg=sid)
        assert page.evaluate("location.hash") == f"#{sid}"
        assert title in page.evaluate(f"document.querySelector('#{sid} h2').textContent")


BELOW_THE_BAR = """(id) => { const r = document.getElementById(id).getBoundingClientRect();
  const bar = document.querySelector('nav.jump').getBoundingClientRect();
  return r.top >= Math.max(0, bar.bottom) - 1 && r.top < innerHeight - 20; }"""


def test_a_phone_jumps_to_any_section_from_a_compact_menu(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    """At 390 px the section list is a one-row menu that sticks to the top: the curves, failures and
    decision are one tap away, every section two; a section it lands on is not under the menu; the
    menu goes away while the reader scrolls down and comes back when they scroll up; keyboard too."""
    page.set_viewport_size(PHONE)
    page.goto(served_demo.url(GALLERY_RUN))
    settle(page)
    assert not page.locator("nav.toc").is_visible()
    bar = page.locator("nav.jump")
    expect(bar).to_be_visible()
    box = bar.bounding_box()
    assert box is not None and box["height"] <= 56 and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    quick = bar.locator("a.jump-quick")
    assert quick.all_inner_texts() == ["Curves", "Failures", "Decision"]
    quick.first.click()  # one tap to the curves
    page.wait_for_function(BELOW_THE_BAR, arg="curves")
    assert page.evaluate("location.hash") == "#curves"
    # scrolling down, the menu slides away; scrolling up brings it back, naming the section in view
    page.mouse.wheel(0, 900)
    page.wait_for_function("() => document.querySelector('nav.jump').getBoundingClientRect().bottom <= 0")
    page.mouse.wheel(0, -300)
    page.wait_for_function("() => document.querySelector('nav.jump').getBoundingClientRect().top >= -1")
    expect(bar.locator("[data-jump-at]")).to_have_text(re.compile(r"^\d+\. "))
    # every section from the menu, in order, landing below the bar; the menu closes on a pick
    titles = [s.title for s in SECTIONS]
    summary = bar.locator("summary")
    for sid, title in ((s.id, s.title) for s in SECTIONS):
        page.evaluate("document.querySelector('nav.jump').classList.remove('away')")
        summary.click()
        menu = bar.locator("details ol")
        expect(menu).to_be_visible()
        assert menu.locator("a").all_inner_texts() == titles
        menu.get_by_role("link", name=title, exact=True).click()
        page.wait_for_function(BELOW_THE_BAR, arg=sid)
        expect(menu).to_be_hidden()
    # from the keyboard: open with Enter, Escape closes it and gives the focus back to the menu
    page.evaluate("scrollTo(0, 0)")
    summary.focus()
    page.keyboard.press("Enter")
    expect(bar.locator("details ol")).to_be_visible()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('nav.jump ol') !== null")
    page.keyboard.press("Escape")
    expect(bar.locator("details ol")).to_be_hidden()
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"


def test_summary_tiles_lead_to_the_gallery_and_the_decision(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    page.goto(served_demo.url(GALLERY_RUN))
    settle(page)
    page.locator("#failures-link a").click()
    page.wait_for_function(IN_VIEW, arg="failures")
    page.evaluate("scrollTo(0, 0)")
    page.locator("#recorded-decision a").click()
    page.wait_for_function(IN_VIEW, arg="decision")


def test_a_flipped_case_link_opens_that_case_in_the_case_browser(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    """A case listed in "right -> wrong" links to the case browser, filtered to that one case."""
    page.goto(served_demo.url(GALLERY_RUN))
    settle(page)
    link = page.locator('.flips a.cid[data-cases^="id="]').first
    case_id = link.text_content() or ""
    link.click()
    page.wait_for_function(IN_VIEW, arg="cases")
    page.wait_for_function("() => document.querySelectorAll('#cases .case-item').length === 1")
    # textContent: the section is laid out a frame after it comes into view (content-visibility: auto)
    assert page.locator("#cases .case-item .cid").text_content() == case_id
    assert "Only case " + case_id in (page.locator("#cases .case-pinned").text_content() or "")


def test_long_outputs_are_collapsed_until_opened(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    page.goto(served_demo.url(GALLERY_RUN))
    settle(page)
    example = page.locator("#failures details.example-wrap[open]").first
    block = example.locator("details.more-text").first
    summary = block.locator("summary")
    pre = block.locator("pre.text")
    assert block.get_attribute("open") is None
    assert not pre.is_visible()
    summary.scroll_into_view_if_needed()  # sections far below are laid out only near the viewport
    expect(summary).to_contain_text(" line", use_inner_text=True)
    m = re.search(r"show all (\d+) lines", summary.inner_text())
    assert m, summary.inner_text()
    summary.click()
    assert pre.is_visible()
    assert pre.inner_text().count("\n") + 1 == int(m.group(1))
    summary.press("Enter")  # and from the keyboard
    assert not pre.is_visible()


def test_no_long_output_is_shown_uncollapsed_and_scrolling_boxes_take_focus(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    problems = []
    for rel in run_pages(served_demo.root):
        page.goto(served_demo.url(rel))
        settle(page)
        too_long = page.evaluate(
            """([chars, lines]) => [...document.querySelectorAll('pre.text:not(.diff)')]
                 .filter(p => !p.closest('details'))
                 .map(p => p.textContent).filter(t => t.length > chars || t.split('\\n').length > lines)
                 .map(t => t.slice(0, 40))""",
            [TEXT_PREVIEW_CHARS, TEXT_PREVIEW_LINES],
        )
        if too_long:
            problems.append(f"{rel}: long outputs shown in full: {too_long[:3]}")
        # A section is laid out when it comes near the viewport (content-visibility: auto) and obs.js
        # marks its boxes then, as a reader scrolling or tabbing down the page brings it there; a box
        # in a closed <details> is not drawn until it is opened (and marked then).
        unreachable = page.evaluate(
            """async () => {
                 const out = [];
                 for (const s of document.querySelectorAll('main > .section')) {
                   s.scrollIntoView();
                   for (let i = 0; i < 3; i++) await new Promise(r => requestAnimationFrame(r));
                   out.push(...[...s.querySelectorAll('.table-wrap, pre.text')]
                     .filter(e => e.checkVisibility({ contentVisibilityAuto: true }))
                     .filter(e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)
                     .filter(e => e.tabIndex < 0 && !e.querySelector('a, button, input, select, summary'))
                     .map(e => e.className + ': ' + e.textContent.trim().slice(0, 40)));
                 }
                 return out;
               }"""
        )
        if unreachable:
            problems.append(f"{rel}: boxes that scroll but cannot be reached by keyboard: {unreachable[:3]}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("key", ["Tab"])
def test_skip_link_is_first_and_jumps_to_main(page: Page, watch: PageWatch, served_demo: ServedSite, key: str) -> None:
    page.goto(served_demo.url(GALLERY_RUN))
    page.keyboard.press(key)
    skip = page.locator("a.skip")
    assert skip.evaluate("a => a === document.activeElement")
    assert skip.is_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("location.hash") == "#main"


def test_the_table_of_deltas_against_the_baseline_fits_a_laptop(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    """Issue 30: "the 'Against the baseline' table needs sideways scrolling inside its box at 1366 px".
    Each delta's interval, p-values and counts now wrap between their parts, never inside one."""
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(served_demo.url(GALLERY_RUN))
    settle(page)
    table = page.locator("#probe table.deltas")
    expect(table).to_have_count(1)
    assert page.evaluate(
        "() => { const b = document.querySelector('#probe table.deltas').closest('.table-wrap');"
        " return b.scrollWidth <= b.clientWidth + 1; }"
    )
    # a part (an interval, a p-value) is never broken across lines
    broken = page.evaluate(
        """() => [...document.querySelectorAll('#probe table.deltas .sub.parts > span')]
          .filter(s => new Set([...s.getClientRects()].map(r => Math.round(r.top))).size > 1).map(s => s.textContent)"""
    )
    assert broken == []
    # the headers all fit their columns
    assert page.evaluate(
        "() => [...document.querySelectorAll('#probe table.deltas thead th')]"
        ".every(t => t.scrollWidth <= t.clientWidth + 1)"
    )


LATER = "() => document.querySelectorAll('[data-later]').length"


def test_blocks_far_down_are_drawn_as_the_reader_comes_near(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    """Issue 30 (Lighthouse mobile): the failure groups' tables and examples, the probe's tables, the held-constant
    matrix and the configuration's keys stay out of the first layout of a page opened at its top (inside
    <noscript>), are drawn when they come within a screen and a half, and all at once for Tab or printing."""
    page.set_viewport_size(PHONE)
    page.goto(served_demo.url(GALLERY_RUN))
    page.wait_for_load_state("load")
    waiting = page.evaluate(LATER)
    assert waiting >= 10
    assert page.locator("#failures table.patterns").count() == 0
    assert page.locator("#probe table.deltas").count() == 0
    before = page.evaluate("document.getElementsByTagName('*').length")
    # the gallery's first group comes near: its table and example are drawn, its links lead into the browser
    page.evaluate("document.getElementById('fail-1').scrollIntoView()")
    page.wait_for_function("() => !document.querySelector('#fail-1 [data-later]')")
    group = page.locator("#fail-1")
    expect(group.locator("table.patterns")).to_be_visible()
    expect(group.locator("details.example-wrap[open]")).to_have_count(1)
    hrefs = group.locator("a[data-cases]").evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert hrefs and all(h.startswith("#cases?") for h in hrefs), hrefs
    assert 0 < page.evaluate(LATER) < waiting  # the config, far below, is still waiting
    # the configuration's search draws its keys when used
    page.locator("#config form.config-search input").fill("lr")
    expect(page.locator("#config [data-count]")).to_contain_text(" of ")
    # Tab (focus goes through every element) draws everything
    page.evaluate("scrollTo(0, 0)")
    page.keyboard.press("Tab")
    page.wait_for_function(f"() => ({LATER})() === 0")
    after = page.evaluate("document.getElementsByTagName('*').length")
    assert after > before + 1000  # what the first layout went without
    assert page.locator("#probe table.deltas td[data-cmp]").count() > 0
    watch.assert_clean(GALLERY_RUN)


def test_a_link_into_the_page_or_printing_draws_every_block(
    page: Page, watch: PageWatch, served_demo: ServedSite
) -> None:
    page.goto(served_demo.url(GALLERY_RUN) + "#fail-3")
    page.wait_for_load_state("load")
    assert page.evaluate(LATER) == 0
    page.wait_for_function(IN_VIEW, arg="fail-3")
    page.goto(served_demo.url(GALLERY_RUN))
    page.wait_for_load_state("load")
    assert page.evaluate(LATER) > 0
    page.evaluate("dispatchEvent(new Event('beforeprint'))")
    assert page.evaluate(LATER) == 0
    watch.assert_clean(GALLERY_RUN)


def test_without_javascript_every_block_is_in_its_place(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    context = browser.new_context(**browser_context_args, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(served_demo.url(GALLERY_RUN))
        for sel in (
            "#probe table.deltas",
            "#held-constant table.matrix",
            "#config-groups table",
            "#fail-2 table.patterns",
        ):
            page.locator(sel).first.scroll_into_view_if_needed()
            assert page.locator(sel).first.is_visible(), sel
    finally:
        context.close()
