"""Composition of guarantees and mechanisms.

:func:`compose` takes a heterogeneous list and returns the tightest type that holds for all
of it ([Mir17] Prop. 1; [BS16] Lemma 7):

==============================================  ===============================================
items                                           result
==============================================  ===============================================
only GDP (Gaussian mechanisms)                  GDP, μ² adds: exact ([DRS19])
only pure DP                                    PureDP, ε adds
only (ε, δ)-DP and pure DP                      ApproxDP, basic composition (Σε, Σδ)
GDP, zCDP, mCDP, pure DP (no RDP curve)         ZCDP, (ξ, ρ) add ([BS16] Lemma 7)
any RDP curve, nothing approximate              RDP, curves add pointwise ([Mir17] Prop. 1)
approximate items, no RDP curve                 ApproxZCDP ([BS16] Lemma 37, §8)
approximate items with an RDP curve             ApproxRDP ([BS16] Lemma 37)
==============================================  ===============================================

All items are first stated under one neighbouring relation (:mod:`renyi._neighbouring`): a
mix of add/remove and replace-one items is composed under replace-one, each add/remove item
converted by group privacy of two (or, for a noise mechanism, with its sensitivity doubled).

Examples:
    >>> from renyi.definitions import GDP, PureDP, ZCDP
    >>> compose(GDP(1.0), GDP(1.0))
    GDP(mu=1.4142135623730951)
    >>> compose(ZCDP(0.1), PureDP(1.0))
    ZCDP(rho=0.5621171572600098)
"""

from __future__ import annotations

import copy
import math
from typing import Any, Protocol, overload

import numpy as np

from renyi.core import _logmath as lm
from renyi.guarantees import conversions as conv
from renyi.guarantees.neighbouring import align, common_relation, relation_of, with_relation
from renyi.core._validation import NONNEGATIVE, PROBABILITY_OPEN, UNIT_CLOSED_OPEN, check_int, check_real
from renyi.guarantees import GDP, MCDP, RDP, ZCDP, ApproxDP, ApproxRDP, ApproxZCDP, Guarantee, PureDP
from renyi.guarantees.base import Item, items_of, with_items
from renyi.guarantees.rdp import _Sum
from renyi.guarantees.zcdp import _Linear
from renyi.core.errors import DomainError
from renyi.core import hooks
from renyi.guarantees.approx import advanced_composition, bs16_cor39, kov_delta, optimal_homogeneous_composition


__all__ = [
    "compose",
    "as_guarantee",
    "advanced_composition",
    "optimal_homogeneous_composition",
    "kov_delta",
    "bs16_cor39",
]


def as_guarantee(item: Any) -> Guarantee:
    """The guarantee of a guarantee or a mechanism (anything with a ``guarantee`` attribute)."""
    if isinstance(item, Guarantee):
        return item
    g = getattr(item, "guarantee", None)
    if isinstance(g, Guarantee):
        return g
    raise TypeError(f"cannot compose {type(item).__name__}: expected a guarantee or a mechanism")


def _expand(items: tuple[Any, ...]) -> list[tuple[Guarantee, int]]:
    """(per-run guarantee, count) pairs: counts are applied only after each run has been
    converted to the result's definition, which keeps e.g. k × ε-DP at k·ε·tanh(ε/2) as zCDP
    rather than (kε)·tanh(kε/2)."""
    out: list[tuple[Guarantee, int]] = []
    for it in items:
        if isinstance(it, tuple) and len(it) == 2 and not isinstance(it[0], (int, float)):
            g, k = it
            out.append((as_guarantee(g), check_int("count", k)))
        elif isinstance(it, (list, tuple)):
            out.extend(_expand(tuple(it)))
        else:
            out.append((as_guarantee(it), 1))
    return out


def _combined_delta(deltas: list[tuple[float, int]]) -> float:
    # 1 − Π(1 − δ_i)^{k_i} ([BS16] §8), computed without cancellation.
    s = math.fsum(k * math.log1p(-d) for d, k in deltas if d > 0)
    return min(conv.round_up(-math.expm1(s)), math.nextafter(1.0, 0.0)) if s < 0 else 0.0


