"""Calibrate obs's statistics by simulation: does every 95% interval cover, does every verdict stay quiet?

    python bench/stats_calibration.py [--reps N] [--markdown]

Seeded (every setting draws from its own `numpy` stream), so two runs print the same table. It checks
the methods obs uses, through obs's own functions, at the sizes users have:

* paired probes (Tango score interval): n = 20, 32, 160, 1,500 cases, 3-10 % of the cases discordant,
  with the discordance balanced (no change), lopsided (half a discordance's worth of change) or all one
  way; beside it the paired percentile bootstrap obs used before, for comparison;
* seed campaigns (Welch t interval): 2v2, 3v3, 5v5, 8v8 seeds, normal, skewed (exponential) and
  unequal-variance noise; beside it the percentile bootstrap obs used before;
* Welch where it strains: unequal seed counts with the smaller side noisier, lognormal (skewed) seeds,
  beside Satterthwaite's df that obs used before for unequal counts;
* seeds as the unit of a recipe: two identical recipes (seed-to-seed sd 1.7 or 3.3 pp) at 160-1,500
  items, the checkpoint test (one seed each, paired items) against the seed-level Welch test (3 v 3);
* the minimum effect judged on the interval (a true +2 pp gain with min_effect 3 pp), small probes with
  the exact test below 25 discordant pairs, and the drop a passing regression rule reports it could have
  missed, simulated through the whole rule;
* pass@k over items (Wilson interval at the design-effect n) and two systems' pass@k on shared items
  (design-effect Tango interval);
* a ladder's repeated looks: ten no-change rungs tested against one frozen probe (unadjusted vs the ladder
  claim's Holm adjustment), the best of eight (its mean delta, its simultaneous interval's coverage of 0), and a
  ladder with one real +15 pp rung (found after Holm?);
* verdicts: the promotion rule on a 160-case probe of 3 splits x 5 families x 3 checks under no true
  change (false alarm = a suggested reject or repair) and under a true +15 pp gain (promoted?), and a
  family collapse (caught?), beside the previous rule; campaign recommendations under no true change
  and at 1.5 sd; a test over the logged points of one run (the method obs no longer uses) on two seeds
  of the same condition; and the planning advice (seeds and items for 80 % power) checked by
  simulating the test at the size it recommends.

Targets (issue 15): coverage >= 0.93 for every 95 % interval in these settings; promotion false alarm
<= 5 % under no change, and a +15 pp gain promoted >= 80 % of the time. A row that misses its target
is marked. This is a benchmark, not a test; tests/unit/test_calibration.py re-runs a few fixed-seed
cases of it.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from obs.analysis import stats as S
from obs.analysis.compare import Headline, compare_probes, headline_delta
from obs.analysis.digest import CaseOutcome, RunDigest
from obs.analysis.promotion import PromotionInput, suggest_verdict
from obs.config import SiteConfig

SEED = 20260415
LEVEL = 0.95
TARGET_COVERAGE = 0.93
TARGET_FALSE_ALARM = 0.05
TARGET_POWER = 0.80


def rng_for(*names: object) -> np.random.Generator:
    """One independent, reproducible stream per setting."""
    return np.random.default_rng([SEED, zlib.crc32("/".join(map(str, names)).encode())])


@dataclass
class Row:
    section: str
    setting: str
    method: str
    value: float
    target: str  # ">= 0.93", "<= 0.05", "" ...
    reps: int

    @property
    def ok(self) -> bool | None:
        if not self.target:
            return None
        op, bound = self.target.split()
        return self.value >= float(bound) - 1e-12 if op == ">=" else self.value <= float(bound) + 1e-12


# --------------------------------------------------------------------------- paired probes


def old_paired_bootstrap(
    b: int, c: int, n: int, rng: np.random.Generator, resamples: int = 2000
) -> tuple[float, float]:
    """The paired percentile bootstrap obs used before: resample the n items (multinomial cell counts)."""
    draws = rng.multinomial(n, [b / n, c / n, 1 - (b + c) / n], size=resamples)
    gaps = (draws[:, 0] - draws[:, 1]) / n
    lo, hi = np.percentile(gaps, [2.5, 97.5])
    return float(lo), float(hi)


def paired_probe_rows(reps: int) -> list[Row]:
    rows = []
    for n in (20, 32, 160, 1500):
        for psi in (0.03, 0.05, 0.10):
            tango_cov, old_cov, zero_width = [], [], []
            for r in (0.0, 0.5, 1.0):
                p12, p21 = psi * (1 + r) / 2, psi * (1 - r) / 2
                truth = p12 - p21
                rng = rng_for("paired", n, psi, r)
                cells = rng.multinomial(n, [p12, p21, 1 - psi], size=reps)
                lows, highs = S.tango_intervals(cells[:, 0], cells[:, 1], np.full(reps, n), LEVEL)
                tango_cov.append(float(np.mean((lows <= truth + 1e-12) & (truth - 1e-12 <= highs))))
                old = [old_paired_bootstrap(int(b), int(c), n, rng) for b, c in cells[: max(200, reps // 4), :2]]
                old_cov.append(float(np.mean([lo <= truth + 1e-12 <= hi + 2e-12 for lo, hi in old])))
                zero_width.append(float(np.mean([hi - lo < 1e-12 for lo, hi in old])))
            setting = f"n = {n}, {psi:.0%} discordant"
            rows.append(Row("paired probe", setting, "Tango score (obs)", min(tango_cov), ">= 0.93", reps))
            rows.append(
                Row("paired probe", setting, "percentile bootstrap (before)", min(old_cov), "", max(200, reps // 4))
            )
            rows.append(
                Row("paired probe", setting, "  zero-width share (before)", max(zero_width), "", max(200, reps // 4))
            )
    return rows


# --------------------------------------------------------------------------- seeds


def _noise(kind: str, rng: np.random.Generator, size: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    if kind == "skewed":
        return (rng.exponential(1.0, size) - 1.0) * scale  # sd 1, skewness 2
    return rng.normal(0.0, scale, size)


def old_two_sample_bootstrap(
    x: np.ndarray, y: np.ndarray, rng: np.random.Generator, resamples: int = 2000
) -> tuple[float, float]:
    bx = x[rng.integers(0, x.size, (resamples, x.size))].mean(axis=1)
    by = y[rng.integers(0, y.size, (resamples, y.size))].mean(axis=1)
    lo, hi = np.percentile(bx - by, [2.5, 97.5])
    return float(lo), float(hi)


def seed_rows(reps: int) -> list[Row]:
    rows = []
    for n in (2, 3, 5, 8):
        for kind, sd_ratio in (("normal", 1.0), ("skewed", 1.0), ("normal", 2.0), ("skewed", 2.0)):
            rng = rng_for("seeds", n, kind, sd_ratio)
            shift = 0.7
            x = 0.5 + shift + _noise(kind, rng, (reps, n), sd_ratio)
            y = 0.5 + _noise(kind, rng, (reps, n))
            cover = 0
            for i in range(reps):
                w = S.welch(x[i], y[i], level=LEVEL)
                assert w.interval is not None
                cover += w.interval.low <= shift <= w.interval.high
            old_reps = max(200, reps // 4)
            old = [old_two_sample_bootstrap(x[i], y[i], rng) for i in range(old_reps)]
            label = f"{n}v{n} seeds, {kind}" + (", sd ratio 2" if sd_ratio != 1 else "")
            rows.append(Row("seed campaign", label, "Welch t (obs)", cover / reps, ">= 0.93", reps))
            rows.append(
                Row(
                    "seed campaign",
                    label,
                    "percentile bootstrap (before)",
                    float(np.mean([lo <= shift <= hi for lo, hi in old])),
                    "",
                    old_reps,
                )
            )
    return rows


def _lognormal(rng: np.random.Generator, size: tuple[int, ...], scale: float, sigma: float = 1.0) -> np.ndarray:
    """Lognormal noise with mean 0 and sd `scale` (strongly right-skewed: skewness 6.2 at sigma 1)."""
    raw = rng.lognormal(0.0, sigma, size)
    mean, sd = math.exp(sigma**2 / 2), math.sqrt((math.exp(sigma**2) - 1) * math.exp(sigma**2))
    return (raw - mean) / sd * scale


# (n_x, n_y, sd_x / sd_y, noise): unbalanced seeds, the smaller side noisier, and skewed noise
WELCH_HARD = (
    (2, 5, 3.0, "normal"),
    (2, 5, 1.0, "normal"),
    (3, 8, 3.0, "normal"),
    (2, 8, 3.0, "normal"),
    (5, 2, 3.0, "normal"),
    (3, 3, 1.0, "lognormal"),
    (5, 5, 1.0, "lognormal"),
    (3, 5, 2.0, "lognormal"),
    (8, 8, 1.0, "lognormal"),
)


def _satterthwaite_covers(x: np.ndarray, y: np.ndarray, truth: float) -> bool:
    """The interval obs used before for unequal seed counts: Welch with Satterthwaite's df."""
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    df = (vx + vy) ** 2 / (vx**2 / (x.size - 1) + vy**2 / (y.size - 1))
    from scipy import special

    half = float(special.stdtrit(df, 0.975)) * math.sqrt(vx + vy)
    return bool(abs(x.mean() - y.mean() - truth) <= half)


