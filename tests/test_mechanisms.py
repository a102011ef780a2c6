"""Mechanisms: exact curves against numerical divergences of their output distributions,
golden values (theory §10), exact (ε, δ) profiles, and the mechanism contract."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, special, stats

import renyi
from renyi import compose
from renyi.conversions import pure_dp_rdp
from renyi.definitions import GDP, ZCDP, ApproxDP, ApproxZCDP, Guarantee
from renyi.divergences import renyi_divergence, renyi_divergence_log
from renyi.errors import DomainError
from renyi.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExponentialMechanism,
    Gaussian,
    Laplace,
    Mechanism,
    ProposeTestRelease,
    RandomizedResponse,
    ptr_mode,
)
from renyi.mechanisms.base import NEIGHBOURING_RELATIONS
from renyi.mechanisms.discrete import discrete_gaussian_rdp, discrete_laplace_rdp
from renyi.mechanisms.exponential import bounded_range_kl, bounded_range_rdp
from renyi.mechanisms.laplace import laplace_rdp
from renyi.mechanisms.ptr import bit_mode, mode_distance_add_remove, mode_distance_swap
from renyi.mechanisms.randomized_response import randomized_response_rdp

ORDERS = np.array([1.001, 1.1, 1.5, 2.0, 3.7, 10.0, 40.0])


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))


# --------------------------------------------------------------------------- oracles
def laplace_divergence_quad(t: float, alpha: float) -> float:
    """D_α(Lap(0,1) ‖ Lap(t,1)) by quadrature of p^α q^{1−α} on the three pieces."""
    def f(y):
        return math.exp(alpha * (-abs(y)) + (1 - alpha) * (-abs(y - t))) / 2.0

    total = 0.0
    for a, b in [(-np.inf, 0.0), (0.0, t), (t, np.inf)]:
        v, _ = integrate.quad(f, a, b, epsabs=0, epsrel=1e-13, limit=200)
        total += v
    return math.log(total) / (alpha - 1)


def laplace_delta_quad(t: float, eps: float) -> float:
    """Hockey-stick ∫ (p − e^ε q)₊ for Lap(0,1) vs Lap(t,1); the integrand is positive iff y < (t − ε)/2."""
    def f(y):
        return max(0.0, 0.5 * math.exp(-abs(y)) - math.exp(eps) * 0.5 * math.exp(-abs(y - t)))

    cut = (t - eps) / 2
    v1, _ = integrate.quad(f, -np.inf, min(0.0, cut), epsabs=0, epsrel=1e-13)
    v2 = integrate.quad(f, 0.0, cut, epsabs=0, epsrel=1e-13)[0] if cut > 0 else 0.0
    return v1 + v2


def dgauss_logpmf(s2: float, mu: int, x: np.ndarray) -> np.ndarray:
    lp = -((x - mu) ** 2) / (2 * s2)
    return lp - special.logsumexp(lp)


def dlap_logpmf(t: float, mu: int, x: np.ndarray) -> np.ndarray:
    lp = -np.abs(x - mu) / t
    return lp - special.logsumexp(lp)


# --------------------------------------------------------------------------- Laplace
class TestLaplace:
    @pytest.mark.parametrize(
        "t, alpha, expected",
        [
            (1.0, 1.0, 0.3678794411714423),
            (1.0, 2.0, 0.6191236299985929),
            (1.0, 10.0, 0.9286829020966802),
            (1.0, math.inf, 1.0),
            (0.5, 4.0, 0.3209265301787175),
        ],
    )
    def test_golden_rdp(self, t, alpha, expected):
        """§10.1 Laplace rows."""
        assert float(laplace_rdp(t, alpha)) == pytest.approx(expected, rel=1e-13)

    def test_golden_zcdp(self):
        """§10.2: Laplace → zCDP tight, ρ = ε + e^{−ε} − 1 = 0.3678794411714423 at ε = 1."""
        assert Laplace(1.0).to_zcdp().rho == pytest.approx(0.3678794411714423, rel=1e-14)
        assert Laplace(1.0).rho == pytest.approx(0.3678794411714423, rel=1e-14)

    @pytest.mark.parametrize("t", [0.05, 0.3, 1.0, 3.0])
    def test_curve_equals_quadrature(self, t):
        """ε(α) of Laplace(b, Δ) is the divergence of its output densities on the worst pair."""
        m = Laplace(scale=2.0, sensitivity=2.0 * t)
        got = m.rdp(ORDERS)
        want = [laplace_divergence_quad(t, a) for a in ORDERS]
        assert rel(got, want) < 1e-8

    def test_curve_matches_divergences_module(self):
        """Same values as renyi.divergences.laplace_divergence (independent implementation)."""
        from renyi.divergences import laplace_divergence

        for t in (0.01, 1.0, 20.0):
            assert rel(laplace_rdp(t, ORDERS), laplace_divergence(t, ORDERS)) < 1e-12

    def test_alpha_near_one_is_continuous(self):
        """No 0/0 at α → 1: the values approach the KL limit t + e^{−t} − 1."""
        for t in (1e-6, 0.1, 5.0):
            kl = t + math.expm1(-t)
            near = float(laplace_rdp(t, 1.0 + 1e-12))
            assert near == pytest.approx(kl, rel=1e-9)

    @pytest.mark.parametrize("eps", [0.0, 0.1, 0.5, 0.99])
    def test_exact_profile_equals_hockey_stick(self, eps):
        """δ(ε′) = 1 − e^{(ε′−ε)/2} equals the hockey-stick integral of the output densities."""
        m = Laplace(1.0)
        assert m.delta(eps) == pytest.approx(laplace_delta_quad(1.0, eps), rel=1e-9)
        assert m.delta(eps) >= laplace_delta_quad(1.0, eps) * (1 - 1e-12)
        assert m.delta(1.0) == 0.0 and m.delta(3.0) == 0.0

    def test_profile_beats_curve_conversion(self):
        """The exact profile is never above what the RDP curve gives, and inverts on the safe side."""
        m = Laplace(0.5)
        for d in (1e-1, 1e-3, 1e-6):
            e = m.epsilon(d)
            assert e <= m.guarantee.epsilon(d) + 1e-12
            assert m.delta(e) <= d * (1 + 1e-12)
        assert m.epsilon == 2.0 and m.epsilon(1e-9) <= 2.0

    def test_privacy_loss(self):
        """The PLRV of the mechanism reproduces its curve and profile."""
        m = Laplace(1.0, 0.7)
        pl = m.privacy_loss()
        assert pl.delta(0.3) == pytest.approx(m.delta(0.3), rel=1e-12)

    def test_from_epsilon(self):
        """Laplace.from_epsilon gives b = Δ/ε with Δ/b ≤ ε exactly in floating point."""
        m = Laplace.from_epsilon(0.3, sensitivity=0.7)
        assert m.sensitivity / m.scale <= 0.3
        assert float(m.epsilon) == pytest.approx(0.3, rel=1e-15)

    @pytest.mark.slow
    def test_vector_profile_dominated_by_scalar(self):
        """Two coordinates sharing Δ₁ never exceed the one-coordinate profile (numerical check)."""
        for s in (0.5, 0.2):
            for eps in (0.1, 0.5):
                def f(y2, y1):
                    lp = -abs(y1) - abs(y2)
                    lq = -abs(y1 - s) - abs(y2 - (1 - s))
                    return max(0.0, math.exp(lp) - math.exp(eps + lq)) / 4

                v, _ = integrate.dblquad(f, -30, 30, -30, 30, epsabs=1e-10)
                assert v <= Laplace(1.0).delta(eps) + 1e-8


# --------------------------------------------------------------------------- randomized response
class TestRandomizedResponse:
    @pytest.mark.parametrize("alpha, expected", [(1.0, 0.5493061443340548), (2.0, 0.8472978603872036),
                                                 (math.inf, 1.098612288668110)])
    def test_golden(self, alpha, expected):
        """§10.1 RR p = 0.75 rows."""
        rr = RandomizedResponse.from_truth_probability(0.75)
        assert float(randomized_response_rdp(float(rr.epsilon), 2, alpha)) == pytest.approx(expected, rel=1e-13)
        if math.isfinite(alpha) and alpha > 1:
            assert float(rr.rdp(alpha)) == pytest.approx(expected, rel=1e-13)

    @pytest.mark.parametrize("eps, k", [(0.1, 2), (1.0, 2), (1.0, 3), (2.5, 7), (8.0, 50)])
    def test_curve_equals_divergence(self, eps, k):
        """ε(α) equals D_α of the two output pmfs for different true values."""
        rr = RandomizedResponse(eps, k)
        p = np.full(k, 1.0 / (math.exp(eps) + k - 1))
        q = p.copy()
        p[0] = q[1] = math.exp(eps) / (math.exp(eps) + k - 1)
        assert rel(rr.rdp(ORDERS), renyi_divergence(p, q, ORDERS)) < 1e-8

    def test_binary_is_pure_dp_curve(self):
        """Binary RR is the worst case of ε-DP: its curve is F_ε (theory §1.4(f))."""
        a = np.concatenate([ORDERS, [1.0, 1e4]])
        for eps in (1e-4, 0.5, 3.0, 40.0):
            assert rel(randomized_response_rdp(eps, 2, a), pure_dp_rdp(eps, a)) < 1e-12

    def test_exact_profile_is_hockey_stick(self):
        """δ(ε′) equals Σ (p − e^{ε′} q)₊ over the finite support."""
        rr = RandomizedResponse(1.5, 4)
        p = np.full(4, 1.0 / (math.exp(1.5) + 3))
        q = p.copy()
        p[0] = q[1] = math.exp(1.5) / (math.exp(1.5) + 3)
        for e in (0.0, 0.4, 1.2, 1.5, 2.0):
            want = np.sum(np.maximum(p - math.exp(e) * q, 0.0))
            assert rr.delta(e) == pytest.approx(want, rel=1e-12, abs=1e-300)
            if want > 0:
                assert rr.delta(rr.epsilon(want)) <= want * (1 + 1e-12)

    def test_release_frequencies(self):
        """k-RR keeps the truth with probability e^ε/(e^ε + k − 1), others uniformly (seeded; 5σ)."""
        rr = RandomizedResponse(1.0, 4)
        out = rr.release(np.full(200_000, 2), rng=np.random.default_rng(7))
        assert out.shape == (200_000,) and out.dtype == np.int64
        freq = np.bincount(out, minlength=4) / out.size
        p = rr.truth_probability
        se = math.sqrt(p * (1 - p) / out.size)
        assert abs(freq[2] - p) < 5 * se
        for j in (0, 1, 3):
            assert abs(freq[j] - (1 - p) / 3) < 5 * se

    def test_release_types(self):
        """Scalars stay scalars (bool for bool), arrays keep their shape."""
        rr = RandomizedResponse(2.0)
        assert isinstance(rr.release(1, np.random.default_rng(0)), int)
        assert isinstance(rr.release(True, np.random.default_rng(0)), bool)
        out = rr.release(np.zeros((3, 2), bool), np.random.default_rng(0))
        assert out.shape == (3, 2) and out.dtype == bool
        with pytest.raises(DomainError, match="category"):
            rr.release(2)
        with pytest.raises(DomainError):
            RandomizedResponse(1.0, 3).release([0, 1, 1.5])

    def test_realised_epsilon_not_above_nominal(self):
        """The truth probability actually used (n/2⁵³) gives a realised ε ≤ the stated ε."""
        for eps, k in [(0.3, 2), (1.0, 5), (5.0, 3)]:
            rr = RandomizedResponse(eps, k)
            pk = rr._keep_numerator / 2**53
            realised = math.log(pk * (k - 1) / (1 - pk))
            assert realised <= eps

    def test_bad_parameters(self):
        """ε < 0, NaN, k < 2, p outside [1/k, 1) are refused."""
        for bad in (-0.1, float("nan"), math.inf):
            with pytest.raises(DomainError, match="epsilon"):
                RandomizedResponse(bad)
        with pytest.raises(DomainError, match="k"):
            RandomizedResponse(1.0, k=1)
        with pytest.raises(DomainError, match="p must be in"):
            RandomizedResponse.from_truth_probability(0.2, k=2)


# --------------------------------------------------------------------------- discrete Gaussian
class TestDiscreteGaussian:
    @pytest.mark.parametrize(
        "s2, alpha, expected",
        [(1.0, 1.5, 0.7499999785976961), (1.0, 2.0, 1.0), (1.0, 2.5, 1.249999992865899),
         (0.25, 1.5, 2.942460965106038), (0.25, 2.5, 4.980820321702013)],
    )
    def test_golden_rdp(self, s2, alpha, expected):
        """§10.1 discrete Gaussian rows."""
        assert float(discrete_gaussian_rdp(s2, 1, alpha)) == pytest.approx(expected, rel=1e-12)

    @pytest.mark.parametrize("sigma, sens, eps, expected", [(1, 1, 1.0, 0.1413513394056219),
                                                            (2, 2, 0.5, 0.2300398870763042)])
    def test_golden_delta(self, sigma, sens, eps, expected):
        """§10.3 discrete Gaussian δ rows ([CKS20] Thm 7)."""
        assert DiscreteGaussian(sigma, sens).delta(eps) == pytest.approx(expected, rel=1e-12)

    @pytest.mark.parametrize("sigma, sens", [(Fraction(1, 2), 1), (1.0, 1), (0.7, 2), (3, 1)])
    def test_curve_equals_divergence(self, sigma, sens):
        """ε(α) equals the divergence of the two output pmfs (direct sums), ≤ αΔ²/(2σ²)."""
        m = DiscreteGaussian(sigma, sens)
        s2 = float(m.sigma2)
        x = np.arange(-200, 201, dtype=float)
        want = renyi_divergence_log(dgauss_logpmf(s2, sens, x), dgauss_logpmf(s2, 0, x), ORDERS)
        got = m.rdp(ORDERS)
        assert rel(got, want) < 1e-8
        assert np.all(got <= ORDERS * sens**2 / (2 * s2) * (1 + 1e-15))

    def test_profile_equals_hockey_stick(self):
        """The exact δ(ε) equals Σ (p − e^ε q)₊ of the output pmfs; ε(δ) inverts on the safe side."""
        m = DiscreteGaussian(1.3, 2)
        s2 = float(m.sigma2)
        x = np.arange(-300, 301, dtype=float)
        p, q = np.exp(dgauss_logpmf(s2, 0, x)), np.exp(dgauss_logpmf(s2, 2, x))
        for e in (0.0, 0.7, 2.0, 5.0):
            assert m.delta(e) == pytest.approx(np.sum(np.maximum(p - math.exp(e) * q, 0)), rel=1e-9)
        for d in (1e-2, 1e-6):
            e = m.epsilon(d)
            assert m.delta(e) <= d
            assert e <= m.guarantee.epsilon(d)

    def test_vector_mode(self):
        """vector=True gives ρ-zCDP only; the scalar mechanism refuses arrays."""
        mv = DiscreteGaussian(2.0, math.sqrt(2), vector=True)
        assert isinstance(mv.guarantee, ZCDP) and mv.guarantee.rho == pytest.approx(0.25)
        out = mv.release(np.array([[1, 2], [3, 4]]), rng=np.random.default_rng(0))
        assert out.shape == (2, 2) and out.dtype == np.int64
        with pytest.raises(DomainError, match="vector=True"):
            DiscreteGaussian(2.0).release([1, 2])
        assert DiscreteGaussian(2.0).release(np.array([5]), rng=np.random.default_rng(0)).shape == (1,)

    def test_sigma_exact(self):
        """σ as float is converted exactly: σ² = Fraction(σ)²."""
        m = DiscreteGaussian(0.1)
        assert m.sigma2 == Fraction(0.1) ** 2
        assert DiscreteGaussian(Fraction(1, 3)).sigma2 == Fraction(1, 9)

    def test_bad_parameters(self):
        """σ ≤ 0, NaN, inf, non-integer scalar sensitivity are refused."""
        for bad in (0, -1.0, float("nan"), math.inf, Fraction(-1, 2)):
            with pytest.raises(DomainError, match="sigma"):
                DiscreteGaussian(bad)
        with pytest.raises(DomainError, match="sensitivity"):
            DiscreteGaussian(1.0, 1.5)
        with pytest.raises(DomainError, match="sensitivity"):
            DiscreteGaussian(1.0, 0)


# --------------------------------------------------------------------------- discrete Laplace
class TestDiscreteLaplace:
    @pytest.mark.parametrize("d, alpha, expected", [(1, 2.0, 0.2273362938026457), (3, 2.0, 1.137905758605720),
                                                    (3, 5.0, 1.382583562618648)])
    def test_golden(self, d, alpha, expected):
        """§10.1 discrete Laplace rows (t = 2)."""
        assert float(discrete_laplace_rdp(2.0, d, alpha)) == pytest.approx(expected, rel=1e-12)
        assert float(DiscreteLaplace(2, d).rdp(alpha)) == pytest.approx(expected, rel=1e-12)

    @pytest.mark.parametrize("t, d", [(0.5, 1), (2, 3), (Fraction(7, 3), 2), (50.0, 4)])
    def test_curve_equals_divergence(self, t, d):
        """ε(α) equals the divergence of the two output pmfs (direct sums)."""
        m = DiscreteLaplace(t, d)
        x = np.arange(-4000, 4001, dtype=float)
        tf = float(t)
        want = renyi_divergence_log(dlap_logpmf(tf, 0, x), dlap_logpmf(tf, d, x), ORDERS)
        assert rel(m.rdp(ORDERS), want) < 1e-8

    def test_shift_one_is_pure_dp_curve(self):
        """At Δ = 1 the discrete Laplace is exactly the ε-DP worst case F_{1/t} (theory §1.4(g))."""
        a = np.concatenate([ORDERS, [1.0, 500.0]])
        for t in (0.2, 1.0, 1000.0):
            assert rel(discrete_laplace_rdp(t, 1, a), pure_dp_rdp(1.0 / t, a)) < 1e-12

    def test_profile_equals_hockey_stick(self):
        """Exact δ(ε′) of the worst pair; ε(δ) inverts on the safe side."""
        m = DiscreteLaplace(1.5, 3)
        x = np.arange(-2000, 2001, dtype=float)
        p, q = np.exp(dlap_logpmf(1.5, 0, x)), np.exp(dlap_logpmf(1.5, 3, x))
        for e in (0.0, 0.5, 1.9, 2.0, 2.5):
            assert m.delta(e) == pytest.approx(np.sum(np.maximum(p - math.exp(e) * q, 0)), rel=1e-9, abs=1e-15)
        for d in (1e-1, 1e-4):
            e = m.epsilon(d)
            assert m.delta(e) <= d and e <= float(m.epsilon)

    def test_pure_epsilon_and_vector(self):
        """ε = Δ/t; vector mode uses the pure-DP curve."""
        m = DiscreteLaplace(Fraction(1, 2), 2)
        assert m.epsilon == 4.0
        mv = DiscreteLaplace(2, 2, vector=True)
        assert rel(mv.rdp(ORDERS), pure_dp_rdp(1.0, ORDERS)) < 1e-15
        out = mv.release([[1, 2], [3, 4]], rng=np.random.default_rng(1))
        assert out.shape == (2, 2) and out.dtype == np.int64


# --------------------------------------------------------------------------- exponential mechanism
class TestExponential:
    def test_golden(self):
        """§10.5 BR rows: KL_max(1), (ξ, ρ), BR RDP at α = 4."""
        assert bounded_range_kl(1.0) == pytest.approx(0.1233015614822445, rel=1e-14)
        assert bounded_range_kl(1.0) - 1 / 8 == pytest.approx(-0.001698438517755467, rel=1e-12)
        assert float(bounded_range_rdp(1.0, 4.0)) == pytest.approx(0.4983015614822445, rel=1e-14)
        em = ExponentialMechanism(1.0)
        assert float(em.rdp(4.0)) == pytest.approx(0.4983015614822445, rel=1e-14)
        assert em.to_zcdp().rho == 0.125

    @given(st.floats(1e-6, 200.0))
    def test_kl_max_below_quadratic(self, eps):
        """ξ = KL_max(ε) − ε²/8 ≤ 0, so (0, ε²/8) is a valid zCDP hint."""
        assert bounded_range_kl(eps) <= eps * eps / 8

    @pytest.mark.parametrize("monotone", [False, True])
    def test_bound_holds_on_random_pairs(self, monotone):
        """The BR curve bounds D_α between EM outputs on random neighbouring utilities."""
        rng = np.random.default_rng(3)
        em = ExponentialMechanism(1.3, sensitivity=0.5, monotone=monotone)
        worst = 0.0
        orders = np.array([1.5, 2.0, 4.0, 16.0, math.inf])
        bound = np.asarray(em.rdp(orders))
        for _ in range(150):
            n = rng.integers(2, 8)
            u = rng.normal(size=n) * 2
            shift = rng.uniform(0, 0.5, size=n) if monotone else rng.uniform(-0.5, 0.5, size=n)
            p = special.softmax(em.eta * u)
            q = special.softmax(em.eta * (u + shift))
            d = np.maximum(renyi_divergence(p, q, orders), renyi_divergence(q, p, orders))
            assert np.all(d <= bound * (1 + 1e-9))
            worst = max(worst, float(np.max(d / bound)))
        assert worst > 0.2  # the test exercises the bound

    def test_release_is_em_distribution(self):
        """Gumbel-max output frequencies match exp(ηu)/Σ (seeded; 5σ)."""
        em = ExponentialMechanism(2.0)
        u = np.array([0.0, 1.0, 2.0, 0.5])
        rng = np.random.default_rng(11)
        n = 12_000
        counts = np.bincount([em.release(u, rng) for _ in range(n)], minlength=4)
        p = special.softmax(em.eta * u)
        se = np.sqrt(p * (1 - p) / n)
        assert np.all(np.abs(counts / n - p) < 5 * se)

    def test_bad_input(self):
        """NaN utilities, empty/2-D utilities and bad ε are refused."""
        em = ExponentialMechanism(1.0)
        with pytest.raises(DomainError, match="finite"):
            em.release([0.0, float("nan")])
        with pytest.raises(DomainError):
            em.release([])
        with pytest.raises(DomainError):
            em.release([[1.0, 2.0]])
        with pytest.raises(DomainError, match="epsilon"):
            ExponentialMechanism(0.0)
        with pytest.raises(DomainError, match="sensitivity"):
            ExponentialMechanism(1.0, sensitivity=-1)


# --------------------------------------------------------------------------- PTR
class TestPTR:
    def test_threshold_golden(self):
        """§10.5: log(1/δ)/ε = 13.81551055796427 at ε = 1, δ = 1e-6."""
        assert ptr_mode(1.0, 1e-6).threshold == pytest.approx(13.81551055796427, rel=1e-14)

    def test_distances(self):
        """Swap: max(0, ⌈(g−2)/2⌉); add/remove: max(0, g − 1); ties give mode 0."""
        for ones, zeros in [(5, 5), (6, 5), (7, 5), (8, 5), (9, 5), (12, 3)]:
            x = np.array([1] * ones + [0] * zeros)
            g = abs(ones - zeros)
            assert mode_distance_swap(x) == max(0, math.ceil((g - 2) / 2))
            assert mode_distance_add_remove(x) == max(0, g - 1)
        assert bit_mode(np.array([1, 0])) == 0

    @pytest.mark.parametrize("eps, delta", [(0.5, 1e-3), (1.0, 1e-6), (2.0, 1e-4)])
    @pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
    def test_exact_dp_on_all_small_pairs(self, eps, delta, neighbouring):
        """For every neighbouring pair with n ≤ 24, every event S ⊆ {⊥, 0, 1} has P(S) − e^ε Q(S) ≤ δ."""
        m = ptr_mode(eps, delta, neighbouring)
        dist = mode_distance_swap if neighbouring == "replace_one" else mode_distance_add_remove

        def sf(x):  # Pr[Lap(1/ε) > x]
            return 0.5 * math.exp(-eps * x) if x >= 0 else 1 - 0.5 * math.exp(eps * x)

        def law(ones, zeros):
            x = np.array([1] * ones + [0] * zeros)
            p_rel = sf(m.threshold - dist(x))
            out = {None: 1 - p_rel, 0: 0.0, 1: 0.0}
            out[bit_mode(x)] += p_rel
            return out

        worst = 0.0
        for n in range(1, 25):
            for ones in range(n + 1):
                zeros = n - ones
                if neighbouring == "replace_one":
                    nbrs = [(ones + 1, zeros - 1)] if zeros else []
                else:
                    nbrs = [(ones + 1, zeros), (ones, zeros + 1)]
                for o2, z2 in nbrs:
                    P, Q = law(ones, zeros), law(o2, z2)
                    for A, B in ((P, Q), (Q, P)):
                        for S in ([None], [0], [1], [None, 0], [None, 1], [0, 1]):
                            worst = max(worst, sum(A[s] for s in S) - math.exp(eps) * sum(B[s] for s in S))
        assert worst <= delta * (1 + 1e-9)

    def test_release(self):
        """Clearly stable data releases the mode; unstable data (a tie) almost always gives ⊥."""
        m = ptr_mode(1.0, 1e-6)
        rng = np.random.default_rng(5)
        assert m.release(np.array([1] * 80 + [0] * 2), rng) == 1
        assert all(m.release(np.array([1, 0] * 10), rng) is None for _ in range(200))
        assert m.guarantee == ApproxDP(1.0, 1e-6, neighbouring="replace_one")
        assert isinstance(compose(m, Gaussian(3.0)), ApproxZCDP)

    def test_generic_and_bad_distance(self):
        """A user-supplied distance that is NaN or negative is refused."""
        m = ProposeTestRelease(1.0, 1e-5, lambda x: x, lambda x: "answer")
        assert m.release(100.0, np.random.default_rng(0)) == "answer"
        with pytest.raises(DomainError, match="distance"):
            m.release(float("nan"))
        with pytest.raises(DomainError, match="distance"):
            m.release(-1.0)
        with pytest.raises(DomainError, match="bits"):
            ptr_mode(1.0, 1e-5).release(np.array([0, 2]))
        with pytest.raises(DomainError, match="delta"):
            ptr_mode(1.0, 1.0)


# --------------------------------------------------------------------------- Gaussian via GDP
def analytic_gaussian_epsilon(mu: float, delta: float) -> float:
    """[BW18] Thm 8 inverted independently with scipy.stats.norm and brentq."""
    def d(e):
        la, lb = stats.norm.logcdf(mu / 2 - e / mu), stats.norm.logcdf(-mu / 2 - e / mu)
        return math.exp(la) - math.exp(e + lb) - delta

    if d(0.0) <= 0:
        return 0.0
    hi = 1.0
    while d(hi) > 0:
        hi *= 2
    return optimize.brentq(d, 0.0, hi, xtol=1e-14, rtol=1e-14)


class TestGaussianComposition:
    @settings(max_examples=40, deadline=None)
    @given(
        st.lists(st.tuples(st.floats(0.5, 50.0), st.floats(0.1, 3.0), st.integers(1, 1000)), min_size=1, max_size=4),
        st.sampled_from([1e-3, 1e-5, 1e-8]),
    )
    def test_composition_is_exact(self, parts, delta):
        """Any composition of Gaussians reports the exact analytic-Gaussian ε (1e-6 rel.), never below."""
        g = compose(*[(Gaussian(s, c), k) for s, c, k in parts])
        assert isinstance(g, GDP)
        mu = math.sqrt(math.fsum(k * (c / s) ** 2 for s, c, k in parts))
        want = analytic_gaussian_epsilon(mu, delta)
        got = g.epsilon(delta)
        assert got >= want * (1 - 1e-12)
        assert got == pytest.approx(want, rel=1e-6, abs=1e-10)

    def test_vector_release(self):
        """Gaussian release keeps the shape of vector queries."""
        out = Gaussian(1.0).release(np.zeros((4, 3)), rng=np.random.default_rng(0))
        assert out.shape == (4, 3) and out.dtype == np.float64


# --------------------------------------------------------------------------- the contract
ALL = [
    Gaussian(1.5, 2.0),
    Laplace(2.0, 0.5),
    RandomizedResponse(1.0),
    RandomizedResponse(0.7, k=5),
    DiscreteGaussian(2.0),
    DiscreteGaussian(Fraction(3, 2), 3),
    DiscreteGaussian(2.0, 1.5, vector=True),
    DiscreteLaplace(3, 2),
    ExponentialMechanism(1.0, monotone=True),
    ptr_mode(1.0, 1e-6),
]


@pytest.mark.parametrize("m", ALL, ids=lambda m: repr(m)[:40])
class TestContract:
    def test_frozen_and_readable(self, m):
        """Mechanisms are frozen values with a readable repr and an explicit neighbouring relation."""
        name = dataclasses.fields(m)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(m, name, 3.0)
        assert type(m).__name__ in repr(m)
        assert m.neighbouring in NEIGHBOURING_RELATIONS
        assert isinstance(m, Mechanism) and isinstance(m.guarantee, Guarantee)

    def test_curve_monotone(self, m):
        """ε(α) is non-decreasing and ≥ 0 (∞ for PTR, which has no RDP curve)."""
        a = np.array([1.01, 1.5, 2.0, 5.0, 20.0, 100.0])
        v = np.asarray(m.rdp(a))
        assert np.all(v >= 0)
        if np.all(np.isfinite(v)):
            assert np.all(np.diff(v) >= -1e-12 * v[1:])
        else:
            assert isinstance(m, ProposeTestRelease) and np.all(np.isinf(v))

    def test_profile_consistent(self, m):
        """δ(ε(δ)) ≤ δ and ε(δ) never beats the exact quantity reported by the guarantee."""
        for d in (1e-2, 1e-7):
            e = m.epsilon(d)
            if math.isfinite(e) and e > 0:
                assert m.delta(e) <= d * (1 + 1e-9)

    def test_release_smoke(self, m):
        """release runs with a seeded generator."""
        rng = np.random.default_rng(0)
        if isinstance(m, ExponentialMechanism):
            assert 0 <= m.release([1.0, 2.0, 3.0], rng) < 3
        elif isinstance(m, ProposeTestRelease):
            assert m.release(np.array([1] * 50), rng) == 1
        else:
            m.release(1, rng)

    def test_composes(self, m):
        """Every mechanism composes with the Gaussian through renyi.compose."""
        g = compose(m, Gaussian(5.0))
        assert math.isfinite(g.epsilon(1e-5))
        assert g.epsilon(1e-5) >= Gaussian(5.0).epsilon(1e-5)


@pytest.mark.parametrize(
    "ctor, name",
    [
        (lambda: Laplace(0.0), "scale"),
        (lambda: Laplace(-1.0), "scale"),
        (lambda: Laplace(float("nan")), "scale"),
        (lambda: Laplace(1.0, 0.0), "sensitivity"),
        (lambda: Laplace(1.0, neighbouring="swap"), "neighbouring"),
        (lambda: Gaussian(0.0), "sigma"),
        (lambda: DiscreteLaplace(0), "scale"),
        (lambda: DiscreteLaplace(1, 0), "sensitivity"),
        (lambda: ptr_mode(0.0, 1e-5), "epsilon"),
    ],
)
def test_bad_parameters(ctor, name):
    """Invalid parameters raise DomainError naming the parameter."""
    with pytest.raises(DomainError, match=name):
        ctor()


def test_public_exports():
    """The mechanisms and calibration are exported from renyi."""
    for n in ("Laplace", "RandomizedResponse", "DiscreteGaussian", "DiscreteLaplace", "ExponentialMechanism",
              "ProposeTestRelease", "ptr_mode", "calibrate", "Calibration"):
        assert n in renyi.__all__ and hasattr(renyi, n)


@pytest.mark.parametrize("k", [2, 3, 7])
def test_randomized_response_privacy_loss_matches_curve_and_profile(k):
    """The PLRV of k-ary RR reproduces its exact RDP curve and its exact (ε, δ) profile."""
    from renyi.mechanisms import RandomizedResponse

    rr = RandomizedResponse(1.3, k=k)
    loss = rr.privacy_loss()
    for a in [1.5, 2.0, 8.0]:
        assert float(loss.renyi_divergence(a)) == pytest.approx(float(rr.rdp(a)), rel=1e-9)
    for e in [0.0, 0.4, 1.0]:
        assert loss.delta(e) == pytest.approx(rr.delta(e), rel=1e-9, abs=1e-15)
