"""The contract every mechanism must pass (style guide: one abstract test for all).

For each mechanism: its RDP curve is a valid, non-decreasing bound that dominates the exact
divergence of its privacy loss; every (ε, δ) it reports is at least the exact one from its
privacy loss; conversions round-trip on the safe side; release keeps shape and dtype.
"""

import math

import numpy as np
import pytest

import renyi
from renyi.errors import ConversionError

ORDERS = np.array([1.01, 1.5, 2.0, 3.0, 8.0, 32.0, 256.0])


def mechanisms():
    from renyi.mechanisms import (
        DiscreteGaussian,
        DiscreteLaplace,
        ExponentialMechanism,
        Gaussian,
        Laplace,
        RandomizedResponse,
        ptr_mode,
    )

    out = [
        Gaussian(2.0),
        Gaussian(0.7, sensitivity=2.0),
        Laplace(1.5),
        RandomizedResponse(1.0),
        RandomizedResponse(2.0, k=5),
        DiscreteGaussian(1.0),
        DiscreteGaussian(3.0, sensitivity=2),
        DiscreteLaplace(2.0),
        ExponentialMechanism(1.0),
        ptr_mode(1.0, 1e-6),
    ]
    try:
        from renyi.subsampling import PoissonSubsampled, SubsampledWithoutReplacement

        out += [PoissonSubsampled(Gaussian(1.1), 0.01), SubsampledWithoutReplacement(Gaussian(1.1), 0.01),
                PoissonSubsampled(Laplace(1.0), 0.05)]
    except ImportError:  # pragma: no cover - subsampling not built yet
        pass
    return out


MECHS = mechanisms()


@pytest.mark.parametrize("m", MECHS, ids=repr)
def test_curve_is_valid_shape(m):
    r = np.asarray(m.rdp(ORDERS), dtype=float)
    assert r.shape == ORDERS.shape
    assert not np.any(np.isnan(r)) and np.all(r >= 0)
    finite = r[np.isfinite(r)]
    assert np.all(np.diff(finite) >= -1e-12 * np.maximum(1.0, finite[1:]))
    inf_val = float(m.rdp(math.inf))
    assert inf_val >= r.max() or math.isinf(inf_val)


@pytest.mark.parametrize("m", MECHS, ids=repr)
def test_epsilon_delta_round_trip(m):
    prev = math.inf
    for d in [1e-10, 1e-6, 1e-3, 0.1]:
        e = m.epsilon(d)
        assert e >= 0 and not math.isnan(e)
        assert e <= prev + 1e-12
        prev = e
        if 0 < e < math.inf:
            assert m.delta(e) <= d * (1 + 1e-9)


@pytest.mark.parametrize("m", MECHS, ids=repr)
def test_curve_dominates_exact_divergence(m):
    """The claimed RDP curve is ≥ the divergence computed from the mechanism's privacy loss."""
    try:
        loss = m.privacy_loss()
    except ConversionError:
        pytest.skip("no known privacy loss")
    check = renyi.check_rdp(loss, m.guarantee, alphas=ORDERS)
    assert check.holds, str(check)


@pytest.mark.parametrize("m", MECHS, ids=repr)
def test_reported_epsilon_at_least_exact(m):
    """Every route's ε is ≥ the exact ε of the privacy loss (the ground truth)."""
    try:
        loss = m.privacy_loss()
    except ConversionError:
        pytest.skip("no known privacy loss")
    for d in [1e-6, 1e-3]:
        exact = loss.epsilon(d)
        assert m.epsilon(d) >= exact * (1 - 1e-9) - 1e-12
        try:
            rdp_route = m.to_rdp().epsilon(d)
        except ConversionError:
            continue
        assert rdp_route >= exact * (1 - 1e-9) - 1e-12


@pytest.mark.parametrize("m", MECHS, ids=repr)
def test_zcdp_bound_dominates_curve(m):
    try:
        z = m.to_zcdp()
    except ConversionError:
        pytest.skip("no zCDP guarantee")
    r = np.asarray(m.rdp(ORDERS), dtype=float)
    assert np.all(r <= z.xi + z.rho * ORDERS + 1e-12)


@pytest.mark.parametrize("m", MECHS, ids=repr)
def test_composition_through_the_mechanism(m):
    g = m.compose(7)
    assert (7 * m).epsilon(1e-5) == pytest.approx(g.epsilon(1e-5), rel=1e-9)
    assert g.epsilon(1e-5) >= m.epsilon(1e-5) * (1 - 1e-12) or math.isinf(g.epsilon(1e-5))
    assert renyi.compose((m, 7)).epsilon(1e-5) == pytest.approx(g.epsilon(1e-5), rel=1e-6)
