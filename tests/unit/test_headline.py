"""The one headline rule (obs.analysis.headline): a table of key sets as real logs of each format write
them (HF Trainer, TRL, lm-eval, ultralytics, W&B, MLflow, RL libraries, custom JSONL), each with the
metric a practitioner reads first; the declared metric's precedence; and that no second rule exists."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from obs.analysis.digest import RunDigest, WindowStat
from obs.analysis.headline import Declared, aggregate_delta, choose_headline
from obs.config import SiteConfig

HIB = SiteConfig().metric_higher_is_better

# (format, logged names, expected headline); a name ending in "@early" is logged only at the start of the run
TABLE: list[tuple[str, str, str | None]] = [
    # --- Hugging Face Trainer (trainer_state.json log_history)
    (
        "hf classification",
        "loss grad_norm learning_rate epoch eval_loss eval_accuracy eval_runtime eval_samples_per_second "
        "eval_steps_per_second train_runtime train_samples_per_second total_flos train_loss",
        "eval_accuracy",
    ),
    ("hf training only", "loss grad_norm learning_rate epoch", "loss"),
    ("hf eval loss only", "loss grad_norm learning_rate epoch eval_loss eval_runtime", "eval_loss"),
    (
        "hf six eval sets",
        "loss learning_rate epoch eval_squad_loss eval_nq_loss eval_trivia_loss eval_hotpot_loss eval_boolq_loss "
        "eval_race_loss eval_squad_runtime eval_nq_runtime",
        "mean loss over 6 eval sets",
    ),
    ("hf question answering", "loss eval_loss eval_exact_match eval_f1 epoch", "eval_exact_match"),
    ("hf classification f1", "loss eval_loss eval_accuracy eval_f1 eval_precision eval_recall", "eval_accuracy"),
    ("hf regression", "loss eval_loss eval_mse eval_runtime", "eval_mse"),
    ("hf translation", "loss eval_loss eval_bleu eval_gen_len eval_runtime", "eval_bleu"),
    ("hf speech", "loss eval_loss eval_wer learning_rate", "eval_wer"),
    # --- TRL
    ("trl sft", "loss grad_norm learning_rate num_tokens mean_token_accuracy entropy epoch", "mean_token_accuracy"),
    (
        "trl sft with eval",
        "loss mean_token_accuracy eval_loss eval_mean_token_accuracy eval_entropy eval_num_tokens eval_runtime",
        "eval_mean_token_accuracy",
    ),
    (
        "trl dpo with eval",
        "loss rewards/chosen rewards/rejected rewards/accuracies rewards/margins logps/chosen logits/chosen "
        "eval_loss eval_rewards/chosen eval_rewards/accuracies eval_rewards/margins eval_runtime",
        "eval_rewards/accuracies",
    ),
    (
        "trl grpo",
        "loss reward reward_std rewards/accuracy_reward/mean rewards/accuracy_reward/std rewards/format_reward/mean "
        "frac_reward_zero_std kl entropy completions/mean_length clip_ratio/region_mean grad_norm learning_rate",
        "reward",
    ),
    (
        "trl grpo, older",
        "loss reward reward_std rewards/accuracy_reward rewards/format_reward completion_length kl",
        "reward",
    ),
    (
        "trl grpo with a reward function named valid_json",
        "loss reward reward_std rewards/valid_json_reward/mean rewards/valid_json_reward/std kl",
        "reward",
    ),
    (
        "trl ppo",
        "objective/kl objective/entropy objective/rlhf_reward objective/scores policy/approxkl_avg loss/policy_avg "
        "loss/value_avg val/clipfrac_avg",
        "objective/rlhf_reward",
    ),
    ("reward-guided policy run", "loss mean_reward learning_rate", "mean_reward"),
    # --- ultralytics results.csv
    (
        "yolo detect",
        "epoch train/box_loss train/cls_loss train/dfl_loss metrics/precision(B) metrics/recall(B) metrics/mAP50(B) "
        "metrics/mAP50-95(B) val/box_loss val/cls_loss val/dfl_loss lr/pg0 lr/pg1 lr/pg2",
        "metrics/mAP50-95(B)",
    ),
    (
        "yolo classify",
        "epoch train/loss metrics/accuracy_top1 metrics/accuracy_top5 val/loss lr/pg0",
        "metrics/accuracy_top1",
    ),
    ("yolo without metrics", "epoch train/box_loss val/box_loss lr/pg0", "val/box_loss"),
    # --- W&B (history or summary)
    (
        "wandb hf run",
        "train/loss train/global_step train/epoch train/learning_rate eval/loss eval/accuracy _runtime _step "
        "_timestamp",
        "eval/accuracy",
    ),
    (
        "wandb trainer summary",
        "train_loss train/loss train/grad_norm train/learning_rate train_runtime total_flos _step",
        "train/loss",
    ),
    ("wandb eval loss over train_loss", "train_loss train/loss eval/loss train/epoch", "eval/loss"),
    ("wandb keras", "loss accuracy val_loss val_accuracy epoch", "val_accuracy"),
    ("wandb generation eval", "train/loss val_gen/accuracy_lenient val_gen/num_samples", "val_gen/accuracy_lenient"),
    ("wandb only bookkeeping", "_runtime _step _timestamp", None),
    # --- MLflow
    ("mlflow keras", "test_accuracy test_loss val_accuracy val_loss", "test_accuracy"),
    ("mlflow llm eval", "contains exact_match token_f1", "exact_match"),
    ("mlflow lightning", "train_loss_step train_loss_epoch val_loss val_acc epoch", "val_acc"),
    (
        "mlflow sklearn autolog",
        "training_accuracy_score training_f1_score training_log_loss",
        "training_accuracy_score",
    ),
    ("mlflow speech", "loss lr", "loss"),
    # --- RL libraries
    (
        "stable-baselines3",
        "rollout/ep_rew_mean rollout/ep_len_mean time/fps time/total_timesteps train/loss train/value_loss "
        "train/entropy_loss train/approx_kl train/clip_fraction train/learning_rate train/explained_variance",
        "rollout/ep_rew_mean",
    ),
    (
        "stable-baselines3 with eval",
        "eval/mean_reward eval/mean_ep_length rollout/ep_rew_mean rollout/ep_len_mean train/loss time/fps",
        "eval/mean_reward",
    ),
    (
        "rllib",
        "episode_reward_mean episode_reward_max episode_reward_min episode_len_mean "
        "info/learner/default_policy/learner_stats/total_loss",
        "episode_reward_mean",
    ),
    (
        "rllib new stack",
        "env_runners/episode_return_mean env_runners/episode_return_max env_runners/episode_return_min "
        "env_runners/episode_len_mean learners/default_policy/total_loss",
        "env_runners/episode_return_mean",
    ),
    (
        "cleanrl",
        "charts/episodic_return charts/episodic_length charts/SPS losses/value_loss losses/policy_loss "
        "losses/entropy losses/approx_kl charts/learning_rate",
        "charts/episodic_return",
    ),
    (
        "ml-agents",
        "Environment/Cumulative Reward;Environment/Episode Length;Losses/Policy Loss;Losses/Value Loss;"
        "Policy/Entropy;Policy/Learning Rate",
        "Environment/Cumulative Reward",
    ),
    (
        "episode statistics",
        "Rewards/max_episodes Rewards/mean_episodes Rewards/min_episodes loss",
        "Rewards/mean_episodes",
    ),
    ("tianshou", "test/reward test/reward_std train/reward train/loss", "test/reward"),
    # --- custom JSONL
    ("nanogpt", "iter train_loss val_loss lr mfu", "val_loss"),
    ("pretraining log", "loss lr tokens usd", "loss"),
    (
        "llama-factory",
        "loss accuracy lr epoch percentage elapsed_time remaining_time total_steps",
        "accuracy",
    ),
    (
        "agent RL with a test pass at step 0 only",
        "env/all/pass_rate env/all/reward/total env/all/by_group/frac_all_good test/env/all/pass_rate@early "
        "optim/lr optim/entropy progress/done_frac",
        "env/all/pass_rate",
    ),
    ("sft with a test nll", "test/nll train_mean_nll time/step num_tokens learning_rate", "test/nll"),
    ("keras csv logger", "epoch accuracy loss val_accuracy val_loss", "val_accuracy"),
    ("keras tensorboard", "epoch_loss epoch_accuracy", "epoch_accuracy"),
]


def _digest(names: list[str], summary: dict[str, float] | None = None) -> RunDigest:
    finals = {}
    for raw in names:
        name, early = (raw[: -len("@early")], True) if raw.endswith("@early") else (raw, False)
        finals[name] = WindowStat(0.5, math.nan, 10, 0.0 if early else 100.0, 50)
    return RunDigest("r", finals=finals, summary=summary or {})


def _names(keys: str) -> list[str]:
    return keys.split(";") if ";" in keys else keys.split()


@pytest.mark.parametrize(("fmt", "keys", "expected"), TABLE, ids=[row[0] for row in TABLE])
def test_the_headline_a_practitioner_expects(fmt: str, keys: str, expected: str | None) -> None:
    h = choose_headline(_digest(_names(keys)), [], HIB, 10)
    assert h.metric == expected, (fmt, h.metric, h.reason)
    assert h.reason  # every choice says why


def test_the_table_covers_every_format_with_forty_key_sets() -> None:
    assert len(TABLE) >= 40
    for prefix in ("hf", "trl", "yolo", "wandb", "mlflow", "rllib", "stable-baselines3", "cleanrl", "ml-agents"):
        assert any(row[0].startswith(prefix) for row in TABLE), prefix


# --- lm-eval: evaluation results by task, suites with their subtasks


def _evals(names: list[str], groups: dict[str, list[str]] | None = None) -> RunDigest:
    return RunDigest("r", evals={n: (0.5, 0.01) for n in names}, provenance={"groups": groups} if groups else {})


@pytest.mark.parametrize(
    ("fmt", "names", "groups", "expected"),
    [
        (
            "lm-eval gsm8k (strict match listed first)",
            ["gsm8k/exact_match,strict-match", "gsm8k/exact_match,flexible-extract"],
            None,
            "gsm8k/exact_match,strict-match",
        ),
        (
            "lm-eval mmlu suite: the aggregate, not the first subtask",
            ["mmlu_abstract_algebra/acc", "mmlu_anatomy/acc", "mmlu_humanities/acc", "mmlu/acc"],
            {"mmlu": ["mmlu_humanities", "mmlu_abstract_algebra", "mmlu_anatomy"]},
            "mmlu/acc",
        ),
        ("lm-eval arc", ["arc_challenge/acc", "arc_challenge/acc_norm"], None, "arc_challenge/acc"),
        ("lm-eval humaneval", ["humaneval/pass@1,create_test"], None, "humaneval/pass@1,create_test"),
        (
            "lm-eval leaderboard suite",
            ["leaderboard_bbh_boolean_expressions/acc_norm", "leaderboard_bbh/acc_norm"],
            {"leaderboard_bbh": ["leaderboard_bbh_boolean_expressions"]},
            "leaderboard_bbh/acc_norm",
        ),
    ],
)
def test_lm_eval_headlines(fmt: str, names: list[str], groups: dict[str, list[str]] | None, expected: str) -> None:
    h = choose_headline(_evals(names, groups), [], HIB, 10)
    assert h.metric == expected, (fmt, h.reason)


def test_a_suite_aggregate_says_it_is_one() -> None:
    h = choose_headline(_evals(["mmlu_anatomy/acc", "mmlu/acc"], {"mmlu": ["mmlu_anatomy"]}), [], HIB, 10)
    assert "aggregate of the suite mmlu" in h.reason


# --- the declared metric and its precedence


def test_run_yaml_beats_spec_beats_campaign_beats_obs_yaml() -> None:
    digest = _digest(["a_acc", "b_acc", "c_acc", "d_acc", "eval_accuracy"])
    declared = [
        Declared("a_acc", "run.yaml", True),
        Declared("b_acc", "spec s", True),
        Declared("c_acc", "campaign c", True),
        Declared("d_acc", "obs.yaml", False),
    ]
    for i, d in enumerate(declared):
        h = choose_headline(digest, declared[i:], HIB, 10)
        assert h.metric == d.metric
        assert h.reason == f"chosen because {d.where} names it as the primary metric"


def test_a_required_name_the_run_lacks_is_no_headline_and_says_what_there_is() -> None:
    h = choose_headline(_digest(["eval_accuracy"]), [Declared("acc", "run.yaml", True)], HIB, 10)
    assert h.metric is None and h.missing is not None
    assert "eval_accuracy" in h.missing


def test_obs_yaml_default_falls_through_when_absent() -> None:
    h = choose_headline(_digest(["loss", "eval_loss"]), [Declared("exact", "obs.yaml", False)], HIB, 10)
    assert h.metric == "eval_loss"


def test_the_mean_is_chosen_over_max_and_says_so() -> None:
    h = choose_headline(_digest(_names("Rewards/max_episodes Rewards/mean_episodes")), [], HIB, 10)
    assert h.metric == "Rewards/mean_episodes"
    assert "the mean, not Rewards/max_episodes" in h.reason


def test_several_eval_sets_losses_are_averaged_and_compared_over_the_same_sets() -> None:
    here = _digest(["loss", "eval_a_loss", "eval_b_loss"])
    h = choose_headline(here, [], HIB, 10)
    assert h.kind == "aggregate" and h.members == ("eval_a_loss", "eval_b_loss") and h.value == 0.5
    assert "2 eval sets" in h.detail and "their mean" in h.reason
    assert not h.higher_is_better
    base = RunDigest(
        "b",
        finals={
            "eval_a_loss": WindowStat(0.25, math.nan, 1, 1.0, 1),
            "eval_b_loss": WindowStat(0.75, math.nan, 1, 1.0, 1),
        },
    )
    d = aggregate_delta(h, here, base)
    assert d.baseline_value == 0.5 and d.delta == 0.0 and d.verdict == "not_tested"
    partial = RunDigest("c", finals={"eval_a_loss": WindowStat(0.25, math.nan, 1, 1.0, 1)})
    assert aggregate_delta(h, here, partial).delta is None


def test_a_sparse_series_shows_its_last_value_with_its_step() -> None:
    import numpy as np

    from obs.analysis.digest import window_stat

    steps = np.arange(1.0, 8.0) * 100
    sparse = window_stat(np.arange(7.0), steps, 10)
    assert sparse is not None and sparse.n == 1 and sparse.mean == 6.0 and sparse.last_step == 700.0
    dense = window_stat(np.arange(40.0), np.arange(40.0), 10)
    assert dense is not None and dense.n == 10 and dense.mean == pytest.approx(34.5)
    h = choose_headline(RunDigest("r", finals={"eval_accuracy": sparse}), [], HIB, 10)
    assert (
        h.detail == "last logged value (logged 7 times: too few for a mean of the last 10) of eval_accuracy (step 700)"
    )


def test_no_second_headline_rule_exists() -> None:
    """A grep finds no other headline choice: the old names and lists are gone from src/."""
    src = Path(__file__).resolve().parents[2] / "src" / "obs"
    banned = re.compile(r"resolve_headline|FALLBACK_METRICS|OUTCOME_HINT|BOOKKEEPING\b|preferred_metrics")
    offenders = [
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if p.name != "headline.py" and banned.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_series_explorer_opens_on_the_headline_curve() -> None:
    """Issue 24: an HF run's "Every logged series" opened on `epoch`, not on the headline metric."""
    import numpy as np

    from obs.analysis.report import RunContext, analyse_run
    from obs.model import Metrics, Run, Series
    from obs.render.run_page import make_charts

    steps = np.arange(1.0, 41.0)
    run = Run(id="hf", source_dir=Path("."), adapter="hf_trainer")
    run.metrics = Metrics(
        series={
            "epoch": Series(steps, steps / 10),
            "loss": Series(steps, np.linspace(2, 1, 40)),
            "learning_rate": Series(steps, np.linspace(1e-4, 0, 40)),
            "eval_accuracy": Series(steps[::4], np.linspace(0.5, 0.8, 10)),
        }
    )
    report = analyse_run(run, RunContext(), SiteConfig())
    assert report.headline.metric == "eval_accuracy"
    made = make_charts(report, "hf", 2000)
    assert made is not None and made[0].explore == "eval_accuracy"


