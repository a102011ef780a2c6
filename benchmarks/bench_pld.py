"""PLD benchmark: renyi.pld versus dp-accounting's PLDAccountant and the prv_accountant package.

Run:  python benchmarks/bench_pld.py [--quick]     (PYTHONPATH=src if renyi is not installed)

Tables
  1. DP-SGD ε (q = 0.01, σ = 1.0, δ = 1e-5) for T = 10³ … 10⁶: wall time of each library
     (fresh objects, best of 2), renyi's certified bracket, the peers' ε, speed ratios.
  2. 50 heterogeneous training phases (distinct q, σ, steps), same three libraries.
  3. ε asked every 100 steps during 10⁴ steps of training (renyi.pld.PLDAccountant): cost
     per step.
  4. Tightness: bracket width and ratio to the RDP route over the DP-SGD grid of issue #17.

Peers are optional; a missing one prints "n/a". Times depend on the machine (shared here).
"""

from __future__ import annotations

import logging
import math
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from renyi import routes
from renyi.mechanisms import Gaussian
from renyi.pld import PLDAccountant, epsilon_bounds
from renyi.subsampling import PoissonSubsampled

logging.getLogger("absl").setLevel(logging.ERROR)
warnings.simplefilter("ignore")


def timed(fn: Callable[[], Any], repeat: int = 2) -> tuple[float, Any]:
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def dpacc_pld(phases: list[tuple[float, float, int]], delta: float) -> float:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant()
    for q, s, t in phases:
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), t)
    return float(acc.get_epsilon(delta))


def prv(phases: list[tuple[float, float, int]], delta: float) -> float:
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    prvs = [PoissonSubsampledGaussianMechanism(q, s) for q, s, _ in phases]
    acc = PRVAccountant(prvs, eps_error=0.01, delta_error=delta / 1000,
                        max_self_compositions=[t for _, _, t in phases])
    return float(acc.compute_epsilon(delta, [t for _, _, t in phases])[2])


def renyi_pld(phases: list[tuple[float, float, int]], delta: float) -> tuple[float, float]:
    return epsilon_bounds([(PoissonSubsampled(Gaussian(s), q), t) for q, s, t in phases], delta)


def peer(fn: Callable[[], float]) -> tuple[float | None, float | None]:
    try:
        t, v = timed(fn, repeat=1)
        return t, v
    except Exception as exc:  # a peer that raises (or is missing) is reported, not fatal
        print(f"    peer failed: {type(exc).__name__}: {str(exc)[:80]}")
        return None, None


def fmt(x: float | None, spec: str = ".4f") -> str:
    return "n/a" if x is None else format(x, spec)


def table_steps(quick: bool) -> None:
    print("\n1. DP-SGD q=0.01 σ=1.0 δ=1e-5")
    print(f"{'T':>8} {'renyi s':>8} {'[lower, upper]':>22} {'dpacc s':>8} {'dpacc ε':>8} "
          f"{'prv s':>7} {'prv ε':>8} {'×dpacc':>7} {'×prv':>6}")
    for t in ([10**3, 10**4] if quick else [10**3, 10**4, 10**5, 10**6]):
        ph = [(0.01, 1.0, t)]
        tr, (lo, hi) = timed(lambda: renyi_pld(ph, 1e-5))
        td, ed = peer(lambda: dpacc_pld(ph, 1e-5))
        tp, ep = peer(lambda: prv(ph, 1e-5))
        rd = f"{td / tr:.1f}" if td else "n/a"
        rp = f"{tp / tr:.1f}" if tp else "n/a"
        print(f"{t:>8} {tr:>8.3f} {f'[{lo:.4f}, {hi:.4f}]':>22} {fmt(td, '.3f'):>8} {fmt(ed):>8} "
              f"{fmt(tp, '.3f'):>7} {fmt(ep):>8} {rd:>7} {rp:>6}")


def table_phases(quick: bool) -> None:
    n = 10 if quick else 50
    ph = [(0.005 + 0.001 * (i % 7), 0.8 + 0.05 * (i % 11), 200 + 37 * i) for i in range(n)]
    print(f"\n2. {n} heterogeneous phases, δ=1e-5")
    tr, (lo, hi) = timed(lambda: renyi_pld(ph, 1e-5), repeat=1)
    td, ed = peer(lambda: dpacc_pld(ph, 1e-5))
    tp, ep = peer(lambda: prv(ph, 1e-5))
    print(f"   renyi {tr:.3f}s [{lo:.4f}, {hi:.4f}]   dp-accounting {fmt(td, '.3f')}s ε={fmt(ed)}   "
          f"prv {fmt(tp, '.3f')}s ε={fmt(ep)}")


def table_training(quick: bool) -> None:
    steps = 2000 if quick else 10**4
    print(f"\n3. ε every 100 steps during {steps} steps (q=0.01, σ=1.0, δ=1e-5)")
    acct = PLDAccountant()
    m = PoissonSubsampled(Gaussian(1.0), 0.01)
    t0 = time.perf_counter()
    last = None
    for i in range(1, steps + 1):
        acct.step(m)
        if i % 100 == 0:
            last = acct.epsilon(1e-5)
    total = time.perf_counter() - t0
    print(f"   total {total:.2f}s, {1e3 * total / steps:.3f} ms per step; final {last}")


def table_tightness(quick: bool) -> None:
    print("\n4. tightness: width = (upper − lower)/upper, rdp/upper = RDP route ε ÷ PLD upper")
    print(f"{'q':>6} {'σ':>4} {'T':>8} {'δ':>6} {'lower':>9} {'upper':>9} {'width %':>8} {'rdp/upper':>9} {'s':>6}")
    qs = [0.01] if quick else [0.001, 0.01, 0.05]
    sig = [1.0] if quick else [0.6, 1.0, 3.0]
    ts = [100, 10**4] if quick else [100, 10**4, 10**6]
    for q in qs:
        for s in sig:
            for t in ts:
                for d in (1e-5, 1e-10):
                    m = PoissonSubsampled(Gaussian(s), q)
                    t0 = time.perf_counter()
                    lo, hi = epsilon_bounds([(m, t)], d)
                    el = time.perf_counter() - t0
                    rdp = routes.best_epsilon(t * m, d, "rdp").value
                    print(f"{q:>6} {s:>4} {t:>8} {d:>6.0e} {lo:>9.4f} {hi:>9.4f} "
                          f"{100 * (hi - lo) / hi:>8.3f} {rdp / hi:>9.4f} {el:>6.2f}")


def main() -> None:
    quick = "--quick" in sys.argv
    table_steps(quick)
    table_phases(quick)
    table_training(quick)
    table_tightness(quick)


if __name__ == "__main__":
    main()
