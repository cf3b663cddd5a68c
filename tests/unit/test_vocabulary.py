"""The name vocabulary (obs.vocabulary): each false sentence it caused has a test here.

Issue 16, "unknown names produce false sentences": `std_reward` beside `mean_reward` read as "only the
reward mean is logged"; a text `training_phase` column as "no stage labels"; a wall-clock `time` text
column as a duration; `cv_mse` as higher-is-better; DPO's implicit rewards as a reward-health panel.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from adapterkit import load_all, write
from hypothesis import given, settings
from hypothesis import strategies as st

from obs.analysis.curves import MAX_LOSS_OVERLAYS, find_bands, plan_curves
from obs.analysis.reward import reward_health
from obs.config import SiteConfig, load_config
from obs.diagnostics import Diagnostics
from obs.model import Metrics, Series
from obs.vocabulary import STAT_WORDS, is_stage_key, lower_is_better, names_a_duration, split_stat, tokens


def _metrics(**series: list[float]) -> Metrics:
    return Metrics(
        series={k: Series(np.arange(len(v), dtype=float), np.array(v, dtype=float)) for k, v in series.items()}
    )


def _log(tmp_path: Path, rows: list[dict]) -> Path:
    return write(tmp_path / "run" / "log.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


def test_std_reward_beside_mean_reward_is_a_spread_signal() -> None:
    m = _metrics(mean_reward=[0.1, 0.2, 0.3], std_reward=[0.5, 0.4, 0.3])
    health = reward_health(m, SiteConfig().threshold)
    assert health is not None and health.mean is not None and health.std is not None
    assert health.std.key == "std_reward" and health.can_detect  # not "only the reward mean is logged"
    assert [(b.mean, b.std) for b in find_bands({"mean_reward", "std_reward"})] == [("mean_reward", "std_reward")]


def test_dpo_implicit_rewards_are_not_a_reward_health_panel() -> None:
    m = _metrics(**{"rewards/chosen": [1.0, 2.0], "rewards/rejected": [0.0, -1.0], "rewards/margins": [1.0, 3.0]})
    assert reward_health(m, SiteConfig().threshold) is None


def test_a_text_training_phase_column_labels_stages(tmp_path: Path) -> None:
    rows = [{"step": i, "loss": 1.0 / (i + 1), "training_phase": "warmup" if i < 3 else "main"} for i in range(6)]
    _log(tmp_path, rows)
    (run, diags), *_ = load_all(tmp_path).values()
    assert run.metrics is not None and [s.name for s in run.metrics.stages] == ["warmup", "main"]
    assert run.metrics.stage_key == "training_phase"
    assert not [d for d in diags.items if "not plotted" in d.message]


def test_a_wall_clock_time_column_is_text_not_a_duration(tmp_path: Path) -> None:
    rows = [{"step": i, "loss": 1.0, "time": f"14:2{i}:05", "elapsed_time": f"0:0{i}:00"} for i in range(3)]
    _log(tmp_path, rows)
    (run, diags), *_ = load_all(tmp_path).values()
    assert run.metrics is not None and "time" not in run.metrics.series
    assert list(run.metrics.series["elapsed_time"].values) == [0.0, 60.0, 120.0]
    assert any("time: text values" in d.message for d in diags.items)
    assert any("text columns, not plotted: time" in d for d in run.metrics.dropped)


def test_lower_is_better_names_and_the_obs_yaml_override(tmp_path: Path) -> None:
    cfg = SiteConfig()
    for name in ("cv_mse", "val_mae", "eval/rmse", "test_wer", "cer", "perplexity", "word_error_rate", "train/loss"):
        assert not cfg.metric_higher_is_better(name), name
    for name in ("accuracy", "f1", "reward", "gmaes", "pass@1"):
        assert cfg.metric_higher_is_better(name), name
    write(tmp_path / "obs.yaml", "metrics:\n  cv_mse: {better: higher}\n  score: {better: lower}\n  bad: 3\n")
    diags = Diagnostics()
    cfg = load_config(tmp_path, diags)
    assert cfg.metric_higher_is_better("cv_mse") and not cfg.metric_higher_is_better("score")
    assert any("'metrics.bad' should be a mapping" in d.message for d in diags.items)


def test_loss_series_past_the_chart_limit_are_named() -> None:
    names = {f"loss_{i}": [1.0, 0.5] for i in range(MAX_LOSS_OVERLAYS + 3)}
    plan = plan_curves(_metrics(loss=[1.0, 0.5], **names))
    assert len(plan.loss_overlays) == MAX_LOSS_OVERLAYS and len(plan.loss_not_drawn) == 3


def test_the_loss_scale_is_not_drawn_with_the_loss() -> None:
    series = {"eval_loss": [2.0, 1.0], "loss_scale": [65536.0, 65536.0], "train/loss_scaler": [1.0, 2.0]}
    plan = plan_curves(_metrics(loss=[1.0, 0.5], **series))
    assert plan.loss == "loss" and plan.loss_overlays == ["eval_loss"]
    assert {"loss_scale", "train/loss_scaler"} <= set(plan.others)


_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(
    _word.filter(lambda w: w not in STAT_WORDS),  # `mean_sd` is ambiguous, and read as the sd of `mean`
    st.sampled_from(["_", "/", ".", "-"]),
    st.sampled_from(["mean", "std", "min", "max", "avg", "stdev"]),
)
def test_property_a_statistic_suffix_or_prefix_names_its_base(base: str, sep: str, stat: str) -> None:
    canonical = {"avg": "mean", "stdev": "std"}.get(stat, stat)
    assert split_stat(f"{base}{sep}{stat}") == (base, canonical)
    if sep in "_/":
        assert split_stat(f"{stat}{sep}{base}") == (base, canonical)


@settings(max_examples=200, deadline=None)
@given(st.lists(_word, min_size=1, max_size=4), st.sampled_from(["_", "/", ".", " "]))
def test_property_direction_and_stage_are_decided_by_whole_tokens(words: list[str], sep: str) -> None:
    name = sep.join(words)
    assert tokens(name) == tuple(words)
    assert (
        lower_is_better(name)
        == any(
            w in {"loss", "nll", "mse", "mae", "rmse", "msle", "mape", "wer", "cer", "ter", "perplexity", "ppl"}
            or w in {"error", "errors", "err", "bpb", "bpc", "regret", "latency", "distance"}
            for w in words
        )
        or "error rate" in " ".join(words)
        or "bits per" in " ".join(words)
    )
    assert is_stage_key(name) == any(w in {"stage", "phase", "curriculum"} for w in words)
    assert names_a_duration(name) == any(
        w in {"elapsed", "remaining", "duration", "runtime", "eta", "took", "spent", "left", "uptime", "walltime"}
        for w in words
    )


def test_a_primary_metric_that_does_not_exist_is_an_error_listing_the_ones_that_do(tmp_path: Path) -> None:
    from obs.pipeline import SourceTree, load_report

    write(tmp_path / "r" / "run.yaml", "primary_metric: eval_acuracy\n")
    rows = [{"step": i, "loss": 1.0, "eval_accuracy": 0.5} for i in range(3)]
    write(tmp_path / "r" / "metrics.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    loaded = load_report(SourceTree.open(tmp_path), "r")
    headline = loaded.report.headline
    assert headline.metric is None and headline.value is None  # no silent fall back to eval_accuracy or loss
    (error,) = [d for d in loaded.report.run.diagnostics.items if d.severity == "error"]
    assert error.path.endswith("r/run.yaml")
    assert "primary_metric 'eval_acuracy' (run.yaml) is not a metric of this run; it has: eval_accuracy, loss" in (
        error.message
    )


def test_the_docs_print_the_vocabulary() -> None:
    from obs.vocabulary import markdown_table

    docs = (Path(__file__).resolve().parents[2] / "docs" / "adapters.md").read_text(encoding="utf-8")
    assert markdown_table() in docs, "docs/adapters.md's vocabulary table differs from obs.vocabulary"


def test_headline_fallback_prefers_a_held_out_outcome_logged_to_the_end() -> None:
    from obs.analysis.digest import make_digest
    from obs.analysis.headline import choose_headline
    from obs.model import Run

    steps = np.arange(10, dtype=float)
    run = Run(id="r", source_dir=Path("."))
    run.metrics = Metrics(
        series={
            "env/pass_rate": Series(steps, np.linspace(0.2, 0.6, 10)),  # training, to the end
            "test/pass_rate": Series(steps[:1], np.array([0.1])),  # an eval at step 0 only: stale
            "val/loss": Series(steps, np.linspace(2, 1, 10)),
            "val/accuracy": Series(steps, np.linspace(0.3, 0.7, 10)),
        }
    )
    h = choose_headline(make_digest(run, 3), [], SiteConfig().metric_higher_is_better, 3)
    assert h.metric == "val/accuracy"  # held out, an outcome (not the loss), logged to the end
    del run.metrics.series["val/accuracy"], run.metrics.series["val/loss"]
    h = choose_headline(make_digest(run, 3), [], SiteConfig().metric_higher_is_better, 3)
    assert h.metric == "env/pass_rate"  # not the step-0-only test metric
