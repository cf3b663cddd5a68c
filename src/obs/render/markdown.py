"""Markdown from run files, rendered and then sanitised.

Python-Markdown passes raw HTML through, so its output is cleaned with nh3 (the Rust ammonia
sanitiser) against an allow-list: no scripts, no event handlers, no images (an image would load
from another host and break the air gap), and links only to http(s), mailto or relative targets.
"""

from __future__ import annotations

import functools

import markdown as md
import nh3
from markupsafe import Markup

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


@functools.lru_cache(maxsize=1)
def _converter() -> md.Markdown:
    return md.Markdown(extensions=["tables", "fenced_code", "sane_lists"], output_format="html")


def _shift_headings(html: str) -> str:
    """Headings written in a run file sit inside a page section: h1/h2 become h3/h4."""
    for level, new in (("h2", "h4"), ("h1", "h3")):
        html = html.replace(f"<{level}>", f"<{new}>").replace(f"</{level}>", f"</{new}>")
    return html


def render_markdown(text: str | None) -> Markup:
    if not text or not text.strip():
        return Markup("")
    conv = _converter()
    conv.reset()
    html = _shift_headings(conv.convert(text))
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return Markup(clean)
