"""Parameter importance on the sweeps page: how strongly each setting goes with the outcome across runs.

W&B fits a random forest to the runs (settings in, the metric out) and shows its feature importances.
obs does not: scikit-learn is not a dependency (1.9.1 with joblib and threadpoolctl: 54 MB installed;
importing `sklearn.ensemble` and `sklearn.inspection`, which import scipy, took 6-10 s on a shared 2-core
machine at load 15, for one table on a page a one-run rebuild makes), and at the sizes a sweep has here
(5-60 runs) a forest's importances move with its random seed, favour keys with many distinct values
and come with no statement of how sure they are. Instead each key gets a rank statistic that needs no
model, with its uncertainty and a test that holds its level at any n:

- **a number** (lr, batch size): Spearman's ρ between the key and the outcome over the runs that have
  both, with a 95% interval from Fisher's z and Bonett-Wright's standard error
  (`obs.analysis.coupling.spearman_interval`), from `CI_MIN_RUNS` runs on (below, it covered less
  than 95% with a strong association: 86% at 5 runs, 93.8% at 8, simulated). Its **share** is ρ²:
  the part of the outcome's rank variance a straight line on the key's ranks accounts for.
- **a category** (a dataset name, a boolean, a list): the correlation ratio of the outcome's ranks
  between the key's values, η² = H / (n − 1) with H Kruskal-Wallis's statistic (ties corrected):
  the part of the outcome's rank variance the groups account for. No interval (none with a stated
  coverage at these sizes); its p says whether it exceeds what shuffling gives (η² grows with the
  number of groups even when nothing goes on).

The p of each key is a **permutation test** (the outcome shuffled over the runs; every ordering when
n! ≤ `EXACT_UP_TO`, else `RESAMPLES` random ones from a fixed seed, p = (1 + hits) / (1 + B)),
two-sided for ρ, and the keys of one sweep are one Holm family. The unit is the run and n is said.
What this reads is an **association across these runs, not an effect**: keys that were varied together
share it, and a key that was never varied on its own cannot be told from the one it moved with.
Below `MIN_RUNS` runs with both values: no figure at all, "unknown" and why.

numpy only: the sweeps page is made on a one-run rebuild, which imports no scipy (a test checks it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from obs.analysis.coupling import LEVEL, ranks, spearman, spearman_interval
from obs.analysis.stats import holm_adjust
from obs.numbers import plural
from obs.sitemodel import RunSummary

MIN_RUNS = 5  # with fewer, an exact permutation p cannot reach 0.05 (4 runs: at best 2/24)
CI_MIN_RUNS = 10  # the interval's coverage at rho 0.8, simulated (bench/importance_coverage.py): 0.86 at 5 runs,
# 0.938 at 8, 0.946 at 9, 0.952 at 10 (4,000 samples each)
EXACT_UP_TO = 40_320  # 8!: every ordering of up to 8 runs
RESAMPLES = 9_999
CHUNK = 2_000_000  # floats a block of shuffled outcomes may hold
SEED = 20_261_127
ALPHA = 0.05


@dataclass(frozen=True)
class KeyImportance:
    """One setting against the outcome over `n` runs; `why` says why there is no figure."""

    key: str
    kind: str  # numeric | categorical
    n: int
    groups: int  # distinct values of the key among those runs
    rho: float | None = None  # numeric keys
    ci: tuple[float, float] | None = None
    share: float | None = None  # rho² or eta² of ranks: 0..1
    p: float | None = None
    p_holm: float | None = None
    exact: bool = False
    resamples: int = 0
    also: tuple[str, ...] = ()  # keys that group the runs exactly alike (indistinguishable from this one)
    why: str = ""

    @property
    def known(self) -> bool:
        return self.share is not None

    @property
    def significant(self) -> bool:
        return self.p_holm is not None and self.p_holm < ALPHA

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "n": self.n,
            "unit": "run",
            "groups": self.groups,
            "rho": self.rho,
            "ci": list(self.ci) if self.ci else None,
            "level": LEVEL,
            "share": self.share,
            "p": self.p,
            "p_holm": self.p_holm,
            "permutations": "exact" if self.exact else self.resamples,
            "same_grouping_as": list(self.also),
            "why_unknown": self.why or None,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KeyImportance:
        """The inverse of `as_dict` (JSON keeps every float exactly)."""
        ci = d["ci"]
        exact = d["permutations"] == "exact"
        return cls(
            d["key"],
            d["kind"],
            d["n"],
            d["groups"],
            d["rho"],
            (float(ci[0]), float(ci[1])) if ci else None,
            d["share"],
            d["p"],
            d["p_holm"],
            exact,
            0 if exact else int(d["permutations"]),
            tuple(d["same_grouping_as"]),
            d["why_unknown"] or "",
        )


@dataclass(frozen=True)
class Importance:
    """Every varying setting of one sweep against its outcome, strongest share first, unknown ones last."""

    outcome: str
    higher_is_better: bool
    n_runs: int
    keys: list[KeyImportance]

    @property
    def known(self) -> list[KeyImportance]:
        return [k for k in self.keys if k.known]

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "n_runs": self.n_runs,
            "method": "Spearman rho (numbers) or eta² of ranks (categories); permutation p, Holm over the keys",
            "keys": [k.as_dict() for k in self.keys],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], higher_is_better: bool) -> Importance:
        """The inverse of `as_dict` (which leaves out the outcome's direction: the sweep has it)."""
        return cls(d["outcome"], higher_is_better, d["n_runs"], [KeyImportance.from_dict(k) for k in d["keys"]])


def _number(v: Any) -> float | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    return float(v) if ok else None


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, list | tuple | dict) else str(v)


