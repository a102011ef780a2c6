"""Random allocation (balls-in-bins) and shuffling: validity against exact small cases.

Oracles, sharing no code with renyi:
* remove direction: E_Q[M^α] by brute-force enumeration of the α-tuples of allocated steps
  (E[Π Y_i^{c_i}] = exp(Σ c_i(c_i − 1)/(2σ²))), also for k-subsets;
* add direction, t = 2: a one-dimensional mpmath integral (rotate to the mean and difference
  coordinates: M = e^{−1/(2σ²)} e^{w/(√2σ)} cosh(v/(√2σ)));
* add direction, t = 3: scipy two-dimensional quadrature over the plane orthogonal to 1;
* (ε, δ) for t = 2: the hockey-stick divergence in both directions by 2-D quadrature;
* larger t: a Monte-Carlo estimate of δ(ε) with a 4-σ lower confidence bound.
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, optimize

from renyi import Gaussian, Laplace, PoissonSubsampled
from renyi.allocation import MAX_ORDER, RandomAllocation, Shuffled, allocation_blocks
from renyi.errors import DomainError


# ----------------------------------------------------------------------------------------------
# oracles
# ----------------------------------------------------------------------------------------------
def exact_remove_cgf(sigma: float, t: int, k: int, alpha: int) -> float:
    """log E_Q[(P/Q)^α] for uniform k-subsets of t steps, by enumeration."""
    subsets = list(itertools.combinations(range(t), k))
    logs = []
    for combo in itertools.product(subsets, repeat=alpha):
        c = [0] * t
        for sub in combo:
            for i in sub:
                c[i] += 1
        logs.append(sum(ci * (ci - 1) for ci in c) / (2 * sigma**2))
    arr = np.array(logs)
    top = arr.max()
    return float(top + math.log(np.exp(arr - top).sum()) - alpha * math.log(len(subsets)))


def exact_add_cgf_t2(sigma: float, alpha: int) -> float:
    """log E_Q[M^{1−α}] for t = 2 by 1-D mpmath quadrature."""
    mp.mp.dps = 30
    s = mp.mpf(alpha - 1)
    c = 1 / (mp.sqrt(2) * sigma)
    integral = mp.quad(lambda v: mp.cosh(c * v) ** (-s) * mp.npdf(v), [-mp.inf, -10, 0, 10, mp.inf])
    return float(s / (2 * sigma**2) + s**2 / (4 * sigma**2) + mp.log(integral))


def exact_add_cgf_t3(sigma: float, alpha: int) -> float:
    """log E_Q[M^{1−α}] for t = 3: the mean direction in closed form, the rest by 2-D quadrature."""
    s = alpha - 1
    # Z = w·1/√3 + u·b1 + v·b2 with an orthonormal basis b1, b2 of the plane ⟂ 1
    b1 = np.array([1.0, -1.0, 0.0]) / math.sqrt(2.0)
    b2 = np.array([1.0, 1.0, -2.0]) / math.sqrt(6.0)

    def inner(v: float, u: float) -> float:
        z = u * b1 + v * b2
        m = np.mean(np.exp(z / sigma))
        return float(m ** (-s) * math.exp(-(u * u + v * v) / 2.0) / (2.0 * math.pi))

    val, _ = integrate.dblquad(inner, -12.0, 12.0, -12.0, 12.0, epsabs=1e-12, epsrel=1e-9)
    # mean part: e^{−s·w/(√3σ)} with w ~ N(0,1), and the factor e^{s/(2σ²)} from Y's offset
    return s / (2 * sigma**2) + s * s / (6 * sigma**2) + math.log(val)


def exact_delta_t2(sigma: float, eps: float, h: float = 0.02) -> float:
    """max over directions of the hockey-stick divergence of the t = 2 pair (2-D trapezoid grid
    in units of σ; second-order accurate because of the hinge: ~1e-4 relative here)."""
    z = np.arange(-9.0, 9.0 + h, h)
    w = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) * h
    z1, z2 = z[:, None], z[None, :]
    ww = w[:, None] * w[None, :]
    c = 1.0 / (2 * sigma**2)
    # remove: x ~ N(e1, σ²I) (by symmetry), L = ½(e^{x1/σ² − c} + e^{x2/σ² − c})
    log_l_p = np.logaddexp((sigma * z1 + 1.0) / sigma**2 - c, (sigma * z2) / sigma**2 - c) - math.log(2.0)
    d_rem = float(np.sum(np.maximum(0.0, -np.expm1(eps - log_l_p)) * ww))
    # add: x ~ N(0, σ²I), E_Q[(1 − e^ε L)+]
    log_l_q = np.logaddexp(z1 / sigma - c, z2 / sigma - c) - math.log(2.0)
    d_add = float(np.sum(np.maximum(0.0, -np.expm1(eps + log_l_q)) * ww))
    return max(d_rem, d_add)


# ----------------------------------------------------------------------------------------------
# RDP: exact at integer orders, both directions
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [0.7, 1.0, 2.5])
@pytest.mark.parametrize("t", [2, 3, 4])
def test_remove_direction_equals_enumeration(sigma: float, t: int) -> None:
    """The remove-direction curve is the exact divergence at integer orders (enumeration)."""
    m = RandomAllocation(Gaussian(sigma), steps=t)
    for alpha in range(2, 6):
        rem, _ = m.directional_rdp(float(alpha))
        assert float(rem) * (alpha - 1) == pytest.approx(exact_remove_cgf(sigma, t, 1, alpha), rel=1e-10)


def test_issue_vector_add_direction_t2() -> None:
    """t = 2, σ = 1, α = 2: the exact add-direction value is 0.5690 (a published formula gives
    0.5502, which is not a valid bound); the curve must not go below it."""
    exact = exact_add_cgf_t2(1.0, 2)
    assert exact == pytest.approx(0.5690426, abs=1e-6)
    _, add = RandomAllocation(Gaussian(1.0), steps=2).directional_rdp(2.0)
    assert float(add) >= exact
    assert float(add) == pytest.approx(exact, rel=1e-6)
    assert float(add) > 0.5502 + 0.01


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_add_direction_t2_matches_mpmath(sigma: float) -> None:
    """Add direction at t = 2 is the mpmath value, rounded up by at most the stated margin."""
    m = RandomAllocation(Gaussian(sigma), steps=2)
    for alpha in (2, 5, 12, 40):
        _, add = m.directional_rdp(float(alpha))
        exact = exact_add_cgf_t2(sigma, alpha) / (alpha - 1)
        assert float(add) >= exact
        if alpha <= 5:  # (above the order where amplification is gone the unamplified bound is used)
            assert float(add) == pytest.approx(exact, rel=2e-7)


@pytest.mark.parametrize("sigma", [0.8])
def test_add_direction_t3_matches_quadrature(sigma: float) -> None:
    """Add direction at t = 3 agrees with 2-D scipy quadrature (an independent integral)."""
    m = RandomAllocation(Gaussian(sigma), steps=3)
    for alpha in (3,):
        _, add = m.directional_rdp(float(alpha))
        exact = exact_add_cgf_t3(sigma, alpha) / (alpha - 1)
        assert float(add) == pytest.approx(exact, rel=1e-6)
        assert float(add) >= exact * (1 - 1e-9)


@pytest.mark.parametrize("t,k", [(4, 2), (5, 2), (6, 3), (3, 2)])
def test_k_of_t_blocks_dominate_exact(t: int, k: int) -> None:
    """k-of-t: the block curve is never below the exact remove divergence of uniform k-subsets."""
    m = RandomAllocation(Gaussian(1.0), steps=t, k=k)
    for alpha in (2, 3) if math.comb(t, k) > 10 else (2, 3, 4):
        rem, _ = m.directional_rdp(float(alpha))
        assert float(rem) * (alpha - 1) >= exact_remove_cgf(1.0, t, k, alpha) - 1e-12


def test_blocks() -> None:
    """Blocks have sizes ⌊t/k⌋ or ⌈t/k⌉ and sum to t."""
    assert allocation_blocks(10, 3) == (4, 3, 3)
    assert allocation_blocks(7, 7) == (1,) * 7
    assert sum(allocation_blocks(469, 4)) == 469


def test_fractional_orders_between_integer_nodes() -> None:
    """Between integers the curve lies between the neighbouring nodes' values (chord of the CGF)."""
    m = RandomAllocation(Gaussian(1.0), steps=10)
    lo, mid, hi = (float(x) for x in m.rdp([3.0, 3.5, 4.0]))
    assert lo <= mid <= hi


