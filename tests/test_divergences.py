"""Tests for renyi.divergences: golden values, closed forms vs numerics, laws, bad input."""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
import scipy.stats as st
from hypothesis import assume, given
from hypothesis import strategies as hs

from renyi.divergences import (
    NORMALIZATION_TOL,
    DivergenceEstimate,
    bernoulli_divergence,
    discrete_gaussian_divergence,
    discrete_gaussian_normalizer,
    discrete_laplace_divergence,
    exponential_divergence,
    exponential_family_divergence,
    gaussian_divergence,
    gaussian_divergence_unequal,
    kary_randomized_response_divergence,
    laplace_divergence,
    mvn_divergence,
    poisson_divergence,
    pure_dp_curve,
    randomized_response_divergence,
    renyi_divergence,
    renyi_divergence_continuous,
    renyi_divergence_log,
)
from renyi.errors import DomainError, RenyiNumericalWarning

INF = math.inf
S = [[2.0, 0.5], [0.5, 1.0]]
ORDERS = [1.01, 1.5, 2.0, 8.0, 64.0, 1024.0]


def rel(a: float, b: float) -> float:
    if a == b:
        return 0.0
    return abs(a - b) / abs(b)


def gauss_logpdf(m: float, s: float):
    c = -math.log(s) - 0.5 * math.log(2 * math.pi)
    return lambda x: -0.5 * ((x - m) / s) ** 2 + c


def laplace_logpdf(m: float, b: float):
    return lambda x: -abs(x - m) / b - math.log(2 * b)


# ---------------------------------------------------------------------------------------------
# theory.md §10.1 golden values (mpmath, 30-40 digits; see theory_checks/check5.py)
# ---------------------------------------------------------------------------------------------
GOLDEN = [
    ("gaussian", lambda: gaussian_divergence(0.0, 1.0, 2.0, 3.0), 0.375),
    ("unequal a=2", lambda: gaussian_divergence_unequal(0, 1, 1, 2, 2.0), 0.5561964294493768),
    ("unequal KL", lambda: gaussian_divergence_unequal(0, 1, 1, 2, 1.0), 0.4431471805599453),
    ("unequal a=1.3", lambda: gaussian_divergence_unequal(0, 2, 1, 1, 1.3), 9.644494641096808),
    ("unequal a=1.4", lambda: gaussian_divergence_unequal(0, 2, 1, 1, 1.4), INF),
    ("mvn", lambda: mvn_divergence([0, 0], S, [1, 1], np.eye(2), 1.5), 3.975442107788185),
    ("mvn common", lambda: mvn_divergence([0, 0], S, [1, 2], S, 2.0), 4.0),
    ("laplace a=1", lambda: laplace_divergence(1.0, 1.0), 0.3678794411714423),
    ("laplace a=2", lambda: laplace_divergence(1.0, 2.0), 0.6191236299985929),
    ("laplace a=10", lambda: laplace_divergence(1.0, 10.0), 0.9286829020966802),
    ("laplace a=inf", lambda: laplace_divergence(1.0, INF), 1.0),
    ("laplace a=1/2", lambda: laplace_divergence(1.0, 0.5), 0.1890697837836712),
    ("laplace t=.5", lambda: laplace_divergence(0.5, 4.0), 0.3209265301787175),
    ("rr a=1", lambda: randomized_response_divergence(0.75, 1.0), 0.5493061443340548),
    ("rr a=2", lambda: randomized_response_divergence(0.75, 2.0), 0.8472978603872036),
    ("rr a=inf", lambda: randomized_response_divergence(0.75, INF), 1.098612288668110),
    ("bernoulli", lambda: bernoulli_divergence(0.3, 0.1, 3.0), 0.5694701670275406),
    ("F eps=1 a=1", lambda: pure_dp_curve(1.0, 1.0), 0.4621171572600098),
    ("F eps=1 a=2", lambda: pure_dp_curve(1.0, 2.0), 0.7353256640555192),
    ("F eps=1 a=10", lambda: pure_dp_curve(1.0, 10.0), 0.9651931464538415),
    ("F eps=1 a=100", lambda: pure_dp_curve(1.0, 100.0), 0.9968357405301190),
    ("F eps=.1 a=2", lambda: pure_dp_curve(0.1, 2.0), 0.009958584394956225),
    ("F eps=5 a=2", lambda: pure_dp_curve(5.0, 2.0), 4.993284957413156),
    ("dlap d=1", lambda: discrete_laplace_divergence(2.0, 1, 2.0), 0.2273362938026457),
    ("dlap d=3 a=2", lambda: discrete_laplace_divergence(2.0, 3, 2.0), 1.137905758605720),
    ("dlap d=3 a=5", lambda: discrete_laplace_divergence(2.0, 3, 5.0), 1.382583562618648),
    ("dgauss 1 1.5", lambda: discrete_gaussian_divergence(1.0, 1, 1.5), 0.7499999785976961),
    ("dgauss 1 2", lambda: discrete_gaussian_divergence(1.0, 1, 2.0), 1.0),
    ("dgauss 1 2.5", lambda: discrete_gaussian_divergence(1.0, 1, 2.5), 1.249999992865899),
    ("dgauss .25 1.5", lambda: discrete_gaussian_divergence(0.5, 1, 1.5), 2.942460965106038),
    ("dgauss .25 2.5", lambda: discrete_gaussian_divergence(0.5, 1, 2.5), 4.980820321702013),
    ("poisson a=2", lambda: poisson_divergence(3.0, 2.0, 2.0), 0.5),
    ("poisson a=3", lambda: poisson_divergence(3.0, 2.0, 3.0), 0.875),
    ("exponential", lambda: exponential_divergence(1.0, 2.0, 1.5), 0.6931471805599453),
    ("dgauss normaliser", lambda: discrete_gaussian_normalizer(1.0), 2.506628288042906),
]


