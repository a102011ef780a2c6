"""The Laplace mechanism f(x) + Lap(b)^d with ℓ₁-sensitivity Δ ([Mir17] Prop. 6; the privacy
loss and the vector case are derived here and checked numerically in the tests)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from renyi.guarantees import conversions as conv
from renyi.core._values import CurveValue
from renyi.core._validation import NONNEGATIVE, POSITIVE, PROBABILITY_OPEN
from renyi.guarantees import RDP
from renyi.guarantees.base import Conversion, ParameterValue
from renyi.divergences.closed_forms import laplace_rdp_curve as laplace_rdp
from renyi.mechanisms.base import Mechanism, check_neighbouring
from renyi.core._names import accepts_neighboring

__all__ = ["Laplace", "laplace_rdp", "laplace_zcdp", "laplace_delta", "laplace_epsilon"]

_PROFILE = "exact Laplace profile (PLRV hockey-stick)"


def laplace_zcdp(epsilon: float) -> float:
    """The exact zCDP ρ of the Laplace mechanism with ε = Δ/b: ρ = ε + e^{−ε} − 1 ([HM25]).

    Computed as the sum of the positive series ε²/2 − ε³/6 + … via expm1 (no cancellation
    matters: ε + expm1(−ε) has relative error O(ulp/ε) only below ε ≈ 1e-8, where the
    series is used).
    """
    eps = NONNEGATIVE.check("epsilon", epsilon)
    if eps < 1e-3:
        # ε²/2 − ε³/6 + ε⁴/24 − ε⁵/120 (alternating; truncation error < ε⁶/720)
        return eps * eps * (0.5 - eps * (1.0 / 6.0 - eps * (1.0 / 24.0 - eps / 120.0)))
    return eps + math.expm1(-eps)


def laplace_delta(t: float, epsilon: float) -> float:
    """Exact δ(ε) of the Laplace mechanism with t = Δ/b: max(0, 1 − e^{(ε−t)/2}).

    From the privacy loss (derived from the two Laplace densities: atoms ½ at t and ½e^{−t} at −t, density ¼e^{(z−t)/2} on
    (−t, t)): E[(1 − e^{ε−Z})₊] = ½(1 − e^{ε−t}) + ½(1 − e^{(ε−t)/2}) − ½(e^{(ε−t)/2} − e^{ε−t})
    = 1 − e^{(ε−t)/2} for 0 ≤ ε < t (checked against the hockey-stick integral in the tests).
    """
    if epsilon >= t:
        return 0.0
    return min(1.0, conv.round_up(-math.expm1((epsilon - t) / 2.0)))


def laplace_epsilon(t: float, delta: float) -> float:
    """Exact ε(δ) of the Laplace mechanism with t = Δ/b: max(0, t + 2·log(1 − δ))."""
    if t == 0.0:
        return 0.0
    return max(0.0, conv.round_up(t + 2.0 * math.log1p(-delta)))


class _LaplaceCurve(CurveValue):
    __slots__ = ("t",)

    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return np.asarray(laplace_rdp(self.t, alpha), dtype=np.float64)

    def __repr__(self) -> str:
        return f"Laplace(t={self.t:g})"


@dataclass(frozen=True, slots=True)
class Laplace(Mechanism):
    """Adds Lap(0, b) noise to each coordinate of a query with ℓ₁-sensitivity Δ.

    Guarantees (t = Δ/b):

    * pure ε-DP with ε = t;
    * the exact RDP curve of [Mir17] Prop. 6. For vector queries the
      per-coordinate divergences add and g_α is convex with g_α(0) = 0, hence superadditive,
      so putting all of Δ in one coordinate is the worst case (derived here, checked numerically in the tests);
    * the exact zCDP constant ρ = ε + e^{−ε} − 1 ([HM25]; tighter than ε·tanh(ε/2));
    * the exact (ε′, δ) profile δ(ε′) = max(0, 1 − e^{(ε′−ε)/2}) from the privacy loss (derived from the two Laplace densities),
      used by :meth:`best_epsilon` / :meth:`best_delta`. For vector queries the one-coordinate
      pair also dominates the hockey-stick divergence (derived here; checked numerically
      for two coordinates in the tests).

    Args:
        scale: the Laplace scale b ∈ (0, ∞).
        sensitivity: ℓ₁-sensitivity Δ ∈ (0, ∞) under ``neighbouring``.
        neighbouring: "add_remove" (default) or "replace_one": the relation under which
            ``sensitivity`` was computed.

    Examples:
        >>> m = Laplace(scale=1.0)
        >>> m.epsilon
        1.0
        >>> round(float(m.rdp(2.0)), 10)
        0.61912363
        >>> round(m.to_zcdp().rho, 10)
        0.3678794412
        >>> round(m.epsilon(0.1), 6)
        0.789279
    """

    scale: float
    sensitivity: float = 1.0
    neighbouring: str = "add_remove"

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", POSITIVE.check("scale", self.scale))
        object.__setattr__(self, "sensitivity", POSITIVE.check("sensitivity", self.sensitivity))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        if not math.isfinite(self.sensitivity / self.scale):
            _raise_ratio(self.sensitivity, self.scale)

    @classmethod
    @accepts_neighboring
    def from_epsilon(cls, epsilon: float, sensitivity: float = 1.0, neighbouring: str = "add_remove") -> Laplace:
        """The Laplace mechanism with scale b = Δ/ε (pure ε-DP)."""
        eps = POSITIVE.check("epsilon", epsilon)
        sens = POSITIVE.check("sensitivity", sensitivity)
        b = sens / eps
        # Round b up until Δ/b ≤ ε holds in floating point (never more private on paper than in fact).
        while sens / b > eps:
            b = math.nextafter(b, math.inf)
        return cls(b, sens, neighbouring)

    @property
    def epsilon(self) -> ParameterValue:
        """The pure ε = Δ/b; also callable as the protocol method ``epsilon(delta)``."""
        return ParameterValue(self.sensitivity / self.scale, self._epsilon_at)

    @property
    def rho(self) -> float:
        """The exact zCDP ρ = ε + e^{−ε} − 1 ([HM25])."""
        return laplace_zcdp(self.sensitivity / self.scale)

    @property
    def guarantee(self) -> RDP:
        t = self.sensitivity / self.scale
        return RDP(
            _LaplaceCurve(t),
            eps_inf=t,
            zcdp=(0.0, laplace_zcdp(t)),
            convex=True,
            label=f"Laplace(scale={self.scale:g}, sensitivity={self.sensitivity:g})",
        )


    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        """The exact smallest ε at ``delta`` ∈ (0, 1): max(0, ε + 2·log(1 − δ))."""
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_epsilon(delta, method)
        delta = PROBABILITY_OPEN.check("delta", delta)
        return Conversion(laplace_epsilon(self.sensitivity / self.scale, delta), None, _PROFILE)

    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        """The exact smallest δ at ``epsilon`` ≥ 0: max(0, 1 − e^{(ε′−ε)/2})."""
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_delta(epsilon, method)
        epsilon = NONNEGATIVE.check("epsilon", epsilon)
        return Conversion(laplace_delta(self.sensitivity / self.scale, epsilon), None, _PROFILE)

    def release(self, value: Any, rng: Any = None) -> Any:
        """value + Lap(0, b) per coordinate (float64; same shape).

        Floating-point caveat: textbook floating-point Laplace noise leaks through its low
        bits (Mironov 2012); for integer data prefer :class:`DiscreteLaplace`.
        """
        from renyi.mechanisms._noise import add_noise
        from renyi.mechanisms.samplers import laplace

        b = self.scale
        return add_noise(value, lambda r, size: b * laplace(r, size), rng)

    def privacy_loss(self) -> Any:
        """The Laplace privacy loss random variable with t = Δ/b (see the PLRV page of the documentation)."""
        from renyi.divergences.plrv import LaplacePrivacyLoss

        return LaplacePrivacyLoss(self.sensitivity / self.scale)


def _raise_ratio(sensitivity: float, scale: float) -> None:
    from renyi.core.errors import DomainError

    raise DomainError(
        f"sensitivity/scale must be finite; got sensitivity={sensitivity!r}, scale={scale!r}",
        name="scale",
        value=scale,
    )
