"""Auditing: empirical lower bounds on ε from canary scores, beside the certified upper bound.

``epsilon_lower_bound(scores, included, delta=..., confidence=0.95, method=...)`` turns one score
per canary (higher = looks included) and whether each was included into a lower bound on ε at
δ that holds with probability ≥ ``confidence``: by thresholding with exact Clopper–Pearson
bounds corrected for the choice of threshold (``"threshold"``), by the one-run audit of
Steinke, Nasr & Jagielski 2023 (``"one_run"``), or through the μ-GDP the empirical trade-off
rules out (``"gdp"``). Each is valid for one experiment design (``DESIGNS``): one training
run with many canaries (the usual audit) admits only ``"one_run"``; ``"threshold"`` and
``"gdp"`` need one training run per canary. ``audit(..., design="one_run")`` runs the valid
methods and puts renyi's certified ε for a declared event (a pipeline file or a mechanism)
beside them. See ``docs/audit.md``.
"""

from renyi.audit.bounds import DESIGNS, METHODS, AuditResult, EmpiricalTradeoff, epsilon_lower_bound
from renyi.audit.compare import DESIGN_METHODS, AuditReport, audit, read_scores

__all__ = ["DESIGNS", "DESIGN_METHODS", "METHODS", "AuditReport", "AuditResult", "EmpiricalTradeoff", "audit",
           "epsilon_lower_bound", "read_scores"]
