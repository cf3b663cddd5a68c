"""The one headline rule: which number leads a run's page, and why (`choose_headline`).

Every output (run page, leaderboard and index.json, PR summary, `obs gate`) reads the `Headline` this
module returns; no other module picks a metric. The precedence, documented in docs/contract.md and
docs/reading-a-report.md (keep the three in step):

1. a **declared** primary metric: run.yaml > spec.yaml > campaign.yaml > obs.yaml (then the outcome a
   reader of per-item records found to be the file's own). A name declared in run.yaml, a spec or a
   campaign that the run does not have is no headline and an error, never a silent fall back;
2. a **held-out outcome**: probe checks, evaluation results (an lm-eval suite's aggregate before its
   subtasks), then logged or summary values named as an outcome on held-out data (test before
   eval/val; accuracy, exact match, pass@k, F1, mAP, precision/recall, scores, reward, error rates);
   metrics that only evaluations compute (pass@k, mAP, BLEU/ROUGE, WER) count as held-out;
3. a **held-out loss**: eval/val/test loss, NLL, perplexity; several eval sets' losses
   (`eval_<set>_loss`) become their mean, and the page says so;
4. a **training outcome** (accuracy, reward of an RL run, ...);
5. a **training loss**;
6. any other number that is not bookkeeping (runtime, learning rate, step counts, ...).

Within a class: a suite aggregate before its subtasks, a value logged to the end before one logged
only early, the mean before the median before max/min (spread statistics last), the total before a
component (`reward` before `rewards/accuracy_reward/mean`), then the name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from obs.analysis.advice import NATIVE, AdviceFiles
from obs.analysis.compare import ONE_RUN_EACH, Headline, HeadlineDelta
from obs.analysis.digest import RunDigest
from obs.analysis.scoreboard import order_checks
from obs.analysis.stats import NOT_TESTED, wilson_interval
from obs.numbers import num
from obs.numbers import step as step_text
from obs.probetable import TRUE
from obs.schema import OBS_YAML
from obs.vocabulary import tokens

if TYPE_CHECKING:
    from obs.config import SiteConfig
    from obs.model import Campaign, Run, Spec

_DEFAULT_PRIMARY = OBS_YAML.declared("primary_metric").default_value()  # said as a default, not as a choice

__all__ = [
    "Declared",
    "aggregate_delta",
    "available_metrics",
    "choose_headline",
    "declared_metrics",
    "is_bookkeeping",
    "metric_class",
    "surrounding_metrics",
]


@dataclass(frozen=True)
class Declared:
    """A primary metric someone named, where, and whether a run lacking it is an error."""

    metric: str
    where: str  # "run.yaml", "spec S", "campaign C", "obs.yaml", "the reader of x.jsonl"
    required: bool
    file: Path | None = None  # the file that names it (an error's location)
    because: str = ""  # the reason's words when "<where> names it" would not be true (obs.yaml's default)

    @property
    def reason(self) -> str:
        return f"chosen because {self.because or f'{self.where} names it as the primary metric'}"


def surrounding_metrics(spec: Spec | None, campaign: Campaign | None) -> list[Declared]:
    """The primary metrics a run's spec and campaign declare, in that order."""
    out: list[Declared] = []
    if spec is not None and spec.primary_metric:
        out.append(Declared(spec.primary_metric, f"spec {spec.id}", True, spec.source_dir / "spec.yaml"))
    if campaign is not None and campaign.primary_metric:
        out.append(
            Declared(campaign.primary_metric, f"campaign {campaign.id}", True, campaign.source_dir / "campaign.yaml")
        )
    return out


