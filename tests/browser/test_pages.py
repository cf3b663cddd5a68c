"""Every page of the demo site, as a reader opens it: from a web server under a sub-path (as GitHub
Pages serves a project site) and straight from disk (file://).

On each page: no console error, no uncaught exception, no failed request, no request to any other
host (every request is routed; the site's own origin is the only one let through), the stylesheet,
the web fonts and the script really apply, and every in-page `#anchor` link has a target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browserkit import PageWatch, ServedSite, new_watched_context, settle, site_pages, wait_until
from playwright.sync_api import Browser, Page

BACKGROUND = "rgb(246, 247, 249)"  # --bg in obs.css: proves the stylesheet was applied

PAGE_FACTS = """() => {
  const faces = [...document.fonts].filter(f => f.status === 'loaded').map(f => f.family.replace(/"/g, ''));
  return {
    background: getComputedStyle(document.body).backgroundColor,
    fonts: [...new Set(faces)],
    scriptRan: !document.querySelector('script[src]')  // 404.html is a single file without script
               || (document.documentElement.hasAttribute('data-obs-js')
                   && [...document.querySelectorAll('form.filters')].every(f => !f.hidden)),
    title: document.title,
  };
}"""

BROKEN_ANCHORS = """() => [...document.querySelectorAll('a[href^="#"]')]
  .map(a => decodeURIComponent(a.getAttribute('href').slice(1).split('?')[0]))  // #cases?group=2: state
  .filter(id => id && !document.getElementById(id))"""

OUTSIDE_LINKS = """(base) => [...document.querySelectorAll('a[href], link[href], script[src], img[src]')]
  .map(e => e.href || e.src)
  .filter(u => u.startsWith(location.origin) && !u.startsWith(base))"""


def _check_page(page: Page, url: str, watch: PageWatch, problems: list[str]) -> None:
    page.goto(url)
    settle(page)
    facts = page.evaluate(PAGE_FACTS)
    if facts["background"] != BACKGROUND:
        problems.append(f"{url}: stylesheet not applied (body background {facts['background']})")
    if "Inter" not in facts["fonts"]:
        problems.append(f"{url}: the shipped Inter web font did not load (loaded: {facts['fonts']})")
    if not facts["scriptRan"]:
        problems.append(f"{url}: obs.js did not run (no data-obs-js, or the filter form is still hidden)")
    if not facts["title"]:
        problems.append(f"{url}: empty <title>")
    missing = page.evaluate(BROKEN_ANCHORS)
    if missing:
        problems.append(f"{url}: in-page links without a target: {sorted(set(missing))[:10]}")
    problems.extend(f"{url}: {p}" for p in watch.problems())
    watch.clear()


def test_every_page_is_clean_under_a_sub_path(page: Page, watch: PageWatch, served_demo: ServedSite) -> None:
    pages = site_pages(served_demo.root)
    assert len(pages) >= 5, pages
    problems: list[str] = []
    for rel in pages:
        _check_page(page, served_demo.url(rel), watch, problems)
        outside = page.evaluate(OUTSIDE_LINKS, served_demo.base)
        if outside:
            problems.append(f"{rel}: links that leave the sub-path {served_demo.base}: {outside[:5]}")
    assert not problems, "\n".join(problems)


def test_every_page_works_from_file_urls(
    browser: Browser, browser_context_args: dict[str, Any], demo_site: Path
) -> None:
    """Opened from disk the strict CSP (default-src 'self') must still let the site's own files load."""
    root_url = demo_site.resolve().as_uri() + "/"
    context, watch = new_watched_context(browser, browser_context_args, allowed=(root_url, "data:"))
    try:
        page = context.new_page()
        problems: list[str] = []
        for rel in site_pages(demo_site):
            _check_page(page, root_url + rel, watch, problems)
        assert not problems, "\n".join(problems)
    finally:
        context.close()


def test_the_watch_catches_foreign_requests_and_errors(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> None:
    """The guard itself can fail. The CSP is bypassed here so that the request reaches the router."""
    context, watch = new_watched_context(browser, browser_context_args, (served_demo.base,), bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(served_demo.url("index.html"))
        settle(page)
        page.evaluate(
            """() => { const img = new Image(); img.src = 'https://tracker.example.net/p.gif';
                      document.body.append(img); setTimeout(() => { throw new Error('boom'); }, 0); }"""
        )
        wait_until(page, lambda: bool(watch.foreign and watch.page_errors), "the request and the exception")
        assert watch.foreign == ["https://tracker.example.net/p.gif"]
        assert any("boom" in e for e in watch.page_errors), watch.page_errors
    finally:
        context.close()
