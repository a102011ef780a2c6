"""Amplification by subsampling: numerics (renyi._subsampled_gaussian) and transformers.

Golden values: theory.md §10.4 (mpmath, 30–40 digits; theory_checks/check3.py, check5.py).
Oracle: an independent mpmath quadrature of D_α(μ‖μ₀), μ = (1−q)N(0,σ²) + qN(1,σ²), μ₀ = N(0,σ²).
"""

from __future__ import annotations

import itertools
import logging
import math
import time
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from _peers import need
from hypothesis import strategies as st

from renyi import _subsampled_gaussian as sg
from renyi.errors import ConversionError, DomainError, RenyiNumericalWarning
from renyi.mechanisms import Gaussian, Laplace
from renyi.subsampling import PoissonSubsampled, SubsampledGaussianRDP, SubsampledWithoutReplacement

# ----------------------------------------------------------------------------------------------
# golden values (theory.md §10.4)
# ----------------------------------------------------------------------------------------------
MTZ_GOLDEN = [
    (0.01, 1.1, 2.0, 1.285100816051618e-4),
    (0.01, 1.1, 3.0, 1.962778899149955e-4),
    (0.01, 1.1, 8.0, 5.840703355202511e-4),
    (0.01, 1.1, 32.0, 8.469416433675926),
    (0.01, 1.1, 1.5, 9.55452857187483e-5),
    (0.01, 1.1, 2.5, 1.620774093700037e-4),
    (0.01, 1.1, 7.3, 5.23174930582304e-4),
    (0.1, 0.8, 4.0, 0.3371327066835503),
]


def gauss_rdp(sigma: float):
    return lambda a: np.asarray(a, dtype=np.float64) / (2.0 * sigma**2)


@pytest.mark.parametrize("q,sigma,alpha,expected", MTZ_GOLDEN)
def test_mtz_golden(q, sigma, alpha, expected):
    """ε(α) matches the mpmath golden value to 1e-9 relative, and never falls below it."""
    got = sg.rdp_poisson_gaussian(q, sigma, alpha)
    assert got == pytest.approx(expected, rel=1e-9)
    assert got >= expected * (1 - 1e-13)


def test_mtz_golden_vectorized():
    """A mixed array of integer and fractional orders gives the same values in one call."""
    alphas = np.array([g[2] for g in MTZ_GOLDEN[:7]])
    got = sg.rdp_poisson_gaussian(0.01, 1.1, alphas)
    np.testing.assert_allclose(got, [g[3] for g in MTZ_GOLDEN[:7]], rtol=1e-9)


def test_zw19_golden():
    """[ZW19] general bound with a Gaussian base (theory §10.4)."""
    got = sg.rdp_poisson_general(0.01, gauss_rdp(1.1), 8.0)
    assert float(got) == pytest.approx(8.009779587662023e-4, rel=1e-9)


def test_zw19_exact_form_is_mtz():
    """Without the factor 3 and with a Gaussian base, ZW19 reproduces the MTZ integer formula."""
    a = np.arange(2.0, 40.0)
    np.testing.assert_allclose(
        sg.rdp_poisson_general(0.01, gauss_rdp(1.1), a, exact_form=True),
        sg.rdp_poisson_gaussian(0.01, 1.1, a),
        rtol=1e-10,
    )


def test_wbk19_golden():
    """[WBK19] Thm 9 without replacement (theory §10.4)."""
    got = sg.rdp_without_replacement(0.01, gauss_rdp(1.1), 8.0)
    assert float(got) == pytest.approx(2.042153123842917e-3, rel=1e-9)


def test_log_a_int_and_frac_agree_with_rdp():
    """log A_α = (α−1)ε(α) for the public low-level functions."""
    assert sg.log_a_int(0.01, 1.1, [8])[0] == pytest.approx(7 * 5.840703355202511e-4, rel=1e-9)
    assert sg.log_a_frac(0.01, 1.1, 1.5) == pytest.approx(0.5 * 9.55452857187483e-5, rel=1e-9)


# ----------------------------------------------------------------------------------------------
# independent oracle: mpmath quadrature of the defining integral
# ----------------------------------------------------------------------------------------------
def quad_rdp(q: float, sigma: float, alpha: float) -> float:
    mp.mp.dps = 30
    q_, s, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)

    def f(z):
        log0 = -z * z / (2 * s * s)
        log_ratio = mp.log((1 - q_) + q_ * mp.e ** ((2 * z - 1) / (2 * s * s)))
        return mp.e ** (log0 + a * log_ratio) / (s * mp.sqrt(2 * mp.pi))

    centre = a * s * s  # the integrand's mass moves toward z ≈ α for large α
    pts = [-mp.inf, -6 * s, 0, 1, centre / 2, centre, centre + 6 * s, mp.inf]
    pts = sorted(set(pts))
    return float(mp.log(mp.quad(f, pts)) / (a - 1))


