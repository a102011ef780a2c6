"""Rényi differential privacy: a guarantee that is a whole curve α ↦ ε(α)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from renyi.guarantees import conversions as conv
from renyi.core._values import CurveValue
from renyi.core._validation import NONNEGATIVE, NONNEGATIVE_EXTENDED, ORDER, UNIT_CLOSED_OPEN, check_int
from renyi.core import hooks
from renyi.core.errors import ConversionError, DomainError
from renyi.guarantees.neighbouring import check_neighbouring
from renyi.guarantees.base import Conversion, Guarantee, ParameterValue, _check_delta, _check_epsilon, nb_repr

if TYPE_CHECKING:  # pragma: no cover - annotations only (the modules import each other)
    from renyi.guarantees.zcdp import ZCDP

__all__ = ["RDP", "ApproxRDP"]

CurveFn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, slots=True)
class RDP(Guarantee):
    """An RDP curve: D_α(M(x)‖M(x′)) ≤ ε(α) for every α ∈ (1, ∞] ([Mir17] Def. 4).

    Args:
        fn: vectorized callable mapping a float64 array of finite orders α > 1 to ε(α) ≥ 0
            (``inf`` allowed).
        eps_inf: ε(∞), a pure-DP bound (``inf`` when there is none). Every ε(α) ≤ ε(∞).
        zcdp: an optional known-valid (ξ, ρ) with ε(α) ≤ ξ + ρα for all α.
        convex: True only when (α − 1)·ε(α) is an exact cumulant generating function (an
            exact divergence or a sum of them); this makes continuous order optimisation
            provably global (the CGF (α − 1)·ε(α) of an exact curve is convex). Upper-bound curves must say False.
        orders: orders the optimiser must try (breakpoints of interpolated curves).
        label: a readable description used in ``repr``.
        neighbouring: the relation it is stated under, "add_remove" (default) or "replace_one".

    The value is ``min(fn(α), ε(∞), ξ + ρα)``: every piece of knowledge is used.

    Examples:
        >>> curve = RDP(lambda a: a / 2.0, zcdp=(0.0, 0.5), label="Gaussian, sigma=1")
        >>> float(curve.rdp(2.0))
        1.0
        >>> round(curve.epsilon(1e-5), 6)
        4.728387
        >>> (curve + curve).rdp(3.0)
        3.0
    """

    fn: CurveFn
    eps_inf: float = math.inf
    zcdp: tuple[float, float] | None = None
    convex: bool = True
    orders: tuple[float, ...] = ()
    label: str = field(default="", compare=False)
    neighbouring: str = field(default="add_remove", kw_only=True)

    definition = "RDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        if not callable(self.fn):
            raise TypeError(f"fn must be a callable α ↦ ε(α); got {type(self.fn).__name__}")
        object.__setattr__(self, "eps_inf", NONNEGATIVE_EXTENDED.check("eps_inf", self.eps_inf))
        if self.zcdp is not None:
            xi, rho = self.zcdp
            object.__setattr__(self, "zcdp", (NONNEGATIVE.check("xi", xi), NONNEGATIVE.check("rho", rho)))
        object.__setattr__(self, "orders", tuple(float(a) for a in self.orders))

    def __repr__(self) -> str:
        what = self.label or repr(self.fn)
        return f"RDP({what}{nb_repr(self)})"

    # ----- evaluation -------------------------------------------------------------------
    def rdp_finite(self, alpha: np.ndarray) -> np.ndarray:
        """ε(α) on an array of finite orders > 1, without validation (for optimisers)."""
        a = np.asarray(alpha, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            raw = self.fn(a)
            try:
                out = np.asarray(raw, dtype=np.float64)
                out = np.broadcast_to(out, a.shape).copy()
            except (TypeError, ValueError):
                # a user curve of the wrong shape or type: numpy's broadcasting message named
                # neither the curve nor what it should return
                shape = getattr(np.asarray(raw, dtype=object), "shape", ())
                raise DomainError(
                    f"the RDP curve {self.label or self.fn!r} must return one real number per order (a scalar "
                    f"or an array of the orders' shape {a.shape}); it returned {type(raw).__name__} of shape "
                    f"{shape}", name="fn", value=raw) from None
            if np.any(np.isnan(out)):
                # A curve that cannot be evaluated at an order gives no bound there.
                out[np.isnan(out)] = math.inf
            out = np.minimum(out, self.eps_inf)
            if self.zcdp is not None:
                out = np.minimum(out, self.zcdp[0] + self.zcdp[1] * a)
        return np.maximum(out, 0.0)

    def rdp(self, alpha: ArrayLike) -> Any:
        """ε(α) for α ∈ (1, ∞], vectorized; ∞ where the curve gives no bound."""
        a = ORDER.check_array("alpha", alpha)
        finite = np.isfinite(a)
        out = np.empty(a.shape)
        if np.any(finite):
            out[finite] = self.rdp_finite(a[finite])
        inf_val = self.eps_inf
        if self.zcdp is not None and self.zcdp[1] == 0.0:
            inf_val = min(inf_val, self.zcdp[0])
        out[~finite] = inf_val
        return float(out) if out.ndim == 0 else out

    # ----- conversions ------------------------------------------------------------------
    def best_epsilon(self, delta: float) -> Conversion:
        """[CKS20] Prop. 12 with the order optimised continuously; also the zCDP and pure-DP
        bounds the curve carries. See :func:`renyi.conversions.rdp_to_approx_dp`."""
        delta = _check_delta(delta)
        best = conv.rdp_to_approx_dp(self, delta)
        if self.zcdp is not None:
            z = conv.zcdp_to_approx_dp(self.zcdp[1], delta, self.zcdp[0])
            if z.value < best.value:
                best = z
        return best

    def best_delta(self, epsilon: float) -> Conversion:
        epsilon = _check_epsilon(epsilon)
        best = conv.rdp_delta(self, epsilon)
        if self.zcdp is not None:
            z = conv.zcdp_delta(self.zcdp[1], self.zcdp[0], epsilon)
            if z.value < best.value:
                best = z
        return best

    def to_rdp(self) -> RDP:
        return self

    def to_zcdp(self) -> ZCDP:
        """(ξ, ρ) carried by the curve, or ρ = sup ε(α)/α bounded from above (needs ε(∞) < ∞)."""
        xi, rho = conv.rdp_to_zcdp(self)
        return hooks.get("ZCDP")(rho, xi)  # type: ignore[no-any-return]

    def to_points(self, orders: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The curve evaluated at ``orders`` (for storage; see :meth:`from_points`)."""
        a = ORDER.check_array("orders", orders)
        return a, np.asarray(self.rdp(a), dtype=np.float64)

    # ----- algebra ----------------------------------------------------------------------
    def compose(self, k: int) -> RDP:
        """k·ε(α) ([Mir17] Prop. 1: RDP composes additively at every order)."""
        k = check_int("k", k)
        if k == 1:
            return self
        zc = None if self.zcdp is None else (k * self.zcdp[0], k * self.zcdp[1])
        return RDP(_Scaled(self.fn, k), eps_inf=k * self.eps_inf, zcdp=zc, convex=self.convex,
                   orders=self.orders, label=f"{k} × {self.label or self.fn!r}")

    def group(self, k: int) -> RDP:
        """RDP for groups of size k.

        Splits the group at its midpoint and applies [BS16] Lemma 26 with k = 2 (the weak
        triangle inequality, never worse than [Mir17]'s 3·ε(2β) for groups of 2^c):
        G_k(β) ≤ (2β/(2β−1))·G_a(2β−1) + G_b(2β), a = ⌈k/2⌉, b = ⌊k/2⌋, G_1 = ε.
        Also uses the zCDP group bound (k²ρ, ξ·k·H_k; [BS16] Prop. 27) and kε(∞).
        The result is an upper bound, hence ``convex=False``.
        """
        k = check_int("k", k)
        if k == 1:
            return self
        zc = None
        if self.zcdp is not None:
            g = hooks.get("ZCDP")(self.zcdp[1], self.zcdp[0]).group(k)
            zc = (g.xi, g.rho)
        fn: CurveFn = _GroupCurve(self.rdp_finite, k) if k <= 4096 else _Infinite()
        return RDP(fn, eps_inf=k * self.eps_inf, zcdp=zc, convex=False,
                   label=f"group {k} of {self.label or self.fn!r}")

    @classmethod
    def from_points(cls, orders: ArrayLike, epsilons: ArrayLike, *, eps_inf: float = math.inf,
                    label: str = "") -> RDP:
        """A curve known only at some orders, conservative between them.

        Between α_i < α < α_{i+1} the bound is min(ε(α_{i+1}), K̂(α)/(α−1)) where K̂ linearly
        interpolates K(α) = (α−1)ε(α): monotonicity of ε and convexity of the CGF
        ([WBK19] Cor. 10). Below the first order ε(α_1) holds; beyond the last, only ε(∞).

        Args:
            orders: orders in (1, ∞), at least one.
            epsilons: the RDP values at those orders (≥ 0).
            eps_inf: ε(∞) if known.
        """
        a = ORDER.check_array("orders", orders).ravel()
        e = NONNEGATIVE.check_array("epsilons", epsilons).ravel()
        if a.size == 0 or a.shape != e.shape:
            raise DomainError(f"orders and epsilons must be non-empty and of equal length; got {a.size} and {e.size}")
        if np.any(np.isinf(a)):
            inf_vals = e[np.isinf(a)]
            eps_inf = min(eps_inf, float(inf_vals.min()))
            e, a = e[np.isfinite(a)], a[np.isfinite(a)]
        if a.size == 0:  # only ε(∞): by monotonicity it bounds every order
            return cls(_ConstantCurve(eps_inf), eps_inf=eps_inf, convex=True, orders=(),
                       label=label or f"ε(∞) = {eps_inf:g}")
        order = np.argsort(a)
        a, e = a[order], e[order]
        # A bound at a higher order is also a bound at every lower one (monotonicity).
        e = np.minimum.accumulate(np.minimum(e, eps_inf)[::-1])[::-1]
        label = label or f"{a.size} points"
        return cls(_PointsCurve(a, e), eps_inf=eps_inf, convex=False, orders=tuple(a), label=label)

    @classmethod
    def from_point(cls, alpha: float, epsilon: float) -> RDP:
        """A single (α, ε)-RDP guarantee (ε bounds every order ≤ α; nothing beyond).

        Args:
            alpha: α ∈ (1, ∞] (a number, not an array: use :meth:`from_points`).
            epsilon: ε ∈ [0, ∞).
        """
        alpha = ORDER.check("alpha", alpha)
        epsilon = NONNEGATIVE.check("epsilon", epsilon)
        return cls.from_points([alpha], [epsilon], label=f"(α={alpha:g}, ε={epsilon:g})")


