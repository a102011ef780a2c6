"""Modules on the DP-SGD path import scipy only when a function needs it (issue 25, cold start)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", [
    "renyi.accounting.dpsgd",
    "renyi.accounting.pld._allocation",
    "renyi.accounting.accuracy",
    "renyi.sampling._allocation_gaussian",
    "renyi.budget.accountant",
])
def test_import_does_not_load_scipy(module: str) -> None:
    code = (f"import sys, {module}\n"
            "bad = sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.'))\n"
            "print(' '.join(bad[:5]))\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert out == "", f"importing {module} loaded {out}"


def test_lazy_scipy_functions_still_work() -> None:
    from renyi.sampling import _allocation_gaussian as ag
    from renyi.core import _lazy

    assert repr(_lazy.fft).startswith("<lazy module")
    assert _lazy.fft.next_fast_len(7, real=True) == 8
    assert ag.special.gammaln(5.0) == pytest.approx(3.1780538303479458)
