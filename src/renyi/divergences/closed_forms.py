"""Closed forms of Rényi divergences: Gaussian, Laplace, Bernoulli and randomized response,
the pure-DP curve, discrete Laplace and Gaussian, exponential families, Poisson, exponential.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.core._lazy import linalg, special
from renyi.core import _logmath as lm
from renyi.core._logmath import log1mexp, log_expm1
from renyi.core._validation import (
    NONNEGATIVE,
    POSITIVE,
    PROBABILITY,
    REAL,
    check_array,
    check_int,
)
from renyi.core.errors import DomainError
from renyi.divergences.discrete import (
    _divergence_from_loss,
    _log1p_over,
    _loss_from_logs,
    _orders,
    _out,
)

__all__ = ["gaussian_divergence", "gaussian_divergence_unequal", "mvn_divergence", "laplace_divergence", "bernoulli_divergence", "randomized_response_divergence", "kary_randomized_response_divergence", "pure_dp_curve", "discrete_laplace_divergence", "discrete_gaussian_divergence", "discrete_gaussian_normalizer", "exponential_family_divergence", "poisson_divergence", "exponential_divergence"]

# --------------------------------------------------------------------------------------------
# closed forms
# --------------------------------------------------------------------------------------------


def gaussian_divergence(mu1: ArrayLike, mu2: ArrayLike, sigma: float, alpha: ArrayLike) -> float | np.ndarray:
    """D_α(N(μ₁, σ²I) ‖ N(μ₂, σ²I)) = α‖μ₁ − μ₂‖²/(2σ²).

    Args:
        mu1: mean of P (scalar or vector, finite).
        mu2: mean of Q (same shape).
        sigma: common standard deviation, in (0, ∞).
        alpha: order(s) in [0, ∞]; α = ∞ gives ∞ unless μ₁ = μ₂.

    References:
        [BS16] Lemma 16, 17.

    Examples:
        >>> gaussian_divergence([0.0, 0.0], [3.0, 4.0], 5.0, 2.0)
        1.0
    """
    m1 = check_array("mu1", mu1)
    m2 = check_array("mu2", mu2)
    if m1.shape != m2.shape:
        raise DomainError(f"mu2 must have the same shape as mu1 {m1.shape}; got {m2.shape}", name="mu2")
    for nm, m in (("mu1", m1), ("mu2", m2)):
        if not np.all(np.isfinite(m)):
            raise DomainError(f"{nm} must be finite; got {m!r}", name=nm)
    s = POSITIVE.check("sigma", sigma)
    alphas, scalar = _orders(alpha)
    d2 = float(np.sum((m1 - m2) ** 2))
    rho = d2 / (2.0 * s * s)
    with np.errstate(invalid="ignore"):
        out = np.where(np.isinf(alphas), np.inf if rho > 0 else 0.0, alphas * rho)
    return _out(out, scalar)


def _gauss_unequal_terms(d2: np.ndarray, v1: np.ndarray, v2: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """Σ_j D_α(N(0, v1_j) ‖ N(√d2_j, v2_j)) for each α (independent coordinates)."""
    d2 = np.asarray(d2, dtype=np.float64)[:, None]
    v1 = np.asarray(v1, dtype=np.float64)[:, None]
    v2 = np.asarray(v2, dtype=np.float64)[:, None]
    a = np.asarray(alphas, dtype=np.float64).reshape(-1)[None, :]
    r = 1.0 - v1 / v2  # σ_α²/σ₂² = 1 + (α−1)·r
    base = -0.5 * np.log1p(-r)  # log σ₂/σ₁
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        finite_a = np.isfinite(a)
        lam = np.where(finite_a, a - 1.0, 0.0)
        v = 1.0 + lam * r
        ok = v > 0
        # log1p(λr)/λ is the stable form near α = 1; its λ → 0 limit is r.
        term = base - 0.5 * _log1p_over(lam, r) + a * d2 / (2.0 * v2 * np.where(ok, v, 1.0))
        term = np.where(ok, term, np.inf)
        # α = ∞: D_∞ = log σ₂/σ₁ + Δ²/(2(σ₂² − σ₁²)) when σ₁ < σ₂; ∞ when σ₁ > σ₂; for equal
        # variances ∞ unless the means agree.
        t_inf = np.where(r > 0, base + d2 / (2.0 * v2 * np.where(r > 0, r, 1.0)),
                         np.where((r == 0) & (d2 == 0), 0.0, np.inf))
        term = np.where(finite_a, term, t_inf)
    term = np.maximum(term, 0.0)
    result: np.ndarray = term.sum(axis=0)
    return result


def gaussian_divergence_unequal(mu1: float, s1: float, mu2: float, s2: float,
                                alpha: ArrayLike) -> float | np.ndarray:
    """D_α(N(μ₁, s₁²) ‖ N(μ₂, s₂²)) for univariate Gaussians with possibly unequal variances.

    With σ_α² = αs₂² + (1−α)s₁²: log(s₂/s₁) + log(s₂²/σ_α²)/(2(α−1)) + α(μ₁−μ₂)²/(2σ_α²) if
    σ_α² > 0 and +∞ otherwise. Evaluated as log(s₂/s₁) − log1p((α−1)r)/(2(α−1)) + ... with
    r = 1 − s₁²/s₂², which is stable at α → 1 and equals the KL at α = 1.

    Args:
        mu1: the first mean (finite).
        s1: the first standard deviation, in (0, ∞).
        mu2: the second mean (finite).
        s2: the second standard deviation, in (0, ∞).
        alpha: order(s) in [0, ∞].

    References:
        [vEH14] eq. (10); [GAL13].

    Examples:
        >>> round(gaussian_divergence_unequal(0.0, 1.0, 1.0, 2.0, 1.0), 15)
        0.443147180559945
    """
    m1 = REAL.check("mu1", mu1)
    m2 = REAL.check("mu2", mu2)
    a1 = POSITIVE.check("s1", s1)
    a2 = POSITIVE.check("s2", s2)
    if not (math.isfinite(a1) and math.isfinite(a2)):
        raise DomainError(f"s1 and s2 must be in (0, inf); got {s1!r}, {s2!r}", name="s1")
    alphas, scalar = _orders(alpha)
    out = _gauss_unequal_terms(np.array([(m1 - m2) ** 2]), np.array([a1 * a1]), np.array([a2 * a2]), alphas)
    return _out(out.reshape(alphas.shape), scalar)


def _check_cov(name: str, cov: Any, d: int) -> np.ndarray:
    c = check_array(name, cov)
    if c.ndim == 0 and d == 1:
        c = c.reshape(1, 1)
    if c.shape != (d, d):
        raise DomainError(f"{name} must have shape ({d}, {d}); got {c.shape}", name=name)
    if not np.all(np.isfinite(c)) or not np.allclose(c, c.T, rtol=1e-12, atol=0.0):
        raise DomainError(f"{name} must be a finite symmetric matrix; got {c.tolist()!r}", name=name)
    try:
        np.linalg.cholesky(c)
    except np.linalg.LinAlgError:
        raise DomainError(f"{name} must be positive definite; got {c.tolist()!r}", name=name) from None
    result: np.ndarray = 0.5 * (c + c.T)
    return result


def mvn_divergence(mu1: ArrayLike, cov1: ArrayLike, mu2: ArrayLike, cov2: ArrayLike,
                   alpha: ArrayLike) -> float | np.ndarray:
    """D_α(N(μ₁, Σ₁) ‖ N(μ₂, Σ₂)) for general positive-definite covariances.

    Computed in the basis that whitens Σ₂ and diagonalises Σ₁ (generalised eigenproblem
    Σ₁v = sΣ₂v): the pair becomes a product of independent univariate pairs
    N(0, s_j) ‖ N(δ_j, 1), whose divergences add ([vEH14]). This equals
    (α/2)Δᵀ Σ_α⁻¹ Δ − log(det Σ_α / (det Σ₁^{1−α} det Σ₂^α))/(2(α−1)) with
    Σ_α = αΣ₂ + (1−α)Σ₁, and +∞ where Σ_α is not positive definite.

    Args:
        mu1: the first mean vector (length d).
        cov1: the first covariance, d×d symmetric positive-definite.
        mu2: the second mean vector (length d).
        cov2: the second covariance, d×d symmetric positive-definite.
        alpha: order(s) in [0, ∞].

    References:
        [GAL13] / Gil (2011) Thm 1.2.19.

    Examples:
        >>> S = [[2.0, 0.5], [0.5, 1.0]]
        >>> round(mvn_divergence([0, 0], S, [1, 2], S, 2.0), 12)
        4.0
    """
    m1 = check_array("mu1", mu1).reshape(-1)
    m2 = check_array("mu2", mu2).reshape(-1)
    if m1.shape != m2.shape:
        raise DomainError(f"mu2 must have the same shape as mu1 {m1.shape}; got {m2.shape}", name="mu2")
    if not (np.all(np.isfinite(m1)) and np.all(np.isfinite(m2))):
        raise DomainError("mu1 and mu2 must be finite", name="mu1")
    d = m1.size
    c1 = _check_cov("cov1", cov1, d)
    c2 = _check_cov("cov2", cov2, d)
    alphas, scalar = _orders(alpha)
    s, V = linalg.eigh(c1, c2)  # Vᵀ Σ₂ V = I, Vᵀ Σ₁ V = diag(s)
    delta = V.T @ (m1 - m2)
    out = _gauss_unequal_terms(delta**2, s, np.ones(d), alphas)
    return _out(out.reshape(alphas.shape), scalar)


def _laplace_log1p_over(u: np.ndarray) -> np.ndarray:
    """log1p(u)/u for u ∈ (−1, ∞), with the removable singularity at 0 filled in."""
    small = np.abs(u) < 1e-4
    us = np.where(small, 1.0, u)
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = np.log1p(us) / us
    # Taylor series 1 − u/2 + u²/3 − u³/4: error < u⁴/5 < 2e-17 for |u| < 1e-4.
    series = 1.0 - u * (0.5 - u * (1.0 / 3.0 - u * 0.25))
    return np.where(small, series, direct)


def laplace_rdp_curve(t: float, alpha: ArrayLike) -> np.ndarray | float:
    """D_α(Lap(0, b) ‖ Lap(Δ, b)) with t = Δ/b, for α ∈ [1, ∞] ([Mir17] Prop. 6).

    Uses the stable form t + log1p(c·expm1(−(2α−1)t))/(α−1) with c = (α−1)/(2α−1), written
    as t + x·[log1p(cx)/(cx)]/(2α−1) with x = expm1(−(2α−1)t) ∈ (−1, 0], which has no
    0/0 at α = 1 (the KL limit t + e^{−t} − 1 falls out) and no overflow at large α.

    Args:
        t: Δ/b ≥ 0.
        alpha: orders in [1, ∞] (vectorized).

    Returns:
        The exact divergence (≥ 0), ``t`` at α = ∞.
    """
    a = np.asarray(alpha, dtype=np.float64)
    s = 2.0 * a - 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.expm1(-np.where(np.isinf(a), 1.0, s) * t)
        c = np.where(np.isinf(a), 0.5, (a - 1.0) / np.where(np.isinf(a), 1.0, s))
        out = t + x * _laplace_log1p_over(c * x) / np.where(np.isinf(a), np.inf, s)
    out = np.where(np.isinf(a), t, out)
    if t == 0.0:  # equal laws: 0 at every order (2α − 1 overflows past α ≈ 9e307, and ∞·0 was NaN)
        out = np.zeros_like(out)
    out = np.clip(out, 0.0, t)  # 0 ≤ D_α ≤ D_∞ = t; clips only round-off
    return out[()] if out.ndim == 0 else out


def laplace_divergence(t: float, alpha: ArrayLike) -> float | np.ndarray:
    """D_α(Lap(μ₁, b) ‖ Lap(μ₂, b)) as a function of t = |μ₁ − μ₂|/b.

    Stable form t + log1p((α−1)·expm1(−(2α−1)t)/(2α−1))/(α−1) ([Mir17] Prop. 6), with its
    own branches: α = 1 gives t + e^{−t} − 1, α = ∞ gives t, α = ½ (removable singularity)
    gives t − 2 log(1 + t/2), α = 0 gives 0. For α < ½ the inner term is formed in log space so
    that large t does not overflow.

    Args:
        t: Δ/b in [0, ∞) (finite).
        alpha: order(s) in [0, ∞].

    References:
        [Mir17] Prop 6; the vector case is derived here and checked numerically in the tests.

    Examples:
        >>> round(float(laplace_divergence(1.0, 0.5)), 15)
        0.189069783783671
    """
    tt = NONNEGATIVE.check("t", t)
    if not math.isfinite(tt):
        raise DomainError(f"t must be in [0, inf) and finite; got {t!r}", name="t", value=t)
    alphas, scalar = _orders(alpha)
    a = alphas.reshape(-1)
    out = np.empty_like(a)
    ge1 = a >= 1.0
    if np.any(ge1):  # the vectorized stable form (also what the Laplace mechanism uses)
        out[ge1] = np.asarray(laplace_rdp_curve(tt, a[ge1]), dtype=np.float64)
    with np.errstate(all="ignore"):
        for i in np.flatnonzero(~ge1):
            al = a[i]
            if tt == 0.0 or al == 0.0:
                out[i] = 0.0
            else:
                lam = al - 1.0
                s = 2.0 * al - 1.0
                if s > 0 or s == 0:
                    # (α−1)·expm1(−st)/s, with its s → 0 limit −(α−1)t at α = ½.
                    inner = lam * (math.expm1(-s * tt) / s if s != 0 else -tt)
                    out[i] = tt + math.log1p(inner) / lam
                else:
                    # α ∈ (0, ½): inner = (1−α)/|s| · expm1(|s|t) > 0 may overflow; log1p in log space.
                    log_inner = math.log(-lam) - math.log(-s) + float(log_expm1(-s * tt))
                    out[i] = tt + float(np.logaddexp(0.0, log_inner)) / lam
    return _out(np.maximum(out, 0.0).reshape(alphas.shape), scalar)


def bernoulli_divergence(p: float, q: float, alpha: ArrayLike) -> float | np.ndarray:
    """D_α(Ber(p) ‖ Ber(q)) for p, q ∈ [0, 1] (zeros follow §1.1's support conventions).

    Args:
        p: the first success probability, in [0, 1].
        q: the second success probability, in [0, 1].
        alpha: order(s) in [0, ∞].

    References:
        [Mir17] Table II.

    Examples:
        >>> round(bernoulli_divergence(0.3, 0.1, 3.0), 12)
        0.569470167028
    """
    pp = PROBABILITY.check("p", p)
    qq = PROBABILITY.check("q", q)
    alphas, scalar = _orders(alpha)
    with np.errstate(divide="ignore"):
        logp = np.log(np.array([pp, 1.0])) + np.array([0.0, math.log1p(-pp) if pp < 1 else -math.inf])
        logq = np.log(np.array([qq, 1.0])) + np.array([0.0, math.log1p(-qq) if qq < 1 else -math.inf])
    logm, z = _loss_from_logs(logp, logq)
    return _out(_divergence_from_loss(logm, z, alphas), scalar)


def randomized_response_divergence(p: float, alpha: ArrayLike) -> float | np.ndarray:
    """D_α of binary randomized response that reports the truth with probability p.

    This is D_α(Ber(p) ‖ Ber(1 − p)); at p = e^ε/(1+e^ε) it equals :func:`pure_dp_curve`.

    Args:
        p: truth probability in [0, 1] (p = ½ gives 0; p ∈ {0, 1} gives ∞ for α > 0).
        alpha: order(s) in [0, ∞].

    References:
        [Mir17] Table II.

    Examples:
        >>> round(randomized_response_divergence(0.75, 1.0), 15)
        0.549306144334055
    """
    pp = PROBABILITY.check("p", p)
    return bernoulli_divergence(pp, 1.0 - pp, alpha)


def kary_randomized_response_divergence(p: float, k: int, alpha: ArrayLike) -> float | np.ndarray:
    """D_α of k-ary randomized response under replace-one adjacency.

    The mechanism keeps the true value with probability 1 − p and otherwise reports a uniform
    draw from the k values, so the true value has probability 1 − p + p/k and each other value
    p/k. The divergence is computed exactly from the three distinct atoms, the last with
    multiplicity k − 2.

    Args:
        p: randomisation probability in [0, 1].
        k: number of values, an integer ≥ 2.
        alpha: order(s) in [0, ∞].

    References:
        [Mir17] Table II (derived; agrees with dp_accounting's replace-one formula).

    Examples:
        >>> round(kary_randomized_response_divergence(0.5, 2, 1.0), 15)
        0.549306144334055
    """
    pp = PROBABILITY.check("p", p)
    kk = check_int("k", k, minimum=2)
    alphas, scalar = _orders(alpha)
    with np.errstate(divide="ignore"):
        la = math.log1p(-pp * (kk - 1) / kk) if pp * (kk - 1) / kk < 1 else -math.inf
        lb = math.log(pp) - math.log(kk) if pp > 0 else -math.inf
        logp = np.array([la, lb, lb])
        logq = np.array([lb, la, lb])
        logw = np.array([0.0, 0.0, math.log(kk - 2) if kk > 2 else -math.inf])
    logm, z = _loss_from_logs(logp, logq, logw)
    keep = logm > -np.inf
    return _out(_divergence_from_loss(logm[keep], z[keep], alphas), scalar)


def pure_dp_curve(epsilon: ArrayLike, alpha: ArrayLike) -> float | np.ndarray:
    """F_ε(α): the exact RDP curve of the worst ε-DP pair (randomized response).

    F_ε(α) = [αε + log1p(e^{ε(1−2α)}) − log(1+e^ε)]/(α−1) (overflow-free form). Near α = 1
    (|α−1|·ε ≤ 1) the stable form log1p(S)/(α−1) is used, with
    S = [expm1(ε)·expm1(a) + 4 sinh²(a/2)]/(1+e^ε), a = (α−1)ε — a sum of two non-negative
    terms for α > 1, so there is no cancellation. Branches: F_ε(1) = ε·tanh(ε/2),
    F_ε(∞) = ε, F_ε(0) = 0. ``epsilon`` and ``alpha`` broadcast against each other.

    Args:
        epsilon: ε ∈ [0, ∞), finite (scalar or array).
        alpha: order(s) in [0, ∞].

    Returns:
        F_ε(α) ≤ min(ε, αε²/2); float when both inputs are scalars.

    References:
        [BS16] proof of Prop 19.

    Examples:
        >>> round(float(pure_dp_curve(1.0, 2.0)), 15)
        0.735325664055519
        >>> float(pure_dp_curve(500.0, 1e6))
        500.0
    """
    eps_scalar = np.ndim(epsilon) == 0
    if eps_scalar:
        e = np.array(NONNEGATIVE.check("epsilon", epsilon))
    else:
        e = NONNEGATIVE.check_array("epsilon", epsilon)
    if not np.all(np.isfinite(e)):
        raise DomainError(f"epsilon must be in [0, inf) and finite; got {epsilon!r}", name="epsilon")
    alphas, a_scalar = _orders(alpha)
    if a_scalar:
        alphas = alphas.reshape(())
    e, a = (np.array(v, dtype=np.float64) for v in np.broadcast_arrays(e, alphas))
    e1, a1 = e.reshape(-1), a.reshape(-1)
    with np.errstate(all="ignore"):
        finite_a = np.isfinite(a1)
        lam = np.where(finite_a, a1 - 1.0, 1.0)
        x = lam * e1
        safe_lam = np.where(lam == 0.0, 1.0, lam)
        # General (overflow-free) form.
        out = (a1 * e1 + np.logaddexp(0.0, e1 * (1.0 - 2.0 * a1)) - np.logaddexp(0.0, e1)) / safe_lam
        # Stable form for 0 < a ≤ 1 (no cancellation: both terms of S are ≥ 0).
        pos = np.flatnonzero((x > 0) & (x <= 1.0) & (e1 > 0))
        if pos.size:
            ap, ep = x[pos], e1[pos]
            log_s = np.logaddexp(log_expm1(ep) + np.log(np.expm1(ap)),
                                 math.log(4.0) + 2.0 * np.log(np.sinh(ap / 2.0)))
            log_s -= np.logaddexp(0.0, ep)
            out[pos] = np.log1p(np.exp(log_s)) / safe_lam[pos]
        # −1 ≤ a < 0 (orders below 1): mild cancellation is acceptable there.
        neg = np.flatnonzero((x < 0) & (x >= -1.0))
        if neg.size:
            an, en = x[neg], e1[neg]
            s_neg = special.expit(en) * np.expm1(an) + special.expit(-en) * np.expm1(-an)
            out[neg] = np.log1p(s_neg) / safe_lam[neg]
        out = np.where(lam == 0.0, e1 * np.tanh(e1 / 2.0), out)
        out = np.where(e1 == 0.0, 0.0, out)
        out = np.where(finite_a, out, e1)
        out = np.where(a1 == 0.0, 0.0, out)
        out = np.clip(out, 0.0, e1).reshape(e.shape)
    if eps_scalar and a_scalar:
        return float(out)
    return np.asarray(out, dtype=np.float64)


def discrete_laplace_divergence(t: float, shift: int, alpha: ArrayLike) -> float | np.ndarray:
    """D_α(DLap(0, t) ‖ DLap(d, t)), P(x) ∝ e^{−|x|/t} on ℤ, integer shift d.

    Computed exactly from the privacy-loss law (derived here; checked numerically in the tests): with u = 1/t and r = e^{−u},
    Z = du with probability 1/(1+r), Z = −du with probability r^d/(1+r), and Z = (d − 2x)u with
    probability (1−r)r^x/(1+r) for x = 1, …, d−1. Cost O(d). D_∞ = d/t. For d = 1 this equals
    F_{1/t}(α).

    Args:
        t: scale in (0, ∞). shift: integer d (its absolute value is used).
        alpha: order(s) in [0, ∞].

    Examples:
        >>> round(float(discrete_laplace_divergence(2.0, 3, 2.0)), 14)
        1.13790575860572
    """
    tt = POSITIVE.check("t", t)
    if not math.isfinite(tt):
        raise DomainError(f"t must be in (0, inf) and finite; got {t!r}", name="t", value=t)
    d = abs(check_int("shift", shift, minimum=-(2**62)))
    alphas, scalar = _orders(alpha)
    if d == 0:
        return _out(np.zeros(alphas.shape), scalar)
    u = 1.0 / tt
    l1pr = math.log1p(math.exp(-u))
    x = np.arange(1, d, dtype=np.float64)
    logm = np.concatenate([[-l1pr, -d * u - l1pr], float(log1mexp(-u)) - x * u - l1pr])
    z = np.concatenate([[d * u, -d * u], (d - 2.0 * x) * u])
    return _out(_divergence_from_loss(logm, z, alphas), scalar)


def _log_theta_ratio(sigma: float, c: np.ndarray) -> np.ndarray:
    """log(θ_σ(c)/θ_σ(0)) for c ∈ [−½, ½]: log1p of :func:`_theta_ratio_m1` where the ratio
    is above ½, else the difference of the two log-sums (below σ ≈ 0.04 the ratio underflows to
    0 near c = ±½, and log 0 = −∞ made D_α = 0 at α = 1.5 for σ = 0.01: the truth is 5001.4)."""
    c = np.asarray(c, dtype=np.float64).reshape(-1)
    r = _theta_ratio_m1(sigma, c)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.log1p(r)
    low = ~(r > -0.5)
    if np.any(low):
        # here σ < ½ (Poisson summation keeps the ratio above 1 − 6e-3 for σ ≥ ½)
        xmax = int(math.ceil(sigma * math.sqrt(2.0 * 745.0))) + 2
        x = np.arange(-xmax, xmax + 1, dtype=np.float64)
        with np.errstate(over="ignore"):
            log0 = float(lm.logsumexp(-0.5 * (x / sigma) ** 2))
            lc = lm.logsumexp(-0.5 * ((x[None, :] - c[low][:, None]) / sigma) ** 2, axis=1)
        out[low] = lc - log0
    return out


def _theta_ratio_m1(sigma: float, c: np.ndarray) -> np.ndarray:
    """θ_σ(c)/θ_σ(0) − 1 for c ∈ [−½, ½], without cancellation (≤ 0 by Poisson summation)."""
    c = np.asarray(c, dtype=np.float64).reshape(-1)
    if sigma >= 0.5:
        # Poisson summation: θ(c) ∝ 1 + 2Σ w_k cos(2πkc), w_k = e^{−2π²σ²k²}; and
        # cos(2πkc) − 1 = −2 sin²(πkc).
        kmax = int(math.ceil(math.sqrt(745.0 / (2.0 * math.pi**2 * sigma**2)))) + 1
        k = np.arange(1, kmax + 1, dtype=np.float64)
        w = np.exp(-2.0 * math.pi**2 * sigma**2 * k**2)
        num = -4.0 * (np.sin(math.pi * np.outer(c, k)) ** 2 @ w)
        ratio: np.ndarray = num / (1.0 + 2.0 * w.sum())
        return ratio
    xmax = int(math.ceil(sigma * math.sqrt(2.0 * 745.0))) + 2
    x = np.arange(-xmax, xmax + 1, dtype=np.float64)
    s2 = 2.0 * sigma * sigma
    u = -(x**2) / s2
    w = np.exp(u)
    dlt = (2.0 * np.outer(c, x) - (c**2)[:, None]) / s2
    with np.errstate(over="ignore", invalid="ignore"):  # 0·∞ where the other branch is taken
        diff = np.where(np.abs(dlt) < 0.5, w * np.expm1(dlt), np.exp(u + dlt) - w)
    result: np.ndarray = diff.sum(axis=1) / w.sum()
    return result


def discrete_gaussian_normalizer(sigma: float) -> float:
    """θ_σ(0) = Σ_{x∈ℤ} e^{−x²/(2σ²)}, the normaliser of the discrete Gaussian 𝒩_ℤ(0, σ²).

    Direct summation for σ < ½, Poisson summation √(2π)σ(1 + 2Σ_k e^{−2π²σ²k²}) otherwise.

    References:
        [CKS20].

    Examples:
        >>> round(discrete_gaussian_normalizer(1.0), 12)
        2.506628288043
    """
    s = POSITIVE.check("sigma", sigma)
    if not math.isfinite(s):
        raise DomainError(f"sigma must be in (0, inf) and finite; got {sigma!r}", name="sigma")
    if s >= 0.5:
        # (s·k)² rather than s**2: a Python float power raises OverflowError at s ≳ 1e154
        kmax = int(math.ceil(math.sqrt(745.0 / (2.0 * math.pi**2)) / s)) + 1
        k = np.arange(1, kmax + 1, dtype=np.float64)
        with np.errstate(over="ignore"):
            tail = np.exp(-2.0 * math.pi**2 * (s * k) ** 2).sum()
            return float(np.float64(math.sqrt(2.0 * math.pi)) * s * (1.0 + 2.0 * tail))
    xmax = int(math.ceil(s * math.sqrt(2.0 * 745.0))) + 2
    x = np.arange(-xmax, xmax + 1, dtype=np.float64)
    # (x/σ)²/2 rather than x²/(2σ²): σ² underflows to 0 below σ ≈ 1e-162 (0/0 = NaN at x = 0)
    with np.errstate(over="ignore"):
        return float(np.exp(-0.5 * (x / s) ** 2).sum())


def discrete_gaussian_divergence(sigma: float, shift: int, alpha: ArrayLike) -> float | np.ndarray:
    """D_α(𝒩_ℤ(μ, σ²) ‖ 𝒩_ℤ(ν, σ²)) for an integer shift Δ = μ − ν.

    αΔ²/(2σ²) + log(θ_σ(c)/θ_σ(0))/(α−1) with c = αΔ mod 1 (derived by Poisson summation of the normaliser; consistent with [CKS20] Prop. 5). The ratio is
    formed as log1p(θ(c)/θ(0) − 1) with the difference computed without cancellation, and c is
    taken as (α−1)Δ mod 1, so orders near 1 are accurate. D ≤ αΔ²/(2σ²) with equality at
    integer α. α = 1 gives Δ²/(2σ²); α = ∞ gives ∞ (Δ ≠ 0).

    Args:
        sigma: in (0, ∞). shift: integer Δ.
        alpha: order(s) in [0, ∞].

    References:
        Derived by Poisson summation of the normaliser; consistent with [CKS20] Prop. 5.

    Examples:
        >>> float(discrete_gaussian_divergence(1.0, 1, 2.0))
        1.0
    """
    s = POSITIVE.check("sigma", sigma)
    if not math.isfinite(s):
        raise DomainError(f"sigma must be in (0, inf) and finite; got {sigma!r}", name="sigma")
    d = abs(check_int("shift", shift, minimum=-(2**62)))
    alphas, scalar = _orders(alpha)
    a = alphas.reshape(-1)
    out = np.zeros_like(a)
    if d == 0:
        return _out(out.reshape(alphas.shape), scalar)
    rho = 0.5 * (d / s) * (d / s)  # σ² underflows to 0 below σ ≈ 1e-162; ρ overflows to ∞ instead
    fin = np.isfinite(a) & (a != 1.0) & (a != 0.0)
    if math.isinf(rho):
        # Δ/σ beyond 1e154: every order above 0 diverges in double precision (D_α ≥ αρ·(1 − o(1))
        # for α > 1); ∞ is the valid upper bound, where the formula below gave ∞ − ∞ = NaN
        out[a != 0.0] = np.inf
        return _out(out.reshape(alphas.shape), scalar)
    lam = a[fin] - 1.0
    cr = lam * d
    c = cr - np.round(cr)
    out[fin] = a[fin] * rho + _log_theta_ratio(s, c) / lam
    out[a == 1.0] = rho
    out[np.isinf(a)] = np.inf
    return _out(np.maximum(out, 0.0).reshape(alphas.shape), scalar)


def exponential_family_divergence(
    A: Callable[[Any], float],
    theta1: ArrayLike,
    theta2: ArrayLike,
    alpha: ArrayLike,
    *,
    grad_A: Callable[[Any], ArrayLike] | None = None,
) -> float | np.ndarray:
    """D_α(p_θ₁ ‖ p_θ₂) for a natural exponential family with log-partition A.

    [A(θ_α) − αA(θ₁) − (1−α)A(θ₂)]/(α−1), θ_α = αθ₁ + (1−α)θ₂; +∞ where θ_α is outside the
    natural parameter space (A returns ∞/NaN or raises). α = 1 gives the KL
    A(θ₂) − A(θ₁) − ⟨θ₂ − θ₁, ∇A(θ₁)⟩ (``grad_A`` if given, else a central difference of A
    along θ₂ − θ₁). The generic formula cancels for α near 1 (|α−1| ≲ 1e-6 loses digits);
    use the dedicated closed forms (:func:`poisson_divergence`, ...) where accuracy there
    matters.

    Args:
        A: the log-partition function (scalar or vector θ → float).
        theta1: the first natural parameter.
        theta2: the second natural parameter.
        alpha: order(s) in [0, ∞); α = ∞ is not available generically.
        grad_A: optional gradient of A.

    References:
        [LV87]; Gil (2011) Thm 1.2.19.

    Examples:
        >>> round(exponential_family_divergence(np.exp, np.log(3), np.log(2), 2.0), 12)
        0.5
    """
    t1 = check_array("theta1", theta1)
    t2 = check_array("theta2", theta2)
    if t1.shape != t2.shape:
        raise DomainError(f"theta2 must have the same shape as theta1 {t1.shape}; got {t2.shape}", name="theta2")
    if not callable(A):
        raise TypeError(f"A must be callable; got {type(A).__name__}")
    alphas, scalar = _orders(alpha)
    if np.any(np.isinf(alphas)):
        raise DomainError("alpha must be in [0, inf) for exponential_family_divergence; got inf",
                          name="alpha", value=math.inf)

    def a_of(th: np.ndarray) -> float:
        try:
            v = float(A(th if th.ndim else float(th)))
        except (ValueError, ArithmeticError):
            return math.inf
        return math.inf if math.isnan(v) else v

    a1, a2 = a_of(t1), a_of(t2)
    if not (math.isfinite(a1) and math.isfinite(a2)):
        raise DomainError("theta1 and theta2 must lie in the natural parameter space (A finite)", name="theta1")
    out = np.empty(alphas.size)
    for i, al in enumerate(alphas.reshape(-1)):
        if al == 1.0:
            dirn = t2 - t1
            if grad_A is not None:
                g = float(np.sum(np.asarray(grad_A(t1 if t1.ndim else float(t1)), dtype=np.float64) * dirn))
            else:
                h = 1e-5
                g = (a_of(t1 + h * dirn) - a_of(t1 - h * dirn)) / (2.0 * h)
            out[i] = a2 - a1 - g
        else:
            aa = a_of(al * t1 + (1.0 - al) * t2)
            out[i] = math.inf if not math.isfinite(aa) else (aa - al * a1 - (1.0 - al) * a2) / (al - 1.0)
    return _out(np.maximum(out, 0.0).reshape(alphas.shape), scalar)


def poisson_divergence(lam1: float, lam2: float, alpha: ArrayLike) -> float | np.ndarray:
    """D_α(Poisson(λ₁) ‖ Poisson(λ₂)).

    [λ₁^α λ₂^{1−α} − αλ₁ − (1−α)λ₂]/(α−1), evaluated as λ₂[e^L·expm1((α−1)L)/(α−1) − expm1(L)]
    with L = log(λ₁/λ₂), stable at α → 1. α = 1: λ₁L − λ₁ + λ₂. α = ∞: λ₂ − λ₁ if λ₁ ≤ λ₂,
    else ∞.

    Args:
        lam1: the first rate, in (0, ∞).
        lam2: the second rate, in (0, ∞).
        alpha: order(s) in [0, ∞].

    References:
        [LV87].

    Examples:
        >>> poisson_divergence(3.0, 2.0, 3.0)
        0.875
    """
    l1 = POSITIVE.check("lam1", lam1)
    l2 = POSITIVE.check("lam2", lam2)
    if not (math.isfinite(l1) and math.isfinite(l2)):
        raise DomainError(f"lam1 and lam2 must be finite; got {lam1!r}, {lam2!r}", name="lam1")
    alphas, scalar = _orders(alpha)
    L = math.log(l1 / l2)
    a = alphas.reshape(-1)
    with np.errstate(all="ignore"):
        lam = np.where(np.isfinite(a), a - 1.0, 1.0)
        safe = np.where(lam == 0.0, 1.0, lam)
        gen = l2 * (math.exp(L) * np.expm1(lam * L) / safe - math.expm1(L))
        out = np.where(lam == 0.0, l1 * L - l1 + l2, gen)
        d_inf = (l2 - l1) if l1 <= l2 else math.inf
        out = np.where(np.isinf(a), d_inf, out)
        out = np.where(a == 0.0, 0.0, out)
        out = np.where(np.isnan(out), np.inf, out)
    return _out(np.maximum(out, 0.0).reshape(alphas.shape), scalar)


def exponential_divergence(rate1: float, rate2: float, alpha: ArrayLike) -> float | np.ndarray:
    """D_α(Exp(r₁) ‖ Exp(r₂)) for exponential distributions with rates r₁, r₂.

    [α log r₁ + (1−α) log r₂ − log(αr₁ + (1−α)r₂)]/(α−1), evaluated as
    log R − log1p((α−1)(1 − 1/R))/(α−1) with R = r₁/r₂; ∞ where αr₁ + (1−α)r₂ ≤ 0.
    α = 1: log R − 1 + 1/R. α = ∞: log R if r₁ ≥ r₂, else ∞.

    Args:
        rate1: the first rate, in (0, ∞).
        rate2: the second rate, in (0, ∞).
        alpha: order(s) in [0, ∞].

    References:
        [LV87].

    Examples:
        >>> round(exponential_divergence(1.0, 2.0, 1.5), 15)
        0.693147180559945
    """
    r1 = POSITIVE.check("rate1", rate1)
    r2 = POSITIVE.check("rate2", rate2)
    if not (math.isfinite(r1) and math.isfinite(r2)):
        raise DomainError(f"rate1 and rate2 must be finite; got {rate1!r}, {rate2!r}", name="rate1")
    alphas, scalar = _orders(alpha)
    a = alphas.reshape(-1)
    R = r1 / r2
    logR = math.log(r1) - math.log(r2)
    cc = -math.expm1(-logR) if -logR < 709.0 else -math.inf  # 1 − 1/R (−∞ once 1/R overflows)
    with np.errstate(all="ignore"):
        lam = np.where(np.isfinite(a), a - 1.0, 1.0)
        val = logR - _log1p_over(lam, np.full_like(lam, cc))
        if math.isinf(cc):
            # 1/R overflows: log1p(λ(1 − 1/R)) = log(α + (1 − α)/R), finite for α ∈ (0, 1) only
            mid = (a > 0) & (a < 1)
            am = np.where(mid, a, 0.5)  # placeholders outside (0, 1), where the value is ∞
            inner = np.logaddexp(np.log(am), np.log1p(-am) - logR)
            val = np.where(mid, logR - inner / (am - 1.0), np.inf)
        out = np.where(np.isnan(val), np.inf, val)
        out = np.where(np.isinf(a), logR if R >= 1.0 else np.inf, out)
        out = np.where(a == 0.0, 0.0, out)
    return _out(np.maximum(out, 0.0).reshape(alphas.shape), scalar)