def _as_zcdp(g: Guarantee) -> tuple[float, float]:
    """(ξ, ρ) for the zCDP-like types (GDP, ZCDP, MCDP, PureDP)."""
    z = g.to_zcdp()
    return z.xi, z.rho


def _as_curve(g: Guarantee) -> RDP:
    if isinstance(g, RDP):
        return g
    return g.to_rdp()


def _sum_curves(curves: list[RDP]) -> RDP:
    if len(curves) == 1:
        return curves[0]
    zc = None
    if all(c.zcdp is not None for c in curves):
        zc = (math.fsum(c.zcdp[0] for c in curves), math.fsum(c.zcdp[1] for c in curves))  # type: ignore[index]
    orders = tuple(sorted({a for c in curves for a in c.orders}))
    return RDP(
        _Sum([c.rdp_finite for c in curves]),
        eps_inf=math.fsum(c.eps_inf for c in curves) if all(math.isfinite(c.eps_inf) for c in curves) else math.inf,
        zcdp=zc,
        convex=all(c.convex for c in curves),
        orders=orders,
        label=" + ".join(c.label or "curve" for c in curves),
    )


def route_items(items: tuple[Any, ...]) -> tuple[Item, ...]:
    """The (mechanism or guarantee, count) items of ``compose``'s arguments, flattened through
    nested compositions (what :mod:`renyi.routes` accounts for)."""
    out: list[Item] = []
    for it in items:
        if isinstance(it, tuple) and len(it) == 2 and not isinstance(it[0], (int, float)):
            obj, k = it
            as_guarantee(obj)
            out.extend(items_of(obj, check_int("count", k)))
        elif isinstance(it, (list, tuple)):
            out.extend(route_items(tuple(it)))
        else:
            as_guarantee(it)
            out.extend(items_of(it))
    return tuple(out)


# Precise result types for the homogeneous cases of the table above (the order matters: the
# first matching overload wins, as the first matching row of the table does).
class _GDPMechanism(Protocol):
    """A mechanism whose one run is exactly μ-GDP (the Gaussian mechanism), named by its shape so
    that this layer need not import the mechanisms above it (annotations only)."""

    @property
    def guarantee(self) -> GDP: ...


@overload
def compose(*items: GDP | _GDPMechanism | tuple[GDP | _GDPMechanism, int]) -> GDP: ...  # type: ignore[overload-overlap]
@overload
def compose(*items: PureDP | tuple[PureDP, int]) -> PureDP: ...  # type: ignore[overload-overlap]
@overload
def compose(*items: PureDP | ApproxDP | tuple[PureDP | ApproxDP, int]) -> ApproxDP: ...  # type: ignore[overload-overlap]
@overload
def compose(*items: ZCDP | GDP | PureDP | _GDPMechanism | tuple[ZCDP | GDP | PureDP | _GDPMechanism, int]) -> ZCDP: ...
@overload
def compose(*items: RDP | tuple[RDP, int]) -> RDP: ...
@overload
def compose(*items: Any) -> Guarantee: ...


def compose(*items: Any) -> Guarantee:
    """Compose guarantees and mechanisms (adaptively) into the tightest type that holds.

    The result also remembers the composed mechanisms and guarantees, so that its
    ``epsilon``/``delta`` are the minimum over the accounting routes of :mod:`renyi.routes`
    (exact GDP, PLD, RDP, zCDP), which can use the mechanisms themselves.

    All items are stated under one neighbouring relation (:mod:`renyi._neighbouring`): theirs
    when they agree; otherwise replace-one, the only relation both can be stated under, to
    which each add/remove item is converted first (a noise mechanism with its sensitivity
    doubled, any other item by group privacy of two). The result, and the items its routes
    see, are the converted ones; ``result.neighbouring`` names the relation.

    Args:
        *items: guarantees, mechanisms, ``(item, count)`` pairs, or lists of these.

    Returns:
        A guarantee for running all of them; see the module docstring for the type rules.

    Raises:
        NeighbouringError: an add/remove item has no replace-one statement (approximate zCDP
            or RDP with δ > 0 has no group privacy); the message names the items.
    """
    fast = _zcdp_values(items)
    if fast is not None:
        return fast
    flat = route_items(items)
    target = common_relation(flat)
    if all(relation_of(o) == target for o, _ in flat):
        return with_items(with_relation(_compose(items), target), flat)
    _, converted = align(flat, target)
    return with_items(with_relation(_compose(converted), target), converted)