FAST_GRID = [(0.01, 1.1, 1.5), (0.1, 0.8, 3.7), (0.5, 2.0, 2.0), (0.001, 0.6, 5.5), (0.9, 1.5, 2.2)]


@pytest.mark.parametrize("q,sigma,alpha", FAST_GRID)
def test_against_quadrature_fast(q, sigma, alpha):
    """The series agree with direct numerical integration of D_α(μ‖μ₀)."""
    expected = quad_rdp(q, sigma, alpha)
    got = sg.rdp_poisson_gaussian(q, sigma, alpha)
    assert got == pytest.approx(expected, rel=1e-8)
    assert got >= expected * (1 - 1e-9)  # an upper bound, up to the oracle's own accuracy


@pytest.mark.slow
@pytest.mark.parametrize(
    "q,sigma,alpha",
    list(itertools.product([0.001, 0.01, 0.1, 0.5, 0.9], [0.5, 1.0, 2.0, 5.0], [1.1, 1.5, 2.0, 3.3, 8.0, 12.5, 20.0])),
)
def test_against_quadrature_sweep(q, sigma, alpha):
    """Large sweep of the quadrature oracle (slow)."""
    expected = quad_rdp(q, sigma, alpha)
    got = sg.rdp_poisson_gaussian(q, sigma, alpha)
    # log A carries a rounding allowance of ~1e-14 (absolute), so tiny curves are looser
    assert got == pytest.approx(expected, rel=1e-8, abs=2e-14 / (alpha - 1))
    assert got >= expected * (1 - 1e-9)


# ----------------------------------------------------------------------------------------------
# edge cases, robustness, structure
# ----------------------------------------------------------------------------------------------
def test_edge_rates_and_infinite_order():
    """q = 0 gives 0, q = 1 the plain Gaussian α/(2σ²), α = ∞ gives ∞."""
    a = np.array([1.5, 2.0, 10.0])
    np.testing.assert_array_equal(sg.rdp_poisson_gaussian(0.0, 1.0, a), 0.0)
    np.testing.assert_allclose(sg.rdp_poisson_gaussian(1.0, 2.0, a), a / 8.0)
    assert sg.rdp_poisson_gaussian(0.3, 1.0, math.inf) == math.inf
    assert sg.rdp_poisson_gaussian(0.0, 1.0, math.inf) == 0.0


