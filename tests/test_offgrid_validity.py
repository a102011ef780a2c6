"""Validity off every tested grid: random setups for each privacy claim, checked against
INDEPENDENT ground truth (never against renyi itself).

Oracles (none shares code with renyi):

* Gaussian / k-fold Gaussian: the exact profile of Balle & Wang (2018) Thm 8 in mpmath
  (``tests/_exact.py``); μ = √k·Δ/σ.
* Laplace k-fold (k ≤ 2): the exact profile δ(ε) = E_P[(1 − e^{ε−L})₊], the one-fold profile in
  closed form for every real ε, the two-fold by mpmath quadrature over the first loss.
* k-ary randomized response, k-fold: a trinomial sum over the loss atoms ±ε₀, 0 (mpmath).
* Poisson-subsampled Gaussian (one step), its replace-one pair, and the group mixture
  Σ_j Bin(k, q)(j)·N(j, σ²) against N(0, σ²) (both directions): each pair has a monotone
  privacy loss, so δ(ε) = P(A) − e^ε·Q(A) with A the half-line where the loss exceeds ε,
  found by bisection in mpmath at 50 digits.
* T steps: dp-accounting's optimistic PLD (a lower bound on the true ε) and pessimistic PLD
  (an upper bound) at a fine grid, prv-accountant's lower end; random allocation against
  PLD_accounting 2.x's ``gaussian_allocation_epsilon_range`` (golden brackets computed once with
  it, quoted below; recomputed in the slow tier).

Every check is in the direction of validity: a renyi upper end must not be below the truth
(δ_true(ε_renyi) ≤ δ), a renyi lower end must not be above it (δ_true(lower) ≥ δ). The only slack
is floating-point rounding (a relative 1e-12 on δ) or, against a numerical peer, the peer's own
stated discretisation error.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest

from renyi import Accountant, ApproxDP, dpsgd, routes
from renyi.mechanisms import Gaussian, Laplace, RandomizedResponse
from renyi.subsampling import PoissonSubsampled

from _exact import gaussian_delta
from _peers import need

RTOL = 1e-12  # floating-point rounding of δ, nothing more


# ==============================================================================================
# oracles
# ==============================================================================================
def _phi_sf(z):
    return mp.erfc(z / mp.sqrt(2)) / 2


def _phi_cdf(z):
    return mp.erfc(-z / mp.sqrt(2)) / 2


def gauss_delta(mu: float, eps: float) -> float:
    with mp.workdps(40):
        return float(gaussian_delta(mu, eps))


def mixture_pair_delta(eps, sigma, wp, mp_, wq, mq) -> float:
    """δ(ε) = sup_A P(A) − e^ε Q(A) for P = Σ wp_i N(mp_i, σ²), Q = Σ wq_i N(mq_i, σ²) whose loss
    log p/q is monotone in x (every pair used here). 50 digits, bisection for the crossing."""
    with mp.workdps(50):
        s = mp.mpf(sigma)
        E = mp.mpf(eps)
        wp = [mp.mpf(w) for w in wp]
        wq = [mp.mpf(w) for w in wq]
        mp_ = [mp.mpf(m) for m in mp_]
        mq = [mp.mpf(m) for m in mq]

        def logdens(x, ws, ms):
            return mp.log(mp.fsum(w * mp.e ** (-(x - m) ** 2 / (2 * s**2)) for w, m in zip(ws, ms) if w > 0))

        def loss(x):
            return logdens(x, wp, mp_) - logdens(x, wq, mq)

        big = 60 * s + 4 * max(abs(m) for m in mp_ + mq) + 10
        lo_x, hi_x = -big, big
        l_lo, l_hi = loss(lo_x), loss(hi_x)
        increasing = l_hi > l_lo
        a, b = (lo_x, hi_x)  # beyond the window both masses are below 1e-700
        for _ in range(190):
            m = (a + b) / 2
            above = loss(m) > E
            if above == increasing:
                b = m
            else:
                a = m
        x = (a + b) / 2

        def mass(ws, ms):
            if increasing:  # A = (x, ∞)
                return mp.fsum(w * _phi_sf((x - m) / s) for w, m in zip(ws, ms))
            return mp.fsum(w * _phi_cdf((x - m) / s) for w, m in zip(ws, ms))

        d = mass(wp, mp_) - mp.e**E * mass(wq, mq)
        return float(max(d, 0))


def binom_weights(k: int, q: float) -> list[float]:
    return [float(mp.binomial(k, j) * mp.mpf(q) ** j * (1 - mp.mpf(q)) ** (k - j)) for j in range(k + 1)]


def group_delta(eps: float, sigma: float, q: float, k: int) -> float:
    """The true one-step δ of PoissonSubsampled(Gaussian(σ), q).group(k): the larger direction."""
    w = binom_weights(k, q)
    js = list(range(k + 1))
    d1 = mixture_pair_delta(eps, sigma, w, js, [1.0], [0.0])
    d2 = mixture_pair_delta(eps, sigma, [1.0], [0.0], w, js)
    return max(d1, d2)


def replace_one_delta(eps: float, sigma: float, q: float) -> float:
    """(1−q)N(0)+qN(1) against (1−q)N(0)+qN(−1) (symmetric: one direction)."""
    return mixture_pair_delta(eps, sigma, [1 - q, q], [0.0, 1.0], [1 - q, q], [0.0, -1.0])


def laplace_delta1(t, e0):
    """One-fold Laplace(b = 1/e0, Δ = 1) profile E_P[(1 − e^{t−L})₊] for every real t (mpmath)."""
    t, e0 = mp.mpf(t), mp.mpf(e0)
    b = 1 / e0
    d = (1 - mp.e ** (t - e0)) / 2 if t < e0 else mp.mpf(0)
    if t < -e0:
        d += mp.e ** (-e0) * (1 - mp.e ** (t + e0)) / 2
    xs = min(max((1 - t * b) / 2, mp.mpf(0)), mp.mpf(1))
    d += (1 - mp.e ** (-xs / b)) / 2 - mp.e ** (t - e0) * (mp.e ** (xs / b) - 1) / 2
    return d


def laplace_delta(eps: float, scale: float, k: int) -> float:
    with mp.workdps(30):
        e0 = 1 / mp.mpf(scale)
        if k == 1:
            return float(max(laplace_delta1(eps, e0), 0))
        assert k == 2
        b = 1 / e0
        E = mp.mpf(eps)
        d = laplace_delta1(E - e0, e0) / 2 + mp.e ** (-e0) * laplace_delta1(E + e0, e0) / 2
        f = lambda x: mp.e ** (-x / b) / (2 * b) * laplace_delta1(E - (1 - 2 * x) / b, e0)  # noqa: E731
        # the integrand has kinks where a clip switches: split there
        cuts = sorted({mp.mpf(0), mp.mpf(1)} | {c for c in ((1 - (E - e0) * b) / 2 + 0, ) if 0 < c < 1})
        cuts = sorted(set(cuts) | {mp.mpf(c) for c in np.linspace(0, 1, 9)[1:-1]})
        d += mp.quad(f, cuts)
        return float(max(d, 0))


def rr_delta(eps: float, e0: float, cats: int, k: int) -> float:
    """k-fold k-ary randomized response (truth kept w.p. e^ε₀/(e^ε₀ + cats − 1)): trinomial sum."""
    with mp.workdps(40):
        E0, E = mp.mpf(e0), mp.mpf(eps)
        den = mp.e**E0 + cats - 1
        a, b = mp.e**E0 / den, 1 / den
        c = (cats - 2) * b
        tot = mp.mpf(0)
        for na in range(k + 1):
            for nb in range(k + 1 - na):
                n0 = k - na - nb
                if n0 > 0 and cats == 2:
                    continue
                L = E0 * (na - nb)
                if L <= E:
                    continue
                p = mp.factorial(k) / (mp.factorial(na) * mp.factorial(nb) * mp.factorial(n0)) * a**na * b**nb * c**n0
                tot += p * (1 - mp.e ** (E - L))
        return float(tot)


def upper_ok(true_delta_at: float, delta: float) -> bool:
    """An upper end ε_u is valid iff δ_true(ε_u) ≤ δ."""
    return true_delta_at <= delta * (1 + RTOL) + 1e-300


def lower_ok(true_delta_at: float, delta: float) -> bool:
    """A lower end ε_l is valid iff δ_true(ε_l) ≥ δ (or ε_l = 0)."""
    return true_delta_at >= delta * (1 - RTOL)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _delta(rng) -> float:
    return float(10 ** rng.uniform(-12, -2))


# ==============================================================================================
# Gaussian and k-fold Gaussian: exact closed form, both relations
# ==============================================================================================
def _gaussian_cases(n, seed):
    rng = _rng(seed)
    for _ in range(n):
        yield (float(10 ** rng.uniform(-0.7, 1.5)), int(rng.integers(1, 200)), float(rng.uniform(0.3, 3)),
               _delta(rng), str(rng.choice(["add_remove", "replace_one"])))


def _check_gaussian(sigma, k, sens, delta, rel):
    mu = math.sqrt(k) * sens / sigma
    g = Gaussian(sigma, sensitivity=sens, neighbouring=rel)
    obj = g if k == 1 else g.compose(k)
    c = routes.best_epsilon(obj, delta)
    assert upper_ok(gauss_delta(mu, c.value), delta), (sigma, k, sens, delta, rel, c)
    if c.lower is not None and c.lower > 0:
        assert lower_ok(gauss_delta(mu, c.lower), delta), (sigma, k, delta, rel, c)
    # δ at a random ε: never below the exact δ
    eps = c.value * 0.7
    d = routes.best_delta(obj, eps)
    assert d.value >= gauss_delta(mu, eps) * (1 - RTOL), (sigma, k, eps, d)


@pytest.mark.parametrize("case", list(_gaussian_cases(4, 1)))
def test_gaussian_kfold_exact(case):
    _check_gaussian(*case)


@pytest.mark.slow
def test_gaussian_kfold_exact_many():
    for case in _gaussian_cases(150, 101):
        _check_gaussian(*case)


# ==============================================================================================
# Laplace (k ≤ 2 exact) and randomized response (k-fold exact)
# ==============================================================================================
def _check_laplace(scale, k, delta):
    m = Laplace(scale)
    obj = m if k == 1 else m.compose(k)
    c = routes.best_epsilon(obj, delta)
    assert upper_ok(laplace_delta(c.value, scale, k), delta), (scale, k, delta, c)
    if c.lower is not None and c.lower > 0:
        assert lower_ok(laplace_delta(c.lower, scale, k), delta), (scale, k, delta, c)
    eps = c.value * 0.6
    d = routes.best_delta(obj, eps).value
    assert d >= laplace_delta(eps, scale, k) * (1 - RTOL), (scale, k, eps, d)


def _laplace_cases(n, seed):
    rng = _rng(seed)
    for _ in range(n):
        yield float(10 ** rng.uniform(-0.5, 1)), int(rng.integers(1, 3)), float(10 ** rng.uniform(-8, -2))


@pytest.mark.parametrize("case", list(_laplace_cases(3, 2)))
def test_laplace_exact(case):
    _check_laplace(*case)


def test_laplace_oracle_closed_form():
    """The oracle itself: one fold is 1 − e^{(ε − ε₀)/2} (closed form of the known profile)."""
    assert laplace_delta(0.3, 2.0, 1) == pytest.approx(1 - math.exp((0.3 - 0.5) / 2), rel=1e-14)


def _rr_cases(n, seed):
    rng = _rng(seed)
    for _ in range(n):
        yield float(rng.uniform(0.05, 3)), int(rng.integers(2, 6)), int(rng.integers(1, 40)), _delta(rng)


def _check_rr(e0, cats, k, delta):
    m = RandomizedResponse(epsilon=e0, k=cats)
    obj = m if k == 1 else m.compose(k)
    c = routes.best_epsilon(obj, delta)
    assert upper_ok(rr_delta(c.value, e0, cats, k), delta), (e0, cats, k, delta, c)
    if c.lower is not None and c.lower > 0:
        assert lower_ok(rr_delta(c.lower, e0, cats, k), delta), (e0, cats, k, delta, c)
    eps = c.value * 0.5
    d = routes.best_delta(obj, eps).value
    assert d >= rr_delta(eps, e0, cats, k) * (1 - RTOL), (e0, cats, k, eps, d)


@pytest.mark.parametrize("case", list(_rr_cases(4, 3)))
def test_randomized_response_kfold_exact(case):
    _check_rr(*case)


def test_discrete_laplace_kfold_exact():
    """Discrete Laplace P(z) ∝ e^{−|z|/t}, Δ = 1: the loss is +1/t for z ≤ 0 (probability
    e^{1/t}/(1 + e^{1/t})) and −1/t otherwise, so k runs are exactly k-fold binary randomized
    response with ε₀ = 1/t: the trinomial oracle applies."""
    from renyi import DiscreteLaplace

    rng = _rng(26)
    for _ in range(2):
        scale, k, d = float(10 ** rng.uniform(-0.5, 1)), int(rng.integers(1, 30)), _delta(rng)
        m = DiscreteLaplace(scale)
        obj = m if k == 1 else m.compose(k)
        c = routes.best_epsilon(obj, d)
        assert upper_ok(rr_delta(c.value, 1 / scale, 2, k), d), (scale, k, d, c)
        assert not c.lower or lower_ok(rr_delta(c.lower, 1 / scale, 2, k), d), (scale, k, d, c)


def _dg_delta(eps, sigma):
    """One run of the discrete Gaussian (Δ = 1): Σ_z (p(z) − e^ε q(z))₊, q the law shifted by 1."""
    with mp.workdps(40):
        s2 = 2 * mp.mpf(sigma) ** 2
        n = int(60 * sigma + 60)
        w = {z: mp.e ** (-mp.mpf(z) ** 2 / s2) for z in range(-n - 1, n + 2)}
        Z = mp.fsum(w.values())
        E = mp.e ** mp.mpf(eps)
        return float(mp.fsum(max(mp.mpf(0), (w[z] - E * w[z - 1]) / Z) for z in range(-n, n + 1)))


def test_discrete_gaussian_one_run_exact():
    from renyi import DiscreteGaussian

    rng = _rng(27)
    for _ in range(2):
        s, d = float(10 ** rng.uniform(-0.5, 0.8)), float(10 ** rng.uniform(-10, -2))
        c = routes.best_epsilon(DiscreteGaussian(s), d)
        assert upper_ok(_dg_delta(c.value, s), d), (s, d, c)
        assert not c.lower or lower_ok(_dg_delta(c.lower, s), d), (s, d, c)


@pytest.mark.slow
def test_laplace_rr_many():
    for case in _laplace_cases(25, 102):
        _check_laplace(*case)
    for case in _rr_cases(60, 103):
        _check_rr(*case)


# ==============================================================================================
# Poisson-subsampled Gaussian: one step exact (both relations), T steps against peers
# ==============================================================================================
def _psg_one_cases(n, seed):
    rng = _rng(seed)
    for _ in range(n):
        yield float(10 ** rng.uniform(-0.4, 0.7)), float(10 ** rng.uniform(-3, -0.1)), _delta(rng)


def _check_psg_one(sigma, q, delta):
    from renyi.sampling.subsampling import PoissonSubsampledReplaceOne

    m = PoissonSubsampled(Gaussian(sigma), q)
    c = routes.best_epsilon(m, delta)
    assert upper_ok(group_delta(c.value, sigma, q, 1), delta), (sigma, q, delta, c)
    if c.lower is not None and c.lower > 0:
        assert lower_ok(group_delta(c.lower, sigma, q, 1), delta), (sigma, q, delta, c)
    r = PoissonSubsampledReplaceOne(Gaussian(sigma), q)
    c = routes.best_epsilon(r, delta)
    assert upper_ok(replace_one_delta(c.value, sigma, q), delta), ("replace_one", sigma, q, delta, c)
    if c.lower is not None and c.lower > 0:
        assert lower_ok(replace_one_delta(c.lower, sigma, q), delta), ("replace_one", sigma, q, delta, c)


@pytest.mark.parametrize("case", list(_psg_one_cases(1, 4)))
def test_subsampled_gaussian_one_step_exact(case):
    _check_psg_one(*case)


def _dpacc_eps(sigma, q, steps, delta, *, optimistic, h=1e-3, replace_one=False, group=1):
    """dp-accounting's PLD ε: optimistic (a lower bound on the truth), pessimistic (an upper)."""
    need("dp_accounting")
    import logging

    from dp_accounting import NeighboringRelation as NR
    from dp_accounting.pld import privacy_loss_distribution as pl

    logging.getLogger().setLevel(logging.ERROR)
    if group > 1:
        pld = pl.from_mixture_gaussian_mechanism(
            sigma, list(range(group + 1)), binom_weights(group, q), pessimistic_estimate=not optimistic,
            value_discretization_interval=h, use_connect_dots=not optimistic)
    else:
        pld = pl.from_gaussian_mechanism(
            sigma, sampling_prob=q, pessimistic_estimate=not optimistic, value_discretization_interval=h,
            use_connect_dots=not optimistic,
            neighboring_relation=NR.REPLACE_ONE if replace_one else NR.ADD_OR_REMOVE_ONE)
    if steps > 1:
        pld = pld.self_compose(steps)
    return float(pld.get_epsilon_for_delta(delta))


