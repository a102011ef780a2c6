"""Compositions of many distinct mechanisms in the PLD engine (renyi.pld._many).

Ground truth shares no code with renyi: the exact Gaussian curve (tests/_exact.py, mpmath)
and the exact δ(ε) of a product of binary randomized responses with distinct ε, enumerated
atom by atom in mpmath.
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import pytest

from _exact import gaussian_epsilon
from renyi.definitions import GDP
from renyi.mechanisms import Gaussian, Laplace, RandomizedResponse
from renyi.pld import delta_bounds, epsilon_bounds
from renyi.pld._many import merge_gaussians
from renyi.pld._profiles import LossProfile, pairs_for
from renyi.plrv import GaussianPrivacyLoss


# ----------------------------------------------------------------------------------------------
# Gaussian merging
# ----------------------------------------------------------------------------------------------
def test_distinct_gaussians_merge_into_one_exact_pair() -> None:
    """Distinct Gaussians (and a GDP value) become one pair with μ² = Σ cμ²; others stay."""
    lap = pairs_for(Laplace(3.0))[0]
    steps = [(pairs_for(Gaussian(2.0))[0], 3), (lap, 2), (pairs_for(GDP(0.5))[0], 1),
             (pairs_for(Gaussian(4.0, sensitivity=3.0))[0], 5)]
    out = merge_gaussians(steps)
    assert [c for _, c in out] == [1, 2]
    merged = out[0][0]
    assert isinstance(merged, LossProfile) and isinstance(merged.loss, GaussianPrivacyLoss)
    mu2 = 3 * 0.5**2 + 0.5**2 + 5 * 0.75**2
    assert merged.loss.rho == pytest.approx(mu2 / 2, rel=1e-15)
    assert out[1] == (lap, 2)
    # one distinct Gaussian (any count): nothing to merge, the list is returned as it is
    one = [(pairs_for(Gaussian(2.0))[0], 7), (lap, 1)]
    assert merge_gaussians(one) is one


@pytest.mark.parametrize("delta", [1e-5, 1e-12])
def test_composed_distinct_gaussians_bracket_the_exact_gdp_epsilon(delta: float) -> None:
    """30 distinct Gaussians: lower ≤ exact μ-GDP ε ≤ upper, upper within 0.1 %."""
    sigmas = [3.0 + 0.37 * i for i in range(30)]
    items = [(Gaussian(s), 1 + i % 3) for i, s in enumerate(sigmas)]
    mu = math.sqrt(sum(c / s**2 for (_, c), s in zip(items, sigmas)))
    exact = gaussian_epsilon(mu, delta)
    lo, hi = epsilon_bounds(items, delta)
    assert lo <= exact <= hi
    assert hi <= exact * 1.001
