"""Dominating pairs as privacy profiles: δ_{P‖Q}(ε) for one ordered pair, on all of ℝ.

A pair (P, Q) of output distributions enters the PLD engine only through its *privacy
profile* δ(ε) = sup_S P(S) − e^ε Q(S) = E_P[(1 − e^{ε−Z})₊] (Z = log dP/dQ, +∞ where Q has no
mass), evaluated at every real ε (negative ε are needed to compose), or, for finite supports,
through the law of Z itself. Everything here is exact: no bound is taken, so that the only
approximations of the engine are the ones it accounts for.

For ε < 0 a profile known on [0, ∞) is extended by complementation,
δ_{P‖Q}(ε) = 1 − e^ε + e^ε δ_{Q‖P}(−ε) (take complements of S in the supremum).

Poisson subsampling with rate q turns a pair (P₀, Q₀) of the base mechanism into
((1−q)Q₀ + qP₀, Q₀) for a removal and (Q₀, (1−q)Q₀ + qP₀) for an addition (Zhu, Dong & Wang
2022, Thm 11); both profiles are exact transforms of the base profiles:

* remove: δ(ε) = q·δ₀(log(1 + (e^ε − 1)/q)) for ε > log(1−q), and 1 − e^ε below;
* add: δ(ε) = (1 − (1−q)e^ε)·δ₀′(ε + log q − log(1 − (1−q)e^ε)) for ε < −log(1−q), and 0
  above, with δ₀′ the profile of the reversed base pair (Q₀, P₀).

Sampling without replacement (replace-one neighbours) uses the same mixture pair for the
base's replace-one pair (Zhu, Dong & Wang 2022, Thm 12); both orders are accounted.

A person with k examples under Poisson sampling of examples (``PoissonSubsampled(Gaussian(σ),
q).group(k)``) is the pair (Σ_j Bin(k, q)(j) N(j, σ²), N(0, σ²)) and its reverse
(:class:`MixtureProfile`; Ganesh 2024, arXiv:2401.10294).

References:
    Zhu, Dong, Wang (2022), Optimal Accounting of Differential Privacy via Characteristic
    Function, AISTATS, §5 (dominating pairs under subsampling).
    Kairouz, Oh, Viswanath (2015), The Composition Theorem for Differential Privacy, ICML
    (the dominating pairs of ε-DP and (ε, δ)-DP).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from renyi.core._lazy import special

from renyi.core._logmath import erfcx_gap, log1mexp
from renyi.core.errors import ConversionError

__all__ = ["Profile", "LossProfile", "AtomProfile", "PoissonProfile", "ReplaceOneGaussianProfile", "MixtureProfile",
           "pairs_for", "supports"]


def _log1mexp(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(log1mexp(np.minimum(x, 0.0)), dtype=np.float64)


class Profile(abc.ABC):
    """The privacy profile of one ordered pair (P, Q), at every real ε."""

    #: P(Z = +∞): the mass of P where Q has none (δ(ε) → inf_mass as ε → ∞).
    inf_mass: float

    @abc.abstractmethod
    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        """log δ_{P‖Q}(ε) for real ε (array in, array out; −∞ where δ = 0)."""

    @abc.abstractmethod
    def dual(self) -> Profile:
        """The profile of the reversed pair (Q, P)."""

    def sup_loss(self) -> float:
        """ess sup of the finite part of Z under P (+∞ if unbounded)."""
        return math.inf

    def atoms(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The finite part of the law of Z under P as (values, masses), if it is discrete."""
        return None

    def symmetric(self) -> bool:
        """True when the reversed pair has the same profile."""
        return False


def _extend_negative(pos: Any, dual_pos: Any, eps: np.ndarray) -> np.ndarray:
    """log δ on ℝ from log δ_{P‖Q} and log δ_{Q‖P} known on [0, ∞) (complementation)."""
    out = np.empty(eps.shape)
    neg = eps < 0
    if (~neg).any():
        out[~neg] = pos(eps[~neg])
    if neg.any():
        e = eps[neg]
        ld = np.asarray(dual_pos(-e), dtype=np.float64)
        # 1 − e^ε(1 − δ′(−ε)), all in logs
        out[neg] = _log1mexp(e + _log1mexp(ld))
    return out


