"""renyi.limits: mutual-information bounds, Fano lower bounds on n, and what the Gaussian achieves.

Golden values are recomputed here with mpmath (50 digits) straight from the inequalities:
I ≤ ξ·n·H_n + ρn² (Bun & Steinke 2016, Prop. 28 with the harmonic number), n(ξ + ρ)
(Lemma 29), m(ξ·ℓ·H_ℓ + ρℓ²) (Theorem 30), and Fano's log M − h(β) − β·log(M − 1).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from renyi import MCDP, ZCDP, ApproxDP, ConversionError, DomainError, Gaussian, PureDP
from renyi.limits import (
    fano_bound,
    gaussian_histogram_n,
    gaussian_marginals_n,
    histogram_min_n,
    marginals_min_n,
    mutual_information_bound,
    packing_min_n,
    stability_histogram_n,
)
from renyi.samplers import laplace as lap_sampler

mp.mp.dps = 50


def _mp_fano(log_m: mp.mpf, beta: float) -> mp.mpf:
    b = mp.mpf(beta)
    m = mp.e**log_m
    if b >= (m - 1) / m:
        return mp.mpf(0)
    return log_m + b * mp.log(b) + (1 - b) * mp.log(1 - b) - b * mp.log(m - 1)


def _mp_kl(n: int, rho: float, xi: float) -> mp.mpf:
    return mp.mpf(xi) * n * mp.harmonic(n) + mp.mpf(rho) * n * n


def _mp_min_n(log_m: mp.mpf, rho: float, xi: float, beta: float) -> int:
    need = _mp_fano(log_m, beta)
    if need <= 0:
        return 1
    if xi == 0:
        return max(1, int(mp.ceil(mp.sqrt(need / rho))))
    n = 1
    while _mp_kl(n, rho, xi) < need:
        n += 1
    return n


# --------------------------------------------------------------------------- golden tables
TRB = [(2, 0.5, 0.05), (10, 0.5, 0.05), (1000, 0.01, 0.1), (10**6, 0.5, 0.05), (10**6, 0.001, 1e-6),
       (10**9, 2.0, 0.3), (1e100, 0.1, 0.05), (1e300, 1e-4, 0.01), (3, 1.0, 0.6), (2, 0.01, 0.49)]


@pytest.mark.parametrize("keys,rho,beta", TRB)
def test_histogram_min_n_matches_mpmath(keys, rho, beta):
    """n_min(T, ρ, β) = ⌈√(F(T, β)/ρ)⌉, F from Fano, recomputed with mpmath."""
    expected = _mp_min_n(mp.log(mp.mpf(keys)), rho, 0.0, beta)
    assert histogram_min_n(keys, rho, beta) == expected


@pytest.mark.parametrize("keys,rho,xi,beta", [(10**6, 0.5, 0.1, 0.05), (100, 0.01, 1.0, 0.05),
                                              (1e50, 0.001, 0.01, 0.2)])
def test_histogram_min_n_with_xi_matches_mpmath(keys, rho, xi, beta):
    """With ξ > 0: the smallest n with ξ·n·H_n + ρn² ≥ F."""
    assert histogram_min_n(keys, rho, beta, xi=xi) == _mp_min_n(mp.log(mp.mpf(keys)), rho, xi, beta)


@pytest.mark.parametrize("d,rho,beta", [(1, 0.5, 0.05), (10, 0.1, 0.05), (100, 0.5, 0.05), (1000, 0.01, 1e-3),
                                        (10**5, 1.0, 0.2)])
def test_marginals_min_n_matches_mpmath(d, rho, beta):
    """d one-way marginals: M = 2^d candidates."""
    assert marginals_min_n(d, rho, beta) == _mp_min_n(d * mp.log(2), rho, 0.0, beta)


NRX = [(1, 0.5, 0.0), (10, 0.5, 0.0), (10, 0.5, 0.1), (1000, 0.01, 0.001), (10**5, 1e-6, 1e-3), (999, 0.2, 0.3)]


@pytest.mark.parametrize("n,rho,xi", NRX)
def test_mutual_information_dependent_rows_matches_mpmath(n, rho, xi):
    """Prop. 28 (with H_n ≤ 1 + log n left unapplied): I ≤ ξ·n·H_n + ρn²."""
    got = mutual_information_bound(ZCDP(rho, xi), n)
    exact = float(_mp_kl(n, rho, xi))
    assert exact <= got <= exact * (1 + 1e-10)
    assert got <= xi * n * (1 + math.log(n)) + rho * n * n + 1e-9 * got  # never above the paper's form


@pytest.mark.parametrize("n,rho,xi", NRX)
def test_mutual_information_independent_rows_matches_mpmath(n, rho, xi):
    """Lemma 29: I ≤ n(ξ + ρ)."""
    got = mutual_information_bound(ZCDP(rho, xi), n, block=1)
    assert float(n * (mp.mpf(xi) + rho)) == pytest.approx(got, rel=1e-11)


@pytest.mark.parametrize("n,ell,rho,xi", [(100, 10, 0.5, 0.0), (100, 10, 0.5, 0.2), (1000, 250, 0.01, 0.01)])
def test_mutual_information_blocks_matches_mpmath(n, ell, rho, xi):
    """Theorem 30: m independent blocks of ℓ rows: I ≤ m(ξ·ℓ·H_ℓ + ρℓ²)."""
    got = mutual_information_bound(ZCDP(rho, xi), n, block=ell)
    assert float((n // ell) * _mp_kl(ell, rho, xi)) == pytest.approx(got, rel=1e-11)


def test_blocks_interpolate_between_independent_and_dependent():
    """Independent ≤ blocks ≤ dependent."""
    g = ZCDP(0.3, 0.05)
    vals = [mutual_information_bound(g, 120, block=b) for b in (1, 2, 4, 12, 60, 120)]
    assert vals == sorted(vals)
    assert vals[-1] == mutual_information_bound(g, 120)


def test_pure_dp_uses_the_tighter_group_kl():
    """Pure ε-DP: kε·tanh(kε/2), never above the route through zCDP (k²·ε·tanh(ε/2))."""
    for eps in (0.01, 0.5, 2.0):
        for n in (1, 5, 100):
            got = mutual_information_bound(PureDP(eps), n)
            assert got == pytest.approx(n * eps * math.tanh(n * eps / 2), rel=1e-10)
            assert got <= mutual_information_bound(PureDP(eps).to_zcdp(), n) * (1 + 1e-9)
    assert mutual_information_bound(PureDP(1.0), 10, block=1) == pytest.approx(10 * math.tanh(0.5), rel=1e-10)


def test_mcdp_single_row_uses_its_mean():
    """(μ, τ)-mCDP: one row's KL is at most μ."""
    assert mutual_information_bound(MCDP(0.1, 1.0), 10, block=1) == pytest.approx(1.0, rel=1e-10)
    assert mutual_information_bound(MCDP(0.6, 1.0), 10) == pytest.approx(
        mutual_information_bound(ZCDP(0.5, 0.1), 10), rel=1e-12)


