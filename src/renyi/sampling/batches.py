"""Batch samplers that report what they ran, and the accounting event they emit.

The privacy of DP-SGD depends on how batches were drawn, how many steps ran, and over how
many records. Handing an accountant numbers that disagree with the loop is the most common
accounting error in practice (a rate taken from ``len(sampler)``, gradient accumulation
counted as one step, a noise multiplier adjusted after calibration). The samplers here are
framework-free index generators (numpy arrays of indices; the torch wrappers in
:mod:`renyi.integrations.torch` reuse them): each counts the batches it actually produced and
exposes :attr:`~PoissonBatches.event`, a :class:`SamplerEvent` describing exactly that run.
:meth:`SamplerEvent.mechanism` turns the event into the right renyi guarantee, and
:meth:`SamplerEvent.check` raises when numbers given elsewhere disagree with it.

Randomness: secure by default (``rng=None`` draws every bit from the operating system through
:mod:`renyi.samplers`); a numpy ``Generator`` gives reproducible, *non-secure* batches for
tests and simulations.

Samplers and the guarantee of their event (add/remove neighbours unless stated):

=====================  ==========================================================
:class:`PoissonBatches`           :class:`~renyi.PoissonSubsampled`, composed per step
:class:`AllocationBatches`        :class:`~renyi.RandomAllocation`, composed per epoch
:class:`TruncatedPoissonBatches`  :class:`~renyi.TruncatedPoisson`, composed per step
:class:`ShuffledBatches`          :class:`~renyi.Shuffled` (no amplification; replace-one)
=====================  ==========================================================
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from renyi.core._validation import POSITIVE, PROBABILITY, check_int, check_real
from renyi.core.errors import DomainError

__all__ = [
    "SCHEMES",
    "SamplerEvent",
    "PoissonBatches",
    "AllocationBatches",
    "TruncatedPoissonBatches",
    "ShuffledBatches",
]

#: the sampling schemes an event can describe
SCHEMES = ("poisson", "allocation", "truncated_poisson", "shuffle")


@dataclass(frozen=True, slots=True)
class SamplerEvent:
    """What a batch sampler actually did: the input of accounting.

    Args:
        scheme: "poisson", "allocation", "truncated_poisson" or "shuffle".
        dataset_size: number of records n the sampler drew from.
        steps: number of batches (steps) actually produced.
        sample_rate: the inclusion probability per step (Poisson schemes); for allocation
            k/t and for shuffling batch_size/n, for comparison with an accountant's rate.
        steps_per_epoch: t, the steps of one epoch (allocation and shuffling).
        k: steps per example and epoch (allocation).
        max_batch: the cap (truncated Poisson).
        batch_size: the fixed batch size (shuffling).
        noise_multiplier: σ, when the training loop recorded it (:meth:`with_noise`).

    Raises:
        DomainError: an unknown scheme or parameters out of range.
    """

    scheme: str
    dataset_size: int
    steps: int
    sample_rate: float
    steps_per_epoch: int | None = None
    k: int = 1
    max_batch: int | None = None
    batch_size: int | None = None
    noise_multiplier: float | None = field(default=None)

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise DomainError(
                f"scheme must be one of {', '.join(SCHEMES)}; got {self.scheme!r}", name="scheme", value=self.scheme
            )
        object.__setattr__(self, "dataset_size", check_int("dataset_size", self.dataset_size))
        object.__setattr__(self, "steps", check_int("steps", self.steps, minimum=0))
        object.__setattr__(self, "sample_rate", PROBABILITY.check("sample_rate", self.sample_rate))
        if self.noise_multiplier is not None:
            object.__setattr__(self, "noise_multiplier", POSITIVE.check("noise_multiplier", self.noise_multiplier))
        if self.scheme in ("allocation", "shuffle"):
            t = check_int("steps_per_epoch", self.steps_per_epoch)
            object.__setattr__(self, "steps_per_epoch", t)
            if self.scheme == "allocation" and not 1 <= self.k <= t:
                raise DomainError(f"k must be in [1, steps_per_epoch] = [1, {t}]; got {self.k!r}",
                                  name="k", value=self.k)
        if self.scheme == "truncated_poisson":
            object.__setattr__(self, "max_batch", check_int("max_batch", self.max_batch))

    @property
    def epochs(self) -> int:
        """Epochs begun (allocation and shuffling): a partial epoch releases a prefix of a whole
        one (post-processing), so it is accounted as a whole epoch. Poisson schemes: ⌈steps·q⌉."""
        if self.steps_per_epoch:
            return -(-self.steps // self.steps_per_epoch)
        return math.ceil(self.steps * self.sample_rate)

    def with_noise(self, noise_multiplier: float) -> SamplerEvent:
        """The same event with the noise multiplier the loop used."""
        return replace(self, noise_multiplier=noise_multiplier)

    def describe(self) -> str:
        """The sampler in words, for reports."""
        if self.scheme == "poisson":
            return f"Poisson sampling, rate {self.sample_rate:g}, {self.steps} steps, n = {self.dataset_size}"
        if self.scheme == "allocation":
            return (f"random allocation, k = {self.k} of t = {self.steps_per_epoch} steps, {self.epochs} epoch(s), "
                    f"n = {self.dataset_size}")
        if self.scheme == "truncated_poisson":
            return (f"truncated Poisson sampling, rate {self.sample_rate:g}, batch ≤ {self.max_batch}, "
                    f"{self.steps} steps, n = {self.dataset_size}")
        return (f"shuffled fixed batches of {self.batch_size}, {self.epochs} epoch(s) of {self.steps_per_epoch} "
                f"steps (no amplification claimed), n = {self.dataset_size}")

    def step_mechanism(self, noise_multiplier: float | None = None) -> Any:
        """The renyi mechanism of one step (Poisson schemes) or one epoch (allocation, shuffling)."""
        from renyi.mechanisms import Gaussian

        sigma = self._sigma(noise_multiplier)
        if self.scheme == "poisson":
            from renyi.sampling.subsampling import PoissonSubsampled

            return PoissonSubsampled(Gaussian(sigma), self.sample_rate)
        if self.scheme == "truncated_poisson":
            from renyi.sampling.truncation import TruncatedPoisson

            assert self.max_batch is not None
            return TruncatedPoisson(Gaussian(sigma), self.sample_rate, self.max_batch, self.dataset_size)
        if self.scheme == "allocation":
            from renyi.sampling.allocation import RandomAllocation

            assert self.steps_per_epoch is not None
            return RandomAllocation(Gaussian(sigma), self.steps_per_epoch, self.k)
        from renyi.sampling.allocation import Shuffled

        assert self.steps_per_epoch is not None
        # a sum of gradients clipped to C: replace-one sensitivity 2C (noise σ·C)
        return Shuffled(Gaussian(sigma, sensitivity=2.0, neighbouring="replace_one"), self.steps_per_epoch)

    def mechanism(self, noise_multiplier: float | None = None) -> Any:
        """The guarantee of the whole run the event describes (DP-SGD with noise multiplier σ).

        Args:
            noise_multiplier: σ > 0; may be omitted when the event carries it, and must equal
                it when both are given.
        """
        one = self.step_mechanism(noise_multiplier)
        count = self.steps if self.scheme in ("poisson", "truncated_poisson") else self.epochs
        if count == 0:
            from renyi.guarantees import PureDP

            return PureDP(0.0)
        return one if count == 1 else one.compose(count)

    def epsilon(self, noise_multiplier: float | None = None, *, delta: float) -> float:
        """An upper bound on ε at δ for the run the event describes."""
        return float(self.mechanism(noise_multiplier).epsilon(delta))

    @property
    def theorem(self) -> str:
        """The result the accounting rests on."""
        return str(self.step_mechanism(self.noise_multiplier or 1.0).theorem) if self.scheme != "poisson" else (
            "Mironov, Talwar & Zhang (2019) exact sampled-Gaussian RDP"
        )

    def _sigma(self, noise_multiplier: float | None) -> float:
        if noise_multiplier is None:
            if self.noise_multiplier is None:
                raise DomainError(
                    "noise_multiplier must be given (the event does not carry one)",
                    name="noise_multiplier",
                    value=None,
                )
            return self.noise_multiplier
        s = POSITIVE.check("noise_multiplier", noise_multiplier)
        if self.noise_multiplier is not None and not math.isclose(s, self.noise_multiplier, rel_tol=1e-12):
            raise DomainError(
                f"noise_multiplier {s!r} disagrees with the {self.noise_multiplier!r} the loop ran "
                "(was σ adjusted after calibration?)",
                name="noise_multiplier",
                value=s,
            )
        return s

    def check(self, *, sample_rate: Any = None, steps: Any = None, epochs: Any = None, dataset_size: Any = None,
              noise_multiplier: Any = None) -> None:
        """Raise when numbers given to an accountant disagree with what the sampler ran.

        Each given value must equal the event's (rates to 1e-9 relative). The messages name
        the known traps: a rate taken from ``len(sampler)``, gradient accumulation counted as
        one step, an adjusted noise multiplier, a data set of another size.

        Raises:
            DomainError: on the first disagreement.
        """
        if dataset_size is not None:
            n = check_int("dataset_size", dataset_size)
            if n != self.dataset_size:
                raise DomainError(
                    f"dataset_size {n} disagrees with the sampler event, which ran over {self.dataset_size} records",
                    name="dataset_size",
                    value=n,
                )
        if sample_rate is not None:
            q = PROBABILITY.check("sample_rate", sample_rate)
            if not math.isclose(q, self.sample_rate, rel_tol=1e-9):
                raise DomainError(
                    f"sample_rate {q!r} disagrees with the sampler, which ran at rate {self.sample_rate!r} "
                    f"({self.describe()}); a rate taken from len(sampler) or len(data_loader) is wrong for "
                    "weighted or capped samplers",
                    name="sample_rate",
                    value=q,
                )
        if steps is not None:
            t = check_int("steps", steps, minimum=0)
            if t != self.steps:
                hint = ""
                if t and self.steps % t == 0 and self.steps != t:
                    hint = f" (gradient accumulation over {self.steps // t} batches counted as one step?)"
                raise DomainError(
                    f"steps {t} disagrees with the {self.steps} batches the sampler produced{hint}",
                    name="steps",
                    value=t,
                )
        if epochs is not None:
            e = check_real("epochs", epochs)
            if self.steps_per_epoch and not math.isclose(e, self.epochs, rel_tol=1e-12):
                raise DomainError(
                    f"epochs {e!r} disagrees with the {self.epochs} completed epochs the sampler produced",
                    name="epochs",
                    value=e,
                )
        if noise_multiplier is not None:
            self._sigma(noise_multiplier)


# ----------------------------------------------------------------------------------------------
# index generators
# ----------------------------------------------------------------------------------------------
def _bernoulli(rng: Any, q: float, n: int) -> np.ndarray:
    """n Bernoulli draws with success probability ⌊q·2⁵³⌋/2⁵³ ≤ q (never above the accounted rate)."""
    from renyi.mechanisms.samplers import uniform01

    u = np.asarray(uniform01(rng, n))
    return np.asarray(u < math.floor(q * 2.0**53) * 2.0**-53)


class _Counting:
    """Counts the batches handed out; subclasses implement ``_batches``."""

    def __init__(self, dataset_size: Any, rng: Any) -> None:
        self.dataset_size = check_int("dataset_size", dataset_size)
        self.rng = rng
        self.steps_run = 0

    def _batches(self) -> Iterator[np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def __iter__(self) -> Iterator[np.ndarray]:
        for batch in self._batches():
            self.steps_run += 1
            yield batch


class PoissonBatches(_Counting):
    """``steps`` batches, each record included independently with probability ``sample_rate``.

    Args:
        dataset_size: number of records n ≥ 1.
        sample_rate: q ∈ (0, 1].
        steps: number of batches per iteration over the sampler (e.g. one epoch's worth).
        rng: None (secure) or a numpy Generator (reproducible, not secure).

    Examples:
        >>> import numpy as np
        >>> s = PoissonBatches(1000, 0.01, steps=5, rng=np.random.default_rng(0))
        >>> sum(1 for _ in s), s.event.steps, s.event.scheme
        (5, 5, 'poisson')
    """

    def __init__(self, dataset_size: Any, sample_rate: Any, steps: Any, rng: Any = None) -> None:
        super().__init__(dataset_size, rng)
        self.sample_rate = PROBABILITY.check("sample_rate", sample_rate)
        if self.sample_rate == 0.0:
            raise DomainError("sample_rate must be in (0, 1]; got 0.0", name="sample_rate", value=0.0)
        self.steps = check_int("steps", steps)

    def __len__(self) -> int:
        return self.steps

    def _batches(self) -> Iterator[np.ndarray]:
        for _ in range(self.steps):
            yield np.flatnonzero(_bernoulli(self.rng, self.sample_rate, self.dataset_size))

    @property
    def event(self) -> SamplerEvent:
        """The accounting event of the batches produced so far."""
        return SamplerEvent("poisson", self.dataset_size, self.steps_run, self.sample_rate)


class TruncatedPoissonBatches(PoissonBatches):
    """Poisson batches capped at ``max_batch`` records (a uniformly random subset is kept).

    Raises:
        DomainError: a cap below the expected batch size q·n.
    """

    def __init__(self, dataset_size: Any, sample_rate: Any, max_batch: Any, steps: Any, rng: Any = None) -> None:
        super().__init__(dataset_size, sample_rate, steps, rng)
        self.max_batch = check_int("max_batch", max_batch)
        from renyi.sampling.truncation import TruncatedPoisson
        from renyi.mechanisms import Gaussian

        TruncatedPoisson(Gaussian(1.0), self.sample_rate, self.max_batch, self.dataset_size)  # validates the cap

    def _batches(self) -> Iterator[np.ndarray]:
        from renyi.mechanisms.samplers import uniform01

        for batch in super()._batches():
            if batch.size > self.max_batch:
                keys = np.asarray(uniform01(self.rng, batch.size))
                batch = np.sort(batch[np.argsort(keys, kind="stable")[: self.max_batch]])
            yield batch

    @property
    def event(self) -> SamplerEvent:
        """The sampler event describing the batches drawn so far (what accounting reads)."""
        return SamplerEvent("truncated_poisson", self.dataset_size, self.steps_run, self.sample_rate,
                            max_batch=self.max_batch)


class AllocationBatches(_Counting):
    """Random allocation (balls-in-bins): in each epoch every record is put into ``k`` of
    ``steps`` batches chosen uniformly at random, independently of the other records.

    Batch sizes vary (about k·n/t each). Iterating once yields ``steps × epochs`` batches.

    Args:
        dataset_size: number of records n ≥ 1.
        steps: batches per epoch t ≥ 1.
        k: batches per record and epoch, 1 ≤ k ≤ t.
        epochs: epochs per iteration over the sampler, ≥ 1.
        rng: None (secure) or a numpy Generator.

    Examples:
        >>> import numpy as np
        >>> s = AllocationBatches(100, steps=4, rng=np.random.default_rng(1))
        >>> sorted(np.concatenate(list(s)).tolist()) == list(range(100))
        True
        >>> s.event.describe()
        'random allocation, k = 1 of t = 4 steps, 1 epoch(s), n = 100'
    """

    def __init__(self, dataset_size: Any, steps: Any, k: Any = 1, epochs: Any = 1, rng: Any = None) -> None:
        super().__init__(dataset_size, rng)
        self.steps = check_int("steps", steps)
        self.k = check_int("k", k)
        if self.k > self.steps:
            raise DomainError(f"k must be in [1, steps] = [1, {self.steps}]; got {k!r}", name="k", value=k)
        self.epochs = check_int("epochs", epochs)

    def __len__(self) -> int:
        return self.steps * self.epochs

    def _assign(self) -> list[np.ndarray]:
        from renyi.mechanisms.samplers import uniform01, uniform_int

        n, t = self.dataset_size, self.steps
        if self.k == 1:
            bins = np.asarray(uniform_int(self.rng, t, size=n), dtype=np.int64)
            order = np.argsort(bins, kind="stable")
            cuts = np.searchsorted(bins[order], np.arange(1, t))
            return [np.sort(b) for b in np.split(order, cuts)]
        out: list[list[np.ndarray]] = [[] for _ in range(t)]
        rows = max(1, (1 << 22) // t)  # bound memory: rows × t random keys at a time
        for lo in range(0, n, rows):
            m = min(rows, n - lo)
            keys = np.asarray(uniform01(self.rng, (m, t)))
            chosen = np.argpartition(keys, self.k - 1, axis=1)[:, : self.k]  # k distinct steps per record
            rec = np.repeat(np.arange(lo, lo + m), self.k)
            steps = chosen.ravel()
            for j in range(t):
                out[j].append(rec[steps == j])
        return [np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64) for parts in out]

    def _batches(self) -> Iterator[np.ndarray]:
        for _ in range(self.epochs):
            yield from self._assign()

    @property
    def event(self) -> SamplerEvent:
        """The sampler event describing the batches drawn so far (what accounting reads)."""
        return SamplerEvent("allocation", self.dataset_size, self.steps_run, self.k / self.steps,
                            steps_per_epoch=self.steps, k=self.k)


class ShuffledBatches(_Counting):
    """Shuffle and cut into batches of ``batch_size`` (the last batch may be smaller).

    Its event claims no amplification (:class:`~renyi.Shuffled`): prefer
    :class:`AllocationBatches` or :class:`PoissonBatches` for amplification.
    """

    def __init__(self, dataset_size: Any, batch_size: Any, epochs: Any = 1, rng: Any = None) -> None:
        super().__init__(dataset_size, rng)
        self.batch_size = check_int("batch_size", batch_size)
        self.epochs = check_int("epochs", epochs)
        self.steps = math.ceil(self.dataset_size / self.batch_size)

    def __len__(self) -> int:
        return self.steps * self.epochs

    def _batches(self) -> Iterator[np.ndarray]:
        from renyi.mechanisms.samplers import uniform01

        for _ in range(self.epochs):
            perm = np.argsort(np.asarray(uniform01(self.rng, self.dataset_size)), kind="stable")
            for lo in range(0, self.dataset_size, self.batch_size):
                yield perm[lo : lo + self.batch_size]

    @property
    def event(self) -> SamplerEvent:
        """The sampler event describing the batches drawn so far (what accounting reads)."""
        return SamplerEvent("shuffle", self.dataset_size, self.steps_run, min(1.0, self.batch_size / self.dataset_size),
                            steps_per_epoch=self.steps, batch_size=self.batch_size)