@pytest.mark.parametrize("name,compute,expected", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_values(name, compute, expected):
    """theory.md §10.1 test vectors are reproduced to 1e-9 relative."""
    got = compute()
    assert isinstance(got, float)
    if expected == INF:
        assert got == INF
    else:
        assert rel(got, expected) <= 1e-9


# ---------------------------------------------------------------------------------------------
# numerical route vs closed forms
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shift", [0.1, 1.0, 3.0])
def test_gaussian_closed_form_matches_quadrature(shift):
    """Gaussian closed form = quadrature to 1e-8 relative at α ∈ {1.01, …, 1024}."""
    est = renyi_divergence_continuous(gauss_logpdf(0.0, 1.0), gauss_logpdf(shift, 1.0), ORDERS)
    exact = gaussian_divergence(0.0, shift, 1.0, ORDERS)
    assert np.all(np.abs(est.value / exact - 1) <= 1e-8)
    assert np.all(est.value >= exact * (1 - 1e-12))


@pytest.mark.parametrize("s1,s2", [(1.0, 2.0), (2.0, 1.0), (1.0, 1.1)])
def test_unequal_variance_matches_quadrature(s1, s2):
    """Unequal-variance closed form = quadrature (where finite), α=1 included."""
    orders = [0.3, 1.0, 1.01, 1.5, 2.0, 8.0]
    exact = gaussian_divergence_unequal(0.0, s1, 1.0, s2, orders)
    est = renyi_divergence_continuous(st.norm(0.0, s1), st.norm(1.0, s2), orders)
    for e, v in zip(exact, est.value):
        if math.isfinite(e) and e < 50:
            assert rel(v, e) <= 1e-8
        else:
            assert e > 50 or v == INF


@pytest.mark.parametrize("t", [0.1, 1.0, 4.0])
def test_laplace_closed_form_matches_quadrature(t):
    """Laplace closed form = quadrature to 1e-8 relative (α ∈ {1.01, …, 1024}, ½, 1, ∞)."""
    orders = ORDERS + [0.25, 0.5, 1.0, INF]
    est = renyi_divergence_continuous(laplace_logpdf(0.0, 1.0), laplace_logpdf(t, 1.0), orders,
                                      breaks=(0.0, t))
    exact = laplace_divergence(t, orders)
    assert np.all(np.abs(est.value / exact - 1) <= 1e-8)


def test_continuous_accepts_frozen_scipy_distributions():
    """Frozen scipy distributions: value, error estimate and its direction."""
    est = renyi_divergence_continuous(st.laplace(0, 2), st.laplace(1, 2), [0.5, 2.0, 8.0])
    exact = laplace_divergence(0.5, [0.5, 2.0, 8.0])
    assert isinstance(est, DivergenceEstimate)
    assert np.all(np.abs(est.value / exact - 1) <= 1e-8)
    assert np.all(est.error >= 0) and np.all(est.error < 1e-8)
    single = renyi_divergence_continuous(st.norm(0, 1), st.norm(1, 1), 2.0)
    assert isinstance(single.value, float) and float(single) == single.value


def test_continuous_support_edge_cases():
    """P not ≪ Q gives ∞ for α ≥ 1 and a finite value for α < 1; disjoint supports give ∞."""
    wide, narrow = st.uniform(0, 2), st.uniform(0, 1)
    est = renyi_divergence_continuous(wide, narrow, [0.5, 1.0, 2.0])
    assert est.value[1] == INF and est.value[2] == INF
    # D_½(U(0,2)‖U(0,1)) = −2 log ∫₀¹ √(½) = log 2
    assert rel(est.value[0], math.log(2)) <= 1e-9
    far = renyi_divergence_continuous(st.uniform(0, 1), st.uniform(2, 1), [0.0, 0.5, 2.0])
    assert np.all(far.value == INF)
    # D_0 = −log Q(supp P)
    d0 = renyi_divergence_continuous(narrow, wide, 0.0)
    assert rel(d0.value, math.log(2)) <= 1e-9


def test_continuous_unbounded_ratio_is_infinite_at_alpha_inf():
    """Equal-variance Gaussians have unbounded log p/q: D_∞ = ∞; Laplace has D_∞ = t."""
    assert renyi_divergence_continuous(st.norm(0, 1), st.norm(1, 1), INF).value == INF
    assert rel(renyi_divergence_continuous(st.laplace(0, 1), st.laplace(1, 1), INF).value, 1.0) <= 1e-9


def test_exponential_matches_quadrature_and_family():
    """Exponential closed form = exponential-family formula = quadrature."""
    orders = [0.5, 1.0, 1.5, 1.9]
    exact = exponential_divergence(1.0, 2.0, orders)
    fam = exponential_family_divergence(lambda th: -np.log(-th), -1.0, -2.0, orders,
                                        grad_A=lambda th: -1.0 / th)
    est = renyi_divergence_continuous(st.expon(scale=1.0), st.expon(scale=0.5), orders)
    np.testing.assert_allclose(fam, exact, rtol=1e-12)
    np.testing.assert_allclose(est.value, exact, rtol=1e-8)
    # α r₁ + (1−α) r₂ ≤ 0 ⇔ α ≥ 2: infinite
    assert exponential_divergence(1.0, 2.0, 2.0) == INF
    assert exponential_divergence(2.0, 1.0, INF) == pytest.approx(math.log(2))
    assert exponential_divergence(1.0, 2.0, INF) == INF


def test_poisson_matches_family_and_summation():
    """Poisson closed form = exponential family = direct summation over k."""
    orders = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 7.0])
    exact = poisson_divergence(3.0, 2.0, orders)
    fam = exponential_family_divergence(np.exp, math.log(3), math.log(2), orders, grad_A=np.exp)
    k = np.arange(0, 400)
    direct = renyi_divergence_log(st.poisson(3).logpmf(k), st.poisson(2).logpmf(k), orders)
    np.testing.assert_allclose(exact, fam, rtol=1e-12)
    np.testing.assert_allclose(exact, direct, rtol=1e-10)
    assert poisson_divergence(2.0, 3.0, INF) == pytest.approx(1.0)
    assert poisson_divergence(3.0, 2.0, INF) == INF


