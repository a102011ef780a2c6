"""The privacy loss distribution (PLD) of a composition: the numerical accounting route.

:class:`PrivacyLossDistribution` holds the *mechanisms* of a composition with their counts
(it is a value: composing returns a new one). Every question — ε at δ, δ at ε, the attacker's
true-positive rate at a false-positive rate — is answered with a certified pair
``Bounds(lower, upper)``:

* ``upper`` is a valid upper bound: it is computed on a pessimistic discretisation (a pair
  that dominates the mechanism's worst-case pair), composed in the Fourier domain with every
  truncation and floating-point error bounded and counted against privacy, and rounded up;
* ``lower`` is computed the same way on an optimistic discretisation (a pair dominated by the
  true one), with the errors subtracted: the true value is never below it.

For subsampled mechanisms both neighbouring directions (removing and adding a record) are
composed separately; the guarantee is the worse of the two.

The grid is chosen per question (fine enough for a bracket narrower than 0.5 % when the memory
cap allows). Where the engine cannot give a finite upper bound (a grid too coarse for the
requested δ, or a composition too long to resolve), :func:`epsilon_bounds` falls back to the
RDP route and warns; it never returns a smaller number.

References:
    Koskela, Jälkö, Honkela (2020), Computing tight differential privacy guarantees using FFT,
    AISTATS (FFT composition of PLDs). Doroshenko, Ghazi, Kamath, Kumar, Manurangsi (2022),
    Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions, PETS.
    Zhu, Dong, Wang (2022), Optimal Accounting of Differential Privacy via Characteristic
    Function, AISTATS. Dong, Roth, Su (2022), Gaussian Differential Privacy, JRSS-B.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from renyi.core import _npfft as sfft

from renyi.core._validation import NONNEGATIVE, PROBABILITY_OPEN, check_int
from renyi.core.errors import ConversionError, DomainError, RenyiNumericalWarning
from renyi.accounting.pld._fft import Composed, compose
from renyi.accounting.pld._grid import Discrete, support_range
from renyi.accounting.pld._many import Bucket, Bundle, Step, bucket, bundle, discretise_lower_step, discretise_step, h_floor, merge_gaussians
from renyi.accounting.pld._profiles import Profile, pairs_for

__all__ = ["Bounds", "PrivacyLossDistribution", "epsilon_bounds", "epsilon_bracket", "bracket_note", "delta_bounds"]

#: The largest FFT length used (memory: a few arrays of this many float64/complex128 values).
MAX_FFT = 2**20
#: Target relative width of an ε bracket before the grid stops being refined (issue #17 asks
#: for at most 1 %; the true ε lies in the bracket, so the reported upper end is within this
#: much of it). Halving h costs twice the time and narrows the bracket about four times.
TARGET_WIDTH = 0.0075
_WINDOW_SIGMAS = 13.0
#: The tilted composed law may leave e^{-_WINDOW_TAIL} of its mass outside the FFT window on each
#: side. The tilt centres the law on the answer, where its masses are ≳ h/(10·sd) ≫ e^{-40}, so
#: the alias bound (subtracted from the lower end; mass beyond the top is added to δ for the upper
#: end) changes the answer by a relative 1e-12 or less: a narrower window is only cheaper.
_WINDOW_TAIL = 40.0
#: The grid width aims at an O(T(λ+1)h²) discretisation error of about this fraction of ε.
_H_ERR = 1.6e-2


@dataclass(frozen=True, slots=True)
class Bounds:
    """A certified bracket: the true value lies in [lower, upper].

    ``upper`` is the number to report (a valid bound); ``lower`` shows how tight it is.
    Unpacks as a tuple: ``lo, hi = pld.epsilon(1e-5)``.
    """

    lower: float
    upper: float
    #: why the bracket is wider than 1 % (empty when it is not, or when no reason is known)
    note: str = ""

    def __iter__(self) -> Iterator[float]:
        yield self.lower
        yield self.upper

    @property
    def width(self) -> float:
        """upper − lower."""
        return self.upper - self.lower


# ----------------------------------------------------------------------------------------------
# items → directions
# ----------------------------------------------------------------------------------------------
def _merge(items: Iterable[tuple[Any, int]]) -> list[tuple[Any, int]]:
    out: dict[Any, int] = {}
    order: list[Any] = []
    for m, c in items:
        c = check_int("count", c)
        try:
            key = m if hash(m) is not None else id(m)
        except TypeError:
            key = id(m)
        if key not in out:
            out[key] = 0
            order.append((key, m))
        out[key] += c
    return [(m, out[k]) for k, m in order]


_PAIRS: dict[Any, tuple[Profile, Profile]] = {}


def _pairs(m: Any) -> tuple[Profile, Profile]:
    """pairs_for, remembered per (hashable) mechanism so that discretisations can be reused."""
    try:
        hit = _PAIRS.get(m)
    except TypeError:
        return pairs_for(m)
    if hit is None:
        hit = pairs_for(m)
        if len(_PAIRS) > 4096:
            _PAIRS.clear()
        _PAIRS[m] = hit
    return hit


def _directions(items: list[tuple[Any, int]]) -> list[list[tuple[Profile, int]]]:
    from renyi.accounting.pld._allocation import expand, single_epoch_pairs

    ex = expand(items)
    if len(ex) == 1 and ex[0][1] == 1:
        # one epoch of random allocation on its own: coarser lattices first (refined on demand
        # in _solve_direction)
        one = single_epoch_pairs(ex[0][0])
        if one is not None:
            return [[(one[0], 1)], [(one[1], 1)]]
    rem: list[tuple[Profile, int]] = []
    add: list[tuple[Profile, int]] = []
    sym = True
    for m, c in expand(items):  # k-of-t allocations: their blocks
        r, a = _pairs(m)
        rem.append((r, c))
        add.append((a, c))
        sym = sym and (a is r or r.symmetric())
    # distinct Gaussian steps compose exactly into one Gaussian pair (see _many)
    return [merge_gaussians(rem)] if sym else [merge_gaussians(rem), merge_gaussians(add)]


# ----------------------------------------------------------------------------------------------
# the solver
# ----------------------------------------------------------------------------------------------
def _log_k(ds: list[tuple[Step, int]], lam: float) -> float:
    return float(sum(c * d.log_mgf(lam) for d, c in ds))


def _moments(ds: list[tuple[Step, int]], lam: float) -> tuple[float, float]:
    """Mean and variance of the composed loss tilted by λ (exact for the discretised steps)."""
    mean = var = 0.0
    for d, c in ds:
        if isinstance(d, Bundle):
            bm, bv = d.moments(lam)
            mean += c * bm
            var += c * bv
            continue
        # NaN when no finite loss has mass: see _choose
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            w = d.log_mass + lam * d.values
            w = np.exp(w - np.max(w))
            w /= w.sum()
            m = float(w @ d.values)
            mean += c * m
            var += c * float(w @ (d.values - m) ** 2)
    return mean, max(var, 1e-300)


def _cumulants(ds: list[tuple[Step, int]], lam: float) -> tuple[float, float, float]:
    """K(λ), K′(λ), K″(λ) of the composed discretised loss (log-MGF, tilted mean and
    variance), exactly, in one pass over each step."""
    k = mean = var = 0.0
    for d, c in ds:
        if isinstance(d, Bundle):
            bk, bm, bv = d.cumulants(lam)
            k, mean, var = k + c * bk, mean + c * bm, var + c * bv
            continue
        lm, v = d._support
        if not lm.size:
            return -math.inf, 0.0, 0.0
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            w = lm + lam * v
            top = float(np.max(w))
            e = np.exp(w - top)
            tot = float(e.sum())
            m = float(e @ v) / tot
            k += c * (top + math.log(tot))
            mean += c * m
            var += c * float(e @ (v - m) ** 2) / tot
    return k, mean, max(var, 1e-300)


def _newton_lam(ds: list[tuple[Step, int]], lam0: float, *, log_delta: float | None,
                eps: float | None) -> tuple[float, float]:
    """Refine a tilt by Newton's method on the exact cumulants, from ``lam0``.

    For δ: the minimiser of (K(λ) − log δ)/λ solves φ(λ) = λK′(λ) − K(λ) + log δ = 0, with
    φ′ = λK″ > 0; for ε: the minimiser of K(λ) − λε solves K′(λ) = ε, with derivative K″.
    Steps are kept within a factor 4 of the current λ and within [1e-6, 1e5]; any λ is a
    valid tilt, so a few iterations (not convergence) are all that is needed.
    Returns (λ, the RDP-style ε estimate (K − log δ)/λ, or ε).
    """
    lam = min(max(lam0, 1e-6), 1e5)
    for _ in range(6):
        k, k1, k2 = _cumulants(ds, lam)
        if not (math.isfinite(k) and math.isfinite(k1)):
            break
        if log_delta is not None:
            phi, dphi = lam * k1 - k + log_delta, lam * k2
        else:
            assert eps is not None
            phi, dphi = k1 - eps, k2
        if dphi <= 0 or not math.isfinite(phi):
            break
        new = min(max(lam - phi / dphi, lam / 4.0), lam * 4.0)
        new = min(max(new, 1e-6), 1e5)
        done = abs(new - lam) <= 1e-3 * lam
        lam = new
        if done:
            break
    if log_delta is not None:
        k, _, _ = _cumulants(ds, lam)
        return lam, (k - log_delta) / lam
    assert eps is not None
    return lam, eps


def _log_k_many(ds: list[tuple[Step, int]], lams: np.ndarray) -> np.ndarray:
    """Σ c·log-MGF of the discretised steps at every λ of ``lams`` (vectorised per step)."""
    out = np.zeros(np.shape(lams))
    for d, c in ds:
        out = out + c * d.log_mgf_many(lams)
    return out


def _grid_min(f: Any, a: float, b: float, xtol: float) -> tuple[float, float]:
    """(x, f(x)) at the smallest value of f found on [a, b]: a grid of 17 points, zoomed in
    around the best point until the spacing is below ``xtol``; ``f`` maps an array of x to
    an array of values (one vectorised evaluation per round).

    Any point is a valid choice for the callers (every tilt gives a valid bound), so only the
    value found matters, and the best point evaluated is returned. Written out rather than
    scipy.optimize, whose import costs more than a PLD question.
    """
    best_x, best_f = a, math.inf
    while True:
        xs = np.linspace(a, b, 17)
        with np.errstate(invalid="ignore", over="ignore"):
            fs = np.asarray(f(xs), dtype=np.float64)
        fs = np.where(np.isnan(fs), np.inf, fs)
        i = int(np.argmin(fs))
        if fs[i] < best_f:
            best_x, best_f = float(xs[i]), float(fs[i])
        step = (b - a) / 16.0
        if step <= xtol or not math.isfinite(best_f):
            return best_x, best_f
        a, b = best_x - step, best_x + step


def _lam_for_delta(ds: list[tuple[Step, int]], log_delta: float) -> tuple[float, float]:
    """The tilt that minimises the RDP-style bound (K(λ) − log δ)/λ, and that bound."""

    def f(x: np.ndarray) -> np.ndarray:
        lam = np.exp(x)
        return np.asarray((_log_k_many(ds, lam) - log_delta) / lam, dtype=np.float64)

    x, fx = _grid_min(f, math.log(1e-4), math.log(1e5), 1e-2)
    return math.exp(x), fx


def _lam_for_eps(ds: list[tuple[Step, int]], eps: float) -> tuple[float, float]:
    """The tilt minimising K(λ) − λε over λ ≥ 0 (Chernoff), and that log bound."""

    def f(x: np.ndarray) -> np.ndarray:
        lam = np.exp(x)
        return np.asarray(_log_k_many(ds, lam) - lam * eps, dtype=np.float64)

    x, fx = _grid_min(f, math.log(1e-6), math.log(1e5), 1e-2)
    return math.exp(x), min(0.0, fx)


def _log_c(lam: np.ndarray) -> np.ndarray:
    """log max_{t ≥ 0} (1 − e^{−t})e^{−λt} = log(1/(1+λ)·(λ/(1+λ))^λ), for λ > 0."""
    return np.asarray(-np.log1p(lam) + lam * (np.log(lam) - np.log1p(lam)), dtype=np.float64)


def _chernoff_upper(ds: list[tuple[Step, int]], *, log_delta: float | None,
                    eps: float | None, lam_hint: float | None = None) -> float | None:
    """A certified upper bound on ε(δ) (or on δ(ε)) of the composition of the (pessimistic)
    steps ``ds``, from their exact log-MGF K: pointwise (1 − e^{ε−z})₊ ≤ C(λ)e^{λ(z−ε)} with
    C(λ) = max_{t≥0}(1 − e^{−t})e^{−λt}, so δ(ε) ≤ p_∞ + C(λ)e^{K(λ)−λε} for every λ > 0 (the
    improved moments conversion; Asoodeh et al. 2021, Canonne–Kamath–Steinke 2020, Prop. 12).
    A pessimistic discretisation dominates the pair, so its K bounds the true one. Cheap: it
    decides whether a direction can matter before any transform. None when it says nothing.
    ``lam_hint``: a tilt near the optimum (any λ gives a valid bound; the search is narrower).
    """
    p_inf = _inf_mass_of(ds)
    span = (math.log(1e-6), math.log(1e5))
    if lam_hint is not None and math.isfinite(lam_hint) and lam_hint > 0.0:
        span = (math.log(lam_hint) - 2.5, math.log(lam_hint) + 2.5)
    if log_delta is not None:
        room = math.exp(log_delta) - p_inf
        if room <= 0.0:
            return None
        lr = math.log(room)

        def f(x: np.ndarray) -> np.ndarray:
            lam = np.exp(x)
            return np.asarray((_log_k_many(ds, lam) + _log_c(lam) - lr) / lam, dtype=np.float64)

        _, fx = _grid_min(f, max(span[0], math.log(1e-4)), span[1], 0.05)
        return fx * (1.0 + 1e-12) + 1e-12 if math.isfinite(fx) else None
    assert eps is not None

    def g(x: np.ndarray) -> np.ndarray:
        lam = np.exp(x)
        return np.asarray(_log_k_many(ds, lam) + _log_c(lam) - lam * eps, dtype=np.float64)

    _, gx = _grid_min(g, span[0], span[1], 0.05)
    if not math.isfinite(gx):
        return None
    return min(1.0, p_inf + math.exp(min(gx, 0.0)) * (1.0 + 1e-12))


def _ranges(profiles: list[tuple[Profile, int]], h: float, log_tail: float) -> list[tuple[int, int]]:
    return [support_range(p, h, log_tail) for p, _ in profiles]


_DISC: dict[tuple[int, float, int, int], tuple[Profile, Discrete, Discrete | None]] = {}
_DISC_BUDGET = 2_000_000  # grid points kept in the cache (each with its values: ~32 MB per million)
#: the last step too large for _DISC (at most one entry)
_DISC_BIG: dict[tuple[int, float, int, int], tuple[Profile, Discrete, Discrete | None]] = {}
_MAX_POINTS = 2**22  # grid points of one discretised step (memory: a few arrays of this size)


def _discretise_all(profiles: list[tuple[Profile, int]], h: float, log_tail: float,
                    lower: bool = True) -> tuple[list[tuple[Step, int]], list[tuple[Step, int]]]:
    """The (upper, lower) discretisations of every step on the grid of width h (cached per
    profile and grid); with ``lower`` False only the upper ones (the second list is empty)."""
    up: list[tuple[Step, int]] = []
    low: list[tuple[Step, int]] = []
    size = sum(v[1].log_mass.size for v in _DISC.values())
    for p, c in profiles:
        lo, hi = support_range(p, h, log_tail)
        if hi - lo > _MAX_POINTS:
            raise _Unresolved(f"one step would need {hi - lo + 1} grid points (at most {_MAX_POINTS})")
        key = (id(p), h, lo, hi)
        hit = _DISC.get(key)
        if hit is None:
            hit = _DISC_BIG.get(key)
        if hit is not None and hit[0] is p and (hit[2] is not None or not lower):
            u, l_ = hit[1], hit[2]
        elif hit is not None and hit[0] is p:
            # the pessimistic one is cached: build only the optimistic one
            u, l_ = hit[1], discretise_lower_step(p, h, lo, hi, hit[1])
            (_DISC if key in _DISC else _DISC_BIG)[key] = (p, u, l_)
        else:
            u, l_ = discretise_step(p, h, lo, hi, lower)
            while _DISC and size + u.log_mass.size > _DISC_BUDGET:
                size -= _DISC.pop(next(iter(_DISC)))[1].log_mass.size
            if u.log_mass.size <= _DISC_BUDGET:
                old = _DISC.pop(key, None)
                size += u.log_mass.size - (old[1].log_mass.size if old is not None else 0)
                _DISC[key] = (p, u, l_)
            else:
                # too large for the cache: kept alone, so that the optimistic one asked next
                # on the same grid reuses it (2.3·10⁶ points: 0.6 s rebuilt; issue #26)
                _DISC_BIG.clear()
                _DISC_BIG[key] = (p, u, l_)
        up.append((u, c))
        if lower:
            assert l_ is not None
            low.append((l_, c))
    # many small steps: one bundle, composed by a tree of short convolutions (see _many)
    return bundle(up), (bundle(low) if lower else low)


@dataclass
class _Plan:
    h: float
    lam: float
    center: float
    sigma: float


def _initial_h(profiles: list[tuple[Profile, int]], log_tail: float) -> float:
    fine = 1e-6
    spans = []
    for p, _ in profiles:
        lo, hi = support_range(p, fine, log_tail)
        spans.append(max((hi - lo) * fine, 1e-6))
    # a few dozen points across the narrowest step suffice: connect-the-dots errors are O(h²)
    # per step whatever its range, and the loop in _solve_direction refines h when the bracket
    # is still too wide
    return max(min(spans) / 64.0, sum(spans) / 2e5)


def _lattice(profiles: list[tuple[Profile, int]]) -> float | None:
    """A spacing g such that every loss value of every (finite) pair is a multiple of g."""
    g: float | None = None
    vals = []
    for p, _ in profiles:
        at = p.atoms()
        if at is None:
            return None
        v = np.abs(at[0][np.abs(at[0]) > 1e-300])
        if v.size:
            vals.append(v)
    if not vals:
        return None
    allv = np.concatenate(vals)
    g = float(allv.min())
    ratio = allv / g
    if np.all(np.abs(ratio - np.round(ratio)) <= 1e-9 * np.maximum(ratio, 1.0)):
        return g
    return None


def _choose(ds: list[tuple[Step, int]], total: int, *, log_delta: float | None = None,
            eps: float | None = None, start: float | None = None) -> tuple[float, float, float, float]:
    """(λ, ε estimate, tilted mean, tilted std) for a question on the discretised steps.

    ``start``: a tilt found before (a coarser grid): then λ is refined by Newton's method on
    the exact cumulants (a few passes) instead of searched for on a grid of tilts.
    """
    if start is not None and log_delta is not None:
        lam, e_est = start, math.nan
    elif start is not None:
        lam, e_est = _newton_lam(ds, start, log_delta=log_delta, eps=eps)
    elif log_delta is not None:
        lam, e_est = _lam_for_delta(ds, log_delta)
    else:
        assert eps is not None
        lam, _ = _lam_for_eps(ds, eps)
        e_est = eps
    if log_delta is not None:
        sp = _saddle_lam(ds, log_delta, lam)
        if sp is not None:
            lam, e_est = sp
        elif not math.isfinite(e_est):
            lam, e_est = _newton_lam(ds, lam, log_delta=log_delta, eps=None)
    # On a bounded support the RDP-style optimum runs off to λ → ∞ (K(λ)/λ → the largest
    # loss); so steep a tilt would magnify the FFT error bound below the top atom by e^{λd}.
    # Any λ gives valid bounds; cap it at 20 untilted standard deviations per unit loss.
    _, var0 = _moments(ds, 0.0)
    lam = min(lam, max(1.0, 20.0 / math.sqrt(var0)))
    mean, var = _moments(ds, lam)
    if not (math.isfinite(lam) and math.isfinite(mean) and math.isfinite(var) and var >= 0.0):
        # losses so large (e.g. a Gaussian with σ ≪ Δ) that the tilted moments overflow:
        # the grid cannot be placed; the callers fall back to the RDP route
        raise _Unresolved("the privacy losses are too large for the PLD grid")
    return lam, e_est, mean, math.sqrt(var)


def _saddle_lam(ds: list[tuple[Step, int]], log_delta: float, lam0: float) -> tuple[float, float] | None:
    """The tilt that centres the composed law on the answer: λ with K′(λ) = ε where the
    saddle-point approximation of δ(ε), e^{K(λ) − λε}/(λ(λ+1)·√(2πK″(λ))), equals δ; and that
    ε. None when no such λ is found in [1e-4, 1e5].

    The tilt that minimises the RDP-style bound (K(λ) − log δ)/λ has its tilted mean K′(λ) at
    the RDP estimate of ε, not at the answer. For Poisson-subsampled steps with small q the
    two can be far apart: past the order where the subsampled RDP curve turns, the tilted
    law moves onto the far tail of the steps (a tilted mean of 24 for an answer of 0.38), and
    no window of the longest transform holds both the answer and the tilted law. Any tilt
    is valid; this one only places the FFT's precision where the answer is.
    """

    def g(lam: float) -> float:
        k, k1, k2 = _cumulants(ds, lam)
        if not (math.isfinite(k) and math.isfinite(k1) and k2 > 0.0):
            return math.nan
        return k - lam * k1 - math.log(lam * (lam + 1.0)) - 0.5 * math.log(2.0 * math.pi * k2)

    lam = min(max(lam0, 1e-4), 1e5)
    v = g(lam)
    if not math.isfinite(v):
        return None
    lo = hi = lam
    if v > log_delta:  # δ estimate too large: ε = K′(λ) must grow
        while True:
            hi = lo * 2.0
            if hi > 1e5:
                return None
            w = g(hi)
            if not math.isfinite(w):
                return None
            if w <= log_delta:
                break
            lo = hi
    else:
        while True:
            lo = hi / 2.0
            if lo < 1e-4:
                return None
            w = g(lo)
            if not math.isfinite(w):
                return None
            if w > log_delta:
                break
            hi = lo
    for _ in range(10):  # a factor 2 bracket to within 7 %: any tilt is valid
        mid = math.sqrt(lo * hi)
        w = g(mid)
        if not math.isfinite(w):
            break
        if w > log_delta:
            lo = mid
        else:
            hi = mid
    lam = math.sqrt(lo * hi)
    _, k1, _ = _cumulants(ds, lam)
    return (lam, k1) if math.isfinite(k1) else None


#: log of the smallest normal double: ε-questions at a δ below it are not answered by the grid.
_LOG_NORMAL_MIN = math.log(sys.float_info.min)


def _quantise_tail(log_tail: float) -> float:
    """The tail mass left outside a step's grid, rounded down to a multiple of 4 in log: a
    smaller tail only widens the grid, and nearby questions (an accountant asked every 100
    steps, a solver's iterations) share the same support ranges and discretisations."""
    return max(4.0 * math.floor(log_tail / 4.0), -740.0)


def _solve_direction(profiles: list[tuple[Profile, int]], *, log_delta: float | None = None,
                     eps: float | None = None, width: float | None = None,
                     below: float = -math.inf) -> tuple[float, float]:
    """:func:`_solve_one_direction`; the oversized step kept for its own refinements
    (``_DISC_BIG``) is released afterwards (tens of MB)."""
    try:
        return _solve_one_direction(profiles, log_delta=log_delta, eps=eps, width=width, below=below)
    finally:
        _DISC_BIG.clear()


def _solve_one_direction(profiles: list[tuple[Profile, int]], *, log_delta: float | None = None,
                         eps: float | None = None, width: float | None = None,
                         below: float = -math.inf) -> tuple[float, float]:
    """(lower, upper) on ε(δ) (or on δ(ε)) for one direction.

    ``below``: a lower bound already known for the answer of another direction; once this
    direction's upper bound is at or below it, it cannot change the maximum over directions
    and is not refined further.
    """
    if width is None:
        width = TARGET_WIDTH
    from renyi.accounting.pld._allocation import SINGLE_WIDTH, AllocationProfile

    if len(profiles) == 1 and profiles[0][1] == 1 and isinstance(profiles[0][0], AllocationProfile):
        # one epoch of random allocation: both pairs are finite and their profiles exact, so
        # each end is read off its own pair (no grid: tighter and faster)
        alloc = profiles[0][0]
        while True:
            try:
                hi = _invert_profile(alloc.upper, log_delta=log_delta, eps=eps)[1]
            except _Unresolved:
                # a coarse lattice's +∞ mass (P(S̃ = 0) of the add pair) alone exceeds δ: the
                # finer one answers (regression: σ = 0.5, t = 2, δ = 1e-10 on 2¹⁴ points)
                if alloc.refine is None:
                    raise
                alloc = alloc.refine()
                continue
            if hi <= below:
                return 0.0, hi  # cannot raise the maximum over directions: no lower pair needed
            lo = _invert_profile(alloc.single_lower, log_delta=log_delta, eps=eps)[0]
            if alloc.refine is None or (math.isfinite(hi) and hi - lo <= SINGLE_WIDTH * abs(hi)):
                return min(lo, hi), hi
            alloc = alloc.refine()  # a coarser lattice's bracket was too wide: the full one
    single = _closed_form(profiles)
    if single is not None:
        return _invert_profile(single, log_delta=log_delta, eps=eps)
    if log_delta is not None and log_delta < _LOG_NORMAL_MIN:
        # The transform reads δ off linear sums (target δ minus the +∞ mass, masses tilted
        # back) whose round-off margins are relative to δ; below the smallest normal double a
        # δ has fewer than 53 significant bits (5e-324 has one), so they do not hold. Declined
        # before any grid is built (it cost minutes of CPU at δ = 5e-324; issue #26).
        raise _Unresolved(f"δ below the smallest normal double ({sys.float_info.min:.3g}) has too few significant "
                          "bits for the transform's round-off margins")
    total = sum(c for _, c in profiles)
    tail_ref = log_delta if log_delta is not None else -80.0
    log_tail = _quantise_tail(tail_ref - math.log(total) - 14.0)
    h = _initial_h(profiles, log_tail)
    up, _ = _discretise_all(profiles, h, log_tail, lower=False)
    lam, e_est, mean, sd = _choose(up, total, log_delta=log_delta, eps=eps)
    if eps is not None:
        # a better reference for the tails: the Chernoff estimate of δ at ε
        _, lb = _lam_for_eps(up, eps)
        if lb < -700.0:
            # Chernoff on the (valid, pessimistic) coarse discretisation already settles the
            # finite part: δ(ε) ≤ P(Z = +∞) + E[e^{λ(Z−ε)}; Z < ∞]; the +∞ mass of the true
            # pair is itself a lower bound on δ(ε)
            p_inf = _inf_mass_lower(profiles)
            # the grid's cut-off tail sits at +∞ in the pessimistic steps: cut it as deep as the
            # bound now needs (the Chernoff term is below e^{-700})
            # (both bounds are valid: the smaller is returned; a deeper cut can also carry more
            # round-off mass at +∞ from the far left of the grid)
            first = _inf_mass_of(up) + math.exp(min(lb, 0.0))
            deep = _quantise_tail(lb - math.log(total) - 14.0)
            if deep < log_tail:
                up2, _ = _discretise_all(profiles, h, deep, lower=False)
                _, lb2 = _lam_for_eps(up2, eps)
                first = min(first, _inf_mass_of(up2) + math.exp(min(lb2, 0.0)))
            return p_inf, min(1.0, first)
        log_tail = _quantise_tail(min(lb, -1.0) - math.log(total) - 14.0)
    # grid: an O(T(λ+1)h²) discretisation error, small against ε
    scale = max(abs(e_est), sd, 1e-12)
    h_err = math.sqrt(_H_ERR * scale / (total * (lam + 1.0)))
    h = min(h, h_err, _feature_h(profiles, log_tail))
    h_cap = h_floor(profiles, log_tail)  # the cost cap of a huge composition (see _many)
    h = max(h, 2.0 * _WINDOW_SIGMAS * sd / MAX_FFT, h_cap)
    # half-powers of two, so that later questions (more steps, another δ) reuse
    # discretisations, while the grid still lands within √2 of the width it needs
    h = _round_h(h)
    g = _lattice(profiles)
    if g is not None:
        # all losses on a lattice: a grid that contains it discretises exactly
        h = g / max(1, math.ceil(g / h)) if h < g else g
    h_full = h
    if below > -math.inf and g is None:
        # Another direction already has a bracket: this one most often only has to show that
        # its upper bound is below that direction's lower bound, which a grid twice as coarse
        # (half the transform) usually does; if not, the next round uses the full grid.
        h = 2.0 * h
    best: tuple[float, float] | None = None
    why = "five grid refinements"
    widths: list[float] = []
    settled = False
    for _ in range(5):
        up, _ = _discretise_all(profiles, h, log_tail, lower=False)

        def low_of(h: float = h) -> list[tuple[Step, int]]:
            return _discretise_all(profiles, h, log_tail)[1]

        if best is None and below > -math.inf:
            skip = _chernoff_upper(up, log_delta=log_delta, eps=eps, lam_hint=lam)
            if skip is not None and skip <= below:
                # this direction cannot raise the maximum over directions: its certified
                # upper bound is already at or below another direction's lower bound
                return 0.0, max(0.0, skip)
        if best is None:
            # the tilt refined on the first fine grid (the coarse one can be far too
            # pessimistic for narrow steps); finer grids keep it: any tilt is valid, it only
            # centres the FFT's precision on the answer, and it barely moves when h halves
            lam, e_est, mean, sd = _choose(up, total, log_delta=log_delta, eps=eps, start=lam)
            lam, mean, sd, edges = _fit_tilt(up, lam, mean, sd, h)
        else:
            mean, var = _moments(up, lam)
            sd = math.sqrt(var)
            edges = None  # a new grid: the window is recomputed for its steps
        if not (math.isfinite(mean) and math.isfinite(sd)):
            raise _Unresolved("the tilted composition has no finite mean and spread on this grid")
        res = _answer(up, low_of, lam, mean, sd, h, log_delta=log_delta, eps=eps, below=below, edges=edges)
        if res is not None:
            # both ends are certified: keep the best of each
            prev_hi = best[1] if best is not None else math.nan
            best = res if best is None else (max(best[0], res[0]), min(best[1], res[1]))
            lo, hi = best
            rel = (hi - lo) / max(abs(hi), 1e-300)
            widths.append(rel)
            if rel <= width or (log_delta is None and (hi <= 1e-300 or rel <= 10 * width)) or hi <= below:
                break
            if len(widths) >= 2 and lo == 0.0 and abs(prev_hi - hi) <= 1e-7 * abs(hi):
                # two grids, the lower end still unresolved and the upper end settled to 1e-7:
                # a finer grid (each ~2× the cost) only chases the lower end (a GDP(33.7) beside
                # a discrete Gaussian: five grids, 9 s of CPU, the same upper end; issue #26)
                settled = True
                break
        # refine: both discretisations err by O(h²), so the width shrinks like h²: aim at
        # half the target; much faster when the lower end is not resolved at all (a step
        # whose loss is much narrower than h)
        factor = 2.0
        if best is not None:
            rel = (best[1] - best[0]) / max(abs(best[1]), 1e-300)
            factor = 8.0 if rel >= 0.25 else max(math.sqrt(2.0), math.sqrt(rel / (0.5 * width)))
        h_next = _round_h(h / factor)
        if h > h_full:
            h_next = h_full  # the coarse dominance check did not settle it: the planned grid
        if 2.0 * _WINDOW_SIGMAS * sd / h_next > MAX_FFT:
            h_next = _round_h(h / math.sqrt(2.0))
            if 2.0 * _WINDOW_SIGMAS * sd / h_next > MAX_FFT:
                why = f"a finer grid would need an FFT window of more than {MAX_FFT} points"
                break
        if h_next < h_cap:
            why = "the grid is capped by the cost of many distinct mechanisms"
            break
        h = h_next
    if settled:
        why = "the lower end is not resolved on two grids while the upper end is settled to 1e-7"
    elif len(widths) >= 2 and widths[-1] > 0.5 * widths[0]:
        # refining the grid did not narrow the bracket: the error bound of the transform's
        # floating point (relative to the tilted law, largest at tiny δ), not the grid, sets it
        why = "floating-point error of the transform at this δ (a finer grid does not narrow it)"
    if best is not None and best[1] > below and (best[1] - best[0]) > 0.01 * max(abs(best[1]), 1e-300):
        _NOTES.append(why)
    if best is None:
        if below > -math.inf:
            # another direction is resolved: this one contributes its Chernoff bound (valid,
            # if loose; the bracket shows it) rather than sending the whole question to RDP
            ch = _chernoff_upper(up, log_delta=log_delta, eps=eps, lam_hint=lam)
            if ch is not None and math.isfinite(ch):
                _NOTES.append("the second neighbouring direction is bounded by Chernoff's inequality only")
                return 0.0, max(0.0, ch)
        raise _Unresolved("the PLD grid could not resolve this question")
    return best


def _closed_form(profiles: list[tuple[Profile, int]]) -> Profile | None:
    """The profile of the whole composition when it is known in closed form: one continuous
    step run once, or Gaussian steps only (the loss of a composition of Gaussian pairs is
    N(ρ, 2ρ) with ρ = Σ cᵢρᵢ: the Gaussian pair with that ρ; Dong, Roth & Su 2022, Cor. 3.3)."""
    from renyi.accounting.pld._many import _gaussian_profile, _gaussian_rho

    rhos = [_gaussian_rho(p) for p, _ in profiles]
    if all(r is not None for r in rhos):
        if len(profiles) == 1 and profiles[0][1] == 1:
            return profiles[0][0]
        return _gaussian_profile(math.fsum(c * float(r) for (_, c), r in zip(profiles, rhos) if r is not None))
    if len(profiles) == 1 and profiles[0][1] == 1 and profiles[0][0].atoms() is None:
        return profiles[0][0]
    return None


#: Relative error allowed for a profile's own evaluation (log δ within ±1e-10), doubled: the
#: margins that turn a computed profile value into a certified one.
_PROFILE_LOG_ERR = 2e-10


def _invert_profile(p: Profile, *, log_delta: float | None, eps: float | None) -> tuple[float, float]:
    """(lower, upper) on ε(δ) (or δ(ε)) read off an exact profile: no grid, no transform.

    δ(ε) is decreasing; bisection finds the ε where the computed log δ crosses log δ ± the
    profile's error margin, so that the true crossing lies between the two ends.
    """
    def ld(e: float) -> float:
        return float(p.log_delta(np.array([e], dtype=np.float64))[0])

    if eps is not None:
        d = ld(eps)
        return (math.exp(d - _PROFILE_LOG_ERR) if math.isfinite(d) else 0.0,
                min(1.0, math.exp(d + _PROFILE_LOG_ERR)) if math.isfinite(d) else 0.0)
    assert log_delta is not None
    if p.inf_mass > 0.0 and math.log(p.inf_mass) >= log_delta - _PROFILE_LOG_ERR:
        raise _Unresolved("the +∞ mass alone exceeds δ")

    def crossing(target: float) -> tuple[float, float]:
        """(a, b) with log δ(a) > target ≥ log δ(b) (a = b = 0 when δ(0) is already below),
        a bisection bracket as tight as floating point allows."""
        if ld(0.0) <= target:
            return 0.0, 0.0
        hi = 1.0
        while ld(hi) > target:
            hi *= 2.0
            if hi > 1e12:
                raise _Unresolved("no finite ε on the exact profile")
        lo = 0.0 if hi == 1.0 else hi / 2.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if ld(mid) <= target:
                hi = mid
            else:
                lo = mid
        return lo, hi

    upper = crossing(log_delta - _PROFILE_LOG_ERR)[1]
    lower = crossing(log_delta + _PROFILE_LOG_ERR)[0]
    return min(lower, upper), upper


def _round_h(h: float) -> float:
    """h rounded down to a half-power of two (2^{k/2})."""
    return float(2.0 ** (math.floor(2.0 * math.log2(h)) / 2.0))


def _feature_h(profiles: list[tuple[Profile, int]], log_tail: float) -> float:
    """The widest grid that resolves the loss on both sides of 0 for every continuous step.

    The optimistic discretisation needs a few grid points on each side of 0 (a subsampled
    step's loss has a side of width about q: log(1 − q) ≤ Z for a removal); coarser grids
    leave its lower end at 0 and cost a wasted round.
    """
    fine = 1e-6
    out = math.inf
    for p, _ in profiles:
        if p.atoms() is not None:
            continue
        lo, hi = support_range(p, fine, log_tail)
        lo_v, hi_v = lo * fine, hi * fine
        w = min(-lo_v, hi_v) if lo_v < 0.0 < hi_v else hi_v - lo_v
        out = min(out, max(w, 1e-9) / 5.0)
    return out


class _Unresolved(RuntimeError):
    pass


# Numerical failures inside the engine on valid input (inputs are validated before): the
# question falls back to the RDP route with a warning rather than raising.
_ENGINE_ERRORS = (_Unresolved, ArithmeticError, ValueError, IndexError, MemoryError)


def _why(exc: BaseException) -> str:
    """The reason an engine error gives, in the user's terms (an OverflowError from numpy said
    "Python int too large to convert to C long" for 2⁶² steps)."""
    if isinstance(exc, (OverflowError, MemoryError)):
        return "the composition is too long or its losses too large for the PLD grid"
    return str(exc)


# The compositions behind recent answers, per (items, direction): a δ asked at an ε that an
# earlier ε-query produced is read off the same composition (the smaller of two valid bounds),
# so that δ(ε(δ)) ≤ δ holds exactly, and repeated questions are cheap.
_LAST: list[tuple[Composed, Composed]] = []
#: Why the last question's bracket is wider than 1 % (appended by _solve_direction).
_NOTES: list[str] = []
_CACHE: dict[tuple[Any, int], list[tuple[Composed, Composed]]] = {}
_CACHE_SIZE = 16
_CACHE_POINTS = 4_000_000  # grid points kept in _CACHE (32 MB per array side)


def _remember(key: tuple[Any, int], found: list[tuple[Composed, Composed]]) -> None:
    try:
        hash(key)
    except TypeError:
        return
    old = _CACHE.setdefault(key, [])
    old.extend(found)
    del old[:-2]

    def points() -> int:
        return sum(cu.tau.size + cl.tau.size for v in _CACHE.values() for cu, cl in v)

    while len(_CACHE) > _CACHE_SIZE or (len(_CACHE) > 1 and points() > _CACHE_POINTS):
        _CACHE.pop(next(iter(_CACHE)))


# Answers to recent questions (a report, calibration's re-verification and the tests ask the
# same question more than once); only resolved answers are kept, so a fallback warns each time.
_ANSWERS: dict[Any, tuple[float, float]] = {}
_ANSWERS_SIZE = 256
_ANSWER_NOTES: dict[Any, str] = {}


def _answer_cached(key: Any) -> tuple[float, float] | None:
    try:
        return _ANSWERS.get(key)
    except TypeError:  # unhashable mechanisms: no cache
        return None


def _answer_store(key: Any, value: tuple[float, float], note: str = "") -> tuple[float, float]:
    try:
        _ANSWERS[key] = value
        if note:
            _ANSWER_NOTES[key] = note
        else:
            _ANSWER_NOTES.pop(key, None)
    except TypeError:
        return value
    while len(_ANSWERS) > _ANSWERS_SIZE:
        old = next(iter(_ANSWERS))
        del _ANSWERS[old]
        _ANSWER_NOTES.pop(old, None)
    return value


def _answer_note(key: Any) -> str:
    try:
        return _ANSWER_NOTES.get(key, "")
    except TypeError:
        return ""


def _cached_delta(key: tuple[Any, int], eps: float) -> tuple[float, float] | None:
    try:
        entries = _CACHE.get(key)
    except TypeError:
        return None
    if not entries:
        return None
    best_lo, best_hi = 0.0, math.inf
    for cu, cl in entries:
        z = cu.values
        if not (z[0] <= eps <= z[-1]):
            continue
        e = np.array([eps])
        best_hi = min(best_hi, float(np.exp(cu.log_delta_at(e))[0]))
        best_lo = max(best_lo, float(np.exp(cl.log_delta_at(e))[0]) * (1 - 1e-9))
    return (best_lo, best_hi) if math.isfinite(best_hi) else None


def _past_inf_mass(prof: list[tuple[Profile, int]], d: float) -> list[tuple[Profile, int]]:
    """One epoch of random allocation on a coarse first lattice whose +∞ mass (the add pair's
    P(S̃ = 0)) alone reaches δ: the next lattice's pair instead (the full one has no more to
    give). Regression: σ = 0.5, t = 2, δ = 1e-10 on 2¹⁴ points gave [0, ∞]."""
    from renyi.accounting.pld._allocation import AllocationProfile

    while len(prof) == 1 and prof[0][1] == 1 and _inf_mass_of(prof) >= d:
        p = prof[0][0]
        if not isinstance(p, AllocationProfile) or p.refine is None:
            break
        prof = [(p.refine(), 1)]
    return prof


def _inf_mass_of(ds: Sequence[tuple[Step | Profile, int]]) -> float:
    """P(composed loss = +∞) = 1 − Π (1 − inf_mass)^count, for discretised steps or for the
    true pairs (profiles)."""
    p_fin = 0.0
    for d, c in ds:
        if d.inf_mass >= 1.0:
            return 1.0
        p_fin += c * math.log1p(-d.inf_mass)
    return -math.expm1(p_fin)


def _inf_mass_lower(profiles: Sequence[tuple[Profile, int]]) -> float:
    """P(composed loss = +∞) of the *dominated* pairs: a certified lower bound on δ(ε) for
    every ε. A profile that carries two pairs (a bucket, random allocation's lattice pairs, an
    upper-only step) has its +∞ mass in the upper pair only as an artefact of the bound (the
    tail booked there), so its lower pair's counts; plain profiles are exact."""
    low: list[tuple[Profile, int]] = []
    for p, c in profiles:
        if isinstance(p, Bucket) or getattr(p, "bracketed", False):
            m = getattr(p, "lower_inf_mass", None)
            if m is None:
                m = cast(Any, p).lower.inf_mass
            low.append((cast(Any, _InfOnly(float(m))), c))
        else:
            low.append((p, c))
    return _inf_mass_of(low)


@dataclass(frozen=True)
class _InfOnly:
    inf_mass: float


def _window_edges(up: list[tuple[Step, int]], lam: float, sd: float) -> tuple[float, float, np.ndarray]:
    """(z_lo, z_hi, tilts) of the window at tilt λ: Chernoff's bound on the tilted composed law
    leaves at most e^{-_WINDOW_TAIL} outside [z_lo, z_hi] on each side; the tilts that gave the
    edges (and their neighbours) serve the wrap-around bound."""
    ss = np.geomspace(0.05, 400.0, 10) / sd
    k_all = _log_k_many(up, np.concatenate([[lam], lam + ss, lam - ss]))
    k0 = float(k_all[0])
    with np.errstate(invalid="ignore", over="ignore"):
        hi_c = (k_all[1:1 + ss.size] - k0 + _WINDOW_TAIL) / ss
        lo_c = -(k_all[1 + ss.size:] - k0 + _WINDOW_TAIL) / ss
        z_hi = float(np.nanmin(hi_c))
        z_lo = float(np.nanmax(lo_c))
    ih = int(np.nanargmin(hi_c)) if np.isfinite(hi_c).any() else 0
    il = int(np.nanargmax(lo_c)) if np.isfinite(lo_c).any() else 0
    s_grid = np.concatenate([ss[max(ih - 1, 0):ih + 2], -ss[max(il - 1, 0):il + 2]])
    return z_lo, z_hi, s_grid


def _fit_tilt(up: list[tuple[Step, int]], lam: float, mean: float, sd: float,
              h: float) -> tuple[float, float, float, tuple[float, float, np.ndarray] | None]:
    """A tilt whose window fits in the longest transform at grid width h: (λ, mean, sd, and
    the window's edges at that tilt for :func:`_answer`, None when they were not computed).

    The RDP-optimal tilt can move the composed law onto a heavy tail (a subsampled Gaussian
    with small σ and q: the tilted steps are mixtures of the bulk near 0 and a far tail), whose
    spread no window of MAX_FFT points at this h covers; the answer then has no resolvable
    window. Any tilt is valid: a smaller one narrows the law, at the price of the round-off's
    relative weight at tiny δ (bounded, and counted, as always).
    """
    edges: tuple[float, float, np.ndarray] | None = _window_edges(up, lam, sd)
    for _ in range(12):
        assert edges is not None
        w = edges[1] - edges[0]
        if math.isfinite(w) and w / h <= 0.9 * MAX_FFT:
            break
        lam *= 0.6
        mean, var = _moments(up, lam)
        if not (math.isfinite(mean) and math.isfinite(var)):
            edges = None
            break
        sd = math.sqrt(var)
        edges = _window_edges(up, lam, sd)
    return lam, mean, sd, edges


def _answer(up: list[tuple[Step, int]], low_of: Any, lam: float,
            mean: float, sd: float, h: float, *, log_delta: float | None,
            eps: float | None, below: float = -math.inf,
            edges: tuple[float, float, np.ndarray] | None = None) -> tuple[float, float] | None:
    """(lower, upper) on this grid, or None. ``low_of()`` gives the optimistic steps (built
    only when needed: not when the upper bound is already at or below ``below``, a lower
    bound from another direction, since then this direction cannot change the answer)."""
    # the window (so that the wrap-around allowance stays negligible), unless already computed
    # for this tilt and these steps
    z_lo, z_hi, s_grid = edges if edges is not None else _window_edges(up, lam, sd)
    half = _WINDOW_SIGMAS * sd
    center = mean
    if eps is not None:
        center = eps + 0.5 * sd
    if math.isfinite(z_hi) and math.isfinite(z_lo) and z_lo < center < z_hi and (z_hi - z_lo) / h < MAX_FFT:
        half = 0.5 * (z_hi - z_lo)
        center = 0.5 * (z_hi + z_lo)
    full_lo = sum(c * d.start for d, c in up)
    full_n = sum(c * ((d.span if isinstance(d, Bundle) else d.log_mass.size) - 1) for d, c in up) + 1
    whole = full_n <= max(2**16, int(2 * half / h) + 1)
    for _attempt in range(4):
        if whole:
            # the whole composed support fits: no wrap-around, nothing outside the window
            start, n = full_lo, int(sfft.next_fast_len(full_n, real=True))
        else:
            lo_z = center - half
            n = int(sfft.next_fast_len(max(256, int(math.ceil(2 * half / h)) + 1), real=True))
            n = min(n, MAX_FFT)
            start = int(math.floor(lo_z / h))
        cu = compose(up, lam, start, n, True, s_grid, whole)
        if log_delta is not None:
            e_up, st_up = cu.epsilon_for(log_delta, True)
            if st_up == "inf":
                return None
            if st_up == "below":
                if cu.values[0] <= 0.0 or whole:
                    return 0.0, max(0.0, float(cu.values[0]))  # δ(z₀) already meets the target
                center -= half
                continue
            if st_up == "above":
                if whole:
                    return None
                center += half
                continue
            if e_up <= below:
                return 0.0, max(0.0, e_up)
            cl = compose(low_of(), lam, start, n, False, s_grid, whole)
            e_lo, st_lo = cl.epsilon_for(log_delta, False)
            if st_lo != "ok":
                # "below": δ(z₀) already meets the target on the lower pair, so its ε is
                # somewhere below z₀ (even with the whole support in the window: a loss that
                # is ≥ z₀ everywhere still has δ(ε) > 0 for ε < z₀): 0 is the bound left
                e_lo = 0.0
            _LAST.append((cu, cl))
            return max(0.0, e_lo), max(0.0, e_up)
        assert eps is not None
        zs = np.array([eps])
        if whole and eps > cu.values[-1]:
            return _inf_mass_of(low_of()), cu.inf_mass + cu.above
        if whole and eps <= cu.values[0]:
            return 0.0, 1.0  # below every loss value (rare: losses of ≥ 0 everywhere)
        if not (cu.values[0] <= eps <= cu.values[-1]) and not whole:
            center = eps + 0.5 * sd
            continue
        d_up = float(np.exp(cu.log_delta_at(zs))[0])
        if d_up <= below:
            return 0.0, min(1.0, d_up * (1 + 1e-9) + 1e-300)
        cl = compose(low_of(), lam, start, n, False, s_grid, whole)
        d_lo = float(np.exp(cl.log_delta_at(zs))[0])
        _LAST.append((cu, cl))
        return max(0.0, d_lo * (1 - 1e-9)), min(1.0, d_up * (1 + 1e-9) + 1e-300)
    return None


def _rdp_epsilon(items: list[tuple[Any, int]], delta: float) -> float:
    from renyi.accounting import routes

    return float(routes.best_epsilon(routes.items(items), delta, "rdp").value)


def _rdp_delta(items: list[tuple[Any, int]], epsilon: float) -> float:
    from renyi.accounting import routes

    return float(routes.best_delta(routes.items(items), epsilon, "rdp").value)


def _release(items: list[tuple[Any, int]]) -> None:
    """After a huge composition (as many distinct steps as the cost cap applies to), drop the
    discretisation cache: its entries are unlikely to be asked again, and they would otherwise
    stay in memory through whatever the caller computes next (the other routes of a default
    question on 10⁴ mechanisms went above 200 MB with it)."""
    from renyi.accounting.pld._many import MANY_STEPS

    if len(items) >= MANY_STEPS:
        _DISC.clear()


def _check_items(items: Sequence[tuple[object, int]]) -> list[tuple[Any, int]]:
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise TypeError("items must be a sequence of (mechanism, count) pairs")
    out = []
    for it in items:
        if not (isinstance(it, tuple) and len(it) == 2):
            raise TypeError(f"items must be (mechanism, count) pairs; got {it!r}")
        out.append((it[0], check_int("count", it[1])))
    if not out:
        raise DomainError("items must contain at least one (mechanism, count) pair; got none", name="items")
    return _merge(aligned(out))


def aligned(items: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    """The items restated under one neighbouring relation, as :func:`renyi.compose` and the
    routes do (:func:`renyi._neighbouring.align`: replace-one when they differ). Without this a
    mixed list (randomized response is replace-one, noise mechanisms add/remove by default)
    would be composed item by item under different relations: a number that holds under
    neither.

    Raises:
        NeighbouringError: an item cannot be restated (e.g. replace-one → add/remove).
    """
    from renyi.guarantees.neighbouring import align, relation_of

    if len({relation_of(m) for m, _ in items}) <= 1:
        return items
    return list(align(items)[1])


#: Answers given so far per (question, items): (x, lower, upper) sorted by x, so that every new
#: answer is kept monotone against them (see :func:`_monotone`).
_MONO: dict[Any, list[tuple[float, float, float]]] = {}
_MONO_KEYS = 64
_MONO_POINTS = 512


def _monotone(kind: str, key: Any, x: float, lo: float, hi: float) -> tuple[float, float, str]:
    """(lower, upper) made consistent with the answers given so far for the same items, and a
    note when an earlier answer set the upper end.

    The true ε(δ) is non-increasing in δ (and δ(ε) in ε), so an upper bound found at x′ ≤ x
    is one at x too, and a lower bound found at x′ ≥ x is one at x too. The new upper end is
    min(own, uppers at x′ ≤ x), then raised to the uppers at x′ ≥ x (a larger upper bound is
    still valid); the lower end likewise. The stored answers stay monotone, so every answer
    this process prints is: the grid and the tilt of each question depend on x, and two nearby
    questions could otherwise come out in the wrong order by a fraction of their bracket.
    """
    try:
        pts = _MONO.get((kind, key))
    except TypeError:  # unhashable items: no memory
        return lo, hi, ""
    pts = pts if pts is not None else []
    a = min((u for x2, _, u in pts if x2 <= x), default=math.inf)
    b = max((u for x2, _, u in pts if x2 >= x), default=-math.inf)
    c = max((l_ for x2, l_, _ in pts if x2 >= x), default=-math.inf)
    d = min((l_ for x2, l_, _ in pts if x2 <= x), default=math.inf)
    note = ""
    if a < hi:
        note = "the upper end is an answer at a smaller " + ("δ" if kind == "epsilon" else "ε")
    hi2 = max(min(hi, a), b)
    lo2 = min(max(lo, c), d, hi2)
    if math.isfinite(hi2) or math.isinf(lo2):
        pts = [p for p in pts if p[0] != x] + [(x, lo2, hi2)]
        pts.sort()
        if len(pts) > _MONO_POINTS:
            del pts[1:-1:2]  # thin out (the stored points stay monotone)
        _MONO.pop((kind, key), None)
        _MONO[(kind, key)] = pts
        while len(_MONO) > _MONO_KEYS:
            _MONO.pop(next(iter(_MONO)))
    return lo2, hi2, note


def _roundoff_floor(items: list[tuple[Any, int]]) -> float:
    from renyi.accounting.pld._allocation import roundoff_floor

    return roundoff_floor(items)


def _used_probability(items: list[tuple[Any, int]]) -> float | None:
    """P(the example is in at least one step's sample) = 1 − Π(1 − qᵢ)^{cᵢ}, rounded up, for a
    composition of Poisson-subsampled steps only (None otherwise)."""
    from renyi.sampling.subsampling import PoissonSubsampled, PoissonSubsampledReplaceOne

    log_none = 0.0
    for m, c in items:
        if type(m) not in (PoissonSubsampled, PoissonSubsampledReplaceOne):
            return None
        q = float(m.rate)
        if q >= 1.0:
            return 1.0
        log_none += c * math.log1p(-q)
    # log1p, the product and expm1 each err by an ulp or so: a relative 1e-12 covers them, and
    # one more ulp up covers the subnormal range (where the relative margin rounds away)
    return min(1.0, math.nextafter(-math.expm1(log_none) * (1.0 + 1e-12), 1.0))


def _floor_reason(what: str, x: float, floor: float) -> str:
    return (f"does not answer at {what} = {x:g} for random allocation: below {floor:.3g} (1e-12 per "
            "allocation epoch) the floating-point error of its lattice laws is not bounded")


def epsilon_bounds(items: Sequence[tuple[object, int]], delta: float, *,
                   fallback: bool = True) -> tuple[float, float]:
    """(lower, upper) on the ε of composing each mechanism ``count`` times, at δ.

    Args:
        items: (mechanism or guarantee value, count ≥ 1) pairs; mechanisms from
            ``renyi.mechanisms``, ``PoissonSubsampled``, ``SubsampledWithoutReplacement``, or
            ``PureDP``, ``ApproxDP``, ``GDP`` values.
        delta: δ ∈ (0, 1).
        fallback: where the grid cannot resolve the question, return the RDP route's ε with
            a warning (True), or raise ``ConversionError`` (False; the minimum over routes uses
            this, since the RDP route is in that minimum anyway).

    Returns:
        (lower, upper): ``upper`` is a certified upper bound on ε (pessimistic discretisation,
        errors counted, rounded up); ``lower`` a certified lower bound on the true ε of the
        composition of the worst-case pairs. If the grid cannot resolve δ the upper bound is
        the RDP route's ε (a :class:`~renyi.errors.RenyiNumericalWarning` is issued) and the
        lower bound is 0. Within a process the answers for the same items are non-increasing
        in δ (see :func:`epsilon_bracket`).

    Raises:
        ConversionError: some item has no known privacy loss distribution.
        DomainError: δ outside (0, 1), or a count < 1.
    """
    b = epsilon_bracket(items, delta, fallback=fallback)
    return b.lower, b.upper


def bracket_note(items: Sequence[tuple[object, int]], delta: float) -> str:
    """Why the bracket :func:`epsilon_bounds` last gave for ``items`` at ``delta`` is wider than
    1 % (or that its upper end is an answer at a smaller δ); "" when it is not, or when the
    question was not asked (recently)."""
    try:
        its = _check_items(items)
    except (TypeError, DomainError):
        return ""
    return _answer_note(("epsilon", tuple(its), float(delta)))


def epsilon_bracket(items: Sequence[tuple[object, int]], delta: float, *, fallback: bool = True) -> Bounds:
    """:func:`epsilon_bounds` as :class:`Bounds`, whose ``note`` says why the bracket is
    wider than 1 % where it is (a transform window capped in length, the floating point of
    the transform at a tiny δ, a cost cap) or that the upper end came from an earlier answer.

    Answers are non-increasing in δ within a process: each answer is made consistent with the
    ones given before for the same items (:func:`_monotone`; the last 64 compositions are
    remembered). Where the grid cannot resolve δ but an answer at a smaller δ is known, that
    answer is the bound (valid, since ε(δ) is non-increasing), not the RDP route.
    """
    d = PROBABILITY_OPEN.check("delta", delta)
    its = _check_items(items)
    key = tuple(its)
    hit = _answer_cached(("epsilon", key, d))
    if hit is not None:
        return Bounds(hit[0], hit[1], _answer_note(("epsilon", key, d)))
    floor = _roundoff_floor(its)
    if d < floor:
        # random allocation's lattice laws carry floating-point error that is measured, not
        # bounded (issue #23): no answer where it could make either end invalid
        why = _floor_reason("δ", d, floor)
        if not fallback:
            raise ConversionError(f"PLD {why}")
        warnings.warn(f"PLD {why}; using the RDP route", RenyiNumericalWarning, stacklevel=2)
        return Bounds(0.0, _rdp_epsilon(its, d), "the RDP route: " + why)
    p_used = _used_probability(its)
    if p_used is not None and p_used <= d:
        # With probability 1 − p_used the example is in no step's sample and the output has the
        # same law with or without it (or with its replacement): P = (1 − p)R + pA against
        # Q = (1 − p)R + pB (Q = R for add/remove), so δ(0) ≤ p in both directions and ε(δ) = 0
        # for δ ≥ p. Exact, and no grid: σ = 1e-16 at q = 5e-324 over 2·10⁴ steps at δ = 1e-9
        # took 5 s for ε = 1e36 (issue #26).
        return Bounds(0.0, 0.0, "")
    dirs = [_past_inf_mass(prof, d) for prof in _directions(its)]
    for prof in dirs:
        p_inf = _inf_mass_of(prof)
        if p_inf >= d:
            # the +∞ mass of the loss alone exceeds δ: no finite ε exists (δ(ε) ≥ P(Z = ∞) > δ);
            # the lower end is ∞ too unless the comparison is within rounding, or unless that
            # mass is only the upper pair's (random allocation's booked tail: the true ε is finite)
            p_low = _inf_mass_lower(prof)
            return Bounds(math.inf if p_low * (1.0 - 1e-12) >= d else 0.0, math.inf)
    lows: list[float] = []
    ups: list[float] = []
    _NOTES.clear()
    failed: str | None = None
    try:
        for i, prof in enumerate(dirs):
            _LAST.clear()
            # many near-identical subsampled Gaussians: buckets (see _many.bucket)
            lo, hi = _solve_direction(bucket(prof), log_delta=math.log(d), below=max(lows, default=-math.inf))
            _remember((key, i), _LAST[-1:])
            _LAST.clear()
            lows.append(lo)
            ups.append(hi)
        lo, hi = max(lows), max(ups)
        # The lower end is read at loss values computed in floating point (an atom of k-fold
        # randomized response at k·ε₀, a lattice point j·h): near an atom δ(ε) is so steep in
        # relative terms that a few ulps of the atom's position put the lower end above the
        # truth (by 4 ulps at 9-fold RR, δ = 6.6e-11). Lower it by 32 ulps of its size.
        lo = max(0.0, lo - 32.0 * 2.0**-53 * (abs(lo) + 1.0)) if math.isfinite(lo) else lo
        if not math.isfinite(hi):
            failed = "gives no finite ε"
        elif hi - lo > 0.1 * hi:
            # A grid too coarse for the steps' loss (10¹² steps of a small-rate subsampled
            # Gaussian: a bracket [0, 36.6] where the RDP route gives 0.50): valid, but not an
            # answer. Where the RDP route is below it, the question counts as unresolved.
            rdp = _rdp_epsilon(its, d)
            if rdp < hi:
                why = "; ".join(dict.fromkeys(_NOTES)) or "the grid cannot resolve the steps' loss"
                failed = f"gives only [{lo:.4g}, {hi:.4g}] at δ = {d:g}, above the RDP route ({why})"
                hi = math.inf
    except _ENGINE_ERRORS as exc:
        failed = f"could not resolve δ = {d:g} ({_why(exc)})"
        lo, hi = 0.0, math.inf
    _release(its)
    lo, hi, mono = _monotone("epsilon", key, d, min(lo, hi), hi)
    if failed is not None and not math.isfinite(hi):
        if not fallback:
            raise ConversionError(f"PLD {failed}")
        warnings.warn(f"PLD {failed}; using the RDP route", RenyiNumericalWarning, stacklevel=2)
        rdp = _rdp_epsilon(its, d)
        # the lower end is that of the PLD's pairs, which may dominate the mechanism without
        # being tight (the exponential mechanism's pure-DP pair): where the RDP route is below
        # it, it is no lower bound on the mechanism's ε (a bracket [5.2e-5, 0] was returned)
        low = min(lo, rdp) if math.isfinite(lo) else 0.0
        return Bounds(low, rdp, "the RDP route: " + failed)
    if math.isfinite(hi):
        # the answer certifies δ(hi) ≤ δ: a later δ-question at hi (or above) keeps to it
        _monotone("delta", key, hi, 0.0, d)
    wide = hi - lo > 0.01 * abs(hi)
    note = "; ".join(([mono] if mono else []) + (list(dict.fromkeys(_NOTES)) if wide else []))
    _NOTES.clear()
    _answer_store(("epsilon", key, d), (lo, hi), note)
    return Bounds(lo, hi, note)


def delta_bounds(items: Sequence[tuple[object, int]], epsilon: float, *,
                 fallback: bool = True) -> tuple[float, float]:
    """(lower, upper) on the δ of composing each mechanism ``count`` times, at ε ≥ 0.

    Same conventions as :func:`epsilon_bounds` (``upper`` is certified; fallback to the RDP
    route with a warning where the grid cannot resolve the question, or ``ConversionError``
    with ``fallback=False``).
    """
    e = NONNEGATIVE.check("epsilon", epsilon)
    if not math.isfinite(e):
        raise DomainError(f"epsilon must be in [0, inf) and finite; got {epsilon!r}", name="epsilon")
    its = _check_items(items)
    key = tuple(its)
    hit = _answer_cached(("delta", key, e))
    if hit is not None:
        return hit
    p_used = _used_probability(its)
    if p_used is not None and p_used < sys.float_info.min:
        # δ(ε) ≤ δ(0) ≤ P(the example is ever sampled) (see epsilon_bracket): below the smallest
        # normal double no finer answer has a significant bit more (q = 5e-324 over two steps
        # built grids for > 5 s of CPU; issue #26)
        return 0.0, p_used
    dirs = _directions(its)
    lows: list[float] = []
    ups: list[float] = []
    failed: str | None = None
    try:
        for i, prof in enumerate(dirs):
            _LAST.clear()  # (only ε-questions keep their compositions; see _remember)
            _NOTES.clear()  # (only ε-questions report them; without this they would pile up)
            lo, hi = _solve_direction(bucket(prof), eps=e, below=max(lows, default=-math.inf))
            cached = _cached_delta((key, i), e)
            if cached is not None:
                lo, hi = max(lo, cached[0]), min(hi, cached[1])
            if lo > 0.0 and any(p.atoms() is not None for p, _ in prof):
                # Atoms sit at loss values computed in floating point (k·ε₀ of k-fold randomized
                # response, lattice points j·h); just below an atom δ(ε) ≈ p·(L − ε), so a few
                # ulps of L move δ by ulp/(L − ε) relative (the lower end was 1.7e-5 above the
                # exact δ at ε = 9ε₀ − 1e-9). The lower end is read 32 ulps further right.
                _LAST.clear()
                lo2, _ = _solve_direction(bucket(prof), eps=e + 32.0 * 2.0**-53 * (e + 1.0), below=-math.inf)
                lo = min(lo, lo2)
            lows.append(lo)
            ups.append(hi)
        lo, hi = min(max(lows), max(ups)), max(ups)
        floor = _roundoff_floor(its)
        if lo < floor:
            lo = 0.0  # random allocation's lattice round-off is not bounded there (issue #23)
        if hi < floor:
            failed = _floor_reason("the upper δ", hi, floor)
            hi = math.inf
    except _ENGINE_ERRORS as exc:
        failed = f"could not resolve ε = {e:g} ({_why(exc)})"
        lo, hi = 0.0, math.inf
    _release(its)
    # δ(ε) is non-increasing in ε: consistent with the answers given before (see _monotone)
    lo, hi, _ = _monotone("delta", key, e, lo, hi)
    if failed is not None and not math.isfinite(hi):
        if not fallback:
            raise ConversionError(f"PLD {failed}")
        warnings.warn(f"PLD {failed}; using the RDP route", RenyiNumericalWarning, stacklevel=2)
        return 0.0, _rdp_delta(its, e)
    if failed is not None and fallback:
        # an earlier answer bounded δ here (hi is finite), but the RDP route may be tighter:
        # both are valid upper bounds, so keep the smaller (a test's earlier question left
        # δ(40) ≤ 1e-5 where the RDP route gives 0.0 to double precision)
        hi = min(hi, _rdp_delta(its, e))
    if 0.0 < hi < 1.0:
        # the answer certifies ε(hi) ≤ ε: a later ε-question at hi (or above) keeps to it
        _monotone("epsilon", key, hi, 0.0, e)
    return _answer_store(("delta", key, e), (lo, min(hi, 1.0)))


# ----------------------------------------------------------------------------------------------
# the value class
# ----------------------------------------------------------------------------------------------
class PrivacyLossDistribution:
    """The PLD of a composition of mechanisms (a value; ``+`` and ``compose`` return new ones).

    Args:
        items: (mechanism or guarantee value, count) pairs, or mechanisms (count 1).

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> pld = PrivacyLossDistribution([(Gaussian(1.0), 4)])
        >>> lo, hi = pld.epsilon(1e-5)
        >>> lo <= 9.9972561464 <= hi  # exact: 2-GDP at δ = 1e-5 (read off the closed form)
        True
    """

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[Any]) -> None:
        pairs = []
        for it in items:
            if isinstance(it, tuple) and len(it) == 2 and isinstance(it[1], (int, np.integer)):
                pairs.append((it[0], int(it[1])))
            else:
                pairs.append((it, 1))
        its = _check_items(pairs)
        for m, _ in its:
            pairs_for(m)  # raises ConversionError now rather than at the first question
        self._items = tuple(its)

    @classmethod
    def from_mechanism(cls, mechanism: Any, count: int = 1) -> PrivacyLossDistribution:
        """The PLD of ``count`` runs of one mechanism."""
        return cls([(mechanism, count)])

    @property
    def items(self) -> tuple[tuple[Any, int], ...]:
        """The (mechanism, count) pairs composed."""
        return self._items

    def __repr__(self) -> str:
        inner = ", ".join(f"{c}×{m!r}" for m, c in self._items)
        return f"PrivacyLossDistribution([{inner}])"

    def compose(self, k: int) -> PrivacyLossDistribution:
        """k-fold composition (every count times k; one FFT power per mechanism)."""
        k = check_int("k", k)
        return PrivacyLossDistribution([(m, c * k) for m, c in self._items])

    def __add__(self, other: object) -> PrivacyLossDistribution:
        if isinstance(other, PrivacyLossDistribution):
            return PrivacyLossDistribution(list(self._items) + list(other._items))
        return PrivacyLossDistribution(list(self._items) + [(other, 1)])

    __radd__ = __add__

    def __mul__(self, k: object) -> PrivacyLossDistribution:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            return NotImplemented
        return self.compose(int(k))

    __rmul__ = __mul__

    def epsilon(self, delta: float) -> Bounds:
        """Certified bracket on ε at δ ∈ (0, 1) (see :func:`epsilon_bounds`)."""
        return Bounds(*epsilon_bounds(self._items, delta))

    def delta(self, epsilon: float) -> Bounds:
        """Certified bracket on δ at ε ≥ 0 (see :func:`delta_bounds`)."""
        return Bounds(*delta_bounds(self._items, epsilon))
