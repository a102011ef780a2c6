"""The protocol every guarantee (and every mechanism) answers.

A *guarantee* is a value of a privacy definition. Subclasses implement the few primitive
methods (``rdp``, ``best_epsilon``, ``best_delta`` and the same-definition operations); the
rest of the protocol is derived here once.
"""

from __future__ import annotations

import copy
import functools
import math
from abc import abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.core._names import MechanismMeta
from renyi.core._values import CurveValue
from renyi.core._validation import PROBABILITY_OPEN, NONNEGATIVE, check_int
from renyi.core import hooks
from renyi.core.errors import ConversionError

if TYPE_CHECKING:  # pragma: no cover
    from renyi.guarantees.approx import ApproxDP
    from renyi.guarantees.rdp import RDP
    from renyi.guarantees.zcdp import ZCDP

__all__ = ["Guarantee", "Conversion", "ParameterValue", "Item", "items_of", "with_items", "route_methods"]

#: the relation of a guarantee that names none (see :mod:`renyi._neighbouring`)
DEFAULT_NEIGHBOURING = "add_remove"


def nb_repr(g: Any) -> str:
    """``", neighbouring='replace_one'"`` for a guarantee not under the default relation, else ""."""
    nb = getattr(g, "neighbouring", DEFAULT_NEIGHBOURING)
    return "" if nb == DEFAULT_NEIGHBOURING else f", neighbouring={nb!r}"

#: One entry of a composition: a mechanism or a guarantee, and how many times it runs.
Item = tuple[Any, int]


@dataclass(frozen=True, slots=True)
class Conversion:
    """The result of a conversion: a number, the order that achieved it, and the theorem used.

    Attributes:
        value: the converted quantity (an ε, a δ or a ρ); always a valid upper bound.
        witness: the Rényi order α at which ``value`` was evaluated, or ``None`` when the
            conversion is not order-based (exact Gaussian, pure DP, ...).
        method: for a guarantee's own conversion, a short citation of the bound used (e.g.
            ``"CKS20 Prop. 12"``); for the answer of a mechanism or a composition, the name of
            the accounting route that gave it (``"exact"``, ``"pld"``, ``"rdp"``, ``"zcdp"``,
            ... — see :mod:`renyi.routes`).
        lower: a lower bound on the true value when the route brackets it (the PLD route:
            ``lower ≤ truth ≤ value``); ``None`` for routes that only bound from above.
        detail: for a route's answer, the citation of the bound the route used.
    """

    value: float
    witness: float | None
    method: str
    lower: float | None = None
    detail: str = ""

    def __float__(self) -> float:
        return self.value


class ParameterValue(float):
    """A guarantee's parameter that is also the protocol method of the same name.

    ``PureDP(1.0).epsilon`` is the float 1.0, and ``PureDP(1.0).epsilon(1e-5)`` is the
    protocol call "smallest ε at δ = 1e-5". Arithmetic on it gives plain floats.
    """

    __slots__ = ("_method",)
    _method: Any

    def __new__(cls, value: float, method: Any) -> ParameterValue:
        obj = float.__new__(cls, value)
        obj._method = method
        return obj

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._method(*args, **kwargs)

    def __repr__(self) -> str:
        return float.__repr__(self)

    def __reduce__(self) -> tuple[type[float], tuple[float]]:
        return (float, (float(self),))


