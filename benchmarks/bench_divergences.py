"""Benchmark of renyi.divergences: discrete distributions × many orders, closed forms, quadrature.

Run:  PYTHONPATH=src python benchmarks/bench_divergences.py

Prints a table of wall-clock times (best of ``REPEATS`` runs, one thread of numpy work). The
target from the design brief is 10⁶-point distributions × 100 orders in under 1 s on one core.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")

from renyi.divergences import (  # noqa: E402
    laplace_divergence,
    pure_dp_curve,
    renyi_divergence,
    renyi_divergence_continuous,
)

REPEATS = 3


def best_of(fn, repeats: int = REPEATS) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for n in (10**4, 10**5, 10**6):
        p = rng.random(n)
        p /= p.sum()
        q = rng.random(n)
        q /= q.sum()
        for m in (1, 10, 100):
            # orders spread over (1, 1024] plus α = 1 and α = ∞, i.e. every code path
            orders = np.concatenate([[1.0, math.inf], np.geomspace(1.001, 1024.0, max(m - 2, 0))])[:m]
            t = best_of(lambda: renyi_divergence(p, q, orders))
            rows.append((f"renyi_divergence n={n:>8,d}", m, t, t / (n * m) * 1e9))
    orders = np.geomspace(1.0001, 1e6, 10**6)
    t = best_of(lambda: pure_dp_curve(1.0, orders))
    rows.append(("pure_dp_curve eps=1", 10**6, t, t / 10**6 * 1e9))
    t = best_of(lambda: laplace_divergence(1.0, orders[:10**4]))
    rows.append(("laplace_divergence t=1", 10**4, t, t / 10**4 * 1e9))

    def gauss(m, s):
        c = -math.log(s) - 0.5 * math.log(2 * math.pi)
        return lambda x: -0.5 * ((x - m) / s) ** 2 + c

    few = [1.01, 1.5, 2.0, 8.0, 64.0, 1024.0]
    t = best_of(lambda: renyi_divergence_continuous(gauss(0, 1), gauss(1, 1), few), 1)
    rows.append(("continuous (quad) Gaussian", len(few), t, t / len(few) * 1e9))

    print(f"{'case':<32} {'orders':>9} {'seconds':>10} {'ns/(point·order)':>18}")
    print("-" * 72)
    for name, m, t, per in rows:
        print(f"{name:<32} {m:>9,d} {t:>10.4f} {per:>18.2f}")
    big = [r for r in rows if r[0].endswith("1,000,000") and r[1] == 100][0]
    verdict = "PASS" if big[2] < 1.0 else "FAIL"
    print(f"\ntarget: 10^6 points x 100 orders < 1 s: {big[2]:.3f} s  [{verdict}]")


if __name__ == "__main__":
    main()
