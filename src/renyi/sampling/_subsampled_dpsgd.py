"""The DP-SGD fast path: ε of T Poisson-subsampled Gaussian steps minimised over the order, its
sweeps, and the σ / steps / rate that meet a target (calibration on the safe side).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.core._validation import (
    POSITIVE,
    PROBABILITY_OPEN,
    Interval,
    check_int,
)
from renyi.core.errors import DomainError
from renyi.sampling._subsampled_gaussian import _MAX_EXACT_ORDER, _RATE, _log_a_rows

__all__ = ["dpsgd_epsilon", "dpsgd_epsilon_many", "dpsgd_log_delta", "dpsgd_sigma", "dpsgd_steps", "dpsgd_rate"]

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


#: The smallest noise multiplier the σ solvers return (2⁻¹²): where even it meets the target,
#: it is the answer ("σ at or above the smallest that meets the target"), not a search toward 0
#: (at ε = 1e300 the smallest σ is ≈ 1e-150, and the PLD refinement spent 40 evaluations on it).
SIGMA_FLOOR = 2.0**-12


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
            if hi <= SIGMA_FLOOR:
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
    cap = 1 << 62
    from renyi.mechanisms import Gaussian

    # Without amplification T steps are one Gaussian of σ/√T, an upper bound on the subsampled
    # ε: when even the cap passes that way, it is the answer (σ = 1e300 hung in the series).
    if Gaussian(sigma / math.sqrt(cap)).epsilon(delta) <= epsilon:
        return cap
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
    # min() before floor(): t_best may be +∞ (a huge ε at a tiny rate), which int() refuses
    t = int(math.floor(min(t_best, float(cap))))
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
