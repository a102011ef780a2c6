"""Privacy amplification by subsampling (transformers: mechanism → mechanism).

Two sampling schemes, each with its own neighbouring relation. They must not be mixed in one
ledger (a replace-one guarantee does not imply an add/remove one):

* :class:`PoissonSubsampled` — every record is included independently with probability q
  (the "sampling rate"); neighbours are **add/remove**. For a Gaussian base the RDP curve is
  exact at every order ([MTZ19] §3), integer and fractional. Other bases with an RDP curve
  get the general bound of [ZW19] (exact form, without the factor 3, for Gaussian and
  Laplace bases).
* :class:`SubsampledWithoutReplacement` — a uniformly random subset of fixed size m = γn;
  neighbours are **replace-one** (n is public). Bound of [WBK19] Thm 9.

**Shuffled fixed-size batches are not Poisson sampling.** The usual DP-SGD data loader shuffles
the data set and cuts it into batches of a fixed size. Neither Poisson analysis applies to
that: the batch size is fixed (it reveals nothing about n), each record appears exactly once
per epoch, and batches are dependent. The Poisson-sampling ε reported by most libraries (and by
:class:`PoissonSubsampled`) is therefore *not* a guarantee for a shuffling loader. What does
apply:

* draw every batch as an independent uniformly random subset of size m (sampling without
  replacement, replace-one neighbours) and account with
  :class:`SubsampledWithoutReplacement` (rate γ = m/n) composed once per step; or
* draw every batch by Poisson sampling (variable batch size) and use
  :class:`PoissonSubsampled`; or
* with a true shuffle-and-partition loader, fall back to the unamplified guarantee of the base
  mechanism for every step in which a record is used (one use per epoch per record, i.e.
  compose the base mechanism once per epoch under the appropriate neighbouring relation).

**User level.** ``PoissonSubsampled(Gaussian(σ), q).group(k)`` is
:class:`PoissonSubsampledGroup`: Poisson sampling of *examples* accounted for a person with up
to k examples, the tight Binomial mixture of Gaussians (Ganesh 2024; numerics in
:mod:`renyi.sampling._group_gaussian`), with RDP and PLD routes. ``.group(k)`` of any other
base is the generic group privacy of its guarantee.

The curves carry no zCDP hint: the unamplified ρ of the base is valid but useless, and the
amplified curves are not of the form ξ + ρα. Every curve here is a valid upper bound; DP-SGD
accounting (``PoissonSubsampled(Gaussian(σ), q)`` composed T times) converts to (ε, δ) through
a dedicated fast path (:func:`renyi.sampling._subsampled_dpsgd.dpsgd_epsilon`).

References:
    [MTZ19] Mironov, Talwar, Zhang, Rényi Differential Privacy of the Sampled Gaussian
        Mechanism, arXiv:1908.10530, §3.
    [ZW19] Zhu, Wang, Poisson Subsampled Rényi Differential Privacy, ICML 2019 (general
        upper bound; exact form under the condition of Thm 8).
    [WBK19] Wang, Balle, Kasiviswanathan, Subsampled Rényi Differential Privacy and Analytical
        Moments Accountant, AISTATS 2019, Thm 9 and Cor. 10.
    [CKS20] Canonne, Kamath, Steinke, The Discrete Gaussian for Differential Privacy, Prop. 12.
    [Gan24] Ganesh, Tight Group-Level DP Guarantees for DP-SGD with Sampling via Mixture of
        Gaussians Mechanisms, arXiv:2401.10294.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from renyi.sampling import _group_gaussian as gg
from renyi.sampling import _subsampled_dpsgd as sgd
from renyi.sampling import _subsampled_gaussian as sg
from renyi.sampling import _subsampled_general as sgg
from renyi.core._values import CurveValue
from renyi.core._validation import PROBABILITY, check_int
from renyi.guarantees import RDP, Conversion, Guarantee
from renyi.guarantees.base import _check_delta, _check_epsilon
from renyi.core.errors import ConversionError, DomainError
from renyi.mechanisms.base import Mechanism, check_neighbouring

__all__ = ["PoissonSubsampled", "PoissonSubsampledReplaceOne", "SubsampledWithoutReplacement", "PoissonSubsampledGroup"]


# ----------------------------------------------------------------------------------------------
# Curves (small callables, so that curves stay values with a readable repr)
# ----------------------------------------------------------------------------------------------
class _ZeroCurve(CurveValue):
    __slots__ = ()

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return np.zeros(np.shape(alpha))

    def __repr__(self) -> str:
        return "0"


class _MTZCurve(CurveValue):
    """steps × ε(α) of the Poisson-subsampled Gaussian ([MTZ19] §3), finite orders > 1."""

    __slots__ = ("q", "sigma", "steps")

    def __init__(self, q: float, sigma: float, steps: int) -> None:
        self.q, self.sigma, self.steps = q, sigma, steps

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        a = np.asarray(alpha, dtype=np.float64)
        flat = a.ravel()
        eps, _ = sg._rdp_rows(np.full(flat.size, self.q), np.full(flat.size, self.sigma), flat)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self.steps * eps
        return np.where(np.isnan(out), math.inf, out).reshape(a.shape)

    def __repr__(self) -> str:
        pre = f"{self.steps}·" if self.steps != 1 else ""
        return f"{pre}SubsampledGaussian(q={self.q:g}, σ={self.sigma:g})"


class _ZW19Curve(CurveValue):
    __slots__ = ("q", "base", "exact", "eps_inf")

    def __init__(self, q: float, base: RDP, exact: bool, eps_inf: float) -> None:
        self.q, self.base, self.exact, self.eps_inf = q, base, exact, eps_inf

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return sgg.rdp_poisson_general(self.q, self.base.rdp_finite, alpha, exact_form=self.exact, base_eps_inf=self.eps_inf)

    def __repr__(self) -> str:
        form = "exact form" if self.exact else "general bound"
        return f"ZW19[{form}](q={self.q:g}, {self.base!r})"


class _WBK19Curve(CurveValue):
    __slots__ = ("gamma", "base", "eps_inf")

    def __init__(self, gamma: float, base: RDP, eps_inf: float) -> None:
        self.gamma, self.base, self.eps_inf = gamma, base, eps_inf

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return sgg.rdp_without_replacement(self.gamma, self.base.rdp_finite, alpha, base_eps_inf=self.eps_inf)

    def __repr__(self) -> str:
        return f"WBK19(γ={self.gamma:g}, {self.base!r})"


def _zero_guarantee(label: str) -> RDP:
    return RDP(_ZeroCurve(), eps_inf=0.0, zcdp=(0.0, 0.0), convex=True, label=label)


# ----------------------------------------------------------------------------------------------
# The subsampled-Gaussian curve with its fast conversion
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, repr=False)
class SubsampledGaussianRDP(RDP):
    """The exact RDP curve of ``steps`` Poisson-subsampled Gaussian steps (DP-SGD).

    An :class:`~renyi.definitions.RDP` (usable everywhere an RDP curve is) that also remembers
    (q, σ, steps), so that ``epsilon``/``delta`` use the dedicated fast path
    (:func:`~renyi.sampling._subsampled_dpsgd.dpsgd_epsilon`: integer orders vectorized, then a
    continuous refinement; [CKS20] Prop. 12) and ``compose``/``k *`` stay in this form.
    Build it through :class:`PoissonSubsampled`.
    """

    q: float = 0.0
    sigma: float = 1.0
    steps: int = 1

    def __post_init__(self) -> None:
        RDP.__post_init__(self)

    def compose(self, k: int) -> SubsampledGaussianRDP:
        """k-fold composition: the same curve with k times the steps ([Mir17] Prop. 1)."""
        k = check_int("k", k)
        return _sg_curve(self.q, self.sigma, self.steps * k)

    def best_epsilon(self, delta: float) -> Conversion:
        """The smallest ε at δ: [CKS20] Prop. 12 on the exact curve, order optimised (fast path).

        The carried zCDP bound ξ + ρα lies above the exact curve at every order, so its
        conversions ([CKS20] Cor. 13, [BS16] Lemma 38) are never smaller and are skipped.
        """
        from renyi.guarantees import conversions as conv

        delta = _check_delta(delta)
        # Subsampling never costs more than the mechanism: the steps without subsampling are
        # exactly √steps/σ-GDP, also a valid bound (and the smaller one for very large σ).
        plain = self._unsubsampled().best_epsilon(delta)
        if plain.value == 0.0:
            return plain  # nothing is smaller (σ = 1e300: the order search ran for minutes)
        eps, alpha = sgd._eps_one(self.q, self.sigma, self.steps, math.log(delta))
        best = Conversion(max(0.0, conv.round_up(eps)), alpha, "CKS20 Prop. 12 (α optimised, exact MTZ19 curve)")
        return plain if plain.value < best.value else best

    def _unsubsampled(self) -> Guarantee:
        from renyi.guarantees import GDP

        return GDP(math.sqrt(self.steps) / self.sigma)

    def best_delta(self, epsilon: float) -> Conversion:
        """The smallest δ at ε: [CKS20] Prop. 12 in log form, order optimised (fast path)."""
        from renyi.guarantees import conversions as conv

        epsilon = _check_epsilon(epsilon)
        plain = self._unsubsampled().best_delta(epsilon)
        if plain.value == 0.0:
            return plain  # nothing is smaller
        log_d, alpha = sgd.dpsgd_log_delta(self.q, self.sigma, self.steps, epsilon)
        d = min(1.0, conv.round_up(math.exp(log_d))) if log_d < 0 else 1.0
        best = Conversion(d, alpha, "CKS20 Prop. 12 (α optimised, exact MTZ19 curve)")
        return plain if plain.value < best.value else best


def _sg_curve(q: float, sigma: float, steps: int) -> SubsampledGaussianRDP:
    return SubsampledGaussianRDP(
        _MTZCurve(q, sigma, steps),
        eps_inf=math.inf,
        # No zCDP hint: the only valid ρ is the unamplified steps/(2σ²) (the curve is already
        # capped by it), which would advertise a useless zCDP route in reports.
        convex=True,
        label=repr(_MTZCurve(q, sigma, steps)),
        q=q,
        sigma=sigma,
        steps=steps,
    )


# ----------------------------------------------------------------------------------------------
# Transformers
# ----------------------------------------------------------------------------------------------
def _no_worse(sub: Conversion, base: Callable[[float], Conversion], x: float) -> Conversion:
    """The smaller of the subsampled bound and the base mechanism's own (under the same
    relation): subsampling never costs more than running the mechanism on everyone, since
    the coupled subsamples of neighbours are themselves neighbours (or equal)."""
    b = base(x)
    if b.value < sub.value:
        return Conversion(b.value, b.witness, f"{b.method} (unsubsampled mechanism: never worse)")
    return sub


def _check_mechanism(mechanism: Any) -> Mechanism:
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a renyi Mechanism; got {type(mechanism).__name__}")
    return mechanism


def _base_curve(guarantee: Guarantee) -> RDP:
    try:
        return guarantee.to_rdp()
    except ConversionError as exc:
        raise ConversionError(f"subsampling needs an RDP curve for the base mechanism: {exc}") from exc


def _is(mechanism: Mechanism, name: str) -> bool:
    from renyi import mechanisms

    cls = getattr(mechanisms, name, None)
    return cls is not None and isinstance(mechanism, cls)


@dataclass(frozen=True, slots=True)
class PoissonSubsampled(Mechanism):
    """Run ``mechanism`` on a Poisson subsample: each record kept independently with prob. q.

    Neighbours are add/remove (the base mechanism's guarantee must be stated under add/remove).

    * Gaussian base: the exact RDP curve of [MTZ19] §3 at integer and fractional orders, with
      noise multiplier σ/Δ; ``compose(T)`` / ``T * m`` then ``epsilon(delta)`` uses the DP-SGD
      fast path.
    * Laplace base: [ZW19]'s bound in its exact form (no factor 3; [ZW19] Thm 8 condition).
    * Any other base with an RDP curve: [ZW19]'s general bound (integer orders; fractional by
      [WBK19] Cor. 10), capped by the base curve and by log(1 + q(e^{ε(∞)} − 1)).
    * rate = 1: the base mechanism's own guarantee; rate = 0: nothing is spent.

    Args:
        mechanism: the base mechanism (add/remove neighbours).
        rate: sampling probability q ∈ [0, 1].

    Raises:
        DomainError: rate ∉ [0, 1], or a replace-one base mechanism.
        TypeError: ``mechanism`` is not a :class:`~renyi.mechanisms.Mechanism`.

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> m = PoissonSubsampled(Gaussian(sigma=1.1), rate=0.01)
        >>> m.sampling
        'Poisson sampling (rate 0.01), add/remove neighbours'
        >>> round(float(m.rdp(8.0)), 10)
        0.0005840703
        >>> round((1000 * m).epsilon(1e-5, method="rdp"), 4)
        1.7117
        >>> round((1000 * m).epsilon(1e-5), 2)  # the default: the tightest route (PLD here)
        1.52
    """

    mechanism: Mechanism
    rate: float

    neighbouring = "add_remove"

    def __post_init__(self) -> None:
        _check_mechanism(self.mechanism)
        object.__setattr__(self, "rate", PROBABILITY.check("rate", self.rate))
        if getattr(self.mechanism, "neighbouring", "add_remove") != "add_remove":
            raise DomainError(
                "mechanism.neighbouring must be 'add_remove' for Poisson subsampling; got "
                f"{self.mechanism.neighbouring!r} (use SubsampledWithoutReplacement for replace-one)",
                name="mechanism.neighbouring",
                value=self.mechanism.neighbouring,
            )

    @property
    def sampling(self) -> str:
        """How the input is subsampled, in words (printed by repr and reports)."""
        return f"Poisson sampling (rate {self.rate:g}), add/remove neighbours"

    def __repr__(self) -> str:
        return f"PoissonSubsampled({self.mechanism!r}, rate={self.rate!r}) [{self.sampling}]"

    @property
    def noise_multiplier(self) -> float | None:
        """σ/Δ for a Gaussian base, else None."""
        if _is(self.mechanism, "Gaussian"):
            sigma: float = self.mechanism.sigma / self.mechanism.sensitivity  # type: ignore[attr-defined]
            return sigma
        return None

    @property
    def guarantee(self) -> Guarantee:
        """The RDP curve of one run (see the class docstring for which bound applies)."""
        q = self.rate
        if isinstance(self.mechanism, PoissonSubsampled):
            # A Poisson subsample of a Poisson subsample is a Poisson subsample at rate q·q'.
            return PoissonSubsampled(self.mechanism.mechanism, q * self.mechanism.rate).guarantee
        if q == 0.0:
            return _zero_guarantee("nothing spent (sampling rate 0)")
        if q == 1.0:
            return self.mechanism.guarantee
        nm = self.noise_multiplier
        if nm is not None:
            return _sg_curve(q, nm, 1)
        base = _base_curve(self.mechanism.guarantee)
        exact = _is(self.mechanism, "Laplace")
        return RDP(
            _ZW19Curve(q, base, exact, base.eps_inf),
            eps_inf=sgg.eps_inf_poisson(q, base.eps_inf),
            convex=False,
            label=f"Poisson(q={q:g}) of {base.label or base!r}",
        )

    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        # this mechanism's own conversion (method="native"); other methods go through the
        # routes (renyi.routes), which is what the base-class wrapper does before calling this
        return _no_worse(self.guarantee.best_epsilon(delta), self.mechanism.guarantee.best_epsilon, delta)

    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        return _no_worse(self.guarantee.best_delta(epsilon), self.mechanism.guarantee.best_delta, epsilon)

    def group(self, k: int) -> Any:
        """The guarantee for a person with up to ``k`` examples (k ≥ 1 an integer).

        A Gaussian base gets the tight group-level mechanism, :class:`PoissonSubsampledGroup`:
        the person's examples are each sampled, so Binomial(k, q) of them are in a batch, and
        one step is the Binomial mixture of Gaussians against the Gaussian (Ganesh 2024). Any
        other base keeps generic group privacy of its guarantee
        (:meth:`renyi.guarantees.base.Guarantee.group`): valid, but not tight.

        Raises:
            DomainError: ``k`` is not an integer ≥ 1.
        """
        k = _check_group_size(k)
        if _is(self.mechanism, "Gaussian"):
            return PoissonSubsampledGroup(self.mechanism, self.rate, k)
        return self.guarantee.group(k)

    def release(self, value: Any, rng: Any = None) -> Any:
        """Releasing needs the per-record data to subsample; here ``value`` must already be the
        query answer on the Poisson subsample, and the base mechanism's noise is added."""
        return self.mechanism.release(value, rng)

    def _as_replace_one(self) -> Mechanism | None:
        """This mechanism under replace-one neighbours analysed directly (a Gaussian base:
        :class:`PoissonSubsampledReplaceOne`), or None (group privacy of two then applies);
        used by :func:`renyi._neighbouring.to_relation`."""
        if _is(self.mechanism, "Gaussian") and 0.0 < self.rate < 1.0:
            return PoissonSubsampledReplaceOne(self.mechanism, self.rate)
        return None


