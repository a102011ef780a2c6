"""renyi.accuracy: intervals for the noise of each mechanism, both directions, many cells.

Golden values are computed here with mpmath at 40 digits from the definitions (Gaussian and
Laplace tails; discrete tails as explicit sums), independently of the library's log-space code.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from renyi import DiscreteGaussian, DiscreteLaplace, DomainError, Gaussian, Laplace, RandomizedResponse
from renyi.accuracy import failure_probability, half_width, noise_for
from renyi.samplers import laplace as lap_sampler
from renyi.samplers import normal, sample_discrete_gaussian, sample_discrete_laplace

mp.mp.dps = 40


# --------------------------------------------------------------------------- independent oracles
def _cell_beta(beta: float, cells: int, method: str) -> mp.mpf:
    b = mp.mpf(beta)
    if method == "union":
        return b / cells
    return 1 - (1 - b) ** (mp.mpf(1) / cells)


def _mp_gauss_hw(sigma: float, beta: float, cells: int, method: str) -> mp.mpf:
    with mp.workdps(400):  # 1 − b must keep b's digits even for b ≈ 1e-120
        b = _cell_beta(beta, cells, method)
        return sigma * mp.sqrt(2) * mp.erfinv(1 - b)  # P[|N| > λ] = erfc(λ/(σ√2)) = b


def _mp_dg_tail(sigma: float, k: int) -> mp.mpf:
    """P[|X| > k] for the discrete Gaussian as explicit sums."""
    s2 = mp.mpf(sigma) ** 2
    f = lambda x: mp.exp(-mp.mpf(x) ** 2 / (2 * s2))  # noqa: E731
    top = k + int(60 * sigma) + 60
    theta = 1 + 2 * mp.fsum(f(x) for x in range(1, top))
    return 2 * mp.fsum(f(x) for x in range(k + 1, top)) / theta


def _mp_dlap_tail(t: float, k: int) -> mp.mpf:
    r = mp.exp(-1 / mp.mpf(t))
    c = (1 - r) / (1 + r)
    return 2 * c * mp.fsum(r**x for x in range(k + 1, k + 2000))


# --------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize("sigma,beta,cells,method", [
    (1.0, 0.05, 1, "independent"),
    (100.0, 0.05, 3000, "independent"),
    (100.0, 0.05, 3000, "union"),
    (2.5, 1e-9, 10, "union"),
    (0.01, 0.5, 7, "independent"),
    (1e6, 1e-100, 10**12, "independent"),
])
def test_gaussian_half_width_matches_mpmath(sigma, beta, cells, method):
    """The Gaussian half-width is the exact one, rounded up by at most a relative 1e-10."""
    exact = float(_mp_gauss_hw(sigma, beta, cells, method))
    got = half_width(Gaussian(sigma), cells=cells, beta=beta, method=method)
    assert exact <= got <= exact * (1 + 1e-10)


@pytest.mark.parametrize("scale,beta,cells,method", [
    (1.0, 0.05, 1, "independent"), (20.0, 0.01, 500, "union"), (20.0, 0.01, 500, "independent"),
    (3.0, 1e-200, 1, "independent"),
])
def test_laplace_half_width_matches_mpmath(scale, beta, cells, method):
    """Laplace: λ = b·log(1/β_cell) exactly (P[|Lap(b)| > λ] = e^{−λ/b})."""
    with mp.workdps(400):
        exact = float(-scale * mp.log(_cell_beta(beta, cells, method)))
    got = half_width(Laplace(scale), cells=cells, beta=beta, method=method)
    assert exact <= got <= exact * (1 + 1e-10)


def test_coverage_and_beta_agree():
    """coverage = 0.95 and beta = 0.05 give the same interval."""
    m = Gaussian(3.0)
    assert half_width(m, 0.95, 10) == pytest.approx(half_width(m, cells=10, beta=0.05), rel=1e-14)


def test_union_is_never_tighter_than_independent():
    """The union bound is valid for any dependence, so it can only be wider."""
    for m in (Gaussian(2.0), Laplace(2.0), DiscreteGaussian(2), DiscreteLaplace(2)):
        for t in (1, 2, 10, 1000):
            assert half_width(m, cells=t, method="union") >= half_width(m, cells=t)


def test_more_cells_are_wider():
    """Simultaneous intervals grow with the number of cells."""
    widths = [half_width(Gaussian(1.0), cells=t) for t in (1, 10, 100, 10**4, 10**8)]
    assert widths == sorted(widths) and len(set(widths)) == len(widths)


# --------------------------------------------------------------------------- discrete: exact sums
@pytest.mark.parametrize("sigma", [0.3, 0.5, 1.0, 1.7, 3.0, 10.0])
@pytest.mark.parametrize("beta", [0.05, 0.2, 1e-6])
def test_discrete_gaussian_is_the_smallest_integer_meeting_the_exact_tail(sigma, beta):
    """At small σ the half-width is the smallest integer k with exact P[|X| > k] ≤ β."""
    k = int(half_width(DiscreteGaussian(sigma), beta=beta))
    assert _mp_dg_tail(sigma, k) <= beta
    assert k == 0 or _mp_dg_tail(sigma, k - 1) > beta


def test_discrete_gaussian_differs_from_the_continuous_approximation():
    """Where the continuous tail is wrong, the exact sum decides (here: narrower by one)."""
    sigma, beta = 0.6, 0.01
    cont = math.ceil(float(_mp_gauss_hw(sigma, beta, 1, "union")))
    k = int(half_width(DiscreteGaussian(sigma), beta=beta))
    assert _mp_dg_tail(sigma, k) <= beta
    assert k < cont


@pytest.mark.parametrize("sigma,k", [(0.5, 0), (1.0, 1), (1.0, 2), (3.0, 5), (25.0, 49)])
def test_discrete_gaussian_failure_probability_is_the_exact_sum(sigma, k):
    """failure_probability equals the exact tail sum (relative 1e-9)."""
    got = failure_probability(DiscreteGaussian(sigma), k)
    assert got == pytest.approx(float(_mp_dg_tail(sigma, k)), rel=1e-9)


@pytest.mark.parametrize("t", [0.3, 1.0, 2.0, 7.5])
@pytest.mark.parametrize("beta", [0.05, 0.1, 1e-8])
def test_discrete_laplace_is_the_smallest_integer_meeting_the_exact_tail(t, beta):
    """Discrete Laplace: the smallest k with exact P[|X| > k] ≤ β."""
    k = int(half_width(DiscreteLaplace(Fraction(t)), beta=beta))
    assert _mp_dlap_tail(t, k) <= beta
    assert k == 0 or _mp_dlap_tail(t, k - 1) > beta
    assert failure_probability(DiscreteLaplace(Fraction(t)), k) == pytest.approx(float(_mp_dlap_tail(t, k)), rel=1e-9)


def test_huge_sigma_discrete_gaussian_uses_a_valid_bound():
    """Beyond millions of terms the continuous half-width, rounded up, is used (valid: θ ≥ σ√(2π))."""
    sigma = 1e7
    k = half_width(DiscreteGaussian(sigma))
    assert k == math.ceil(float(_mp_gauss_hw(sigma, 0.05, 1, "union")) * (1 - 1e-13))


# --------------------------------------------------------------------------- coverage by simulation
N = 100_000


def _within_5se(hits: int, p: float) -> bool:
    se = math.sqrt(p * (1 - p) / N)
    return abs(hits / N - p) <= 5 * se


@pytest.mark.parametrize("mech,draw", [
    (Gaussian(3.0), lambda g: 3.0 * normal(g, N)),
    (Laplace(2.0), lambda g: 2.0 * lap_sampler(g, N)),
    (DiscreteGaussian(40), lambda g: sample_discrete_gaussian(Fraction(1600), N, rng=g)),
    (DiscreteLaplace(40), lambda g: sample_discrete_laplace(Fraction(40), N, rng=g)),
], ids=["gaussian", "laplace", "discrete_gaussian", "discrete_laplace"])
def test_coverage_is_95_percent(mech, draw):
    """10⁵ seeded draws of renyi's noise land inside the 95 % interval at 95 % (± 5 s.e.)."""
    g = np.random.default_rng(20261123)
    hw = half_width(mech)
    hits = int(np.sum(np.abs(draw(g)) <= hw))
    exact = 1.0 - failure_probability(mech, hw)
    assert exact >= 0.95
    assert _within_5se(hits, 0.95 if exact - 0.95 < 0.002 else exact)
    assert _within_5se(hits, exact)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_discrete_gaussian_coverage_at_small_sigma_is_the_exact_sum(sigma):
    """At small σ the coverage is well above 95 %; the draws match the exact sum, not 95 %."""
    g = np.random.default_rng(7)
    m = DiscreteGaussian(sigma)
    hw = half_width(m)
    hits = int(np.sum(np.abs(sample_discrete_gaussian(m.sigma2, N, rng=g)) <= hw))
    assert _within_5se(hits, float(1 - _mp_dg_tail(sigma, int(hw))))
    assert hits / N >= 0.95


