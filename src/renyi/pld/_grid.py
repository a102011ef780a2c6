"""Discretising one dominating pair onto the grid {k·h}: a pessimistic and an optimistic PLD.

**Pessimistic (upper), "connect the dots".** For grid points ε₀ < … < ε_{n−1} the privacy
profile δ(ε) of the pair, as a function of x = e^ε, is convex and decreasing (a supremum of
affine functions x ↦ P(S) − xQ(S)). The piecewise-linear function through (0, 1),
(e^{ε_i}, δ(ε_i)) and then flat at δ(ε_{n−1}) lies above it (chords of a convex function,
and δ is decreasing), and it is itself the profile of a valid pair whose privacy loss takes
the values ε_i (mass = e^{ε_i}·slope change) and +∞ (mass δ(ε_{n−1})). A pair whose profile
dominates at every ε dominates after any number of compositions (Blackwell's theorem; Dong,
Roth & Su 2022, Thm 2.10 and Prop 2.3 for the profile/trade-off duality). Doroshenko et al.
(2022) introduced this construction; it keeps P- and Q-mass, so its error per step is O(h²).
Finite supports are split atom by atom: an atom at z ∈ [ε_i, ε_{i+1}) goes to the two
neighbouring grid points with weights that keep both its P- and its Q-mass.

**Optimistic (lower).** For a continuous pair, each chord over [e^{ε_i}, e^{ε_{i+1}}] exceeds
the profile by at most tanh(h/4)·P(Z ∈ (ε_i, ε_{i+1})) (an atom at ε_i + u exceeds its chord
by at most (e^u − 1)(e^{h−u} − 1)/(e^h − 1) ≤ tanh(h/4)), and P(Z ∈ (ε_i, ε_{i+1})) is at
most the pessimistic masses at ε_i and ε_{i+1}. Lowering every grid value by that much, the
piecewise-linear interpolation lies below δ; its greatest convex minorant (kinks still on the
grid) starting at (0, 1) with slope −1 and ending flat at the true +∞ mass is the profile of
a valid pair dominated by the true one, hence so are all its compositions. Finite supports
are rounded down atom by atom (a pointwise smaller loss; monotone coupling).

All masses are returned as logarithms so that the far tails, which carry the answer at tiny
δ, keep their relative precision.
"""

from __future__ import annotations

from collections.abc import Callable

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._profiles import Profile

__all__ = ["Discrete", "support_range", "discretise"]

_SHIFT = 1e-11
_U = 2.0**-53


@dataclass(frozen=True, eq=False)
class Discrete:
    """A discretised privacy loss under P: mass e^{log_mass[j]} at (start + j)·h; +∞ w.p. inf_mass."""

    h: float
    start: int
    log_mass: np.ndarray
    inf_mass: float

    @property
    def values(self) -> np.ndarray:
        return (self.start + np.arange(self.log_mass.size)) * self.h

    def log_mgf(self, lam: float) -> float:
        """log E[e^{λZ}; Z < ∞] of this discrete law."""
        with np.errstate(invalid="ignore", over="ignore"):
            w = self.log_mass + lam * self.values
        m = float(np.max(w)) if w.size else -math.inf
        if not math.isfinite(m):
            return m
        return m + math.log(float(np.sum(np.exp(w - m))))