class Guarantee(metaclass=MechanismMeta):
    """Abstract base of the guarantee values (``PureDP``, ``ZCDP``, ``RDP``, ...).

    A guarantee made by composition (:func:`renyi.compose`, ``a + b``, ``k * m``,
    ``m.compose(k)``) also remembers *what* was composed: the (mechanism or guarantee, count)
    items (:func:`items_of`). Its ``best_epsilon``/``best_delta`` (and so ``epsilon``/``delta``)
    are then the minimum over the accounting routes of :mod:`renyi.routes`, which can use the
    mechanisms themselves (e.g. their privacy loss distributions), not only the composed value.
    A guarantee built directly (``ZCDP(0.5)``) answers with its own conversion, as does any
    guarantee asked with ``method="native"``. ``method="exact" | "pld" | "rdp" | "zcdp"``
    selects one route.
    """

    # The composed items (a tuple of (mechanism or guarantee, count)); unset on guarantees
    # that were not made by composition. Not a dataclass field: it takes no part in equality,
    # hashing, repr or serialisation, so a composed value behaves exactly like its guarantee.
    __slots__ = ("_items",)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        route_methods(cls, guarantee=True)

    #: short name of the definition, e.g. "zCDP"
    definition: str = "guarantee"

    #: the neighbouring relation the guarantee is stated under: "add_remove" (the default,
    #: also for a guarantee constructed without one) or "replace_one". Each subclass has it as
    #: a keyword-only field, so it takes part in equality, hashing and serialisation.
    neighbouring: str

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
    def epsilon(self, delta: float, method: str | None = None) -> float:
        """The smallest valid ε at ``delta`` ∈ (0, 1) (an upper bound on the true ε).

        ``method`` selects one accounting route (see :mod:`renyi.routes`); by default the
        minimum over the valid routes.
        """
        return self.best_epsilon(delta, method=method).value  # type: ignore[call-arg]

    def delta(self, epsilon: float, method: str | None = None) -> float:
        """The smallest valid δ at ``epsilon`` ∈ [0, ∞) (an upper bound on the true δ)."""
        return self.best_delta(epsilon, method=method).value  # type: ignore[call-arg]

    def to_approx_dp(self, delta: float) -> ApproxDP:
        """(ε, δ)-DP at the given δ with the smallest valid ε."""
        delta = PROBABILITY_OPEN.check("delta", delta)
        return hooks.get("ApproxDP")(  # type: ignore[no-any-return]
            self.epsilon(delta), delta, neighbouring=getattr(self, "neighbouring", DEFAULT_NEIGHBOURING))

    def to_rdp(self) -> RDP:
        """This guarantee as an RDP curve."""
        return hooks.get("RDP")(  # type: ignore[no-any-return]
            _GuaranteeCurve(self), eps_inf=float(self.rdp(math.inf)), label=repr(self),
                   neighbouring=getattr(self, "neighbouring", DEFAULT_NEIGHBOURING))

    def to_zcdp(self) -> ZCDP:
        """The smallest (ξ, ρ)-zCDP guarantee implied by this one (ξ = 0 where possible)."""
        raise ConversionError(f"{type(self).__name__} has no zCDP conversion")

    def __add__(self, other: object) -> Guarantee:
        if not hasattr(other, "rdp") and not isinstance(other, Guarantee):
            return NotImplemented
        return hooks.call("compose", self, other)  # type: ignore[no-any-return]

    def __radd__(self, other: object) -> Guarantee:
        if isinstance(other, int) and other == 0:  # sum([...]) starts from 0
            return self
        if not hasattr(other, "rdp"):
            return NotImplemented
        return hooks.call("compose", other, self)  # type: ignore[no-any-return]

    def __mul__(self, k: object) -> Guarantee:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer, float)):
            return NotImplemented
        return self.compose(check_int("k", k))

    __rmul__ = __mul__


def _check_delta(delta: float) -> float:
    return PROBABILITY_OPEN.check("delta", delta)


def _check_epsilon(epsilon: float) -> float:
    return NONNEGATIVE.check("epsilon", epsilon)


# --------------------------------------------------------------------------------------
# Composed items and route dispatch
# --------------------------------------------------------------------------------------
def _item_key(obj: Any) -> Any:
    try:
        hash(obj)
    except TypeError:
        return ("id", id(obj))
    return (type(obj), obj)


def merge_items(items: Iterable[Item]) -> tuple[Item, ...]:
    """Items with equal (mechanism or guarantee) entries merged by adding their counts.

    Merging keeps homogeneous compositions homogeneous (one T-fold power in the PLD route
    rather than T factors) and keeps the list short when ``a + b + ...`` is chained.
    """
    out: dict[Any, list[Any]] = {}
    for obj, k in items:
        key = _item_key(obj)
        if key in out:
            out[key][1] += k
        else:
            out[key] = [obj, k]
    return tuple((o, int(k)) for o, k in out.values())


