"""What a budget buys: confidence intervals for the noise renyi adds, in both directions.

For a mechanism that adds noise ``Z`` to each of ``cells`` answers, :func:`half_width` gives a
λ such that every released answer lies within λ of the true one with probability at least
``coverage``:

    P[max_j |Z_j| ≤ λ] ≥ coverage.

:func:`noise_for` inverts it: the largest noise parameter (σ or scale) whose half-width does
not exceed a requested λ. Both are *one-sided*: a returned half-width is never below the exact
one (the interval covers at least the stated rate), and a returned noise parameter never gives
a half-width above the one asked for.

Per-cell tails (β_cell = P[|Z| > λ]):

* Gaussian N(0, σ²): β_cell = 2Φ(−λ/σ) (closed form).
* Laplace Lap(b): β_cell = e^{−λ/b} (closed form).
* discrete Laplace, P(z) ∝ r^{|z|}, r = e^{−1/t}: P[|Z| > k] = 2r^{k+1}/(1 + r), an exact
  geometric sum, so the half-width is the smallest integer k meeting the target.
* discrete Gaussian 𝒩_ℤ(0, σ²): P[|Z| > k] = 2Σ_{x>k} e^{−x²/(2σ²)}/θ, θ = Σ_x e^{−x²/(2σ²)},
  summed exactly in log space. Where the sum would take more than 200 000 terms (σ above
  about 5 000), the bound P[Z > k] ≤ Φ(−k/σ) is used instead: Σ_{x>k} e^{−x²/(2σ²)} ≤ ∫_k^∞
  e^{−t²/(2σ²)} dt because the summand decreases on [k, ∞), and θ ≥ σ√(2π) by Poisson
  summation (θ = σ√(2π)·(1 + 2Σ_{m≥1} e^{−2π²σ²m²})). So the continuous Gaussian half-width,
  rounded up to an integer, is always a valid discrete one; the exact sum is only tighter.

Many cells (``cells = T``) with target failure probability β = 1 − coverage:

* ``method="independent"`` (default): renyi draws the noise of every cell independently, so
  P[max_j |Z_j| ≤ λ] = (1 − β_cell)^T exactly, and β_cell = 1 − (1 − β)^{1/T}.
* ``method="union"``: P[max_j |Z_j| > λ] ≤ T·β_cell (the union bound; valid whatever the
  dependence between cells), so β_cell = β/T. Always at least as wide as ``"independent"``.

Every per-cell target is computed in log space (β down to 1e-300 and T up to 1e15 work) and
lowered by a relative 1e-12, and every half-width is checked against its tail and rounded up,
so round-off can only widen an interval or shrink a noise parameter.

    >>> from renyi import Gaussian, Laplace, DiscreteGaussian
    >>> round(half_width(Gaussian(sigma=1.0)), 6)
    1.959964
    >>> round(half_width(Gaussian(sigma=100.0), cells=3000, beta=0.05), 2)
    429.98
    >>> half_width(DiscreteGaussian(sigma=1))
    2.0
    >>> round(noise_for(429.977, cells=3000, beta=0.05), 3)
    100.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special

from ._validation import NONNEGATIVE, POSITIVE, PROBABILITY_OPEN, check_int
from .errors import DomainError

__all__ = [
    "KINDS",
    "METHODS",
    "half_width",
    "noise_for",
    "failure_probability",
]

#: Noise kinds :func:`noise_for` can solve for (the parameter is σ or the scale).
KINDS = ("gaussian", "laplace", "discrete_gaussian", "discrete_laplace")
#: How many cells are made simultaneous: exactly for independent noise, or by the union bound.
METHODS = ("independent", "union")

_LOG2 = math.log(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: Relative safety margin on per-cell targets and results (round-off only widens intervals).
_MARGIN = 1e-12
#: Most terms an exact discrete-Gaussian tail sum may take before the continuous bound is used.
_MAX_TERMS = 200_000


# --------------------------------------------------------------------------- arguments
def _log_beta(coverage: float | None, beta: float | None) -> float:
    """log β from exactly one of ``coverage`` = 1 − β and ``beta``, both in (0, 1)."""
    if beta is not None:
        if coverage is not None and coverage != 0.95:
            raise DomainError("give either coverage or beta, not both", name="beta", value=beta)
        return math.log(PROBABILITY_OPEN.check("beta", beta))
    c = PROBABILITY_OPEN.check("coverage", 0.95 if coverage is None else coverage)
    return math.log1p(-c)


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise DomainError(f"method must be one of {', '.join(METHODS)}; got {method!r}", name="method", value=method)
    return method


def _log_cell_beta(log_beta: float, cells: int, method: str) -> float:
    """log of the per-cell failure probability that makes ``cells`` cells fail together w.p. ≤ β.

    Lowered by a relative 1e-12 so that round-off in the tails cannot push coverage below target.
    """
    if cells == 1:
        out = log_beta
    elif method == "union":
        out = log_beta - math.log(cells)
    else:
        # 1 − (1 − β)^{1/T} = −expm1(log1p(−β)/T), with log1p(−β) from log β without cancellation
        log_keep = math.log1p(-math.exp(log_beta)) if log_beta < -_LOG2 else math.log(-math.expm1(log_beta))
        out = math.log(-math.expm1(log_keep / cells))
    return out - _MARGIN * max(1.0, abs(out))


def _kind(kind: str) -> str:
    k = str(kind).replace("-", "_").lower()
    if k not in KINDS:
        raise DomainError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}", name="kind", value=kind)
    return k


def _noise_of(mechanism: Any) -> tuple[str, float]:
    """(kind, parameter) of a noise-adding mechanism: σ for Gaussians, the scale for Laplaces."""
    from .mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace

    if isinstance(mechanism, Gaussian):
        return "gaussian", float(mechanism.sigma)
    if isinstance(mechanism, Laplace):
        return "laplace", float(mechanism.scale)
    if isinstance(mechanism, DiscreteGaussian):
        return "discrete_gaussian", math.sqrt(float(mechanism.sigma2))
    if isinstance(mechanism, DiscreteLaplace):
        return "discrete_laplace", float(mechanism.scale)
    name = type(mechanism).__name__
    hint = " (use renyi.accuracy.rr_estimate for its estimate and interval)" if name == "RandomizedResponse" else ""
    raise DomainError(
        "mechanism must add noise to numeric answers (Gaussian, Laplace, DiscreteGaussian or DiscreteLaplace); "
        f"got {name}{hint}",
        name="mechanism",
        value=mechanism,
    )


# --------------------------------------------------------------------------- per-cell tails
def _log_tail(kind: str, param: float, lam: float) -> float:
    """An upper bound on log P[|Z| > λ] for one cell (exact up to round-off)."""
    if kind == "gaussian":
        return _LOG2 + float(special.log_ndtr(-lam / param))
    if kind == "laplace":
        return -lam / param
    k = math.floor(lam)
    if kind == "discrete_laplace":
        return _dlap_log_tail(param, k)
    return _dg_log_tail(param, k)


def _dlap_log_tail(t: float, k: int) -> float:
    """log P[|Z| > k] = log(2r^{k+1}/(1 + r)), r = e^{−1/t}, for the discrete Laplace (k ≥ 0)."""
    return _LOG2 - (k + 1) / t - math.log1p(math.exp(-1.0 / t))


def _dg_log_tail(sigma: float, k: int) -> float:
    """log P[|Z| > k] for 𝒩_ℤ(0, σ²), k ≥ 0: exact sum, or the bound 2Φ(−k/σ) when too long."""
    s2 = sigma * sigma
    bound = _LOG2 + float(special.log_ndtr(-k / sigma))
    span = int(math.ceil(40.0 * sigma)) + 2
    if span > _MAX_TERMS:
        return bound
    from .mechanisms.discrete import _log_theta0

    x = np.arange(k + 1, k + 1 + span, dtype=np.float64)
    # the remainder beyond the last term, bounded by its integral (the summand decreases there)
    last = float(x[-1])
    rem = _LOG_SQRT_2PI + math.log(sigma) + float(special.log_ndtr(-last / sigma))
    s = float(special.logsumexp(np.append(-x * x / (2.0 * s2), rem)))
    return min(bound, _LOG2 + s - _log_theta0(s2))


def _dg_log_tails(sigma: float, kmax: int) -> np.ndarray:
    """log P[|Z| > k] for k = 0..kmax under 𝒩_ℤ(0, σ²) (one reverse cumulative sum)."""
    from .mechanisms.discrete import _log_theta0

    s2 = sigma * sigma
    top = kmax + int(math.ceil(40.0 * sigma)) + 2
    x = np.arange(0, top + 1, dtype=np.float64)
    lp = -x * x / (2.0 * s2)
    rem = _LOG_SQRT_2PI + math.log(sigma) + float(special.log_ndtr(-top / sigma))
    # rev[j] = log Σ_{x=j}^{top} e^{−x²/(2σ²)}; every term is positive, so no cancellation
    rev = np.logaddexp.accumulate(lp[::-1])[::-1]
    tails = np.logaddexp(rev[1 : kmax + 2], rem) + _LOG2 - _log_theta0(s2)
    bound = _LOG2 + special.log_ndtr(-np.arange(kmax + 1, dtype=np.float64) / sigma)
    return np.asarray(np.minimum(tails, bound), dtype=np.float64)


def _gauss_z(log_cell: float) -> float:
    """z with 2Φ(−z) = β_cell, from log β_cell (valid far below 1e-308)."""
    return -float(special.ndtri_exp(log_cell - _LOG2))


# --------------------------------------------------------------------------- half-widths
def _cell_half_width(kind: str, param: float, log_cell: float) -> float:
    """The smallest λ (an integer for discrete noise) with P[|Z| > λ] ≤ β_cell, rounded up."""
    if kind == "gaussian":
        lam = param * _gauss_z(log_cell) * (1.0 + _MARGIN)
    elif kind == "laplace":
        lam = -param * log_cell * (1.0 + _MARGIN)
    elif kind == "discrete_laplace":
        # 2r^{k+1}/(1+r) ≤ β  ⇔  k + 1 ≥ t·(log 2 − log(1 + r) − log β)
        need = param * (_LOG2 - math.log1p(math.exp(-1.0 / param)) - log_cell)
        k = max(0, math.ceil(need) - 1)
        while k > 0 and _dlap_log_tail(param, k - 1) <= log_cell:
            k -= 1
        while _dlap_log_tail(param, k) > log_cell:
            k += 1
        return float(k)
    else:
        cont = max(0, math.ceil(param * max(_gauss_z(log_cell), 0.0)))  # always valid (module docstring)
        if int(math.ceil(40.0 * param)) + cont > _MAX_TERMS:
            k = cont
            while k > 0 and _dg_log_tail(param, k - 1) <= log_cell:  # a step or two at most
                k -= 1
        else:
            tails = _dg_log_tails(param, cont)
            ok = np.flatnonzero(tails <= log_cell)
            k = int(ok[0]) if ok.size else cont
        while _dg_log_tail(param, k) > log_cell:  # guards round-off only
            k += 1
        return float(k)
    # continuous kinds: check the tail at λ and step up until it holds (round-off guard)
    for _ in range(64):
        if _log_tail(kind, param, lam) <= log_cell:
            break
        lam = math.nextafter(lam * (1.0 + 1e-15), math.inf)
    return lam


def half_width(
    mechanism: Any,
    coverage: float = 0.95,
    cells: int = 1,
    *,
    beta: float | None = None,
    method: str = "independent",
) -> float:
    """The half-width λ of a simultaneous confidence interval for a mechanism's noisy answers.

    Every one of ``cells`` released answers v_j + Z_j lies in [v_j − λ, v_j + λ] with
    probability at least ``coverage``: P[max_j |Z_j| ≤ λ] ≥ coverage. Exact tails are used for
    every noise (module docstring); for discrete noise λ is an integer.

    Args:
        mechanism: a ``Gaussian``, ``Laplace``, ``DiscreteGaussian`` or ``DiscreteLaplace``
            (the noise of each cell; the sensitivity does not matter here).
        coverage: the simultaneous coverage 1 − β ∈ (0, 1).
        cells: the number T ≥ 1 of answers released with independent noise.
        beta: the failure probability β ∈ (0, 1), instead of ``coverage`` (more precise for
            tiny β).
        method: ``"independent"`` (exact for renyi's independent noise) or ``"union"`` (the
            union bound, valid for any dependence; at least as wide).

    Returns:
        λ ≥ 0, an upper bound on the exact half-width (the interval covers at least the
        stated rate).

    Raises:
        DomainError: a parameter outside its domain, or a mechanism that adds no numeric noise
            (randomized response has :func:`rr_estimate`).

    References:
        Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential Privacy",
        Definition 1 (the discrete Gaussian); θ ≥ σ√(2π) follows from the Poisson summation
        formula.

    Examples:
        >>> from renyi import Laplace, DiscreteLaplace
        >>> round(half_width(Laplace(scale=1.0)), 6)   # log(1/0.05)
        2.995732
        >>> half_width(DiscreteLaplace(scale=2), coverage=0.9)   # 2r⁵/(1+r) ≈ 0.102 > 0.1
        5.0
    """
    kind, param = _noise_of(mechanism)
    log_beta = _log_beta(coverage, beta)
    cells = check_int("cells", cells, minimum=1)
    log_cell = _log_cell_beta(log_beta, cells, _check_method(method))
    return _cell_half_width(kind, param, log_cell)


def failure_probability(
    mechanism: Any,
    half_width: float,
    cells: int = 1,
    *,
    method: str = "independent",
) -> float:
    """P[max_j |Z_j| > λ] over ``cells`` independent noise draws: exact, or the union bound.

    Args:
        mechanism: a ``Gaussian``, ``Laplace``, ``DiscreteGaussian`` or ``DiscreteLaplace``.
        half_width: λ ∈ [0, ∞).
        cells: T ≥ 1.
        method: ``"independent"`` (1 − (1 − β_cell)^T) or ``"union"`` (min(1, T·β_cell)).

    Returns:
        β ∈ [0, 1]: the failure probability of the interval ±λ (an upper bound up to round-off;
        the discrete Gaussian beyond a few million terms uses the bound 2Φ(−k/σ)).

    Examples:
        >>> from renyi import Gaussian
        >>> round(failure_probability(Gaussian(sigma=1.0), 1.959963984540054), 12)
        0.05
    """
    kind, param = _noise_of(mechanism)
    lam = NONNEGATIVE.check("half_width", half_width)
    cells = check_int("cells", cells, minimum=1)
    _check_method(method)
    lt = min(0.0, _log_tail(kind, param, lam))
    if method == "union":
        return min(1.0, math.exp(lt + math.log(cells)))
    # 1 − (1 − p)^T = −expm1(T·log1p(−p))
    log_keep = math.log1p(-math.exp(lt)) if lt < -_LOG2 else math.log(-math.expm1(lt))
    return min(1.0, -math.expm1(cells * log_keep))


# --------------------------------------------------------------------------- the inverse
def _largest(feasible: Callable[[float], bool], start: float) -> float:
    """The largest x > 0 (to ~1e-13 relative) with feasible(x), feasible decreasing in x and true at ``start``."""
    lo = start
    hi = start * 2.0
    while feasible(hi):
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            return lo
    for _ in range(200):
        if hi - lo <= 1e-13 * lo:
            break
        mid = 0.5 * (lo + hi)
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    return lo


def noise_for(
    half_width: float,
    coverage: float = 0.95,
    cells: int = 1,
    kind: str = "gaussian",
    *,
    beta: float | None = None,
    method: str = "independent",
) -> float:
    """The largest noise parameter whose simultaneous interval is no wider than ``half_width``.

    The inverse of :func:`half_width`: for the returned σ (Gaussian kinds) or scale (Laplace
    kinds), ``half_width(mechanism, coverage, cells) ≤ half_width`` holds, so the noise is
    enough for the accuracy asked (one-sided; the parameter is rounded down). The privacy
    follows from the mechanism: for the Gaussian with ℓ₂-sensitivity Δ, ρ = Δ²/(2σ²); for the
    Laplace with ℓ₁-sensitivity Δ, ε = Δ/b.

    Args:
        half_width: λ ∈ (0, ∞); for discrete noise only ⌊λ⌋ matters (λ ∈ [0, ∞) allowed).
        coverage: the simultaneous coverage 1 − β ∈ (0, 1).
        cells: the number T ≥ 1 of answers.
        kind: ``"gaussian"``, ``"laplace"``, ``"discrete_gaussian"`` or ``"discrete_laplace"``.
        beta: the failure probability β ∈ (0, 1), instead of ``coverage``.
        method: ``"independent"`` or ``"union"`` (see :func:`half_width`).

    Returns:
        σ (Gaussian kinds) or the scale b or t (Laplace kinds): a lower bound on the largest
        noise that meets the target.

    Raises:
        DomainError: a parameter outside its domain, or a discrete target so tight that no
            noise meets it (the answer would be zero noise).

    Examples:
        >>> round(noise_for(1.959963984540054), 9)
        1.0
        >>> from renyi import DiscreteGaussian
        >>> s = noise_for(2, kind="discrete_gaussian")
        >>> half_width(DiscreteGaussian(s)) <= 2
        True
    """
    k = _kind(kind)
    lam = (NONNEGATIVE if k.startswith("discrete") else POSITIVE).check("half_width", half_width)
    log_beta = _log_beta(coverage, beta)
    cells = check_int("cells", cells, minimum=1)
    log_cell = _log_cell_beta(log_beta, cells, _check_method(method))
    if k == "gaussian":
        out = lam / _gauss_z(log_cell) * (1.0 - _MARGIN)
    elif k == "laplace":
        out = lam / -log_cell * (1.0 - _MARGIN)
    elif k == "discrete_laplace":
        kk = math.floor(lam)
        # the tail 2r^{k+1}/(1+r) increases with t: the largest t with tail ≤ β_cell
        hi = (kk + 1) / max(_LOG2 - log_cell, 1e-300)  # here (k+1)/t ≥ log 2 − log β: tail ≤ β
        out = _largest(lambda t: _dlap_log_tail(t, kk) <= log_cell, hi)
    else:
        kk = math.floor(lam)
        z = _gauss_z(log_cell)
        if kk == 0 or z <= 0.0:
            start = 1e-3  # tiny σ: almost all mass at 0
            while _dg_log_tail(start, kk) > log_cell:
                start *= 0.5
                if start < 1e-6:
                    raise DomainError(
                        f"half_width {half_width!r} is too small for any discrete Gaussian at this coverage",
                        name="half_width", value=half_width)
        else:
            start = kk / z * (1.0 - _MARGIN)  # the continuous answer is valid (module docstring)
        if int(math.ceil(40.0 * start)) > _MAX_TERMS:
            out = start
        else:
            out = _largest(lambda s: _dg_log_tail(s, kk) <= log_cell, start)
    if k in ("gaussian", "laplace"):
        # the round trip must hold in floating point too: step down until it does
        for _ in range(64):
            if not (math.isfinite(out) and out > 0.0) or _cell_half_width(k, out, log_cell) <= lam:
                break
            out = math.nextafter(out * (1.0 - 1e-15), 0.0)
    if not math.isfinite(out) or out <= 0.0:
        raise DomainError(f"no finite noise meets half_width={half_width!r} at this coverage", name="half_width",
                          value=half_width)
    return out