def test_above_max_order_falls_back_to_unamplified() -> None:
    """Orders above MAX_ORDER get the unamplified Gaussian curve (valid, no amplification)."""
    m = RandomAllocation(Gaussian(2.0), steps=50)
    a = MAX_ORDER + 10.0
    assert float(m.rdp(a)) == pytest.approx(a / 8.0)


@given(st.sampled_from([0.6, 1.0, 2.5]), st.sampled_from([2, 7, 60]), st.floats(1.1, 60.0))
def test_curve_is_nondecreasing_in_order(sigma: float, t: int, alpha: float) -> None:
    """ε(α) is non-decreasing in α."""
    m = RandomAllocation(Gaussian(sigma), steps=t)
    a, b = (float(x) for x in m.rdp([alpha, alpha + 0.7]))
    assert a <= b + 1e-12


# ----------------------------------------------------------------------------------------------
# (ε, δ): the reported ε never goes below the exact one
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma,delta", [(1.0, 1e-3), (2.0, 1e-2)])
def test_epsilon_dominates_exact_t2(sigma: float, delta: float) -> None:
    """t = 2: the reported ε at δ is at least the exact ε of the allocation pair."""
    eps_reported = RandomAllocation(Gaussian(sigma), steps=2).epsilon(delta)
    exact_eps = optimize.brentq(lambda e: exact_delta_t2(sigma, e) - delta, 0.0, 10.0, xtol=1e-9)
    assert eps_reported >= exact_eps - 1e-8  # (brentq's tolerance)
    # the default route is the PLD bracket (issue #23): tight, not merely valid
    assert eps_reported <= exact_eps * (1 + 1e-3)


