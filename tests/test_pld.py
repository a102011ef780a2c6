"""The PLD route: certified brackets against ground truth, edges, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from renyi import routes
from renyi.definitions import GDP, ApproxDP, PureDP
from renyi.errors import ConversionError, DomainError, RenyiNumericalWarning
from renyi.mechanisms import Gaussian, Laplace, RandomizedResponse
from renyi.pld import Bounds, PrivacyLossDistribution, delta_bounds, epsilon_bounds
from renyi.pld._profiles import supports
from renyi.subsampling import PoissonSubsampled, SubsampledWithoutReplacement


def _gauss_eps(mu: float, delta: float) -> float:
    """Exact ε of μ-GDP at δ (Balle & Wang 2018, Thm 8), by bisection with scipy's ndtr."""

    def log_d(e: float) -> float:
        la, lb = special.log_ndtr(mu / 2 - e / mu), special.log_ndtr(-mu / 2 - e / mu)
        return float(la + math.log(-math.expm1(min(e + lb - la, 0.0))))

    return float(optimize.brentq(lambda e: log_d(e) - math.log(delta), 0.0, 10 * mu * mu + 50, xtol=1e-13))


@pytest.mark.parametrize("k", [1, 10, 1000])
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_k_fold_gaussian_within_a_thousandth_and_never_below(k: int, delta: float) -> None:
    """k-fold Gaussian: lower ≤ exact ≤ upper ≤ exact·(1 + 1e-3)."""
    exact = _gauss_eps(math.sqrt(k), delta)
    lo, hi = epsilon_bounds([(Gaussian(1.0), k)], delta)
    assert lo <= exact <= hi <= exact * (1 + 1e-3)


def _rr_delta(eps0: float, k: int, eps: float) -> float:
    """Exact δ(ε) of k-fold binary randomized response: a binomial sum, in logs."""
    i = np.arange(k + 1)
    s = (k - 2 * i) * eps0
    logp = special.gammaln(k + 1) - special.gammaln(i + 1) - special.gammaln(k - i + 1) \
        + (k - i) * math.log(special.expit(eps0)) + i * math.log(special.expit(-eps0))
    keep = s > eps
    return float(np.sum(np.exp(logp[keep]) * -np.expm1(eps - s[keep])))


@pytest.mark.parametrize("eps0,k", [(1.0, 1), (0.5, 20), (0.1, 100)])
def test_k_fold_randomized_response_brackets_the_binomial_sum(eps0: float, k: int) -> None:
    """k-fold RR: lower ≤ exact δ ≤ upper at several ε."""
    for eps in (0.0, 0.3, 1.0, 2.5):
        exact = _rr_delta(eps0, k, eps)
        lo, hi = delta_bounds([(RandomizedResponse(eps0), k)], eps)
        assert lo <= exact * (1 + 1e-9) + 1e-300
        assert exact <= hi


def _laplace_delta1(t: float, u: float) -> float:
    """δ(u) of one Laplace pair with Δ/b = t, any real u (closed form; complement for u < 0)."""
    if u < 0:
        return -math.expm1(u) + math.exp(u) * _laplace_delta1(t, -u)
    return -math.expm1((u - t) / 2) if u < t else 0.0


def _laplace2_delta(t: float, eps: float) -> float:
    """Exact δ(ε) of two Laplace releases: E_{Z₁}[δ₁(ε − Z₁)] with the law of Z₁ (atoms at ±t,
    density e^{(z−t)/2}/4 between), by adaptive quadrature of a piecewise-smooth integrand."""
    atoms = 0.5 * _laplace_delta1(t, eps - t) + 0.5 * math.exp(-t) * _laplace_delta1(t, eps + t)
    pts = sorted({x for x in (eps - t, eps, eps + t) if -t < x < t})
    val, _ = integrate.quad(lambda z: 0.25 * math.exp((z - t) / 2) * _laplace_delta1(t, eps - z),
                            -t, t, points=pts or None, epsabs=1e-14, epsrel=1e-13)
    return atoms + float(val)