def test_simultaneous_coverage_over_cells():
    """10⁵ draws of 20 independent cells: all 20 inside at rate 95 % (independent) or more (union)."""
    g = np.random.default_rng(11)
    z = np.max(np.abs(normal(g, (N, 20))), axis=1)
    ind = half_width(Gaussian(1.0), cells=20)
    assert _within_5se(int(np.sum(z <= ind)), 0.95)
    union = half_width(Gaussian(1.0), cells=20, method="union")
    assert _within_5se(int(np.sum(z <= union)), 1.0 - failure_probability(Gaussian(1.0), union, 20))


# --------------------------------------------------------------------------- the inverse
@settings(max_examples=60, deadline=None)
@given(h=st.floats(0.5, 1e6), cov=st.floats(0.01, 0.999999), cells=st.integers(1, 10**6),
       kind=st.sampled_from(["gaussian", "laplace", "discrete_gaussian", "discrete_laplace"]),
       method=st.sampled_from(["independent", "union"]))
def test_noise_for_round_trips_one_sided(h, cov, cells, kind, method):
    """half_width(noise_for(λ)) ≤ λ, and slightly more noise would exceed λ."""
    make = {"gaussian": Gaussian, "laplace": Laplace, "discrete_gaussian": DiscreteGaussian,
            "discrete_laplace": DiscreteLaplace}[kind]
    try:
        s = noise_for(h, cov, cells, kind, method=method)
    except DomainError:
        assert kind.startswith("discrete")  # a discrete target can be unreachable only at λ < 1
        return
    assert half_width(make(s), cov, cells, method=method) <= (math.floor(h) if "discrete" in kind else h)
    bigger = make(s * (1 + 1e-8))
    assert half_width(bigger, cov, cells, method=method) > (h if kind in ("gaussian", "laplace") else h - 1)