def test_exponential_family_kl_by_finite_difference():
    """Without grad_A the KL uses a central difference of A (accurate to ~1e-9)."""
    assert exponential_family_divergence(np.exp, math.log(3), math.log(2), 1.0) == pytest.approx(
        poisson_divergence(3.0, 2.0, 1.0), rel=1e-8)


def test_exponential_family_outside_natural_space_is_infinite():
    """θ_α outside the natural parameter space gives ∞."""
    with np.errstate(invalid="ignore"):
        assert exponential_family_divergence(lambda th: -np.log(-th), -1.0, -2.0, 2.5) == INF


def _mvn_det_formula(mu1, c1, mu2, c2, a):
    d = np.asarray(mu1, float) - np.asarray(mu2, float)
    ca = a * np.asarray(c2) + (1 - a) * np.asarray(c1)
    if np.any(np.linalg.eigvalsh(ca) <= 0):
        return INF
    quad = a / 2 * d @ np.linalg.solve(ca, d)
    ld = np.linalg.slogdet(ca)[1] - (1 - a) * np.linalg.slogdet(c1)[1] - a * np.linalg.slogdet(c2)[1]
    return quad - ld / (2 * (a - 1))


@given(hs.integers(0, 10_000), hs.sampled_from([0.5, 1.5, 2.0, 3.0, 10.0]))
def test_mvn_matches_determinant_formula(seed, a):
    """The eigenbasis evaluation equals the textbook determinant formula (theory §1.4(c))."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(3, 3))
    B = rng.normal(size=(3, 3))
    c1 = A @ A.T + 0.5 * np.eye(3)
    c2 = B @ B.T + 0.5 * np.eye(3)
    mu1, mu2 = rng.normal(size=3), rng.normal(size=3)
    expected = _mvn_det_formula(mu1, c1, mu2, c2, a)
    got = mvn_divergence(mu1, c1, mu2, c2, a)
    if expected == INF:
        assert got == INF
    else:
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_mvn_diagonal_is_sum_of_univariate():
    """Diagonal covariances: mvn = Σ univariate unequal-variance divergences, incl. α=1, ∞."""
    orders = [0.5, 1.0, 1 + 1e-9, 2.0, 5.0, INF]
    got = mvn_divergence([0, 1], np.diag([1.0, 4.0]), [1, 0], np.diag([2.0, 5.0]), orders)
    want = (np.asarray(gaussian_divergence_unequal(0, 1, 1, math.sqrt(2), orders))
            + np.asarray(gaussian_divergence_unequal(1, 2, 0, math.sqrt(5), orders)))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_isotropic_gaussian_vector():
    """Vector means: α‖Δ‖²/(2σ²); equal means give 0 even at α = ∞."""
    assert gaussian_divergence([0, 0], [3, 4], 5.0, 2.0) == pytest.approx(1.0)
    assert gaussian_divergence([1, 1], [1, 1], 1.0, INF) == 0.0
    assert gaussian_divergence(0, 1, 1.0, INF) == INF


@pytest.mark.parametrize("p", [0.5, 0.6, 0.75, 0.9, 0.999])
def test_rr_summation_matches_mpmath_formula(p):
    """RR via the discrete engine = §1.4(e) formula at 40 digits, to 1e-10 relative."""
    mp.mp.dps = 40
    pm = mp.mpf(p)
    for a in ORDERS:
        am = mp.mpf(a)
        want = mp.log(pm**am * (1 - pm) ** (1 - am) + (1 - pm) ** am * pm ** (1 - am)) / (am - 1)
        got = randomized_response_divergence(p, a)
        if abs(want) < 1e-30:  # p = ½: exactly 0 (mpmath keeps float 0.5's rounding noise)
            assert got == 0.0
        else:
            assert rel(got, float(want)) <= 1e-10


@pytest.mark.parametrize("eps", [1e-6, 0.1, 1.0, 5.0, 50.0, 500.0])
def test_pure_dp_curve_matches_rr_and_mpmath(eps):
    """F_ε(α) = RR with p = e^ε/(1+e^ε) = sinh form at 40 digits; finite for ε ≤ 500, α ≤ 1e6."""
    mp.mp.dps = 60
    orders = [0.25, 0.5, 1.0, 1 + 1e-10, 1.01, 1.5, 2.0, 8.0, 64.0, 1024.0, 1e6, INF]
    got = pure_dp_curve(eps, orders)
    assert np.all(np.isfinite(got))
    e = mp.mpf(eps)
    for a, g in zip(orders, got):
        if a == INF:
            want = e
        elif a == 1.0:
            want = e * mp.tanh(e / 2)
        else:
            am = mp.mpf(a)
            want = (mp.log(mp.exp(am * e) + mp.exp(-(am - 1) * e)) - mp.log(1 + mp.exp(e))) / (am - 1)
        assert rel(g, float(want)) <= 1e-9, (a, g, want)
    if eps <= 20:  # beyond, e^ε/(1+e^ε) rounds to 1 in float64 and RR degenerates
        np.testing.assert_allclose(
            got[:-1], randomized_response_divergence(math.exp(eps) / (1 + math.exp(eps)), orders[:-1]),
            rtol=1e-8)


def test_pure_dp_curve_vectorized_and_bounded():
    """Broadcasting over (ε, α); F_ε(α) ≤ min(ε, αε²/2)."""
    eps = np.array([[0.01], [1.0], [10.0]])
    alpha = np.array([1.001, 2.0, 10.0, 1000.0])
    f = pure_dp_curve(eps, alpha)
    assert f.shape == (3, 4)
    assert np.all(f <= np.minimum(eps, alpha * eps**2 / 2) * (1 + 1e-12))
    assert pure_dp_curve(0.0, 3.0) == 0.0


def test_kary_rr_matches_explicit_distribution():
    """k-ary RR = divergence of the explicit k-point pmfs; k=2 equals binary RR."""
    p, k = 0.3, 5
    P = np.full(k, p / k)
    P[0] += 1 - p
    Q = np.roll(P, 1)
    orders = [0.5, 1.0, 2.0, 8.0, INF]
    np.testing.assert_allclose(kary_randomized_response_divergence(p, k, orders),
                               renyi_divergence(P, Q, orders), rtol=1e-12)
    np.testing.assert_allclose(kary_randomized_response_divergence(0.5, 2, orders),
                               randomized_response_divergence(0.75, orders), rtol=1e-12)
    assert kary_randomized_response_divergence(0.0, 3, 2.0) == INF


@pytest.mark.parametrize("t,d", [(0.5, 1), (2.0, 3), (3.0, 7)])
def test_discrete_laplace_matches_summation(t, d):
    """Discrete Laplace = summation of the truncated pmfs; d = 1 equals F_{1/t}."""
    x = np.arange(-400, 401)
    lp = -np.abs(x) / t
    lq = -np.abs(x - d) / t
    lp -= np.logaddexp.reduce(lp)
    lq -= np.logaddexp.reduce(lq)
    orders = [0.5, 1.0, 1.5, 2.0, 8.0, INF]
    np.testing.assert_allclose(discrete_laplace_divergence(t, d, orders),
                               renyi_divergence_log(lp, lq, orders), rtol=1e-10)
    if d == 1:
        np.testing.assert_allclose(discrete_laplace_divergence(t, 1, orders), pure_dp_curve(1 / t, orders),
                                   rtol=1e-12)


@pytest.mark.parametrize("sigma", [0.2, 0.5, 1.0, 3.0])
def test_discrete_gaussian_matches_summation(sigma):
    """Discrete Gaussian (θ route) = direct summation; ≤ continuous, equal at integer α."""
    x = np.arange(-200, 201)
    lp = -(x**2) / (2 * sigma**2)
    lq = -((x - 2) ** 2) / (2 * sigma**2)
    lp -= np.logaddexp.reduce(lp)
    lq -= np.logaddexp.reduce(lq)
    orders = np.array([0.5, 1.0, 1.3, 1.5, 2.0, 2.5, 3.0, 7.7])
    got = discrete_gaussian_divergence(sigma, 2, orders)
    np.testing.assert_allclose(got, renyi_divergence_log(lp, lq, orders), rtol=1e-9)
    cont = gaussian_divergence(0, 2, sigma, orders)
    assert np.all(got <= cont * (1 + 1e-12))
    integer = orders == np.round(orders)
    np.testing.assert_allclose(got[integer], cont[integer], rtol=1e-12)
    assert discrete_gaussian_divergence(sigma, 2, INF) == INF


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.0])
def test_discrete_gaussian_normalizer(sigma):
    """θ_σ(0) by both routes equals the direct sum."""
    x = np.arange(-100, 101)
    assert rel(discrete_gaussian_normalizer(sigma), float(np.exp(-(x**2) / (2 * sigma**2)).sum())) <= 1e-14


# ---------------------------------------------------------------------------------------------
# α → 1 and other special orders
# ---------------------------------------------------------------------------------------------
NEAR_ONE = [1 - 1e-12, 1 + 1e-12, 1 + 1e-9, 1 - 1e-7]
CLOSED = [
    ("discrete", lambda a: renyi_divergence([0.2, 0.3, 0.5], [0.4, 0.4, 0.2], a)),
    ("unequal", lambda a: gaussian_divergence_unequal(0, 1, 1, 2, a)),
    ("mvn", lambda a: mvn_divergence([0, 0], S, [1, 1], np.eye(2), a)),
    ("laplace", lambda a: laplace_divergence(0.7, a)),
    ("bernoulli", lambda a: bernoulli_divergence(0.3, 0.1, a)),
    ("F", lambda a: pure_dp_curve(0.3, a)),
    ("F tiny", lambda a: pure_dp_curve(1e-5, a)),
    ("dlap", lambda a: discrete_laplace_divergence(2.0, 3, a)),
    ("dgauss", lambda a: discrete_gaussian_divergence(1.0, 1, a)),
    ("dgauss small", lambda a: discrete_gaussian_divergence(0.3, 2, a)),
    ("poisson", lambda a: poisson_divergence(3.0, 2.0, a)),
    ("exponential", lambda a: exponential_divergence(1.0, 2.0, a)),
]


@pytest.mark.parametrize("name,f", CLOSED, ids=[c[0] for c in CLOSED])
def test_alpha_near_one_is_continuous(name, f):
    """α = 1 ± 1e-12 agrees with the α = 1 branch (KL) to 1e-9 relative: no 0/0 blow-up."""
    kl = f(1.0)
    assert kl > 0
    for a in NEAR_ONE:
        assert rel(f(a), kl) <= 1e-6 * abs(a - 1) / 1e-7 + 1e-9


@pytest.mark.parametrize("name,f", CLOSED, ids=[c[0] for c in CLOSED])
def test_closed_forms_monotone_in_alpha(name, f):
    """Every closed form is non-decreasing in α on [0, ∞] (theory §1.3)."""
    orders = [0.0, 0.1, 0.5, 0.9, 1.0, 1.1, 2.0, 5.0, 20.0, 100.0, 1e4]
    vals = np.asarray(f(orders))
    for lo_v, hi_v in zip(vals[:-1], vals[1:]):
        assert hi_v == INF or hi_v >= lo_v - 1e-12 * max(1.0, abs(lo_v))
    assert vals[0] == pytest.approx(0.0, abs=1e-12)  # full supports: D_0 = 0


def test_laplace_half_branch_is_continuous_and_small_alpha_finite():
    """α = ½ is a removable singularity; α < ½ with huge t stays finite and correct."""
    for t in [0.01, 1.0, 30.0]:
        at = laplace_divergence(t, 0.5)
        for a in [0.5 - 1e-9, 0.5 + 1e-9]:
            assert rel(laplace_divergence(t, a), at) <= 1e-7
    mp.mp.dps = 50
    t, a = 2000.0, 0.1
    am, tm = mp.mpf(a), mp.mpf(t)
    want = mp.log(am / (2 * am - 1) * mp.exp((am - 1) * tm) + (am - 1) / (2 * am - 1) * mp.exp(-am * tm)) / (am - 1)
    assert rel(laplace_divergence(t, a), float(want)) <= 1e-12


def test_alpha_limits_discrete():
    """α = 0, 1, ∞ special orders of the discrete engine."""
    p = np.array([0.5, 0.5, 0.0])
    q = np.array([0.25, 0.25, 0.5])
    assert renyi_divergence(p, q, 0.0) == pytest.approx(math.log(2))  # −log Q(p>0)
    assert renyi_divergence(p, q, 1.0) == pytest.approx(math.log(2))
    assert renyi_divergence(p, q, INF) == pytest.approx(math.log(2))
    assert renyi_divergence(q, p, [0.5, 1.0, 2.0, INF]).tolist() == [pytest.approx(-2 * math.log(math.sqrt(0.5 * 0.25) * 2)), INF, INF, INF]


# ---------------------------------------------------------------------------------------------
# extremes and bad input
# ---------------------------------------------------------------------------------------------
def test_tiny_probabilities_and_huge_orders_are_finite():
    """p down to 1e-300 and α up to 1e6 give finite, correct values."""
    p = [1 - 1e-300, 1e-300]
    q = [1e-300, 1 - 1e-300]
    got = renyi_divergence(p, q, [0.5, 1.0, 2.0, 1e6, INF])
    assert np.all(np.isfinite(got))
    assert got[-1] == pytest.approx(300 * math.log(10), rel=1e-12)
    assert got[-2] == pytest.approx(300 * math.log(10), rel=1e-5)
    got2 = renyi_divergence([1e-300, 1 - 1e-300], [0.5, 0.5], [1e6, INF])
    assert got2 == pytest.approx([math.log(2), math.log(2)])
    # log-space input beyond float range
    lg = renyi_divergence_log([0.0, -1e5], [-1e5, 0.0], [0.5, 1.0, 1e6, INF])
    assert np.all(np.isfinite(lg)) and lg[-1] == pytest.approx(1e5)


def test_disjoint_supports_are_infinite_not_nan():
    """Disjoint supports → +∞ at every order (never NaN)."""
    got = renyi_divergence([1.0, 0.0], [0.0, 1.0], [0.0, 0.5, 1.0, 2.0, INF])
    assert np.all(got == INF)
    assert bernoulli_divergence(1.0, 0.0, 0.5) == INF


def test_not_absolutely_continuous():
    """P(q=0) > 0: ∞ for α ≥ 1, finite for α < 1."""
    got = renyi_divergence([0.5, 0.5], [1.0, 0.0], [0.5, 1.0, 2.0, INF])
    assert got[0] == pytest.approx(math.log(2)) and np.all(got[1:] == INF)


def test_identical_distributions_are_zero():
    """D_α(P‖P) = 0 at every order."""
    p = np.random.default_rng(1).dirichlet(np.ones(50))
    assert np.all(renyi_divergence(p, p, [0.0, 0.5, 1.0, 1 + 1e-12, 2.0, 1e6, INF]) == pytest.approx(0.0, abs=1e-13))


def test_scalar_and_array_orders():
    """Scalar α → float; array α → array of the same shape."""
    assert isinstance(renyi_divergence([0.5, 0.5], [0.25, 0.75], 2.0), float)
    out = renyi_divergence([0.5, 0.5], [0.25, 0.75], [[1.0, 2.0], [3.0, INF]])
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)


@pytest.mark.parametrize(
    "p,q,alpha,word",
    [
        ([0.5, 0.5], [0.2, 0.3, 0.5], 2.0, "same shape"),
        ([1.2, -0.2], [0.5, 0.5], 2.0, "[0, inf)"),
        ([0.5, 0.6], [0.5, 0.5], 2.0, "sum to 1"),
        ([0.5, np.nan], [0.5, 0.5], 2.0, "nan"),
        ([0.5, 0.5], [0.5, 0.5], -1.0, "alpha"),
        ([0.5, 0.5], [0.5, 0.5], np.nan, "alpha"),
        ([0.5, 0.5], [0.5, 0.5], [2.0, -0.5], "alpha"),
        ([], [], 2.0, "at least one value"),
    ],
)
def test_bad_input_raises_domain_error(p, q, alpha, word):
    """Shape mismatch, negative/NaN/unnormalised entries and α < 0 are DomainErrors."""
    with pytest.raises(DomainError) as info:
        renyi_divergence(p, q, alpha)
    assert word.lower() in str(info.value).lower()
    assert isinstance(info.value, ValueError)


def test_normalisation_tolerance_is_documented_value():
    """|Σp − 1| ≤ NORMALIZATION_TOL·n is accepted (and renormalised); beyond is rejected."""
    n = 4
    ok = np.full(n, 0.25) * (1 + 0.5 * NORMALIZATION_TOL)
    assert renyi_divergence(ok, np.full(n, 0.25), 2.0) == pytest.approx(0.0, abs=1e-15)
    bad = np.full(n, 0.25) * (1 + 2 * n * NORMALIZATION_TOL)
    with pytest.raises(DomainError):
        renyi_divergence(bad, np.full(n, 0.25), 2.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: gaussian_divergence(0, 1, -1.0, 2.0),
        lambda: gaussian_divergence_unequal(0, 0.0, 1, 1, 2.0),
        lambda: mvn_divergence([0, 0], [[1, 2], [2, 1]], [0, 0], np.eye(2), 2.0),
        lambda: mvn_divergence([0, 0], np.eye(3), [0, 0], np.eye(2), 2.0),
        lambda: laplace_divergence(-1.0, 2.0),
        lambda: laplace_divergence(1.0, -2.0),
        lambda: bernoulli_divergence(1.5, 0.5, 2.0),
        lambda: kary_randomized_response_divergence(0.5, 1, 2.0),
        lambda: pure_dp_curve(-1.0, 2.0),
        lambda: pure_dp_curve(INF, 2.0),
        lambda: pure_dp_curve(1.0, np.nan),
        lambda: discrete_laplace_divergence(0.0, 1, 2.0),
        lambda: discrete_laplace_divergence(1.0, 1.5, 2.0),
        lambda: discrete_gaussian_divergence(1.0, 0.5, 2.0),
        lambda: poisson_divergence(0.0, 1.0, 2.0),
        lambda: exponential_divergence(1.0, -1.0, 2.0),
        lambda: exponential_family_divergence(np.exp, 0.0, 1.0, INF),
        lambda: renyi_divergence_log([0.0, 0.1], [0.0, -np.inf], 2.0),
        lambda: renyi_divergence_continuous(st.norm(), st.norm(), -1.0),
        lambda: renyi_divergence_continuous(st.norm(), st.norm(), 2.0, support=(1.0, 0.0)),
    ],
)
def test_closed_form_bad_input(call):
    """Out-of-domain parameters raise DomainError."""
    with pytest.raises(DomainError):
        call()


def test_wrong_types_raise_type_error():
    """Non-numeric input is a TypeError."""
    with pytest.raises(TypeError):
        renyi_divergence(["a", "b"], [0.5, 0.5], 2.0)
    with pytest.raises(TypeError):
        laplace_divergence("1", 2.0)
    with pytest.raises(TypeError):
        renyi_divergence_continuous(object(), st.norm(), 2.0)


def test_near_one_orders_need_no_warning():
    """Ordinary inputs produce no RenyiNumericalWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RenyiNumericalWarning)
        renyi_divergence_continuous(st.norm(0, 1), st.norm(0.5, 1.5), [1 + 1e-9, 1.5, 300.0])


