"""One measurement or none (issue 27): a run whose probe, compiler, tokenizer or DSL differs from its
baseline's, or from the spec's frozen contract, gets no significance claim, no green headline and no
promote, on every output: the run page's delta tile, the ladder row, `obs summary` and `obs gate`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup

from obs.analysis.measurement import ProbeFingerprint, one_measurement
from obs.cli import main
from obs.pipeline import SourceTree, load_report

CONTRACT = {"dsl": "scene-dsl 3.1", "compiler": "svgc 3.1.2", "tokenizer": "ck-tok-3", "probe": "probe-v3"}
N = 160


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _probe(path: Path, right: int, edited: bool = False) -> None:
    """N cases, the first `right` exact; `edited`: the same ids with other expected outputs."""
    rows = []
    for i in range(N):
        rows.append(
            {
                "id": f"c{i:03d}",
                "family": ("cards", "lane", "poster", "table")[i % 4],
                "split": "test",
                "exact": i < right,
                "expected": f"[scene {i}{' v2' if edited else ''}]",
                "actual": f"[scene {i}]" if i < right else "[scene ?]",
                **({} if i < right else {"failure_class": "layout_drift" if i % 2 else "truncated"}),
            }
        )
    _write(path, "".join(json.dumps(r) + "\n" for r in rows))


def _tree(root: Path, r2_contract: dict[str, Any], edited: bool = False, axis: str = "data") -> Path:
    """A spec of two rungs; r2 changes `axis` (so the held-constant rule passes) and is 25 pp better."""
    src = root / "reports"
    _write(src / "obs.yaml", "obs_contract: 1\ntitle: t\n")
    spec = {"obs_contract": 1, "id": "s1", "contract": CONTRACT, "baseline": "s1-r1", "primary_metric": "exact"}
    _write(src / "s1" / "spec.yaml", yaml.safe_dump(spec))
    r1 = {"id": "s1-r1", "spec": "s1", "revision": "r1", "status": "finished", "contract": CONTRACT}
    r1["data"] = {"dataset_version": "v1"}
    r2 = {
        "id": "s1-r2",
        "spec": "s1",
        "revision": "r2",
        "status": "finished",
        "baseline": "s1-r1",
        "primary_axis": axis,
        "contract": r2_contract,
        "data": {"dataset_version": "v2" if axis == "data" else "v1"},
    }
    _write(src / "s1" / "r1" / "run.yaml", yaml.safe_dump(r1))
    _write(src / "s1" / "r2" / "run.yaml", yaml.safe_dump(r2))
    _probe(src / "s1" / "r1" / "probe.jsonl", 80)
    _probe(src / "s1" / "r2" / "probe.jsonl", 120, edited=edited)
    return src


def test_the_rule_compares_the_contract_keys() -> None:
    assert one_measurement(CONTRACT, baseline_id="r1", baseline_contract=CONTRACT).ok
    moved = one_measurement({**CONTRACT, "probe": "probe-v4"}, baseline_id="r1", baseline_contract=CONTRACT)
    assert [d.text() for d in moved.differences] == ["probe: probe-v4 here, probe-v3 in baseline r1"]
    frozen = one_measurement({**CONTRACT, "compiler": "svgc 3.2"}, frozen_contract=CONTRACT, spec_id="s1")
    assert [d.text() for d in frozen.differences] == [
        "compiler: svgc 3.2 here, svgc 3.1.2 in the frozen contract of spec s1"
    ]
    both = one_measurement(
        {**CONTRACT, "dsl": "scene-dsl 4"},
        baseline_id="r1",
        baseline_contract=CONTRACT,
        frozen_contract=CONTRACT,
        spec_id="s1",
    )
    assert [d.text() for d in both.differences] == [
        "dsl: scene-dsl 4 here, scene-dsl 3.1 in baseline r1 and in the frozen contract of spec s1"
    ]
    # a key one side does not declare is not a difference
    assert one_measurement({"probe": "probe-v3"}, baseline_id="r1", baseline_contract={}).ok


def _fingerprint(tmp_path: Path, name: str, expected: dict[str, str | None]) -> tuple[Any, ProbeFingerprint]:
    from obs.analysis.digest import make_digest

    rows = [{"id": k, "exact": True, **({"expected": v} if v is not None else {})} for k, v in expected.items()]
    folder = tmp_path / name
    _write(folder / "probe.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    _write(folder / "run.yaml", yaml.safe_dump({"id": name, "status": "finished"}))
    tree = SourceTree.open(folder)
    report = load_report(tree, name).report
    digest = make_digest(report.run, 10)
    assert digest.probe is not None and digest.probe_fingerprint is not None
    return digest.probe, digest.probe_fingerprint


def test_probe_identity_is_its_content(tmp_path: Path) -> None:
    base = _fingerprint(tmp_path, "a", {"c1": "x", "c2": "y", "c3": "z"})
    same = _fingerprint(tmp_path, "b", {"c3": "z", "c1": "x", "c2": "y"})  # order does not matter
    assert same[1].content == base[1].content
    edited = _fingerprint(tmp_path, "c", {"c1": "x", "c2": "Y", "c3": "z"})
    assert edited[1].content != base[1].content
    m = one_measurement(CONTRACT, edited, baseline_id="a", baseline_contract=CONTRACT, baseline_probe=base)
    assert [d.key for d in m.differences] == ["probe content"]
    assert "1 of the 3 shared cases have other expected outputs" in m.text()
    # a subset of the same cases (a dev split) is the same probe on fewer cases: the comparison counts the rest
    subset = _fingerprint(tmp_path, "d", {"c1": "x", "c2": "y"})
    assert one_measurement(CONTRACT, subset, baseline_id="a", baseline_contract=CONTRACT, baseline_probe=base).ok
    # a case with no expected output recorded cannot show an edit
    unknown = _fingerprint(tmp_path, "e", {"c1": "x", "c2": None, "c3": "z"})
    assert one_measurement(CONTRACT, unknown, baseline_id="a", baseline_contract=CONTRACT, baseline_probe=base).ok
    # the fingerprint survives the build cache's round trip
    from obs.analysis.measurement import ProbeFingerprint as FP

    back = FP.from_dict(edited[1].as_dict())
    assert back is not None and back.content == edited[1].content
    assert back.per_case.tolist() == edited[1].per_case.tolist()


def test_the_same_measurement_is_judged_as_before(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: the same tree with one contract is promoted (so the tests below fail without the rule)."""
    src = _tree(tmp_path, CONTRACT)
    report = load_report(SourceTree.open(src), "s1-r2").report
    assert report.measurement.ok
    assert report.delta is not None and report.delta.verdict == "statistically_significant_improvement"
    assert main(["gate", "s1-r2", str(src)]) == 0


