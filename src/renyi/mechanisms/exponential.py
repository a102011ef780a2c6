"""The exponential mechanism and its bounded-range guarantee ([DR19]; [CR21] §3)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.core import _logmath as lm
from renyi.guarantees import conversions as conv
from renyi.core._values import CurveValue
from renyi.core._validation import NONNEGATIVE, POSITIVE
from renyi.guarantees import RDP
from renyi.guarantees.base import ParameterValue
from renyi.core.errors import DomainError
from renyi.mechanisms.base import Mechanism, check_neighbouring

__all__ = ["ExponentialMechanism", "bounded_range_kl", "bounded_range_rdp"]


def bounded_range_kl(epsilon: float) -> float:
    """KL_max(ε) = g − 1 − log g with g = ε/(e^ε − 1): the largest KL divergence of an ε-BR
    pair ([CR21] §3).

    Written as h − log1p(h) with h = g − 1 = −(e^ε − 1 − ε)/(e^ε − 1), both pieces computed
    without cancellation (series for small |h|).

    The value is rounded up by a few ulps (it enters upper bounds).

    >>> round(bounded_range_kl(1.0), 13)
    0.1233015614822
    """
    return conv.round_up(_kl_max(epsilon))


def _kl_max(epsilon: float) -> float:
    eps = NONNEGATIVE.check("epsilon", epsilon)
    if eps == 0.0:
        return 0.0
    if eps > 30.0:
        log_g = math.log(eps) - float(lm.log_expm1(eps))
        return math.exp(log_g) - 1.0 - log_g
    em1 = math.expm1(eps)
    x = eps
    # e^ε − 1 − ε: Taylor for small ε, direct otherwise
    phi = x * x * (0.5 + x * (1 / 6 + x * (1 / 24 + x * (1 / 120 + x * (1 / 720 + x / 5040))))) if x < 0.05 else em1 - x
    h = -phi / em1  # ∈ (−1, 0)
    if abs(h) < 0.05:
        # h − log1p(h) = Σ_{n≥2} (−h)^n/n for h < 0: all terms positive; 30 terms reach 0.05^30
        y = -h
        return math.fsum(y**n / n for n in range(2, 30))
    return h - math.log1p(h)


def bounded_range_rdp(epsilon: float, alpha: ArrayLike) -> np.ndarray | float:
    """RDP of an ε-bounded-range mechanism: min(F_ε(α), KL_max(ε) + (α−1)ε²/8) ([CR21] §3; F_ε because ε-BR implies ε-DP, [BS16] proof of Prop. 19).

    An upper bound (not an exact curve). α = ∞ gives ε.
    """
    a = np.asarray(alpha, dtype=np.float64)
    eps = float(epsilon)
    kl = bounded_range_kl(eps)
    with np.errstate(invalid="ignore", over="ignore"):
        br = kl + (a - 1.0) * eps * eps / 8.0
    out = np.minimum(np.asarray(conv.pure_dp_rdp(eps, a)), br)
    out = np.where(np.isinf(a), eps, out)
    return out[()] if out.ndim == 0 else out


class _BRCurve(CurveValue):
    __slots__ = ("eps",)

    def __init__(self, eps: float) -> None:
        self.eps = eps

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return np.asarray(bounded_range_rdp(self.eps, alpha), dtype=np.float64)

    def __repr__(self) -> str:
        return f"BR(ε={self.eps:g})"


@dataclass(frozen=True, slots=True)
class ExponentialMechanism(Mechanism):
    """Select one of finitely many candidates with P[y] ∝ exp(η·u(x, y)).

    The temperature is η = ε/(2Δ) for general utilities and η = ε/Δ for monotone ones (for
    every neighbouring pair all utilities move in the same direction), so in both cases the
    mechanism is ε-DP and ε-bounded-range: the EM with η is 2ηΔ-BR in general and ηΔ-BR for
    monotone utilities ([DR19]; [CR21] §3). Guarantees:

    * pure ε-DP;
    * the bounded-range RDP bound min(F_ε(α), KL_max(ε) + (α−1)ε²/8) ([CR21] §3). It is
      ξ + αε²/8 with ξ = KL_max(ε) − ε²/8 < 0, so ε(α) ≤ αε²/8 and ε²/8-zCDP holds (carried
      as the curve's zCDP hint (0, ε²/8), compared with ε·tanh(ε/2) from pure DP).

    **Implementation: report noisy max with Gumbel noise.** ``release`` returns
    argmax_y η·u(x, y) + G_y with G_y i.i.d. standard Gumbel. By the Gumbel-max trick this
    output has exactly the EM distribution exp(η·u_y)/Σ exp(η·u_y′), so the guarantees above
    apply. (Floating-point caveat: the Gumbel variates are computed in float64 from 53-bit
    uniforms; as for every floating-point mechanism the realised distribution is the
    exact one only up to rounding.)

    **Not permute-and-flip.** Permute-and-flip has the same pure-DP guarantee but is *not*
    covered by the bounded-range analysis here; it is deliberately not offered under this
    class.

    Args:
        epsilon: ε ∈ (0, ∞).
        sensitivity: Δ_u ∈ (0, ∞), the sensitivity of every utility score.
        monotone: whether the utilities are monotone (see above).
        neighbouring: "add_remove" (default) or "replace_one".

    Examples:
        >>> em = ExponentialMechanism(epsilon=1.0)
        >>> round(float(em.rdp(4.0)), 12)
        0.498301561482
        >>> em.to_zcdp().rho
        0.125
    """

    _epsilon: float
    sensitivity: float = 1.0
    monotone: bool = False
    neighbouring: str = "add_remove"

    def __init__(self, epsilon: float, sensitivity: float = 1.0, monotone: bool = False,
                 neighbouring: str = "add_remove") -> None:
        object.__setattr__(self, "_epsilon", POSITIVE.check("epsilon", epsilon))
        object.__setattr__(self, "sensitivity", POSITIVE.check("sensitivity", sensitivity))
        if not isinstance(monotone, (bool, np.bool_)):
            raise TypeError(f"monotone must be a bool; got {type(monotone).__name__}")
        object.__setattr__(self, "monotone", bool(monotone))
        object.__setattr__(self, "neighbouring", check_neighbouring(neighbouring))

    def __repr__(self) -> str:
        return (f"ExponentialMechanism(epsilon={self._epsilon!r}, sensitivity={self.sensitivity!r}, "
                f"monotone={self.monotone!r}, neighbouring={self.neighbouring!r})")

    def __reduce__(self) -> tuple[type[ExponentialMechanism], tuple[float, float, bool, str]]:
        return (ExponentialMechanism, (self._epsilon, self.sensitivity, self.monotone, self.neighbouring))

    @property
    def epsilon(self) -> ParameterValue:
        """ε; also callable as the protocol method ``epsilon(delta)``."""
        return ParameterValue(self._epsilon, self._epsilon_at)


    @property
    def eta(self) -> float:
        """The temperature η: ε/(2Δ), or ε/Δ for monotone utilities."""
        return self._epsilon / (self.sensitivity if self.monotone else 2.0 * self.sensitivity)

    @property
    def bounded_range(self) -> float:
        """The bounded-range parameter (2ηΔ in general, ηΔ monotone) = ε."""
        return self.eta * self.sensitivity * (1.0 if self.monotone else 2.0)

    @property
    def guarantee(self) -> RDP:
        eps = self.bounded_range
        pure = min(eps, self._epsilon)
        rho = min(eps * eps / 8.0, conv.pure_dp_to_zcdp(pure))
        return RDP(_BRCurve(eps), eps_inf=pure, zcdp=(0.0, rho), convex=False,
                   label=f"ExponentialMechanism(epsilon={self._epsilon:g}, BR)")

    def release(self, utilities: Any, rng: Any = None) -> int:
        """The index of the selected candidate.

        Args:
            utilities: u(x, y) for every candidate y: a non-empty 1-D array of finite reals.
            rng: ``None`` for secure randomness, or a numpy Generator (not secure).

        Returns:
            The chosen index in [0, len(utilities)).
        """
        from renyi.mechanisms._noise import as_real_array
        from renyi.mechanisms.samplers import resolve_rng, uniform_int

        u = as_real_array(utilities, "utilities")
        if u.ndim != 1 or u.size == 0:
            raise DomainError(f"utilities must be a non-empty 1-D array; got shape {u.shape}", name="utilities")
        gen = resolve_rng(rng)
        # U = (k + ½)/2⁵³ ∈ (0, 1) strictly, so the Gumbel variate −log(−log U) is finite.
        k = np.asarray(uniform_int(gen, 2**53, u.size), dtype=np.float64)
        g = -np.log(-np.log((k + 0.5) * 2.0**-53))
        return int(np.argmax(self.eta * u + g))