def test_noise_for_gaussian_matches_mpmath():
    """σ = λ/z exactly (rounded down by at most 1e-10)."""
    exact = 300.0 / float(_mp_gauss_hw(1.0, 0.05, 3000, "independent"))
    got = noise_for(300.0, cells=3000, beta=0.05)
    assert exact * (1 - 1e-10) <= got <= exact


def test_noise_for_discrete_zero_half_width():
    """λ < 1 asks for an exact answer with probability ≥ coverage: a small σ does it."""
    s = noise_for(0.5, coverage=0.9, kind="discrete_gaussian")
    assert failure_probability(DiscreteGaussian(s), 0) <= 0.1
    t = noise_for(0, coverage=0.9, kind="discrete_laplace")
    assert failure_probability(DiscreteLaplace(t), 0) <= 0.1


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,word", [
    ({"coverage": 0.0}, "coverage"), ({"coverage": 1.0}, "coverage"), ({"coverage": 1.5}, "coverage"),
    ({"coverage": float("nan")}, "coverage"), ({"beta": 0.0}, "beta"), ({"beta": 1.0}, "beta"),
    ({"cells": 0}, "cells"), ({"cells": 2.5}, "cells"), ({"method": "bonferroni"}, "method"),
])
def test_half_width_bad_input(kwargs, word):
    """Out-of-domain arguments raise DomainError naming the parameter."""
    with pytest.raises(DomainError, match=word):
        half_width(Gaussian(1.0), **kwargs)