@dataclass(frozen=True, slots=True)
class ApproxRDP(Guarantee):
    """δ-approximate RDP: an RDP curve that holds after conditioning on events of probability
    ≥ 1 − δ. This is how (ε, δ)-DP folds into an RDP ledger: (ε, δ)-DP is δ-approximately
    RDP with curve F_ε ([BS16] Lemma 37 and the proof of Prop. 19).

    Args:
        curve: the RDP curve.
        delta: δ ∈ [0, 1).
        neighbouring: the relation it is stated under; by default the curve's.
    """

    curve: RDP
    _delta: float
    neighbouring: str

    definition = "approximate RDP"

    def __init__(self, curve: RDP, delta: float, *, neighbouring: str | None = None) -> None:
        if not isinstance(curve, RDP):
            raise TypeError(f"curve must be an RDP; got {type(curve).__name__}")
        nb = check_neighbouring(curve.neighbouring if neighbouring is None else neighbouring)
        if curve.neighbouring != nb:
            from renyi.guarantees.neighbouring import with_relation

            curve = with_relation(curve, nb)  # the curve is the same statement, so the same relation
        object.__setattr__(self, "curve", curve)
        object.__setattr__(self, "_delta", UNIT_CLOSED_OPEN.check("delta", delta))
        object.__setattr__(self, "neighbouring", nb)

    def __repr__(self) -> str:
        return f"ApproxRDP({self.curve!r}, delta={self._delta!r}{nb_repr(self)})"

    @property
    def delta(self) -> ParameterValue:
        """δ; also callable as the protocol method ``delta(epsilon)``."""
        return ParameterValue(self._delta, super(ApproxRDP, self).delta)

    def rdp(self, alpha: ArrayLike) -> Any:
        if self._delta == 0.0:
            return self.curve.rdp(alpha)
        a = ORDER.check_array("alpha", alpha)
        out = np.full(a.shape, math.inf)
        return float(out) if out.ndim == 0 else out

    def best_epsilon(self, delta: float) -> Conversion:
        """ε at total δ = δ_a + (1 − δ_a)·δ_conv ([BS16] §8); ∞ when δ ≤ δ_a."""
        delta = _check_delta(delta)
        if delta <= self._delta:
            return Conversion(math.inf, None, "δ ≤ δ of the approximate guarantee")
        c = self.curve.best_epsilon((delta - self._delta) / (1.0 - self._delta))
        return Conversion(c.value, c.witness, c.method + " (+ δ of approximate RDP)")

    def best_delta(self, epsilon: float) -> Conversion:
        c = self.curve.best_delta(_check_epsilon(epsilon))
        d = self._delta + (1.0 - self._delta) * c.value
        return Conversion(min(1.0, conv.round_up(d)), c.witness, c.method + " (+ δ of approximate RDP)")

    def to_rdp(self) -> RDP:
        if self._delta == 0.0:
            return self.curve
        raise ConversionError(f"{self!r} is not RDP (δ > 0)")

    def compose(self, k: int) -> ApproxRDP:
        k = check_int("k", k)
        d = -math.expm1(k * math.log1p(-self._delta)) if self._delta > 0 else 0.0
        return ApproxRDP(self.curve.compose(k), min(conv.round_up(d), math.nextafter(1.0, 0.0)))

    def group(self, k: int) -> ApproxRDP:
        k = check_int("k", k)
        if k == 1:
            return self
        if self._delta == 0.0:
            return ApproxRDP(self.curve.group(k), 0.0)
        raise ConversionError("approximate RDP (δ > 0) has no group-privacy guarantee")


