"""Markdown from run files, rendered and then sanitised.

Python-Markdown passes raw HTML through, so its output is cleaned with nh3 (the Rust ammonia
sanitiser) against an allow-list: no scripts, no event handlers, no images (an image would load
from another host and break the air gap), and links only to http(s), mailto or relative targets.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import markdown as md
import nh3
from jinja2 import pass_context
from jinja2.runtime import Context
from markdown.extensions.fenced_code import FencedCodeExtension
from markdown.extensions.sane_lists import SaneListExtension
from markdown.extensions.tables import TableExtension
from markupsafe import Markup

from obs.textbounds import bound_markdown

ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "em",
    "strong",
    "b",
    "i",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "a",
    "del",
    "sup",
    "sub",
    "kbd",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}, "code": {"class"}}
URL_SCHEMES = {"http", "https", "mailto"}
LINK_REL = "noopener noreferrer nofollow"
# an <a> start tag as nh3 writes it: attributes as name="value" (a '"' in a value is escaped)
_A_TAG = re.compile(r'<a((?: [a-z-]+="[^"]*")*)>')


@functools.lru_cache(maxsize=1)
def _converter() -> md.Markdown:
    # Extension objects, not names: a name is looked up among every installed package's entry points
    # (~40 ms, once a process: a tenth of a one-run rebuild), an object is used as it is.
    return md.Markdown(extensions=[TableExtension(), FencedCodeExtension(), SaneListExtension()], output_format="html")


def _shift_headings(html: str) -> str:
    """Headings written in a run file sit inside a page section: h1/h2 become h3/h4."""
    for level, new in (("h2", "h4"), ("h1", "h3")):
        html = html.replace(f"<{level}>", f"<{new}>").replace(f"</{level}>", f"</{new}>")
    return html


def _drop_rel_without_href(html: str) -> str:
    """A link whose target was removed (javascript:, data:, ...) stays as a plain <a>: HTML allows
    `rel` only on a link with an href, and nh3 adds it to every <a>."""

    def fix(match: re.Match[str]) -> str:
        attrs = match.group(1)
        if ' href="' in attrs:
            return match.group(0)
        return "<a" + attrs.replace(f' rel="{LINK_REL}"', "") + ">"

    return _A_TAG.sub(fix, html)


def _link_filter(link: Callable[[str], str | None]) -> Callable[[str, str, str], str | None]:
    def keep(element: str, attribute: str, value: str) -> str | None:
        return link(value) if element == "a" and attribute == "href" else value

    return keep


@pass_context
def markdown_filter(ctx: Context, text: str | None) -> Markup:
    """The templates' `md` filter: links as the page needs them (a page standing alone has a
    `standalone` in its context)."""
    standalone: Any = ctx.get("standalone")
    return render_markdown(text, standalone.href if standalone is not None else None)


def render_markdown(text: str | None, link: Callable[[str], str | None] | None = None) -> Markup:
    """Sanitised HTML of `text`. `link` maps each link's target (a page standing alone points links
    into the site elsewhere, or drops them: obs.render.standalone); None keeps them."""
    if not text or not text.strip():
        return Markup("")
    text, _ = bound_markdown(text)  # readers bound and report; this only makes sure (obs.textbounds)
    conv = _converter()
    conv.reset()
    html = _shift_headings(conv.convert(text))
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel=LINK_REL,
        strip_comments=True,
        attribute_filter=_link_filter(link) if link is not None else None,
    )
    return Markup(_drop_rel_without_href(clean))
