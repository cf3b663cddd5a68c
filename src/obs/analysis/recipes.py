"""Seeds as the unit of a recipe: runs that differ only by seed, and a run judged against its baseline
at the seed level when both recipes have replicates.

A paired test over probe items judges one checkpoint against another: items are its only source of
variation. Two seeds of the *same* recipe differ by more than item noise (seed-to-seed sd of 1-3 pp in
accuracy is common), so at 1,500 items that test calls two seeds of one recipe "significantly
different" a quarter of the time or more (bench/stats_calibration.py). When the runs on both sides have
replicates - other runs identical but for the seed - the recipe is judged with one value per seed
(Welch's t-test and its dual interval, the campaign method), and the item-level test stays on the run
page as the checkpoint comparison.

Replicates: runs with the same spec, campaign, condition, arm, headline metric and every configuration
field (model, config, contract, data) but the seed - the declared `seed:` or a key named in obs.yaml's
`seed_keys` - and distinct seeds. Provenance (commit, host, dates) is not part of a recipe.

Pure: run summaries in, one `RecipeLevel` per run judged out.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from obs.sitemodel import RunSummary

if TYPE_CHECKING:
    from obs.analysis.stats import Interval
    from obs.config import SiteConfig
    from obs.model import Campaign, Spec

NOT_RECIPE = ("provenance.",)  # field prefixes that describe where a run ran, not what it is


def _is_seed_key(key: str, seed_keys: Sequence[str]) -> bool:
    """`config.training.seed` matches `training.seed`, `config.training.seed` or a bare `seed` leaf."""
    section_free = key.split(".", 1)[1] if "." in key else key
    return key in seed_keys or section_free in seed_keys or key.rsplit(".", 1)[-1] == "seed"


def seed_in(seed: Any, fields: Mapping[str, Any], seed_keys: Sequence[str]) -> Any:
    """A run's seed: the declared `seed:`, else the value of a seed key in its (flattened) fields (None: unknown)."""
    if seed is not None:
        return seed
    for key in sorted(fields):
        if _is_seed_key(key, seed_keys):
            return fields[key]
    return None


def seed_of(s: RunSummary, seed_keys: Sequence[str]) -> Any:
    """The run's seed: the declared `seed:`, else the value of a seed key in its fields (None: unknown)."""
    return seed_in(s.seed, s.fields, seed_keys)


def recipe_key(s: RunSummary, seed_keys: Sequence[str]) -> str:
    """What the run is, without its seed: equal keys are replicates of one recipe (a short stable hash)."""
    fields = {
        k: v for k, v in sorted(s.fields.items()) if not k.startswith(NOT_RECIPE) and not _is_seed_key(k, seed_keys)
    }
    ident = [s.spec, s.campaign, s.condition, s.arm, s.headline.metric, fields]
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _value(s: RunSummary) -> float | None:
    v = s.headline.value
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else None


def replicates(summaries: Sequence[RunSummary], seed_keys: Sequence[str]) -> dict[str, list[RunSummary]]:
    """recipe key -> its finished runs with a headline value, one per distinct seed (the first by id)."""
    out: dict[str, dict[Any, RunSummary]] = {}
    for s in sorted(summaries, key=lambda s: s.id):
        seed = seed_of(s, seed_keys)
        if seed is None or s.status != "finished" or _value(s) is None:
            continue
        out.setdefault(recipe_key(s, seed_keys), {}).setdefault(json.dumps(seed, default=str), s)
    return {k: list(v.values()) for k, v in out.items()}


