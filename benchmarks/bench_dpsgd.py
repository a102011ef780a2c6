"""DP-SGD accounting benchmark: renyi versus dp-accounting and opacus (peers optional).

Run:  python benchmarks/bench_dpsgd.py          (PYTHONPATH=src if renyi is not installed)

Tasks
  1. ε for q = 0.01, σ = 1.0, 10⁴ steps, δ = 1e-5, from a fresh object:
     renyi ``PoissonSubsampled(Gaussian(1.0), 0.01).compose(10_000).epsilon(1e-5)`` versus
     dp-accounting ``RdpAccountant()`` (default orders) composed with a PoissonSampledDpEvent.
  2. Calibrate σ for (ε = 3, δ = 1e-5, q = 0.01, 10⁴ steps): renyi ``dpsgd_sigma`` versus
     opacus ``get_noise_multiplier(..., accountant="rdp")``.
  3. A sweep of 1000 DP-SGD configurations (``dpsgd_epsilon_many``) versus dp-accounting on the
     same sweep (timed on a subsample of 50 and scaled, it is slow).

Each time is the best of several repeats (the machine may be shared). Lower ε / σ is tighter;
renyi's numbers must never exceed the peers' (both are valid upper bounds, renyi's curve is
exact at fractional orders where dp-accounting sums |terms|).
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from renyi import _subsampled_gaussian as sg
from renyi.mechanisms import Gaussian
from renyi.subsampling import PoissonSubsampled

logging.getLogger("absl").setLevel(logging.ERROR)


def best_time(fn: Callable[[], Any], repeat: int = 5, number: int = 1) -> tuple[float, Any]:
    """Best-of-``repeat`` wall time per call, and the last result."""
    best = math.inf
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            out = fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best, out


def dp_accounting_eps(q: float, sigma: float, steps: int, delta: float) -> float:
    import dp_accounting
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    return acc.get_epsilon(delta)


def main() -> None:
    rows: list[tuple[str, str, str, float, float | None]] = []

    # 1. epsilon from a fresh object
    def ours_eps() -> float:
        return PoissonSubsampled(Gaussian(1.0), 0.01).compose(10_000).epsilon(1e-5)

    t_r, e_r = best_time(ours_eps, repeat=7, number=5)
    try:
        t_p, e_p = best_time(lambda: dp_accounting_eps(0.01, 1.0, 10_000, 1e-5), repeat=5)
        assert e_r <= e_p, (e_r, e_p)
        rows.append(("ε (q=.01, σ=1, T=1e4, δ=1e-5) vs dp-accounting", f"{e_r:.6f}", f"{e_p:.6f}", t_r, t_p))
    except ImportError:
        rows.append(("ε (q=.01, σ=1, T=1e4, δ=1e-5)", f"{e_r:.6f}", "n/a", t_r, None))

    # 2. sigma calibration
    t_r, s_r = best_time(lambda: sg.dpsgd_sigma(0.01, 10_000, 3.0, 1e-5), repeat=5, number=3)
    assert sg.dpsgd_epsilon(0.01, s_r, 10_000, 1e-5)[0] <= 3.0
    try:
        from opacus.accountants.utils import get_noise_multiplier

        def theirs() -> float:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return get_noise_multiplier(
                    target_epsilon=3, target_delta=1e-5, sample_rate=0.01, steps=10_000, accountant="rdp"
                )

        t_p, s_p = best_time(theirs, repeat=3)
        assert s_r <= s_p, (s_r, s_p)
        rows.append(("σ for ε=3 (δ=1e-5, q=.01, T=1e4) vs opacus", f"{s_r:.6f}", f"{s_p:.6f}", t_r, t_p))
    except ImportError:
        rows.append(("σ for ε=3 (δ=1e-5, q=.01, T=1e4)", f"{s_r:.6f}", "n/a", t_r, None))

    # 3. a sweep of 1000 configurations
    rng = np.random.default_rng(0)
    n = 1000
    qs = 10 ** rng.uniform(-3, -1, n)
    sigmas = rng.uniform(0.6, 3.0, n)
    steps = rng.integers(100, 100_000, n)
    t_r, (eps, _) = best_time(lambda: sg.dpsgd_epsilon_many(qs, sigmas, steps, 1e-5), repeat=3)
    try:
        sub = rng.choice(n, 50, replace=False)
        t0 = time.perf_counter()
        theirs = [dp_accounting_eps(qs[i], sigmas[i], int(steps[i]), 1e-5) for i in sub]
        t_p = (time.perf_counter() - t0) * n / sub.size
        worst = max(eps[i] - e for i, e in zip(sub, theirs))
        assert worst <= 1e-9, worst
        rows.append((f"sweep of {n} configs (max ε diff {worst:+.1e})", f"{eps.mean():.4f} (mean ε)",
                     f"{np.mean(theirs):.4f} (mean ε, 50)", t_r, t_p))
    except ImportError:
        rows.append((f"sweep of {n} configs", f"{eps.mean():.4f} (mean ε)", "n/a", t_r, None))

    header = ("task", "renyi value", "peer value", "renyi time", "peer time", "speed ratio")
    table = [
        (task, rv, pv, f"{tr * 1e3:.2f} ms", "n/a" if tp is None else f"{tp * 1e3:.1f} ms",
         "n/a" if tp is None else f"{tp / tr:.0f}×")
        for task, rv, pv, tr, tp in rows
    ]
    widths = [max(len(str(r[i])) for r in [header, *table]) for i in range(len(header))]
    line = " | ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line)
    print("-+-".join("-" * w for w in widths))
    for r in table:
        print(" | ".join(str(c).ljust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
