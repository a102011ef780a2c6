"""Rényi divergences of the Gaussian random allocation (balls-in-bins), one example in 1 of t steps.

With noise multiplier σ (sensitivity 1) the worst-case pair of output distributions over the t
steps is ([FS25], who show that it dominates adaptive steps as well)

    P = (1/t) Σ_i N(e_i, σ² I_t)   (the example is present and lands in one uniform step),
    Q = N(0, σ² I_t)               (the example is absent).

Write x = σ Z with Z ~ N(0, I_t) under Q and Y_i = exp(Z_i/σ − 1/(2σ²)) (independent log-normals
with mean 1). Then the likelihood ratio is P/Q = M := (1/t) Σ_i Y_i, and

* remove direction: (α − 1)·D_α(P‖Q) = log E_Q[M^α]. For an integer α the multinomial
  expansion with E[Y^n] = exp(n(n − 1)/(2σ²)) gives E[(Σ Y_i)^α] = α!·[z^α] f(z)^t with
  f(z) = Σ_n E[Y^n] z^n/n!. All terms are positive, so the truncated power series f^t is
  computed in log space with no cancellation; one power gives every integer order at once.
* add direction: (α − 1)·D_α(Q‖P) = log E_Q[M^{−s}] with s = α − 1. The Gamma-function
  identity M^{−s} = Γ(s)^{−1} ∫_0^∞ u^{s−1} e^{−uM} du and the independence of the Y_i give
  E_Q[M^{−s}] = Γ(s)^{−1} ∫_0^∞ u^{s−1} φ(u/t)^t du with φ(v) = E[e^{−vY}], a one-dimensional
  integral of a one-dimensional integral, evaluated with the trapezoid rule (spectrally
  accurate for these smooth, rapidly decaying integrands) on grids that cover the dominant
  region, and rounded up by a relative margin far above the quadrature error (checked
  against mpmath in the tests).

Both are exact divergences at integer orders (numerically evaluated), hence convex cumulant
generating functions of α; between integer orders the chord of the CGF is an upper bound.

References:
    [FS25] V. Feldman, M. Shenfeld, Privacy amplification by random allocation,
        arXiv:2502.08202 (2025): the Gaussian pair above as the worst case of 1-out-of-t
        allocation, and the reduction of k-out-of-t to k compositions of 1-out-of-(t/k).
"""

from __future__ import annotations

import math

import numpy as np
from renyi.core._lazy import special

__all__ = ["remove_log_moments", "add_log_moments", "QUADRATURE_MARGIN"]

#: relative margin added to the quadrature value of log E_Q[M^{−s}] (the tests show the
#: trapezoid rule agrees with mpmath to better than 1e-9 relative on the grids used here)
QUADRATURE_MARGIN = 1e-7


