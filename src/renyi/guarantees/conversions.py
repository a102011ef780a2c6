"""Every conversion between privacy definitions, each citing its theorem.

Functions are named ``source_to_target``. Those that convert to (ε, δ) return a
:class:`~renyi.definitions.base.Conversion` (the value, the witness order, the method).
All values are valid *upper* bounds; where several valid bounds exist the library takes
the smallest (see the table in ``docs/conversions.md``).

Sources: [BS16] Bun & Steinke 2016; [Mir17] Mironov 2017; [CKS20] Canonne,
Kamath & Steinke 2020; [BBGHS20] Balle et al. 2020; [BW18] Balle & Wang 2018; [DRS19] Dong,
Roth & Su 2019; [KOV15] Kairouz, Oh & Viswanath 2015.

Examples:
    >>> round(zcdp_to_approx_dp(0.5, 1e-5).value, 6)
    4.728387
    >>> round(zcdp_to_approx_dp_bs21(0.5, 1e-5).value, 6)
    5.298526
    >>> round(pure_dp_to_zcdp(1.0), 6)
    0.462117
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from renyi.core._lazy import optimize

from renyi.core import _logmath as lm
from renyi.core._optimize import minimize_over_orders
from renyi.core._scalar import brent_root, minimize_bounded
from renyi.core import hooks
from renyi.core._values import CurveValue
from renyi.core._validation import (
    NONNEGATIVE,
    NONNEGATIVE_EXTENDED,
    ORDER,
    PROBABILITY,
    PROBABILITY_OPEN,
    UNIT_CLOSED_OPEN,
    Interval,
)
from renyi.guarantees.base import Conversion

if TYPE_CHECKING:  # pragma: no cover - annotations only (definitions import this module)
    from renyi.guarantees.rdp import RDP

__all__ = [
    "pure_dp_rdp",
    "pure_dp_to_rdp",
    "pure_dp_to_zcdp",
    "pure_dp_delta",
    "pure_dp_epsilon",
    "approx_dp_delta",
    "approx_dp_epsilon",
    "approx_dp_to_approx_zcdp",
    "zcdp_to_rdp",
    "zcdp_to_approx_dp",
    "zcdp_to_approx_dp_bs21",
    "zcdp_to_approx_dp_bs38",
    "zcdp_to_approx_dp_cks",
    "zcdp_delta",
    "zcdp_delta_bs21",
    "zcdp_delta_bs38",
    "zcdp_delta_cks",
    "zcdp_rho_for",
    "mcdp_to_zcdp",
    "approx_zcdp_to_approx_dp",
    "rdp_to_approx_dp",
    "rdp_to_approx_dp_mironov",
    "rdp_delta",
    "rdp_point_to_approx_dp",
    "rdp_point_delta",
    "rdp_to_zcdp",
    "gdp_delta",
    "gdp_to_approx_dp",
    "tv_bound",
    "round_up",
]

_RHO = Interval(0.0, math.inf, lo_closed=True)
_XI = Interval(0.0, math.inf, lo_closed=True)
#: Orders α ∈ [1, ∞] for curves defined at α = 1 (the KL limit).
_ORDER_KL = Interval(1.0, math.inf, lo_closed=True, hi_closed=True)
#: Largest μ for which the exact μ-GDP formula is evaluated (see gdp_to_approx_dp).
_GDP_EXACT_MAX_MU = 1e6


def _zcdp_args(rho: Any, xi: Any, epsilon: Any) -> tuple[float, float, float]:
    return _RHO.check("rho", rho), _XI.check("xi", xi), NONNEGATIVE_EXTENDED.check("epsilon", epsilon)


def _zcdp_eps_args(rho: Any, delta: Any, xi: Any) -> tuple[float, float, float]:
    return _RHO.check("rho", rho), PROBABILITY_OPEN.check("delta", delta), _XI.check("xi", xi)


def round_up(x: float) -> float:
    """Nudge a computed ε or δ up by a few ulps so round-off never makes it smaller than the bound."""
    if not math.isfinite(x) or x == 0.0:
        return x
    return math.nextafter(x + abs(x) * 4.0 * 2.0**-52, math.inf)


# --------------------------------------------------------------------------------------
# Pure DP
# --------------------------------------------------------------------------------------
def pure_dp_rdp(epsilon: float, alpha: ArrayLike) -> np.ndarray | float:
    """The tight RDP curve F_ε(α) of ε-DP ([BS16] proof of Prop. 19).

    F_ε(α) = (1/(α−1))·log[(e^{αε} + e^{−(α−1)ε}) / (1 + e^ε)], attained by randomized
    response with p = e^ε/(1+e^ε); F_ε(1) = ε·tanh(ε/2), F_ε(∞) = ε. Evaluated by
    :func:`renyi.divergences.pure_dp_curve` (stable near α = 1, overflow-free at large αε).

    Args:
        epsilon: ε ≥ 0.
        alpha: orders in [1, ∞].

    References:
        Bun & Steinke (2016), proof of Prop. 19; tightness: checked numerically in the tests.
    """
    from renyi.divergences import pure_dp_curve

    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    alpha = _ORDER_KL.check_array("alpha", alpha) if not np.isscalar(alpha) else _ORDER_KL.check("alpha", alpha)
    out = np.minimum(np.asarray(pure_dp_curve(epsilon, alpha), dtype=np.float64), float(epsilon))
    return float(out) if out.ndim == 0 else out


def pure_dp_to_zcdp(epsilon: float) -> float:
    """The tight ρ of ε-DP: ρ = ε·tanh(ε/2) ≤ ε²/2 ([Ste22]; [BS16] Prop. 4 gives ε²/2)."""
    eps = NONNEGATIVE.check("epsilon", epsilon)
    return eps * math.tanh(eps / 2.0)


def pure_dp_to_rdp(epsilon: float) -> RDP:
    """ε-DP as its tight RDP curve F_ε (see :func:`pure_dp_rdp`)."""
    eps = NONNEGATIVE.check("epsilon", epsilon)
    return hooks.get("RDP")(  # type: ignore[no-any-return]  # RDP sits above: see renyi.core.hooks
        _PureCurve(eps),
        eps_inf=eps,
        zcdp=(0.0, pure_dp_to_zcdp(eps)),
        convex=True,
        label=f"pure-DP curve F_{eps:g}",
    )


class _PureCurve(CurveValue):
    __slots__ = ("epsilon",)

    def __init__(self, epsilon: float) -> None:
        self.epsilon = epsilon

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return np.asarray(pure_dp_rdp(self.epsilon, alpha))

    def __repr__(self) -> str:
        return f"F_{self.epsilon:g}"


def _log_rr_profile(epsilon: float, eps_prime: float) -> float:
    """log of (e^ε − e^{ε'})/(1 + e^ε): the privacy profile of randomized response, which
    dominates every ε-DP pair ([KOV15] with k = 1)."""
    if eps_prime >= epsilon:
        return -math.inf
    return float(lm.log_sub(epsilon, eps_prime)) - float(np.logaddexp(0.0, epsilon))


def pure_dp_delta(epsilon: float, eps_prime: float) -> float:
    """The smallest δ with which ε-DP implies (ε', δ)-DP: (e^ε − e^{ε'})₊/(1 + e^ε). Tight.

    Args:
        epsilon: ε ∈ [0, ∞).
        eps_prime: ε' ∈ [0, ∞].
    """
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    eps_prime = NONNEGATIVE_EXTENDED.check("eps_prime", eps_prime)
    return math.exp(_log_rr_profile(epsilon, eps_prime))


def pure_dp_epsilon(epsilon: float, delta: float) -> float:
    """The smallest ε' with which ε-DP implies (ε', δ)-DP (inverse of :func:`pure_dp_delta`).

    ε' = ε + log(1 − δ(1 + e^{−ε})), or 0 when that is negative.

    Args:
        epsilon: ε ∈ [0, ∞).
        delta: δ ∈ [0, 1].
    """
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    delta = PROBABILITY.check("delta", delta)
    if epsilon == 0.0 or delta == 0.0:
        return epsilon
    x = delta * (1.0 + math.exp(-epsilon))
    if x >= 1.0:
        return 0.0
    return max(0.0, round_up(epsilon + math.log1p(-x)))


# --------------------------------------------------------------------------------------
# Approximate DP
# --------------------------------------------------------------------------------------
def approx_dp_delta(epsilon: float, delta: float, eps_prime: float) -> float:
    """Smallest δ' with which (ε, δ)-DP implies (ε', δ')-DP: δ + (1−δ)(e^ε − e^{ε'})₊/(1+e^ε).

    The (ε, δ) "tilted randomized response" pair dominates every (ε, δ)-DP pair ([KOV15] Thm 2.1).

    Args:
        epsilon: ε ∈ [0, ∞); delta: δ ∈ [0, 1); eps_prime: ε' ∈ [0, ∞].
    """
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    delta = UNIT_CLOSED_OPEN.check("delta", delta)
    eps_prime = NONNEGATIVE_EXTENDED.check("eps_prime", eps_prime)
    return min(1.0, delta + (1.0 - delta) * pure_dp_delta(epsilon, eps_prime))


def approx_dp_epsilon(epsilon: float, delta: float, delta_prime: float) -> float:
    """Smallest ε' with which (ε, δ)-DP implies (ε', δ')-DP; ∞ when δ' < δ.

    Args:
        epsilon: ε ∈ [0, ∞); delta: δ ∈ [0, 1); delta_prime: δ' ∈ [0, 1].
    """
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    delta = UNIT_CLOSED_OPEN.check("delta", delta)
    delta_prime = PROBABILITY.check("delta_prime", delta_prime)
    if delta_prime < delta:
        return math.inf
    return pure_dp_epsilon(epsilon, (delta_prime - delta) / (1.0 - delta))


def approx_dp_to_approx_zcdp(epsilon: float, delta: float) -> tuple[float, float, float]:
    """(ε, δ)-DP ⇒ δ-approximate (0, ε·tanh(ε/2))-zCDP; returns (rho, xi, delta).

    [BS16] Prop. 13 / Lemma 37 give δ-approximate ½ε²-zCDP; the tight pure-DP constant
    ε·tanh(ε/2) applies by the same argument ([Ste22]).
    """
    delta = UNIT_CLOSED_OPEN.check("delta", delta)
    return pure_dp_to_zcdp(epsilon), 0.0, delta


# --------------------------------------------------------------------------------------
# zCDP
# --------------------------------------------------------------------------------------
def zcdp_to_rdp(rho: float, xi: float, alpha: ArrayLike) -> np.ndarray | float:
    """ε(α) = ξ + ρα for α ∈ (1, ∞] ([BS16] Def. 1); ∞ at α = ∞ unless ρ = 0."""
    rho = _RHO.check("rho", rho)
    xi = _XI.check("xi", xi)
    a = ORDER.check_array("alpha", alpha)
    with np.errstate(invalid="ignore"):
        out = np.where(np.isinf(a), (xi if rho == 0.0 else math.inf), xi + rho * a)
    return float(out) if out.ndim == 0 else out


def tv_bound(kl: float) -> float:
    """δ(ε) ≤ δ(0) = TV ≤ min(√(KL/2), √(1 − e^{−KL})) (Pinsker; Bretagnolle–Huber).

    Args:
        kl: a KL divergence in [0, ∞].
    """
    kl = NONNEGATIVE_EXTENDED.check("kl", kl)
    if kl <= 0.0:
        return 0.0
    return min(1.0, math.sqrt(kl / 2.0), math.sqrt(-math.expm1(-kl)))


def zcdp_delta_bs21(rho: float, xi: float, epsilon: float) -> float:
    """δ = e^{−(ε−ξ−ρ)²/(4ρ)} for ε ≥ ξ + ρ ([BS16] Lemma 21)."""
    rho, xi, epsilon = _zcdp_args(rho, xi, epsilon)
    z = epsilon - xi - rho
    if rho == 0.0:
        return 0.0 if epsilon >= xi else 1.0
    if z <= 0.0:
        return 1.0
    return math.exp(-z * z / (4.0 * rho))


def zcdp_delta_bs38(rho: float, xi: float, epsilon: float) -> float:
    """δ' of [BS16] Lemma 38 (sharpened Lemma 21), for ε ≥ ξ + ρ; 1 below that."""
    rho, xi, epsilon = _zcdp_args(rho, xi, epsilon)
    if rho == 0.0:
        return 0.0 if epsilon >= xi else 1.0
    z = epsilon - xi - rho
    if z < 0.0:
        return 1.0
    u = 1.0 + z / (2.0 * rho)
    factor = min(
        1.0,
        math.sqrt(math.pi * rho),
        1.0 / u,
        2.0 / (u + math.sqrt(u * u + 4.0 / (math.pi * rho))),
    )
    return math.exp(-z * z / (4.0 * rho)) * factor


