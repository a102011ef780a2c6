"""The privacy loss random variable (PLRV) and tools built on it.

For a pair of distributions (P, Q) with densities p, q, the privacy loss is
Z = log p(Y)/q(Y) with Y ~ P; its dual is Z′ = log q(Y′)/p(Y′) with Y′ ~ Q
([BS16] Def 2; the PLRV page of the documentation). Its cumulant generating function is the Rényi curve,
(α−1)D_α(P‖Q) = log E[e^{(α−1)Z}], and its hockey-stick transform is the exact privacy profile
δ(ε) = E[(1 − e^{ε−Z})₊] ([BW18] Thm 5).

A :class:`PrivacyLoss` answers ``mean`` (the KL), ``var``, ``mgf``/``log_mgf``, ``cdf``/``sf``,
``sample``, ``renyi_divergence`` (vectorized over α), ``delta`` (exact, the larger of the two
directions) and ``epsilon`` (by bisection, returning the conservative end). Concrete forms:
:class:`GaussianPrivacyLoss`, :class:`LaplacePrivacyLoss` and :class:`DiscretePrivacyLoss`
(any finite pair; randomized response and discrete mechanisms).

:func:`check_rdp` and :func:`check_zcdp` check a claimed guarantee against the divergences of a
pair, in both directions.

Examples:
    >>> loss = GaussianPrivacyLoss(0.5)
    >>> loss.mean(), loss.var()
    (0.5, 1.0)
    >>> round(loss.epsilon(1e-5), 9)
    4.377178096
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from renyi.core._lazy import special

from renyi.core._logmath import log1mexp, log_delta_gaussian
from renyi.core._validation import NONNEGATIVE, ORDER, POSITIVE, Interval, check_array, check_int
from renyi.divergences.closed_forms import laplace_divergence
from renyi.divergences.discrete import (
    NORMALIZATION_TOL,
    _check_pmf,
    _check_same_shape,
    _divergence_from_loss,
    _orders,
    _out,
)
from renyi.divergences.numerical import renyi_divergence_continuous
from renyi.core.errors import DomainError

__all__ = [
    "PrivacyLoss",
    "GaussianPrivacyLoss",
    "LaplacePrivacyLoss",
    "DiscretePrivacyLoss",
    "randomized_response_privacy_loss",
    "power_means",
    "RDPCheck",
    "check_rdp",
    "check_zcdp",
    "DEFAULT_CHECK_ORDERS",
]

_DELTA = Interval(0.0, 1.0, hi_closed=True)

#: Orders at which :func:`check_rdp` / :func:`check_zcdp` compare by default.
DEFAULT_CHECK_ORDERS: tuple[float, ...] = (
    1.01, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0,
    24.0, 32.0, 48.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
)


def _rng(rng: Any) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _reals(name: str, x: ArrayLike) -> tuple[np.ndarray, bool]:
    scalar = np.ndim(x) == 0
    arr = check_array(name, [x] if scalar else x)
    if np.isnan(arr).any():
        raise DomainError(f"{name} must be a number, not NaN", name=name)
    return arr, scalar


class PrivacyLoss(abc.ABC):
    """The privacy loss Z = log p(Y)/q(Y), Y ~ P, of an ordered pair (P, Q).

    Subclasses implement the law of Z; :meth:`dual` returns the loss of (Q, P) (``self`` when
    the pair is symmetric, e.g. Gaussian and Laplace location pairs).
    """

    __slots__ = ()

    # ---- the law of Z (subclasses) ----
    @abc.abstractmethod
    def log_mgf(self, lam: ArrayLike) -> float | np.ndarray:
        """log E[e^{λZ}] (vectorized; +∞ where infinite)."""

    @abc.abstractmethod
    def cdf(self, t: ArrayLike) -> float | np.ndarray:
        """Pr[Z ≤ t]."""

    @abc.abstractmethod
    def sf(self, t: ArrayLike) -> float | np.ndarray:
        """Pr[Z > t], computed directly (not as 1 − cdf) for accuracy in the upper tail."""

    @abc.abstractmethod
    def sample(self, n: int, rng: Any = None) -> np.ndarray:
        """n independent draws of Z (``rng``: a numpy Generator or a seed)."""

    @abc.abstractmethod
    def mean(self) -> float:
        """E[Z] = KL(P‖Q)."""

    @abc.abstractmethod
    def var(self) -> float:
        """Var[Z]."""

    @abc.abstractmethod
    def ess_sup(self) -> float:
        """ess sup Z = D_∞(P‖Q) (+∞ if unbounded)."""

    @abc.abstractmethod
    def _log_delta_one(self, eps: np.ndarray) -> np.ndarray:
        """log δ_{P‖Q}(ε) = log E[(1 − e^{ε−Z})₊] for ε ≥ 0 (array in, array out)."""

    def dual(self) -> PrivacyLoss:
        """The privacy loss of the reversed pair (Q, P). Symmetric pairs return ``self``."""
        return self

    # ---- derived ----
    def mgf(self, lam: ArrayLike) -> float | np.ndarray:
        """E[e^{λZ}] (may overflow to +∞; use :meth:`log_mgf` for large λ)."""
        with np.errstate(over="ignore"):
            return _out(np.exp(np.asarray(self.log_mgf(lam), dtype=np.float64)), np.ndim(lam) == 0)

    def renyi_divergence(self, alpha: ArrayLike) -> float | np.ndarray:
        """D_α(P‖Q) = log E[e^{(α−1)Z}]/(α−1), α ∈ [0, ∞], vectorized.

        α = 1 gives :meth:`mean`, α = ∞ gives :meth:`ess_sup`. Subclasses override this with
        closed forms that are stable near α = 1.
        """
        alphas, scalar = _orders(alpha)
        out = np.empty(alphas.shape)
        for idx, a in np.ndenumerate(alphas):
            if a == 1.0:
                out[idx] = self.mean()
            elif a == math.inf:
                out[idx] = self.ess_sup()
            else:
                out[idx] = float(self.log_mgf(a - 1.0)) / (a - 1.0)
        return _out(np.maximum(out, 0.0), scalar)

    def log_delta(self, epsilon: ArrayLike) -> float | np.ndarray:
        """log δ(ε) of the exact privacy profile, the larger of both directions (−∞ for δ = 0)."""
        eps, scalar = _reals("epsilon", epsilon)
        eps = NONNEGATIVE.check_array("epsilon", eps)
        out = self._log_delta_one(eps)
        d = self.dual()
        if d is not self:
            out = np.maximum(out, d._log_delta_one(eps))
        return _out(out, scalar)

    def delta(self, epsilon: ArrayLike) -> float | np.ndarray:
        """Exact δ(ε) = max over both orders of the pair of sup_S P(S) − e^ε Q(S).

        Args:
            epsilon: ε ≥ 0 (scalar or array).

        Returns:
            The smallest δ such that the pair is (ε, δ)-indistinguishable in both directions.
        """
        return _out(np.exp(np.asarray(self.log_delta(epsilon), dtype=np.float64)), np.ndim(epsilon) == 0)

    def delta_one_way(self, epsilon: ArrayLike) -> float | np.ndarray:
        """δ_{P‖Q}(ε) = E[(1 − e^{ε−Z})₊] for this direction only."""
        eps, scalar = _reals("epsilon", epsilon)
        eps = NONNEGATIVE.check_array("epsilon", eps)
        return _out(np.exp(self._log_delta_one(eps)), scalar)

    def epsilon(self, delta: float) -> float:
        """Smallest ε ≥ 0 with :meth:`delta` (ε) ≤ δ, by bisection on log δ.

        Returns the upper end of the final bracket, where δ(ε) ≤ target has been verified, so
        the result is never below the true ε.

        Args:
            delta: target δ in (0, 1].
        """
        target = _DELTA.check("delta", delta)
        log_t = math.log(target)

        def ok(e: float) -> bool:
            # Both the log and the exponentiated value must meet the target, so that
            # delta(epsilon(d)) <= d holds for the numbers a caller actually sees.
            ld = float(self.log_delta(e))
            return ld <= log_t and math.exp(ld) <= target

        if ok(0.0):
            return 0.0
        hi = max(self.ess_sup(), self.dual().ess_sup())
        if not math.isfinite(hi):
            hi = 1.0
            while not ok(hi):
                hi *= 2.0
                if hi > 1e6:
                    return math.inf
        lo = 0.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            if ok(mid):
                hi = mid
            else:
                lo = mid
        return hi

    def privacy_loss(self) -> PrivacyLoss:
        """Return ``self`` (so a loss can be passed wherever a mechanism is accepted)."""
        return self


# --------------------------------------------------------------------------------------------
# Gaussian
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GaussianPrivacyLoss(PrivacyLoss):
    """Gaussian privacy loss: Z ~ N(ρ, 2ρ), with ρ = ‖μ − ν‖²/(2σ²); Z′ has the same law.

    Args:
        rho: ρ ∈ (0, ∞) (the zCDP parameter; ρ = μ²/2 for μ = Δ/σ).

    References:
        [BW18] Thm 8 (δ(ε)); the law N(μ²/2, μ²) follows from the two Gaussian densities.

    Examples:
        >>> GaussianPrivacyLoss.from_sigma(1.0).rho
        0.5
    """

    rho: float

    def __post_init__(self) -> None:
        r = POSITIVE.check("rho", self.rho)
        if not math.isfinite(r):
            raise DomainError(f"rho must be in (0, inf) and finite; got {self.rho!r}", name="rho")
        object.__setattr__(self, "rho", r)

    @classmethod
    def from_sigma(cls, sigma: float, sensitivity: float = 1.0) -> GaussianPrivacyLoss:
        """The loss of N(0, σ²) vs N(Δ, σ²): ρ = Δ²/(2σ²)."""
        s = POSITIVE.check("sigma", sigma)
        d = POSITIVE.check("sensitivity", sensitivity)
        return cls(d * d / (2.0 * s * s))

    @property
    def mu(self) -> float:
        """μ = Δ/σ = √(2ρ)."""
        return math.sqrt(2.0 * self.rho)

    def log_mgf(self, lam: ArrayLike) -> float | np.ndarray:
        lam_a, scalar = _reals("lam", lam)
        return _out(self.rho * lam_a * (1.0 + lam_a), scalar)

    def renyi_divergence(self, alpha: ArrayLike) -> float | np.ndarray:
        alphas, scalar = _orders(alpha)
        return _out(np.where(np.isinf(alphas), np.inf, alphas * self.rho), scalar)

    def cdf(self, t: ArrayLike) -> float | np.ndarray:
        tt, scalar = _reals("t", t)
        return _out(special.ndtr((tt - self.rho) / self.mu), scalar)

    def sf(self, t: ArrayLike) -> float | np.ndarray:
        tt, scalar = _reals("t", t)
        return _out(special.ndtr((self.rho - tt) / self.mu), scalar)

    def sample(self, n: int, rng: Any = None) -> np.ndarray:
        k = check_int("n", n, minimum=0)
        return _rng(rng).normal(self.rho, self.mu, size=k)

    def pdf(self, t: ArrayLike) -> float | np.ndarray:
        """Density of Z ~ N(ρ, 2ρ)."""
        tt, scalar = _reals("t", t)
        return _out(np.exp(-((tt - self.rho) ** 2) / (4.0 * self.rho)) / math.sqrt(4.0 * math.pi * self.rho), scalar)

    def mean(self) -> float:
        return self.rho

    def var(self) -> float:
        return 2.0 * self.rho

    def ess_sup(self) -> float:
        return math.inf

    def _log_delta_one(self, eps: np.ndarray) -> np.ndarray:
        return np.asarray(log_delta_gaussian(eps, self.mu), dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Laplace
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LaplacePrivacyLoss(PrivacyLoss):
    """Laplace privacy loss for Lap(0, b) vs Lap(Δ, b), t = Δ/b.

    Z has an atom Pr[Z = t] = ½, an atom Pr[Z = −t] = ½e^{−t}, and density ¼e^{(z−t)/2} on
    (−t, t); Z′ has the same law. δ(ε) = 1 − e^{(ε−t)/2} for 0 ≤ ε < t and 0 beyond.

    Args:
        t: Δ/b ∈ (0, ∞).

    References:
        Derived from the two Laplace densities (see the PLRV page of the documentation); its MGF
        reproduces [Mir17] Prop 6.

    Examples:
        >>> round(LaplacePrivacyLoss(1.0).mean(), 15)
        0.367879441171442
    """

    t: float

    def __post_init__(self) -> None:
        t = POSITIVE.check("t", self.t)
        if not math.isfinite(t):
            raise DomainError(f"t must be in (0, inf) and finite; got {self.t!r}", name="t")
        object.__setattr__(self, "t", t)

    def log_mgf(self, lam: ArrayLike) -> float | np.ndarray:
        lam_a, scalar = _reals("lam", lam)
        t = self.t
        out = np.empty(lam_a.shape)
        for i, x in enumerate(lam_a):
            # The pair is symmetric (Z′ has the law of Z), so E_P[e^{λZ}] = E_Q[e^{(λ+1)Z}] =
            # E_P[e^{−(λ+1)Z}]: K(λ) = K(−1−λ). Reflect λ < −1 into λ > 0, then
            # K(λ) = λ·D_{1+λ} with the stable closed form of [Mir17] Prop. 6.
            y = -1.0 - x if x < -1.0 else x
            out[i] = y * float(laplace_divergence(t, 1.0 + y)) if y != 0 else 0.0
        return _out(out, scalar)

    def renyi_divergence(self, alpha: ArrayLike) -> float | np.ndarray:
        return laplace_divergence(self.t, alpha)

    def cdf(self, t: ArrayLike) -> float | np.ndarray:
        z, scalar = _reals("t", t)
        with np.errstate(over="ignore"):
            mid = 0.5 * np.exp((np.minimum(z, self.t) - self.t) / 2.0)
        return _out(np.where(z < -self.t, 0.0, np.where(z >= self.t, 1.0, mid)), scalar)

    def sf(self, t: ArrayLike) -> float | np.ndarray:
        z, scalar = _reals("t", t)
        mid = 1.0 - 0.5 * np.exp((np.minimum(z, self.t) - self.t) / 2.0)
        return _out(np.where(z < -self.t, 1.0, np.where(z >= self.t, 0.0, mid)), scalar)

    def sample(self, n: int, rng: Any = None) -> np.ndarray:
        k = check_int("n", n, minimum=0)
        y = _rng(rng).laplace(0.0, 1.0, size=k)
        return np.abs(y - self.t) - np.abs(y)

    def mean(self) -> float:
        return self.t + math.expm1(-self.t)

    def var(self) -> float:
        t = self.t
        if t < 1e-3:
            # E[Z²] and E[Z]² cancel in the closed form below (relative error ~4ε/t); use its
            # Taylor series (sympy): t² − t³/3 − t⁴/12 + 7t⁵/60 − 7t⁶/120 + O(t⁷).
            return t * t * (1.0 - t / 3.0 - t * t / 12.0 + 7.0 * t**3 / 60.0 - 7.0 * t**4 / 120.0)
        ez2 = t * t - 2.0 * t * (1.0 + math.exp(-t)) - 4.0 * math.expm1(-t)
        return ez2 - self.mean() ** 2

    def ess_sup(self) -> float:
        return self.t

    def _log_delta_one(self, eps: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.where(eps < self.t, log1mexp(np.minimum((eps - self.t) / 2.0, 0.0)), -np.inf)


# --------------------------------------------------------------------------------------------
# finite support
# --------------------------------------------------------------------------------------------


def _check_loss_law(vname: str, pname: str, values: Any, probs: Any) -> tuple[np.ndarray, np.ndarray]:
    v = check_array(vname, values).reshape(-1)
    _check_same_shape(v, check_array(pname, probs).reshape(-1))
    p = _check_pmf(pname, probs)
    if np.isnan(v).any() or np.isneginf(v).any():
        raise DomainError(f"{vname} must be in (-inf, inf]; got {float(v[np.isnan(v) | np.isneginf(v)][0])!r}",
                          name=vname)
    keep = p > 0
    return v[keep], p[keep] / p[keep].sum()


@dataclass(frozen=True, slots=True, eq=False)
class DiscretePrivacyLoss(PrivacyLoss):
    """A privacy loss with finitely many values (Z = +∞ allowed: mass of P where q = 0).

    Args:
        values: the values z_i of Z (log p/q on the support of P), in (−∞, ∞].
        probs: Pr[Z = z_i] under P; entries ≥ 0 summing to 1 (within
            ``NORMALIZATION_TOL``·n).
        dual_values: the values of Z′ = log q/p under Q (with ``dual_probs``). If omitted it is derived
            from the law of Z by change of measure: Z′ = −z_i with probability p_i e^{−z_i},
            plus an atom Z′ = +∞ carrying the rest of Q's mass (Q outside the support of P)
            when that rest exceeds ``NORMALIZATION_TOL``·n (below it is taken as round-off).
        dual_probs: the probabilities of ``dual_values`` (given together with them).
            Pass the dual explicitly (or use :meth:`from_distributions`) when this matters.

    Examples:
        >>> loss = DiscretePrivacyLoss.from_distributions([0.75, 0.25], [0.25, 0.75])
        >>> round(float(loss.renyi_divergence(2.0)), 10)
        0.8472978604
        >>> round(loss.delta(0.0), 12)
        0.5
    """

    values: np.ndarray
    probs: np.ndarray
    dual_values: np.ndarray | None = None
    dual_probs: np.ndarray | None = None
    _log_probs: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        v, p = _check_loss_law("values", "probs", self.values, self.probs)
        if (self.dual_values is None) != (self.dual_probs is None):
            raise DomainError("dual_values and dual_probs must be given together", name="dual_values")
        if self.dual_values is None:
            fin = np.isfinite(v)
            with np.errstate(divide="ignore"):
                lq = np.log(p[fin]) - v[fin]
            log_total = float(special.logsumexp(lq)) if lq.size else -math.inf
            rest = -math.expm1(log_total) if log_total < 0 else 0.0
            dv, dp = -v[fin], np.exp(lq)
            if rest > NORMALIZATION_TOL * max(v.size, 1):
                dv = np.append(dv, np.inf)
                dp = np.append(dp, rest)
            dv, dp = dv, dp / dp.sum()
        else:
            dv, dp = _check_loss_law("dual_values", "dual_probs", self.dual_values, self.dual_probs)
        for arr in (v, p, dv, dp):
            arr.setflags(write=False)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "probs", p)
        object.__setattr__(self, "dual_values", dv)
        object.__setattr__(self, "dual_probs", dp)
        lp = np.log(p)
        lp.setflags(write=False)
        object.__setattr__(self, "_log_probs", lp)

    @classmethod
    def from_distributions(cls, p: ArrayLike, q: ArrayLike) -> DiscretePrivacyLoss:
        """The exact loss (and dual) of two probability vectors of the same shape."""
        _check_same_shape(p, q)
        pa = _check_pmf("p", p)
        qa = _check_pmf("q", q)
        pa, qa = pa / pa.sum(), qa / qa.sum()
        with np.errstate(divide="ignore"):
            lp, lq = np.log(pa), np.log(qa)
        sp, sq = pa > 0, qa > 0
        with np.errstate(invalid="ignore"):
            z = lp[sp] - lq[sp]
            zd = lq[sq] - lp[sq]
        return cls(z, pa[sp], zd, qa[sq])

    def dual(self) -> DiscretePrivacyLoss:
        """The law of the reverse pair's privacy loss log q/p (values and dual values swapped)."""
        # __post_init__ always fills the dual law in
        assert self.dual_values is not None and self.dual_probs is not None
        return DiscretePrivacyLoss(self.dual_values, self.dual_probs, self.values, self.probs)

    def log_mgf(self, lam: ArrayLike) -> float | np.ndarray:
        lam_a, scalar = _reals("lam", lam)
        out = np.empty(lam_a.shape)
        inf_atoms = np.isinf(self.values)
        for i, x in enumerate(lam_a):
            if x == 0.0:
                out[i] = 0.0
            elif x > 0 and inf_atoms.any():
                out[i] = math.inf
            else:
                fin = ~inf_atoms
                out[i] = float(special.logsumexp(self._log_probs[fin] + x * self.values[fin])) if fin.any() else -math.inf
        return _out(out, scalar)

    def renyi_divergence(self, alpha: ArrayLike) -> float | np.ndarray:
        alphas, scalar = _orders(alpha)
        return _out(_divergence_from_loss(self._log_probs, self.values, alphas), scalar)

    def cdf(self, t: ArrayLike) -> float | np.ndarray:
        tt, scalar = _reals("t", t)
        order = np.argsort(self.values)
        cum = np.concatenate([[0.0], np.cumsum(self.probs[order])])
        k = np.searchsorted(self.values[order], tt, side="right")
        return _out(np.minimum(cum[k], 1.0), scalar)

    def sf(self, t: ArrayLike) -> float | np.ndarray:
        tt, scalar = _reals("t", t)
        order = np.argsort(self.values)
        tail = np.concatenate([np.cumsum(self.probs[order][::-1])[::-1], [0.0]])
        k = np.searchsorted(self.values[order], tt, side="right")
        return _out(np.minimum(tail[k], 1.0), scalar)

    def sample(self, n: int, rng: Any = None) -> np.ndarray:
        k = check_int("n", n, minimum=0)
        return _rng(rng).choice(self.values, size=k, p=self.probs)

    def support(self) -> np.ndarray:
        """The distinct values of Z (sorted)."""
        return np.unique(self.values)

    def pmf(self, z: ArrayLike) -> float | np.ndarray:
        """Pr[Z = z] (summing atoms that share a value)."""
        zz, scalar = _reals("z", z)
        out = np.array([float(self.probs[self.values == x].sum()) for x in zz])
        return _out(out, scalar)

    def mean(self) -> float:
        if np.isinf(self.values).any():
            return math.inf
        return float(self.probs @ self.values)

    def var(self) -> float:
        if np.isinf(self.values).any():
            return math.inf
        m = self.mean()
        return float(self.probs @ (self.values - m) ** 2)

    def ess_sup(self) -> float:
        return float(self.values.max())

    def _log_delta_one(self, eps: np.ndarray) -> np.ndarray:
        order = np.argsort(self.values)
        v = self.values[order]
        lp = self._log_probs[order]
        out = np.empty(eps.shape)
        for i, e in enumerate(eps):
            k = np.searchsorted(v, e, side="right")
            if k == v.size:
                out[i] = -math.inf
                continue
            with np.errstate(invalid="ignore"):
                terms = lp[k:] + log1mexp(np.minimum(e - v[k:], 0.0))
            out[i] = float(special.logsumexp(terms))
        return out