def test_two_fold_laplace_brackets_quadrature() -> None:
    """2-fold Laplace: lower ≤ exact δ ≤ upper (exact by 2-D quadrature)."""
    for eps in (0.5, 1.5):
        exact = _laplace2_delta(1.0, eps)
        lo, hi = delta_bounds([(Laplace(1.0), 2)], eps)
        assert lo <= exact * (1 + 1e-12) and exact <= hi
        assert hi - lo < 2e-3


def _subsampled_delta_exact(q: float, sigma: float, eps: float) -> float:
    """δ(ε) of one Poisson-subsampled Gaussian, remove direction, in 40-digit mpmath.

    P = (1−q)N(0, σ²) + qN(1, σ²), Q = N(0, σ²): the likelihood ratio 1 − q + q·e^{(2y−1)/(2σ²)}
    is increasing in y, so the optimal set is {y > y*} with ratio(y*) = e^ε. (scipy's quadrature
    of (p − e^ε q)₊, used before, is only good to about 1e-8.)
    """
    import mpmath as mp

    with mp.workdps(40):
        q_, s_, e_ = mp.mpf(q), mp.mpf(sigma), mp.mpf(eps)
        ys = mp.mpf(1) / 2 + s_**2 * mp.log((mp.e**e_ - 1 + q_) / q_)
        d = (1 - q_) * mp.ncdf(-ys / s_) + q_ * mp.ncdf(-(ys - 1) / s_) - mp.e**e_ * mp.ncdf(-ys / s_)
        return float(d)


def test_one_subsampled_gaussian_brackets_quadrature() -> None:
    """T = 1, DP-SGD step: the bracket contains the exact δ (mpmath)."""
    m = PoissonSubsampled(Gaussian(1.0), 0.1)
    for eps in (0.05, 0.3, 1.0):
        exact = _subsampled_delta_exact(0.1, 1.0, eps)
        lo, hi = delta_bounds([(m, 1)], eps)
        assert lo <= exact <= hi <= exact * (1 + 1e-8)


@pytest.mark.parametrize("q,sigma,steps,delta", [
    (0.025, 1.1, 80, 1e-5),
    (0.01, 1.0, 3000, 1e-5),
    (0.05, 2.0, 500, 1e-10),
])
def test_dpsgd_bracket_is_narrow_and_below_rdp(q: float, sigma: float, steps: int, delta: float) -> None:
    """DP-SGD: bracket ≤ 1 % wide and the upper bound is below the RDP route's ε."""
    m = PoissonSubsampled(Gaussian(sigma), q)
    lo, hi = epsilon_bounds([(m, steps)], delta)
    assert 0 < lo <= hi <= lo * 1.01
    assert hi < routes.best_epsilon(steps * m, delta, "rdp").value


def test_dpsgd_matches_published_peer_values() -> None:
    """q = 0.025, σ = 1.1, T = 80, δ = 1e-5: dp-accounting's PLD gives 1.306 (issue #17)."""
    lo, hi = epsilon_bounds([(PoissonSubsampled(Gaussian(1.1), 0.025), 80)], 1e-5)
    assert lo <= 1.3065 and hi >= 1.3000 and hi < 1.31


def test_guarantee_values_and_pure_dp_pairs() -> None:
    """PureDP/ApproxDP/GDP values: PLD brackets contain their exact profiles."""
    lo, hi = epsilon_bounds([(GDP(2.0), 1)], 1e-6)
    assert lo <= _gauss_eps(2.0, 1e-6) <= hi
    # k-fold ε-DP: the RR pair, so the same binomial sum
    for eps in (0.5, 2.0):
        exact = _rr_delta(0.4, 10, eps)
        lo, hi = delta_bounds([(PureDP(0.4), 10)], eps)
        assert lo <= exact * (1 + 1e-9) and exact <= hi
    # (ε, δ)-DP: one run at its own ε gives δ (the +∞ atom)
    lo, hi = delta_bounds([(ApproxDP(1.0, 1e-6), 1)], 1.0)
    assert lo <= 1e-6 <= hi <= 1.0001e-6