def test_delta_dominates_monte_carlo_lower_bound() -> None:
    """t = 30, 3 epochs: the reported δ(ε) is above a Monte-Carlo lower confidence bound on the
    true δ of the composed allocation (remove direction, 4-σ one-sided)."""
    sigma, t, epochs, eps = 0.9, 30, 3, 0.5
    rng = np.random.default_rng(7)
    n = 100_000
    log_l = np.zeros(n)
    for _ in range(epochs):
        z = rng.standard_normal((n, t))
        hit = rng.integers(0, t, n)
        x = sigma * z
        x[np.arange(n), hit] += 1.0
        log_y = x / sigma**2 - 1.0 / (2 * sigma**2)
        log_l += np.logaddexp.reduce(log_y, axis=1) - math.log(t)
    samples = np.maximum(0.0, -np.expm1(eps - log_l))
    lower = samples.mean() - 4 * samples.std(ddof=1) / math.sqrt(n)
    reported = RandomAllocation(Gaussian(sigma), steps=t).compose(epochs).delta(eps)
    assert lower > 0.0
    assert reported >= lower


# ----------------------------------------------------------------------------------------------
# special cases and consistency
# ----------------------------------------------------------------------------------------------
def test_one_step_is_the_mechanism() -> None:
    """t = 1: the base mechanism's own guarantee (exact GDP for a Gaussian)."""
    g = Gaussian(1.3)
    assert RandomAllocation(g, steps=1).guarantee == g.guarantee
    assert RandomAllocation(g, steps=1).epsilon(1e-5) == g.epsilon(1e-5)


def test_k_equals_t_is_no_amplification() -> None:
    """k = t: every example in every step, the t-fold composition of the base."""
    g = Gaussian(3.0)
    assert RandomAllocation(g, steps=5, k=5).epsilon(1e-6) == pytest.approx(g.compose(5).epsilon(1e-6))