def randomized_response_privacy_loss(epsilon: float) -> DiscretePrivacyLoss:
    """The loss of binary randomized response with truth probability e^ε/(1+e^ε).

    Z = ±ε with Pr[Z = ε] = e^ε/(1+e^ε); the worst case for ε-DP, whose Rényi
    curve is :func:`renyi.divergences.pure_dp_curve`.

    Args:
        epsilon: ε ∈ [0, ∞), finite.

    Examples:
        >>> round(randomized_response_privacy_loss(1.0).delta(0.0), 10)
        0.4621171573
    """
    e = NONNEGATIVE.check("epsilon", epsilon)
    if not math.isfinite(e):
        raise DomainError(f"epsilon must be in [0, inf) and finite; got {epsilon!r}", name="epsilon")
    v = np.array([e, -e])
    p = np.array([special.expit(e), special.expit(-e)])
    return DiscretePrivacyLoss(v, p, v.copy(), p.copy())


# --------------------------------------------------------------------------------------------
# averaging risk
# --------------------------------------------------------------------------------------------


def _as_loss(name: str, obj: Any) -> PrivacyLoss:
    if isinstance(obj, PrivacyLoss):
        return obj
    if hasattr(obj, "privacy_loss"):
        loss = obj.privacy_loss()
        if not isinstance(loss, PrivacyLoss):
            raise TypeError(f"{name}.privacy_loss() must return a PrivacyLoss; got {type(loss).__name__}")
        return loss
    if isinstance(obj, (tuple, list)) and len(obj) == 2:
        return DiscretePrivacyLoss.from_distributions(obj[0], obj[1])
    raise TypeError(
        f"{name} must be a PrivacyLoss, an object with .privacy_loss(), or a pair (p, q) of "
        f"probability vectors; got {type(obj).__name__}"
    )


