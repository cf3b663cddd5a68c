"""Hostile input, in the browser: a site built from runs whose every text field carries script
payloads, opened in Chromium, must run none of them.

Each payload would call `__obsPwned(n)` (a function the test exposes to the page) or set the global
`__obsFlag`. Every page is loaded, then everything a payload could hook is poked: every <details>
opened, every element focused and hovered. This is done twice: with the site's CSP, and with the CSP
bypassed, so that escaping alone is shown to hold (the CSP is the second wall, not the only one).
A control page with a real payload proves the harness would notice an execution.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from browserkit import PageWatch, ServedSite, new_watched_context, serve, settle, site_pages, wait_until
from playwright.sync_api import Browser, BrowserContext, Dialog, Page

from obs.build import BuildOptions
from obs.publish.extras import build_published

P = "__obsPwned"
PAYLOADS = [
    f"<script>{P}(1)</script>",
    f'<img src=x onerror="{P}(2)">',
    f"[click me](javascript:{P}(3))",
    f"<a href=\"javascript:{P}(4)\">link</a> <a href='jav&#x61;script:{P}(4)'>encoded</a>",
    f"</textarea></title></style></td></tr></table></pre></code><script>{P}(5)</script>",
    f'"><svg onload="{P}(6)"><script>{P}(6)</script></svg>',
    f"' onmouseover='{P}(7)' x='",
    f'" autofocus onfocus="{P}(8)" x="',
    f"<details open ontoggle={P}(9)><summary>x</summary></details>",
    f"<iframe srcdoc=\"<script>parent.{P}(10)</script>\"></iframe><object data='javascript:{P}(10)'></object>",
    f'<meta http-equiv="refresh" content="0;url=javascript:{P}(11)">',
    "<script>window.__obsFlag = 12</script><style>@import url(https://evil.example/x.css);</style>",
    f"javascript:{P}(13)",
    f"data:text/html,<script>{P}(14)</script>",
    f"![remote](https://evil.example/pixel.png) <img src='https://evil.example/p.png'> `<script>{P}(15)</script>`",
    "{{ 7*7 }} {% raw %} ${7*7} <!-- comment -->",
]
HOSTILE = "\n\n".join(PAYLOADS)
EVIL_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" onload="__obsPwned(20)">'
    "<script>__obsPwned(21); window.__obsFlag = 21</script>"
    '<foreignObject width="40" height="40"><img xmlns="http://www.w3.org/1999/xhtml" src="x" '
    'onerror="__obsPwned(22)"/></foreignObject><rect width="40" height="40" fill="red"/></svg>'
)

POKE = """async () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  for (const el of document.querySelectorAll('body *')) {
    el.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
    if (typeof el.focus === 'function') el.focus();
  }
  await new Promise(r => setTimeout(r, 50));
  return typeof window.__obsFlag === 'undefined' ? null : String(window.__obsFlag);
}"""


def _run_yaml(rid: str, baseline: str | None, extra: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "id": rid,
        "title": HOSTILE,
        "revision": PAYLOADS[0],
        "date": "2026-01-01",
        "status": "finished",
        "baseline": baseline,
        "primary_axis": PAYLOADS[1],
        "primary_metric": "exact",
        "hypothesis": HOSTILE,
        "success_criteria": PAYLOADS,
        "held_constant": [PAYLOADS[4], "data"],
        "model": {"name": PAYLOADS[5], PAYLOADS[6]: PAYLOADS[7]},
        "config": {PAYLOADS[0]: PAYLOADS[1], "train": {"lr": PAYLOADS[4], "note": HOSTILE}},
        "contract": {"dsl": PAYLOADS[0], "probe": PAYLOADS[12]},
        "data": {"dataset_version": PAYLOADS[13], "rows": PAYLOADS[1]},
        "provenance": {"code_commit": PAYLOADS[12], "corpus_hash": PAYLOADS[13], "tokenizer": PAYLOADS[9]},
        "tags": PAYLOADS[:6],
        "lessons": HOSTILE,
        "decision": {"verdict": "reject", "rationale": HOSTILE, "next": PAYLOADS[4], "by": PAYLOADS[7]},
        f"weird{PAYLOADS[0]}": PAYLOADS[10],
        **extra,
    }
    return {k: v for k, v in meta.items() if v is not None}


def _write_run(folder: Path, meta: dict[str, Any], good: bool) -> None:
    (folder / "renders").mkdir(parents=True)
    (folder / "run.yaml").write_text(yaml.safe_dump(meta), encoding="utf-8")
    (folder / "notes.md").write_text(HOSTILE, encoding="utf-8")
    (folder / "renders" / "evil.svg").write_text(EVIL_SVG, encoding="utf-8")
    (folder / "metrics.jsonl").write_text(
        "".join(
            json.dumps({"step": i, "loss": 1.0 / (i + 1), "stage": PAYLOADS[i % len(PAYLOADS)], PAYLOADS[0]: i * 0.1})
            + "\n"
            for i in range(30)
        ),
        encoding="utf-8",
    )
    cases = []
    for i, payload in enumerate(PAYLOADS * 2):
        cases.append(
            {
                "id": f"c{i}{payload}",
                "split": PAYLOADS[1],
                "family": payload,
                "exact": good or i % 3 == 0,
                "renderable": True,
                "failure_class": payload,
                "prompt": payload,
                "expected": payload + "\n" * 20 + HOSTILE,  # long: goes into a collapsed <details>
                "actual": payload,
                "note": payload,
                "render": "renders/evil.svg",
                f"extra{payload}": payload,
            }
        )
    (folder / "probe.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    gate = {
        "passed": False,
        "parity_score": 0.5,
        "checks": [{"name": p, "passed": False, "detail": p} for p in PAYLOADS[:5]],
        "assets": [
            {"id": p, "passed": False, "score": 0.1, "render": "renders/evil.svg", "note": p} for p in PAYLOADS[:3]
        ],
    }
    (folder / "gate.json").write_text(json.dumps(gate), encoding="utf-8")


def build_hostile_source(source: Path) -> None:
    spec = source / "spec-evil"
    spec.mkdir(parents=True)
    (spec / "spec.yaml").write_text(
        yaml.safe_dump({"id": f"spec{PAYLOADS[0]}", "title": HOSTILE, "question": HOSTILE, "baseline": "base-run"}),
        encoding="utf-8",
    )
    _write_run(spec / "base", _run_yaml("base-run", None, {"spec": f"spec{PAYLOADS[0]}"}), good=True)
    _write_run(spec / "evil", _run_yaml(f"evil{PAYLOADS[0]}", "base-run", {"spec": f"spec{PAYLOADS[0]}"}), good=False)
    camp = source / "camp-evil"
    camp.mkdir()
    conditions = [PAYLOADS[1], PAYLOADS[8]]
    (camp / "campaign.yaml").write_text(
        yaml.safe_dump(
            {
                "id": f"camp{PAYLOADS[1]}",
                "title": HOSTILE,
                "question": HOSTILE,
                "conditions": [{"name": c, "label": HOSTILE, "description": HOSTILE} for c in conditions],
                "baseline_condition": conditions[0],
                "primary_metric": "loss",
                "higher_is_better": False,
                "seeds": [1, 2],
            }
        ),
        encoding="utf-8",
    )
    for ci, cond in enumerate(conditions):
        for seed in (1, 2):
            meta = _run_yaml(f"camp-{ci}-{seed}{PAYLOADS[2]}", None, {"condition": cond, "seed": seed, "arm": HOSTILE})
            _write_run(camp / f"c{ci}s{seed}", meta, good=bool(ci))
    (source / "obs.yaml").write_text(yaml.safe_dump({"title": f"{PAYLOADS[0]}{PAYLOADS[1]}"}), encoding="utf-8")


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    root = tmp_path_factory.mktemp("hostile-browser")
    build_hostile_source(root / "src")
    out = root / "site"
    build_published(BuildOptions(source=root / "src", out=out, quiet=True))
    (out / "control.html").write_text(  # not obs output: a page that really runs a payload
        f'<!DOCTYPE html><html lang="en"><title>control</title><img src="x" alt="" onerror="{P}(\'control\')">'
        "<script>window.__obsFlag = 'control'</script></html>",
        encoding="utf-8",
    )
    site = serve(out)
    yield site
    site.close()


class Executions:
    """Calls of the exposed function and JavaScript dialogs: any one is a payload that ran."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def attach(self, context: BrowserContext) -> None:
        context.expose_function(P, self._called)
        context.on("page", lambda page: page.on("dialog", self._dialog))

    def _called(self, *args: object) -> None:
        self.calls.append(" ".join(map(str, args)))

    def _dialog(self, dialog: Dialog) -> None:
        self.calls.append(f"dialog: {dialog.message}")
        dialog.dismiss()


