"""(ξ, ρ)-zero-concentrated differential privacy."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from numpy.typing import ArrayLike

from renyi.guarantees import conversions as conv
from renyi.core._values import CurveValue
from renyi.core._validation import NONNEGATIVE, ORDER, check_int
from renyi.guarantees.neighbouring import check_neighbouring
from renyi.guarantees.base import Conversion, Guarantee, _check_delta, _check_epsilon, nb_repr
from renyi.core import hooks

if TYPE_CHECKING:  # pragma: no cover - annotations only (the modules import each other)
    from renyi.guarantees.rdp import RDP

__all__ = ["ZCDP"]


@dataclass(frozen=True, slots=True)
class ZCDP(Guarantee):
    """(ξ, ρ)-zCDP: D_α(M(x)‖M(x′)) ≤ ξ + ρα for every α ∈ (1, ∞) ([BS16] Def. 1).

    Args:
        rho: ρ ∈ [0, ∞).
        xi: ξ ∈ [0, ∞) (default 0: plain ρ-zCDP).
        neighbouring: the relation it is stated under, "add_remove" (default) or "replace_one".

    Examples:
        >>> ZCDP(0.5).epsilon(1e-5) < 4.7284
        True
        >>> ZCDP(0.1, xi=0.1).group(3)
        ZCDP(rho=0.9, xi=0.55)
    """

    rho: float
    xi: float = 0.0
    neighbouring: str = field(default="add_remove", kw_only=True)

    definition = "zCDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", NONNEGATIVE.check("rho", self.rho))
        object.__setattr__(self, "xi", NONNEGATIVE.check("xi", self.xi))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))

    def __repr__(self) -> str:
        if self.xi == 0.0:
            return f"ZCDP(rho={self.rho!r}{nb_repr(self)})"
        return f"ZCDP(rho={self.rho!r}, xi={self.xi!r}{nb_repr(self)})"

    def rdp(self, alpha: ArrayLike) -> Any:
        """ξ + ρα."""
        return conv.zcdp_to_rdp(self.rho, self.xi, ORDER.check_array("alpha", alpha))

    def best_epsilon(self, delta: float) -> Conversion:
        """Best of [CKS20] Cor. 13, [BS16] Lemma 38 and Lemma 21 (see :func:`renyi.conversions.zcdp_to_approx_dp`)."""
        return conv.zcdp_to_approx_dp(self.rho, _check_delta(delta), self.xi)

    def best_delta(self, epsilon: float) -> Conversion:
        return conv.zcdp_delta(self.rho, self.xi, _check_epsilon(epsilon))

    def to_zcdp(self) -> ZCDP:
        return self

    def to_rdp(self) -> RDP:
        from renyi.guarantees.rdp import RDP

        return RDP(
            _Linear(self.xi, self.rho),
            eps_inf=self.xi if self.rho == 0.0 else math.inf,
            zcdp=(self.xi, self.rho),
            convex=True,
            label=repr(self),
        )

    def compose(self, k: int) -> ZCDP:
        """(kξ, kρ) ([BS16] Lemma 7)."""
        k = check_int("k", k)
        return ZCDP(k * self.rho, k * self.xi)

    def group(self, k: int) -> ZCDP:
        """(ξ·k·H_k, k²ρ) with H_k the k-th harmonic number ([BS16] Prop. 27; k²ρ is tight for the Gaussian)."""
        k = check_int("k", k)
        h_k = math.fsum(1.0 / i for i in range(1, k + 1)) if k < 10**6 else math.log(k) + 0.5772156649015329 + 1.0 / (2 * k)
        return ZCDP(k * k * self.rho, self.xi * k * h_k)


class _Linear(CurveValue):
    __slots__ = ("xi", "rho")

    def __init__(self, xi: float, rho: float) -> None:
        self.xi, self.rho = xi, rho

    def __call__(self, alpha: Any) -> Any:
        return self.xi + self.rho * alpha

    def __repr__(self) -> str:
        return f"{self.xi:g} + {self.rho:g}·α"


hooks.provide("ZCDP", ZCDP)  # named by RDP.to_zcdp (see renyi.core.hooks)
