"""The Gaussian mechanism N(f(x), σ²I) with ℓ₂-sensitivity Δ."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from renyi.core._validation import POSITIVE
from renyi.guarantees import GDP
from renyi.guarantees.gdp import MU_MAX
from renyi.core.errors import DomainError
from renyi.mechanisms.base import Mechanism, check_neighbouring

__all__ = ["Gaussian"]


@dataclass(frozen=True, slots=True)
class Gaussian(Mechanism):
    """Adds N(0, σ²) noise to each coordinate of a query with ℓ₂-sensitivity Δ.

    Its exact guarantee is μ-GDP with μ = Δ/σ: ρ = Δ²/(2σ²)-zCDP and ε(α) = αΔ²/(2σ²)
    ([BS16] Prop. 6, Lemma 17), and the exact (ε, δ) curve of [BW18] Thm 8.

    Args:
        sigma: noise standard deviation σ ∈ (0, ∞), at least Δ/1.34e154 (ρ must be finite).
        sensitivity: ℓ₂-sensitivity Δ ∈ (0, ∞) under ``neighbouring``.
        neighbouring: "add_remove" (default) or "replace_one".

    Examples:
        >>> m = Gaussian(sigma=1.0)
        >>> m.guarantee
        GDP(mu=1.0)
        >>> round(m.epsilon(1e-5), 6)
        4.377178
    """

    sigma: float
    sensitivity: float = 1.0
    neighbouring: str = "add_remove"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", POSITIVE.check("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", POSITIVE.check("sensitivity", self.sensitivity))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        if self.sensitivity / self.sigma > MU_MAX:
            # μ = Δ/σ must keep ρ = μ²/2 finite; name σ, the parameter a user tunes.
            raise DomainError(
                f"sigma must be at least sensitivity/{MU_MAX:.4g} = {self.sensitivity / MU_MAX:.4g} "
                f"(so that rho = sensitivity²/(2·sigma²) is a finite number); got {self.sigma!r}",
                name="sigma", value=self.sigma)

    @property
    def noise_multiplier(self) -> float:
        """σ/Δ."""
        return self.sigma / self.sensitivity

    @property
    def rho(self) -> float:
        """ρ = Δ²/(2σ²)."""
        return self.sensitivity**2 / (2.0 * self.sigma**2)

    @property
    def guarantee(self) -> GDP:
        return GDP(self.sensitivity / self.sigma)

    def release(self, value: Any, rng: Any = None) -> Any:
        """value + N(0, σ²) per coordinate (float64; same shape).

        Floating-point caveat: textbook floating-point noise can leak through the low bits
        (Mironov 2012); for integer data prefer :class:`DiscreteGaussian`.
        """
        from renyi.mechanisms._noise import add_noise

        return add_noise(value, lambda r, size: self.sigma * _normal(r, size), rng)

    def privacy_loss(self) -> Any:
        from renyi.divergences.plrv import GaussianPrivacyLoss

        return GaussianPrivacyLoss(self.rho)


def _normal(rng: Any, size: Any) -> np.ndarray:
    from renyi.mechanisms.samplers import normal

    result: np.ndarray = normal(rng, size)
    return result
