"""Replace-one DP-SGD analysed directly (issue #26): the Poisson-subsampled Gaussian's pair
(1−q)N(0, 1) + qN(μ, 1) against (1−q)N(0, 1) + qN(−μ, 1), its profile against mpmath, a test
that it is the worst case over the replaced record's contributions, and compositions under
replace-one (mixed with randomized response) that used group privacy of two before."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from renyi import routes
from renyi._neighbouring import align, to_relation
from renyi.errors import DomainError
from renyi.mechanisms import Gaussian, Laplace, RandomizedResponse
from renyi.subsampling import PoissonSubsampled, PoissonSubsampledReplaceOne

pld = pytest.importorskip("renyi.pld", reason="the PLD engine (renyi.pld) is not part of this installation")
from renyi.pld._profiles import ReplaceOneGaussianProfile, pairs_for  # noqa: E402


def _mp_log_delta(eps: float, mu: float, q: float) -> float:
    """log δ(ε) of the pair by its three tail terms at 60 digits (threshold from the quadratic)."""
    mp.mp.dps = 60
    e, m, qq = mp.mpf(eps), mp.mpf(mu), mp.mpf(q)
    c, a = qq * mp.e ** (-m * m / 2), 1 - qq
    big_a = a * (mp.e**e - 1)
    t = (big_a + mp.sqrt(big_a * big_a + 4 * c * c * mp.e**e)) / (2 * c)
    x = mp.log(t) / m
    sf = lambda z: mp.erfc(z / mp.sqrt(2)) / 2  # noqa: E731
    return float(mp.log(a * (1 - mp.e**e) * sf(x) + qq * (sf(x - m) - mp.e**e * sf(x + m))))


def test_profile_matches_mpmath():
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(150):
        mu, q, eps = 10 ** rng.uniform(-3, 1), 10 ** rng.uniform(-5, -0.01), 10 ** rng.uniform(-4, 1.5)
        truth = _mp_log_delta(eps, mu, q)
        if not math.isfinite(truth) or truth < -700:
            continue
        got = float(ReplaceOneGaussianProfile(mu, q).log_delta(np.array([eps]))[0])
        worst = max(worst, abs(got - truth))
    assert worst < 1e-10
    # ε < 0 by complementation (the pair is symmetric); ε = 0 is the total variation
    p = ReplaceOneGaussianProfile(1.0, 0.1)
    d0 = float(np.exp(p.log_delta(np.array([0.0]))[0]))
    assert d0 == pytest.approx(math.exp(_mp_log_delta(1e-12, 1.0, 0.1)), rel=1e-6)
    dn = float(np.exp(p.log_delta(np.array([-0.3]))[0]))
    assert dn == pytest.approx(1 - math.exp(-0.3) + math.exp(-0.3) * math.exp(_mp_log_delta(0.3, 1.0, 0.1)), rel=1e-9)


def _delta_2d(eps: float, g: tuple[float, float], gp: tuple[float, float], q: float, n: int = 801) -> float:
    """δ of (1−q)N(0, I) + qN(g, I) against (1−q)N(0, I) + qN(g′, I) in the plane, by a
    midpoint rule on [−9, 9]² (relative error about 1e-5 here)."""
    xs = np.linspace(-9.0, 9.0, n)
    h = xs[1] - xs[0]
    x, y = np.meshgrid(xs, xs, indexing="ij")

    def phi(a: float, b: float) -> np.ndarray:
        return np.asarray(np.exp(-((x - a) ** 2 + (y - b) ** 2) / 2) / (2 * math.pi))

    p = (1 - q) * phi(0, 0) + q * phi(*g)
    r = (1 - q) * phi(0, 0) + q * phi(*gp)
    return float(np.sum(np.maximum(p - math.exp(eps) * r, 0.0)) * h * h)


def test_antipodal_pair_is_the_worst_case():
    """Any two contributions g, g′ with ‖g‖, ‖g′‖ ≤ μ (in the plane they span with 0) give a δ
    at or below the antipodal pair's, at every ε tried (a test, not a proof: 24 random
    configurations × 4 ε; the quadrature's own error is 1e-5 relative, the margin 1e-3)."""
    rng = np.random.default_rng(11)
    for _ in range(24):
        mu, q = rng.uniform(0.3, 2.0), 10 ** rng.uniform(-2, -0.2)
        r1, r2, th = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0, math.pi)
        g, gp = (mu * r1, 0.0), (mu * r2 * math.cos(th), mu * r2 * math.sin(th))
        for eps in (0.0, 0.1, 0.4, 1.0):
            worst = math.exp(float(ReplaceOneGaussianProfile(mu, q).log_delta(np.array([eps]))[0]))
            assert _delta_2d(eps, g, gp, q) <= worst * (1 + 1e-3) + 1e-12
    # the antipodal configuration itself is reproduced by the quadrature
    assert _delta_2d(0.2, (1.0, 0.0), (-1.0, 0.0), 0.1) == pytest.approx(
        math.exp(float(ReplaceOneGaussianProfile(1.0, 0.1).log_delta(np.array([0.2]))[0])), rel=1e-4)