def test_obs_yaml_default_is_said_as_a_default() -> None:
    """Without an obs.yaml, "obs.yaml names it" would be false: the default `exact` is said as a default."""
    from obs.analysis.headline import declared_metrics
    from obs.model import Run

    declared = declared_metrics(Run(id="r", source_dir=Path(".")), [], SiteConfig())
    assert [d.where for d in declared] == ["obs.yaml"]
    assert declared[0].reason == "chosen because it is 'exact', obs.yaml's default primary metric"
    cfg = SiteConfig()
    cfg.primary_metric = "pass@1"
    assert declared_metrics(Run(id="r", source_dir=Path(".")), [], cfg)[0].reason == (
        "chosen because obs.yaml names it as the primary metric"
    )


def test_an_ultralytics_results_csv_leads_with_map50_95(tmp_path: Path) -> None:
    """End to end through the CSV reader: the column names are padded with spaces, as ultralytics writes them."""
    from adapterkit import load_all, write

    from obs.analysis.report import RunContext, analyse_run

    cols = ["epoch", "train/box_loss", "metrics/precision(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)"]
    cols += ["val/box_loss", "lr/pg0"]
    rows = [",".join(f"{c:>22}" for c in cols)]
    rows += [",".join(f"{v:>22}" for v in [e, 1.5 - e / 50, 0.5, 0.6, e / 100, 1.2, 0.01]) for e in range(1, 31)]
    write(tmp_path / "detect" / "train" / "results.csv", "\n".join(rows) + "\n")
    (run, _), *_ = load_all(tmp_path).values()
    h = analyse_run(run, RunContext(), SiteConfig()).headline
    assert h.metric == "metrics/mAP50-95(B)" and h.value == pytest.approx(np.mean(np.arange(21, 31)) / 100)
    assert h.reason == "chosen because it is a held-out outcome (mAP)"


