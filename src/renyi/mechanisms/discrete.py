"""Discrete Gaussian and discrete Laplace noise for integer-valued queries ([CKS20]; the exact
curves and profiles are derived here and checked numerically in the tests).

Both mechanisms draw their noise with the exact samplers of :mod:`renyi.samplers` (rational
arithmetic, no floating point on the decision path), so the released value has exactly the
stated distribution; their parameters may be given as ``Fraction`` (exact) or ``float``
(converted exactly with ``Fraction(x)``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from renyi.core._lazy import optimize, special

from renyi.core import _logmath as lm
from renyi.guarantees import conversions as conv
from renyi.core._values import CurveValue
from renyi.core._validation import NONNEGATIVE, POSITIVE, PROBABILITY_OPEN, check_int
from renyi.guarantees import RDP, ZCDP, Guarantee
from renyi.guarantees.base import Conversion, ParameterValue
from renyi.core.errors import DomainError
from renyi.mechanisms.base import Mechanism, check_neighbouring

__all__ = [
    "DiscreteGaussian",
    "DiscreteLaplace",
    "discrete_gaussian_rdp",
    "discrete_gaussian_delta",
    "discrete_laplace_rdp",
    "discrete_laplace_delta",
]

#: Shifts up to this size are maximised over explicitly; beyond it a valid simpler bound is used.
_MAX_SHIFT = 64
#: Most terms a direct tail sum may take before falling back to a conversion bound.
_MAX_TERMS = 4_000_000
_GAUSS_PROFILE = "exact discrete-Gaussian profile (CKS20 Thm 7)"
_DLAP_PROFILE = "exact discrete-Laplace profile (PLRV hockey-stick)"


# --------------------------------------------------------------------------- parameters
def _as_positive_rational(name: str, x: Any) -> Fraction:
    """An exact positive rational from an int, Fraction or float (``Fraction(x)`` is exact)."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be a positive real number; got bool")
    if isinstance(x, (Fraction, numbers.Integral, np.integer)):
        q = x if isinstance(x, Fraction) else Fraction(int(x))
        if q <= 0:
            raise DomainError(f"{name} must be in (0, inf); got {x!r}", name=name, value=x)
        if q > _MAX_DOUBLE:  # the accounting is in doubles
            raise DomainError(f"{name} must be in (0, 1.8e308) (a finite double); got a number of "
                              f"{len(str(int(q)))} digits", name=name, value=x)
        return q
    return Fraction(POSITIVE.check(name, x))


_MAX_DOUBLE = Fraction(1.7976931348623157e308)


def _phi(x: np.ndarray) -> np.ndarray:
    """e^x − 1 − x ≥ 0, accurate for small |x| (Taylor) and large x (expm1)."""
    x = np.asarray(x, dtype=np.float64)
    small = np.abs(x) < 0.1
    xs = np.where(small, x, 0.0)
    # Σ_{n=2}^{12} x^n/n!: truncation error < 0.1^13/13! relative to x²/2 — below one ulp
    series = np.zeros_like(xs)
    for n in range(12, 1, -1):
        series = (series + 1.0 / math.factorial(n)) * xs
    series = series * xs
    with np.errstate(over="ignore"):
        direct = np.expm1(np.where(small, 0.0, x)) - np.where(small, 0.0, x)
    return np.where(small, series, direct)


# --------------------------------------------------------------------------- discrete Gaussian
def _log_theta0(sigma2: float) -> float:
    """log θ_σ(0) = log Σ_x e^{−x²/(2σ²)} ([CKS20]): Poisson summation for σ ≥ ½, direct sum below."""
    if sigma2 >= 0.25:
        k = np.arange(1, int(math.sqrt(745.0 / (2 * math.pi**2 * sigma2))) + 2)
        w = np.exp(-2.0 * math.pi**2 * sigma2 * k * k)
        return 0.5 * math.log(2 * math.pi * sigma2) + math.log1p(2.0 * float(np.sum(w)))
    m = int(math.ceil(40 * math.sqrt(sigma2))) + 2
    x = np.arange(-m, m + 1, dtype=np.float64)
    return float(special.logsumexp(-x * x / (2 * sigma2)))


