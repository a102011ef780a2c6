"""Figure for docs/pld.md: ε against steps for DP-SGD under RDP, PLD upper and PLD lower,
and for q = 1 the exact Gaussian (GDP) curve.

Run:  python benchmarks/figure_pld.py docs/img/pld-dpsgd.png
"""

from __future__ import annotations

import math
import sys
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from renyi import routes  # noqa: E402
from renyi.definitions import GDP  # noqa: E402
from renyi.mechanisms import Gaussian  # noqa: E402
from renyi.pld import epsilon_bounds  # noqa: E402
from renyi.subsampling import PoissonSubsampled  # noqa: E402

warnings.simplefilter("ignore")
DELTA = 1e-5


def curves(q: float, sigma: float, steps: np.ndarray) -> tuple[list[float], list[float], list[float]]:
    m = PoissonSubsampled(Gaussian(sigma), q)
    rdp, lo, hi = [], [], []
    for t in steps:
        rdp.append(routes.best_epsilon(int(t) * m, DELTA, "rdp").value)
        a, b = epsilon_bounds([(m, int(t))], DELTA)
        lo.append(a)
        hi.append(b)
    return rdp, lo, hi


def main(out: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    steps = np.unique(np.logspace(1, 5, 13).astype(int))
    rdp, lo, hi = curves(0.01, 1.0, steps)
    ax = axes[0]
    ax.plot(steps, rdp, "s--", label="RDP route (α optimised)", color="tab:gray")
    ax.plot(steps, hi, "o-", label="PLD upper (certified)", color="tab:blue")
    ax.plot(steps, lo, "v:", label="PLD lower", color="tab:orange")
    ax.set(xscale="log", yscale="log", xlabel="steps T", ylabel=f"ε at δ = {DELTA:g}",
           title="DP-SGD, q = 0.01, σ = 1.0")
    ax.legend()
    steps1 = np.unique(np.logspace(0, 3, 10).astype(int))
    rdp1, lo1, hi1 = curves(1.0, 10.0, steps1)
    exact = [GDP(math.sqrt(t) / 10.0).epsilon(DELTA) for t in steps1]
    ax = axes[1]
    ax.plot(steps1, rdp1, "s--", label="RDP route", color="tab:gray")
    ax.plot(steps1, hi1, "o-", label="PLD upper", color="tab:blue")
    ax.plot(steps1, lo1, "v:", label="PLD lower", color="tab:orange")
    ax.plot(steps1, exact, "k-", lw=0.8, label="exact (Gaussian, μ = √T/σ)")
    ax.set(xscale="log", yscale="log", xlabel="steps T", title="q = 1 (full batch), σ = 10")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    for t, a, b, c in zip(steps, lo, hi, rdp):
        print(f"T={t:>6}  PLD [{a:.4f}, {b:.4f}]  RDP {c:.4f}  RDP/PLD {c / b:.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "pld-dpsgd.png")
