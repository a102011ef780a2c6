"""Random allocation: renyi's PLD route beside PLD_accounting 2.0, Poisson sampling and shuffling.

Run:  PYTHONPATH=src python benchmarks/bench_allocation.py [--quick] [--peer-timeout S]
      PYTHONPATH=src python benchmarks/bench_allocation.py --sigma 0.5,1   (table 1, those σ only)
      PYTHONPATH=src python benchmarks/bench_allocation.py --bases | --fft-bound
      PYTHONPATH=src python benchmarks/bench_allocation.py --plot docs/img/samplers.png

Table 1 (speed and tightness, one epoch, k = 1, δ = 1e-5): for each (σ, t) renyi's certified
bracket [lower, upper] on the ε of 1-of-t Gaussian random allocation (``RandomAllocation(
Gaussian(σ), t).best_epsilon(δ)``, caches cleared first: the time includes building the
pairs) and PLD_accounting 2.0's ``gaussian_allocation_epsilon_range`` (Feldman & Shenfeld;
the peer, ``pip install pld-accounting``, in the ``bench`` extra), each timed as CPU seconds
(``time.process_time``: wall time on a shared machine measures the neighbours), with the
ratios printed. The peer runs in a child process with a
timeout (``--peer-timeout``, default 600 s): a row that times out says so.

Table 2 (which sampler did you run?): ε against epochs for σ = 1, t = 469, δ = 1e-5:
Poisson sampling at rate 1/t (renyi, the tightest route: PLD), random allocation (PLD and
RDP routes), and shuffled fixed batches: the certified lower bound on the true ε of such a
loader (replace-one) beside the Poisson number. ``--plot`` draws it for the docs.

Table 4 (``--bases``, issue #23): random allocation of non-Gaussian bases (Laplace, discrete
Gaussian, discrete Laplace, an ε-DP step) — the certified PLD bracket of the allocation of the
base's own pair against the unamplified k-fold composition renyi billed before, with CPU time.

Table 5 (``--fft-bound``, issue #23): the rigorous a-priori bound on the FFT round-off of the
lattice laws that would have to be booked into δ instead of the measured floor: Higham's
norm-wise FFT bound (Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm 24.2; 3
transforms and a pointwise product per convolution) propagated through the binary powering
(Young's inequality ‖e∗b‖₂ ≤ ‖e‖₂‖b‖₁) and turned into a δ error by Cauchy–Schwarz against the
remove profile's weights s/t over the window.

Timings are measured here only; no test asserts a time.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import time

DELTA = 1e-5
CASES = [(1.0, 10), (1.0, 100), (2.0, 100), (0.8, 1000), (1.0, 1000), (2.0, 1000), (1.0, 10_000),
         (0.5, 10), (0.5, 100), (0.5, 1000)]
QUICK = [(1.0, 100), (1.0, 1000), (1.0, 10_000)]


def _reset() -> None:
    """Forget every cached pair and answer (a cold question)."""
    from renyi.accounting.pld import _allocation, distribution

    _allocation._allocation_profiles.cache_clear()
    _allocation._block_pairs.cache_clear()
    _allocation._k_of_t_pairs.cache_clear()
    for name in ("_PAIRS", "_DISC", "_CACHE"):
        obj = getattr(distribution, name, None)
        if isinstance(obj, dict):
            obj.clear()
    for name in ("_LAST",):
        obj = getattr(distribution, name, None)
        if isinstance(obj, list):
            obj.clear()
    ans = getattr(distribution, "_ANSWERS", None)
    if isinstance(ans, dict):
        ans.clear()


_WARM = False


def renyi_bracket(sigma: float, t: int) -> tuple[float, float, float]:
    """renyi's PLD route (the bracket; ``best_epsilon`` adds the RDP route's number to the
    minimum), cold caches, imports done."""
    global _WARM
    from renyi import Gaussian, RandomAllocation, routes

    if not _WARM:  # imports and first-use setup, outside the timing (the peer's child too)
        routes.best_epsilon(RandomAllocation(Gaussian(3.0), steps=3), DELTA, "pld")
        _WARM = True
    _reset()
    t0 = time.process_time()
    c = routes.best_epsilon(RandomAllocation(Gaussian(sigma), steps=t), DELTA, "pld")
    dt = time.process_time() - t0
    return float(c.lower if c.lower is not None else math.nan), float(c.value), dt


def _peer_child(sigma: float, t: int, out: mp.Queue) -> None:  # type: ignore[type-arg]
    from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range

    t0 = time.process_time()
    up, lo = gaussian_allocation_epsilon_range(delta=DELTA, sigma=sigma, num_steps=t)
    out.put((float(lo), float(up), time.process_time() - t0))


def peer_bracket(sigma: float, t: int, timeout: float) -> tuple[float, float, float] | str:
    try:
        import PLD_accounting  # noqa: F401
    except ImportError:
        return "not installed"
    q: mp.Queue = mp.Queue()  # type: ignore[type-arg]
    p = mp.Process(target=_peer_child, args=(sigma, t, q))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.terminate()
        p.join()
        return f"> {timeout:.0f} s"
    return q.get() if not q.empty() else "failed"


def table1(cases: list[tuple[float, int]], timeout: float, peer: bool) -> None:
    print(f"Table 1: one epoch of 1-of-t Gaussian random allocation, δ = {DELTA:g} "
          "(CPU seconds of the question, cold caches: fair on a shared machine)")
    head = (f"{'σ':>4} {'t':>6} | {'renyi [lower, upper]':>22} {'s':>7} | {'PLD_accounting [lower, upper]':>30} "
            f"{'s':>8} | {'speed-up':>8} {'upper ratio':>11}")
    print(head)
    print("-" * len(head))
    for sigma, t in cases:
        lo, up, dt = renyi_bracket(sigma, t)
        pr = peer_bracket(sigma, t, timeout) if peer else "skipped"
        if isinstance(pr, tuple):
            plo, pup, pdt = pr
            print(f"{sigma:>4} {t:>6} | [{lo:.5f}, {up:.5f}] {dt:>7.2f} | [{plo:.5f}, {pup:.5f}]{'':>10} {pdt:>8.1f} | "
                  f"{pdt / dt:>7.1f}× {up / pup:>11.4f}", flush=True)
        else:
            print(f"{sigma:>4} {t:>6} | [{lo:.5f}, {up:.5f}] {dt:>7.2f} | {pr:>30} {'':>8} |", flush=True)


def table2(epochs: list[int]) -> dict[str, list[float]]:
    from renyi import Gaussian, PoissonSubsampled, RandomAllocation, dpsgd, routes

    sigma, t = 1.0, 469
    out: dict[str, list[float]] = {"poisson": [], "alloc_pld": [], "alloc_rdp": [], "shuffle_lower": []}
    print(f"\nTable 2: σ = {sigma}, t = {t} steps per epoch, δ = {DELTA:g}")
    print(f"{'epochs':>6} {'Poisson':>9} {'alloc PLD':>10} {'alloc RDP':>10} {'shuffle ≥':>10} {'s':>6}")
    for e in epochs:
        t0 = time.perf_counter()
        pois = float(PoissonSubsampled(Gaussian(sigma), 1.0 / t).compose(t * e).epsilon(DELTA))
        m = RandomAllocation(Gaussian(sigma), steps=t)
        mm = m if e == 1 else m.compose(e)
        apld = float(routes.best_epsilon(mm, DELTA, "pld").value)
        ardp = float(routes.best_epsilon(mm, DELTA, "rdp").value)
        shl = dpsgd.shuffle_lower_bound(sigma, t, e, DELTA)
        for k, v in zip(out, (pois, apld, ardp, shl)):
            out[k].append(v)
        print(f"{e:>6} {pois:>9.4f} {apld:>10.4f} {ardp:>10.4f} {shl:>10.4f} {time.perf_counter() - t0:>6.1f}",
              flush=True)
    return out


GRID_SIGMAS = (0.5, 0.8, 1.0, 2.0)
GRID_TS = (2, 10, 100, 1000)
GRID_DELTAS = (1e-3, 1e-5, 1e-10)
GRID_EPOCHS = 5


def table3() -> None:
    """Tightness grid: renyi's certified bracket for one epoch (every δ) and for
    ``GRID_EPOCHS`` epochs (δ = 1e-5), its relative width, and the Poisson ε at rate 1/t over
    the same number of steps (the PLD route's upper end): random allocation should cost less."""
    from renyi import Gaussian, PoissonSubsampled, RandomAllocation, routes

    print(f"\nTable 3: tightness, k = 1 (bracket width = (upper − lower)/lower; "
          f"ratio = allocation upper / Poisson upper)")
    head = (f"{'σ':>4} {'t':>5} {'E':>2} {'δ':>6} | {'lower':>9} {'upper':>9} {'width':>8} | "
            f"{'Poisson':>9} {'ratio':>6} | {'s':>6}")
    print(head)
    print("-" * len(head))
    for sigma in GRID_SIGMAS:
        for t in GRID_TS:
            for e, delta in [(1, d) for d in GRID_DELTAS] + [(GRID_EPOCHS, 1e-5)]:
                t0 = time.perf_counter()
                m = RandomAllocation(Gaussian(sigma), steps=t)
                c = routes.best_epsilon(m if e == 1 else m.compose(e), delta, "pld")
                pois = routes.best_epsilon(PoissonSubsampled(Gaussian(sigma), 1.0 / t).compose(t * e), delta,
                                           "pld").value
                lo = float(c.lower) if c.lower is not None else math.nan
                up = float(c.value)
                print(f"{sigma:>4} {t:>5} {e:>2} {delta:>6.0e} | {lo:>9.5f} {up:>9.5f} {(up - lo) / lo if lo > 0 else math.inf:>8.2%} | "
                      f"{pois:>9.5f} {up / pois:>6.3f} | {time.perf_counter() - t0:>6.1f}", flush=True)


def plot(path: str, epochs: list[int], res: dict[str, list[float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.plot(epochs, res["shuffle_lower"], "o-", color="tab:red",
            label="shuffled batches: certified lower bound (replace-one)")
    ax.plot(epochs, res["alloc_rdp"], "s--", color="tab:blue", alpha=0.6, label="random allocation, RDP route")
    ax.plot(epochs, res["poisson"], "^-", color="grey", label="Poisson sampling, rate 1/t (PLD)")
    ax.plot(epochs, res["alloc_pld"], "o-", color="tab:blue", label="random allocation, PLD route")
    ax.set_xlabel("epochs")
    ax.set_ylabel("ε at δ = 1e-5")
    ax.set_yscale("log")
    ax.set_title("σ = 1, t = 469 steps per epoch")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def table4() -> None:
    """Non-Gaussian bases: allocation bracket vs the unamplified composition."""
    from renyi import Laplace, RandomAllocation
    from renyi.mechanisms import DiscreteGaussian, DiscreteLaplace, ExponentialMechanism

    bases = [Laplace(scale=1.0), Laplace(scale=4.0), DiscreteGaussian(sigma=1.0), DiscreteGaussian(sigma=4.0),
             DiscreteLaplace(scale=2.0), ExponentialMechanism(epsilon=1.0)]
    print("\nTable 4: 1-of-t random allocation of non-Gaussian bases, δ = 1e-6 (CPU s, cold caches)")
    print(f"{'base':<34} {'t':>5} {'epochs':>6} {'PLD [lower, upper]':>22} {'s':>6} {'unamplified':>11} {'ratio':>6}")
    for base in bases:
        for t, e in ((10, 1), (100, 1), (1000, 5)):
            _reset()
            c0 = time.process_time()
            b = RandomAllocation(base, steps=t).compose(e).best_epsilon(1e-6)
            dt = time.process_time() - c0
            un = base.compose(e).best_epsilon(1e-6).value
            lo = f"{b.lower:.4f}" if b.lower is not None else "–"
            print(f"{repr(base)[:34]:<34} {t:>5} {e:>6} {'[' + lo + ', ' + format(b.value, '.4f') + ']':>22} "
                  f"{dt:>6.2f} {un:>11.4f} {b.value / un:>6.3f}")


def table5() -> None:
    """The a-priori FFT round-off bound (see the module docstring)."""
    import numpy as np

    from renyi.accounting.pld import _allocation as A

    u = 2.0**-53

    def gamma(n: int) -> float:
        lg = math.log2(max(n, 2))
        mu = 2 * u  # twiddle factors accurate to 2u
        g4 = 4 * u / (1 - 4 * u)
        eta = mu + g4 * (math.sqrt(2) + mu)
        return 3 * lg * eta / (1 - lg * eta) + 4 * u

    def power_bound(pm: "np.ndarray", t: int, N: int) -> float:
        base = (float(pm.sum()), float(np.linalg.norm(pm)), 0.0, pm.size)
        res = None

        def comb(x: tuple[float, float, float, int], y: tuple[float, float, float, int]
                 ) -> tuple[float, float, float, int]:
            (a1, a2, ea, na), (b1, b2, eb, nb) = x, y
            fresh = 3 * gamma(na + nb - 1) * (a2 + ea) * (b2 + eb)  # the split convolution: 3 products
            return (a1 * b1, min(a2 * b1, a1 * b2), fresh + ea * b1 + eb * a1 + ea * eb, min(na + nb - 1, N))

        while t:
            if t & 1:
                res = base if res is None else comb(res, base)
            t >>= 1
            if t:
                base = comb(base, base)
        assert res is not None
        return res[2]

    print("\nTable 5: a-priori FFT round-off bound of the remove lattice law (what booking it into δ would cost)")
    print(f"{'σ':>4} {'t':>6} {'points':>8} {'‖error‖₂ ≤':>11} {'‖s/t‖₂':>9} {'δ error ≤':>10}")
    for sigma, t in ((2.0, 1000), (1.0, 10), (1.0, 1000), (0.8, 1000), (1.0, 10_000), (0.5, 100)):
        Y = A._LogNormal(1 / sigma)
        bulk = t + 20 * Y.sd * math.sqrt(t)
        c = Y.cap(A.TAIL)
        if (c + bulk) / (A._REL_SPACING * Y.sd) > 4 * A.MAX_POINTS:
            c = Y.cap(A.TAIL_COARSE)
        delta, N = A._lattice(c + bulk, A._REL_SPACING * Y.sd, A.MAX_POINTS)
        K = min(N - 1, int(math.ceil(c / delta)))
        pm, _ = A._spread(Y, delta, K)
        e = power_bound(pm, t, N)
        w = float(np.sqrt(np.sum((np.arange(N) * delta / t) ** 2)))
        print(f"{sigma:>4} {t:>6} {N:>8} {e:>11.2e} {w:>9.2e} {e * w:>10.2e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three cases only")
    ap.add_argument("--no-peer", action="store_true", help="skip PLD_accounting")
    ap.add_argument("--peer-timeout", type=float, default=600.0)
    ap.add_argument("--sigma", metavar="S,S", help="table 1 only, its CASES with these σ (e.g. 0.5,1)")
    ap.add_argument("--grid", action="store_true", help="the tightness grid only (table 3)")
    ap.add_argument("--plot", metavar="PNG", help="draw ε against epochs (table 2) to this file")
    ap.add_argument("--bases", action="store_true", help="non-Gaussian bases only (table 4)")
    ap.add_argument("--fft-bound", action="store_true", help="the a-priori FFT round-off bound only (table 5)")
    args = ap.parse_args()
    if args.bases:
        table4()
        return
    if args.fft_bound:
        table5()
        return
    epochs = [1, 2, 5, 10, 20]
    if args.plot:
        plot(args.plot, epochs, table2(epochs))
        return
    if args.grid:
        table3()
        return
    if args.sigma:
        keep = {float(x) for x in args.sigma.split(",")}
        table1([c for c in CASES if c[0] in keep], args.peer_timeout, not args.no_peer)
        return
    table1(QUICK if args.quick else CASES, args.peer_timeout, not args.no_peer)
    table2(epochs)


if __name__ == "__main__":
    main()
