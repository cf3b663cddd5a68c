"""Coverage of the sweeps page's interval for Spearman's rho (Fisher's z, Bonett-Wright standard error), simulated.

    python bench/importance_coverage.py [--reps 2000]

Bivariate normal (the setting a continuous number, or cut into three equal thirds as a grid of three
values), population Spearman from 400,000 draws, 95% intervals at 5-40 runs. Why the page gives no interval
below `obs.analysis.importance.CI_MIN_RUNS` runs: docs/statistics.md has the table. A measurement; asserts nothing.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

from obs.analysis.coupling import spearman, spearman_interval


def coverage(rng: np.random.Generator, n: int, rho: float, grid: bool, reps: int) -> tuple[float, float]:
    def draw(m: int) -> tuple[np.ndarray, np.ndarray]:
        z = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=m)
        x = np.digitize(z[:, 0], [-0.43, 0.43]).astype(float) if grid else z[:, 0]
        return x, z[:, 1]

    big_x, big_y = draw(400_000)
    population = float(stats.spearmanr(big_x, big_y).statistic)
    hit = total = 0
    for _ in range(reps):
        x, y = draw(n)
        r = spearman(list(x), list(y))
        ci = spearman_interval(r, n) if r is not None else None
        if ci is None:
            continue
        total += 1
        hit += ci[0] <= population <= ci[1]
    return population, hit / max(1, total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(5)
    for grid in (False, True):
        for rho in (0.0, 0.5, 0.8):
            for n in (5, 6, 7, 8, 9, 10, 12, 20, 40):
                population, cover = coverage(rng, n, rho, grid, args.reps)
                kind = "grid of 3" if grid else "continuous"
                print(f"{kind}  rho {rho}  Spearman {population:.3f}  n {n:>2}  coverage {cover:.3f}")


if __name__ == "__main__":
    main()
