"""Tests for renyi.plrv: PLRV laws, exact privacy profiles, power means and claim checks."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given
from hypothesis import strategies as hs
from scipy import integrate

from renyi._logmath import log_delta_gaussian
from renyi.divergences import laplace_divergence, pure_dp_curve, renyi_divergence, renyi_divergence_continuous
from renyi.errors import DomainError
from renyi.plrv import (
    DiscretePrivacyLoss,
    GaussianPrivacyLoss,
    LaplacePrivacyLoss,
    PrivacyLoss,
    RDPCheck,
    check_rdp,
    check_zcdp,
    power_means,
    randomized_response_privacy_loss,
)

INF = math.inf
ORDERS = [1.01, 1.5, 2.0, 8.0, 64.0, 1024.0]


def mp_gauss_delta(eps: float, mu: float) -> mp.mpf:
    """[BW18] Thm 8 at 50 digits: Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)."""
    mp.mp.dps = 50
    e, m = mp.mpf(eps), mp.mpf(mu)
    return mp.ncdf(m / 2 - e / m) - mp.exp(e) * mp.ncdf(-m / 2 - e / m)


# ---------------------------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_gaussian_profile_equals_analytic_gaussian(mu):
    """Gaussian δ(ε) equals the mpmath analytic Gaussian to 1e-10 relative."""
    loss = GaussianPrivacyLoss(mu * mu / 2)
    for eps in [0.0, 0.1, 0.5, 1.0, 3.0, 10.0]:
        want = mp_gauss_delta(eps, mu)
        if want < mp.mpf(10) ** -300:
            continue
        got = loss.delta(eps)
        assert abs(got - float(want)) <= 1e-10 * float(want)
        assert loss.log_delta(eps) == pytest.approx(float(log_delta_gaussian(eps, mu)), rel=1e-14)


def test_gaussian_golden_profile_values():
    """theory.md §10.3: exact δ at ε = 1, 3 and ε(1e-5) for Δ/σ = 1, the latter conservative."""
    loss = GaussianPrivacyLoss.from_sigma(1.0)
    assert loss.delta(1.0) == pytest.approx(0.1269367375066439, rel=1e-12)
    assert loss.delta(3.0) == pytest.approx(0.001537185369400955, rel=1e-12)
    eps = loss.epsilon(1e-5)
    assert 4.377178095681225 <= eps <= 4.377178095681225 * (1 + 1e-12)
    assert loss.delta(eps) <= 1e-5


@pytest.mark.parametrize("rho", [1e-4, 0.05, 0.5, 3.0])
def test_gaussian_moments_match_integration(rho):
    """Mean ρ and variance 2ρ of Z = log p/q, by quadrature of the actual pair, to 1e-10."""
    sd = 1.0
    shift = math.sqrt(2 * rho) * sd
    P = st.norm(0.0, sd)

    def z(x):
        return (shift * (shift - 2 * x)) / (2 * sd * sd)

    lo, hi = -40.0, 40.0
    mean = integrate.quad(lambda x: P.pdf(x) * z(x), lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0]
    var = integrate.quad(lambda x: P.pdf(x) * (z(x) - mean) ** 2, lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0]
    loss = GaussianPrivacyLoss(rho)
    assert loss.mean() == pytest.approx(mean, rel=1e-10)
    assert loss.var() == pytest.approx(var, rel=1e-10)
    assert (loss.mean(), loss.var()) == (rho, 2 * rho)


def test_gaussian_renyi_and_mgf():
    """(α−1)D_α = log E e^{(α−1)Z} = (α−1)αρ; E e^Z = e^{2ρ} (§10.2: Δ/σ=1 → e)."""
    loss = GaussianPrivacyLoss(0.5)
    assert loss.mgf(1.0) == pytest.approx(math.e, rel=1e-15)
    np.testing.assert_allclose(loss.renyi_divergence(ORDERS), 0.5 * np.array(ORDERS), rtol=1e-15)
    assert loss.renyi_divergence(INF) == INF
    assert GaussianPrivacyLoss.from_sigma(2.0, sensitivity=2.0).rho == 0.5


def test_gaussian_cdf_sf():
    """cdf + sf = 1; sf is accurate in the far tail."""
    loss = GaussianPrivacyLoss(0.5)
    t = np.array([-3.0, 0.5, 4.0])
    np.testing.assert_allclose(loss.cdf(t) + loss.sf(t), 1.0, rtol=1e-15)
    assert loss.sf(30.0) > 0 and loss.sf(30.0) == pytest.approx(st.norm.sf(29.5), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("t", [0.05, 0.5, 1.0, 4.0])
def test_laplace_profile_matches_hockey_stick_integral(t):
    """Laplace δ(ε) = ∫ (p − e^ε q)₊ by quadrature."""
    loss = LaplacePrivacyLoss(t)
    for eps in [0.0, 0.3 * t, 0.9 * t, t, 2 * t]:
        f = lambda x: max(0.5 * math.exp(-abs(x)) - math.exp(eps) * 0.5 * math.exp(-abs(x - t)), 0.0)
        want = sum(integrate.quad(f, a, b, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
                   for a, b in [(-60, 0), (0, t), (t, 60)])
        assert loss.delta(eps) == pytest.approx(want, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("t", [1e-4, 0.01, 0.5, 1.0, 4.0])
def test_laplace_moments_and_mgf(t):
    """Mean, variance and MGF of the §2.4 mixture against mpmath integration and §1.4(d)."""
    mp.mp.dps = 40
    tm = mp.mpf(t)

    def moment(fn):
        return (fn(tm) / 2 + fn(-tm) * mp.exp(-tm) / 2
                + mp.quad(lambda z: fn(z) * mp.exp((z - tm) / 2) / 4, [-tm, tm]))

    mean = moment(lambda z: z)
    var = moment(lambda z: z * z) - mean**2
    loss = LaplacePrivacyLoss(t)
    assert loss.mean() == pytest.approx(float(mean), rel=1e-12)
    assert loss.var() == pytest.approx(float(var), rel=1e-9)
    for lam in [-3.0, -1.5, -0.5, 0.5, 1.0, 7.0]:
        want = mp.log(moment(lambda z: mp.exp(lam * z)))
        assert loss.log_mgf(lam) == pytest.approx(float(want), rel=1e-10, abs=1e-300)
    np.testing.assert_allclose(loss.renyi_divergence(ORDERS), laplace_divergence(t, ORDERS), rtol=0)


def test_laplace_cdf_sf_atoms():
    """Atoms at ±t with masses ½e^{−t} and ½."""
    loss = LaplacePrivacyLoss(1.0)
    assert loss.cdf(-1.0) == pytest.approx(0.5 * math.exp(-1.0))
    assert loss.cdf(-1.0 - 1e-12) == 0.0
    assert loss.sf(1.0) == 0.0
    assert loss.sf(1.0 - 1e-12) == pytest.approx(0.5)
    assert loss.ess_sup() == 1.0


# ---------------------------------------------------------------------------------------------
# finite support
# ---------------------------------------------------------------------------------------------
def brute_delta(p, q, eps):
    return max(np.sum(np.maximum(p - math.exp(eps) * q, 0)), np.sum(np.maximum(q - math.exp(eps) * p, 0)))


@hs.composite
def pmf_pairs(draw):
    n = draw(hs.integers(2, 7))
    a = np.asarray(draw(hs.lists(hs.floats(0, 1), min_size=n, max_size=n))) + 1e-3
    b = np.asarray(draw(hs.lists(hs.floats(0, 1), min_size=n, max_size=n))) + 1e-3
    return a / a.sum(), b / b.sum()


@given(pmf_pairs(), hs.sampled_from([0.0, 0.1, 0.5, 1.0, 3.0]))
def test_discrete_profile_equals_brute_force(pair, eps):
    """δ(ε) = max over directions of Σ (p − e^ε q)₊ (exact summation in log space)."""
    p, q = pair
    loss = DiscretePrivacyLoss.from_distributions(p, q)
    assert loss.delta(eps) == pytest.approx(brute_delta(p, q, eps), rel=1e-12, abs=1e-15)


@given(pmf_pairs())
def test_discrete_derived_dual_matches_exact_dual(pair):
    """The dual derived by change of measure equals the dual built from (Q, P)."""
    p, q = pair
    exact = DiscretePrivacyLoss.from_distributions(p, q)
    derived = DiscretePrivacyLoss(exact.values, exact.probs)
    orders = [0.5, 1.0, 2.0, 10.0, INF]
    np.testing.assert_allclose(derived.dual().renyi_divergence(orders), renyi_divergence(q, p, orders),
                               rtol=1e-9, atol=1e-14)
    # both routes take the log of a sum near 1, so their absolute error is a few ulps of 1
    np.testing.assert_allclose(exact.renyi_divergence(orders), renyi_divergence(p, q, orders), rtol=1e-12, atol=1e-15)


def test_discrete_with_support_gap():
    """Mass of P where q = 0 is an atom at +∞: D_α = ∞ for α > 1, δ ≥ that mass."""
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.6, 0.4, 0.0])
    loss = DiscretePrivacyLoss.from_distributions(p, q)
    assert loss.renyi_divergence(2.0) == INF and loss.mean() == INF
    assert loss.delta(5.0) == pytest.approx(0.2)
    assert loss.dual().renyi_divergence(2.0) == pytest.approx(renyi_divergence(q, p, 2.0))
    derived = DiscretePrivacyLoss(loss.dual_values, loss.dual_probs)  # Q's view: dual has the +∞ atom
    assert derived.dual().renyi_divergence(2.0) == INF


def test_rr_loss_matches_pure_dp_curve():
    """RR PLRV: Rényi curve = F_ε, δ(0) = tanh(ε/2), cdf/pmf/support."""
    loss = randomized_response_privacy_loss(1.0)
    np.testing.assert_allclose(loss.renyi_divergence(ORDERS + [1.0, INF]), pure_dp_curve(1.0, ORDERS + [1.0, INF]),
                               rtol=1e-12)
    assert loss.delta(0.0) == pytest.approx(math.tanh(0.5), rel=1e-14)
    assert loss.delta(1.0) == 0.0
    assert loss.epsilon(1e-9) <= 1.0
    assert loss.support().tolist() == [-1.0, 1.0]
    assert loss.pmf(1.0) == pytest.approx(math.exp(1) / (1 + math.exp(1)))
    assert loss.cdf(0.0) + loss.sf(0.0) == pytest.approx(1.0)


def test_discrete_moments_and_mgf():
    """mean, var, log_mgf of an explicit law."""
    loss = DiscretePrivacyLoss([1.0, -1.0, 0.5], [0.5, 0.25, 0.25],
                               [-1.0, 1.0, -0.5], [0.5, 0.25, 0.25])
    assert loss.mean() == pytest.approx(0.375)
    assert loss.var() == pytest.approx(0.5 + 0.25 + 0.0625 - 0.375**2)
    assert loss.log_mgf(2.0) == pytest.approx(math.log(0.5 * math.e**2 + 0.25 * math.e**-2 + 0.25 * math.e))


def test_discrete_bad_input():
    """Unnormalised probabilities, NaN or −∞ values and half-given duals are DomainErrors."""
    with pytest.raises(DomainError):
        DiscretePrivacyLoss([1.0, -1.0], [0.5, 0.6])
    with pytest.raises(DomainError):
        DiscretePrivacyLoss([np.nan, -1.0], [0.5, 0.5])
    with pytest.raises(DomainError):
        DiscretePrivacyLoss([-np.inf, 1.0], [0.5, 0.5])
    with pytest.raises(DomainError):
        DiscretePrivacyLoss([1.0, -1.0], [0.5, 0.5], dual_values=[1.0, -1.0])
    with pytest.raises(DomainError):
        DiscretePrivacyLoss([1.0, -1.0, 0.0], [0.5, 0.5])
    with pytest.raises(DomainError):
        DiscretePrivacyLoss.from_distributions([0.5, 0.5], [1.0])


# ---------------------------------------------------------------------------------------------
# Monte Carlo
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "loss",
    [GaussianPrivacyLoss(0.5), GaussianPrivacyLoss(0.02), LaplacePrivacyLoss(1.0),
     randomized_response_privacy_loss(0.7)],
    ids=["gauss", "gauss-small", "laplace", "rr"],
)
def test_monte_carlo_profile_within_ci(loss: PrivacyLoss):
    """δ(ε) estimated from 2·10⁵ PLRV samples lies within 5 standard errors of the exact value."""
    z = loss.sample(200_000, rng=np.random.default_rng(12345))
    assert z.mean() == pytest.approx(loss.mean(), abs=5 * math.sqrt(loss.var() / z.size))
    for eps in [0.0, 0.2, 0.5]:
        h = np.maximum(0.0, -np.expm1(eps - z))
        se = h.std(ddof=1) / math.sqrt(z.size)
        assert abs(h.mean() - loss.delta_one_way(eps)) <= 5 * se + 1e-12
        assert loss.sf(eps) == pytest.approx(np.mean(z > eps), abs=5 * math.sqrt(0.25 / z.size))


# ---------------------------------------------------------------------------------------------
# epsilon(delta)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", [GaussianPrivacyLoss(0.1), LaplacePrivacyLoss(2.0),
                                  DiscretePrivacyLoss.from_distributions([0.6, 0.3, 0.1], [0.2, 0.3, 0.5])])
@pytest.mark.parametrize("delta", [1e-1, 1e-3, 1e-8])
def test_epsilon_is_conservative_inverse(loss, delta):
    """ε(δ) satisfies δ(ε) ≤ δ and is tight: δ(ε − 1e-9) > δ (unless ε = 0)."""
    eps = loss.epsilon(delta)
    assert loss.delta(eps) <= delta
    if eps > 0:
        assert loss.delta(max(eps - 1e-9, 0.0)) > delta


def test_epsilon_domain():
    """δ must be in (0, 1]; ε must be ≥ 0."""
    loss = GaussianPrivacyLoss(0.5)
    for bad in [0.0, -1e-5, 1.5, np.nan]:
        with pytest.raises(DomainError):
            loss.epsilon(bad)
    with pytest.raises(DomainError):
        loss.delta(-1.0)
    with pytest.raises(DomainError):
        GaussianPrivacyLoss(-0.1)
    with pytest.raises(DomainError):
        LaplacePrivacyLoss(0.0)


# ---------------------------------------------------------------------------------------------
# power means
# ---------------------------------------------------------------------------------------------
def test_power_means_special_orders():
    """M_1 = exp(KL) (geometric), M_2 = E_P[e^Z] (arithmetic), M_∞ = max e^Z, M_0 = harmonic."""
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    L = p / q
    m = power_means((p, q), [0.0, 1.0, 2.0, INF])
    assert m[0] == pytest.approx(1.0 / np.sum(p / L))
    assert m[1] == pytest.approx(math.exp(np.sum(p * np.log(L))))
    assert m[2] == pytest.approx(np.sum(p * L))
    assert m[3] == pytest.approx(L.max())
    g = power_means(GaussianPrivacyLoss(0.5), [1.0, 2.0, INF])
    assert g.tolist() == [pytest.approx(math.exp(0.5)), pytest.approx(math.e), INF]


@given(pmf_pairs())
def test_power_means_monotone(pair):
    """M_α is non-decreasing in α (it is exp D_α)."""
    m = power_means(pair, [0.0, 0.5, 1.0, 1.5, 2.0, 4.0, 16.0, INF])
    assert np.all(np.diff(m) >= -1e-12 * m[1:])


def test_power_means_bad_input():
    """Unknown objects are TypeErrors."""
    with pytest.raises(TypeError):
        power_means(42, [2.0])


# ---------------------------------------------------------------------------------------------
# checking claims
# ---------------------------------------------------------------------------------------------
class Curve:
    def __init__(self, f):
        self.f = f

    def rdp(self, a):
        return self.f(np.asarray(a, dtype=np.float64))

    def __repr__(self):
        return "Curve"


def test_check_zcdp_gaussian_holds_and_fails():
    """ρ-zCDP holds for the Gaussian at its ρ and fails just below."""
    loss = GaussianPrivacyLoss(0.5)
    ok = check_zcdp(loss, 0.5)
    assert isinstance(ok, RDPCheck) and ok.holds
    bad = check_zcdp(loss, 0.5 * (1 - 1e-6))
    assert not bad.holds and not any(bad.holds_at)
    assert "FAILS" in str(bad) and "HOLDS" in str(ok) and "D(Q||P)" in str(ok)


def test_check_rdp_rr_against_pure_dp_curve():
    """RR(ε) meets the F_ε curve exactly but not a slightly smaller ε."""
    loss = randomized_response_privacy_loss(1.0)
    assert check_rdp(loss, Curve(lambda a: pure_dp_curve(1.0, a))).holds
    assert not check_rdp(loss, Curve(lambda a: pure_dp_curve(0.999, a))).holds
    assert check_zcdp(loss, 1.0 * math.tanh(0.5)).holds  # ε·tanh(ε/2) is the tight zCDP constant


def test_check_uses_both_directions():
    """An asymmetric pair is checked in both orders."""
    p, q = np.array([0.9, 0.1]), np.array([0.5, 0.5])
    fwd = renyi_divergence(p, q, 2.0)
    rev = renyi_divergence(q, p, 2.0)
    assert rev > fwd
    res = check_rdp((p, q), Curve(lambda a: np.full_like(a, (fwd + rev) / 2)), [2.0])
    assert res.forward[0] == pytest.approx(fwd) and res.backward[0] == pytest.approx(rev)
    assert not res.holds


def test_check_continuous_pair_and_mechanism_objects():
    """Frozen scipy pairs are integrated numerically; objects with .privacy_loss() are accepted."""
    res = check_zcdp((st.norm(0, 1), st.norm(1, 1)), 0.5, alphas=[2.0, 8.0])
    assert res.holds
    assert not check_zcdp((st.laplace(0, 1), st.laplace(1, 1)), 0.3, alphas=[2.0]).holds

    class Mech:
        def privacy_loss(self):
            return LaplacePrivacyLoss(1.0)

    assert check_zcdp(Mech(), 1.0 + math.exp(-1.0) - 1.0).holds  # [HM25]: ρ = ε + e^{−ε} − 1


def test_check_with_library_guarantees():
    """Duck typing works with renyi.definitions guarantee values."""
    defs = pytest.importorskip("renyi.definitions")
    assert check_rdp(GaussianPrivacyLoss(0.5), defs.ZCDP(0.5)).holds
    assert check_rdp(randomized_response_privacy_loss(1.0), defs.PureDP(1.0)).holds
    assert not check_rdp(LaplacePrivacyLoss(2.0), defs.PureDP(1.0)).holds


def test_check_bad_input():
    """Orders ≤ 1, negative ρ and guarantee-less objects are rejected."""
    loss = GaussianPrivacyLoss(0.5)
    with pytest.raises(DomainError):
        check_zcdp(loss, 0.5, alphas=[1.0])
    with pytest.raises(DomainError):
        check_zcdp(loss, -0.5)
    with pytest.raises(TypeError):
        check_rdp(loss, object())


def test_continuous_pair_kl_is_gaussian_mean():
    """The KL of the Gaussian pair by quadrature equals the PLRV mean ρ."""
    est = renyi_divergence_continuous(st.norm(0, 2), st.norm(1, 2), 1.0)
    assert est.value == pytest.approx(GaussianPrivacyLoss.from_sigma(2.0).mean(), rel=1e-10)
