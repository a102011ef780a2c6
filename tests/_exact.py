"""Independent ground truth for the tests: the exact (ε, δ) curve of the Gaussian mechanism,
computed with mpmath at 40 digits from Balle & Wang (2018) Thm 8, sharing no code with renyi."""

import mpmath as mp

mp.mp.dps = 40


def gaussian_delta(mu: float, eps: float) -> mp.mpf:
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(mu / 2 - eps / mu) - mp.e**eps * mp.ncdf(-mu / 2 - eps / mu)


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Exact ε(δ) by bisection (δ(ε) is decreasing in ε)."""
    target = mp.mpf(delta)
    if gaussian_delta(mu, 0) <= target:
        return 0.0
    lo, hi = mp.mpf(0), mp.mpf(1)
    while gaussian_delta(mu, hi) > target:
        hi *= 2
    for _ in range(80):
        mid = (lo + hi) / 2
        if gaussian_delta(mu, mid) > target:
            lo = mid
        else:
            hi = mid
    return float(lo)
