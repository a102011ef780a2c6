"""Batch samplers that emit the accounting event of what they ran, and the consistency checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from renyi import Gaussian, PoissonSubsampled, RandomAllocation
from renyi.batches import AllocationBatches, PoissonBatches, SamplerEvent, ShuffledBatches, TruncatedPoissonBatches
from renyi.errors import DomainError


def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def test_poisson_batches_rate_and_event() -> None:
    """Poisson batches have mean size q·n and the event counts the steps actually produced."""
    s = PoissonBatches(2000, 0.05, steps=200, rng=rng())
    sizes = [b.size for b in s]
    assert abs(np.mean(sizes) - 100) < 5 * math.sqrt(100 / 200) * 2
    ev = s.event
    assert (ev.scheme, ev.steps, ev.sample_rate, ev.dataset_size) == ("poisson", 200, 0.05, 2000)


def test_event_counts_only_what_ran() -> None:
    """Stopping early: the event has the steps that ran, not the nominal length."""
    s = PoissonBatches(100, 0.1, steps=50, rng=rng())
    for i, _ in enumerate(s):
        if i == 9:
            break
    assert s.event.steps == 10


def test_allocation_each_record_in_k_batches() -> None:
    """Every record lands in exactly k batches per epoch."""
    s = AllocationBatches(300, steps=10, k=3, epochs=2, rng=rng())
    batches = list(s)
    assert len(batches) == 20
    for e in range(2):
        counts = np.bincount(np.concatenate(batches[10 * e : 10 * e + 10]), minlength=300)
        assert np.all(counts == 3)
    ev = s.event
    assert (ev.scheme, ev.steps, ev.epochs, ev.k, ev.steps_per_epoch) == ("allocation", 20, 2, 3, 10)


def test_allocation_k1_is_a_partition_with_uniform_bins() -> None:
    """k = 1: a partition of the records; bin sizes are about n/t."""
    s = AllocationBatches(5000, steps=5, rng=rng())
    batches = list(s)
    assert sorted(np.concatenate(batches).tolist()) == list(range(5000))
    assert all(abs(b.size - 1000) < 150 for b in batches)


def test_truncated_batches_respect_cap() -> None:
    s = TruncatedPoissonBatches(1000, 0.1, max_batch=105, steps=100, rng=rng())
    sizes = [b.size for b in s]
    assert max(sizes) <= 105
    assert s.event.max_batch == 105


def test_shuffled_batches_partition_each_epoch() -> None:
    s = ShuffledBatches(103, batch_size=10, epochs=2, rng=rng())
    batches = list(s)
    assert len(batches) == 22
    assert sorted(np.concatenate(batches[:11]).tolist()) == list(range(103))
    assert s.event.scheme == "shuffle" and s.event.epochs == 2


def test_secure_default_randomness() -> None:
    """rng=None draws from the OS (no seed): two samplers differ."""
    a = list(AllocationBatches(200, steps=4))
    b = list(AllocationBatches(200, steps=4))
    assert any(not np.array_equal(x, y) for x, y in zip(a, b))


def test_event_epsilon_is_the_scheme_guarantee() -> None:
    """The event's ε is exactly the ε of the matching renyi guarantee."""
    s = AllocationBatches(1000, steps=20, epochs=3, rng=rng())
    list(s)
    expected = RandomAllocation(Gaussian(1.2), steps=20).compose(3).epsilon(1e-5)
    assert s.event.epsilon(1.2, delta=1e-5) == expected
    p = PoissonBatches(1000, 0.05, steps=40, rng=rng())
    list(p)
    assert p.event.epsilon(1.2, delta=1e-5) == PoissonSubsampled(Gaussian(1.2), 0.05).compose(40).epsilon(1e-5)


def test_partial_epoch_counts_as_whole() -> None:
    """A partial epoch is accounted as a whole one (a prefix of a whole epoch)."""
    ev = SamplerEvent("allocation", 100, 25, 0.1, steps_per_epoch=10)
    assert ev.epochs == 3