def _psg_t_cases(n, seed, tmax=3):
    rng = _rng(seed)
    for _ in range(n):
        yield (float(rng.uniform(0.6, 3.0)), float(10 ** rng.uniform(-3, -0.5)), int(10 ** rng.uniform(1, tmax)),
               float(10 ** rng.uniform(-10, -3)))


def _check_psg_t(sigma, q, steps, delta, h=1e-3):
    m = PoissonSubsampled(Gaussian(sigma), q).compose(steps)
    c = routes.best_epsilon(m, delta)
    lo_peer = _dpacc_eps(sigma, q, steps, delta, optimistic=True, h=h)
    assert c.value >= lo_peer, (sigma, q, steps, delta, c, lo_peer)
    if c.lower is not None:
        up_peer = _dpacc_eps(sigma, q, steps, delta, optimistic=False, h=h)
        assert c.lower <= up_peer, (sigma, q, steps, delta, c, up_peer)
    # dpsgd.epsilon is the same claim through the DP-SGD front door
    a = dpsgd.epsilon(sigma, q, steps=steps, delta=delta)
    assert float(a) >= lo_peer, (sigma, q, steps, delta, a, lo_peer)
    return c


@pytest.mark.parametrize("case", list(_psg_t_cases(1, 5)))
def test_subsampled_gaussian_T_steps_vs_dp_accounting(case):
    _check_psg_t(*case)


