"""The replace-one pair's own RDP curve (issue #26): certified quadrature, against mpmath, and
the antipodal pair as the worst case over random replacements (g, g′) in the plane."""

from __future__ import annotations

import math

import numpy as np
import pytest

from renyi.mechanisms import Gaussian
from renyi.sampling._replace_one_rdp import replace_one_rdp
from renyi.sampling.subsampling import PoissonSubsampled, PoissonSubsampledReplaceOne


def _truth(mu, q, a):
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    mu, q, a = mp.mpf(mu), mp.mpf(q), mp.mpf(a)

    def f(x):
        A = 1 - q + q * mp.e ** (mu * x - mu * mu / 2)
        B = 1 - q + q * mp.e ** (-mu * x - mu * mu / 2)
        return mp.e ** (-x * x / 2) / mp.sqrt(2 * mp.pi) * A**a * B ** (1 - a)

    c = a * mu
    return float(mp.log(mp.quad(f, [-mp.inf, -10, 0, c / 2, c, c + 10, mp.inf])) / (a - 1))


@pytest.mark.parametrize("mu,q,a", [(1.0, 0.01, 1.01), (1.0, 0.01, 8.0), (1.0, 0.01, 32.0), (2.0, 0.1, 3.7),
                                    (1 / 3, 0.001, 2.0), (1.0, 1e-7, 2.0), (4.0, 0.05, 1.5), (0.1, 0.5, 32.0)])
def test_against_mpmath(mu, q, a):
    """An upper bound (never below mpmath's quadrature) within 1e-8."""
    v = replace_one_rdp(mu, q, a)
    t = _truth(mu, q, a)
    assert t <= v <= t * (1 + 1e-8)


def test_the_mechanism_uses_its_own_curve():
    """The guarantee (RDP route, filters) was the group-of-two bound, 10× higher at α = 8."""
    m = PoissonSubsampledReplaceOne(Gaussian(1.0), 0.01)
    own = float(m.guarantee.rdp(8.0))
    group = float(PoissonSubsampled(Gaussian(1.0), 0.01).guarantee.group(2).rdp(8.0))
    assert own == pytest.approx(replace_one_rdp(1.0, 0.01, 8.0)) and own < group / 100
    assert m.guarantee.neighbouring == "replace_one"
    c = m.compose(1000)
    rdp = c.epsilon(1e-5, method="rdp")
    assert rdp < 3.2  # group of two: 4.777
    assert c.epsilon(1e-5) <= rdp


def _pair_divergence_2d(q, g, gp, a, sigma=1.0):
    """D_α((1−q)N(0,I) + qN(g,I) ‖ (1−q)N(0,I) + qN(g′,I)) in the plane by a fine grid (σ = 1)."""
    lo = min(0.0, g[0], gp[0], a * g[0], a * gp[0]) - 9
    hi = max(0.0, g[0], gp[0], a * g[0], a * gp[0]) + 9
    lo2 = min(0.0, g[1], gp[1], a * g[1], a * gp[1]) - 9
    hi2 = max(0.0, g[1], gp[1], a * g[1], a * gp[1]) + 9
    x = np.linspace(lo, hi, 900)
    y = np.linspace(lo2, hi2, 900)
    X, Y = np.meshgrid(x, y)
    lphi = -(X**2 + Y**2) / 2 - math.log(2 * math.pi)
    la = np.logaddexp(math.log1p(-q), math.log(q) + g[0] * X + g[1] * Y - (g[0] ** 2 + g[1] ** 2) / 2)
    lb = np.logaddexp(math.log1p(-q), math.log(q) + gp[0] * X + gp[1] * Y - (gp[0] ** 2 + gp[1] ** 2) / 2)
    li = lphi + a * la + (1 - a) * lb
    m = li.max()
    integral = math.exp(m) * np.exp(li - m).sum() * (x[1] - x[0]) * (y[1] - y[0])
    return math.log(integral) / (a - 1)


def test_antipodal_pair_is_the_worst_case_over_random_replacements():
    """Random g, g′ in the unit disc (σ = 1, Δ = 1), random q and orders: no pair's D_α exceeds
    the antipodal pair's curve (the grid's own error is far below the 1e-6 allowed); the
    antipodal pair itself reaches it."""
    rng = np.random.default_rng(26)
    for _ in range(40):
        q = float(10 ** rng.uniform(-2.5, -0.3))
        a = float(rng.uniform(1.2, 6.0))
        r1, r2 = np.sqrt(rng.uniform(0, 1, 2))
        t1, t2 = rng.uniform(0, 2 * math.pi, 2)
        g, gp = (r1 * math.cos(t1), r1 * math.sin(t1)), (r2 * math.cos(t2), r2 * math.sin(t2))
        d = _pair_divergence_2d(q, g, gp, a)
        assert d <= replace_one_rdp(1.0, q, a) * (1 + 1e-6) + 1e-12, (q, a, g, gp)
    q, a = 0.05, 3.0
    assert _pair_divergence_2d(q, (1.0, 0.0), (-1.0, 0.0), a) == pytest.approx(replace_one_rdp(1.0, q, a), rel=1e-6)


def test_the_rdp_filter_bills_the_pair_curve():
    """A replace-one accountant spends the pair's curve, not the group-of-two bound: 1000
    steps at q = 0.01, σ = 1 fit in ApproxDP(4, 1e-5) (with group of two not even in 6)."""
    from renyi import Accountant
    from renyi.definitions import ApproxDP

    acc = Accountant(ApproxDP(4.0, 1e-5, neighbouring="replace_one"))
    m = PoissonSubsampledReplaceOne(Gaussian(1.0), 0.01)
    assert acc.can_spend(m, count=1000)


@pytest.mark.parametrize("q", [0.0, 1.0, 1e-300])
def test_rate_edges(q):
    """q = 1 is the Gaussian with sensitivity 2Δ (α·2²/2 at σ = 1), q = 0 spends nothing."""
    g = PoissonSubsampledReplaceOne(Gaussian(1.0), q).guarantee
    assert float(g.rdp(2.0)) == pytest.approx(4.0 if q == 1.0 else 0.0, abs=1e-300)
    assert g.neighbouring == "replace_one"
