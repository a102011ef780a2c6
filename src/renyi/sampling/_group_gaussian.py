"""Numerics of the group-level Poisson-subsampled Gaussian (a person with k examples).

Under Poisson sampling of *examples* at rate q, a person with k examples (each clipped to
ℓ₂-norm Δ) contributes J ~ Binomial(k, q) of them to a batch. With noise multiplier
σ = (noise standard deviation)/Δ and the worst case where all k gradients point the same way
(Ganesh 2024, Thm 3.2 with Choquette-Choo, Ganesh, Steinke, Thakurta 2023, Cor. 4.7: a vector
mixture of Gaussians is dominated by the scalar one with the norms), one step is the pair

    P = Σ_j w_j N(j, σ²),  w_j = Bin(k, q)(j),    against    Q = N(0, σ²)

for a removal (P, Q) and an addition (Q, P) of the person. Everything below is about that
pair, in units of Δ.

**Privacy loss.** L(x) = log dP/dQ(x) = log Σ_j w_j e^{L_j(x)}, L_j(x) = (2jx − j²)/(2σ²),
is a log-sum-exp of affine functions of x: convex and increasing, from log w₀ (x → −∞) to
+∞. So {L > ε} = {x > x_ε} with the single root L(x_ε) = ε, and the privacy profiles are
Gaussian tails at x_ε. Writing e^ε Q(x > x_ε) = Σ_j w_j e^{L_j(x_ε)} Q(x > x_ε) splits the
remove profile into non-negative Gaussian terms (no cancellation between components):

    δ_{P‖Q}(ε) = Σ_j w_j δ_G(j/σ, L_j(x_ε))                        (ε > log w₀; 1 − e^ε below)
    δ_{Q‖P}(ε) = Σ_j w_j e^{ε + L_j(y_ε)} δ_G(j/σ, −L_j(y_ε))       (ε < −log w₀; 0 above)

with L(y_ε) = −ε and δ_G(μ, ε) the profile of the Gaussian pair with shift μ (Balle & Wang
2018, Thm 8), each component's threshold being the same x. The root is found by Newton's
method from above (L convex: the iterates decrease monotonically to the root); the profile is
then evaluated at ε̃ = L(x̃) exactly, so that a root off by rounding moves ε, not δ.

Components with log w_j < −700 are dropped (as they would underflow), and their mass
m_d ≤ (k+1)·e^{−700} is moved to an outcome only P produces (+∞ loss). That pair dominates the
exact one (the exact pair is its post-processing: replace the outcome by a draw from the
dropped components), so the profiles stay valid upper bounds in both directions.

**RDP.** With a_j = w_j e^{−j²/(2σ²)}, (dP/dQ)(x) = Σ_j a_j e^{jx/σ²}, so for an integer order
α the moment E_Q[(dP/dQ)^α] = Σ_s (a^{*α})_s e^{s²/(2σ²)} (α-fold convolution; E_Q e^{sx/σ²}
= e^{s²/(2σ²)}), computed exactly in log space. K(α) = log E_Q[(dP/dQ)^α] is convex in α (a
cumulant generating function), so between integer orders the chord is a valid upper bound
(Wang, Balle, Kasiviswanathan 2019, Cor. 10). The addition direction, log E_Q[(dP/dQ)^{1−α}],
has a log-concave integrand φ(x)·e^{(1−α)L(x)} (−x²/2 concave, (1−α)·convex), so the minimum
of its tangent lines at the ends of each cell of a grid bounds it from above on that cell, and
the tangents at the outermost points bound the tails: a certified upper bound at every real
order. Both directions are bounded by the Gaussian with sensitivity k, αk²/(2σ²) (joint
quasi-convexity of Rényi divergence), which is used where the convolution would be too long.

References:
    Ganesh (2024), Tight Group-Level DP Guarantees for DP-SGD with Sampling via Mixture of
        Gaussians Mechanisms, arXiv:2401.10294.
    Choquette-Choo, Ganesh, Steinke, Thakurta (2023), Privacy Amplification for Matrix
        Mechanisms, arXiv:2310.15526, Cor. 4.7.
    Balle, Wang (2018), Improving the Gaussian Mechanism for Differential Privacy, Thm 8.
    Wang, Balle, Kasiviswanathan (2019), Subsampled Rényi Differential Privacy and Analytical
        Moments Accountant, Cor. 10.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from renyi.core._lazy import special
from renyi.core._logmath import log1mexp, log_delta_gaussian

__all__ = ["GroupMixture", "mixture"]

#: the order-free parts of the remainder form on one grid: u at the points, the cell widths,
#: ΔΦ and ∫_cell (x − x_a) φ_σ per cell, Φ(x₀/σ), and the tail integral of u past the grid
_Cells = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]

#: components lighter than this (log weight) are moved to the +∞ outcome (see the docstring)
_DROP = -700.0
#: integer orders are convolved exactly while α²(k+1)²/2 stays below this many terms
_CONV_BUDGET = 1.5e7
#: the largest integer order tabulated
_MAX_ORDER = 256
_CHUNK = 4096


def _lse(a: np.ndarray, axis: int | None = None) -> np.ndarray:
    """log Σ e^a over ``axis`` (all axes for None; −∞ where everything is −∞), in plain numpy:
    scipy's logsumexp spends ~0.5 ms a call on array-API checks, which dominated this module."""
    a = np.asarray(a, dtype=np.float64)
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore", over="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return np.asarray(out.reshape(()) if axis is None else np.squeeze(out, axis=axis))


