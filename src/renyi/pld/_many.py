"""Compositions of many distinct mechanisms: exact merging before the PLD engine composes.

**Gaussian merging.** The privacy loss of the Gaussian pair (N(0, 1), N(μ, 1)) is N(μ²/2, μ²)
under P, and the loss of a composition is the sum of the independent losses; a sum of
independent N(μᵢ²/2, μᵢ²) is N(μ²/2, μ²) with μ² = Σ cᵢμᵢ², the loss of the pair with shift
μ. Two pairs whose privacy losses have the same law under P have the same privacy profile,
so the composition of the Gaussian steps *is* the μ-GDP pair (Dong, Roth & Su 2022, Cor. 3.3),
whatever the mechanism or the neighbouring relation they came from: the steps are replaced
by that one pair before anything is discretised. This is exact, and it removes a
discretisation and a transform per distinct Gaussian. (The pair is symmetric, so it serves
both neighbouring directions.)
"""

from __future__ import annotations

import math

from ..plrv import GaussianPrivacyLoss
from ._profiles import LossProfile, Profile

__all__ = ["merge_gaussians"]

_GAUSS: dict[float, LossProfile] = {}


def _gaussian_profile(rho: float) -> LossProfile:
    """The Gaussian pair with ρ = μ²/2, one object per ρ (the engine caches discretisations
    per profile object, so that repeated questions reuse them)."""
    hit = _GAUSS.get(rho)
    if hit is None:
        if len(_GAUSS) > 256:
            _GAUSS.clear()
        hit = _GAUSS[rho] = LossProfile(GaussianPrivacyLoss(rho))
    return hit


def _gaussian_rho(p: Profile) -> float | None:
    if isinstance(p, LossProfile) and isinstance(p.loss, GaussianPrivacyLoss):
        return float(p.loss.rho)
    return None


def merge_gaussians(profiles: list[tuple[Profile, int]]) -> list[tuple[Profile, int]]:
    """The steps with every Gaussian pair merged into one (exact; see the module docstring).

    Args:
        profiles: (privacy profile, count ≥ 1) pairs of one neighbouring direction.

    Returns:
        The same composition: the non-Gaussian steps unchanged and in order, and, in place of
        the first Gaussian step, one Gaussian pair with ρ = Σ cᵢρᵢ (count 1). A list with at
        most one distinct Gaussian pair is returned unchanged (its count is already one power
        of one transform).
    """
    rhos = [(i, r, c) for i, (p, c) in enumerate(profiles) if (r := _gaussian_rho(p)) is not None]
    if len({r for _, r, _ in rhos}) <= 1:
        return profiles
    # fsum: the sum rounded once (a relative change of ~1e-16 in ρ, inside the engine's
    # final rounding allowance)
    rho = math.fsum(c * r for _, r, c in rhos)
    first = rhos[0][0]
    gauss = {i for i, _, _ in rhos}
    out: list[tuple[Profile, int]] = []
    for i, pc in enumerate(profiles):
        if i == first:
            out.append((_gaussian_profile(rho), 1))
        elif i not in gauss:
            out.append(pc)
    return out