@dataclass(frozen=True, eq=False)
class LossProfile(Profile):
    """The profile of a continuous :class:`renyi.plrv.PrivacyLoss` (Gaussian, Laplace)."""

    loss: Any
    reversed_: bool = False
    inf_mass: float = 0.0

    def _pos(self, eps: np.ndarray) -> np.ndarray:
        pl = self.loss.dual() if self.reversed_ else self.loss
        return np.asarray(pl._log_delta_one(eps), dtype=np.float64)

    def _dual_pos(self, eps: np.ndarray) -> np.ndarray:
        pl = self.loss if self.reversed_ else self.loss.dual()
        return np.asarray(pl._log_delta_one(eps), dtype=np.float64)

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        return _extend_negative(self._pos, self._dual_pos, np.asarray(eps, dtype=np.float64))

    def dual(self) -> Profile:
        if self.symmetric():
            return self
        return LossProfile(self.loss, not self.reversed_)

    def sup_loss(self) -> float:
        pl = self.loss.dual() if self.reversed_ else self.loss
        return float(pl.ess_sup())

    def symmetric(self) -> bool:
        return self.loss.dual() is self.loss


@dataclass(frozen=True, eq=False)
class AtomProfile(Profile):
    """A pair with finitely many outcomes, given by the law of Z under P and under Q.

    Args:
        values, masses: the finite values of Z = log p/q under P and their P-masses.
        inf_mass: P(Z = +∞).
        dual_values, dual_masses, dual_inf: the same for the reversed pair (Z′ = −Z under Q).
    """

    values: np.ndarray
    masses: np.ndarray
    inf_mass: float
    dual_values: np.ndarray
    dual_masses: np.ndarray
    dual_inf: float

    @classmethod
    def from_loss(cls, loss: Any) -> AtomProfile:
        """From a :class:`renyi.plrv.DiscretePrivacyLoss` (its law and its dual's)."""
        v, p = np.asarray(loss.values, float), np.asarray(loss.probs, float)
        dv, dp = np.asarray(loss.dual_values, float), np.asarray(loss.dual_probs, float)
        return cls(v[np.isfinite(v)], p[np.isfinite(v)], float(p[np.isinf(v)].sum()),
                   dv[np.isfinite(dv)], dp[np.isfinite(dv)], float(dp[np.isinf(dv)].sum()))

    @classmethod
    def from_outcomes(cls, p: np.ndarray, q: np.ndarray) -> AtomProfile:
        """From two probability vectors over the same finite outcome set."""
        p, q = np.asarray(p, float), np.asarray(q, float)
        both = (p > 0) & (q > 0)
        z = np.log(p[both]) - np.log(q[both])
        return cls(z, p[both], float(p[(p > 0) & (q == 0)].sum()),
                   -z, q[both], float(q[(q > 0) & (p == 0)].sum()))

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=np.float64)
        out = np.full(eps.shape, -np.inf)
        lp = np.log(self.masses)
        flat = eps.reshape(-1)
        res = np.empty(flat.size)
        for lo in range(0, flat.size, 4096):
            e = flat[lo:lo + 4096, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = lp[None, :] + _log1mexp(np.minimum(e - self.values[None, :], 0.0))
                terms = np.where(self.values[None, :] > e, terms, -np.inf)
                res[lo:lo + 4096] = special.logsumexp(terms, axis=1) if self.values.size else -np.inf
        out = res.reshape(eps.shape)
        if self.inf_mass > 0:
            out = np.logaddexp(out, math.log(self.inf_mass))
        return out

    def dual(self) -> Profile:
        return AtomProfile(self.dual_values, self.dual_masses, self.dual_inf,
                           self.values, self.masses, self.inf_mass)

    def sup_loss(self) -> float:
        return float(self.values.max()) if self.values.size else -math.inf

    def atoms(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self.values, self.masses

    def symmetric(self) -> bool:
        a = np.sort(np.round(self.values, 12))
        b = np.sort(np.round(self.dual_values, 12))
        return (a.shape == b.shape and bool(np.allclose(a, b, atol=1e-12))
                and bool(np.allclose(np.sort(self.masses), np.sort(self.dual_masses), rtol=1e-12, atol=0))
                and self.inf_mass == self.dual_inf)

    def subsample(self, q: float, remove: bool) -> AtomProfile:
        """The atoms of the Poisson-subsampled pair (see the module docstring)."""
        # outcome classes of the base pair: (P0-mass, Q0-mass) per loss value, plus the
        # outcomes only P0 charges (inf_mass) and only Q0 charges (dual_inf).
        p0 = np.concatenate([self.masses, [self.inf_mass], [0.0]])
        q0 = np.concatenate([self.masses * np.exp(-self.values), [0.0], [self.dual_inf]])
        mix = (1.0 - q) * q0 + q * p0
        return AtomProfile.from_outcomes(mix, q0) if remove else AtomProfile.from_outcomes(q0, mix)


def _log1p_ratio(e: np.ndarray, q: float) -> np.ndarray:
    """log(1 + (e^ε − 1)/q) for ε > log(1 − q), without overflow.

    (e^ε − 1)/q overflows for a tiny q (q = 5e-324 at ε ≳ 1e-16): the inf sent the base
    profile to δ = 0, so the remove pair lost the mass q·δ_base of every step (a PLD ε of 1e-7
    where the truth is ≈ 1e32; issue #26). Where the ratio is finite log1p is used as before;
    elsewhere log(1 + x) = log x + log1p(1/x) with log x = log(e^ε − 1) − log q in logs.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.expm1(e) / q
        out = np.log1p(ratio)
        big = ~np.isfinite(ratio) & (e > 0.0)
        if big.any():
            eb = e[big]
            # log(e^ε − 1) = ε + log(1 − e^{−ε}), exact in logs for every ε > 0
            lx = eb + np.asarray(log1mexp(-eb), dtype=np.float64) - math.log(q)
            out[big] = lx + np.log1p(np.exp(-lx))
    return np.asarray(out, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class PoissonProfile(Profile):
    """The remove (or add) pair of the Poisson-subsampled base pair, rate q ∈ (0, 1)."""

    base: Profile
    q: float
    remove: bool = True

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=np.float64)
        q = self.q
        l1q = math.log1p(-q)
        out = np.full(eps.shape, -np.inf)
        if self.remove:
            low = eps <= l1q
            with np.errstate(divide="ignore", invalid="ignore"):
                out[low] = _log1mexp(eps[low])
                e = eps[~low]
                out[~low] = math.log(q) + self.base.log_delta(_log1p_ratio(e, q))
            return out
        hi = eps >= -l1q
        e = eps[~hi]
        with np.errstate(divide="ignore", invalid="ignore"):
            lw = _log1mexp(e + l1q)  # log(1 − (1−q)e^ε)
            arg = e + math.log(q) - lw
            out[~hi] = lw + self.base.dual().log_delta(arg)
        return out

    def dual(self) -> Profile:
        return PoissonProfile(self.base, self.q, not self.remove)

    def sup_loss(self) -> float:
        if self.remove:
            s = self.base.sup_loss()
            return math.log1p(self.q * math.expm1(s)) if math.isfinite(s) else math.inf
        # The add pair's loss is −log(1 − q + q·e^L), L = log p₀/q₀ under Q₀: largest at the
        # smallest L, which is −(ess sup of the reversed base pair's loss), or −∞ where Q₀ has
        # mass that P₀ has not. −log(1 − q) alone is 10⁴× too wide for a subsampled Laplace of
        # scale 10⁴ (its support set the grid: 1.3 million points a step; issue #26).
        d = self.base.dual()
        s = d.sup_loss()
        if math.isfinite(s) and not float(getattr(d, "inf_mass", 0.0)) > 0.0:
            return -math.log1p(self.q * math.expm1(-s))
        return -math.log1p(-self.q)

    @property
    def inf_mass(self) -> float:  # type: ignore[override]
        return self.q * self.base.inf_mass if self.remove else 0.0


def _log_delta_replace_one(eps: np.ndarray, mu: float, q: float) -> np.ndarray:
    """log δ(ε), ε ≥ 0, of P = (1−q)N(0, 1) + qN(μ, 1) against Q = (1−q)N(0, 1) + qN(−μ, 1).

    The likelihood ratio ((1−q) + c·t)/((1−q) + c/t), c = qe^{−μ²/2}, t = e^{μx}, increases in
    x, so δ(ε) = P(X > x) − e^ε Q(X > x) at the x where it equals e^ε: t is the positive root
    of c·t² − (1−q)(e^ε − 1)·t − c·e^ε = 0 (computed in logs). Written with
    Φ̄(y) = ½e^{−y²/2}erfcx(y/√2) and the equation of the root, the three tail terms become two
    positive ones, with no cancellation left:

        δ(ε) = ½e^{−x²/2}·[c·t·(E(u − d) − E(u)) + e^ε(c/t)·(E(u) − E(u + d))],

    u = x/√2, d = μ/√2, E = erfcx (differences by :func:`renyi._logmath.erfcx_gap`). Against
    mpmath at 60 digits the error of log δ is below 10⁻¹¹ (tested).
    """
    la = math.log1p(-q)
    lc = math.log(q) - 0.5 * mu * mu
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        em1 = np.where(eps > 30.0, eps + np.log1p(-np.exp(-eps)), np.log(np.expm1(eps)))  # log(e^ε − 1)
        l_a = la + em1
        l_b = math.log(4.0) + 2.0 * lc + eps
        l_disc = 0.5 * np.logaddexp(2.0 * l_a, l_b)
        lt = np.logaddexp(l_a, l_disc) - math.log(2.0) - lc
        lt = np.where(eps == 0.0, 0.0, lt)  # at ε = 0 the root is t = 1 (x = 0)
        x = lt / mu
        u = x / math.sqrt(2.0)
        d = mu / math.sqrt(2.0)
        g1 = erfcx_gap(u - d, d)
        g2 = erfcx_gap(u, d)
        inner = np.logaddexp(lc + lt + np.log(g1), eps + lc - lt + np.log(g2))
        out = -0.5 * x * x - math.log(2.0) + inner
    return np.asarray(np.where(np.isnan(out), -np.inf, out), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class ReplaceOneGaussianProfile(Profile):
    """Poisson subsampling (rate q) of a Gaussian with μ = Δ/σ under replace-one neighbours:
    the pair (1−q)N(0, 1) + qN(μ, 1) against (1−q)N(0, 1) + qN(−μ, 1) (Lebeda, Regehr, Kamath &
    Steinke 2024). The replaced record's clipped contribution g becomes g′; a record not in
    the sample leaves the output alone, so the outputs are (1−q)N(s, σ²) + qN(s + g, σ²) against
    the same with g′, ‖g‖, ‖g′‖ ≤ Δ; antipodal g′ = −g of full norm is the worst case (tested
    against every 2-D configuration sampled, tests/test_pld_replace_one.py). Symmetric (x ↦ −x
    swaps P and Q), so one direction is composed. Group privacy of two — the route before —
    was a median 2.8× above it (issue #26).
    """

    mu: float
    q: float
    inf_mass: float = 0.0

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        def pos(e: np.ndarray) -> np.ndarray:
            return _log_delta_replace_one(np.asarray(e, dtype=np.float64), self.mu, self.q)

        return _extend_negative(pos, pos, np.asarray(eps, dtype=np.float64))

    def dual(self) -> Profile:
        return self

    def symmetric(self) -> bool:
        return True


@dataclass(frozen=True, eq=False)
class MixtureProfile(Profile):
    """The remove (or add) pair of a person with k examples under Poisson sampling of examples:
    (Σ_j Bin(k, q)(j) N(j, σ²), N(0, σ²)) and its reverse, 0 < q < 1, k ≥ 2 (Ganesh 2024).

    The privacy loss is monotone in the output, so each profile is a sum of Gaussian profiles
    at the one root of the loss (see :mod:`renyi.sampling._group_gaussian`, which also
    explains the components moved to the +∞ outcome).
    """

    mix: Any
    remove: bool = True

    @property
    def inf_mass(self) -> float:  # type: ignore[override]
        return float(self.mix.drop) if self.remove else 0.0

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=np.float64)
        f = self.mix.log_delta_remove if self.remove else self.mix.log_delta_add
        return np.asarray(f(eps), dtype=np.float64)

    def dual(self) -> Profile:
        return MixtureProfile(self.mix, not self.remove)

    def sup_loss(self) -> float:
        return math.inf if self.remove else float(self.mix.sup_loss_add())


# ----------------------------------------------------------------------------------------------
# mechanism → dominating pairs
# ----------------------------------------------------------------------------------------------
def _gaussian(mu: float) -> Profile:
    from renyi.divergences.plrv import GaussianPrivacyLoss

    if mu == 0.0:  # μ = 0 (e.g. GDP(0)): P = Q, the loss is 0 surely
        return AtomProfile(np.array([0.0]), np.array([1.0]), 0.0, np.array([0.0]), np.array([1.0]), 0.0)
    return LossProfile(GaussianPrivacyLoss(mu * mu / 2.0))


def _rr_pair(eps: float, delta: float = 0.0) -> Profile:
    """The dominating pair of (ε, δ)-DP ([KOV15]): outcomes (+∞ w.p. δ, ε, −ε, −∞ w.p. δ)."""
    a = (1.0 - delta) * special.expit(eps)
    b = (1.0 - delta) * special.expit(-eps)
    return AtomProfile.from_outcomes(np.array([delta, a, b, 0.0]), np.array([0.0, b, a, delta]))


def _base_pair(mech: Any, neighbouring: str) -> Profile:
    """The (symmetric or remove-direction) pair of an unsubsampled mechanism or guarantee."""
    from renyi import mechanisms as M
    from renyi.guarantees import GDP, ApproxDP, PureDP

    if isinstance(mech, GDP):
        return _gaussian(float(mech.mu))
    if isinstance(mech, PureDP):
        return _rr_pair(float(mech._epsilon))
    if isinstance(mech, ApproxDP):
        return _rr_pair(float(mech._epsilon), float(mech._delta))
    if not isinstance(mech, M.Mechanism):
        raise ConversionError(f"no privacy loss distribution is known for {type(mech).__name__}")
    # A replace-one pair of an add/remove mechanism: one removal and one addition, so the
    # shift doubles for location mechanisms (triangle inequality); other mechanisms are not
    # covered.
    scale = 2.0 if (neighbouring == "replace_one" and mech.neighbouring == "add_remove") else 1.0
    if neighbouring == "add_remove" and mech.neighbouring != "add_remove":
        raise ConversionError(f"{type(mech).__name__} is stated under replace-one neighbours; "
                              "Poisson subsampling needs add/remove")
    if isinstance(mech, M.Gaussian):
        return _gaussian(scale * mech.sensitivity / mech.sigma)
    if isinstance(mech, M.Laplace):
        from renyi.divergences.plrv import LaplacePrivacyLoss

        return LossProfile(LaplacePrivacyLoss(scale * mech.sensitivity / mech.scale))
    if isinstance(mech, M.RandomizedResponse):
        return AtomProfile.from_loss(mech.privacy_loss())
    if isinstance(mech, (M.DiscreteGaussian, M.DiscreteLaplace)):
        if scale != 1.0:
            import dataclasses

            mech = dataclasses.replace(mech, sensitivity=2 * mech.sensitivity)
        return AtomProfile.from_loss(mech.privacy_loss())
    if isinstance(mech, M.ExponentialMechanism):
        # ε-DP; the bounded-range analysis has no single dominating pair, so the pure-DP pair
        # (randomized response) is used, which dominates every ε-DP mechanism ([KOV15]).
        return _rr_pair(float(mech._epsilon) * scale)
    raise ConversionError(f"no privacy loss distribution is known for {type(mech).__name__}")


#: Pairs of mechanisms defined in modules that build on this one (random allocation, in
#: :mod:`renyi.accounting.pld._allocation`): (pairs, supports) functions that answer None for a
#: mechanism they do not know, registered when that module is imported (the package imports
#: it), so that this module imports none of them.
EXTENSIONS: list[tuple[Callable[[Any], tuple[Profile, Profile] | None], Callable[[Any], bool | None]]] = []


def pairs_for(mech: Any) -> tuple[Profile, Profile]:
    """The two ordered dominating pairs (remove, add) of one run of ``mech``.

    Symmetric mechanisms return the same profile twice. Raises
    :class:`~renyi.errors.ConversionError` for mechanisms without a known pair.
    """
    from renyi.sampling.subsampling import (PoissonSubsampled, PoissonSubsampledGroup, PoissonSubsampledReplaceOne,
                                            SubsampledWithoutReplacement)

    for pairs, _ in EXTENSIONS:
        found = pairs(mech)
        if found is not None:
            return found
    if isinstance(mech, PoissonSubsampledGroup):
        q, k = float(mech.rate), int(mech.group_size)
        if k == 1 or q in (0.0, 1.0):
            # the example-level step, the Gaussian with sensitivity kΔ, or nothing spent
            return pairs_for(mech._example_level() if k == 1 or q == 0.0 else mech._gaussian_k())
        from renyi.sampling import _group_gaussian

        mix = _group_gaussian.mixture(k, q, mech.noise_multiplier)
        return MixtureProfile(mix, True), MixtureProfile(mix, False)
    if isinstance(mech, PoissonSubsampledReplaceOne):
        rate = float(mech.rate)
        mu = float(mech.mechanism.sensitivity / mech.mechanism.sigma)  # type: ignore[attr-defined]
        if rate == 0.0 or mu == 0.0:
            none = AtomProfile(np.array([0.0]), np.array([1.0]), 0.0, np.array([0.0]), np.array([1.0]), 0.0)
            return none, none
        if rate == 1.0:  # no subsampling: the Gaussian with the replace-one shift 2μ
            shifted = _gaussian(2.0 * mu)
            return shifted, shifted
        pair = ReplaceOneGaussianProfile(mu, rate)
        return pair, pair
    if isinstance(mech, PoissonSubsampled):
        base = _base_pair(mech.mechanism, "add_remove")
        q = float(mech.rate)
        if q == 1.0:
            return base, base.dual()
        if q == 0.0:
            zero = AtomProfile(np.array([0.0]), np.array([1.0]), 0.0, np.array([0.0]), np.array([1.0]), 0.0)
            return zero, zero
        if isinstance(base, AtomProfile):
            return base.subsample(q, True), base.subsample(q, False)
        return PoissonProfile(base, q, True), PoissonProfile(base, q, False)
    if isinstance(mech, SubsampledWithoutReplacement):
        base = _base_pair(mech.mechanism, "replace_one")
        g = float(mech.rate)
        if g == 1.0:
            return base, base.dual()
        if g == 0.0:
            zero = AtomProfile(np.array([0.0]), np.array([1.0]), 0.0, np.array([0.0]), np.array([1.0]), 0.0)
            return zero, zero
        # ((1−γ)Q₀ + γP₀, Q₀) and its reverse: the max over both orders is accounted.
        if isinstance(base, AtomProfile):
            return base.subsample(g, True), base.subsample(g, False)
        return PoissonProfile(base, g, True), PoissonProfile(base, g, False)
    p = _base_pair(mech, getattr(mech, "neighbouring", "add_remove"))
    return p, p.dual()


def supports(mech: Any) -> bool:
    """True when a dominating pair is known for ``mech`` (see :func:`pairs_for`)."""
    for _, known in EXTENSIONS:
        answer = known(mech)  # without building the pairs
        if answer is not None:
            return answer
    try:
        pairs_for(mech)
    except (ConversionError, TypeError, ValueError):
        return False
    return True
