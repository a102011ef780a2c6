"""Compositions of many distinct mechanisms: exact merging before the PLD engine composes.

**Gaussian merging.** The privacy loss of the Gaussian pair (N(0, 1), N(μ, 1)) is N(μ²/2, μ²)
under P, and the loss of a composition is the sum of the independent losses; a sum of
independent N(μᵢ²/2, μᵢ²) is N(μ²/2, μ²) with μ² = Σ cᵢμᵢ², the loss of the pair with shift
μ. Two pairs whose privacy losses have the same law under P have the same privacy profile,
so the composition of the Gaussian steps *is* the μ-GDP pair (Dong, Roth & Su 2022, Cor. 3.3),
whatever the mechanism or the neighbouring relation they came from: the steps are replaced
by that one pair before anything is discretised. This is exact, and it removes a
discretisation and a transform per distinct Gaussian. (The pair is symmetric, so it serves
both neighbouring directions.)

**Bundles of small steps.** The engine composes by multiplying one length-N spectrum per
distinct step (N the window, often 10⁵ points); a step whose discretisation has a few dozen
points (a Laplace count with a small ε, a randomized response) would pay a full transform for
almost nothing. Such steps are gathered into a :class:`Bundle` (each repeated ``count``
times), which enters the composition as *one* step of count 1. Its tilted masses are computed
when the tilt λ is known, by a balanced tree of pairwise convolutions of the members' tilted
masses (direct sums for short vectors, FFT products for long ones), folded (wrapped) modulo N
once a partial result would be longer than N — exactly what the engine's own length-N
transform does to every step, so the composition it returns is unchanged.

Proof that the answers stay certified. Let x_j be the computed tilted masses of member j
(relative round-off ≤ r_j against the exact ones, as for every step of the engine) and X the
exact (folded) convolution of the x_j. Every node of the tree carries a computed vector x̂ and
a bound E with ‖x̂ − X_node‖₂ ≤ E. Leaves are exact (E = 0). For a node made from a and b
(exact parts A, B with ‖A‖₁ ≤ S_a, ‖B‖₁ ≤ S_b)
    x̂_a ⊛ x̂_b − A ⊛ B = e_a ⊛ B + A ⊛ e_b + e_a ⊛ e_b,
so the propagated error is at most E_a S_b + S_a E_b + E_a E_b √min(len_a, len_b) (Young's
inequality ‖u ⊛ v‖₂ ≤ ‖u‖₂‖v‖₁, which holds for circular convolution modulo N as well, and
‖v‖₁ ≤ √len‖v‖₂). To that the rounding of the product itself is added: for a direct sum of m
non-negative products each entry is off by at most γ_{m+1}(a ⊛ b)_i (Higham 2002, §3.1), so
by γ_{m+1}‖a‖₂‖b‖₁ in ℓ₂; for an FFT product of length L, with ‖F̂a − Fa‖₂ ≤ η√L‖a‖₂,
η = c·u·log₂L (Higham 2002, Thm 24.2; c = 20 as in the engine),
    ‖ŷ − a ⊛ b‖₂ ≤ (d_a(‖b‖₁ + d_b) + ‖a‖₁d_b + (η + 5u)‖P̂‖₂)/√L,  d = η√L‖·‖₂,
P̂ the computed product of the spectra (Parseval: the inverse transform divides ℓ₂ errors by
√L; ‖Fa‖∞ ≤ ‖a‖₁). Negative entries are clipped to 0, which never moves a value away from a
non-negative exact one. The root (x̂, E) enters the engine's transform: the DFT of x̂ differs
from that of X by at most ‖x̂ − X‖₁ ≤ √len·E at every frequency, which is added to the
engine's bound on each spectrum coefficient; from there the engine's own analysis applies unchanged
(upper bound: errors added; lower bound: subtracted), with X, whose relative distance to the
exact bundle is covered by the product of the (1 + r_j), in place of the step's masses.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast

import numpy as np
from renyi.core import _npfft as sfft

from renyi.divergences.plrv import GaussianPrivacyLoss
from renyi.accounting.pld._grid import Discrete, discretise, discretise_lower, support_range
from renyi.accounting.pld._profiles import LossProfile, PoissonProfile, Profile

__all__ = ["h_floor", "POINT_BUDGET", "MANY_STEPS", "merge_gaussians", "Bundle", "Step", "bundle", "MIN_BUNDLE", "Bucket", "bucket", "discretise_step",
           "discretise_lower_step"]

_U = 2.0**-53
_C_FFT = 20.0  # the safety factor over Higham's constant that the engine's _fft uses too
#: Fewest small steps for which a bundle is formed (below, every step keeps its own transform
#: and the answers are exactly those of the plain engine).
MIN_BUNDLE = 32
#: A step joins a bundle when count × (its grid points) is at most this (it would otherwise
#: pay a window-length transform for so few points).
BUNDLE_POINTS = 4096
_DIRECT = 48  # shorter operand of at most this many points: direct convolution

_GAUSS: dict[float, LossProfile] = {}


def _gaussian_profile(rho: float) -> LossProfile:
    """The Gaussian pair with ρ = μ²/2, one object per ρ (the engine caches discretisations
    per profile object, so that repeated questions reuse them)."""
    hit = _GAUSS.get(rho)
    if hit is None:
        if len(_GAUSS) > 256:
            _GAUSS.clear()
        hit = _GAUSS[rho] = LossProfile(GaussianPrivacyLoss(rho))
    return hit


def _gaussian_rho(p: Profile) -> float | None:
    if isinstance(p, LossProfile) and isinstance(p.loss, GaussianPrivacyLoss):
        return float(p.loss.rho)
    return None


def merge_gaussians(profiles: list[tuple[Profile, int]]) -> list[tuple[Profile, int]]:
    """The steps with every Gaussian pair merged into one (exact; see the module docstring).

    Args:
        profiles: (privacy profile, count ≥ 1) pairs of one neighbouring direction.

    Returns:
        The same composition: the non-Gaussian steps unchanged and in order, and, in place of
        the first Gaussian step, one Gaussian pair with ρ = Σ cᵢρᵢ (count 1). A list with at
        most one distinct Gaussian pair is returned unchanged (its count is already one power
        of one transform).
    """
    rhos = [(i, r, c) for i, (p, c) in enumerate(profiles) if (r := _gaussian_rho(p)) is not None]
    if len({r for _, r, _ in rhos}) <= 1:
        return profiles
    # fsum: the sum rounded once (a relative change of ~1e-16 in ρ, inside the engine's
    # final rounding allowance)
    rho = math.fsum(c * r for _, r, c in rhos)
    first = rhos[0][0]
    gauss = {i for i, _, _ in rhos}
    out: list[tuple[Profile, int]] = []
    for i, pc in enumerate(profiles):
        if i == first:
            out.append((_gaussian_profile(rho), 1))
        elif i not in gauss:
            out.append(pc)
    return out


# ----------------------------------------------------------------------------------------------
# bundles of small steps
# ----------------------------------------------------------------------------------------------
def _gamma(m: float) -> float:
    return m * _U / (1.0 - m * _U)


def _l2(x: np.ndarray) -> float:
    """‖x‖₂, rounded up by a relative γ_len."""
    return math.sqrt(float(np.dot(x, x))) * (1 + _gamma(x.size + 2))


def _fft_conv(a: np.ndarray, b: np.ndarray, size: int) -> tuple[np.ndarray, float]:
    """Circular convolution of length ``size`` (a, b ≥ 0, each at most ``size`` long) and an
    ℓ₂ bound on its rounding error (see the module docstring)."""
    fa = sfft.rfft(a, size)
    fb = sfft.rfft(b, size)
    prod = fa * fb
    y = sfft.irfft(prod, size)
    eta = _C_FFT * _U * math.log2(max(size, 2))
    root = math.sqrt(size)
    da = eta * root * _l2(a)
    db = eta * root * _l2(b)
    l1a, l1b = float(a.sum()) * (1 + _gamma(a.size)), float(b.sum()) * (1 + _gamma(b.size))
    pv = prod.view(np.float64)
    n_prod = math.sqrt(2.0 * float(np.dot(pv, pv)))  # the full (Hermitian) spectrum's ℓ₂ norm
    err = (da * (l1b + db) + l1a * db + (eta + 5 * _U) * n_prod) / root
    return np.asarray(y, dtype=np.float64), err


def _combine(a: tuple[np.ndarray, float], b: tuple[np.ndarray, float], n: int) -> tuple[np.ndarray, float]:
    """One tree node: the convolution (folded modulo n when it would be longer) and its bound."""
    xa, ea = a
    xb, eb = b
    la, lb = xa.size, xb.size
    # ≥ ‖A‖₁ of the exact part (‖e‖₁ ≤ √len·‖e‖₂)
    sa = float(xa.sum()) * (1 + _gamma(la)) + math.sqrt(la) * ea
    sb = float(xb.sum()) * (1 + _gamma(lb)) + math.sqrt(lb) * eb
    prop = ea * sb + sa * eb + ea * eb * math.sqrt(min(la, lb))
    if la + lb - 1 <= n and min(la, lb) <= _DIRECT:
        y = np.convolve(xa, xb)
        m = min(la, lb)
        # γ_{m+1}·‖a ⊛ b‖₂ ≤ γ_{m+1}·min(‖a‖₂‖b‖₁, ‖a‖₁‖b‖₂) (Young), norms rounded up
        rnd = _gamma(m + 1) * min(_l2(xa) * float(xb.sum()), float(xa.sum()) * _l2(xb)) * (1 + _gamma(la + lb))
    elif la + lb - 1 <= n:
        size = int(sfft.next_fast_len(la + lb - 1, real=True))
        y, rnd = _fft_conv(xa, xb, size)
        y = y[:la + lb - 1]
    else:
        # both are at most n long: their circular convolution modulo n is the fold of the
        # linear one (the engine's transform folds every step the same way)
        y, rnd = _fft_conv(xa, xb, n)
    # 1 + 1e-9: the rounding of the bound's own arithmetic
    return np.maximum(y, 0.0), (prop + rnd) * (1.0 + 1e-9)


def _batched_tree(mat: np.ndarray, n: int) -> list[tuple[np.ndarray, float]]:
    """The tree over the rows of ``mat`` (leaves padded with zeros to one length), one level
    at a time with batched transforms: the same products and bounds as :func:`_combine` (FFT
    branch), row by row. Returns the root (as a one-element list)."""
    err = np.zeros(mat.shape[0])
    while mat.shape[0] > 1:
        if mat.shape[0] % 2:
            # an odd row count: pair the last row with the unit mass at 0 (an exact leaf;
            # convolving with it changes nothing but round-off, which is bounded like any
            # other product), so that every level stays one batch and one root comes out
            unit = np.zeros((1, mat.shape[1]))
            unit[0, 0] = 1.0
            mat, err = np.vstack([mat, unit]), np.append(err, 0.0)
        a, b = mat[0::2], mat[1::2]
        ea, eb = err[0::2], err[1::2]
        size_l = mat.shape[1]
        if 2 * size_l - 1 <= n:
            size, out = int(sfft.next_fast_len(2 * size_l - 1, real=True)), 2 * size_l - 1
        else:  # rows at most n long: circular modulo n (the fold of the linear product)
            size, out = n, n
        fa = sfft.rfft(a, size, axis=1)
        fb = sfft.rfft(b, size, axis=1)
        prod = fa * fb
        y = sfft.irfft(prod, size, axis=1)[:, :out]
        g = 1 + _gamma(size_l + 2)
        l2a = np.sqrt(np.einsum("ij,ij->i", a, a)) * g
        l2b = np.sqrt(np.einsum("ij,ij->i", b, b)) * g
        l1a = a.sum(axis=1) * g
        l1b = b.sum(axis=1) * g
        eta = _C_FFT * _U * math.log2(max(size, 2))
        root = math.sqrt(size)
        da, db = eta * root * l2a, eta * root * l2b
        pv = prod.view(np.float64)
        n_prod = np.sqrt(2.0 * np.einsum("ij,ij->i", pv, pv)) * (1 + _gamma(pv.shape[1] + 2))
        rnd = (da * (l1b + db) + l1a * db + (eta + 5 * _U) * n_prod) / root
        sq = math.sqrt(size_l)
        prop = ea * (l1b + sq * eb) + (l1a + sq * ea) * eb + ea * eb * sq
        err = (prop + rnd) * (1.0 + 1e-9)
        mat = np.maximum(y, 0.0)
    return [(mat[0], float(err[0]))]


def _fold_leaf(x: np.ndarray, n: int) -> tuple[np.ndarray, float]:
    if x.size <= n:
        return x, 0.0
    pad = (-x.size) % n
    folds = (x.size + pad) // n
    y = np.concatenate([x, np.zeros(pad)]).reshape(-1, n).sum(axis=0)
    # each folded entry is a sum of `folds` non-negative terms: off by γ·(the entry); in ℓ₂ at
    # most γ·‖x‖₁
    return np.asarray(y, dtype=np.float64), _gamma(folds) * float(x.sum()) * (1 + 1e-9)


#: Members are processed in chunks of about this many grid points (memory: a few arrays of
#: this size at a time, whatever the number of members).
_CHUNK = 2**16


@dataclass(frozen=True, eq=False)
class Bundle:
    """Many small discretised steps (each repeated ``count`` times), composed as one step.

    Presents what the engine asks of a step (``h``, ``start``, ``inf_mass``, ``log_mgf``,
    ``log_mgf_many``, ``cumulants``, ``moments``, ``span``) from its members, exactly; its
    tilted masses are built by :meth:`tilted` (see the module docstring for the proof).
    ``members`` are the members' log masses (shared with the discretisation cache, not
    copied); every pass over them goes chunk by chunk, so memory stays bounded.
    """

    h: float
    members: tuple[np.ndarray, ...]  # member j's log masses, at grid indices starts[j] + i
    starts: np.ndarray
    log_fin: float  # Σ log(1 − inf_mass_j): log P(every member's loss is finite)

    @cached_property
    def start(self) -> int:
        return int(self.starts.sum())

    @cached_property
    def _sizes(self) -> np.ndarray:
        return np.array([x.size for x in self.members], dtype=np.int64)

    @cached_property
    def span(self) -> int:
        """Grid points of the composed support: Σ (points_j − 1) + 1."""
        return int(self._sizes.sum() - self._sizes.size) + 1

    @property
    def inf_mass(self) -> float:
        return -math.expm1(self.log_fin)

    @cached_property
    def _bounds(self) -> list[tuple[int, int]]:
        """Member ranges [j0, j1) of about _CHUNK points each."""
        out, j0, acc = [], 0, 0
        for j, size in enumerate(self._sizes.tolist()):
            if acc and acc + size > _CHUNK:
                out.append((j0, j))
                j0, acc = j, 0
            acc += size
        out.append((j0, len(self.members)))
        return out

    def _chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """(log masses, values, member offsets, member of each point) chunk by chunk."""
        for j0, j1 in self._bounds:
            sizes = self._sizes[j0:j1]
            lm = np.concatenate(self.members[j0:j1])
            offs = np.concatenate([[0], np.cumsum(sizes)])
            seg = np.repeat(np.arange(j1 - j0), sizes)
            v = (self.starts[j0:j1][seg] + (np.arange(lm.size) - offs[:-1][seg])) * self.h
            yield lm, v, offs, seg

    @staticmethod
    def _lse(w: np.ndarray, offs: np.ndarray, seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per member: log Σ e^w, and e^{w − max} (every member has a finite entry)."""
        top = np.maximum.reduceat(w, offs[:-1])
        e = np.exp(w - top[seg])
        return top + np.log(np.add.reduceat(e, offs[:-1])), e

    def log_mgf(self, lam: float) -> float:
        """Σ_j log E[e^{λZ_j}; Z_j < ∞] (exact sum over the members)."""
        return float(self.log_mgf_many(np.array([lam]))[0])

    def log_mgf_many(self, lams: np.ndarray) -> np.ndarray:
        lams = np.asarray(lams, dtype=np.float64)
        flat = lams.reshape(-1)
        out = np.zeros(flat.size)
        for lm, v, offs, seg in self._chunks():
            for i, lam in enumerate(flat.tolist()):
                with np.errstate(invalid="ignore", over="ignore"):
                    out[i] += float(self._lse(lm + lam * v, offs, seg)[0].sum())
        return out.reshape(lams.shape)

    def cumulants(self, lam: float) -> tuple[float, float, float]:
        """(K(λ), K′(λ), K″(λ)) of the bundle: sums of the members' (independent steps)."""
        k = mean = var = 0.0
        for lm, v, offs, seg in self._chunks():
            with np.errstate(invalid="ignore", over="ignore"):
                w = lm + lam * v
            kj, e = self._lse(w, offs, seg)
            tot = np.add.reduceat(e, offs[:-1])
            m = np.add.reduceat(e * v, offs[:-1]) / tot
            k += float(kj.sum())
            mean += float(m.sum())
            var += float((np.add.reduceat(e * (v - m[seg]) ** 2, offs[:-1]) / tot).sum())
        return k, mean, var

    def moments(self, lam: float) -> tuple[float, float]:
        _, m, v = self.cumulants(lam)
        return m, v

    def tilted(self, lam: float, n: int) -> tuple[np.ndarray, float, float, float]:
        """The bundle's tilted masses, folded modulo ``n``: (x̂, log-normaliser K, relative
        round-off r, ℓ₂ bound E on x̂ − X) — X the exact convolution of the members' computed
        tilted masses, whose relative distance to the exact bundle is at most r.

        Chunk by chunk: each chunk's members are tilted and reduced by batched trees, and the
        chunk roots go on a binary-counter stack (two roots of the same level are combined),
        so that at most one chunk and O(log members) partial results are held at a time.
        """
        stack: list[tuple[int, tuple[np.ndarray, float]]] = []
        k_all = 0.0
        rel_max = 0.0
        for lm, v, offs, seg in self._chunks():
            with np.errstate(invalid="ignore", over="ignore"):
                w = lm + lam * v
            k, _ = self._lse(w, offs, seg)
            x = w - k[seg]
            t = np.exp(x)
            fin = x[np.isfinite(x)]
            # as the engine's _tilted, per member; the largest sizes over members bound each r_j
            rel = 8 * _U * (1.0 + float(np.max(np.abs(k))) + (float(np.max(np.abs(fin))) if fin.size else 0.0)
                            + abs(lam) * float(np.max(np.abs(v))))
            rel_max = max(rel_max, rel)
            k_all += float(k.sum())
            for node in _leaf_trees_impl(t, offs, n):
                level = 0
                while stack and stack[-1][0] == level:
                    node = _combine(stack.pop()[1], node, n)
                    level += 1
                stack.append((level, node))
        node = stack.pop()[1]
        while stack:
            node = _combine(stack.pop()[1], node, n)
        rel_all = math.expm1(len(self.members) * math.log1p(rel_max))
        return node[0], k_all, rel_all, node[1]


