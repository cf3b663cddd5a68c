"""The Jinja2 environment and where the templates and assets live.

Templates are found inside the installed package (`obs/templates`, put there by the wheel build)
or, in a source checkout, in the repository's top-level `templates/` folder. Autoescaping is on for
every template: nothing from a run reaches a page unescaped except sanitised Markdown.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from obs import __version__, urls
from obs.render.format import FILTERS
from obs.render.markdown import markdown_filter
from obs.render.standalone import Standalone, focusable, href_attr
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
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
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
    env.filters["md"] = markdown_filter
    env.globals["urls"] = urls  # the site layout: templates link with {{ root }}{{ urls.run_page(slug) }}
    # a link is written <a{{ href(target) }}>, a box that may scroll <div class="table-wrap"{{ focusable() }}>:
    # as the site has them, or as a page standing alone needs them (obs.render.standalone)
    env.globals["href"] = href_attr
    env.globals["focusable"] = focusable
    if bytecode_cache is not None:
        folder = bytecode_cache / _filters_signature(env)
        folder.mkdir(parents=True, exist_ok=True)
        env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(folder))
    return env


def _filters_signature(env: jinja2.Environment) -> str:
    """What compiled templates depend on beyond their source: the filters' names and whether each is
    handed the context (Jinja compiles the call differently). A template compiled when `md` took no
    context would call it wrongly once it does; keyed by this, it is compiled again."""
    kinds = sorted((name, str(getattr(f, "jinja_pass_arg", ""))) for name, f in env.filters.items())
    return hashlib.sha256(repr(kinds).encode("utf-8")).hexdigest()[:16]


class Renderer:
    """Renders one page template with the site-wide context every page needs."""

    def __init__(self, meta: SiteMeta, bytecode_cache: Path | None = None) -> None:
        self.meta = meta
        self.env = make_environment(bytecode_cache)

    def render(
        self, template: str, *, root: str, nav: str = "", standalone: Standalone | None = None, **context: Any
    ) -> str:
        """The page; with `standalone`, the variant of it that works as one file (obs.render.standalone)."""
        tpl = self.env.get_template(template)
        return tpl.render(site=self.meta, root=root, nav=nav, version=__version__, standalone=standalone, **context)

    def page(self, template: str, path: str, *, nav: str = "", **context: Any) -> bytes:
        """The page written at `path` (from the site root) as its bytes, its links relative to where it stands."""
        return self.render(template, root=urls.root_of(path), nav=nav, **context).encode()