def test_add_remove_is_a_group_of_two():
    """A ρ-zCDP add/remove guarantee is 4ρ under replace-one; a mechanism brings its own relation."""
    assert mutual_information_bound(ZCDP(0.5), 10, neighbouring="add_remove") == pytest.approx(200.0)
    m = Gaussian(1.0)  # add/remove, ρ = 1/2
    assert mutual_information_bound(m, 10) == pytest.approx(mutual_information_bound(ZCDP(2.0), 10))


def test_fano_bound_matches_mpmath():
    for log_m, beta in [(math.log(2), 0.1), (math.log(10), 0.05), (700.0, 0.01), (1e5, 0.5)]:
        assert fano_bound(log_m, beta) == pytest.approx(float(_mp_fano(mp.mpf(log_m), beta)), rel=1e-10)
    assert fano_bound(math.log(4), 0.8) == 0.0  # β ≥ (M − 1)/M: guessing works


# --------------------------------------------------------------------------- lower ≤ achievable
@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.5, 10.0])
@pytest.mark.parametrize("beta", [1e-9, 0.05, 0.45, 0.9])
@pytest.mark.parametrize("nb", ["replace_one", "add_remove"])
def test_lower_bound_never_exceeds_the_gaussian(rho, beta, nb):
    """A lower bound above an achievable n would be a bug: checked over T, d, ρ, β, relation."""
    for keys in (2, 3, 10, 1000, 10**6, 10**12, 1e50, 1e300):
        assert histogram_min_n(keys, rho, beta, neighbouring=nb) <= gaussian_histogram_n(keys, rho, beta,
                                                                                       neighbouring=nb)
    for d in (1, 2, 10, 100, 10**4):
        assert marginals_min_n(d, rho, beta, neighbouring=nb) <= gaussian_marginals_n(d, rho, beta,
                                                                                    neighbouring=nb)