def _check_monotone_in_delta(obj, deltas):
    ups = [routes.best_epsilon(obj, d).value for d in sorted(deltas)]
    assert all(a >= b for a, b in zip(ups, ups[1:])), (obj, sorted(deltas), ups)


def test_subsampled_gaussian_epsilon_non_increasing_in_delta():
    rng = _rng(6)
    s, q, t = float(rng.uniform(0.7, 2)), float(10 ** rng.uniform(-3, -1)), int(10 ** rng.uniform(2, 3.5))
    _check_monotone_in_delta(PoissonSubsampled(Gaussian(s), q).compose(t), list(10 ** rng.uniform(-12, -2, size=5)))


def test_replace_one_T_steps_vs_dp_accounting():
    """T replace-one subsampled-Gaussian steps (the pair N(1) vs N(−1) mixtures, as in
    dp-accounting's REPLACE_ONE with sampling: checked equal to the mpmath oracle above)."""
    from renyi.sampling.subsampling import PoissonSubsampledReplaceOne

    rng = _rng(7)
    s, q, t, d = float(rng.uniform(0.8, 2)), float(10 ** rng.uniform(-2.5, -1)), int(rng.integers(20, 300)), 1e-6
    c = routes.best_epsilon(PoissonSubsampledReplaceOne(Gaussian(s), q).compose(t), d)
    assert c.value >= _dpacc_eps(s, q, t, d, optimistic=True, replace_one=True)
    if c.lower is not None:
        assert c.lower <= _dpacc_eps(s, q, t, d, optimistic=False, replace_one=True)