# ---------------------------------------------------------------------------------------------
# laws (hypothesis)
# ---------------------------------------------------------------------------------------------
def _pmf(draw, n):
    w = draw(hs.lists(hs.floats(0.0, 1.0), min_size=n, max_size=n))
    w = np.asarray(w) + 1e-3
    return w / w.sum()


@hs.composite
def pmf_pairs(draw, n_min=2, n_max=8):
    n = draw(hs.integers(n_min, n_max))
    return _pmf(draw, n), _pmf(draw, n)


LAW_ORDERS = np.array([0.0, 0.25, 0.5, 0.9, 1.0, 1.0001, 1.5, 2.0, 3.0, 10.0, 100.0, 1e4, INF])


@given(pmf_pairs())
def test_law_nonnegative(pair):
    """D_α ≥ 0."""
    p, q = pair
    assert np.all(renyi_divergence(p, q, LAW_ORDERS) >= 0)


@given(pmf_pairs())
def test_law_zero_iff_equal(pair):
    """D_α(P‖Q) = 0 iff P = Q (α > 0)."""
    p, q = pair
    assume(np.max(np.abs(p - q)) > 1e-3)
    assert np.all(renyi_divergence(p, q, LAW_ORDERS[1:]) > 0)
    assert np.all(renyi_divergence(p, p, LAW_ORDERS) <= 1e-13)


