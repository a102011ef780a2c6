"""renyi: Rényi differential privacy and zero-concentrated differential privacy.

Guarantee values, composition, conversions, mechanisms, calibration and an accountant with a
durable ledger. Every number renyi returns is a valid upper bound on the privacy loss.

    >>> import renyi
    >>> renyi.ZCDP(rho=0.5).epsilon(1e-5) <= 4.7284
    True
"""

from __future__ import annotations

from ._version import __version__
from .accountant import Accountant, AccountantReport, Spend
from .calibration import Calibration, calibrate, calibrate_gaussian, calibrate_laplace
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
from .ledger import MemoryLedger, SQLiteLedger
from .mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExponentialMechanism,
    Gaussian,
    Laplace,
    Mechanism,
    ProposeTestRelease,
    RandomizedResponse,
    ptr_mode,
)

__all__ = [
    "__version__",
    "Accountant",
    "AccountantReport",
    "Spend",
    "MemoryLedger",
    "SQLiteLedger",
    "compose",
    "calibrate",
    "Calibration",
    "calibrate_gaussian",
    "calibrate_laplace",
    "Mechanism",
    "Gaussian",
    "Laplace",
    "RandomizedResponse",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "ExponentialMechanism",
    "ProposeTestRelease",
    "ptr_mode",
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
