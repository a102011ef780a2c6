"""renyi: Rényi differential privacy and zero-concentrated differential privacy.

Guarantee values, composition, conversions, mechanisms, calibration and an accountant with a
durable ledger. Every number renyi returns is a valid upper bound on the privacy loss.

    >>> import renyi
    >>> renyi.ZCDP(rho=0.5).epsilon(1e-5) <= 4.7284
    True

Names are imported lazily (PEP 562) so that ``renyi --help`` starts without numpy/scipy.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from ._version import __version__

# public name -> the module that owns it
_EXPORTS: dict[str, str] = {
    # guarantee values
    "Guarantee": ".definitions",
    "Conversion": ".definitions",
    "PureDP": ".definitions",
    "ApproxDP": ".definitions",
    "RDP": ".definitions",
    "ApproxRDP": ".definitions",
    "ZCDP": ".definitions",
    "ApproxZCDP": ".definitions",
    "MCDP": ".definitions",
    "GDP": ".definitions",
    "compose": ".composition",
    # mechanisms and transformers
    "Mechanism": ".mechanisms",
    "Gaussian": ".mechanisms",
    "Laplace": ".mechanisms",
    "RandomizedResponse": ".mechanisms",
    "DiscreteGaussian": ".mechanisms",
    "DiscreteLaplace": ".mechanisms",
    "ExponentialMechanism": ".mechanisms",
    "ProposeTestRelease": ".mechanisms",
    "ptr_mode": ".mechanisms",
    "PoissonSubsampled": ".subsampling",
    "SubsampledWithoutReplacement": ".subsampling",
    "RandomAllocation": ".allocation",
    "Shuffled": ".allocation",
    "TruncatedPoisson": ".truncation",
    "Tuning": ".tuning",
    # divergences and the privacy loss
    "renyi_divergence": ".divergences",
    "PrivacyLoss": ".plrv",
    "power_means": ".plrv",
    "check_rdp": ".plrv",
    "check_zcdp": ".plrv",
    # calibration and accounting
    "calibrate": ".calibration",
    "Calibration": ".calibration",
    "calibrate_gaussian": ".calibration",
    "calibrate_laplace": ".calibration",
    "from_dp_event": ".dp_events",
    "Accountant": ".accountant",
    "AccountantReport": ".accountant",
    "Spend": ".accountant",
    "MemoryLedger": ".ledger",
    "SQLiteLedger": ".ledger",
    # errors
    "RenyiError": ".errors",
    "DomainError": ".errors",
    "ConversionError": ".errors",
    "NeighbouringError": ".errors",
    "BudgetExceededError": ".errors",
    "LedgerError": ".errors",
    "RenyiNumericalWarning": ".errors",
}

#: public submodules, imported on first access (``renyi.accuracy.half_width``)
_SUBMODULES = frozenset({"accuracy", "dpsgd", "limits"})
#: ``renyi.release`` is a callable package: ``renyi.release(spec)`` runs a release
_SUBMODULES = _SUBMODULES | {"release"}

__all__ = ["__version__", *_EXPORTS, "release"]


def __getattr__(name: str) -> _Any:
    if name in _SUBMODULES:
        return _importlib.import_module(f".{name}", __name__)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'renyi' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | _SUBMODULES)


if _TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    # One `X as X` import per public name: the explicit re-export that `mypy --strict` needs
    # for `from renyi import X` in user code (tests/test_typing.py keeps it complete).
    from . import accuracy as accuracy
    from . import dpsgd as dpsgd
    from .accountant import Accountant as Accountant
    from .accountant import AccountantReport as AccountantReport
    from .accountant import Spend as Spend
    from .calibration import Calibration as Calibration
    from .calibration import calibrate as calibrate
    from .calibration import calibrate_gaussian as calibrate_gaussian
    from .calibration import calibrate_laplace as calibrate_laplace
    from .composition import compose as compose
    from .definitions import ApproxDP as ApproxDP
    from .definitions import ApproxRDP as ApproxRDP
    from .definitions import ApproxZCDP as ApproxZCDP
    from .definitions import Conversion as Conversion
    from .definitions import GDP as GDP
    from .definitions import Guarantee as Guarantee
    from .definitions import MCDP as MCDP
    from .definitions import PureDP as PureDP
    from .definitions import RDP as RDP
    from .definitions import ZCDP as ZCDP
    from .divergences import renyi_divergence as renyi_divergence
    from .dp_events import from_dp_event as from_dp_event
    from .errors import BudgetExceededError as BudgetExceededError
    from .errors import ConversionError as ConversionError
    from .errors import DomainError as DomainError
    from .errors import LedgerError as LedgerError
    from .errors import NeighbouringError as NeighbouringError
    from .errors import RenyiError as RenyiError
    from .errors import RenyiNumericalWarning as RenyiNumericalWarning
    from .ledger import MemoryLedger as MemoryLedger
    from .ledger import SQLiteLedger as SQLiteLedger
    from .mechanisms import DiscreteGaussian as DiscreteGaussian
    from .mechanisms import DiscreteLaplace as DiscreteLaplace
    from .mechanisms import ExponentialMechanism as ExponentialMechanism
    from .mechanisms import Gaussian as Gaussian
    from .mechanisms import Laplace as Laplace
    from .mechanisms import Mechanism as Mechanism
    from .mechanisms import ProposeTestRelease as ProposeTestRelease
    from .mechanisms import RandomizedResponse as RandomizedResponse
    from .mechanisms import ptr_mode as ptr_mode
    from .plrv import PrivacyLoss as PrivacyLoss
    from .plrv import check_rdp as check_rdp
    from .plrv import check_zcdp as check_zcdp
    from .plrv import power_means as power_means
    from .subsampling import PoissonSubsampled as PoissonSubsampled
    from .subsampling import SubsampledWithoutReplacement as SubsampledWithoutReplacement
    from .allocation import RandomAllocation as RandomAllocation
    from .allocation import Shuffled as Shuffled
    from .truncation import TruncatedPoisson as TruncatedPoisson
    from .tuning import Tuning as Tuning
