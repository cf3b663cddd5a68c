"""The Jinja2 environment and where the templates and assets live.

Templates are found inside the installed package (`obs/templates`, put there by the wheel build)
or, in a source checkout, in the repository's top-level `templates/` folder. Autoescaping is on for
every template: nothing from a run reaches a page unescaped except sanitised Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from obs import __version__, urls
from obs.render.format import FILTERS
from obs.render.markdown import render_markdown
from obs.resources import templates_dir


@dataclass(frozen=True)
class SiteMeta:
    title: str
    source_name: str
    has_specs: bool = False
    has_campaigns: bool = False
    has_learning: bool = False  # agent sessions in the source: the nav links to learning/index.html


def make_environment(bytecode_cache: Path | None = None) -> jinja2.Environment:
    """The Jinja environment; compiled templates are kept in `bytecode_cache` between builds.

    Compiling the run template costs a few hundred milliseconds per process, which a one-run
    rebuild would otherwise pay every time. Jinja checks each template's mtime, so an edited
    template is recompiled.
    """
    cache = None
    if bytecode_cache is not None:
        bytecode_cache.mkdir(parents=True, exist_ok=True)
        cache = jinja2.FileSystemBytecodeCache(str(bytecode_cache))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        bytecode_cache=cache,
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    # Data blocks (`|tojson`) as compact UTF-8: no spaces after separators, no \uXXXX for every curly quote
    # (Jinja still escapes <, >, & and ' for the HTML around them). The case browser's block alone was ~5 KB
    # a run page lighter.
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False}
    env.filters.update(FILTERS)
    env.filters["md"] = render_markdown
    env.globals["urls"] = urls  # the site layout: templates link with {{ root }}{{ urls.run_page(slug) }}
    return env


class Renderer:
    """Renders one page template with the site-wide context every page needs."""

    def __init__(self, meta: SiteMeta, bytecode_cache: Path | None = None) -> None:
        self.meta = meta
        self.env = make_environment(bytecode_cache)

    def render(self, template: str, *, root: str, nav: str = "", **context: Any) -> str:
        tpl = self.env.get_template(template)
        return tpl.render(site=self.meta, root=root, nav=nav, version=__version__, **context)