# ----- curve building blocks (small callables so that curves stay values with a repr) ---
class _Scaled(CurveValue):
    __slots__ = ("fn", "k")

    def __init__(self, fn: CurveFn, k: float) -> None:
        self.fn, self.k = fn, k

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return self.k * np.asarray(self.fn(alpha), dtype=np.float64)

    def __repr__(self) -> str:
        return f"{self.k}·{self.fn!r}"


class _Sum(CurveValue):
    __slots__ = ("fns",)

    def __init__(self, fns: Sequence[CurveFn]) -> None:
        self.fns = tuple(fns)

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        total = np.zeros(np.shape(alpha))
        for f in self.fns:
            total = total + np.asarray(f(alpha), dtype=np.float64)
        return total

    def __repr__(self) -> str:
        return " + ".join(repr(f) for f in self.fns)


class _Infinite(CurveValue):
    __slots__ = ()

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return np.full(np.shape(alpha), math.inf)

    def __repr__(self) -> str:
        return "∞"


class _GroupCurve(CurveValue):
    __slots__ = ("fn", "k")

    def __init__(self, fn: CurveFn, k: int) -> None:
        self.fn, self.k = fn, k

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return _group_eval(self.fn, self.k, np.asarray(alpha, dtype=np.float64))

    def __repr__(self) -> str:
        return f"group{self.k}({self.fn!r})"


