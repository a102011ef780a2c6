"""The approximate-DP vs zCDP separation for histograms: n against log T.

For a histogram over T keys whose every count must be within n/2 with probability ≥ 1 − β:

* the zCDP lower bound n_min(T, ρ, β) of renyi.limits.histogram_min_n (no ρ-zCDP algorithm
  can do it with fewer rows; grows like √(log T / ρ));
* the n the ρ-zCDP Gaussian mechanism achieves (renyi.limits.gaussian_histogram_n);
* the n a stability-based (ε, δ)-DP histogram achieves at the ε that ρ-zCDP itself implies at
  δ (renyi.limits.stability_histogram_n): flat in T.

Run:  python benchmarks/limits_separation.py [--out docs/img/limits-separation.png]
Prints the table and the ratios, and writes the figure.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from renyi import ZCDP
from renyi.limits import gaussian_histogram_n, histogram_min_n, stability_histogram_n

RHOS = (0.5, 0.05)
BETA = 0.05
DELTA = 1e-6
LOG10_T = [0.30103, 1, 2, 3, 6, 9, 12, 20, 30, 50, 75, 100, 150, 200, 250, 300]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("docs/img/limits-separation.png"))
    args = ap.parse_args()

    rows = {}
    for rho in RHOS:
        eps = ZCDP(rho).epsilon(DELTA)
        stab = stability_histogram_n(eps, DELTA, BETA)
        lows, gauss = [], []
        print(f"\nρ = {rho}, β = {BETA}; (ε, δ) = ({eps:.4f}, {DELTA:g}) implied by ρ; stability n = {stab}")
        print(f"{'log10 T':>8} {'zCDP n_min':>11} {'Gaussian n':>11} {'Gauss/min':>10} {'min/stab':>9}")
        for lt in LOG10_T:
            t = 10.0**lt
            lo = histogram_min_n(t, rho, BETA)
            ga = gaussian_histogram_n(t, rho, BETA)
            lows.append(lo)
            gauss.append(ga)
            print(f"{lt:8.3g} {lo:11d} {ga:11d} {ga / lo:10.2f} {lo / stab:9.2f}")
        rows[rho] = (eps, stab, lows, gauss)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5.6), dpi=130)
    colors = {0.5: "#1f77b4", 0.05: "#d62728"}
    dense = [0.30103] + [x / 4 for x in range(2, 81)] + list(range(21, 301, 3))
    for rho, (eps, stab, _, _) in rows.items():
        c = colors[rho]
        lows = [histogram_min_n(10.0**lt, rho, BETA) for lt in dense]
        gauss = [gaussian_histogram_n(10.0**lt, rho, BETA) for lt in dense]
        ax.plot(dense, lows, "-", color=c, lw=2, label=f"ρ = {rho}: no zCDP algorithm below (Fano + Prop. 28)")
        ax.plot(dense, gauss, "--", color=c, lw=1.5, label=f"ρ = {rho}: Gaussian mechanism achieves")
        ax.axhline(stab, color=c, lw=1.2, ls=":",
                   label=f"(ε, δ) = ({eps:.2f}, 1e-6) stability histogram (any T)")
    ax.set_xlabel("log₁₀ T (number of keys)")
    ax.set_ylabel("rows n needed (every count within n/2, β = 0.05)")
    ax.set_title("Histograms: zCDP needs n growing with log T; approximate DP does not")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_ylim(0, None)
    ax.legend(fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out)
    print(f"\nwrote {args.out}")
    cross = {rho: next((10**lt for lt, lo in zip(LOG10_T, r[2]) if lo > r[1]), math.inf) for rho, r in rows.items()}
    for rho, t in cross.items():
        print(f"ρ = {rho}: the zCDP lower bound exceeds the stability histogram's n from T ≈ {t:.3g}")


if __name__ == "__main__":
    main()