@dataclass(frozen=True)
class RecipeLevel:
    """A run's recipe against its baseline's recipe, one value per seed (the headline of each run)."""

    key: str  # `recipe:<this>|<baseline>`: the same for every run of the recipe against the same recipe
    label: str
    href: str
    outcome: str  # a stats.Recommendation ("not_tested" without spread to test against)
    n: int
    n_baseline: int
    estimate: float
    low: float | None
    high: float | None
    p_value: float | None
    problem: str | None
    runs: tuple[str, ...]
    runs_baseline: tuple[str, ...]
    values: tuple[float, ...] = ()  # each run's headline value, in the order of `runs`
    values_baseline: tuple[float, ...] = ()
    pages: tuple[str, ...] = ()  # each run's page from the site root, in the order of `runs`
    pages_baseline: tuple[str, ...] = ()
    sd: float | None = None  # the seed-to-seed standard deviation of each side (None below two seeds)
    sd_baseline: float | None = None

    @property
    def ci(self) -> Interval | None:
        """The 95% t interval of the difference of the two recipes' means (None: not tested)."""
        from obs.analysis.stats import Interval

        return None if self.low is None or self.high is None else Interval(self.low, self.high, 0.95)

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values) if self.values else math.nan

    @property
    def mean_baseline(self) -> float:
        return sum(self.values_baseline) / len(self.values_baseline) if self.values_baseline else math.nan

    @property
    def members(self) -> list[tuple[str, float, str]]:
        """(run id, headline value, page from the site root) of this recipe's seeds."""
        return list(zip(self.runs, self.values, self.pages or ("",) * len(self.runs), strict=True))

    @property
    def members_baseline(self) -> list[tuple[str, float, str]]:
        return list(
            zip(
                self.runs_baseline,
                self.values_baseline,
                self.pages_baseline or ("",) * len(self.runs_baseline),
                strict=True,
            )
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "unit": "seeds (one headline value per run)",
            "method": "Welch's t-test over seeds and its dual 95% t interval",
            "outcome": self.outcome,
            "n": self.n,
            "n_baseline": self.n_baseline,
            "delta": self.estimate,
            "ci": None if self.low is None else {"low": self.low, "high": self.high, "level": 0.95},
            "p_value": self.p_value,
            "problem": self.problem,
            "runs": list(self.runs),
            "runs_baseline": list(self.runs_baseline),
            "values": list(self.values),
            "values_baseline": list(self.values_baseline),
            "sd": self.sd,
            "sd_baseline": self.sd_baseline,
        }


@dataclass(frozen=True)
class RecipePair:
    """What a run's recipe-level result is made of, before any statistic: the seeds of its recipe and of its
    baseline's, their headline values and pages, and the settings of the test. The build keys a run's page on
    this (`token`), so deciding what to rebuild needs no test (nor scipy); `judge` makes the result."""

    mine: str  # the recipe keys
    theirs: str
    runs: tuple[str, ...]
    values: tuple[float, ...]
    pages: tuple[str, ...]
    runs_baseline: tuple[str, ...]
    values_baseline: tuple[float, ...]
    pages_baseline: tuple[str, ...]
    alpha: float
    min_effect: float
    higher_is_better: bool
    href: str  # the judged run's recipe-level result on its page, from the site root

    def token(self) -> str:
        """A stable hash of everything the result and its page lines depend on."""
        return hashlib.sha256(json.dumps(self.__dict__, sort_keys=True, default=str).encode()).hexdigest()

    def judge(self) -> RecipeLevel:
        """Welch's t-test over seeds and its dual 95% interval, turned into an outcome at `alpha` with the minimum
        effect judged on the interval; seeds that are copies of one run give "not tested"."""
        from obs.analysis.stats import NOT_TESTED, recommendation, welch

        w = welch(self.values, self.values_baseline)
        outcome = (
            recommendation(w.p_value, w.estimate, w.interval, self.alpha, self.higher_is_better, self.min_effect)
            if w.interval is not None and w.p_value is not None
            else NOT_TESTED
        )
        return RecipeLevel(
            key=f"recipe:{self.mine}|{self.theirs}",
            label=f"this recipe's {len(self.runs)} seeds vs the baseline recipe's {len(self.runs_baseline)}",
            href=self.href,
            outcome=str(outcome),
            n=len(self.runs),
            n_baseline=len(self.runs_baseline),
            estimate=w.estimate,
            low=w.interval.low if w.interval else None,
            high=w.interval.high if w.interval else None,
            p_value=w.p_value,
            problem=w.problem,
            runs=self.runs,
            runs_baseline=self.runs_baseline,
            values=self.values,
            values_baseline=self.values_baseline,
            pages=self.pages,
            pages_baseline=self.pages_baseline,
            sd=None if math.isnan(w.sd_x) else w.sd_x,
            sd_baseline=None if math.isnan(w.sd_y) else w.sd_y,
        )


