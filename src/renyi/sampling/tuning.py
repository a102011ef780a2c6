"""The privacy cost of hyperparameter search with a random number of runs (transformer).

Running a private training procedure K times (each with its own hyperparameters) and
publishing only the best run costs far less than K-fold composition when K is random:
Papernot & Steinke (2022) bound it in RDP for a truncated-geometric or a Poisson number of
runs. :class:`Tuning` records "best of a random number of runs" in the ledger as one
guarantee, instead of pretending one run happened (too small) or composing every run (too
large). Only the selected run's output (and its score) may be released.

References:
    [PS22] N. Papernot, T. Steinke, Hyperparameter Tuning with Rényi Differential Privacy,
        ICLR 2022, arXiv:2110.03620: Thm 2 (truncated negative binomial; the geometric
        distribution is η = 1) and Thm 6 (Poisson).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from renyi.core._validation import Interval, check_real
from renyi.core._values import CurveValue
from renyi.guarantees import RDP, Guarantee
from renyi.core.errors import ConversionError, DomainError
from renyi.mechanisms.base import Mechanism

__all__ = ["Tuning", "REPETITIONS"]

#: distributions of the number of runs that :class:`Tuning` accepts
REPETITIONS = ("geometric", "poisson")

_MEAN = Interval(1.0, math.inf, lo_closed=True)
#: orders at which the bounds are evaluated (λ of [PS22]) and optimised over (λ̂ of Thm 2)
_GRID = np.unique(
    np.concatenate([1.0 + np.geomspace(1e-4, 1.0, 60), np.linspace(2.0, 64.0, 249), np.geomspace(64.0, 4096.0, 60)])
)


def _curve_of(item: Any) -> RDP:
    g = item.guarantee if isinstance(item, Mechanism) else item
    if not isinstance(g, Guarantee):
        raise TypeError(f"guarantee_or_mechanism must be a renyi Guarantee or Mechanism; got {type(item).__name__}")
    try:
        curve = g.to_rdp()
    except ConversionError as exc:
        raise ConversionError(f"tuning needs an RDP curve for one run: {exc}") from exc
    return curve


class _GeometricCurve(CurveValue):
    """[PS22] Thm 2 with η = 1: ε'(λ) = ε(λ) + 2·min_λ̂[(1 − 1/λ̂)ε(λ̂) + log(1/γ)/λ̂] + log(E K)/(λ − 1),
    with γ = 1/E K, then made non-decreasing in λ (RDP is monotone in the order)."""

    __slots__ = ("base", "mean", "c", "_label")

    def __init__(self, base: RDP, mean: float) -> None:
        self.base, self.mean = base, mean
        lam_hat = _GRID
        eps_hat = base.rdp_finite(lam_hat)
        log_inv_gamma = math.log(mean)
        with np.errstate(invalid="ignore", over="ignore"):
            terms = (1.0 - 1.0 / lam_hat) * eps_hat + log_inv_gamma / lam_hat
        # λ̂ = 1 (KL) is allowed by Thm 2: the term is then log(1/γ), finite for every base
        self.c = 2.0 * float(min(np.nanmin(terms), log_inv_gamma))
        self._label = f"best of Geometric(mean={mean:g}) runs of {base.label or base!r}"

    def _key(self) -> tuple[Any, ...]:
        return ("geometric", self.base, self.mean)

    def _raw(self, a: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            return self.base.rdp_finite(a) + self.c + math.log(self.mean) / (a - 1.0)

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return _monotone(self._raw, alpha)

    def __repr__(self) -> str:
        return self._label


class _PoissonCurve(CurveValue):
    """[PS22] Thm 6: ε'(λ) = ε(λ) + μ·δ̂ + log(μ)/(λ − 1), δ̂ the single run's δ at
    ε̂ = log(1 + 1/(λ − 1)); then made non-decreasing in λ."""

    __slots__ = ("base", "mean", "_label")

    def __init__(self, base: RDP, mean: float) -> None:
        self.base, self.mean = base, mean
        self._label = f"best of Poisson(mean={mean:g}) runs of {base.label or base!r}"

    def _key(self) -> tuple[Any, ...]:
        return ("poisson", self.base, self.mean)

    def _delta_hat(self, eps_hat: np.ndarray) -> np.ndarray:
        """An upper bound on the single run's δ at each ε̂: [CKS20] Prop. 12 minimised over the
        order grid (any order gives a valid δ)."""
        beta = _GRID[_GRID > 1.0 + 1e-9]
        eb = self.base.rdp_finite(beta)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            log_d = (beta[None, :] - 1.0) * (eb[None, :] - eps_hat[:, None] + np.log1p(-1.0 / beta[None, :])) - np.log(
                beta[None, :]
            )
            log_d = np.where(np.isnan(log_d), np.inf, log_d)
        return np.asarray(np.minimum(1.0, np.exp(np.min(log_d, axis=1))))

    def _raw(self, a: np.ndarray) -> np.ndarray:
        flat = np.asarray(a, dtype=np.float64).ravel()
        eps = self.base.rdp_finite(flat)
        d_hat = self._delta_hat(np.log1p(1.0 / (flat - 1.0)))
        out = eps + self.mean * d_hat + math.log(self.mean) / (flat - 1.0)
        return np.asarray(out).reshape(np.shape(a))

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        return _monotone(self._raw, alpha)

    def __repr__(self) -> str:
        return self._label


def _monotone(raw: Any, alpha: np.ndarray) -> np.ndarray:
    """min over λ' ≥ λ of raw(λ') on {λ} ∪ grid: every raw(λ') bounds ε(λ) ≤ ε(λ')."""
    a = np.asarray(alpha, dtype=np.float64)
    flat = a.ravel()
    grid_vals = np.asarray(raw(_GRID), dtype=np.float64)
    # suffix minima of the grid values: best bound from grid orders ≥ λ
    suffix = np.minimum.accumulate(grid_vals[::-1])[::-1]
    own = np.asarray(raw(flat), dtype=np.float64)
    idx = np.searchsorted(_GRID, flat, side="left")
    from_grid = np.where(idx < _GRID.size, suffix[np.minimum(idx, _GRID.size - 1)], np.inf)
    out = np.minimum(own, from_grid)
    out = np.where(np.isnan(out), np.inf, out)
    return out.reshape(a.shape)


@dataclass(frozen=True, slots=True)
class Tuning(Mechanism):
    """Hyperparameter search: run a private procedure a random number K of times and release
    only the best run ([PS22]).

    * ``repetitions="geometric"``: K ~ Geometric with E[K] = ``mean`` (P[K = k] = γ(1 − γ)^{k−1},
      γ = 1/mean); [PS22] Thm 2 with η = 1, the order λ̂ optimised over a grid.
    * ``repetitions="poisson"``: K ~ Poisson(``mean``) (K = 0 releases nothing); [PS22] Thm 6,
      using the single run's δ at ε̂ = log(1 + 1/(λ − 1)).

    Every evaluated bound is valid, and the curve is an upper bound on ε(λ) at every order;
    it is made non-decreasing in λ (RDP is monotone in the order). The number of runs must
    really be drawn from the stated distribution (``renyi.samplers``-style secure randomness)
    and must not depend on the results; the transformer cannot check that.

    Args:
        guarantee_or_mechanism: one run (a mechanism, or a guarantee with an RDP curve, e.g. a
            whole training run ``PoissonSubsampled(Gaussian(σ), q).compose(T)``).
        repetitions: "geometric" or "poisson".
        mean: E[K] ∈ [1, ∞).

    Raises:
        DomainError: an unknown ``repetitions`` or ``mean`` < 1.
        ConversionError: the run has no RDP curve.

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> t = Tuning(Gaussian(sigma=4.0), repetitions="geometric", mean=10)
        >>> round(float(t.rdp(8.0)), 4)
        1.5783
    """

    run: Any
    repetitions: str = "geometric"
    mean: float = 1.0

    def __init__(self, guarantee_or_mechanism: Any, repetitions: str = "geometric", *, mean: float) -> None:
        object.__setattr__(self, "run", guarantee_or_mechanism)
        object.__setattr__(self, "repetitions", repetitions)
        object.__setattr__(self, "mean", mean)
        self.__post_init__()

    def __post_init__(self) -> None:
        if self.repetitions not in REPETITIONS:
            raise DomainError(
                f"repetitions must be one of {', '.join(REPETITIONS)}; got {self.repetitions!r}",
                name="repetitions",
                value=self.repetitions,
            )
        object.__setattr__(self, "mean", _MEAN.check("mean", check_real("mean", self.mean)))
        _curve_of(self.run)  # fail early when there is no RDP curve

    @property
    def neighbouring(self) -> str:  # type: ignore[override]
        return getattr(self.run, "neighbouring", "add_remove")

    @property
    def theorem(self) -> str:
        """The result this guarantee rests on, as cited in reports."""
        return "Papernot & Steinke (2022), Thm 2 (η = 1)" if self.repetitions == "geometric" else (
            "Papernot & Steinke (2022), Thm 6"
        )

    def __repr__(self) -> str:
        return f"Tuning({self.run!r}, repetitions={self.repetitions!r}, mean={self.mean:g})"

    @property
    def guarantee(self) -> Guarantee:
        base = _curve_of(self.run)
        curve: _GeometricCurve | _PoissonCurve
        if self.repetitions == "geometric":
            curve = _GeometricCurve(base, self.mean)
        else:
            curve = _PoissonCurve(base, self.mean)
        return RDP(curve, eps_inf=math.inf, convex=False, label=repr(curve))

    def release(self, value: Any, rng: Any = None) -> Any:
        raise ConversionError("Tuning describes a search procedure; release the best run's output directly")
