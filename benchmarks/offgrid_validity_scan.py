"""Scan random setups of every privacy claim against independent ground truth and count the
invalid numbers (an upper end below the truth, a lower end above it).

The oracles and per-claim checks are those of ``tests/test_offgrid_validity.py`` (exact
Gaussian, exact Laplace k ≤ 2, trinomial randomized response, mpmath profiles of the
subsampled / replace-one / group pairs, dp-accounting PLD); this script runs many more seeds
than the test tiers and prints one row per claim.

    PYTHONPATH=src python benchmarks/offgrid_validity_scan.py --n 20 --seed 1000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import test_offgrid_validity as V  # noqa: E402


def claims(n: int, seed: int):
    yield "Gaussian k-fold (exact, both relations)", V._check_gaussian, list(V._gaussian_cases(n, seed))
    yield "Laplace k ≤ 2 (exact)", V._check_laplace, list(V._laplace_cases(n, seed + 1))
    yield "randomized response k-fold (exact)", V._check_rr, list(V._rr_cases(n, seed + 2))
    yield "subsampled Gaussian 1 step + replace-one (mpmath)", V._check_psg_one, list(V._psg_one_cases(n, seed + 3))
    yield "subsampled Gaussian T steps (dp-accounting)", V._check_psg_t, list(V._psg_t_cases(max(1, n // 2), seed + 4))
    yield "group(k) 1 step (mpmath, both directions)", V._check_group_one, list(V._group_cases(n, seed + 5))
    rng = V._rng(seed + 6)
    yield "allocation t = 1, k = t (exact)", V._check_allocation_identities, [
        (float(rng.uniform(0.4, 3)), int(rng.integers(2, 60)), V._delta(rng)) for _ in range(n)]
    yield "calibrate_gaussian (exact)", V._check_calibration, [
        (float(10 ** rng.uniform(-2, 1.3)), V._delta(rng), int(rng.integers(1, 1000)), float(rng.uniform(0.1, 5)))
        for _ in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10, help="random cases per claim")
    ap.add_argument("--seed", type=int, default=1000)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'claim':<52} {'cases':>5} {'invalid':>7} {'errors':>6} {'s':>7}")
    for name, check, cases in claims(a.n, a.seed):
        bad = err = 0
        t0 = time.process_time()
        for c in cases:
            try:
                check(*c)
            except AssertionError as exc:
                bad += 1
                print(f"  INVALID {name}: {c}: {str(exc)[:300]}", flush=True)
            except Exception:  # noqa: BLE001 - a crash on valid input is a finding too
                err += 1
                print(f"  ERROR {name}: {c}: {traceback.format_exc(limit=1)[-300:]}", flush=True)
        print(f"{name:<52} {len(cases):>5} {bad:>7} {err:>6} {time.process_time() - t0:>7.1f}", flush=True)


if __name__ == "__main__":
    main()
