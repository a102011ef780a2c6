"""Tests for renyi.samplers: exact discrete samplers, exact Bernoullis, secure generator.

Statistical tests use fixed seeds (so they are deterministic) and reject at p < 1e-4:
over random seeds each such test would raise a false alarm with probability 1e-4. Tests
that must use the secure generator cannot be seeded; they reject at p < 1e-6 so that a
spurious failure is a one-in-a-million event per test run.
"""

from __future__ import annotations

import decimal
import doctest
import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from renyi import samplers as S
from renyi.errors import DomainError

P_SEEDED = 1e-4
P_SECURE = 1e-6


# --------------------------------------------------------------------------- exact pmfs


def dlap_pmf(scale: float, z: np.ndarray) -> np.ndarray:
    """P(z) = (1 − e^{−1/scale})/(1 + e^{−1/scale})·e^{−|z|/scale} (theory.md §7.6)."""
    r = math.exp(-1.0 / scale)
    return (1 - r) / (1 + r) * np.exp(-np.abs(z) / scale)


def dgauss_pmf(sigma2: float, z: np.ndarray) -> np.ndarray:
    """N_Z(0, σ²) pmf by a direct normalised sum over |k| ≤ 40σ + 40 (tail < e^{−800})."""
    half = int(40 * math.sqrt(sigma2) + 40)
    k = np.arange(-half, half + 1)
    norm = np.exp(-(k.astype(float) ** 2) / (2 * sigma2)).sum()
    return np.exp(-(np.asarray(z, float) ** 2) / (2 * sigma2)) / norm


def chi2_pvalue(samples: np.ndarray, pmf, support_half: int) -> float:
    """χ² p-value of integer samples against ``pmf``, one bin per integer with
    expected count ≥ 5 and the two tails lumped into one bin each."""
    n = samples.size
    z = np.arange(-support_half, support_half + 1)
    expected = n * pmf(z)
    keep = np.flatnonzero(expected >= 5)
    lo, hi = z[keep[0]], z[keep[-1]]
    inner = np.arange(lo, hi + 1)
    exp_inner = n * pmf(inner)
    obs_inner = np.array([(samples == v).sum() for v in inner]) if inner.size < 200 else np.bincount(
        samples[(samples >= lo) & (samples <= hi)] - lo, minlength=inner.size
    )
    tail_mass = max(1.0 - pmf(inner).sum(), 0.0)
    obs = list(obs_inner)
    exp = list(exp_inner)
    if n * tail_mass >= 1:
        obs.append(int(((samples < lo) | (samples > hi)).sum()))
        exp.append(n * tail_mass)
    else:
        assert ((samples < lo) | (samples > hi)).sum() <= 3
    assert len(obs) >= 2, "degenerate test: widen the parameter"
    exp = np.array(exp) * (sum(obs) / sum(exp))
    return float(stats.chisquare(obs, exp).pvalue)


def binned_pvalue(samples: np.ndarray, edges: np.ndarray, probs: np.ndarray) -> float:
    """χ² p-value over bins [edges[i], edges[i+1]) with exact bin probabilities."""
    counts = np.histogram(samples, bins=edges)[0]
    assert counts.sum() == samples.size
    exp = samples.size * probs / probs.sum()
    return float(stats.chisquare(counts, exp).pvalue)


# --------------------------------------------------------------------------- goodness of fit


@pytest.mark.parametrize(
    "scale,seed",
    [(Fraction(3, 2), 1), (Fraction(1, 3), 2), (10, 3), (0.7, 4), (Fraction(7, 5), 5)],
)
def test_discrete_laplace_chi_square(scale, seed):
    """DLap(scale) matches its pmf (χ², 2·10⁵ samples, seeded)."""
    x = S.sample_discrete_laplace(scale, size=200_000, rng=np.random.default_rng(seed))
    assert x.dtype == np.int64
    p = chi2_pvalue(x, lambda z: dlap_pmf(float(scale), z), 400)
    assert p > P_SEEDED


@pytest.mark.parametrize(
    "sigma2,seed",
    [
        (2, 11),
        (Fraction(1, 4), 12),
        (Fraction(25, 2), 13),
        (0.3, 14),
        (3.7**2, 15),
        (Fraction(1, 10), 16),
        (Fraction(9, 4), 17),  # σ = 3/2: round(σ) sits exactly on the tie
        (1, 18),
    ],
)
def test_discrete_gaussian_chi_square(sigma2, seed):
    """N_Z(0, σ²) matches its pmf (χ², 2·10⁵ samples, seeded)."""
    x = S.sample_discrete_gaussian(sigma2, size=200_000, rng=np.random.default_rng(seed))
    assert x.dtype == np.int64
    p = chi2_pvalue(x, lambda z: dgauss_pmf(float(sigma2), z), 200)
    assert p > P_SEEDED