def test_check_agrees_silently() -> None:
    ev = SamplerEvent("poisson", 60_000, 1000, 0.01, noise_multiplier=1.1)
    ev.check(sample_rate=0.01, steps=1000, dataset_size=60_000, noise_multiplier=1.1)


def test_check_gradient_accumulation() -> None:
    """Accumulating 4 batches per optimizer step and counting optimizer steps: an error."""
    ev = SamplerEvent("poisson", 60_000, 4000, 0.01)
    with pytest.raises(DomainError, match=r"steps 1000 disagrees with the 4000 batches.*accumulation over 4"):
        ev.check(steps=1000)


def test_check_rate_from_len_sampler() -> None:
    """A weighted sampler's rate taken from len(sampler) disagrees with the rate that ran."""
    ev = SamplerEvent("poisson", 60_000, 100, 0.01)
    with pytest.raises(DomainError, match="len\\(sampler\\)"):
        ev.check(sample_rate=1 / 50)


def test_check_changed_sigma() -> None:
    ev = SamplerEvent("poisson", 60_000, 100, 0.01, noise_multiplier=1.1)
    with pytest.raises(DomainError, match="adjusted after calibration"):
        ev.check(noise_multiplier=0.9)
    with pytest.raises(DomainError, match="adjusted"):
        ev.epsilon(0.9, delta=1e-5)


def test_check_other_dataset_size() -> None:
    ev = SamplerEvent("allocation", 1000, 20, 0.05, steps_per_epoch=20)
    with pytest.raises(DomainError, match="dataset_size 999 disagrees.*1000 records"):
        ev.check(dataset_size=999)


def test_bad_sampler_input() -> None:
    with pytest.raises(DomainError, match=r"k must be in \[1, steps\] = \[1, 3\]"):
        AllocationBatches(10, steps=3, k=4)
    with pytest.raises(DomainError, match="steps must be an integer"):
        AllocationBatches(10, steps=0)
    with pytest.raises(DomainError, match="max_batch must be in"):
        TruncatedPoissonBatches(1000, 0.1, max_batch=50, steps=3)
    with pytest.raises(DomainError, match="scheme must be one of"):
        SamplerEvent("cyclic", 10, 1, 0.1)
    with pytest.raises(DomainError, match="noise_multiplier must be given"):
        SamplerEvent("poisson", 10, 1, 0.1).epsilon(delta=1e-5)


# ----------------------------------------------------------------------------------------------
# renyi.dpsgd accepts the event
# ----------------------------------------------------------------------------------------------
def test_dpsgd_epsilon_of_event_agrees() -> None:
    """dpsgd.epsilon(σ, event=...) is exactly the event's ε, and names the sampler."""
    from renyi import dpsgd

    ev = SamplerEvent("allocation", 60_000, 4690, 1 / 469, steps_per_epoch=469)
    e = dpsgd.epsilon(1.0, delta=1e-5, event=ev)
    assert float(e) == ev.epsilon(1.0, delta=1e-5)
    assert "random allocation, k = 1 of t = 469" in e.method and "Feldman" in e.method
    # the matching numbers are accepted
    assert float(dpsgd.epsilon(1.0, 1 / 469, steps=4690, delta=1e-5, event=ev)) == float(e)


def test_dpsgd_poisson_event_equals_plain_call() -> None:
    from renyi import dpsgd

    ev = SamplerEvent("poisson", 60_000, 1000, 0.01)
    assert float(dpsgd.epsilon(1.1, delta=1e-5, event=ev)) == pytest.approx(
        float(dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5)), rel=1e-9)


def test_dpsgd_event_disagreement_raises() -> None:
    from renyi import dpsgd

    ev = SamplerEvent("poisson", 60_000, 4000, 0.01)
    with pytest.raises(DomainError, match="accumulation"):
        dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5, event=ev)
    with pytest.raises(DomainError, match="sample_rate"):
        dpsgd.epsilon(1.1, batch_size=1200, dataset_size=60_000, delta=1e-5, event=ev)
