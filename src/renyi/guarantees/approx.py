"""Approximate (ε, δ)-differential privacy."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.core import _logmath as lm
from renyi.guarantees import conversions as conv
from renyi.core._validation import NONNEGATIVE, ORDER, PROBABILITY_OPEN, UNIT_CLOSED_OPEN, check_int, check_real
from renyi.core import hooks
from renyi.core.errors import ConversionError, DomainError
from renyi.guarantees.neighbouring import check_neighbouring
from renyi.guarantees.base import Conversion, Guarantee, ParameterValue, _check_delta, _check_epsilon, nb_repr

if TYPE_CHECKING:  # pragma: no cover - annotations only (the modules import each other)
    from renyi.guarantees.approx_zcdp import ApproxZCDP
    from renyi.guarantees.rdp import RDP
    from renyi.guarantees.zcdp import ZCDP

__all__ = ["ApproxDP"]


@dataclass(frozen=True, slots=True)
class ApproxDP(Guarantee):
    """(ε, δ)-DP: P[M(x) ∈ S] ≤ e^ε P[M(x′) ∈ S] + δ ([BS16] Def. 18).

    Args:
        epsilon: ε ∈ [0, ∞).
        delta: δ ∈ [0, 1).
        neighbouring: the relation it is stated under, "add_remove" (default) or "replace_one".

    Examples:
        >>> total = ApproxDP(1.0, 1e-6) + ApproxDP(0.5, 1e-6)
        >>> total.epsilon, round(total.delta, 12)
        (1.5, 2e-06)
    """

    _epsilon: float
    _delta: float
    neighbouring: str

    definition = "(ε, δ)-DP"

    def __init__(self, epsilon: float, delta: float, *, neighbouring: str = "add_remove") -> None:
        object.__setattr__(self, "_epsilon", NONNEGATIVE.check("epsilon", epsilon))
        object.__setattr__(self, "_delta", UNIT_CLOSED_OPEN.check("delta", delta))
        object.__setattr__(self, "neighbouring", check_neighbouring(neighbouring))

    def __repr__(self) -> str:
        return f"ApproxDP(epsilon={self._epsilon!r}, delta={self._delta!r}{nb_repr(self)})"

    def __reduce__(self) -> Any:
        return (_make, (self._epsilon, self._delta, self.neighbouring))

    @property
    def epsilon(self) -> ParameterValue:
        """ε; also callable as the protocol method ``epsilon(delta)``."""
        return ParameterValue(self._epsilon, super(ApproxDP, self).epsilon)

    @property
    def delta(self) -> ParameterValue:
        """δ; also callable as the protocol method ``delta(epsilon)``."""
        return ParameterValue(self._delta, super(ApproxDP, self).delta)

    @property
    def params(self) -> tuple[float, float]:
        """(ε, δ)."""
        return self._epsilon, self._delta

    def rdp(self, alpha: ArrayLike) -> Any:
        """∞ for δ > 0 (an (ε, δ) guarantee bounds no Rényi divergence); F_ε for δ = 0."""
        a = ORDER.check_array("alpha", alpha)
        if self._delta == 0.0:
            return conv.pure_dp_rdp(self._epsilon, a)
        out = np.full(a.shape, math.inf)
        return float(out) if out.ndim == 0 else out

    def best_epsilon(self, delta: float) -> Conversion:
        """Smallest ε' with (ε', δ')-DP; ∞ when δ' < δ (tilted randomized response, [KOV15])."""
        delta = _check_delta(delta)
        return Conversion(conv.approx_dp_epsilon(self._epsilon, self._delta, delta), None,
                          "(ε, δ)-DP profile (KOV15, k = 1)")

    def best_delta(self, epsilon: float) -> Conversion:
        epsilon = _check_epsilon(epsilon)
        return Conversion(conv.approx_dp_delta(self._epsilon, self._delta, epsilon), None,
                          "(ε, δ)-DP profile (KOV15, k = 1)")

    def to_rdp(self) -> RDP:
        if self._delta == 0.0:
            return conv.pure_dp_to_rdp(self._epsilon)
        raise ConversionError(
            f"{self!r} has no RDP curve (δ > 0); it is δ-approximately RDP: use renyi.compose, "
            "which folds it in as approximate zCDP (BS16 Lemma 37)"
        )

    def to_zcdp(self) -> ZCDP:
        if self._delta == 0.0:
            from renyi.guarantees.zcdp import ZCDP

            return ZCDP(conv.pure_dp_to_zcdp(self._epsilon))
        raise ConversionError(f"{self!r} is not zCDP (δ > 0); see to_approx_zcdp()")

    def to_approx_zcdp(self) -> ApproxZCDP:
        """δ-approximate ε·tanh(ε/2)-zCDP ([BS16] Prop. 13 / Lemma 37, tight pure-DP constant)."""
        from renyi.guarantees.approx_zcdp import ApproxZCDP

        rho, xi, d = conv.approx_dp_to_approx_zcdp(self._epsilon, self._delta)
        return ApproxZCDP(rho=rho, xi=xi, delta=d)

    def compose(self, k: int, *, method: str = "basic", delta_prime: float | None = None) -> ApproxDP:
        """k-fold composition.

        Args:
            k: number of compositions (integer ≥ 1).
            method: ``"basic"`` (kε, kδ), ``"advanced"`` ([DRV10] Thm III.3, needs
                ``delta_prime``) or ``"optimal"`` ([KOV15] Thm 3.3, the exact k-fold profile,
                needs ``delta_prime`` = the total δ wanted).
        """
        k = check_int("k", k)
        if method == "basic":
            return ApproxDP(k * self._epsilon, min(k * self._delta, math.nextafter(1.0, 0.0)))
        if delta_prime is None:
            raise TypeError(f"method={method!r} needs delta_prime")
        if method == "advanced":
            return advanced_composition(self._epsilon, self._delta, k, delta_prime)
        if method == "optimal":
            return optimal_homogeneous_composition(self._epsilon, self._delta, k, delta_prime)
        raise ValueError(f"method must be one of 'basic', 'advanced', 'optimal'; got {method!r}")

    def group(self, k: int) -> ApproxDP:
        """(kε, δ·(e^{kε} − 1)/(e^ε − 1)) ≤ (kε, k·e^{(k−1)ε}·δ) for groups of size k."""
        k = check_int("k", k)
        if self._delta == 0.0:
            return ApproxDP(k * self._epsilon, 0.0)
        if self._epsilon == 0.0:
            d = k * self._delta
        else:
            ld = math.log(self._delta) + float(lm.log_expm1(k * self._epsilon)) - float(lm.log_expm1(self._epsilon))
            d = math.exp(ld) if ld < 0 else 1.0
        if d >= 1.0:
            raise ConversionError(f"group of size {k} makes δ ≥ 1 for {self!r}: no guarantee remains")
        return ApproxDP(k * self._epsilon, conv.round_up(d))


def _make(epsilon: float, delta: float, neighbouring: str = "add_remove") -> ApproxDP:
    # pickling: the keyword-only relation cannot be passed positionally to the class
    return ApproxDP(epsilon, delta, neighbouring=neighbouring)


# --------------------------------------------------------------------------------------
# (ε, δ)-DP composition theorems
# --------------------------------------------------------------------------------------
def advanced_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> ApproxDP:
    """k-fold adaptive composition of (ε, δ)-DP: (ε', kδ + δ')-DP with
    ε' = √(2k ln(1/δ'))·ε + kε(e^ε − 1) ([DRV10] Thm III.3 = [DR14] Thm 3.20).

    >>> round(advanced_composition(0.1, 0.0, 100, 1e-5).epsilon, 9)
    5.850235093
    """
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    delta = UNIT_CLOSED_OPEN.check("delta", delta)
    k = check_int("k", k)
    delta_prime = PROBABILITY_OPEN.check("delta_prime", delta_prime)
    # e^ε − 1 overflows for ε > 709; the formula is then far above basic composition (kε,
    # also valid at this δ), which is returned instead.
    growth = math.expm1(epsilon) if epsilon < 709.0 else math.inf
    eps = math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) * epsilon + k * epsilon * growth
    if not math.isfinite(eps):
        eps = k * epsilon
        if not math.isfinite(eps):
            raise DomainError(f"k·epsilon must be finite; got k={k!r}, epsilon={epsilon!r}", name="epsilon",
                              value=epsilon)
    total = k * delta + delta_prime
    if total >= 1.0:
        raise DomainError(f"k·delta + delta_prime must be < 1; got {total!r}")
    return ApproxDP(conv.round_up(eps), total)


def kov_delta(epsilon: float, k: int, eps_prime: float) -> float:
    """δ(ε') of the k-fold composition of ε-DP (exact: the k-fold randomized-response profile;
    [KOV15] Thm 3.3 at ε' = (k − 2i)ε), computed in log space.

    δ(ε') = Σ_ℓ C(k, ℓ)(e^{(k−ℓ)ε} − e^{ε'+ℓε})₊ / (1 + e^ε)^k.

    Args:
        epsilon: ε ∈ [0, ∞) of each run.
        k: the number of runs k ≥ 1.
        eps_prime: ε' (any real, ±∞ allowed).
    """
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    k = check_int("k", k)
    eps_prime = check_real("eps_prime", eps_prime)
    if epsilon == 0.0:
        return 0.0
    if eps_prime == -math.inf:
        return 1.0  # δ(ε′) → 1 as ε′ → −∞ (the (ℓ*) below would be +∞)
    # The summands are ℓ ~ Binomial(k, p), p = 1/(1 + e^ε), restricted to ℓ < ℓ* = (kε − ε′)/(2ε):
    # δ = P_p(L < ℓ*) − e^{ε′} P_{1−p}(L < ℓ*). Up to 2²² runs every ℓ is summed; up to 10¹⁰
    # the ℓ within 20√k of the mean kp (Hoeffding: the rest weigh at most 2e^{−800}); beyond,
    # the Chernoff bound P_p(L ≤ m) ≤ e^{−k·KL(m/k ‖ p)} (an upper bound; 2⁶² runs raised
    # numpy's "array is too big").
    log_norm = k * float(np.logaddexp(0.0, epsilon))
    star = (k * epsilon - eps_prime) / (2.0 * epsilon)  # ℓ < star are the positive summands
    if not star > 0.0:
        return 0.0
    top = min(k, math.ceil(star) - 1)  # the largest ℓ < star
    p = math.exp(-float(np.logaddexp(0.0, epsilon)))  # 1/(1 + e^ε)
    if k > 10**10:
        t = (top - k * p) / k  # m − p, m = top/k: the relative deviation, formed before dividing
        if t >= 0.0:
            return 1.0
        m = top / k
        # KL(m ‖ p) = m·log1p(t/p) + (1 − m)·log1p(−t/(1 − p)): the first-order terms cancel
        # to t²/(p(1 − p)); log1p keeps each accurate, and 1e-6 of it is given away for the rest
        kl = (m * math.log1p(t / p) if m > 0 else 0.0) + (1.0 - m) * math.log1p(-t / (1.0 - p))
        return min(1.0, math.exp(-k * kl * (1.0 - 1e-6)))
    lo, tail = 0, 0.0
    if k > 2**22:
        w = 20.0 * math.sqrt(k)
        lo = max(0, math.floor(k * p - w))
        top = min(top, math.ceil(k * p + w))
        tail = 2.0 * math.exp(-800.0)
        if top < lo:
            return tail
    ell = np.arange(lo, top + 1, dtype=np.float64)
    a = (k - ell) * epsilon
    b = eps_prime + ell * epsilon
    pos = a > b
    if not np.any(pos):
        return tail
    terms = lm.log_comb(k, ell[pos]) + lm.log_sub(a[pos], b[pos])
    ld = float(lm.logsumexp(terms)) - log_norm
    # the log-space terms are differences of numbers as large as k(ε + 1) + log k!: their
    # rounding is covered by a relative margin
    err = 16.0 * 2.0**-52 * (k * (epsilon + 1.0) + abs(eps_prime) + float(lm.log_comb(k, k // 2)) + k)
    if not ld + err < 0.0:
        return 1.0  # the margin of a huge kε reaches δ ≤ 1 itself (exp overflowed: 'math range error')
    return min(1.0, math.exp(ld + err) + tail)


def optimal_homogeneous_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> ApproxDP:
    """The smallest ε' such that k-fold (ε, δ)-DP is (ε', δ')-DP, δ' the total δ ([KOV15] Thm 3.3).

    The (ε, δ) dominating pair gives 1 − δ' = (1 − δ)^k (1 − δ_RR(ε')) exactly, with δ_RR the
    k-fold randomized-response profile (:func:`kov_delta`). This is optimal, so no valid bound
    is smaller; the returned ε' is the upper end of a bisection.

    >>> round(optimal_homogeneous_composition(0.1, 0.0, 100, 1e-5).epsilon, 6)
    4.306791
    """
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    delta = UNIT_CLOSED_OPEN.check("delta", delta)
    k = check_int("k", k)
    delta_prime = PROBABILITY_OPEN.check("delta_prime", delta_prime)
    keep = k * math.log1p(-delta)  # log (1−δ)^k
    log_ratio = math.log1p(-delta_prime) - keep
    # log_ratio ≥ 0 means (1 − δ)^k ≤ 1 − δ′: no ε′ works (and expm1 would overflow when large)
    budget = -math.expm1(log_ratio) if log_ratio < 0.0 else 0.0  # δ_RR allowed
    if budget <= 0.0:
        raise DomainError(
            f"delta_prime must exceed 1 − (1 − delta)^k = {-math.expm1(keep)!r}; got {delta_prime!r}"
        )
    lo, hi = 0.0, k * epsilon
    if kov_delta(epsilon, k, 0.0) <= budget:
        return ApproxDP(0.0, delta_prime)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if kov_delta(epsilon, k, mid) <= budget:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-13 * max(1.0, hi):
            break
    return ApproxDP(hi, delta_prime)


def bs16_cor39(epsilons: list[float], deltas: list[float], delta_prime: float) -> ApproxDP:
    """[BS16] Cor. 39: (½‖ε‖² + √(2 log(√(π/2)‖ε‖/δ'))·‖ε‖, δ' + ‖δ‖₁)-DP."""
    e = np.asarray(epsilons, dtype=np.float64)
    norm = float(np.sqrt(np.sum(e**2)))
    delta_prime = PROBABILITY_OPEN.check("delta_prime", delta_prime)
    inner = math.log(math.sqrt(math.pi / 2.0) * norm / delta_prime) if norm > 0 else 0.0
    eps = 0.5 * norm**2 + math.sqrt(2.0 * max(inner, 0.0)) * norm
    return ApproxDP(conv.round_up(eps), min(delta_prime + math.fsum(deltas), math.nextafter(1.0, 0.0)))


hooks.provide("ApproxDP", ApproxDP)  # named by Guarantee.to_approx_dp (see renyi.core.hooks)