@dataclass(frozen=True, slots=True)
class PoissonSubsampledReplaceOne(Mechanism):
    """A Poisson-subsampled Gaussian under replace-one neighbours, analysed directly.

    Replacing one record changes its clipped contribution g to g′ (‖g‖, ‖g′‖ ≤ Δ); a record
    left out of the sample changes nothing. The dominating pair is
    (1−q)N(0, σ²) + qN(Δ, σ²) against (1−q)N(0, σ²) + qN(−Δ, σ²) (Lebeda, Regehr, Kamath &
    Steinke 2024), which the PLD engine composes (:mod:`renyi.pld`). Group privacy of two — one
    removal then one addition — is what an add/remove analysis gives otherwise, a median 2.8×
    and up to 137× above this pair's ε (issue #26).

    The RDP curve (:attr:`guarantee`, the RDP route and the budget filters) is this pair's
    own: D_α of the pair by certified quadrature (:mod:`renyi.sampling._replace_one_rdp`, an
    upper bound at every real order), capped by the add/remove curve's group-of-two bound
    ([BS16] Lemma 26, k = 2), which it is far below (q = 0.01, σ = 1, α = 8: 0.00198 against
    0.0212).

    **Why this pair is the worst case.** A replacement changes one record's clipped
    contribution g to g′ (‖g‖, ‖g′‖ ≤ Δ); the rest of the batch is common to both sides and
    is post-processing, so one step compares (1−q)N(0, σ²I) + qN(g, σ²I) with
    (1−q)N(0, σ²I) + qN(g′, σ²I). Lebeda et al. (2024) show the antipodal pair g′ = −g,
    ‖g‖ = Δ, dominates every such pair in the hockey-stick sense (all ε, so the PLD route is
    valid), and a pair that dominates in every hockey-stick divergence dominates in every
    f-divergence (Blackwell: the other is a post-processing of it), Rényi divergences
    included. ``tests/test_replace_one_rdp.py`` also checks it numerically over random pairs
    (g, g′) in the plane and random orders: none exceeds this curve.

    ``PoissonSubsampled(Gaussian(σ), q)`` becomes this when a composition is stated under
    replace-one (mixed with randomized response or sampling without replacement, or asked
    with ``to_relation(m, "replace_one")``).

    Args:
        mechanism: the base Gaussian (add/remove neighbours).
        rate: sampling probability q ∈ [0, 1].

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> m = PoissonSubsampledReplaceOne(Gaussian(1.0), 0.01)
        >>> m.neighbouring
        'replace_one'
    """

    mechanism: Mechanism
    rate: float

    neighbouring = "replace_one"

    def __post_init__(self) -> None:
        _check_mechanism(self.mechanism)
        object.__setattr__(self, "rate", PROBABILITY.check("rate", self.rate))
        if not _is(self.mechanism, "Gaussian") or getattr(self.mechanism, "neighbouring", "add_remove") != "add_remove":
            raise DomainError(
                f"mechanism must be an add/remove Gaussian; got {self.mechanism!r}",
                name="mechanism",
                value=self.mechanism,
            )

    @property
    def sampling(self) -> str:
        """How the input is subsampled, in words (printed by repr and reports)."""
        return f"Poisson sampling (rate {self.rate:g}), replace-one neighbours"

    def __repr__(self) -> str:
        return f"PoissonSubsampledReplaceOne({self.mechanism!r}, rate={self.rate!r}) [{self.sampling}]"

    @property
    def noise_multiplier(self) -> float:
        """σ/Δ of the base Gaussian."""
        sigma: float = self.mechanism.sigma / self.mechanism.sensitivity  # type: ignore[attr-defined]
        return sigma

    @property
    def guarantee(self) -> Guarantee:
        """The pair's RDP curve (certified quadrature), capped by the add/remove curve's
        group-of-two bound, stated under replace-one."""
        from renyi.guarantees.neighbouring import with_relation

        group = PoissonSubsampled(self.mechanism, self.rate).guarantee.group(2)
        mu = 1.0 / self.noise_multiplier
        if not isinstance(group, RDP) or self.rate in (0.0, 1.0) or not (math.isfinite(mu) and mu > 0.0):
            # nothing spent, or no subsampling (the Gaussian with sensitivity 2Δ is exact)
            return with_relation(group, "replace_one")  # type: ignore[no-any-return]
        curve = RDP(_ReplaceOneCurve(mu, self.rate, group.rdp_finite), eps_inf=math.inf, convex=False,
                    label=f"replace-one pair (q={self.rate:g}, σ={self.noise_multiplier:g})")
        return with_relation(curve, "replace_one")  # type: ignore[no-any-return]

    def release(self, value: Any, rng: Any = None) -> Any:
        """``value`` must already be the query answer on the Poisson subsample; the base
        mechanism's noise is added."""
        return self.mechanism.release(value, rng)