def power_means(loss: Any, orders: ArrayLike) -> np.ndarray:
    """Power means of the likelihood ratio L = e^Z = p(Y)/q(Y), Y ~ P ("averaging risk").

    M_α = (E_P[L^{α−1}])^{1/(α−1)}, the power mean of order α − 1 of L under P, so that
    M_α = exp(D_α(P‖Q)) exactly. Special orders: α → 1 is the geometric mean exp(E_P[Z]) =
    exp(KL); α = 2 is the arithmetic mean E_P[L] (= E_Q[L²]); α = 0 is the harmonic mean
    1/E_P[1/L] = 1/Q(p > 0); α = ∞ is ess sup L. M_α is non-decreasing in α.

    Args:
        loss: a :class:`PrivacyLoss`, an object with ``.privacy_loss()``, or a pair (p, q).
        orders: α ∈ [0, ∞] (scalar or array).

    Returns:
        An array of M_α with the shape of ``orders`` (+∞ where infinite).

    Examples:
        >>> power_means(GaussianPrivacyLoss(0.5), [1.0, 2.0]).round(6).tolist()
        [1.648721, 2.718282]
    """
    pl = _as_loss("loss", loss)
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(pl.renyi_divergence(orders), dtype=np.float64))


# --------------------------------------------------------------------------------------------
# checking a claim
# --------------------------------------------------------------------------------------------