def declared_metrics(run: Run, around: Sequence[Declared], cfg: SiteConfig) -> list[Declared]:
    """Every declared primary metric in precedence order: run.yaml > spec > campaign (`around`) > obs.yaml > the
    outcome the reader of a per-item file found to be its own."""
    out: list[Declared] = []
    if run.primary_metric:
        out.append(Declared(run.primary_metric, "run.yaml", True, run.source_dir / "run.yaml"))
    out += around
    if cfg.primary_metric:
        default = cfg.primary_metric == _DEFAULT_PRIMARY
        because = f"it is '{cfg.primary_metric}', obs.yaml's default primary metric" if default else ""
        out.append(Declared(cfg.primary_metric, "obs.yaml", False, because=because))
    if run.reader_metric:
        out.append(Declared(run.reader_metric, run.reader_metric_from or "the reader", False))
    return out


# ------------------------------------------------------------------------------------- name classes

# Numbers about the run's mechanics, not how well it did: never a headline unless declared.
_BOOKKEEPING = re.compile(
    r"(^_|runtime|time|second|flos|_per_|step|epoch|memory|mem_|throughput|tokens|^lr$|^lr/|learning_rate|grad_norm"
    r"|loss_scale|completions|num_|count|^n_|elapsed|remaining|version|(^|[/_])(fps|sps)$|percentage|progress)",
    re.IGNORECASE,
)
# Diagnostics of a policy or a batch (fractions, clipping, KL, entropy, lengths): shown, never the headline.
_DIAGNOSTIC = frozenset(
    {"frac", "fraction", "clip", "clipped", "kl", "entropy", "length", "len", "advantage", "advantages", "ratio"}
)
HELD_OUT = ("test", "eval", "evaluation", "val", "valid", "validation", "dev", "holdout", "heldout")
_LOSS = frozenset({"loss", "nll", "perplexity", "ppl", "bpb", "bpc", "logloss"})
_REWARD = frozenset({"reward", "rewards", "rew", "return", "returns", "episodic"})
_SPREAD = frozenset({"std", "stdev", "stddev", "sd", "var", "variance", "stderr", "sem"})
_EXTREME = frozenset({"max", "min", "maximum", "minimum", "best", "worst"})
# outcome families in the order a practitioner reads them, each a token set (or a pattern below)
_FAMILIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("pass@k", frozenset()),
    (
        "accuracy",
        frozenset(
            {"acc", "accuracy", "accuracies", "exact", "em", "correct", "success", "solved", "resolved"}
            | {"pass", "passed", "win", "winrate", "match", "hit", "top1", "top5"}
        ),
    ),
    ("f1", frozenset({"f1", "f1score", "macro", "micro"})),
    ("map", frozenset({"map", "ap", "ap50", "ap75"})),
    ("precision/recall", frozenset({"precision", "recall", "auc", "auroc", "roc", "iou", "miou", "dice"})),
    ("reward", _REWARD),
    (
        "score",
        frozenset({"score", "scores", "bleu", "rouge", "rougel", "rouge1", "rouge2", "meteor", "chrf", "ndcg", "mrr"})
        | {"judge", "grade", "similarity", "bertscore", "sacrebleu"},
    ),
    ("error", frozenset({"wer", "cer", "ter", "error", "err", "mae", "mse", "rmse"})),
)
_PASSK = re.compile(r"pass(@|_at_|@k)\d*", re.IGNORECASE)
_WIDE_IOU = re.compile(r"50[-:_]95")
_MAP = re.compile(r"(^|[^a-z])map(\d|[^a-z]|$)", re.IGNORECASE)
# computed only by evaluations: held-out whatever the prefix
_EVAL_ONLY = frozenset({"map", "pass@k", "bleu", "rouge", "wer", "cer"})
# several eval sets' losses, as HF Trainer names them with a dict of eval datasets: eval_<set>_loss
_SET_LOSS = re.compile(r"^(?P<split>eval|val|validation|test)[_/](?P<set>.+?)[_/](?P<loss>loss|nll)$", re.IGNORECASE)
_COMPONENTS = frozenset({"box", "cls", "dfl", "obj", "seg", "mask", "value", "policy", "entropy", "kl", "aux", "total"})