class _ReplaceOneCurve(CurveValue):
    """α ↦ min(the replace-one pair's certified D_α, the group-of-two bound)."""

    __slots__ = ("mu", "q", "group")

    def __init__(self, mu: float, q: float, group: Callable[[np.ndarray], np.ndarray]) -> None:
        self.mu, self.q, self.group = mu, q, group

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        from renyi.sampling._replace_one_rdp import replace_one_rdp

        a = np.asarray(alpha, dtype=np.float64)
        flat = a.reshape(-1)
        own = np.array([replace_one_rdp(self.mu, self.q, float(x)) if 1.0 < x < math.inf else math.inf
                        for x in flat]).reshape(a.shape)
        out: np.ndarray = np.minimum(own, np.asarray(self.group(a), dtype=np.float64))
        return out

    def __repr__(self) -> str:
        return f"replace_one_rdp(μ={self.mu:g}, q={self.q:g})"


@dataclass(frozen=True, slots=True)
class SubsampledWithoutReplacement(Mechanism):
    """Run ``mechanism`` on a uniformly random subset of fixed size m = γn (replace-one).

    The RDP curve is [WBK19] Thm 9 at integer orders (min with the base curve), fractional
    orders by [WBK19] Cor. 10. The base guarantee is taken under replace-one neighbours
    (for an add/remove base that is its group-of-two guarantee: a replacement is one removal and one addition).

    This is the analysis for batches drawn as independent uniform subsets of a fixed size; it
    is also *not* a guarantee for a shuffle-and-partition loader (see the module docstring).

    Args:
        mechanism: the base mechanism.
        rate: the sampling fraction γ = m/n ∈ [0, 1].

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> m = SubsampledWithoutReplacement(Gaussian(1.1, neighbouring="replace_one"), 0.01)
        >>> round(float(m.rdp(8.0)), 10)
        0.0020421531
    """

    mechanism: Mechanism
    rate: float
    neighbouring: str = "replace_one"

    def __post_init__(self) -> None:
        _check_mechanism(self.mechanism)
        object.__setattr__(self, "rate", PROBABILITY.check("rate", self.rate))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))

    @property
    def sampling(self) -> str:
        """How the input is subsampled, in words (printed by repr and reports)."""
        words = "replace-one" if self.neighbouring == "replace_one" else "add/remove"
        return f"sampling without replacement (fraction {self.rate:g}), {words} neighbours"

    def __repr__(self) -> str:
        return f"SubsampledWithoutReplacement({self.mechanism!r}, rate={self.rate!r}) [{self.sampling}]"

    @property
    def guarantee(self) -> Guarantee:
        g = self.rate
        if isinstance(self.mechanism, SubsampledWithoutReplacement):
            # A uniform subset of a uniform subset is a uniform subset of fraction γ·γ'.
            return SubsampledWithoutReplacement(self.mechanism.mechanism, g * self.mechanism.rate).guarantee
        base_g = self.mechanism.guarantee_under("replace_one")
        if g == 0.0:
            return _zero_guarantee("nothing spent (sampling fraction 0)")
        if self.neighbouring == "add_remove":
            return _wor_add_remove(self.mechanism, g, base_g)
        if g == 1.0:
            return base_g
        base = _base_curve(base_g)
        return RDP(
            _WBK19Curve(g, base, base.eps_inf),
            eps_inf=base.eps_inf,
            convex=False,
            label=f"without replacement (γ={g:g}) of {base.label or base!r}",
        )

    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        # this mechanism's own conversion (method="native"); other methods go through the
        # routes (renyi.routes), which is what the base-class wrapper does before calling this
        return _no_worse(self.guarantee.best_epsilon(delta), self.mechanism.guarantee_under("replace_one").best_epsilon,
                         delta)

    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        return _no_worse(self.guarantee.best_delta(epsilon), self.mechanism.guarantee_under("replace_one").best_delta,
                         epsilon)

    def release(self, value: Any, rng: Any = None) -> Any:
        """``value`` must already be the query answer on the subsample; adds the base noise."""
        return self.mechanism.release(value, rng)


