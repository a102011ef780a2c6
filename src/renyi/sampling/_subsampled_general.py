"""Amplification by subsampling for any base curve: [ZW19] (Poisson) and [WBK19] Thm 9 (without
replacement), integer orders exact, fractional orders by the convexity of the CGF ([WBK19] Cor. 10).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.core._lazy import special
from renyi.core._logmath import lgamma_int_table, log_expm1
from renyi.core._validation import (
    ORDER,
)
from renyi.sampling._subsampled_gaussian import (
    _EPS,
    _MAX_WBK19_ORDER,
    _RATE,
    _excess_int_rows,
    _finish_eps,
)

__all__ = ["rdp_poisson_general", "rdp_without_replacement", "eps_inf_poisson"]

# ----------------------------------------------------------------------------------------------
# General base curves: [ZW19] (Poisson) and [WBK19] Thm 9 (without replacement)
# ----------------------------------------------------------------------------------------------
def _interp_cgf(alphas: np.ndarray, int_eps: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Evaluate an integer-order RDP bound anywhere in (1, ∞) by [WBK19] Cor. 10.

    The true CGF K(α) = (α−1)·ε(α) is convex with K(1) = 0, so at fractional α the chord
    between ⌊α⌋ and ⌈α⌉ of any upper bounds on K is an upper bound on K(α).
    """
    out = np.full(alphas.shape, np.inf)
    fin = np.isfinite(alphas)
    a = alphas[fin]
    lo = np.floor(a)
    hi = np.ceil(a)
    ints = np.unique(np.concatenate([lo[lo >= 2], hi]).astype(np.int64))
    vals = int_eps(ints.astype(np.float64)) if ints.size else np.zeros(0)
    table = dict(zip(ints.tolist(), vals.tolist()))

    def cgf(x: np.ndarray) -> np.ndarray:
        return np.array([0.0 if v == 1 else (v - 1) * table[int(v)] for v in x.tolist()])

    t = a - lo
    with np.errstate(invalid="ignore"):
        k = np.where(t == 0, cgf(lo), (1 - t) * cgf(lo) + t * cgf(hi))
        out[fin] = k / (a - 1.0)
    out = np.where(np.isnan(out), np.inf, out)
    return out


def _eval_base(base_rdp: Callable[[np.ndarray], Any], orders: np.ndarray) -> np.ndarray:
    vals = np.asarray(base_rdp(orders), dtype=np.float64).reshape(orders.shape)
    # a base curve must be ≥ 0; NaN is treated as "no bound"
    return np.where(np.isnan(vals), np.inf, np.maximum(vals, 0.0))


def _zw19_int(q: float, base_rdp: Callable[[np.ndarray], np.ndarray], ints: np.ndarray, exact: bool) -> np.ndarray:
    """[ZW19] bound at integer orders ≥ 2, computed as log(1 + S − 1) with S − 1 ≥ 0 termwise."""
    amax = int(ints.max())
    ell = np.arange(2, amax + 1, dtype=np.float64)
    base = _eval_base(base_rdp, ell)
    x = (ell - 1.0) * base  # (ℓ−1)·ε(ℓ)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if exact:
            lw = log_expm1(x)
        else:
            # log(3e^x − 1) for ℓ ≥ 3, log(e^x − 1) for ℓ = 2
            lw = np.where(ell >= 3, x + np.log(3.0 - np.exp(-x)), log_expm1(x))
    lw = np.where(np.isposinf(x), np.inf, lw)
    lw = np.where(np.isnan(lw), -np.inf, lw)
    lw_full = np.concatenate([[-np.inf, -np.inf], lw])  # index by ℓ
    mag_full = np.concatenate([[0.0, 0.0], np.abs(np.where(np.isfinite(x), x, 0.0)) + 2.0])

    def log_w(rows: np.ndarray, k: np.ndarray) -> np.ndarray:
        result: np.ndarray = lw_full[k]
        return result

    def mag(rows: np.ndarray) -> np.ndarray:
        return np.full(rows.size, float(np.max(mag_full)))

    n = ints.size
    excess = _excess_int_rows(ints, np.full(n, math.log(q)), np.full(n, math.log1p(-q)), log_w, mag)
    with np.errstate(over="ignore"):
        la = np.logaddexp(0.0, excess)
    eps, _ = _finish_eps(la, ints.astype(np.float64))
    return eps