def items_of(obj: Any, count: int = 1) -> tuple[Item, ...]:
    """The (mechanism or guarantee, count) items that ``count`` runs of ``obj`` consist of.

    A composed guarantee gives its remembered items (counts multiplied by ``count``); any other
    guarantee or mechanism is one item.
    """
    inner = getattr(obj, "_items", None) if isinstance(obj, Guarantee) else None
    if inner:
        return tuple((o, k * count) for o, k in inner) if count != 1 else inner
    return ((obj, count),)


def with_items(g: Guarantee, items: Iterable[Item]) -> Guarantee:
    """A copy of ``g`` that remembers ``items`` (see :class:`Guarantee`).

    A copy, never ``g`` itself: guarantees may be shared (a mechanism's guarantee, a cached
    value), and the items of one composition must not leak into another.
    """
    merged = merge_items(items)
    out = copy.copy(g)
    object.__setattr__(out, "_items", merged)
    return out


def _routed_conversion(native: Callable[..., Conversion], which: str, guarantee: bool) -> Callable[..., Conversion]:
    @functools.wraps(native)
    def conversion(self: Any, x: float, method: str | None = None) -> Conversion:
        if method == "native" or (guarantee and method is None and not getattr(self, "_items", None)):
            return native(self, x)
        return hooks.call("best_" + which, self, x, method)  # type: ignore[no-any-return]

    conversion._native = native  # type: ignore[attr-defined]
    return conversion


def _routed_compose(native: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(native)
    def compose(self: Any, k: int, *args: Any, **kwargs: Any) -> Any:
        out = native(self, k, *args, **kwargs)
        if out is self or not isinstance(out, Guarantee):
            return out
        return with_items(out, items_of(self, int(k)))

    compose._native = native  # type: ignore[attr-defined]
    return compose


def route_methods(cls: type, *, guarantee: bool) -> None:
    """Make ``cls``'s own ``best_epsilon``/``best_delta`` answer through :mod:`renyi.routes`.

    Each class writes only its own conversion (``best_epsilon(delta)``); this wraps it, once,
    so that every guarantee and mechanism — including classes added later — takes
    ``method=`` and answers for compositions with the minimum over the routes. The class's
    own conversion stays reachable as ``method="native"``. For guarantees, ``compose`` is
    wrapped so that a k-fold composition remembers its items.
    """
    for name in ("best_epsilon", "best_delta"):
        f = cls.__dict__.get(name)
        if f is not None and not hasattr(f, "_native") and not getattr(f, "__isabstractmethod__", False):
            setattr(cls, name, _routed_conversion(f, name[5:], guarantee))
    if guarantee:
        f = cls.__dict__.get("compose")
        if f is not None and not hasattr(f, "_native") and not getattr(f, "__isabstractmethod__", False):
            setattr(cls, "compose", _routed_compose(f))
        for name in ("compose", "group", "to_zcdp", "to_rdp", "to_approx_dp", "to_approx_zcdp"):
            f = cls.__dict__.get(name)
            if f is not None and not hasattr(f, "_same_relation") and not getattr(f, "__isabstractmethod__", False):
                setattr(cls, name, _same_relation(f))


def _same_relation(method: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a guarantee → guarantee method (composition, group privacy, a conversion between
    definitions) so that its result is stated under the same neighbouring relation as its
    input: none of them changes which datasets are neighbours."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = method(self, *args, **kwargs)
        nb = getattr(self, "neighbouring", DEFAULT_NEIGHBOURING)
        if isinstance(out, Guarantee) and nb != DEFAULT_NEIGHBOURING:
            out = hooks.call("with_relation", out, nb)
        return out

    wrapper._same_relation = True  # type: ignore[attr-defined]
    return wrapper
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
