"""The two discretisations of a continuous dominating pair bracket its privacy profile.

The optimistic one is built from supporting lines at the interval midpoints (an O(h²) error,
like the pessimistic "connect the dots" one); every point of its profile must lie below the
true profile, off the grid as well as on it, and in the far tails (relative comparison).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from renyi.mechanisms import Gaussian, Laplace
from renyi.pld._grid import discretise, support_range
from renyi.pld._profiles import pairs_for
from renyi.subsampling import PoissonSubsampled


def _log_profile(d, eps: np.ndarray) -> np.ndarray:
    """log δ(ε) of a discretised pair: log(Σ m_j (1 − e^{ε − z_j})₊ + inf_mass)."""
    lm, z = d.log_mass, d.values
    keep = np.isfinite(lm)
    lm, z = lm[keep], z[keep]
    out = np.empty(eps.size)
    for i, e in enumerate(eps):
        above = z > e
        if not above.any():
            out[i] = math.log(d.inf_mass) if d.inf_mass > 0 else -math.inf
            continue
        t = lm[above] + np.log(-np.expm1(e - z[above]))
        top = float(np.max(t))
        s = math.exp(top) * float(np.sum(np.exp(t - top))) + d.inf_mass
        out[i] = math.log(s)
    return out


CASES = [
    ("gaussian", Gaussian(1.0), 0),
    ("gaussian-narrow", Gaussian(20.0), 0),
    ("laplace", Laplace(1.0), 0),
    ("sub-gaussian-remove", PoissonSubsampled(Gaussian(1.0), 0.01), 0),
    ("sub-gaussian-add", PoissonSubsampled(Gaussian(1.0), 0.01), 1),
    ("sub-gaussian-small-sigma", PoissonSubsampled(Gaussian(0.6), 0.05), 0),
    ("sub-laplace-add", PoissonSubsampled(Laplace(0.5), 0.1), 1),
]


@pytest.mark.parametrize("name,mech,direction", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("h", [2.0**-4, 2.0**-7, 2.0**-10])
def test_lower_below_truth_below_upper(name, mech, direction, h):
    prof = pairs_for(mech)[direction]
    lo_i, hi_i = support_range(prof, h, -60.0)
    up, low = discretise(prof, h, lo_i, hi_i)
    assert low is not None
    z0, z1 = lo_i * h, hi_i * h
    eps = np.concatenate([np.linspace(z0 - 0.5, z1 + 0.5, 301), np.linspace(-0.1, 0.3, 101) + h / 3])
    truth = prof.log_delta(eps)
    lower = _log_profile(low, eps)
    upper = _log_profile(up, eps)
    fin = np.isfinite(truth)
    # lower end: below the truth everywhere (relative, so the tails count too)
    assert np.all(lower[fin] <= truth[fin] + 1e-9), np.max(lower[fin] - truth[fin])
    assert np.all(np.isneginf(lower[~fin]))
    # upper end: above the truth wherever the grid holds the loss (the tail beyond it is at +∞)
    assert np.all(upper[fin] >= truth[fin] - 1e-9)


TIGHT = [
    (Gaussian(1.0), 0, 2.0**-7),
    (Laplace(1.0), 0, 2.0**-8),
    (PoissonSubsampled(Gaussian(1.0), 0.01), 0, 2.0**-9),
    (PoissonSubsampled(Gaussian(1.0), 0.01), 1, 2.0**-9),
    (PoissonSubsampled(Gaussian(2.0), 0.05), 0, 2.0**-7),
    (PoissonSubsampled(Gaussian(0.6), 0.001), 0, 2.0**-12),
]


@pytest.mark.parametrize("mech,direction,h", TIGHT)
def test_lower_is_as_tight_as_upper(mech, direction, h):
    """The optimistic construction no longer lags the pessimistic one (it used to be about
    ten times further from the truth): once the grid resolves the pair, both profiles are
    within O(h²) of the truth, by similar amounts (mean relative error over ε ∈ (0, 0.8]; near
    the end of a bounded support the last intervals of the optimistic profile are cut)."""
    prof = pairs_for(mech)[direction]
    lo_i, hi_i = support_range(prof, h, -60.0)
    up, low = discretise(prof, h, lo_i, hi_i)
    eps = np.linspace(0.0, 0.8, 41) + h / 7
    truth = np.exp(prof.log_delta(eps))
    keep = truth > 1e-12
    err_up = np.mean(np.exp(_log_profile(up, eps))[keep] / truth[keep] - 1.0)
    err_low = np.mean(1.0 - np.exp(_log_profile(low, eps))[keep] / truth[keep])
    assert 0.0 <= err_up < 0.01 and 0.0 <= err_low
    assert err_low <= 2.0 * err_up + 1e-7


@pytest.mark.optional
def test_dpsgd_lower_end_is_below_dp_accounting_pessimistic_pld():
    """An independent check of the new lower end: dp-accounting's pessimistic PLD (connect the
    dots, a fine grid) over-estimates the truth, so renyi's certified lower end must not exceed
    it; and it should be close (the lower end is now about as tight as the upper end)."""
    from _peers import need

    need("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as peer_pld

    from renyi.pld import epsilon_bounds

    for q, sigma, steps, d in ((0.01, 1.0, 1000, 1e-5), (0.001, 0.6, 2000, 1e-5)):
        one = peer_pld.from_gaussian_mechanism(sigma, sensitivity=1.0, pessimistic_estimate=True,
                                               value_discretization_interval=1e-4, sampling_prob=q,
                                               use_connect_dots=True)
        peer = one.self_compose(steps).get_epsilon_for_delta(d)
        lo, hi = epsilon_bounds([(PoissonSubsampled(Gaussian(sigma), q), steps)], d)
        assert lo <= peer * (1 + 1e-9)
        assert lo >= peer * 0.995
