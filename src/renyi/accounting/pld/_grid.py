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

**Optimistic (lower).** For a continuous pair, every grid interval gets a line below δ (in x)
that misses the tangent at the interval's midpoint by O(h²): the secant through the midpoint and
a point just left of it, lowered by the secant-slope gap to the point just right of it
(convexity makes that line lie below δ everywhere; see :func:`_support_lines`). The value at
each grid point is the smaller of its two intervals' lines, so that the piecewise-linear
interpolation lies below δ; its greatest convex minorant (kinks still on the grid) starting at
(0, 1) with slope −1 and ending flat at the true +∞ mass is the profile of a valid pair
dominated by the true one, hence so are all its compositions. The error is of the same order
as the pessimistic construction's (both O(h²) per step), so the bracket closes as fast as the
upper bound converges. Finite supports are rounded down atom by atom (a pointwise smaller
loss; monotone coupling).

All masses are returned as logarithms so that the far tails, which carry the answer at tiny
δ, keep their relative precision.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from renyi.accounting.pld._profiles import Profile

__all__ = ["Discrete", "support_range", "discretise", "discretise_lower"]

_SHIFT = 1e-11
_U = 2.0**-53


@dataclass(frozen=True, eq=False)
class Discrete:
    """A discretised privacy loss under P: mass e^{log_mass[j]} at (start + j)·h; +∞ w.p. inf_mass."""

    h: float
    start: int
    log_mass: np.ndarray
    inf_mass: float

    @cached_property
    def values(self) -> np.ndarray:
        return (self.start + np.arange(self.log_mass.size)) * self.h

    @cached_property
    def _support(self) -> tuple[np.ndarray, np.ndarray]:
        """(log masses, values) where the mass is positive (the only terms of an MGF)."""
        keep = np.isfinite(self.log_mass)
        return self.log_mass[keep], self.values[keep]

    def log_mgf(self, lam: float) -> float:
        """log E[e^{λZ}; Z < ∞] of this discrete law."""
        lm, v = self._support
        if not lm.size:
            return -math.inf
        with np.errstate(invalid="ignore", over="ignore"):
            w = lm + lam * v
        m = float(np.max(w))
        if not math.isfinite(m):
            return m
        return m + math.log(float(np.sum(np.exp(w - m))))

    def log_mgf_many(self, lams: np.ndarray) -> np.ndarray:
        """log E[e^{λZ}; Z < ∞] at every λ of ``lams`` (one vectorised pass)."""
        lams = np.asarray(lams, dtype=np.float64)
        lm, v = self._support
        if not lm.size:
            return np.full(lams.shape, -np.inf)
        out = np.empty(lams.size)
        # blocks of λ, so that the (points × λ) matrix stays small
        step = max(1, 2_000_000 // max(lm.size, 1))
        for i in range(0, lams.size, step):
            lb = lams.reshape(-1)[i:i + step]
            with np.errstate(invalid="ignore", over="ignore"):
                w = lm[:, None] + v[:, None] * lb[None, :]
                m = np.max(w, axis=0)
                ok = np.isfinite(m)
                ms = np.where(ok, m, 0.0)
                out[i:i + step] = np.where(ok, ms + np.log(np.sum(np.exp(w - ms), axis=0)), m)
        return out.reshape(lams.shape)


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


def _last_true(pred: Callable[[np.ndarray], np.ndarray], lo: float, hi: float, rounds: int = 3) -> float:
    """For a predicate that holds on [lo, x*] and fails on (x*, hi] (monotone), a point ≤ x*
    within (hi − lo)/64³: a grid of 65 points per round, each round one vectorised call."""
    for _ in range(rounds):
        xs = np.linspace(lo, hi, 65)
        ok = pred(xs)
        bad = np.nonzero(~ok)[0]
        if not bad.size:
            return hi
        j = int(bad[0])
        if j == 0:
            return lo
        lo, hi = float(xs[j - 1]), float(xs[j])
    return lo


def _continuous_range(profile: Profile, log_tail: float) -> tuple[float, float]:
    def up(e: np.ndarray) -> np.ndarray:
        return np.asarray(profile.log_delta(np.asarray(e, dtype=np.float64)), dtype=np.float64)

    sup = profile.sup_loss()
    if math.isfinite(sup):
        hi_val = sup
    else:
        top = 1.0
        while float(up(np.array([top]))[0]) > log_tail and top < 1e4:
            top *= 2.0
        # smallest e with δ(e) ≤ tail (δ decreasing), rounded up: the end of the "δ > tail" run
        hi_val = _last_true(lambda e: up(e) > log_tail, 0.0, top)
        hi_val += top * 64.0**-3  # to the next grid point of the last round: δ ≤ tail there
    dual = profile.dual()

    cs = np.array([1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001])
    lcs = np.log(-np.expm1(-cs))

    def low(z: np.ndarray) -> np.ndarray:  # bound on log P(Z < z), increasing in z
        z = np.asarray(z, dtype=np.float64)
        arg = (-z[:, None] - cs[None, :]).reshape(-1)
        with np.errstate(divide="ignore"):
            ld = dual.log_delta(arg).reshape(z.size, cs.size)
            return np.asarray(z + np.min(ld - lcs[None, :], axis=1), dtype=np.float64)

    dsup = dual.sup_loss()
    if math.isfinite(dsup):
        lo_val = -dsup
    else:
        bot = -1.0
        while float(low(np.array([bot]))[0]) > log_tail and bot > -1e4:
            bot *= 2.0
        # largest z with low(z) ≤ log_tail (low increasing)
        lo_val = _last_true(lambda z: low(z) <= log_tail, bot, 0.0)
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

    A point strictly above the chord of its two neighbours is not a vertex of the minorant,
    and removing it keeps every point removed so far above the chain (the new chord lies below
    the old ones). So any sequence of such removals that ends with a convex chain ends at the
    minorant: whole rounds of them at once (vectorised), and, where removals cascade along a
    stretch of nearly collinear points, the monotone-chain stack (Andrew 1979) on that stretch
    only.
    """
    keep = np.arange(x.size)
    for rnd in range(10_000):
        xs, ys = x[keep], y[keep]
        s = np.diff(ys) / np.diff(xs)
        bad = np.nonzero(s[1:] < s[:-1])[0] + 1
        if bad.size == 0:
            return keep
        if rnd < 4:
            keep = np.delete(keep, bad)
            continue
        # The stack uses the same slope test as above, so the stretch it returns passes it; a
        # cascade can still reach past the stretch's ends (the ends are kept), so the margin
        # doubles every round: a few rounds, not one per removed point (Laplace(0.001) composed
        # twice took 10⁴ rounds of O(n) on 1.2·10⁶ points, 30 s, and stopped unconverged).
        margin = 64 << min(rnd - 4, 40)
        a = max(int(bad.min()) - margin, 0)
        b = min(int(bad.max()) + margin, keep.size - 1)
        new = np.concatenate([keep[:a], _stack_hull(x, y, keep[a:b + 1]), keep[b + 1:]])
        if new.size == keep.size:  # (cannot happen with the shared test; kept as a guard)
            new = np.delete(keep, bad)
        keep = new
    return keep


def _stack_hull(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The lower hull of the points ``idx`` (sorted by x), first and last kept: the monotone
    chain on plain floats (fast in a loop). A point is popped when the slope into it exceeds
    the slope out of it, computed exactly as the vectorised test of
    :func:`_greatest_convex_minorant` computes them (the same float operations), so the two
    never disagree by round-off: a popped point lies above its chord or within round-off of
    it, inside the 1e-9 allowance the values were lowered by."""
    ks = idx.tolist()
    xl, yl = x[idx].tolist(), y[idx].tolist()
    stack: list[int] = []  # positions in ks
    for j in range(len(ks)):
        xj, yj = xl[j], yl[j]
        while len(stack) >= 2:
            a, b = stack[-2], stack[-1]
            dx_in, dx_out = xl[b] - xl[a], xj - xl[b]
            if dx_in > 0.0 and dx_out > 0.0:
                above = (yj - yl[b]) / dx_out < (yl[b] - yl[a]) / dx_in
            else:  # equal x (e^ε underflowed to 0): the cross-product form
                above = (yl[b] - yl[a]) * dx_out > (yj - yl[b]) * dx_in
            if above:
                stack.pop()  # b lies above the chord from a to j
            else:
                break
        stack.append(j)
    return np.asarray([ks[j] for j in stack], dtype=np.int64)


def discretise_lower(profile: Profile, h: float, lo: int, hi: int, upper: Discrete) -> Discrete:
    """The optimistic discretisation alone, given the pessimistic one ``upper`` of the same
    profile on the same grid (as returned by :func:`discretise`)."""
    atoms = profile.atoms()
    if atoms is not None:
        low = _discretise_atoms(atoms[0], atoms[1], profile.inf_mass, h)[1]
        return low
    return _optimistic(profile, h, lo, hi, upper)


def discretise(profile: Profile, h: float, lo: int, hi: int, lower: bool = True) -> tuple[Discrete, Discrete | None]:
    """The pessimistic and optimistic discretisations of ``profile`` on grid indices [lo, hi].

    Returns:
        (upper, lower): ``upper`` dominates the pair (δ never smaller, for any composition),
        ``lower`` is dominated by it (None when ``lower`` is False: only the upper is needed).
    """
    atoms = profile.atoms()
    if atoms is not None:
        return _discretise_atoms(atoms[0], atoms[1], profile.inf_mass, h)
    idx = np.arange(lo, hi + 1)
    eps = idx * h
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
        # Moving P-mass up to a larger loss raises the profile pointwise (a dominating pair)
        # and lowers the Q-mass by P·(e^{−z} − e^{−z_top}). Up to the step's top grid point, not
        # to +∞: a mass of ~1e-15 per step at +∞ adds T·1e-15 to δ at every ε (6e-11 after
        # 23 000 steps, above a δ of 1e-14: such questions were unresolved), at the top point
        # it only matters for ε below the composed top.
        gain = qm * -np.expm1(np.minimum(eps - eps[-1], 0.0))
        cum = np.cumsum(gain[:-1])
        k = int(np.searchsorted(cum, excess * (1.0 + 1e-9))) + 1
        lm = lm.copy()
        if k < lm.size - 1:
            moved = float(np.sum(np.exp(lm[:k])))
            lm[:k] = -np.inf
            lm[-1] = float(np.logaddexp(lm[-1], math.log(moved))) if moved > 0.0 else lm[-1]
        else:  # not enough below the top: to +∞, as before
            k = int(np.searchsorted(np.cumsum(qm), excess * (1.0 + 1e-9))) + 1
            moved = float(np.sum(np.exp(lm[:k])))
            lm[:k] = -np.inf
            inf_mass += moved
    upper = Discrete(h, lo, lm, inf_mass)
    if not lower:
        return upper, None
    return upper, _optimistic(profile, h, lo, hi, upper)


#: Half-width of the three-point stencil around each interval's midpoint, in grid steps.
_ETA = 1.0 / 32.0


def _support_lines(profile: Profile, eps: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """For each interval [ε_i, ε_i + h] of ``eps``: the values at its two ends of a line (in
    x = e^ε) that lies below the profile δ everywhere.

    δ is convex in x. With b = e^c at the midpoint c = ε_i + h/2 and a = e^{c−η}, d = e^{c+η},
    the secant slopes s_L = (δ(b) − δ(a))/(b − a) ≤ s_R = (δ(d) − δ(b))/(d − b) bracket the
    derivative at b. The line ℓ(x) = δ(b) + s_L(x − b) is below δ for x ≥ b (every secant from b
    to the right has slope ≥ δ′(b+) ≥ s_L) and for x ≤ a (secants ending at b from the left of a
    have slope ≤ s_L); on (a, b) it exceeds δ by at most (s_R − s_L)(b − a) (there the secant
    slope from x to b is ≤ δ′(b−) ≤ s_R). So ℓ − (s_R − s_L)(b − a) is below δ everywhere: a
    supporting line that misses the tangent at the midpoint by O(h²), against O(h) for rounding
    the loss down. Computed relative to δ(b) (ratios of profile values, so that far tails keep
    their precision), lowered by an allowance for the round-off in the profile values.

    Returns:
        (left, right): the line's values at e^{ε_i} and e^{ε_i + h} (may be negative).
    """
    eta = _ETA * h
    m = eps.size
    c = eps + 0.5 * h
    ld = profile.log_delta(np.concatenate([c - eta, c, c + eta]))
    la, lb, lr = ld[:m], ld[m:2 * m], ld[2 * m:]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        da, dr = la - lb, lr - lb
        ra, rr = np.exp(da), np.exp(dr)
        em = -math.expm1(-eta)  # (b − a)/b
        sl = -np.expm1(da) / em  # s_L·b/δ(b) ≤ 0
        sr = np.expm1(dr) / math.expm1(eta)  # s_R·b/δ(b)
        shift = np.maximum(sr - sl, 0.0) * em
        # Round-off: |error| of each log value ≤ err (the profile's own relative error, 1e-10,
        # and the rounding of the logs); it moves each ratio by ≈ r·err, each scaled slope by
        # ≈ r·err/η′ (η′ = b − a or d − b, ≥ η·(1 − η)), the line's ends by that times h/2, and
        # the shift by about twice that times η.
        err = 1e-10 + 16.0 * _U * (np.abs(la) + np.abs(lb) + np.abs(lr) + 1.0)
        slack = 2.0 * err * (ra + rr + 1.0) * (0.6 * h / (eta * (1.0 - eta)) + 3.0) + err
        base = np.exp(lb)
        left = base * (1.0 + sl * math.expm1(-0.5 * h) - shift - slack)
        right = base * (1.0 + sl * math.expm1(0.5 * h) - shift - slack)
    # δ(b) = 0: δ vanishes from b on (decreasing, ≥ 0), and the zero line is below δ
    zero = ~np.isfinite(lb) | ~np.isfinite(left) | ~np.isfinite(right)
    left = np.where(zero, 0.0, left)
    right = np.where(zero, 0.0, right)
    return left, right


def _optimistic(profile: Profile, h: float, lo: int, hi: int, upper: Discrete) -> Discrete:
    """The optimistic discretisation of a continuous profile on grid indices [lo, hi].

    Values L_i at the grid points are chosen so that on every interval the chord from L_i to
    L_{i+1} lies below δ: each interval offers several certified pairs of end values (the ends
    of a supporting line, :func:`_support_lines`; the true values lowered by the chord bound
    tanh(h/4)·(m_i + m_{i+1}), m the pessimistic masses; the lines 1 − x and p_inf, both below δ),
    the pair with the higher chord is taken, and L_i is the smaller of the values its two
    intervals ask for (lowering an end only lowers a chord). The greatest convex minorant of
    these points, starting at (0, 1) along the line 1 − x and ending flat at the true +∞ mass,
    is the profile of a pair dominated by the true one.
    """
    idx = np.arange(lo, hi + 1)
    eps = idx * h
    n = idx.size
    p_inf = float(profile.inf_mass)
    with np.errstate(over="ignore"):  # 1 − e^ε = −∞ past ε ≈ 709 (a 10⁵-scale group ε): no warning
        one_minus = -np.expm1(eps)
    # option 1: supporting lines (mirrored left of 0, see below)
    left = np.empty(n - 1)
    right = np.empty(n - 1)
    neg = eps[1:] <= 0.0  # intervals [ε_i, ε_{i+1}] left of 0
    pos = ~neg
    if pos.any():
        left[pos], right[pos] = _support_lines(profile, eps[:-1][pos], h)
    if neg.any():
        # Left of 0, δ = 1 − x + x·δ′(−ε) is 1 − x plus a small excess, which lines of δ itself
        # would resolve only to absolute precision. A supporting line of the reversed pair's
        # profile D(y) (y = e^{−ε} = 1/x) maps to one of δ: x·D(1/x) ≥ x(D(y₀) + s(1/x − y₀)),
        # which is linear in x (D's perspective). So the lines are built on the mirrored
        # intervals [−ε_{i+1}, −ε_i] of the reversed pair, keeping the excess's relative
        # precision; the end at x_i is the end at y = e^{−ε_i} of the mirrored interval.
        e_lo, e_hi = eps[:-1][neg], eps[1:][neg]
        d_left, d_right = _support_lines(profile.dual(), -e_hi, h)
        a = np.exp(e_lo) * d_right
        b = np.exp(e_hi) * d_left
        # the rounding of (1 − x) + x·D: 4u of each part, taken off
        left[neg] = one_minus[:-1][neg] + a - 4 * _U * (np.abs(one_minus[:-1][neg]) + np.abs(a))
        right[neg] = one_minus[1:][neg] + b - 4 * _U * (np.abs(one_minus[1:][neg]) + np.abs(b))
    # option 2: the true values lowered by the chord bound (better where the loss has structure
    # finer than the grid, which a single line cannot follow)
    delta = np.exp(profile.log_delta(eps)) * (1.0 - 1e-9)
    m = np.exp(upper.log_mass)
    e_int = math.tanh(h / 4.0) * (m[:-1] + m[1:])
    t_left, t_right = delta[:-1] - e_int, delta[1:] - e_int
    # options 3 and 4: the lines 1 − x and p_inf
    opts_l = np.stack([left, t_left, one_minus[:-1], np.full(n - 1, p_inf)])
    opts_r = np.stack([right, t_right, one_minus[1:], np.full(n - 1, p_inf)])
    with np.errstate(invalid="ignore"):
        score = np.where(np.isfinite(opts_l) & np.isfinite(opts_r), opts_l + opts_r, -np.inf)
    # an option that falls below max(1 − x, p_inf) at an end would have its points dropped
    floor = np.maximum(one_minus, p_inf)
    low_end = (opts_l < floor[:-1]) | (opts_r < floor[1:])
    score[:2] = np.where(low_end[:2], -np.inf, score[:2])
    pick = np.argmax(score, axis=0)
    cols = np.arange(n - 1)
    left, right = opts_l[pick, cols], opts_r[pick, cols]
    L = np.empty(n)
    L[0] = left[0]
    L[-1] = right[-1]
    L[1:-1] = np.minimum(right[:-1], left[1:])
    with np.errstate(over="ignore"):
        x = np.exp(eps)
    ok = L >= one_minus
    # i0: first index from which every point lies on or above the line 1 − x
    bad_after = np.nonzero(~ok)[0]
    i0 = int(bad_after[-1]) + 1 if bad_after.size else 0
    if i0 >= n - 1 or one_minus[i0] < p_inf:
        # The lowered values fall below the line 1 − e^ε up to where that line is below the
        # +∞ mass (the grid is too coarse for this pair): nothing better than the pair with
        # no privacy loss (P = Q: δ(ε) = (1 − e^ε)₊, below every profile) can be certified.
        return Discrete(h, 0, np.zeros(1), 0.0)
    above = np.nonzero(L[i0 + 1:] <= p_inf)[0]
    i_end = i0 + 1 + int(above[0]) if above.size else n - 1
    px = np.concatenate([[0.0], x[i0:i_end + 1]])
    py = np.concatenate([[1.0], L[i0:i_end + 1]])
    py[1] = one_minus[i0]
    py[-1] = p_inf
    # the last interval ends flat at the +∞ mass: its left end must not exceed δ at its right
    # end (δ decreasing), so that the chord stays below δ on the whole interval
    d_end = math.exp(float(profile.log_delta(np.array([eps[i_end]]))[0])) * (1.0 - 1e-9)
    py[-2] = min(py[-2], d_end)
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
    return Discrete(h, lo, lm_low, p_inf)


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