def test_half_width_refuses_mechanisms_without_numeric_noise():
    """Randomized response has no additive noise: the error points to its estimator."""
    with pytest.raises(DomainError, match="rr_estimate"):
        half_width(RandomizedResponse(1.0))


@pytest.mark.parametrize("args,kwargs,word", [
    ((0.0,), {}, "half_width"), ((-1.0,), {}, "half_width"), ((1.0,), {"kind": "cauchy"}, "kind"),
    ((1.0, 1.0), {}, "coverage"), ((1.0,), {"cells": -3}, "cells"), ((-1.0,), {"kind": "discrete_gaussian"}, "half_width"),
])
def test_noise_for_bad_input(args, kwargs, word):
    """Out-of-domain arguments raise DomainError naming the parameter."""
    with pytest.raises(DomainError, match=word):
        noise_for(*args, **kwargs)


def test_failure_probability_bad_input():
    with pytest.raises(DomainError, match="half_width"):
        failure_probability(Gaussian(1.0), -1.0)


def test_module_is_reachable_from_the_package():
    """``renyi.accuracy.half_width`` works after a plain ``import renyi``."""
    import renyi

    assert renyi.accuracy.half_width is half_width


def test_report_shows_each_mechanisms_95_percent_half_width():
    """`renyi report`: each mechanism's 95 % half-width (of one answer) beside its share."""
    from pathlib import Path

    from renyi.pipeline import load_pipeline
    from renyi.report import compute_report

    examples = Path(__file__).resolve().parent.parent / "examples"
    r = compute_report(load_pipeline(examples / "census.toml"))
    for s, e in zip(r.shares, load_pipeline(examples / "census.toml").entries):
        m = e.mechanism
        base = getattr(m, "mechanism", m)
        if isinstance(base, (Gaussian, Laplace, DiscreteGaussian, DiscreteLaplace)):
            assert s.half_width_95 == half_width(base, 0.95)
        else:
            assert s.half_width_95 is None
        assert "half_width_95" in s.to_dict()
    assert any(s.half_width_95 is not None for s in r.shares)


# --------------------------------------------------------------------------- randomized response
def _rr_coverage_exact(mech, n, pi, cover):
    """P[all intervals cover π] summed exactly over every possible count vector (multinomial)."""
    from itertools import product

    from scipy import stats

    from renyi.accuracy import rr_estimate

    k = mech.k
    p = mech._keep_numerator / 2.0**53
    q = (1 - p) / (k - 1)
    theta = [q + (p - q) * x for x in pi]
    total = 0.0
    for c in product(range(n + 1), repeat=k - 1):
        if sum(c) > n:
            continue
        counts = [*c, n - sum(c)]
        r = rr_estimate(counts, mech, cover)
        if all(lo <= x <= hi for lo, x, hi in zip(r.lower, pi, r.upper)):
            total += stats.multinomial.pmf(counts, n, theta)
    return total


