"""One run's page as one self-contained HTML file: `obs build --single-file RUN -o report.html`.

The site's run page is rendered as usual, then every resource it references is inlined: the
stylesheet (with its WOFF2 fonts as data: URIs) becomes one <style>, obs.js one <script>, figures
and renders data: images. Links to other pages of the site point at `base_url` when obs.yaml sets
one (a navigation, not a load), else they are removed and read as plain text; in-page anchors stay.

The Content-Security-Policy still forbids every remote load. The site's policy allows `'self'`;
this file has no "self" to load from, so its policy is `default-src 'none'` with exactly three
allowances: data: images, data: fonts, and the one inline <style> and <script> **by their SHA-256
hashes**. A hash rather than `'unsafe-inline'`: should an escaping bug ever let a run's text
smuggle in a <script> or <style>, its hash would not match and the browser would refuse it, the same
guarantee the site's `script-src 'self'` gives. (Style attributes stay forbidden, as on the site.)

Frozen reports (`obs decide`) are made the same way without any script (`script-src 'none'`), which
is what lets a build check, before copying an archived file into the site, that it cannot run code.

The rewriting works on the tag positions reported by `html.parser`, never on regular expressions
over the page, so text that merely looks like a tag is never touched.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import posixpath
import re
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

from obs.resources import templates_dir

if TYPE_CHECKING:
    from obs.pipeline import LoadedRun

CSP_BASE = (
    "default-src 'none'; img-src data:; font-src data:; style-src {style}; script-src {script}; "
    "connect-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"
)
# what a frozen report must start with for a build to publish it (see `is_frozen_report`)
FROZEN_PREFIX = re.compile(
    r"""\A<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n"""
    r"""<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; font-src data:; """
    r"""style-src 'sha256-[A-Za-z0-9+/]{43}='; script-src 'none'; connect-src 'none'; object-src 'none'; """
    r"""frame-src 'none'; base-uri 'none'; form-action 'none'">\n"""
)
_CSS_URL = re.compile(r"""url\(\s*(["']?)([^"')\s]+)\1\s*\)""")
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


class InlineError(Exception):
    pass


@dataclass
class _Tag:
    start: int
    end: int
    name: str
    attrs: dict[str, str | None]


