"""renyi: Rényi differential privacy and zero-concentrated differential privacy.

Guarantee values, composition, conversions, mechanisms, calibration and an accountant with a
durable ledger. Every number renyi returns is a valid upper bound on the privacy loss.

    >>> import renyi
    >>> renyi.ZCDP(rho=0.5).epsilon(1e-5) <= 4.7284
    True
"""

from __future__ import annotations

from ._version import __version__
from .composition import compose
from .definitions import GDP, MCDP, RDP, ZCDP, ApproxDP, ApproxRDP, ApproxZCDP, Conversion, Guarantee, PureDP
from .errors import (
    BudgetExceededError,
    ConversionError,
    DomainError,
    LedgerError,
    RenyiError,
    RenyiNumericalWarning,
)

__all__ = [
    "__version__",
    "compose",
    "Guarantee",
    "Conversion",
    "PureDP",
    "ApproxDP",
    "RDP",
    "ApproxRDP",
    "ZCDP",
    "ApproxZCDP",
    "MCDP",
    "GDP",
    "RenyiError",
    "DomainError",
    "ConversionError",
    "BudgetExceededError",
    "LedgerError",
    "RenyiNumericalWarning",
]
