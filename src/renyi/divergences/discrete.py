"""Rényi divergences of distributions given by their probabilities, in log space.

The general discrete case: log Σ_i e^{log p_i + (α−1) z_i} with z_i = log p_i − log q_i, so
probabilities down to 1e-300 and orders up to 1e6 stay finite and accurate; the shared kernels
(orders, outputs, batched log-sum-exp over the privacy loss) live here too.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.core._lazy import special
from renyi.core._logmath import log1mexp, log_expm1
from renyi.core._validation import (
    ORDER_ANY,
    check_array,
)
from renyi.core.errors import DomainError

__all__ = ["NORMALIZATION_TOL", "renyi_divergence", "renyi_divergence_log"]

#: (for log-probabilities: |log Σ e^{log p_i}| ≤ NORMALIZATION_TOL · n). Accepted vectors are
#: renormalised exactly before use, so the result is D_α(P/|P| ‖ Q/|Q|).
NORMALIZATION_TOL = 1e-9

# e^{700} is comfortably below the float64 overflow threshold e^{709.78}.
_EXP_SAFE = 700.0


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _orders(alpha: ArrayLike, name: str = "alpha") -> tuple[np.ndarray, bool]:
    """Validate orders in [0, ∞]; return (float64 array, was_scalar)."""
    scalar = np.ndim(alpha) == 0
    if scalar:
        return np.array([ORDER_ANY.check(name, alpha)]), True
    return ORDER_ANY.check_array(name, alpha), False


def _out(values: np.ndarray, scalar: bool) -> float | np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if scalar:
        return float(values.reshape(-1)[0])
    return values


def _log1p_over(lam: np.ndarray, c: ArrayLike) -> np.ndarray:
    """log1p(λc)/λ with its λ → 0 limit c; NaN where 1 + λc ≤ 0 (callers map that to ∞)."""
    lam = np.asarray(lam, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(lam == 0.0, 1.0, lam)
        x = lam * c
        val = np.where(x > -1.0, np.log1p(np.maximum(x, -1.0)) / safe, np.nan)
    return np.where(lam == 0.0, c + 0.0 * lam, val)


# --------------------------------------------------------------------------------------------
# the discrete core: a privacy-loss law (masses under P, log-likelihood ratios)
# --------------------------------------------------------------------------------------------


_CHUNK = 16384  # atoms per block: a block of _ABLOCK × _CHUNK doubles (1 MiB) stays in cache
_ABLOCK = 8
_LSE_FLOOR = -600.0


def _batched_expm1_dot(m: np.ndarray, z: np.ndarray, lams: np.ndarray) -> np.ndarray:
    """Σ_i m_i expm1(λ z_i) for each λ, blocked over atoms and orders for cache efficiency."""
    n = z.size
    out = np.zeros(lams.size)
    buf = np.empty((_ABLOCK, min(_CHUNK, max(n, 1))))
    for b0 in range(0, lams.size, _ABLOCK):
        lam = lams[b0:b0 + _ABLOCK, None]
        k = lam.shape[0]
        acc = np.zeros(k)
        for c0 in range(0, n, _CHUNK):
            zc = z[c0:c0 + _CHUNK]
            view = buf[:k, :zc.size]
            np.multiply(lam, zc, out=view)
            np.expm1(view, out=view)
            acc += view @ m[c0:c0 + _CHUNK]
        out[b0:b0 + k] = acc
    return out


def _batched_logsumexp(logm: np.ndarray, z: np.ndarray, lams: np.ndarray) -> np.ndarray:
    """log Σ_i exp(logm_i + λ z_i) for each λ (streaming log-sum-exp, blocked)."""
    n = z.size
    out = np.empty(lams.size)
    buf = np.empty((_ABLOCK, min(_CHUNK, max(n, 1))))
    for b0 in range(0, lams.size, _ABLOCK):
        lam = lams[b0:b0 + _ABLOCK, None]
        k = lam.shape[0]
        big = np.full(k, -np.inf)
        acc = np.zeros(k)
        for c0 in range(0, n, _CHUNK):
            zc = z[c0:c0 + _CHUNK]
            view = buf[:k, :zc.size]
            np.multiply(lam, zc, out=view)
            np.add(view, logm[c0:c0 + _CHUNK], out=view)
            mc = view.max(axis=1)
            new = np.maximum(big, mc)
            with np.errstate(invalid="ignore", over="ignore"):
                acc = np.where(acc > 0, acc * np.exp(big - new), 0.0)
            np.subtract(view, new[:, None], out=view)
            # Terms below e^{-600} of the largest are raised to e^{-600}: this changes the sum by
            # < n·e^{-600} relative (upward, i.e. conservatively) and keeps exp off its very slow
            # subnormal/underflow path (~50x slower).
            np.maximum(view, _LSE_FLOOR, out=view)
            np.exp(view, out=view)
            acc += view.sum(axis=1)
            big = new
        with np.errstate(divide="ignore"):
            out[b0:b0 + k] = big + np.log(acc)
    return out


def _divergence_from_loss(logm: np.ndarray, z: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """D_α(P‖Q) from the law of the privacy loss Z = log p/q under P.

    ``logm`` are the log P-masses of atoms with p > 0 (finite; renormalised here), ``z`` the
    log-likelihood ratios of those atoms (+∞ where q = 0). Uses (α−1)D_α = log E_P[e^{(α−1)Z}]
    ([BW18] Thm 5). Three evaluation routes, chosen per order for accuracy:

    * expm1 route: E_P[e^{λZ}] − 1 = Σ m_i expm1(λ z_i), then log1p. Exact in the relative
      sense as λ → 0, so α = 1 + 1e-12 is accurate. Used when nothing overflows.
    * signed log-space route of the same sum, for small λ when masses underflow or λz overflows.
    * plain log-sum-exp, for everything else (large α, tiny probabilities).
    """
    logm = np.asarray(logm, dtype=np.float64).reshape(-1)
    z = np.asarray(z, dtype=np.float64).reshape(-1)
    alphas = np.asarray(alphas, dtype=np.float64)
    out = np.empty(alphas.shape)
    flat_a = alphas.reshape(-1)
    flat_o = out.reshape(-1)
    if logm.size == 0:
        flat_o[:] = np.inf
        return out
    logm = logm - special.logsumexp(logm)
    inf_atoms = np.isposinf(z)
    has_inf = bool(inf_atoms.any())
    fin = ~inf_atoms
    zf = z[fin]
    logmf = logm[fin]
    mf = np.exp(logmf)
    log_mass_inf = float(special.logsumexp(logm[inf_atoms])) if has_inf else -math.inf
    mass_inf = math.exp(log_mass_inf)
    nf = zf.size
    zmax = float(zf.max()) if nf else -math.inf
    zmin = float(zf.min()) if nf else math.inf
    fast_masses = nf == 0 or float(logmf.min()) >= -_EXP_SAFE

    def signed_path(lam: float) -> float | None:
        # log|Σ m_i expm1(λ z_i)| with signs, never overflowing or underflowing.
        w = lam * zf
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            mag = np.where(w > 0, log_expm1(np.maximum(w, 1e-300)), log1mexp(np.minimum(w, 0.0)))
        terms = logmf + mag
        sgn = np.sign(w)
        if has_inf:
            terms = np.append(terms, log_mass_inf)
            sgn = np.append(sgn, -1.0)
        with np.errstate(divide="ignore"):
            log_s, sign = special.logsumexp(terms, b=sgn, return_sign=True)
        log_s = float(log_s)
        if sign > 0:
            return float(np.logaddexp(0.0, log_s))
        if sign == 0 or log_s == -math.inf:
            return 0.0
        if log_s < math.log(0.5):
            return math.log1p(-math.exp(log_s))
        return None

    lam_all = flat_a - 1.0
    general = np.isfinite(flat_a) & (flat_a != 1.0) & ~((lam_all > 0) & has_inf)
    idx = np.flatnonzero(general)
    lams = lam_all[idx]
    if nf:
        top = np.where(lams > 0, lams * zmax, lams * zmin)
    else:
        top = np.full(lams.shape, -np.inf)
    use_fast = fast_masses & (top <= _EXP_SAFE)
    K = np.full(lams.shape, np.nan)
    if use_fast.any():
        # expm1 route, E_P[e^{λZ}] − 1 = Σ m_i expm1(λ z_i) − P(q = 0): exact relative accuracy
        # as λ → 0. Orders where the sum is near −1 are redone in log space below.
        fi = np.flatnonzero(use_fast)
        s_vals = _batched_expm1_dot(mf, zf, lams[fi]) - mass_inf
        good = s_vals > -0.5
        K[fi[good]] = np.log1p(s_vals[good])
    for k in np.flatnonzero(np.isnan(K) & (np.abs(lams) <= 0.05)):
        if nf:
            val = signed_path(float(lams[k]))
            if val is not None:
                K[k] = val
    rest = np.flatnonzero(np.isnan(K))
    if rest.size:
        # +∞ atoms contribute e^{λ·∞} = 0 here: λ < 0 whenever has_inf.
        K[rest] = _batched_logsumexp(logmf, zf, lams[rest]) if nf else -np.inf
    # λz = ±∞·... overflowed for an atom with positive mass: E_P[e^{λZ}] = ∞ (log-sum-exp gave ∞ − ∞)
    K[np.isnan(K) & (top == np.inf)] = np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        flat_o[idx] = K / lams
    flat_o[(lam_all > 0) & has_inf & np.isfinite(flat_a)] = np.inf
    flat_o[flat_a == 1.0] = math.inf if has_inf else float(mf @ zf)
    flat_o[np.isinf(flat_a)] = math.inf if has_inf else zmax
    # D_α ≥ 0 always; a negative value is round-off of a (near-)zero divergence.
    np.maximum(out, 0.0, out=out)
    return out


def _check_pmf(name: str, p: Any) -> np.ndarray:
    arr = check_array(name, p).reshape(-1) if np.ndim(p) else check_array(name, [p])
    bad = ~(np.isfinite(arr) & (arr >= 0))
    if bad.any():
        raise DomainError(
            f"{name} must have entries in [0, inf); got {float(arr[bad][0])!r}",
            name=name, value=float(arr[bad][0]),
        )
    n = arr.size
    total = float(arr.sum())
    tol = NORMALIZATION_TOL * max(n, 1)
    if n == 0 or not abs(total - 1.0) <= tol:
        raise DomainError(
            f"{name} must sum to 1 (within {tol:.3g} = {NORMALIZATION_TOL:g}·n); got sum {total!r}",
            name=name, value=total,
        )
    return arr


def _check_log_pmf(name: str, logp: Any) -> np.ndarray:
    arr = check_array(name, logp).reshape(-1)
    bad = np.isnan(arr) | np.isposinf(arr)
    if bad.any():
        raise DomainError(
            f"{name} must have entries in [-inf, 0]; got {float(arr[bad][0])!r}",
            name=name, value=float(arr[bad][0]),
        )
    n = arr.size
    tol = NORMALIZATION_TOL * max(n, 1)
    total = float(special.logsumexp(arr)) if n else -math.inf
    if not abs(total) <= tol:
        raise DomainError(
            f"{name} must be log-probabilities summing to 1 (|log Σ exp| within {tol:.3g}); "
            f"got log-sum {total!r}",
            name=name, value=total,
        )
    return arr


def _check_same_shape(p: Any, q: Any) -> None:
    sp, sq = np.shape(p), np.shape(q)
    if sp != sq:
        raise DomainError(f"q must have the same shape as p {sp}; got shape {sq}", name="q", value=sq)


def _loss_from_logs(
    logp: np.ndarray, logq: np.ndarray, logw: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Privacy-loss law (log masses, z) of P‖Q from log-pmfs; ``logw`` are log multiplicities."""
    sel = logp > -np.inf
    lp = logp[sel]
    lq = logq[sel]
    logm = lp if logw is None else lp + logw[sel]
    with np.errstate(invalid="ignore"):
        z = lp - lq  # +∞ where q = 0
    return logm, z


