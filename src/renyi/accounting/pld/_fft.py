"""Composition of discretised PLDs in the Fourier domain, with every error bounded.

The composed loss S = Z₁ + … + Z_T is computed *exponentially tilted*: each step's masses
m_j are replaced by t_j = m_j e^{λz_j − K(λ)} (K the log-MGF), which commutes with
convolution, so the tilted composed law τ is the T-fold convolution of the tilted steps and
the true masses are τ_B e^{K_T(λ) − λz_B}. Choosing λ near the order that an RDP bound would
use centres τ on the region that decides δ(ε), so that an absolute error in τ becomes a
*relative* error in δ — this is what keeps tiny δ (1e-10 … 1e-30) accurate, where an untilted
FFT drowns in round-off (dp-accounting's one-shot FFT at T = 10⁶, δ = 1e-10).

T-fold self-composition is one power of the spectrum. Every error is bounded and counted
against privacy:

* wrap-around: the DFT of length N returns a_r = Σ_k τ_{r+kN} ≥ τ_r, so it only adds mass
  (upper bound); the mass outside the window is bounded by Chernoff's inequality with the
  exact log-MGF of the discretised steps and subtracted for the lower bound; the true mass
  above the window is added to δ through the same bound;
* floating point: the forward and inverse FFT errors are bounded by Higham (2002), Thm 24.2
  (‖ŷ − y‖₂ ≤ c·u·log₂N·‖y‖₂; c = 20 here, a safety factor over the theorem's constant), the
  error of the power z^T by T·max(|z|, |ẑ|)^{T−1}·|z − ẑ| plus the rounding of exp(T log z),
  and these bounds (an ℓ∞ bound E on τ) are added to every τ_B for the upper bound and
  subtracted for the lower bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from renyi.core import _npfft as sfft

from renyi.accounting.pld._grid import Discrete
from renyi.accounting.pld._many import Bundle

__all__ = ["Composed", "compose"]

_U = 2.0**-53
_C_FFT = 20.0


def _norm(x: np.ndarray) -> float:
    """‖x‖₂ (real or complex), without the slow complex dot."""
    # einsum, not BLAS dot: no thread start-up on a shared machine
    v = x.view(np.float64) if np.iscomplexobj(x) else x
    return math.sqrt(float(np.einsum("i,i->", v, v)))


def _fold(t: np.ndarray, n: int) -> np.ndarray:
    if t.size <= n:
        out = np.zeros(n)
        out[: t.size] = t
        return out
    pad = (-t.size) % n
    out = np.concatenate([t, np.zeros(pad)]).reshape(-1, n).sum(axis=0)
    return np.asarray(out, dtype=np.float64)


def _discounted_tail_sums(x: np.ndarray, rate: float) -> np.ndarray:
    """y_A = Σ_{B>A} x_B e^{−rate·(B−A)} for x ≥ 0 and rate > 0 (a first-order linear filter).

    Computed in blocks [b₀, b₁): inside a block the sum is a suffix sum of x_B e^{−rate·(B−b₀)}
    rescaled by e^{rate·(A−b₀)}, with blocks short enough (rate·length ≤ 250) that no factor
    overflows and an underflowed term is below 1e-199 after rescaling (the upper bound's masses
    are ≥ 4u, the lower bound may only lose mass); the blocks are chained by a carry. Every term
    is non-negative, so the relative round-off is a few ulps per term, as for the recursion —
    without importing scipy.signal (a second of import time for one filter).
    """
    n = x.size
    out = np.zeros(n)
    if n <= 1:
        return out
    if rate <= 0.0:  # no discount (an untilted law, λ = 0): plain strict suffix sums
        out[:-1] = np.cumsum(x[::-1])[::-1][1:]
        return out
    length = int(max(1, min(n, math.floor(250.0 / rate))))
    carry = 0.0  # Σ_{B ≥ b₁} x_B e^{−rate·(B − b₁)} for the current block's end b₁
    for end in range(n, 0, -length):
        b0 = max(0, end - length)
        seg = x[b0:end]
        k = np.arange(seg.size, dtype=np.float64)
        with np.errstate(over="ignore", under="ignore"):
            w = seg * np.exp(-rate * k)
            suffix = np.cumsum(w[::-1])[::-1]
            strict = np.concatenate([suffix[1:], [0.0]])
            out[b0:end] = strict * np.exp(rate * k) + carry * np.exp(-rate * (seg.size - k))
            carry = float(suffix[0]) + (carry * math.exp(-rate * seg.size) if seg.size * rate < 700 else 0.0)
    return out


def _lse(w: np.ndarray) -> float:
    """log Σ e^w (−∞ entries allowed), without scipy's array-API overhead."""
    m = float(np.max(w)) if w.size else -math.inf
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.sum(np.exp(w - m))))


