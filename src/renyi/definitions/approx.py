"""Approximate (ε, δ)-differential privacy."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .. import _logmath as lm
from .. import conversions as conv
from .._validation import NONNEGATIVE, ORDER, UNIT_CLOSED_OPEN, check_int
from ..errors import ConversionError
from .._neighbouring import check_neighbouring
from .base import Conversion, Guarantee, ParameterValue, _check_delta, _check_epsilon, nb_repr

if TYPE_CHECKING:  # pragma: no cover - annotations only (the modules import each other)
    from .approx_zcdp import ApproxZCDP
    from .rdp import RDP
    from .zcdp import ZCDP

__all__ = ["ApproxDP"]


@dataclass(frozen=True, slots=True)
class ApproxDP(Guarantee):
    """(ε, δ)-DP: P[M(x) ∈ S] ≤ e^ε P[M(x′) ∈ S] + δ ([BS16] Def. 18).

    Args:
        epsilon: ε ∈ [0, ∞).
        delta: δ ∈ [0, 1).
        neighbouring: the relation it is stated under, "add_remove" (default) or "replace_one".

    Examples:
        >>> total = ApproxDP(1.0, 1e-6) + ApproxDP(0.5, 1e-6)
        >>> total.epsilon, round(total.delta, 12)
        (1.5, 2e-06)
    """

    _epsilon: float
    _delta: float
    neighbouring: str

    definition = "(ε, δ)-DP"

    def __init__(self, epsilon: float, delta: float, *, neighbouring: str = "add_remove") -> None:
        object.__setattr__(self, "_epsilon", NONNEGATIVE.check("epsilon", epsilon))
        object.__setattr__(self, "_delta", UNIT_CLOSED_OPEN.check("delta", delta))
        object.__setattr__(self, "neighbouring", check_neighbouring(neighbouring))

    def __repr__(self) -> str:
        return f"ApproxDP(epsilon={self._epsilon!r}, delta={self._delta!r}{nb_repr(self)})"

    def __reduce__(self) -> Any:
        return (_make, (self._epsilon, self._delta, self.neighbouring))

    @property
    def epsilon(self) -> ParameterValue:
        """ε; also callable as the protocol method ``epsilon(delta)``."""
        return ParameterValue(self._epsilon, super(ApproxDP, self).epsilon)

    @property
    def delta(self) -> ParameterValue:
        """δ; also callable as the protocol method ``delta(epsilon)``."""
        return ParameterValue(self._delta, super(ApproxDP, self).delta)

    @property
    def params(self) -> tuple[float, float]:
        """(ε, δ)."""
        return self._epsilon, self._delta

    def rdp(self, alpha: ArrayLike) -> Any:
        """∞ for δ > 0 (an (ε, δ) guarantee bounds no Rényi divergence); F_ε for δ = 0."""
        a = ORDER.check_array("alpha", alpha)
        if self._delta == 0.0:
            return conv.pure_dp_rdp(self._epsilon, a)
        out = np.full(a.shape, math.inf)
        return float(out) if out.ndim == 0 else out

    def best_epsilon(self, delta: float) -> Conversion:
        """Smallest ε' with (ε', δ')-DP; ∞ when δ' < δ (tilted randomized response, [KOV15])."""
        delta = _check_delta(delta)
        return Conversion(conv.approx_dp_epsilon(self._epsilon, self._delta, delta), None,
                          "(ε, δ)-DP profile (KOV15, k = 1)")

    def best_delta(self, epsilon: float) -> Conversion:
        epsilon = _check_epsilon(epsilon)
        return Conversion(conv.approx_dp_delta(self._epsilon, self._delta, epsilon), None,
                          "(ε, δ)-DP profile (KOV15, k = 1)")

    def to_rdp(self) -> RDP:
        if self._delta == 0.0:
            return conv.pure_dp_to_rdp(self._epsilon)
        raise ConversionError(
            f"{self!r} has no RDP curve (δ > 0); it is δ-approximately RDP: use renyi.compose, "
            "which folds it in as approximate zCDP (BS16 Lemma 37)"
        )

    def to_zcdp(self) -> ZCDP:
        if self._delta == 0.0:
            from .zcdp import ZCDP

            return ZCDP(conv.pure_dp_to_zcdp(self._epsilon))
        raise ConversionError(f"{self!r} is not zCDP (δ > 0); see to_approx_zcdp()")

    def to_approx_zcdp(self) -> ApproxZCDP:
        """δ-approximate ε·tanh(ε/2)-zCDP ([BS16] Prop. 13 / Lemma 37, tight pure-DP constant)."""
        from .approx_zcdp import ApproxZCDP

        rho, xi, d = conv.approx_dp_to_approx_zcdp(self._epsilon, self._delta)
        return ApproxZCDP(rho=rho, xi=xi, delta=d)

    def compose(self, k: int, *, method: str = "basic", delta_prime: float | None = None) -> ApproxDP:
        """k-fold composition.

        Args:
            k: number of compositions (integer ≥ 1).
            method: ``"basic"`` (kε, kδ), ``"advanced"`` ([DRV10] Thm III.3, needs
                ``delta_prime``) or ``"optimal"`` ([KOV15] Thm 3.3, the exact k-fold profile,
                needs ``delta_prime`` = the total δ wanted).
        """
        from ..composition import advanced_composition, optimal_homogeneous_composition

        k = check_int("k", k)
        if method == "basic":
            return ApproxDP(k * self._epsilon, min(k * self._delta, math.nextafter(1.0, 0.0)))
        if delta_prime is None:
            raise TypeError(f"method={method!r} needs delta_prime")
        if method == "advanced":
            return advanced_composition(self._epsilon, self._delta, k, delta_prime)
        if method == "optimal":
            return optimal_homogeneous_composition(self._epsilon, self._delta, k, delta_prime)
        raise ValueError(f"method must be one of 'basic', 'advanced', 'optimal'; got {method!r}")

    def group(self, k: int) -> ApproxDP:
        """(kε, δ·(e^{kε} − 1)/(e^ε − 1)) ≤ (kε, k·e^{(k−1)ε}·δ) for groups of size k."""
        k = check_int("k", k)
        if self._delta == 0.0:
            return ApproxDP(k * self._epsilon, 0.0)
        if self._epsilon == 0.0:
            d = k * self._delta
        else:
            ld = math.log(self._delta) + float(lm.log_expm1(k * self._epsilon)) - float(lm.log_expm1(self._epsilon))
            d = math.exp(ld) if ld < 0 else 1.0
        if d >= 1.0:
            raise ConversionError(f"group of size {k} makes δ ≥ 1 for {self!r}: no guarantee remains")
        return ApproxDP(k * self._epsilon, conv.round_up(d))


def _make(epsilon: float, delta: float, neighbouring: str = "add_remove") -> ApproxDP:
    # pickling: the keyword-only relation cannot be passed positionally to the class
    return ApproxDP(epsilon, delta, neighbouring=neighbouring)