def renyi_divergence(p: ArrayLike, q: ArrayLike, alpha: ArrayLike) -> float | np.ndarray:
    """Rényi divergence D_α(P‖Q) of two discrete distributions.

    Args:
        p: probabilities of P, entries in [0, ∞) summing to 1 within
            ``NORMALIZATION_TOL``·n (then renormalised). Any shape; it is flattened.
        q: probabilities of Q, same shape and conditions as ``p``.
        alpha: order(s) in [0, ∞]; scalar or array.

    Returns:
        D_α(P‖Q) (float for scalar α, else an array of α's shape). α = 1 is KL, α = ∞ is
        log max_{p_i>0} p_i/q_i, α = 0 is −log Q(p > 0). +∞ where P is not absolutely
        continuous w.r.t. Q (α ≥ 1) and where the supports are disjoint (every α).

    Raises:
        DomainError: mismatched shapes, negative/NaN/infinite entries, unnormalised input,
            α < 0 or NaN.

    References:
        [vEH14]; [BS16] Def 14.

    Examples:
        >>> renyi_divergence([0.5, 0.5], [0.5, 0.5], [0.0, 1.0, 2.0, float("inf")])
        array([0., 0., 0., 0.])
        >>> renyi_divergence([1.0, 0.0], [0.0, 1.0], 0.5)
        inf
    """
    _check_same_shape(p, q)
    pa = _check_pmf("p", p)
    qa = _check_pmf("q", q)
    alphas, scalar = _orders(alpha)
    with np.errstate(divide="ignore"):
        logp = np.log(pa) - math.log(pa.sum())
        logq = np.log(qa) - math.log(qa.sum())
    logm, z = _loss_from_logs(logp, logq)
    return _out(_divergence_from_loss(logm, z, alphas), scalar)


def renyi_divergence_log(logp: ArrayLike, logq: ArrayLike, alpha: ArrayLike) -> float | np.ndarray:
    """Rényi divergence D_α(P‖Q) from log-probabilities (−∞ marks a zero probability).

    Same conventions as :func:`renyi_divergence`; use it when probabilities underflow float64.

    Examples:
        >>> float(renyi_divergence_log([0.0, -np.inf], [-np.log(2), -np.log(2)], 1.0))
        0.6931471805599453
    """
    _check_same_shape(logp, logq)
    lp = _check_log_pmf("logp", logp)
    lq = _check_log_pmf("logq", logq)
    alphas, scalar = _orders(alpha)
    lp = lp - special.logsumexp(lp)
    lq = lq - special.logsumexp(lq)
    logm, z = _loss_from_logs(lp, lq)
    return _out(_divergence_from_loss(logm, z, alphas), scalar)