def _first_below(f: Callable[[float], float], lo: float, hi: float, target: float, iters: int = 60) -> float:
    """Smallest x in [lo, hi] (to bisection accuracy, rounded up) with f(x) ≤ target (f decreasing)."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if f(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


_RANGE_CACHE: dict[tuple[int, float], tuple[Profile, float, float]] = {}


def support_range(profile: Profile, h: float, log_tail: float) -> tuple[int, int]:
    """Grid indices [lo, hi] outside which the loss carries at most e^{log_tail} of P-mass.

    Above: δ(ε_hi) ≤ e^{log_tail} (the pessimistic pair puts exactly δ(ε_hi) at +∞, so this
    only sets how much is counted against privacy). Below: P(Z < z) ≤ e^z Q(Z < z) and
    Q(Z < z) ≤ δ_{Q‖P}(−z − c)/(1 − e^{−c}) for every c > 0.
    """
    atoms = profile.atoms()
    if atoms is not None and atoms[0].size:
        v = atoms[0]
        return int(math.floor(v.min() / h)) - 1, int(math.ceil(v.max() / h)) + 1
    key = (id(profile), log_tail)
    hit = _RANGE_CACHE.get(key)
    if hit is not None and hit[0] is profile:
        lo_val, hi_val = hit[1], hit[2]
    else:
        lo_val, hi_val = _continuous_range(profile, log_tail)
        if len(_RANGE_CACHE) > 256:
            _RANGE_CACHE.clear()
        _RANGE_CACHE[key] = (profile, lo_val, hi_val)
    lo = int(math.floor(lo_val / h)) - 1
    hi = max(int(math.ceil(hi_val / h)) + 1, lo + 3)
    return lo, hi


def _continuous_range(profile: Profile, log_tail: float) -> tuple[float, float]:
    def up(e: float) -> float:
        return float(profile.log_delta(np.array([e]))[0])

    sup = profile.sup_loss()
    if math.isfinite(sup):
        hi_val = sup
    else:
        top = 1.0
        while up(top) > log_tail and top < 1e4:
            top *= 2.0
        hi_val = _first_below(up, 0.0, top, log_tail)
    dual = profile.dual()

    cs = np.array([1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001])

    def low(z: float) -> float:  # bound on log P(Z < z), increasing in z
        with np.errstate(divide="ignore"):
            return z + float(np.min(dual.log_delta(-z - cs) - np.log(-np.expm1(-cs))))

    dsup = dual.sup_loss()
    if math.isfinite(dsup):
        lo_val = -dsup
    else:
        bot = -1.0
        while low(bot) > log_tail and bot > -1e4:
            bot *= 2.0
        # largest z with low(z) ≤ log_tail: bisection on the increasing bound
        a, b = bot, 0.0
        for _ in range(60):
            mid = 0.5 * (a + b)
            if low(mid) <= log_tail:
                a = mid
            else:
                b = mid
        lo_val = a
    return lo_val, hi_val


def _log_masses_from_profile(ld: np.ndarray, h: float) -> tuple[np.ndarray, float]:
    """Connect-the-dots P-masses (logs) from log δ at consecutive grid points, and the +∞ mass."""
    n = ld.size
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        step = np.minimum(ld[1:] - ld[:-1], 0.0)
        logd = ld[:-1] + np.log(-np.expm1(step))  # log(δ_i − δ_{i+1})
        logd = np.where(np.isnan(logd), -np.inf, logd)
        lm = np.full(n, -np.inf)
        le = math.log(math.expm1(h))
        # interior: (e^h d_{i−1} − d_i)/(e^h − 1); non-convexity from round-off is clipped to 0
        diff = logd[1:] - logd[:-1] - h
        inner = logd[:-1] + h + np.log(-np.expm1(np.minimum(diff, 0.0)))
        inner = np.where((diff < 0) & np.isfinite(logd[:-1]), inner, -np.inf)
        lm[1:-1] = inner - le
        lm[-1] = logd[-1] + h - le
        d0 = math.exp(logd[0]) / math.expm1(h) if np.isfinite(logd[0]) else 0.0
        m0 = -math.expm1(ld[0]) - d0 if np.isfinite(ld[0]) else 1.0 - d0
        lm[0] = math.log(m0) if m0 > 0 else -np.inf
    lm = np.where(np.isnan(lm), -np.inf, lm)
    return lm, float(math.exp(ld[-1])) if np.isfinite(ld[-1]) else 0.0


def _greatest_convex_minorant(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the vertices of the greatest convex minorant of the points (x_k, y_k).

    A point strictly above the chord of its two neighbours is not a vertex of the minorant;
    dropping all such points at once and repeating ends at the minorant.
    """
    keep = np.arange(x.size)
    for _ in range(30):
        xs, ys = x[keep], y[keep]
        s = np.diff(ys) / np.diff(xs)
        bad = np.nonzero(s[1:] < s[:-1])[0] + 1
        if bad.size == 0:
            return keep
        keep = np.delete(keep, bad)
    # the rest by the monotone-chain stack (Andrew 1979), on the few points left
    stack: list[int] = []
    for k in keep.tolist():
        while len(stack) >= 2:
            a, b = stack[-2], stack[-1]
            if (y[b] - y[a]) * (x[k] - x[b]) > (y[k] - y[b]) * (x[b] - x[a]):
                stack.pop()  # b lies above the chord from a to k
            else:
                break
        stack.append(k)
    return np.asarray(stack)


