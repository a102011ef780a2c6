"""Power of renyi.audit with 10⁴ canaries, beside jax-privacy's auditor on the same scores.

Run:  PYTHONPATH=src python benchmarks/bench_audit.py [--canaries 10000] [--seeds 5]

Setting: the Gaussian mechanism with μ = Δ/σ, each canary included by an independent fair coin
(score ~ N(μ·included, 1)), δ = 1e-5, β = 0.05. Columns: the true ε (Balle–Wang), then each
method's lower bound as a fraction of it, averaged over the seeds, for renyi and (when
``jax-privacy`` is installed) for ``jax_privacy.auditing.CanaryScoreAuditor`` with its default
Bonferroni threshold strategy; wall time per call in milliseconds (best of the seeds).
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np

import renyi
from renyi.audit import METHODS, epsilon_lower_bound


def timed(fn: Callable[[], float]) -> tuple[float, float]:
    t0 = time.perf_counter()
    v = fn()
    return v, (time.perf_counter() - t0) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--canaries", type=int, default=10_000)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--delta", type=float, default=1e-5)
    args = ap.parse_args()
    try:
        from jax_privacy import auditing as jp
        import importlib.metadata as md

        jax_version = md.version("jax-privacy")
    except ImportError:
        jp, jax_version = None, None
    beta = 0.05
    print(f"{args.canaries} canaries, δ = {args.delta:g}, β = {beta}, mean over {args.seeds} seeds; "
          f"jax-privacy {jax_version or 'not installed'}")
    head = f"{'μ':>5} {'true ε':>8} | " + " ".join(f"{m:>10}" for m in METHODS)
    if jp is not None:
        head += " | " + " ".join(f"{'jax ' + m:>14}" for m in METHODS)
    print(head)
    times: dict[str, list[float]] = {}
    for mu in (0.5, 1.0, 2.0, 4.0):
        truth = renyi.Gaussian(1.0 / mu).epsilon(args.delta)
        ours: dict[str, list[float]] = {m: [] for m in METHODS}
        theirs: dict[str, list[float]] = {m: [] for m in METHODS}
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            inc = rng.random(args.canaries) < 0.5
            s = rng.standard_normal(args.canaries) + mu * inc
            for m in METHODS:
                v, ms = timed(lambda: epsilon_lower_bound(s, inc, delta=args.delta, method=m).epsilon)
                ours[m].append(v / truth)
                times.setdefault(f"renyi {m}", []).append(ms)
            if jp is not None:
                a: Any = jp.CanaryScoreAuditor(s[inc], s[~inc])
                calls = {"threshold": lambda: a.epsilon_clopper_pearson(beta, args.delta),
                         "one_run": lambda: a.epsilon_one_run(beta, args.delta),
                         "gdp": lambda: a.epsilon_from_gdp(beta, args.delta)}
                for m in METHODS:
                    v, ms = timed(calls[m])
                    theirs[m].append(float(v) / truth)
                    times.setdefault(f"jax {m}", []).append(ms)
        row = f"{mu:>5g} {truth:>8.3f} | " + " ".join(f"{np.mean(ours[m]):>10.3f}" for m in METHODS)
        if jp is not None:
            row += " | " + " ".join(f"{np.mean(theirs[m]):>14.3f}" for m in METHODS)
        print(row, flush=True)
    print("time per call (ms, best):", ", ".join(f"{k} {min(v):.0f}" for k, v in times.items()))


if __name__ == "__main__":
    main()
