"""Random allocation at a very small noise multiplier: the add direction's RDP quadrature
(grid ∝ σ⁻³) took 22 CPU s at σ = 0.01; below MIN_SIGMA_ADD_QUADRATURE the add direction
keeps the unamplified curve, which is valid (k-fold composition) and already the binding one."""

from __future__ import annotations

import numpy as np
import pytest

from renyi.mechanisms import Gaussian
from renyi.sampling import _allocation_gaussian as ag
from renyi.sampling import allocation as A
from renyi.sampling.allocation import RandomAllocation


def test_small_sigma_skips_the_add_quadrature_and_keeps_a_valid_curve(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: object, **k: object) -> None:
        raise AssertionError("the add-direction quadrature is not run below the threshold")

    A._directional_cgfs.cache_clear()
    monkeypatch.setattr(ag, "add_log_moments", boom)
    sigma = 0.01
    rem, add = A._directional_cgfs(sigma, 10)
    a = np.arange(A.MAX_ORDER + 1, dtype=np.float64)
    assert np.array_equal(add, a * (a - 1.0) / (2.0 * sigma * sigma))
    A._directional_cgfs.cache_clear()
    # at σ = 0.01 allocation buys almost nothing; the lattice route declines (its losses
    # overflow), so the RDP conversion of the unamplified curve answers: within 1 % of the
    # exact two-fold Gaussian (measured 10739.07 against 10671.25)
    e = RandomAllocation(Gaussian(sigma), steps=10, k=2).best_epsilon(1e-6).value
    exact2 = Gaussian(sigma).compose(2).best_epsilon(1e-6).value
    assert np.isfinite(e) and exact2 * 0.5 < e <= exact2 * 1.01


def test_above_the_threshold_the_quadrature_still_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    A._directional_cgfs.cache_clear()
    calls: list[float] = []
    real = ag.add_log_moments

    def spy(sigma: float, *a: object, **k: object) -> np.ndarray:
        calls.append(sigma)
        return real(sigma, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(ag, "add_log_moments", spy)
    A._directional_cgfs(A.MIN_SIGMA_ADD_QUADRATURE, 10)
    A._directional_cgfs.cache_clear()
    assert calls == [A.MIN_SIGMA_ADD_QUADRATURE]