def welch_hard_rows(reps: int) -> list[Row]:
    """Welch's coverage where it is known to strain: unequal n with the smaller group noisier, and skewed
    (lognormal) seeds; beside it Satterthwaite's df, which obs used before for unequal seed counts."""
    rows = []
    for nx, ny, ratio, kind in WELCH_HARD:
        rng = rng_for("welch-hard", nx, ny, ratio, kind)
        shift = 0.7
        if kind == "lognormal":
            x = shift + _lognormal(rng, (reps, nx), ratio)
            y = _lognormal(rng, (reps, ny), 1.0)
        else:
            x = shift + rng.normal(0.0, ratio, (reps, nx))
            y = rng.normal(0.0, 1.0, (reps, ny))
        cover = before = 0
        for i in range(reps):
            w = S.welch(x[i], y[i], level=LEVEL)
            assert w.interval is not None
            cover += w.interval.low <= shift <= w.interval.high
            before += _satterthwaite_covers(x[i], y[i], shift)
        label = f"{nx}v{ny} seeds, {kind}" + (f", sd ratio {ratio:g} (the {nx}-seed side)" if ratio != 1 else "")
        method = "Welch t (obs)" if nx == ny else "Welch t, df = min(n) − 1 (obs)"
        rows.append(Row("seed campaign", label, method, cover / reps, ">= 0.93", reps))
        if nx != ny:
            rows.append(Row("seed campaign", label, "Welch t, Satterthwaite df (before)", before / reps, "", reps))
    return rows