def _tilted(d: Discrete, lam: float) -> tuple[np.ndarray, float, float]:
    """Tilted masses, log-normaliser, and a bound on the relative round-off of each mass."""
    with np.errstate(invalid="ignore", over="ignore"):
        w = d.log_mass + lam * d.values
    k = _lse(w)
    x = w - k
    fin = x[np.isfinite(x)]
    # exp(x) and the sums forming x: a few ulps, times |x| for the argument's own rounding
    rel = 8 * _U * (1.0 + abs(k) + (float(np.max(np.abs(fin))) if fin.size else 0.0) + abs(lam) * float(
        np.max(np.abs(d.values[[0, -1]]))))
    return np.exp(x), k, rel


@dataclass(frozen=True, eq=False)
class Composed:
    """The composed loss on a window of grid points, tilted by λ, with its error bounds.

    The masses of the composition at z_A = A·h are ≈ τ_A e^{K − λz_A}, for A in
    [start, start + N); ``tau`` is already the upper (or lower) bound on the tilted masses.
    """

    h: float
    lam: float
    log_k: float
    start: int
    tau: np.ndarray
    inf_mass: float
    above: float  # bound on the tilted mass at or above the window's end (upper only)
    error: float  # the ℓ∞ error bound that was applied to tau
    alias: float  # bound on the tilted mass outside the window

    @property
    def values(self) -> np.ndarray:
        return (self.start + np.arange(self.tau.size)) * self.h

    def _sums(self) -> tuple[np.ndarray, np.ndarray]:
        """S0_A = Σ_{B>A} τ_B e^{−λ(z_B−z_A)}, S1_A = Σ_{B>A} τ_B e^{−(λ+1)(z_B−z_A)}."""
        h, lam = self.h, self.lam
        out = []
        for rate in (lam, lam + 1.0):
            out.append(_discounted_tail_sums(self.tau, rate * h))
        s0, s1 = out
        if self.above > 0:
            # mass at or above the window end, counted as if it sat there with loss +∞
            dist = (self.start + self.tau.size - 1 - (self.start + np.arange(self.tau.size))) * h
            s0 = s0 + self.above * np.exp(-lam * dist)
        return s0, s1

    def log_delta_at(self, eps: np.ndarray) -> np.ndarray:
        """log δ(ε) of the composition for ε inside the window (vectorized)."""
        eps = np.asarray(eps, dtype=np.float64)
        s0, s1 = self._sums()
        a = np.clip(np.floor(eps / self.h).astype(np.int64) - self.start, 0, self.tau.size - 1)
        # ε ∈ [z_a, z_{a+1}): sums over B > a hold, except when ε equals z_a exactly (same value)
        za = (self.start + a) * self.h
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            inner = s0[a] - np.exp(eps - za) * s1[a]
            out: np.ndarray = self.log_k - self.lam * za + np.log(np.maximum(inner, 0.0))
        if self.inf_mass > 0:
            out = np.logaddexp(out, math.log(self.inf_mass))
        return np.asarray(out, dtype=np.float64)

    def epsilon_for(self, log_target: float, upper: bool) -> tuple[float, str]:
        """ε with δ(ε) = e^{log_target} on this composition.

        Returns (ε, status) where status is "ok", "below" (the answer lies below the window)
        or "above" (above it). For ``upper`` the result is rounded up, otherwise down.
        """
        target = math.exp(log_target)
        if self.inf_mass >= target:
            return math.inf, "inf"
        s0, s1 = self._sums()
        z = self.values
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ld = self.log_k - self.lam * z + np.log(np.maximum(s0 - s1, 0.0))
            if self.inf_mass > 0:
                ld = np.logaddexp(ld, math.log(self.inf_mass))
        below = np.nonzero(ld <= log_target)[0]
        if below.size == 0:
            return math.inf, "above"
        j = int(below[0])
        if j == 0:
            return float(z[0]), "below"
        a = j - 1  # δ(z_a) > target ≥ δ(z_{a+1}): solve on (z_a, z_{a+1}]
        rem = target - self.inf_mass
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            scaled = rem * math.exp(-(self.log_k - self.lam * z[a]))
            ratio = (s0[a] - scaled) / s1[a]
        if not (ratio > 0 and math.isfinite(ratio)):
            # no interpolation: the end of (z_a, z_j] on the side of the bound
            e = float(z[j]) if upper else float(z[a])
        else:
            e = float(z[a] + math.log(ratio))
            e = min(max(e, float(z[a])), float(z[j]))
        if upper:
            e = e + 8 * _U * (abs(e) + 1.0)
        else:
            e = e - 8 * _U * (abs(e) + 1.0)
        return e, "ok"


