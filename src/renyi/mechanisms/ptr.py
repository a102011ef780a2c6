"""Propose-test-release ([DL09]; [DR14] Prop. 7.3)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from renyi.core._validation import POSITIVE, PROBABILITY_OPEN
from renyi.guarantees import ApproxDP
from renyi.guarantees.base import Conversion, ParameterValue
from renyi.core.errors import DomainError
from renyi.mechanisms.base import Mechanism, check_neighbouring
from renyi.core._names import accepts_neighboring

__all__ = ["ProposeTestRelease", "ptr_mode", "mode_distance_swap", "mode_distance_add_remove", "bit_mode"]


@dataclass(frozen=True, slots=True)
class ProposeTestRelease(Mechanism):
    """Stable_f: release f(x) only if x is far from every unstable dataset.

    d̂ = d(x) + Lap(1/ε); if d̂ > log(1/δ)/ε output ``answer_fn(x)``, otherwise ⊥ (``None``).
    Here d(x) = ``distance_fn(x)`` is the distance, in neighbour steps, from x to the nearest
    dataset on which f is unstable (some neighbour has a different f), so d has sensitivity 1.

    Guarantee: (ε, δ)-DP ([DL09]; [DR14] Prop. 7.3): releasing d̂ is ε-DP, and f(x) can leak from an
    unstable x only if the Laplace noise exceeds log(1/δ)/ε, which has probability δ/2.
    PTR is not zCDP ([BS16] §1.2); :func:`renyi.compose` accounts for it as δ-approximate
    zCDP ([BS16] Lemma 37).

    ``distance_fn`` must compute d *exactly* (a non-1-Lipschitz "lower bound" breaks the
    proof). The noise is floating-point Laplace noise (see :func:`renyi.samplers.laplace`);
    only the comparison with the threshold is released.

    Args:
        epsilon: ε ∈ (0, ∞).
        delta: δ ∈ (0, 1).
        distance_fn: x ↦ d(x) ∈ [0, ∞] (an integer count of neighbour steps).
        answer_fn: x ↦ f(x), the non-private answer released when the test passes.
        neighbouring: the relation d is measured in ("replace_one" by default).

    Examples:
        >>> ptr = ptr_mode(epsilon=1.0, delta=1e-6)
        >>> round(ptr.threshold, 12)
        13.815510557964
        >>> ptr.guarantee
        ApproxDP(epsilon=1.0, delta=1e-06, neighbouring='replace_one')
    """

    _epsilon: float
    _delta: float
    distance_fn: Callable[[Any], Any] = field(compare=True)
    answer_fn: Callable[[Any], Any] = field(compare=True)
    neighbouring: str = "replace_one"

    def __init__(self, epsilon: float, delta: float, distance_fn: Callable[[Any], Any],
                 answer_fn: Callable[[Any], Any], neighbouring: str = "replace_one") -> None:
        object.__setattr__(self, "_epsilon", POSITIVE.check("epsilon", epsilon))
        object.__setattr__(self, "_delta", PROBABILITY_OPEN.check("delta", delta))
        if not callable(distance_fn):
            raise TypeError(f"distance_fn must be callable; got {type(distance_fn).__name__}")
        if not callable(answer_fn):
            raise TypeError(f"answer_fn must be callable; got {type(answer_fn).__name__}")
        object.__setattr__(self, "distance_fn", distance_fn)
        object.__setattr__(self, "answer_fn", answer_fn)
        object.__setattr__(self, "neighbouring", check_neighbouring(neighbouring))

    def __repr__(self) -> str:
        return (f"ProposeTestRelease(epsilon={self._epsilon!r}, delta={self._delta!r}, "
                f"distance_fn={_name(self.distance_fn)}, answer_fn={_name(self.answer_fn)}, "
                f"neighbouring={self.neighbouring!r})")

    @property
    def epsilon(self) -> ParameterValue:
        """ε; also callable as the protocol method ``epsilon(delta)``."""
        return ParameterValue(self._epsilon, self._epsilon_at)

    @property
    def delta(self) -> ParameterValue:
        """δ; also callable as the protocol method ``delta(epsilon)``."""
        return ParameterValue(self._delta, self._delta_at)



    @property
    def threshold(self) -> float:
        """The test threshold log(1/δ)/ε."""
        return -math.log(self._delta) / self._epsilon

    @property
    def guarantee(self) -> ApproxDP:
        return ApproxDP(self._epsilon, self._delta)

    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_epsilon(delta, method)
        return self.guarantee.best_epsilon(delta)

    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        if method not in (None, "native"):  # one named route: ask the routes
            return super().best_delta(epsilon, method)
        return self.guarantee.best_delta(epsilon)

    def release(self, value: Any, rng: Any = None) -> Any:
        """``answer_fn(value)`` if the noisy stability test passes, else ``None`` (⊥).

        Raises:
            DomainError: if ``distance_fn`` returns NaN or a negative number.
        """
        from renyi.mechanisms.samplers import laplace, resolve_rng

        gen = resolve_rng(rng)
        d = _check_distance(self.distance_fn(value))
        noisy = d + laplace(gen, None) / self._epsilon
        if noisy > self.threshold:
            return self.answer_fn(value)
        return None


def _name(fn: Any) -> str:
    return getattr(fn, "__name__", None) or repr(fn)


def _check_distance(d: Any) -> float:
    if isinstance(d, (bool, np.bool_)):
        raise TypeError("distance_fn must return a number; got bool")
    try:
        x = float(d)
    except (TypeError, ValueError):
        raise TypeError(f"distance_fn must return a number; got {type(d).__name__}") from None
    if math.isnan(x) or x < 0.0:
        raise DomainError(f"distance must be in [0, inf]; got {d!r}", name="distance", value=d)
    return x


# --------------------------------------------------------------------------- mode of bits
def _counts(bits: Any) -> tuple[int, int]:
    arr = np.asarray(bits)
    if arr.dtype.kind not in "biuf" or arr.ndim != 1:
        raise TypeError(f"data must be a 1-D array of bits; got dtype {arr.dtype}, shape {arr.shape}")
    if arr.size and not np.all((arr == 0) | (arr == 1)):
        bad = arr[(arr != 0) & (arr != 1)].flat[0]
        raise DomainError(f"data must contain only bits 0 and 1; got {bad!r}", name="data", value=bad)
    ones = int(np.count_nonzero(arr))
    return ones, int(arr.size) - ones


def mode_distance_swap(bits: Any) -> int:
    """Distance to instability of the mode under swap (replace-one): max(0, ⌈(g − 2)/2⌉),
    g = |#1 − #0| (ties unstable; [DL09]; [DR14] Prop. 7.3)."""
    ones, zeros = _counts(bits)
    g = abs(ones - zeros)
    return max(0, -((2 - g) // 2))  # ⌈(g − 2)/2⌉ with integers


def mode_distance_add_remove(bits: Any) -> int:
    """Distance to instability of the mode under add/remove: max(0, g − 1) ([DL09]; [DR14] Prop. 7.3)."""
    ones, zeros = _counts(bits)
    return max(0, abs(ones - zeros) - 1)


def bit_mode(bits: Any) -> int:
    """The majority bit (0 on a tie; a tie is unstable, so it is released only with probability ≤ δ/2)."""
    ones, zeros = _counts(bits)
    return 1 if ones > zeros else 0


@accepts_neighboring
def ptr_mode(epsilon: float, delta: float, neighbouring: str = "replace_one") -> ProposeTestRelease:
    """A ready PTR instance that releases the mode of a bit vector ([DL09]; [DR14] Prop. 7.3).

    Args:
        epsilon: ε ∈ (0, ∞).
        delta: δ ∈ (0, 1).
        neighbouring: "replace_one" (swap: d = max(0, ⌈(g−2)/2⌉)) or "add_remove"
            (d = max(0, g − 1)), with g = |#1 − #0|.

    Returns:
        A :class:`ProposeTestRelease` with guarantee ApproxDP(ε, δ); ``release(bits)`` gives
        the mode or ``None``.
    """
    nb = check_neighbouring(neighbouring)
    dist = mode_distance_swap if nb == "replace_one" else mode_distance_add_remove
    return ProposeTestRelease(epsilon, delta, dist, bit_mode, neighbouring=nb)
