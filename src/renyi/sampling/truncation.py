"""Truncated Poisson sampling: Poisson batches capped at a maximum size (transformer).

Fixed memory budgets make DP-SGD implementations cap the Poisson batch: when more than
``max_batch`` examples are sampled, only ``max_batch`` of them (chosen at random) are used.
Capping changes the mechanism, so the Poisson curve alone is not a guarantee for it.

**Bound (δ-approximate RDP).** Let the neighbouring data sets be x and x′ = x ∪ {z} and let
G be the event that at most ``max_batch − 1`` of the records of x are sampled. G has the same
probability under both data sets, neither batch is truncated on G, and on G the inclusion of
z is still an independent Bernoulli(q) coin. Conditioned on G, both outputs are mixtures over
the common batch of x with the Poisson pair of every fixed batch, so by the joint
quasi-convexity of Rényi divergence the Poisson-subsampled curve holds ([MTZ19]; [ZW19]).
Hence the mechanism is δ_trunc-approximately RDP in the sense of [BS16] Def. 8 with the
Poisson curve and

    δ_trunc = P[Binomial(n, q) ≥ max_batch],

where n = ``dataset_size`` (the larger neighbour has n + 1 records, so x has at most n).
Conversions then add δ_trunc ([BS16] Lemma 8 / the approximate-RDP conversion), and
compositions add the δ's (1 − Π(1 − δ_i)).

References:
    [BS16] M. Bun, T. Steinke, Concentrated Differential Privacy, TCC 2016, Def. 8
        (approximate zCDP; the same conditioning for RDP curves).
    [MTZ19] I. Mironov, K. Talwar, L. Zhang, Rényi Differential Privacy of the Sampled
        Gaussian Mechanism, arXiv:1908.10530.
    [ZW19] Y. Zhu, Y.-X. Wang, Poisson Subsampled Rényi Differential Privacy, ICML 2019.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from renyi.core._validation import PROBABILITY, check_int
from renyi.guarantees import ApproxRDP, Guarantee
from renyi.core.errors import DomainError
from renyi.mechanisms.base import Mechanism
from renyi.sampling.subsampling import PoissonSubsampled

__all__ = ["TruncatedPoisson", "truncation_delta"]


def truncation_delta(rate: float, max_batch: int, dataset_size: int) -> float:
    """P[Binomial(dataset_size, rate) ≥ max_batch], rounded up: the δ that capping costs per step.

    Args:
        rate: the sampling probability q ∈ [0, 1].
        max_batch: the cap B ≥ 1.
        dataset_size: the number of records n ≥ 1.
    """
    from scipy.stats import binom

    from renyi.guarantees.conversions import round_up

    rate = PROBABILITY.check("rate", rate)
    max_batch = check_int("max_batch", max_batch)
    dataset_size = check_int("dataset_size", dataset_size)

    if max_batch > dataset_size:
        return 0.0
    p = float(binom.sf(max_batch - 1, dataset_size, rate))
    return min(1.0, round_up(p)) if p > 0.0 else 0.0


@dataclass(frozen=True, slots=True)
class TruncatedPoisson(Mechanism):
    """Poisson sampling at ``rate`` with the batch capped at ``max_batch`` examples.

    The guarantee is δ-approximate RDP (add/remove neighbours): the Poisson-subsampled curve of
    :class:`~renyi.PoissonSubsampled` with δ = P[Binomial(dataset_size, rate) ≥ max_batch]
    (module docstring). ``compose(steps)`` composes the curves and the δ's.

    Args:
        mechanism: the base mechanism (add/remove neighbours).
        rate: sampling probability q ∈ [0, 1].
        max_batch: the cap B ≥ 1; must be at least the expected batch size q·dataset_size.
        dataset_size: number of records n ≥ 1 the sampler ran over.

    Raises:
        DomainError: parameters out of range, a cap below the expected batch size, or a
            replace-one base mechanism.

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> m = TruncatedPoisson(Gaussian(1.0), rate=0.01, max_batch=200, dataset_size=10_000)
        >>> m.truncation_delta < 1e-15
        True
    """

    mechanism: Mechanism
    rate: float
    max_batch: int
    dataset_size: int

    neighbouring = "add_remove"

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism):
            raise TypeError(f"mechanism must be a renyi Mechanism; got {type(self.mechanism).__name__}")
        object.__setattr__(self, "rate", PROBABILITY.check("rate", self.rate))
        object.__setattr__(self, "max_batch", check_int("max_batch", self.max_batch))
        object.__setattr__(self, "dataset_size", check_int("dataset_size", self.dataset_size))
        expected = self.rate * self.dataset_size
        if self.max_batch < expected:
            raise DomainError(
                f"max_batch must be in [{math.ceil(expected)}, inf) (at least the expected batch size "
                f"rate·dataset_size = {expected:g}); got {self.max_batch!r}",
                name="max_batch",
                value=self.max_batch,
            )
        if getattr(self.mechanism, "neighbouring", "add_remove") != "add_remove":
            raise DomainError(
                "mechanism.neighbouring must be 'add_remove' for truncated Poisson sampling; got "
                f"{self.mechanism.neighbouring!r}",
                name="mechanism.neighbouring",
                value=self.mechanism.neighbouring,
            )

    @property
    def truncation_delta(self) -> float:
        """P[Binomial(dataset_size, rate) ≥ max_batch] (one step)."""
        return truncation_delta(self.rate, self.max_batch, self.dataset_size)

    @property
    def sampling(self) -> str:
        """How the input is sampled, in words (printed by repr and reports)."""
        return (
            f"truncated Poisson sampling (rate {self.rate:g}, batch ≤ {self.max_batch}, "
            f"n = {self.dataset_size}), add/remove neighbours"
        )

    @property
    def theorem(self) -> str:
        """The result this guarantee rests on, as cited in reports."""
        return "Poisson-subsampled curve (MTZ19 / ZW19) + δ = P[Bin(n, q) ≥ cap] (approximate RDP, BS16 Def. 8)"

    @property
    def noise_multiplier(self) -> float | None:
        """σ/Δ of the Gaussian base, or None for another base."""
        return PoissonSubsampled(self.mechanism, self.rate).noise_multiplier

    def __repr__(self) -> str:
        return (
            f"TruncatedPoisson({self.mechanism!r}, rate={self.rate!r}, max_batch={self.max_batch}, "
            f"dataset_size={self.dataset_size}) [{self.sampling}]"
        )

    @property
    def guarantee(self) -> Guarantee:
        poisson = PoissonSubsampled(self.mechanism, self.rate).guarantee
        d = self.truncation_delta
        if d == 0.0:  # the cap is never reached: plain Poisson sampling (rate 1: the mechanism)
            return poisson
        if d >= 1.0:
            # δ = P[Bin(n, q) ≥ B] is 1 (or within round-off of it): no (ε, δ) statement with
            # δ < 1 holds; say so in the user's words, not as an out-of-range δ
            raise DomainError(f"max_batch must be above {self.dataset_size} at rate {self.rate!r} (the cap is reached "
                              f"with probability P[Binomial({self.dataset_size}, {self.rate!r}) ≥ {self.max_batch}] = "
                              f"{d!r}, so no δ < 1 holds); got {self.max_batch}",
                              name="max_batch", value=self.max_batch)
        return ApproxRDP(poisson.to_rdp(), d)

    def release(self, value: Any, rng: Any = None) -> Any:
        """``value`` must already be the query answer on the (capped) batch; adds the base noise."""
        return self.mechanism.release(value, rng)
