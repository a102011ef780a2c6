"""δ-approximate (ξ, ρ)-zCDP."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.guarantees import conversions as conv
from renyi.core._validation import NONNEGATIVE, ORDER, UNIT_CLOSED_OPEN, check_int
from renyi.core.errors import ConversionError
from renyi.guarantees.neighbouring import check_neighbouring
from renyi.guarantees.base import Conversion, Guarantee, ParameterValue, _check_delta, _check_epsilon, nb_repr

if TYPE_CHECKING:  # pragma: no cover - annotations only (the modules import each other)
    from renyi.guarantees.zcdp import ZCDP

__all__ = ["ApproxZCDP"]


@dataclass(frozen=True, slots=True)
class ApproxZCDP(Guarantee):
    """δ-approximate (ξ, ρ)-zCDP ([BS16] Def. 12 / Def. 36): (ξ, ρ)-zCDP after conditioning on
    events of probability ≥ 1 − δ.

    Args:
        rho: ρ ∈ [0, ∞).
        xi: ξ ∈ [0, ∞).
        delta: δ ∈ [0, 1).
        neighbouring: the relation it is stated under, "add_remove" (default) or "replace_one".

    Examples:
        >>> g = ApproxZCDP(rho=0.5, delta=1e-6)
        >>> g.epsilon(1e-6)  # no finite ε at the guarantee's own δ
        inf
        >>> round(g.epsilon(1e-5), 4)
        4.7521
    """

    rho: float
    xi: float
    _delta: float
    neighbouring: str

    definition = "approximate zCDP"

    def __init__(self, rho: float, xi: float = 0.0, delta: float = 0.0, *, neighbouring: str = "add_remove") -> None:
        object.__setattr__(self, "rho", NONNEGATIVE.check("rho", rho))
        object.__setattr__(self, "xi", NONNEGATIVE.check("xi", xi))
        object.__setattr__(self, "_delta", UNIT_CLOSED_OPEN.check("delta", delta))
        object.__setattr__(self, "neighbouring", check_neighbouring(neighbouring))

    def __repr__(self) -> str:
        return f"ApproxZCDP(rho={self.rho!r}, xi={self.xi!r}, delta={self._delta!r}{nb_repr(self)})"

    def __reduce__(self) -> Any:
        return (_make, (self.rho, self.xi, self._delta, self.neighbouring))

    @property
    def delta(self) -> ParameterValue:
        """δ; also callable as the protocol method ``delta(epsilon)``."""
        return ParameterValue(self._delta, super(ApproxZCDP, self).delta)

    def rdp(self, alpha: ArrayLike) -> Any:
        """ξ + ρα when δ = 0; ∞ otherwise (the δ event bounds no Rényi divergence)."""
        a = ORDER.check_array("alpha", alpha)
        if self._delta == 0.0:
            return conv.zcdp_to_rdp(self.rho, self.xi, a)
        out = np.full(a.shape, math.inf)
        return float(out) if out.ndim == 0 else out

    def best_epsilon(self, delta: float) -> Conversion:
        """ε at total δ = δ_a + (1 − δ_a)·δ_conv ([BS16] §8); ∞ when δ ≤ δ_a."""
        return conv.approx_zcdp_to_approx_dp(self.rho, self.xi, self._delta, _check_delta(delta))

    def best_delta(self, epsilon: float) -> Conversion:
        c = conv.zcdp_delta(self.rho, self.xi, _check_epsilon(epsilon))
        d = self._delta + (1.0 - self._delta) * c.value
        return Conversion(min(1.0, conv.round_up(d)), c.witness, c.method + " (+ δ of approximate zCDP)")

    def to_zcdp(self) -> ZCDP:
        if self._delta == 0.0:
            from renyi.guarantees.zcdp import ZCDP

            return ZCDP(self.rho, self.xi)
        raise ConversionError(f"{self!r} is not zCDP (δ > 0)")

    def compose(self, k: int) -> ApproxZCDP:
        """(kξ, kρ) with δ' = 1 − (1 − δ)^k ([BS16] §8)."""
        k = check_int("k", k)
        d = -math.expm1(k * math.log1p(-self._delta)) if self._delta > 0 else 0.0
        if d >= 1.0:
            d = math.nextafter(1.0, 0.0)
        return ApproxZCDP(k * self.rho, k * self.xi, conv.round_up(d))

    def group(self, k: int) -> ApproxZCDP:
        """Approximate zCDP has no useful group privacy ([BS16] §8): only k = 1 is allowed."""
        k = check_int("k", k)
        if k == 1:
            return self
        if self._delta == 0.0:
            g = self.to_zcdp().group(k)
            return ApproxZCDP(g.rho, g.xi, 0.0)
        raise ConversionError("approximate zCDP (δ > 0) has no group-privacy guarantee (BS16 §8)")


def _make(rho: float, xi: float, delta: float, neighbouring: str = "add_remove") -> ApproxZCDP:
    # pickling: the keyword-only relation cannot be passed positionally to the class
    return ApproxZCDP(rho, xi, delta, neighbouring=neighbouring)