@pytest.mark.parametrize("q", [1e-8, 1e-3, 0.3, 0.999, 1.0])
@pytest.mark.parametrize("sigma", [0.3, 1.0, 50.0, 1e4])
def test_no_nan_or_overflow(q, sigma):
    """Finite, non-negative, monotone values over the whole advertised domain."""
    a = np.array([1.001, 1.5, 2.0, 7.5, 64.0, 300.5, 1e4, 1e4 + 0.5, 2e5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = sg.rdp_poisson_gaussian(q, sigma, a)
        tot = 1e8 * e  # steps multiply the curve
    assert np.all(np.isfinite(e)) and np.all(e >= 0) and not np.any(np.isnan(tot))
    assert np.all(e <= a / (2 * sigma**2) * (1 + 1e-12))  # never worse than no subsampling


def test_cgf_convex_on_grid():
    """(α−1)ε(α) is convex (an exact CGF): second differences on a fine grid are ≥ 0."""
    for q, s in [(0.01, 1.1), (0.1, 0.8), (0.5, 2.0)]:
        a = 1.0 + np.arange(1, 161) / 8.0
        k = (a - 1) * sg.rdp_poisson_gaussian(q, s, a)
        d2 = k[2:] - 2 * k[1:-1] + k[:-2]
        assert np.all(d2 >= -1e-12 * np.abs(k[1:-1]) - 1e-15)


@given(
    q=st.floats(1e-4, 0.9),
    sigma=st.floats(0.4, 20.0),
    a1=st.floats(1.01, 60.0),
    a2=st.floats(1.01, 60.0),
)
def test_monotone_in_order(q, sigma, a1, a2):
    """ε(α) is non-decreasing in α."""
    lo, hi = sorted((a1, a2))
    e_lo, e_hi = sg.rdp_poisson_gaussian(q, sigma, [lo, hi])
    assert e_lo <= e_hi * (1 + 1e-9) + 1e-15


@given(q1=st.floats(1e-4, 1.0), q2=st.floats(1e-4, 1.0), sigma=st.floats(0.4, 10.0), alpha=st.floats(1.05, 40.0))
def test_monotone_in_rate_and_never_worse_than_base(q1, q2, sigma, alpha):
    """ε grows with q, and subsampling never increases the loss."""
    lo, hi = sorted((q1, q2))
    e_lo = sg.rdp_poisson_gaussian(lo, sigma, alpha)
    e_hi = sg.rdp_poisson_gaussian(hi, sigma, alpha)
    assert e_lo <= e_hi * (1 + 1e-9) + 1e-15
    assert e_hi <= alpha / (2 * sigma**2) * (1 + 1e-12)


def test_frac_series_cap_returns_inf_with_warning():
    """A series that hits the iteration cap gives +inf and a RenyiNumericalWarning."""
    res, conv = sg._log_a_frac_rows(np.array([0.5]), np.array([0.5]), np.array([40.5]), max_terms=16)
    assert res[0] == math.inf and not conv[0]
    old = sg._MAX_TERMS
    sg._MAX_TERMS = 16
    try:
        with pytest.warns(RenyiNumericalWarning):
            assert sg.log_a_frac(0.5, 0.5, 40.5) == math.inf
    finally:
        sg._MAX_TERMS = old


def test_euler_tail_bounds_bracket_alternating_tail():
    """The Euler tail bounds bracket Σ(−1)^i a_{k+i} for a completely monotone sequence."""
    i = np.arange(0, 200000, dtype=np.float64)
    a = 1.0 / (30.0 + i) ** 2.5
    exact = math.fsum(a[0::2]) - math.fsum(a[1::2])
    lo, hi = sg._euler_tail(a[None, : sg._EULER_M + 1], np.zeros((1, sg._EULER_M + 1)))
    assert lo[0] <= exact <= hi[0]
    assert hi[0] - lo[0] < 1e-6 * exact


# ----------------------------------------------------------------------------------------------
# DP-SGD fast path and calibration
# ----------------------------------------------------------------------------------------------
def test_dpsgd_epsilon_golden_continuous():
    """Continuous-α CKS values of theory §10.4, and never above the default-grid values."""
    e1, a1 = sg.dpsgd_epsilon(0.01, 1.1, 1000, 1e-5)
    e2, a2 = sg.dpsgd_epsilon(0.01, 1.1, 10_000, 1e-5)
    assert e1 == pytest.approx(1.71171433122, abs=2e-10) and a1 == pytest.approx(9.56811, abs=1e-3)
    assert e2 == pytest.approx(5.63180966702, abs=2e-10) and a2 == pytest.approx(4.67145, abs=1e-3)
    assert e1 <= 1.711770091218172 and e2 <= 5.631992368681802


def test_dpsgd_epsilon_is_evaluated_at_witness():
    """The returned ε is exactly the CKS bound of the exact curve at the returned α."""
    eps, alpha = sg.dpsgd_epsilon(0.02, 0.9, 3000, 1e-6)
    r = 3000 * sg.rdp_poisson_gaussian(0.02, 0.9, alpha)
    direct = r + math.log1p(-1 / alpha) - (math.log(1e-6) + math.log(alpha)) / (alpha - 1)
    assert eps == pytest.approx(direct, rel=1e-12)


def test_dpsgd_nothing_spent():
    assert sg.dpsgd_epsilon(0.0, 1.0, 100, 1e-5) == (0.0, math.inf)
    assert sg.dpsgd_epsilon(0.1, 1.0, 0, 1e-5) == (0.0, math.inf)


def test_dpsgd_large_and_small_orders():
    """Optimal orders far beyond 64 and very close to 1 are found, without NaN."""
    eps, alpha = sg.dpsgd_epsilon(1e-4, 3.0, 100, 1e-5)
    assert alpha > 100 and 0 < eps < 0.04
    eps, alpha = sg.dpsgd_epsilon(0.5, 0.6, 10**8, 1e-5)
    assert 1 < alpha < 1.01 and math.isfinite(eps)


def test_dpsgd_many_matches_scalar():
    """The vectorized sweep gives the same numbers as the scalar fast path."""
    rng = np.random.default_rng(1)
    qs = 10 ** rng.uniform(-3, -1, 40)
    ss = rng.uniform(0.6, 3.0, 40)
    ts = rng.integers(100, 100_000, 40)
    eps, alphas = sg.dpsgd_epsilon_many(qs, ss, ts, 1e-5)
    for i in range(0, 40, 7):
        e, a = sg.dpsgd_epsilon(qs[i], ss[i], int(ts[i]), 1e-5)
        assert eps[i] == pytest.approx(e, rel=1e-12)


@pytest.mark.slow
def test_dpsgd_many_speed():
    """1000 configurations in well under a second (slow: timing is load dependent)."""
    rng = np.random.default_rng(2)
    qs = 10 ** rng.uniform(-3, -1, 1000)
    ss = rng.uniform(0.6, 3.0, 1000)
    ts = rng.integers(100, 100_000, 1000)
    t0 = time.perf_counter()
    sg.dpsgd_epsilon_many(qs, ss, ts, 1e-5)
    assert time.perf_counter() - t0 < 1.0


def test_dpsgd_log_delta_roundtrip():
    """δ(ε(δ)) ≤ δ up to rounding of the optimiser (same curve, same conversion)."""
    eps, _ = sg.dpsgd_epsilon(0.01, 1.1, 10_000, 1e-5)
    log_d, _ = sg.dpsgd_log_delta(0.01, 1.1, 10_000, eps)
    assert math.exp(log_d) <= 1e-5 * (1 + 1e-9)


def test_dpsgd_sigma_one_sided_and_tight():
    s = sg.dpsgd_sigma(0.01, 10_000, 3.0, 1e-5)
    assert sg.dpsgd_epsilon(0.01, s, 10_000, 1e-5)[0] <= 3.0
    assert sg.dpsgd_epsilon(0.01, s * (1 - 1e-4), 10_000, 1e-5)[0] > 3.0


def test_dpsgd_steps_one_sided_and_tight():
    t = sg.dpsgd_steps(0.01, 1.0, 3.0, 1e-5)
    assert sg.dpsgd_epsilon(0.01, 1.0, t, 1e-5)[0] <= 3.0
    assert sg.dpsgd_epsilon(0.01, 1.0, t + 1, 1e-5)[0] > 3.0
    assert sg.dpsgd_steps(0.5, 0.3, 0.01, 1e-5) == 0


def test_dpsgd_rate_one_sided_and_tight():
    q = sg.dpsgd_rate(1.0, 10_000, 3.0, 1e-5)
    assert sg.dpsgd_epsilon(q, 1.0, 10_000, 1e-5)[0] <= 3.0
    assert sg.dpsgd_epsilon(q * (1 + 1e-4), 1.0, 10_000, 1e-5)[0] > 3.0
    assert sg.dpsgd_rate(100.0, 10, 3.0, 1e-5) == 1.0


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: sg.dpsgd_epsilon(1.5, 1.0, 10, 1e-5), "rate"),
        (lambda: sg.dpsgd_epsilon(-0.1, 1.0, 10, 1e-5), "rate"),
        (lambda: sg.dpsgd_epsilon(0.1, 0.0, 10, 1e-5), "sigma"),
        (lambda: sg.dpsgd_epsilon(0.1, -1.0, 10, 1e-5), "sigma"),
        (lambda: sg.dpsgd_epsilon(0.1, 1.0, 2.5, 1e-5), "steps"),
        (lambda: sg.dpsgd_epsilon(0.1, 1.0, -3, 1e-5), "steps"),
        (lambda: sg.dpsgd_epsilon(0.1, 1.0, 10, 0.0), "delta"),
        (lambda: sg.dpsgd_epsilon(0.1, 1.0, 10, 1.0), "delta"),
        (lambda: sg.dpsgd_epsilon_many([0.1, 2.0], 1.0, 10, 1e-5), "rate"),
        (lambda: sg.dpsgd_epsilon_many(0.1, 1.0, [10, 2.5], 1e-5), "steps"),
        (lambda: sg.dpsgd_sigma(0.1, 10, -1.0, 1e-5), "epsilon"),
        (lambda: sg.dpsgd_steps(0.0, 1.0, 1.0, 1e-5), "rate"),
        (lambda: sg.dpsgd_rate(1.0, 0, 1.0, 1e-5), "steps"),
        (lambda: sg.rdp_poisson_gaussian(0.1, 1.0, 1.0), "alphas"),
        (lambda: sg.log_a_int(0.1, 1.0, [2.5]), "alphas"),
        (lambda: sg.log_a_frac(0.1, 1.0, 3.0), "alpha"),
        (lambda: PoissonSubsampled(Gaussian(1.0), 1.5), "rate"),
        (lambda: SubsampledWithoutReplacement(Gaussian(1.0), -0.5), "rate"),
    ],
)
def test_bad_input_names_parameter(call, name):
    with pytest.raises(DomainError) as exc:
        call()
    assert str(exc.value).startswith(name)