@given(pmf_pairs())
def test_law_monotone_in_alpha(pair):
    """D_α is non-decreasing in α on [0, ∞]."""
    p, q = pair
    d = renyi_divergence(p, q, LAW_ORDERS)
    assert np.all(np.diff(d) >= -1e-12 * np.maximum(1.0, d[1:]))


@given(pmf_pairs(), hs.integers(0, 2**31 - 1), hs.integers(1, 6))
def test_law_data_processing(pair, seed, m):
    """Post-processing by a random row-stochastic channel never increases D_α."""
    p, q = pair
    W = np.random.default_rng(seed).dirichlet(np.ones(m), size=p.size)
    pw, qw = p @ W, q @ W
    pw, qw = pw / pw.sum(), qw / qw.sum()
    before = renyi_divergence(p, q, LAW_ORDERS)
    after = renyi_divergence(pw, qw, LAW_ORDERS)
    assert np.all(after <= before + 1e-12 * np.maximum(1.0, before))


@given(pmf_pairs(2, 5), pmf_pairs(2, 5))
def test_law_additive_on_products(a, b):
    """D_α(P₁×P₂‖Q₁×Q₂) = D_α(P₁‖Q₁) + D_α(P₂‖Q₂)."""
    (p1, q1), (p2, q2) = a, b
    joint = renyi_divergence(np.outer(p1, p2), np.outer(q1, q2), LAW_ORDERS)
    parts = renyi_divergence(p1, q1, LAW_ORDERS) + renyi_divergence(p2, q2, LAW_ORDERS)
    np.testing.assert_allclose(joint, parts, rtol=1e-9, atol=1e-12)