@pytest.mark.parametrize("k,eps,n,pi", [(2, 1.0, 30, (0.7, 0.3)), (3, 2.0, 25, (0.5, 0.3, 0.2))])
def test_rr_interval_coverage_by_simulation(k, eps, n, pi):
    """10⁵ seeded surveys through RandomizedResponse.release: the intervals cover all true
    frequencies at the exact rate (± 5 s.e.), which is at least 95 %."""
    from renyi.accuracy import rr_estimate

    mech = RandomizedResponse(eps, k=k)
    g = np.random.default_rng(99)
    reps = 100_000
    # each survey asks n individuals drawn independently from a population with frequencies π
    truth = g.choice(k, size=(reps, n), p=pi)
    out = mech.release(truth, rng=g)
    counts = np.stack([np.sum(out == j, axis=1) for j in range(k)], axis=1)
    rows, inv = np.unique(counts, axis=0, return_inverse=True)
    covered = np.array([all(lo <= x <= hi for lo, x, hi in zip(r.lower, pi, r.upper))
                        for r in (rr_estimate(list(row), mech) for row in rows)])
    hits = int(np.sum(covered[inv.reshape(-1)]))
    pis = pi
    exact = _rr_coverage_exact(mech, n, list(pis), 0.95)
    assert exact >= 0.95
    se = math.sqrt(exact * (1 - exact) / reps)
    assert abs(hits / reps - exact) <= 5 * se


def test_rr_estimate_is_unbiased():
    """E[π̂] = π exactly: Σ_c P(c)·π̂(c) over the binomial distribution of the counts."""
    from scipy import stats

    from renyi.accuracy import rr_estimate

    mech = RandomizedResponse(0.7)
    n, pi1 = 40, 0.25
    p = mech._keep_numerator / 2.0**53
    theta = (1 - p) + (2 * p - 1) * pi1
    mean = sum(stats.binom.pmf(c, n, theta) * rr_estimate([n - c, c], mech).estimate[1] for c in range(n + 1))
    assert mean == pytest.approx(pi1, abs=1e-12)


@pytest.mark.parametrize("counts,word", [([1, 2, 3], "counts"), ([-1, 3], "counts"), ([0, 0], "counts"),
                                         ([1.5, 2], "counts")])
def test_rr_estimate_bad_counts(counts, word):
    from renyi.accuracy import rr_estimate

    with pytest.raises(DomainError, match=word):
        rr_estimate(counts, RandomizedResponse(1.0))


def test_rr_estimate_refuses_zero_epsilon_and_other_mechanisms():
    from renyi.accuracy import rr_estimate

    with pytest.raises(DomainError, match="epsilon"):
        rr_estimate([3, 4], RandomizedResponse(0.0))
    with pytest.raises(DomainError, match="mechanism"):
        rr_estimate([3, 4], Gaussian(1.0))


# --------------------------------------------------------------------------- budget allocation
from renyi import PureDP, ZCDP  # noqa: E402
from renyi.accuracy import Query, allocate  # noqa: E402

QUERIES = [Query("counts", 1.0, 3000, 1.0, 500.0), Query("sums", 100.0, 3000, 2.0, 2e5),
           Query("total", 1.0, 1, 0.5, 1e5), Query("marginals", 3.0, 40, 1.0, 800.0)]


def _unit_half_widths(kind, coverage=0.95):
    """Half-widths of unit noise over each query's cells, from mpmath (computed once)."""
    out = []
    for q in QUERIES:
        with mp.workdps(30):
            cell = 1 - mp.mpf(coverage) ** (mp.mpf(1) / q.cells)
            out.append(float(mp.sqrt(2) * mp.erfinv(1 - cell)) if kind == "gaussian" else float(-mp.log(cell)))
    return out


UNIT = {"gaussian": _unit_half_widths("gaussian"), "laplace": _unit_half_widths("laplace")}


def _loss(kind, loss, parts):
    """The loss of a split, recomputed from the definitions (not through allocate)."""
    out = []
    for q, b, u in zip(QUERIES, parts, UNIT[kind]):
        noise = q.sensitivity / math.sqrt(2 * b) if kind == "gaussian" else q.sensitivity / b
        var = noise**2 if kind == "gaussian" else 2 * noise**2
        out.append((q, var, noise * u))
    if loss == "variance":
        return sum(q.weight * q.cells * v for q, v, _ in out)
    return max(q.weight * lam / q.magnitude for q, _, lam in out)


