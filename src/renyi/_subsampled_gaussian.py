"""Numerics of privacy amplification by subsampling (pure functions, no guarantee objects).

The Poisson-subsampled Gaussian ([MTZ19] §3). Each record is kept with
probability ``q``; the sum of the kept, ℓ₂-clipped contributions gets N(0, σ²) noise, with σ the
*noise multiplier* (σ/Δ₂). Under add/remove adjacency the worst pair is

    μ₀ = N(0, σ²)   versus   μ = (1 − q)·N(0, σ²) + q·N(1, σ²),

and the RDP curve is ε(α) = D_α(μ‖μ₀) = log A_α / (α − 1) with A_α = E_{μ₀}[(μ/μ₀)^α].
(α − 1)·ε(α) = log A_α is an exact cumulant generating function, hence convex in α, which
makes continuous optimisation over α safe (the CGF (α − 1)·ε(α) of an exact curve is convex).

Also here: the general Poisson bound of [ZW19] for any base RDP curve, the
without-replacement bound of [WBK19] Thm 9, their fractional-order interpolation ([WBK19]
Cor. 10), and a dedicated fast ε / calibration path for DP-SGD.

Every function returns an *upper* bound: series truncations add a rigorous tail bound,
floating-point rounding is covered by an explicit allowance, and anything that cannot be made
accurate returns ``inf`` (with a :class:`~renyi.errors.RenyiNumericalWarning` from the public
functions).

References:
    [MTZ19] I. Mironov, K. Talwar, L. Zhang, Rényi Differential Privacy of the Sampled
        Gaussian Mechanism, arXiv:1908.10530, §3.
    [ZW19] Y. Zhu, Y.-X. Wang, Poisson Subsampled Rényi Differential Privacy, ICML 2019.
    [WBK19] Y.-X. Wang, B. Balle, S. Kasiviswanathan, Subsampled Rényi Differential Privacy
        and Analytical Moments Accountant, AISTATS 2019, Thm 9 and Cor. 10.
    [CKS20] C. Canonne, G. Kamath, T. Steinke, The Discrete Gaussian for Differential
        Privacy, NeurIPS 2020, Prop. 12.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from ._lazy import special

from ._logmath import erfcx, lgamma, lgamma_int_table, log_expm1
from ._validation import (
    ORDER,
    POSITIVE,
    PROBABILITY,
    PROBABILITY_OPEN,
    Interval,
    check_array,
    check_int,
)
from .errors import DomainError, RenyiNumericalWarning

__all__ = [
    "log_a_int",
    "log_a_frac",
    "rdp_poisson_gaussian",
    "rdp_poisson_general",
    "rdp_without_replacement",
    "eps_inf_poisson",
    "dpsgd_epsilon",
    "dpsgd_epsilon_many",
    "dpsgd_log_delta",
    "dpsgd_sigma",
    "dpsgd_steps",
    "dpsgd_rate",
]

_EPS = float(np.finfo(np.float64).eps)
#: Series stop when a term is below this fraction of the total (dp_accounting uses e^-30).
_LOG_REL_TOL = -30.0
#: ... or below this fraction of the total: tighter than that is below the rounding floor.
_REL_FLOOR = 1e-15
#: Cap on the number of terms of the fractional series (cost, not validity).
_MAX_TERMS = 1 << 22
#: Largest integer order summed exactly; beyond it the unsubsampled curve is used (valid).
_MAX_EXACT_ORDER = 1 << 16
_MAX_WBK19_ORDER = 1 << 10
#: Largest fractional order summed by the series; above it the CGF chord between the
#: neighbouring integer orders is used ([WBK19] Cor. 10: valid, and still convex).
_FRAC_SERIES_MAX = 256.0
#: Cells per chunk of the (order × term) matrices.
_CHUNK_CELLS = 1 << 21
_RATE = PROBABILITY


# ----------------------------------------------------------------------------------------------
# Integer orders
# ----------------------------------------------------------------------------------------------
def _excess_int_rows(
    alphas: np.ndarray,
    logq: np.ndarray,
    log1mq: np.ndarray,
    log_w: Callable[[np.ndarray, np.ndarray], np.ndarray],
    mag_w: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """Upper bound on log(S − 1) for S = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k} q^k (1 + w_k), w_0 = w_1 = 0.

    Since Σ_k C(α,k)(1−q)^{α−k}q^k = 1, S − 1 = Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k w_k: a sum of
    non-negative terms, so it is computed without cancellation even when S − 1 ≈ 10⁻¹⁵
    (large σ, tiny q), where summing S itself would lose every digit.

    Args:
        alphas: integer orders ≥ 2, one per row (int64 array).
        logq, log1mq: per-row log q and log(1 − q), 0 < q < 1.
        log_w: ``log_w(rows, k)`` → log w_k for k ≥ 2, broadcastable to (rows, k); a 1-D
            result (shared by all rows) is the fast case.
        mag_w: ``mag_w(rows)`` → per-row bound on the size of the intermediate quantities of
            ``log_w`` over k ≤ α (sizes the rounding allowance).

    Returns:
        Per-row upper bounds on log(S − 1) (−inf where S = 1).
    """
    n = alphas.size
    out = np.empty(n)
    if n == 0:
        return out
    order = np.argsort(alphas, kind="stable")
    a_sorted = alphas[order]
    lgam = lgamma_int_table(int(a_sorted[-1]))
    lratio = logq - log1mq
    start = 0
    while start < n:
        # chunks of similar orders keep the padded (row × k) matrix within _CHUNK_CELLS
        cells = np.arange(1, n - start + 1) * a_sorted[start:].astype(np.float64)
        stop = start + max(1, int(np.searchsorted(cells, _CHUNK_CELLS, side="right")))
        rows = order[start:stop]
        a = alphas[rows]
        amax = int(a.max())
        k = np.arange(2, amax + 1, dtype=np.int64)
        kf = k.astype(np.float64)
        # term(α,k) = [lgam α + α·log(1−q)] − lgam(α−k) + [−lgam k + k·log(q/(1−q)) + log w_k]
        with np.errstate(invalid="ignore", over="ignore"):
            lw = np.asarray(log_w(rows, k))
            lr = lratio[rows]
            if lw.ndim == 1 and np.all(lr == lr[0]):
                g = (-lgam[k] + kf * lr[0] + lw)[None, :]
            else:
                g = -lgam[k][None, :] + kf[None, :] * lr[:, None] + np.atleast_2d(lw)
            row_c = lgam[a] + a * log1mq[rows]
            amk = a[:, None] - k[None, :]
            terms = g - lgam[np.maximum(amk, 0)]
            terms[amk < 0] = -np.inf
            mx = np.max(terms, axis=1)
            mx = np.where(np.isfinite(mx), mx, 0.0)
            ssum = np.sum(np.exp(terms - mx[:, None]), axis=1)
        with np.errstate(divide="ignore"):
            res = row_c + mx + np.log(ssum)
        # rounding allowance: each log-term carries an absolute error ≲ 2u·(sizes summed),
        # bounded per row by the sizes at k = α (all pieces grow with k)
        mag = 3.0 * lgam[a] + a * (np.abs(logq[rows]) + np.abs(log1mq[rows])) + mag_w(rows)
        res = res + 4.0 * _EPS * (mag + 8.0 + np.log(amax))
        out[rows] = np.where(np.isnan(res), np.inf, res)
        start = stop
    return out


def _gauss_log_w(
    inv2s2: np.ndarray, alphas: np.ndarray
) -> tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], Callable[..., np.ndarray]]:
    """Weights of the subsampled Gaussian: w_k = exp((k² − k)/(2σ²)) − 1 ([MTZ19] §3.3)."""

    def log_w(rows: np.ndarray, k: np.ndarray) -> np.ndarray:
        kk = (k * (k - 1)).astype(np.float64)
        c = inv2s2[rows]
        if np.all(c == c[0]):
            return np.asarray(log_expm1(kk * c[0]))
        return np.asarray(log_expm1(kk[None, :] * c[:, None]))

    def mag(rows: np.ndarray) -> np.ndarray:
        a = alphas[rows].astype(np.float64)
        result: np.ndarray = 2.0 * a * (a - 1.0) * inv2s2[rows] + 1.0
        return result

    return log_w, mag


def _log_a_int_rows(q: np.ndarray, sigma: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """log A_α for integer α ≥ 2 with per-row q ∈ (0, 1) and σ > 0 (upper bound, see above)."""
    logq = np.log(q)
    log1mq = np.log1p(-q)
    inv2s2 = 0.5 / (sigma * sigma)
    ints = alphas.astype(np.int64)
    lw, mg = _gauss_log_w(inv2s2, ints)
    excess = _excess_int_rows(ints, logq, log1mq, lw, mg)
    result: np.ndarray = np.logaddexp(0.0, excess)
    return result


def log_a_int(q: float, sigma: float, alphas: ArrayLike) -> np.ndarray:
    """log A_α of the Poisson-subsampled Gaussian at integer orders ([MTZ19] §3.3, exact).

    A_α = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k} q^k exp((k² − k)/(2σ²)). The sum is evaluated as
    log(1 + Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k expm1((k²−k)/(2σ²))), all terms non-negative, in log
    space, vectorized over all orders at once (one padded order × term matrix per chunk).

    Args:
        q: sampling rate in (0, 1).
        sigma: noise multiplier σ/Δ₂ in (0, ∞).
        alphas: integer orders ≥ 2 (any shape).

    Returns:
        log A_α with the shape of ``alphas``; a tiny rounding allowance (≈ 10⁻¹⁴ relative)
        is added so the value is an upper bound.

    Raises:
        DomainError: if q ∉ (0, 1), σ ≤ 0, or an order is not an integer ≥ 2.
    """
    q = PROBABILITY_OPEN.check("q", q)
    sigma = POSITIVE.check("sigma", sigma)
    arr = check_array("alphas", alphas)
    if np.any(~np.isfinite(arr)) or np.any(arr < 2) or np.any(arr != np.floor(arr)):
        bad = arr[~(np.isfinite(arr) & (arr >= 2) & (arr == np.floor(arr)))].flat[0]
        raise DomainError(f"alphas must be integers in [2, inf); got {float(bad)!r}", name="alphas", value=bad)
    flat = arr.ravel().astype(np.int64)
    out = _log_a_int_rows(np.full(flat.size, q), np.full(flat.size, sigma), flat)
    return out.reshape(arr.shape)


# ----------------------------------------------------------------------------------------------
# Fractional orders
# ----------------------------------------------------------------------------------------------
#: Order of the Euler tail bound for the alternating fractional series.
_EULER_M = 8


@functools.lru_cache(maxsize=4)
def _euler_weights(m_count: int) -> tuple[np.ndarray, np.ndarray]:
    """Weights w with a·w = Σ_{m<M} (−Δ)^m a_0 / 2^{m+1}, and v with a·v = (−Δ)^M a_0."""
    from math import comb

    w = np.zeros(m_count + 1)
    for m in range(m_count):
        for j in range(m + 1):
            w[j] += (-1) ** j * comb(m, j) / 2.0 ** (m + 1)
    v = np.array([(-1) ** j * comb(m_count, j) for j in range(m_count + 1)], dtype=np.float64)
    return w, v


def _euler_tail(a: np.ndarray, werr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds on T = Σ_{i≥0} (−1)^i a_{k+i} from a_k … a_{k+M} (rows).

    The magnitudes a_k of the fractional series are a completely monotone sequence for k > α:
    |C(α,k)| = sin(π·frac α)/π·B(α+1, k−α) = ∫₀¹ (1−t)^{k−α−1}(…)dt, and erfcx(c + k·d) with
    d > 0 is completely monotone (erfcx(x) = 2/√π ∫₀^∞ e^{−t²−2xt}dt); products and sums keep
    the property. By Hausdorff, a_{k+i} = ∫₀¹ tⁱ dμ(t), so T = ∫ dμ/(1+t), and the Euler
    transform gives T = Σ_{m<M} d_m/2^{m+1} + ∫((1−t)/2)^M/(1+t) dμ with d_m = (−Δ)^m a_k ≥ 0,
    whose remainder lies in [0, d_M/2^M]. (M = 0 is the classical "first omitted term" bound.)
    Rounding in the differences (≤ 2^m times the terms' errors) is added on both sides.

    Args:
        a: (rows, M+1) term magnitudes a_k … a_{k+M}.
        werr: matching per-term error weights (Σ of |term|·(8·log-size + 16)).

    Returns:
        (T_low, T_up) per row.
    """
    m_count = a.shape[1] - 1
    w_partial, w_rem = _euler_weights(m_count)
    partial = a @ w_partial
    rem = np.maximum(a @ w_rem, 0.0) / 2.0**m_count
    slack = 2.0 ** (m_count + 2) * _EPS * (np.sum(werr, axis=1) + 4.0 * np.sum(a, axis=1))
    return partial - slack, partial + rem + slack


