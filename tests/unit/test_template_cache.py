"""The compiled-template cache is kept per filter signature: a template compiled while a filter took no
context must not be reused once it does (Jinja compiles the call differently; reusing it crashed a
build after `md` started reading the page's context)."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from obs.render import site


def render_page(cache: Path, templates: Path) -> str:
    env = site.make_environment(cache)
    env.loader = jinja2.FileSystemLoader(str(templates))  # the bytecode cache keys by name and file, not loader
    return env.get_template("page.html").render(standalone=None)


def test_a_filter_that_starts_taking_the_context_gets_freshly_compiled_templates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "page.html").write_text("{{ 'some *text*'|md }}", encoding="utf-8")
    cache = tmp_path / "cache"
    with monkeypatch.context() as patch:
        patch.setattr(site, "markdown_filter", lambda text: text.upper())  # as `md` was: no context
        assert render_page(cache, templates) == "SOME *TEXT*"
    assert render_page(cache, templates) == "<p>some <em>text</em></p>"  # not the old compiled call
    assert len([p for p in cache.iterdir() if any(p.iterdir())]) == 2  # one compiled copy per signature
