"""Agent learning in a built site: the pages, index.json's `learning` section, `--compare-to` and
`obs summary --compare-to`. The tree is the demo's export (scripts/make_learning_demo.py), alone."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from obs.build import BuildOptions
from obs.cli import main
from obs.publish.extras import build_published

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_learning_demo.py"


def export(root: Path, previous: bool) -> Path:
    spec = importlib.util.spec_from_file_location("make_learning_demo", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for rel, blob in module.learning_tree(previous).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(blob)
    return root


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("learning-site")
    old_src, new_src = export(base / "old-src", True), export(base / "new-src", False)
    old, new = base / "old", base / "new"
    assert not build_published(BuildOptions(source=old_src, out=old, quiet=True)).errors
    result = build_published(BuildOptions(source=new_src, out=new, quiet=True), compare_to=old)
    assert not result.errors, [d.format() for d in result.diagnostics]
    return new_src, old, new


def test_pages_and_links(sites: tuple[Path, Path, Path]) -> None:
    _, _, new = sites
    assert sorted(p.name for p in (new / "learning").iterdir()) == [
        "incident-triage.html",
        "index.html",
        "sql-repair.html",
    ]
    assert 'href="learning/index.html"' in (new / "index.html").read_text()
    page = (new / "learning" / "incident-triage.html").read_text()
    for section in ("momentum", "review", "modes", "models", "playbook", "latest", "comparison"):
        assert f'id="{section}"' in page, section
    assert "associations, not effects" in page
    assert "Approved and pending sessions are mixed" in page
    # the harmful entry is the first row of the impact table
    table = page[page.index('id="impact-table"') :]
    assert table.index('id="entry-pb-03"') < table.index('id="entry-pb-01"')


def test_index_json_learning_section(sites: tuple[Path, Path, Path]) -> None:
    new_src, _, new = sites
    doc = json.loads((new / "index.json").read_text())
    learning = doc["learning"]
    assert learning["run_metadata"]["prompt_variant"] == "schema_v2"
    keys = {k["key"]: k for k in learning["keys"]}
    assert set(keys) == {"incident-triage", "sql-repair"}
    rows = [json.loads(line) for line in (new_src / "agents/results/learning/sessions.jsonl").read_text().splitlines()]
    triage = sorted((r for r in rows if r["learning_key"] == "incident-triage"), key=lambda r: r["created_at"])
    assert keys["incident-triage"]["sessions"] == len(triage)
    recent = [r["session_reward"]["score"] for r in triage[-keys["incident-triage"]["recent_n"] :]]
    assert keys["incident-triage"]["recent_mean"] == pytest.approx(sum(recent) / len(recent))
    assert keys["incident-triage"]["page"] == "learning/incident-triage.html"
    assert doc["runs"] == []  # the sessions are not runs


def test_compare_to_deltas_and_boards(sites: tuple[Path, Path, Path]) -> None:
    _, old, new = sites
    before = {k["key"]: k for k in json.loads((old / "index.json").read_text())["learning"]["keys"]}
    after = json.loads((new / "index.json").read_text())["learning"]
    comparison = after["comparison"]
    by_key = {k["key"]: k for k in comparison["keys"]}
    for key, change in by_key.items():
        figures = {f["name"]: f for f in change["figures"]}
        assert figures["sessions"]["old"] == before[key]["sessions"]
        assert figures["sessions"]["delta"] == pytest.approx(figures["sessions"]["new"] - before[key]["sessions"])
        assert figures["recent mean"]["old"] == pytest.approx(before[key]["recent_mean"])
    deltas = {k: {f["name"]: f for f in c["figures"]}["recent mean"]["delta"] for k, c in by_key.items()}
    best = [b["key"] for b in comparison["best"]]
    worst = [w["key"] for w in comparison["worst"]]
    assert best == sorted([k for k, d in deltas.items() if d > 0], key=lambda k: -deltas[k])
    assert worst == sorted([k for k, d in deltas.items() if d < 0], key=lambda k: deltas[k])
    assert comparison["old_run_metadata"]["prompt_variant"] == "schema_v1"
    index = (new / "learning" / "index.html").read_text()
    assert 'id="board-best"' in index and "schema_v1" in index
    changes = (new / "changes.html").read_text()  # the runs' changes page leads to the learning keys' comparison
    assert 'href="learning/index.html#boards"' in changes and "Nothing changed in the runs" in changes


def test_summary_compare_to_markdown(
    sites: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new_src, old, new = sites
    out = tmp_path / "summary.md"
    assert main(["summary", "--compare-to", str(old), str(new_src), "-o", str(out)]) == 0
    text = out.read_text()
    after = {k["key"]: k for k in json.loads((new / "index.json").read_text())["learning"]["comparison"]["keys"]}
    assert "### Comparison vs previous build" in text
    assert "| `incident-triage` |" in text and "| `sql-repair` |" in text
    sessions = {f["name"]: f for f in after["incident-triage"]["figures"]}["sessions"]
    assert f"{sessions['old']:.0f} → {sessions['new']:.0f} (+{sessions['delta']:.0f})" in text
    assert "prompt\\_variant `schema_v1` → `schema_v2`" in text  # the name escaped as Markdown text
    assert "**Worst deltas**" in text
    assert main(["summary", "--compare-to", str(tmp_path / "nothing"), str(new_src)]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_an_edited_export_rebuilds_the_pages(tmp_path: Path) -> None:
    src = export(tmp_path / "src", False)
    out = tmp_path / "site"
    build_published(BuildOptions(source=src, out=out, quiet=True))
    path = src / "agents/results/learning/sessions.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-30]) + "\n")  # the newest 30 sessions removed
    build_published(BuildOptions(source=src, out=out, quiet=True))
    keys = json.loads((out / "index.json").read_text())["learning"]["keys"]
    assert sum(k["sessions"] for k in keys) == len(lines) - 30


def test_the_demo_links_its_learning_keys_and_tag_cohorts(demo_site: Path) -> None:
    index = (demo_site / "index.html").read_text()
    assert 'href="learning/index.html"' in index and 'href="cohorts.html"' in index
    assert (demo_site / "learning" / "incident-triage.html").is_file()
    cohorts = (demo_site / "cohorts.html").read_text()
    assert "association, not an effect" in cohorts and 'id="cohorts-table"' in cohorts
    run_page = (demo_site / "runs" / "spec03-r2" / "index.html").read_text()
    assert 'href="../../learning/index.html"' in run_page  # the top bar leads to the agents from every page


def test_obs_check_reads_the_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = export(tmp_path / "src", False)
    with (src / "agents/results/learning/sessions.jsonl").open("a") as fh:
        fh.write('{"learning_key": "k", "session_id": "x", "session_reward": {"score": "bad"}}\n')
    assert main(["check", str(src)]) == 0
    out, err = capsys.readouterr()
    assert "agent sessions: 301 sessions of 3 learning keys (incident-triage, k, sql-repair)" in out
    assert "sessions.jsonl:301: warning: session reward 'bad' is not a finite number" in out + err


def test_hostile_text_in_an_export_stays_text(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "x").mkdir(parents=True)
    bad = '<script>alert(1)</script>"\u202e'
    rows = [
        {
            "session_id": f"{bad}{i}",
            "learning_key": bad if i % 2 else "index",
            "task_id": bad,
            "created_at": f"2026-01-01T00:{i:02d}:00Z",
            "execution_mode": bad,
            "review_status": "approved",
            "session_reward": {"score": i / 10},
            "models": {bad: bad},
            "metadata": {
                "learning_usage": {"session": {"entries": [{"entry_id": bad, "cue_hit": True, "adopted": True}]}}
            },
        }
        for i in range(8)
    ]
    (src / "x" / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (src / "x" / "meta.json").write_text(json.dumps({"run_metadata": {"prompt_variant": bad}}))
    out = tmp_path / "site"
    result = build_published(BuildOptions(source=src, out=out, quiet=True))
    assert not result.errors
    pages = sorted((out / "learning").iterdir())
    assert [p.name for p in pages if p.name != "index.html"] == ["index-2.html", "script-alert-1-script.html"]
    for page in pages:
        text = page.read_text()
        assert "<script>alert" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text, page.name


def test_summary_markdown_fits_a_github_comment(sites: tuple[Path, Path, Path]) -> None:
    from obs.pipeline import SourceTree
    from obs.publish.learning import LearningFeature, learning_markdown, read_old_learning

    new_src, old, _ = sites
    tree = SourceTree.open(new_src)
    feature = LearningFeature(compare_to=old)
    feature.read(tree.root, tree.found.learning, tree.diags, read_old_learning(old))
    full = learning_markdown(feature)
    short = learning_markdown(feature, limit=900)
    assert len(short) <= 900 < len(full)
    assert "Trimmed to fit GitHub's 900-character comment limit" in short
    assert short.startswith(full[:200])


def test_obs_yaml_sets_the_momentum_windows(tmp_path: Path) -> None:
    src = export(tmp_path / "src", False)
    (src / "obs.yaml").write_text("trends:\n  recent_sessions: 20\n  baseline_sessions: 30\n")
    out = tmp_path / "site"
    assert not build_published(BuildOptions(source=src, out=out, quiet=True)).errors
    rows = [json.loads(line) for line in (src / "agents/results/learning/sessions.jsonl").read_text().splitlines()]
    triage = sorted((r for r in rows if r["learning_key"] == "incident-triage"), key=lambda r: r["created_at"])
    key = next(
        k for k in json.loads((out / "index.json").read_text())["learning"]["keys"] if k["key"] == "incident-triage"
    )
    assert (key["recent_window"], key["recent_n"], key["baseline_window"], key["baseline_n"]) == (20, 20, 30, 30)
    baseline = [r["session_reward"]["score"] for r in triage[-50:-20]]
    assert key["baseline_mean"] == pytest.approx(sum(baseline) / len(baseline))
    assert "last 20 of 20 sessions asked for" in (out / "learning/incident-triage.html").read_text()


def test_small_and_empty_keys_say_what_is_missing(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "x").mkdir(parents=True)
    rows = [
        {"session_id": "a1", "learning_key": "one", "session_reward": {"score": 0.5}},
        {"session_id": "b1", "learning_key": "unrewarded", "session_reward": {"score": None}},
        {"session_id": "b2", "learning_key": "unrewarded", "session_reward": {"score": None}},
    ]
    (src / "x" / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "site"
    result = build_published(BuildOptions(source=src, out=out, quiet=True))
    assert not result.errors, [d.format() for d in result.diagnostics]
    one = (out / "learning" / "one.html").read_text()
    assert "no interval: no sessions in the baseline window" in one
    assert "No session names its models" in one and "No session records playbook usage" in one
    assert "No playbook file for this key" in one
    empty = (out / "learning" / "unrewarded.html").read_text()
    assert "No session of this key has a reward" in empty and "2 without a reward" in empty
    keys = {k["key"]: k for k in json.loads((out / "index.json").read_text())["learning"]["keys"]}
    assert keys["one"]["recent_n"] == 1 and keys["one"]["baseline_n"] == 0 and keys["one"]["momentum_low"] is None
    assert keys["unrewarded"]["recent_mean"] is None


def test_a_tree_of_agent_sessions_alone_is_a_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = export(tmp_path / "src", False)
    assert main(["build", str(src), "-o", str(tmp_path / "site"), "--strict", "-q"]) == 0
    assert "no run found" not in capsys.readouterr().err
    assert (tmp_path / "site" / "learning" / "index.html").is_file()
