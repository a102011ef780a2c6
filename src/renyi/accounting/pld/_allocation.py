"""Certified dominating pairs of random allocation (1 of t steps), as finite atoms.

**Other bases.** Everything below uses only the law of the base pair's likelihood ratio under
Q (:class:`_Ratio`): the Gaussian's lognormal Y, the Laplace pair's (two atoms and a continuous
part), or the atoms of any finite pair (discrete Gaussian, discrete Laplace, the
randomized-response pair of an ε-DP step). A base whose add/remove neighbours are dominated by
(P, Q) in both directions is a post-processing of (P, Q) by one kernel (Blackwell), so its
allocation is a post-processing of ((1/t) Σ_i Q^{i−1}×P×Q^{t−i}, Q^t), the pair below with the
lognormal replaced by that law (issue #23; exact ground truth in tests/test_allocation_bases.py).

**The pair.** One example takes part in one of t steps chosen uniformly at random; each step
releases a Gaussian with noise multiplier σ (μ = Δ/σ = 1/σ). Under add/remove neighbours the
worst-case pair of the t outputs is ([FS25], Thm 3.1 and §5)

    P = (1/t) Σ_i N(μ e_i, I_t)   (the example is present)   versus   Q = N(0, I_t).

With Y_i = exp(μ x_i − μ²/2), independent lognormals under Q (log Y ~ N(−μ²/2, μ²), E Y = 1),
dP/dQ = S/t with S = Σ_i Y_i. Both privacy profiles are expectations under Q of *convex*
functions of S (x = e^ε):

    remove  δ_{P‖Q}(x) = E_Q[(S/t − x)₊],        add  δ_{Q‖P}(x) = E_Q[(1 − xS/t)₊].

**Upper pair (dominates).** Each Y_i (capped at c, Y∧c) is replaced by a lattice variable
Ỹ ∈ {0, Δ, 2Δ, …} that *spreads* it: the mass of every y ∈ [kΔ, (k+1)Δ] is split between the
two neighbours keeping the mean, so Ỹ ≥cx Y∧c (convex order). Independent sums keep the
convex order (S̃ = ΣỸ_i ≥cx Σ(Y_i∧c)), so for every x ≥ 0
E(S̃/t − x)₊ + E(Y − c)₊ ≥ E(S/t − x)₊ (as (a + b)₊ ≤ a₊ + b) and E(1 − xS̃/t)₊ ≥ E(1 − xS/t)₊
(S∧ ≤ S, and the function is decreasing). The pair (P*, Q*) with Q* the law of S̃, dP*/dQ* =
S̃/t, plus an outcome only P* charges with mass E(Y − c)₊, is a proper pair (E S̃ = E Σ Y∧c),
its two profiles are at least the true ones everywhere, so it dominates the true pair after
any composition (Blackwell; Dong, Roth & Su 2022, Prop 2.3 and Thm 2.10).

**Lower pair (dominated).** A post-processing of the outputs: each Y_i is reduced to its
lattice cell index k_i = min(⌊Y_i/Δ⌋, K) and the output is k = Σ k_i. The pair of the laws of
k under P and Q is dominated by the true pair on any lattice (see :func:`_lower_pair`); under Q
the k_i are i.i.d., under P one of them is size-biased, so both laws are convolution powers.
(A convex-order contraction onto the lattice, used before, does not exist once Δ > 1.)
The error of both pairs is second order in Δ.

**The t-fold law** is computed by binary powering with linear FFT convolutions kept on a
window {0, …, N−1}; a sum that leaves the window is booked exactly (its probability and first
moment). In the upper pair such outcomes are split into a P-only and a Q-only outcome (which
only raises both profiles) — except in the add direction, where they are moved down to the top
of the window (S smaller: a larger add profile) —; in the lower pair they are dropped (every profile
loses a non-negative term). Each convolution computes the part of the operands above 10⁻⁹ of
their maximum on its own support, so the round-off of the far tails is relative, not absolute.

**What is not bounded (open, issue #23).** The floating-point error of the lattice laws is
controlled (the split above, the clamp of the lower pair's losses to the range its statistic
allows) but not *bounded*: no rigorous round-off term is added to the upper end or subtracted
from the lower one, unlike the engine's transforms. Instead the route does not answer where
round-off could matter: below δ = :data:`ROUNDOFF_FLOOR` (1e-12) × the number of allocation
epochs on a lattice, the ε-question declines (``ConversionError``; with ``fallback`` the RDP
route's ε, with a warning naming the reason) and the δ-question's lower end is 0 (its upper end
declines likewise below the floor). Measured: the cell masses of a summand lose
relative precision deep in the right tail (6e-4 at 10⁶ lattice cells for μ = 2, 2e-5 at 10⁵;
those cells weigh ~1e-13 in δ), and profiles below δ ≈ 1e-15 are round-off (lower above upper
there in off-grid scans); at δ ≥ 1e-14 every bracket checked overlaps across lattices and
contains the mpmath truth (t = 2).

**Why no rigorous round-off term is booked (checked, issue #23).** The available rigorous
bound is norm-wise: ‖fl(a∗b) − a∗b‖₂ ≤ c·u·log₂n·‖a‖₂‖b‖₂ per FFT convolution (Higham,
Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm 24.2, for radix-2 transforms),
propagated through the powering (‖e∗b‖₂ ≤ ‖e‖₂‖b‖₁) and turned into a δ error by
Cauchy–Schwarz against the profile's weights s/t over the window. On the lattices used it is
5e-10 (σ = 2, t = 1000), 5e-9 (σ = 1, t = 1000), 9e-8 (σ = 0.8, t = 1000) and 4e-4 (σ = 0.5,
t = 100) (``benchmarks/bench_allocation.py --fft-bound``): booked into δ it would take δ ≤ 1e-8
(and at σ = 0.5 every δ below 1e-3) away from the route, while the measured error is relative
in the tails (the split convolution) and below 1e-15 in δ. A usable rigorous bound needs a
component-wise one (e.g. exponentially tilted transforms, whose untilted error decays like a
Chernoff bound of the tail) for pocketfft's mixed-radix transforms; until then the floor stays
the measured one.

The two directions use two lattices: the remove direction needs the right tail of S (up to
the cap c, where the lognormal's partial expectation E(Y − c)₊ is :data:`TAIL`), the add direction the
left one (fine enough that S̃ = 0, an infinite loss, has negligible probability).

References:
    [FS25] V. Feldman, M. Shenfeld, Privacy amplification by random allocation,
        arXiv:2502.08202 (2025).
    Müller & Stoyan (2002), Comparison Methods for Stochastic Models and Risks, Thm 1.5.4
    (convex order: mean-preserving spreads, closure under independent sums).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from renyi.core._lazy import fft as sfft
from renyi.core._lazy import special

import renyi.accounting.pld._profiles as _profiles
from renyi.accounting.pld._many import Bucket
from renyi.accounting.pld._profiles import AtomProfile, Profile

__all__ = ["AllocationProfile", "allocation_profiles", "base_ratio", "expand", "pairs", "supported", "shift_item", "MAX_POINTS", "TAIL",
           "TAIL_COARSE", "ROUNDOFF_FLOOR", "lattice_epochs", "roundoff_floor",
           "single_epoch_pairs", "SINGLE_POINTS", "FIRST_POINTS"]

#: Largest lattice (points per window): memory ~ 10 arrays of twice this many float64.
MAX_POINTS = 2**20
#: E(Y − c)₊ at the cap c of each summand (the P-only mass of the upper pair, per epoch).
TAIL = 1e-13
#: The cap's tail where the cap at :data:`TAIL` would make the lattice coarser than 4× its target
#: spacing (heavy lognormals, σ ≲ 0.6 per unit sensitivity: at σ = 0.5 the cap shrinks 3.6×, and
#: five epochs' brackets narrow from 1.5–4.6 % to 0.7 %). Its cost: δ below about epochs × this
#: is out of the PLD route's reach (the RDP route answers there).
TAIL_COARSE = 1e-11
#: The smallest δ, per allocation epoch computed on a lattice, at which the PLD route answers
#: (issue #23): the floating-point error of the lattice laws is measured, not bounded, so below
#: ``ROUNDOFF_FLOOR × epochs`` :func:`~renyi.accounting.pld.distribution.epsilon_bracket` declines
#: (the RDP route answers) and the δ-question's certified lower end is 0. Measured round-off:
#: profiles are noise below δ ≈ 1e-15 (a lower profile above another lattice's upper one there, at
#: 1e-19…1e-25); the far-tail cell masses carry ~1e-16 absolute error. The floor is 10³ above both.
ROUNDOFF_FLOOR = 1e-12
#: Lattice spacing as a fraction of sd(Y): the variance added (removed) per summand is at most
#: Δ²/4, 0.6 % of Var Y (brackets of about 0.1 % on ε in practice).
_REL_SPACING = 0.15
#: Parts of an operand below this fraction of its maximum are convolved separately (round-off).
_SPLIT = 1e-9


class _Ratio:
    """The law under Q of the likelihood ratio L = dP/dQ of one run of the base pair (P, Q).

    This is all the lattice pairs need: for a base whose add/remove neighbours are dominated by
    (P, Q) in both directions (its profile and the reversed pair's), each step is a
    post-processing of (P, Q) by one Markov kernel (Blackwell's theorem for two distributions),
    so 1-of-t allocation is a post-processing of ((1/t) Σ_i Q^{i−1}×P×Q^{t−i}, Q^t), whose
    likelihood ratio is S/t with S = Σ_i L_i, L_i i.i.d. under Q ([FS25] reduce allocation to
    this pair; the kernel argument covers adaptively chosen steps: each step's kernel may depend
    on the earlier outputs). Subclasses give the law of L on lattice cells.

    ``p_only`` is P(L = ∞) (outcomes only P charges, booked P-only); Q(L = 0) is part of the
    first cell (an infinite loss of the reversed pair, booked as such by the callers).
    """

    sd: float
    p_only: float = 0.0

    def cells(self, delta: float, K: int) -> tuple[np.ndarray, np.ndarray]:
        """(Q-mass, E_Q[L; ·]) of the cells [jΔ, (j+1)Δ), j < K, and of [KΔ, ∞) (length K + 1)."""
        raise NotImplementedError

    def call(self, c: float) -> float:
        """E_Q(L − c)₊ over finite L."""
        raise NotImplementedError

    def cap(self, tail: float) -> float:
        """A c ≥ 0 with E_Q(L − c)₊ ≤ ``tail`` (only a window choice: the callers book the
        exact E_Q(L − KΔ)₊)."""
        raise NotImplementedError

    def fine(self, p: float) -> float:
        """The largest y with Q(0 < L < y) ≤ p (∞ if every y qualifies)."""
        raise NotImplementedError

    def _key(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Ratio) and type(other) is type(self) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))


class _LogNormal(_Ratio):
    """Y = exp(N(−μ²/2, μ²)), mean 1: the likelihood ratio of one Gaussian coordinate."""

    def __init__(self, mu: float) -> None:
        self.mu, self.a = mu, mu * mu / 2.0
        self.sd = math.sqrt(math.expm1(self.mu * self.mu))

    def _key(self) -> tuple[Any, ...]:
        return (self.mu,)

    def sf(self, k: np.ndarray) -> np.ndarray:
        """P(Y > k)."""
        with np.errstate(divide="ignore"):
            return np.asarray(special.ndtr(-(np.log(k) + self.a) / self.mu), dtype=np.float64)

    def partial(self, k: np.ndarray) -> np.ndarray:
        """E[Y; Y > k] (= P(Y′ > k) for the size-biased Y′ = exp(N(μ²/2, μ²)))."""
        with np.errstate(divide="ignore"):
            return np.asarray(special.ndtr(-(np.log(k) - self.a) / self.mu), dtype=np.float64)

    def cells(self, delta: float, K: int) -> tuple[np.ndarray, np.ndarray]:
        y = np.arange(K + 1) * delta
        g, h = self.sf(y), self.partial(y)
        g[0] = h[0] = 1.0
        return np.append(g[:-1] - g[1:], g[-1]), np.append(h[:-1] - h[1:], h[-1])

    def call(self, c: float) -> float:
        k = np.array([c])
        return float(np.maximum(self.partial(k) - k * self.sf(k), 0.0)[0])

    def cap(self, tail: float) -> float:
        return math.exp(self.a - self.mu * float(special.ndtri(tail)))

    def fine(self, p: float) -> float:
        return math.exp(-self.a + self.mu * float(special.ndtri(min(p, 0.5))))


class _LaplaceRatio(_Ratio):
    """L of the Laplace pair Lap(Δ, b) vs Lap(0, b), ε₀ = Δ/b, under Q = Lap(0, b): an atom
    e^{−ε₀} (mass ½, x ≤ 0), an atom e^{ε₀} (mass ½e^{−ε₀}, x ≥ Δ) and L = e^{(2x−Δ)/b} on
    0 < x < Δ, so Q(L ≥ y) = ½(y·e^{ε₀})^{−1/2} and E_Q[L; L ≥ y] = P(L ≥ y) = 1 − ½(y·e^{−ε₀})^{1/2}
    for e^{−ε₀} < y ≤ e^{ε₀} (from the two densities; the law of
    :class:`~renyi.divergences.plrv.LaplacePrivacyLoss`)."""

    def __init__(self, eps0: float) -> None:
        self.eps0 = eps0
        self.lo, self.hi = math.exp(-eps0), math.exp(eps0)
        # E_Q L² = e^{D_2} = (2/3)e^{ε₀} + (1/3)e^{−2ε₀} ([Mir17] Prop 6 at α = 2)
        self.sd = math.sqrt(max((2.0 * math.expm1(eps0) + math.expm1(-2.0 * eps0)) / 3.0, 0.0))

    def _key(self) -> tuple[Any, ...]:
        return (self.eps0,)

    def _tails(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(divide="ignore", invalid="ignore"):
            mid = (y > self.lo) & (y <= self.hi)
            ys = np.where(mid, y, 1.0)
            g = np.where(y <= self.lo, 1.0, np.where(mid, 0.5 / np.sqrt(ys * self.hi), 0.0))
            h = np.where(y <= self.lo, 1.0, np.where(mid, 1.0 - 0.5 * np.sqrt(ys / self.hi), 0.0))
        return g, h

    def cells(self, delta: float, K: int) -> tuple[np.ndarray, np.ndarray]:
        g, h = self._tails(np.arange(K + 1) * delta)
        return np.append(g[:-1] - g[1:], g[-1]), np.append(h[:-1] - h[1:], h[-1])

    def call(self, c: float) -> float:
        if c >= self.hi:
            return 0.0
        if c <= self.lo:
            return 1.0 - c
        return float(-math.expm1(0.5 * (math.log(c) - self.eps0)))  # 1 − (c/e^{ε₀})^{1/2}

    def cap(self, tail: float) -> float:
        return self.hi

    def fine(self, p: float) -> float:
        if p < 0.5:
            return self.lo  # Q(L < y) ≥ ½ once y > e^{−ε₀}
        return min(self.hi, 0.25 / ((1.0 - p) ** 2 * self.hi))


class _AtomRatio(_Ratio):
    """L of a finite pair (an :class:`AtomProfile`: losses z with P-masses p, P-only and Q-only
    masses): atoms L = e^z with Q-masses p·e^{−z}, Q(L = 0) the Q-only mass."""

    def __init__(self, pair: AtomProfile, key: Any) -> None:
        z = np.asarray(pair.values, dtype=np.float64)
        p = np.asarray(pair.masses, dtype=np.float64)
        keep = p > 0
        z, p = z[keep], p[keep]
        order = np.argsort(z)
        self.z, self.p = z[order], p[order]
        with np.errstate(over="ignore"):
            self.q = self.p * np.exp(-self.z)
            self.l = np.exp(self.z)
        # a loss too large for e^z (or whose Q-mass underflows) is booked as P-only
        ok = np.isfinite(self.l) & (self.q > 0)
        self.p_only = float(pair.inf_mass) + float(self.p[~ok].sum())
        self.z, self.p, self.q, self.l = self.z[ok], self.p[ok], self.q[ok], self.l[ok]
        self.q_only = float(pair.dual_inf)
        self.key = key
        m = float(np.sum(self.p))  # E_Q L over finite L
        with np.errstate(over="ignore"):
            var = float(np.sum(self.q * (self.l - m) ** 2)) + self.q_only * m * m
        self.sd = math.sqrt(var) if math.isfinite(var) else math.inf

    def _key(self) -> tuple[Any, ...]:
        return (self.key,)

    def cells(self, delta: float, K: int) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(over="ignore"):
            j = np.minimum(np.floor(self.l / delta), float(K)).astype(np.int64)
        m0 = np.bincount(j, self.q, minlength=K + 1)[: K + 1]
        m1 = np.bincount(j, self.p, minlength=K + 1)[: K + 1]
        m0[0] += self.q_only
        return m0, m1

    def call(self, c: float) -> float:
        above = self.l > c
        return float(np.sum(self.p[above] - c * self.q[above]))

    def cap(self, tail: float) -> float:
        # the smallest atom value c with E(L − c)₊ ≤ tail (E(L − c)₊ decreases in c)
        lo, hi = 0, self.l.size - 1
        if hi < 0:
            return 1.0
        while lo < hi:
            mid = (lo + hi) // 2
            if self.call(float(self.l[mid])) <= tail:
                hi = mid
            else:
                lo = mid + 1
        return float(self.l[lo])

    def fine(self, p: float) -> float:
        cq = np.cumsum(self.q)
        over = np.nonzero(cq > p)[0]
        return float(self.l[over[0]]) if over.size else math.inf


def _spread(Y: _Ratio, delta: float, K: int) -> tuple[np.ndarray, float]:
    """The law of Ỹ ≥cx Y∧(KΔ) on {0, …, K}Δ (each cell's mass split between its two ends
    keeping its mean; Y ≥ KΔ capped at KΔ), and the P-only mass E(Y − KΔ)₊ + P(Y = ∞)."""
    y = np.arange(K + 1) * delta
    m0, m1 = Y.cells(delta, K)
    pm = np.zeros(K + 1)
    pm[:-1] += (y[1:] * m0[:-1] - m1[:-1]) / delta
    pm[1:] += (m1[:-1] - y[:-1] * m0[:-1]) / delta
    pm[-1] += m0[-1]  # Y ≥ KΔ: capped at KΔ
    return np.maximum(pm, 0.0), Y.call(float(y[-1])) + Y.p_only


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """x·y without BLAS (a level-1 BLAS call contends for threads on a loaded machine: 40 ms
    for 3·10⁴ points measured, against 0.05 ms for this)."""
    return float(np.multiply(x, y).sum())


def _conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The linear convolution a∗b (length a.size + b.size − 1), clipped at 0.

    a = a₀ + a₁ with a₀ the stretch holding every entry ≥ _SPLIT·max a: a₀∗b₀ is computed on
    its own support (exactly 0 outside), the rest as a₁∗b + a₀∗b₁, whose round-off is
    ~u·_SPLIT·|a||b|: far-tail entries keep a relative precision instead of drowning in the
    round-off of the bulk.
    """
    def split(x: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        big = np.nonzero(x >= _SPLIT * x.max())[0]
        lo, hi = int(big[0]), int(big[-1]) + 1
        x1 = x.copy()
        x1[lo:hi] = 0.0
        return lo, x[lo:hi], x1

    m = a.size + b.size - 1
    n = sfft.next_fast_len(m, real=True)
    same = b is a
    la, a0, a1 = split(a)
    lb, b0, b1 = (la, a0, a1) if same else split(b)
    out = np.zeros(m)
    m0 = a0.size + b0.size - 1
    n0 = sfft.next_fast_len(m0, real=True)
    fa0 = sfft.rfft(a0, n0)
    out[la + lb:la + lb + m0] = sfft.irfft(fa0 * (fa0 if same else sfft.rfft(b0, n0)), n0)[:m0]
    if same:
        rest = a1.copy()
        rest[la:la + a0.size] += 2.0 * a0
        out += sfft.irfft(sfft.rfft(a1, n) * sfft.rfft(rest, n), n)[:m]
    else:
        a0f = np.zeros(a.size)
        a0f[la:la + a0.size] = a0
        out += sfft.irfft(sfft.rfft(a1, n) * sfft.rfft(b, n) + sfft.rfft(a0f, n) * sfft.rfft(b1, n), n)[:m]
    np.maximum(out, 0.0, out=out)
    return out


#: Entries below this fraction of a partial sum's maximum at the two ends of its support are
#: cut off (booked, see :func:`_power`): the transforms follow the support, not the window.
_TRIM = 1e-30


@dataclass(frozen=True)
class _Law:
    """A partial sum of n summands: masses ``arr`` at lattice points off, off+1, …; and the
    outcomes that left the window: ``over`` (the sum reached the window top N: so will the
    total) and ``cut`` (trimmed away, not over), each as (probability, E[partial sum; event])."""

    off: int
    arr: np.ndarray
    over: tuple[float, float]
    cut: tuple[float, float]
    n: int


def _trim(off: int, c: np.ndarray, N: int) -> tuple[int, np.ndarray, tuple[float, float], tuple[float, float]]:
    """Cut ``c`` (at off, off+1, …) to the window and to its support above _TRIM·max."""
    j0 = off
    over0 = over1 = 0.0
    if off + c.size > N:
        k = max(N - off, 0)
        tail = c[k:]
        over0, over1 = float(tail.sum()), _dot(np.arange(off + k, off + c.size, dtype=np.float64), tail)
        c = c[:k]
    if c.size == 0 or not c.max() > 0:
        return off, np.zeros(1), (over0, over1), (float(c.sum()) if c.size else 0.0, 0.0)
    big = np.nonzero(c >= _TRIM * c.max())[0]
    lo, hi = int(big[0]), int(big[-1]) + 1
    cut0 = float(c[:lo].sum() + c[hi:].sum())
    idx = np.arange(c.size, dtype=np.float64) + j0
    cut1 = _dot(idx[:lo], c[:lo]) + _dot(idx[hi:], c[hi:])
    return off + lo, c[lo:hi].copy(), (over0, over1), (cut0, cut1)


def _power(pm: np.ndarray, t: int, N: int) -> _Law:
    """The law of the t-fold sum of ``pm`` (on 0, 1, …, within the window {0, …, N−1}).

    A partial sum that reaches N makes the total reach N ("over"); one trimmed at either end of
    its support ("cut") leaves the total unknown. Both are booked exactly, as probabilities and
    first moments of the total (the summands not yet added contribute their mean), so that the
    callers can turn them into outcomes that keep the pairs valid.
    """
    mean1 = _dot(np.arange(pm.size, dtype=np.float64), pm)

    def combine(A: _Law, B: _Law) -> _Law:
        c = _conv(A.arr, B.arr)
        off, arr, (co0, co1), (cc0, cc1) = _trim(A.off + B.off, c, N)
        pa, pb = float(A.arr.sum()), float(B.arr.sum())
        ea = _dot(np.arange(A.off, A.off + A.arr.size, dtype=np.float64), A.arr)
        eb = _dot(np.arange(B.off, B.off + B.arr.size, dtype=np.float64), B.arr)
        ma, mb = A.n * mean1, B.n * mean1
        (ao0, ao1), (bo0, bo1) = A.over, B.over
        (ac0, ac1), (bc0, bc1) = A.cut, B.cut
        # over: A over (any B); or B over and A not over; or the in-window sum reaches N
        o0 = ao0 + (1.0 - ao0) * bo0 + co0
        o1 = ao1 + ao0 * mb + (1.0 - ao0) * bo1 + (ma - ao1) * bo0 + co1
        # cut and never over: A cut and B not over; A in the window and B cut; or trimmed now
        k0 = ac0 * (1.0 - bo0) + pa * bc0 + cc0
        k1 = ac1 * (1.0 - bo0) + ac0 * (mb - bo1) + ea * bc0 + pa * bc1 + cc1
        return _Law(off, arr, (o0, o1), (k0, k1), A.n + B.n)

    off, arr, over, cut = _trim(0, pm.astype(np.float64), N)
    base = _Law(off, arr, over, cut, 1)
    res: _Law | None = None
    while t:
        if t & 1:
            res = base if res is None else combine(res, base)
        t >>= 1
        if t:
            base = combine(base, base)
    assert res is not None
    return res


def _atoms(s: np.ndarray, q: np.ndarray, t: int, p_only: float, q_only: float, remove: bool) -> AtomProfile:
    """The pair with Q-masses q at S = s (dP/dQ = s/t) and the two one-sided outcomes, as the
    engine's finite pair (remove: (P, Q); add: the reversed pair (Q, P))."""
    # S = 0 (dP/dQ = 0): an outcome only Q charges. It adds nothing to the remove profile but
    # is an infinite loss of the reversed pair (add): booked as Q-only, never dropped (on a
    # lattice too coarse for P(S = 0) to be negligible, dropping it put the add profile below
    # the truth; regression: tests/test_allocation_pld.py::test_two_steps_against_mpmath)
    q_only = float(q_only) + float(q[(s <= 0) & (q > 0)].sum())
    keep = (q > 0) & (s > 0)
    s, q = s[keep], q[keep]
    p = q * (s / t)
    z = np.log(s / t)
    if remove:
        return _FastAtoms(z, p, float(p_only), -z, q, float(q_only))
    return _FastAtoms(-z, q, float(q_only), z, p, float(p_only))


class _FastAtoms(AtomProfile):
    """An :class:`AtomProfile` whose profile is evaluated from sorted cumulative sums (many
    atoms): δ(ε) = Σ_{z>ε} p_z − e^ε Σ_{z>ε} p_z e^{−z} + inf_mass."""

    @cached_property
    def _sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sorted losses and the P- and Q-mass above each of them (tail sums)."""
        order = np.argsort(self.values)
        v = self.values[order]
        p = self.masses[order]
        cp = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
        cq = np.concatenate([np.cumsum((p * np.exp(-v))[::-1])[::-1], [0.0]])
        return v, cp, cq

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=np.float64)
        v, cp, cq = self._sums
        i = np.searchsorted(v, eps.reshape(-1), side="right")
        with np.errstate(over="ignore", invalid="ignore"):
            d = np.maximum(cp[i] - np.exp(eps.reshape(-1)) * cq[i], 0.0) + self.inf_mass
            neg = eps.reshape(-1) < 0
            d = np.where(neg, np.maximum(d, -np.expm1(eps.reshape(-1))), d)
        with np.errstate(divide="ignore"):
            return np.asarray(np.log(d), dtype=np.float64).reshape(eps.shape)

    def dual(self) -> Profile:
        return _FastAtoms(self.dual_values, self.dual_masses, self.dual_inf,
                          self.values, self.masses, self.inf_mass)

    def symmetric(self) -> bool:
        return False


def _within(low: AtomProfile, up: AtomProfile) -> AtomProfile:
    """``low`` with its losses kept inside the range of ``up``'s (the engine places the
    optimistic composition in the window of the pessimistic one): losses above it are
    lowered to its top, atoms below its bottom are dropped. Both only lower the profile of a
    composition for the same P-masses (δ = E_P(1 − e^{ε−Z})₊ is increasing in each Z), which is
    how the engine reads an optimistic discretisation (its own rounds losses down)."""
    v = np.minimum(low.values, float(up.values.max()))
    keep = v >= float(up.values.min())
    v, p = v[keep], low.masses[keep]
    return _FastAtoms(v, p, low.inf_mass, -v, p * np.exp(-v), 0.0)


@dataclass(frozen=True, eq=False)
class AllocationProfile(Profile):
    """One direction of 1-of-t Gaussian allocation: the upper (dominating) finite pair, which
    is what the engine sees of it (support, grid, pessimistic discretisation), and the lower
    (dominated) one, built on first use, for its optimistic discretisation (the engine treats
    it as a :class:`~renyi.accounting.pld._many.Bucket`: ``bracketed``)."""

    upper: AtomProfile
    build_lower: Callable[[], AtomProfile]
    #: a cheaper lower pair (a coarser lattice: as valid, slightly less tight) for one epoch on
    #: its own, whose ends are read off the pairs directly (None: the same as ``lower``)
    build_single_lower: Callable[[], AtomProfile] | None = None
    #: a pair on a coarser lattice (one epoch on its own, see :func:`single_epoch_pairs`): the
    #: same profile on the full lattice, asked for when this one's bracket is too wide
    refine: Callable[[], AllocationProfile] | None = None

    bracketed = True
    #: the lower pair has no +∞ loss (its construction books none; only the upper pair's tail)
    lower_inf_mass = 0.0

    @cached_property
    def lower(self) -> AtomProfile:
        return _within(self.build_lower(), self.upper)

    @cached_property
    def single_lower(self) -> AtomProfile:
        """The lower pair used when this is the only item (see ``build_single_lower``)."""
        if self.build_single_lower is None:
            return self.lower
        return _within(self.build_single_lower(), self.upper)

    @property
    def inf_mass(self) -> float:  # type: ignore[override]
        return self.upper.inf_mass

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        return self.upper.log_delta(eps)

    def dual(self) -> Profile:
        return self.upper.dual()

    def sup_loss(self) -> float:
        return self.upper.sup_loss()

    def atoms(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self.upper.atoms()

    def symmetric(self) -> bool:
        return False


def _lattice(W: float, spacing: float, max_points: int) -> tuple[float, int]:
    """(Δ, N): N points of spacing Δ = W/N ≤ ``spacing`` covering [0, W) (N ≤ max_points)."""
    n = min(max(1024, int(math.ceil(W / spacing))), max_points)
    return W / n, n


def _as_ratio(law: float | _Ratio) -> _Ratio:
    return law if isinstance(law, _Ratio) else _LogNormal(float(law))


def allocation_profiles(mu: float | _Ratio, t: int, max_points: int = MAX_POINTS
                        ) -> tuple[AllocationProfile, AllocationProfile]:
    """(remove, add) profiles of 1-of-t allocation of a base pair: the Gaussian pair N(μ, 1)
    vs N(0, 1) for a number ``mu``, else the pair whose likelihood ratio has the law ``mu``
    (a :class:`_Ratio`).

    Args:
        mu: Δ/σ > 0, or the law of the base's likelihood ratio.
        t: the number of steps ≥ 2.
        max_points: the lattice size cap (a coarser lattice is as valid, only less tight).
    """
    return _allocation_profiles(_as_ratio(mu), int(t), int(max_points))


#: Largest number of distinct sums of t atoms for which the law of S is enumerated exactly.
EXACT_OUTCOMES = 200_000


def _exact_profiles(Y: _AtomRatio, t: int) -> tuple[AllocationProfile, AllocationProfile] | None:
    """The exact pair of 1-of-t allocation of a base with one or two finite atoms of L (and
    possibly L = 0): S = Σ_j n_j l_j with (n_j) multinomial, no lattice. None where the count
    vectors are too many."""
    ls = list(Y.l)
    qs = list(Y.q)
    if Y.q_only > 0:
        ls.append(0.0)
        qs.append(Y.q_only)
    if len(ls) > 3 or math.comb(t + len(ls) - 1, len(ls) - 1) > EXACT_OUTCOMES:
        return None
    lq = np.log(np.asarray(qs))
    if len(ls) == 1:
        n = np.array([[t]])
    elif len(ls) == 2:
        a = np.arange(t + 1)
        n = np.stack([a, t - a], axis=1)
    else:
        i, j = np.triu_indices(t + 1)
        n = np.stack([i, j - i, t - j], axis=1)
    n = n.astype(np.float64)
    logw = special.gammaln(t + 1.0) - special.gammaln(n + 1.0).sum(axis=1) + n @ lq
    svals = n @ np.asarray(ls)
    w = np.exp(logw)
    up_r = _atoms(svals, w, t, Y.p_only, 0.0, True)
    up_a = _atoms(svals, w, t, Y.p_only, 0.0, False)
    return (AllocationProfile(up_r, functools.partial(_same, up_r)),
            AllocationProfile(up_a, functools.partial(_same, up_a)))


def _same(pair: AtomProfile) -> AtomProfile:
    return pair


# a few entries only: a pair on 2²⁰ lattice points holds tens of MB
@lru_cache(maxsize=8)
def _allocation_profiles(Y: _Ratio, t: int, max_points: int) -> tuple[AllocationProfile, AllocationProfile]:
    if isinstance(Y, _AtomRatio):
        exact = _exact_profiles(Y, t)
        if exact is not None:
            return exact
    sd = Y.sd if Y.sd > 0 else 1.0  # L ≡ 1 (P = Q): any spacing is exact
    bulk = t + 20.0 * sd * math.sqrt(t)
    # remove: the right tail up to the cap c with E(Y − c)₊ ≤ TAIL (TAIL_COARSE where the cap
    # at TAIL would leave the lattice too coarse)
    c = Y.cap(TAIL)
    if (c + bulk) / (_REL_SPACING * sd) > 4.0 * max_points:
        c = Y.cap(TAIL_COARSE)
    delta, N = _lattice(c + bulk, _REL_SPACING * sd, max_points)
    K = min(N - 1, int(math.ceil(c / delta)))
    pm, top = _spread(Y, delta, K)
    S = _power(pm, t, N)
    s = (S.off + np.arange(S.arr.size)) * delta
    # every outcome that left the window: split into a P-only and a Q-only outcome
    esc0, esc1 = S.over[0] + S.cut[0], S.over[1] + S.cut[1]
    up = _atoms(s, S.arr, t, esc1 * delta / t + top, esc0, True)
    remove = AllocationProfile(up, functools.partial(_lower_pair, Y, delta, K, N, t, True),
                               _coarse_lower(Y, delta, K, N, t, True))
    # add: only S < t·e^{−ε} ≤ t matters. Y∧W, and sums that reach the top W of the window are
    # moved down to W (a smaller S: a larger add profile); fine enough that P(S̃ = 0) =
    # P(Ỹ = 0)^t (an infinite loss) is below e^{−40} (apart from a genuine Q(Y = 0))
    p0 = math.exp(-40.0 / t)
    fine = Y.fine(min(p0, 0.5))
    spacing = min(_REL_SPACING * sd, fine)
    W = bulk
    if W / spacing > max_points:
        # the spacing that keeps P(S̃ = 0) negligible does not fit: narrow the window instead
        # (any top W is valid; W ≥ t keeps the profile exact at every ε ≥ 0, where only
        # S < t matters; a coarser spacing would book P(Ỹ = 0)^t at an infinite loss: at
        # σ = 0.5, t = 2 that was 8e-8, an infinite ε at δ = 1e-10)
        W = max(max_points * spacing, 1.5 * t)
    delta, N = _lattice(W, spacing, max_points)
    pm, _ = _spread(Y, delta, N)
    S = _power(pm, t, N)
    s = np.append((S.off + np.arange(S.arr.size)) * delta, N * delta)
    q = np.append(S.arr, S.over[0])
    # the cut outcomes: split (their Q-mass where P has none; P's deficit where Q has none)
    p_only = max(0.0, 1.0 - _dot(q, s) / t)
    up = _atoms(s, q, t, p_only, S.cut[0], False)
    add = AllocationProfile(up, functools.partial(_lower_pair, Y, delta, N, N, t, False),
                            _coarse_lower(Y, delta, N, N, t, False))
    return remove, add


def _needs_points(Y: _Ratio, t: int, max_points: int = MAX_POINTS) -> int:
    """The larger of the two lattices :func:`_allocation_profiles` builds (remove, add)."""
    sd = Y.sd if Y.sd > 0 else 1.0
    bulk = t + 20.0 * sd * math.sqrt(t)
    c = Y.cap(TAIL)
    if (c + bulk) / (_REL_SPACING * sd) > 4.0 * max_points:
        c = Y.cap(TAIL_COARSE)
    n_rem = _lattice(c + bulk, _REL_SPACING * sd, max_points)[1]
    spacing = min(_REL_SPACING * sd, Y.fine(min(math.exp(-40.0 / t), 0.5)))
    W = bulk if bulk / spacing <= max_points else max(max_points * spacing, 1.5 * t)
    return max(n_rem, _lattice(W, spacing, max_points)[1])


#: One epoch on its own is first answered on lattices of at most :data:`FIRST_POINTS`, then
#: :data:`SINGLE_POINTS` points; wherever the bracket at the asked δ (or ε) is wider than
#: :data:`SINGLE_WIDTH` (relative) the next lattice is built, the full one last. Every lattice is
#: as valid (certified on any lattice), only the width changes. Measured at σ = 0.5 (2²⁰ points
#: otherwise): t = 1000 builds 7× faster on 2¹⁸ points (0.5 against 3.6 CPU s) with brackets of
#: 0.002 % (1e-5) and 0.03 % (1e-10) against 0.000 % and 0.031 %; on 2¹⁴ points (another 6–15×
#: faster: 0.02–0.05 CPU s for t = 10–1000) δ = 1e-5 and 1e-10 stay below 0.031 % for
#: t = 2–1000, δ = 1e-3 at t ≥ 100 (0.65 %, 10 %) moves on to 2¹⁸ points. Compositions (whose
#: grid brackets need the full lattice: five epochs 1.2–3 % on 2¹⁸ points, 0.7 % on 2²⁰) always
#: use the full one.
FIRST_POINTS = 2**14
SINGLE_POINTS = 2**18
SINGLE_WIDTH = 1e-3


def _staged(law: _Ratio, t: int, sizes: tuple[int, ...]) -> tuple[AllocationProfile, AllocationProfile]:
    """The pairs on ``sizes[0]`` points, each refining to the pairs on ``sizes[1:]`` (the last:
    no refinement)."""
    r, a = _allocation_profiles(law, t, sizes[0])
    if len(sizes) == 1:
        return r, a
    import dataclasses

    rest = sizes[1:]
    return (dataclasses.replace(r, refine=lambda: _staged(law, t, rest)[0]),
            dataclasses.replace(a, refine=lambda: _staged(law, t, rest)[1]))


def single_epoch_pairs(mech: object) -> tuple[AllocationProfile, AllocationProfile] | None:
    """Coarser pairs (with ``refine``: :data:`FIRST_POINTS`, :data:`SINGLE_POINTS`, then
    :data:`MAX_POINTS`) for one epoch of 1-of-t allocation asked on its own, or None where the
    full lattices are no larger than :data:`SINGLE_POINTS` (or the law is enumerated exactly)."""
    from renyi.sampling.allocation import RandomAllocation

    if not isinstance(mech, RandomAllocation) or mech.steps < 2 or mech.k != 1:
        return None
    law = base_ratio(mech.mechanism)
    if law is None:
        return None
    needs = _needs_points(law, mech.steps)
    if needs <= SINGLE_POINTS or (isinstance(law, _AtomRatio) and _exact_profiles(law, mech.steps) is not None):
        return None
    sizes = tuple(sorted({n for n in (FIRST_POINTS, SINGLE_POINTS) if n < needs}))
    return _staged(law, mech.steps, sizes + (MAX_POINTS,))


#: One epoch on its own reads its lower end off a lower pair on a lattice this many times
#: coarser, once the lattice has at least :data:`_COARSE_FROM` points: measured at σ = 0.5–0.8,
#: t = 10–1000, δ = 1e-3…1e-10, the one-epoch brackets are unchanged to 1e-5 relative and the
#: build 2–2.3× faster (σ = 0.5, t = 1000: 8.0 → 3.8 CPU s); compositions keep the fine one
#: (their grid brackets widened: σ = 0.5, five epochs, 0.70 % → 1.18 %).
_COARSE = 4
_COARSE_FROM = 2**18


def _coarse_lower(Y: _Ratio, delta: float, K: int, N: int, t: int, remove: bool
                  ) -> Callable[[], AtomProfile] | None:
    if N < _COARSE_FROM:
        return None
    return functools.partial(_lower_pair, Y, delta * _COARSE, max(K // _COARSE, 1), N // _COARSE, t, remove)


def lattice_epochs(items: list[tuple[object, int]]) -> int:
    """How many of the (already :func:`expand`-ed) items' runs are computed on a lattice (1-of-t
    allocation, t > 1, a base with a known pair): each carries the unbounded round-off of its lattice laws."""
    from renyi.sampling.allocation import RandomAllocation

    n = 0
    for m, c in items:
        if isinstance(m, _Block):
            n += c if m.steps > 1 else 0
        elif isinstance(m, RandomAllocation) and m.steps > 1 and m.k < m.steps and base_ratio(m.mechanism) is not None:
            n += c
    return n


def roundoff_floor(items: list[tuple[object, int]]) -> float:
    """:data:`ROUNDOFF_FLOOR` × :func:`lattice_epochs` of the expanded ``items`` (0: no lattice)."""
    return ROUNDOFF_FLOOR * lattice_epochs(expand(items))


def _lower_pair(Y: _Ratio, delta: float, K: int, N: int, t: int, remove: bool, k_of: int = 1) -> AtomProfile:
    """The lower pair: the law of a post-processing of the t outputs under P and under Q.

    Each Y_i is reduced to its cell index k_i = min(⌊Y_i/Δ⌋, K) (cells [jΔ, (j+1)Δ), the last
    one [KΔ, ∞)) and the output is their sum k = Σ k_i. That is a function of the outputs, so
    the pair of its laws is dominated by the true pair (post-processing), on any lattice, however
    coarse. Under Q the k_i are independent with P(k_i = j) = P(Y ∈ cell j); under P (one
    coordinate, by symmetry the first, is shifted) the first one is size-biased,
    P(k_1 = j) = E[Y; Y ∈ cell j]. So Q̂ = q^{∗t} and P̂ = q′ ∗ q^{∗(t−1)}, and the loss at k is
    log P̂(k)/Q̂(k). Sums that leave the window {0, …, N−1} are dropped: removing an outcome
    from both laws removes a non-negative term of every profile, before and after composition,
    so the result stays a lower bound in both neighbouring directions.

    (The earlier construction contracted each Y_i onto the lattice in convex order; no lattice
    variable with mean 1 is ≤cx Y once Δ > 1 — its call function is linear on [0, Δ] and starts
    at 1 with slope above −1 — so on coarse lattices (σ = 0.5: Δ ≈ 17 on 2²⁰ points) that
    "lower" pair was above the truth.)

    As a guard against round-off in the far tails, the loss at k is kept inside the range the
    statistic allows: S ≥ kΔ always, and S < (k + t)Δ while no summand can be in the last cell
    (k < K); each direction is clamped only on the side that lowers its profile.
    """
    m0, m1 = Y.cells(delta, K)
    q1 = np.maximum(m0, 0.0)  # P_Q(k_i = j)
    p1 = np.maximum(m1, 0.0)  # P_P(k_1 = j), size-biased (P-only outcomes dropped)
    R = _power(q1, t - k_of, N)
    if k_of == 1:
        qa, pa, off = _conv(R.arr, q1), _conv(R.arr, p1), R.off
    else:
        # k of t: under P (a uniformly random k-subset of the steps holds the example) k of the
        # cell indices are size-biased, the others not: P̂ = q′^{∗k} ∗ q^{∗(t−k)}, Q̂ = q^{∗t}
        Pk, Qk = _power(p1, k_of, N), _power(q1, k_of, N)
        qa, pa = _conv(R.arr, Qk.arr), _conv(R.arr, Pk.arr)
        off = R.off + min(Pk.off, Qk.off)
        qa = np.concatenate([np.zeros(Qk.off - min(Pk.off, Qk.off)), qa])
        pa = np.concatenate([np.zeros(Pk.off - min(Pk.off, Qk.off)), pa])
        size = max(qa.size, pa.size)
        qa, pa = np.pad(qa, (0, size - qa.size)), np.pad(pa, (0, size - pa.size))
    n = max(N - off, 1)
    qa, pa = qa[:n], pa[:n]
    k = off + np.arange(qa.size, dtype=np.float64)
    keep = (qa > 0) & (pa > 0)
    k, qa, pa = k[keep], qa[keep], pa[keep]
    z = np.log(pa) - np.log(qa)
    with np.errstate(divide="ignore"):
        # S ≥ kΔ: the ratio S/t of one of t is at least kΔ/t (no such bound for k of t)
        z_lo = np.log(k * delta / t) if k_of == 1 else np.full(k.shape, -np.inf)
    # S < (k + t)Δ below the last cell; the ratio of k of t, e_k(L)/C(t, k), is at most
    # (S/t)^k (Maclaurin's inequality), so is its conditional mean given the statistic
    z_hi = np.where(k < K, k_of * np.log((k + t) * delta / t), np.inf)
    if remove:
        # (z, P̂): a smaller loss at the same P-mass lowers the profile
        z = np.minimum(z, z_hi)
        return _FastAtoms(z, pa, 0.0, -z, pa * np.exp(-z), 0.0)
    # reversed pair (Q̂, P̂): its loss −z, lowered by raising z
    z = np.maximum(z, z_lo)
    return _FastAtoms(-z, qa, 0.0, z, qa * np.exp(z), 0.0)


# ----------------------------------------------------------------------------------------------
# mechanisms → pairs
# ----------------------------------------------------------------------------------------------
def _zero_pair() -> AtomProfile:
    """P = Q: the pair dominated by every pair (its profile is (1 − e^ε)₊)."""
    one = np.array([0.0])
    return AtomProfile(one, np.array([1.0]), 0.0, one, np.array([1.0]), 0.0)


@dataclass(frozen=True)
class _Block:
    """1-of-``steps`` allocation of the Gaussian pair with shift μ (or, with ``base`` set, of
    that base mechanism's pair; μ is then unused), as an item of the engine:
    one block of a k-of-t allocation (``full`` False: accounted by its upper pair only, the
    lower pair is P = Q; see :func:`expand`), or (``full`` True) the pair itself on at most
    ``max_points`` lattice points (a coarser lattice: as valid, a wider bracket)."""

    mu: float
    steps: int
    full: bool = False
    max_points: int = MAX_POINTS
    base: Any = None
    #: with lower_k > 0: this block also carries the lower pair of the whole k-of-t epoch
    #: (k = lower_k, t = lower_t; see :func:`expand`)
    lower_k: int = 0
    lower_t: int = 0

    @property
    def guarantee(self) -> Any:
        """The RDP curve of the same pair (what the other routes compare against)."""
        from renyi.mechanisms import Gaussian
        from renyi.sampling.allocation import RandomAllocation

        base = self.base if self.base is not None else Gaussian(1.0 / self.mu)
        return RandomAllocation(base, steps=self.steps).guarantee


def gaussian_mu(mechanism: object) -> float | None:
    """Δ/σ of a Gaussian base (mechanism or GDP value), else None."""
    from renyi.mechanisms import Gaussian

    if isinstance(mechanism, Gaussian):
        return float(mechanism.sensitivity / mechanism.sigma)
    return None


def _ratio_uncached(mechanism: object) -> _Ratio | None:
    try:
        law = _ratio_of(mechanism)
    except (OverflowError, FloatingPointError):
        return None  # a loss too large for the lattices (μ² or ε₀ beyond ~700): no pair
    if law is None or not math.isfinite(law.sd):
        return None
    return law


def _ratio_of(mechanism: object) -> _Ratio | None:
    mu = gaussian_mu(mechanism)
    if mu is not None:
        return _LogNormal(mu)
    from renyi.core.errors import ConversionError
    from renyi.divergences.plrv import LaplacePrivacyLoss

    from renyi.accounting.pld._profiles import LossProfile, _base_pair

    if getattr(mechanism, "neighbouring", "add_remove") != "add_remove":
        return None
    try:
        pair = _base_pair(mechanism, "add_remove")
    except (ConversionError, TypeError, ValueError):
        return None
    if type(pair) is AtomProfile:
        return _AtomRatio(pair, mechanism)
    if isinstance(pair, LossProfile) and type(pair.loss) is LaplacePrivacyLoss:
        return _LaplaceRatio(float(pair.loss.t))
    return None


@lru_cache(maxsize=64)
def _ratio_cached(mechanism: object) -> _Ratio | None:
    return _ratio_uncached(mechanism)


def base_ratio(mechanism: object) -> _Ratio | None:
    """The law of the likelihood ratio of the base's dominating add/remove pair (remove
    direction (P, Q), its reverse for the add direction), or None where renyi knows no such
    pair as finite atoms, the Laplace pair or the Gaussian pair.

    The pair is the one the PLD engine composes the base with (``_profiles._base_pair``):
    it dominates the base in both neighbouring directions, which is what makes each step a
    post-processing of it (see :class:`_Ratio`)."""
    try:
        return _ratio_cached(mechanism)
    except TypeError:  # unhashable
        return _ratio_uncached(mechanism)


def expand(items: list[tuple[object, int]]) -> list[tuple[object, int]]:
    """The items with every k-of-t allocation (1 < k < t, base with a known pair) replaced by
    its blocks: k independent 1-of-b allocations with b ∈ {⌊t/k⌋, ⌈t/k⌉} summing to t. k-of-t
    is a post-processing of the blocks' worst-case pair (a uniformly random permutation of the
    steps maps one-per-block onto a uniform k-subset), so the blocks' composition is an upper
    bound. It is not a lower bound: the lower pair of the epoch is instead a post-processing of
    its own worst-case pair (the sum of the t steps' lattice cell indices, whose law under P has k
    size-biased summands; :func:`_lower_pair`), carried by one block per epoch, the other blocks
    carrying P = Q."""
    from renyi.sampling.allocation import RandomAllocation, allocation_blocks

    out: list[tuple[object, int]] = []
    for m, c in items:
        if isinstance(m, RandomAllocation) and 1 < m.k < m.steps and base_ratio(m.mechanism) is not None:
            mu = gaussian_mu(m.mechanism)
            sizes: dict[int, int] = {}
            for b in allocation_blocks(m.steps, m.k):
                sizes[b] = sizes.get(b, 0) + 1
            mu0, base = (mu, None) if mu is not None else (0.0, m.mechanism)
            first = True
            for b, n in sizes.items():
                if first and b > 1:
                    # one block per epoch carries the epoch's lower pair (P = Q for the others)
                    out.append((_Block(mu0, b, base=base, lower_k=m.k, lower_t=m.steps), c))
                    n -= 1
                    first = False
                if n:
                    out.append((_Block(mu0, b, base=base), c * n))
        elif (isinstance(m, RandomAllocation) and m.k == m.steps > 1 and gaussian_mu(m.mechanism) is None
              and _base_supported(m.mechanism)):
            # every example in every step: the k-fold composition of the base (exact)
            out.append((m.mechanism, c * m.k))
        else:
            out.append((m, c))
    return out


def _base_supported(mechanism: object) -> bool:
    from renyi.accounting.pld._profiles import supports

    return bool(supports(mechanism))


@lru_cache(maxsize=8)
def _block_pairs(mu: float, steps: int, base: Any = None) -> tuple[Profile, Profile]:
    if steps == 1:
        from renyi.accounting.pld._profiles import _base_pair, _gaussian

        g = _gaussian(mu) if base is None else _base_pair(base, "add_remove")
        up_r, up_a = g, g.dual()
    else:
        law = _LogNormal(mu) if base is None else base_ratio(base)
        assert law is not None
        r, a = _allocation_profiles(law, steps, MAX_POINTS)
        up_r, up_a = r.upper, a.upper
    zero = _zero_pair()
    return UpperOnly(up_r, zero, up_r.inf_mass), UpperOnly(up_a, zero, up_a.inf_mass)


#: Lattice size of a k-of-t epoch's lower pair (its window holds k capped summands).
K_LOWER_POINTS = 2**18


@lru_cache(maxsize=8)
def _k_of_t_pairs(law: _Ratio, steps: int, k: int, t: int) -> tuple[Profile, Profile]:
    """A block of 1-of-``steps`` (upper pairs) carrying the lower pair of k-of-t allocation."""
    r, a = _allocation_profiles(law, steps, MAX_POINTS)
    sd = law.sd if law.sd > 0 else 1.0
    c = law.cap(TAIL)
    delta, N = _lattice(t + 20.0 * sd * math.sqrt(t) + k * c, _REL_SPACING * sd, K_LOWER_POINTS)
    K = min(N - 1, int(math.ceil(c / delta)))
    return (AllocationProfile(r.upper, functools.partial(_lower_pair, law, delta, K, N, t, True, k)),
            AllocationProfile(a.upper, functools.partial(_lower_pair, law, delta, K, N, t, False, k)))


@dataclass(frozen=True, eq=False)
class UpperOnly(Bucket):
    """A step accounted by a dominating pair for the upper bound and P = Q for the lower."""

    def atoms(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self.upper.atoms() if self.upper.atoms() is not None else (np.array([0.0]), np.array([1.0]))

    def symmetric(self) -> bool:
        return False


def pairs(mech: object) -> tuple[Profile, Profile]:
    """(remove, add) pairs of a :class:`~renyi.sampling.allocation.RandomAllocation` (or a
    block of one, see :func:`expand`).

    Raises:
        ConversionError: a base without a known dominating pair (:func:`base_ratio`: the RDP
            route's unamplified bound applies), the k-fold composition (k = t > 1) of a
            non-Gaussian base, or k-of-t with 1 < k < t not expanded into blocks.
    """
    from renyi.core.errors import ConversionError
    from renyi.sampling.allocation import RandomAllocation

    from renyi.accounting.pld._profiles import _base_pair, _gaussian

    if isinstance(mech, _Block):
        law = _LogNormal(mech.mu) if mech.base is None else base_ratio(mech.base)
        if mech.full and mech.steps > 1 and law is not None:
            return allocation_profiles(law, mech.steps, mech.max_points)
        if mech.lower_k > 0 and mech.steps > 1 and law is not None:
            return _k_of_t_pairs(law, mech.steps, mech.lower_k, mech.lower_t)
        return _block_pairs(mech.mu, mech.steps, mech.base)
    assert isinstance(mech, RandomAllocation)
    t, k = mech.steps, mech.k
    mu = gaussian_mu(mech.mechanism)
    if t == 1 or k == t:
        # every example in each of its k steps: the k-fold composition of the base
        if k == 1:
            base = _base_pair(mech.mechanism, "add_remove")
            return base, base.dual()
        if mu is not None:
            g = _gaussian(mu * math.sqrt(k))
            return g, g.dual()
        raise ConversionError("no PLD pair is implemented for the k-fold composition inside "
                              f"RandomAllocation of {type(mech.mechanism).__name__}")
    law = base_ratio(mech.mechanism)
    if law is None:
        raise ConversionError(f"no PLD pair is implemented for random allocation of {type(mech.mechanism).__name__} "
                              "(no dominating pair of its base is known); the RDP route bounds it without amplification")
    if k != 1:
        raise ConversionError("k-of-t allocation is accounted through its blocks (expand)")
    return allocation_profiles(law, t)


def supported(mech: object) -> bool | None:
    """Whether :func:`pairs` (after :func:`expand`) covers ``mech``, without building anything
    (None: not an allocation)."""
    from renyi.sampling.allocation import RandomAllocation

    if isinstance(mech, _Block):
        return True
    if not isinstance(mech, RandomAllocation):
        return None
    if mech.steps == 1:
        from renyi.accounting.pld._profiles import supports as base_supports

        return base_supports(mech.mechanism)
    if mech.k == mech.steps:  # the k-fold composition (a non-Gaussian base: through expand)
        return gaussian_mu(mech.mechanism) is not None or _base_supported(mech.mechanism)
    return base_ratio(mech.mechanism) is not None


def _pairs_or_none(mech: object) -> tuple[Profile, Profile] | None:
    from renyi.sampling.allocation import RandomAllocation

    return pairs(mech) if isinstance(mech, (RandomAllocation, _Block)) else None


_profiles.EXTENSIONS.append((_pairs_or_none, supported))


def shift_item(mu: float, steps: int, max_points: int = 2**16) -> object:
    """An engine item for 1-of-``steps`` allocation of the Gaussian pair with shift ``mu`` on a
    coarse lattice (for a lower bound that needs no tight bracket)."""
    return _Block(float(mu), int(steps), True, int(max_points))
