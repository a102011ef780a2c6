"""The PLD route for random allocation (issue #23): certified brackets for 1-of-t and k-of-t
Gaussian allocation, several epochs and mixtures, against certified truths.

Truth brackets (one epoch, k = 1, add/remove) are the certified table of issue #23; the peer
bracket is PLD_accounting 2.0's ``gaussian_allocation_epsilon_range`` (Feldman–Shenfeld),
run once and stored (it takes minutes per question on a loaded machine).
"""

from __future__ import annotations

import math

import pytest

import renyi
from renyi import PoissonSubsampled, RandomAllocation
from renyi.core.errors import DomainError
from renyi.mechanisms import Gaussian, Laplace

# (σ, t, δ, truth lower, truth upper): the certified table of issue #23
TRUTH = [
    (0.8, 64, 1e-3, 0.7343, 0.7359),
    (0.8, 1000, 1e-3, 0.1168, 0.1179),
    (1.0, 1000, 1e-5, 0.1383, 0.1394),
]


def _bracket(m: object, delta: float) -> tuple[float, float]:
    c = renyi.routes.best_epsilon(m, delta, "pld")
    assert c.lower is not None
    return float(c.lower), float(c.value)


@pytest.mark.parametrize("sigma, t, delta, lo, hi", TRUTH[:1])
def test_truth_table_fast(sigma: float, t: int, delta: float, lo: float, hi: float) -> None:
    low, up = _bracket(RandomAllocation(Gaussian(sigma), steps=t), delta)
    assert up >= lo and low <= hi  # never below the truth; the lower end never above it
    assert up <= 1.01 * hi  # within 1 % of the truth


@pytest.mark.slow
@pytest.mark.parametrize("sigma, t, delta, lo, hi", TRUTH[1:])
def test_truth_table(sigma: float, t: int, delta: float, lo: float, hi: float) -> None:
    low, up = _bracket(RandomAllocation(Gaussian(sigma), steps=t), delta)
    assert up >= lo and low <= hi
    assert up <= 1.01 * hi


def test_default_route_is_pld_and_below_rdp() -> None:
    m = RandomAllocation(Gaussian(0.8), steps=64)
    best = m.best_epsilon(1e-3)
    assert best.method == "pld"
    rdp = renyi.routes.best_epsilon(m, 1e-3, "rdp").value
    assert best.value < 0.6 * rdp  # the RDP route was 1.8× the truth here
    assert float(m.epsilon(1e-3)) == pytest.approx(best.value)


def test_peer_bracket_overlaps() -> None:
    # PLD_accounting 2.0, gaussian_allocation_epsilon_range(delta=1e-5, sigma=1.0, num_steps=100)
    peer_lo, peer_hi = 0.6085166606418873, 0.635649755788509
    low, up = _bracket(RandomAllocation(Gaussian(1.0), steps=100), 1e-5)
    assert peer_lo <= up and low <= peer_hi
    assert up <= peer_hi  # and tighter than the peer's upper end


def test_one_step_is_the_gaussian_and_k_equals_t_the_composition() -> None:
    g = Gaussian(1.0)
    one = RandomAllocation(g, steps=1).best_epsilon(1e-5).value
    assert one == pytest.approx(g.best_epsilon(1e-5).value, rel=1e-9)
    all_ = RandomAllocation(g, steps=5, k=5).best_epsilon(1e-5).value
    assert all_ == pytest.approx(Gaussian(1.0 / math.sqrt(5)).best_epsilon(1e-5).value, rel=1e-9)
    lo, up = _bracket(RandomAllocation(g, steps=5, k=5), 1e-5)
    assert lo <= all_ * (1 + 1e-9) and up >= all_ * (1 - 1e-9)