@pytest.mark.slow
def test_subsampled_gaussian_many():
    for case in _psg_one_cases(40, 104):
        _check_psg_one(*case)
    for case in _psg_t_cases(30, 105, tmax=4):
        _check_psg_t(*case)
    rng = _rng(106)
    for _ in range(10):
        s, q, t = float(rng.uniform(0.6, 2.5)), float(10 ** rng.uniform(-4, -1)), int(10 ** rng.uniform(2, 4.5))
        _check_monotone_in_delta(PoissonSubsampled(Gaussian(s), q).compose(t), list(10 ** rng.uniform(-13, -2, size=8)))


@pytest.mark.slow
def test_subsampled_gaussian_vs_prv_accountant():
    """prv-accountant's lower end (remove direction only: a lower bound on the truth)."""
    prv = need("prv_accountant")
    rng = _rng(107)
    for _ in range(8):
        s, q, t = float(rng.uniform(0.7, 2.5)), float(10 ** rng.uniform(-3, -1)), int(10 ** rng.uniform(2, 3.7))
        d = float(10 ** rng.uniform(-9, -3))
        acc = prv.PRVAccountant(prvs=[prv.PoissonSubsampledGaussianMechanism(noise_multiplier=s, sampling_probability=q)],
                                max_self_compositions=[t], eps_error=0.01, delta_error=d / 1000)
        lo, _, _ = acc.compute_epsilon(delta=d, num_self_compositions=[t])
        c = routes.best_epsilon(PoissonSubsampled(Gaussian(s), q).compose(t), d)
        assert c.value >= lo, (s, q, t, d, c, lo)


# ==============================================================================================
# Group: PoissonSubsampled(Gaussian(σ), q).group(k)
# ==============================================================================================
def _group_cases(n, seed):
    rng = _rng(seed)
    for _ in range(n):
        yield (float(10 ** rng.uniform(-0.3, 0.6)), float(10 ** rng.uniform(-3, -0.3)), int(rng.integers(1, 12)),
               _delta(rng))


def _check_group_one(sigma, q, k, delta):
    g = PoissonSubsampled(Gaussian(sigma), q).group(k)
    c = routes.best_epsilon(g, delta)
    assert upper_ok(group_delta(c.value, sigma, q, k), delta), (sigma, q, k, delta, c)
    if c.lower is not None and c.lower > 0:
        assert lower_ok(group_delta(c.lower, sigma, q, k), delta), (sigma, q, k, delta, c)
    # δ at an ε: never below the exact δ
    eps = c.value * 0.8
    dd = routes.best_delta(g, eps).value
    assert dd >= group_delta(eps, sigma, q, k) * (1 - RTOL), (sigma, q, k, eps, dd)


@pytest.mark.parametrize("case", list(_group_cases(2, 8)))
def test_group_one_step_exact(case):
    _check_group_one(*case)


def test_group_identities():
    """k = 1 is the example-level answer; q = 1 is the Gaussian with sensitivity k (exact)."""
    rng = _rng(9)
    s, q, d, k = float(rng.uniform(0.7, 3)), float(10 ** rng.uniform(-3, -1)), 1e-6, int(rng.integers(2, 9))
    a = routes.best_epsilon(PoissonSubsampled(Gaussian(s), q).group(1).compose(50), d).value
    b = routes.best_epsilon(PoissonSubsampled(Gaussian(s), q).compose(50), d).value
    assert a == pytest.approx(b, rel=1e-2)
    c = routes.best_epsilon(PoissonSubsampled(Gaussian(s), 1.0).group(k), d)
    assert upper_ok(gauss_delta(k / s, c.value), d)
    assert c.value <= routes.best_epsilon(Gaussian(s, sensitivity=k), d).value * 1.01


def _check_group_t(sigma, q, k, steps, delta):
    g = PoissonSubsampled(Gaussian(sigma), q).group(k).compose(steps)
    c = routes.best_epsilon(g, delta)
    lo_peer = _dpacc_eps(sigma, q, steps, delta, optimistic=True, group=k, h=2e-3)
    assert c.value >= lo_peer, (sigma, q, k, steps, delta, c, lo_peer)


#: dp-accounting 0.4's optimistic PLD (``from_mixture_gaussian_mechanism``, privacy buckets,
#: value_discretization_interval = 2e-3, self-composed 128 times) at δ = 1e-5 for σ, q, k below:
#: a lower bound on the true ε, computed once (37 s); the slow tier recomputes such values.
GROUP_PEER = (0.9542842433230396, 0.012564159322587292, 4, 128, 1e-5, 4.80253945701968)


def test_group_T_steps_vs_dp_accounting_golden():
    s, q, k, t, d, lo_peer = GROUP_PEER
    assert routes.best_epsilon(PoissonSubsampled(Gaussian(s), q).group(k).compose(t), d).value >= lo_peer
    assert float(dpsgd.epsilon(s, q, steps=t, delta=d, group_size=k)) >= lo_peer


@pytest.mark.slow
def test_group_many():
    for case in _group_cases(30, 108):
        _check_group_one(*case)
    _check_group_t(*GROUP_PEER[:5])
    rng = _rng(109)
    for _ in range(8):
        _check_group_t(float(rng.uniform(0.7, 2.5)), float(10 ** rng.uniform(-3, -1)), int(rng.integers(2, 12)),
                       int(10 ** rng.uniform(1, 3)), float(10 ** rng.uniform(-9, -3)))
        s, q, k = float(rng.uniform(0.7, 2.5)), float(10 ** rng.uniform(-3, -1)), int(rng.integers(2, 12))
        _check_monotone_in_delta(PoissonSubsampled(Gaussian(s), q).group(k).compose(int(10 ** rng.uniform(1, 3))),
                                 list(10 ** rng.uniform(-12, -2, size=6)))