def test_dgauss_pmf_matches_mpmath():
    """The test's pmf oracle agrees with an mpmath normalised sum."""
    mpmath.mp.dps = 30
    s2 = mpmath.mpf(25) / 2
    norm = mpmath.nsum(lambda k: mpmath.exp(-(k**2) / (2 * s2)), [-mpmath.inf, mpmath.inf])
    for z in (0, 1, 3, 10):
        ref = float(mpmath.exp(-(z**2) / (2 * s2)) / norm)
        assert dgauss_pmf(12.5, np.array([z]))[0] == pytest.approx(ref, rel=1e-12)


def test_secure_default_chi_square():
    """The secure default (unseeded) passes the same goodness-of-fit tests."""
    x = S.sample_discrete_gaussian(Fraction(25, 2), size=100_000)
    assert chi2_pvalue(x, lambda z: dgauss_pmf(12.5, z), 200) > P_SECURE
    y = S.sample_discrete_laplace(Fraction(3, 2), size=100_000)
    assert chi2_pvalue(y, lambda z: dlap_pmf(1.5, z), 400) > P_SECURE


def _normal_bins(sigma: float, nbins: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer bin edges at normal quantiles, and bin probabilities by the midpoint rule
    (exact to ~1/σ² for N_Z with σ ≥ 1000: Poisson summation + Euler–Maclaurin)."""
    qs = stats.norm.ppf(np.linspace(0, 1, nbins + 1)[1:-1]) * sigma
    inner = np.unique(np.round(qs).astype(np.int64))
    edges = np.concatenate([[np.iinfo(np.int64).min // 2], inner, [np.iinfo(np.int64).max // 2]])
    cdf = stats.norm.cdf((edges - 0.5) / sigma)
    return edges, np.diff(cdf)


@pytest.mark.parametrize("sigma,n,seed", [(1000, 500_000, 21), (10**6, 300_000, 22)])
def test_discrete_gaussian_large_sigma(sigma, n, seed):
    """Large σ: mean and variance within 5 standard errors; binned χ² on 50 quantile bins."""
    x = S.sample_discrete_gaussian(sigma * sigma, size=n, rng=np.random.default_rng(seed))
    s2 = float(sigma) ** 2
    assert abs(x.mean()) < 5 * sigma / math.sqrt(n)
    assert abs(x.astype(float).var() - s2) < 5 * s2 * math.sqrt(2 / n)
    edges, probs = _normal_bins(float(sigma), 50)
    assert binned_pvalue(x, edges, probs) > P_SEEDED


def test_discrete_laplace_large_scale():
    """DLap(10⁶): variance 2r/(1−r)² with r = e^{−10⁻⁶} and a binned χ² on exact bin masses."""
    n, scale = 300_000, 10**6
    x = S.sample_discrete_laplace(scale, size=n, rng=np.random.default_rng(31))
    r = math.exp(-1 / scale)
    var = 2 * r / (1 - r) ** 2
    assert abs(x.mean()) < 5 * math.sqrt(var / n)
    assert abs(x.astype(float).var() / var - 1) < 5 * math.sqrt(5 / n)  # kurtosis 6 → var(s²) ≈ 5σ⁴/n
    # P(|Z| ≥ k) = 2 r^k/(1 + r) for k ≥ 1: exact masses of |Z|-bins
    ks = np.array([0, 1, 50_000, 200_000, 500_000, 1_000_000, 2_000_000, 4_000_000, 8_000_000])
    tail = np.where(ks == 0, 1.0, 2 * r**ks / (1 + r))
    probs = np.append(-np.diff(tail), tail[-1])
    counts = np.histogram(np.abs(x), bins=np.append(ks, np.iinfo(np.int64).max // 2))[0]
    assert stats.chisquare(counts, n * probs).pvalue > P_SEEDED


@pytest.mark.parametrize("gamma", [0, Fraction(3, 10), 1, 2.7, Fraction(7, 3), 0.3])
def test_bernoulli_exp_frequency(gamma):
    """Bernoulli(exp(−γ)): frequency within 4.5 binomial standard errors (p ≈ 7·10⁻⁶)."""
    n = 200_000
    b = S.sample_bernoulli_exp(gamma, size=n, rng=np.random.default_rng(41))
    p = math.exp(-float(gamma))
    if p == 1.0:
        assert b.all()
        return
    assert abs(b.mean() - p) < 4.5 * math.sqrt(p * (1 - p) / n)


def test_inv_e_digits_exact():
    """The base-2³² digits of e^{−1} used by the Bernoulli(e^{−1}) comparator are exact."""
    mpmath.mp.dps = 120
    x = mpmath.exp(-1)
    for j in range(8):
        ref = int(mpmath.floor(x * mpmath.mpf(2) ** (32 * (j + 1)))) & 0xFFFFFFFF
        assert S._inv_e_digit(j) == ref


def test_bern_inv_e_tie_path(monkeypatch):
    """When the first words tie with e^{−1}'s digits, later digits decide, exactly."""
    d = [S._inv_e_digit(j) for j in range(3)]
    script = iter([np.array([d[0], d[0], 5], np.uint32), np.array([d[1], d[1] + 1], np.uint32),
                   np.array([d[2] - 1], np.uint32)])
    monkeypatch.setattr(S, "_words", lambda rng, n, bits=64: next(script))
    out = S._bern_inv_e(S.secure_rng(), 3)
    assert out.tolist() == [True, False, True]


# --------------------------------------------------------------------------- exactness / big numbers


def test_float_is_converted_exactly():
    """A float σ² is the rational Fraction(σ²): identical draws for the same seed."""
    a = S.sample_discrete_gaussian(0.3, size=1000, rng=np.random.default_rng(7))
    b = S.sample_discrete_gaussian(Fraction(0.3), size=1000, rng=np.random.default_rng(7))
    assert np.array_equal(a, b)
    c = S.sample_discrete_laplace(0.1, size=1000, rng=np.random.default_rng(7))
    d = S.sample_discrete_laplace(Fraction(0.1), size=1000, rng=np.random.default_rng(7))
    assert np.array_equal(c, d)


def test_huge_denominators_gaussian():
    """σ² with a 2⁶⁹ denominator (beyond int64) runs the Python-int path and fits N_Z(0, 2)."""
    s2 = Fraction(2**70 + 1, 2**69)
    x = S.sample_discrete_gaussian(s2, size=20_000, rng=np.random.default_rng(51))
    assert x.dtype == np.int64
    assert chi2_pvalue(x, lambda z: dgauss_pmf(2.0, z), 100) > P_SEEDED


def test_huge_numerator_laplace():
    """scale = (10²⁰ + 1)/10²⁰ (t beyond int64) runs the Python-int path and fits DLap(1)."""
    x = S.sample_discrete_laplace(Fraction(10**20 + 1, 10**20), size=20_000, rng=np.random.default_rng(52))
    assert chi2_pvalue(x, lambda z: dlap_pmf(1.0, z), 100) > P_SEEDED


def test_tiny_parameters():
    """Tiny σ² and scale (denominators far beyond int64) give 0 with overwhelming probability."""
    assert not S.sample_discrete_gaussian(Fraction(1, 10**30), size=2000, rng=np.random.default_rng(1)).any()
    assert not S.sample_discrete_laplace(Fraction(1, 10**30), size=2000, rng=np.random.default_rng(1)).any()
    assert not S.sample_discrete_gaussian(1e-12, size=2000, rng=np.random.default_rng(1)).any()


@pytest.mark.parametrize(
    "kind,param,limit",
    [("g", Fraction(25, 2), 16), ("g", Fraction(1, 4), 16), ("g", 1000, 16), ("g", Fraction(25, 2), 40),
     ("l", Fraction(3, 2), 16), ("l", 7, 16), ("l", Fraction(100, 67), 16), ("l", Fraction(100, 67), 2**62)],
)
def test_overflow_guards_exact(monkeypatch, kind, param, limit):
    """With the int64 limit lowered (to 16: every guarded product takes the Python-int
    path: uniforms, von Neumann split, X = U + tV, γ; to 40 for σ² = 25/2: lanes with
    |Y| > 10 take the slow γ path after g0 = 1 early round), the law is unchanged (χ²)."""
    monkeypatch.setattr(S, "_LIMIT", limit)
    rng = np.random.default_rng(61)
    if kind == "g":
        x = S.sample_discrete_gaussian(param, size=30_000, rng=rng)
        pmf = lambda z: dgauss_pmf(float(param), z)  # noqa: E731
        if limit == 40:
            plan = S._GaussPlan(Fraction(param))
            assert (plan.ylim, plan.g0) == (10, 1)
            # the slow lanes are exactly the tail |Z| > 10: test its mass directly
            z = np.arange(11, 400)
            tail = 2 * dgauss_pmf(12.5, z).sum()
            k = int((np.abs(x) > 10).sum())
            assert abs(k - x.size * tail) < 4.5 * math.sqrt(x.size * tail)
    else:
        x = S.sample_discrete_laplace(param, size=30_000, rng=rng)
        pmf = lambda z: dlap_pmf(float(param), z)  # noqa: E731
    assert x.dtype == np.int64
    assert chi2_pvalue(x, pmf, 300) > P_SEEDED


def test_gauss_plan_constants_are_exact():
    """The plan's c, t and γ constants reproduce σ² exactly: t·c = σ² and p/q = 1/(2σ² cd²)."""
    for s2 in (Fraction(10**12), Fraction(0.3), Fraction(3.7**2), Fraction(9, 4), Fraction(1, 50)):
        plan = S._GaussPlan(s2)
        assert Fraction(plan.tn, plan.ts) * Fraction(plan.cn, plan.cd) == s2
        assert Fraction(plan.p, plan.q) == 1 / (2 * s2 * plan.cd**2)
    assert S._GaussPlan(Fraction(10**12)).cn == 10**6  # integer c = σ keeps γ in int64


# --------------------------------------------------------------------------- reference implementation


def test_reference_implementation_matches_pmf():
    """The one-at-a-time Python reference (CKS t = ⌊σ⌋+1) fits the same pmfs."""
    r = random.Random(3)
    xg = np.array([S._reference_discrete_gaussian(Fraction(25, 2), r.randrange) for _ in range(6000)])
    assert chi2_pvalue(xg, lambda z: dgauss_pmf(12.5, z), 100) > P_SEEDED
    xl = np.array([S._reference_discrete_laplace(Fraction(3, 2), r.randrange) for _ in range(6000)])
    assert chi2_pvalue(xl, lambda z: dlap_pmf(1.5, z), 100) > P_SEEDED


def test_vectorized_agrees_with_reference():
    """Two-sample χ² between the vectorized sampler and the reference for σ² = 1/4."""
    r = random.Random(4)
    ref = np.array([S._reference_discrete_gaussian(Fraction(1, 4), r.randrange) for _ in range(6000)])
    vec = S.sample_discrete_gaussian(Fraction(1, 4), size=60_000, rng=np.random.default_rng(4))
    cats = [-1, 0, 1]
    tab = np.array([[np.clip(a, -1, 1).tolist().count(c) for c in cats] for a in (ref, vec)])
    assert stats.chi2_contingency(tab).pvalue > P_SEEDED


# --------------------------------------------------------------------------- uniform integers / secure generator


def test_secure_uniform_int_unbiased():
    """Secure uniform integers on a non-power-of-two range are uniform (χ²)."""
    x = S.uniform_int(None, 7, size=140_000)
    counts = np.bincount(x, minlength=7)
    assert counts.size == 7
    assert stats.chisquare(counts).pvalue > P_SECURE


def test_secure_uniform_int_array_high():
    """Per-element bounds: every value lies in [0, high) and the top bin is hit uniformly."""
    high = np.array([1, 2, 3, 2**33 + 1, 2**62 + 5] * 20_000, dtype=np.int64)
    x = S.uniform_int(None, high)
    assert x.dtype == np.int64 and ((0 <= x) & (x < high)).all()
    assert (x[high == 1] == 0).all()
    c3 = np.bincount(x[high == 3], minlength=3)
    assert stats.chisquare(c3).pvalue > P_SECURE
    big = x[high == 2**62 + 5].astype(float) / 2.0**62
    assert stats.kstest(big, "uniform").pvalue > P_SECURE


def test_uniform_int_numpy_and_big():
    """A numpy Generator gives reproducible draws; highs beyond int64 give Python ints."""
    a = S.uniform_int(np.random.default_rng(1), 10, size=5)
    b = S.uniform_int(np.random.default_rng(1), 10, size=5)
    assert np.array_equal(a, b)
    v = S.uniform_int(None, 2**100)
    assert isinstance(v, int) and 0 <= v < 2**100
    big = S.uniform_int(np.random.default_rng(2), 3 * 2**80, size=3000)
    assert all(0 <= int(u) < 3 * 2**80 for u in big)
    top = np.array([int(u) >> 80 for u in big])
    assert stats.chisquare(np.bincount(top, minlength=3)).pvalue > P_SEEDED


def test_secure_generator_methods():
    """SecureGenerator mirrors the numpy names it needs: integers, random, normals, laplace."""
    g = S.secure_rng()
    assert S.resolve_rng(None) is g and S.resolve_rng(g) is g
    assert isinstance(g.integers(5), int)
    x = g.integers(-3, 3, size=1000)
    assert x.min() >= -3 and x.max() < 3
    u = g.random(50_000)
    assert ((0 <= u) & (u < 1)).all()
    assert stats.kstest(u, "uniform").pvalue > P_SECURE
    assert stats.kstest(g.standard_normal(50_000), "norm").pvalue > P_SECURE
    assert stats.kstest(g.laplace(size=50_000), "laplace").pvalue > P_SECURE
    assert stats.kstest(S.normal(np.random.default_rng(0), 50_000), "norm").pvalue > P_SEEDED
    assert stats.kstest(S.laplace(np.random.default_rng(0), 50_000), "laplace").pvalue > P_SEEDED


def test_rng_reproducible():
    """The same numpy seed gives the same samples."""
    a = S.sample_discrete_gaussian(12, size=100, rng=np.random.default_rng(9))
    b = S.sample_discrete_gaussian(12, size=100, rng=np.random.default_rng(9))
    assert np.array_equal(a, b)


# --------------------------------------------------------------------------- shapes and bad input


def test_shapes():
    """size None → Python int; int and tuple sizes → int64 arrays of that shape; 0 → empty."""
    rng = np.random.default_rng(0)
    assert isinstance(S.sample_discrete_gaussian(2, rng=rng), int)
    assert isinstance(S.sample_discrete_laplace(2, rng=rng), int)
    assert isinstance(S.sample_bernoulli_exp(1, rng=rng), bool)
    assert S.sample_discrete_gaussian(2, size=(2, 3), rng=rng).shape == (2, 3)
    assert S.sample_discrete_laplace(2, size=np.int64(4), rng=rng).shape == (4,)
    assert S.sample_discrete_gaussian(2, size=0, rng=rng).shape == (0,)
    assert S.uniform01(rng, (3, 2)).shape == (3, 2)
    assert isinstance(S.uniform01(None), float)


@pytest.mark.parametrize("bad", [0, -1, -0.5, Fraction(-1, 3), math.nan, math.inf, -math.inf,
                                 decimal.Decimal("NaN"), np.float64(0.0)])
def test_bad_parameter_domain(bad):
    """σ² ≤ 0, NaN or ±inf raise DomainError naming the parameter and range."""
    with pytest.raises(DomainError, match=r"sigma2 must be"):
        S.sample_discrete_gaussian(bad, size=3)
    with pytest.raises(DomainError, match=r"scale must be"):
        S.sample_discrete_laplace(bad, size=3)


def test_bad_parameter_message():
    """The message has the standard grammar."""
    with pytest.raises(DomainError, match=r"^sigma2 must be in \(0, inf\); got -1$"):
        S.sample_discrete_gaussian(-1)
    with pytest.raises(DomainError, match=r"gamma must be in \[0, inf\)"):
        S.sample_bernoulli_exp(-0.1)


@pytest.mark.parametrize("bad", ["1", None, True, [1.0], 1 + 2j])
def test_bad_parameter_type(bad):
    """Non-numbers (and bools) raise TypeError."""
    with pytest.raises(TypeError):
        S.sample_discrete_gaussian(bad, size=3)


def test_bad_size_and_rng():
    """Negative or fractional sizes are DomainErrors; seeds and foreign rngs are TypeErrors."""
    with pytest.raises(DomainError):
        S.sample_discrete_gaussian(2, size=-1)
    with pytest.raises(DomainError):
        S.sample_discrete_laplace(2, size=(2, -3))
    with pytest.raises(DomainError):
        S.sample_discrete_laplace(2, size=1.5)
    with pytest.raises(TypeError):
        S.sample_discrete_gaussian(2, size="3")
    with pytest.raises(TypeError):
        S.sample_discrete_gaussian(2, size=3, rng=42)
    with pytest.raises(TypeError):
        S.sample_discrete_gaussian(2, size=3, rng=np.random.RandomState(0))
    with pytest.raises(DomainError):
        S.uniform_int(None, 0)
    with pytest.raises(DomainError):
        S.uniform_int(None, np.array([3, 0]))
    with pytest.raises(TypeError):
        S.uniform_int(None, 2.5)


def test_doctests():
    """The module's examples run."""
    assert doctest.testmod(S, raise_on_error=False).failed == 0
