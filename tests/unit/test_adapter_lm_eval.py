"""lm-evaluation-harness results and per-sample files read into evals and probe cases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from adapterkit import DATA_CORPUS, load_all
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from obs.adapters.lm_eval import LmEvalAdapter, task_evals
from obs.model import EvalResult, Run
from obs.sanitize import clean_text

CORPUS = DATA_CORPUS / "lm_eval"


def evals(run: Run) -> dict[str, EvalResult]:
    return {f"{e.task}/{e.metric}": e for e in run.evals}


# ---------------------------------------------------------------------------------------------------- corpus


def test_mmlu_v04_groups_acc_and_stderr() -> None:
    runs = load_all(CORPUS / "saucam__model_evals")
    assert sorted(runs) == ["saucam/Orpomis-Prime-7B/openllm/gsm8k", "saucam/Orpomis-Prime-7B/openllm/mmlu"]
    run, diags = runs["saucam/Orpomis-Prime-7B/openllm/mmlu"]
    ev = evals(run)
    assert ev["mmlu/acc"].value == 0.5242842899871814
    assert ev["mmlu/acc"].stderr == 0.004043448942535655
    assert ev["mmlu_formal_logic/acc"].value == 0.30952380952380953
    assert ev["mmlu_formal_logic/acc"].stderr == 0.041349130183033156
    assert ev["mmlu_stem/acc"].value == 0.4291151284490961
    assert len(run.evals) == 62  # groups appear in both 'results' and 'groups': counted once
    assert "mmlu_humanities" in run.provenance["groups"]["mmlu"]
    assert run.model["name"] == "saucam/Orpomis-Prime-7B"
    assert run.provenance["git_hash"] == "7852985b"
    assert run.config["n-shot"]["mmlu_anatomy"] == 5
    assert run.adapter == "lm_eval"
    assert not [d for d in diags.items if d.severity != "info"]


def test_gsm8k_two_filters_n_samples_hashes() -> None:
    root = CORPUS / "marksverdhei__lm-evaluation-harness"
    (run, _) = next(iter(load_all(root).values()))
    ev = evals(run)
    strict = ev["gsm8k_cot_llama/exact_match,strict-match"]
    assert strict.value == 0.7725549658832449 and strict.stderr == 0.01154636331254809
    assert strict.n == 1319 and strict.higher_is_better is True
    assert ev["gsm8k_cot_llama/exact_match,flexible-extract"].value == 0.7778620166793025
    assert run.provenance["task_hashes"]["gsm8k_cot_llama"].startswith("a978e36e")
    assert run.date == "2024-08-25T21:55:00Z"
    assert run.summary["total_evaluation_time_seconds"] == 256.35929056443274


def test_humaneval_custom_filter_metric() -> None:
    (run, _) = next(iter(load_all(CORPUS / "Jinxiaolong1129__malicious-finetune-lm-eval").values()))
    (ev,) = run.evals
    assert (ev.task, ev.metric, ev.value, ev.stderr, ev.n) == (
        "humaneval",
        "pass@1,create_test",
        0.1524390243902439,
        0.028153977176919386,
        164,
    )


# ---------------------------------------------------------------------------------------------------- synthetic

V03 = {
    "results": {
        "hellaswag": {"acc": 0.5, "acc_stderr": 0.005, "acc_norm": 0.66, "acc_norm_stderr": 0.0047},
        "arc_easy": {"acc": 0.75, "acc_stderr": "N/A"},
    },
    "versions": {"hellaswag": 0, "arc_easy": 0},
    "config": {"model": "hf-causal", "model_args": "pretrained=EleutherAI/pythia-160m", "num_fewshot": 0},
}


def _sample(doc_id: int, flt: str, value: float, resp: str) -> dict:
    return {
        "doc_id": doc_id,
        "doc": {"question": f"q{doc_id}"},
        "target": f"answer {doc_id}",
        "arguments": [[f"Question: q{doc_id}\nAnswer:", {"until": ["\n"]}]],
        "resps": [[f"... {resp}"]],
        "filtered_resps": [resp],
        "filter": flt,
        "metrics": ["exact_match"],
        "doc_hash": f"h{doc_id}",
        "exact_match": value,
    }


def test_v03_layout(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "results.json").write_text(json.dumps(V03))
    (run, diags) = next(iter(load_all(tmp_path).values()))
    assert not diags.items
    ev = evals(run)
    assert ev["hellaswag/acc_norm"].value == 0.66 and ev["hellaswag/acc_norm"].stderr == 0.0047
    assert ev["arc_easy/acc"].stderr is None  # "N/A"
    assert run.model["name"] == "EleutherAI/pythia-160m"
    assert run.config["num_fewshot"] == 0


def test_samples_become_cases_with_filters_as_checks(tmp_path: Path) -> None:
    folder = tmp_path / "out" / "org__model"
    folder.mkdir(parents=True)
    stamp = "2024-08-25T21-59-12.123082"
    results = {
        "results": {"gsm8k": {"exact_match,strict-match": 0.5, "exact_match_stderr,strict-match": 0.1}},
        "versions": {"gsm8k": 3},
        "model_name": "org/model",
    }
    (folder / f"results_{stamp}.json").write_text(json.dumps(results))
    lines = [
        _sample(0, "strict-match", 1.0, "18"),
        _sample(0, "flexible-extract", 1.0, "18"),
        _sample(1, "strict-match", 0.0, "[invalid]"),
        _sample(1, "flexible-extract", 1.0, "7"),
    ]
    mc = {
        "doc_id": 0,
        "target": 2,
        "arguments": {"gen_args_0": {"arg_0": "ctx", "arg_1": " A"}, "gen_args_1": {"arg_0": "ctx", "arg_1": " B"}},
        "resps": [[[-2.0, False]], [[-0.5, True]]],
        "filtered_resps": [[-2.0, False], [-0.5, True]],
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "acc": 0.0,
        "acc_norm": 1.0,
    }
    body = "\n".join(json.dumps(r) for r in lines) + "\n" + '{"doc_id": 2, "filter": "strict'  # half-written
    (folder / f"samples_gsm8k_{stamp}.jsonl").write_text(body)
    (folder / f"samples_arc_easy_{stamp}.jsonl").write_text(json.dumps(mc) + "\n")
    (folder / "samples_gsm8k_2020-01-01T00-00-00.000000.jsonl").write_text("")  # another evaluation's samples
    claim = LmEvalAdapter().claim(folder, tmp_path)
    assert claim is not None and "samples_gsm8k_2020-01-01T00-00-00.000000.jsonl" in claim.notes[0]
    (run, diags) = next(iter(load_all(tmp_path).values()))
    assert run.probe is not None
    cases = {c.id: c for c in run.probe.cases}
    assert sorted(cases) == ["arc_easy/0", "gsm8k/0", "gsm8k/1"]
    c1 = cases["gsm8k/1"]
    assert c1.checks == {"exact_match,strict-match": False, "exact_match,flexible-extract": True}
    assert c1.prompt == "Question: q1\nAnswer:" and c1.expected == "answer 1" and c1.actual == "[invalid]"
    assert c1.family == "gsm8k"
    assert c1.extra["actual_by_filter"] == {"flexible-extract": "7"}
    assert c1.extra["doc_hash"] == "h1"
    arc = cases["arc_easy/0"]
    assert arc.checks == {"acc": False, "acc_norm": True}
    assert arc.prompt == "ctx" and arc.expected == "2" and arc.actual == "choice 1"
    texts = [d.format() for d in diags.items]
    assert any(f"samples_gsm8k_{stamp}.jsonl:5: info: last line is incomplete" in t for t in texts)


def test_two_models_on_the_same_docs_share_case_ids(tmp_path: Path) -> None:
    for model, values in (("a", [1.0, 0.0]), ("b", [1.0, 1.0])):
        folder = tmp_path / model
        folder.mkdir()
        (folder / "results_2024-01-01T00-00-00.json").write_text(json.dumps({"results": {"t": {"acc,none": 0.5}}}))
        rows = [dict(_sample(i, "none", v, "x"), metrics=["acc"], acc=v) for i, v in enumerate(values)]
        (folder / "samples_t_2024-01-01T00-00-00.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    runs = load_all(tmp_path)
    a, b = runs["a"][0].probe, runs["b"][0].probe
    assert a is not None and b is not None
    assert [c.id for c in a.cases] == [c.id for c in b.cases] == ["t/0", "t/1"]
    assert [c.checks["acc"] for c in a.cases] == [True, False]
    assert [c.checks["acc"] for c in b.cases] == [True, True]


def test_truncated_results_file_clear_error_and_results_recovered(tmp_path: Path) -> None:
    text = (CORPUS / "saucam__model_evals/saucam/Orpomis-Prime-7B/openllm/gsm8k.json").read_text()
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "results_2024.json").write_text(text[: text.index('"configs"') + 200])
    (run, diags) = next(iter(load_all(tmp_path).values()))
    errors = [d for d in diags.items if d.severity == "error"]
    assert len(errors) == 1
    assert "truncated" in errors[0].message and errors[0].line is not None
    assert evals(run)["gsm8k/exact_match,strict-match"].value == 0.2441243366186505
    assert any("truncated" in n for n in run.notices)


def test_results_cut_inside_results_section(tmp_path: Path) -> None:
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "results_x.json").write_text('{"results": {"gsm8k": {"exact_match,none": 0.')
    (run, diags) = next(iter(load_all(tmp_path).values()))
    assert run.evals == []
    assert [d.severity for d in diags.items] == ["error"]
    assert "truncated" in diags.items[0].message
    assert any("no task metrics" in n for n in run.notices)


def test_empty_and_wrong_type_results(tmp_path: Path) -> None:
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "results_a.json").write_text("")
    (tmp_path / "e" / "results_b.json").write_text('{"results": [1, 2], "versions": {}}')
    runs = load_all(tmp_path)
    assert sorted(runs) == ["e/results_a", "e/results_b"]
    assert "empty" in runs["e/results_a"][1].items[0].message
    assert "no 'results' mapping" in runs["e/results_b"][1].items[0].message


# ---------------------------------------------------------------------------------------------------- properties

_metric_value = st.one_of(st.floats(allow_nan=True), st.integers(), st.text(max_size=5), st.none(), st.booleans())


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.text(max_size=12), _metric_value, max_size=8),
    st.one_of(st.none(), st.integers(), st.dictionaries(st.text(max_size=5), _metric_value)),
)
def test_property_task_evals_never_raises_and_keeps_numbers(metrics: dict, n_samples: object) -> None:
    out = task_evals("t", metrics, n_samples, None)
    numeric = {
        k
        for k, v in metrics.items()
        if isinstance(v, int | float)
        and not isinstance(v, bool)
        and k != "alias"
        and not k.partition(",")[0].endswith("_stderr")
    }
    assert len(out) == len(numeric)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200), st.binary(max_size=200))
def test_property_arbitrary_bytes_never_crash(tmp_path: Path, results: bytes, samples: bytes) -> None:
    folder = tmp_path / "p"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "results_2024-01-01T00-00-00.json").write_bytes(b'{"results": ' + results)
    (folder / "samples_t_2024-01-01T00-00-00.jsonl").write_bytes(samples)
    load_all(tmp_path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.text(max_size=10)), max_size=10), st.binary(max_size=60))
@example(rows=[(False, "\x08"), (True, "\x0c")], junk=b"")  # JSON's short escapes \b and \f (found by this test)
def test_property_every_well_formed_sample_is_a_case(tmp_path: Path, rows: list, junk: bytes) -> None:
    folder = tmp_path / "s"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "results_2024-01-01T00-00-00.json").write_text(json.dumps({"results": {"t": {"acc,none": 0.5}}}))
    body = b"".join(
        json.dumps({"doc_id": i, "acc": float(ok), "metrics": ["acc"], "filtered_resps": [text]}).encode() + b"\n"
        for i, (ok, text) in enumerate(rows)
    )
    (folder / "samples_t_2024-01-01T00-00-00.jsonl").write_bytes(body + b"#" + junk.replace(b"\n", b" ") + b"\n")
    (run, _) = next(iter(load_all(tmp_path).values()))
    cases = run.probe.cases if run.probe else []
    assert [(c.id, c.checks["acc"], c.actual) for c in cases] == [
        (f"t/{i}", ok, clean_text(text))
        for i, (ok, text) in enumerate(rows)  # as obs.sanitize makes text safe
    ]