def _group_eval(fn: CurveFn, k: int, beta: np.ndarray) -> np.ndarray:
    if k == 1:
        return np.asarray(fn(beta), dtype=np.float64)
    a, b = (k + 1) // 2, k // 2
    with np.errstate(over="ignore", invalid="ignore"):
        first = (2.0 * beta / (2.0 * beta - 1.0)) * _group_eval(fn, a, 2.0 * beta - 1.0)
        second = _group_eval(fn, b, 2.0 * beta)
        out = first + second
    return np.where(np.isnan(out), math.inf, out)


class _ConstantCurve(CurveValue):
    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return np.full(np.shape(alpha), self.value)

    def __repr__(self) -> str:
        return f"{self.value:g}"


class _PointsCurve(CurveValue):
    __slots__ = ("a", "e", "k")

    def __init__(self, a: np.ndarray, e: np.ndarray) -> None:
        self.a, self.e = a, e
        with np.errstate(over="ignore"):  # a CGF beyond the largest double is +inf (still a bound)
            self.k = (a - 1.0) * e

    def _key(self) -> tuple[bytes, bytes]:
        return (self.a.tobytes(), self.e.tobytes())

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        alpha = np.asarray(alpha, dtype=np.float64)
        a, e, k = self.a, self.e, self.k
        idx = np.searchsorted(a, alpha, side="left")  # a[idx-1] < alpha <= a[idx]
        out = np.full(alpha.shape, math.inf)
        inside = idx < a.size
        j = np.minimum(idx, a.size - 1)
        upper = np.where(inside, e[j], math.inf)  # monotonicity: ε(α) ≤ ε(α_{i+1})
        has_left = inside & (idx > 0)
        i = np.maximum(idx - 1, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            w = (alpha - a[i]) / (a[j] - a[i])
            kint = k[i] + w * (k[j] - k[i])
            # Round up by a few ulps: at a stored order K/(α−1) may land one ulp below ε.
            interp = kint / (alpha - 1.0) * (1.0 + 8.0 * 2.0**-52)
        out = np.where(has_left, np.minimum(upper, interp), upper)
        return out


hooks.provide("RDP", RDP)  # named by lower modules' conversions (see renyi.core.hooks)
