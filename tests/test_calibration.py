"""Calibration: golden σ values, the safe side, large counts, and infeasible targets."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from renyi import compose
from renyi.calibration import (
    Calibration,
    calibrate,
    calibrate_discrete_laplace,
    calibrate_gaussian,
    calibrate_laplace,
)
from renyi.definitions import RDP, ZCDP, ApproxDP, PureDP
from renyi.errors import DomainError
from renyi.mechanisms import DiscreteGaussian, ExponentialMechanism, Gaussian, Laplace, RandomizedResponse


@pytest.mark.parametrize(
    "eps, delta, sigma",
    [(1.0, 1e-5, 3.730631634815942), (0.5, 1e-6, 8.05761848073), (2.0, 1e-5, 1.99381244564)],
)
def test_analytic_gaussian_golden(eps, delta, sigma):
    """§10.3: analytic-Gaussian σ (the classical 4.8448 is not what we return)."""
    cal = calibrate_gaussian(eps, delta)
    assert cal.value == pytest.approx(sigma, rel=1e-6)
    assert cal.value >= sigma * (1 - 1e-10)  # on the safe side (σ never below the exact one)
    assert cal.achieved.epsilon <= eps
    assert Gaussian(cal.value).epsilon(delta) <= eps


def test_generic_equals_convenience():
    """calibrate(make, target) with a Gaussian gives the same σ as calibrate_gaussian."""
    a = calibrate(lambda s: Gaussian(s), ApproxDP(1.0, 1e-5)).value
    assert a == pytest.approx(calibrate_gaussian(1.0, 1e-5).value, rel=1e-12)


@pytest.mark.parametrize("k", [1, 10, 1000, 10**6])
def test_large_counts(k):
    """Counts up to 10⁶: σ scales exactly like √k for the Gaussian, and re-verifies."""
    cal = calibrate_gaussian(1.0, 1e-5, count=k)
    assert cal.value / math.sqrt(k) == pytest.approx(3.730631634815942, rel=1e-9)
    assert Gaussian(cal.value).compose(k).epsilon(1e-5) <= 1.0


def test_laplace_large_count():
    """10⁶ Laplace runs at (ε, δ): the composed curve is cheap and the result verifies."""
    cal = calibrate_laplace(5.0, count=10**6, delta=1e-6)
    assert Laplace(cal.value).compose(10**6).epsilon(1e-6) <= 5.0
    assert Laplace(cal.value * (1 - 1e-6)).compose(10**6).epsilon(1e-6) > 5.0 * (1 - 1e-5)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.05, 10.0), st.sampled_from([1e-3, 1e-6, 1e-10]), st.integers(1, 500), st.floats(0.1, 10.0))
def test_gaussian_meets_target_tightly(eps, delta, k, sens):
    """Every calibrated σ re-checks at or under the target, and 1e-7 less noise would not."""
    cal = calibrate_gaussian(eps, delta, sensitivity=sens, count=k)
    assert Gaussian(cal.value, sens).compose(k).epsilon(delta) <= eps
    assert Gaussian(cal.value * (1 - 1e-7), sens).compose(k).epsilon(delta) > eps


@pytest.mark.parametrize(
    "make, target",
    [
        (lambda s: Gaussian(s), ZCDP(0.5)),
        (lambda s: Gaussian(s, 2.0), (3.0, 0.25)),
        (lambda s: Gaussian(s), RDP.from_points([2.0, 8.0], [0.1, 0.3])),
        (lambda b: Laplace(b), ApproxDP(0.5, 1e-6)),
        (lambda b: Laplace(b).compose(50), ApproxDP(2.0, 1e-6)),
        (lambda b: Laplace(b), PureDP(0.25)),
        (lambda b: Laplace(b), ApproxDP(0.25, 0.0)),
        (lambda s: DiscreteGaussian(s), ApproxDP(1.0, 1e-6)),
        (lambda e: RandomizedResponse(e, k=4), ApproxDP(1.0, 1e-3)),
        (lambda e: ExponentialMechanism(e).compose(10), ZCDP(0.2)),
    ],
)
def test_meets_target(make, target):
    """The result never exceeds the target, in the target's own terms."""
    cal = calibrate(make, target)
    assert isinstance(cal, Calibration)
    obj = make(cal.value)
    if isinstance(target, ZCDP):
        assert obj.to_zcdp().rho <= target.rho and cal.achieved.rho <= target.rho
    elif isinstance(target, tuple):
        assert float(obj.rdp(target[0])) <= target[1]
    elif isinstance(target, RDP):
        assert np.all(np.asarray(obj.rdp([2.0, 8.0])) <= [0.1, 0.3])
    elif isinstance(target, PureDP) or float(target.delta) == 0.0:
        assert float(obj.rdp(math.inf)) <= float(target.epsilon)
    else:
        assert obj.epsilon(float(target.delta)) <= float(target.epsilon)


