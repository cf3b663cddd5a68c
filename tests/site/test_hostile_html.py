"""Hostile input: every string a run provides is escaped, Markdown is sanitised, paths stay inside.

Checked on the built HTML with an HTML parser: the only scripts are the site's own, no element has
an event-handler attribute, no link uses `javascript:`, no image loads from another host.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from obs.build import BuildOptions
from obs.publish.extras import build_published

PAYLOADS = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "[click](javascript:window.__pwned=3)",
    "</textarea></td></tr></table><script>window.__pwned=4</script>",
    '"><svg onload="window.__pwned=5">',
    "<a href='javascript:alert(1)'>x</a>",
    "\u202eevil\u202c ☃️ \"quotes\" & 'apostrophes' &amp;",
    "![remote](https://evil.example/pixel.png)",
    "{{ 7*7 }} {% raw %}",
]
HOSTILE = "\n\n".join(PAYLOADS)


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    source = root / "src"
    base = source / "spec<x>" / "base"
    run = source / "spec<x>" / "run"
    for d in (base, run):
        (d / "renders").mkdir(parents=True)
    (source / "spec<x>" / "spec.yaml").write_text(
        yaml.safe_dump({"id": "spec<script>", "question": HOSTILE, "baseline": "base<script>"})
    )
    for folder, rid in ((base, "base<script>"), (run, '<script>window.__pwned=9</script>"run')):
        meta = {
            "id": rid,
            "title": HOSTILE,
            "revision": "<b>r1</b>",
            "date": "2026-01-01<script>",
            "status": "finished",
            "baseline": "base<script>" if folder is run else None,
            "primary_axis": "<i>data</i>",
            "hypothesis": HOSTILE,
            "success_criteria": [HOSTILE, "ok"],
            "held_constant": ["<script>"],
            "config": {"<k>": "<v onerror=x>", "train": {"lr": "</td>"}},
            "contract": {"dsl": "<script>x</script>"},
            "data": {"rows": "<b>many</b>"},
            "provenance": {"code_commit": "javascript:alert(1)"},
            "tags": ["<script>"],
            "lessons": HOSTILE,
            "decision": {"verdict": "reject", "rationale": HOSTILE, "next": "<script>n</script>", "by": "<me>"},
            "weird<key>": "<value>",
        }
        (folder / "run.yaml").write_text(yaml.safe_dump({k: v for k, v in meta.items() if v is not None}))
        (folder / "notes.md").write_text(HOSTILE)
        (folder / "metrics.jsonl").write_text(
            "".join(
                json.dumps({"step": i, "loss": 1.0 / (i + 1), "stage": "<script>s</script>", "<b>m</b>": i}) + "\n"
                for i in range(20)
            )
        )
        (folder / "renders" / "evil.svg").write_text(
            '<svg xmlns="http://www.w3.org/2000/svg"><script>window.__pwned=6</script></svg>'
        )
        cases = []
        for i, payload in enumerate(PAYLOADS):
            cases.append(
                {
                    "id": f"c{i}<script>",
                    "split": "<test>",
                    "family": payload,
                    "exact": folder is base,
                    "renderable": False,
                    "failure_class": payload,
                    "prompt": payload,
                    "expected": payload,
                    "actual": payload * 3,
                    "note": payload,
                    "render": "renders/evil.svg",
                    "extra<x>": payload,
                }
            )
        cases.append({"id": "escape", "exact": False, "render": "../../../etc/passwd"})
        (folder / "probe.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (source / "obs.yaml").write_text(yaml.safe_dump({"title": "<script>window.__pwned=7</script>"}))
    out = root / "site"
    build_published(BuildOptions(source=source, out=out))
    return out


def all_pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


OUR_SCRIPTS = {
    "chart-export.js",
    *("obs.js", "compare.js", "compare-data.js", "overlay.js", "runs-table.js", "runs-pcp.js", "cases.js", "charts.js"),
    *("uPlot.iife.min.js", "curves.js", "fonts.js"),
}


def test_no_script_but_our_own(hostile_site: Path) -> None:
    pages = all_pages(hostile_site)
    assert len(pages) >= 5
    for page in pages:
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        scripts = soup.find_all("script")
        sources = [s.get("src", "") for s in scripts if s.get("src")]
        assert "assets/obs.js" in " ".join(sources), page
        assert all(src.rsplit("/", 1)[-1] in OUR_SCRIPTS for src in sources), page
        for src in (s for s in sources if s.endswith("curves.js")):  # chart data: the page's own file
            assert src == "curves.js", page
            assert_data_only(page.parent / src)
        for data in (s for s in scripts if not s.get("src")):  # inert data blocks only, never code
            assert data.get("type") == "application/json", page
            assert "<" not in data.string, page  # tojson escapes every "<", so no "</script>" breaks out
            json.loads(data.string)
        assert soup.find_all(["iframe", "object", "embed", "textarea", "base", "style"]) == [], page
        for svg in soup.find_all("svg"):  # our own sparklines only: one polyline, no script, no links
            assert svg.get("class") == ["spark"] and [c.name for c in svg.find_all(True)] == ["polyline"], page


def assert_data_only(path: Path) -> None:
    """A chart data file is one JSON value handed to OBS_DATA.push(), nothing else: a run's text
    (series names, stage labels, ids) can only be a JSON string in it, never code."""
    from obs.render.chartdata import PREFIX, SUFFIX

    data = path.read_bytes()
    assert data.startswith(PREFIX) and data.endswith(SUFFIX), path
    value = json.loads(data[len(PREFIX) : -len(SUFFIX)])
    assert isinstance(value, dict) and isinstance(value.get("slug"), str), path


def test_chart_data_files_hold_only_data(hostile_site: Path) -> None:
    files = sorted(hostile_site.rglob("curves.js"))
    assert files, "every run with metrics has a chart data file"
    for path in files:
        assert_data_only(path)
    texts = "".join(p.read_text(encoding="utf-8") for p in files)
    assert "<b>m</b>" in texts and "<script>s</script>" in texts  # names kept as data, drawn as text


def test_no_event_handlers_or_javascript_links(hostile_site: Path) -> None:
    for page in all_pages(hostile_site):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for tag in soup.find_all(True):
            for attr, value in tag.attrs.items():
                assert not attr.lower().startswith("on"), (page, tag.name, attr)
                text = " ".join(value) if isinstance(value, list) else str(value)
                if attr in ("href", "src"):
                    assert not text.strip().lower().startswith(("javascript:", "data:text", "vbscript:")), (page, text)
                    assert not text.startswith(("http://", "https://", "//")) or tag.name == "a", (page, text)


def test_payload_text_is_shown_escaped(hostile_site: Path) -> None:
    page = next(
        p
        for p in all_pages(hostile_site)
        if "run" in p.parent.name and p.parent.parent.name == "runs" and "base" not in p.parent.name
    )
    html = page.read_text(encoding="utf-8")
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html  # shown as text in the gallery
    assert "<script>window.__pwned" not in html
    assert "{{ 7*7 }}" in html  # not evaluated as a template
    soup = BeautifulSoup(html, "html.parser")
    assert not soup.select("img[src^='https']"), "Markdown images are removed (air gap)"


def test_render_paths_cannot_leave_the_run_folder(hostile_site: Path) -> None:
    files = [p.relative_to(hostile_site).as_posix() for p in hostile_site.rglob("*") if p.is_file()]
    assert not any("passwd" in f for f in files)
    for page in all_pages(hostile_site):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for img in soup.find_all("img"):
            if img["src"].startswith("data:image/svg+xml;base64,"):
                continue  # SVG renders are inlined as images (they never run script there)
            target = (page.parent / img["src"]).resolve()
            assert target.is_relative_to(hostile_site.resolve()), img["src"]
            assert target.is_file(), img["src"]


def test_run_ids_become_safe_folder_names(hostile_site: Path) -> None:
    names = [p.name for p in (hostile_site / "runs").iterdir()]
    assert all("<" not in n and ">" not in n and '"' not in n for n in names)
    assert len(names) == 2
