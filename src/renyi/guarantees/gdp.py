"""μ-Gaussian differential privacy (Dong, Roth & Su 2019)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from numpy.typing import ArrayLike

from renyi.guarantees import conversions as conv
from renyi.guarantees.neighbouring import check_neighbouring
from renyi.core._validation import ORDER, Interval, check_int
from renyi.guarantees.base import Conversion, Guarantee, _check_delta, _check_epsilon, nb_repr

if TYPE_CHECKING:  # pragma: no cover - annotations only (the modules import each other)
    from renyi.guarantees.rdp import RDP
    from renyi.guarantees.zcdp import ZCDP

__all__ = ["GDP", "MU_MAX"]

#: The largest μ whose ρ = μ²/2 is a finite double (≈ 1.34e154). Beyond it no zCDP or RDP
#: bound can be stated in floating point, so such a μ is refused rather than silently
#: turned into an infinite ρ downstream.
MU_MAX = math.sqrt(1.7976931348623157e308)
_MU = Interval(0.0, MU_MAX, lo_closed=True, hi_closed=True)


@dataclass(frozen=True, slots=True)
class GDP(Guarantee):
    """μ-GDP: distinguishing neighbours is as hard as telling N(0, 1) from N(μ, 1).

    The exact guarantee of the Gaussian mechanism (μ = Δ/σ). Composition is exact
    (μ² adds, even adaptively; [DRS19]), and the (ε, δ) profile is the analytic-Gaussian
    curve ([BW18] Thm 8), so ``epsilon(delta)`` is the true ε, not a bound on it.

    Args:
        mu: μ ∈ [0, 1.34e154] (:data:`MU_MAX`: ρ = μ²/2 must be a finite double).
        neighbouring: the relation it is stated under, "add_remove" (default) or "replace_one".

    Examples:
        >>> round(GDP(1.0).epsilon(1e-5), 9)
        4.377178096
        >>> GDP(3.0) + GDP(4.0)
        GDP(mu=5.0)
    """

    mu: float
    neighbouring: str = field(default="add_remove", kw_only=True)

    definition = "GDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _MU.check("mu", self.mu))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))

    def __repr__(self) -> str:
        return f"GDP(mu={self.mu!r}{nb_repr(self)})"

    @property
    def rho(self) -> float:
        """The equivalent zCDP ρ = μ²/2 (exact for the Gaussian)."""
        return self.mu * self.mu / 2.0

    def rdp(self, alpha: ArrayLike) -> Any:
        """αμ²/2 (exact for the Gaussian mechanism)."""
        return conv.zcdp_to_rdp(self.rho, 0.0, ORDER.check_array("alpha", alpha))

    def best_epsilon(self, delta: float) -> Conversion:
        return conv.gdp_to_approx_dp(self.mu, _check_delta(delta))

    def best_delta(self, epsilon: float) -> Conversion:
        return Conversion(conv.gdp_delta(self.mu, _check_epsilon(epsilon)), None, "exact Gaussian (BW18 Thm 8 / GDP)")

    def to_zcdp(self) -> ZCDP:
        from renyi.guarantees.zcdp import ZCDP

        return ZCDP(self.rho)

    def to_rdp(self) -> RDP:
        return self.to_zcdp().to_rdp()

    def compose(self, k: int) -> GDP:
        """√k·μ."""
        return GDP(self.mu * math.sqrt(check_int("k", k)))

    def group(self, k: int) -> GDP:
        """kμ (the Gaussian mechanism with sensitivity kΔ)."""
        return GDP(self.mu * check_int("k", k))