def test_gaussian_histogram_n_is_accurate_by_simulation():
    """At the achievable n, 10⁵ draws of the max noise over T cells stay below n/2 at rate ≥ 95 %."""
    n = gaussian_histogram_n(30, 0.5, 0.05)
    g = np.random.default_rng(3)
    z = g.standard_normal((100_000, 30)) * math.sqrt(2.0)  # σ = 1/√ρ (replace-one, Δ₂ = √2)
    rate = float(np.mean(np.max(np.abs(z), axis=1) < n / 2))
    se = math.sqrt(0.05 * 0.95 / 1e5)
    assert rate >= 0.95 - 5 * se
    assert (n - 1) / 2 <= math.sqrt(2.0) * 3.2  # and n is not wasteful (z ≈ 3.14 for 30 cells)


def test_separation_stability_n_is_flat_and_zcdp_grows():
    """Approximate DP's n does not depend on T; the zCDP lower bound grows with log T past it."""
    rho, delta, beta = 0.5, 1e-6, 0.05
    eps = ZCDP(rho).epsilon(delta)
    n_stab = stability_histogram_n(eps, delta, beta)
    lows = [histogram_min_n(math.exp(lt), rho, beta) for lt in (1, 10, 100, 700)]
    assert lows == sorted(lows) and lows[-1] > n_stab


def test_stability_histogram_accuracy_by_simulation():
    """The stability histogram's error bound τ + b·log(n/β) holds in simulation for the n returned."""
    eps, delta, beta = 1.0, 1e-6, 0.05
    n = stability_histogram_n(eps, delta, beta)
    b = 2.0 / eps
    tau = 1.0 + b * math.log(1.0 / delta)
    g = np.random.default_rng(5)
    # the hardest case for a fixed n: n distinct keys of count 1 (all unpublished w.h.p.), and
    # one key of count n (its noise must stay within n/2)
    z = b * lap_sampler(g, 100_000)
    assert np.mean(np.abs(z) < n / 2) >= 0.95
    assert tau < n / 2


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("call,word", [
    (lambda: histogram_min_n(1, 0.5, 0.05), "keys"),
    (lambda: histogram_min_n(1.5, 0.5, 0.05), "keys"),
    (lambda: histogram_min_n(100, 0.0, 0.05), "rho"),
    (lambda: histogram_min_n(100, -1.0, 0.05), "rho"),
    (lambda: histogram_min_n(100, 0.5, 0.0), "beta"),
    (lambda: histogram_min_n(100, 0.5, 1.0), "beta"),
    (lambda: histogram_min_n(100, 0.5, float("nan")), "beta"),
    (lambda: histogram_min_n(100, 0.5, 0.05, xi=-1), "xi"),
    (lambda: histogram_min_n(100, 0.5, 0.05, neighbouring="swap"), "neighbouring"),
    (lambda: marginals_min_n(0, 0.5, 0.05), "d"),
    (lambda: gaussian_histogram_n(1, 0.5, 0.05), "keys"),
    (lambda: mutual_information_bound(ZCDP(0.5), 0), "n"),
    (lambda: mutual_information_bound(ZCDP(0.5), 10, block=3), "block"),
    (lambda: stability_histogram_n(0.0, 1e-6, 0.05), "epsilon"),
    (lambda: packing_min_n(math.log(1.5), ZCDP(1.0), 0.05), "candidates"),
])
def test_bad_input(call, word):
    """Out-of-domain input raises DomainError naming the parameter."""
    with pytest.raises(DomainError, match=word):
        call()


def test_guarantee_without_zcdp_is_refused():
    with pytest.raises(ConversionError):
        mutual_information_bound(ApproxDP(1.0, 1e-6), 10)