#: A step as the engine composes it: one discretised pair, or a bundle of many.
Step = Discrete | Bundle


def _leaf_trees_impl(t: np.ndarray, offsets: np.ndarray, n: int) -> list[tuple[np.ndarray, float]]:
    """Trees over the members, batched per class of lengths (padded to the next power of
    two, so that padding at most doubles the work); members longer than n are folded."""
    sizes = np.diff(offsets)
    nodes: list[tuple[np.ndarray, float]] = []
    long_ = np.nonzero(sizes > n)[0]
    for j in long_.tolist():
        nodes.append(_fold_leaf(t[offsets[j]:offsets[j + 1]], n))
    short = np.nonzero(sizes <= n)[0]
    if not short.size:
        return nodes
    cls = np.ceil(np.log2(np.maximum(sizes[short], 1))).astype(np.int64)
    for c in np.unique(cls).tolist():
        sel = short[cls == c]
        sz = sizes[sel]
        width = min(int(sz.max()), n)
        mat = np.zeros((sel.size, width))
        rows = np.repeat(np.arange(sel.size), sz)
        cols = np.arange(int(sz.sum())) - np.repeat(np.cumsum(sz) - sz, sz)
        mat[rows, cols] = t[np.repeat(offsets[sel], sz) + cols]
        nodes.extend(_batched_tree(mat, n))
    return nodes