def _log_binomial(k: int, q: float) -> np.ndarray:
    j = np.arange(k + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.asarray(
            special.gammaln(k + 1.0) - special.gammaln(j + 1.0) - special.gammaln(k - j + 1.0)
            + j * math.log(q) + (k - j) * math.log1p(-q), dtype=np.float64)


class GroupMixture:
    """The pair (Σ_j Bin(k, q)(j) N(j, σ²), N(0, σ²)) for 0 < q < 1, k ≥ 1, σ > 0.

    Build it through :func:`mixture` (one cached object per (k, q, σ)).
    """

    def __init__(self, k: int, q: float, sigma: float) -> None:
        self.k, self.q, self.sigma = k, q, sigma
        self.s2 = sigma * sigma
        lw_all = _log_binomial(k, q)
        self.lw_all = lw_all
        keep = lw_all >= _DROP
        keep[int(np.argmax(lw_all))] = True
        keep[1 + int(np.argmax(lw_all[1:]))] = True  # a component that moves (the loss is not constant)
        self.j = np.nonzero(keep)[0].astype(np.float64)
        self.lw = lw_all[keep]
        dropped = lw_all[~keep]
        #: the mass moved to the +∞ outcome (0.0 when nothing is dropped)
        self.drop = float(np.exp(_lse(dropped))) if dropped.size else 0.0
        #: log w₀ of the kept part (−∞ when the j = 0 component was dropped)
        self.lw0 = float(self.lw[0]) if self.j[0] == 0 else -math.inf
        self._jp, self._lwp = self.j[self.j > 0], self.lw[self.j > 0]
        self._tab: list[float] | None = None
        self._la = self._b = np.zeros(0)
        self._add: dict[int, float] = {}
        self._rem_grids: dict[int, tuple[_Cells, _Cells]] = {}

    # ------------------------------------------------------------------ privacy loss
    def _terms(self, x: np.ndarray) -> np.ndarray:
        j = self.j
        return np.asarray(self.lw[None, :] + (2.0 * j[None, :] * x[:, None] - j[None, :] ** 2) / (2.0 * self.s2))

    def loss(self, x: np.ndarray) -> np.ndarray:
        """L(x) = log dP/dQ(x) (of the kept components)."""
        return np.asarray(_lse(self._terms(np.asarray(x, dtype=np.float64)), axis=1))

    def _moving_slope(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """G(x) = log Σ_{j≥1} w_j e^{L_j(x)} (= log(e^{L(x)} − w₀)) and G'(x)."""
        jp, lwp = self._jp, self._lwp
        t = lwp[None, :] + (2.0 * jp[None, :] * x[:, None] - jp[None, :] ** 2) / (2.0 * self.s2)
        m = t.max(axis=1, keepdims=True)
        e = np.exp(t - m)
        se = e.sum(axis=1)
        return m[:, 0] + np.log(se), (e @ jp) / se / self.s2

    def root(self, target: np.ndarray) -> np.ndarray:
        """x with L(x) = target (target > log w₀), by Newton's method from above on
        G(x) = log(e^{L(x)} − w₀) = log Σ_{j≥1} w_j e^{L_j(x)}: a log-sum-exp of affine functions
        (convex, increasing and nearly affine, where L flattens out towards log w₀ and Newton
        on L itself crawls), with target log(e^target − w₀)."""
        target = np.asarray(target, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            tg = target + log1mexp(np.minimum(self.lw0 - target, 0.0)) if self.lw0 > -np.inf else target.copy()
        jp, lwp = self._jp, self._lwp
        # G(x) ≥ lw_j + L_j(x) for every j ≥ 1: each x_j below has G(x_j) ≥ target, so their
        # minimum is a start above the root (and within log k/G' of it)
        x = np.min((tg[:, None] - lwp[None, :]) * self.s2 / jp[None, :] + jp[None, :] / 2.0, axis=1)
        x = x + 1e-9 * (1.0 + np.abs(x))
        active = np.isfinite(x)
        for _ in range(200):
            idx = np.nonzero(active)[0]
            if not idx.size:
                break
            gg, d = self._moving_slope(x[idx])
            step = (gg - tg[idx]) / d
            # from above on a convex increasing function the step is ≥ 0 up to rounding
            x[idx] = x[idx] - np.maximum(step, 0.0)
            active[idx] = step > 4e-16 * (1.0 + np.abs(x[idx]))
        return np.asarray(x, dtype=np.float64)

    def log_delta_remove(self, eps: np.ndarray) -> np.ndarray:
        """log δ_{P‖Q}(ε) for real ε (array)."""
        eps = np.asarray(eps, dtype=np.float64)
        flat = eps.reshape(-1)
        out = np.empty(flat.size)
        low = flat <= self.lw0
        if low.any():
            out[low] = log1mexp(np.minimum(flat[low], 0.0))
        idx = np.nonzero(~low)[0]
        for lo in range(0, idx.size, _CHUNK):
            ii = idx[lo:lo + _CHUNK]
            x = self.root(flat[ii])
            out[ii] = self._remove_at(x)
        if self.drop > 0.0:
            out = np.logaddexp(out, math.log(self.drop))
        return out.reshape(eps.shape)

    def _remove_at(self, x: np.ndarray) -> np.ndarray:
        j = self.j
        pos = j > 0
        lj = (2.0 * j[pos][None, :] * x[:, None] - j[pos][None, :] ** 2) / (2.0 * self.s2)
        ld = log_delta_gaussian(lj, np.broadcast_to(j[pos] / self.sigma, lj.shape))
        return np.asarray(_lse(self.lw[pos][None, :] + ld, axis=1))

    def log_delta_remove_lower(self, eps: np.ndarray) -> np.ndarray:
        """log of a lower bound on δ_{P‖Q}(ε) of the exact pair (all k + 1 components), ε ≥ 0
        (array), up to rounding (relative ~1e-12): the kept components at the root x̃ of their
        own loss, without the dropped mass. The kept loss is at most the full one, so x̃ is at
        least the full root, and each term w_j δ_G(j/σ, L_j(x)) decreases in x; the dropped
        terms are ≥ 0. Used to certify that a route cannot win (renyi.accounting._route_skip)."""
        flat = np.asarray(eps, dtype=np.float64).reshape(-1)
        if flat.size == 0:
            return flat.copy()
        if not bool(np.all(flat > self.lw0)):
            raise ValueError("log_delta_remove_lower needs ε > log w₀")
        return self._remove_at(self.root(flat))

    def cgf_remove_lower(self, n_max: int) -> np.ndarray:
        """Lower bounds on K(n) = log E_Q[(dP/dQ)^n] = (n − 1)·D_n(P‖Q) of the exact pair at the
        integer orders n = 0 … ``n_max`` (≤ :meth:`max_order`), as an array indexed by n.

        k = 1 (P = (1−q)N(0, σ²) + qN(1, σ²)): the binomial expansion
        E_Q[(dP/dQ)^n] = Σ_i C(n, i)(1−q)^{n−i} q^i e^{(i²−i)/(2σ²)} in log space, vectorised
        over n; k ≥ 2: the exact log-space convolution (:meth:`_table`). Each is lowered by its
        rounding (relative 1e-9, absolute 1e-11·n) and kept ≥ 0 (K ≥ 0)."""
        n_max = int(min(n_max, self.max_order()))
        n = np.arange(n_max + 1, dtype=np.float64)
        if self.k == 1:
            i = n[None, :]
            nn = n[:, None]
            q = self.q
            with np.errstate(divide="ignore", invalid="ignore"):
                t = (special.gammaln(nn + 1.0) - special.gammaln(i + 1.0) - special.gammaln(np.maximum(nn - i, 0.0) + 1.0)
                     + (nn - i) * math.log1p(-q) + i * math.log(q) + (i * i - i) / (2.0 * self.s2))
            t = np.where(i <= nn, t, -np.inf)
            k_n = np.asarray(_lse(t, axis=1), dtype=np.float64)
        else:
            k_n = np.asarray(self._table(n_max)[:n_max + 1], dtype=np.float64)
        return np.maximum(0.0, k_n - 1e-9 * np.abs(k_n) - 1e-11 * n)

    def log_delta_add(self, eps: np.ndarray) -> np.ndarray:
        """log δ_{Q‖P}(ε) for real ε (array)."""
        eps = np.asarray(eps, dtype=np.float64)
        flat = eps.reshape(-1)
        out = np.full(flat.size, -np.inf)
        idx = np.nonzero(flat < -self.lw0)[0]
        for lo in range(0, idx.size, _CHUNK):
            ii = idx[lo:lo + _CHUNK]
            y = self.root(-flat[ii])
            j = self.j
            lj = (2.0 * j[None, :] * y[:, None] - j[None, :] ** 2) / (2.0 * self.s2)
            ll = _lse(self.lw[None, :] + lj, axis=1)  # = −ε̃
            pos = j > 0
            ld = log_delta_gaussian(-lj[:, pos], np.broadcast_to(j[pos] / self.sigma, (ii.size, int(pos.sum()))))
            out[ii] = _lse(self.lw[pos][None, :] + lj[:, pos] + ld, axis=1) - ll
        return out.reshape(eps.shape)

    def sup_loss_add(self) -> float:
        """ess sup of log dQ/dP under Q: −log w₀ (+∞ without the j = 0 component)."""
        return -self.lw0

    # ------------------------------------------------------------------ RDP
    def max_order(self) -> int:
        """The largest integer order convolved exactly."""
        return int(max(2, min(_MAX_ORDER, math.isqrt(int(2 * _CONV_BUDGET)) // (self.k + 1))))

    def _table(self, n_need: int) -> list[float]:
        """K(n) = log E_Q[(dP/dQ)^n] for n = 0 … at least ``n_need`` (≤ max_order): exact,
        a log-space convolution, extended only as far as orders are asked for."""
        if self._tab is None:
            j = np.arange(self.k + 1, dtype=np.float64)
            self._la = self.lw_all - j * j / (2.0 * self.s2)
            self._b = self._la.copy()  # b[s] = log (a^{*n})_s, s = 0 … nk, for n = len(tab) − 1
            self._tab = [0.0, 0.0]  # K(0) = 0; K(1) = log E_Q[dP/dQ] = 0 exactly
        tab, la = self._tab, self._la
        n_need = min(n_need, self.max_order())
        while len(tab) <= n_need:
            b = self._b
            # b ⊛ a in log space, one shifted copy of b per component (no dense matrix)
            out = np.full(b.size + self.k, -np.inf)
            for t in range(self.k + 1):
                if la[t] > -np.inf:
                    np.logaddexp(out[t:t + b.size], b + la[t], out=out[t:t + b.size])
            self._b = out
            tab.append(float(_lse(out + np.arange(out.size) ** 2 / (2.0 * self.s2))))
        return tab

    def cgf_remove(self, alpha: float) -> float:
        """An upper bound on K(α) = log E_Q[(dP/dQ)^α]: exact at integer orders ≤ max_order,
        the chord between the neighbouring integers elsewhere (K convex), and
        α(α−1)k²/(2σ²) (the Gaussian with sensitivity k) beyond the table."""
        gauss = alpha * (alpha - 1.0) * self.k ** 2 / (2.0 * self.s2)
        n_max = self.max_order()
        if alpha > n_max:
            return gauss
        lo = int(math.floor(alpha))
        tab = self._table(lo + 1)
        if lo == alpha:
            return min(float(tab[lo]), gauss)
        t = alpha - lo
        return min((1.0 - t) * float(tab[lo]) + t * float(tab[lo + 1]), gauss)

    def cgf_add(self, alpha: float) -> float:
        """A certified upper bound on log E_Q[(dP/dQ)^{1−α}] = (α−1)·D_α(Q‖P), α > 1 real.

        Integer orders by the quadrature of :func:`_log_concave_integral` (refined once where
        it exceeds the removal direction); between integers the chord of those bounds (the
        function is convex in α, and 0 at α = 1).
        """
        cap = alpha * (alpha - 1.0) * self.k ** 2 / (2.0 * self.s2)
        lo = int(math.floor(alpha))
        if lo == alpha:
            return min(self._add_int(lo), cap)
        t = alpha - lo
        k_lo = 0.0 if lo <= 1 else self._add_int(lo)
        return min((1.0 - t) * k_lo + t * self._add_int(lo + 1), cap)

    def _add_int(self, n: int) -> float:
        """The certified bound at an integer order n, refined only while it matters: not once
        it is at most 0.5 % above the exact removal direction (the one-step curve is the
        larger of the two, and the truth is at least the removal value). Where the remainder
        form applies (:func:`_add_by_remainder`, small (n−1)·E_Q[u]) it is used on 1001, then
        4001 points (within 0.05 %, then 0.003 %); elsewhere the log-concave quadrature on
        201, 801, 3201, 12801 points until it stops moving (its error falls as h², so a change
        below 1 % from a 4× finer grid leaves < 0.07 %). Every value is valid; the smallest
        is kept."""
        hit = self._add.get(n)
        if hit is None:
            rem = self.cgf_remove(float(n))
            r = _add_by_remainder(self, n - 1, 1001)
            if r is not None:
                hit = r
                if hit > rem * 1.005:
                    hit = min(hit, _add_by_remainder(self, n - 1, 4001) or hit)
            else:
                hit = _log_concave_integral(self, float(n), 201)
                for points in (801, 3201, 12801):
                    if hit <= rem * 1.005:
                        break
                    finer = min(hit, _log_concave_integral(self, float(n), points))
                    moved = hit - finer
                    hit = finer
                    if moved <= 0.01 * abs(hit):
                        break
            self._add[n] = hit
        return hit

    def _remainder_grid(self, points: int) -> tuple[_Cells, _Cells]:
        """The order-free parts of :func:`_add_by_remainder` (cached per grid size): for a
        coarse 401-point grid over [−12σ, k + 14σ] and the ``points`` grid over [−12σ, x_hi],
        u at the points, the cell widths, ΔΦ, ∫_cell (x − x_a) φ_σ, Φ(x₀/σ) and
        T₁(x_hi) = ∫_{x_hi}^∞ φ_σ·u = Σ_j (w_j/w₀) Φ̄((x_hi − j)/σ). x_hi is where T₁ falls below
        1e-9 of the coarse bound on R at order 2 (R grows with the order, T₁ enters times m),
        and the grid stops before u exceeds e^600 (the tail bound covers the rest)."""
        hit = self._rem_grids.get(points)
        if hit is not None:
            return hit
        sig, s2 = self.sigma, self.s2
        lw0 = float(self.lw_all[0])
        j = np.arange(1, self.k + 1, dtype=np.float64)
        lr = self.lw_all[1:] - lw0  # log(w_j/w₀)
        fin = np.isfinite(lr)
        j, lr = j[fin], lr[fin]

        def log_u(x: np.ndarray) -> np.ndarray:
            return _lse(lr[None, :] + (2.0 * j[None, :] * x[:, None] - j[None, :] ** 2) / (2.0 * s2), axis=1)

        def tail1(x: np.ndarray) -> np.ndarray:
            z = (x[:, None] - j[None, :]) / sig
            return np.asarray(np.exp(_lse(lr[None, :] + special.log_ndtr(-z), axis=1)), dtype=np.float64)

        def cells(x_lo: float, x_hi: float, n: int) -> _Cells:
            x = np.linspace(x_lo, x_hi, n)
            z = x / sig
            za, zb = z[:-1], z[1:]
            # ΔΦ from the side where it keeps its digits
            dphi = np.where(za >= 0.0, special.ndtr(-za) - special.ndtr(-zb), special.ndtr(zb) - special.ndtr(za))
            pdf = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
            dx = x[1:] - x[:-1]
            m1 = np.clip(sig * ((pdf[:-1] - pdf[1:]) - za * dphi), 0.0, dx * dphi)  # ∫_cell (x − x_a) φ_σ
            return (np.exp(log_u(x)), dx, dphi, m1, float(special.ndtr(z[0])), float(tail1(np.array([x_hi]))[0]))

        x_lo = -12.0 * sig
        x_top = float(j[-1]) + 14.0 * sig
        cand = np.linspace(x_lo, x_top, 257)
        over = np.nonzero(log_u(cand) > 600.0)[0]
        if over.size:
            x_top = float(cand[max(over[0] - 1, 1)])
        coarse = cells(x_lo, x_top, 401)
        u, dx, dphi, m1, phi0, t1 = coarse
        h2 = np.maximum(np.expm1(-np.log1p(u)) + u, 0.0)  # h at m = 1: u²/(1 + u)
        r_min = float(np.sum(h2[:-1] * dphi + (h2[1:] - h2[:-1]) / dx * m1)) + float(h2[0]) * phi0 + t1
        cand = np.linspace(x_lo, x_top, 257)
        ok = np.nonzero(tail1(cand) <= 1e-9 * r_min)[0]
        x_hi = max(float(cand[ok[0]]) if ok.size else x_top, x_lo + sig)
        hit = (coarse, cells(x_lo, x_hi, points))
        self._rem_grids[points] = hit
        return hit

    def rdp(self, alpha: float) -> float:
        """ε(α) of one step, both directions (max), a valid upper bound; α > 1 finite."""
        rem = self.cgf_remove(alpha)
        gauss = alpha * (alpha - 1.0) * self.k ** 2 / (2.0 * self.s2)
        if rem >= gauss:  # already the cap, which bounds the addition direction too
            return gauss / (alpha - 1.0)
        return max(rem, self.cgf_add(alpha)) / (alpha - 1.0)


def _log_concave_integral(mix: GroupMixture, alpha: float, points: int) -> float:
    """log of an upper bound on ∫ φ_σ(x) e^{(1−α)L(x)} dx.

    The log-integrand ψ is concave, so on every cell of a grid it lies below both tangent
    lines at the cell's ends, and outside the grid below the outermost tangents; the integral
    of the lower envelope of those lines is computed exactly (rounded up). The grid is dense
    around the mode of ψ and spans the region where ψ is within 60 of its maximum.
    """
    j, lw, s2 = np.arange(mix.k + 1, dtype=np.float64), mix.lw_all, mix.s2
    fin = np.isfinite(lw)
    j, lw = j[fin], lw[fin]
    c0 = -0.5 * math.log(2.0 * math.pi * s2)

    def psi(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = lw[None, :] + (2.0 * j[None, :] * x[:, None] - j[None, :] ** 2) / (2.0 * s2)
        ll = _lse(t, axis=1)
        p = np.exp(t - ll[:, None])
        return c0 - x * x / (2.0 * s2) + (1.0 - alpha) * ll, -x / s2 + (1.0 - alpha) * (p @ j) / s2

    # the mode: ψ' decreases from > 0 to < 0; it lies in [(1−α)k, 0] (the slope of L is in [0, k/σ²])
    lo, hi = (1.0 - alpha) * float(j.max()) - 1.0, 1.0
    for _ in range(4):
        xs = np.linspace(lo, hi, 65)
        d = psi(xs)[1]
        i = int(np.searchsorted(-d, 0.0))  # first index with ψ' ≤ 0
        lo, hi = float(xs[max(i - 1, 0)]), float(xs[min(i, 64)])
    xm = 0.5 * (lo + hi)
    fm = float(psi(np.array([xm]))[0][0])
    ends = []
    for sgn in (-1.0, 1.0):
        offs = mix.sigma * 2.0 ** np.arange(-6, 40)
        f = psi(xm + sgn * offs)[0]
        i = int(np.argmax(f < fm - 60.0))
        ends.append(float(offs[i]))
    u = np.linspace(-1.0, 1.0, points)
    # sinh spacing: fine near the mode, coarse in the tails
    x = np.where(u < 0, xm + ends[0] * np.sinh(4.0 * u) / math.sinh(4.0), xm + ends[1] * np.sinh(4.0 * u) / math.sinh(4.0))
    x = np.unique(x)
    f, d = psi(x)
    x0, x1, f0, f1, d0, d1 = x[:-1], x[1:], f[:-1], f[1:], d[:-1], d[1:]
    # the two tangents cross at c (d0 ≥ d1 by concavity); the bound is the lower envelope
    gap = d0 - d1
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(gap > 0.0, (f1 - f0 + d0 * x0 - d1 * x1) / np.where(gap > 0.0, gap, 1.0), 0.5 * (x0 + x1))
    c = np.clip(c, x0, x1)
    parts = [_log_int_exp_line(f0, d0, c - x0), _log_int_exp_line(f1 + d1 * (c - x1), d1, x1 - c),
             # tails: the tangents at the outermost points (slopes > 0 on the left, < 0 on the right)
             np.array([f[0] - math.log(d[0]), f[-1] - math.log(-d[-1])])]
    return float(_lse(np.concatenate(parts)))


def _log_int_exp_line(f: np.ndarray, d: np.ndarray, h: np.ndarray) -> np.ndarray:
    """log ∫_0^h e^{f + d·t} dt, elementwise (−∞ where h = 0), rounded up by 1e-12."""
    z = d * h
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        zs = np.where(z == 0.0, 1.0, z)
        # log((e^z − 1)/z), stable for both signs of z
        lr = np.where(np.abs(z) < 1e-10, 0.5 * z,
                      np.where(z > 0, z + np.log(-np.expm1(-np.abs(zs))) - np.log(np.abs(zs)),
                               np.log(-np.expm1(-np.abs(zs))) - np.log(np.abs(zs))))
        out = f + np.log(np.where(h > 0, h, 1.0)) + lr + 1e-12
    return np.where(h > 0, out, -np.inf)


@lru_cache(maxsize=64)
def mixture(k: int, q: float, sigma: float) -> GroupMixture:
    """The (cached) pair for a person with k examples, sampling rate q ∈ (0, 1), noise σ."""
    return GroupMixture(int(k), float(q), float(sigma))


#: the addition direction by the remainder form below applies while m·E_Q[u] stays below this
_REMAINDER_MAX = 0.5


def _add_by_remainder(mix: GroupMixture, m: int, points: int) -> float | None:
    """An upper bound on log E_Q[(dP/dQ)^{−m}] (the addition direction at order α = m + 1) by
    its small remainder; None where it does not apply (then the log-concave quadrature does).

    With dP/dQ = w₀(1 + u), u(x) = Σ_{j≥1} (w_j/w₀) e^{L_j(x)} ≥ 0 (increasing and convex in
    x) and E_Q[u] = (1 − w₀)/w₀ exactly (E_Q e^{L_j} = 1),

        E_Q[(dP/dQ)^{−m}] = w₀^{−m} (1 − m E_Q[u] + R),   R = E_Q[h(u)],  h(u) = (1+u)^{−m} − 1 + m u.

    h is convex, increasing and ≥ 0 on u ≥ 0, so g = h∘u is convex and increasing in x: on each
    cell of a grid g lies below its chord (∫ φ·chord is exact in Φ and φ), left of the grid
    below its value at the first point, right of it below m·u (h(u) ≤ m u), whose Gaussian
    integral is Σ_j (w_j/w₀) Φ̄((x − j)/σ). The leading terms, O(q), are exact in closed form,
    so only R = O(q²) is integrated: a grid of a few thousand points bounds it within 0.1 %,
    where bounding the whole integral 1 + O(q²) to that precision needs 10⁴–10⁵ tangents.
    The result is rounded up (relative 1e-9 on R, absolute 1e-13 on the total).
    """
    big_l0 = -float(mix.lw_all[0])  # −log w₀ = −k·log(1 − q) > 0
    eu = math.expm1(big_l0)  # E_Q[u] = (1 − w₀)/w₀
    a = m * eu
    if not (math.isfinite(a) and a <= _REMAINDER_MAX):
        return None
    grid = mix._remainder_grid(points)

    def h_of(u: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            full = np.expm1(-m * np.log1p(u)) + m * u
            small = u < 1e-6 / (m + 1.0)
            # h(u) ≤ m(m+1)u²/2 (h(0) = h'(0) = 0, h'' ≤ m(m+1)): rounding-free where u is tiny
            return np.asarray(np.where(small, 0.5 * m * (m + 1.0) * u * u, np.maximum(full, 0.0)), dtype=np.float64)

    def upper(cells: _Cells) -> float:
        u, dx, dphi, m1, phi0, tail1 = cells
        g = h_of(u)
        parts = g[:-1] * dphi + (g[1:] - g[:-1]) / dx * m1
        return float(np.sum(np.maximum(parts, 0.0))) + float(g[0]) * float(phi0) + m * float(tail1)

    r = min(upper(grid[0]), upper(grid[1]))
    r = r * (1.0 + 1e-9)
    if not (math.isfinite(r) and r - a > -1.0):
        return None
    return float(m * big_l0 + math.log1p(r - a)) + 1e-13 * (1.0 + m * big_l0)