def _cks_log_delta(rho: float, xi: float, epsilon: float, alpha: float) -> float:
    # log δ = (α−1)(ξ + αρ − ε) + (α−1)·log(1 − 1/α) − log α   ([CKS20] Prop. 12 / Cor. 13)
    lam = alpha - 1.0
    return lam * (xi + alpha * rho - epsilon) + lam * math.log1p(-1.0 / alpha) - math.log(alpha)


def zcdp_delta_cks(rho: float, xi: float, epsilon: float) -> Conversion:
    """δ of [CKS20] Cor. 13 at the optimal order.

    The optimal α is the root in (1, ∞) of (2α−1)ρ − (ε − ξ) + log(1 − 1/α) = 0, a strictly
    increasing function of α ([CKS20] Cor. 13); δ is evaluated exactly at that root.
    """
    rho, xi, epsilon = _zcdp_args(rho, xi, epsilon)
    e = epsilon - xi
    if rho == 0.0:
        return Conversion(0.0 if e >= 0 else 1.0, None, "CKS20 Cor. 13")
    def g(a: float) -> float:
        return (2.0 * a - 1.0) * rho - e + math.log1p(-1.0 / a)

    lo = 1.0 + 1e-12
    hi = max(2.0, (1.0 + e / rho) / 2.0 + 1.0)
    while g(hi) < 0.0 and hi < 1e300:
        hi *= 2.0
    if not math.isfinite(hi) or not g(hi) >= 0.0:
        # The optimal order is beyond any double: every order gives a valid bound, so use
        # the largest finite one tried (δ is then far below any meaningful value).
        alpha = min(hi, 1e300) if math.isfinite(hi) else 1e300
    elif g(lo) >= 0.0:  # pragma: no cover - g(1+) = −∞ analytically
        alpha = lo
    else:
        alpha = brent_root(g, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=500)
    ld = _cks_log_delta(rho, xi, epsilon, alpha)
    if math.isnan(ld):
        return Conversion(1.0, None, "CKS20 Cor. 13 (not evaluable: trivial bound)")
    return Conversion(min(1.0, round_up(math.exp(min(ld, 0.0)))), alpha, "CKS20 Cor. 13")