# ==============================================================================================
# Random allocation: identities, and brackets of PLD_accounting 2.x (Feldman–Shenfeld)
# ==============================================================================================
#: (σ, t, k, epochs, δ, peer lower, peer upper): PLD_accounting 2.x
#: ``gaussian_allocation_epsilon_range(delta=δ, sigma=σ, num_steps=t, num_selected=k,
#: num_epochs=epochs)`` computed once (it takes 5–100 s a case); the slow tier recomputes.
ALLOCATION_PEER = [
    (0.73, 23, 1, 1, 2e-07, 4.327516186748512, 4.354835319256622),
    (0.5, 7, 1, 1, 1e-4, 6.9060228569580495, 6.943432408022563),
    (0.5, 50, 1, 1, 3e-06, 6.608159911084316, 6.634526696986596),
    (1.37, 311, 1, 1, 1e-09, 0.26490642003212583, 0.2767548240120133),
    (0.9, 40, 3, 1, 1e-05, 3.6177330142373294, 3.6856182612693895),
    (1.2, 120, 1, 3, 1e-06, 0.6751558592738063, 0.702480056084984),
    (0.62, 5, 2, 1, 0.001, 7.268061697565328, 7.350345226408367),
    (0.55, 200, 1, 2, 1e-05, 4.146721834993139, 4.202630832728308),
]


def _check_allocation_bracket(s, t, k, E, d, plo, pup):
    from renyi import RandomAllocation

    m = RandomAllocation(Gaussian(s), steps=t, k=k)
    c = routes.best_epsilon(m if E == 1 else m.compose(E), d)
    assert c.value >= plo, (s, t, k, E, d, c, plo)
    assert c.lower is None or c.lower <= pup, (s, t, k, E, d, c, pup)
    if k == 1:
        a = dpsgd.epsilon(s, 1.0 / t, steps=t * E, delta=d, sampling="allocation")
        assert float(a) >= plo, (s, t, E, d, a, plo)
        assert a.lower is None or a.lower <= pup


@pytest.mark.parametrize("case", ALLOCATION_PEER[:1])
def test_allocation_vs_pld_accounting_golden(case):
    _check_allocation_bracket(*case)


def _check_allocation_identities(s, t, d):
    from renyi import RandomAllocation

    one = routes.best_epsilon(RandomAllocation(Gaussian(s), steps=1), d)
    assert upper_ok(gauss_delta(1 / s, one.value), d), (s, d, one)
    if one.lower is not None and one.lower > 0:
        assert lower_ok(gauss_delta(1 / s, one.lower), d), (s, d, one)
    full = routes.best_epsilon(RandomAllocation(Gaussian(s), steps=t, k=t), d)
    mu = math.sqrt(t) / s
    assert upper_ok(gauss_delta(mu, full.value), d), (s, t, d, full)
    if full.lower is not None and full.lower > 0:
        assert lower_ok(gauss_delta(mu, full.lower), d), (s, t, d, full)


def test_allocation_identities_random():
    """t = 1 is the Gaussian; k = t is the t-fold Gaussian (exact), at small σ too."""
    rng = _rng(12)
    for s in (0.5, float(rng.uniform(0.5, 3))):
        _check_allocation_identities(s, int(rng.integers(2, 40)), _delta(rng))


def test_allocation_below_k_fold_and_monotone():
    """1-of-t allocation never exceeds one Gaussian's... no: it never goes below what one
    sampled step alone reveals is not a theorem; what is certain: its ε is at most the
    unamplified Gaussian's (post-processing of one participation) and at least 0."""
    from renyi import RandomAllocation

    rng = _rng(13)
    s, t = float(rng.uniform(0.6, 2)), int(rng.integers(3, 30))
    m = RandomAllocation(Gaussian(s), steps=t)
    ds = sorted(10 ** rng.uniform(-10, -2, size=3))
    ups = [routes.best_epsilon(m, float(d)).value for d in ds]
    assert all(a >= b for a, b in zip(ups, ups[1:])), (s, t, ds, ups)


@pytest.mark.slow
def test_allocation_vs_pld_accounting_live():
    """Recompute the peer's brackets (time-limited subprocesses) and check more random cases."""
    need("PLD_accounting")
    for case in ALLOCATION_PEER[1:]:
        _check_allocation_bracket(*case)
    rng = _rng(110)
    code = ("import sys,json;from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range as g;"
            "a=json.loads(sys.argv[1]);u,l=g(delta=a[4],sigma=a[0],num_steps=a[1],num_selected=a[2],num_epochs=a[3]);"
            "print(json.dumps([l,u]))")
    for _ in range(6):
        s = float(rng.uniform(0.5, 2.5))
        t = int(10 ** rng.uniform(0.5, 2.5))
        k = int(rng.integers(1, min(t, 4) + 1))
        E = int(rng.integers(1, 3))
        d = float(10 ** rng.uniform(-9, -3))
        try:
            out = subprocess.run([sys.executable, "-c", code, json.dumps([s, t, k, E, d])], capture_output=True,
                                 text=True, timeout=180)
        except subprocess.TimeoutExpired:
            continue
        if out.returncode != 0:
            continue
        plo, pup = json.loads(out.stdout.strip().splitlines()[-1])
        _check_allocation_bracket(s, t, k, E, d, plo, pup)
    for _ in range(10):
        _check_allocation_identities(float(rng.uniform(0.4, 3)), int(rng.integers(2, 60)), _delta(rng))


def test_shuffle_is_the_unamplified_replace_one_gaussian():
    """Shuffled fixed batches (replace-one, no amplification claimed): the ε is the exact
    E-fold Gaussian with sensitivity 2 (a replacement moves the sum by up to 2C), and the
    certified lower end is at most that (the truth lies below the unamplified ε)."""
    rng = _rng(25)
    s, t, E, d = float(rng.uniform(0.5, 2.5)), int(rng.integers(2, 300)), int(rng.integers(1, 4)), _delta(rng)
    a = dpsgd.epsilon(s, 1.0 / t, steps=t * E, delta=d, sampling="shuffle")
    mu = 2 * math.sqrt(E) / s
    assert upper_ok(gauss_delta(mu, float(a)), d), (s, t, E, d, a)
    assert a.lower is None or a.lower == 0 or lower_ok(gauss_delta(mu, a.lower), d), (s, t, E, d, a)


