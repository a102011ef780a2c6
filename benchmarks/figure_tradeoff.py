"""Figure for docs/pld.md: the membership-test trade-off curve of DP-SGD (the README's
example: q = 256/60000, σ = 1.1, 14 063 steps) — the PLD's certified upper bound, the tightest
μ-GDP statement, the RDP-implied bound and the random-guess diagonal, on linear and log axes.
It also prints the numbers the figure rests on.

Run:  python benchmarks/figure_tradeoff.py docs/img/pld-tradeoff.png
"""

from __future__ import annotations

import math
import sys
import time

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from renyi import plots, routes  # noqa: E402
from renyi.mechanisms import Gaussian  # noqa: E402
from renyi.pld import gdp_mu, tradeoff  # noqa: E402
from renyi.subsampling import PoissonSubsampled  # noqa: E402

Q, SIGMA, STEPS = 256 / 60000, 1.1, 14063


def main(path: str) -> None:
    items = [(PoissonSubsampled(Gaussian(SIGMA), Q), STEPS)]
    t0 = time.perf_counter()
    g = gdp_mu(items)
    t1 = time.perf_counter()
    t = tradeoff(items, [1e-3, 1e-2, 0.1])
    t2 = time.perf_counter()
    rdp = routes.tpr_bounds(items, (1e-3, 1e-2, 0.1), "rdp")
    print(f"DP-SGD q = {Q:.5g}, σ = {SIGMA}, T = {STEPS}")
    print(f"μ-GDP: μ ≤ {g.mu:.5f} (bracket [{g.lower:.5f}, {g.mu:.5f}], δ₀ = {g.delta0:g}; {t1 - t0:.2f} s); "
          f"composition of the Gaussians' GDP: √T/σ = {math.sqrt(STEPS) / SIGMA:.2f}; "
          f"CLT estimate (not a bound): {Q * math.sqrt(STEPS * math.expm1(1 / SIGMA**2)):.5f}")
    print(f"trade-off ({t2 - t1:.2f} s):")
    print("| FPR | PLD TPR bracket | μ-GDP TPR | RDP-implied TPR |")
    print("|---|---|---|---|")
    for a, lo, up, r, gt in zip(t.fpr, t.lower, t.upper, rdp, g.tpr(t.fpr)):
        print(f"| {a:g} | [{lo:.5f}, {up:.5f}] | {gt:.5f} | {r.value:.5f} |")
    fig = Figure(figsize=plots.WIDE_FIGSIZE, dpi=plots.DPI, layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    plots.tradeoff_figure(items, points=60, ax=ax1, title="linear axes")
    plots.tradeoff_figure(items, points=60, log_fpr=True, ax=ax2, title="log axes")
    fig.suptitle(f"Membership-test trade-off, DP-SGD (q = 256/60000, σ = {SIGMA}, T = {STEPS})")
    plots.save_figure(fig, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "pld-tradeoff.png")
