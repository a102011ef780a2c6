"""Numerics of privacy amplification by subsampling (pure functions, no guarantee objects).

The Poisson-subsampled Gaussian ([MTZ19] §3). Each record is kept with
probability ``q``; the sum of the kept, ℓ₂-clipped contributions gets N(0, σ²) noise, with σ the
*noise multiplier* (σ/Δ₂). Under add/remove adjacency the worst pair is

    μ₀ = N(0, σ²)   versus   μ = (1 − q)·N(0, σ²) + q·N(1, σ²),

and the RDP curve is ε(α) = D_α(μ‖μ₀) = log A_α / (α − 1) with A_α = E_{μ₀}[(μ/μ₀)^α].
(α − 1)·ε(α) = log A_α is an exact cumulant generating function, hence convex in α, which
makes continuous optimisation over α safe (the CGF (α − 1)·ε(α) of an exact curve is convex).

Beside it: the general Poisson bound of [ZW19] for any base RDP curve and the without-replacement
bound of [WBK19] Thm 9 (:mod:`._subsampled_general`), and the fast ε / calibration path for
DP-SGD (:mod:`._subsampled_dpsgd`).

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

import numpy as np
from numpy.typing import ArrayLike

from renyi.core._logmath import erfcx, lgamma, lgamma_int_table, log_expm1
from renyi.core._validation import (
    ORDER,
    POSITIVE,
    PROBABILITY,
    PROBABILITY_OPEN,
    check_array,
)
from renyi.core.errors import DomainError, RenyiNumericalWarning

__all__ = [
    "log_a_int",
    "log_a_frac",
    "rdp_poisson_gaussian",
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


#: Integer orders above this are summed block by block, only where the terms matter
#: (:func:`_excess_gauss_windowed`); at and below it every term is summed.
_WINDOW_FROM = 128
#: Terms per block of the windowed sum.
_BLOCK = 64
#: A block is summed term by term unless its bound is below e^-_SKIP of the largest term found
#: (then the bound itself is added: the result stays an upper bound).
_SKIP = 60.0
#: log k! from math.lgamma up to here; Stirling's series beyond (see _lgamma_ints).
_LGAMMA_EXACT = 4096


def _lgamma_ints(k: np.ndarray) -> np.ndarray:
    """log k! for integer k ≥ 0 (any shape): math.lgamma's table below _LGAMMA_EXACT, beyond it
    Stirling's series (x−½)log x − x + ½log 2π + 1/(12x) − 1/(360x³) + 1/(1260x⁵) − 1/(1680x⁷)
    at x = k + 1, whose truncation error is below 1/(1188x⁹) < 10⁻³⁴ there; evaluated in
    floating point it is within a few ulps of the value (the caller's allowance covers them)."""
    table = lgamma_int_table(_LGAMMA_EXACT)
    big = k >= _LGAMMA_EXACT
    if not np.any(big):
        result: np.ndarray = table[k]
        return result
    out: np.ndarray = table[np.minimum(k, _LGAMMA_EXACT)]
    x = k[big].astype(np.float64) + 1.0
    ix = 1.0 / x
    ix2 = ix * ix
    corr = ix * (1.0 / 12.0 - ix2 * (1.0 / 360.0 - ix2 * (1.0 / 1260.0 - ix2 * (1.0 / 1680.0))))
    out[big] = (x - 0.5) * np.log(x) - x + 0.5 * math.log(2.0 * math.pi) + corr
    return out


def _excess_gauss_windowed(alphas: np.ndarray, logq: np.ndarray, log1mq: np.ndarray,
                           inv2s2: np.ndarray) -> np.ndarray:
    """The upper bound of :func:`_excess_int_rows` for the subsampled Gaussian, summing only the
    blocks of terms that matter (large orders: milliseconds instead of a second on a grid).

    The terms t_k = C(α,k)(1−q)^{α−k}q^k·w_k (k = 2…α, w_k = e^{c·k(k−1)} − 1) are cut into
    blocks of _BLOCK. In a block [a, b], h(k) = log[C(α,k)(1−q)^{α−k}q^k] is the log of a
    Binomial(α, q) mass, which increases up to the mode m = ⌊(α+1)q⌋ and decreases after it,
    so max h = h(clip(m, a, b)); and log w_k increases with k. Hence every term of the block is
    at most U = h(clip(m, a, b)) + log w_b (a margin of one nat covers rounding and a mode off by
    one), and the block sums to at most |block|·e^U. Two exact terms per block give a lower
    bound L on the largest term; the blocks with log|block| + U ≥ L − _SKIP are summed term by
    term, the others contribute their bound |block|·e^U (added, never dropped; together below
    e^{L−_SKIP+log(#blocks)}, i.e. ~10⁻²² of the total). The result is an upper bound on
    log(S − 1), with the rounding allowance of :func:`_excess_int_rows` (10u instead of 4u, for
    the Stirling values of log k!, within 4 ulps of math.lgamma's).
    """
    n = alphas.size
    a = alphas.astype(np.int64)
    lr = logq - log1mq
    nb = (a - 2) // _BLOCK + 1
    row = np.repeat(np.arange(n), nb)
    first = np.cumsum(nb) - nb
    lo = 2 + (np.arange(row.size) - np.repeat(first, nb)) * _BLOCK
    am = a[row]
    hi = np.minimum(lo + _BLOCK - 1, am)
    mode = np.floor((a + 1).astype(np.float64) * np.exp(logq)).astype(np.int64)
    kc = np.clip(mode[row], lo, hi)
    c = inv2s2[row]
    lrr = lr[row]
    lg_am = _lgamma_ints(am)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        h_c = -_lgamma_ints(am - kc) - _lgamma_ints(kc) + kc * lrr
        h_hi = -_lgamma_ints(am - hi) - _lgamma_ints(hi) + hi * lrr
        lw_c = np.asarray(log_expm1((kc * (kc - 1)).astype(np.float64) * c))
        lw_hi = np.asarray(log_expm1((hi * (hi - 1)).astype(np.float64) * c))
        size = (hi - lo + 1).astype(np.float64)
        margin = 1.0 + 1e-12 * (3.0 * lg_am + am * np.abs(lrr) + 2.0 * c * am.astype(np.float64) ** 2)
        ub = h_c + lw_hi + np.log(size) + margin
        low = np.full(n, -np.inf)
        np.maximum.at(low, row, np.maximum(h_c + lw_c, h_hi + lw_hi))
    keep = ~(ub < low[row] - _SKIP)
    skipped = np.full(n, -np.inf)
    if not np.all(keep):
        np.logaddexp.at(skipped, row[~keep], ub[~keep])
    pr, plo, phi = row[keep], lo[keep], hi[keep]
    k = plo[:, None] + np.arange(_BLOCK)[None, :]
    valid = k <= phi[:, None]
    k = np.where(valid, k, 2)
    ap = a[pr][:, None]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        terms = (-_lgamma_ints(ap - k) - _lgamma_ints(k) + k * lr[pr][:, None]
                 + np.asarray(log_expm1((k * (k - 1)).astype(np.float64) * inv2s2[pr][:, None])))
    terms[~valid] = -np.inf
    top = np.maximum(np.full(n, -np.inf), skipped)
    np.maximum.at(top, pr, terms.max(axis=1))
    shift = np.where(np.isfinite(top), top, 0.0)
    total = np.zeros(n)
    with np.errstate(invalid="ignore", over="ignore"):
        np.add.at(total, pr, np.exp(terms - shift[pr][:, None]).sum(axis=1))
        total += np.exp(skipped - shift)
        af = a.astype(np.float64)
        lg_a = _lgamma_ints(a)
        res = lg_a + af * log1mq + shift + np.log(total)
        mag = 3.0 * lg_a + af * (np.abs(logq) + np.abs(log1mq)) + 2.0 * af * (af - 1.0) * inv2s2 + 1.0
        res = res + 10.0 * _EPS * (mag + 8.0 + np.log(af))
    out: np.ndarray = np.where(np.isnan(res), np.inf, res)
    return out


def _log_a_int_rows(q: np.ndarray, sigma: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """log A_α for integer α ≥ 2 with per-row q ∈ (0, 1) and σ > 0 (upper bound, see above).

    Orders up to _WINDOW_FROM sum every term; larger ones sum the blocks that matter
    (:func:`_excess_gauss_windowed`, equally an upper bound)."""
    logq = np.log(q)
    log1mq = np.log1p(-q)
    inv2s2 = 0.5 / (sigma * sigma)
    ints = alphas.astype(np.int64)
    big = ints > _WINDOW_FROM
    excess = np.empty(ints.size)
    if np.any(big):
        excess[big] = _excess_gauss_windowed(ints[big], logq[big], log1mq[big], inv2s2[big])
    small = ~big
    if np.any(small):
        si = np.nonzero(small)[0]
        lw, mg = _gauss_log_w(inv2s2[si], ints[si])
        excess[si] = _excess_int_rows(ints[si], logq[si], log1mq[si], lw, mg)
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