def _chernoff(ks: dict[float, float], k0: float, z: float, upper_tail: bool) -> float:
    """min over s of exp(K(λ±s) − K(λ) ∓ s·z): a bound on Pr_τ[S ≥ z] (or Pr_τ[S < z])."""
    best = 0.0
    for s, kv in ks.items():
        if (s > 0) != upper_tail:
            continue
        val = kv - k0 - s * z
        best = min(best, val)
    return math.exp(best)


def compose(comps: Sequence[tuple[Discrete | Bundle, int]], lam: float, start: int, n: int,
            upper: bool, s_grid: np.ndarray, whole: bool = False) -> Composed:
    """Compose ``comps`` ((discretised step, count) pairs on one grid) tilted by ``lam``.

    The window is the grid indices [start, start + n). ``s_grid``: tilts (positive and
    negative offsets from λ) at which Chernoff bounds for the window's tails are tried.

    The spectra are multiplied in the log domain: Σ c·log|f̂| and Σ c·arg f̂ are accumulated
    (a power of a spectrum is one multiply-add, whatever the count) and exponentiated once.
    Error per coefficient, with |f̂ − f| ≤ e (the forward FFT bound): for complex a, b with
    |a − b| ≤ e, |a^c − b^c| ≤ (|b| + e)^c − |b|^c (binomial expansion), and for products
    |ΠA − ΠB| ≤ Π(|B| + D) − Π|B|; so |Π f^c − Π f̂^c| ≤ e^{S₂} − e^{S₁} with
    S₁ = Σ c·log|f̂|, S₂ = Σ c·log(|f̂| + e). The rounding of the logs, the sums and the final
    exp/cos/sin adds E (an absolute error of the log, bounded below) and is covered by
    e^{S₁}·(e^{S₂ − S₁ + 3E + 8u} − 1).
    """
    h = comps[0][0].h
    nf = n // 2 + 1
    s1 = np.zeros(nf)  # Σ c·log|f̂|
    s2 = np.zeros(nf)  # Σ c·log(|f̂| + e)
    ang = np.zeros(nf)  # Σ c·arg f̂
    log_k = 0.0
    offset = 0
    p_fin = 0.0  # log Π (1 − inf_mass)^count
    lg = math.log2(max(n, 2))
    eta = _C_FFT * _U * lg
    ks: dict[float, float] = {float(s): 0.0 for s in s_grid}
    log_rel = 0.0  # log of the factor bounding the relative round-off of all tilted masses
    total_c = 0.0  # Σ c
    pos_c = 0.0  # Σ c·max(0, log max|f̂|): with −S₁ it bounds Σ c·|log|f̂||
    for d, c in comps:
        e_step = 0.0  # an ℓ₂ bound on the step's tilted masses' own error (bundles, see _many)
        if isinstance(d, Bundle):
            t, k, rel, e_step = d.tilted(lam, n)
        else:
            t, k, rel = _tilted(d, lam)
        log_rel += c * math.log1p(rel)
        log_k += c * k
        offset += c * d.start
        if d.inf_mass > 0:
            p_fin += c * math.log1p(-d.inf_mass) if d.inf_mass < 1 else -math.inf
        for s in ks:
            ks[s] += c * (d.log_mgf(lam + s) - k)
        x = t if t.size <= n else _fold(t, n)
        f = sfft.rfft(x, n)
        ef = eta * math.sqrt(n) * _norm(x) + 4 * _U  # ‖f̂ − f‖∞ ≤ ‖f̂ − f‖₂ ≤ η‖f‖₂ = η√n‖x‖₂
        ef += math.sqrt(x.size) * e_step  # |DFT(x̂ − X)| ≤ ‖x̂ − X‖₁ ≤ √len·‖x̂ − X‖₂
        mag = np.abs(f)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            s1 += c * np.log(mag)
            s2 += c * np.log(mag + ef)
            ang += c * np.angle(f)
        total_c += c
        pos_c += c * max(0.0, math.log(float(np.sum(t)) + ef))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        # E: |computed − exact| of the accumulated logs (real and imaginary part together):
        # each log/angle is accurate to a few ulps of its size (≤ |log|f̂|| + π + 2), and every
        # one of the k additions rounds by u of the partial sum
        fin = np.isfinite(s1)
        size = np.maximum(-np.where(fin, s1, s2), 0.0) + 2.0 * pos_c + (math.pi + 2.0) * total_c
        e_log = (len(comps) + 3) * 2.0 * _U * size
        spec = np.exp(s1) * (np.cos(ang) + 1j * np.sin(ang))
        gap = np.maximum(s2 - s1, 0.0) + 3.0 * e_log + 8.0 * _U
        # e^{S₁}(e^{gap} − 1) ≤ min(gap, 1)·e^{S₁ + gap} (e^x − 1 ≤ min(x, 1)·e^x), one exp per
        # coefficient and no 0·∞ when e^{S₁} underflows; a zero coefficient (S₁ = −∞) is only
        # bounded by e^{S₂}
        err = np.exp(np.where(fin, s1 + gap, s2 + 3.0 * e_log + 8.0 * _U)) * np.where(fin, np.minimum(gap, 1.0), 1.0)
    err = np.where(np.isfinite(err), err, 2.0) * (1.0 + 1e-9)
    a = sfft.irfft(spec, n)
    # ℓ∞ error of the inverse: propagated coefficient errors plus its own round-off
    e_inv = (err[0] + 2.0 * err[1:].sum()) / n + eta * _norm(spec) * math.sqrt(2.0 / n) + 4 * _U
    # The composed tilted law sits at absolute index offset + (r mod n); map the window.
    r = (start - offset + np.arange(n)) % n
    vals = a[r]
    lo_z = start * h
    hi_z = (start + n) * h
    below = _chernoff(ks, 0.0, lo_z, upper_tail=False)
    above = _chernoff(ks, 0.0, hi_z, upper_tail=True)
    if whole:
        below = above = 0.0  # the window holds the whole support: nothing wraps, nothing outside
    alias = min(1.0, below + above)
    # Relative round-off of every step's tilted masses multiplies the composed masses by at
    # most e^{log_rel} (each mass of the composition is a sum of products of step masses).
    grow = math.exp(log_rel)
    if upper:
        tau = np.maximum(vals + e_inv, 0.0) * grow
        above_mass = min(1.0, above)
    else:
        tau = np.maximum(vals - e_inv - alias, 0.0) / grow
        above_mass = 0.0
    inf_mass = -math.expm1(p_fin)
    return Composed(h, lam, log_k, start, tau, inf_mass, above_mass, e_inv, alias)