def _bundleable(d: Discrete, c: int) -> bool:
    return c * d.log_mass.size <= BUNDLE_POINTS and d.inf_mass < 1.0 and bool(np.isfinite(d.log_mass).any())


def bundle(ds: Sequence[tuple[Step, int]]) -> list[tuple[Step, int]]:
    """The steps, with the small ones gathered into one :class:`Bundle` (count 1) when there
    are at least :data:`MIN_BUNDLE` of them; otherwise unchanged."""
    small = [i for i, (d, c) in enumerate(ds) if isinstance(d, Discrete) and _bundleable(d, c)]
    if len(small) < MIN_BUNDLE:
        return list(ds)
    keep = set(small)
    lms: list[np.ndarray] = []
    starts: list[int] = []
    log_fin = 0.0
    for i in small:
        d, c = ds[i]
        assert isinstance(d, Discrete)
        lms.extend([d.log_mass] * c)
        starts.extend([d.start] * c)
        log_fin += c * math.log1p(-d.inf_mass)
    b = Bundle(ds[0][0].h, tuple(lms), np.array(starts, dtype=np.int64), log_fin)
    out: list[tuple[Step, int]] = [(d, c) for i, (d, c) in enumerate(ds) if i not in keep]
    out.append((b, 1))
    return out


# ----------------------------------------------------------------------------------------------
# buckets of near-identical subsampled Gaussians (huge compositions only)
# ----------------------------------------------------------------------------------------------
#: Fewest distinct subsampled Gaussians (one rate, one direction) before they are bucketed.
BUCKET_MIN = 64
#: At most about this many buckets per (rate, direction): the cost cap of a huge composition
#: (a bucket's discretisation spans the subsampled loss's long upper tail, so the buckets
#: would otherwise take most of :data:`POINT_BUDGET`; on 10⁴ mixed mechanisms 32 buckets
#: instead of 128 move the upper end by 0.007 % and narrow the bracket from 7 % to 2.3 %).
MAX_BUCKETS = 32
#: Buckets span at most this relative range of μ = Δ/σ, unless the cap needs wider ones.
BUCKET_RATIO = 1e-3