# ==============================================================================================
# Plans: Accountant(budget, plan=...) bills at least the truth's lower end
# ==============================================================================================
def _check_plan(phases, delta):
    import logging

    need("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pl

    logging.getLogger().setLevel(logging.ERROR)
    plan = None
    opt = None
    for s, q, t in phases:
        p = dpsgd.plan(s, q, steps=t)
        plan = p if plan is None else plan + p
        o = pl.from_gaussian_mechanism(s, sampling_prob=q, pessimistic_estimate=False, value_discretization_interval=1e-3,
                                       use_connect_dots=False).self_compose(t)
        opt = o if opt is None else opt.compose(o)
    acct = Accountant(ApproxDP(1e6, delta), plan=plan, plan_delta=delta)
    lo_peer = float(opt.get_epsilon_for_delta(delta))
    assert acct.plan.epsilon >= lo_peer, (phases, delta, acct.plan, lo_peer)
    spent = acct.budget.epsilon - acct.remaining.epsilon
    assert spent >= lo_peer, (phases, delta, spent, lo_peer)


def test_plan_billed_at_least_truth():
    rng = _rng(14)
    phases = [(float(rng.uniform(0.7, 2)), float(10 ** rng.uniform(-3, -1.3)), int(rng.integers(10, 300)))
              for _ in range(2)]
    _check_plan(phases, float(10 ** rng.uniform(-9, -4)))


@pytest.mark.slow
def test_plans_many():
    rng = _rng(111)
    for _ in range(10):
        phases = [(float(rng.uniform(0.6, 2.5)), float(10 ** rng.uniform(-3.5, -1)), int(10 ** rng.uniform(1, 3)))
                  for _ in range(int(rng.integers(1, 4)))]
        _check_plan(phases, float(10 ** rng.uniform(-10, -3)))


# ==============================================================================================
# CLI: every ε printed (JSON and text, every route) ≥ exact where exact is known
# ==============================================================================================
def _cli(*args):
    """In process (typer's CliRunner): the same command, without an interpreter's start-up."""
    from typer.testing import CliRunner

    from renyi.cli import app

    out = CliRunner().invoke(app, list(args))
    assert out.exit_code == 0, out.output
    return out.stdout


def _cli_routes(args, text=False):
    """(JSON ε, ε printed in the text headline — rounded up — or the JSON ε, every applicable
    route's (key, ε, lower))."""
    js = json.loads(_cli(*args, "--json"))
    head = float(js["epsilon"])
    if text:
        head = float(_cli(*args).split("ε ≤ ")[1].split()[0])
    vals = [(r["key"], float(r["epsilon"]), r.get("lower")) for r in js["routes"] if r["applicable"]]
    return float(js["epsilon"]), head, vals


def _check_cli_gaussian(s, k, d, rel, text=False):
    best, head, vals = _cli_routes(["epsilon", "gaussian", "--sigma", repr(s), "--steps", str(k), "--delta", repr(d),
                                    "--neighbouring", rel], text)
    mu = math.sqrt(k) / s
    for key, e, lo in [("best", best, None), ("printed", head, None), *vals]:
        assert upper_ok(gauss_delta(mu, e), d), (s, k, d, key, e)
        if lo is not None and lo > 0:
            assert lower_ok(gauss_delta(mu, lo), d), (s, k, d, key, lo)


def _check_cli_rr(e0, cats, k, d, text=False):
    best, head, vals = _cli_routes(["epsilon", "randomized-response", "--epsilon", repr(e0), "--k", str(cats),
                                    "--steps", str(k), "--delta", repr(d)], text)
    for key, e, lo in [("best", best, None), ("printed", head, None), *vals]:
        assert upper_ok(rr_delta(e, e0, cats, k), d), (e0, cats, k, d, key, e)
        if lo is not None and lo > 0:
            assert lower_ok(rr_delta(lo, e0, cats, k), d), (e0, cats, k, d, key, lo)


def test_cli_epsilon_routes_exact():
    rng = _rng(15)
    _check_cli_gaussian(float(rng.uniform(0.5, 5)), int(rng.integers(1, 100)), _delta(rng),
                        str(rng.choice(["add-remove", "replace-one"])))
    _check_cli_rr(float(rng.uniform(0.1, 2)), int(rng.integers(2, 5)), int(rng.integers(1, 20)), _delta(rng))


def test_cli_delta_exact():
    rng = _rng(16)
    s, k, e = float(rng.uniform(0.5, 5)), int(rng.integers(1, 50)), float(rng.uniform(0.1, 4))
    js = json.loads(_cli("delta", "gaussian", "--sigma", repr(s), "--steps", str(k), "--eps", repr(e), "--json"))
    mu = math.sqrt(k) / s
    truth = gauss_delta(mu, e)
    assert float(js["delta"]) >= truth * (1 - RTOL), js
    if js.get("lower"):
        assert float(js["lower"]) <= truth * (1 + RTOL), js


@pytest.mark.slow
def test_cli_many():
    rng = _rng(112)
    for _ in range(8):
        _check_cli_gaussian(float(10 ** rng.uniform(-0.5, 1)), int(rng.integers(1, 500)), _delta(rng),
                            str(rng.choice(["add-remove", "replace-one"])), text=True)
        _check_cli_rr(float(rng.uniform(0.05, 3)), int(rng.integers(2, 6)), int(rng.integers(1, 30)), _delta(rng),
                      text=True)
    for _ in range(4):
        s, q, t, d = float(rng.uniform(0.7, 2.5)), float(10 ** rng.uniform(-3, -1)), int(10 ** rng.uniform(1, 3)), float(10 ** rng.uniform(-9, -3))
        best, head, vals = _cli_routes(["epsilon", "gaussian", "--sigma", repr(s), "--rate", repr(q), "--steps", str(t),
                                        "--delta", repr(d)], text=True)
        lo_peer = _dpacc_eps(s, q, t, d, optimistic=True)
        for key, e, _ in [("best", best, None), ("printed", head, None), *vals]:
            assert e >= lo_peer, (s, q, t, d, key, e, lo_peer)


# ==============================================================================================
# Mixed compositions under replace-one, and the dp-accounting event bridge
# ==============================================================================================
def _check_mixed_replace_one(s, q, t, e0, cats, kr, d):
    """Randomized response (replace-one) composed with a subsampled Gaussian: the whole
    composition is stated under replace-one (the direct pair for the Gaussian steps); renyi's
    upper end ≥ dp-accounting's optimistic PLD of the same replace-one pairs, its lower end ≤
    the pessimistic one."""
    import logging

    need("dp_accounting")
    from dp_accounting import NeighboringRelation as NR
    from dp_accounting.pld import privacy_loss_distribution as pl

    from renyi import compose

    logging.getLogger().setLevel(logging.ERROR)
    g = compose(RandomizedResponse(epsilon=e0, k=cats).compose(kr), PoissonSubsampled(Gaussian(s), q).compose(t))
    c = routes.best_epsilon(g, d)
    a = math.exp(e0) / (math.exp(e0) + cats - 1)
    p = (1 - a) * cats / (cats - 1)  # dp-accounting: a uniform bucket with probability p
    ends = []
    for opt in (True, False):
        rr = pl.from_randomized_response(p, cats, pessimistic_estimate=not opt, value_discretization_interval=1e-3)
        ga = pl.from_gaussian_mechanism(s, sampling_prob=q, pessimistic_estimate=not opt, value_discretization_interval=1e-3,
                                        use_connect_dots=not opt, neighboring_relation=NR.REPLACE_ONE)
        ends.append(float(rr.self_compose(kr).compose(ga.self_compose(t)).get_epsilon_for_delta(d)))
    assert c.value >= ends[0], (s, q, t, e0, cats, kr, d, c, ends)
    assert c.lower is None or c.lower <= ends[1], (s, q, t, e0, cats, kr, d, c, ends)


def test_mixed_replace_one_composition_vs_dp_accounting():
    rng = _rng(21)
    _check_mixed_replace_one(float(rng.uniform(0.8, 2)), float(10 ** rng.uniform(-2.5, -1)), int(rng.integers(20, 200)),
                             float(rng.uniform(0.2, 1.5)), int(rng.integers(2, 5)), int(rng.integers(1, 5)),
                             float(10 ** rng.uniform(-8, -4)))


def test_dp_event_bridge_vs_dp_accounting():
    """from_dp_event of a Poisson-sampled Gaussian event, composed T times."""
    dpa = need("dp_accounting")
    from renyi import from_dp_event

    rng = _rng(22)
    s, q, t, d = float(rng.uniform(0.8, 2.5)), float(10 ** rng.uniform(-3, -1.3)), int(rng.integers(10, 300)), 1e-6
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), t)
    c = routes.best_epsilon(from_dp_event(ev), d)
    assert c.value >= _dpacc_eps(s, q, t, d, optimistic=True), (s, q, t, c)


