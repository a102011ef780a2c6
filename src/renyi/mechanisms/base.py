"""The mechanism protocol: a frozen description of a randomized algorithm that knows its own
privacy and can release a noisy answer."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from numpy.typing import ArrayLike

from renyi.guarantees.base import Conversion, Guarantee, items_of, route_methods, with_items
from renyi.core._names import MechanismMeta, accepts_neighboring
from renyi.guarantees.neighbouring import RELATIONS, check_neighbouring, to_relation, with_relation
from renyi.core import hooks
from renyi.core.errors import ConversionError

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from renyi.guarantees import RDP, ZCDP, ApproxDP

__all__ = ["Mechanism", "NEIGHBOURING_RELATIONS", "check_neighbouring"]

# The relations and their check live in renyi._neighbouring (guarantees need them too);
# re-exported here, where mechanisms have always imported them from.
NEIGHBOURING_RELATIONS = RELATIONS


class Mechanism(metaclass=MechanismMeta):
    """Abstract base of all mechanisms.

    Subclasses are frozen dataclasses that implement :attr:`guarantee` (the tightest guarantee
    value known for one run) and :meth:`release`. The privacy protocol (``rdp``, ``epsilon``,
    ``delta``, conversions, ``+``, ``k *``, ``group``) is answered through the guarantee, and a
    subclass may override any method with something tighter.

    ``best_epsilon``/``best_delta`` (so ``epsilon``/``delta``) are the minimum over the
    accounting routes of :mod:`renyi.routes` (exact GDP, PLD, RDP, zCDP, and the mechanism's
    own conversion, which a subclass writes as ``best_epsilon``/``best_delta`` and which stays
    reachable as ``method="native"``). Compositions (``k * m``, ``m.compose(k)``, ``m + n``)
    remember the mechanisms, so every route can still see them.
    """

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        route_methods(cls, guarantee=False)
        _stamp_guarantee(cls)

    #: the neighbouring relation the guarantee is stated under (overridden by a field where
    #: the mechanism lets the user choose)
    neighbouring: str = "add_remove"

    @property
    def neighboring(self) -> str:
        """The same as ``neighbouring`` (the US spelling, accepted everywhere as an alias)."""
        return self.neighbouring

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The tightest guarantee of one run of this mechanism."""

    @abstractmethod
    def release(self, value: Any, rng: Any = None) -> Any:
        """A noisy answer for the true ``value``; secure randomness unless ``rng`` is given."""

    # ----- privacy protocol, through the guarantee -------------------------------------
    def rdp(self, alpha: ArrayLike) -> Any:
        """ε(α): an upper bound on the Rényi divergence of order α between the outputs on
        neighbouring inputs, for α ∈ (1, ∞]; vectorized (a float for a scalar order, an array
        for an array), ``inf`` where the mechanism has no finite bound."""
        return self.guarantee.rdp(alpha)

    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        """The smallest valid ε at ``delta`` over the routes (or through ``method``)."""
        if method == "native":
            return self.guarantee.best_epsilon(delta, method="native")  # type: ignore[call-arg]
        return hooks.call("best_epsilon", self, delta, method)  # type: ignore[no-any-return]

    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        """The smallest valid δ at ``epsilon`` over the routes (or through ``method``)."""
        if method == "native":
            return self.guarantee.best_delta(epsilon, method="native")  # type: ignore[call-arg]
        return hooks.call("best_delta", self, epsilon, method)  # type: ignore[no-any-return]

    def epsilon(self, delta: float, method: str | None = None) -> float:
        """The smallest valid ε at ``delta`` ∈ (0, 1): an upper bound on the true ε.

        Args:
            delta: δ ∈ (0, 1).
            method: ``None`` (the minimum over every valid route) or one route by name
                (``"exact"``, ``"pld"``, ``"rdp"``, ``"zcdp"``, ``"native"``).
        """
        return self.best_epsilon(delta, method).value

    def delta(self, epsilon: float, method: str | None = None) -> float:
        """The smallest valid δ at ``epsilon`` ∈ [0, ∞): an upper bound on the true δ.

        Args:
            epsilon: ε ∈ [0, ∞).
            method: ``None`` (the minimum over every valid route) or one route by name.
        """
        return self.best_delta(epsilon, method).value

    def _epsilon_at(self, delta: float, method: str | None = None) -> float:
        # the callable half of an ``epsilon`` parameter (see ParameterValue)
        return self.best_epsilon(delta, method).value

    def _delta_at(self, epsilon: float, method: str | None = None) -> float:
        return self.best_delta(epsilon, method).value

    def to_approx_dp(self, delta: float) -> ApproxDP:
        """(ε, δ)-DP of one run at the given δ ∈ (0, 1), with the smallest valid ε."""
        return self.guarantee.to_approx_dp(delta)

    def to_zcdp(self) -> ZCDP:
        """The smallest (ξ, ρ)-zCDP guarantee of one run.

        Raises:
            ConversionError: the mechanism has no finite zCDP bound (e.g. a subsampled one).
        """
        return self.guarantee.to_zcdp()

    def to_rdp(self) -> RDP:
        """The RDP curve of one run, as a guarantee value."""
        return self.guarantee.to_rdp()

    def compose(self, k: int) -> Guarantee:
        """The k-fold composition: the guarantee's, remembering this mechanism k times."""
        return with_items(self.guarantee.compose(k), ((self, k),))

    def group(self, k: int) -> Guarantee:
        """The guarantee for groups of ``k`` ≥ 1 individuals (inputs at distance k)."""
        return self.guarantee.group(k)

    def __add__(self, other: object) -> Guarantee:
        from renyi.guarantees.composition import compose

        return compose(self, other)

    def __radd__(self, other: object) -> Guarantee:
        if isinstance(other, int) and other == 0:  # sum([...]) starts from 0
            return with_items(self.guarantee, items_of(self))
        from renyi.guarantees.composition import compose

        return compose(other, self)

    def __mul__(self, k: object) -> Guarantee:
        if isinstance(k, bool) or not isinstance(k, int):
            return NotImplemented
        return self.compose(k)

    __rmul__ = __mul__

    @accepts_neighboring
    def guarantee_under(self, neighbouring: str) -> Guarantee:
        """The guarantee of one run stated under ``neighbouring`` ("add_remove" or "replace_one").

        A replace-one step is one removal and one addition, so an add/remove mechanism gives a
        replace-one guarantee: its sensitivity recomputed (2Δ) for the noise mechanisms, else
        the group-of-two guarantee (see :mod:`renyi._neighbouring`). The converse does not
        hold (a replace-one guarantee may reveal n), so it raises
        :class:`~renyi.errors.NeighbouringError` (a :class:`ConversionError`).
        """
        out = to_relation(self, check_neighbouring(neighbouring))
        g: Guarantee = out if isinstance(out, Guarantee) else out.guarantee
        return g

    def privacy_loss(self) -> Any:
        """The privacy loss random variable on the worst-case neighbouring pair."""
        raise ConversionError(f"{type(self).__name__} has no known privacy-loss distribution")


def _stamp_guarantee(cls: type) -> None:
    """Make ``cls.guarantee`` carry the mechanism's neighbouring relation.

    Each mechanism computes its guarantee from its parameters; the relation those parameters
    are stated under is the mechanism's ``neighbouring``, so the guarantee is labelled with it
    here, once for every subclass, rather than in each ``guarantee`` property.
    """
    prop = cls.__dict__.get("guarantee")
    if not isinstance(prop, property) or prop.fget is None or getattr(prop.fget, "_stamped", False):
        return
    fget = prop.fget

    def guarantee(self: Any) -> Any:
        g = fget(self)
        nb = getattr(self, "neighbouring", None)
        return with_relation(g, nb) if isinstance(g, Guarantee) and isinstance(nb, str) else g

    doc = prop.__doc__ or fget.__doc__ or "The tightest guarantee of one run, stated under ``neighbouring``."
    guarantee.__doc__ = doc
    guarantee.__name__ = "guarantee"
    guarantee._stamped = True  # type: ignore[attr-defined]
    setattr(cls, "guarantee", property(guarantee, doc=doc))