@dataclass(frozen=True, eq=False)
class Bucket(Profile):
    """Subsampled Gaussian steps with μ in [μ_lo, μ_hi], accounted as runs of the μ_hi pair
    (for the upper bound) and of the μ_lo pair (for the lower bound); see :func:`bucket`.

    To the engine it is the μ_hi profile (support ranges, grid); only the optimistic
    discretisation is taken from ``lower`` (:func:`discretise_step`).
    """

    upper: Profile
    lower: Profile
    inf_mass: float = 0.0

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        return self.upper.log_delta(eps)

    def dual(self) -> Profile:
        return self.upper.dual()

    def sup_loss(self) -> float:
        return self.upper.sup_loss()


def discretise_step(p: Profile, h: float, lo: int, hi: int, lower: bool) -> tuple[Discrete, Discrete | None]:
    """:func:`renyi.pld._grid.discretise`, with a :class:`Bucket`'s two pairs."""
    if isinstance(p, Bucket) or getattr(p, "bracketed", False):
        # (random allocation's profiles carry their two pairs the same way)
        b: Any = p
        up, _ = discretise(b.upper, h, lo, hi, False)
        return up, (discretise(b.lower, h, lo, hi, True)[1] if lower else None)
    return discretise(p, h, lo, hi, lower)


