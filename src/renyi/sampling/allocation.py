"""Random allocation (balls-in-bins) and shuffling: the samplers DP-SGD loops actually run.

* :class:`RandomAllocation` — each example takes part in exactly ``k`` of ``steps`` runs,
  chosen uniformly at random and independently of the other examples (balls-in-bins;
  k = 1 is one epoch in which every example is put into one of ``steps`` batches). Neighbours
  are **add/remove**. For a Gaussian base the RDP curve is the exact Rényi divergence of the
  worst-case pair of [FS25] in *both* directions (remove: a closed-form multinomial sum; add:
  an exact one-dimensional integral representation, evaluated numerically), at every integer
  order up to :data:`MAX_ORDER`, interpolated on the safe side between integers.
* :class:`Shuffled` — shuffle the data and cut it into fixed batches (the usual data loader).
  There is no published amplification theorem for this sampler that a library can compute, so
  it is accounted for honestly: every example is used once per epoch, so an epoch costs one
  run of the base mechanism. Use :class:`RandomAllocation` (assign each example to a uniformly
  random batch) or Poisson sampling to get amplification.

Relation to Poisson sampling: random allocation at k/t is within a small factor of Poisson
sampling at rate k/t ([FS25] main theorem); the Poisson ε is *not* a guarantee for it, nor for
shuffling, and vice versa.

References:
    [FS25] V. Feldman, M. Shenfeld, Privacy amplification by random allocation,
        arXiv:2502.08202 (2025): the worst-case Gaussian pair of 1-out-of-t allocation (also
        for adaptively chosen steps) and its exact RDP at integer orders (remove direction).
    [CGHLKKMSZ25] L. Chua, B. Ghazi, C. Harrison, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi,
        A. Sinha, C. Zhang, Balls-and-Bins Sampling for DP-SGD, AISTATS 2025.
    [Mir17] I. Mironov, Rényi Differential Privacy, CSF 2017, Prop. 1 (composition).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from renyi.sampling import _allocation_gaussian as ag
from renyi.core._validation import check_int
from renyi.core._values import CurveValue
from renyi.guarantees import RDP, Guarantee
from renyi.core.errors import DomainError
from renyi.mechanisms.base import Mechanism

__all__ = ["RandomAllocation", "Shuffled", "MAX_ORDER", "allocation_blocks"]

#: Largest integer Rényi order at which the allocation curve is computed; above it the
#: unamplified Gaussian curve α/(2σ²) per block is used (valid, and never the optimum in
#: practice because it ignores amplification).
MAX_ORDER = 128

THEOREM = ("Feldman & Shenfeld (2025) worst-case pair built from the base's dominating pair, both directions: "
           "certified PLD bracket (convex-order lattice pairs); Gaussian base: also exact RDP")


def allocation_blocks(steps: int, k: int) -> tuple[int, ...]:
    """Split ``steps`` into ``k`` blocks of sizes ⌊steps/k⌋ or ⌈steps/k⌉ (summing to ``steps``).

    k-out-of-t allocation is at least as private as choosing one step in each block: permuting
    the steps uniformly at random maps the block scheme onto uniform k-subsets (post-processing
    of the non-adaptive worst-case pair), and the blocks are independent, so their curves add
    ([FS25]; [Mir17] Prop. 1).

    Args:
        steps: the number of steps t ≥ 1.
        k: the number of blocks, 1 ≤ k ≤ t.
    """
    steps = check_int("steps", steps)
    k = check_int("k", k)
    if k > steps:
        raise DomainError(f"k must be an integer in [1, steps = {steps}]; got {k!r}", name="k", value=k)
    q, r = divmod(steps, k)
    return tuple([q + 1] * r + [q] * (k - r))


#: below this σ the add direction's RDP curve is the unamplified one (see _directional_cgfs)
MIN_SIGMA_ADD_QUADRATURE = 0.04


@lru_cache(maxsize=64)
def _directional_cgfs(sigma: float, t: int) -> tuple[np.ndarray, np.ndarray]:
    """(remove, add) CGFs (α − 1)·D_α at α = 0..MAX_ORDER for one 1-of-t block."""
    if t == 1:
        a = np.arange(MAX_ORDER + 1, dtype=np.float64)
        g = a * (a - 1.0) / (2.0 * sigma * sigma)
        return g, g
    rem = ag.remove_log_moments(sigma, t, MAX_ORDER)
    a = np.arange(MAX_ORDER + 1, dtype=np.float64)
    unamplified = a * (a - 1.0) / (2.0 * sigma * sigma)
    # Once the exact removal CGF is within 1 % of the unamplified one, amplification is gone:
    # above that order the add direction is bounded by the unamplified curve (quasi-convexity
    # of Rényi divergence over the mixture), losing at most 1 % there, and the quadrature is
    # spared the orders where it is most expensive.
    close = np.nonzero(rem[2:] >= 0.99 * unamplified[2:])[0]
    top = MAX_ORDER if close.size == 0 else max(2, int(close[0]) + 2)
    add = unamplified.copy()
    if sigma < MIN_SIGMA_ADD_QUADRATURE:
        # The add-direction quadrature's grid grows like σ⁻³ (z step ∝ σ, x range ∝ σ⁻²):
        # 0.5 CPU s at σ = 0.05, 22 s at σ = 0.01. At such σ one step already costs ε ≳ 10²,
        # so the add direction keeps the unamplified curve (valid: allocation is a
        # post-processing of the k-fold composition) rather than spend seconds on it.
        return rem, add
    add[: top + 1] = np.minimum(ag.add_log_moments(sigma, t, top), unamplified[: top + 1])
    return rem, add


class _AllocationCurve(CurveValue):
    """max(remove, add) ε(α) of k-out-of-t Gaussian allocation, one epoch.

    Between integer orders the CGF (α − 1)ε(α) is convex in α (an exact cumulant generating
    function), so its chord is an upper bound; above :data:`MAX_ORDER` the unamplified curve.
    """

    __slots__ = ("sigma", "steps", "k", "_rem", "_add")

    def __init__(self, sigma: float, steps: int, k: int) -> None:
        self.sigma, self.steps, self.k = sigma, steps, k
        rem = np.zeros(MAX_ORDER + 1)
        add = np.zeros(MAX_ORDER + 1)
        for b in allocation_blocks(steps, k):
            r, a = _directional_cgfs(sigma, b)
            rem = rem + r
            add = add + a
        self._rem, self._add = rem, add

    def _key(self) -> tuple[float, int, int]:
        return (self.sigma, self.steps, self.k)

    def directional(self, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(remove, add) ε(α) at finite orders > 1."""
        a = np.asarray(alpha, dtype=np.float64)
        out = []
        for g in (self._rem, self._add):
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                lo = np.clip(np.floor(a), 1, MAX_ORDER).astype(np.int64)
                hi = np.clip(lo + 1, 2, MAX_ORDER)
                frac = np.clip(a - lo, 0.0, 1.0)
                chord = (1.0 - frac) * g[lo] + frac * g[hi]
                eps = chord / (a - 1.0)
                # α exactly integer: use the node (avoids 0·∞ at the top node)
                eps = np.where(a == lo, g[lo] / (a - 1.0), eps)
                unamplified = self.k * a / (2.0 * self.sigma**2)
                eps = np.where(a > MAX_ORDER, unamplified, np.minimum(eps, unamplified))
            out.append(eps)
        return out[0], out[1]

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        rem, add = self.directional(alpha)
        return np.asarray(np.maximum(rem, add))

    def __repr__(self) -> str:
        return f"RandomAllocation(σ={self.sigma:g}, k={self.k} of t={self.steps})"


