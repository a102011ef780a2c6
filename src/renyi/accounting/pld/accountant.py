"""An incremental PLD accountant for training loops.

``PLDAccountant`` records (mechanism, count) as training proceeds and answers ε at δ on
demand. Asking is cheap and nearly independent of the number of steps: the discretised steps
are cached per mechanism (the grid width is a power of two, so it changes rarely as the step
count grows) and composition is one FFT power per distinct mechanism, whatever the count.
Recording a step is O(1).

The sequence of mechanisms must be fixed in advance for the PLD bound to hold (as for every
PLD accountant); for fully adaptive choices use :class:`renyi.Accountant`'s RDP filters.

Examples:
    >>> from renyi.mechanisms import Gaussian
    >>> from renyi.subsampling import PoissonSubsampled
    >>> acct = PLDAccountant()
    >>> step = PoissonSubsampled(Gaussian(1.1), 0.025)
    >>> for _ in range(80):
    ...     acct.step(step)
    >>> lo, hi = acct.epsilon(1e-5)
    >>> 1.29 < lo <= hi < 1.32
    True
"""

from __future__ import annotations

from typing import Any

from renyi.core._validation import check_int
from renyi.accounting.pld._profiles import pairs_for
from renyi.accounting.pld.distribution import Bounds, PrivacyLossDistribution

__all__ = ["PLDAccountant"]


class PLDAccountant:
    """Accumulates mechanisms; ``epsilon(δ)``/``delta(ε)`` give certified brackets."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: dict[Any, int] = {}

    def step(self, mechanism: Any, count: int = 1) -> None:
        """Record ``count`` runs of ``mechanism`` (O(1))."""
        c = check_int("count", count)
        if mechanism not in self._counts:
            pairs_for(mechanism)  # a clear ConversionError now, not at the first question
            self._counts[mechanism] = 0
        self._counts[mechanism] += c

    compose = step

    @property
    def steps(self) -> int:
        """The total number of runs recorded."""
        return sum(self._counts.values())

    @property
    def pld(self) -> PrivacyLossDistribution:
        """The PLD of everything recorded so far."""
        return PrivacyLossDistribution(list(self._counts.items()))

    def epsilon(self, delta: float) -> Bounds:
        """Certified bracket on ε at δ for everything recorded so far."""
        return self.pld.epsilon(delta)

    def delta(self, epsilon: float) -> Bounds:
        """Certified bracket on δ at ε for everything recorded so far."""
        return self.pld.delta(epsilon)