def discretise(profile: Profile, h: float, lo: int, hi: int) -> tuple[Discrete, Discrete]:
    """The pessimistic and optimistic discretisations of ``profile`` on grid indices [lo, hi].

    Returns:
        (upper, lower): ``upper`` dominates the pair (δ never smaller, for any composition),
        ``lower`` is dominated by it.
    """
    atoms = profile.atoms()
    if atoms is not None:
        return _discretise_atoms(atoms[0], atoms[1], profile.inf_mass, h)
    idx = np.arange(lo, hi + 1)
    eps = idx * h
    ld = profile.log_delta(eps)
    # Round-off allowance: interpolate the profile of Z + s, s = 1e-11 (a dominating pair: the
    # same P, with Q scaled by e^{−s} and the rest of Q where P has no mass), so that the
    # values at the grid points exceed δ by a margin larger than the round-off in them.
    lm, inf_mass = _log_masses_from_profile(profile.log_delta(eps - _SHIFT), h)
    neg = eps < 0
    if neg.any():
        # Left of 0 the second differences of δ ≈ 1 − e^ε cancel; the same construction seen
        # from the reversed pair (Q, P) is the mirror image (it keeps P- and Q-mass), and its
        # profile is accurate there. Reversed pair of Z + s: e^{−s}δ′(t + s) + 1 − e^{−s}.
        t = -eps[::-1]
        with np.errstate(divide="ignore"):
            ldd = np.logaddexp(-_SHIFT + profile.dual().log_delta(t + _SHIFT), math.log(-math.expm1(-_SHIFT)))
        lmd, _ = _log_masses_from_profile(ldd, h)
        from_dual = lmd[::-1] + eps  # P-mass = Q-mass·e^{z}
        lm = np.where(neg, from_dual, lm)
    # Negative masses from round-off were clipped to 0 (raising the profile). A valid pair
    # needs P-mass 1 and Q-mass ≤ 1: scale an excess P-mass away (relative ~1e-16), and move
    # the few lowest atoms that carry a Q-mass excess (round-off amplified by e^{−ε₀}) to +∞.
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(np.exp(lm))) + inf_mass
        if total > 1.0:
            lm = lm - math.log(total)
            inf_mass /= total
        elif total < 1.0:
            # a deficit goes to the lowest point: raises the profile only left of ε₀
            lm = lm.copy()
            lm[0] = float(np.logaddexp(lm[0], math.log(1.0 - total)))
        qm = np.exp(lm - eps)
        excess = float(np.sum(qm)) - 1.0
    if excess > 0.0:
        k = int(np.searchsorted(np.cumsum(qm), excess * (1.0 + 1e-9))) + 1
        moved = float(np.sum(np.exp(lm[:k])))
        lm = lm.copy()
        lm[:k] = -np.inf
        inf_mass += moved
    upper = Discrete(h, lo, lm, inf_mass)

    # ---- optimistic pair ----
    m = np.exp(lm)
    g = math.tanh(h / 4.0) * (m + np.concatenate([[0.0], m[:-1]]) + np.concatenate([m[1:], [0.0]]))
    # a relative allowance for the round-off in the profile values themselves
    delta = np.exp(ld)
    L = delta * (1.0 - 1e-9) - g
    with np.errstate(over="ignore"):
        x = np.exp(eps)
    one_minus_x = -np.expm1(eps)
    ok = L >= one_minus_x
    # i0: first index from which every point lies on or above the line 1 − x
    bad_after = np.nonzero(~ok)[0]
    i0 = int(bad_after[-1]) + 1 if bad_after.size else 0
    p_inf = float(profile.inf_mass)
    n = idx.size
    if i0 >= n - 1:
        return upper, Discrete(h, lo, np.full(n, -np.inf), p_inf)
    above = np.nonzero(L[i0 + 1:] <= p_inf)[0]
    i_end = i0 + 1 + int(above[0]) if above.size else n - 1
    px = np.concatenate([[0.0], x[i0:i_end + 1]])
    py = np.concatenate([[1.0], L[i0:i_end + 1]])
    py[1] = one_minus_x[i0]
    py[-1] = p_inf
    if i_end - 1 > i0:
        py[-2] = min(py[-2], delta[i_end])
    finite = np.isfinite(px)
    px, py = px[finite], py[finite]
    verts = _greatest_convex_minorant(px, py)
    vx, vy = px[verts], py[verts]
    s = np.diff(vy) / np.diff(vx)
    s = np.concatenate([s, [0.0]])  # flat after the last vertex
    mass = vx[1:] * (s[1:] - s[:-1])
    grid_pos = verts[1:] - 1 + i0  # point k ≥ 1 of (px, py) is grid index i0 + k − 1
    lm_low = np.full(n, -np.inf)
    with np.errstate(divide="ignore"):
        lm_low[grid_pos] = np.log(np.maximum(mass, 0.0))
    return upper, Discrete(h, lo, lm_low, p_inf)