# --------------------------------------------------------------------------- seeds as the unit of a recipe


def _recipe_seed(rng: np.random.Generator, difficulty: np.ndarray, seed_sd: float) -> np.ndarray:
    """One seed of a recipe on shared items: item difficulty shared, a seed-level shift of the accuracy."""
    p = np.clip(difficulty + rng.normal(0.0, seed_sd), 0.0, 1.0)
    return rng.random(difficulty.size) < p


def recipe_rows(reps: int) -> list[Row]:
    """Two *identical* recipes, 3 seeds each, on shared items (difficulty ~ Beta(3, 2), mean 0.6; each seed
    shifts its accuracy by N(0, seed sd)). The checkpoint comparison (one seed each, paired over items)
    against the seed-level Welch test over the 3 v 3 seeds' accuracies: how often each calls the same
    recipe "significantly" different."""
    rows = []
    reps = max(200, reps // 2)
    for items in (160, 500, 1500):
        for seed_sd in (0.017, 0.033):
            rng = rng_for("recipe", items, seed_sd)
            checkpoint = seed_level = 0
            for _ in range(reps):
                difficulty = rng.beta(3.0, 2.0, items)
                a = [_recipe_seed(rng, difficulty, seed_sd) for _ in range(3)]
                b = [_recipe_seed(rng, difficulty, seed_sd) for _ in range(3)]
                (pc,) = S.paired_comparisons([(a[0], b[0])])
                checkpoint += pc.recommendation != S.INSUFFICIENT
                w = S.welch([float(s.mean()) for s in a], [float(s.mean()) for s in b])
                seed_level += w.p_value is not None and w.p_value < 0.05
            setting = f"identical recipes, {items} items, seed sd {100 * seed_sd:.1f} pp"
            rows.append(
                Row(
                    "recipe",
                    setting,
                    "checkpoint test (1 v 1 seed, paired items): 'significant'",
                    checkpoint / reps,
                    "",
                    reps,
                )
            )
            rows.append(
                Row(
                    "recipe",
                    setting,
                    "seed-level Welch (3 v 3 seeds, obs): 'significant'",
                    seed_level / reps,
                    "<= 0.05",
                    reps,
                )
            )
    return rows


# --------------------------------------------------------------------------- min_effect, tiny samples, what was missed


def min_effect_rows(reps: int) -> list[Row]:
    """A paired probe of 1,500 cases, 10 % discordant, min_effect 3 pp: how often a true gain is called
    "at least the minimum effect" by the interval rule (obs) and by the point estimate (before)."""
    rows = []
    n, psi, min_effect = 1500, 0.10, 0.03
    for gain in (0.0, 0.02, 0.03, 0.05):
        rng = rng_for("min-effect", gain)
        cells = rng.multinomial(n, [(psi + gain) / 2, (psi - gain) / 2, 1 - psi], size=reps)
        counts = [(n, 0, int(b), int(c)) for b, c in cells[:, :2]]
        results = S.paired_from_counts(counts, min_effect=min_effect)
        obs_rate = float(np.mean([r.recommendation == S.IMPROVEMENT for r in results]))
        before = float(np.mean([r.p_value < 0.05 and r.interval.low > 0 and r.delta >= min_effect for r in results]))
        setting = f"1,500 cases, 10% discordant, true gain {100 * gain:g} pp, min_effect 3 pp"
        target = "<= 0.05" if gain < min_effect else ""
        rows.append(Row("min_effect", setting, "'at least the minimum effect' (obs: CI bound)", obs_rate, target, reps))
        rows.append(Row("min_effect", setting, "'at least the minimum effect' (before: estimate)", before, "", reps))
    return rows


def tiny_rows(reps: int) -> list[Row]:
    """Probes with few discordant cases and no true change: how often the paired comparison says
    "significant" with the exact test below 25 discordant pairs (obs) and with the score test alone."""
    rows = []
    for n, psi in ((20, 0.2), (32, 0.15), (160, 0.05), (160, 0.10)):
        rng = rng_for("tiny", n, psi)
        cells = rng.multinomial(n, [psi / 2, psi / 2, 1 - psi], size=reps)
        results = S.paired_from_counts([(n, 0, int(b), int(c)) for b, c in cells[:, :2]])
        ours = float(np.mean([r.p_value < 0.05 for r in results]))
        score = float(np.mean(S.score_tests(cells[:, 0], cells[:, 1], np.full(reps, n)) < 0.05))
        cover = float(np.mean([r.interval.low <= 0.0 <= r.interval.high for r in results]))
        setting = f"{n} cases, {psi:.0%} discordant, no true change"
        rows.append(
            Row("small samples", setting, "'significant' (obs: exact below 25 discordant)", ours, "<= 0.05", reps)
        )
        rows.append(Row("small samples", setting, "'significant' (score test alone, before)", score, "", reps))
        rows.append(Row("small samples", setting, "interval covers 0 (obs)", cover, ">= 0.93", reps))
    return rows


def _candidate_of(
    base: dict[str, CaseOutcome], rng: np.random.Generator, psi: float, lane_drop: float
) -> dict[str, CaseOutcome]:
    """A candidate run on the baseline's cases: every check churns a share `psi` both ways (n·psi/2 cases
    each way), and family "lane" loses `lane_drop` of its exact rate on top."""
    by_family: dict[str, list[str]] = {}
    for cid, o in base.items():
        by_family.setdefault(o.family or "", []).append(cid)
    here = {}
    for cid, o in base.items():
        checks = {}
        members = by_family[o.family or ""]
        for check, before in o.checks.items():
            n = len(members)
            k = sum(1 for m in members if base[m].checks[check])
            fix = min(1.0, n * psi / 2 / (n - k)) if n > k else 0.0
            drop = lane_drop if (check == "exact" and o.family == "lane") else 0.0
            brk = min(1.0, (n * psi / 2 + n * drop) / k) if k else 0.0
            checks[check] = (not (rng.random() < brk)) if before else bool(rng.random() < fix)
        here[cid] = CaseOutcome(checks, o.split, o.family)
    return here


def missed_rows(reps: int) -> list[Row]:
    """The drop a passing regression rule reports it could have missed (80 % power), checked through the
    whole rule: for each simulated baseline (the promotion probe: 160 cases, 5 families of 32, 3 checks),
    obs's reported drop for family "lane" at that baseline's size, then a candidate whose lane loses
    exactly that much: how often the rule (every cell, Holm) flags lane."""
    from obs.analysis.detectable import detectable_drop
    from obs.analysis.promotion import regression_tests

    rows = []
    reps = max(200, reps // 4)
    tol = CFG.threshold("regression_tolerance")
    neg = CFG.is_negative_check
    for psi in (0.03, 0.05, 0.10):
        rng = rng_for("missed", psi)
        caught = reported = 0
        drops = []
        while reported < reps:
            _, base = simulate_probe_pair(rng, psi)
            quiet = _candidate_of(base, rng, psi, 0.0)
            _, _, m = regression_tests(
                PromotionInput(None, compare_probes(quiet, base, "base", neg, primary="exact"), "exact", CFG.threshold)
            )
            k = sum(1 for o in base.values() if o.family == "lane" and o.checks["exact"])
            drop = detectable_drop(32, k, psi, tol, 0.05 / max(1, m))
            if drop is None:
                continue
            reported += 1
            drops.append(drop)
            _, fams = promotion_suggestion(_candidate_of(base, rng, psi, drop), base)
            caught += "lane" in fams
        setting = (
            f"160 cases, {psi:.0%} churn: lane (32 cases) drops by the drop obs reports for it "
            f"({100 * min(drops):.0f}-{100 * max(drops):.0f} pp)"
        )
        rows.append(Row("what was missed", setting, "flagged by the promotion rule", caught / reps, ">= 0.78", reps))
    return rows


# --------------------------------------------------------------------------- pass@k


def _beta_pass_at_k(a: float, b: float, k: int) -> float:
    """E[1 - (1 - theta)^k] for theta ~ Beta(a, b): 1 - B(a, b + k) / B(a, b)."""
    return 1.0 - math.exp(math.lgamma(b + k) + math.lgamma(a + b) - math.lgamma(b) - math.lgamma(a + b + k))


def _item_pass_at_k(n: int, c: np.ndarray, k: int) -> np.ndarray:
    """Per-item pass@k through obs's estimator (a table over the n + 1 possible counts)."""
    table = np.array([S.pass_at_k(n, ci, k) for ci in range(n + 1)])
    return table[np.asarray(c, dtype=int)]


def passk_rows(reps: int) -> list[Row]:
    rows = []
    reps = max(200, reps // 2)
    for items in (20, 164):
        for m in (4, 10):
            for a, b in ((0.8, 1.2), (0.3, 0.3)):
                for k in sorted({1, m}):
                    rng = rng_for("passk", items, m, a, b, k)
                    truth = _beta_pass_at_k(a, b, k)
                    cover = 0
                    for _ in range(reps):
                        theta = rng.beta(a, b, items)
                        c = rng.binomial(m, theta)
                        iv = S.mean_interval_01(_item_pass_at_k(m, c, k), LEVEL, max_samples=m)
                        cover += iv.low <= truth <= iv.high
                    setting = f"{items} items x {m} samples, Beta({a:g}, {b:g}), pass@{k}"
                    rows.append(
                        Row("pass@k", setting, "Wilson at design-effect n (obs)", cover / reps, ">= 0.93", reps)
                    )
            # two systems on shared items: B's difficulty, A a logit shift of it plus item noise
            for shift in (0.0, 0.5):
                rng = rng_for("passk-paired", items, m, shift)
                big = rng.beta(0.8, 1.2, 400_000)
                big_a = 1 / (1 + np.exp(-(np.log(big / (1 - big)) + shift + rng.normal(0, 0.3, big.size))))
                for k in sorted({1, m}):
                    truth = float(np.mean((1 - (1 - big_a) ** k) - (1 - (1 - big) ** k)))
                    cover = 0
                    for _ in range(reps):
                        tb = rng.beta(0.8, 1.2, items)
                        ta = 1 / (1 + np.exp(-(np.log(tb / (1 - tb)) + shift + rng.normal(0, 0.3, items))))
                        va = _item_pass_at_k(m, rng.binomial(m, ta), k)
                        vb = _item_pass_at_k(m, rng.binomial(m, tb), k)
                        res = S.paired_means(va, vb, level=LEVEL, max_samples=m)
                        cover += res.interval.low <= truth <= res.interval.high
                    setting = f"{items} items x {m} samples, A vs B, logit shift {shift:g}, pass@{k}"
                    rows.append(
                        Row("pass@k paired", setting, "design-effect Tango (obs)", cover / reps, ">= 0.93", reps)
                    )
    return rows


# --------------------------------------------------------------------------- the promotion rule

FAMILIES = ("cards", "lane", "poster", "table", "tree")
FAMILY_EXACT = (0.45, 0.55, 0.6, 0.7, 0.8)
SPLITS = ("train", "dev", "test")
CFG = SiteConfig()


def simulate_probe_pair(
    rng: np.random.Generator, psi: float, gain: float = 0.0, collapse: float = 0.0, n: int = 160
) -> tuple[dict[str, CaseOutcome], dict[str, CaseOutcome]]:
    """A baseline and a candidate probe on the same 160 cases (5 families of 32, 3 splits, 3 checks).

    Each check flips a share `psi` of the cases, balanced so the expected rate does not change; `gain`
    adds that much to every family's exact rate; `collapse` removes that much from family "lane".
    """
    base: dict[str, CaseOutcome] = {}
    here: dict[str, CaseOutcome] = {}
    for i in range(n):
        fam = i % len(FAMILIES)
        family, split = FAMILIES[fam], SPLITS[(i // len(FAMILIES)) % len(SPLITS)]
        rates = {"exact": FAMILY_EXACT[fam], "renderable": 0.85, "truncated": 0.06}
        b_checks, h_checks = {}, {}
        for check, p in rates.items():
            before = bool(rng.random() < p)
            down, up = min(1.0, psi / (2 * p)), min(1.0, psi / (2 * (1 - p)))
            if check == "exact":
                up = min(1.0, up + gain / (1 - p))
                if family == "lane":
                    down = min(1.0, down + collapse / p)
            after = (not (rng.random() < down)) if before else bool(rng.random() < up)
            b_checks[check], h_checks[check] = before, after
        base[f"c{i:03d}"] = CaseOutcome(b_checks, split, family)
        here[f"c{i:03d}"] = CaseOutcome(h_checks, split, family)
    return here, base


def promotion_suggestion(here: dict[str, CaseOutcome], base: dict[str, CaseOutcome]) -> tuple[str | None, list[str]]:
    """The suggested verdict exactly as a run page computes it (no held-constant or repair inputs)."""
    neg = CFG.is_negative_check
    comparison = compare_probes(here, base, "base", neg, primary="exact")
    rate = sum(o.checks["exact"] for o in here.values()) / len(here)
    headline = Headline("exact", rate, "probe", "exact rate", n=len(here))
    delta = headline_delta(headline, RunDigest("run", probe=here), RunDigest("base", probe=base), neg, 0.05, comparison)
    s = suggest_verdict(PromotionInput(delta, comparison, "exact", CFG.threshold, headline_is_rate=True, alpha=0.05))
    return s.verdict, [r.label for r in s.regressions if r.check == "exact" and r.scope == "family"]


def previous_rule(here: dict[str, CaseOutcome], base: dict[str, CaseOutcome]) -> str:
    """The rule obs used before: point-estimate tolerance on the headline per split/family, and any
    other check 'significantly worse' (exact McNemar, uncorrected) in any scope."""
    neg = CFG.is_negative_check
    comparison = compare_probes(here, base, "base", neg)
    head = comparison.overall.checks["exact"]
    p_head = _exact_mcnemar(head.only_a, head.only_b)
    better = p_head < 0.05 and head.delta > 0
    worse = p_head < 0.05 and head.delta < 0
    regs = 0
    for scope in [comparison.overall, *comparison.by_split, *comparison.by_family]:
        for check, pc in scope.checks.items():
            worse_by = pc.delta if check in comparison.negative else -pc.delta
            beyond_tolerance = check == "exact" and scope.scope != "all" and worse_by > 0.02
            significantly_worse = check != "exact" and worse_by > 0 and _exact_mcnemar(pc.only_a, pc.only_b) < 0.05
            regs += beyond_tolerance or significantly_worse
    if better:
        return "repair" if regs else "promote"
    if worse or regs:
        return "reject"
    return "branch"


def _exact_mcnemar(b: int, c: int) -> float:
    m = b + c
    if m == 0 or b == c:
        return 1.0
    return min(1.0, 2.0 * sum(math.comb(m, i) for i in range(min(b, c) + 1)) / 2**m)


def promotion_rows(reps: int) -> list[Row]:
    rows = []
    reps = max(200, reps // 4)
    for psi in (0.03, 0.05, 0.10):
        for name, gain, collapse in (
            ("no true change", 0.0, 0.0),
            ("+15 pp exact", 0.15, 0.0),
            ("family collapse", 0.0, 0.4),
        ):
            rng = rng_for("promotion", psi, name)
            verdicts, old, caught = [], [], 0
            for _ in range(reps):
                here, base = simulate_probe_pair(rng, psi, gain, collapse)
                verdict, fams = promotion_suggestion(here, base)
                verdicts.append(verdict)
                caught += "lane" in fams
                old.append(previous_rule(here, base))
            setting = f"160 cases, {psi:.0%} discordant, {name}"
            alarm = np.mean([v in ("reject", "repair") for v in verdicts])
            old_alarm = np.mean([v in ("reject", "repair") for v in old])
            if gain == 0 and collapse == 0:
                rows.append(
                    Row("promotion", setting, "false alarm: reject or repair (obs)", float(alarm), "<= 0.05", reps)
                )
                rows.append(Row("promotion", setting, "false alarm (previous rule)", float(old_alarm), "", reps))
                rows.append(
                    Row(
                        "promotion",
                        setting,
                        "false promote (obs)",
                        float(np.mean([v == "promote" for v in verdicts])),
                        "",
                        reps,
                    )
                )
            elif gain:
                rows.append(
                    Row(
                        "promotion",
                        setting,
                        "promoted (obs)",
                        float(np.mean([v == "promote" for v in verdicts])),
                        ">= 0.80",
                        reps,
                    )
                )
                rows.append(
                    Row(
                        "promotion",
                        setting,
                        "promoted (previous rule)",
                        float(np.mean([v == "promote" for v in old])),
                        "",
                        reps,
                    )
                )
            else:
                rows.append(Row("promotion", setting, "collapsed family flagged (obs)", caught / reps, "", reps))
                rows.append(
                    Row(
                        "promotion",
                        setting,
                        "not promoted (obs)",
                        float(np.mean([v != "promote" for v in verdicts])),
                        "",
                        reps,
                    )
                )
    return rows


# --------------------------------------------------------------------------- campaigns and series


def campaign_rows(reps: int) -> list[Row]:
    rows = []
    for n in (3, 5, 8):
        for kind in ("normal", "skewed"):
            for effect in (0.0, 1.5):
                rng = rng_for("campaign", n, kind, effect)
                significant = 0
                family_wise = 0
                detected = 0
                for _ in range(reps):
                    base = _noise(kind, rng, (n,))
                    cands = [_noise(kind, rng, (n,)) + (effect if j == 0 else 0.0) for j in range(2)]
                    tests = [S.welch(c, base) for c in cands]
                    adj = S.holm_adjust([t.p_value if t.p_value is not None else math.nan for t in tests])
                    recs = [
                        S.recommendation(a, t.estimate, t.interval, 0.05) if t.interval is not None else S.INSUFFICIENT
                        for a, t in zip(adj, tests, strict=True)
                    ]
                    significant += recs[1] != S.INSUFFICIENT
                    family_wise += any(r != S.INSUFFICIENT for r in recs[1:] + ([recs[0]] if effect == 0 else []))
                    detected += recs[0] == S.IMPROVEMENT
                setting = f"{n}v{n} seeds, {kind}, 2 candidates (Holm)"
                if effect == 0:
                    rows.append(
                        Row(
                            "campaign",
                            setting + ", no true change",
                            "candidate called significant",
                            significant / reps,
                            "<= 0.05",
                            reps,
                        )
                    )
                    rows.append(
                        Row(
                            "campaign",
                            setting + ", no true change",
                            "any candidate (family-wise)",
                            family_wise / reps,
                            "<= 0.05",
                            reps,
                        )
                    )
                else:
                    rows.append(
                        Row("campaign", setting + ", +1.5 sd", "improvement detected", detected / reps, "", reps)
                    )
    return rows


def series_rows(reps: int) -> list[Row]:
    """Two seeds of the same condition, 300 logged steps each: a saturating trend, AR(1) noise (lag-1
    about 0.4) and a seed-level offset. The test obs no longer runs: Welch over the last 10 points."""
    rng = rng_for("series")
    steps = np.arange(300)
    hits = 0
    for _ in range(reps):
        vals = []
        for _seed in range(2):
            level = 0.55 + rng.normal(0, 0.015)  # seed-to-seed variation of the final level
            rate = rng.normal(1 / 80, 1 / 800)
            e = np.zeros(steps.size)
            for t in range(1, steps.size):
                e[t] = 0.4 * e[t - 1] + rng.normal(0, 0.01)
            vals.append((level * (1 - np.exp(-rate * steps)) + e)[-10:])
        a, b = vals
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        t = (a.mean() - b.mean()) / math.sqrt(va + vb)
        df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
        from scipy import stats as sps

        hits += 2 * sps.t.sf(abs(t), df) < 0.05
    setting = "one run vs one run of the same condition (last 10 logged points)"
    return [
        Row("series", setting, "Welch over logged points (before): 'significant'", hits / reps, "", reps),
        Row("series", setting, "obs: described, not tested: 'significant'", 0.0, "<= 0.05", reps),
    ]


def planning_rows(reps: int) -> list[Row]:
    rows = []
    # seeds: 2 candidates, Holm level alpha / 2, at the true d (the planning advice's input)
    for d in (1.0, 1.5, 2.0):
        n = S.sample_size_for_power(d, alpha=0.025, power=0.8)
        assert n is not None
        rng = rng_for("plan-seeds", d)
        hits = 0
        for _ in range(reps):
            w = S.welch(rng.normal(d, 1, n), rng.normal(0, 1, n))
            hits += w.p_value is not None and w.p_value < 0.025
        rows.append(
            Row(
                "planning",
                f"seeds for d = {d:g} at Holm α = 0.025: {n} per condition",
                "simulated power",
                hits / reps,
                ">= 0.78",
                reps,
            )
        )
    # items: the paired (Connor) formula, checked with the score test it plans for
    for psi, delta in ((0.2, 0.06), (0.1, 0.04), (0.3, 0.05)):
        n = S.paired_items_needed(psi, delta)
        assert n is not None
        rng = rng_for("plan-items", psi, delta)
        cells = rng.multinomial(n, [(psi + delta) / 2, (psi - delta) / 2, 1 - psi], size=reps)
        p = S.score_tests(cells[:, 0], cells[:, 1], np.full(reps, n))
        rows.append(
            Row(
                "planning",
                f"items for a {delta:.0%} gap at {psi:.0%} discordance: {n} (paired)",
                "simulated power",
                float(np.mean(p < 0.05)),
                ">= 0.78",
                reps,
            )
        )
    return rows


# --------------------------------------------------------------------------- a ladder's repeated looks


def simulate_ladder(
    rng: np.random.Generator, rungs: int, n: int = 160, gain_rung: int | None = None, gain: float = 0.0
) -> list[tuple[int, int, int]]:
    """A frozen baseline and `rungs` rungs on the same `n` frozen-probe cases, each rung tested against the frozen
    baseline: (n, right only in the rung, right only in the frozen baseline) per rung.

    Cases differ in difficulty (each case's chance of being right is drawn from Beta(1.4, 0.6), mean 0.70), and
    every run, the frozen baseline included, is a fresh draw at that chance: no rung changes anything, except
    `gain_rung`, which also gets right a share of the cases it got wrong (`gain` of all cases on average). The
    rungs share the frozen baseline's outcomes, so their tests are dependent, as on a real ladder."""
    q = rng.beta(1.4, 0.6, size=n)
    frozen = rng.random(n) < q
    out = []
    for k in range(rungs):
        here = rng.random(n) < q
        if k == gain_rung:
            here |= rng.random(n) < gain / 0.3
        out.append((n, int(np.count_nonzero(here & ~frozen)), int(np.count_nonzero(~here & frozen))))
    return out


def ladder_looks(reps: int, rungs: int, gain: float = 0.0, seed_name: str = "ladder") -> dict[str, float]:
    """Over `reps` simulated ladders: how often some rung reads "significant improvement" unadjusted (each
    rung's own test against the frozen baseline), how often the ladder claim does (`analysis.ladder.claim_of`:
    Holm over the rungs, the best rung's simultaneous interval), the best rung's mean delta, how often its
    simultaneous interval covers its true change, and (with a gain) how often the gaining rung is found."""
    from obs.analysis.ladder import RungTest, claim_of

    rng = rng_for(seed_name, rungs, gain)
    gain_rung = rungs // 2 if gain else None
    raw = adjusted = covered = found = 0
    best = []
    for _ in range(reps):
        counts = simulate_ladder(rng, rungs, gain_rung=gain_rung, gain=gain)
        tests = S.paired_from_counts([(n, 0, b, c) for n, b, c in counts])
        raw += any(t.recommendation == S.IMPROVEMENT for t in tests)
        claim = claim_of(
            [RungTest(f"r{k}", t.delta, t.p_value, (t.only_a, t.only_b), t.n) for k, t in enumerate(tests)], "r0"
        )
        assert claim is not None
        false_claim = [r for r in claim.rungs if r.significant and r.run != f"r{gain_rung}"]
        adjusted += bool(false_claim) or (claim.verdict == S.IMPROVEMENT and claim.best != f"r{gain_rung}")
        found += gain_rung is not None and f"r{gain_rung}" in claim.significant
        truth = gain if claim.best == f"r{gain_rung}" else 0.0
        best.append(claim.best_delta)
        lo, hi = claim.best_low, claim.best_high
        covered += lo is not None and hi is not None and lo - 1e-12 <= truth <= hi + 1e-12
    return {
        "raw": raw / reps,
        "adjusted": adjusted / reps,
        "best_mean": float(np.mean(best)),
        "covered": covered / reps,
        "found": found / reps,
    }


SEED_SD = 0.04  # a seed's effect on every case's chance: seed 003's ladders see a few points between seeds


def ladder_recipe_looks(
    reps: int, recipes: int, seeds: int = 3, gain: float = 0.0, seed_name: str = "ladder-recipes"
) -> dict[str, float]:
    """Over `reps` simulated ladders of `recipes` recipes with `seeds` seed replicates each, and a frozen
    baseline recipe of as many seeds, all on one 160-case probe: how often the ladder claim says some recipe
    improved when none did (`claim_of`, one look per recipe: Welch's t over seeds, Holm over the recipes), how
    often treating every seed as its own rung (a paired test of each checkpoint, Holm over all of them) does,
    and how often the best recipe's simultaneous interval covers its true change. Each seed is its own draw of
    the recipe: case outcomes at the probe's per-case chances, shifted by a seed effect (sd `SEED_SD`)."""
    from obs.analysis.ladder import RungTest, claim_of

    rng = rng_for(seed_name, recipes, seeds, gain)
    n = 160
    gain_recipe = recipes // 2 if gain else None
    adjusted = per_seed = covered = 0
    for _ in range(reps):
        q = rng.beta(1.4, 0.6, size=n)

        def draw(shift: float, q: np.ndarray = q) -> np.ndarray:
            return rng.random(n) < np.clip(q + shift + rng.normal(0.0, SEED_SD), 0.0, 1.0)

        frozen = [draw(0.0) for _ in range(seeds)]
        fvals = tuple(float(f.mean()) for f in frozen)
        tests, checkpoints = [], []
        for r in range(recipes):
            runs = [draw(gain if r == gain_recipe else 0.0) for _ in range(seeds)]
            vals = tuple(float(x.mean()) for x in runs)
            w = S.welch(vals, fvals)
            if w.p_value is not None:
                tests.append(RungTest(f"r{r}", w.estimate, w.p_value, None, None, (vals, fvals)))
            counts = [(n, 0, int(np.sum(h & ~frozen[0])), int(np.sum(~h & frozen[0]))) for h in runs]
            for k, pc in enumerate(S.paired_from_counts(counts)):
                checkpoints.append(RungTest(f"r{r}s{k}", pc.delta, pc.p_value, (pc.only_a, pc.only_b), n))
        claim = claim_of(tests, "f")
        by_seed = claim_of(checkpoints, "f")
        wrong = f"r{gain_recipe}"
        if claim is not None:
            adjusted += any(r.significant and r.run != wrong for r in claim.rungs)
            truth = gain if claim.best == wrong else 0.0
            lo, hi = claim.best_low, claim.best_high
            covered += lo is not None and hi is not None and lo - 1e-12 <= truth <= hi + 1e-12
        if by_seed is not None:
            per_seed += any(r.significant and not r.run.startswith(wrong + "s") for r in by_seed.rungs)
    return {"adjusted": adjusted / reps, "per_seed": per_seed / reps, "covered": covered / reps}


def ladder_rows(reps: int) -> list[Row]:
    """Issue 27: ten no-change rungs judged against one frozen probe, and the best of eight."""
    reps = max(400, reps // 4)  # ten tests a ladder
    rows = []
    ten = ladder_looks(reps, 10)
    setting = "10 no-change rungs vs one frozen probe (160 cases)"
    rows.append(Row("ladder", setting, "any rung significant, unadjusted (before)", ten["raw"], "", reps))
    rows.append(Row("ladder", setting, "ladder claim: Holm over the rungs (obs)", ten["adjusted"], "<= 0.05", reps))
    eight = ladder_looks(reps, 8)
    setting = "best of 8 no-change rungs (truth 0)"
    rows.append(Row("ladder", setting, "best rung's mean delta (selection bias)", eight["best_mean"], "", reps))
    rows.append(Row("ladder", setting, "its simultaneous interval covers 0 (obs)", eight["covered"], ">= 0.95", reps))
    gain = ladder_looks(reps, 10, gain=0.15)
    setting = "10 rungs, one with a true +15 pp gain"
    rows.append(Row("ladder", setting, "the gaining rung found after Holm (obs)", gain["found"], "", reps))
    rows.append(Row("ladder", setting, "a no-change rung claimed (obs)", gain["adjusted"], "<= 0.05", reps))
    recipes = ladder_recipe_looks(reps, 10)
    setting = "10 no-change recipes x 3 seeds vs a frozen recipe of 3 seeds"
    rows.append(Row("ladder", setting, "every seed its own rung, Holm (before)", recipes["per_seed"], "", reps))
    rows.append(
        Row(
            "ladder", setting, "one look per recipe, Welch over seeds, Holm (obs)", recipes["adjusted"], "<= 0.05", reps
        )
    )
    rows.append(
        Row("ladder", setting, "the best recipe's simultaneous interval covers 0", recipes["covered"], ">= 0.95", reps)
    )
    return rows


SECTIONS: dict[str, Callable[[int], list[Row]]] = {
    "paired": paired_probe_rows,
    "seeds": seed_rows,
    "welch-hard": welch_hard_rows,
    "recipe": recipe_rows,
    "min-effect": min_effect_rows,
    "small": tiny_rows,
    "missed": missed_rows,
    "passk": passk_rows,
    "promotion": promotion_rows,
    "campaign": campaign_rows,
    "series": series_rows,
    "planning": planning_rows,
    "ladder": ladder_rows,
}


def markdown(rows: list[Row]) -> str:
    out = ["| what | setting | method | value | target | reps |", "|---|---|---|---:|---|---:|"]
    for r in rows:
        mark = "" if r.ok is None else (" ✓" if r.ok else " ✗ MISSED")
        out.append(
            f"| {r.section} | {r.setting} | {r.method.strip()} | {r.value:.3f} | {r.target}{mark} | {r.reps:,} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=4000, help="replicates per setting (default 4,000)")
    parser.add_argument("--only", choices=sorted(SECTIONS), action="append", help="run only these sections")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (for docs/statistics.md)")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for name, make in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        started = time.perf_counter()
        part = make(args.reps)
        rows += part
        print(f"# {name}: {len(part)} rows in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if args.markdown:
        print(markdown(rows))
    else:
        for r in rows:
            mark = "" if r.ok is None else ("ok" if r.ok else "MISSED")
            print(f"{r.section:14} {r.setting:62} {r.method:48} {r.value:7.3f}  {r.target:8} {mark}")
    missed = [r for r in rows if r.ok is False]
    print(f"# {len(rows)} rows, {len(missed)} missed their target", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
