"""The trade-off table's fast δ(ε) (issue 27: half of a release's fixed cost was 92 order
optimisations for the report's attacker-TPR rows): the RDP route's δ from its curve evaluated
once on a grid of orders is a valid upper bound (exact Gaussian and exact k-fold randomized
response as ground truth, random setups, many ε) and close to the optimised one, and the TPR
rows are the same as those of the search that optimised the order at every ε."""

from __future__ import annotations

import math
import random

import mpmath as mp
import numpy as np
import pytest

from renyi import routes
from renyi.definitions import RDP
from renyi.guarantees.conversions import rdp_delta, rdp_delta_on_grid
from renyi.mechanisms import DiscreteGaussian, Gaussian, Laplace, RandomizedResponse

from _exact import gaussian_delta


def _rr_delta(eps0: float, k: int, eps: float) -> mp.mpf:
    """Exact δ(ε) of k-fold binary randomized response at ε₀ (the binomial privacy-loss sum)."""
    mp.mp.dps = 40
    p = mp.e ** eps0 / (1 + mp.e ** eps0)
    tot = mp.mpf(0)
    for j in range(k + 1):  # j = number of answers that flip between the neighbours
        c = mp.binomial(k, j)
        P = c * p ** (k - j) * (1 - p) ** j
        Q = c * (1 - p) ** (k - j) * p ** j
        tot += max(mp.mpf(0), P - mp.e ** eps * Q)
    return tot


def _rr_curve(eps0: float, k: int) -> RDP:
    """The exact RDP curve of k-fold randomized response, without the zCDP and ε(∞) the
    mechanism's own curve carries (so the grid bound itself is what is tested)."""
    p = math.exp(eps0) / (1.0 + math.exp(eps0))

    def fn(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        lt = np.logaddexp(a * math.log(p) + (1 - a) * math.log1p(-p), a * math.log1p(-p) + (1 - a) * math.log(p))
        return k * lt / (a - 1.0)

    return RDP(fn, convex=True)


def test_grid_delta_is_an_upper_bound_on_the_exact_gaussian_delta():
    """Random σ, k and ε: the grid δ of the plain curve kα/(2σ²) is ≥ the exact Gaussian δ
    (mpmath) and within 1 % of the optimised CKS20 δ of the same curve."""
    rng = random.Random(27)
    for _ in range(40):
        sigma, k = rng.uniform(0.3, 20.0), rng.randint(1, 200)
        mu = math.sqrt(k) / sigma
        curve = RDP(lambda a, s=sigma, k=k: k * np.asarray(a) / (2 * s * s), convex=True)
        grid = rdp_delta_on_grid(curve)
        for eps in (0.0, 0.01, *(rng.uniform(0.0, 3.0 * mu + 3.0) for _ in range(8))):
            d = grid(eps).value
            assert d >= float(gaussian_delta(mu, eps)) * (1 - 1e-12), (sigma, k, eps)
            opt = rdp_delta(curve, eps).value
            assert d <= opt * 1.01 + 1e-300, (sigma, k, eps, d, opt)


def test_grid_delta_is_an_upper_bound_on_exact_randomized_response():
    """k-fold randomized response (exact binomial δ, mpmath) through its exact RDP curve."""
    rng = random.Random(7)
    for _ in range(12):
        eps0, k = rng.uniform(0.05, 1.5), rng.randint(1, 60)
        grid = rdp_delta_on_grid(_rr_curve(eps0, k))
        for eps in (0.0, *(rng.uniform(0.0, k * eps0) for _ in range(6))):
            assert grid(eps).value >= float(_rr_delta(eps0, k, eps)) * (1 - 1e-12), (eps0, k, eps)


def test_grid_delta_uses_the_curves_other_bounds():
    """The pure-DP, total-variation and zCDP bounds a curve carries are candidates, as in
    RDP.best_delta: one randomized response at ε₀ = 0.5 gives the exact pure-DP δ."""
    rr = RandomizedResponse(epsilon=0.5)
    curve = routes.items([(rr, 1)]).curve()
    for eps in (0.0, 0.2, 0.49, 0.6):
        got = rdp_delta_on_grid(curve)(eps).value
        assert got >= float(_rr_delta(0.5, 1, eps)) * (1 - 1e-12)
        assert got <= curve.best_delta(eps, method="native").value * 1.01 + 1e-300


@pytest.mark.parametrize("obj", [
    [(DiscreteGaussian(sigma=3.46, sensitivity=3), 1), (DiscreteGaussian(sigma=692000.0, sensitivity=600000), 1),
     (DiscreteGaussian(sigma=4.9, sensitivity=3), 1), (DiscreteGaussian(sigma=980000.0, sensitivity=600000), 1)],
    [(Gaussian(3.0), 20), (Laplace(20.0), 5), (RandomizedResponse(epsilon=0.2), 1)],
    [(_rr_curve(0.3, 40), 1)],
])
def test_tpr_rows_match_the_search_that_optimises_every_order(obj, monkeypatch):
    """The TPR rows with the fast δ equal (to 1e-6) those of the search that optimises the
    order at every ε, and are never below them by more than that."""
    fpr = (0.0, 1e-3, 1e-2, 0.1, 0.5)
    fast = routes.tpr_bounds(routes.items(obj, offer_pld=True), fpr)
    assert routes._fast_deltas(routes.items(obj))  # the fast path was taken
    monkeypatch.setattr(routes, "_fast_deltas", lambda it: {})
    slow = routes.tpr_bounds(routes.items(obj, offer_pld=True), fpr)
    for f, s in zip(fast, slow):
        assert f.value == pytest.approx(s.value, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_tpr_rows_through_the_rdp_route_are_above_the_gaussian_tradeoff(mu):
    """method="rdp" (the fast δ during the search): never below the exact trade-off
    Φ(Φ⁻¹(FPR) + μ) of the Gaussian mechanism (mpmath)."""
    g = Gaussian(1.0 / mu)
    for a, c in zip((1e-4, 1e-3, 1e-2, 0.1, 0.5), routes.tpr_bounds(g, (1e-4, 1e-3, 1e-2, 0.1, 0.5), "rdp")):
        truth = float(mp.ncdf(mp.sqrt(2) * mp.erfinv(2 * mp.mpf(a) - 1) + mu))
        assert c.value >= truth - 1e-12, (mu, a, c.value, truth)
        assert c.method == "rdp"