def resamples_for(n: int) -> int:
    """Random orderings for n runs: `RESAMPLES`, fewer past 2,000 runs (about 2e7 values shuffled a key)."""
    return 0 if math.factorial(min(n, 13)) <= EXACT_UP_TO else max(999, min(RESAMPLES, 20_000_000 // n))


def _blocks(y: np.ndarray, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """`y` in other orders, a block of rows at a time: every ordering (the identity among them) when
    n! <= `EXACT_UP_TO`, else `resamples_for(n)` random ones."""
    n = y.size
    block = max(1, CHUNK // n)
    b = resamples_for(n)
    if b == 0:
        import itertools

        every = itertools.permutations(range(n))
        while chunk := list(itertools.islice(every, block)):
            yield y[np.array(chunk, dtype=np.intp)]
        return
    for i in range(0, b, block):
        yield rng.permuted(np.broadcast_to(y, (min(block, b - i), n)), axis=1)


def _p_value(stat: Callable[[np.ndarray], np.ndarray], y: np.ndarray, rng: np.random.Generator) -> float:
    """Share of orderings of `y` whose statistic reaches the observed one (larger = stronger): exact over
    every ordering, or (1 + hits) / (1 + B) over B random ones (the observed ordering counted once)."""
    observed = float(stat(y[None, :])[0])
    tol = 1e-12 * max(1.0, abs(observed))
    hits = seen = 0
    for rows in _blocks(y, rng):
        hits += int((stat(rows) >= observed - tol).sum())
        seen += len(rows)
    return hits / seen if resamples_for(y.size) == 0 else (1 + hits) / (1 + seen)


def _numeric(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """|rho| of the rank vectors, and its permutation p (the outcome's ranks shuffled)."""
    rx = ranks(x)
    rx = rx - rx.mean()
    ry = ranks(y)
    sx = math.sqrt(float(rx @ rx))
    cy = ry - ry.mean()
    sy = math.sqrt(float(cy @ cy))

    def stat(rows: np.ndarray) -> np.ndarray:
        return np.asarray(np.abs((rows - rows.mean(axis=1, keepdims=True)) @ rx) / (sx * sy))

    rho = spearman(x.tolist(), y.tolist())
    p = _p_value(stat, ry, rng)
    return float(rho or 0.0), p


def eta_squared(labels: Sequence[str], y: np.ndarray) -> float:
    """η² of the outcome's ranks between the groups: H / (n − 1), H Kruskal-Wallis's (ties corrected)."""
    ry = ranks(y)
    codes = _codes(labels)
    return float(_between(ry, codes)[0] / _total(ry))


def _codes(labels: Sequence[str]) -> np.ndarray:
    order = {v: i for i, v in enumerate(sorted(set(labels)))}
    return np.array([order[v] for v in labels], dtype=np.intp)


def _between(rows: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Between-group sum of squares of each row (rows: shuffled outcome ranks)."""
    rows = np.atleast_2d(rows)
    k = int(codes.max()) + 1
    onehot = np.zeros((codes.size, k))
    onehot[np.arange(codes.size), codes] = 1.0
    sizes = onehot.sum(axis=0)
    sums = rows @ onehot
    mean = rows.mean(axis=1)
    return np.asarray((sums * sums / sizes).sum(axis=1) - codes.size * mean * mean)


def _total(ry: np.ndarray) -> float:
    c = ry - ry.mean()
    return float(c @ c)


def _categorical(labels: list[str], y: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    codes = _codes(labels)
    ry = ranks(y)
    total = _total(ry)
    p = _p_value(lambda rows: _between(rows, codes) / total, ry, rng)
    return float(_between(ry, codes)[0] / total), p


def key_importance(
    key: str, values: Sequence[Any], outcome: Sequence[float | None], also: Sequence[str] = ()
) -> KeyImportance:
    """One key against the outcome over the runs that have both (None = absent)."""
    pairs = [(v, y) for v, y in zip(values, outcome, strict=True) if v is not None and y is not None]
    n = len(pairs)
    nums = [_number(v) for v, _ in pairs]
    numeric = n > 0 and all(x is not None for x in nums)
    kind = "numeric" if numeric else "categorical"
    labels = [_text(v) for v, _ in pairs]
    groups = len(set(labels))
    base = KeyImportance(key, kind, n, groups, also=tuple(also))
    y = np.array([yv for _, yv in pairs], dtype=np.float64)
    if n < MIN_RUNS:
        return _why(base, f"{plural(n, 'run')} with both values: it needs {MIN_RUNS}")
    if groups < 2:
        return _why(base, "the same value in every run that has the outcome")
    if float(y.max()) == float(y.min()):
        return _why(base, "the outcome is the same in every run")
    if not numeric and groups == n:
        return _why(base, "a different value in every run: nothing to group")
    # the seed depends on the key only, so the page is the same from build to build
    rng = np.random.default_rng([SEED, *key.encode()])
    resamples = resamples_for(n)
    exact = resamples == 0
    if numeric:
        x = np.array(nums, dtype=np.float64)
        rho, p = _numeric(x, y, rng)
        ci = spearman_interval(rho, n) if n >= CI_MIN_RUNS else None
        return KeyImportance(key, kind, n, groups, rho, ci, rho * rho, p, None, exact, resamples, tuple(also))
    share, p = _categorical(labels, y, rng)
    return KeyImportance(key, kind, n, groups, None, None, share, p, None, exact, resamples, tuple(also))


def _why(k: KeyImportance, why: str) -> KeyImportance:
    return KeyImportance(k.key, k.kind, k.n, k.groups, also=k.also, why=why)


def importance(
    runs: Sequence[RunSummary],
    keys: Sequence[tuple[str, Sequence[str]]],
    outcome: str,
    higher_is_better: bool,
    value: Callable[[RunSummary, str], Any],
) -> Importance:
    """Each key (with the keys folded into it) against `outcome` over `runs`; Holm over the keys with a p."""
    y = [_number(value(r, outcome)) for r in runs]
    found = [key_importance(k, [value(r, k) for r in runs], y, also) for k, also in keys]
    tested = [i for i, k in enumerate(found) if k.p is not None]
    adjusted = holm_adjust([found[i].p or 0.0 for i in tested])
    for i, adj in zip(tested, adjusted, strict=True):
        k = found[i]
        found[i] = KeyImportance(
            k.key, k.kind, k.n, k.groups, k.rho, k.ci, k.share, k.p, float(adj), k.exact, k.resamples, k.also
        )
    found.sort(key=lambda k: (not k.known, -(k.share or 0.0), k.key))
    return Importance(outcome, higher_is_better, sum(v is not None for v in y), found)
