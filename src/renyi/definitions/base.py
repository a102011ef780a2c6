"""The protocol every guarantee (and every mechanism) answers.

A *guarantee* is a value of a privacy definition. Subclasses implement the few primitive
methods (``rdp``, ``best_epsilon``, ``best_delta`` and the same-definition operations); the
rest of the protocol is derived here once.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._values import CurveValue
from .._validation import PROBABILITY_OPEN, NONNEGATIVE, check_int
from ..errors import ConversionError

if TYPE_CHECKING:  # pragma: no cover
    from .approx import ApproxDP
    from .rdp import RDP
    from .zcdp import ZCDP

__all__ = ["Guarantee", "Conversion", "ParameterValue"]


@dataclass(frozen=True, slots=True)
class Conversion:
    """The result of a conversion: a number, the order that achieved it, and the theorem used.

    Attributes:
        value: the converted quantity (an ε, a δ or a ρ); always a valid upper bound.
        witness: the Rényi order α at which ``value`` was evaluated, or ``None`` when the
            conversion is not order-based (exact Gaussian, pure DP, ...).
        method: a short citation of the bound used, e.g. ``"CKS20 Prop. 12"``.
    """

    value: float
    witness: float | None
    method: str

    def __float__(self) -> float:
        return self.value


class ParameterValue(float):
    """A guarantee's parameter that is also the protocol method of the same name.

    ``PureDP(1.0).epsilon`` is the float 1.0, and ``PureDP(1.0).epsilon(1e-5)`` is the
    protocol call "smallest ε at δ = 1e-5". Arithmetic on it gives plain floats.
    """

    __slots__ = ("_method",)

    def __new__(cls, value: float, method: Any) -> ParameterValue:
        obj = float.__new__(cls, value)
        obj._method = method
        return obj

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._method(*args, **kwargs)

    def __repr__(self) -> str:
        return float.__repr__(self)

    def __reduce__(self) -> tuple:
        return (float, (float(self),))


class Guarantee(ABC):
    """Abstract base of the guarantee values (``PureDP``, ``ZCDP``, ``RDP``, ...)."""

    __slots__ = ()

    #: short name of the definition, e.g. "zCDP"
    definition: str = "guarantee"

    # ----- primitives -------------------------------------------------------------------
    @abstractmethod
    def rdp(self, alpha: ArrayLike) -> Any:
        """ε(α), an upper bound on D_α between neighbouring outputs, for α ∈ (1, ∞].

        Vectorized: a scalar order gives a float, an array gives an array. ``inf`` where the
        definition gives no finite bound.
        """

    @abstractmethod
    def best_epsilon(self, delta: float) -> Conversion:
        """The smallest valid ε at ``delta`` ∈ (0, 1), with its witness order and method."""

    @abstractmethod
    def best_delta(self, epsilon: float) -> Conversion:
        """The smallest valid δ at ``epsilon`` ≥ 0, with its witness order and method."""

    @abstractmethod
    def compose(self, k: int) -> Guarantee:
        """The k-fold (adaptive) composition of this guarantee with itself."""

    @abstractmethod
    def group(self, k: int) -> Guarantee:
        """The guarantee for groups of ``k`` individuals (inputs at distance k)."""

    # ----- derived protocol ---------------------------------------------------------------
    def epsilon(self, delta: float) -> float:
        """The smallest valid ε at ``delta`` ∈ (0, 1) (an upper bound on the true ε)."""
        return self.best_epsilon(delta).value

    def delta(self, epsilon: float) -> float:
        """The smallest valid δ at ``epsilon`` ∈ [0, ∞) (an upper bound on the true δ)."""
        return self.best_delta(epsilon).value

    def to_approx_dp(self, delta: float) -> ApproxDP:
        """(ε, δ)-DP at the given δ with the smallest valid ε."""
        from .approx import ApproxDP

        delta = PROBABILITY_OPEN.check("delta", delta)
        return ApproxDP(self.epsilon(delta), delta)

    def to_rdp(self) -> RDP:
        """This guarantee as an RDP curve."""
        from .rdp import RDP

        return RDP(_GuaranteeCurve(self), eps_inf=float(self.rdp(math.inf)), label=repr(self))

    def to_zcdp(self) -> ZCDP:
        """The smallest (ξ, ρ)-zCDP guarantee implied by this one (ξ = 0 where possible)."""
        raise ConversionError(f"{type(self).__name__} has no zCDP conversion")

    def __add__(self, other: object) -> Guarantee:
        from ..composition import compose

        if not hasattr(other, "rdp") and not isinstance(other, Guarantee):
            return NotImplemented
        return compose(self, other)

    def __radd__(self, other: object) -> Guarantee:
        if isinstance(other, int) and other == 0:  # sum([...]) starts from 0
            return self
        from ..composition import compose

        if not hasattr(other, "rdp"):
            return NotImplemented
        return compose(other, self)

    def __mul__(self, k: object) -> Guarantee:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer, float)):
            return NotImplemented
        return self.compose(check_int("k", k))

    __rmul__ = __mul__


def _check_delta(delta: float) -> float:
    return PROBABILITY_OPEN.check("delta", delta)


def _check_epsilon(epsilon: float) -> float:
    return NONNEGATIVE.check("epsilon", epsilon)


class _GuaranteeCurve(CurveValue):
    """α ↦ g.rdp(α) for a guarantee g, equal to another exactly when the guarantees are equal
    (a bound method would compare its guarantee by identity)."""

    __slots__ = ("g",)

    def __init__(self, g: Guarantee) -> None:
        self.g = g

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return np.asarray(self.g.rdp(alpha), dtype=np.float64)

    def __repr__(self) -> str:
        return repr(self.g)
