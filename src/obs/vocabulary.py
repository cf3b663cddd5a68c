"""What a logged name means: the one alias table every reader and analysis consults.

Real logs name the same thing many ways: `reward_std`, `std_reward`, `reward/std`; a curriculum
column `stage`, `phase`, `training_phase`, `curriculum_stage`; a loss `loss`, `cv_mse`, `val_wer`.
Guessing differently in different modules produced false sentences ("only the reward mean is
logged" beside a `std_reward`), so the table lives here, once, and docs/adapters.md prints it.
Names are compared by their tokens (split on `_ / . -` and spaces, lower case), so `mae` matches
`val_mae` but not `gmaes`. obs.yaml `metrics: {name: {better: lower}}` overrides the direction of
any one metric (obs.config).
"""

from __future__ import annotations

import functools
import re

# --- tokens -------------------------------------------------------------------------------------

_SPLIT = re.compile(r"[\s_/.\-]+")


@functools.lru_cache(maxsize=8192)
def tokens(name: str) -> tuple[str, ...]:
    """`eval/val_MSE` -> ('eval', 'val', 'mse')."""
    return tuple(t for t in _SPLIT.split(name.lower()) if t)


# --- direction: lower is better ------------------------------------------------------------------

# A metric whose name holds one of these tokens is lower-is-better unless obs.yaml says otherwise.
LOWER_IS_BETTER_TOKENS: frozenset[str] = frozenset(
    {
        "loss",
        "nll",
        "mse",
        "mae",
        "rmse",
        "msle",
        "mape",
        "wer",
        "cer",
        "ter",
        "perplexity",
        "ppl",
        "error",
        "errors",
        "err",
        "bpb",
        "bpc",
        "regret",
        "latency",
        "distance",
    }
)
# ... and these multi-token phrases (checked on the joined tokens)
LOWER_IS_BETTER_PHRASES: tuple[str, ...] = ("bits per", "error rate")


@functools.lru_cache(maxsize=8192)
def lower_is_better(name: str) -> bool:
    """The default direction of a metric from its name: `cv_mse`, `eval_loss`, `val_wer` are lower-is-better."""
    toks = tokens(name)
    if any(t in LOWER_IS_BETTER_TOKENS for t in toks):
        return True
    joined = " ".join(toks)
    return any(p in joined for p in LOWER_IS_BETTER_PHRASES)


# --- names that are not outcomes -------------------------------------------------------------------

# A record's identifiers and axes: never a metric to compare conditions on (a t-test of `seed` across
# conditions is a test of how the seeds were numbered).
IDENTIFIER_NAMES: frozenset[str] = frozenset(
    {"seed", "condition", "run", "run_id", "id", "arm", "group", "step", "global_step", "epoch", "timestamp"}
)
# Tokens that make a name a yes/no question (`loss_is_placeholder`, `backend_reports_sync_loss`).
FLAG_TOKENS: frozenset[str] = frozenset({"is", "has", "reports", "uses", "flag", "enabled", "disabled"})


@functools.lru_cache(maxsize=4096)
def names_an_identifier(name: str) -> bool:
    """`seed`, `condition`, `run_id`, `train/seed`, `sample_id`: an identifier or axis of the records, never an
    outcome."""
    toks = tokens(name)
    return bool(toks) and (
        name.lower() in IDENTIFIER_NAMES or "_".join(toks) in IDENTIFIER_NAMES or toks[-1] in ("id", "seed")
    )


@functools.lru_cache(maxsize=4096)
def names_a_flag(name: str) -> bool:
    """A name that asks a yes/no question: `loss_is_placeholder`, `backend_reports_sync_loss`, `has_nan`."""
    return any(t in FLAG_TOKENS for t in tokens(name))


# --- stage labels ---------------------------------------------------------------------------------

STAGE_TOKENS: frozenset[str] = frozenset({"stage", "phase", "curriculum"})


@functools.lru_cache(maxsize=4096)
def is_stage_key(name: str) -> bool:
    """A column whose text values label curriculum stages: `stage`, `phase`, `training_phase`, `curriculum`, ...

    Only text values are stage labels; a number in such a column is still a series.
    """
    return any(t in STAGE_TOKENS for t in tokens(name))


# --- durations and wall-clock times ------------------------------------------------------------------