def discretise_lower_step(p: Profile, h: float, lo: int, hi: int, upper: Discrete) -> Discrete:
    """:func:`renyi.pld._grid.discretise_lower` (``upper``: the pessimistic discretisation of
    ``p``); a :class:`Bucket`'s optimistic one is that of its μ_lo pair, built with that pair's
    own pessimistic one."""
    if isinstance(p, Bucket) or getattr(p, "bracketed", False):
        low = discretise(cast(Any, p).lower, h, lo, hi, True)[1]
        assert low is not None
        return low
    return discretise_lower(p, h, lo, hi, upper)


def _subsampled_gaussian(p: Profile) -> tuple[tuple[float, bool], float] | None:
    """((rate, remove), ρ) of a Poisson-subsampled Gaussian pair, else None."""
    if (isinstance(p, PoissonProfile) and isinstance(p.base, LossProfile) and not p.base.reversed_
            and isinstance(p.base.loss, GaussianPrivacyLoss)):
        return (float(p.q), bool(p.remove)), float(p.base.loss.rho)
    return None


def bucket(profiles: list[tuple[Profile, int]]) -> list[tuple[Profile, int]]:
    """The steps, with many distinct Poisson-subsampled Gaussians of one rate gathered into
    buckets of nearly equal μ (only where at least :data:`BUCKET_MIN` of them are distinct;
    otherwise the list is returned unchanged).

    A bucket of steps with μ ∈ [μ_lo, μ_hi] (counts summing to c) is accounted as c runs of
    the μ_hi pair for the upper bound and c runs of the μ_lo pair for the lower bound. Valid:
    for μ ≤ μ′ the map K(x) = (μ/μ′)x + N(0, 1 − (μ/μ′)²) sends N(0, 1) to itself and
    N(μ′, 1) to N(μ, 1), and, being linear on distributions, sends both subsampled pairs of μ′
    (remove: ((1−q)Q₀ + qP₀, Q₀); add: (Q₀, (1−q)Q₀ + qP₀)) to those of μ. So every step's
    pair is a post-processing of the μ_hi pair and the μ_lo pair one of every step's pair, and
    composition keeps both orders (the kernels act coordinatewise); a post-processed pair's
    privacy profile is nowhere larger (data processing for the hockey-stick divergence). The
    engine's pessimistic discretisation of the μ_hi pair therefore bounds the composition from
    above, its optimistic one of the μ_lo pair from below. The price is a wider bracket: μ
    moves by at most the bucket's ratio (:data:`BUCKET_RATIO`, wider only when more than about
    :data:`MAX_BUCKETS` buckets would be needed), and the bracket returned shows it.
    """
    groups: dict[tuple[float, bool], list[tuple[float, int]]] = {}
    for i, (p, _) in enumerate(profiles):
        fam = _subsampled_gaussian(p)
        if fam is not None:
            groups.setdefault(fam[0], []).append((fam[1], i))
    replace: dict[int, tuple[Profile, int] | None] = {}
    for (q, remove), members in groups.items():
        if len({rho for rho, _ in members}) < BUCKET_MIN:
            continue
        members.sort()
        # a ratio r on μ is (1 + r)² on ρ = μ²/2
        span = 0.5 * math.log(members[-1][0] / members[0][0])
        limit = 2.0 * math.log1p(max(BUCKET_RATIO, math.expm1(span / MAX_BUCKETS)))
        runs: list[list[tuple[float, int]]] = []
        for rho, i in members:
            if runs and math.log(rho / runs[-1][0][0]) <= limit:
                runs[-1].append((rho, i))
            else:
                runs.append([(rho, i)])
        for run in runs:
            lo_rho, hi_rho = run[0][0], run[-1][0]
            count = sum(profiles[i][1] for _, i in run)
            b = profiles[run[-1][1]][0] if lo_rho == hi_rho else Bucket(
                PoissonProfile(_gaussian_profile(hi_rho), q, remove),
                PoissonProfile(_gaussian_profile(lo_rho), q, remove))
            first = min(i for _, i in run)
            for _, i in run:
                replace[i] = (b, count) if i == first else None
    if not replace:
        return profiles
    out: list[tuple[Profile, int]] = []
    for i, pc in enumerate(profiles):
        if i not in replace:
            out.append(pc)
        elif (new := replace[i]) is not None:
            out.append(new)
    return out