def zcdp_delta(rho: float, xi: float, epsilon: float) -> Conversion:
    """The smallest of the valid zCDP → δ(ε) bounds: [CKS20] Cor. 13, [BS16] Lemma 38, Lemma 21,
    and the total-variation bound at ε = 0 (every one is valid, so the minimum is)."""
    rho, xi, epsilon = _zcdp_args(rho, xi, epsilon)
    cands = [
        zcdp_delta_cks(rho, xi, epsilon),
        Conversion(zcdp_delta_bs38(rho, xi, epsilon), None, "BS16 Lemma 38"),
        Conversion(zcdp_delta_bs21(rho, xi, epsilon), None, "BS16 Lemma 21"),
        Conversion(tv_bound(xi + rho), None, "KL → total variation (Pinsker / Bretagnolle–Huber)"),
    ]
    if rho == 0.0:
        cands.append(Conversion(pure_dp_delta(xi, epsilon), None, "pure DP (ρ = 0)"))
    return min(cands, key=lambda c: c.value)


def zcdp_to_approx_dp_bs21(rho: float, delta: float, xi: float = 0.0) -> Conversion:
    """ε = ξ + ρ + 2√(ρ log(1/δ)) ([BS16] Prop. 3 / Lemma 21): the classic formula.

    Note the factor 2: a formula with √(2ρ log 1/δ) that circulates in some notes is
    *invalid* ([BS16] Prop. 3 and Lemma 21).
    """
    rho, delta, xi = _zcdp_eps_args(rho, delta, xi)
    eps = xi + rho + 2.0 * math.sqrt(rho * -math.log(delta))
    # the order α* = 1 + √(log(1/δ)/ρ) rounds to 1.0 for huge ρ; a witness order must exceed 1
    witness = max(1.0 + math.sqrt(-math.log(delta) / rho), math.nextafter(1.0, 2.0)) if rho > 0 else None
    return Conversion(round_up(eps), witness, "BS16 Lemma 21")