@given(pmf_pairs())
def test_law_limits(pair):
    """α → 1 approaches KL; α → ∞ approaches D_∞ within log(min p)/(α−1)."""
    p, q = pair
    kl = float(np.sum(p * np.log(p / q)))
    near = renyi_divergence(p, q, [1 - 1e-10, 1 + 1e-10])
    np.testing.assert_allclose(near, kl, rtol=1e-6, atol=1e-12)
    dinf = float(np.max(np.log(p / q)))
    assert renyi_divergence(p, q, INF) == pytest.approx(dinf, rel=1e-12, abs=1e-15)
    a = 1e6
    da = renyi_divergence(p, q, a)
    j = int(np.argmax(np.log(p / q)))
    assert dinf + math.log(p[j]) / (a - 1) - 1e-12 <= da <= dinf + 1e-12


@given(pmf_pairs())
def test_law_skew_symmetry(pair):
    """D_α(P‖Q) = α/(1−α)·D_{1−α}(Q‖P) for α ∈ (0, 1) ([vEH14] Prop 2)."""
    p, q = pair
    for a in [0.2, 0.5, 0.7]:
        assert renyi_divergence(p, q, a) == pytest.approx(
            a / (1 - a) * renyi_divergence(q, p, 1 - a), rel=1e-9, abs=1e-14)
