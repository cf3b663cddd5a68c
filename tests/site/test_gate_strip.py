"""The run page's gate strip (issue 27): obs.yaml's gates judged once per run and shown on its page as on the
leaderboard, even when a gate reads a run (`run:ID.`) that the build makes after it, and again when that run
changes. Each chip carries the gate's value and threshold; the numbers are checked by hand here."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from bs4 import BeautifulSoup

from obs.build import BuildOptions
from obs.publish.extras import build_published


def _run(folder: Path, run_id: str, exact: int, n: int = 40) -> None:
    """A finished run whose probe has `exact` cases right out of `n` (every case renderable)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.yaml").write_text(yaml.safe_dump({"id": run_id, "status": "finished"}), encoding="utf-8")
    rows = [{"id": f"c{i:02d}", "exact": i < exact, "renderable": True} for i in range(n)]
    (folder / "probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _tree(root: Path, a: int, z: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    gates = [
        {"name": "over-a", "label": "as exact as run a", "expr": "exact >= run:a.exact"},
        {"name": "over-z", "label": "as exact as run z", "expr": "exact >= run:z.exact"},
        {"name": "renders", "label": "all renderable", "expr": "renderable >= 100%"},
    ]
    (root / "obs.yaml").write_text(yaml.safe_dump({"gates": gates}), encoding="utf-8")
    _run(root / "a", "a", a)
    _run(root / "z", "z", z)
    return root


def _strip(site: Path, slug: str) -> dict[str, tuple[str, str]]:
    page = BeautifulSoup((site / "runs" / slug / "index.html").read_text(encoding="utf-8"), "html.parser")
    chips = page.select("#gates .gate-chips [data-gate]")
    return {c["data-gate"]: (c["data-gate-status"], " ".join(c.get_text(" ").split())) for c in chips}


def _leaderboard(site: Path) -> dict[tuple[str, str], str]:
    page = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    return {
        (cell["data-gate-run"], el["data-gate"]): el["data-gate-status"]
        for cell in page.select("td[data-gate-run]")
        for el in cell.select("[data-gate]")
    }


def test_the_strip_reads_runs_built_after_it_and_follows_their_changes(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src", a=30, z=20)  # a: 75.0% exact, z: 50.0%
    site = tmp_path / "site"
    first = build_published(BuildOptions(source=src, out=site, quiet=True, jobs=1))
    assert first.errors == 0
    a, z = _strip(site, "a"), _strip(site, "z")
    # every gate on each run, as the leaderboard judged it
    board = _leaderboard(site)
    for run, strip in (("a", a), ("z", z)):
        assert {name: status for name, (status, _) in strip.items()} == {
            name: board[(run, name)] for name in ("over-a", "over-z", "renders")
        }
    assert a["over-z"][0] == "pass" and "75.0%" in a["over-z"][1] and "needs ≥ 50.0%" in a["over-z"][1]
    assert z["over-a"][0] == "fail" and "50.0%" in z["over-a"][1] and "needs ≥ 75.0%" in z["over-a"][1]
    assert a["renders"] == ("pass", "✓ pass all renderable 100.0% needs ≥ 100.0%")
    doc = json.loads((site / "runs" / "a" / "analysis.json").read_text())
    assert [(g["name"], g["status"]) for g in doc["gates"]] == [
        ("over-a", "pass"),
        ("over-z", "pass"),
        ("renders", "pass"),
    ]
    # z gets better than a: a's page is built again (it reads z), and says so
    _run(src / "z", "z", 36)
    again = build_published(BuildOptions(source=src, out=site, quiet=True, jobs=1))
    assert again.errors == 0
    a = _strip(site, "a")
    assert a["over-z"][0] == "fail" and "needs ≥ 90.0%" in a["over-z"][1]
    assert _leaderboard(site)[("a", "over-z")] == "fail"
    # nothing changed: nothing is built
    third = build_published(BuildOptions(source=src, out=site, quiet=True, jobs=1))
    assert third.built == 0