def test_epochs_and_mixtures() -> None:
    m = RandomAllocation(Gaussian(0.8), steps=64)
    e1 = _bracket(m, 1e-3)
    e3 = _bracket(m.compose(3), 1e-3)
    assert e3[0] > e1[1]  # three epochs cost more than one
    assert e3[1] <= 3 * e1[1]  # and at most three times as much (basic composition)
    mixed = renyi.compose(m.compose(2), Gaussian(4.0))
    lo, up = _bracket(mixed, 1e-3)
    assert lo <= up
    assert up > _bracket(m.compose(2), 1e-3)[0]


def test_allocation_below_poisson_on_the_table_row() -> None:
    sigma, t, delta = 0.8, 64, 1e-3
    alloc = RandomAllocation(Gaussian(sigma), steps=t).best_epsilon(delta).value
    poisson = PoissonSubsampled(Gaussian(sigma), 1.0 / t).compose(t).best_epsilon(delta).value
    assert alloc < poisson  # 0.7359 against 0.8741 in the table


def test_k_of_t_upper_bound_from_blocks() -> None:
    g = Gaussian(1.0)
    m = RandomAllocation(g, steps=32, k=4)
    lo, up = _bracket(m, 1e-5)
    blocks = RandomAllocation(g, steps=8).compose(4)
    b_lo, b_up = _bracket(blocks, 1e-5)
    assert b_lo <= up <= b_up * 1.005  # four blocks of 8 (the grids may differ)
    assert lo <= up
    assert up < renyi.routes.best_epsilon(m, 1e-5, "rdp").value


def test_non_gaussian_base_keeps_a_valid_bound() -> None:
    m = RandomAllocation(Laplace(scale=1.0), steps=16)
    e = m.best_epsilon(1e-5)
    # no amplification claimed: never below one run of the base
    assert e.value >= Laplace(scale=1.0).best_epsilon(1e-5).value - 1e-12


@pytest.mark.parametrize("kw", [dict(steps=3, k=4), dict(steps=0), dict(steps=4, k=0)])
def test_bad_input(kw: dict[str, int]) -> None:
    with pytest.raises(DomainError):
        RandomAllocation(Gaussian(1.0), **kw)


def test_profiles_are_proper_and_ordered() -> None:
    import numpy as np

    from renyi.accounting.pld._allocation import allocation_profiles

    rem, add = allocation_profiles(1.0 / 0.8, 64)
    for prof in (rem, add):
        up, low = prof.upper, prof.lower
        # the upper pair is a proper pair: P- and Q-masses sum to 1 (to round-off)
        assert abs(float(up.masses.sum()) + up.inf_mass - 1.0) < 1e-9
        assert float(np.sum(up.masses * np.exp(-up.values))) + up.dual_inf <= 1.0 + 1e-9
        eps = np.linspace(-1.0, 3.0, 41)
        lu, ll = up.log_delta(eps), low.log_delta(eps)
        seen = lu > math.log(1e-15)  # (below, both are at the round-off of the transforms)
        assert seen.sum() > 10
        assert np.all(lu[seen] >= ll[seen] - 1e-9)


def test_balls_in_bins_is_random_allocation_with_k_1() -> None:
    """Each record in one uniformly chosen batch per epoch (balls-in-bins) is exactly the
    assignment RandomAllocation(k = 1) analyses; the generator's event bills it."""
    import numpy as np

    from renyi.batches import AllocationBatches

    s = AllocationBatches(64, steps=8, epochs=2, rng=np.random.default_rng(0))
    batches = list(s)
    assert len(batches) == 16
    for e in range(2):  # every record in exactly one batch of each epoch
        assert sorted(np.concatenate(batches[8 * e:8 * e + 8]).tolist()) == list(range(64))
    m = s.event.mechanism(1.0)
    one = RandomAllocation(Gaussian(1.0), steps=8)
    from renyi.guarantees.base import items_of

    assert tuple(items_of(m)) == ((one, 2),)
    assert s.event.epsilon(1.0, delta=1e-5) == pytest.approx(float(one.compose(2).epsilon(1e-5)), rel=1e-12)