def _log_theta_ratio(sigma2: float, frac: np.ndarray) -> np.ndarray:
    """log θ_σ(c)/θ_σ(0) ≤ 0 for c ≡ ``frac`` (mod 1) (derived by Poisson summation of the normaliser; consistent with [CKS20] Prop. 5)."""
    f = np.asarray(frac, dtype=np.float64)
    if sigma2 >= 0.25:
        # Poisson summation: θ(c)/θ(0) = 1 − 4Σ w_k sin²(πkc)/(1 + 2Σ w_k), w_k = e^{−2π²σ²k²};
        # the subtracted sum is a sum of non-negative terms (no cancellation).
        k = np.arange(1, int(math.sqrt(745.0 / (2 * math.pi**2 * sigma2))) + 2, dtype=np.float64)
        w = np.exp(-2.0 * math.pi**2 * sigma2 * k * k)
        s = np.sin(math.pi * np.multiply.outer(f, k)) ** 2
        num = 4.0 * np.sum(w * s, axis=-1)
        result: np.ndarray = np.log1p(-num / (1.0 + 2.0 * float(np.sum(w))))
        return result
    m = int(math.ceil(40 * math.sqrt(sigma2))) + 2
    x = np.arange(-m, m + 2, dtype=np.float64)
    d = np.subtract.outer(f, x)
    out = special.logsumexp(-d * d / (2 * sigma2), axis=-1) - _log_theta0(sigma2)
    clipped: np.ndarray = np.minimum(out, 0.0)
    return clipped