def _log_poly_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Coefficients (in log space) of the product of two power series, truncated to len(a).

    All coefficients are positive, so log-space accumulation has no cancellation.
    """
    n = a.size
    out = np.full(n, -np.inf)
    for i in range(n):
        if a[i] == -np.inf:
            continue
        out[i:] = np.logaddexp(out[i:], a[i] + b[: n - i])
    return out


def remove_log_moments(sigma: float, t: int, max_order: int) -> np.ndarray:
    """log E_Q[M^a] for a = 0, 1, ..., max_order (the remove direction, exact).

    Args:
        sigma: noise multiplier σ > 0.
        t: number of steps t ≥ 1.
        max_order: largest integer order ≥ 1.

    Returns:
        Array g with g[a] = (a − 1)·D_a(P‖Q); g[0] = g[1] = 0 up to rounding.
    """
    n = np.arange(max_order + 1, dtype=np.float64)
    log_coeff = n * (n - 1.0) / (2.0 * sigma * sigma) - special.gammaln(n + 1.0)
    result = np.full(max_order + 1, -np.inf)
    result[0] = 0.0
    base = log_coeff
    e = t
    while e:
        if e & 1:
            result = _log_poly_mul(result, base)
        e >>= 1
        if e:
            base = _log_poly_mul(base, base)
    out = result + special.gammaln(n + 1.0) - n * math.log(t)
    out[:2] = 0.0  # E[M^0] = E[M] = 1 exactly
    return np.asarray(out)


def _log_phi(log_v: np.ndarray, sigma: float, z: np.ndarray, log_w: np.ndarray) -> np.ndarray:
    """log E[exp(−vY)] at v = e^{log_v} for Y = exp(Z/σ − 1/(2σ²)), Z ~ N(0, 1), on a trapezoid
    grid in z (weights e^{log_w}).

    Uses log1p(E[expm1(−vY)]) where the value is close to 0, so that t·log φ(v/t) keeps its
    relative accuracy for small v; vY is formed in log space (an overflow to ∞ gives e^{−∞} = 0).
    """
    log_y = z / sigma - 1.0 / (2.0 * sigma * sigma)
    out = np.empty(log_v.shape)
    w = np.exp(log_w)
    with np.errstate(over="ignore"):
        for lo in range(0, log_v.size, 256):
            lv = log_v[lo : lo + 256, None]
            vy = np.exp(lv + log_y[None, :])
            small = lv[:, 0] < math.log(1e-2)
            res = np.empty(lv.shape[0])
            if np.any(small):
                m = np.sum(np.expm1(-vy[small]) * w[None, :], axis=1)
                res[small] = np.log1p(np.maximum(m, -1.0))
            big = ~small
            if np.any(big):
                res[big] = special.logsumexp(-vy[big] + log_w[None, :], axis=1)
            out[lo : lo + 256] = res
    return out


def add_log_moments(sigma: float, t: int, max_order: int, hx: float = 0.1, hz_rel: float = 0.2) -> np.ndarray:
    """log E_Q[M^{−(a−1)}] for a = 0, 1, ..., max_order (the add direction), rounded up.

    Args:
        sigma: noise multiplier σ > 0.
        t: number of steps t ≥ 1.
        max_order: largest integer order ≥ 2.
        hx: trapezoid step in log u (outer integral).
        hz_rel: trapezoid step in z, relative to min(σ, 1) (inner integral).

    Returns:
        Array h with h[a] ≥ (a − 1)·D_a(Q‖P) for a ≥ 2 (a relative margin of
        :data:`QUADRATURE_MARGIN` covers the quadrature error); h[0] = h[1] = 0.
    """
    s = np.arange(1, max_order, dtype=np.float64)
    s_max = float(max_order - 1)
    hz = hz_rel * min(sigma, 1.0)
    inv2s2 = 1.0 / (2.0 * sigma * sigma)
    x_lo = -40.0
    acc = np.full(s.size, -np.inf)
    peak = -np.inf
    x0 = x_lo
    chunk = 400
    prev_last = np.inf
    while True:
        x = x0 + hx * np.arange(chunk)
        log_v_max = float(x[-1]) - math.log(t)
        # φ(v) needs Z down to where v·Y ≈ 1, i.e. Z ≈ −σ·log v + 1/(2σ), with room for the tail
        # ... but never further than 40 below the saddle point Z ≈ −s/(tσ) of the joint integral
        # (all t coordinates small), where the Gaussian weight is below e^{−40·|Z|} of the peak
        z_lo = min(-12.0, max(-sigma * max(log_v_max, 0.0) + 0.5 / sigma - 12.0,
                              -(s_max / (t * sigma) + 0.5 / sigma + 40.0)))
        z = np.arange(z_lo, 12.0 + hz, hz)
        log_w = -0.5 * z * z - 0.5 * math.log(2.0 * math.pi) + math.log(hz)
        log_phi_t = t * _log_phi(x - math.log(t), sigma, z, log_w)
        body = s[:, None] * x[None, :] + log_phi_t[None, :]
        acc = np.logaddexp(acc, special.logsumexp(body, axis=1))
        top = body[-1]  # s = s_max: the slowest to decay in x
        peak = max(peak, float(np.max(top)))
        last = float(top[-1])
        # stop once the largest order's integrand is decreasing and 60 nats below its peak;
        # smaller orders differ by (s − s_max)·x, which decays even faster
        if last < peak - 60.0 and last < prev_last and top[-1] < top[-2]:
            break
        prev_last = last
        x0 = float(x[-1]) + hx
        if x0 > 40.0 + 10.0 * s_max * inv2s2 * 2.0 + 50.0 * math.log(t + 1.0):  # pragma: no cover
            raise ArithmeticError("allocation quadrature did not converge")
    del inv2s2
    log_int = acc + math.log(hx)
    # tail below x_lo: ∫_0^{e^{x_lo}} u^{s−1} du ≤ e^{s·x_lo}/s (φ ≤ 1)
    log_int = np.logaddexp(log_int, s * x_lo - np.log(s))
    h = log_int - special.gammaln(s)
    h = h + QUADRATURE_MARGIN * np.abs(h) + 1e-12
    return np.concatenate(([0.0, 0.0], h))
