"""Modules on the DP-SGD path import scipy only when a function needs it (issue 25, cold start)."""

from __future__ import annotations

import subprocess
import sys

import pytest


MODULES = [
    "renyi.accounting.dpsgd",
    "renyi.accounting.pld._allocation",
    "renyi.accounting.accuracy",
    "renyi.sampling._allocation_gaussian",
    "renyi.budget.accountant",
]


def test_import_does_not_load_scipy() -> None:
    """One fresh interpreter imports them all (imports only add modules: if together they
    load no scipy, none of them does); it names the first that did."""
    code = ("import importlib, sys\n"
            f"for m in {MODULES!r}:\n"
            "    importlib.import_module(m)\n"
            "    bad = sorted(x for x in sys.modules if x == 'scipy' or x.startswith('scipy.'))\n"
            "    if bad:\n"
            "        print(m, ' '.join(bad[:5]))\n"
            "        break\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert out == "", f"importing {out}"


def test_lazy_scipy_functions_still_work() -> None:
    from renyi.sampling import _allocation_gaussian as ag
    from renyi.core import _lazy

    assert repr(_lazy.fft).startswith("<lazy module")
    assert _lazy.fft.next_fast_len(7, real=True) == 8
    assert ag.special.gammaln(5.0) == pytest.approx(3.1780538303479458)