def _check_add_remove(mechanism: Mechanism, what: str) -> None:
    if getattr(mechanism, "neighbouring", "add_remove") != "add_remove":
        raise DomainError(
            f"mechanism.neighbouring must be 'add_remove' for {what}; got {mechanism.neighbouring!r}",
            name="mechanism.neighbouring",
            value=mechanism.neighbouring,
        )


def _check_mechanism(mechanism: Any) -> Mechanism:
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a renyi Mechanism; got {type(mechanism).__name__}")
    return mechanism


def _gaussian_multiplier(mechanism: Mechanism) -> float | None:
    from renyi.mechanisms import Gaussian

    if isinstance(mechanism, Gaussian):
        return mechanism.sigma / mechanism.sensitivity
    return None


@dataclass(frozen=True, slots=True)
class RandomAllocation(Mechanism):
    """One epoch of ``steps`` runs of ``mechanism`` in which every example takes part in
    exactly ``k`` runs, chosen uniformly at random (balls-in-bins).

    Neighbours are add/remove (the base mechanism's guarantee must be stated under add/remove).
    ``compose(epochs)`` gives several epochs, each with a fresh allocation.

    * Gaussian base (noise multiplier σ/Δ): the default ε is the PLD route's certified bracket
      (:mod:`renyi.accounting.pld._allocation`: finite pairs that dominate, and are dominated
      by, [FS25]'s worst-case pair in both directions; ``best_epsilon(δ).lower`` is its lower
      end). The RDP curve is the exact Rényi divergence of [FS25]'s worst-case
      pair in both directions (remove and add) at integer orders 2..:data:`MAX_ORDER`, the
      larger of the two at each order; between integers the chord of the convex CGF (an upper
      bound); k > 1 through k independent blocks of ⌊t/k⌋ or ⌈t/k⌉ steps
      (:func:`allocation_blocks`). An upper bound on ε(α) at every order.
    * Any other base with a dominating add/remove pair known to renyi (Laplace, discrete
      Gaussian, discrete Laplace, an ε-DP mechanism through the randomized-response pair): the
      PLD route computes the same certified bracket from the base's pair (each step is a
      post-processing of that pair, so the allocation is one of [FS25]'s pair built from it;
      checked against exact enumeration, binomial sums and quadrature in the tests). Its RDP
      curve claims no amplification (the k-fold composition of the base: valid, loose); the
      default ε is the smaller of the two.
    * steps = 1 (then k = 1): the base mechanism. k = steps: every example in every step, the
      steps-fold composition of the base mechanism.

    Args:
        mechanism: the base mechanism run at each step (add/remove neighbours).
        steps: number of steps t ≥ 1 in the epoch.
        k: number of steps each example takes part in, 1 ≤ k ≤ steps.

    Raises:
        DomainError: steps < 1, k < 1, k > steps, or a replace-one base mechanism.
        TypeError: ``mechanism`` is not a :class:`~renyi.mechanisms.Mechanism`.

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> m = RandomAllocation(Gaussian(sigma=1.0), steps=2)
        >>> m.sampling
        'random allocation, k = 1 of t = 2 steps, add/remove neighbours'
        >>> round(float(m.rdp(2.0)), 4)   # exact remove-direction D_2 = log((e + 1)/2)
        0.6201
    """

    mechanism: Mechanism
    steps: int
    k: int = 1

    neighbouring = "add_remove"

    def __post_init__(self) -> None:
        _check_mechanism(self.mechanism)
        steps = check_int("steps", self.steps)
        k = check_int("k", self.k)
        if k > steps:
            raise DomainError(f"k must be in [1, steps] = [1, {steps}]; got {self.k!r}", name="k", value=self.k)
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "k", k)
        _check_add_remove(self.mechanism, "random allocation")

    @property
    def sampling(self) -> str:
        """How examples are assigned to steps, in words (printed by repr and reports)."""
        return f"random allocation, k = {self.k} of t = {self.steps} steps, add/remove neighbours"

    @property
    def theorem(self) -> str:
        """The result the curve rests on."""
        if self.steps == 1 or self.k == self.steps:
            return "no amplification (every example in every step): composition, Mironov (2017) Prop. 1"
        if _gaussian_multiplier(self.mechanism) is None:
            return ("non-Gaussian base: RDP curve k-fold composition (no amplification); PLD route: Feldman & "
                    "Shenfeld (2025) pair of the base's dominating pair, certified lattice bracket")
        return THEOREM

    def __repr__(self) -> str:
        return f"RandomAllocation({self.mechanism!r}, steps={self.steps}, k={self.k}) [{self.sampling}]"

    @property
    def noise_multiplier(self) -> float | None:
        """σ/Δ for a Gaussian base, else None."""
        return _gaussian_multiplier(self.mechanism)

    @property
    def guarantee(self) -> Guarantee:
        """The RDP curve of one epoch (see the class docstring for which bound applies)."""
        base = self.mechanism.guarantee
        if self.steps == 1 or self.k == self.steps:
            return base.compose(self.k)
        nm = self.noise_multiplier
        if nm is None:
            return base.compose(self.k)
        curve = _AllocationCurve(nm, self.steps, self.k)
        return RDP(
            curve,
            eps_inf=math.inf,
            convex=False,
            orders=tuple(float(a) for a in range(2, MAX_ORDER + 1)),
            label=repr(curve),
        )

    def directional_rdp(self, alpha: Any) -> tuple[np.ndarray, np.ndarray]:
        """(remove, add) ε(α) of one epoch for a Gaussian base (finite orders > 1).

        ``rdp`` is the larger of the two at each order; both are exposed because the removal
        direction is usually, but not provably, the larger one.
        """
        from renyi.core._validation import ORDER

        a = ORDER.check_array("alpha", alpha)
        nm = self.noise_multiplier
        if nm is None or self.steps == 1 or self.k == self.steps:
            e = np.asarray(self.rdp(a), dtype=np.float64)
            return e, e
        return _AllocationCurve(nm, self.steps, self.k).directional(a)

    def release(self, value: Any, rng: Any = None) -> Any:
        """``value`` must already be the query answer on this step's batch; adds the base noise."""
        return self.mechanism.release(value, rng)