def _discretise_atoms(values: np.ndarray, masses: np.ndarray, inf_mass: float,
                      h: float) -> tuple[Discrete, Discrete]:
    if values.size == 0:
        # no finite loss carries mass (e.g. randomized response at a huge ε, whose finite
        # atoms underflow): all the law is the +∞ atom
        empty = Discrete(h, 0, np.array([-np.inf]), inf_mass)
        return empty, empty
    k = np.floor(values / h).astype(np.int64)
    # make k·h ≤ z < (k+1)·h hold in floating point, so that rounding down is really down;
    # atoms within a few ulps below a grid point are taken as on it (a loss change of
    # ~1e-15·|z|, inside the final rounding allowance), so that lattice-aligned grids are exact
    k = np.where(k * h > values, k - 1, k)
    k = np.where((k + 1) * h <= values + 8 * _U * np.maximum(np.abs(values), h), k + 1, k)
    u = np.maximum(values - k * h, 0.0)
    lo = int(k.min())
    n = int(k.max()) - lo + 2
    # upper: split keeping P- and Q-mass (the fraction going up is (1 − e^{−u})/(1 − e^{−h}))
    up = np.clip(np.expm1(-u) / math.expm1(-h), 0.0, 1.0)
    # round-off in the split: never put less than computed on the upper point
    up = np.minimum(1.0, up * (1.0 + 1e-12) + 1e-15)
    mu = np.zeros(n)
    np.add.at(mu, k - lo, masses * (1.0 - up))
    np.add.at(mu, k - lo + 1, masses * up)
    ml = np.zeros(n)
    np.add.at(ml, k - lo, masses)
    with np.errstate(divide="ignore"):
        return (Discrete(h, lo, np.log(mu), inf_mass), Discrete(h, lo, np.log(ml), inf_mass))
