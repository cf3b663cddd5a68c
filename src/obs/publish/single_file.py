"""One run's page as one self-contained HTML file: `obs build --single-file RUN -o report.html`.

The page is rendered from the site's templates with a variant context (`obs.render.standalone`):
the stylesheet (with its WOFF2 fonts as data: URIs) as one <style>, obs.js as one <script>,
figures and renders as data: images, links to other pages of the site pointing at `base_url` when
obs.yaml sets one (a navigation, not a load), else plain text; in-page anchors stay. The policy
allows exactly the inline style and script, by their SHA-256 hashes (see obs.render.standalone).

Frozen reports (`obs decide`) are made the same way without any script (`script-src 'none'`), which
is what lets a build check, before copying an archived file into the site, that it cannot run code
(`is_frozen_report`). The site's 404.html is one too: it is served at any address, where relative
links and files would not resolve.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from obs.render.standalone import Standalone, data_uri
from obs.resources import templates_dir

if TYPE_CHECKING:
    from obs.pipeline import LoadedRun

# what a frozen report must start with for a build to publish it (see `is_frozen_report`)
FROZEN_PREFIX = re.compile(
    r"""\A<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n"""
    r"""<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; font-src data:; """
    r"""style-src 'sha256-[A-Za-z0-9+/]{43}='; script-src 'none'; connect-src 'none'; object-src 'none'; """
    r"""frame-src 'none'; base-uri 'none'; form-action 'none'">\n"""
)
_CSS_URL = re.compile(r"""url\(\s*(["']?)([^"')\s]+)\1\s*\)""")


class InlineError(Exception):
    pass


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


def standalone(opts: SingleFileOptions, assets: Path | None = None) -> Standalone:
    """The variant context of a page standing alone: its inline stylesheet and script, and its links."""
    assets = assets or templates_dir() / "assets"
    style = inline_css((assets / "obs.css").read_text(encoding="utf-8"), assets)
    script = None
    if opts.with_script:
        script = (assets / "obs.js").read_text(encoding="utf-8")
        if "</script" in script.lower():
            raise InlineError("obs.js contains '</script'")
    return Standalone(
        page_dir=opts.page_dir,
        style=style,
        script=script,
        link_base=opts.link_base,
        page_file=opts.page_file,
        banner=Markup(opts.banner) if opts.banner else None,
    )


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
    """The run's page as the site would render it, in its variant that stands alone."""
    from obs.pipeline import gate_results
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
        standalone=standalone(opts),
        gates=gate_results(loaded.tree, loaded),
    )
    return output.files["index.html"]