def _merged(gs: list[tuple[Guarantee, int]]) -> list[tuple[Guarantee, int]]:
    """Equal guarantees merged into one (guarantee, total count): 10⁵ ZCDP values of a few
    kinds compose as a few items (the per-item loops below took 21 s for 10⁵). Unhashable
    guarantees are kept as they are."""
    if len(gs) < _MERGE_AT:
        return gs
    out: dict[Any, int] = {}
    rest: list[tuple[Guarantee, int]] = []
    for g, k in gs:
        try:
            out[g] = out.get(g, 0) + k
        except TypeError:  # unhashable
            rest.append((g, k))
    return [*out.items(), *rest]


#: Lists at least this long are merged by equal values (:func:`_merged`, :func:`_zcdp_values`,
#: :func:`_lines_merged`); shorter ones are composed item by item, as they always were.
_MERGE_AT = 64


def zcdp_sum(pairs: Any) -> ZCDP | None:
    """The sum of a long list of plain ZCDP values, as :func:`_compose` computes it, or None.

    ``pairs``: (value, count) pairs. None unless there are at least :data:`_MERGE_AT` of them
    and every value is a plain :class:`ZCDP` (not a subclass, no remembered items) under one
    relation. Equal values are merged (counts added) and ρ = Σ kρ, ξ = Σ kξ are summed
    exactly (``math.fsum``), which is what the general path gives for merged lists; this one
    reads each value once (10⁵ values: milliseconds, not seconds).
    """
    merged = _plain_zcdp_merged(pairs)
    return None if merged is None else _sum_merged(merged)


def _sum_merged(merged: list[tuple[ZCDP, int]]) -> ZCDP:
    if len(merged) == 1:
        g, k = merged[0]
        out = g if k == 1 else g.compose(k)
        assert isinstance(out, ZCDP)
        return out
    return ZCDP(math.fsum(k * g.rho for g, k in merged), math.fsum(k * g.xi for g, k in merged))


def _plain_zcdp_merged(pairs: Any, counted: bool = True) -> list[tuple[ZCDP, int]] | None:
    """(value, count) pairs (or values, ``counted=False``) merged by equal value, or None."""
    if len(pairs) < _MERGE_AT:
        return None
    counts: dict[tuple[float, float, str], list[Any]] = {}
    get = counts.get
    for p in pairs:
        g, k = p if counted else (p, 1)
        if type(g) is not ZCDP or type(k) is not int or getattr(g, "_items", None):
            return None  # a composed value's items may have better routes than its ZCDP
        key = (g.rho, g.xi, g.neighbouring)
        hit = get(key)
        if hit is None:
            counts[key] = [g, k]
        else:
            hit[1] += k
    if len({key[2] for key in counts}) != 1:
        return None  # mixed relations: the general path states them under one
    return [(g, int(k)) for g, k in counts.values()]


def _zcdp_values(items: tuple[Any, ...]) -> Guarantee | None:
    """``compose`` of a long list of plain ZCDP values (given as arguments or as one list),
    or None: the general path hashes, flattens and checks each of 10⁵ values several times
    (4 s); this reads each once and gives the same result (:func:`zcdp_sum`), remembering the
    values merged in first-seen order, as ``with_items`` would."""
    if len(items) == 1 and isinstance(items[0], list):
        items = tuple(items[0])
    merged = _plain_zcdp_merged(items, counted=False)
    if merged is None:
        return None
    total = _sum_merged(merged)
    out: Guarantee = copy.copy(with_relation(total, merged[0][0].neighbouring))
    object.__setattr__(out, "_items", tuple(merged))
    return out


