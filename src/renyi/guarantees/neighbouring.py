"""Neighbouring relations: which pairs of datasets a guarantee is about, and how to restate one.

Every guarantee and every mechanism is stated under one of two relations:

* ``"add_remove"`` (the library's default): x′ is x with one record added or removed, so the
  dataset size is private;
* ``"replace_one"``: x and x′ have the same size and differ in one record (the size is public).

A bare guarantee (``RDP(...)``, ``ZCDP(0.5)``) that does not name a relation is taken under
the default, add/remove, and reports say so.

**Conversions.** One replacement is one removal followed by one addition, so two datasets
that are replace-one neighbours are at distance 2 in the add/remove graph, and an add/remove
guarantee gives a replace-one one through group privacy for groups of two:

==========================  ==============================  ==================================
add/remove guarantee        replace-one guarantee           source
==========================  ==============================  ==================================
ε-DP                        2ε                              group privacy (induction)
(ε, δ)-DP                   (2ε, (1 + e^ε)·δ)               group privacy (induction)
(ξ, ρ)-zCDP                 (3ξ, 4ρ)                        [BS16] Prop. 27 (k = 2)
μ-GDP                       2μ                              [DRS22] (a Gaussian with Δ → 2Δ)
RDP curve ε(α)              (2β/(2β−1))·ε(2β−1) + ε(2β)     [BS16] Lemma 26 (k = 2)
==========================  ==============================  ==================================

A mechanism whose noise is calibrated to a sensitivity is restated more tightly by recomputing
the sensitivity: a query with add/remove sensitivity Δ has replace-one sensitivity at most 2Δ
(triangle inequality through the intermediate dataset), so an add/remove ``Gaussian``,
``Laplace``, ``DiscreteGaussian`` or ``DiscreteLaplace`` becomes the same mechanism with
sensitivity 2Δ. For the Gaussian this equals the GDP row; for Laplace it is the exact curve at
ε = 2Δ/b, below the Lemma-26 bound. Other mechanisms use their guarantee's group-of-two row.

The converse is not valid in general: a mechanism that publishes the dataset size is 0-DP
under replace-one and not DP at all under add/remove. Approximate zCDP and approximate RDP
with δ > 0 have no group privacy ([BS16] §8). Both cases raise
:class:`~renyi.errors.NeighbouringError`, naming the items.

**Compositions.** :func:`align` gives every item of a composition one relation: the common
one when all agree, otherwise replace-one (the only relation both can be stated under),
converting the add/remove items as above.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from renyi.core import hooks
from renyi.core.errors import ConversionError, DomainError, NeighbouringError

__all__ = [
    "ADD_REMOVE",
    "REPLACE_ONE",
    "DEFAULT",
    "RELATIONS",
    "check_neighbouring",
    "words",
    "relation_of",
    "with_relation",
    "to_relation",
    "common_relation",
    "align",
]

ADD_REMOVE = "add_remove"
REPLACE_ONE = "replace_one"
#: the relation of a guarantee or mechanism that does not name one
DEFAULT = ADD_REMOVE
#: "add_remove": datasets differ by adding or removing one record (n is private);
#: "replace_one": datasets of the same size differ in one record (n is public).
RELATIONS = (ADD_REMOVE, REPLACE_ONE)

_WORDS = {ADD_REMOVE: "add/remove", REPLACE_ONE: "replace-one"}

# Mechanisms restated under replace-one by doubling their sensitivity (see the module
# docstring); matched by exact class name so that a subclass with other semantics is not
# silently included.
_SENSITIVITY_TYPES = frozenset({"Gaussian", "Laplace", "DiscreteGaussian", "DiscreteLaplace"})


def check_neighbouring(value: Any, name: str = "neighbouring") -> str:
    """``value`` if it names a neighbouring relation (one of :data:`RELATIONS`).

    Raises:
        DomainError: any other value.
    """
    if not isinstance(value, str) or value not in RELATIONS:
        raise DomainError(f"{name} must be one of {', '.join(RELATIONS)}; got {value!r}", name=name, value=value)
    return value


def words(relation: str) -> str:
    """The relation in words: ``"add/remove"`` or ``"replace-one"``."""
    return _WORDS[relation]


def relation_of(obj: Any) -> str:
    """The relation a guarantee or mechanism is stated under (the default when it names none)."""
    nb = getattr(obj, "neighbouring", DEFAULT)
    return nb if nb in RELATIONS else DEFAULT


def with_relation(g: Any, relation: str) -> Any:
    """A copy of guarantee ``g`` stated under ``relation`` (``g`` itself when it already is).

    This relabels; it does not convert. Use it only for a value computed under ``relation``.
    """
    if getattr(g, "neighbouring", None) == relation or not hasattr(g, "neighbouring"):
        return g
    items = getattr(g, "_items", None)
    out = copy.copy(g)
    object.__setattr__(out, "neighbouring", relation)
    inner = getattr(out, "curve", None)
    if hasattr(inner, "neighbouring") and hasattr(inner, "rdp_finite"):  # ApproxRDP's curve: the same statement
        object.__setattr__(out, "curve", with_relation(inner, relation))
    if items:
        object.__setattr__(out, "_items", items)
    return out


def _name(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 100 else text[:97] + "..."


def _refuse(objs: Sequence[Any], target: str, why: str) -> NeighbouringError:
    names = "; ".join(_name(o) for o in objs)
    return NeighbouringError(
        f"neighbouring: cannot state {names} under {words(target)} neighbours: {why}",
        name="neighbouring",
        value=tuple(objs),
    )


def _doubled_sensitivity(m: Any) -> Any:
    """``m`` with sensitivity 2Δ under replace-one, or None when that restatement is unknown."""
    import dataclasses

    if type(m).__name__ not in _SENSITIVITY_TYPES or getattr(m, "__dataclass_fields__", None) is None:
        return None
    try:
        return dataclasses.replace(m, sensitivity=2 * m.sensitivity, neighbouring=REPLACE_ONE)
    except (DomainError, TypeError, ValueError, OverflowError):
        return None  # e.g. 2Δ/b not finite: fall back to group privacy


def to_relation(obj: Any, target: str) -> Any:
    """``obj`` (a mechanism or a guarantee) restated under ``target``.

    Returns ``obj`` when it is already stated under ``target``. An add/remove item becomes a
    replace-one one: a noise mechanism by doubling its sensitivity, anything else by group
    privacy of two (see the module docstring); a composition by restating each of its items.
    The result is a mechanism when ``obj`` was one and a restatement as a mechanism is known,
    else a guarantee.

    Raises:
        NeighbouringError: replace-one → add/remove (not valid in general), or a guarantee
            with no group privacy (approximate zCDP / RDP with δ > 0).
    """
    from renyi.guarantees.base import Guarantee

    target = check_neighbouring(target)
    source = relation_of(obj)
    if source == target:
        return obj
    if source == REPLACE_ONE:
        raise _refuse([obj], target, "a replace-one guarantee does not imply an add/remove one "
                                     "(a mechanism may reveal the dataset size)")
    inner = getattr(obj, "_items", None) if isinstance(obj, Guarantee) else None
    if inner:
        compose = hooks.get("compose")

        _, converted = align(inner, target)
        return compose(*converted)
    if not isinstance(obj, Guarantee):
        m = _doubled_sensitivity(obj)
        if m is not None:
            return m
        direct = getattr(obj, "_as_replace_one", None)  # a mechanism's own replace-one analysis
        m = direct() if direct is not None and target == REPLACE_ONE else None
        if m is not None:
            return m
        g = obj.guarantee
    else:
        g = obj
    try:
        out = g.group(2)
    except ConversionError as exc:
        raise _refuse([obj], target, f"it has no group privacy ({exc})") from None
    return with_relation(out, target)


def common_relation(items: Iterable[tuple[Any, int]]) -> str:
    """The relation a composition of ``items`` is stated under: theirs when all agree, else
    replace-one (the only one an add/remove item can be restated under)."""
    rels = {relation_of(o) for o, _ in items}
    if len(rels) == 1:
        return rels.pop()
    return REPLACE_ONE if rels else DEFAULT


def align(items: Iterable[tuple[Any, int]], target: str | None = None) -> tuple[str, tuple[tuple[Any, int], ...]]:
    """(relation, items restated under it) for the (mechanism or guarantee, count) ``items``.

    ``target`` defaults to :func:`common_relation`. Every item that cannot be restated is
    named in one error.

    Raises:
        NeighbouringError: some item cannot be restated under the target relation.
    """
    items = tuple(items)
    target = common_relation(items) if target is None else check_neighbouring(target)
    out: list[tuple[Any, int]] = []
    bad: list[Any] = []
    reasons: list[str] = []
    for obj, k in items:
        try:
            out.append((to_relation(obj, target), k))
        except NeighbouringError as exc:
            bad.append(obj)
            reasons.append(str(exc).split(" neighbours: ", 1)[-1])
    if bad:
        raise _refuse(bad, target, "; ".join(dict.fromkeys(reasons)))
    return target, tuple(out)


hooks.provide("with_relation", with_relation)  # see renyi.core.hooks