@dataclass(frozen=True, slots=True)
class Shuffled(Mechanism):
    """One epoch of ``steps`` runs over a shuffled data set cut into fixed batches, accounted
    without amplification.

    Neighbours are **replace-one** (n is public). Under replace-one the two data sets can be
    shuffled with the same permutation, so exactly one batch differs and the epoch costs one
    run of ``mechanism`` under replace-one (parallel composition over disjoint batches): the
    guarantee is ``mechanism.guarantee_under("replace_one")`` — for an add/remove base that is
    its group-of-two guarantee; recomputing the sensitivity under replace-one (2C for a sum
    of vectors clipped to C) and passing a replace-one base is equivalent or tighter.
    Add/remove neighbours are not used because adding one example shifts the batch boundaries
    of every later batch.

    This is valid for any shuffle but claims no amplification: no amplification theorem for
    shuffled fixed batches is implemented here. For amplification, assign examples to batches
    independently and uniformly (:class:`RandomAllocation`) or sample batches by Poisson
    sampling (:class:`~renyi.PoissonSubsampled`) — and then account for the sampler you ran.

    Args:
        mechanism: the base mechanism run at each step.
        steps: number of batches t ≥ 1 in the epoch (recorded; does not change the bound).

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> Shuffled(Gaussian(sigma=2.0, sensitivity=2.0, neighbouring="replace_one"), steps=100).guarantee
        GDP(mu=1.0, neighbouring='replace_one')
    """

    mechanism: Mechanism
    steps: int

    neighbouring = "replace_one"

    def __post_init__(self) -> None:
        _check_mechanism(self.mechanism)
        object.__setattr__(self, "steps", check_int("steps", self.steps))

    @property
    def sampling(self) -> str:
        """How the input is sampled, in words (printed by repr and reports)."""
        return (
            f"shuffled fixed batches, t = {self.steps} steps, replace-one neighbours; no amplification "
            "claimed (one base release per example per epoch)"
        )

    @property
    def theorem(self) -> str:
        """The result this guarantee rests on, as cited in reports."""
        return "no amplification: parallel composition over disjoint batches (replace-one)"

    def __repr__(self) -> str:
        return f"Shuffled({self.mechanism!r}, steps={self.steps}) [{self.sampling}]"

    @property
    def guarantee(self) -> Guarantee:
        return self.mechanism.guarantee_under("replace_one")

    def release(self, value: Any, rng: Any = None) -> Any:
        """``value`` must already be the query answer on this step's batch; adds the base noise."""
        return self.mechanism.release(value, rng)