def _wor_add_remove(mechanism: Mechanism, g: float, base_g: Guarantee) -> Guarantee:
    """Fixed-size batch m = γn under add/remove neighbours.

    Coupling: with x′ = x ∪ {z}, a uniform m-subset of x′ misses z with probability
    1 − m/(n+1) (then it is a uniform m-subset of x) and otherwise is z plus m − 1 records
    of x, i.e. a uniform m-subset of x with one record replaced by z. Mixing over the common
    batch (joint quasi-convexity of Rényi divergence), both directions are bounded by the
    Poisson-type mixture pair (1 − γ)P + γP′ vs P at rate γ = m/n ≥ m/(n+1), whose base pair
    (P, P′) differs by *replacing* one record. So the curve is the Poisson-subsampled curve of
    the base mechanism's replace-one guarantee ([MTZ19] exact for a Gaussian base, with
    noise multiplier σ/Δ_replace; [ZW19] otherwise); γ = 1: the replace-one base guarantee.
    """
    if g == 1.0:
        return base_g
    from renyi.mechanisms import Gaussian

    if isinstance(mechanism, Gaussian):
        d_replace = mechanism.sensitivity * (2.0 if mechanism.neighbouring == "add_remove" else 1.0)
        return _sg_curve(g, mechanism.sigma / d_replace, 1)
    base = _base_curve(base_g)
    return RDP(
        _ZW19Curve(g, base, False, base.eps_inf),
        eps_inf=sgg.eps_inf_poisson(g, base.eps_inf),
        convex=False,
        label=f"without replacement, add/remove (γ={g:g}) of {base.label or base!r}",
    )


