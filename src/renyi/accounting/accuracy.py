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
from dataclasses import dataclass
from typing import Any

import numpy as np
from renyi.core._lazy import special
from renyi.core._logmath import log_ndtr_np, logsumexp_np, ndtri_exp_np

from renyi.core._validation import NONNEGATIVE, POSITIVE, PROBABILITY_OPEN, check_int
from renyi.core.errors import DomainError

__all__ = [
    "KINDS",
    "METHODS",
    "half_width",
    "noise_for",
    "failure_probability",
    "RREstimate",
    "rr_estimate",
    "LOSSES",
    "Query",
    "QueryAccuracy",
    "Allocation",
    "allocate",
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


def _log_cell_beta(log_beta: float, cells: float, method: str) -> float:
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
        per = -math.expm1(log_keep / cells)
        # for β near the smallest double log_keep / T underflows to 0; the union bound β/T is
        # never larger than 1 − (1 − β)^{1/T}, so it is a valid (slightly wider) choice
        out = math.log(per) if per > 0.0 else log_beta - math.log(cells)
    return out - _MARGIN * max(1.0, abs(out))


def _kind(kind: str) -> str:
    k = str(kind).replace("-", "_").lower()
    if k not in KINDS:
        raise DomainError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}", name="kind", value=kind)
    return k


def _noise_of(mechanism: Any) -> tuple[str, float]:
    """(kind, parameter) of a noise-adding mechanism: σ for Gaussians, the scale for Laplaces."""
    from renyi.mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace

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
        return _LOG2 + float(log_ndtr_np(-lam / param))
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
    bound = _LOG2 + float(log_ndtr_np(-k / sigma))
    span = int(math.ceil(40.0 * sigma)) + 2
    if span > _MAX_TERMS:
        return bound
    from renyi.mechanisms.discrete import _log_theta0

    x = np.arange(k + 1, k + 1 + span, dtype=np.float64)
    # the remainder beyond the last term, bounded by its integral (the summand decreases there)
    last = float(x[-1])
    rem = _LOG_SQRT_2PI + math.log(sigma) + float(log_ndtr_np(-last / sigma))
    s = logsumexp_np(np.append(-x * x / (2.0 * s2), rem))
    return min(bound, _LOG2 + s - _log_theta0(s2))


def _dg_log_tails(sigma: float, kmax: int) -> np.ndarray:
    """log P[|Z| > k] for k = 0..kmax under 𝒩_ℤ(0, σ²) (one reverse cumulative sum)."""
    from renyi.mechanisms.discrete import _log_theta0

    s2 = sigma * sigma
    top = kmax + int(math.ceil(40.0 * sigma)) + 2
    x = np.arange(0, top + 1, dtype=np.float64)
    lp = -x * x / (2.0 * s2)
    rem = _LOG_SQRT_2PI + math.log(sigma) + float(log_ndtr_np(-top / sigma))
    # rev[j] = log Σ_{x=j}^{top} e^{−x²/(2σ²)}; every term is positive, so no cancellation
    rev = np.logaddexp.accumulate(lp[::-1])[::-1]
    tails = np.logaddexp(rev[1 : kmax + 2], rem) + _LOG2 - _log_theta0(s2)
    bound = _LOG2 + log_ndtr_np(-np.arange(kmax + 1, dtype=np.float64) / sigma)
    return np.asarray(np.minimum(tails, bound), dtype=np.float64)


def _gauss_z(log_cell: float) -> float:
    """z with 2Φ(−z) = β_cell, from log β_cell (valid far below 1e-308)."""
    return -ndtri_exp_np(log_cell - _LOG2)


