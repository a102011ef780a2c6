"""The PLD route off the tested grid: random DP-SGD setups × 21 δ (issue #26).

For each setup (σ ∈ [0.6, 2.5], q ∈ [1e-4, 0.05], T ∈ [100, 1e5], log-uniform, seeded) the
certified ε bracket is asked at 21 δ from 1e-14 to 1e-2, in increasing δ. Counted: questions
the engine could not resolve (the default route would fall back to RDP), brackets wider than
1 % (with the engine's reason), and setups whose upper ends are not non-increasing in δ.

    python benchmarks/pld_offgrid_scan.py [--setups 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from renyi.errors import ConversionError
from renyi.mechanisms import Gaussian
from renyi.pld import epsilon_bracket
from renyi.subsampling import PoissonSubsampled


def setups(n: int, seed: int) -> list[tuple[float, float, int]]:
    rng = np.random.default_rng(seed)
    return [(float(rng.uniform(0.6, 2.5)), float(10 ** rng.uniform(-4, -1.3)), int(10 ** rng.uniform(2, 5)))
            for _ in range(n)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--setups", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    deltas = np.logspace(-14, -2, 21)
    unresolved = wide = nonmono = 0
    widest = 0.0
    t0 = time.perf_counter()
    for i, (s, q, t) in enumerate(setups(args.setups, args.seed)):
        m = [(PoissonSubsampled(Gaussian(s), q), t)]
        ups: list[float] = []
        flags: list[str] = []
        t1 = time.perf_counter()
        for d in deltas:
            try:
                b = epsilon_bracket(m, float(d), fallback=False)
            except ConversionError as exc:
                unresolved += 1
                flags.append(f"unresolved at δ={d:.1e}: {exc}")
                continue
            ups.append(b.upper)
            w = (b.upper - b.lower) / b.upper if b.upper > 0 else 0.0
            widest = max(widest, w)
            if w > 0.01:
                wide += 1
                flags.append(f"δ={d:.1e} [{b.lower:.5g}, {b.upper:.5g}] {100 * w:.2f} % ({b.note or 'no reason'})")
        if any(a < c for a, c in zip(ups, ups[1:])):
            nonmono += 1
            flags.append("ε rises with δ")
        print(f"{i:2d} σ={s:.4f} q={q:.3g} T={t:<6d} {time.perf_counter() - t1:5.1f} s  "
              + ("; ".join(flags) if flags else "ok"), flush=True)
    print(f"{args.setups} setups × {deltas.size} δ (seed {args.seed}): unresolved {unresolved}, wider than 1 % {wide} "
          f"(widest {100 * widest:.2f} %), setups with ε rising with δ {nonmono}; "
          f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
