"""PyTorch batch samplers that emit the accounting event of what they ran (``renyi[opacus]``).

Each wraps a framework-free generator of :mod:`renyi.batches` (secure randomness by default)
as a ``torch.utils.data.Sampler`` of index lists, for ``DataLoader(dataset,
batch_sampler=...)``. After (or during) training, ``sampler.event`` describes the batches that
were actually produced; hand it to ``renyi.dpsgd.epsilon(σ, delta=..., event=sampler.event)``
or attach the sampler to the Opacus accountant (``RenyiAccountant.attach(sampler)``), which
then reports the ε of *this* sampler and refuses step counts, rates or noise multipliers that
disagree with it.

With Opacus, pass the loader to ``PrivacyEngine.make_private(..., poisson_sampling=False)``
so that Opacus keeps this sampler (its own would replace it); Opacus then records the rate
1/len(loader), which equals the event's k/t for random allocation.

Batches may be empty (Poisson sampling, random allocation with few records); use a collate
function that accepts an empty batch, as Opacus's own Poisson loader does.

Examples:
    >>> from renyi.integrations.torch_samplers import AllocationBatchSampler
    >>> import numpy as np
    >>> s = AllocationBatchSampler(1000, steps=10, rng=np.random.default_rng(0))
    >>> len(s), sum(len(b) for b in s)
    (10, 1000)
    >>> s.event.describe()
    'random allocation, k = 1 of t = 10 steps, 1 epoch(s), n = 1000'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch.utils.data import Sampler

from renyi.sampling import batches

__all__ = ["PoissonBatchSampler", "AllocationBatchSampler", "TruncatedPoissonBatchSampler", "ShuffledBatchSampler"]


class _Wrapped(Sampler[list[int]]):
    _core: Any

    def __iter__(self) -> Iterator[list[int]]:
        for b in self._core:
            yield b.tolist()

    def __len__(self) -> int:
        return len(self._core)

    @property
    def event(self) -> batches.SamplerEvent:
        """The accounting event of the batches produced so far (all iterations)."""
        return self._core.event  # type: ignore[no-any-return]


class PoissonBatchSampler(_Wrapped):
    """Poisson sampling: ``steps`` batches per iteration, each record in with probability q."""

    def __init__(self, dataset_size: int, sample_rate: float, steps: int, rng: Any = None) -> None:
        self._core = batches.PoissonBatches(dataset_size, sample_rate, steps, rng)


class AllocationBatchSampler(_Wrapped):
    """Random allocation: each record in ``k`` of ``steps`` batches per epoch (balls-in-bins)."""

    def __init__(self, dataset_size: int, steps: int, k: int = 1, epochs: int = 1, rng: Any = None) -> None:
        self._core = batches.AllocationBatches(dataset_size, steps, k, epochs, rng)


class TruncatedPoissonBatchSampler(_Wrapped):
    """Poisson sampling capped at ``max_batch`` records per batch."""

    def __init__(self, dataset_size: int, sample_rate: float, max_batch: int, steps: int, rng: Any = None) -> None:
        self._core = batches.TruncatedPoissonBatches(dataset_size, sample_rate, max_batch, steps, rng)


class ShuffledBatchSampler(_Wrapped):
    """Shuffled fixed batches (accounted without amplification)."""

    def __init__(self, dataset_size: int, batch_size: int, epochs: int = 1, rng: Any = None) -> None:
        self._core = batches.ShuffledBatches(dataset_size, batch_size, epochs, rng)
