"""Figure for docs/user-level.md: ε against the number of examples k of one person, for
DP-SGD with Poisson sampling of examples (q = 0.01, σ = 1, 1000 steps, δ = 1e-5):

* generic group privacy: the example-level guarantee of the run, ``.group(k)``;
* the tight mixture: ``PoissonSubsampled(Gaussian(σ), q).group(k)`` (PLD upper bound);
* person-level sampling at the same noise, the person's k examples summed (sensitivity k);
* person-level sampling with each person's total clipped to the example norm (sensitivity 1).

Run:  python benchmarks/figure_group.py docs/img/group_epsilon.png   (prints the numbers too)
"""

from __future__ import annotations

import math
import sys
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from renyi import PoissonSubsampled  # noqa: E402
from renyi.mechanisms import Gaussian  # noqa: E402

warnings.simplefilter("ignore")
DELTA, Q, SIGMA, T = 1e-5, 0.01, 1.0, 1000
KS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
GENERIC_MAX = 16  # beyond this the generic bound is astronomically large (and slow to compute)


def main(out: str) -> None:
    ex = PoissonSubsampled(Gaussian(SIGMA), Q)
    rows = []
    for k in KS:
        tight = (T * ex.group(k)).epsilon(DELTA)
        generic = (T * ex).group(k).epsilon(DELTA) if k <= GENERIC_MAX else math.inf
        person_sum = (T * PoissonSubsampled(Gaussian(SIGMA, sensitivity=float(k)), Q)).epsilon(DELTA)
        person_clip = (T * ex).epsilon(DELTA)
        rows.append((k, generic, tight, person_sum, person_clip))
        print(f"k={k:>3}  generic {generic:>12.5g}  tight {tight:>10.5g}  person-level (sum) {person_sum:>10.5g}  "
              f"person-level (clipped) {person_clip:>8.5g}", flush=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ks = [r[0] for r in rows]
    g = [(r[0], r[1]) for r in rows if math.isfinite(r[1])]
    ax.plot([a for a, _ in g], [b for _, b in g], "o-", label="generic group privacy (example-level .group(k))")
    ax.plot(ks, [r[2] for r in rows], "s-", label="tight: PoissonSubsampled(Gaussian).group(k)")
    ax.plot(ks, [r[3] for r in rows], "^--", label="person-level sampling, k examples summed")
    ax.plot(ks, [r[4] for r in rows], ":", color="gray", label="person-level sampling, person clipped to 1")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("k (examples of one person)")
    ax.set_ylabel(f"ε at δ = {DELTA:g}")
    ax.set_title(f"DP-SGD, q = {Q:g}, σ = {SIGMA:g}, {T} steps")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/img/group_epsilon.png")