class _Tags(HTMLParser):
    """Collects every start tag with its exact span in the source."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        self.tags: list[_Tag] = []
        self._line_starts = [0]
        for m in re.finditer("\n", text):
            self._line_starts.append(m.end())

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raw = self.get_starttag_text() or ""
        line, col = self.getpos()
        start = self._line_starts[line - 1] + col
        if self.text[start : start + len(raw)] != raw:
            raise InlineError(f"could not locate <{tag}> in the page")
        self.tags.append(_Tag(start, start + len(raw), tag, dict(attrs)))

    handle_startendtag = handle_starttag


def data_uri(data: bytes, name: str) -> str:
    suffix = Path(name).suffix.lower()
    mime = _MIME.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def inline_css(css: str, base: Path) -> str:
    """The stylesheet with every url() (fonts) as a data: URI; anything not beside it is an error."""

    def repl(m: re.Match[str]) -> str:
        ref = m.group(2)
        if ref.startswith("data:"):
            return m.group(0)
        path = (base / ref).resolve()
        if not path.is_relative_to(base.resolve()) or not path.is_file():
            raise InlineError(f"stylesheet refers to {ref}, which is not in {base}")
        return f'url("{data_uri(path.read_bytes(), path.name)}")'

    out = _CSS_URL.sub(repl, css)
    if "</style" in out.lower():
        raise InlineError("the stylesheet contains '</style'")
    return out


@dataclass
class SingleFileOptions:
    page_dir: str  # where the page sits in the site, e.g. "runs/spec03-r2/"
    link_base: str | None = None  # prefix for links to other pages of the site; None removes them
    with_script: bool = True
    banner: str | None = None  # trusted markup (rendered by a template) put at the top of <main>
    page_file: str = "index.html"  # the page's own file name in page_dir (its links to itself stay in-page)
    missing: list[str] = field(default_factory=list)  # filled: references that could not be inlined


# the case browser reads data files beside the page, which a single file has not; fonts.js preloads
# font files, which a single file carries inside its stylesheet
DROPPED_SCRIPTS = frozenset({"assets/cases.js", "assets/fonts.js"})
DROPPED_DATA_BLOCKS = frozenset({"case-spec"})  # read only by assets/cases.js
DROPPED_STYLESHEETS = frozenset({"assets/noscript.css"})  # inside <noscript>: a single file keeps its own rules


def make_single_file(files: dict[str, bytes], opts: SingleFileOptions, assets: Path | None = None) -> bytes:
    """`files` is what `render_run` made for the run (its page, figures, renders)."""
    assets = assets or templates_dir() / "assets"
    page = files["index.html"].decode("utf-8")
    parser = _Tags(page)
    parser.feed(page)
    parser.close()

    style_text = ""
    script_text = ""
    edits: list[tuple[int, int, str]] = []
    csp_at: int | None = None
    for tag in parser.tags:
        a = tag.attrs
        if tag.name == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            edits.append((tag.start, _eat_newline(page, tag.end), ""))
        elif tag.name == "meta" and a.get("charset") is not None:
            csp_at = _eat_newline(page, tag.end)
        elif tag.name == "link" and _site_path(opts.page_dir, a.get("href") or "") in DROPPED_STYLESHEETS:
            edits.append((tag.start, tag.end, ""))
        elif tag.name == "link" and (a.get("rel") or "").lower() == "stylesheet":
            target = _site_path(opts.page_dir, a.get("href") or "")
            if target != "assets/obs.css":
                raise InlineError(f"unexpected stylesheet {a.get('href')}")
            style_text = inline_css((assets / "obs.css").read_text(encoding="utf-8"), assets)
            edits.append((tag.start, tag.end, "<style>" + style_text + "</style>"))
        elif tag.name == "script" and a.get("id") in DROPPED_DATA_BLOCKS and not a.get("src"):
            # the dropped case browser's inert JSON: nothing reads it here, and a frozen report has no <script>
            close = page.find("</script>", tag.end)
            if close < 0:
                raise InlineError(f"unclosed <script id={a.get('id')}>")
            edits.append((tag.start, _eat_newline(page, close + len("</script>")), ""))
        elif tag.name == "script" and a.get("src"):
            close = page.find("</script>", tag.end)
            if close != tag.end:
                raise InlineError("a <script src> element has content")
            end = close + len("</script>")
            if _site_path(opts.page_dir, a["src"] or "") in DROPPED_SCRIPTS:
                # without the case browser its no-script note stays, and the failure groups above it
                # are plain HTML
                edits.append((tag.start, _eat_newline(page, end), ""))
                continue
            if _site_path(opts.page_dir, a["src"] or "") != "assets/obs.js":
                raise InlineError(f"unexpected script {a.get('src')}")
            if opts.with_script:
                script_text = (assets / "obs.js").read_text(encoding="utf-8")
                if "</script" in script_text.lower():
                    raise InlineError("obs.js contains '</script'")
                edits.append((tag.start, end, "<script>" + script_text + "</script>"))
            else:
                edits.append((tag.start, _eat_newline(page, end), ""))
        elif tag.name == "img" and a.get("src") and not (a["src"] or "").startswith("data:"):
            src = a["src"] or ""
            data = files.get(posixpath.normpath(src))
            new = data_uri(data, src) if data is not None else None
            if new is None:
                opts.missing.append(src)
            edits.append((tag.start, tag.end, _retag(tag, "src", new)))
        elif tag.name == "a" and a.get("href"):
            new_href = _link(opts, a["href"] or "")
            if new_href != a["href"]:
                edits.append((tag.start, tag.end, _retag(tag, "href", new_href)))
        elif tag.name == "div" and "data-case-browser" in a:
            # the case browser without its script: a heading and a note, not a screen tall (obs.css)
            edits.append((tag.start, tag.end, _retag(tag, "data-case-browser", None)))
        elif tag.name == "main" and opts.banner:
            edits.append((tag.end, tag.end, "\n" + opts.banner))
        elif not opts.with_script and _scroll_box(tag):
            # obs.js makes scrolling boxes keyboard-focusable; without it, every box that may scroll is
            edits.append((tag.start, tag.end, _retag(tag, "tabindex", "0")))
    if csp_at is None:
        raise InlineError("the page has no <meta charset>")
    csp = CSP_BASE.format(
        style=csp_hash(style_text) if style_text else "'none'",
        script=csp_hash(script_text) if script_text else "'none'",
    )
    edits.append(
        (csp_at, csp_at, f'<meta http-equiv="Content-Security-Policy" content="{escape(csp, quote=False)}">\n')
    )
    return _apply(page, edits).encode("utf-8")


def _eat_newline(text: str, pos: int) -> int:
    return pos + 1 if text[pos : pos + 1] == "\n" else pos


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    out: list[str] = []
    pos = 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < pos:
            raise InlineError("overlapping edits")
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _scroll_box(tag: _Tag) -> bool:
    classes = (tag.attrs.get("class") or "").split()
    wanted = (tag.name == "div" and "table-wrap" in classes) or (tag.name == "pre" and "text" in classes)
    return wanted and "tabindex" not in tag.attrs


def _retag(tag: _Tag, name: str, value: str | None) -> str:
    """The start tag again with one attribute replaced, added, or dropped (value None)."""
    parts = [tag.name]
    attrs = dict(tag.attrs)
    if value is not None and name not in attrs:
        attrs[name] = value
    for key, val in attrs.items():
        if key == name:
            if value is None:
                continue
            val = value
        parts.append(key if val is None else f'{key}="{escape(val, quote=True)}"')
    return "<" + " ".join(parts) + ">"


def _site_path(page_dir: str, href: str) -> str | None:
    """A relative link resolved to its path inside the site ('' for the site root), None if it leaves it."""
    path = href.split("#", 1)[0].split("?", 1)[0]
    joined = posixpath.normpath(posixpath.join(page_dir, path))
    if joined.startswith("..") or joined.startswith("/"):
        return None
    return "" if joined == "." else joined


def _link(opts: SingleFileOptions, href: str) -> str | None:
    if href.startswith("#") or re.match(r"^(https?:|mailto:)", href, re.IGNORECASE):
        return href
    if ":" in href.split("/", 1)[0]:
        return None  # any other scheme
    target = _site_path(opts.page_dir, href)
    if target is None:
        return None
    if target == posixpath.join(opts.page_dir, opts.page_file) and "#" in href:
        return "#" + href.split("#", 1)[1]
    if opts.link_base is None:
        return None
    fragment = "#" + href.split("#", 1)[1] if "#" in href else ""
    return opts.link_base + target + fragment


def is_frozen_report(data: bytes) -> bool:
    """Starts with the frozen-report prologue: a policy that runs no script and loads nothing remote.

    A build copies archived reports into the site byte for byte; this check makes sure a file placed
    in archive/ by hand cannot bring script into the published site.
    """
    try:
        head = data[:2048].decode("utf-8")
    except UnicodeDecodeError:
        head = data[:2048].decode("utf-8", errors="ignore")
    return FROZEN_PREFIX.match(head) is not None


def link_base_for(base_url: str) -> str | None:
    """obs.yaml's base_url as a prefix for links (http(s) only), or None when it is not set."""
    url = base_url.strip()
    if not re.match(r"^https?://[^\s\"'<>]+$", url, re.IGNORECASE):
        return None
    return url if url.endswith("/") else url + "/"


def render_single_file(loaded: LoadedRun, opts: SingleFileOptions) -> bytes:
    """Render the run's page as the site would, then inline it."""
    from obs.render.run_page import render_run
    from obs.render.site import Renderer

    cfg = loaded.tree.cfg
    renderer = Renderer(loaded.tree.meta)
    output = render_run(
        loaded.report,
        renderer,
        loaded.links,
        source_rel=loaded.source_rel,
        max_points=cfg.max_points,
        slug=loaded.slug,
        interactive=False,  # one file, no data files beside it: the curves are static SVG figures
    )
    return make_single_file(output.files, opts)
