"""Pure ε-differential privacy."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from numpy.typing import ArrayLike

from renyi.guarantees import conversions as conv
from renyi.core._validation import NONNEGATIVE, ORDER, check_int
from renyi.guarantees.neighbouring import check_neighbouring
from renyi.guarantees.base import Conversion, Guarantee, ParameterValue, _check_delta, _check_epsilon, nb_repr

if TYPE_CHECKING:  # pragma: no cover - annotations only (the modules import each other)
    from renyi.guarantees.rdp import RDP
    from renyi.guarantees.zcdp import ZCDP

__all__ = ["PureDP"]


@dataclass(frozen=True, slots=True)
class PureDP(Guarantee):
    """ε-DP: P[M(x) ∈ S] ≤ e^ε P[M(x′) ∈ S] for all neighbours and events ([BS16] Def. 18).

    Args:
        epsilon: ε ∈ [0, ∞).
        neighbouring: the relation it is stated under, "add_remove" (default) or "replace_one".

    Examples:
        >>> PureDP(1.0).to_zcdp()
        ZCDP(rho=0.46211715726000974)
        >>> PureDP(1.0) + PureDP(0.5)
        PureDP(epsilon=1.5)
    """

    _epsilon: float
    neighbouring: str
    definition = "pure DP"

    def __init__(self, epsilon: float, *, neighbouring: str = "add_remove") -> None:
        object.__setattr__(self, "_epsilon", NONNEGATIVE.check("epsilon", epsilon))
        object.__setattr__(self, "neighbouring", check_neighbouring(neighbouring))

    def __repr__(self) -> str:
        return f"PureDP(epsilon={self._epsilon!r}{nb_repr(self)})"

    def __reduce__(self) -> Any:
        return (_make, (self._epsilon, self.neighbouring))

    @property
    def epsilon(self) -> ParameterValue:
        """ε; also callable as the protocol method ``epsilon(delta)``."""
        return ParameterValue(self._epsilon, super(PureDP, self).epsilon)

    def rdp(self, alpha: ArrayLike) -> Any:
        """The tight curve F_ε(α) ([BS16] proof of Prop. 19), attained by randomized response."""
        a = ORDER.check_array("alpha", alpha)
        return conv.pure_dp_rdp(self._epsilon, a)

    def best_epsilon(self, delta: float) -> Conversion:
        """ε' = ε + log(1 − δ(1 + e^{−ε})): exact for the worst ε-DP pair (randomized response)."""
        delta = _check_delta(delta)
        return Conversion(conv.pure_dp_epsilon(self._epsilon, delta), math.inf, "pure DP, randomized-response profile")

    def best_delta(self, epsilon: float) -> Conversion:
        epsilon = _check_epsilon(epsilon)
        return Conversion(conv.pure_dp_delta(self._epsilon, epsilon), math.inf, "pure DP, randomized-response profile")

    def to_rdp(self) -> RDP:
        return conv.pure_dp_to_rdp(self._epsilon)

    def to_zcdp(self) -> ZCDP:
        """ρ = ε·tanh(ε/2), the tight constant (≤ the classic ε²/2 of [BS16] Prop. 4)."""
        from renyi.guarantees.zcdp import ZCDP

        return ZCDP(conv.pure_dp_to_zcdp(self._epsilon))

    def compose(self, k: int) -> PureDP:
        """kε (basic composition is tight for pure DP as a single ε)."""
        return PureDP(check_int("k", k) * self._epsilon)

    def group(self, k: int) -> PureDP:
        """kε for groups of size k."""
        return PureDP(check_int("k", k) * self._epsilon)


def _make(epsilon: float, neighbouring: str = "add_remove") -> PureDP:
    # pickling: the keyword-only relation cannot be passed positionally to the class
    return PureDP(epsilon, neighbouring=neighbouring)