def _lines_merged(gs: list[tuple[Guarantee, int]]) -> list[tuple[Guarantee, int]]:
    """The RDP curves that are zCDP lines ξ + ρα summed into one line (first, in place of
    the first of them): 10⁵ zCDP values as curves evaluated one by one at every order took
    minutes; the line's (ξ, ρ) are the exact sums (``math.fsum``)."""
    lines = [(g, k) for g, k in gs if type(g) is RDP and type(g.fn) is _Linear]
    if len(lines) < 2 or len(gs) < _MERGE_AT:
        return gs
    xi = math.fsum(k * g.fn.xi for g, k in lines)  # type: ignore[attr-defined]
    rho = math.fsum(k * g.fn.rho for g, k in lines)  # type: ignore[attr-defined]
    line: RDP | None = ZCDP(rho, xi).to_rdp()
    out: list[tuple[Guarantee, int]] = []
    for g, k in gs:
        if type(g) is RDP and type(g.fn) is _Linear:
            if line is not None:
                out.append((line, 1))
                line = None
        else:
            out.append((g, k))
    return out


def _compose(items: tuple[Any, ...]) -> Guarantee:
    gs = _merged(_expand(items))
    if not gs:
        raise DomainError("compose needs at least one guarantee or mechanism; got none")
    if len(gs) == 1:
        g, k = gs[0]
        return g if k == 1 else g.compose(k)
    kinds = [g for g, _ in gs]
    if all(isinstance(g, GDP) for g in kinds):
        return GDP(math.sqrt(math.fsum(k * g.mu**2 for g, k in gs)))  # type: ignore[attr-defined]
    pure = [(g, k) for g, k in gs if isinstance(g, PureDP)]
    if len(pure) == len(gs):
        return PureDP(math.fsum(k * float(g.epsilon) for g, k in pure))
    approx = [(g, k) for g, k in gs if isinstance(g, ApproxDP)]
    if len(pure) + len(approx) == len(gs):
        eps = math.fsum(k * float(g.epsilon) for g, k in pure + approx)
        d = math.fsum(k * float(g.delta) for g, k in approx)
        return ApproxDP(eps, min(conv.round_up(d), math.nextafter(1.0, 0.0)))

    approximate = any(isinstance(g, (ApproxDP, ApproxZCDP, ApproxRDP)) and float(g.delta) > 0 for g in kinds)
    has_curve = any(isinstance(g, (RDP, ApproxRDP)) for g in kinds)
    zcdp_like = (GDP, ZCDP, MCDP, PureDP)
    deltas: list[tuple[float, int]] = []

    if not has_curve:
        parts_xi, parts_rho = [], []
        for g, k in gs:
            if isinstance(g, ApproxDP):
                r, x, d = conv.approx_dp_to_approx_zcdp(float(g.epsilon), float(g.delta))
            elif isinstance(g, ApproxZCDP):
                r, x, d = g.rho, g.xi, float(g.delta)
            elif isinstance(g, zcdp_like):
                x, r = _as_zcdp(g)
                d = 0.0
            else:
                raise TypeError(f"cannot compose {type(g).__name__}")
            parts_xi.append(k * x)
            parts_rho.append(k * r)
            deltas.append((d, k))
        xi, rho = math.fsum(parts_xi), math.fsum(parts_rho)
        if not approximate:
            return ZCDP(rho, xi)
        return ApproxZCDP(rho, xi, _combined_delta(deltas))

    curves: list[RDP] = []
    for g, k in _lines_merged(gs):
        if isinstance(g, ApproxRDP):
            curve, d = g.curve, float(g.delta)
        elif isinstance(g, ApproxDP):
            curve, d = conv.pure_dp_to_rdp(float(g.epsilon)), float(g.delta)
        elif isinstance(g, ApproxZCDP):
            curve, d = ZCDP(g.rho, g.xi).to_rdp(), float(g.delta)
        else:
            curve, d = _as_curve(g), 0.0
        curves.append(curve.compose(k))
        deltas.append((d, k))
    total = _sum_curves(curves)
    if not approximate:
        return total
    return ApproxRDP(total, _combined_delta(deltas))


# ``a + b``, ``k * a`` and ``m.compose(k)`` on values compose here (see renyi.core.hooks).
hooks.provide("compose", compose)