def zcdp_to_approx_dp_bs38(rho: float, delta: float, xi: float = 0.0) -> Conversion:
    """ε from [BS16] Lemma 38 by bisection on its δ' (decreasing in ε); the upper end is returned."""
    rho, delta, xi = _zcdp_eps_args(rho, delta, xi)
    if rho == 0.0:
        return Conversion(xi, None, "BS16 Lemma 38")
    lo = xi + rho
    hi = zcdp_to_approx_dp_bs21(rho, delta, xi).value
    if zcdp_delta_bs38(rho, xi, lo) <= delta:
        return Conversion(lo, None, "BS16 Lemma 38")
    eps = _bisect_decreasing(lambda e: zcdp_delta_bs38(rho, xi, e), delta, lo, hi)
    return Conversion(eps, None, "BS16 Lemma 38")


def zcdp_to_approx_dp_cks(rho: float, delta: float, xi: float = 0.0) -> Conversion:
    """ε from [CKS20] Cor. 13 with the order optimised continuously (quasi-convex objective).

    ε(α) = ξ + αρ + log(1 − 1/α) − (log δ + log α)/(α − 1); the minimiser is near
    Mironov's α* = 1 + √(log(1/δ)/ρ), and the objective is evaluated at the returned α.
    """
    rho, delta, xi = _zcdp_eps_args(rho, delta, xi)
    if rho == 0.0:
        return Conversion(xi, None, "CKS20 Cor. 13")
    ld = math.log(delta)

    def obj(t: float) -> float:
        # α = 1 + e^t; log(1 − 1/α) = t − log α, written so that α → 1 stays finite.
        lam = math.exp(t)
        log_a = math.log1p(lam)
        return xi + (1.0 + lam) * rho + (t - log_a) - (ld + log_a) / lam

    # log(α* − 1) for Mironov's α*; clipped so that α = 1 + e^t stays a finite double (for
    # ρ near the smallest double the optimum lies beyond, and any order gives a valid bound).
    t0 = min(0.5 * (math.log(-ld) - math.log(rho)), 700.0)
    t, _ = minimize_bounded(obj, t0 - 6.0, t0 + 3.0 if t0 < 700.0 else t0, xatol=1e-10, maxiter=500)
    eps = obj(t)
    m = obj(t0)  # Mironov's order is always a candidate
    if m < eps:
        eps, t = m, t0
    return Conversion(max(0.0, round_up(eps)), max(1.0 + math.exp(t), math.nextafter(1.0, 2.0)), "CKS20 Cor. 13")