#: check_rdp slack: a divergence D "meets" a bound B when D ≤ B + CHECK_ATOL + CHECK_RTOL·|B|.
CHECK_RTOL = 1e-9
CHECK_ATOL = 1e-12


@dataclass(frozen=True, slots=True)
class RDPCheck:
    """Per-order comparison of a pair's Rényi divergences with a claimed bound.

    Attributes:
        claim: a description of the claim.
        orders: the orders α.
        forward: D_α(P‖Q).
        backward: D_α(Q‖P).
        bound: the claimed ε(α).
        holds_at: per order, max(forward, backward) ≤ bound + CHECK_ATOL + CHECK_RTOL·|bound|.
    """

    claim: str
    orders: tuple[float, ...]
    forward: tuple[float, ...]
    backward: tuple[float, ...]
    bound: tuple[float, ...]
    holds_at: tuple[bool, ...]

    @property
    def holds(self) -> bool:
        """True iff the claim holds at every checked order."""
        return all(self.holds_at)

    @property
    def divergence(self) -> tuple[float, ...]:
        """max(D_α(P‖Q), D_α(Q‖P)) per order."""
        return tuple(max(f, b) for f, b in zip(self.forward, self.backward))

    def __str__(self) -> str:
        head = f"{'alpha':>10}  {'D(P||Q)':>14}  {'D(Q||P)':>14}  {'claimed':>14}  holds"
        lines = [f"check of {self.claim}: {'HOLDS' if self.holds else 'FAILS'}", head]
        for a, f, b, c, h in zip(self.orders, self.forward, self.backward, self.bound, self.holds_at):
            lines.append(f"{a:>10.6g}  {f:>14.8g}  {b:>14.8g}  {c:>14.8g}  {'yes' if h else 'NO'}")
        return "\n".join(lines)