@pytest.mark.parametrize(
    ("contract", "edited", "axis", "says"),
    [
        ({**CONTRACT, "probe": "probe-v4"}, False, "probe", "probe: probe-v4 here, probe-v3 in baseline s1-r1"),
        (CONTRACT, True, "data", "probe content: 160 of the 160 shared cases have other expected outputs"),
        ({**CONTRACT, "tokenizer": "ck-tok-4"}, False, "tokenizer", "tokenizer: ck-tok-4 here, ck-tok-3 in baseline"),
    ],
    ids=["probe version", "probe edited under the same name", "tokenizer"],
)
def test_two_measurements_get_no_claim_anywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], contract: dict[str, Any], edited: bool, axis: str, says: str
) -> None:
    src = _tree(tmp_path, contract, edited, axis)
    assert load_report(SourceTree.open(src), "s1-r2").report.held.clean  # only the rule below stops it
    report = load_report(SourceTree.open(src), "s1-r2").report
    assert not report.measurement.ok
    d = report.delta
    assert d is not None and d.verdict == "not_one_measurement"
    assert d.interval is None and d.p_value is None and d.delta == pytest.approx(0.25)
    assert report.suggestion.verdict is None
    assert says in report.suggestion.reasons[0]

    capsys.readouterr()
    assert main(["gate", "s1-r2", str(src)]) == 1
    gate = capsys.readouterr().out
    assert "suggested nothing" in gate and says in gate and "not one measurement" in gate

    assert main(["summary", "s1-r2", str(src)]) == 0
    summary = capsys.readouterr().out.replace("\\", "")  # Markdown escapes
    assert "not one measurement" in summary and says in summary
    assert "significant improvement" not in summary and "▲" not in summary

    site = tmp_path / "site"
    assert main(["build", str(src), "-o", str(site), "-j", "1", "-q"]) in (0, 1)
    run_page = BeautifulSoup((site / "runs" / "s1-r2" / "index.html").read_text(encoding="utf-8"), "html.parser")
    tile = run_page.find(id="headline-delta")
    assert tile is not None and tile["data-outcome"] == "not_one_measurement"
    assert "good" not in tile["class"] and "▲" not in tile.get_text()
    assert says in tile.get_text(" ", strip=True)
    assert run_page.find(id="measurement-callout") is not None
    spec_pages = [p for p in site.rglob("*.html") if "s1" in p.name or p.parent.name == "s1"]
    spec_page = next(p for p in spec_pages if "ladder-table" in p.read_text(encoding="utf-8"))
    ladder = BeautifulSoup(spec_page.read_text(encoding="utf-8"), "html.parser").find(id="ladder-table")
    assert ladder is not None
    row = next(tr for tr in ladder.find_all("tr") if "s1-r2" in tr.get_text())
    assert "not one measurement" in row.get_text(" ", strip=True) and "▲" not in row.get_text()
    analysis = json.loads((site / "runs" / "s1-r2" / "analysis.json").read_text(encoding="utf-8"))
    assert analysis["measurement"]["one_measurement"] is False