# --------------------------------------------------------------------------- half-widths
#: integers from here on are not all doubles: k and k ± 1 give the same tail
_EXACT_INT = 2**53


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
        if k >= _EXACT_INT:
            # beyond 2⁵³ the tail, a function of the float k/t, cannot tell k from k ± 1: the
            # step loops below would never end (a tiny ρ hung --dry-run); round up instead
            return float(math.ceil(need * (1.0 + _MARGIN)))
        while k > 0 and _dlap_log_tail(param, k - 1) <= log_cell:
            k -= 1
        while _dlap_log_tail(param, k) > log_cell:
            k += 1
        return float(k)
    else:
        cont = max(0, math.ceil(param * max(_gauss_z(log_cell), 0.0)))  # always valid (module docstring)
        if cont >= _EXACT_INT:
            return float(cont)  # (as above: floats cannot refine k here, and cont is valid)
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
    if lt >= 0.0:  # λ ≈ 0 (e.g. 5e-324 against σ ≈ 8000): each cell fails with probability 1
        return 1.0
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


# --------------------------------------------------------------------------- randomized response
@dataclass(frozen=True, slots=True)
class RREstimate:
    """Unbiased category frequencies from randomized-response counts, with confidence intervals.

    Attributes:
        estimate: π̂_j = (c_j/n − q)/(p − q) for each category: unbiased, so it may fall outside
            [0, 1] (clip it for display, not for averaging).
        lower, upper: simultaneous intervals for the true frequencies π_j, within [0, 1].
        n: the number of responses.
        coverage: the simultaneous coverage the intervals were built for (they cover at least
            this rate).
    """

    estimate: tuple[float, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    n: int
    coverage: float

    def to_dict(self) -> dict[str, Any]:
        """These fields as a JSON-ready dict."""
        return {"estimate": list(self.estimate), "lower": list(self.lower), "upper": list(self.upper),
                "n": self.n, "coverage": self.coverage}


def rr_estimate(counts: Any, mechanism: Any, coverage: float = 0.95, *, beta: float | None = None) -> RREstimate:
    """Estimate true category frequencies from the counts of randomized responses.

    The n respondents are taken as drawn independently from a population with category
    frequencies π (the intervals are for π). With truth probability p and every other category
    reported with q = (1 − p)/(k − 1), a response equals category j with probability
    θ_j = q + (p − q)π_j, so the count c_j is Binomial(n, θ_j) and π̂_j = (c_j/n − q)/(p − q)
    is unbiased (also for the frequencies of a fixed group of n people, by linearity). The interval for θ_j is the
    Clopper–Pearson interval (Clopper & Pearson 1934), which covers at least its nominal rate
    for every θ_j; it maps to π_j through the same affine map and is clipped to [0, 1] (π_j lies
    there, so clipping loses no coverage). For k > 2 categories the k intervals are made
    simultaneous by the union bound (β/k each; the counts are multinomial, not independent);
    for k = 2 one interval determines the other (π_0 = 1 − π_1), so no correction is needed.

    p is the truth probability the mechanism actually uses when it releases
    (``RandomizedResponse`` rounds the nominal e^ε/(e^ε + k − 1) down to a multiple of 2⁻⁵³).

    Args:
        counts: the k observed counts c_0..c_{k−1} (non-negative integers, n = Σ c_j ≥ 1).
        mechanism: the ``RandomizedResponse`` that produced the responses (ε > 0).
        coverage: simultaneous coverage 1 − β ∈ (0, 1).
        beta: β ∈ (0, 1) instead of ``coverage``.

    Returns:
        An :class:`RREstimate`; its intervals cover the true frequencies simultaneously with
        probability at least ``coverage``.

    Raises:
        DomainError: counts of the wrong length, negative or all zero; ε = 0 (the responses
            carry no information); coverage or β outside (0, 1).

    Examples:
        >>> from renyi import RandomizedResponse
        >>> r = rr_estimate([300, 700], RandomizedResponse(math.log(3)))   # p = 3/4
        >>> [round(x, 6) for x in r.estimate]
        [0.1, 0.9]
        >>> r.lower[1] < 0.9 < r.upper[1]
        True
    """
    from renyi.mechanisms import RandomizedResponse

    if not isinstance(mechanism, RandomizedResponse):
        raise DomainError(f"mechanism must be a RandomizedResponse; got {type(mechanism).__name__}",
                          name="mechanism", value=mechanism)
    k = mechanism.k
    c = np.asarray(counts)
    if c.shape != (k,) or c.dtype.kind not in "iuf" or np.any(c < 0) or np.any(c != np.floor(c)):
        raise DomainError(f"counts must be {k} non-negative integers (one per category); got {counts!r}",
                          name="counts", value=counts)
    c = c.astype(np.int64)
    n = int(c.sum())
    if n < 1:
        raise DomainError("counts must contain at least one response; got all zeros", name="counts", value=counts)
    log_beta = _log_beta(coverage, beta)
    if float(mechanism.epsilon) == 0.0:
        raise DomainError("mechanism.epsilon must be in (0, inf) to estimate anything; got 0 (pure noise)",
                          name="epsilon", value=0.0)
    p = mechanism._keep_numerator / 2.0**53  # the probability release() really uses
    q = (1.0 - p) / (k - 1)
    cells = 1 if k == 2 else k
    a = math.exp(log_beta) / cells * (1.0 - _MARGIN)  # β per interval (union bound for k > 2)
    with np.errstate(invalid="ignore"):
        lo = np.where(c > 0, special.betaincinv(c, n - c + 1, a / 2.0), 0.0)
        # the upper quantile as 1 − (lower quantile of the mirrored Beta): no 1 − a/2 round-off
        hi = np.where(c < n, 1.0 - special.betaincinv(n - c, c + 1, a / 2.0), 1.0)
    est = (c / n - q) / (p - q)
    low = np.clip((lo - q) / (p - q), 0.0, 1.0)
    up = np.clip((hi - q) / (p - q), 0.0, 1.0)
    cov = -math.expm1(log_beta) if beta is None else 1.0 - beta
    return RREstimate(tuple(map(float, est)), tuple(map(float, low)), tuple(map(float, up)), n, cov)


# --------------------------------------------------------------------------- budget allocation
#: Losses :func:`allocate` can minimise.
LOSSES = ("weights", "variance", "max_relative")


@dataclass(frozen=True, slots=True)
class Query:
    """One query sharing a budget.

    Args:
        name: a label.
        sensitivity: Δ ∈ (0, ∞): ℓ₂ for Gaussian noise (a ``ZCDP`` budget), ℓ₁ for Laplace noise
            (a ``PureDP`` budget), over all of the query's cells.
        cells: the number of answers T ≥ 1 the query releases (its interval is simultaneous).
        weight: w ∈ (0, ∞): the query's importance in the loss (its share under ``"weights"``).
        magnitude: m ∈ (0, ∞): a typical answer, so that λ/m is a relative error.
    """

    name: str
    sensitivity: float = 1.0
    cells: int = 1
    weight: float = 1.0
    magnitude: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitivity", POSITIVE.check("sensitivity", self.sensitivity))
        object.__setattr__(self, "cells", check_int("cells", self.cells, minimum=1))
        object.__setattr__(self, "weight", POSITIVE.check("weight", self.weight))
        object.__setattr__(self, "magnitude", POSITIVE.check("magnitude", self.magnitude))


@dataclass(frozen=True, slots=True)
class QueryAccuracy:
    """What one query gets from a split: its budget, its noise, and its accuracy.

    Attributes:
        name: the query's label.
        budget: its ρ (Gaussian) or ε (Laplace); the budgets sum to at most the total.
        share: budget / total.
        noise: σ (Gaussian) or the scale b (Laplace).
        half_width: the simultaneous interval half-width over its cells at the coverage asked.
        relative_half_width: half_width / magnitude.
        variance: the noise variance of one answer (σ² or 2b²).
    """

    name: str
    budget: float
    share: float
    noise: float
    half_width: float
    relative_half_width: float
    variance: float

    def to_dict(self) -> dict[str, Any]:
        """These fields as a JSON-ready dict."""
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(frozen=True, slots=True)
class Allocation:
    """A split of a budget over queries (see :func:`allocate`).

    ``loss_value`` is the loss attained: Σ w·T·Var for ``"variance"``, max w·λ/m for
    ``"max_relative"``, and Σ w·λ/m (for information) for ``"weights"``.
    """

    total: float
    unit: str
    kind: str
    loss: str
    loss_value: float
    coverage: float
    queries: tuple[QueryAccuracy, ...]

    def to_dict(self) -> dict[str, Any]:
        """These fields as a JSON-ready dict."""
        return {"total": self.total, "unit": self.unit, "kind": self.kind, "loss": self.loss,
                "loss_value": self.loss_value, "coverage": self.coverage,
                "queries": [q.to_dict() for q in self.queries]}


def _loss_value(loss: str, queries: tuple[Query, ...], acc: list[QueryAccuracy]) -> float:
    if loss == "variance":
        return math.fsum(q.weight * q.cells * a.variance for q, a in zip(queries, acc))
    if loss == "max_relative":
        return max(q.weight * a.relative_half_width for q, a in zip(queries, acc))
    return math.fsum(q.weight * a.relative_half_width for q, a in zip(queries, acc))


def allocate(budget: Any, queries: Any, *, loss: str = "weights", coverage: float = 0.95) -> Allocation:
    """Split a privacy budget over queries to minimise a declared loss.

    A ``ZCDP(ρ)`` budget (or a float ρ) is spent on Gaussian noise, σ_i = Δ_i/√(2ρ_i) with
    Σρ_i = ρ (zCDP composes by adding ρ: Bun & Steinke 2016, Lemma 7); a ``PureDP(ε)`` budget on
    Laplace noise, b_i = Δ_i/ε_i with Σε_i = ε. The losses, and the split that minimises each
    (Lagrange conditions of a convex problem in the shares):

    * ``"weights"``: no optimisation; share_i = w_i/Σw (the simple case).
    * ``"variance"``: Σ_i w_i·T_i·Var_i. Gaussian: Var_i = Δ_i²/(2ρ_i), so ρ_i ∝ Δ_i·√(w_i T_i);
      Laplace: Var_i = 2Δ_i²/ε_i², so ε_i ∝ (w_i T_i Δ_i²)^{1/3}.
    * ``"max_relative"``: max_i w_i·λ_i/m_i, λ_i the simultaneous half-width over the query's
      T_i cells. λ_i = z_i·Δ_i/√(2ρ_i) with z_i the half-width of unit Gaussian noise over T_i
      cells (Laplace: λ_i = L_i·Δ_i/ε_i), and the maximum is smallest when all w_i·λ_i/m_i are
      equal: ρ_i ∝ (w_i z_i Δ_i/m_i)² (Laplace: ε_i ∝ w_i L_i Δ_i/m_i).

    The shares are rounded so that their sum never exceeds the total, and each σ or b is
    rounded up so that each query spends no more than its share.

    Args:
        budget: ``ZCDP(rho)`` with ξ = 0, a float ρ > 0, or ``PureDP(epsilon)`` with ε > 0.
        queries: one or more :class:`Query` (or dicts of its fields).
        loss: ``"weights"``, ``"variance"`` or ``"max_relative"``.
        coverage: the coverage of each query's simultaneous interval, in (0, 1).

    Returns:
        An :class:`Allocation`: per query its budget, share, noise, half-width, relative
        half-width and variance; and the loss attained.

    Examples:
        >>> a = allocate(1.0, [Query("counts", cells=3000, magnitude=500.0),
        ...                    Query("sums", sensitivity=100.0, cells=3000, magnitude=2e5)],
        ...              loss="max_relative")
        >>> [round(q.share, 4) for q in a.queries]   # ∝ (Δ/m)²: (1/500)² : (100/2e5)² = 16 : 1
        [0.9412, 0.0588]
        >>> round(a.queries[0].relative_half_width / a.queries[1].relative_half_width, 9)
        1.0
    """
    from renyi.guarantees import ZCDP, PureDP
    from renyi.mechanisms import Gaussian, Laplace

    if loss not in LOSSES:
        raise DomainError(f"loss must be one of {', '.join(LOSSES)}; got {loss!r}", name="loss", value=loss)
    if isinstance(budget, PureDP):
        kind, unit, total = "laplace", "epsilon", POSITIVE.check("epsilon", float(budget.epsilon))
    elif isinstance(budget, ZCDP):
        if budget.xi != 0.0:
            raise DomainError(f"budget xi must be 0 for a Gaussian split; got {budget.xi!r}", name="xi",
                              value=budget.xi)
        kind, unit, total = "gaussian", "rho", POSITIVE.check("rho", budget.rho)
    else:
        kind, unit, total = "gaussian", "rho", POSITIVE.check("rho", budget)
    qs = tuple(q if isinstance(q, Query) else Query(**q) for q in ([queries] if isinstance(queries, Query) else queries))
    if not qs:
        raise DomainError("queries must name at least one query; got none", name="queries", value=queries)
    cov = PROBABILITY_OPEN.check("coverage", coverage)
    unit_noise = Gaussian(1.0) if kind == "gaussian" else Laplace(1.0)
    z = [half_width(unit_noise, cov, q.cells) for q in qs]
    if loss == "weights":
        raw = [q.weight for q in qs]
    elif loss == "variance":
        raw = ([q.sensitivity * math.sqrt(q.weight * q.cells) for q in qs] if kind == "gaussian"
               else [(q.weight * q.cells * q.sensitivity**2) ** (1.0 / 3.0) for q in qs])
    else:
        raw = [q.weight * zi * q.sensitivity / q.magnitude for q, zi in zip(qs, z)]
        if kind == "gaussian":
            raw = [r * r for r in raw]
    s = math.fsum(raw) if all(math.isfinite(r) for r in raw) else math.inf
    if not 0.0 < s < math.inf:
        raise DomainError(f"the split of loss {loss!r} is not a finite positive number for these queries (their "
                          "weights, sensitivities and magnitudes are too extreme to compare)", name="queries",
                          value=queries)
    parts = [total * (r / s) * (1.0 - 4e-16 * len(qs)) for r in raw]
    while math.fsum(parts) > total:  # never hand out more than the total
        parts = [math.nextafter(p, 0.0) for p in parts]
    acc: list[QueryAccuracy] = []
    for q, part in zip(qs, parts):
        with np.errstate(all="ignore"):
            noise = q.sensitivity / math.sqrt(2.0 * part) if kind == "gaussian" and part > 0.0 else (
                q.sensitivity / part if part > 0.0 else math.inf)
        if not (0.0 < noise < math.inf):
            # the share underflows to 0 (a tiny budget) or the noise to 0 or ∞ (extreme ratios)
            raise DomainError(f"query {q.name!r} gets {unit} = {part!r} of the budget {total!r}: its noise scale "
                              f"(sensitivity {q.sensitivity!r}) is not a finite positive number", name="budget",
                              value=total)
        if kind == "gaussian":
            while (q.sensitivity / noise) ** 2 / 2.0 > part:  # Δ/σ first: Δ² alone may overflow
                noise = math.nextafter(noise, math.inf)
            mech: Any = Gaussian(noise, q.sensitivity)
            var = noise * noise
        else:
            while q.sensitivity / noise > part:
                noise = math.nextafter(noise, math.inf)
            mech = Laplace(noise, q.sensitivity)
            var = 2.0 * noise * noise
        lam = half_width(mech, cov, q.cells)
        acc.append(QueryAccuracy(q.name, part, part / total, noise, lam, lam / q.magnitude, var))
    return Allocation(total, unit, kind, loss, _loss_value(loss, qs, acc), cov, tuple(acc))
