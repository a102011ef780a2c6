"""(μ, τ)-mean-concentrated differential privacy (Dwork & Rothblum 2016)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.guarantees import conversions as conv
from renyi.core._validation import NONNEGATIVE, ORDER, check_int
from renyi.guarantees.neighbouring import check_neighbouring
from renyi.guarantees.base import Conversion, Guarantee, _check_delta, _check_epsilon, nb_repr

if TYPE_CHECKING:  # pragma: no cover - annotations only (the modules import each other)
    from renyi.guarantees.zcdp import ZCDP

__all__ = ["MCDP"]


@dataclass(frozen=True, slots=True)
class MCDP(Guarantee):
    """(μ, τ)-mCDP: E[Z] ≤ μ and Z − E[Z] is τ-subgaussian ([BS16] Def. 23, after [DR16]).

    Not closed under post-processing ([BS16] §1.2). Converted through
    (μ − τ²/2, τ²/2)-zCDP ([BS16] Lemma 24), tight for the Gaussian.

    Examples:
        >>> MCDP(0.6, 1.0).to_zcdp()
        ZCDP(rho=0.5, xi=0.09999999999999998)
    """

    mu: float
    tau: float
    neighbouring: str = field(default="add_remove", kw_only=True)

    definition = "mCDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", NONNEGATIVE.check("mu", self.mu))
        object.__setattr__(self, "tau", NONNEGATIVE.check("tau", self.tau))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))

    def __repr__(self) -> str:
        return f"MCDP(mu={self.mu!r}, tau={self.tau!r}{nb_repr(self)})"

    def rdp(self, alpha: ArrayLike) -> Any:
        """max(0, μ − τ²/2 + ατ²/2) ([BS16] Lemma 24)."""
        xi, rho = conv.mcdp_to_zcdp(self.mu, self.tau)
        # ξ = μ − τ²/2 is negative when μ < τ²/2 (zcdp_to_rdp refuses ξ < 0: "xi must be in
        # [0, inf)" for a valid mCDP statement); the line ρα plus ξ, clipped at 0, is the bound
        out = np.maximum(0.0, conv.zcdp_to_rdp(rho, 0.0, ORDER.check_array("alpha", alpha)) + xi)
        return float(out) if np.ndim(out) == 0 else out

    def to_zcdp(self) -> ZCDP:
        """(max(0, μ − τ²/2), τ²/2)-zCDP ([BS16] Lemma 24); clipping ξ at 0 only loosens it."""
        from renyi.guarantees.zcdp import ZCDP

        xi, rho = conv.mcdp_to_zcdp(self.mu, self.tau)
        return ZCDP(rho, max(0.0, xi))

    def best_epsilon(self, delta: float) -> Conversion:
        return self.to_zcdp().best_epsilon(_check_delta(delta))

    def best_delta(self, epsilon: float) -> Conversion:
        return self.to_zcdp().best_delta(_check_epsilon(epsilon))

    def compose(self, k: int) -> MCDP:
        """(kμ, √k·τ) ([DR16] composition of mCDP)."""
        k = check_int("k", k)
        return MCDP(k * self.mu, self.tau * k**0.5)

    def group(self, k: int) -> ZCDP:
        """Through zCDP: group privacy of (ξ, ρ)-zCDP ([BS16] Prop. 27)."""
        return self.to_zcdp().group(k)