def test_zcdp_closed_form():
    """For a ρ target the Gaussian σ is Δ/√(2ρ)."""
    cal = calibrate(lambda s: Gaussian(s, 3.0), ZCDP(0.125))
    assert cal.value == pytest.approx(3.0 / math.sqrt(0.25), rel=1e-12)


def test_direction_discovery_for_steps():
    """Privacy that degrades with the parameter (steps) gives the largest feasible integer."""
    cal = calibrate(lambda k: Gaussian(10.0).compose(k), ApproxDP(1.0, 1e-5), integer=True)
    k = int(cal.value)
    assert Gaussian(10.0).compose(k).epsilon(1e-5) <= 1.0
    assert Gaussian(10.0).compose(k + 1).epsilon(1e-5) > 1.0


def test_direction_discovery_for_rate():
    """A parameter where larger means less private (a multiplier on ρ) is solved from the other side."""
    cal = calibrate(lambda r: ZCDP(r * 0.3), ZCDP(0.6), bounds=(1e-3, 100.0))
    assert cal.value == pytest.approx(2.0, rel=1e-10) and cal.value * 0.3 <= 0.6


def test_everything_feasible_returns_least_noise():
    """When the whole range meets the target, the least-noise end is returned."""
    cal = calibrate(lambda s: Gaussian(s), ApproxDP(1.0, 1e-5), bounds=(5.0, 50.0))
    assert cal.value == pytest.approx(5.0)


def test_definition_routes():
    """Through zCDP or RDP the Gaussian needs more noise than through the exact route."""
    exact = calibrate_gaussian(1.0, 1e-5).value
    via_z = calibrate_gaussian(1.0, 1e-5, method="zcdp").value
    via_r = calibrate_gaussian(1.0, 1e-5, method="rdp").value
    assert exact < via_r <= via_z * (1 + 1e-9)


def test_laplace_and_discrete_pure():
    """Pure-ε calibrations are b = kΔ/ε (and an exact Fraction for the discrete Laplace)."""
    assert calibrate_laplace(0.5).value == 2.0
    assert calibrate_laplace(0.1, sensitivity=3.0, count=7).made.eps_inf <= 0.1
    c = calibrate_discrete_laplace(0.3, sensitivity=2, count=3)
    assert isinstance(c.value, Fraction) and 3 * 2 / float(c.value) <= 0.3


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: calibrate(lambda s: Gaussian(s), PureDP(1.0)), "pure"),
        (lambda: calibrate(lambda s: Gaussian(s), ApproxDP(1.0, 1.0)), "delta"),
        (lambda: calibrate_gaussian(1.0, 1.5), "delta"),
        (lambda: calibrate_gaussian(0.0, 1e-5), "epsilon"),
        (lambda: calibrate(lambda s: Gaussian(s), ApproxDP(1.0, 1e-5), bounds=(0.1, 1.0)), "cannot be met"),
        (lambda: calibrate(lambda s: Gaussian(s), ApproxDP(1.0, 1e-5), bounds=(2.0, 1.0)), "bounds"),
        (lambda: calibrate(lambda s: Gaussian(1.0), ApproxDP(10.0, 1e-5), bounds=(1.0, 2.0)), "does not depend"),
        (lambda: calibrate(lambda s: Gaussian(abs(math.log(s)) + 0.1), ApproxDP(1.0, 1e-5)), "monotone"),
        (lambda: calibrate(lambda s: Gaussian(s), ZCDP(0.0)), "rho"),
        (lambda: calibrate(lambda s: Gaussian(s), RDP(lambda a: a)), "RDP target"),
    ],
)
def test_infeasible_targets(call, match):
    """Infeasible or ill-posed calibrations raise DomainError saying why."""
    with pytest.raises(DomainError, match=match):
        call()


def test_bad_target_type():
    """A target of the wrong type is a TypeError."""
    with pytest.raises(TypeError):
        calibrate(lambda s: Gaussian(s), 0.5)


def test_compose_of_calibrated_meets_budget():
    """A calibrated mechanism composed with others reports through renyi.compose consistently."""
    cal = calibrate_gaussian(1.0, 1e-5, count=4)
    g = compose((Gaussian(cal.value), 4))
    assert g.epsilon(1e-5) <= 1.0