def zcdp_to_approx_dp(rho: float, delta: float, xi: float = 0.0) -> Conversion:
    """The smallest valid ε at δ for (ξ, ρ)-zCDP: best of [CKS20] Cor. 13, [BS16] Lemma 38 and
    Lemma 21, and ε = 0 when the total-variation bound already meets δ.

    Args:
        rho: ρ ≥ 0.
        delta: δ ∈ (0, 1).
        xi: ξ ≥ 0.

    Returns:
        A :class:`Conversion` whose value is an upper bound on ε.

    References:
        Bun & Steinke (2016), Lemma 21 and Lemma 38; Canonne, Kamath & Steinke (2020), Cor. 13.
    """
    rho = _RHO.check("rho", rho)
    xi = _XI.check("xi", xi)
    delta = PROBABILITY_OPEN.check("delta", delta)
    if tv_bound(xi + rho) <= delta:
        return Conversion(0.0, None, "KL → total variation (Pinsker / Bretagnolle–Huber)")
    if rho == 0.0:
        return Conversion(pure_dp_epsilon(xi, delta), None, "pure DP (ρ = 0)")
    cands = [
        zcdp_to_approx_dp_cks(rho, delta, xi),
        zcdp_to_approx_dp_bs38(rho, delta, xi),
        zcdp_to_approx_dp_bs21(rho, delta, xi),
    ]
    return min(cands, key=lambda c: c.value)


def zcdp_rho_for(epsilon: float, delta: float, xi: float = 0.0) -> float:
    """The largest ρ whose (ξ, ρ)-zCDP guarantee gives (ε, δ)-DP through :func:`zcdp_to_approx_dp`.

    The result is checked: ``zcdp_to_approx_dp(rho, delta, xi).value <= epsilon``.

    Args:
        epsilon: the target ε ∈ [0, ∞). A target met only by ρ = 0 (ε = 0 with ξ = 0,
            or ε ≤ ξ) gives 0; one that not even ρ = 0 meets (ε well below ξ) raises
            :class:`~renyi.errors.ConversionError`.
        delta: the target δ ∈ (0, 1).
        xi: ξ ∈ [0, ∞).

    >>> round(zcdp_rho_for(1.0, 1e-6), 8)
    0.02435597
    """
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    delta = PROBABILITY_OPEN.check("delta", delta)
    xi = _XI.check("xi", xi)
    def f(r: float) -> float:
        return zcdp_to_approx_dp(r, delta, xi).value - epsilon

    if epsilon <= xi:
        if f(0.0) > 0.0:
            from renyi.core.errors import ConversionError

            raise ConversionError(f"no rho >= 0 meets epsilon = {epsilon!r} at delta = {delta!r} with xi = {xi!r}: "
                                  f"rho = 0 already gives epsilon = {f(0.0) + epsilon!r}")
        return 0.0

    ld = -math.log(delta)
    # Lemma 21's inverse is feasible (the best conversion is never looser), so f(lo) ≤ 0.
    lo = (math.sqrt(epsilon - xi + ld) - math.sqrt(ld)) ** 2 * (1.0 - 1e-12)
    if not lo > 0.0:  # ε − ξ below the resolution of √(ε − ξ + log 1/δ): start from the bottom
        lo = 0.0
    hi = max(2.0 * lo, 5e-324)
    while f(hi) <= 0.0 and math.isfinite(hi):  # ≤ ~2100 doublings from the smallest double
        lo, hi = hi, 2.0 * hi
    for _ in range(2200):  # bisection; stops when the interval cannot shrink any more
        if hi - lo <= 1e-15 * hi:
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if f(mid) <= 0.0:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------------------
# mCDP, approximate zCDP
# --------------------------------------------------------------------------------------
def mcdp_to_zcdp(mu: float, tau: float) -> tuple[float, float]:
    """(μ, τ)-mCDP ⇒ (μ − τ²/2, τ²/2)-zCDP ([BS16] Lemma 24); returns (xi, rho).

    ξ may be negative; callers that need ξ ≥ 0 clip it (which is conservative).
    """
    mu = NONNEGATIVE.check("mu", mu)
    tau = NONNEGATIVE.check("tau", tau)
    return mu - tau * tau / 2.0, tau * tau / 2.0


def approx_zcdp_to_approx_dp(rho: float, xi: float, delta_a: float, delta: float) -> Conversion:
    """δ_a-approximate (ξ, ρ)-zCDP ⇒ (ε, δ)-DP with δ = δ_a + (1 − δ_a)·δ_conv
    ([BS16] Lemma 38 and its analogue for the other conversions, [BS16] §8).

    Returns ε = ∞ when δ ≤ δ_a (no finite ε exists).

    Args:
        rho: ρ ∈ [0, ∞).
        xi: ξ ∈ [0, ∞).
        delta_a: δ_a ∈ [0, 1), the δ of the approximate zCDP guarantee.
        delta: δ ∈ (0, 1), the target.
    """
    rho = _RHO.check("rho", rho)
    xi = _XI.check("xi", xi)
    delta_a = UNIT_CLOSED_OPEN.check("delta_a", delta_a)
    delta = PROBABILITY_OPEN.check("delta", delta)
    if delta <= delta_a:
        return Conversion(math.inf, None, "δ ≤ δ of the approximate guarantee")
    d_conv = (delta - delta_a) / (1.0 - delta_a)
    c = zcdp_to_approx_dp(rho, min(d_conv, math.nextafter(1.0, 0.0)), xi)
    return Conversion(c.value, c.witness, c.method + " (+ δ of approximate zCDP)")


