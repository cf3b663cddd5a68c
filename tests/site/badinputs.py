"""Generated bad inputs: for every file type obs reads, the ways a file goes wrong.

Each `Case` is one bad file (or a few) placed in a folder of its own in a source tree that also
holds good runs, so one build exercises many cases and shows that the rest of the site is still
built. The catalogue is generated, not hand-written: every value of `VALUES` goes into every field
of every file type (for the YAML files, every field their schema in `obs.schema` declares), plus the
shapes of a broken file (empty, binary, truncated, not the right top-level type, nested too deeply,
duplicated keys) and a 50 MB line (the slow cases, built once).

`python tests/site/badinputs.py OUT` writes the trees for a look by hand.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from obs.schema import CAMPAIGN_YAML, OBS_YAML, RUN_YAML, SPEC_YAML, Nested, Schema

# ---------------------------------------------------------------------------------------------------------------
# values: each written as a JSON token and as a YAML token

HUGE_INT = str(2**70)  # beyond 64 bits
VAST_INT = "9" * 5000  # beyond Python's 4300-digit int <-> text limit
MAX_FLOAT = "1.7976931348623157e+308"
LONG_TEXT = "x" * 20_000  # past every display limit (a Markdown line, a gallery text); the 50 MB line is apart


@dataclass(frozen=True)
class Value:
    name: str
    json: str
    yaml: str


VALUES: tuple[Value, ...] = (
    Value("list", '[1, "a", null]', "[1, a, null]"),
    Value("mapping", '{"a": 1, "b": {"c": "d"}}', "{a: 1, b: {c: d}}"),
    Value("text", '"some text"', "some text"),
    Value("int", "7", "7"),
    Value("zero", "0", "0"),
    Value("negative", "-3", "-3"),
    Value("float", "0.25", "0.25"),
    Value("bool", "true", "true"),
    Value("null", "null", "null"),
    Value("huge-int", HUGE_INT, HUGE_INT),
    Value("vast-int", VAST_INT, VAST_INT),
    Value("max-float", MAX_FLOAT, MAX_FLOAT),
    Value("neg-max-float", "-" + MAX_FLOAT, "-" + MAX_FLOAT),
    Value("big-float", "1e200", "1.0e+200"),
    Value("overflow-float", "1e400", "1.0e+400"),
    Value("tiny-float", "5e-324", "5.0e-324"),
    Value("nan", "NaN", ".nan"),
    Value("inf", "Infinity", ".inf"),
    Value("neg-inf", "-Infinity", "-.inf"),
    Value("surrogates", '"a\\ud800b\\udfff"', '"a\\ud800b\\udfff"'),
    Value("controls", '"a\\u0000b\\u001b[2J\\u0007c\\u2028d\\u0085"', '"a\\0b\\e[2J\\ac\\Ld\\N"'),
    Value(
        "markup",
        '"<script>alert(1)</script>{{ 7*7 }} $\\\\frac{1}{$ _x^ [a](javascript:x)"',
        "'<script>alert(1)</script>{{ 7*7 }} $\\frac{1}{$ _x^ [a](javascript:x)'",
    ),
    Value("long-text", f'"{LONG_TEXT}"', f'"{LONG_TEXT}"'),
    Value("bad-date", '"2026-02-30"', "2026-02-30"),
    Value("deep", "[" * 200 + "]" * 200, "[" * 50 + "]" * 50),
)

# YAML-only spellings a YAML file can hold and JSON cannot
YAML_ONLY: tuple[Value, ...] = (
    Value("binary-tag", "", "!!binary aGVsbG8="),
    Value("set-tag", "", "!!set {a: null, b: null}"),
    Value("omap-tag", "", "!!omap [a: 1, b: 2]"),
    Value("python-tag", "", "!!python/object:os.system ls"),
    Value("timestamp", "", "2026-01-02 03:04:05"),
    Value("float-tag", "", "!!float abc"),
    Value("int-tag", "", "!!int abc"),
)

DEEP = 100_000  # levels of nesting for the deep-nesting cases
LONG_LINE = 50 * 1024 * 1024  # the slow cases: one line of 50 MB


def binary_bytes() -> bytes:
    """Bytes no text format accepts: NUL, invalid UTF-8, a UTF-16 BOM."""
    return b"\xff\xfe\x00\x00" + bytes(range(256)) * 8 + b"\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc"


# ---------------------------------------------------------------------------------------------------------------
# cases


@dataclass(frozen=True)
class Case:
    """One bad input. `files` are written into the case's folder (a run, a spec, a campaign, or the
    source root for obs.yaml and decisions.jsonl); `target` is the bad file, relative to that folder.
    `line` says whether the message about it must carry a line number."""

    kind: str
    name: str
    target: str
    files: dict[str, bytes]
    line: bool = False
    slow: bool = False

    @property
    def folder(self) -> str:
        return f"{slug(self.kind)}/{self.name}"


def slug(text: str) -> str:
    return text.replace(".", "-").replace("_", "-").replace(" ", "-").lower()


def good_metrics(steps: int = 30) -> bytes:
    return "".join(
        json.dumps({"step": s * 10, "loss": 2.0 / (1 + s), "reward_mean": s / steps, "reward_std": 0.1}) + "\n"
        for s in range(steps)
    ).encode()


def good_probe(cases: int = 12) -> bytes:
    return "".join(
        json.dumps({"id": f"c{i}", "split": "test", "family": f"f{i % 3}", "exact": i % 2 == 0}) + "\n"
        for i in range(cases)
    ).encode()


def good_run_yaml(run_id: str, **extra: str) -> bytes:
    lines = [f"id: {run_id}", "title: a good run", "status: finished", "date: 2026-01-05"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return ("\n".join(lines) + "\n").encode()


def native_run(run_id: str, **extra: str) -> dict[str, bytes]:
    return {"run.yaml": good_run_yaml(run_id, **extra), "metrics.jsonl": good_metrics(), "probe.jsonl": good_probe()}


def yaml_doc(fields: dict[str, str]) -> bytes:
    return "".join(f"{k}: {v}\n" for k, v in fields.items()).encode()


def json_object(fields: dict[str, str]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in fields.items()) + "}"


def schema_fields(schema: Schema, value: str) -> dict[str, str]:
    """Every declared field of the file set to `value` (a YAML token)."""
    return {f.name: value for f in schema.fields}


def nested_fields(schema: Schema, value: str) -> dict[str, str]:
    """Every nested mapping of the file (decision:, sweeps:, evidence:, ...) with each of its keys set to `value`
    (the other fields of a YAML file get `value` themselves)."""
    out = {}
    for f in schema.fields:
        if isinstance(f.kind, Nested):
            out[f.name] = "{" + ", ".join(f"{sub.name}: {value}" for sub in f.kind.schema.fields) + "}"
    return out


# shapes every file can take, whatever its format: (name, content, line expected in the message)
def shapes(kind: str) -> list[tuple[str, bytes, bool]]:
    text_kind = kind.endswith((".md",))
    yaml_kind = kind.endswith(".yaml")
    jsonl_kind = kind.endswith(".jsonl") or kind == "mlflow metric"
    out: list[tuple[str, bytes, bool]] = [
        ("empty", b"", False),
        ("blank", b"\n  \n\t\n", False),
        ("binary", binary_bytes(), False),
        ("utf16", "\ufeffid: x\n".encode("utf-16"), False),
    ]
    if yaml_kind:
        out += [
            ("not-a-mapping", b"- a\n- b\n", True),
            ("scalar", b"just text\n", True),
            ("deep-flow", b"a: " + b"[" * DEEP + b"]" * DEEP + b"\n", True),
            ("deep-block", "".join(" " * i + f"k{i}:\n" for i in range(3000)).encode(), True),
            ("duplicate-keys", b"id: one\ntitle: first\ntitle: second\nid: two\n", True),
            ("alias-bomb", b"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", True),
            ("truncated", b'title: "unclosed\nid: [a, b\n', True),
            ("tabs", b"id:\tx\n\ttitle: y\n", True),
            ("complex-key", b"? [a, b]\n: 1\n", True),
            ("nul", b"id: a\x00b\n", True),
        ]
    elif text_kind:
        out += [
            ("deep-list", "".join("  " * i + "- item\n" for i in range(5000)).encode(), True),
            ("deep-quote", b">" * DEEP + b" quote\n", True),
            ("deep-emphasis", b"*" * DEEP + b"x" + b"*" * DEEP + b"\n", True),
            ("deep-brackets", b"[" * DEEP + b"x" + b"](u)" * 10 + b"\n", True),
            ("wide-table", ("|" + "a|" * 5000 + "\n|" + "-|" * 5000 + "\n").encode(), True),
            ("long-table", b"|a|b|\n|-|-|\n" + b"|1|2|\n" * 200_000, True),
            ("long-line", b"word " * 400_000 + b"\n", True),
            ("many-lines", b"line\n" * 2_000_000, False),
            ("html", b"<script>alert(1)</script><img src=x onerror=alert(1)>\n<div>" * 1000 + b"\n", False),
            ("surrogate-bytes", b"\xed\xa0\x80 lone surrogate as UTF-8 bytes\n", True),
        ]
    elif jsonl_kind:
        out += [
            ("deep-line", b"[" * DEEP + b"]" * DEEP + b"\n", True),
            ("deep-object", b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"\n", True),
            ("truncated", b'{"step": 1, "loss": 0.5}\n{"step": 2, "lo', True),
            ("not-objects", b'[1, 2]\n3\n"text"\nnull\n', True),
            ("many-blank", b"\n" * 1_000_000, False),
        ]
    else:  # a JSON document
        out += [
            ("not-an-object", b"[1, 2, 3]\n", True),
            ("deep-array", b"[" * DEEP + b"]" * DEEP, True),
            ("deep-object", b'{"a":' * DEEP + b"1" + b"}" * DEEP, True),
            ("truncated", b'{\n  "a": 1,\n  "b": [1, 2', True),
            ("nan-literal", b'{"a": NaN, "b": Infinity, "c": -Infinity}', True),
        ]
    return out


def _mlflow_files(metric: bytes, name: str = "loss") -> dict[str, bytes]:
    exp = "mlruns/1"
    run = f"{exp}/0123456789abcdef"
    return {
        f"{exp}/meta.yaml": b"experiment_id: '1'\nname: bad-inputs\nlifecycle_stage: active\n",
        f"{run}/meta.yaml": b"run_id: 0123456789abcdef\nrun_name: bad\nstatus: 3\nstart_time: 1700000000000\n",
        f"{run}/metrics/{name}": metric,
        f"{run}/params/lr": b"0.001",
    }


MLFLOW_TARGET = "mlruns/1/0123456789abcdef/metrics/loss"


@dataclass
class Catalogue:
    cases: list[Case] = field(default_factory=list)

    def add(self, kind: str, name: str, target: str, files: dict[str, bytes], *, line: bool = False) -> None:
        slow = name == "long-line-50mb"
        self.cases.append(Case(kind, name, target, files, line=line, slow=slow))


# For each kind: where the bad file goes, and the other files of its folder (so the folder is still
# recognised as a run, spec or campaign when the bad file is unreadable).
def frame(kind: str, case: str, content: bytes) -> dict[str, bytes]:
    """The bad file with the least its folder needs to be what it is (a run, a spec, a campaign): a run
    gets a metrics log and a probe only where the bad file works with them, so each case stays cheap."""
    rid = f"{slug(kind)}-{case}"
    if kind in ("metrics.jsonl", "probe.jsonl", "gate.json", "notes.md"):
        return {"run.yaml": good_run_yaml(rid), kind: content}
    if kind == "probe_repaired.jsonl":
        return {"run.yaml": good_run_yaml(rid), "probe.jsonl": good_probe(), kind: content}
    if kind == "run.yaml":
        return {**native_run(rid), "run.yaml": content}
    if kind == "spec.yaml":
        return {"spec.yaml": content, "r1/run.yaml": good_run_yaml(f"{rid}-r1")}
    if kind == "campaign.yaml":
        files = {"campaign.yaml": content}
        for cond in ("a", "b"):
            files[f"{cond}1/run.yaml"] = good_run_yaml(f"{rid}-{cond}1", condition=cond, seed="1")
            files[f"{cond}1/metrics.jsonl"] = good_metrics(12)
        return files
    if kind in ("obs.yaml", "decisions.jsonl"):
        return {kind: content}
    if kind == "trainer_state.json":
        return {"trainer_state.json": content}
    if kind == "mlflow metric":
        return _mlflow_files(content)
    if kind == "lm-eval results":
        return {"results_2026-01-01T00-00-00.json": content}
    if kind == "wandb summary":
        return {"files/wandb-summary.json": content, "files/wandb-metadata.json": b'{"program": "train.py"}'}
    raise KeyError(kind)


def target_of(kind: str) -> str:
    return {
        "mlflow metric": MLFLOW_TARGET,
        "lm-eval results": "results_2026-01-01T00-00-00.json",
        "wandb summary": "files/wandb-summary.json",
        "trainer_state.json": "trainer_state.json",
    }.get(kind, kind)


KINDS = (
    "run.yaml",
    "metrics.jsonl",
    "probe.jsonl",
    "probe_repaired.jsonl",
    "gate.json",
    "notes.md",
    "spec.yaml",
    "campaign.yaml",
    "obs.yaml",
    "decisions.jsonl",
    "trainer_state.json",
    "mlflow metric",
    "lm-eval results",
    "wandb summary",
)
ROOT_KINDS = ("obs.yaml", "decisions.jsonl")
YAML_SCHEMAS = {"run.yaml": RUN_YAML, "spec.yaml": SPEC_YAML, "campaign.yaml": CAMPAIGN_YAML, "obs.yaml": OBS_YAML}


# ---------------------------------------------------------------------------------------------------------------
# every value in every field, per file type


def value_documents(kind: str) -> Iterator[tuple[str, bytes]]:
    """(case name, file content): each value of VALUES in every field of the file."""
    if kind in YAML_SCHEMAS:
        schema = YAML_SCHEMAS[kind]
        for v in (*VALUES, *YAML_ONLY):
            yield f"every-field-{v.name}", yaml_doc({**schema_fields(schema, v.yaml), **nested_fields(schema, v.yaml)})
        if nested_fields(schema, "x"):  # the nested mappings (decision:, sweeps:, ...) given as something else
            wrong = ("[1, 2]", "text", "7", "true", "{}")
            names = [f.name for f in schema.fields if isinstance(f.kind, Nested)]
            yield "nested-not-mappings", yaml_doc({n: wrong[i % len(wrong)] for i, n in enumerate(names)})
        return
    makers: dict[str, Callable[[str], bytes]] = {
        "metrics.jsonl": _metrics_with,
        "probe.jsonl": _probe_with,
        "probe_repaired.jsonl": _probe_with,
        "gate.json": _gate_with,
        "decisions.jsonl": _ledger_with,
        "trainer_state.json": _trainer_state_with,
        "lm-eval results": _lm_eval_with,
        "wandb summary": _wandb_with,
    }
    if kind in makers:
        for v in VALUES:
            yield f"every-field-{v.name}", makers[kind](v.json)
        if kind.endswith(".jsonl"):  # every value in one file as well: lines interact (min, max, sums)
            yield "every-value-mixed", b"".join(makers[kind](v.json) for v in VALUES)
    elif kind == "mlflow metric":
        for v in VALUES:
            token = v.json.strip('"').replace(" ", "_")[:200_000] or '""'
            yield f"every-field-{v.name}", _mlflow_with(token)
    elif kind == "notes.md":
        for v in VALUES:
            yield f"value-{v.name}", f"# notes\n\n{v.json}\n\n- {v.json}\n\n|a|b|\n|-|-|\n|{v.json}|x|\n".encode()


METRIC_KEYS = (
    "loss",
    "grad_norm",
    "lr",
    "reward_mean",
    "reward_std",
    "reward_min",
    "reward_max",
    "correct_rate",
    "frac_reward_zero_std",
    "advantage_mean",
    "advantage_std",
    "kl",
    "entropy",
    "rewards/fmt/mean",
    "exact",
    "completions",
    "eval/loss",
)


def _metrics_with(v: str) -> bytes:
    lines = []
    for s in range(12):
        fields = {"step": str(s * 10), "stage": '"warmup"' if s < 6 else v}
        fields.update({k: (v if s % 3 else str(1.0 / (s + 1))) for k in METRIC_KEYS})
        lines.append(json_object(fields))
    lines.append(json_object({"step": v, "loss": "0.5"}))
    lines.append(json_object({"step": "200", "loss": v, "nested": json_object({"x": v})}))
    if v.startswith('"'):  # the value as a key
        lines.append("{" + f'"step": 210, {v}: 1' + "}")
    return ("\n".join(lines) + "\n").encode()


PROBE_FIELDS = ("split", "family", "failure_class", "prompt", "expected", "actual", "render", "note", "extra_field")


def _probe_with(v: str) -> bytes:
    lines = []
    for i in range(10):
        fields = {"id": f'"c{i}"', "exact": "true" if i % 2 else "false", "truncated": v}
        fields.update({k: v for k in PROBE_FIELDS})
        lines.append(json_object(fields))
    lines.append(json_object({"id": v, "exact": "true"}))
    lines.append(json_object({"id": '"c-last"', "exact": v, "renderable": v}))
    return ("\n".join(lines) + "\n").encode()


def _gate_with(v: str) -> bytes:
    check = json_object({"name": v, "passed": v, "detail": v})
    asset = json_object({"id": v, "passed": v, "score": v, "render": v, "note": v})
    return json_object(
        {
            "passed": v,
            "parity_score": v,
            "threshold": v,
            "checks": f"[{check}, {v}]",
            "assets": f"[{asset}, {v}]",
        }
    ).encode()


def _ledger_with(v: str) -> bytes:
    h = '"' + "0" * 64 + '"'
    rows = [
        {"run": v, "verdict": '"promote"', "input_hash": h},
        {"run": '"good-run"', "verdict": v, "input_hash": h},
        {"run": '"good-run"', "verdict": '"reject"', "input_hash": v},
        {
            "schema": v,
            "run": '"good-run"',
            "verdict": '"repair"',
            "rationale": v,
            "next": v,
            "by": v,
            "date": v,
            "input_hash": h,
            "archive": v,
            "suggested": v,
            "baseline": v,
        },
    ]
    return ("\n".join(json_object(r) for r in rows) + "\n").encode()


def _trainer_state_with(v: str) -> bytes:
    entries = []
    for s in range(1, 11):
        entries.append(json_object({"step": str(s), "loss": v, "learning_rate": v, "grad_norm": v, "epoch": v}))
    entries.append(json_object({"step": v, "loss": "0.5"}))
    entries.append(json_object({"step": "20", "eval_loss": v, "eval_accuracy": v, "eval_runtime": v}))
    entries.append(json_object({"step": "20", "train_runtime": v, "train_loss": v, "total_flos": v}))
    fields = {
        "log_history": "[\n" + ",\n".join(entries) + "\n]",
        "global_step": v,
        "epoch": v,
        "max_steps": v,
        "num_train_epochs": v,
        "train_batch_size": v,
        "logging_steps": v,
        "eval_steps": v,
        "save_steps": v,
        "trial_params": v,
        "best_metric": v,
        "best_model_checkpoint": v,
        "best_global_step": v,
        "total_flos": v,
        "num_input_tokens_seen": v,
    }
    return ("{\n" + ",\n".join(f"  {json.dumps(k)}: {x}" for k, x in fields.items()) + "\n}\n").encode()


def _lm_eval_with(v: str) -> bytes:
    task = json_object({"alias": v, "acc,none": v, "acc_stderr,none": v, "exact_match,strict": v})
    fields = {
        "results": json_object({"task_a": task, "task_b": v}),
        "groups": json_object({"grp": task}),
        "group_subtasks": json_object({"grp": v}),
        "configs": json_object({"task_a": v}),
        "versions": json_object({"task_a": v}),
        "n-shot": json_object({"task_a": v}),
        "n-samples": json_object({"task_a": json_object({"original": v, "effective": v}), "task_b": v}),
        "higher_is_better": json_object({"task_a": json_object({"acc": v})}),
        "config": json_object({"model": v, "model_args": v, "batch_size": v}),
        "model_name": v,
        "date": v,
        "total_evaluation_time_seconds": v,
        "git_hash": v,
        "transformers_version": v,
    }
    return (json_object(fields) + "\n").encode()


def _wandb_with(v: str) -> bytes:
    fields = {
        "loss": v,
        "_step": v,
        "_runtime": v,
        "_timestamp": v,
        "train/accuracy": v,
        "eval": json_object({"loss": v, "acc": v}),
        "_wandb": json_object({"runtime": v}),
        "table": json_object({"_type": v}),
    }
    return (json_object(fields) + "\n").encode()


def _mlflow_with(token: str) -> bytes:
    return (
        f"1700000000000 {token} 1\n1700000000001 0.5 2\n{token} 0.4 3\n1700000000003 0.3 {token}\n"
        f"1700000000004 {token}\n1700000000005 {token} {token} {token}\n"
    ).encode()


def duplicate_keys(kind: str) -> bytes | None:
    return {
        "metrics.jsonl": b'{"step": 1, "loss": 0.5, "loss": 0.7, "step": 2}\n{"step": 3, "loss": 0.4}\n',
        "probe.jsonl": b'{"id": "a", "exact": true, "exact": false, "id": "b"}\n',
        "probe_repaired.jsonl": b'{"id": "a", "exact": true, "exact": false, "id": "b"}\n',
        "gate.json": b'{"passed": true, "passed": false, "threshold": 0.5}\n',
        "decisions.jsonl": (
            b'{"run": "good-run", "run": "other", "verdict": "promote", "input_hash": "' + b"0" * 64 + b'"}\n'
        ),
        "trainer_state.json": b'{"log_history": [{"step": 1, "loss": 0.5, "loss": 0.9}], "log_history": []}\n',
        "lm-eval results": b'{"results": {"t": {"acc,none": 0.5, "acc,none": 0.9}}, "versions": {}}\n',
        "wandb summary": b'{"loss": 0.5, "loss": 0.7}\n',
        "mlflow metric": b"1700000000000 0.5 1\n1700000000000 0.7 1\n",
    }.get(kind)


def long_line(kind: str) -> bytes:
    """One line of 50 MB, as a file of that kind would hold it (a string value, a Markdown line)."""
    body = b"x" * LONG_LINE
    if kind.endswith(".yaml"):
        return b"title: " + body + b"\n"
    if kind == "notes.md":
        return body + b"\n"
    if kind == "mlflow metric":
        return b"1700000000000 0.5 1\n" + body + b"\n1700000000002 0.4 2\n"
    if kind.endswith(".jsonl"):
        key = {"metrics.jsonl": b'"step": 1, "loss": 0.5', "decisions.jsonl": b'"run": "good-run"'}.get(
            kind, b'"id": "c"'
        )
        return b'{"step": 0, "loss": 0.9}\n{' + key + b', "note": "' + body + b'"}\n'
    return b'{"note": "' + body + b'"}\n'


def catalogue(kinds: tuple[str, ...] = KINDS, *, slow: bool = False) -> list[Case]:
    """Every case of every kind (`slow`: only the 50 MB-line cases)."""
    cat = Catalogue()
    for kind in kinds:
        target = target_of(kind)
        if slow:
            cat.add(kind, "long-line-50mb", target, frame(kind, "long-line-50mb", long_line(kind)))
            continue
        for name, content, line in shapes(kind):
            cat.add(kind, name, target, frame(kind, name, content), line=line)
        for name, content in value_documents(kind):
            cat.add(kind, name, target, frame(kind, name, content), line=True)
        dup = duplicate_keys(kind)
        if dup is not None:
            cat.add(kind, "duplicate-keys", target, frame(kind, "duplicate-keys", dup), line=True)
        if kind not in ("notes.md", "mlflow metric") and not kind.endswith(".yaml"):
            cat.add(kind, "surrogate-key", target, frame(kind, "surrogate-key", _surrogate_key(kind)), line=True)
    return cat.cases


def _surrogate_key(kind: str) -> bytes:
    if kind.endswith(".jsonl"):
        ident = b'"run": "good-run"' if kind == "decisions.jsonl" else b'"id": "k", "step": 1'
        return b"{" + ident + b', "\\ud800": 1, "x\\udc00y": true}\n'
    return b'{"\\ud800": 1, "log_history": [{"step": 1, "\\udc00": 0.5}], "results": {"\\ud800": {"acc": 1}}}\n'


# ---------------------------------------------------------------------------------------------------------------
# issue 31: names, special files, types, ids, sizes (written beside the other cases: one build for all)


@dataclass(frozen=True)
class Hardened:
    """One issue-31 case in `hardening/<folder>`: a message about `target` (relative to the folder; '' names the
    folder itself) must contain `message` (None: no message is needed); `ids` must be runs of the site,
    `not_runs` must not."""

    folder: str
    target: str
    message: str | None
    ids: tuple[str, ...] = ()
    not_runs: tuple[str, ...] = ()


HARDENING = "hardening"
MALFORMED_LINES = 50_000


def write_hardening(root: Path) -> list[Hardened]:
    """The issue-31 fault corpus under `root/hardening/` (FIFOs and names that are not UTF-8 need the file
    system, not a dict of bytes); returns what each case must produce."""
    import os

    top = root / HARDENING
    cases: list[Hardened] = []

    def run(folder: str, files: dict[str, bytes], target: str, message: str | None, *ids: str) -> None:
        write_files(top / folder, files)
        cases.append(Hardened(folder, target, message, ids))

    # a name that is not UTF-8: beside a run, and as a folder of its own
    run(
        "bad-name",
        native_run("h-bad-name"),
        "",
        "an entry whose name is not valid UTF-8 ('caf\ufffd.txt'",
        "h-bad-name",
    )
    (top / "bad-name" / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"x")
    bad_folder = os.fsencode(top / "bad-folder") + b"/stray\xff\xfe"
    os.makedirs(bad_folder, exist_ok=True)
    Path(os.fsdecode(bad_folder + b"/run.yaml")).write_bytes(good_run_yaml("h-in-a-bad-name"))
    Path(os.fsdecode(bad_folder + b"/metrics.jsonl")).write_bytes(good_metrics())
    Path(os.fsdecode(bad_folder + b"/r\xe9sultats.csv")).write_bytes(b"step,loss\n1,0.5\n2,0.4\n")
    cases.append(
        Hardened("bad-folder", "", "an entry whose name is not valid UTF-8 ('stray\ufffd\ufffd')", ("h-in-a-bad-name",))
    )
    # control characters in a file name: shown as escapes, never raw
    run("control-name", {"run.yaml": good_run_yaml("h-control-name")}, "", None, "h-control-name")
    os.symlink("/etc/passwd", top / "control-name" / "x\x1b[31m\nsrc:1: error: forged")
    # special files in place of inputs
    run(
        "fifo-run-yaml",
        {"metrics.jsonl": good_metrics(), "probe.jsonl": good_probe()},
        "run.yaml",
        "a named pipe (FIFO)",
    )
    os.mkfifo(top / "fifo-run-yaml" / "run.yaml")
    cases[-1] = Hardened("fifo-run-yaml", "run.yaml", "a named pipe (FIFO)", not_runs=("fifo-run-yaml",))
    run(
        "fifo-metrics", {"run.yaml": good_run_yaml("h-fifo-metrics")}, "metrics.jsonl", "a named pipe", "h-fifo-metrics"
    )
    os.mkfifo(top / "fifo-metrics" / "metrics.jsonl")
    run(
        "dir-notes",
        {"run.yaml": good_run_yaml("h-dir-notes")},
        "notes.md",
        "a folder, not a regular file",
        "h-dir-notes",
    )
    (top / "dir-notes" / "notes.md").mkdir()
    run(
        "dangling-probe",
        {"run.yaml": good_run_yaml("h-dangling")},
        "probe.jsonl",
        "a symbolic link to nothing",
        "h-dangling",
    )
    (top / "dangling-probe" / "probe.jsonl").symlink_to("gone.jsonl")
    # ids a quick look at run.yaml lost, and duplicates found through them
    run(
        "invalid-date",
        {"run.yaml": b"id: h-dated\ndate: 2024-13-45\nbaseline: good-run\n"},
        "run.yaml",
        "2024-13-45",
        "h-dated",
    )
    run("surrogate-pair", {"run.yaml": b'id: "h-smile-\\ud83d\\ude00"\n'}, "run.yaml", None, "h-smile-\U0001f600")
    run(
        "broken-yaml", {"run.yaml": b"id: h-broken  # kept\ntitle: [unclosed\n"}, "run.yaml", "invalid YAML", "h-broken"
    )
    run("z-duplicate-of-dated", {"run.yaml": b"id: h-dated\n"}, "run.yaml", "run id 'h-dated' is already used by")
    # type confusion in gate.json
    gate_text = json.dumps({"passed": True, "assets": "a" * 2_000_000, "checks": "abc"}).encode()
    run(
        "gate-2mb-string",
        {"run.yaml": good_run_yaml("h-gate-text"), "gate.json": gate_text},
        "gate.json",
        "'assets' must be a list of gate assets, not a text of 2000000 characters",
        "h-gate-text",
    )
    gate_num = json.dumps({"assets": 7, "checks": True}).encode()
    run(
        "gate-number",
        {"run.yaml": good_run_yaml("h-gate-number"), "gate.json": gate_num},
        "gate.json",
        "'assets' must be a list of gate assets, not a number",
        "h-gate-number",
    )
    # messages bounded per file and kind
    bad_lines = b"".join(b"{bad %d\n" % i for i in range(MALFORMED_LINES))
    run(
        "malformed-metrics",
        {"run.yaml": good_run_yaml("h-malformed"), "metrics.jsonl": bad_lines},
        "metrics.jsonl",
        f"and {MALFORMED_LINES - 20} more messages like the 20 before",
        "h-malformed",
    )
    run(
        "malformed-probe",
        {"run.yaml": good_run_yaml("h-malformed-probe"), "probe.jsonl": bad_lines},
        "probe.jsonl",
        "more messages like the 20 before",
        "h-malformed-probe",
    )
    utf16 = "".join(json.dumps({"step": i, "loss": 1 / (i + 1)}) + "\n" for i in range(100_000)).encode("utf-16")
    run(
        "utf16-metrics",
        {"run.yaml": good_run_yaml("h-utf16"), "metrics.jsonl": utf16},
        "metrics.jsonl",
        "the file is UTF-16",
        "h-utf16",
    )
    # a CSV cell past the field limit, a header with control characters
    csv = ("step,\x1b[31mloss\x07,note\n" + "".join(f"{i},{1 / (i + 1)},ok\n" for i in range(20))).encode()
    csv = csv.replace(b"5,0.16", b"5,0.16" + b"7" * 200_000)
    run("csv-huge-cell", {"metrics.csv": csv}, "metrics.csv", "row not read: field larger than field limit (131072)")
    # plain-text fields far past a page's layout
    long_yaml = b"id: h-long\ntitle: " + b"T" * 200_000 + b'\ndate: "' + b"2" * 200_000 + b'"\n'
    run("long-fields", {"run.yaml": long_yaml}, "run.yaml", "'title' is 200,000 characters long", "h-long")
    meta = json.dumps({"startedAt": "2" * 2_000_000, "state": {"x": 1}}).encode()
    run(
        "wandb-long-date",
        {"files/wandb-summary.json": b'{"loss": 0.5}', "files/wandb-metadata.json": meta},
        "",
        "'date' is 2,000,000 characters long",
    )
    mlflow = _mlflow_files(b"1700000000000 0.5 1\n")
    mlflow["mlruns/1/0123456789abcdef/meta.yaml"] = b"run_id: 0123456789abcdef\nrun_name: {a: 1}\nstart_time: soon\n"
    run("mlflow-types", mlflow, "mlruns/1/0123456789abcdef/meta.yaml", "'run_name' must be text, not an object")
    # small items
    notes = b"# notes\n\n![a](a.png) ![b](http://x.example/b.png)\n"
    run(
        "notes-images",
        {"run.yaml": good_run_yaml("h-notes-images"), "notes.md": notes},
        "notes.md",
        "2 images not shown",
        "h-notes-images",
    )
    run("corrupt-tfevents", {"events.out.tfevents.1700000000.host.1": bytes(range(256)) * 12}, "", "")
    return cases


# ---------------------------------------------------------------------------------------------------------------
# trees


GOOD_RUNS = ("good-run", "good-other")


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def write_good(root: Path) -> None:
    """Two good runs (the second compared with the first): what "the rest of the site" must still show."""
    write_files(root / "good" / "good-run", native_run("good-run"))
    write_files(root / "good" / "good-other", native_run("good-other", baseline="good-run"))


def write_tree(root: Path, cases: list[Case]) -> Path:
    """One source tree holding `cases` (run, spec and campaign kinds) beside the good runs."""
    write_good(root)
    for case in cases:
        if case.kind in ROOT_KINDS:
            raise ValueError(f"{case.kind} lives at the top of a tree: use write_root_tree")
        write_files(root / case.folder, case.files)
    return root


def write_root_tree(root: Path, cases: list[Case]) -> Path:
    """A tree whose top holds the root-level files of `cases` (at most one obs.yaml, one decisions.jsonl)."""
    write_good(root)
    for case in cases:
        write_files(root, case.files)
    return root


def root_groups(cases: list[Case]) -> list[list[Case]]:
    """Root-level cases paired into trees: each tree holds one obs.yaml case and one decisions.jsonl case."""
    by_kind = {k: [c for c in cases if c.kind == k] for k in ROOT_KINDS}
    n = max((len(v) for v in by_kind.values()), default=0)
    return [[v[i] for v in by_kind.values() if i < len(v)] for i in range(n)]


def case_path(case: Case, source: Path) -> str:
    """The bad file as a diagnostic names it (relative to the folder above the source root)."""
    if case.kind in ROOT_KINDS:
        return f"{source.name}/{case.target}"
    return f"{source.name}/{case.folder}/{case.target}"


if __name__ == "__main__":
    out = Path(sys.argv[1])
    fast = catalogue()
    write_tree(out / "runs", [c for c in fast if c.kind not in ROOT_KINDS])
    for i, group in enumerate(root_groups([c for c in fast if c.kind in ROOT_KINDS])):
        write_root_tree(out / f"root{i:02d}" / "src", group)
    if "--slow" in sys.argv:
        slow = catalogue(slow=True)
        write_tree(out / "slow", [c for c in slow if c.kind not in ROOT_KINDS])
        write_root_tree(out / "slow", [c for c in slow if c.kind in ROOT_KINDS])
    print(f"{len(fast)} cases")