def test_restated_under_replace_one_directly():
    m = PoissonSubsampled(Gaussian(1.0), 0.01)
    r = to_relation(m, "replace_one")
    assert r == PoissonSubsampledReplaceOne(Gaussian(1.0), 0.01)
    assert r.neighbouring == "replace_one" and "replace-one" in repr(r)
    p, a = pairs_for(r)
    assert isinstance(p, ReplaceOneGaussianProfile) and p is a and p.mu == 1.0 and p.q == 0.01
    # other bases keep group privacy of two (a guarantee, not this class)
    other = to_relation(PoissonSubsampled(Laplace(1.0), 0.01), "replace_one")
    assert not isinstance(other, PoissonSubsampledReplaceOne)
    with pytest.raises(DomainError, match="mechanism"):
        PoissonSubsampledReplaceOne(Laplace(1.0), 0.01)
    with pytest.raises(DomainError, match="rate"):
        PoissonSubsampledReplaceOne(Gaussian(1.0), 1.5)


def test_single_step_epsilon_is_the_exact_profile():
    """One run: the PLD route inverts the exact profile (checked against mpmath's δ)."""
    r = PoissonSubsampledReplaceOne(Gaussian(1.0), 0.05)
    lo, hi = pld.epsilon_bounds([(r, 1)], 1e-3)
    assert math.exp(_mp_log_delta(hi, 1.0, 0.05)) <= 1e-3 * (1 + 1e-9)
    assert math.exp(_mp_log_delta(lo, 1.0, 0.05)) >= 1e-3 * (1 - 1e-9)


def test_dpsgd_mixed_with_randomized_response_is_tighter():
    """DP-SGD composed with a randomized response is stated under replace-one. Before, each
    step went through group privacy of two (RDP 5.68 at T = 1000, q = 0.01, σ = 1); now the
    PLD route composes the direct pair: [3.787, 3.795]. Still above the add/remove ε of the
    DP-SGD part alone (a replace-one guarantee is the stronger statement)."""
    m = PoissonSubsampled(Gaussian(1.0), 0.01)
    mix = m.compose(1000) + RandomizedResponse(1.0)
    c = routes.best_epsilon(mix, 1e-5)
    assert c.method == "pld"
    rdp = routes.best_epsilon(mix, 1e-5, "rdp").value
    # the RDP route now uses the pair's own curve (4.06; group of two gave 5.68)
    assert c.value < rdp < 4.2
    assert c.lower is not None and c.value - c.lower <= 0.01 * c.value
    assert c.value > routes.best_epsilon(m.compose(1000), 1e-5).value
    _, items = align([(m, 1000), (RandomizedResponse(1.0), 1)])
    assert isinstance(items[0][0], PoissonSubsampledReplaceOne)


def test_one_run_uses_the_pair():
    """One run under replace-one is a subsampled mechanism: the PLD route (the pair's exact
    profile) is in the default minimum, below the group-of-two RDP curve's conversion."""
    r = PoissonSubsampledReplaceOne(Gaussian(1.0), 0.05)
    c = routes.best_epsilon(r, 1e-3)
    assert c.method == "pld"
    assert c.value == pytest.approx(pld.epsilon_bounds([(r, 1)], 1e-3)[1])
    assert c.value < routes.best_epsilon(r, 1e-3, "rdp").value