def recipe_pairs(
    summaries: Sequence[RunSummary],
    seed_keys: Sequence[str],
    *,
    alpha: float,
    min_effect: Callable[[RunSummary], float],
    higher_is_better: Mapping[str, bool],
    page_of: Callable[[RunSummary], str] | None = None,
    skip: frozenset[str] = frozenset(),
    groups: Mapping[str, list[RunSummary]] | None = None,
) -> dict[str, RecipePair]:
    """run id -> its recipe and its baseline's recipe, when both have at least two seeds; `recipe_levels` judges them.

    `skip`: runs whose seed group is already compared elsewhere (campaign conditions, ablation arms).
    `page_of`: a run's page from the site root (the leaderboard links the run page's recipe-level result).
    `min_effect`: the run's minimum effect of interest (its spec's, else obs.yaml's), as its own page uses.
    `groups`: `replicates(summaries, seed_keys)`, when the caller has it.

    Only replicates can be in a pair, on either side, so only they are indexed: a table of every run (its id,
    its page) was ~50 MB at 100,000 runs for a site with no seeds at all (issue 32).
    """
    from obs.analysis.stats import MIN_REPLICATES

    groups = replicates(summaries, seed_keys) if groups is None else groups
    key_of = {s.id: k for k, members in groups.items() for s in members}
    by_id = {s.id: s for members in groups.values() for s in members}
    out: dict[str, RecipePair] = {}
    for s in summaries:
        if s.id not in key_of or s.id in skip:
            continue
        base = by_id.get(s.baseline or "")
        if base is None:
            continue
        mine, theirs = key_of[s.id], key_of[base.id]
        if mine == theirs or base.headline.metric != s.headline.metric:
            continue
        a, b = groups[mine], groups[theirs]
        if len(a) < MIN_REPLICATES or len(b) < MIN_REPLICATES:
            continue
        out[s.id] = RecipePair(
            mine=mine,
            theirs=theirs,
            runs=tuple(r.id for r in a),
            values=tuple(_value(r) or 0.0 for r in a),
            pages=tuple(page_of(r) if page_of else "" for r in a),
            runs_baseline=tuple(r.id for r in b),
            values_baseline=tuple(_value(r) or 0.0 for r in b),
            pages_baseline=tuple(page_of(r) if page_of else "" for r in b),
            alpha=alpha,
            min_effect=float(min_effect(s)),
            higher_is_better=higher_is_better.get(s.headline.metric or "", True),
            href=f"{page_of(s)}#recipe-level" if page_of else "",
        )
    return out


def recipe_levels(pairs: Mapping[str, RecipePair]) -> dict[str, RecipeLevel]:
    """run id -> its recipe judged against its baseline's recipe (`recipe_pairs`, or `site_recipe_pairs`)."""
    return {run: pair.judge() for run, pair in pairs.items()}


def judged_elsewhere(s: RunSummary) -> bool:
    """A campaign condition or an ablation arm: its seed group is compared on the campaign or arms page
    (`analysis.report.seed_level_of` says where), not as a recipe against its baseline's recipe."""
    return bool((s.campaign and s.condition) or s.arm)


def site_recipe_pairs(
    summaries: Sequence[RunSummary],
    cfg: SiteConfig,
    specs: Mapping[str, Spec],
    campaigns: Mapping[str, Campaign],
    page_of: Callable[[RunSummary], str] | None = None,
) -> dict[str, RecipePair]:
    """Every run's recipe and baseline recipe (`RecipePair`, its result once judged), with the settings its own
    page uses (the spec's, else the campaign's, else obs.yaml's minimum effect; the campaign's alpha): the one
    computation the build hands each run page, the promotion rule, `obs gate`, `obs summary`, the leaderboard
    and index.json read.

    Not judged here: campaign conditions and ablation arms (compared on their own pages), and runs that are not
    one measurement with their baseline (no significance across two measurements)."""

    def min_effect(s: RunSummary) -> float:
        spec, campaign = specs.get(s.spec or ""), campaigns.get(s.campaign or "")
        for value in (spec.min_effect if spec else None, campaign.min_effect if campaign else None):
            if value is not None:
                return float(value)
        return float(cfg.min_effect)

    def alpha_of(s: RunSummary) -> float:
        campaign = campaigns.get(s.campaign or "")
        return campaign.alpha if campaign else 0.05

    groups = replicates(summaries, cfg.seed_keys)  # only replicates are paired: the rest is not looked at again
    candidates = [s for members in groups.values() for s in members]
    skip = frozenset(s.id for s in candidates if judged_elsewhere(s) or s.not_one_measurement)
    out: dict[str, RecipePair] = {}
    for alpha in sorted({alpha_of(s) for s in candidates}):
        at = frozenset(s.id for s in candidates if alpha_of(s) != alpha)
        out.update(
            recipe_pairs(
                summaries,
                cfg.seed_keys,
                alpha=alpha,
                min_effect=min_effect,
                higher_is_better={
                    m: cfg.metric_higher_is_better(m) for m in {s.headline.metric for s in candidates} if m
                },
                page_of=page_of,
                skip=skip | at,
                groups=groups,
            )
        )
    return out
