"""Which sampler did you run? ε of random allocation beside Poisson sampling and shuffling.

Run:  PYTHONPATH=src python benchmarks/bench_allocation.py [--plot docs/img/samplers.png]

For each (σ, t = steps per epoch, epochs) at δ = 1e-5 it prints:

* Poisson (RDP): renyi's exact-curve RDP ε of Poisson sampling at rate 1/t for t·epochs steps
  (the number most libraries report, valid only for Poisson sampling);
* Poisson (PLD, dp_accounting): the same sampler through dp_accounting's PLD accountant (a peer;
  close to the true Poisson ε) when dp_accounting is installed;
* allocation (RDP): renyi's RandomAllocation (k = 1 of t) composed over the epochs — exact
  Rényi divergences in both directions, converted by CKS20 Prop. 12;
* ratio allocation / Poisson (both RDP): the papers report random allocation close to Poisson;
* shuffle (no amplification): renyi's Shuffled — one replace-one release per example per epoch
  (sensitivity 2 for clipped sums), the honest number for shuffled fixed batches without an
  amplification theorem.

``--plot`` draws ε against epochs for σ = 1, t = 469 (the three samplers) for the docs.
Timings are printed per row (seconds, one process) but are not asserted anywhere.
"""

from __future__ import annotations

import argparse
import time

from renyi import Gaussian, PoissonSubsampled, RandomAllocation, Shuffled

DELTA = 1e-5


def poisson_pld(sigma: float, t: int, epochs: int) -> float | None:
    try:
        from dp_accounting import dp_event
        from dp_accounting.pld import PLDAccountant
    except ImportError:
        return None
    acc = PLDAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(1.0 / t, dp_event.GaussianDpEvent(sigma)), t * epochs)
    return float(acc.get_epsilon(DELTA))


def shuffle_eps(sigma: float, t: int, epochs: int) -> float:
    base = Gaussian(sigma, sensitivity=2.0, neighbouring="replace_one")
    return Shuffled(base, t).compose(epochs).epsilon(DELTA)


def row(sigma: float, t: int, epochs: int) -> dict[str, float | None]:
    t0 = time.perf_counter()
    alloc = RandomAllocation(Gaussian(sigma), t).compose(epochs).epsilon(DELTA)
    t1 = time.perf_counter()
    pois = PoissonSubsampled(Gaussian(sigma), 1.0 / t).compose(t * epochs).epsilon(DELTA)
    return {
        "poisson_rdp": pois,
        "poisson_pld": poisson_pld(sigma, t, epochs),
        "allocation": alloc,
        "ratio": alloc / pois,
        "shuffle": shuffle_eps(sigma, t, epochs),
        "seconds": t1 - t0,
    }


def table() -> None:
    head = (f"{'σ':>5} {'t':>6} {'epochs':>6} | {'Poisson RDP':>11} {'Poisson PLD*':>12} | {'allocation':>10} "
            f"{'alloc/Pois':>10} | {'shuffle':>8} | {'s':>5}")
    print(f"ε at δ = {DELTA:g}   (* dp_accounting, peer)")
    print(head)
    print("-" * len(head))
    for sigma in (0.8, 1.0, 1.5, 2.0):
        for t in (10, 100, 469, 1000):
            for epochs in (1, 10):
                r = row(sigma, t, epochs)
                pld = "—" if r["poisson_pld"] is None else f"{r['poisson_pld']:.4f}"
                print(f"{sigma:>5} {t:>6} {epochs:>6} | {r['poisson_rdp']:>11.4f} {pld:>12} | "
                      f"{r['allocation']:>10.4f} {r['ratio']:>10.3f} | {r['shuffle']:>8.2f} | {r['seconds']:>5.2f}")


def plot(path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sigma, t = 1.0, 469
    epochs = [1, 2, 5, 10, 20, 50, 100]
    pois = [PoissonSubsampled(Gaussian(sigma), 1.0 / t).compose(t * e).epsilon(DELTA) for e in epochs]
    alloc = [RandomAllocation(Gaussian(sigma), t).compose(e).epsilon(DELTA) for e in epochs]
    shuf = [shuffle_eps(sigma, t, e) for e in epochs]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(epochs, shuf, "s-", color="tab:red", label="shuffled fixed batches (no amplification claimed)")
    ax.plot(epochs, alloc, "o-", color="tab:blue", label="random allocation, k = 1 of t = 469 (RDP, both directions)")
    ax.plot(epochs, pois, "^--", color="tab:gray", label="Poisson sampling at rate 1/469 (RDP)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epochs")
    ax.set_ylabel(f"ε at δ = {DELTA:g}")
    ax.set_title("DP-SGD, noise multiplier σ = 1, 469 steps per epoch")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", help="also draw the docs figure to this PNG file")
    args = parser.parse_args()
    table()
    if args.plot:
        plot(args.plot)


if __name__ == "__main__":
    main()
