"""A page made to stand alone as one file: the variant context the templates render it with.

`obs build --single-file`, frozen reports (`obs decide`) and the site's 404.html are pages that must
work as one file, from anywhere: no stylesheet, script or image beside them, and no link into a site
that may not be there. They are rendered from the same templates as the site's pages, with a
`Standalone` in the context (`standalone`), and the templates write what such a page needs instead
of what the site's page has: the stylesheet inline (fonts as data: URIs), obs.js inline or no script
at all, images as data: URIs, no case browser data, and every link through `href()`, which points
links to other pages of the site at `link_base` (obs.yaml's `base_url`) or, without one, leaves
them as plain text. In-page anchors stay. Markdown from run files gets the same links (the `md`
filter). Nothing is rewritten after rendering.

The Content-Security-Policy still forbids every remote load. The site's policy allows `'self'`;
this file has no "self" to load from, so its policy is `default-src 'none'` with exactly three
allowances: data: images, data: fonts, and the one inline <style> and <script> **by their SHA-256
hashes**. A hash rather than `'unsafe-inline'`: should an escaping bug ever let a run's text
smuggle in a <script> or <style>, its hash would not match and the browser would refuse it, the same
guarantee the site's `script-src 'self'` gives. (Style attributes stay forbidden, as on the site.)
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

CSP_BASE = (
    "default-src 'none'; img-src data:; font-src data:; style-src {style}; script-src {script}; "
    "connect-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"
)
_MIME = {
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
}


def data_uri(data: bytes, name: str) -> str:
    suffix = Path(name).suffix.lower()
    mime = _MIME.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@dataclass(frozen=True)
class Standalone:
    """What a page standing alone carries in place of the site's files, and where its links go."""

    page_dir: str  # where the page sits in the site, e.g. "runs/spec03-r2/" ("" for the site root)
    style: str  # the stylesheet, its fonts inlined
    script: str | None = None  # obs.js, or None: the page runs no script (frozen reports, 404.html)
    link_base: str | None = None  # prefix for links to other pages of the site; None makes them text
    page_file: str = "index.html"  # the page's own file name in page_dir (its links to itself stay in-page)
    banner: Markup | None = None  # trusted markup (rendered by a template) at the top of <main>

    @property
    def csp_attr(self) -> Markup:
        """The policy as its <meta> attribute holds it (its quotes are the policy's own)."""
        return Markup(self.csp)  # only keywords, hashes and ';': nothing to escape

    @property
    def style_text(self) -> Markup:
        return Markup(self.style)  # obs's own stylesheet, checked to hold no '</style' (publish.single_file)

    @property
    def script_text(self) -> Markup:
        return Markup(self.script or "")  # obs.js, checked to hold no '</script'

    @property
    def csp(self) -> str:
        return CSP_BASE.format(
            style=csp_hash(self.style) if self.style else "'none'",
            script=csp_hash(self.script) if self.script else "'none'",
        )

    def href(self, href: str) -> str | None:
        """Where a link of the site's page points from this file; None: nowhere (it becomes text)."""
        if href.startswith("#") or re.match(r"^(https?:|mailto:)", href, re.IGNORECASE):
            return href
        if ":" in href.split("/", 1)[0]:
            return None  # any other scheme
        target = site_path(self.page_dir, href)
        if target is None:
            return None
        if target == posixpath.join(self.page_dir, self.page_file) and "#" in href:
            return "#" + href.split("#", 1)[1]
        if self.link_base is None:
            return None
        fragment = "#" + href.split("#", 1)[1] if "#" in href else ""
        return self.link_base + target + fragment


def site_path(page_dir: str, href: str) -> str | None:
    """A relative link resolved to its path inside the site ('' for the site root), None if it leaves it."""
    path = href.split("#", 1)[0].split("?", 1)[0]
    joined = posixpath.normpath(posixpath.join(page_dir, path))
    if joined.startswith("..") or joined.startswith("/"):
        return None
    return "" if joined == "." else joined


@jinja2.pass_context
def href_attr(ctx: jinja2.runtime.Context, href: str | None) -> Markup:
    """` href="..."` for an <a>: the link as the site's page has it, or as a page standing alone
    needs it (nothing, when it cannot point anywhere: the link reads as text)."""
    standalone: Any = ctx.get("standalone")
    if href is not None and standalone is not None:
        href = standalone.href(href)
    if href is None:
        return Markup("")
    return Markup(' href="{}"').format(href)


@jinja2.pass_context
def focusable(ctx: jinja2.runtime.Context) -> Markup:
    """A box that may scroll, on a page without script, is reachable by keyboard from the start (on
    the site, obs.js makes the boxes that do scroll focusable)."""
    standalone: Any = ctx.get("standalone")
    return Markup(' tabindex="0"') if standalone is not None and standalone.script is None else Markup("")