CLASS_WORDS = {
    1: "the declared primary metric",
    2: "a held-out outcome",
    3: "a held-out loss",
    4: "a training outcome",
    5: "a training loss",
    6: "the only kind of number logged that is not bookkeeping",
}


_NONE_ABOVE = {
    3: "no held-out outcome is logged",
    4: "no held-out outcome or loss is logged",
    5: "no held-out metric and no training outcome is logged",
    6: "no outcome and no loss is logged",
}


def _tokens(name: str) -> tuple[str, ...]:
    return tokens(re.sub(r"[(),:@]", " ", name))


def is_bookkeeping(name: str) -> bool:
    """Mechanics, not outcomes (runtime, lr, step counts, ...); Keras' `epoch_loss`, `epoch_accuracy` are outcomes."""
    return _BOOKKEEPING.search(re.sub(r"(^|/)epoch_(?=.)", r"\1", name)) is not None


def family(name: str) -> str | None:
    """The outcome family of a metric name (`reward` wins over a reward function named `accuracy`)."""
    if _PASSK.search(name):
        return "pass@k"
    toks = set(_tokens(name))
    if toks & _REWARD:
        return "reward"
    if _MAP.search(name):
        return "map"
    for fam, names in _FAMILIES:
        if toks & names:
            return fam
    joined = "".join(_tokens(name))
    if "accuracy" in joined or "exactmatch" in joined:
        return "accuracy"
    return None


def _held_out_rank(name: str, fam: str | None) -> int | None:
    """0 for test, 1 for eval/val/dev, None for training data; evaluation-only metrics count as eval."""
    toks = _tokens(name)
    if "test" in toks:
        return 0
    if any(t in HELD_OUT for t in toks if t != "valid") or name.lower().startswith("metrics/"):  # ultralytics: on val
        return 1
    # `valid` says held-out only as a whole segment or first word (`valid_loss`), not in `valid_json_reward`
    if any(seg == "valid" or (i == 0 and seg.startswith("valid_")) for i, seg in enumerate(name.lower().split("/"))):
        return 1
    if fam in _EVAL_ONLY or any(t in _EVAL_ONLY for t in toks) or "exactmatch" in "".join(toks):
        return 1
    return None


def metric_class(name: str) -> int | None:
    """The precedence class of an undeclared logged name (2..6; see the module docstring); None: never."""
    if is_bookkeeping(name):
        return None
    toks = set(_tokens(name))
    fam = family(name)
    is_loss = bool(toks & _LOSS)
    if toks & _DIAGNOSTIC and not is_loss:
        return 6
    held = _held_out_rank(name, fam) is not None
    if fam is not None and not is_loss:
        return 2 if held else 4
    if is_loss:
        return 3 if held else 5
    return 6


def _stat_rank(name: str) -> int:
    """Mean (or a plain value) before the median before max/min; spreads last."""
    toks = set(_tokens(name))
    if toks & _SPREAD:
        return 3
    if toks & _EXTREME:
        return 2
    if "median" in toks:
        return 1
    return 0


def available_metrics(digest: RunDigest) -> list[str]:
    """Every name a headline can be: probe checks, logged series, final-summary values, evaluation results."""
    checks = digest.probe.check_names() if digest.probe else set()
    return sorted(checks | set(digest.finals) | set(digest.ends_nonfinite) | set(digest.summary) | set(digest.evals))


# ------------------------------------------------------------------------------------------- choice


@dataclass(frozen=True)
class _Candidate:
    key: tuple[object, ...]
    name: str
    why: str
    members: tuple[str, ...] = ()


