"""Releasing statistics from a table under a zCDP budget (``renyi release``).

``renyi.release(spec)`` reads a spec (a TOML/JSON file or a dict: the table, its privacy
unit and contribution bounds, the budget, the queries), plans the release (derived
sensitivities, budget split, calibrated noise), runs the aggregation with an embedded DuckDB
(``pip install 'renyi[release]'``), spends the release on the ledger and only then writes the
noisy values with 95 % intervals, all files at once, with the privacy report.

The layers, one module each: :mod:`~renyi.release.spec` (parse and check),
:mod:`~renyi.release.plan` (sensitivities, budget, noise; no data), :mod:`~renyi.release.engine`
(the contract of a query engine) and :mod:`~renyi.release.duckdb` (the plan as SQL),
:mod:`~renyi.release.noise` (noise and intervals), :mod:`~renyi.release.output` (atomic files),
:mod:`~renyi.release.run` (the order of the steps).

The module itself is callable, so ``renyi.release(spec)`` works whether ``renyi.release``
names this package or the function.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from renyi.release.noise import QueryResult, add_noise
from renyi.release.plan import Measurement, Plan, QueryPlan, Sensitivity, derive_sensitivity, make_plan
from renyi.release.run import ReleaseResult, release, release_report
from renyi.release.spec import DataSpec, QuerySpec, ReleaseSpec, SpecError, load_spec, parse_spec

__all__ = [
    "release",
    "ReleaseResult",
    "ReleaseSpec",
    "DataSpec",
    "QuerySpec",
    "SpecError",
    "load_spec",
    "parse_spec",
    "make_plan",
    "Plan",
    "QueryPlan",
    "Measurement",
    "Sensitivity",
    "derive_sensitivity",
    "add_noise",
    "QueryResult",
    "release_report",
]


class _CallableModule(types.ModuleType):
    """``renyi.release(spec, ...)`` calls :func:`renyi.release.run.release`."""

    def __call__(self, spec: Any, **kwargs: Any) -> ReleaseResult:
        return release(spec, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