def test_an_hf_run_with_six_eval_sets_leads_with_their_mean_and_compares_it(tmp_path: Path) -> None:
    """The defect: train `loss` when six eval datasets' losses exist (and rose: the run overfits)."""
    import json

    from adapterkit import load_all, write

    from obs.analysis.digest import make_digest
    from obs.analysis.report import RunContext, analyse_run
    from obs.render.run_page import make_charts

    sets = ["squad", "nq", "trivia", "hotpot", "boolq", "race"]

    def state(rise: float) -> str:
        log: list[dict] = [{"step": s, "loss": 2 - s / 100, "learning_rate": 1e-4} for s in range(10, 210, 10)]
        for s in range(50, 250, 50):
            log.append({"step": s, **{f"eval_{n}_loss": 1.0 + rise * s / 200 for n in sets}})
        return json.dumps({"global_step": 200, "max_steps": 200, "log_history": log})

    write(tmp_path / "base" / "trainer_state.json", state(0.0))
    write(tmp_path / "over" / "trainer_state.json", state(0.5))
    runs = {rid: run for rid, (run, _) in load_all(tmp_path).items()}
    base = make_digest(runs["base"], 10)
    report = analyse_run(runs["over"], RunContext(baseline_id="base", baseline=base), SiteConfig())
    h = report.headline
    assert h.kind == "aggregate" and h.metric == "mean loss over 6 eval sets" and h.value == pytest.approx(1.5)
    assert report.delta is not None and report.delta.delta == pytest.approx(0.5)
    assert report.delta.verdict == "not_tested" and "the same 6 eval sets" in report.delta.method
    made = make_charts(report, "over", 2000)
    assert made is not None and made[0].explore == "eval_boolq_loss"  # the first member's curve
