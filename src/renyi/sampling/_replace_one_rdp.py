"""The RDP curve of the replace-one pair of a Poisson-subsampled Gaussian, certified.

Replacing one record under Poisson sampling at rate q with noise multiplier σ (μ = 1/σ, in
units of the clipping norm) gives the pair (Lebeda, Regehr, Kamath & Steinke 2024)

    P = (1−q)N(0, 1) + qN(μ, 1)    against    Q = (1−q)N(0, 1) + qN(−μ, 1),

symmetric under x ↦ −x, so D_α(P‖Q) = D_α(Q‖P). With φ the standard normal density,
A = 1−q + q e^{μx−μ²/2} = (dP/dN(0,1))(x) and B = 1−q + q e^{−μx−μ²/2}, the order-α moment is
I = ∫φ A^α B^{1−α} and D_α = log I/(α−1). As ∫φA = ∫φB = 1,

    J = I − 1 = ∫ φ B·h(A/B),    h(r) = r^α − 1 − α(r − 1) ≥ 0,

a non-negative integrand with no cancellation against 1 (J is as small as 1e-14 at q = 1e-7).

**Certified quadrature.** ψ = φB·h(A/B) is analytic in the strip |Im z| < a, a = min(1, π/(4μ))
(B has no zero there: Re B(x+ib) ≥ cos(μb)·B(x) > 0). On the strip |φ(z)| = φ(x)e^{b²/2},
|A(z)| ≤ A(x), cos(μb)B(x) ≤ |B(z)| ≤ B(x) and |A(z) − B(z)| ≤ A(x) + B(x), so
∫|ψ(x+ib)|dx ≤ M = e^{a²/2}(K·I + 1 + 2α) with K = cos(μa)^{1−α}. The trapezoid sum T_h on
the whole grid x_k = kh then satisfies |T_h − J| ≤ 2M/(e^{2πa/h} − 1) (Trefethen & Weideman
2014, Thm 5.1); writing c for 2e^{a²/2}/(e^{2πa/h} − 1) and I = 1 + J,

    J ≤ (T_h + c(K + 1 + 2α))/(1 − cK)        (cK < 1).

The grid is cut at L < 0 < R; beyond them ψ is bounded by Gaussian-times-exponential terms
(x > 0: A ≤ e^{μx}, 1−q ≤ B ≤ 1; x < 0: A ≤ 1, B ≤ e^{−μx}) that decrease past the cuts, so
the missing terms of T_h are at most their integrals from R − h (L + h), added in closed form
(Φ̄). The summands are computed in log space to a relative 1e-12 or better, and 1e-9 of T_h
is added for it. The result is an upper bound on D_α at every real α > 1 (not only integers).

References:
    Lebeda, Regehr, Kamath, Steinke (2024), Avoiding Pitfalls for Privacy Accounting of
        Subsampled Mechanisms under Composition, arXiv:2405.20769.
    Trefethen, Weideman (2014), The exponentially convergent trapezoidal rule, SIAM Review 56,
        Thm 5.1.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from renyi.core._lazy import special

__all__ = ["replace_one_rdp"]

_MARGIN = 1e-9
#: the longest quadrature grid (beyond it the curve is the cap: huge orders are never the optimum)
_MAX_POINTS = 200_000
#: the series of h(r) is used where |α(r − 1)| is below this (and |r − 1| < it)
_SERIES = 0.05


def _lse(a: np.ndarray) -> float:
    m = float(np.max(a))
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.sum(np.exp(a - m))))


def _log_psi(x: np.ndarray, mu: float, q: float, alpha: float) -> np.ndarray:
    """log ψ(x) = log φ(x) + log B(x) + log h(A/B), elementwise (−∞ where ψ = 0)."""
    lq, l1q = math.log(q), math.log1p(-q)
    log_a = np.logaddexp(l1q, lq + mu * x - 0.5 * mu * mu)
    log_b = np.logaddexp(l1q, lq - mu * x - 0.5 * mu * mu)
    y = np.abs(mu * x)
    with np.errstate(divide="ignore"):
        # |t| = |A/B − 1| = 2q e^{−μ²/2}|sinh(μx)|/B, without cancellation
        log_abs_t = math.log(2.0 * q) - 0.5 * mu * mu + y + np.log1p(-np.exp(-2.0 * y)) - math.log(2.0) - log_b
    t_sign = np.sign(x)
    abs_t = np.exp(np.minimum(log_abs_t, 700.0))
    t = t_sign * abs_t
    u = alpha * (log_a - log_b)  # α log r
    out = np.full(x.shape, -np.inf)
    small = (alpha * abs_t < _SERIES) & (abs_t < _SERIES) & (abs_t > 0)
    if np.any(small):
        ts = t[small]
        total = np.zeros(ts.shape)
        coef = alpha * (alpha - 1.0) / 2.0
        power = ts * ts
        for k in range(2, 14):
            total = total + coef * power
            coef = coef * (alpha - k) / (k + 1.0)
            power = power * ts
        with np.errstate(divide="ignore", invalid="ignore"):
            out[small] = np.log(total)
    big = ~small & (abs_t > 0)
    if np.any(big):
        ub, tb = u[big], t[big]
        lh = np.empty(ub.shape)
        huge = ub > 30.0
        one_at = 1.0 + alpha * tb  # h = r^α − (1 + αt)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # r^α dominates: log h = u + log1p(−(1 + αt)e^{−u}) (h > 0 so the argument is > −1)
            pos = huge & (one_at > 0)
            lh[pos] = ub[pos] + np.log1p(-np.exp(np.log(one_at[pos]) - ub[pos]))
            neg = huge & ~(one_at > 0)
            lh[neg] = np.logaddexp(ub[neg], np.log(np.maximum(-one_at[neg], 0.0)))
            mid = ~huge
            lh[mid] = np.log(np.expm1(ub[mid]) - alpha * tb[mid])
        out[big] = lh
    res: np.ndarray = -0.5 * x * x - 0.5 * math.log(2.0 * math.pi) + log_b + out
    return res


def _log_sf(z: float) -> float:
    """log Φ̄(z)."""
    return float(special.log_ndtr(-z))


def _log_tails(mu: float, q: float, alpha: float, lo: float, hi: float) -> float:
    """log of an upper bound on ∫_{hi}^∞ + ∫_{−∞}^{lo} of the bound on ψ (see the module)."""
    l1q = math.log1p(-q)
    la = math.log(alpha)
    # x > 0: ψ ≤ φ(x)[(1−q)^{1−α}e^{αμx} + 1 + α(e^{μx} + 1)];  ∫_X^∞ φe^{cx} = e^{c²/2}Φ̄(X − c)
    right = [(1.0 - alpha) * l1q + 0.5 * (alpha * mu) ** 2 + _log_sf(hi - alpha * mu), _log_sf(hi),
             la + 0.5 * mu * mu + _log_sf(hi - mu), la + _log_sf(hi)]
    # x < 0: ψ ≤ φ(x)[(1−q)^{1−α} + e^{−μx} + α(1 + e^{−μx})]
    x = -lo
    left = [(1.0 - alpha) * l1q + _log_sf(x), 0.5 * mu * mu + _log_sf(x - mu), la + _log_sf(x),
            la + 0.5 * mu * mu + _log_sf(x - mu)]
    return _lse(np.array(right + left))


def _log_j_upper(mu: float, q: float, alpha: float, h: float) -> tuple[float, float]:
    """(log of the certified upper bound on J, log of the error terms' share) at step h."""
    a = min(1.0, math.pi / (4.0 * mu))
    log_k = (1.0 - alpha) * math.log(math.cos(mu * a))
    lc = math.log(2.0) + 0.5 * a * a - (2.0 * math.pi * a / h + math.log(-math.expm1(-2.0 * math.pi * a / h)))
    if lc + log_k > math.log(0.5):
        return math.inf, math.inf
    extra = (1.0 - alpha) * math.log1p(-q) if q < 1.0 else 0.0
    reach = 12.0 + math.sqrt(2.0 * (745.0 + max(extra, 0.0) + math.log(alpha + 2.0)))
    lo, hi = -(mu + reach), alpha * mu + reach
    if (hi - lo) / h > _MAX_POINTS:
        return math.inf, math.inf  # too long a grid (huge orders): the caller uses its caps
    x = np.arange(math.floor(lo / h), math.ceil(hi / h) + 1, dtype=np.float64) * h
    lt = _lse(_log_psi(x, mu, q, alpha)) + math.log(h) + math.log1p(_MARGIN)
    tails = _log_tails(mu, q, alpha, float(x[0]) + h, float(x[-1]) - h) if x.size else math.inf
    err = lc + _lse(np.array([log_k, math.log1p(2.0 * alpha)]))
    num = _lse(np.array([lt, err, tails]))
    den = math.log1p(-math.exp(lc + log_k))
    return num - den, _lse(np.array([err, tails])) - lt


@lru_cache(maxsize=4096)
def replace_one_rdp(mu: float, q: float, alpha: float) -> float:
    """A certified upper bound on D_α(P‖Q) of the replace-one pair (see the module), α > 1.

    ``mu`` = Δ/σ > 0, ``q`` ∈ [0, 1]. Also at most 2αμ² (the Gaussian pair N(μ) against
    N(−μ): joint quasi-convexity of Rényi divergence)."""
    if q == 0.0 or mu == 0.0:
        return 0.0
    cap = 2.0 * alpha * mu * mu
    if q == 1.0 or not math.isfinite(cap):
        return cap
    a = min(1.0, math.pi / (4.0 * mu))
    # aim the strip's error at e^{−40} of a rough J (α(α−1)q²(e^{μ²} − 1), a hundredth of it)
    log_j_est = math.log(alpha * (alpha - 1.0) / 2.0) + 2.0 * math.log(q) + min(mu * mu, 700.0) + math.log(
        -math.expm1(-min(mu * mu, 700.0))) - math.log(100.0)
    log_k = (1.0 - alpha) * math.log(math.cos(mu * a))
    need = math.log(2.0) + 0.5 * a * a + max(log_k, math.log1p(2.0 * alpha)) - min(log_j_est, 0.0) + 40.0
    h = 2.0 * math.pi * a / need
    for _ in range(3):
        lj, share = _log_j_upper(mu, q, alpha, h)
        if share < -20.0:
            break
        h /= 2.0
    if not math.isfinite(lj):
        return cap
    d = float(np.logaddexp(0.0, lj)) / (alpha - 1.0)
    return min(cap, math.nextafter(d, math.inf))