def choose_headline(
    digest: RunDigest,
    declared: Sequence[Declared],
    higher_is_better: Callable[[str], bool],
    window: int,
    *,
    advice: AdviceFiles = NATIVE,
) -> Headline:
    """The run's headline by the precedence above, with `reason` saying in one line why this one; when there is
    none, what to add says the run's own files (`advice`)."""
    checks = order_checks(digest.probe.check_names()) if digest.probe else []
    for d in declared:
        found = _headline_for(digest, d.metric, higher_is_better, window, checks)
        if found is not None:
            found.reason = d.reason
            return found
        if d.required:
            have = available_metrics(digest)
            shown = ", ".join(have[:30]) + (f" (+{len(have) - 30} more)" if len(have) > 30 else "")
            message = f"primary_metric '{d.metric}' ({d.where}) is not a metric of this run; it has: {shown or 'none'}"
            return Headline(
                None, None, None, message, missing=message, reason=f"{d.where} names a metric this run does not have"
            )
    for cand in sorted(_candidates(digest, checks), key=lambda c: c.key):
        if cand.members:
            found = _aggregate(digest, cand, higher_is_better)
        else:
            found = _headline_for(digest, cand.name, higher_is_better, window, checks)
        if found is not None:
            found.reason = f"chosen because {cand.why}"
            return found
    return Headline(
        None,
        None,
        None,
        advice.no_metric(),
        reason="nothing logged is an outcome or a loss (only bookkeeping such as runtime or learning rate)",
    )