# ----------------------------------------------------------------------------------------------
# the cost cap of a huge composition
# ----------------------------------------------------------------------------------------------
#: Fewest distinct steps (after merging and bucketing) for which the cost cap applies.
MANY_STEPS = 256
#: The cost cap: the discretisations of all distinct steps of one question hold together at
#: most about this many grid points. Memory and time grow with it: at 2²⁰, 10⁴ distinct
#: mechanisms (benchmarks/bench_pld.py, table 5) take about 12 s with a peak RSS of 180 MB,
#: imports included.
POINT_BUDGET = 2**20


def h_floor(profiles: Sequence[tuple[Profile, int]], log_tail: float) -> float:
    """The narrowest grid a composition of many distinct steps may use (0 for fewer than
    :data:`MANY_STEPS` of them: no cap).

    Every distinct step is discretised on its own support, so the points of one grid sum the
    steps' spans over h: capping that sum at :data:`POINT_BUDGET` caps the cost. A coarser
    grid is as valid as a finer one (both discretisations are certified at any h); it only
    widens the bracket, which the answer shows. This is the one place where a huge composition
    trades the bracket target for a bounded cost.
    """
    if len(profiles) < MANY_STEPS:
        return 0.0
    fine = 1e-6
    total = 0.0
    for p, _ in profiles:
        lo, hi = support_range(p, fine, log_tail)
        total += (hi - lo) * fine
    return total / POINT_BUDGET