def _pair_divergences(obj: Any, alphas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(obj, (tuple, list)) and len(obj) == 2 and (
        hasattr(obj[0], "logpdf") or callable(obj[0])
    ):
        fwd = renyi_divergence_continuous(obj[0], obj[1], alphas).value
        bwd = renyi_divergence_continuous(obj[1], obj[0], alphas).value
        return np.asarray(fwd, dtype=np.float64), np.asarray(bwd, dtype=np.float64)
    loss = _as_loss("pair", obj)
    fwd = np.asarray(loss.renyi_divergence(alphas), dtype=np.float64)
    bwd = np.asarray(loss.dual().renyi_divergence(alphas), dtype=np.float64)
    return fwd, bwd


def _check(obj: Any, bound_fn: Callable[[np.ndarray], Any], claim: str, alphas: ArrayLike) -> RDPCheck:
    given: Any = [alphas] if np.ndim(alphas) == 0 else alphas
    a = ORDER.check_array("alphas", given).reshape(-1)
    fwd, bwd = _pair_divergences(obj, a)
    bound = np.broadcast_to(np.asarray(bound_fn(a), dtype=np.float64), a.shape)
    div = np.maximum(fwd, bwd)
    with np.errstate(invalid="ignore"):
        slack = np.where(np.isinf(bound), 0.0, CHECK_ATOL + CHECK_RTOL * np.abs(bound))
        holds = (div <= bound + slack) & ~np.isnan(bound)
    return RDPCheck(
        claim=claim,
        orders=tuple(float(x) for x in a),
        forward=tuple(float(x) for x in fwd),
        backward=tuple(float(x) for x in bwd),
        bound=tuple(float(x) for x in bound),
        holds_at=tuple(bool(h) for h in holds),
    )


def check_rdp(pair_or_mechanism: Any, guarantee: Any, alphas: Sequence[float] | ArrayLike = DEFAULT_CHECK_ORDERS) -> RDPCheck:
    """Check an RDP claim: D_α(P‖Q) and D_α(Q‖P) ≤ ``guarantee.rdp(α)`` at each order.

    Args:
        pair_or_mechanism: a pair (p, q) of probability vectors, a pair of frozen scipy
            continuous distributions (or log-density callables; integrated numerically, values
            rounded up), a :class:`PrivacyLoss`, or an object with ``.privacy_loss()`` (e.g. a
            mechanism; the loss is taken for its worst neighbouring pair).
        guarantee: any object with a vectorized ``.rdp(alpha)`` (duck typed).
        alphas: orders in (1, ∞].

    Returns:
        An :class:`RDPCheck`; ``.holds`` is True iff every order meets the bound up to the
        slack CHECK_ATOL + CHECK_RTOL·|bound| (round-off only).

    Examples:
        >>> class Claim:
        ...     def rdp(self, a):
        ...         return 0.5 * np.asarray(a)
        >>> check_rdp(GaussianPrivacyLoss(0.5), Claim(), [2.0, 8.0]).holds
        True
    """
    rdp = getattr(guarantee, "rdp", None)
    if rdp is None:
        raise TypeError(f"guarantee must have an .rdp(alpha) method; got {type(guarantee).__name__}")
    return _check(pair_or_mechanism, rdp, repr(guarantee), alphas)


def check_zcdp(pair_or_mechanism: Any, rho: float, xi: float = 0.0,
               alphas: Sequence[float] | ArrayLike = DEFAULT_CHECK_ORDERS) -> RDPCheck:
    """Check a (ξ, ρ)-zCDP claim: D_α ≤ ξ + ρα in both directions at each order ([BS16] Def 1).

    Args:
        pair_or_mechanism: as in :func:`check_rdp`.
        rho: ρ ∈ [0, ∞). xi: ξ ∈ [0, ∞).
        alphas: orders in (1, ∞].

    Examples:
        >>> check_zcdp(randomized_response_privacy_loss(1.0), 0.4621171572600098).holds
        True
        >>> check_zcdp(randomized_response_privacy_loss(1.0), 0.45).holds
        False
    """
    r = NONNEGATIVE.check("rho", rho)
    x = NONNEGATIVE.check("xi", xi)
    return _check(pair_or_mechanism, lambda a: x + r * a, f"({x!r}, {r!r})-zCDP", alphas)