def test_wrong_types():
    with pytest.raises(TypeError):
        PoissonSubsampled("gaussian", 0.1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        sg.dpsgd_epsilon("0.1", 1.0, 10, 1e-5)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# transformers
# ----------------------------------------------------------------------------------------------
def test_poisson_gaussian_transformer():
    m = PoissonSubsampled(Gaussian(1.1), 0.01)
    assert m.neighbouring == "add_remove"
    assert m.sampling == "Poisson sampling (rate 0.01), add/remove neighbours"
    assert m.sampling in repr(m)
    assert float(m.rdp(8.0)) == pytest.approx(5.840703355202511e-4, rel=1e-9)
    assert float(m.rdp(7.3)) == pytest.approx(5.23174930582304e-4, rel=1e-9)
    assert m.rdp(math.inf) == math.inf
    assert isinstance(m.guarantee, SubsampledGaussianRDP) and m.guarantee.convex


def test_noise_multiplier_uses_sensitivity():
    """σ/Δ is what matters: Gaussian(2.2, sensitivity=2) ≡ Gaussian(1.1)."""
    a = PoissonSubsampled(Gaussian(2.2, sensitivity=2.0), 0.01)
    assert float(a.rdp(8.0)) == pytest.approx(5.840703355202511e-4, rel=1e-9)


def test_compose_uses_fast_path_and_matches():
    m = PoissonSubsampled(Gaussian(1.1), 0.01)
    for g in (m.compose(1000), 1000 * m, m * 1000, m.guarantee.compose(10).compose(100)):
        assert isinstance(g, SubsampledGaussianRDP)
        assert g.epsilon(1e-5, method="rdp") == pytest.approx(1.71171433122, abs=1e-9)
    g = 1000 * m
    assert float(g.rdp(9.5)) == pytest.approx(1000 * float(m.rdp(9.5)), rel=1e-12)
    assert g.delta(g.epsilon(1e-5)) <= 1e-5 * (1 + 1e-9)
    assert g.epsilon(1e-5) < 0.95 * g.epsilon(1e-5, method="rdp")  # the default: the tighter PLD route
    with pytest.raises(ConversionError):  # no useful ρ: reports must not offer a zCDP route
        g.to_zcdp()


def test_rate_zero_and_one():
    zero = PoissonSubsampled(Gaussian(1.0), 0.0)
    assert zero.epsilon(1e-5) == 0.0 and float(zero.rdp(10.0)) == 0.0 and zero.rdp(math.inf) == 0.0
    one = PoissonSubsampled(Gaussian(1.0), 1.0)
    assert one.guarantee == Gaussian(1.0).guarantee
    assert one.epsilon(1e-5) == pytest.approx(Gaussian(1.0).epsilon(1e-5))


def test_poisson_rejects_replace_one_base():
    with pytest.raises(DomainError, match="add_remove"):
        PoissonSubsampled(Gaussian(1.0, neighbouring="replace_one"), 0.1)


def laplace_mix_rdp(q: float, alpha: float) -> float:
    """D_α((1−q)Lap(0,1) + qLap(1,1) ‖ Lap(0,1)) by mpmath quadrature."""
    mp.mp.dps = 30
    q_, a = mp.mpf(q), mp.mpf(alpha)
    l0 = lambda x: -abs(x) - mp.log(2)  # noqa: E731
    lm = lambda x: mp.log((1 - q_) * mp.e ** l0(x) + q_ * mp.e ** (-abs(x - 1) - mp.log(2)))  # noqa: E731
    f = lambda x: mp.e ** (a * lm(x) + (1 - a) * l0(x))  # noqa: E731
    return float(mp.log(mp.quad(f, [-mp.inf, 0, 1, mp.inf])) / (a - 1))


@pytest.mark.parametrize("alpha", [2.0, 3.0, 6.0])
def test_poisson_laplace_exact_form(alpha):
    """ZW19 exact form for a Laplace base matches numerical integration (theory §11)."""
    m = PoissonSubsampled(Laplace(1.0), 0.05)
    got = float(m.rdp(alpha))
    assert got == pytest.approx(laplace_mix_rdp(0.05, alpha), rel=1e-9)
    assert m.guarantee.convex is False
    # pure-DP amplification: log(1 + q(e^ε − 1))
    assert m.rdp(math.inf) == pytest.approx(math.log1p(0.05 * math.expm1(1.0)))


def test_poisson_generic_base_uses_general_bound():
    """A base known only through its curve gets the (looser) general ZW19 bound, still ≥ exact."""
    from renyi.definitions import RDP
    from renyi.mechanisms.base import Mechanism

    class Curve(Mechanism):
        __slots__ = ()

        @property
        def guarantee(self):
            return RDP(lambda a: np.asarray(a) / (2 * 1.1**2), label="Gaussian-like")

        def release(self, value, rng=None):
            return value

    m = PoissonSubsampled(Curve(), 0.01)
    assert float(m.rdp(8.0)) == pytest.approx(8.009779587662023e-4, rel=1e-9)
    assert float(m.rdp(8.0)) >= 5.840703355202511e-4
    assert m.epsilon(1e-5) >= PoissonSubsampled(Gaussian(1.1), 0.01).epsilon(1e-5)


def test_without_replacement_transformer():
    m = SubsampledWithoutReplacement(Gaussian(1.1, neighbouring="replace_one"), 0.01)
    assert m.neighbouring == "replace_one"
    assert float(m.rdp(8.0)) == pytest.approx(2.042153123842917e-3, rel=1e-9)
    assert float(m.rdp(8.0)) <= 8 / (2 * 1.1**2)
    assert "replace-one" in repr(m)
    # an add/remove base is taken as its replace-one (group of two) guarantee: never smaller
    m2 = SubsampledWithoutReplacement(Gaussian(1.1), 0.01)
    assert float(m2.rdp(8.0)) >= float(m.rdp(8.0))
    assert SubsampledWithoutReplacement(Gaussian(1.0), 0.0).epsilon(1e-5) == 0.0


def test_subsampling_never_increases_loss():
    """For every base and order the subsampled curve is below the base curve."""
    a = np.array([1.5, 2.0, 3.0, 8.0, 20.0])
    for base in (Gaussian(0.8), Laplace(0.5)):
        sub = PoissonSubsampled(base, 0.2)
        assert np.all(sub.rdp(a) <= np.asarray(base.rdp(a)) * (1 + 1e-12))


# ----------------------------------------------------------------------------------------------
# optional cross-checks against peer libraries
# ----------------------------------------------------------------------------------------------
@pytest.mark.optional
def test_not_above_dp_accounting_on_grid():
    """renyi's ε ≤ dp_accounting's RDP ε (+1e-9) on the whole DP-SGD grid."""
    dp_accounting = need("dp_accounting")
    from dp_accounting import rdp

    logging.getLogger("absl").setLevel(logging.ERROR)
    grid = list(itertools.product([0.001, 0.004, 0.01, 0.1, 0.5], [0.6, 0.8, 1.0, 1.5, 3.0], [100, 1000, 10_000, 100_000]))
    ours, _ = sg.dpsgd_epsilon_many([g[0] for g in grid], [g[1] for g in grid], [g[2] for g in grid], 1e-5)
    for (q, s, t), e in zip(grid, ours):
        acc = rdp.RdpAccountant()
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), t)
        assert e <= acc.get_epsilon(1e-5) + 1e-9, (q, s, t)


@pytest.mark.optional
def test_integer_orders_match_dp_accounting():
    """Integer orders agree with dp_accounting to ~1e-12 (theory §13)."""
    need("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as rpa

    orders = np.arange(2, 40)
    theirs = rpa._compute_rdp_poisson_subsampled_gaussian(0.01, 1.1, orders)
    np.testing.assert_allclose(sg.rdp_poisson_gaussian(0.01, 1.1, orders), theirs, rtol=1e-11)


@pytest.mark.optional
def test_sigma_not_above_opacus():
    need("opacus")
    from opacus.accountants.utils import get_noise_multiplier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = get_noise_multiplier(target_epsilon=3, target_delta=1e-5, sample_rate=0.01, steps=10_000, accountant="rdp")
    assert sg.dpsgd_sigma(0.01, 10_000, 3.0, 1e-5) <= theirs