def test_opacus_accountant_vs_dp_accounting():
    """renyi's Opacus accountant after T steps of a random (σ, q): ≥ the peer's lower bound."""
    need("opacus")
    from renyi.integrations.opacus import RenyiAccountant

    rng = _rng(24)
    s, q, t, d = float(rng.uniform(0.8, 2.5)), float(10 ** rng.uniform(-3, -1.3)), int(rng.integers(10, 300)), 1e-6
    a = RenyiAccountant()
    for _ in range(t):
        a.step(noise_multiplier=s, sample_rate=q)
    assert a.get_epsilon(d) >= _dpacc_eps(s, q, t, d, optimistic=True), (s, q, t)


@pytest.mark.slow
def test_mixed_and_replace_one_many():
    from renyi.sampling.subsampling import PoissonSubsampledReplaceOne

    rng = _rng(114)
    for _ in range(6):
        _check_mixed_replace_one(float(rng.uniform(0.6, 2.5)), float(10 ** rng.uniform(-3, -0.7)),
                                 int(10 ** rng.uniform(1, 3)), float(rng.uniform(0.1, 2)), int(rng.integers(2, 6)),
                                 int(rng.integers(1, 8)), float(10 ** rng.uniform(-10, -3)))
    for _ in range(8):
        s, q, t = float(rng.uniform(0.6, 2.5)), float(10 ** rng.uniform(-3, -0.7)), int(10 ** rng.uniform(1, 3))
        d = float(10 ** rng.uniform(-10, -3))
        c = routes.best_epsilon(PoissonSubsampledReplaceOne(Gaussian(s), q).compose(t), d)
        assert c.value >= _dpacc_eps(s, q, t, d, optimistic=True, replace_one=True), (s, q, t, d, c)
        if c.lower is not None:
            assert c.lower <= _dpacc_eps(s, q, t, d, optimistic=False, replace_one=True), (s, q, t, d, c)


