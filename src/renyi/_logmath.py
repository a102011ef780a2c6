"""Log-space arithmetic kernel.

Privacy computations multiply and subtract quantities such as e^{(α−1)ε} that overflow
float64 long before the answer does. Everything that needs care lives here.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

__all__ = [
    "log_add",
    "log_sub",
    "log1mexp",
    "log_expm1",
    "log_comb",
    "log_ndtr",
    "logsumexp",
    "signed_logsumexp",
    "log_delta_gaussian",
]


def log_add(a: ArrayLike, b: ArrayLike) -> np.ndarray | float:
    """log(e^a + e^b) without overflow."""
    return np.logaddexp(a, b)


def log1mexp(x: ArrayLike) -> np.ndarray | float:
    """log(1 − e^x) for x ≤ 0, accurate near 0 and at very negative x.

    Uses the Mächler (2012) switch at −log 2 between log(−expm1(x)) and log1p(−e^x).
    Returns −∞ at x = 0.
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))
    out = np.where(x == 0.0, -np.inf, out)
    return out[()] if out.ndim == 0 else out


def log_sub(a: ArrayLike, b: ArrayLike) -> np.ndarray | float:
    """log(e^a − e^b) for a ≥ b (−∞ when a = b)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = np.where(np.isneginf(b), a, a + log1mexp(np.minimum(b - a, 0.0)))
    return out[()] if out.ndim == 0 else out


def log_expm1(x: ArrayLike) -> np.ndarray | float:
    """log(e^x − 1) for x > 0, without overflow for large x."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore"):
        out = np.where(x > 30.0, x + np.log1p(-np.exp(-x)), np.log(np.expm1(x)))
    result: np.ndarray | float = out[()] if out.ndim == 0 else out
    return result


def log_comb(n: ArrayLike, k: ArrayLike) -> np.ndarray | float:
    """log |binom(n, k)| for real n and integer k ≥ 0 (generalised binomial)."""
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    out = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    result: np.ndarray | float = out[()] if np.ndim(out) == 0 else out
    return result


def log_ndtr(x: ArrayLike) -> np.ndarray | float:
    """log Φ(x), accurate far into the lower tail (Φ(−40) underflows; its log does not)."""
    result: np.ndarray | float = special.log_ndtr(x)
    return result


def logsumexp(a: ArrayLike, axis: int | None = None) -> np.ndarray | float:
    """log Σ e^{a_i}; −∞ for an empty or all −∞ input."""
    with np.errstate(divide="ignore"):
        result: np.ndarray | float = special.logsumexp(a, axis=axis)
        return result


def signed_logsumexp(log_abs: ArrayLike, signs: ArrayLike) -> tuple[float, float]:
    """Return (log|S|, sign S) for S = Σ signs_i · e^{log_abs_i}."""
    out, sign = special.logsumexp(log_abs, b=signs, return_sign=True)
    return float(out), float(sign)


def log_delta_gaussian(epsilon: ArrayLike, mu: ArrayLike) -> np.ndarray | float:
    """log δ(ε) of the Gaussian mechanism with μ = Δ/σ (Balle & Wang 2018, Thm 8).

    δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), computed as
    log Φ(a) + log(1 − exp(ε + log Φ(b) − log Φ(a))) so that neither term overflows and the
    difference does not cancel. Returns −∞ where δ underflows to 0.
    """
    epsilon = np.asarray(epsilon, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        la = special.log_ndtr(mu / 2.0 - epsilon / mu)
        lb = special.log_ndtr(-mu / 2.0 - epsilon / mu)
        diff = np.minimum(epsilon + lb - la, 0.0)
        out = la + log1mexp(diff)
    out = np.where(np.isnan(out), -np.inf, out)
    return out[()] if out.ndim == 0 else out