def discrete_gaussian_rdp(sigma2: float, shift: int, alpha: ArrayLike) -> np.ndarray | float:
    """D_α(𝒩_ℤ(shift, σ²) ‖ 𝒩_ℤ(0, σ²)) for an integer shift (derived by Poisson summation of the normaliser; consistent with [CKS20] Prop. 5).

    α·d²/(2σ²) + log(θ_σ(αd)/θ_σ(0))/(α−1). The second term is ≤ 0 and vanishes at integer α;
    it is shrunk by a relative 1e-12 so that round-off can only raise the value (an upper
    bound). α = 1 gives d²/(2σ²) (the KL), α = ∞ gives ∞.

    Args:
        sigma2: σ² > 0.
        shift: the integer shift d ≥ 0.
        alpha: orders in [1, ∞] (vectorized).
    """
    a = np.asarray(alpha, dtype=np.float64)
    d = int(shift)
    h = np.where(np.isfinite(a), a - 1.0, 1.0)
    # frac(αd) = frac((α−1)d) since d is an integer; α − 1 is computed exactly near 1
    frac = np.mod(h * d, 1.0)
    corr = _log_theta_ratio(float(sigma2), frac) * (1.0 - 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a * d * d / (2.0 * sigma2) + np.where(h > 0, corr / np.where(h > 0, h, 1.0), 0.0)
    out = np.where(np.isinf(a), math.inf if d else 0.0, out)
    out = np.maximum(out, 0.0)
    return out[()] if out.ndim == 0 else out


def discrete_gaussian_delta(sigma2: float, sensitivity: int, epsilon: float) -> float | None:
    """Exact δ(ε) for 𝒩_ℤ(0, σ²) noise on a scalar integer query ([CKS20] Thm 7).

    δ(ε) = Σ_{x > a} p(x)·(1 − e^{ε − L(x)}), a = εσ²/Δ − Δ/2, L(x) = (2xΔ + Δ²)/(2σ²): the
    hockey-stick sum written with positive terms only (no cancellation), in log space.

    Returns:
        δ, or ``None`` if the sum would need more than a few million terms (huge σ).
    """
    s2, dlt = float(sigma2), int(sensitivity)
    sigma = math.sqrt(s2)
    a = epsilon * s2 / dlt - dlt / 2.0
    if a > 0.0 and _log_tail(s2, a) < _LOG_TINY:
        # δ ≤ P(X > a) ≤ Σ_{x ≥ a} e^{−x²/(2σ²)} (θ ≥ 1), below the smallest double: the
        # sum would round to 0 anyway, and a huge a (ε near the largest double) cannot index it.
        return 0.0
    start = math.floor(a)  # one below the first term, in case a rounds up across an integer
    n = int(max(0, -start) + math.ceil(40 * sigma) + 4)
    if n > _MAX_TERMS:
        return None
    x = np.arange(start, start + n, dtype=np.float64)
    gap = epsilon - (2.0 * x * dlt + dlt * dlt) / (2.0 * s2)  # ε − L(x)
    keep = gap < 0.0
    if not np.any(keep):
        return 0.0
    x, gap = x[keep], gap[keep]
    logs = -x * x / (2.0 * s2) - _log_theta0(s2) + lm.log1mexp(gap)
    ld = float(special.logsumexp(logs))
    return min(1.0, conv.round_up(math.exp(ld))) if ld < 0 else 1.0


#: log of the smallest positive double: below it a probability rounds to 0.
_LOG_TINY = math.log(5e-324)


def _log_tail(sigma2: float, a: float) -> float:
    """log of Σ_{x ≥ a} e^{−x²/(2σ²)} bounded by the geometric series e^{−a²/(2σ²)}/(1 − e^{−a/σ²}), a > 0."""
    z = a / math.sqrt(sigma2)
    return -0.5 * z * z - float(lm.log1mexp(-a / sigma2)) if math.isfinite(z) else -math.inf


def _dg_epsilon(sigma2: float, sensitivity: int, delta: float, upper: float) -> float | None:
    """Smallest ε with δ(ε) ≤ δ (bracketed root of log δ; returns the safe upper end)."""
    f0 = discrete_gaussian_delta(sigma2, sensitivity, 0.0)
    if f0 is None:
        return None
    if f0 <= delta:
        return 0.0
    ld = math.log(delta)

    def g(e: float) -> float:
        v = discrete_gaussian_delta(sigma2, sensitivity, e)
        if v is None:  # not computable here: count it as infeasible (the safe side)
            return math.inf
        return (math.log(v) if v > 0 else -math.inf) - ld

    hi = upper
    while g(hi) > 0.0:  # the zCDP bound is valid, so this loop only guards round-off
        hi = 2.0 * hi + 1.0
    lo = 0.0
    if math.isinf(g(hi)):
        for _ in range(200):  # bisect until log δ is finite at both ends
            mid = 0.5 * (lo + hi)
            if g(mid) > 0.0:
                lo = mid
            else:
                hi = mid
            if math.isfinite(g(hi)) or hi - lo < 1e-15 * hi:
                break
    if math.isfinite(g(hi)) and g(lo) > 0.0 and hi - lo > 1e-15 * hi:
        root = optimize.brentq(g, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
        if g(root) <= 0.0:
            hi = root
        else:
            for _ in range(64):
                root = math.nextafter(root + abs(root) * 1e-14, math.inf)
                if g(root) <= 0.0:
                    hi = min(hi, root)
                    break
    return conv.round_up(hi)


class _DGCurve(CurveValue):
    __slots__ = ("sigma2", "shifts")

    def __init__(self, sigma2: float, sensitivity: int) -> None:
        self.sigma2 = sigma2
        self.shifts = tuple(range(1, sensitivity + 1)) if sensitivity <= _MAX_SHIFT else ()
        self.shifts = self.shifts or (sensitivity,)

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        a = np.asarray(alpha, dtype=np.float64)
        if len(self.shifts) == 1 and self.shifts[0] > _MAX_SHIFT:
            # Too many shifts to maximise over: the zCDP line αΔ²/(2σ²) bounds them all.
            return a * self.shifts[0] ** 2 / (2.0 * self.sigma2)
        # The worst shift is |Δ| in every case checked; the max over shifts costs little and
        # makes the curve valid without that assumption (a max of CGFs stays convex).
        result: np.ndarray = np.max([np.asarray(discrete_gaussian_rdp(self.sigma2, d, a)) for d in self.shifts], axis=0)
        return result

    def __repr__(self) -> str:
        return f"DiscreteGaussian(σ²={self.sigma2:g}, Δ={self.shifts[-1]})"


@dataclass(frozen=True, slots=True)
class DiscreteGaussian(Mechanism):
    """Adds discrete Gaussian noise 𝒩_ℤ(0, σ²) to an integer-valued query ([CKS20]).

    Guarantees with ρ = Δ²/(2σ²):

    * scalar queries (default): the exact RDP curve (derived by Poisson summation of the normaliser; consistent with [CKS20] Prop. 5), which is ≤ αΔ²/(2σ²)
      with equality at integer α, ρ-zCDP ([CKS20] Prop. 5), and the exact (ε, δ) profile of
      [CKS20] Thm 7 used by :meth:`best_epsilon` / :meth:`best_delta`;
    * ``vector=True`` (independent noise per coordinate, ℓ₂-sensitivity Δ): ρ-zCDP only.
      The scalar curve does **not** hold for vectors: e.g. for σ² = 1 the shift (5, 12) has
      a larger divergence than the scalar shift 13 at some fractional orders, so the two
      cases are kept apart, and a scalar mechanism refuses to release arrays with more than
      one element.

    The noise is sampled exactly ([CKS20] §5) from σ² = Fraction(sigma)², computed exactly.

    Args:
        sigma: σ ∈ (0, ∞) as int, Fraction or float (converted exactly).
        sensitivity: Δ: a positive integer for scalar queries; for ``vector=True`` the
            ℓ₂-sensitivity (a positive real, e.g. √2).
        vector: whether the query is vector-valued.
        neighbouring: "add_remove" (default) or "replace_one".

    Examples:
        >>> m = DiscreteGaussian(sigma=1)
        >>> float(m.rdp(2.0))
        1.0
        >>> round(m.delta(1.0), 10)
        0.1413513394
    """

    sigma: Any
    sensitivity: Any = 1
    vector: bool = False
    neighbouring: str = "add_remove"

    def __post_init__(self) -> None:
        _as_positive_rational("sigma", self.sigma)
        if not isinstance(self.vector, (bool, np.bool_)):
            raise TypeError(f"vector must be a bool; got {type(self.vector).__name__}")
        if self.vector:
            object.__setattr__(self, "sensitivity", POSITIVE.check("sensitivity", self.sensitivity))
        else:
            object.__setattr__(self, "sensitivity", check_int("sensitivity", self.sensitivity, minimum=1))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        try:
            s2 = float(self.sigma2)
        except OverflowError:  # σ² of a huge exact rational exceeds the float range
            s2 = math.inf
        if not math.isfinite(s2) or s2 == 0.0:
            raise DomainError(f"sigma**2 must be a finite positive float; got sigma={self.sigma!r}", name="sigma", value=self.sigma)

    @property
    def sigma2(self) -> Fraction:
        """σ² as an exact rational."""
        s = _as_positive_rational("sigma", self.sigma)
        return s * s

    @property
    def rho(self) -> float:
        """ρ = Δ²/(2σ²)."""
        return float(self.sensitivity) ** 2 / (2.0 * float(self.sigma2))

    @property
    def guarantee(self) -> Guarantee:
        if self.vector:
            return ZCDP(self.rho)
        s2 = float(self.sigma2)
        return RDP(_DGCurve(s2, self.sensitivity), eps_inf=math.inf, zcdp=(0.0, self.rho), convex=True,
                   label=f"DiscreteGaussian(sigma={self.sigma}, sensitivity={self.sensitivity})")

    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        """Exact δ(ε) for scalar queries ([CKS20] Thm 7); the zCDP/RDP bound for vectors."""
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_delta(epsilon, method)
        epsilon = NONNEGATIVE.check("epsilon", epsilon)
        if not self.vector:
            d = discrete_gaussian_delta(float(self.sigma2), self.sensitivity, epsilon)
            if d is not None:
                return Conversion(d, None, _GAUSS_PROFILE)
        return self.guarantee.best_delta(epsilon)

    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        """Exact ε(δ) for scalar queries ([CKS20] Thm 7, inverted on the safe side)."""
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_epsilon(delta, method)
        delta = PROBABILITY_OPEN.check("delta", delta)
        bound = self.guarantee.best_epsilon(delta)
        if not self.vector:
            e = _dg_epsilon(float(self.sigma2), self.sensitivity, delta, max(bound.value, 1e-12))
            if e is not None and e <= bound.value:
                return Conversion(e, None, _GAUSS_PROFILE)
        return bound

    def release(self, value: Any, rng: Any = None) -> Any:
        """value + 𝒩_ℤ(0, σ²) (exact sampler); integers in, int64 (or int) out, same shape."""
        from renyi.mechanisms._noise import add_noise
        from renyi.mechanisms.samplers import sample_discrete_gaussian

        _check_scalar_release(self, value)
        s2 = self.sigma2
        return add_noise(value, lambda r, size: sample_discrete_gaussian(s2, size, rng=r), rng, integer=True)

    def privacy_loss(self) -> Any:
        """The discrete privacy loss of the worst scalar pair (shift Δ)."""
        if self.vector:
            return super(DiscreteGaussian, self).privacy_loss()
        from renyi.divergences.plrv import DiscretePrivacyLoss

        s2 = float(self.sigma2)
        dlt = self.sensitivity
        m = int(math.ceil(40 * math.sqrt(s2))) + dlt + 2
        if m > _MAX_TERMS:
            from renyi.core.errors import ConversionError

            raise ConversionError(f"sigma = {self.sigma} is too large to tabulate the privacy loss ({m} atoms)")
        x = np.arange(-m, m + 1, dtype=np.float64)
        logp = -(x * x) / (2 * s2) - _log_theta0(s2)
        z = ((x - dlt) ** 2 - x * x) / (2 * s2)  # log p(x)/q(x), q centred at Δ
        return DiscretePrivacyLoss(z, np.exp(logp))


def _check_scalar_release(m: Any, value: Any) -> None:
    if not m.vector and np.size(value) > 1:
        raise DomainError(
            f"{type(m).__name__}(vector=False) releases one scalar query; got {np.size(value)} values "
            "(construct it with vector=True and the ℓ sensitivity of the whole vector)",
            name="value",
        )


# --------------------------------------------------------------------------- discrete Laplace
class _DLapLoss(CurveValue):
    """The privacy loss Z of DLap(0) vs DLap(d) (scale t, u = 1/t) under P = DLap(0).

    Z = u(|x − d| − |x|): du with probability 1/(1+r), −du with r^d/(1+r), and (d − 2x)u with
    c·r^x for 0 < x < d, where r = e^{−u} and c = (1−r)/(1+r) (derived here; checked numerically in the tests).
    """

    __slots__ = ("u", "d", "z", "logp", "kl")

    def __init__(self, u: float, d: int) -> None:
        self.u, self.d = u, d
        l1pr = math.log1p(math.exp(-u))
        xs = np.arange(1, d, dtype=np.float64)
        logc = math.log(-math.expm1(-u)) - l1pr
        self.z = np.concatenate([[d * u, -d * u], (d - 2.0 * xs) * u])
        self.logp = np.concatenate([[-l1pr, -d * u - l1pr], logc - xs * u])
        # KL = u·Σ_{y<d} P(|X − y| changes sign) written as a sum of non-negative terms:
        # Σ_{y=0}^{d−1} [−expm1(−(y+1)u) − r·expm1(−yu)]/(1+r)
        y = np.arange(d, dtype=np.float64)
        r = math.exp(-u)
        self.kl = u * float(np.sum(-np.expm1(-(y + 1) * u) - r * np.expm1(-y * u))) / (1.0 + r)

    def _key(self) -> tuple[float, int]:
        return (self.u, self.d)  # the arrays are functions of (u, d)

    def rdp(self, alpha: np.ndarray) -> np.ndarray:
        a = np.asarray(alpha, dtype=np.float64)
        lam = np.where(np.isfinite(a), a - 1.0, 1.0)
        zmax = self.d * self.u
        small = lam * zmax <= 1.0
        ls = np.where(small, lam, 0.0)
        p = np.exp(self.logp)
        # small λ: log1p(λ·KL + Σ p_j φ(λ z_j)), every term ≥ 0 (no cancellation)
        rest = np.sum(p * _phi(np.multiply.outer(ls, self.z)), axis=-1)
        cgf_small = np.log1p(ls * self.kl + rest)
        lb = np.where(small, 1.0, lam)
        cgf_big = special.logsumexp(self.logp + np.multiply.outer(lb, self.z), axis=-1)
        cgf = np.where(small, cgf_small, cgf_big)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(lam > 0, cgf / np.where(lam > 0, lam, 1.0), self.kl)
        out = np.where(np.isinf(a), zmax, out)
        return np.clip(out, 0.0, zmax)

    def delta(self, epsilon: float) -> float:
        keep = self.z > epsilon
        if not np.any(keep):
            return 0.0
        return float(np.exp(special.logsumexp(self.logp[keep] + lm.log1mexp(epsilon - self.z[keep]))))


def discrete_laplace_rdp(scale: float, shift: int, alpha: ArrayLike) -> np.ndarray | float:
    """D_α(DLap(0, t) ‖ DLap(d, t)) for an integer shift d ≥ 1 (derived from the law of the privacy loss, checked numerically in the tests).

    Computed from the finite privacy-loss distribution (see ``_DLapLoss``); at d = 1 it equals
    F_{1/t}(α), the pure-DP worst case. α = 1 gives the KL, α = ∞ gives d/t.
    """
    out = _DLapLoss(1.0 / float(scale), int(shift)).rdp(np.asarray(alpha, dtype=np.float64))
    return out[()] if out.ndim == 0 else out


def discrete_laplace_delta(scale: float, shift: int, epsilon: float) -> float:
    """Exact hockey-stick δ(ε) of DLap(0, t) vs DLap(d, t): Σ_j p_j(1 − e^{ε − z_j})₊."""
    return _DLapLoss(1.0 / float(scale), int(shift)).delta(epsilon)


class _DLapCurve(CurveValue):
    __slots__ = ("losses", "label")

    def __init__(self, scale: float, sensitivity: int) -> None:
        u = 1.0 / scale
        self.losses = tuple(_DLapLoss(u, d) for d in range(1, sensitivity + 1))
        self.label = f"DiscreteLaplace(t={scale:g}, Δ={sensitivity})"

    def _key(self) -> tuple[object, ...]:
        return self.losses

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        # max over the shifts 1..Δ (the largest shift is the worst in every case checked;
        # the max keeps the curve valid without that assumption)
        result: np.ndarray = np.max([loss.rdp(alpha) for loss in self.losses], axis=0)
        return result

    def __repr__(self) -> str:
        return self.label


@dataclass(frozen=True, slots=True)
class DiscreteLaplace(Mechanism):
    """Adds discrete Laplace noise P(z) ∝ e^{−|z|/t} to an integer-valued query ([CKS20] §5.2).

    Guarantees (Δ an integer sensitivity):

    * pure ε-DP with ε = Δ/t (the discrete analogue of the Laplace mechanism's ε = Δ/b), for scalar queries and, with ℓ₁-sensitivity Δ,
      for vector queries;
    * scalar queries (default): the exact RDP curve (derived from the law of the privacy loss, checked numerically in the tests; for Δ = 1 it equals
      the pure-DP worst case F_{1/t}) and the exact (ε′, δ) profile of the worst pair;
    * ``vector=True``: the pure-DP curve F_ε and its randomized-response profile (valid for
      every ε-DP mechanism).

    Args:
        scale: t ∈ (0, ∞) as int, Fraction or float (converted exactly).
        sensitivity: integer Δ ≥ 1 (ℓ₁-sensitivity for vectors).
        vector: whether the query is vector-valued.
        neighbouring: "add_remove" (default) or "replace_one".

    Examples:
        >>> m = DiscreteLaplace(scale=2)
        >>> m.epsilon
        0.5
        >>> round(float(m.rdp(2.0)), 12)
        0.227336293803
    """

    scale: Any
    sensitivity: int = 1
    vector: bool = False
    neighbouring: str = "add_remove"

    def __post_init__(self) -> None:
        _as_positive_rational("scale", self.scale)
        if not isinstance(self.vector, (bool, np.bool_)):
            raise TypeError(f"vector must be a bool; got {type(self.vector).__name__}")
        object.__setattr__(self, "sensitivity", check_int("sensitivity", self.sensitivity, minimum=1))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        if not math.isfinite(self.sensitivity / float(self.scale)):
            raise DomainError(f"sensitivity/scale must be finite; got scale={self.scale!r}", name="scale", value=self.scale)

    @property
    def epsilon(self) -> ParameterValue:
        """The pure ε = Δ/t; also callable as the protocol method ``epsilon(delta)``."""
        return ParameterValue(self.sensitivity / float(self.scale), self._epsilon_at)


    @property
    def guarantee(self) -> RDP:
        eps = self.sensitivity / float(self.scale)
        if self.vector or self.sensitivity > _MAX_SHIFT:
            return conv.pure_dp_to_rdp(eps)
        # zCDP hint: ε-DP ⇒ ε·tanh(ε/2)-zCDP (valid for every ε-DP mechanism)
        return RDP(_DLapCurve(float(self.scale), self.sensitivity), eps_inf=eps,
                   zcdp=(0.0, conv.pure_dp_to_zcdp(eps)), convex=True,
                   label=f"DiscreteLaplace(scale={self.scale}, sensitivity={self.sensitivity})")

    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        """Exact δ(ε′) of the worst scalar pair (max over shifts ≤ Δ); the pure-DP profile for vectors."""
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_delta(epsilon, method)
        epsilon = NONNEGATIVE.check("epsilon", epsilon)
        if self.vector or self.sensitivity > _MAX_SHIFT:
            return Conversion(conv.pure_dp_delta(float(self.epsilon), epsilon), None,
                              "pure DP, randomized-response profile")
        u = 1.0 / float(self.scale)
        d = max(_DLapLoss(u, s).delta(epsilon) for s in range(1, self.sensitivity + 1))
        return Conversion(min(1.0, conv.round_up(d)), None, _DLAP_PROFILE)

    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        """Exact ε(δ) of the worst scalar pair (bracketed root, safe side)."""
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_epsilon(delta, method)
        delta = PROBABILITY_OPEN.check("delta", delta)
        eps = float(self.epsilon)
        if self.vector or self.sensitivity > _MAX_SHIFT:
            return Conversion(conv.pure_dp_epsilon(eps, delta), None, "pure DP, randomized-response profile")
        def g(e: float) -> float:  # decreasing in e
            return self.best_delta(e, method="native").value - delta  # the exact δ: no route is smaller

        if g(0.0) <= 0.0:
            return Conversion(0.0, None, _DLAP_PROFILE)
        hi = eps  # δ(ε) = 0 at ε = Δ/t
        root = optimize.brentq(g, 0.0, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
        val = root
        for _ in range(200):
            if g(val) <= 0.0:
                break
            val = math.nextafter(val + abs(val) * 1e-14, math.inf)
        else:
            val = hi
        return Conversion(min(conv.round_up(val), eps), None, _DLAP_PROFILE)

    def release(self, value: Any, rng: Any = None) -> Any:
        """value + DLap(t) (exact sampler); integers in, int64 (or int) out, same shape."""
        from renyi.mechanisms._noise import add_noise
        from renyi.mechanisms.samplers import sample_discrete_laplace

        _check_scalar_release(self, value)
        t = _as_positive_rational("scale", self.scale)
        return add_noise(value, lambda r, size: sample_discrete_laplace(t, size, rng=r), rng, integer=True)

    def privacy_loss(self) -> Any:
        """The finite privacy loss of the worst scalar pair (shift Δ)."""
        if self.vector:
            return super(DiscreteLaplace, self).privacy_loss()
        from renyi.divergences.plrv import DiscretePrivacyLoss

        loss = _DLapLoss(1.0 / float(self.scale), self.sensitivity)
        return DiscretePrivacyLoss(loss.z, np.exp(loss.logp))