def _visit_all(context: BrowserContext, site: ServedSite, executions: Executions, watch: PageWatch) -> list[str]:
    page = context.new_page()
    problems = []
    pages = [p for p in site_pages(site.root) if p != "control.html"]
    assert len(pages) >= 8, pages
    for rel in pages:
        page.goto(site.url(rel))
        settle(page)
        flag = page.evaluate(POKE)
        page.wait_for_timeout(20)
        if flag is not None:
            problems.append(f"{rel}: a payload set window.__obsFlag = {flag}")
        if executions.calls:
            problems.append(f"{rel}: payloads ran: {executions.calls}")
            executions.calls.clear()
        if page.url != site.url(rel):
            problems.append(f"{rel}: the page navigated away to {page.url}")
        if page.locator("a[href^='javascript:' i], [onerror], [onload], [onmouseover], [onfocus], iframe").count():
            problems.append(f"{rel}: an event handler, javascript: link or frame made it into the DOM")
        text = page.locator("main").inner_text()
        if "<script>" not in text:
            problems.append(f"{rel}: the payloads should be shown as text, not dropped")
    for url in watch.foreign:
        problems.append(f"a payload made the browser load {url}")
    problems += [f"uncaught exception: {e}" for e in watch.page_errors]
    return problems


@pytest.mark.parametrize("csp", ["with the CSP", "CSP bypassed"])
def test_no_payload_runs_on_any_page(
    browser: Browser, browser_context_args: dict[str, Any], hostile_site: ServedSite, csp: str
) -> None:
    context, watch = new_watched_context(
        browser, browser_context_args, (hostile_site.base, "data:"), bypass_csp=csp == "CSP bypassed"
    )
    executions = Executions()
    executions.attach(context)
    try:
        problems = _visit_all(context, hostile_site, executions, watch)
    finally:
        context.close()
    assert not problems, "\n".join(problems)


