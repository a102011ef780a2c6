"""Trade-off curves and μ-GDP from the PLD: values, brackets and times for DP-SGD.

For each T: the certified TPR bracket at FPR 10⁻³ (PLD), the RDP route's TPR bound there
(ratio printed), the certified μ (δ₀ = 1e-12) with its bracket, the CLT μ (an estimate, not a
bound) and √T/σ (the only μ that holds with δ₀ = 0). No peer library gives a certified
trade-off curve or μ, so there is no peer column.

Run:  python benchmarks/bench_curves.py
"""

from __future__ import annotations

import math
import time

from renyi import routes
from renyi.mechanisms import Gaussian
from renyi.pld import gdp_mu, tradeoff
from renyi.subsampling import PoissonSubsampled

Q, SIGMA = 0.01, 1.0


def main() -> None:
    print(f"DP-SGD q = {Q}, σ = {SIGMA}; TPR at FPR = 1e-3; μ-GDP with δ₀ = 1e-12")
    print("| T | TPR bracket (PLD) | time | RDP TPR (× PLD) | μ bracket (PLD) | time | CLT μ | √T/σ |")
    print("|---|---|---|---|---|---|---|---|")
    for steps in (10**3, 10**4, 10**5, 10**6):
        items = [(PoissonSubsampled(Gaussian(SIGMA), Q), steps)]
        t0 = time.perf_counter()
        t = tradeoff(items, [1e-3])
        t1 = time.perf_counter()
        g = gdp_mu(items)
        t2 = time.perf_counter()
        rdp = routes.tpr_bounds(items, (1e-3,), "rdp")[0].value
        clt = Q * math.sqrt(steps * math.expm1(1 / SIGMA**2))
        lo = f"{g.lower:.4f}" if g.lower is not None else "—"
        print(f"| {steps:.0e} | [{t.lower[0]:.5f}, {t.upper[0]:.5f}] | {t1 - t0:.2f} s | {rdp:.5f} "
              f"(×{rdp / t.upper[0]:.3f}) | [{lo}, {g.mu:.4f}] ({g.method}, δ₀ = {g.delta0:g}) | {t2 - t1:.2f} s | {clt:.4f} "
              f"| {math.sqrt(steps) / SIGMA:.1f} |")


if __name__ == "__main__":
    main()