def _log_a_frac_rows(
    q: np.ndarray, sigma: np.ndarray, alpha: np.ndarray, max_terms: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """log A_α for non-integer α > 1 by the signed split series ([MTZ19] §3.3).

    Per row: q ∈ (0, 1), σ > 0, α > 1 non-integer. With z₁ = ½ + σ²·log(1/q − 1),

        A_α = Σ_k C(α,k)·(L_k + U_k),
        L_k = (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)} · ½erfc((k − z₁)/(√2σ)),
        U_k = (1−q)^k q^{α−k} e^{(j²−j)/(2σ²)} · ½erfc((z₁ − j)/(√2σ)),  j = α − k.

    Completing the square gives, for every k, L_k = e^C·½erfcx((k−z₁)/(√2σ)) and
    U_k = e^C·½erfcx((z₁−j)/(√2σ)) with C = α·log(1−q) − z₁²/(2σ²). That form is used where the
    erfcx argument is ≥ 0 (it never subtracts huge exponents); elsewhere the direct form, with
    log Φ(|x|√2) = log1p(−½·erfcx(|x|)·e^{−x²}), so one erfcx call serves both forms.

    Tail bound (derived here): the same identity gives
    |C(α,k+1)|L_{k+1} / (|C(α,k)|L_k) = |α−k|/(k+1) · erfcx(x+d)/erfcx(x) < 1 for k ≥ (α−1)/2,
    because erfcx is decreasing; likewise for U. So for k > ⌊α⌋ the terms alternate in sign with
    decreasing magnitude; they are moreover completely monotone, so the omitted tail is
    bounded on both sides by an Euler-transform bound (:func:`_euler_tail`; its M = 0 case is
    "at most the first omitted |term|"), and the end that makes A larger is added: the result
    is an upper bound. Cancellation and rounding are covered by an
    explicit allowance (≈ u·Σ|term|·size of its logarithm).

    Blocks of k are evaluated for all active rows at once; a block is accepted when the width of
    the tail bound at its end is below e⁻³⁰ of the total (tightened near A = 1, floored at the
    rounding level) and both parts are decreasing.

    Returns:
        (log A upper bound, converged flag) per row; non-converged rows are +inf.
    """
    n = alpha.size
    cap = _MAX_TERMS if max_terms is None else max_terms
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _frac_loop(q, sigma, alpha, n, cap)


def _frac_loop(
    q: np.ndarray, sigma: np.ndarray, alpha: np.ndarray, n: int, max_terms: int
) -> tuple[np.ndarray, np.ndarray]:
    """Body of :func:`_log_a_frac_rows` (run under one ``np.errstate``).

    The lower and upper parts share one formula in n = k (lower) or n = α − k (upper):
    direct form (α−n)·log(1−q) + n·log q + (n²−n)/(2σ²) + log(1 − ½erfc(|x|)) for x < 0 and
    C + log(½erfcx(x)) for x ≥ 0, with x = ±(n − z₁)/(√2σ) (+ lower, − upper). Both parts are
    stacked into one (2·rows, k) array so that every numpy call serves both.
    """
    logq = np.log(q)
    log1mq = np.log1p(-q)
    s2 = sigma * sigma
    inv2s2 = 0.5 / s2
    z1 = 0.5 + s2 * (log1mq - logq)
    big_c = alpha * log1mq - z1 * z1 * inv2s2
    mag_c = np.abs(alpha * log1mq) + z1 * z1 * inv2s2
    inv_rt2s = 1.0 / (math.sqrt(2.0) * sigma)
    fl = np.floor(alpha)
    lga1 = lgamma(alpha + 1.0)

    result = np.full(n, np.inf)
    converged = np.zeros(n, dtype=bool)
    scale = np.full(n, -np.inf)  # running sums are stored divided by exp(scale)
    total = np.zeros(n)
    absum = np.zeros(n)
    errsum = np.zeros(n)
    nblk = np.zeros(n)
    # per-row parameters, stacked for the lower (first n) and upper (last n) parts
    par = np.stack([alpha, log1mq, logq, z1, inv_rt2s, inv2s2, big_c, mag_c])
    par2 = np.concatenate([par, par], axis=1)
    upper2 = np.concatenate([np.zeros(n), np.ones(n)])
    sgn2 = 1.0 - 2.0 * upper2
    par2 = np.vstack([par2, upper2, sgn2])[:, :, None]
    active = np.arange(n)
    k0 = 0
    block = 32
    while active.size and k0 < max_terms:
        r = active
        nr = r.size
        kk = np.arange(k0, k0 + block, dtype=np.float64)
        a = alpha[r][:, None]
        # log|C(α,k)|: exact (log|Γ|) at k0, then |C(α,k)|/|C(α,k−1)| = |α−k+1|/k
        lb0 = (lga1[r] - math.lgamma(k0 + 1.0) - lgamma(alpha[r] - k0 + 1.0))[:, None]
        lb = np.empty((nr, block))
        lb[:, 0:1] = lb0
        np.cumsum(np.log(np.abs(a - kk[1:] + 1.0) / kk[1:]), axis=1, out=lb[:, 1:])
        lb[:, 1:] += lb0
        mag_b = (np.arange(1.0, block + 1.0)) * (np.abs(lb) + 1.0)
        # stacked parts: rows 0..nr-1 lower (n = k), rows nr..2nr-1 upper (n = α − k)
        pr = par2 if nr == n else par2[:, np.concatenate([r, r + n])]
        a2, l1q, lq, zz, irs, i2, cc, mc, up, sg = pr
        nn = kk + up * (a2 - 2.0 * kk)
        x = sg * (nn - zz) * irs
        ex = erfcx(np.abs(x))
        d1 = (a2 - nn) * l1q
        d2 = nn * lq
        d3 = (nn * nn - nn) * i2
        neg = x < 0
        lb2 = np.concatenate([lb, lb])
        logp = lb2 + np.where(neg, d1 + d2 + d3 + np.log1p(-0.5 * ex * np.exp(-x * x)), cc + np.log(0.5 * ex))
        logp[np.isnan(logp)] = -np.inf
        magp = np.concatenate([mag_b, mag_b]) + 2.0 + np.where(
            neg, np.abs(d1) + np.abs(d2) + np.abs(d3), mc - np.log(ex))
        log_l, log_u = logp[:nr], logp[nr:]
        kf = kk[None, :]
        fl_r = fl[r][:, None]
        sign = np.where(kf <= fl_r, 1.0, 1.0 - 2.0 * np.mod(kf - fl_r - 1.0, 2.0))

        m_new = np.maximum(scale[r], np.max(np.maximum(log_l, log_u), axis=1))
        m_new[~np.isfinite(m_new)] = 0.0
        fac = np.where(np.isneginf(scale[r]), 0.0, np.exp(scale[r] - m_new))
        linp = np.exp(logp - np.concatenate([m_new, m_new])[:, None])
        lin = linp[:nr] + linp[nr:]
        slin = sign * lin
        werrp = linp * (8.0 * magp + 16.0)
        werr = werrp[:nr] + werrp[nr:]
        werr = np.where(np.isfinite(werr), werr, np.where(lin > 0, np.inf, 0.0))
        tot = total[r] * fac
        # candidate stop: the first omitted term is k_s = k_last − M; the last M+1 terms of the
        # block feed the Euler tail bound (see _euler_tail).
        cut = block - 1 - _EULER_M
        s_excl = tot + np.sum(slin[:, :cut], axis=1)
        abs_excl = absum[r] * fac + np.sum(lin[:, :cut], axis=1)
        err_excl = errsum[r] * fac + np.sum(werr[:, :cut], axis=1)
        t_low, t_up = _euler_tail(lin[:, cut:], werr[:, cut:])
        sign_s = sign[:, cut]
        k_s = float(k0 + cut)
        log_a_est = m_new + np.log(s_excl)
        # relative tolerance e^-30, tightened to e^-30·|log A| near A = 1 (ε ∝ log A), but not
        # below the rounding floor
        rel = np.minimum(math.exp(_LOG_REL_TOL), math.exp(_LOG_REL_TOL) * np.abs(log_a_est))
        rel = np.maximum(rel, _REL_FLOOR)
        dec_l = (log_l[:, -1] <= log_l[:, cut]) | np.isneginf(log_l[:, -1])
        dec_u = (log_u[:, -1] <= log_u[:, cut]) | np.isneginf(log_u[:, -1])
        hit = (k_s >= fl[r] + 1.0) & dec_l & dec_u & (s_excl > 0) & (t_up - t_low <= rel * s_excl)
        if hit.any():
            h = np.nonzero(hit)[0]
            rows = r[h]
            nb = nblk[rows] + 1.0
            allowance = 0.5 * _EPS * (err_excl[h] + nb * (2.0 + math.log2(block)) * abs_excl[h])
            # the tail carries the sign of its first term; take the end that makes A larger
            tail = np.where(sign_s[h] > 0, t_up[h], -t_low[h])
            upper = s_excl[h] + tail + allowance
            result[rows] = np.where(upper > 0, m_new[h] + np.log(upper), np.inf)
            converged[rows] = upper > 0
        keep = ~hit
        rk = r[keep]
        scale[rk] = m_new[keep]
        total[rk] = s_excl[keep] + np.sum(slin[keep, cut:], axis=1)
        absum[rk] = abs_excl[keep] + np.sum(lin[keep, cut:], axis=1)
        errsum[rk] = err_excl[keep] + np.sum(werr[keep, cut:], axis=1)
        nblk[rk] += 1.0
        active = rk
        k0 += block
        block = min(block * 2, 8192)
    return result, converged


def log_a_frac(q: float, sigma: float, alpha: ArrayLike) -> np.ndarray | float:
    """log A_α of the Poisson-subsampled Gaussian at fractional orders ([MTZ19] §3.3).

    Sums the *signed* generalised-binomial series split at z₁, vectorized over
    all orders. Stops when the omitted tail is pinned down to e⁻³⁰ of the total (or the
    rounding floor) with both parts decreasing, then adds a rigorous upper bound on the tail
    (an Euler-transform refinement of "the first omitted |term|", valid because the term
    magnitudes are completely monotone), so the result is an upper bound on log A_α (exact up
    to ≈ 10⁻¹⁴ relative).

    Args:
        q: sampling rate in (0, 1).
        sigma: noise multiplier in (0, ∞).
        alpha: orders in (1, ∞), not integers (scalar or array).

    Returns:
        log A_α (upper bound). ``inf`` with a :class:`RenyiNumericalWarning` where the series
        did not converge within the iteration cap.

    Raises:
        DomainError: for q ∉ (0, 1), σ ≤ 0 or an order outside (1, ∞) or integer.
    """
    q = PROBABILITY_OPEN.check("q", q)
    sigma = POSITIVE.check("sigma", sigma)
    arr = check_array("alpha", alpha)
    ok = np.isfinite(arr) & (arr > 1) & (arr != np.floor(arr))
    if not np.all(ok):
        bad = arr[~ok].flat[0]
        raise DomainError(
            f"alpha must be a non-integer in (1, inf); got {float(bad)!r}", name="alpha", value=bad
        )
    flat = arr.ravel()
    res, conv = _log_a_frac_rows(np.full(flat.size, q), np.full(flat.size, sigma), flat)
    if not np.all(conv):
        warnings.warn(
            "fractional-order series for the subsampled Gaussian did not converge; "
            "returning inf (a valid, conservative bound)",
            RenyiNumericalWarning,
            stacklevel=2,
        )
    out = res.reshape(arr.shape)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------------------------
# The RDP curve
# ----------------------------------------------------------------------------------------------
def _finish_eps(log_a: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, bool]:
    """ε = log A/(α−1), with tiny negative round-off clamped to 0 and large negatives → inf."""
    with np.errstate(invalid="ignore"):
        eps = log_a / (alpha - 1.0)
    bad = eps < -1e-12
    eps = np.where(eps < 0, 0.0, eps)
    eps = np.where(bad | np.isnan(eps), np.inf, eps)
    return eps, bool(np.any(bad))


def _log_a_rows(
    q: np.ndarray, sigma: np.ndarray, alpha: np.ndarray, chord_small: bool = True
) -> tuple[np.ndarray, bool]:
    """Upper bound on log A_α = (α−1)·ε(α) per row for 0 < q < 1, σ > 0, finite α > 1.

    Integer orders: exact sum. Fractional orders ≤ _FRAC_SERIES_MAX: signed series (and, with
    ``chord_small``, the smaller of it and the integer chord). Larger fractional orders: the
    chord only. Orders beyond _MAX_EXACT_ORDER: the unsubsampled (α−1)α/(2σ²), valid by joint
    convexity. Returns (log A, any_failure).
    """
    unsub = (alpha - 1.0) * alpha * 0.5 / sigma**2
    is_int = alpha == np.floor(alpha)
    amax = alpha.max() if alpha.size else 0.0
    # fast paths (the common DP-SGD calls): all integer, or all fractional and small
    if amax <= _MAX_EXACT_ORDER and is_int.all():
        return np.minimum(_log_a_int_rows(q, sigma, alpha.astype(np.int64)), unsub), False
    if amax <= _FRAC_SERIES_MAX and not chord_small and not is_int.any():
        la, conv = _log_a_frac_rows(q, sigma, alpha)
        return np.minimum(la, unsub), not bool(conv.all())
    out = np.full(alpha.shape, np.inf)
    fail = False
    huge = alpha > _MAX_EXACT_ORDER
    out[huge] = unsub[huge]
    ii = np.nonzero(is_int & ~huge)[0]
    if ii.size:
        out[ii] = _log_a_int_rows(q[ii], sigma[ii], alpha[ii].astype(np.int64))
    ff = np.nonzero(~is_int & ~huge)[0]
    if ff.size:
        la = np.full(ff.size, np.inf)
        small = alpha[ff] <= _FRAC_SERIES_MAX
        if np.any(small):
            fs = ff[small]
            la[small], conv = _log_a_frac_rows(q[fs], sigma[fs], alpha[fs])
            fail |= not bool(np.all(conv))
        # K(λ) = (α−1)ε is convex with K(0) = 0, so the chord between the neighbouring integer
        # orders is also an upper bound ([WBK19] Cor. 10); keep the smaller of the two.
        need = np.ones(ff.size, dtype=bool) if chord_small else ~small
        if np.any(need):
            fn_ = ff[need]
            lo = np.floor(alpha[fn_])
            t = alpha[fn_] - lo
            k_lo = np.zeros(fn_.size)
            m = lo >= 2
            if np.any(m):
                k_lo[m] = _log_a_int_rows(q[fn_][m], sigma[fn_][m], lo[m].astype(np.int64))
            k_hi = _log_a_int_rows(q[fn_], sigma[fn_], (lo + 1).astype(np.int64))
            la[need] = np.minimum(la[need], (1 - t) * k_lo + t * k_hi)
        out[ff] = la
    # subsampling never increases the loss (joint convexity): the plain Gaussian bounds all
    return np.minimum(out, unsub), fail


def _rdp_rows(q: np.ndarray, sigma: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, bool]:
    """ε(α) per row for 0 < q < 1, σ > 0, finite α > 1. Returns (eps, any_failure)."""
    la, fail = _log_a_rows(q, sigma, alpha)
    eps, f = _finish_eps(la, alpha)
    return eps, fail or f


def rdp_poisson_gaussian(q: float, sigma: float, alphas: ArrayLike) -> np.ndarray | float:
    """RDP curve ε(α) of the Poisson-subsampled Gaussian mechanism ([MTZ19] §3).

    ε(α) = D_α(μ‖μ₀) with μ = (1−q)N(0,σ²) + qN(1,σ²), μ₀ = N(0,σ²); the reverse direction is
    never larger ([MTZ19] §3). Exact at integer orders (binomial sum) and at fractional orders
    (signed split series), both in log space and vectorized.

    Args:
        q: sampling rate in [0, 1]. q = 0 gives 0; q = 1 gives the Gaussian α/(2σ²).
        sigma: noise multiplier σ/Δ₂ in (0, ∞).
        alphas: orders in (1, ∞] (any shape).

    Returns:
        ε(α), an upper bound (exact up to ≈ 10⁻¹⁴ relative): a float for a scalar order.
        ``inf`` at α = ∞ (for q > 0) and, with a :class:`RenyiNumericalWarning`, wherever the
        computation failed. Orders above 2¹⁶ use the unsubsampled α/(2σ²) (valid, loose).

    Raises:
        DomainError: q ∉ [0, 1], σ ≤ 0, or an order outside (1, ∞].

    Examples:
        >>> round(float(rdp_poisson_gaussian(0.01, 1.1, 2)), 12)
        0.000128510082
    """
    q = _RATE.check("q", q)
    sigma = POSITIVE.check("sigma", sigma)
    arr = ORDER.check_array("alphas", alphas)
    flat = arr.ravel()
    out: np.ndarray
    if q == 0.0:
        out = np.zeros(flat.size)
    elif q == 1.0:
        out = flat * (0.5 / sigma**2)
    else:
        out = np.full(flat.size, np.inf)
        fin = np.isfinite(flat)
        if np.any(fin):
            idx = np.nonzero(fin)[0]
            vals, fail = _rdp_rows(np.full(idx.size, q), np.full(idx.size, sigma), flat[idx])
            out[idx] = vals
            if fail:
                warnings.warn(
                    "subsampled-Gaussian RDP could not be computed accurately at some orders; "
                    "returning inf there (a valid, conservative bound)",
                    RenyiNumericalWarning,
                    stacklevel=2,
                )
    out = out.reshape(arr.shape)
    return float(out) if out.ndim == 0 else out


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


# ----------------------------------------------------------------------------------------------
# DP-SGD fast path: ε, sweeps and calibration
# ----------------------------------------------------------------------------------------------
_DENSE_MAX = 64  # integer orders 2..64 cover DP-SGD practice; larger optima are marched to
_ROUND_POINTS = 24
_REFINE_MAX = 1 << 14  # largest order refined continuously
_WINDOW = 0.3  # half-width of the first fractional grid around the integer-parabola vertex


def _cks(total_rdp: np.ndarray, alpha: np.ndarray, log_delta: np.ndarray) -> np.ndarray:
    """[CKS20] Prop. 12: ε = ε_R + log(1 − 1/α) − (log δ + log α)/(α − 1), valid at every α > 1."""
    with np.errstate(invalid="ignore", over="ignore"):
        e = total_rdp + np.log1p(-1.0 / alpha) - (log_delta + np.log(alpha)) / (alpha - 1.0)
    return np.where(np.isnan(e), np.inf, e)


def _per_step_log_a(q: np.ndarray, sigma: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Per-step log A_α = (α−1)·ε(α) (upper bound) for (q, σ, α) triples; q ∈ (0, 1], α > 1 finite."""
    out = np.empty(alpha.size)
    one = q == 1.0
    # q = 1 is the plain Gaussian
    out[one] = (alpha[one] - 1.0) * alpha[one] * 0.5 / sigma[one] ** 2
    rest = np.nonzero(~one)[0]
    if rest.size:
        out[rest] = _log_a_rows(q[rest], sigma[rest], alpha[rest], chord_small=False)[0]
    return np.maximum(out, 0.0)


Objective = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _eps_objective(q: np.ndarray, sigma: np.ndarray, steps: np.ndarray, log_delta: np.ndarray) -> Objective:
    """CKS objective per (row, α): T·ε_R(α) + log1p(−1/α) − (log δ + log α)/(α−1)."""

    def obj(rows: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        la = _per_step_log_a(q[rows], sigma[rows], alpha)
        with np.errstate(invalid="ignore", over="ignore"):
            tot = steps[rows] * (la / (alpha - 1.0))
        tot = np.where(steps[rows] == 0, 0.0, tot)
        return _cks(tot, alpha, log_delta[rows])

    return obj


def _vertex(x1: np.ndarray, h: np.ndarray, f0: np.ndarray, f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    """Abscissa of the vertex of the parabola through (x1−h, f0), (x1, f1), (x1+h, f2); NaN if
    the parabola does not open upward."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        curv = f0 - 2.0 * f1 + f2
        xv = x1 + 0.5 * h * (f0 - f2) / curv
    return np.where(curv > 0, xv, np.nan)


def _update(best_a: np.ndarray, best_v: np.ndarray, where: np.ndarray, pts: np.ndarray, vals: np.ndarray) -> None:
    """In place: best_(a, v)[where] ← the best of themselves and each row of (pts, vals)."""
    j = np.argmin(vals, axis=1)
    r = np.arange(where.size)
    better = vals[r, j] < best_v[where]
    best_a[where] = np.where(better, pts[r, j], best_a[where])
    best_v[where] = np.where(better, vals[r, j], best_v[where])


_U5 = np.arange(-2.0, 3.0)
#: maps values at u = −2…2 to the coefficients c₀…c₄ of the interpolating quartic
_QUARTIC = np.linalg.inv(np.vander(_U5, 5, increasing=True)).T


def _quartic_min_one(c0: float, c1: float, c2: float, c3: float, c4: float) -> float:
    if not c2 > 0:
        return math.nan
    u = -c1 / (2.0 * c2)
    try:
        for _ in range(4):
            u -= (c1 + u * (2 * c2 + u * (3 * c3 + 4 * c4 * u))) / (2 * c2 + u * (6 * c3 + 12 * c4 * u))
    except (ZeroDivisionError, OverflowError):
        return math.nan
    return u if 2 * c2 + u * (6 * c3 + 12 * c4 * u) > 0 and math.isfinite(u) else math.nan


def _quartic_min(f5: np.ndarray) -> np.ndarray:
    """Per row, the local minimiser u ∈ (−1, 1) of the quartic through (u, f) at u = −2…2 (NaN if
    Newton's method does not settle there)."""
    c = f5 @ _QUARTIC
    if c.shape[0] <= 4:  # plain floats are much faster than tiny arrays
        return np.array([_quartic_min_one(*row) for row in c.tolist()])
    c1, c2, c3, c4 = c[:, 1], c[:, 2], c[:, 3], c[:, 4]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        u = -c1 / (2.0 * c2)
        for _ in range(4):
            u = u - (c1 + u * (2 * c2 + u * (3 * c3 + 4 * c4 * u))) / (2 * c2 + u * (6 * c3 + 12 * c4 * u))
        curv = 2 * c2 + u * (6 * c3 + 12 * c4 * u)
    return np.where((c2 > 0) & (curv > 0), u, np.nan)
    return u


def _minimise(obj: Objective, rows: np.ndarray, refine: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Minimise a quasi-convex objective over α > 1 for each row; returns (value, α).

    (1) Integer orders 2…64, all rows in one vectorized call. (1b) Rows whose best order is 64
    march geometrically to larger integer orders and zoom back to a bracket of width 2.
    (2) Continuous refinement inside (α*−1, α*+1): a vectorized grid on a window around the
    vertex of the parabola through the integer values (the whole bracket if the minimum lands
    on the window's edge), then the minimiser of the interpolating quartic through the best grid
    point and its neighbours. Quasi-convexity
    (the CGF (α − 1)·ε(α) of an exact curve is convex) makes the best grid point bracket the minimum. Each value is exactly the
    objective at the returned α.
    """
    n = rows.size
    orders = np.arange(2, _DENSE_MAX + 1, dtype=np.float64)
    vals = obj(np.repeat(rows, orders.size), np.tile(orders, n)).reshape(n, orders.size)
    bi = np.argmin(vals, axis=1)
    best_a = orders[bi]
    best_v = vals[np.arange(n), bi]
    lo = best_a - 1.0
    hi = best_a + 1.0
    edge = np.nonzero(bi == orders.size - 1)[0]
    if edge.size:
        a_e, v_e = _march(obj, rows[edge], best_a[edge], best_v[edge])
        best_a[edge], best_v[edge] = a_e, v_e
    if not refine:
        return best_v, best_a
    # Very large orders are left integer: the fractional series costs O(α) terms per point.
    fine = np.nonzero(best_a <= _REFINE_MAX)[0]
    if fine.size == 0:
        return best_v, best_a
    ar = best_a[fine]
    idx = np.arange(fine.size)
    lo = np.maximum(ar - 1.0, 1.0)
    hi = ar + 1.0
    # window guess: the vertex of the parabola through the integer values at α*−1, α*, α*+1
    ii = bi[fine]
    has3 = (ii >= 1) & (ii <= orders.size - 2)
    j = np.clip(ii, 1, orders.size - 2)
    f0, f1, f2 = vals[fine, j - 1], vals[fine, j], vals[fine, j + 1]
    curv = f0 - 2.0 * f1 + f2
    xv = orders[j] + 0.5 * (f0 - f2) / curv
    ok = has3 & np.isfinite(xv) & (curv > 0) & (np.abs(xv - ar) < 1.0)
    w_lo = np.where(ok, np.maximum(xv - _WINDOW, lo), lo)
    w_hi = np.where(ok, np.minimum(xv + _WINDOW, hi), hi)
    sub = rows[fine]
    t = np.arange(1, _ROUND_POINTS + 1, dtype=np.float64) / (_ROUND_POINTS + 1)

    def grid(sel: np.ndarray, a_lo: np.ndarray, a_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pts = a_lo[:, None] + (a_hi - a_lo)[:, None] * t[None, :]
        vv = obj(np.repeat(sub[sel], t.size), pts.ravel()).reshape(sel.size, t.size)
        return pts, vv

    pts, vv = grid(idx, w_lo, w_hi)
    i = np.argmin(vv, axis=1)
    # the minimum sits on the edge of a narrowed window: search the whole bracket instead
    redo = np.nonzero(ok & ((i == 0) | (i == t.size - 1)))[0]
    if redo.size:
        p2, v2 = grid(redo, lo[redo], hi[redo])
        pts[redo], vv[redo] = p2, v2
        i[redo] = np.argmin(v2, axis=1)
    # the minimum hugs α = 1 (huge ε): zoom toward 1 geometrically
    for _ in range(8):
        near1 = np.nonzero((i == 0) & (pts[:, 0] - 1.0 < 0.5))[0]
        if near1.size == 0:
            break
        p2, v2 = grid(near1, np.ones(near1.size), pts[near1, 1])
        keep_old = np.min(v2, axis=1) >= vv[near1, 0]
        if np.all(keep_old):
            break
        upd = near1[~keep_old]
        pts[upd], vv[upd] = p2[~keep_old], v2[~keep_old]
        i[upd] = np.argmin(v2[~keep_old], axis=1)
    gv = vv[idx, i]
    better = gv < best_v[fine]
    best_a[fine] = np.where(better, pts[idx, i], best_a[fine])
    best_v[fine] = np.where(better, gv, best_v[fine])
    # final step: the minimiser of the quartic through the best grid point and its four
    # neighbours (accurate to ~h⁵, far below the grid spacing h), evaluated exactly; where the
    # best point is too near the grid's edge, two parabolic steps instead
    hstep = pts[idx, 1] - pts[idx, 0]
    five = (i >= 2) & (i <= t.size - 3)
    k = np.nonzero(five)[0]
    if k.size:
        ic = i[k]
        f5 = np.column_stack([vv[k, ic + j] for j in range(-2, 3)])
        u = _quartic_min(f5)
        xq = pts[k, ic] + u * hstep[k]
        okq = np.isfinite(xq) & (np.abs(u) < 1.0) & (xq > 1.0)
        kq = k[okq]
        if kq.size:
            _update(best_a, best_v, fine[kq], xq[okq][:, None], obj(sub[kq], xq[okq])[:, None])
    ic = np.clip(i, 1, t.size - 2)
    v1 = _vertex(pts[idx, ic], hstep, vv[idx, ic - 1], vv[idx, ic], vv[idx, ic + 1])
    ok = ~five & (i > 0) & (i < t.size - 1) & np.isfinite(v1) & (np.abs(v1 - pts[idx, i]) < hstep)
    k = np.nonzero(ok)[0]
    if k.size:
        d = hstep[k] / 8.0
        trip = np.column_stack([v1[k] - d, v1[k], v1[k] + d])
        trip = np.where(trip > 1.0, trip, np.nan)
        good = np.isfinite(trip)
        tv = np.full(trip.shape, np.inf)
        tv[good] = obj(np.repeat(sub[k], 3)[good.ravel()], trip[good])
        _update(best_a, best_v, fine[k], trip, tv)
        v2 = _vertex(trip[:, 1], d, tv[:, 0], tv[:, 1], tv[:, 2])
        ok2 = np.isfinite(v2) & (np.abs(v2 - trip[:, 1]) < d) & (v2 > 1.0)
        k2 = np.nonzero(ok2)[0]
        if k2.size:
            vals2 = obj(sub[k[k2]], v2[k2])
            _update(best_a, best_v, fine[k[k2]], v2[k2][:, None], vals2[:, None])
    return best_v, best_a


def _march(obj: Objective, rows: np.ndarray, a0: np.ndarray, v0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best integer order above the dense range, for all rows at once (objective quasi-convex)."""
    n = rows.size
    grid = [a0.copy()]
    vals = [v0.copy()]
    cur = a0.copy()
    live = np.ones(n, dtype=bool)
    mult = 1.25 ** np.arange(1, 9)
    while np.any(live):
        li = np.nonzero(live)[0]
        nxt = np.minimum(np.round(cur[li, None] * mult[None, :]), float(_MAX_EXACT_ORDER))
        v = obj(np.repeat(rows[li], mult.size), nxt.ravel()).reshape(li.size, mult.size)
        g_add = np.full((n, mult.size), np.nan)
        v_add = np.full((n, mult.size), np.inf)
        g_add[li], v_add[li] = nxt, v
        grid.append(g_add)
        vals.append(v_add)
        cur[li] = nxt[:, -1]
        # stop once the objective has turned upward (quasi-convexity) or the cap is reached
        turned = np.min(v, axis=1) > np.minimum(v[:, 0], np.min(np.column_stack(
            [x[li] if x.ndim == 1 else np.min(x[li], axis=1) for x in vals[:-1]]), axis=1))
        turned |= np.argmin(v, axis=1) < mult.size - 1
        turned |= nxt[:, -1] >= _MAX_EXACT_ORDER
        live[li[turned]] = False
    G = np.column_stack([g if g.ndim == 2 else g[:, None] for g in grid])
    V = np.column_stack([v if v.ndim == 2 else v[:, None] for v in vals])
    G = np.where(np.isnan(G), np.inf, G)
    order = np.argsort(G, axis=1)
    G = np.take_along_axis(G, order, axis=1)
    V = np.take_along_axis(V, order, axis=1)
    idx = np.arange(n)
    i = np.argmin(V, axis=1)
    best_a, best_v = G[idx, i], V[idx, i]
    lo = G[idx, np.maximum(i - 1, 0)]
    hi = np.where(i + 1 < G.shape[1], G[idx, np.minimum(i + 1, G.shape[1] - 1)], best_a)
    hi = np.where(np.isfinite(hi), hi, best_a)
    # zoom on integers until every bracket is at most 2 wide
    t = np.linspace(0.0, 1.0, 18)[1:-1]
    while np.any(hi - lo > 2):
        z = np.nonzero(hi - lo > 2)[0]
        pts = np.round(lo[z, None] + (hi - lo)[z, None] * t[None, :])
        v = obj(np.repeat(rows[z], t.size), pts.ravel()).reshape(z.size, t.size)
        j = np.argmin(v, axis=1)
        zi = np.arange(z.size)
        better = v[zi, j] < best_v[z]
        best_a[z] = np.where(better, pts[zi, j], best_a[z])
        best_v[z] = np.where(better, v[zi, j], best_v[z])
        step = np.maximum((hi[z] - lo[z]) / (t.size + 1), 1.0)
        lo[z] = np.maximum(best_a[z] - np.ceil(step), lo[z])
        hi[z] = np.minimum(best_a[z] + np.ceil(step), hi[z])
        # guarantee progress when rounding collapses the grid
        stuck = (hi[z] - lo[z] > 2) & (np.ceil(step) <= 1.0)
        lo[z[stuck]], hi[z[stuck]] = best_a[z[stuck]] - 1.0, best_a[z[stuck]] + 1.0
    return best_a, best_v


def _check_dpsgd(q: Any, sigma: Any, steps: Any, delta: Any) -> tuple[float, float, int, float]:
    q = _RATE.check("rate", q)
    sigma = POSITIVE.check("sigma", sigma)
    steps = check_int("steps", steps, minimum=0)
    delta = PROBABILITY_OPEN.check("delta", delta)
    return q, sigma, steps, delta


def _eps_one(q: float, sigma: float, steps: int, log_delta: float, refine: bool = True) -> tuple[float, float]:
    obj = _eps_objective(np.array([q]), np.array([sigma]), np.array([float(steps)]), np.array([log_delta]))
    v, a = _minimise(obj, np.array([0]), refine=refine)
    return max(float(v[0]), 0.0), float(a[0])


def dpsgd_epsilon(q: float, sigma: float, steps: int, delta: float) -> tuple[float, float]:
    """ε of DP-SGD (``steps`` Poisson-subsampled Gaussian steps) at δ, with its witness order.

    Fast path: the exact per-step curve ([MTZ19]) at integer orders 2…64 in one vectorized
    call, the best integer order under [CKS20] Prop. 12
    ε = T·ε_R(α) + log1p(−1/α) − (log δ + log α)/(α−1), then a continuous refinement on
    (α*−1, α*+1) by vectorized grids and a parabolic step (the objective is quasi-convex because
    the CGF is convex). Larger optimal orders are found by a geometric march. The
    returned ε is evaluated exactly at the returned α, so it is a valid upper bound whatever the
    optimiser did.

    Args:
        q: sampling rate in [0, 1].
        sigma: noise multiplier in (0, ∞).
        steps: number of steps, an integer ≥ 0.
        delta: target δ in (0, 1).

    Returns:
        ``(epsilon, alpha)``; ``(0.0, inf)`` when nothing is spent (q = 0 or steps = 0).

    Raises:
        DomainError: naming the parameter, for out-of-domain input.

    Examples:
        >>> eps, alpha = dpsgd_epsilon(0.01, 1.1, 1000, 1e-5)
        >>> round(eps, 6), round(alpha, 2)
        (1.711714, 9.57)
    """
    q, sigma, steps, delta = _check_dpsgd(q, sigma, steps, delta)
    if q == 0.0 or steps == 0:
        return 0.0, math.inf
    return _eps_one(q, sigma, steps, math.log(delta))


def dpsgd_epsilon_many(
    qs: ArrayLike, sigmas: ArrayLike, steps: ArrayLike, delta: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorized :func:`dpsgd_epsilon` over many configurations (broadcast together).

    Returns:
        ``(epsilons, alphas)`` arrays of the broadcast shape; each ε is evaluated at its α.

    Raises:
        DomainError: naming the parameter, if any entry is out of domain.
    """
    q = _RATE.check_array("rate", qs)
    s = POSITIVE.check_array("sigma", sigmas)
    t = Interval(0.0, math.inf, lo_closed=True).check_array("steps", steps)
    if np.any(t != np.floor(t)):
        bad = t[t != np.floor(t)].flat[0]
        raise DomainError(f"steps must be an integer in [0, inf); got {float(bad)!r}", name="steps", value=bad)
    d = PROBABILITY_OPEN.check_array("delta", delta)
    q, s, t, d = np.broadcast_arrays(q, s, t, d)
    shape = q.shape
    q, s, t, d = (np.ascontiguousarray(x, dtype=np.float64).ravel() for x in (q, s, t, d))
    eps = np.zeros(q.size)
    alpha = np.full(q.size, np.inf)
    live = np.nonzero((q > 0) & (t > 0))[0]
    if live.size:
        v, a = _minimise(_eps_objective(q, s, t, np.log(d)), live)
        eps[live], alpha[live] = np.maximum(v, 0.0), a
    return eps.reshape(shape), alpha.reshape(shape)


def dpsgd_log_delta(q: float, sigma: float, steps: int, epsilon: float) -> tuple[float, float]:
    """log δ of DP-SGD at ε, with its witness order ([CKS20] Prop. 12 in log form).

    log δ = T·log A_α − (α−1)(ε − log(1 − 1/α)) − log α is convex in λ = α − 1 for the exact
    curve (the CGF (α − 1)·ε(α) of an exact curve is convex); minimised by the same integer-then-continuous search as
    :func:`dpsgd_epsilon`, and evaluated exactly at the returned α.

    Returns:
        ``(log_delta, alpha)``; ``(-inf, inf)`` when nothing is spent. Clip δ to 1 yourself.
    """
    q, sigma, steps, _ = _check_dpsgd(q, sigma, steps, 0.5)
    epsilon = Interval(0.0, math.inf, lo_closed=True).check("epsilon", epsilon)
    if q == 0.0 or steps == 0:
        return -math.inf, math.inf
    qa, sa = np.array([q]), np.array([sigma])

    def obj(rows: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        la = _per_step_log_a(qa[rows], sa[rows], alpha)
        with np.errstate(invalid="ignore", over="ignore"):
            v = steps * la - (alpha - 1.0) * (epsilon - np.log1p(-1.0 / alpha)) - np.log(alpha)
        return np.where(np.isnan(v), np.inf, v)

    v, a = _minimise(obj, np.array([0]))
    return float(v[0]), float(a[0])


# ----- calibration -----------------------------------------------------------------------------
def _check_target(epsilon: Any, delta: Any) -> tuple[float, float]:
    epsilon = POSITIVE.check("epsilon", epsilon)
    delta = PROBABILITY_OPEN.check("delta", delta)
    return epsilon, delta


def _eps_at(q: float, sigma: float, steps: int, log_delta: float, alpha: float) -> float:
    """The CKS ε at one fixed order: an upper bound on the optimised ε (used to calibrate)."""
    la = _per_step_log_a(np.array([q]), np.array([sigma]), np.array([alpha]))[0]
    return float(_cks(np.array([steps * la / (alpha - 1.0)]), np.array([alpha]), np.array([log_delta]))[0])


def _secant_safe(g: Callable[[float], float], x0: float, x1: float, rtol: float = 1e-11) -> float:
    """Secant iteration for the root of a smooth monotone g, from a safe x0 (g(x0) ≤ 0).

    Returns the safe iterate (g ≤ 0) closest to the root; x0 if no better one is found.
    """
    best, g_best = x0, g(x0)
    if g_best > 0:
        return x0
    xa, ga = x0, g_best
    xb = x1
    for _ in range(12):
        gb = g(xb)
        if gb <= 0 and gb > g_best:
            best, g_best = xb, gb
        if gb == ga or not math.isfinite(gb):
            break
        xc = xb - gb * (xb - xa) / (gb - ga)
        if not math.isfinite(xc) or xc <= 0:
            break
        if abs(xc - xb) <= rtol * abs(xb):
            # one last step toward the safe side of the converged root
            xs = xc * (1.0 + 8.0 * rtol) if (best - xc) > 0 else xc * (1.0 - 8.0 * rtol)
            gs = g(xs)
            if gs <= 0 and gs > g_best:
                best = xs
            break
        xa, ga, xb = xb, gb, xc
    return best


def _illinois(g: Callable[[float], float], safe: float, unsafe: float, rtol: float, maxiter: int = 60) -> float:
    """Bracketed regula falsi (Illinois) in log x for a monotone g; returns the safe bracket end.

    ``safe`` has g ≤ 0 and ``unsafe`` g > 0 (either order on the axis); the bracket always
    keeps one end of each kind, so the returned point satisfies g ≤ 0.
    """
    us, uu = math.log(safe), math.log(unsafe)
    gs, gu = g(safe), g(unsafe)
    if gs > 0:
        return safe
    side = 0
    for _ in range(maxiter):
        if abs(us - uu) <= rtol:
            break
        um = us - gs * (uu - us) / (gu - gs) if gu != gs else 0.5 * (us + uu)
        if not (min(us, uu) < um < max(us, uu)):
            um = 0.5 * (us + uu)
        gm = g(math.exp(um))
        if gm <= 0:
            us, gs = um, gm
            if side == -1:
                gu *= 0.5
            side = -1
        else:
            uu, gu = um, gm
            if side == 1:
                gs *= 0.5
            side = 1
    return math.exp(us)


def _calibrate(
    eps_of: Callable[[float, bool], tuple[float, float]],
    eps_fixed: Callable[[float, float], float],
    target: float,
    safe: float,
    unsafe: float,
) -> float:
    """Invert a monotone ε(x) cheaply; the caller verifies the result and steps to the safe side.

    (1) A coarse root (3 %) of the integer-orders-only ε: an upper bound on the refined ε, so
    its safe point is safe for the refined ε too. (2) Newton's method in log x on the refined
    ε itself. By the envelope theorem dε/dx = ∂F/∂x at the witness order α*(x), where
    F(x, α) is the fixed-order bound, so the slope is a forward difference of F at α*: one
    refined and one fixed-order evaluation per step, quadratic convergence. The last iterate
    is returned when Newton converged (it is then within a few ulps of the root, and the
    caller's verification steps it to the safe side); otherwise the best safe point seen.
    """
    # in log ε: ε spans orders of magnitude across the bracket, log ε is nearly linear in log x
    log_t = math.log(target)
    x = _illinois(lambda v: math.log(max(eps_of(v, False)[0], 1e-300)) - log_t, safe, unsafe, rtol=3e-2)
    toward = 1.0 if unsafe > x else -1.0
    best = x  # safe for the integer-order ε, hence for the refined ε
    h = 1e-6
    log_step = math.log1p(toward * h)
    for _ in range(10):
        e, alpha = eps_of(x, True)
        if not math.isfinite(e):
            return best
        if e <= target and (x - best) * toward >= 0:
            best = x
        e2 = eps_fixed(x * (1.0 + toward * h), alpha)
        slope = (e2 - e) / log_step
        if not (math.isfinite(slope) and slope != 0.0):
            return best
        du = -(e - target) / slope
        if not math.isfinite(du):
            return best
        x_new = x * math.exp(max(-0.5, min(0.5, du)))
        if abs(du) <= 1e-7:
            # Quadratic convergence: the error left after a step of 1e-7 is ~1e-14 (plus the
            # forward difference's 1e-6 relative slope error times |du|, ~1e-13). Step 1e-11
            # toward the safe side; the caller verifies.
            return x_new * (1.0 - toward * 1e-11)
        x = x_new
    return best


def _nudge(ok: Callable[[float], bool], x: float, direction: float, limit: float) -> float:
    """Move x toward ``limit`` by growing relative steps until ``ok(x)`` holds."""
    step = 1e-12
    y = x
    for _ in range(80):
        if ok(y):
            return y
        y = x * (1.0 + direction * step)
        step *= 2.0
        if (y - limit) * direction >= 0:
            return limit
    return limit


def dpsgd_sigma(q: float, steps: int, epsilon: float, delta: float,
                check: Callable[[float], bool] | None = None) -> float:
    """Smallest noise multiplier σ with DP-SGD ε ≤ ``epsilon`` at ``delta`` (safe side).

    ε decreases in σ. A bracketing root finder (regula falsi, Illinois variant, in log σ) on the
    integer-order ε brackets the answer; a secant solve at the fixed witness order refines it
    (both are upper bounds on the optimised ε, so the result stays on the safe side); finally
    σ is stepped upward until :func:`dpsgd_epsilon` itself verifies ε(σ) ≤ target.

    Args:
        q: sampling rate in (0, 1].
        steps: number of steps, integer ≥ 1.
        epsilon: target ε in (0, ∞).
        delta: target δ in (0, 1).
        check: the predicate σ ↦ "meets the target" used for the final verification
            (default: ``dpsgd_epsilon(q, σ, steps, delta)[0] <= epsilon``); a caller that
            reports a rounded-up ε passes its own, so σ is verified as it will be checked.

    Returns:
        σ with ``check(σ)`` true.

    Raises:
        DomainError: out-of-domain input, or a target that needs σ > 10¹².

    Examples:
        >>> s = dpsgd_sigma(0.01, 10_000, 3.0, 1e-5)
        >>> dpsgd_epsilon(0.01, s, 10_000, 1e-5)[0] <= 3.0
        True
    """
    q = Interval(0.0, 1.0, hi_closed=True).check("rate", q)
    steps = check_int("steps", steps, minimum=1)
    epsilon, delta = _check_target(epsilon, delta)
    ld = math.log(delta)

    memo: dict[tuple[float, bool], tuple[float, float]] = {}

    def eps_of(s: float, refine: bool) -> tuple[float, float]:
        key = (s, refine)
        if key not in memo:
            memo[key] = _eps_one(q, s, steps, ld, refine)
        return memo[key]

    ok = check if check is not None else (lambda s: dpsgd_epsilon(q, s, steps, delta)[0] <= epsilon)
    # bracket: lo unsafe (ε > target), hi safe (ε ≤ target) for the integer-order ε
    lo, hi = 1.0, 1.0
    if eps_of(1.0, False)[0] > epsilon:
        hi = 4.0
        while eps_of(hi, False)[0] > epsilon:
            lo, hi = hi, hi * 4.0
            if hi > 1e12:
                raise DomainError(
                    f"epsilon must be reachable with sigma <= 1e12; got {epsilon!r}", name="epsilon", value=epsilon
                )
    else:
        lo = 0.25
        while eps_of(lo, False)[0] <= epsilon:
            hi, lo = lo, lo / 4.0
            if lo < 1e-4:
                return _nudge(ok, hi, +1.0, 1e12)
    sigma = _calibrate(eps_of, lambda s, a: _eps_at(q, s, steps, ld, a), epsilon, hi, lo)
    return _nudge(ok, sigma, +1.0, 1e12)


def dpsgd_steps(q: float, sigma: float, epsilon: float, delta: float) -> int:
    """Largest number of steps T with DP-SGD ε ≤ ``epsilon`` at ``delta`` (0 if none).

    At a fixed order the CKS bound is linear in T, so T(α) = ⌊(ε − c(α))/ε_R(α)⌋ and the answer
    is the maximum over α of T(α): one maximisation over α of the per-step curve (same
    integer-then-continuous search as :func:`dpsgd_epsilon`), then a check with
    :func:`dpsgd_epsilon` (T is decreased in the rare case the check fails).

    Args:
        q: sampling rate in (0, 1].
        sigma: noise multiplier in (0, ∞).
        epsilon: target ε in (0, ∞).
        delta: target δ in (0, 1).

    Returns:
        The largest verified T (an ``int``; 0 if even one step exceeds the target).

    Raises:
        DomainError: out-of-domain input (q = 0 is rejected: every T would do).
    """
    q = Interval(0.0, 1.0, hi_closed=True).check("rate", q)
    sigma = POSITIVE.check("sigma", sigma)
    epsilon, delta = _check_target(epsilon, delta)
    ld = math.log(delta)
    qa, sa = np.array([q]), np.array([sigma])

    def neg_t(rows: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        la = _per_step_log_a(qa[rows], sa[rows], alpha)
        c = _cks(np.zeros(alpha.size), alpha, np.full(alpha.size, ld))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            t = (epsilon - c) / (la / (alpha - 1.0))
        t = np.where(np.isnan(t), -np.inf, t)
        return -t

    v, _ = _minimise(neg_t, np.array([0]))
    t_best = -float(v[0])
    if not t_best >= 1.0:
        return 0
    t = int(min(math.floor(t_best), 1 << 62))
    for _ in range(64):
        if t <= 0 or dpsgd_epsilon(q, sigma, t, delta)[0] <= epsilon:
            return max(t, 0)
        t = int(t * (1.0 - 1e-9)) if t > 10**9 else t - 1
    return 0


def dpsgd_rate(sigma: float, steps: int, epsilon: float, delta: float,
               check: Callable[[float], bool] | None = None) -> float:
    """Largest sampling rate q with DP-SGD ε ≤ ``epsilon`` at ``delta`` (safe side).

    ε increases with q; same two-stage root finding as :func:`dpsgd_sigma`, then q is stepped
    downward until :func:`dpsgd_epsilon` verifies the target. Returns 1.0 if q = 1 already meets
    the target, and 0.0 if no rate above 10⁻³⁰⁰ does.

    Raises:
        DomainError: out-of-domain input.
    """
    sigma = POSITIVE.check("sigma", sigma)
    steps = check_int("steps", steps, minimum=1)
    epsilon, delta = _check_target(epsilon, delta)
    ld = math.log(delta)
    if dpsgd_epsilon(1.0, sigma, steps, delta)[0] <= epsilon:
        return 1.0

    memo: dict[tuple[float, bool], tuple[float, float]] = {}

    def eps_of(x: float, refine: bool) -> tuple[float, float]:
        key = (x, refine)
        if key not in memo:
            memo[key] = _eps_one(x, sigma, steps, ld, refine)
        return memo[key]

    hi, lo = 1.0, 0.5
    while eps_of(lo, False)[0] > epsilon:
        hi, lo = lo, lo / 8.0
        if lo < 1e-300:
            return 0.0
    q = _calibrate(eps_of, lambda x, a: _eps_at(x, sigma, steps, ld, a), epsilon, lo, hi)
    ok = check if check is not None else (lambda x: dpsgd_epsilon(x, sigma, steps, delta)[0] <= epsilon)
    return _nudge(ok, q, -1.0, 0.0)
