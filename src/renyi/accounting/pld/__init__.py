"""Privacy loss distributions: the tight numerical accounting route.

The contract used by :mod:`renyi.routes`:

* :func:`supports` — whether a dominating pair is known for a mechanism or guarantee value;
* :func:`epsilon_bounds` / :func:`delta_bounds` ``(items, x, *, fallback=True)`` — a
  certified (lower, upper) bracket on the ε (or δ) of a composition given as (mechanism,
  count) pairs; ``fallback=False`` raises ``ConversionError`` where the grid cannot resolve
  the question (instead of answering with the RDP route's bound and a warning).

The richer API: :class:`PrivacyLossDistribution` (a value with ``+``, ``compose(k)``,
``epsilon(δ)``/``delta(ε)`` returning :class:`Bounds`), and the hypothesis-testing view:
:func:`tradeoff` (the attacker's TPR at given FPRs, certified bracket) and :func:`gdp_mu` (the
tightest certified μ-GDP statement).

Examples:
    >>> from renyi.mechanisms import Gaussian
    >>> from renyi.subsampling import PoissonSubsampled
    >>> lo, hi = epsilon_bounds([(PoissonSubsampled(Gaussian(1.1), 0.025), 80)], 1e-5)
    >>> 1.29 < lo <= hi < 1.32
    True
"""

from __future__ import annotations

import os

from renyi.accounting.pld._profiles import supports as _supports
from renyi.accounting.pld import _allocation  # noqa: F401  (registers random allocation's pairs)
from renyi.accounting.pld.accountant import PLDAccountant
from renyi.accounting.pld.curves import GDPBound, TradeOff, gdp_mu, tradeoff
from renyi.accounting.pld.distribution import (Bounds, PrivacyLossDistribution, bracket_note, delta_bounds,
                                               epsilon_bounds, epsilon_bracket)

__all__ = ["supports", "epsilon_bounds", "epsilon_bracket", "bracket_note", "delta_bounds", "Bounds",
           "PrivacyLossDistribution", "PLDAccountant", "ROUTE_ENABLED", "tradeoff", "gdp_mu", "TradeOff", "GDPBound"]

#: Whether :func:`supports` offers the PLD engine to :mod:`renyi.routes` for the default
#: minimum over routes. On by default; ``RENYI_PLD_ROUTE=0`` in the environment (or setting
#: this flag to False) is the escape hatch, leaving the PLD route to an explicit
#: ``method="pld"`` and to reports. :func:`epsilon_bounds` and :func:`delta_bounds` work either
#: way.
ROUTE_ENABLED: bool = os.environ.get("RENYI_PLD_ROUTE", "1").strip().lower() not in ("0", "false", "no", "off")


def supports(mechanism: object) -> bool:
    """True when a dominating pair is known for ``mechanism`` (and the route is enabled)."""
    return ROUTE_ENABLED and _supports(mechanism)