# --------------------------------------------------------------------------------------
# RDP
# --------------------------------------------------------------------------------------
def rdp_point_to_approx_dp(alpha: float, eps_r: float, delta: float) -> float:
    """ε = ε_R + log(1 − 1/α) − (log δ + log α)/(α − 1) ([CKS20] Prop. 12 = [BBGHS20] Thm 21), clipped at 0."""
    alpha = ORDER.check("alpha", alpha)
    eps_r = NONNEGATIVE_EXTENDED.check("eps_r", eps_r)
    delta = PROBABILITY_OPEN.check("delta", delta)
    if math.isinf(eps_r):
        return math.inf
    if math.isinf(alpha):
        return pure_dp_epsilon(eps_r, delta)
    val = eps_r + math.log1p(-1.0 / alpha) - (math.log(delta) + math.log(alpha)) / (alpha - 1.0)
    return max(0.0, round_up(val))


def rdp_point_delta(alpha: float, eps_r: float, epsilon: float) -> float:
    """δ = e^{(α−1)(ε_R − ε)}·(1 − 1/α)^{α−1}/α ([CKS20] Prop. 12), clipped at 1."""
    alpha = ORDER.check("alpha", alpha)
    eps_r = NONNEGATIVE_EXTENDED.check("eps_r", eps_r)
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    if math.isinf(eps_r):
        return 1.0
    if math.isinf(alpha):
        return pure_dp_delta(eps_r, epsilon)
    lam = alpha - 1.0
    ld = lam * (eps_r - epsilon + math.log1p(-1.0 / alpha)) - math.log(alpha)
    ld += _exponent_margin(lam, eps_r, epsilon)
    return min(1.0, round_up(math.exp(min(ld, 0.0))))


def _exponent_margin(lam: float, eps_r: float, epsilon: float) -> float:
    """The round-off in (α − 1)(ε_R − ε + log(1 − 1/α)): ε_R − ε cancels, so an error of a few ulps
    of ε_R or ε is multiplied by α − 1 (at α = 10⁶ an ulp of ε_R ≈ 9 moves δ by 2e-9 relative;
    δ came out below the exact δ of k-fold randomized response). 16 ulps of each term, times λ."""
    return lam * (abs(eps_r) + abs(epsilon) + 1.0) * 16.0 * 2.0**-53 + 1e-15


