"""Privacy loss distributions: the tight numerical accounting route.

The contract used by :mod:`renyi.routes`:

* :func:`supports` — whether a dominating pair is known for a mechanism or guarantee value;
* :func:`epsilon_bounds` / :func:`delta_bounds` — a certified (lower, upper) bracket on the
  ε (or δ) of a composition given as (mechanism, count) pairs.

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

from ._profiles import supports as _supports
from .accountant import PLDAccountant
from .curves import GDPBound, TradeOff, gdp_mu, tradeoff
from .distribution import Bounds, PrivacyLossDistribution, delta_bounds, epsilon_bounds

__all__ = ["supports", "epsilon_bounds", "delta_bounds", "Bounds", "PrivacyLossDistribution",
           "PLDAccountant", "ROUTE_ENABLED", "tradeoff", "gdp_mu", "TradeOff", "GDPBound"]

#: Whether :func:`supports` offers the PLD engine to :mod:`renyi.routes` (the default minimum
#: over routes). Off by default for now: one PLD question costs 0.1–2 s, which the calibration
#: loops and the test suite cannot yet afford; set ``RENYI_PLD_ROUTE=1`` (or this flag) to
#: enable it. :func:`epsilon_bounds` and :func:`delta_bounds` work either way.
ROUTE_ENABLED: bool = os.environ.get("RENYI_PLD_ROUTE", "") not in ("", "0")


def supports(mechanism: object) -> bool:
    """True when a dominating pair is known for ``mechanism`` (and the route is enabled)."""
    return ROUTE_ENABLED and _supports(mechanism)