# ----------------------------------------------------------------------------------------------
# User level: a person with up to k examples under Poisson sampling of examples
# ----------------------------------------------------------------------------------------------
class _GroupCurve(CurveValue):
    """ε(α) of one group step (both directions, see :mod:`renyi.sampling._group_gaussian`)."""

    __slots__ = ("k", "q", "sigma")

    def __init__(self, k: int, q: float, sigma: float) -> None:
        self.k, self.q, self.sigma = k, q, sigma

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        a = np.asarray(alpha, dtype=np.float64)
        mix = gg.mixture(self.k, self.q, self.sigma)
        flat = a.ravel()
        out = np.empty(flat.size)
        for i, x in enumerate(flat):
            out[i] = math.inf if not math.isfinite(x) else mix.rdp(float(x))
        return out.reshape(a.shape)

    def __repr__(self) -> str:
        return f"GroupSubsampledGaussian(k={self.k}, q={self.q:g}, σ={self.sigma:g})"


@dataclass(frozen=True, slots=True)
class PoissonSubsampledGroup(Mechanism):
    """Poisson sampling of examples at rate q, accounted for a person with up to k examples.

    One step releases the sum of the sampled examples' clipped gradients (ℓ₂-norm ≤ Δ, the
    Gaussian's sensitivity) plus N(0, σ²I); a person's examples are each in the batch with
    probability q. Neighbours: datasets that differ by adding or removing one person and all
    of their (up to k) examples.

    * RDP: exact at integer orders (a log-space convolution), the chord of the convex
      cumulant generating function between integer orders ([WBK19] Cor. 10), the addition
      direction by a certified quadrature; the maximum of the two directions.
    * PLD: the two dominating pairs (remove and add) as privacy profiles, so that ``epsilon``
      carries the engine's certified bracket.
    * k = 1 is :class:`~renyi.sampling.subsampling.PoissonSubsampled` exactly; q = 1 is the
      Gaussian with sensitivity kΔ; q = 0 spends nothing.

    Args:
        mechanism: a :class:`~renyi.mechanisms.Gaussian` under add/remove neighbours.
        rate: the sampling rate q ∈ [0, 1] of examples.
        group_size: k ≥ 1, the most examples one person contributes.
        dataset_size: optional number of examples n; when given, k ≤ n is checked.

    Raises:
        DomainError: k < 1 or not an integer, k > dataset_size, rate ∉ [0, 1], a base that is
            not an add/remove Gaussian.

    References:
        Ganesh (2024), arXiv:2401.10294; Choquette-Choo, Ganesh, Steinke, Thakurta (2023),
        arXiv:2310.15526, Cor. 4.7.

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> from renyi.sampling.subsampling import PoissonSubsampled
        >>> m = PoissonSubsampled(Gaussian(2.0), rate=0.01).group(5)
        >>> m.unit
        'a person with up to 5 examples'
        >>> lo, eps = (1000 * m).best_epsilon(1e-5).lower, (1000 * m).epsilon(1e-5)
        >>> lo <= eps < 1.01 * lo
        True
    """

    mechanism: Mechanism
    rate: float
    group_size: int
    dataset_size: int | None = None

    neighbouring = "add_remove"

    def __post_init__(self) -> None:
        from renyi.mechanisms import Gaussian

        if not isinstance(self.mechanism, Gaussian):
            raise DomainError(
                "mechanism must be a renyi Gaussian for the group-level analysis; got "
                f"{type(self.mechanism).__name__} (use .group(k) on its guarantee for generic group privacy)",
                name="mechanism", value=type(self.mechanism).__name__)
        if self.mechanism.neighbouring != "add_remove":
            raise DomainError(
                f"mechanism.neighbouring must be 'add_remove' for Poisson subsampling; got "
                f"{self.mechanism.neighbouring!r}", name="mechanism.neighbouring", value=self.mechanism.neighbouring)
        object.__setattr__(self, "rate", PROBABILITY.check("rate", self.rate))
        object.__setattr__(self, "group_size", _check_group_size(self.group_size))
        if self.dataset_size is not None:
            n = check_int("dataset_size", self.dataset_size, minimum=1)
            object.__setattr__(self, "dataset_size", n)
            if self.group_size > n:
                raise DomainError(
                    f"group_size must be in [1, dataset_size = {n}]; got {self.group_size} "
                    "(a person cannot contribute more examples than the data set holds)",
                    name="group_size", value=self.group_size)

    @property
    def noise_multiplier(self) -> float:
        """σ/Δ: the noise standard deviation over the clipping norm of one example."""
        return float(self.mechanism.sigma / self.mechanism.sensitivity)  # type: ignore[attr-defined]

    @property
    def unit(self) -> str:
        """The privacy unit, in words (reports print it)."""
        k = self.group_size
        return f"a person with up to {k} example{'s' if k != 1 else ''}"

    @property
    def sampling(self) -> str:
        """How the input is subsampled, in words (printed by repr and reports)."""
        return (f"Poisson sampling of examples (rate {self.rate:g}); unit: {self.unit}; "
                "add/remove neighbours")

    def __repr__(self) -> str:
        return (f"PoissonSubsampledGroup({self.mechanism!r}, rate={self.rate!r}, group_size={self.group_size})"
                f" [{self.sampling}]")

    def _gaussian_k(self) -> Mechanism:
        """The unsubsampled step: the Gaussian with sensitivity kΔ (what q = 1 is)."""
        import dataclasses

        return dataclasses.replace(self.mechanism, sensitivity=self.group_size * self.mechanism.sensitivity)  # type: ignore[attr-defined, type-var]

    def _example_level(self) -> Mechanism:
        return PoissonSubsampled(self.mechanism, self.rate)

    @property
    def guarantee(self) -> Guarantee:
        """The RDP curve of one step (see the class docstring)."""
        q, k = self.rate, self.group_size
        if q == 0.0 or k == 1:
            return self._example_level().guarantee
        if q == 1.0:
            return self._gaussian_k().guarantee
        curve = _GroupCurve(k, q, self.noise_multiplier)
        return RDP(curve, eps_inf=math.inf, convex=True, label=repr(curve))

    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        # the native conversion (method="native"); the routes wrap it (see Mechanism)
        g = self.guarantee.best_epsilon(delta)
        plain = self._gaussian_k().guarantee.best_epsilon(delta)
        return _smaller(g, plain)

    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        g = self.guarantee.best_delta(epsilon)
        plain = self._gaussian_k().guarantee.best_delta(epsilon)
        return _smaller(g, plain)

    def group(self, k: int) -> PoissonSubsampledGroup:  # type: ignore[override]
        """A group of ``k`` people with up to ``group_size`` examples each: k·group_size examples."""
        k = _check_group_size(k)
        n = self.group_size * k
        return PoissonSubsampledGroup(self.mechanism, self.rate, n, self.dataset_size)

    def release(self, value: Any, rng: Any = None) -> Any:
        """``value`` must already be the sum over the Poisson sample; adds the Gaussian noise."""
        return self.mechanism.release(value, rng)


def _smaller(sub: Conversion, plain: Conversion) -> Conversion:
    """The smaller of the mixture's bound and the unsubsampled Gaussian with sensitivity kΔ
    (the mixture is dominated by it: the hockey-stick divergence is jointly convex and
    increasing in the shift)."""
    if plain.value < sub.value:
        return Conversion(plain.value, plain.witness, f"{plain.method} (unsubsampled group Gaussian: never worse)")
    return sub


def _check_group_size(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        if isinstance(k, (float, np.floating)) and float(k).is_integer() and k >= 1:
            return int(k)
        raise DomainError(f"group_size must be an integer in [1, ∞); got {k!r}", name="group_size", value=k)
    if k < 1:
        raise DomainError(f"group_size must be an integer in [1, ∞); got {k!r}", name="group_size", value=k)
    return int(k)