def test_a_run_off_the_frozen_contract_is_not_promoted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both runs moved to a new compiler together: they agree with each other, not with the spec."""
    src = _tree(tmp_path, {**CONTRACT, "compiler": "svgc 4.0"}, axis="compiler")
    r1 = src / "s1" / "r1" / "run.yaml"
    data = yaml.safe_load(r1.read_text(encoding="utf-8"))
    data["contract"] = {**CONTRACT, "compiler": "svgc 4.0"}
    r1.write_text(yaml.safe_dump(data), encoding="utf-8")
    report = load_report(SourceTree.open(src), "s1-r2").report
    assert [d.against for d in report.measurement.differences] == ["the frozen contract of spec s1"]
    assert main(["gate", "s1-r2", str(src)]) == 1
    assert "svgc 3.1.2 in the frozen contract of spec s1" in capsys.readouterr().out


def test_a_rung_names_its_target_failure_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _tree(tmp_path, CONTRACT)
    r2 = src / "s1" / "r2" / "run.yaml"
    r2.write_text(r2.read_text(encoding="utf-8") + "target_failure_class: layout_drift\n", encoding="utf-8")
    assert main(["check", str(src)]) == 0
    assert "unknown field" not in capsys.readouterr().out
    site = tmp_path / "site"
    assert main(["build", str(src), "-o", str(site), "-j", "1", "-q"]) == 0
    page = BeautifulSoup((site / "runs" / "s1-r2" / "index.html").read_text(encoding="utf-8"), "html.parser")
    target = page.find(id="target-class")
    assert target is not None
    # r1 fails cases 80-159 (odd ones are layout_drift: 40), r2 fails 120-159 (20)
    assert target.get_text(" ", strip=True) == (
        "targets layout_drift: 40 of 160 cases before (baseline), 20 of 160 in this run"
    )
    spec_page = next(p for p in site.rglob("*.html") if "ladder-table" in p.read_text(encoding="utf-8"))
    ladder = BeautifulSoup(spec_page.read_text(encoding="utf-8"), "html.parser").find(id="ladder-table")
    assert ladder is not None and "targets layout_drift: 40 → 20 cases" in ladder.get_text(" ", strip=True)
    capsys.readouterr()
    assert main(["summary", "s1-r2", str(src)]) == 0
    summary = capsys.readouterr().out.replace("\\", "")
    assert "Target failure class: targets layout_drift: 40 of 160 cases before (baseline), 20 of 160" in summary


def test_pass_at_k_makes_no_claim_across_two_measurements(tmp_path: Path) -> None:
    """Sampled probes: pass@k is compared with the baseline only when the two are one measurement."""

    def sampled(path: Path, right: int) -> None:
        rows = []
        for i in range(N):
            for k in range(2):
                rows.append({"id": f"c{i:03d}", "sample": k, "exact": i < right + 20 * k, "expected": f"[s {i}]"})
        _write(path, "".join(json.dumps(r) + "\n" for r in rows))

    for contract, compared in ((CONTRACT, True), ({**CONTRACT, "probe": "probe-v4"}, False)):
        src = _tree(tmp_path / str(compared), contract, axis="probe")
        sampled(src / "s1" / "r1" / "probe.jsonl", 60)
        sampled(src / "s1" / "r2" / "probe.jsonl", 110)
        report = load_report(SourceTree.open(src), "s1-r2").report
        assert report.measurement.ok is compared
        assert report.passk and bool(report.passk[0].vs_baseline) is compared