def eps_inf_poisson(q: float, eps_inf: float) -> float:
    """ε(∞) of Poisson subsampling (add/remove) of an ε_∞-DP mechanism: log(1 + q(e^{ε_∞} − 1)).

    Direct mixture argument: with P the output law without the extra record and P′ ≤ e^ε P the
    law with it, (1−q)P + qP′ ≤ (1 + q(e^ε − 1))·P, and P ≤ ((1−q) + q e^{−ε})⁻¹·((1−q)P + qP′),
    whose log is never larger (since (1−q+q/a)(1−q+qa) ≥ 1 for a = e^ε > 0).
    """
    if math.isinf(eps_inf):
        return math.inf
    return float(np.log1p(q * np.expm1(eps_inf)))


def rdp_poisson_general(
    q: float,
    base_rdp: Callable[[np.ndarray], Any],
    alphas: ArrayLike,
    *,
    exact_form: bool = False,
    base_eps_inf: float = math.inf,
) -> np.ndarray:
    """[ZW19] RDP bound for Poisson subsampling (add/remove) of any base RDP curve.

    For integer α ≥ 2 ([MTZ19] §3, [ZW19] "general upper bound"):
    ε(α) ≤ 1/(α−1)·log[(1−q)^{α−1}(αq−q+1) + C(α,2)q²(1−q)^{α−2}e^{ε(2)}
    + 3Σ_{ℓ≥3} C(α,ℓ)(1−q)^{α−ℓ}q^ℓ e^{(ℓ−1)ε(ℓ)}]. With ``exact_form=True`` the factor 3 is
    dropped, which is exact for Gaussian and Laplace base mechanisms ([ZW19] Thm 8). Fractional
    orders use the CGF chord ([WBK19] Cor. 10). The result is also capped by the base curve
    and by the subsampled pure-DP bound :func:`eps_inf_poisson` (both valid, see there).

    Args:
        q: sampling rate in [0, 1].
        base_rdp: vectorized base curve ε(α) on orders > 1 (≥ 0, inf allowed).
        alphas: orders in (1, ∞].
        exact_form: drop the factor 3 (only for Gaussian/Laplace bases).
        base_eps_inf: the base mechanism's ε(∞), or inf.

    Returns:
        An upper bound on ε(α), array shaped like ``alphas``.
    """
    q = _RATE.check("q", q)
    arr = ORDER.check_array("alphas", alphas)
    flat = arr.ravel()
    e_inf = eps_inf_poisson(q, base_eps_inf) if q > 0 else 0.0
    if q == 0.0:
        return np.zeros(arr.shape)
    fin = np.isfinite(flat)
    base = np.full(flat.shape, np.inf)
    if np.any(fin):
        base[fin] = _eval_base(base_rdp, flat[fin])
    if q == 1.0:
        out = np.where(fin, base, base_eps_inf)
        return np.minimum(out, base_eps_inf).reshape(arr.shape)
    out = np.full(flat.shape, np.inf)
    if np.any(fin):
        a = flat[fin]
        small = a <= _MAX_WBK19_ORDER  # the same cap as WBK19: base curve above (valid)
        vals = base[fin].copy()
        if np.any(small):
            vals[small] = np.minimum(
                vals[small], _interp_cgf(a[small], lambda ints: _zw19_int(q, base_rdp, ints.astype(np.int64), exact_form))
            )
        out[fin] = vals
    out = np.where(fin, out, e_inf)
    return np.minimum(out, e_inf).reshape(arr.shape)