# `H:MM:SS` text is read as a duration only under a name that says it is one: a wall-clock `time`
# column ("14:23:05") looks the same and is not a duration.
DURATION_TOKENS: frozenset[str] = frozenset(
    {"elapsed", "remaining", "duration", "runtime", "eta", "took", "spent", "left", "uptime", "walltime"}
)
WALL_CLOCK_TOKENS: frozenset[str] = frozenset({"time", "timestamp", "clock", "datetime", "date", "now", "wallclock"})


@functools.lru_cache(maxsize=4096)
def names_a_duration(name: str) -> bool:
    """`elapsed_time`, `remaining_time`, `train_runtime`, `eta`: yes. `time`, `timestamp`, `date`: no."""
    toks = set(tokens(name))
    return bool(toks & DURATION_TOKENS)


# --- mean / std pairs ---------------------------------------------------------------------------------

STAT_WORDS: dict[str, str] = {
    "mean": "mean",
    "avg": "mean",
    "average": "mean",
    "std": "std",
    "stdev": "std",
    "stddev": "std",
    "sd": "std",
    "min": "min",
    "max": "max",
}
_SUFFIX = re.compile(r"^(?P<base>.+?)(?P<sep>[_/.\-])(?P<stat>mean|avg|average|std|stdev|stddev|sd|min|max)$", re.I)
_PREFIX = re.compile(r"^(?P<stat>mean|avg|average|std|stdev|stddev|min|max)(?P<sep>[_/])(?P<base>.+)$", re.I)


@functools.lru_cache(maxsize=8192)
def split_stat(name: str) -> tuple[str, str] | None:
    """(base, stat) for a name that is a statistic of another: `reward_std`, `std_reward`, `reward/mean`,
    `mean/reward`, `loss_avg` -> ('reward', 'std'), ... ; None for a plain name.

    The prefix form is read on the last path segment only (`train/std_reward` -> ('train/reward', 'std')).
    """
    m = _SUFFIX.match(name)
    if m is not None:
        return m.group("base"), STAT_WORDS[m.group("stat").lower()]
    head, slash, last = name.rpartition("/")
    m = _PREFIX.match(last)
    if m is not None and m.group("base"):
        return f"{head}{slash}{m.group('base')}", STAT_WORDS[m.group("stat").lower()]
    if head:  # `mean/reward` written as a path
        first, _, rest = name.partition("/")
        if first.lower() in STAT_WORDS and rest:
            return rest, STAT_WORDS[first.lower()]
    return None


def stat_groups(names: set[str] | frozenset[str]) -> dict[str, dict[str, str]]:
    """base -> {stat: logged name} for every name that is a statistic of a base."""
    out: dict[str, dict[str, str]] = {}
    for name in sorted(names):
        split = split_stat(name)
        if split is not None:
            base, stat = split
            out.setdefault(base, {}).setdefault(stat, name)
    return out


def alias_table() -> list[tuple[str, str, str]]:
    """(what, names, meaning) rows for docs/adapters.md (the docs' table is checked against it)."""
    return [
        (
            "lower is better",
            ", ".join(f"`{t}`" for t in sorted(LOWER_IS_BETTER_TOKENS))
            + ", "
            + ", ".join(f"`{p}`" for p in LOWER_IS_BETTER_PHRASES),
            "a metric whose name holds one of these words (as a token: `cv_mse`, `val/wer`) is lower-is-better",
        ),
        (
            "stage labels",
            ", ".join(f"`{t}`" for t in sorted(STAGE_TOKENS)),
            "a text column whose name holds one of these words (`stage`, `training_phase`, `curriculum_stage`) "
            "labels curriculum stages",
        ),
        (
            "durations",
            ", ".join(f"`{t}`" for t in sorted(DURATION_TOKENS)),
            "`H:MM:SS` text under such a name is read as seconds; other `H:MM:SS` text (a wall-clock `time`) "
            "stays text",
        ),
        (
            "statistics of a series",
            ", ".join(f"`{w}`" for w in STAT_WORDS),
            "`x_mean`, `x/mean`, `mean_x`, `mean/x` (and `std`, `min`, `max` alike) are the statistics of `x`: "
            "drawn as one band, read by the reward-health panel",
        ),
    ]


def markdown_table() -> str:
    """The alias table as docs/adapters.md prints it (tests/unit/test_vocabulary.py checks the docs hold it)."""
    rows = ["| what | names | meaning |", "|---|---|---|"]
    rows += [f"| {what} | {names} | {meaning} |" for what, names, meaning in alias_table()]
    return "\n".join(rows) + "\n"