@pytest.mark.parametrize("budget,kind", [(ZCDP(1.0), "gaussian"), (PureDP(2.0), "laplace")])
@pytest.mark.parametrize("loss", ["variance", "max_relative"])
def test_allocation_is_optimal_against_perturbed_splits(budget, kind, loss):
    """No random re-split of the same total does better than the allocation."""
    a = allocate(budget, QUERIES, loss=loss)
    total = a.total
    parts = np.array([q.budget for q in a.queries])
    assert math.fsum(parts) <= total
    best = _loss(kind, loss, parts)
    assert a.loss_value == pytest.approx(best, rel=1e-9)
    g = np.random.default_rng(1)
    for _ in range(200):
        other = parts * np.exp(g.normal(0, 0.2, parts.size))
        other *= total / other.sum()
        assert _loss(kind, loss, other) >= best * (1 - 1e-9)


def test_allocation_by_weights_and_spend_within_shares():
    """Weights split proportionally; every query's noise spends no more than its share."""
    a = allocate(ZCDP(0.5), QUERIES, loss="weights")
    w = [q.weight for q in QUERIES]
    for q, qa, wi in zip(QUERIES, a.queries, w):
        assert qa.share == pytest.approx(wi / sum(w), rel=1e-12)
        assert Gaussian(qa.noise, q.sensitivity).rho <= qa.budget
        assert qa.half_width == half_width(Gaussian(qa.noise), 0.95, q.cells)
    assert math.fsum(q.budget for q in a.queries) <= 0.5
    b = allocate(PureDP(1.0), [dict(name="x", sensitivity=2.0)])
    assert b.queries[0].noise >= 2.0 and Laplace(b.queries[0].noise, 2.0).epsilon <= 1.0


@pytest.mark.parametrize("args,kwargs,word", [
    ((1.0, []), {}, "queries"), ((0.0, QUERIES), {}, "rho"), ((1.0, QUERIES), {"loss": "l2"}, "loss"),
    ((ZCDP(1.0, xi=0.1), QUERIES), {}, "xi"), ((1.0, QUERIES), {"coverage": 1.0}, "coverage"),
])
def test_allocation_bad_input(args, kwargs, word):
    with pytest.raises(DomainError, match=word):
        allocate(*args, **kwargs)


def test_query_bad_input():
    with pytest.raises(DomainError, match="weight"):
        Query("q", weight=0.0)
    with pytest.raises(DomainError, match="cells"):
        Query("q", cells=0)


@pytest.mark.optional
def test_cross_check_against_opendp():
    """OpenDP's accuracy functions (P[|Z| ≥ a] ≤ α): equal to ours for continuous noise (ours may
    be wider by the 1e-12 margin only), and ours + 1 for discrete noise (P[|Z| > k] = P[|Z| ≥ k + 1])."""
    from _peers import need

    need("opendp")
    import opendp.prelude as dp
    from opendp import accuracy as od

    dp.enable_features("contrib")
    for s in (0.5, 1.0, 3.0, 10.0, 250.0):
        for alpha in (0.05, 0.2, 1e-6):
            g = half_width(Gaussian(s), beta=alpha)
            assert od.gaussian_scale_to_accuracy(s, alpha) == pytest.approx(g, rel=1e-9)
            lp = half_width(Laplace(s), beta=alpha)
            assert od.laplacian_scale_to_accuracy(s, alpha) == pytest.approx(lp, rel=1e-9)
            assert od.discrete_gaussian_scale_to_accuracy(s, alpha) == half_width(DiscreteGaussian(s), beta=alpha) + 1
            assert math.ceil(od.discrete_laplacian_scale_to_accuracy(s, alpha)) == \
                half_width(DiscreteLaplace(s), beta=alpha) + 1