def test_curve_at_t1_nodes_is_gaussian() -> None:
    """Blocks of one step (k close to t) carry exactly α/(2σ²) per block."""
    m = RandomAllocation(Gaussian(2.0), steps=4, k=3)  # blocks (2, 1, 1)
    rem, _ = m.directional_rdp(3.0)
    two = RandomAllocation(Gaussian(2.0), steps=2)
    assert float(rem) == pytest.approx(float(two.directional_rdp(3.0)[0]) + 2 * 3.0 / 8.0)


def test_removal_larger_than_add_in_practice() -> None:
    """In the settings tried the removal direction dominates (both are computed regardless)."""
    for sigma, t in [(1.0, 2), (1.0, 100), (0.6, 10), (2.5, 469)]:
        rem, add = RandomAllocation(Gaussian(sigma), steps=t).directional_rdp(np.array([2.0, 8.0, 32.0]))
        assert np.all(rem >= add)


def test_close_to_poisson_at_the_same_expected_batch() -> None:
    """One epoch of allocation is close to Poisson at rate 1/t (within a factor 1.5 either way)."""
    for sigma, t in [(1.0, 100), (2.0, 469)]:
        # the same route on both sides: RDP, and PLD (the default of both)
        for method in ("rdp", "pld"):
            alloc = RandomAllocation(Gaussian(sigma), steps=t).epsilon(1e-5, method=method)
            poisson = PoissonSubsampled(Gaussian(sigma), 1.0 / t).compose(t).epsilon(1e-5, method=method)
            assert 1 / 1.5 < alloc / poisson < 1.5


def test_more_steps_more_amplification() -> None:
    """Spreading one use over more steps never costs more (per epoch)."""
    eps = [RandomAllocation(Gaussian(1.0), steps=t).epsilon(1e-5) for t in (2, 10, 100)]
    assert eps[0] >= eps[1] >= eps[2]


def test_non_gaussian_base_claims_no_amplification() -> None:
    """A Laplace base: k-fold composition of the base, and the theorem says so."""
    m = RandomAllocation(Laplace(1.0), steps=10, k=2)
    assert m.epsilon(1e-6) == pytest.approx(Laplace(1.0).compose(2).epsilon(1e-6))
    assert "no amplification" in m.theorem


def test_shuffled_is_one_release_per_epoch_replace_one() -> None:
    """Shuffled fixed batches: the base guarantee under replace-one, once per epoch."""
    g = Gaussian(2.0)
    s = Shuffled(g, steps=100)
    assert s.neighbouring == "replace_one"
    assert s.guarantee == g.guarantee_under("replace_one")
    assert "no amplification" in s.sampling
    r = Gaussian(2.0, sensitivity=2.0, neighbouring="replace_one")
    assert Shuffled(r, steps=10).compose(3).epsilon(1e-5) == pytest.approx(r.compose(3).epsilon(1e-5))


def test_sampling_and_theorem_are_named() -> None:
    """The sampler and theorem are named for reports."""
    m = RandomAllocation(Gaussian(1.0), steps=469)
    assert m.sampling == "random allocation, k = 1 of t = 469 steps, add/remove neighbours"
    assert "Feldman" in m.theorem


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
def test_k_greater_than_steps() -> None:
    with pytest.raises(DomainError, match=r"k must be in \[1, steps\] = \[1, 3\]; got 4"):
        RandomAllocation(Gaussian(1.0), steps=3, k=4)


@pytest.mark.parametrize("steps", [0, -2])
def test_steps_below_one(steps: int) -> None:
    with pytest.raises(DomainError, match="steps must be an integer in"):
        RandomAllocation(Gaussian(1.0), steps=steps)


def test_non_integer_steps() -> None:
    with pytest.raises(DomainError, match="steps"):
        RandomAllocation(Gaussian(1.0), steps=2.5)


def test_replace_one_base_refused() -> None:
    with pytest.raises(DomainError, match="add_remove"):
        RandomAllocation(Gaussian(1.0, neighbouring="replace_one"), steps=3)


def test_not_a_mechanism() -> None:
    with pytest.raises(TypeError):
        RandomAllocation(1.0, steps=3)  # type: ignore[arg-type]
