"""Rényi divergences of continuous distributions by adaptive quadrature in log space."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.core._lazy import integrate, optimize
from renyi.core._validation import (
    REAL,
)
from renyi.core.errors import DomainError, RenyiNumericalWarning
from renyi.divergences.discrete import _EXP_SAFE, _orders

__all__ = ["DivergenceEstimate", "renyi_divergence_continuous"]

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
