"""dpsgd.epsilon(..., sampling=...): the ε of the batches that ran (issue #23)."""

from __future__ import annotations

import pytest

from renyi import Gaussian, RandomAllocation, dpsgd
from renyi.core.errors import DomainError


def test_default_is_poisson() -> None:
    a = dpsgd.epsilon(1.0, 1 / 16, steps=32, delta=1e-5)
    b = dpsgd.epsilon(1.0, 1 / 16, steps=32, delta=1e-5, sampling="poisson")
    assert float(a) == float(b)


def test_allocation_is_random_allocation_over_epochs() -> None:
    e = dpsgd.epsilon(1.0, 1 / 16, steps=32, delta=1e-5, sampling="allocation")
    direct = RandomAllocation(Gaussian(1.0), steps=16).compose(2).best_epsilon(1e-5)
    assert float(e) == pytest.approx(direct.value, rel=1e-12)
    assert e.lower is not None and e.lower <= e
    assert "random allocation" in e.method and "2 epoch" in e.method
    assert float(e) < float(dpsgd.epsilon(1.0, 1 / 16, steps=32, delta=1e-5))  # below Poisson here
    # a partial epoch is billed as a whole one (never less)
    part = dpsgd.epsilon(1.0, 1 / 16, steps=20, delta=1e-5, sampling="allocation")
    assert float(part) == pytest.approx(float(e), rel=1e-12)


def test_shuffle_is_unamplified_with_a_certified_lower_bound() -> None:
    e = dpsgd.epsilon(1.0, 1 / 16, steps=32, delta=1e-5, sampling="shuffle")
    unamplified = Gaussian(1.0, sensitivity=2.0, neighbouring="replace_one").compose(2).epsilon(1e-5)
    assert float(e) == pytest.approx(float(unamplified), rel=1e-9)
    assert e.lower is not None and 0 < e.lower <= e
    # the lower bound on what a shuffled loader can guarantee is far above the Poisson number
    assert e.lower > float(dpsgd.epsilon(1.0, 1 / 16, steps=32, delta=1e-5))
    assert dpsgd.shuffle_lower_bound(1.0, 16, 2, 1e-5) == pytest.approx(e.lower, rel=1e-12)


def test_shuffle_lower_bound_one_batch_is_the_gaussian() -> None:
    lb = dpsgd.shuffle_lower_bound(1.0, 1, 1, 1e-5)
    exact = Gaussian(0.5).epsilon(1e-5)  # shift 2 at σ = 1
    assert lb <= float(exact) * (1 + 1e-9)
    assert lb >= 0.99 * float(exact)


@pytest.mark.parametrize("kw, name", [
    (dict(sampling="balls"), "sampling"),
    (dict(sampling="allocation", sample_rate=0.3), "sample_rate"),
    (dict(sampling="shuffle", sample_rate=[0.1, 0.2]), "sampling"),
])
def test_bad_input(kw: dict, name: str) -> None:
    args = dict(noise_multiplier=1.0, sample_rate=1 / 16, steps=32, delta=1e-5)
    args.update(kw)
    sigma = args.pop("noise_multiplier")
    q = args.pop("sample_rate")
    with pytest.raises(DomainError) as info:
        dpsgd.epsilon(sigma, q, **args)
    assert info.value.name == name


def test_event_and_sampling_together_refused() -> None:
    import numpy as np

    from renyi.batches import AllocationBatches

    s = AllocationBatches(32, steps=4, rng=np.random.default_rng(0))
    list(s)
    with pytest.raises(DomainError):
        dpsgd.epsilon(1.0, delta=1e-5, event=s.event, sampling="allocation")


def test_shuffle_lower_bound_when_the_bracket_is_no_upper_answer() -> None:
    """Regression (#23): at σ = 0.5 per unit shift the coarse-lattice bracket of several epochs
    is too wide to be an upper answer (above the RDP route), and the lower end was dropped
    (None). Its certified lower end is the bound."""
    e = dpsgd.epsilon(1.0, 1 / 200, epochs=4, delta=1e-5, sampling="shuffle")
    assert e.lower is not None
    poisson = dpsgd.epsilon(1.0, 1 / 200, epochs=4, delta=1e-5)
    assert poisson < e.lower <= e
