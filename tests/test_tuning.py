"""Hyperparameter tuning with a random number of runs (Papernot & Steinke 2022)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _peers import need

from renyi import Gaussian, PoissonSubsampled
from renyi.errors import DomainError
from renyi.tuning import Tuning


@pytest.mark.parametrize("repetitions", ["geometric", "poisson"])
def test_tuning_costs_more_than_one_run(repetitions: str) -> None:
    """Best of a random number of runs is never cheaper than one run (both are RDP bounds)."""
    g = Gaussian(4.0)
    t = Tuning(g, repetitions, mean=10)
    orders = np.array([1.5, 2.0, 8.0, 32.0])
    assert np.all(t.rdp(orders) >= g.rdp(orders))
    assert t.epsilon(1e-6) > g.epsilon(1e-6)


def test_tuning_far_below_composition() -> None:
    """With mean 10, tuning costs much less than composing 10 runs."""
    g = Gaussian(4.0)
    assert Tuning(g, "geometric", mean=10).epsilon(1e-6) < g.compose(10).epsilon(1e-6)


def test_geometric_formula_at_one_order() -> None:
    """[PS22] Thm 2 with η = 1 by hand at λ = 8, with λ̂ and the monotone step λ′ ≥ λ optimised
    on a fine grid: the curve is within 1e-3 of the hand value and never below it by more."""
    sigma, mean, lam = 4.0, 10.0, 8.0

    def eps(a: np.ndarray) -> np.ndarray:
        return a / (2 * sigma**2)

    lam_hat = np.linspace(1.0, 100.0, 200_001)
    c = 2 * np.min((1 - 1 / lam_hat) * eps(lam_hat) + math.log(mean) / lam_hat)
    lam_p = np.linspace(lam, 200.0, 200_001)
    hand = float(np.min(eps(lam_p) + c + math.log(mean) / (lam_p - 1)))
    val = float(Tuning(Gaussian(sigma), "geometric", mean=mean).rdp(lam))
    assert val == pytest.approx(hand, abs=1e-3)
    assert val >= hand - 1e-6


def test_curve_nondecreasing() -> None:
    """The tuned curve is non-decreasing in the order."""
    t = Tuning(Gaussian(2.0), "poisson", mean=5)
    v = t.rdp(np.linspace(1.05, 50.0, 200))
    assert np.all(np.diff(v) >= -1e-12)


def test_whole_training_run_as_input() -> None:
    """A composed guarantee (a whole DP-SGD run) can be tuned."""
    run = PoissonSubsampled(Gaussian(1.1), 0.01).compose(1000)
    assert Tuning(run, "geometric", mean=5).epsilon(1e-5) > run.epsilon(1e-5)


def test_mean_one_geometric_is_one_run() -> None:
    """Geometric with mean 1 is exactly one run: the bound is the run's own curve (λ̂ → 1)."""
    g = Gaussian(3.0)
    assert Tuning(g, "geometric", mean=1).epsilon(1e-6) == pytest.approx(g.to_rdp().epsilon(1e-6), rel=1e-3)


@pytest.mark.optional
@pytest.mark.parametrize("repetitions,shape", [("geometric", 1.0), ("poisson", math.inf)])
def test_matches_dp_accounting(repetitions: str, shape: float) -> None:
    """Cross-check against dp_accounting's RepeatAndSelectDpEvent (same theorems)."""
    need("dp_accounting")
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    for sigma, mean in [(4.0, 10.0), (2.0, 5.0)]:
        acc = RdpAccountant()
        acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(sigma), mean, shape))
        ours = Tuning(Gaussian(sigma), repetitions, mean=mean).epsilon(1e-6)
        assert ours == pytest.approx(acc.get_epsilon(1e-6), rel=1e-2)


def test_bad_input() -> None:
    with pytest.raises(DomainError, match="repetitions must be one of geometric, poisson; got 'uniform'"):
        Tuning(Gaussian(1.0), "uniform", mean=3)
    with pytest.raises(DomainError, match=r"mean must be in \[1, inf\); got 0.5"):
        Tuning(Gaussian(1.0), "geometric", mean=0.5)
    with pytest.raises(TypeError):
        Tuning(3.0, "geometric", mean=3)