def _candidates(digest: RunDigest, checks: list[str]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for i, check in enumerate(checks):
        why = "the probe's per-case outcomes are the run's held-out result"
        first = f" ({check} first of {len(checks)} checks)" if i == 0 and len(checks) > 1 else ""
        out.append(_Candidate((False, 2, 0, i), check, why + first))
    out += _eval_candidates(digest)
    last = max((st.last_step for st in digest.finals.values()), default=0.0)
    names = list(dict.fromkeys([*digest.finals, *digest.ends_nonfinite, *digest.summary]))
    classed = {n: c for n in names if (c := metric_class(n)) is not None}
    stale = {n for n in classed if _stale(digest, n, last)}
    set_losses = _eval_set_losses([n for n, c in classed.items() if c == 3])
    if len(set_losses) >= 2:
        members = tuple(sorted(set_losses))
        out.append(
            _Candidate(
                (False, 3, 0),
                f"mean loss over {len(members)} eval sets",
                f"it is {CLASS_WORDS[3]}; {_NONE_ABOVE[3]}; {len(members)} eval sets each log a loss, so the headline "
                "is their mean",
                members,
            )
        )
    for name, cls in classed.items():
        fam = family(name)
        held = _held_out_rank(name, fam)
        fam_rank = next((i for i, (f, _) in enumerate(_FAMILIES) if f == fam), len(_FAMILIES))
        wide = 0 if _WIDE_IOU.search(name) else 1  # COCO's mAP50-95 before mAP50
        key = (
            name in stale,
            cls,
            1,
            2 if held is None else held,
            fam_rank,
            wide,
            _stat_rank(name),
            len(_tokens(name)),
            name,
        )
        out.append(_Candidate(key, name, _why(name, cls, fam, stale, classed)))
    return out


def _stale(digest: RunDigest, name: str, last: float) -> bool:
    """Logged only early in the run (an eval at step 0 only): not what the run ended with."""
    stat = digest.finals.get(name)
    return stat is not None and last > 0 and stat.last_step < 0.5 * last


def _why(name: str, cls: int, fam: str | None, stale: set[str], classed: dict[str, int]) -> str:
    shown = {"map": "mAP"}.get(fam or "", fam)
    parts = [f"it is {CLASS_WORDS[cls]}" + (f" ({shown})" if fam and cls in (2, 4) else "")]
    early = sorted(n for n, c in classed.items() if c < cls and n in stale)
    if name in stale:
        parts.append("it is logged only early in the run, and no outcome or loss is logged to the end")
    elif early:
        parts.append(f"{', '.join(early[:2])} {'is' if len(early) == 1 else 'are'} logged only early in the run")
    elif cls > 2:
        parts.append(_NONE_ABOVE[cls])
    siblings = [n for n in classed if _stat_rank(n) in (1, 2) and _same_base(n, name)]  # median, max, min
    if siblings and _stat_rank(name) == 0:
        parts.append(f"the mean, not {', '.join(sorted(siblings)[:3])}")
    return "; ".join(parts)


def _same_base(a: str, b: str) -> bool:
    """`Rewards/max_episodes` and `Rewards/mean_episodes`: the same quantity, another statistic."""
    stats = _SPREAD | _EXTREME | {"mean", "avg", "average", "median"}
    return a != b and [t for t in _tokens(a) if t not in stats] == [t for t in _tokens(b) if t not in stats]


def _eval_set_losses(names: list[str]) -> list[str]:
    """`eval_squad_loss`, `eval_nq_loss`, ...: one loss per eval set (not loss components such as `val/box_loss`)."""
    out = []
    for n in names:
        m = _SET_LOSS.match(n)
        if m and not set(_tokens(m.group("set"))) & (_COMPONENTS | _LOSS | {"mean", "avg"}):
            out.append(n)
    return out


def _eval_candidates(digest: RunDigest) -> list[_Candidate]:
    """Evaluation results (lm-eval): a suite's aggregate before its subtasks, tasks in file order."""
    groups = digest.provenance.get("groups")
    groups = groups if isinstance(groups, dict) else {}
    members = {str(m) for ms in groups.values() if isinstance(ms, list) for m in ms}
    out = []
    tasks = list(dict.fromkeys(name.split("/", 1)[0] for name in digest.evals))
    top = [t for t in tasks if t not in members]
    for i, name in enumerate(digest.evals):
        task, _, metric = name.partition("/")
        fam = family(metric)
        fam_rank = next((j for j, (f, _) in enumerate(_FAMILIES) if f == fam), len(_FAMILIES))
        if "stderr" in metric:
            continue
        if task in groups:
            rank, why = (
                0,
                f"it is the aggregate of the suite {task} ({len(groups[task])} subtasks), an evaluation result",
            )
        elif task in members:
            rank, why = 2, f"it is a subtask's evaluation result (no suite aggregate holds {metric})"
        else:
            rank = 1
            why = "it is an evaluation result" + (
                f" (the first of {len(top)} tasks in the file; every task is in the table)" if len(top) > 1 else ""
            )
        out.append(_Candidate((False, 2, 1, rank, tasks.index(task), fam_rank, _stat_rank(metric), i), name, why))
    return out


def _headline_for(
    digest: RunDigest, name: str, hib: Callable[[str], bool], window: int, checks: list[str]
) -> Headline | None:
    if digest.probe and name in checks:
        column = digest.probe.checks[name]
        n = int(np.count_nonzero(column >= 0))
        return Headline(
            name,
            int(np.count_nonzero(column == TRUE)) / n,
            "probe",
            f"{name} rate over {n} probe cases",
            hib(name),
            n=n,
        )
    end = digest.ends_nonfinite.get(name)
    if end is not None:  # the run ended diverged: say so, never average it away
        value, at = end
        return Headline(
            name,
            value,
            "series",
            f"last logged value of {name} (step {step_text(at)}) is {num(value)}: not a number to average",
            hib(name),
            n=1,
        )
    stat = digest.finals.get(name)
    if stat is not None:
        if stat.n > 1:
            what = f"mean of the last {stat.n} logged values"
        elif stat.points > 1:
            what = f"last logged value (logged {stat.points} times: too few for a mean of the last {window})"
        else:
            what = "last logged value"
        return Headline(
            name, stat.mean, "series", f"{what} of {name} (step {step_text(stat.last_step)})", hib(name), n=stat.n
        )
    if name in digest.summary:
        value = digest.summary[name]
        said = "" if math.isfinite(value) else f" is {num(value)}"
        return Headline(name, value, "summary", f"{name} from the run's final summary{said}", hib(name))
    if name in digest.evals:
        value, stderr = digest.evals[name]
        return Headline(name, value, "eval", f"{name} (evaluation result)", hib(name), stderr=stderr)
    return None


def _member_value(digest: RunDigest, name: str) -> float | None:
    if name in digest.finals:
        return digest.finals[name].mean
    value = digest.summary.get(name)
    return value if value is not None and math.isfinite(value) else None


def _aggregate(digest: RunDigest, cand: _Candidate, hib: Callable[[str], bool]) -> Headline | None:
    values = [v for n in cand.members if (v := _member_value(digest, n)) is not None]
    if len(values) != len(cand.members):
        return None
    shown = ", ".join(cand.members[:4]) + (f" (+{len(cand.members) - 4} more)" if len(cand.members) > 4 else "")
    return Headline(
        cand.name,
        float(np.mean(values)),
        "aggregate",
        f"mean of the final losses of {len(values)} eval sets ({shown})",
        hib(cand.members[0]),
        n=len(values),
        members=cand.members,
    )


def aggregate_delta(headline: Headline, here: RunDigest, base: RunDigest) -> HeadlineDelta:
    """An aggregate headline against the baseline's mean over the same members: described, never tested."""
    values = [_member_value(base, n) for n in headline.members]
    if headline.value is None or any(v is None for v in values):
        missing = [n for n, v in zip(headline.members, values, strict=True) if v is None]
        return HeadlineDelta(base.id, None, None, None, None, f"the baseline has no {', '.join(missing[:3])}")
    value_b = float(np.mean([v for v in values if v is not None]))
    return HeadlineDelta(
        base.id,
        value_b,
        headline.value - value_b,
        None,
        None,
        f"{ONE_RUN_EACH} (difference of the means over the same {len(values)} eval sets)",
        verdict=NOT_TESTED,
    )


# ------------------------------------------------------------------ the headline's own uncertainty


NORMAL_975 = 1.959963984540054  # scipy.stats.norm.ppf(0.975)


@dataclass(frozen=True)
class LevelInterval:
    """A 95% interval on the headline's own value (not on its change: that is the delta's), and the
    words that name how it was made, which the page shows beside it."""

    low: float
    high: float
    method: str
    level: float = 0.95
    stderr: float | None = None  # what the file reported, when the interval is made from it

    def as_dict(self) -> dict[str, float | str | None]:
        return {"low": self.low, "high": self.high, "level": self.level, "method": self.method, "stderr": self.stderr}


def level_interval(headline: Headline) -> LevelInterval | None:
    """The headline value's 95% interval when its source gives one honestly, else None:

    - a probe rate over n cases: the Wilson score interval (cases taken as independent trials; it
      stays inside [0, 1] and covers near 95% for small n or rates near 0 or 1, where value ± 1.96·se
      does not);
    - an evaluation result whose file reports a standard error (lm-eval's `acc_stderr`): value ±
      1.96 × that stderr (the normal approximation lm-eval's own stderr assumes), a rate cut at 0 and 1.

    A logged curve's final-window mean gets none: its points are neighbouring steps of one run, not
    independent draws, so a t interval over them would claim a precision the run does not have."""
    value = headline.value
    if value is None or not math.isfinite(value):
        return None
    if headline.kind == "probe" and headline.n:
        k = round(value * headline.n)
        ci = wilson_interval(k, headline.n)
        return LevelInterval(ci.low, ci.high, f"Wilson score, {headline.n} cases")
    se = headline.stderr
    if headline.kind == "eval" and se is not None and math.isfinite(se) and se > 0:
        low, high = value - NORMAL_975 * se, value + NORMAL_975 * se
        cut = headline.is_rate and (low < 0 or high > 1)
        if headline.is_rate:
            low, high = max(0.0, low), min(1.0, high)
        method = "± 1.96 × the file's stderr" + (", cut at 0 and 100%" if cut else "")
        return LevelInterval(low, high, method, stderr=se)
    return None
