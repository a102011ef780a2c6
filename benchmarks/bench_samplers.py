"""Throughput of the exact discrete samplers (samples per second, one core).

Run:  PYTHONPATH=src python benchmarks/bench_samplers.py [--n 1000000] [--ref-n 2000]

Columns: the vectorized sampler with an explicit ``numpy.random.Generator`` (PCG64,
reproducible, not secure), the same with the secure default (``os.urandom``), and a naive
one-sample-at-a-time Python-int implementation written straight from CKS 2020 §5
(``renyi.samplers._reference_*``) driven by ``random.Random.randrange``.
"""

from __future__ import annotations

import argparse
import random
import time
from fractions import Fraction
from typing import Callable

import numpy as np

from renyi import samplers as S


def rate(fn: Callable[[], object], n: int, repeats: int = 3) -> float:
    """Best-of-``repeats`` samples per second."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return n / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="samples per vectorized call")
    ap.add_argument("--ref-n", type=int, default=2_000, help="samples for the naive reference")
    args = ap.parse_args()
    n, rn = args.n, args.ref_n

    rows = []
    for sigma in (1, 10, 1000, 10**6):
        s2 = sigma * sigma
        rows.append(("discrete Gaussian", f"sigma={sigma:g}", Fraction(s2),
                     lambda g, m, s2=s2: S.sample_discrete_gaussian(s2, size=m, rng=g),
                     lambda r, s2=s2: S._reference_discrete_gaussian(Fraction(s2), r.randrange)))
    s2f = 3.7**2  # a float σ²: exact conversion gives a 2^49 denominator
    rows.append(("discrete Gaussian", "sigma2=3.7**2 (float)", Fraction(s2f),
                 lambda g, m: S.sample_discrete_gaussian(s2f, size=m, rng=g),
                 lambda r: S._reference_discrete_gaussian(Fraction(s2f), r.randrange)))
    for scale in (1, 10, 1000, 10**6):
        rows.append(("discrete Laplace", f"scale={scale:g}", Fraction(scale),
                     lambda g, m, sc=scale: S.sample_discrete_laplace(sc, size=m, rng=g),
                     lambda r, sc=scale: S._reference_discrete_laplace(Fraction(sc), r.randrange)))

    head = f"{'sampler':<18} {'parameter':<22} {'numpy Generator':>16} {'secure (urandom)':>17} {'naive reference':>16} {'speed-up':>9}"
    print(f"n = {n:,} per vectorized call, {rn:,} for the reference; samples/s, best of 3\n")
    print(head)
    print("-" * len(head))
    for name, label, _, vec, ref in rows:
        r_np = rate(lambda: vec(np.random.default_rng(1), n), n)
        r_sec = rate(lambda: vec(None, n), n)
        rr = random.Random(1)
        r_ref = rate(lambda: [ref(rr) for _ in range(rn)], rn, repeats=1)
        print(f"{name:<18} {label:<22} {r_np:>16.3g} {r_sec:>17.3g} {r_ref:>16.3g} {r_np / r_ref:>8.0f}x")


if __name__ == "__main__":
    main()
