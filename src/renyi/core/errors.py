"""Exceptions and warnings raised by renyi.

Every user error is a :class:`RenyiError`; out-of-domain parameters are a
:class:`DomainError`, which is also a :class:`ValueError` so that generic
``except ValueError`` handlers keep working.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "RenyiError",
    "DomainError",
    "ConversionError",
    "NeighbouringError",
    "BudgetExceededError",
    "LedgerError",
    "RenyiNumericalWarning",
]


class RenyiError(Exception):
    """Base class of every error raised on purpose by renyi."""


class DomainError(RenyiError, ValueError):
    """A parameter lies outside its documented domain.

    The message always names the parameter, the valid range and the value, e.g.
    ``"sigma must be in (0, inf); got -1.0"``.
    """

    def __init__(self, message: str, *, name: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.name = name
        self.value = value


class ConversionError(RenyiError, TypeError):
    """No valid conversion exists between two privacy definitions.

    For example, (ε, δ)-DP with δ > 0 has no RDP curve: asking for one raises this.
    """


class NeighbouringError(DomainError, ConversionError):
    """Guarantees stated under different neighbouring relations cannot be combined.

    Raised when an item must be restated under another relation and no valid conversion
    exists: a replace-one guarantee does not imply an add/remove one, and approximate zCDP or
    RDP with δ > 0 has no group privacy. It is a :class:`DomainError` (``name`` is
    ``"neighbouring"``, ``value`` the offending items) and a :class:`ConversionError`, so
    handlers of either catch it.
    """


class BudgetExceededError(RenyiError):
    """A spend was refused because it would exceed the budget; nothing was recorded.

    Attributes:
        requested: the guarantee that was asked for.
        remaining: what was left of the budget, in the budget's own terms.
    """

    def __init__(self, message: str, *, requested: Any = None, remaining: Any = None) -> None:
        super().__init__(message)
        self.requested = requested
        self.remaining = remaining


class LedgerError(RenyiError):
    """A ledger file is corrupted, foreign, or written by an incompatible version."""


class RenyiNumericalWarning(RuntimeWarning):
    """A computation could not be made accurate; the conservative value was returned."""