def test_the_harness_sees_a_payload_that_runs(
    browser: Browser, browser_context_args: dict[str, Any], hostile_site: ServedSite
) -> None:
    context = browser.new_context(**browser_context_args, bypass_csp=True)
    executions = Executions()
    executions.attach(context)
    try:
        page: Page = context.new_page()
        page.goto(hostile_site.url("control.html"))
        page.wait_for_function("() => window.__obsFlag === 'control'")
        wait_until(page, lambda: bool(executions.calls), "the control payload's call")  # onerror comes later
        assert executions.calls == ["control"]
    finally:
        context.close()


def test_a_probe_render_svg_cannot_run_script(
    browser: Browser, browser_context_args: dict[str, Any], hostile_site: ServedSite
) -> None:
    """An SVG file served at the site's origin would run its own script when opened by itself, so
    SVG renders are never copied as files: the gallery shows them as data: images, where scripts
    never run (and a data: URL cannot be opened as a page)."""
    copied = [
        p.relative_to(hostile_site.root).as_posix()
        for p in hostile_site.root.rglob("*.svg")
        if not p.name.startswith("fig-")
    ]
    assert copied == [], f"SVG renders must not be files in the site: {copied}"
    context = browser.new_context(**browser_context_args)
    executions = Executions()
    executions.attach(context)
    try:
        page = context.new_page()
        run_pages = sorted(
            p.relative_to(hostile_site.root).as_posix() for p in hostile_site.root.glob("runs/*/index.html")
        )
        shown = 0
        for rel in run_pages:
            page.goto(hostile_site.url(rel))
            settle(page)  # the gallery's examples are drawn when a reader comes near (obs.js drawAllLater)
            sources = page.eval_on_selector_all("img", "imgs => imgs.map(i => [i.getAttribute('src'), i.naturalWidth])")
            for src, width in sources:
                if src.startswith("data:image/svg+xml"):
                    shown += 1
                    assert width > 0, "the SVG render is displayed"
            flag = page.evaluate("() => typeof window.__obsFlag === 'undefined' ? null : String(window.__obsFlag)")
            assert not executions.calls and flag is None, f"{rel}: a render's script ran: {executions.calls}"
        assert shown, "the hostile runs' SVG renders are shown in the gallery"
    finally:
        context.close()
