"""Randomized response, binary and k-ary ([Mir17] Table II; [BS16] proof of Prop. 19)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from renyi.guarantees import conversions as conv
from renyi.core._values import CurveValue
from renyi.core._validation import NONNEGATIVE, PROBABILITY_OPEN, Interval, check_int
from renyi.guarantees import RDP
from renyi.guarantees.base import Conversion, ParameterValue
from renyi.core.errors import DomainError
from renyi.mechanisms.base import Mechanism

__all__ = ["RandomizedResponse", "randomized_response_rdp"]

_PROFILE = "exact randomized-response profile (finite support)"
_EPSILON = Interval(0.0, math.inf, lo_closed=True)
#: Truth probabilities are realised as n/2**53 (see ``RandomizedResponse.release``).
_BITS = 53


def _phi(x: np.ndarray) -> np.ndarray:
    """sinh²(x/2)·4 = 2(cosh x − 1) ≥ 0 without cancellation."""
    return 4.0 * np.sinh(x / 2.0) ** 2


def randomized_response_rdp(epsilon: float, k: int, alpha: ArrayLike) -> np.ndarray | float:
    """Exact D_α between the outputs of k-ary randomized response on two different inputs.

    With truth probability e^ε/(e^ε + k − 1) and every other value 1/(e^ε + k − 1)
    ([Mir17] Table II, replace-one; k = 2 gives F_ε of [BS16], proof of Prop. 19):

        (α−1)·D_α = log(e^{αε} + e^{−(α−1)ε} + k − 2) − log(e^ε + k − 1).

    Near α = 1 this is evaluated as log1p(r) with
    r = [4 sinh²(hε/2)·e^{−ε} + (1 − e^{−ε})·expm1(hε)] / (1 + (k−1)e^{−ε}), h = α − 1,
    a sum of non-negative terms (no cancellation, no overflow); for large hε the
    logsumexp form is used. α = 1 gives KL = ε(e^ε − 1)/(e^ε + k − 1), α = ∞ gives ε.

    Args:
        epsilon: ε ≥ 0.
        k: number of categories (≥ 2).
        alpha: orders in [1, ∞] (vectorized).
    """
    a = np.asarray(alpha, dtype=np.float64)
    eps = float(epsilon)
    h = np.where(np.isinf(a), 1.0, a - 1.0)
    x = h * eps
    em = math.exp(-eps)
    denom = 1.0 + (k - 1) * em
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        small = x < 30.0
        xs = np.where(small, x, 0.0)
        r = (_phi(xs) * em + (-math.expm1(-eps)) * np.expm1(xs)) / denom
        k_small = np.log1p(r)
        terms = [a * eps, -h * eps]
        if k > 2:
            terms.append(np.full(a.shape, math.log(k - 2)))
        big = np.logaddexp.reduce(np.broadcast_arrays(*terms), axis=0) - np.logaddexp(eps, math.log(k - 1))
        cgf = np.where(small, k_small, big)
        out = cgf / np.where(h > 0, h, 1.0)
    kl = eps * (-math.expm1(-eps)) / denom  # ε(e^ε − 1)/(e^ε + k − 1)
    out = np.where(h == 0.0, kl, out)
    out = np.where(np.isinf(a), eps, out)
    out = np.clip(out, 0.0, eps)
    return out[()] if out.ndim == 0 else out


class _RRCurve(CurveValue):
    __slots__ = ("eps", "k")

    def __init__(self, eps: float, k: int) -> None:
        self.eps, self.k = eps, k

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return np.asarray(randomized_response_rdp(self.eps, self.k, alpha), dtype=np.float64)

    def __repr__(self) -> str:
        return f"RR(ε={self.eps:g}, k={self.k})"


@dataclass(frozen=True, slots=True)
class RandomizedResponse(Mechanism):
    """k-ary randomized response: report the true category with probability e^ε/(e^ε + k − 1),
    otherwise a uniformly random *other* category.

    Each individual's response is a separate release of that individual's value, so the
    neighbouring relation is replace-one (the value changes; [Mir17] Table II). Guarantees:
    pure ε-DP; the exact RDP curve ([Mir17] Table II; equal to F_ε ([BS16] proof of Prop. 19) for k = 2, which
    is the worst case of all ε-DP mechanisms); the exact (ε′, δ) profile
    δ(ε′) = (e^ε − e^{ε′})₊/(e^ε + k − 1) of the worst pair (finite support).

    Args:
        epsilon: ε ∈ [0, ∞).
        k: number of categories, an integer ≥ 2.

    Examples:
        >>> rr = RandomizedResponse(epsilon=math.log(3))
        >>> round(rr.truth_probability, 12)
        0.75
        >>> round(float(rr.rdp(2.0)), 12)
        0.847297860387
        >>> rr.epsilon
        1.0986122886681098
    """

    _epsilon: float
    k: int = 2

    neighbouring: ClassVar[str] = "replace_one"  # type: ignore[misc]

    def __init__(self, epsilon: float, k: int = 2) -> None:
        eps = _EPSILON.check("epsilon", epsilon)
        object.__setattr__(self, "_epsilon", eps)
        object.__setattr__(self, "k", check_int("k", k, minimum=2))

    def __repr__(self) -> str:
        return f"RandomizedResponse(epsilon={self._epsilon!r}, k={self.k})"

    def __reduce__(self) -> tuple[type[RandomizedResponse], tuple[float, int]]:
        return (RandomizedResponse, (self._epsilon, self.k))

    @classmethod
    def from_truth_probability(cls, p: float, k: int = 2) -> RandomizedResponse:
        """RR that reports the truth with probability ``p`` ∈ [1/k, 1): ε = log(p(k−1)/(1−p))."""
        k = check_int("k", k, minimum=2)
        dom = Interval(1.0 / k, 1.0, lo_closed=True)
        p = dom.check("p", p)
        eps = math.log(p) + math.log(k - 1) - math.log1p(-p)
        # round up: the stated ε must never be below the ε of the stated p
        return cls(max(0.0, conv.round_up(eps)), k)

    @property
    def epsilon(self) -> ParameterValue:
        """ε; also callable as the protocol method ``epsilon(delta)``."""
        return ParameterValue(self._epsilon, self._epsilon_at)

    @property
    def truth_probability(self) -> float:
        """e^ε/(e^ε + k − 1), the nominal probability of reporting the true category."""
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-self._epsilon))

    def privacy_loss(self) -> Any:
        """The exact loss on the worst pair: the output distributions for two different true
        categories (finite support; for k = 2 this is Z = ±ε)."""
        from renyi.divergences.plrv import DiscretePrivacyLoss

        p_keep = self.truth_probability
        other = (1.0 - p_keep) / (self.k - 1)
        p = np.full(self.k, other)
        q = np.full(self.k, other)
        p[0], q[1] = p_keep, p_keep
        return DiscretePrivacyLoss.from_distributions(p, q)

    @property
    def guarantee(self) -> RDP:
        eps, k = self._epsilon, self.k
        rho = conv.pure_dp_to_zcdp(eps)
        if k > 2:
            # k-RR is ε-DP, hence ε·tanh(ε/2)-zCDP; the grid bound on sup ε(α)/α may be tighter.
            xi, rho_grid = conv.rdp_to_zcdp(RDP(_RRCurve(eps, k), eps_inf=eps))
            rho = min(rho, rho_grid) if xi == 0.0 else rho
        return RDP(_RRCurve(eps, k), eps_inf=eps, zcdp=(0.0, rho), convex=True,
                   label=f"RandomizedResponse(epsilon={eps:g}, k={k})")


    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        """Exact δ(ε′) = (e^ε − e^{ε′})₊/(e^ε + k − 1) = −expm1(ε′ − ε)/(1 + (k−1)e^{−ε})."""
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_delta(epsilon, method)
        e1 = NONNEGATIVE.check("epsilon", epsilon)
        eps = self._epsilon
        if e1 >= eps:
            return Conversion(0.0, None, _PROFILE)
        d = -math.expm1(e1 - eps) / (1.0 + (self.k - 1) * math.exp(-eps))
        return Conversion(min(1.0, conv.round_up(d)), None, _PROFILE)

    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        """Exact ε(δ) = max(0, ε + log(1 − δ(1 + (k−1)e^{−ε})))."""
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_epsilon(delta, method)
        delta = PROBABILITY_OPEN.check("delta", delta)
        eps = self._epsilon
        y = delta * (1.0 + (self.k - 1) * math.exp(-eps))
        if y >= 1.0:
            return Conversion(0.0, None, _PROFILE)
        return Conversion(max(0.0, conv.round_up(eps + math.log1p(-y))), None, _PROFILE)

    @property
    def _keep_numerator(self) -> int:
        # n/2**53 ≤ the nominal truth probability, rounded *down* by a margin of 4 units
        # (the float computation is accurate to a few ulps), so the realised ε is below ε.
        n = math.floor(self.truth_probability * 2**_BITS) - 4
        result: int = max(n, math.ceil(2**_BITS / self.k))
        return result

    def release(self, value: Any, rng: Any = None) -> Any:
        """Randomize categorical values in {0, …, k−1} (bools allowed for k = 2).

        The truth is kept with probability n/2⁵³ where n is the nominal truth probability
        rounded *down* (so the realised ε never exceeds ``epsilon``); the decision and the
        replacement category are drawn with exact uniform integers.

        Args:
            value: a category or an array of categories (each is one individual's value).
            rng: ``None`` for secure randomness, or a numpy Generator (not secure).

        Returns:
            The randomized category (same type for scalars; same shape, int64 or bool,
            for arrays).
        """
        from renyi.mechanisms.samplers import resolve_rng, uniform_int

        gen = resolve_rng(rng)
        is_bool = isinstance(value, (bool, np.bool_)) or (np.asarray(value).dtype == np.bool_)
        if is_bool and self.k != 2:
            raise TypeError(f"bool values need k = 2; got k = {self.k}")
        arr = np.asarray(value)
        if is_bool:
            cats = arr.astype(np.int64)
        else:
            from renyi.mechanisms._noise import as_int_array

            cats = as_int_array(value)
            if cats.size and (int(cats.min()) < 0 or int(cats.max()) >= self.k):
                bad = int(cats.min()) if int(cats.min()) < 0 else int(cats.max())
                raise DomainError(f"value must be a category in [0, {self.k - 1}]; got {bad}", name="value", value=bad)
        shape = cats.shape
        n = max(1, cats.size)
        keep = np.asarray(uniform_int(gen, 2**_BITS, n)) < self._keep_numerator
        other = np.asarray(uniform_int(gen, self.k - 1, n))
        flat = cats.reshape(-1) if cats.size else np.zeros(1, np.int64)
        other = other + (other >= flat)  # uniform over the k − 1 categories ≠ the truth
        out = np.where(keep, flat, other)[: cats.size].reshape(shape)
        if is_bool:
            out = out.astype(bool)
        if np.ndim(value) == 0 and not isinstance(value, (list, tuple)):
            return bool(out) if is_bool else int(out)
        return out