def test_heterogeneous_composition_and_value_api() -> None:
    """Mixed pipeline: + and compose agree with the item list; Bounds unpacks."""
    a = PrivacyLossDistribution.from_mechanism(Gaussian(2.0), 10)
    b = PrivacyLossDistribution([(Laplace(5.0), 3), RandomizedResponse(1.0)])
    both = (a + b).epsilon(1e-6)
    assert isinstance(both, Bounds)
    lo, hi = both
    direct = epsilon_bounds([(Gaussian(2.0), 10), (Laplace(5.0), 3), (RandomizedResponse(1.0), 1)], 1e-6)
    assert lo == pytest.approx(direct[0], rel=1e-12) and hi == pytest.approx(direct[1], rel=1e-12)
    assert a.compose(3).items == ((Gaussian(2.0), 30),)


def test_without_replacement_is_bracketed_and_below_rdp() -> None:
    """Sampling without replacement: a finite bracket, below the WBK19 RDP route."""
    m = SubsampledWithoutReplacement(Gaussian(2.0, neighbouring="replace_one"), 0.05)
    lo, hi = epsilon_bounds([(m, 200)], 1e-5)
    assert 0 < lo <= hi <= lo * 1.01
    assert hi <= routes.best_epsilon(200 * m, 1e-5, "rdp").value


def test_tiny_delta_and_large_epsilon_are_finite() -> None:
    """δ = 1e-30 gives a finite bracket; δ at ε = 1000 is a valid tiny number."""
    lo, hi = epsilon_bounds([(PoissonSubsampled(Gaussian(1.0), 0.01), 1000)], 1e-30)
    assert 0 < lo <= hi < math.inf
    lo, hi = delta_bounds([(Gaussian(1.0), 10)], 1000.0)
    # (the pessimistic pair keeps a ~1e-15 round-off mass at +∞, counted in full; the minimum
    # over routes takes the far smaller exact/RDP value)
    assert 0 <= lo <= hi < 1e-12
    assert routes.best_delta([(Gaussian(1.0), 10)], 1000.0).value < 1e-100


def test_rate_one_is_the_gaussian() -> None:
    """q = 1: the subsampled Gaussian is the Gaussian (exact GDP inside the bracket)."""
    lo, hi = epsilon_bounds([(PoissonSubsampled(Gaussian(2.0), 1.0), 16)], 1e-5)
    assert lo <= _gauss_eps(2.0, 1e-5) <= hi


def test_bad_input_is_a_clear_error() -> None:
    """δ ∉ (0, 1), counts < 1, unknown mechanisms: DomainError / ConversionError."""
    items = [(Gaussian(1.0), 2)]
    for bad in (0.0, 1.0, -1e-5, float("nan")):
        with pytest.raises(DomainError, match="delta"):
            epsilon_bounds(items, bad)
    with pytest.raises(DomainError, match="epsilon"):
        delta_bounds(items, -1.0)
    with pytest.raises(DomainError, match="count"):
        epsilon_bounds([(Gaussian(1.0), 0)], 1e-5)
    with pytest.raises(DomainError):
        epsilon_bounds([], 1e-5)

    class Opaque:
        pass

    assert not supports(Opaque())
    assert supports(Gaussian(1.0)) and supports(PoissonSubsampled(Laplace(1.0), 0.1)) and supports(PureDP(1.0))
    with pytest.raises(ConversionError):
        epsilon_bounds([(Opaque(), 1)], 1e-5)


def test_accountant_steps_match_one_shot_composition() -> None:
    """PLDAccountant after 300 recorded steps equals the one-shot bracket."""
    from renyi.pld import PLDAccountant

    m = PoissonSubsampled(Gaussian(1.0), 0.02)
    acct = PLDAccountant()
    for _ in range(3):
        acct.step(m, 100)
    assert acct.steps == 300
    assert tuple(acct.epsilon(1e-6)) == epsilon_bounds([(m, 300)], 1e-6)


def test_large_step_counts_are_finite_and_valid() -> None:
    """T = 10⁸ steps: a finite bracket, never above the RDP route (min with it is allowed)."""
    m = PoissonSubsampled(Gaussian(2.0), 0.001)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RenyiNumericalWarning)
        lo, hi = epsilon_bounds([(m, 10**8)], 1e-10)
    assert 0 <= lo <= hi < math.inf