def _wbk19_int(gamma: float, base_rdp: Callable[[np.ndarray], np.ndarray], ints: np.ndarray, eps_inf: float) -> np.ndarray:
    """[WBK19] Thm 9 at integer orders ≥ 2 (before the min with the base curve)."""
    amax = int(ints.max())
    j = np.arange(2, amax + 1, dtype=np.float64)
    base = _eval_base(base_rdp, j)
    e2 = float(base[0])
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        lexp_inf = float(log_expm1(eps_inf)) if math.isfinite(eps_inf) else math.inf
        if eps_inf == 0:
            lexp_inf = -math.inf
        # j = 2 coefficient: min{4(e^{ε2}−1), e^{ε2}·min{2, (e^{ε∞}−1)²}}
        lm2 = min(math.log(4.0) + float(log_expm1(e2)) if e2 > 0 else -math.inf,
                  e2 + min(math.log(2.0), 2 * lexp_inf))
        lmj = np.minimum(math.log(2.0), j * lexp_inf)
        lw = (j - 1.0) * base + lmj
        lw[0] = lm2
    lw = np.where(np.isnan(lw), np.inf, lw)
    logg = math.log(gamma)
    lgam = lgamma_int_table(amax)
    out = np.empty(ints.size)
    for i, a in enumerate(ints.tolist()):
        jj = np.arange(2, a + 1)
        terms = lgam[a] - lgam[jj] - lgam[a - jj] + jj * logg + lw[jj - 2]
        with np.errstate(divide="ignore"):
            ls = special.logsumexp(terms)
        mag = float(np.max(np.abs(np.where(np.isfinite(terms), terms, 0.0)))) + lgam[a]
        ls = ls + 4.0 * _EPS * (mag + 8.0 + math.log(a))
        out[i] = float(np.logaddexp(0.0, ls)) / (a - 1.0)
    return out


def rdp_without_replacement(
    gamma: float,
    base_rdp: Callable[[np.ndarray], Any],
    alphas: ArrayLike,
    *,
    base_eps_inf: float = math.inf,
) -> np.ndarray:
    """[WBK19] Thm 9: subsampling without replacement (fixed size m = γn), replace-one.

    For integer α ≥ 2:
    ε′(α) ≤ 1/(α−1)·log(1 + γ²C(α,2)·min{4(e^{ε(2)}−1), e^{ε(2)}min{2,(e^{ε(∞)}−1)²}}
    + Σ_{j≥3} γ^j C(α,j) e^{(j−1)ε(j)} min{2, (e^{ε(∞)}−1)^j}), then min with ε(α).
    Fractional orders: CGF chord ([WBK19] Cor. 10). ε(∞) is the base's (no amplification used).

    Args:
        gamma: sampling fraction m/n in [0, 1].
        base_rdp: vectorized base curve (replace-one neighbours).
        alphas: orders in (1, ∞].
        base_eps_inf: the base mechanism's ε(∞), or inf.

    Returns:
        An upper bound on ε(α), array shaped like ``alphas``.
    """
    gamma = _RATE.check("rate", gamma)
    arr = ORDER.check_array("alphas", alphas)
    flat = arr.ravel()
    if gamma == 0.0:
        return np.zeros(arr.shape)
    fin = np.isfinite(flat)
    out = np.full(flat.shape, float(base_eps_inf))
    if np.any(fin):
        a = flat[fin]
        base = _eval_base(base_rdp, a)
        vals = base.copy()
        if gamma < 1.0:
            # Above _MAX_WBK19_ORDER only the base curve is used (valid; amplification at such
            # orders matters only for extreme δ), which keeps the O(α²) sum of Thm 9 and the
            # base evaluations at orders 2..α fast for expensive base curves.
            small = a <= _MAX_WBK19_ORDER
            if np.any(small):
                vals[small] = np.minimum(
                    vals[small],
                    _interp_cgf(a[small], lambda ints: _wbk19_int(gamma, base_rdp, ints.astype(np.int64), base_eps_inf)),
                )
        out[fin] = np.minimum(vals, base_eps_inf)
    return out.reshape(arr.shape)
