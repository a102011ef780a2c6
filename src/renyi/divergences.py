"""Rényi divergences: discrete, continuous (numerical) and closed forms.

D_α(P‖Q) = 1/(α−1) · log ∫ p^α q^{1−α} for α ∈ (0, 1) ∪ (1, ∞), with the limits
D_0 = −log Q(p > 0), D_1 = KL(P‖Q) and D_∞ = log ess sup_P p/q ([vEH14];
[BS16] Def 14).

Every function here is vectorized over the order: a scalar ``alpha`` gives a ``float``, an
array gives an array of the same shape. Every order in [0, ∞] is accepted unless a docstring
says otherwise. The orders α = 1 and α = ∞ have their own code paths, and orders near 1 use
forms built on ``expm1``/``log1p`` so that α = 1 + 1e-12 is as accurate as α = 2.

All computations are in log space: the general discrete case evaluates
log Σ_i e^{log p_i + (α−1) z_i} with z_i = log p_i − log q_i, so probabilities down to 1e-300
and orders up to 1e6 (and beyond) stay finite and accurate.

Examples:
    >>> round(renyi_divergence([0.75, 0.25], [0.25, 0.75], 2.0), 10)
    0.8472978604
    >>> gaussian_divergence(0.0, 1.0, 2.0, 3.0)
    0.375
    >>> float(laplace_divergence(1.0, float("inf")))
    1.0
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from ._lazy import integrate, linalg, optimize, special

from ._logmath import log1mexp, log_expm1
from ._validation import NONNEGATIVE, ORDER_ANY, POSITIVE, PROBABILITY, REAL, check_array, check_int
from .errors import DomainError, RenyiNumericalWarning

__all__ = [
    "NORMALIZATION_TOL",
    "DivergenceEstimate",
    "renyi_divergence",
    "renyi_divergence_log",
    "renyi_divergence_continuous",
    "gaussian_divergence",
    "gaussian_divergence_unequal",
    "mvn_divergence",
    "laplace_divergence",
    "bernoulli_divergence",
    "randomized_response_divergence",
    "kary_randomized_response_divergence",
    "pure_dp_curve",
    "discrete_laplace_divergence",
    "discrete_gaussian_divergence",
    "discrete_gaussian_normalizer",
    "exponential_family_divergence",
    "poisson_divergence",
    "exponential_divergence",
]

#: A probability vector of length n is accepted when |Σ p_i − 1| ≤ NORMALIZATION_TOL · n
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


# --------------------------------------------------------------------------------------------
# continuous: adaptive quadrature in log space
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DivergenceEstimate:
    """A numerically integrated divergence.

    Attributes:
        value: a conservative estimate: the quadrature result moved *up* by its error estimate
            (so it errs toward more privacy loss). +∞ where the integral could not be trusted.
        error: the absolute error estimate that was added (≥ 0).
    """

    value: float | np.ndarray
    error: float | np.ndarray

    def __float__(self) -> float:
        return float(self.value)


def _as_log_density(name: str, dist: Any) -> tuple[Callable[[float], float], float, float, list[float], float]:
    """(log-density callable, support lo, hi, reference points, scale) for a frozen dist or callable."""
    logpdf = getattr(dist, "logpdf", None)
    if logpdf is not None and hasattr(dist, "support"):
        lo, hi = (float(v) for v in dist.support())
        try:
            refs = [float(v) for v in dist.ppf([1e-6, 0.01, 0.25, 0.5, 0.75, 0.99, 1 - 1e-6])]
            scale = refs[4] - refs[2]
        except Exception:  # some distributions have no usable ppf; fall back to a generic grid
            refs, scale = [], 1.0
        if not (math.isfinite(scale) and scale > 0):
            scale = 1.0

        def f(x: float) -> float:
            with np.errstate(all="ignore"):
                v = float(logpdf(x))
            return -math.inf if math.isnan(v) else v

        refs = [r for r in refs if math.isfinite(r)]
        return _fast_logpdf(dist, f, lo, hi, refs), lo, hi, refs, scale
    if callable(dist):

        def g(x: float) -> float:
            try:
                v = float(dist(x))
            except (OverflowError, ZeroDivisionError):
                return -math.inf
            return -math.inf if math.isnan(v) else v

        return g, -math.inf, math.inf, [], 1.0
    raise TypeError(
        f"{name} must be a frozen scipy.stats distribution or a log-density callable; "
        f"got {type(dist).__name__}"
    )


def _fast_logpdf(dist: Any, slow: Callable[[float], float], lo: float, hi: float,
                 probe: Sequence[float]) -> Callable[[float], float]:
    """A faster scalar log-density for a frozen scipy distribution, or ``slow`` itself.

    The public ``logpdf`` spends ~100 µs per scalar call on argument handling; quadrature
    calls it thousands of times. The distribution's own ``_logpdf`` on the standardised value
    is used instead, but only after it has been checked to agree with ``logpdf`` at the probe
    points (scipy internals may change; on any doubt we keep the public method).
    """
    try:
        shapes, loc, scale = dist.dist._parse_args(*dist.args, **dist.kwds)
        raw = dist.dist._logpdf
        loc, scale = float(loc), float(scale)
        log_scale = math.log(scale)

        def fast(x: float) -> float:
            if not lo <= x <= hi:
                return -math.inf
            with np.errstate(all="ignore"):
                v = float(raw((np.float64(x) - loc) / scale, *shapes)) - log_scale
            return -math.inf if math.isnan(v) else v

        for x in list(probe) + [lo + 1e-3 if math.isfinite(lo) else -3.0, 0.5]:
            a, b = fast(x), slow(x)
            if not (a == b or abs(a - b) <= 1e-12 * max(1.0, abs(b))):
                return slow
        return fast
    except Exception:  # any failure of the private route: use the public method
        return slow


def _maximise(g: Callable[[float], float], cands: Sequence[float], lo: float, hi: float) -> tuple[float, float]:
    """Return (x*, g(x*)) approximately maximising g on (lo, hi); g* = +∞ if unbounded above."""
    xs = sorted({float(c) for c in cands if lo < c < hi and math.isfinite(c)})
    if not xs:
        if math.isfinite(lo) and math.isfinite(hi):
            xs = [lo + (hi - lo) * k / 8 for k in range(1, 8)]
        elif math.isfinite(lo):
            xs = [lo + 2.0**k for k in range(-4, 5)]
        elif math.isfinite(hi):
            xs = [hi - 2.0**k for k in range(-4, 5)]
        else:
            xs = [float(k) for k in range(-8, 9)]
    vals = [g(x) for x in xs]
    i = int(np.argmax(vals))
    best_x, best_v = xs[i], vals[i]
    # Walk outward while g keeps increasing past the extreme candidates.
    for side, edge in ((-1, lo), (1, hi)):
        if (side < 0 and i != 0) or (side > 0 and i != len(xs) - 1):
            continue
        x, v = best_x, best_v
        step = max(1.0, abs(x)) * 0.5
        climbs = 0
        for _ in range(200):
            nx = x + side * step
            if not (lo < nx < hi):
                nx = (x + edge) / 2 if math.isfinite(edge) else nx
                if not (lo < nx < hi) or nx == x:
                    break
            nv = g(nx)
            if not nv > v:
                break
            x, v = nx, nv
            step *= 2.0
            climbs += 1
        if climbs >= 40 and not math.isfinite(edge):
            # Still climbing 2^40 starting widths out (until float precision or the densities
            # give out): treat as unbounded, the conservative answer.
            return x, math.inf
        if v > best_v:
            best_x, best_v = x, v
        xs.append(x)
        vals.append(v)
    # Local refinement between the neighbours of the best point.
    xs_sorted = sorted(set(xs) | {best_x})
    j = xs_sorted.index(best_x)
    a = xs_sorted[j - 1] if j > 0 else (lo if math.isfinite(lo) else best_x - max(1.0, abs(best_x)))
    b = xs_sorted[j + 1] if j + 1 < len(xs_sorted) else (
        hi if math.isfinite(hi) else best_x + max(1.0, abs(best_x)))
    if a < b:
        res = optimize.minimize_scalar(
            lambda x: -g(x), bounds=(a, b), method="bounded",
            options={"xatol": 1e-12 * max(1.0, abs(best_x))},
        )
        if res.success and -res.fun > best_v:
            best_x, best_v = float(res.x), float(-res.fun)
    return best_x, best_v


def _half_width(g: Callable[[float], float], x0: float, c: float, side: int, scale: float,
                lo: float, hi: float) -> float:
    """A distance s at which g(x0 + side·s) has dropped by about 1 below its peak value c."""
    s = scale

    def inside(d: float) -> bool:
        x = x0 + side * d
        return lo < x < hi

    for _ in range(200):
        if not inside(s) or g(x0 + side * s) < c - 1.0:
            break
        s *= 2.0
    for _ in range(200):
        if s < 1e-300 or (inside(s / 2) and g(x0 + side * s / 2) >= c - 1.0):
            break
        s /= 2.0
    return s


def renyi_divergence_continuous(
    P: Any,
    Q: Any,
    alpha: ArrayLike,
    *,
    support: tuple[float, float] | None = None,
    breaks: Sequence[float] = (),
) -> DivergenceEstimate:
    """Rényi divergence of two continuous univariate distributions by adaptive quadrature.

    The integrand e^{α log p + (1−α) log q − c} is integrated with ``scipy.integrate.quad``,
    where the shift c is the maximum of the integrand's log (found numerically), and the range
    is split at the maximiser, at points one, eight, 64 and 512 "widths" away from it, at the
    medians of P and Q and at ``breaks``. For |α − 1| ≤ 0.25 the stable form
    (α−1)D_α = log1p(∫ p·expm1((α−1) log p/q)) is integrated instead. The KL
    (α = 1) integrates p·log(p/q); α = 0 integrates q over the support of P; α = ∞ maximises
    log p/q (an optimisation, not a quadrature: its error is reported as 0).

    Args:
        P: a frozen ``scipy.stats`` continuous distribution, or a callable x ↦ log p(x).
        Q: the same for Q.
        alpha: order(s) in [0, ∞].
        support: (lo, hi), the support of P to integrate over. Defaults to ``P.support()`` for
            frozen distributions and (−∞, ∞) for callables.
        breaks: extra points where the densities have kinks or jumps (e.g. Laplace locations).

    Returns:
        A :class:`DivergenceEstimate`. ``value`` is the quadrature result moved up by the
        error estimate (an upper estimate of D_α); ``value``/``error`` are floats for a scalar
        α and arrays otherwise. +∞ (with a :class:`RenyiNumericalWarning`) where the integral
        could not be evaluated; +∞ without a warning where P is not ≪ Q (α ≥ 1).

    Raises:
        DomainError: α out of [0, ∞] or an invalid ``support``.
        TypeError: P or Q of an unsupported type.

    Examples:
        >>> import scipy.stats as st
        >>> est = renyi_divergence_continuous(st.norm(0, 1), st.norm(1, 1), 2.0)
        >>> round(est.value, 10), est.error < 1e-9
        (1.0, True)
    """
    logp, plo, phi, prefs, pscale = _as_log_density("P", P)
    logq, qlo, qhi, qrefs, _ = _as_log_density("Q", Q)
    callable_q = not (hasattr(Q, "logpdf") and hasattr(Q, "support"))
    alphas, scalar = _orders(alpha)
    if support is not None:
        if len(support) != 2:
            raise DomainError(f"support must be a pair (lo, hi); got {support!r}", name="support")
        lo = REAL.check("support[0]", support[0]) if math.isfinite(support[0]) else float(support[0])
        hi = REAL.check("support[1]", support[1]) if math.isfinite(support[1]) else float(support[1])
        if not lo < hi:
            raise DomainError(f"support must satisfy lo < hi; got {support!r}", name="support")
    else:
        lo, hi = plo, phi
    brk = [float(b) for b in breaks]
    for b in brk:
        if math.isnan(b):
            raise DomainError("breaks must be numbers, not NaN", name="breaks")
    medians = [prefs[3]] if len(prefs) == 7 else []
    medians += [qrefs[3]] if len(qrefs) == 7 else []
    values = np.empty(alphas.shape)
    errors = np.empty(alphas.shape)
    for idx, a in np.ndenumerate(alphas):
        v, e = _continuous_one(float(a), logp, logq, lo, hi, qlo, qhi, prefs + qrefs, medians,
                               brk, pscale, not callable_q)
        values[idx], errors[idx] = v, e
    if scalar:
        return DivergenceEstimate(float(values[0]), float(errors[0]))
    return DivergenceEstimate(values, errors)


def _quad(f: Callable[[float], float], left: float, right: float) -> tuple[float, float, bool]:
    """quad with a strict then a looser tolerance; ok=False if even the looser one warned."""
    for epsrel, limit in ((1e-12, 200), (1e-10, 500)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", integrate.IntegrationWarning)
            try:
                val, e = integrate.quad(f, left, right, epsabs=0.0, epsrel=epsrel, limit=limit)
                return val, e, True
            except integrate.IntegrationWarning:
                pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        val, e = integrate.quad(f, left, right, epsabs=0.0, epsrel=1e-10, limit=1000)
    return val, e, False


def _continuous_one(
    a: float,
    logp: Callable[[float], float],
    logq: Callable[[float], float],
    lo: float,
    hi: float,
    qlo: float,
    qhi: float,
    refs: list[float],
    medians: list[float],
    brk: list[float],
    scale: float,
    q_may_underflow: bool,
) -> tuple[float, float]:
    # Support conventions ([vEH14]): for α ≥ 1, mass of P outside supp Q makes D = ∞;
    # for α < 1 only the intersection of the supports contributes.
    if a >= 1.0 and (qlo > lo or qhi < hi):
        return math.inf, 0.0
    if not max(lo, qlo) < min(hi, qhi):
        return math.inf, 0.0  # disjoint supports
    # For α < 1 we keep integrating over supp P (the stable form needs all of P's mass; the
    # integrand is 0 or −p where q = 0) and split at the ends of Q's support.
    brk = list(brk) + [x for x in (qlo, qhi) if math.isfinite(x)]
    blow_up = [False]

    def z_of(x: float) -> tuple[float, float]:
        lp = logp(x)
        if lp == -math.inf:
            return lp, -math.inf
        lq = logq(x)
        if lq == -math.inf and q_may_underflow and lp < -_EXP_SAFE and qlo < x < qhi:
            # scipy's logpdf of some families is log(pdf) and underflows to −∞ in far tails
            # inside the support; there p itself is below e^{-700}, so the point is dropped
            # rather than read as "P not ≪ Q". (Log-density callables are trusted exactly.)
            return -math.inf, -math.inf
        return lp, lp - lq

    if a == math.inf:

        def ratio(x: float) -> float:
            lp, z = z_of(x)
            return -math.inf if lp == -math.inf else z

        _, best = _maximise(ratio, refs + medians + brk, lo, hi)
        return (math.inf if best == math.inf else max(best, 0.0)), 0.0

    lam = a - 1.0

    def g(x: float) -> float:
        lp, z = z_of(x)
        if lp == -math.inf:
            return -math.inf
        if z == math.inf:
            if lam > 0:
                return math.inf
            return -math.inf if lam < 0 else lp
        result: float = lp + lam * z
        return result

    tilt = []
    if len(medians) == 2:
        tilt = [a * medians[0] + (1.0 - a) * medians[1]]
    x_star, c = _maximise(g, refs + medians + brk + tilt, lo, hi)
    if c == math.inf:
        # Unbounded integrand (e.g. P not ≪ Q seen only through the callables): conservative ∞.
        return math.inf, 0.0
    if c == -math.inf:
        return math.inf, 0.0
    wl = _half_width(g, x_star, c, -1, scale, lo, hi)
    wr = _half_width(g, x_star, c, 1, scale, lo, hi)
    pts = {x_star}
    for k in (1.0, 8.0, 64.0, 512.0):
        pts.add(x_star - k * wl)
        pts.add(x_star + k * wr)
    pts.update(medians)
    pts.update(brk)
    grid = [lo] + sorted(x for x in pts if lo < x < hi and math.isfinite(x)) + [hi]

    if a == 1.0:

        def f_kl(x: float) -> float:
            lp, z = z_of(x)
            if lp == -math.inf:
                return 0.0
            if z == math.inf:
                blow_up[0] = True
                return 0.0
            return math.exp(lp) * z

        total, err = _integrate(f_kl, grid)
        if blow_up[0]:
            return math.inf, 0.0
        return _finish_continuous(a, total, total + err)

    if a == 0.0:

        def f_zero(x: float) -> float:
            return 0.0 if logp(x) == -math.inf else math.exp(min(logq(x), _EXP_SAFE))

        total, err = _integrate(f_zero, grid)
        central = -math.log(total) if total > 0 else math.inf
        upper = -math.log(total - err) if total - err > 0 else math.inf
        return _finish_continuous(a, central, upper)

    if -1.0 <= c <= 50.0:
        # Stable form: (α−1)D_α = log1p(∫ p·expm1((α−1)z)). Its integrand is
        # O((α−1)z) when P ≈ Q, so quad's relative accuracy carries over to D_α.

        def f_m1(x: float) -> float:
            lp, z = z_of(x)
            if lp == -math.inf:
                return 0.0
            if z == math.inf:
                if lam > 0:
                    blow_up[0] = True
                    return 0.0
                return -math.exp(lp)
            w = lam * z
            if w > 1.0:
                return math.exp(min(lp + w, _EXP_SAFE)) - math.exp(lp)
            return math.exp(lp) * math.expm1(w)

        total, err = _integrate(f_m1, grid)
        if blow_up[0]:
            return math.inf, 0.0
        if total > -0.5 and math.isfinite(total) and math.isfinite(err):
            central = math.log1p(total) / lam
            s_up = total + err if lam > 0 else total - err
            upper = math.log1p(s_up) / lam if s_up > -1.0 else math.inf
            return _finish_continuous(a, central, upper)

    def f_shift(x: float) -> float:
        v = g(x)
        if v == math.inf:
            blow_up[0] = True
            return 0.0
        return math.exp(min(v - c, _EXP_SAFE))

    total, err = _integrate(f_shift, grid)
    if blow_up[0]:
        return math.inf, 0.0
    central = (c + math.log(total)) / lam if total > 0 else math.inf
    j_up = total + err if lam > 0 else total - err
    upper = (c + math.log(j_up)) / lam if j_up > 0 else math.inf
    return _finish_continuous(a, central, upper)


def _integrate(f: Callable[[float], float], grid: Sequence[float]) -> tuple[float, float]:
    total, err = 0.0, 0.0
    for left, right in zip(grid[:-1], grid[1:]):
        if not left < right:
            continue
        val, e, ok = _quad(f, left, right)
        if not ok:
            # quad could not meet its tolerance (usually round-off in exp(g − c) where |g| is
            # huge); its error estimate is still meaningful but we widen it to be safe.
            e = max(e, 1e-10 * abs(val))
        total += val
        err += e
    return total, err


def _finish_continuous(a: float, central: float, upper: float) -> tuple[float, float]:
    """Return (conservative value, error); warn and return ∞ when the numbers are unusable."""
    if math.isnan(central) or math.isnan(upper):
        warnings.warn(f"quadrature failed at alpha={a!r}; returning inf", RenyiNumericalWarning,
                      stacklevel=4)
        return math.inf, 0.0
    upper = max(upper, central)
    if math.isfinite(central) and upper - central > 1e-6 * max(abs(central), 1e-6):
        warnings.warn(
            f"quadrature for alpha={a!r} is not fully converged (error estimate {upper - central:.3g});"
            " the value was rounded up by the error estimate", RenyiNumericalWarning, stacklevel=4,
        )
    if not math.isfinite(upper):
        return math.inf, 0.0
    return max(upper, 0.0), max(upper - central, 0.0)


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
    with np.errstate(over="ignore"):
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
    return float(np.exp(-(x**2) / (2.0 * s * s)).sum())


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
    rho = d * d / (2.0 * s * s)
    fin = np.isfinite(a) & (a != 1.0) & (a != 0.0)
    lam = a[fin] - 1.0
    cr = lam * d
    c = cr - np.round(cr)
    r = _theta_ratio_m1(s, c)
    with np.errstate(divide="ignore"):
        out[fin] = a[fin] * rho + np.log1p(r) / lam
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
