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

from renyi._version import __version__

# public name -> the module that owns it
_EXPORTS: dict[str, str] = {
    # guarantee values
    "Guarantee": "renyi.guarantees",
    "Conversion": "renyi.guarantees",
    "PureDP": "renyi.guarantees",
    "ApproxDP": "renyi.guarantees",
    "RDP": "renyi.guarantees",
    "ApproxRDP": "renyi.guarantees",
    "ZCDP": "renyi.guarantees",
    "ApproxZCDP": "renyi.guarantees",
    "MCDP": "renyi.guarantees",
    "GDP": "renyi.guarantees",
    "compose": "renyi.guarantees.composition",
    # mechanisms and transformers
    "Mechanism": "renyi.mechanisms",
    "Gaussian": "renyi.mechanisms",
    "Laplace": "renyi.mechanisms",
    "RandomizedResponse": "renyi.mechanisms",
    "DiscreteGaussian": "renyi.mechanisms",
    "DiscreteLaplace": "renyi.mechanisms",
    "ExponentialMechanism": "renyi.mechanisms",
    "ProposeTestRelease": "renyi.mechanisms",
    "ptr_mode": "renyi.mechanisms",
    "PoissonSubsampled": "renyi.sampling.subsampling",
    "SubsampledWithoutReplacement": "renyi.sampling.subsampling",
    "PoissonSubsampledGroup": "renyi.sampling.subsampling",
    "RandomAllocation": "renyi.sampling.allocation",
    "Shuffled": "renyi.sampling.allocation",
    "TruncatedPoisson": "renyi.sampling.truncation",
    "Tuning": "renyi.sampling.tuning",
    # divergences and the privacy loss
    "renyi_divergence": "renyi.divergences",
    "PrivacyLoss": "renyi.divergences.plrv",
    "power_means": "renyi.divergences.plrv",
    "check_rdp": "renyi.divergences.plrv",
    "check_zcdp": "renyi.divergences.plrv",
    # calibration and accounting
    "calibrate": "renyi.accounting.calibration",
    "Calibration": "renyi.accounting.calibration",
    "calibrate_gaussian": "renyi.accounting.calibration",
    "calibrate_laplace": "renyi.accounting.calibration",
    "from_dp_event": "renyi.training.dp_events",
    "Accountant": "renyi.budget.accountant",
    "AccountantReport": "renyi.budget.accountant",
    "Spend": "renyi.budget.accountant",
    "MemoryLedger": "renyi.budget.ledger",
    "SQLiteLedger": "renyi.budget.ledger",
    # errors
    "RenyiError": "renyi.core.errors",
    "DomainError": "renyi.core.errors",
    "ConversionError": "renyi.core.errors",
    "NeighbouringError": "renyi.core.errors",
    "BudgetExceededError": "renyi.core.errors",
    "LedgerError": "renyi.core.errors",
    "RenyiNumericalWarning": "renyi.core.errors",
}

#: public submodules, imported on first access (``renyi.accuracy.half_width``); the paths of
#: modules that moved into the layered subpackages are among them (thin re-exports)
_SUBMODULES = frozenset({
    "accuracy", "dpsgd", "limits", "routes", "composition", "conversions", "definitions", "pld",
    "divergences", "plrv", "samplers", "subsampling", "allocation", "truncation", "tuning", "batches",
    "calibration", "accountant", "ledger", "dp_events", "integrations", "errors", "core",
    "guarantees", "mechanisms", "sampling", "accounting", "budget", "training", "pipeline", "report",
    "plots", "audit",
})
#: ``renyi.release`` is a callable package: ``renyi.release(spec)`` runs a release
_SUBMODULES = _SUBMODULES | {"release"}

__all__ = ["__version__", *_EXPORTS, "release"]


def __getattr__(name: str) -> _Any:
    if name in _SUBMODULES:
        return _importlib.import_module(f"renyi.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'renyi' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | _SUBMODULES)


if _TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    # One `X as X` import per public name: the explicit re-export that `mypy --strict` needs
    # for `from renyi import X` in user code (tests/test_typing.py keeps it complete).
    from renyi.accounting import accuracy as accuracy
    from renyi.accounting import dpsgd as dpsgd
    from renyi import audit as audit
    from renyi.budget.accountant import Accountant as Accountant
    from renyi.budget.accountant import AccountantReport as AccountantReport
    from renyi.budget.accountant import Spend as Spend
    from renyi.accounting.calibration import Calibration as Calibration
    from renyi.accounting.calibration import calibrate as calibrate
    from renyi.accounting.calibration import calibrate_gaussian as calibrate_gaussian
    from renyi.accounting.calibration import calibrate_laplace as calibrate_laplace
    from renyi.guarantees.composition import compose as compose
    from renyi.guarantees import ApproxDP as ApproxDP
    from renyi.guarantees import ApproxRDP as ApproxRDP
    from renyi.guarantees import ApproxZCDP as ApproxZCDP
    from renyi.guarantees import Conversion as Conversion
    from renyi.guarantees import GDP as GDP
    from renyi.guarantees import Guarantee as Guarantee
    from renyi.guarantees import MCDP as MCDP
    from renyi.guarantees import PureDP as PureDP
    from renyi.guarantees import RDP as RDP
    from renyi.guarantees import ZCDP as ZCDP
    from renyi.divergences import renyi_divergence as renyi_divergence
    from renyi.training.dp_events import from_dp_event as from_dp_event
    from renyi.core.errors import BudgetExceededError as BudgetExceededError
    from renyi.core.errors import ConversionError as ConversionError
    from renyi.core.errors import DomainError as DomainError
    from renyi.core.errors import LedgerError as LedgerError
    from renyi.core.errors import NeighbouringError as NeighbouringError
    from renyi.core.errors import RenyiError as RenyiError
    from renyi.core.errors import RenyiNumericalWarning as RenyiNumericalWarning
    from renyi.budget.ledger import MemoryLedger as MemoryLedger
    from renyi.budget.ledger import SQLiteLedger as SQLiteLedger
    from renyi.mechanisms import DiscreteGaussian as DiscreteGaussian
    from renyi.mechanisms import DiscreteLaplace as DiscreteLaplace
    from renyi.mechanisms import ExponentialMechanism as ExponentialMechanism
    from renyi.mechanisms import Gaussian as Gaussian
    from renyi.mechanisms import Laplace as Laplace
    from renyi.mechanisms import Mechanism as Mechanism
    from renyi.mechanisms import ProposeTestRelease as ProposeTestRelease
    from renyi.mechanisms import RandomizedResponse as RandomizedResponse
    from renyi.mechanisms import ptr_mode as ptr_mode
    from renyi.divergences.plrv import PrivacyLoss as PrivacyLoss
    from renyi.divergences.plrv import check_rdp as check_rdp
    from renyi.divergences.plrv import check_zcdp as check_zcdp
    from renyi.divergences.plrv import power_means as power_means
    from renyi.sampling.subsampling import PoissonSubsampled as PoissonSubsampled
    from renyi.sampling.subsampling import SubsampledWithoutReplacement as SubsampledWithoutReplacement
    from renyi.sampling.subsampling import PoissonSubsampledGroup as PoissonSubsampledGroup
    from renyi.sampling.allocation import RandomAllocation as RandomAllocation
    from renyi.sampling.allocation import Shuffled as Shuffled
    from renyi.sampling.truncation import TruncatedPoisson as TruncatedPoisson
    from renyi.sampling.tuning import Tuning as Tuning