def _cks_eps_objective(fn: Callable[[np.ndarray], np.ndarray], delta: float) -> Callable[[np.ndarray], np.ndarray]:
    ld = math.log(delta)

    def obj(alpha: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            result: np.ndarray = fn(alpha) + np.log1p(-1.0 / alpha) - (ld + np.log(alpha)) / (alpha - 1.0)
            return result

    return obj


def rdp_to_approx_dp(curve: RDP, delta: float) -> Conversion:
    """The smallest ε at δ from an RDP curve by [CKS20] Prop. 12 (= [BBGHS20] Thm 21), with the
    order optimised continuously, and the pure-DP bound ε(∞) when finite.

    Args:
        curve: an :class:`~renyi.definitions.rdp.RDP` value.
        delta: δ ∈ (0, 1).

    Returns:
        A :class:`Conversion` with the ε (an upper bound, ≥ 0) and the witness order.
    """
    delta = PROBABILITY_OPEN.check("delta", delta)
    val, alpha = minimize_over_orders(
        _cks_eps_objective(curve.rdp_finite, delta), convex=curve.convex, extra_orders=curve.orders
    )
    best = Conversion(max(0.0, round_up(val)), alpha, "CKS20 Prop. 12 (α optimised)")
    if math.isfinite(curve.eps_inf):
        pure = pure_dp_epsilon(curve.eps_inf, delta)
        if pure < best.value:
            best = Conversion(pure, math.inf, "pure DP (ε(∞)), randomized-response profile")
    kl = float(curve.rdp_finite(np.array([1.0 + 1e-6]))[0])
    if tv_bound(kl) <= delta:
        best = Conversion(0.0, 1.0 + 1e-6, "KL → total variation (Pinsker / Bretagnolle–Huber)")
    return best


def rdp_to_approx_dp_mironov(curve: RDP, delta: float) -> Conversion:
    """ε = min_α ε(α) + log(1/δ)/(α − 1) ([Mir17] Prop. 3), for comparison only (always looser
    than :func:`rdp_to_approx_dp`)."""
    delta = PROBABILITY_OPEN.check("delta", delta)
    ld = math.log(delta)
    fn = curve.rdp_finite

    def obj(a: np.ndarray) -> np.ndarray:
        return fn(a) - ld / (a - 1.0)

    val, alpha = minimize_over_orders(obj, convex=curve.convex, extra_orders=curve.orders)
    return Conversion(max(0.0, round_up(val)), alpha, "Mir17 Prop. 3 (α optimised)")


def rdp_delta(curve: RDP, epsilon: float) -> Conversion:
    """The smallest δ at ε from an RDP curve: [CKS20] Prop. 12 optimised over α, the pure-DP
    profile when ε(∞) is finite, and the total-variation bound (Pinsker; Bretagnolle–Huber)."""
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    fn = curve.rdp_finite

    def obj(a: np.ndarray) -> np.ndarray:
        lam = a - 1.0
        with np.errstate(invalid="ignore", over="ignore"):
            result: np.ndarray = lam * (fn(a) - epsilon + np.log1p(-1.0 / a)) - np.log(a)
            return result

    val, alpha = minimize_over_orders(obj, convex=curve.convex, extra_orders=curve.orders)
    if math.isfinite(val) and math.isfinite(alpha):
        val += _exponent_margin(alpha - 1.0, float(fn(np.array([alpha]))[0]), epsilon)
    best = Conversion(min(1.0, round_up(math.exp(val))) if val < 0 else 1.0, alpha,
                      "CKS20 Prop. 12 (α optimised)")
    if math.isfinite(curve.eps_inf):
        pure = pure_dp_delta(curve.eps_inf, epsilon)
        if pure < best.value:
            best = Conversion(round_up(pure), math.inf, "pure DP (ε(∞)), randomized-response profile")
    kl = float(fn(np.array([1.0 + 1e-6]))[0])
    tv = round_up(tv_bound(kl))
    if tv < best.value:
        best = Conversion(tv, 1.0 + 1e-6, "KL → total variation (Pinsker / Bretagnolle–Huber)")
    return best


#: The orders of :func:`rdp_delta_on_grid`: ``DENSE_ORDERS`` and 1 + 2000 log-spaced α − 1 in
#: [1e-4, 1e8] (neighbours 1.4 % apart in α − 1).
DELTA_GRID_ORDERS: np.ndarray = 1.0 + np.geomspace(1e-4, 1e8, 2000)


def rdp_delta_on_grid(curve: RDP) -> Callable[[float], Conversion]:
    """δ(ε) of :meth:`RDP.best_delta <renyi.definitions.RDP.best_delta>` with the order taken
    from a fixed grid instead of optimised: the curve is evaluated once, and each ε costs one
    vector expression (the trade-off table asks for δ at ~90 ε's).

    At every order α the [CKS20] Prop. 12 bound δ ≤ exp((α − 1)(ε(α) − ε + log(1 − 1/α)) −
    log α), with the round-off margin of :func:`rdp_delta`, is valid, so its minimum over the
    grid is; so are the pure-DP, total-variation and zCDP bounds the curve carries (the same
    candidates as :func:`rdp_delta` and ``RDP.best_delta``). The value is never below
    ``curve.best_delta(ε)`` by more than the optimiser's refinement (it is the same bound at a
    grid order instead of the optimal one).

    Returns:
        ε ↦ a ``Conversion`` (value = the δ bound, witness = the order).
    """
    from renyi.core._optimize import DENSE_ORDERS

    extra = np.asarray(curve.orders, dtype=np.float64)
    extra = extra[np.isfinite(extra) & (extra > 1.0)]
    a = np.unique(np.concatenate([DELTA_GRID_ORDERS, DENSE_ORDERS, extra]))
    fa = np.asarray(curve.rdp_finite(a), dtype=np.float64)
    keep = np.isfinite(fa)
    a, fa = a[keep], fa[keep]
    lam = a - 1.0
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # everything of (α − 1)(ε(α) − ε + log(1 − 1/α)) − log α + margin that does not depend on ε
        base = lam * (fa + np.log1p(-1.0 / a)) - np.log(a) + lam * (np.abs(fa) + 1.0) * 16.0 * 2.0**-53 + 1e-15
        margin = lam * 16.0 * 2.0**-53  # the margin's (α − 1)·|ε| term
    kl = float(curve.rdp_finite(np.array([1.0 + 1e-6]))[0])
    tv = round_up(tv_bound(kl))
    eps_inf = curve.eps_inf
    zc = curve.zcdp

    def delta(epsilon: float) -> Conversion:
        best = Conversion(1.0, None, "trivial")
        if a.size:
            with np.errstate(invalid="ignore", over="ignore"):
                v = base - lam * epsilon + margin * abs(epsilon)
            v = np.where(np.isnan(v), np.inf, v)
            i = int(np.argmin(v))
            val = float(v[i])
            if val < 0.0:
                best = Conversion(min(1.0, round_up(math.exp(val))), float(a[i]), "CKS20 Prop. 12 (α on a grid)")
        if math.isfinite(eps_inf):
            pure = pure_dp_delta(eps_inf, epsilon)
            if pure < best.value:
                best = Conversion(round_up(pure), math.inf, "pure DP (ε(∞)), randomized-response profile")
        if tv < best.value:
            best = Conversion(tv, 1.0 + 1e-6, "KL → total variation (Pinsker / Bretagnolle–Huber)")
        if zc is not None:
            z = zcdp_delta(zc[1], zc[0], epsilon)
            if z.value < best.value:
                best = z
        return best

    return delta


def rdp_to_zcdp(curve: RDP) -> tuple[float, float]:
    """The (ξ, ρ) implied by an RDP curve; returns (xi, rho).

    Uses the curve's own zCDP bound when it carries one. Otherwise ρ = sup ε(α)/α bounded
    from above on a grid using monotonicity (ε(α)/α ≤ ε(α_{i+1})/α_i on [α_i, α_{i+1}]) and
    ε(α)/α ≤ ε(∞)/α beyond the grid; this needs ε(∞) < ∞.
    """
    from renyi.core.errors import ConversionError

    if curve.zcdp is not None:
        return curve.zcdp
    if not math.isfinite(curve.eps_inf):
        raise ConversionError(
            "this RDP curve carries no zCDP bound and has ε(∞) = ∞, so sup ε(α)/α cannot be "
            "bounded; build it with zcdp=(xi, rho) or eps_inf"
        )
    grid = 1.0 + np.geomspace(1e-8, 1e8, 2000)
    vals = np.minimum(curve.rdp_finite(grid), curve.eps_inf)
    upper = np.concatenate([[vals[0] / 1.0], vals[1:] / grid[:-1]])
    rho = float(max(np.max(upper), curve.eps_inf / grid[-1]))
    return 0.0, round_up(rho)


# --------------------------------------------------------------------------------------
# Gaussian DP
# --------------------------------------------------------------------------------------
def gdp_delta(mu: float, epsilon: float) -> float:
    """Exact δ(ε) of μ-GDP: Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) ([BW18] Thm 8; [DRS19] Cor. 2.13)."""
    mu = NONNEGATIVE.check("mu", mu)
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    if mu == 0.0:
        return 0.0
    if mu * mu / 2.0 == math.inf:
        return 1.0
    if mu > _GDP_EXACT_MAX_MU:
        return zcdp_delta(mu * mu / 2.0, 0.0, epsilon).value
    return min(1.0, round_up(math.exp(float(lm.log_delta_gaussian(epsilon, mu)))))


def gdp_to_approx_dp(mu: float, delta: float) -> Conversion:
    """Exact ε(δ) of μ-GDP by a bracketing root finder on log δ(ε) ([BW18] Thm 8, Alg. 1).

    The returned ε satisfies δ(ε) ≤ δ (the upper end of the final bracket).
    """
    mu = NONNEGATIVE.check("mu", mu)
    delta = PROBABILITY_OPEN.check("delta", delta)
    method = "exact Gaussian (BW18 Thm 8 / GDP)"
    if mu == 0.0:
        return Conversion(0.0, None, method)
    if mu * mu / 2.0 == math.inf:
        return Conversion(math.inf, None, "μ-GDP with μ²/2 beyond the largest double: no finite bound")
    if mu > _GDP_EXACT_MAX_MU:
        # Beyond this μ the exact formula cannot be evaluated accurately in doubles (it fell
        # below the true ε for μ ≥ 5.6e8); μ-GDP is (μ²/2)-zCDP ([BS16] Prop. 6 with the
        # Gaussian), whose conversion is a valid upper bound and within a hair of exact here.
        c = zcdp_to_approx_dp(mu * mu / 2.0, delta)
        return Conversion(c.value, c.witness, f"{c.method} (μ-GDP as μ²/2-zCDP; μ too large for the exact formula)")
    ld = math.log(delta)
    def f(e: float) -> float:
        return float(lm.log_delta_gaussian(e, mu)) - ld

    if f(0.0) <= 0.0:
        return Conversion(0.0, None, method)
    rho = mu * mu / 2.0
    hi = rho + 2.0 * math.sqrt(rho * -ld) + 1e-9  # Lemma 21 is a valid upper bound, so f(hi) ≤ 0
    while f(hi) > 0.0 and math.isfinite(hi):
        hi *= 2.0
    try:
        eps = optimize.brentq(f, 0.0, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    except (RuntimeError, ValueError):
        c = zcdp_to_approx_dp(mu * mu / 2.0, delta)
        return Conversion(c.value, c.witness, f"{c.method} (μ-GDP as μ²/2-zCDP)")
    for _ in range(64):
        if f(eps) <= 0.0:
            break
        eps = math.nextafter(eps + abs(eps) * 1e-15, math.inf)
    # f is evaluated in floating point: δ = Φ(a) − e^εΦ(b) loses digits by a factor 1/(1 − r),
    # r = e^εΦ(b)/Φ(a), and dδ/dε = −e^εΦ(b). A relative error of 1e-13/(1 − r) in δ moves the
    # root by at most 1e-13·δ/((1 − r)·e^εΦ(b)) = 1e-13/r; add that so the ε stays ≥ the truth.
    log_r = eps + float(lm.log_ndtr(-mu / 2.0 - eps / mu)) - float(lm.log_ndtr(mu / 2.0 - eps / mu))
    margin = 1e-13 * math.exp(min(-log_r, 700.0)) + 1e-15 * eps
    return Conversion(round_up(eps + margin), None, method)


def _bisect_decreasing(g: Callable[[float], float], target: float, lo: float, hi: float) -> float:
    """Smallest x in [lo, hi] with g(x) ≤ target for a decreasing g; returns the safe (upper) end."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) <= target:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-15 * max(1.0, hi):
            break
    return hi