def _check_report(tmp_path, s, b, n, t, e0, kr, d):
    """`renyi report --json` of a random pipeline (a Poisson-sampled Gaussian and k Laplace
    counts): every applicable route's ε and the fixed-sequence ε ≥ dp-accounting's optimistic
    PLD of the same composition; the PLD lower end ≤ the pessimistic one."""
    import logging

    need("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pl

    logging.getLogger().setLevel(logging.ERROR)
    f = tmp_path / "p.toml"
    f.write_text(f"""title = "random"
[privacy]
delta = {d!r}
[[mechanism]]
name = "sgd"
type = "gaussian"
sigma = {s!r}
sensitivity = 1.0
sampling = {{ scheme = "poisson", batch_size = {b}, dataset_size = {n} }}
count = {t}
[[mechanism]]
name = "counts"
type = "laplace"
scale = {1 / e0!r}
sensitivity = 1.0
count = {kr}
""", encoding="utf-8")
    js = json.loads(_cli("report", str(f), "--json"))
    q = b / n
    ends = []
    for opt in (True, False):
        ga = pl.from_gaussian_mechanism(s, sampling_prob=q, pessimistic_estimate=not opt, value_discretization_interval=1e-3,
                                        use_connect_dots=not opt)
        la = pl.from_laplace_mechanism(1 / e0, pessimistic_estimate=not opt, value_discretization_interval=1e-3,
                                       use_connect_dots=not opt)
        ends.append(float(ga.self_compose(t).compose(la.self_compose(kr)).get_epsilon_for_delta(d)))
    assert float(js["epsilon"]) >= ends[0], (js["epsilon"], ends)
    for r in js["routes"]:
        if r["applicable"]:
            assert float(r["epsilon"]) >= ends[0], (r, ends)
            assert r["lower"] is None or float(r["lower"]) <= ends[1], (r, ends)


def test_report_routes_vs_dp_accounting(tmp_path):
    rng = _rng(23)
    _check_report(tmp_path, float(rng.uniform(0.8, 2)), int(rng.integers(16, 256)), int(rng.integers(5000, 60000)),
                  int(rng.integers(20, 300)), float(rng.uniform(0.05, 1)), int(rng.integers(1, 4)),
                  float(10 ** rng.uniform(-8, -4)))


@pytest.mark.slow
def test_report_many(tmp_path):
    rng = _rng(115)
    for _ in range(5):
        _check_report(tmp_path, float(rng.uniform(0.6, 3)), int(rng.integers(8, 512)), int(rng.integers(2000, 100000)),
                      int(10 ** rng.uniform(1, 3.3)), float(rng.uniform(0.02, 2)), int(rng.integers(1, 6)),
                      float(10 ** rng.uniform(-10, -3)))


# ==============================================================================================
# Identities (q = 1), calibration and the accountant's spends
# ==============================================================================================
def test_subsampled_rate_one_is_the_gaussian():
    rng = _rng(17)
    s, k, d = float(rng.uniform(0.5, 4)), int(rng.integers(1, 60)), _delta(rng)
    c = routes.best_epsilon(PoissonSubsampled(Gaussian(s), 1.0).compose(k), d)
    mu = math.sqrt(k) / s
    assert upper_ok(gauss_delta(mu, c.value), d), (s, k, d, c)
    assert c.lower is None or c.lower == 0 or lower_ok(gauss_delta(mu, c.lower), d)
    assert c.value <= routes.best_epsilon(Gaussian(s).compose(k), d).value * 1.001


def _check_calibration(e, d, k, sens):
    from renyi import calibrate_gaussian

    sigma = calibrate_gaussian(e, d, sensitivity=sens, count=k).value
    assert gauss_delta(math.sqrt(k) * sens / sigma, e) <= d * (1 + RTOL), (e, d, k, sens, sigma)


def test_calibrate_gaussian_meets_target_exactly():
    rng = _rng(18)
    for _ in range(3):
        _check_calibration(float(10 ** rng.uniform(-1.5, 1)), _delta(rng), int(rng.integers(1, 100)),
                           float(rng.uniform(0.5, 3)))


def _check_dpsgd_calibration(e, d, q, t):
    sigma = float(dpsgd.noise_multiplier(e, d, q, steps=t))
    assert _dpacc_eps(sigma, q, t, d, optimistic=True) <= e, (e, d, q, t, sigma)
    n = int(dpsgd.steps(e, d, sigma * 1.05, q))
    assert _dpacc_eps(sigma * 1.05, q, n, d, optimistic=True) <= e, (e, d, q, sigma, n)


@pytest.mark.slow
def test_dpsgd_calibration_meets_target():
    """The σ (and the step count) solved for a target ε: the peer's lower bound on the true ε
    at that σ is within the target."""
    rng = _rng(19)
    _check_dpsgd_calibration(float(rng.uniform(0.5, 4)), float(10 ** rng.uniform(-8, -4)),
                             float(10 ** rng.uniform(-3, -1.5)), int(rng.integers(50, 400)))


def test_accountant_spend_bills_at_least_exact():
    """An accountant's spent ε after k Gaussian spends is at least the exact ε."""
    rng = _rng(20)
    s, k, d = float(rng.uniform(0.7, 4)), int(rng.integers(1, 40)), float(10 ** rng.uniform(-9, -3))
    acct = Accountant(ApproxDP(1e4, d))
    acct.spend(Gaussian(s), k)
    spent = acct.budget.epsilon - acct.remaining.epsilon
    assert upper_ok(gauss_delta(math.sqrt(k) / s, spent), d), (s, k, d, spent)


@pytest.mark.slow
def test_calibration_many():
    rng = _rng(113)
    for _ in range(40):
        _check_calibration(float(10 ** rng.uniform(-2, 1.3)), _delta(rng), int(rng.integers(1, 1000)),
                           float(rng.uniform(0.1, 5)))
    for _ in range(6):
        _check_dpsgd_calibration(float(rng.uniform(0.3, 8)), float(10 ** rng.uniform(-10, -3)),
                                 float(10 ** rng.uniform(-3.5, -1)), int(10 ** rng.uniform(1.5, 3.3)))


# ==============================================================================================
# regressions found by this file
# ==============================================================================================
def test_regression_rdp_delta_near_top_atom_not_below_exact():
    """9-fold binary RR (ε₀ = 0.97242), ε = 9ε₀ − 10⁻⁶: the RDP route's δ (CKS20 Prop. 12 at
    α ≈ 10⁶) was 5.5754386139e-08, below the exact 5.5754386224e-08 (relative 1.5e-9): the
    exponent (α − 1)(ε(α) − ε) multiplies an ulp of ε(α) by 10⁶. It now carries that round-off."""
    e0, k = 0.9724155365326953, 9
    m = RandomizedResponse(epsilon=e0).compose(k)
    for gap in (1e-6, 1e-3):
        eps = k * e0 - gap
        truth = rr_delta(eps, e0, 2, k)
        assert routes.best_delta(m, eps, "rdp").value >= truth
        assert routes.best_delta(m, eps).value >= truth
    assert rr_delta(k * e0 - 1e-6, e0, 2, k) == pytest.approx(5.575438622386644e-08, rel=1e-12)


def test_regression_pld_epsilon_lower_end_near_top_atom():
    """9-fold RR, δ = 6.608e-11 (the answer 1.2e-9 below the top atom 9ε₀): the PLD lower end
    8.751739827608993 was 4 ulps above the exact 8.7517398276089857 (mpmath)."""
    e0, k, d = 0.9724155365326953, 9, 6.60841458363228e-11
    c = routes.best_epsilon(RandomizedResponse(epsilon=e0).compose(k), d)
    assert c.lower is not None and c.lower <= 8.7517398276089857
    assert lower_ok(rr_delta(c.lower, e0, 2, k), d)
    c = routes.best_epsilon(RandomizedResponse(epsilon=0.18519253381179573, k=3).compose(11), 2.9003757626584817e-11)
    assert c.lower is None or lower_ok(rr_delta(c.lower, 0.18519253381179573, 3, 11), 2.9003757626584817e-11)


def test_regression_pld_delta_lower_end_near_top_atom(monkeypatch):
    """9-fold RR at ε = 9ε₀ − 1e-9 (fresh engine state): the PLD δ lower end 5.57554e-11 was
    1.7e-5 above the exact 5.57545e-11 (0.17 % at 9ε₀ − 1e-11): the atom's float position."""
    from renyi.pld import distribution as dist

    for name, empty in (("_MONO", {}), ("_ANSWERS", {}), ("_ANSWER_NOTES", {}), ("_CACHE", {})):
        monkeypatch.setattr(dist, name, empty, raising=False)
    monkeypatch.setattr(dist, "_LAST", [], raising=False)
    e0, k = 0.9724155365326953, 9
    m = RandomizedResponse(epsilon=e0).compose(k)
    eps = k * e0 - 1e-9
    for gap in (1e-6, 1e-9, 1e-11, 1e-13):
        eps = k * e0 - gap
        d = routes.best_delta(m, eps, "pld")
        truth = rr_delta(eps, e0, 2, k)
        assert d.value >= truth and (d.lower is None or d.lower <= truth), (gap, d, truth)
