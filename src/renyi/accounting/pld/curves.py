"""Trade-off curves and the tightest μ-GDP statement, certified from the privacy loss distribution.

**Trade-off curve.** For one ordered pair (P, Q) — P the output law with the record, Q without —
a membership test with false-positive rate α = Q(reject) has true-positive rate (power)
P(reject) ≤ e^ε·α + δ_{P‖Q}(ε) for *every real* ε (take S the rejection region in
δ(ε) = sup_S P(S) − e^ε Q(S)). The infimum over ε is the power of the Neyman–Pearson test, i.e.
1 − β(α) of the pair's trade-off function: the trade-off function and the privacy profile are
convex conjugates of each other (Dong, Roth & Su 2022, Prop. 2.12). Negative ε are the
"symmetric side": by complementation δ(−ε) = 1 − e^{−ε} + e^{−ε}δ_{Q‖P}(ε), so
e^{−ε}α + δ(−ε) = 1 − e^{−ε}(1 − α − δ_{Q‖P}(ε)), the second (ε, δ) test bound of
Kairouz, Oh & Viswanath (2015), Thm 2.1.

* **Upper bound** (what :func:`tradeoff` returns as ``upper``): the composed *pessimistic* PLD
  gives δ_up(z) ≥ δ(z) at the grid points z; every z gives a valid bound, so
  TPR ≤ min_z e^z α + δ_up(z).
* **Lower bound**: the composed *optimistic* PLD is the PLD of a pair dominated by the true one
  (its TPR is never larger) supported on the grid, so its profile is piecewise linear in e^ε
  with kinks at grid points, and the infimum over ε is attained at a grid point. With
  δ_low(z) ≤ its δ(z) on the window and, outside the window [z_lo, z_hi], the bounds
  e^z α + δ(z) ≥ 1 − e^z(1 − α) (as δ(z) ≥ 1 − e^z) for z < z_lo and ≥ e^{z_hi}α above,
  TPR ≥ min(min_z e^z α + δ_low(z), 1 − e^{z_lo}(1 − α), e^{z_hi}α).

Both neighbouring directions (removing and adding a record) are computed and the worse one is
reported; the two directions of every pair the engine knows are each other's reverses.

**μ-GDP.** A composition is μ-GDP when its trade-off curve dominates G_μ(α) = Φ(Φ⁻¹(1−α) − μ),
equivalently when δ(ε) ≤ δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) for every ε ≥ 0 and both
directions (Dong, Roth & Su 2022, Cor. 2.13; the directions are mutual reverses, which covers
ε < 0). :func:`gdp_mu` certifies the smallest such μ, up to an additive ``delta0``
(δ(ε) ≤ δ_μ(ε) + δ₀ for every ε, so TPR ≤ 1 − G_μ(α) + δ₀ at every FPR α), as follows.

*Why a grid suffices.* As a function of x = e^ε the true profile δ is convex (a supremum of
affine functions x ↦ P(S) − xQ(S)). At grid points ε_A we hold certified values u_A ≥ δ(ε_A);
between two consecutive points convexity puts δ below the chord ℓ through (x_A, u_A) and
(x_B, u_B). The GDP profile δ_μ is convex in x too, so g = δ_μ + δ₀ − ℓ is convex on
[x_A, x_B] and lies above both of its tangents at x_A and x_B; the minimum of the larger of
the two tangent lines is at an endpoint or at their intersection, and checking that this value
is ≥ 0 proves g ≥ 0 on the whole interval. The slope of δ_μ in x is −Φ(−ε/μ − μ/2) (the
Q-probability of the Neyman–Pearson region). Beyond the last point, δ is decreasing: once
u_A ≤ δ₀ every larger ε holds. Below the first grid point of a window that starts above 0,
the chord from (x = 0, δ = 1) bounds δ. δ_μ is computed in log space and lowered by a bound on
its own round-off (ten ulps of the logs involved, times the cancellation factor), and the
tangent tests keep a margin for the round-off in the slopes.

*Why δ₀ > 0 by default.* The pessimistic discretisation keeps the unresolved far tail as mass
at +∞, so its profile never drops below that mass and cannot certify δ ≤ δ_μ for ε → ∞. This
is not only a numerical limit: Poisson-subsampled Gaussians have the Gaussian's tail, so a
composition of T of them is μ-GDP for no μ below √T/σ (its trade-off curve meets
G_{√T/σ} as α → 0); the central-limit μ (Dong, Roth & Su 2022, Thm 5.4) is an approximation,
not a bound. A μ much smaller than √T/σ holds down to a floor δ₀ — this is the statement
returned, with its δ₀. Where the composition of the mechanisms' own GDP guarantees
(Gaussians, GDP values, and subsampled versions of those: subsampling never worsens a
trade-off curve) gives a μ at least as small, that exact statement (δ₀ = 0) is returned.

References:
    Dong, Roth, Su (2022), Gaussian Differential Privacy, JRSS-B (Prop. 2.12, Cor. 2.13,
    Cor. 3.3). Kairouz, Oh, Viswanath (2015), The Composition Theorem for Differential Privacy,
    ICML (Thm 2.1). Doroshenko et al. (2022), Connect the Dots, PETS (the pessimistic PLD).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from renyi.core import _npfft as sfft
from renyi.core._lazy import special

from renyi.core._validation import PROBABILITY, check_int
from renyi.core.errors import DomainError
from renyi.accounting.pld._fft import Composed, compose
from renyi.accounting.pld._grid import Discrete, discretise, support_range
from renyi.accounting.pld._profiles import Profile, pairs_for
from renyi.accounting.pld.distribution import _lattice  # one lattice test for both engines

__all__ = ["TradeOff", "GDPBound", "tradeoff", "gdp_mu", "gdp_tpr", "gdp_delta"]

#: The largest FFT window used per tilt (memory: a few arrays of this many values).
_N_MAX = 2**19
_WINDOW_SIGMAS = 13.0


# ----------------------------------------------------------------------------------------------
# values
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TradeOff:
    """The attacker's true-positive rate at given false-positive rates, certified.

    Attributes:
        fpr: the false-positive rates α (as given).
        upper: an upper bound on the largest TPR of any membership test at each α (the number
            to report; equivalently 1 − upper is a lower bound on the type-II error β(α)).
        lower: a lower bound on the same TPR (how tight ``upper`` is).
        epsilon: the ε at which ``upper`` = e^ε·α + δ(ε) was attained (its witness).
    """

    fpr: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    epsilon: np.ndarray


@dataclass(frozen=True, slots=True)
class GDPBound:
    """A certified μ-GDP statement: δ(ε) ≤ δ_μ(ε) + δ₀ for every ε ≥ 0, both directions.

    Equivalently the attacker's TPR at every FPR α is at most 1 − G_μ(α) + δ₀ =
    Φ(Φ⁻¹(α) + μ) + δ₀. ``delta0 = 0`` is plain μ-GDP.

    Attributes:
        mu: the certified μ (an upper bound on the smallest μ for which the statement holds).
        delta0: the additive slack δ₀ of the statement.
        method: ``"gdp"`` (composition of the mechanisms' own Gaussian-DP guarantees, exact
            for Gaussian mechanisms) or ``"pld"`` (checked on the pessimistic PLD).
        lower: a lower bound on the smallest μ for which the same statement holds (from the
            optimistic PLD), or ``None`` when not computed.
    """

    mu: float
    delta0: float
    method: str
    lower: float | None = None

    def tpr(self, fpr: float | Sequence[float] | np.ndarray) -> np.ndarray:
        """The TPR bound Φ(Φ⁻¹(α) + μ) + δ₀ (capped at 1) this statement gives at FPR α."""
        return np.minimum(1.0, gdp_tpr(self.mu, fpr) + self.delta0)


# ----------------------------------------------------------------------------------------------
# the Gaussian trade-off and profile
# ----------------------------------------------------------------------------------------------
def gdp_tpr(mu: float, fpr: float | Sequence[float] | np.ndarray) -> np.ndarray:
    """1 − G_μ(α) = Φ(Φ⁻¹(α) + μ): the TPR of the best test between N(0, 1) and N(μ, 1).

    Args:
        mu: μ ≥ 0 (``inf`` gives 1 for every α > 0).
        fpr: false-positive rates α ∈ [0, 1].
    """
    a = np.asarray(fpr, dtype=np.float64)
    if math.isinf(mu):
        return np.where(a > 0, 1.0, 0.0)
    with np.errstate(divide="ignore"):
        return np.asarray(special.ndtr(special.ndtri(a) + mu), dtype=np.float64)


def _log1mexp(x: np.ndarray) -> np.ndarray:
    x = np.minimum(x, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))
    return out


def _log_gdp_delta(mu: float, eps: np.ndarray) -> np.ndarray:
    """log δ_μ(ε), vectorised, in log space (no cancellation of the two Φ terms)."""
    if mu <= 0:
        return np.where(eps < 0, _log1mexp(np.minimum(eps, 0.0)), -np.inf)
    la = special.log_ndtr(-eps / mu + mu / 2.0)
    lb = special.log_ndtr(-eps / mu - mu / 2.0)
    with np.errstate(invalid="ignore"):
        out = la + _log1mexp(eps + lb - la)
    res: np.ndarray = np.where(np.isnan(out), -np.inf, out)
    return res


def gdp_delta(mu: float, eps: float | Sequence[float] | np.ndarray) -> np.ndarray:
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), the privacy profile of μ-GDP (any real ε)."""
    res: np.ndarray = np.exp(_log_gdp_delta(float(mu), np.asarray(eps, dtype=np.float64)))
    return res


# ----------------------------------------------------------------------------------------------
# items → per-direction profiles
# ----------------------------------------------------------------------------------------------
def _items(items: Iterable[Any]) -> list[tuple[Any, int]]:
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise TypeError("items must be a sequence of (mechanism, count) pairs")
    out: list[tuple[Any, int]] = []
    for it in items:
        if isinstance(it, tuple) and len(it) == 2 and isinstance(it[1], (int, np.integer)):
            out.append((it[0], check_int("count", it[1])))
        else:
            out.append((it, 1))
    if not out:
        raise DomainError("items must contain at least one (mechanism, count) pair; got none", name="items")
    from renyi.accounting.pld.distribution import aligned

    return aligned(out)


def _directions(items: list[tuple[Any, int]]) -> list[list[tuple[Profile, int]]]:
    """(profile, count) lists for the remove and add directions (one list when symmetric)."""
    rem: list[tuple[Profile, int]] = []
    add: list[tuple[Profile, int]] = []
    sym = True
    for m, c in items:
        r, a = pairs_for(m)  # ConversionError for a mechanism without a known pair
        rem.append((r, c))
        add.append((a, c))
        sym = sym and (a is r or r.symmetric())
    return [rem] if sym else [rem, add]


# ----------------------------------------------------------------------------------------------
# sampling the composed profile at grid points, over several tilts
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Samples:
    """Certified δ at grid points z_A = A·h of one direction: upper[A] ≥ δ(z_A) ≥ lower[A]
    (lower: of the optimistic pair); z_lo, z_hi bound the grid points covered."""

    z: np.ndarray
    upper: np.ndarray
    lower: np.ndarray


def _mean_sd(ds: list[tuple[Discrete, int]], lam: float) -> tuple[float, float]:
    mean = var = 0.0
    for d, c in ds:
        with np.errstate(invalid="ignore", over="ignore"):
            w = d.log_mass + lam * d.values
        w = np.exp(w - np.max(w))
        w /= w.sum()
        m = float(w @ d.values)
        mean += c * m
        var += c * float(w @ (d.values - m) ** 2)
    return mean, math.sqrt(max(var, 1e-300))


def _log_k(ds: list[tuple[Discrete, int]], lam: float) -> float:
    return float(sum(c * d.log_mgf(lam) for d, c in ds))


def _lam_for_eps(ds: list[tuple[Discrete, int]], eps: float, lam_lo: float) -> float:
    """The tilt λ ≥ lam_lo minimising K(λ) − λε (the order a Chernoff bound on P(Z ≥ ε) uses;
    the tilted law then carries the most mass near ε). Any λ gives valid bounds."""
    from scipy import optimize

    if lam_lo >= 1e3:
        return 2.0 * lam_lo

    def f(x: float) -> float:
        lam = math.exp(x)
        return _log_k(ds, lam) - lam * eps

    res = optimize.minimize_scalar(f, bounds=(math.log(max(lam_lo, 1e-4)), math.log(1e4)), method="bounded",
                                   options={"xatol": 1e-2})
    return math.exp(float(res.x))


def _compose_window(up: list[tuple[Discrete, int]], low: list[tuple[Discrete, int]], lam: float,
                    n_max: int, target: float | None = None) -> tuple[Composed, Composed, bool]:
    mean, sd = _mean_sd(up, lam)
    h = up[0][0].h
    full_lo = sum(c * d.start for d, c in up)
    full_n = sum(c * (d.log_mass.size - 1) for d, c in up) + 1
    ss = np.geomspace(0.05, 400.0, 12) / sd
    s_grid = np.concatenate([ss, -ss])
    whole = full_n <= n_max
    if whole:
        start, n = full_lo, int(sfft.next_fast_len(full_n, real=True))
    else:
        half = min(_WINDOW_SIGMAS * sd, 0.5 * (n_max - 1) * h)
        n = int(sfft.next_fast_len(max(256, int(math.ceil(2 * half / h)) + 1), real=True))
        center = mean
        if target is not None and abs(mean - target) > 0.5 * half:
            # a tilted law far from the target (a jump of the tilted mean, e.g. subsampled
            # Gaussians at large orders): any window is valid; put it where the answer is
            center = target + 0.25 * half
        start = int(math.floor((center - half) / h))
    cu = compose(up, lam, start, n, True, s_grid, whole)
    cl = compose(low, lam, start, n, False, s_grid, whole)
    return cu, cl, whole


def _choose_h(profiles: list[tuple[Profile, int]], log_tail: float, n_max: int, tol: float) -> float:
    """A power-of-two grid width: discretisation error ~ T·h² ≈ tol, and the composed window
    (±13 sd) within n_max points."""
    total = sum(c for _, c in profiles)
    spans = []
    for p, _ in profiles:
        lo, hi = support_range(p, 1e-6, log_tail)
        spans.append(max((hi - lo) * 1e-6, 1e-9))
    # the sd of the composed loss, from a coarse discretisation (it only sets the grid)
    coarse = max(min(spans) / 200.0, 1e-7)
    ds = []
    for p, c in profiles:
        lo, hi = support_range(p, coarse, log_tail)
        ds.append((discretise(p, coarse, lo, hi)[0], c))
    _, sd = _mean_sd(ds, 0.0)
    h = min(math.sqrt(tol / total), min(spans) / 8.0)
    h = max(h, 2.0 * _WINDOW_SIGMAS * sd / (0.9 * n_max))
    return float(2.0 ** math.floor(math.log2(h)))


def _sample(profiles: list[tuple[Profile, int]], log_floor: float, *, tol: float = 1e-4,
            n_max: int = _N_MAX, max_tilts: int = 6) -> _Samples:
    """δ bounds at grid points from ε ≈ the composed loss's lower range up to where the upper
    bound falls below e^{log_floor} (or the tilts run out)."""
    total = sum(c for _, c in profiles)
    log_tail = max(log_floor - math.log(total) - 12.0, -740.0)
    h = _choose_h(profiles, log_tail, n_max, tol)
    g = _lattice(profiles)
    if g is not None:
        h = g / max(1, math.ceil(g / h)) if h < g else g
    up, low = [], []
    for p, c in profiles:
        lo, hi = support_range(p, h, log_tail)
        u, l_ = discretise(p, h, lo, hi)
        assert l_ is not None  # asked for (lower=True is the default)
        up.append((u, c))
        low.append((l_, c))
    lam = 0.0
    starts: list[int] = []
    ups: list[np.ndarray] = []
    lows: list[np.ndarray] = []
    merged = _Samples(np.zeros(0), np.zeros(0), np.zeros(0))
    floor = math.exp(log_floor)
    target: float | None = None
    for _ in range(max_tilts):
        cu, cl, _whole = _compose_window(up, low, lam, n_max, target)
        z = cu.values
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lu = cu.log_delta_at(z)
            ll = cl.log_delta_at(z)
        starts.append(cu.start)
        ups.append(np.where(np.isnan(lu), 1.0, np.exp(np.minimum(lu, 0.0))))  # NaN: δ ≤ 1 holds
        lows.append(np.where(np.isnan(ll), 0.0, np.exp(np.minimum(ll, 0.0))))
        merged = _merge(starts, ups, lows, h)
        # Done when the bracket is tight all the way down to the floor. Otherwise the next
        # tilt is centred where the bracket first opens up (the FFT error bound, relative to
        # the tilted masses, grows away from the tilted mean), so the windows overlap.
        ub, lb = merged.upper, merged.lower
        loose = (ub - lb > 0.1 * ub + 1e-3 * floor) & (ub < 0.5)
        reach = np.nonzero(ub <= floor)[0]
        end = int(reach[0]) if reach.size else ub.size
        bad = np.nonzero(loose[:end])[0]
        if bad.size == 0 and reach.size:
            break
        target = float(merged.z[bad[0]]) if bad.size else float(merged.z[-1])
        lam_next = _lam_for_eps(up, target, max(lam, 1e-3))
        if lam_next <= lam * 1.05 + 1e-3:
            lam_next = 1.5 * lam + 0.25
        if lam_next > 1e5:
            break
        lam = lam_next
    return merged


_CACHE: dict[Any, tuple[float, float, list[_Samples]]] = {}


class _Unresolved(RuntimeError):
    """The grid could not resolve the composition (numerical extremes)."""


def _samples_for(items: list[tuple[Any, int]], log_floor: float, tol: float, max_tilts: int) -> list[_Samples]:
    """Per-direction samples, remembered per composition: a report asks for the μ-GDP line and
    the TPR rows of the same composition (a deeper floor and a finer grid serve both)."""
    try:
        key: Any = tuple(items)
        hit = _CACHE.get(key)
    except TypeError:
        key, hit = None, None
    if hit is not None and hit[0] <= log_floor and hit[1] <= tol:
        return hit[2]
    dirs = _directions(items)
    try:
        with np.errstate(all="ignore"):
            out = [_sample(prof, log_floor, tol=tol, max_tilts=max_tilts) for prof in dirs]
    except DomainError:
        raise
    except (ValueError, IndexError, ArithmeticError, MemoryError) as exc:
        # a numerical failure at an extreme (μ in the hundreds, ε = 10³ per step): the
        # callers fall back to valid bounds that need no grid
        raise _Unresolved(str(exc)) from exc
    if key is not None:
        if len(_CACHE) >= 8:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = (log_floor, tol, out)
    return out


def _merge(starts: list[int], ups: list[np.ndarray], lows: list[np.ndarray], h: float) -> _Samples:
    """One array over the union of the windows: the smallest upper and largest lower bound."""
    lo_idx = min(starts)
    hi_idx = max(s + a.size for s, a in zip(starts, ups))
    u_all = np.full(hi_idx - lo_idx, np.inf)
    l_all = np.full(hi_idx - lo_idx, np.nan)
    for s, a, b in zip(starts, ups, lows):
        sl = slice(s - lo_idx, s - lo_idx + a.size)
        u_all[sl] = np.minimum(u_all[sl], a)  # each is a valid upper bound: keep the smaller
        l_all[sl] = np.fmax(l_all[sl], b)  # each a valid lower bound: keep the larger
    z_all = (lo_idx + np.arange(u_all.size)) * h
    # a gap between windows (rare): δ ≤ 1 and δ ≥ 0 are valid there (the μ-GDP check drops
    # such points: any subset of points gives valid chords)
    l_all = np.where(np.isnan(l_all), 0.0, l_all)
    u_all = np.where(np.isnan(u_all), 1.0, u_all)
    return _Samples(z_all, np.minimum(u_all, 1.0), np.clip(l_all, 0.0, 1.0))


# ----------------------------------------------------------------------------------------------
# trade-off
# ----------------------------------------------------------------------------------------------
def _tpr_upper(s: _Samples, alphas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out = np.ones(alphas.size)
    arg = np.zeros(alphas.size)
    if s.z.size == 0:
        return out, arg
    ex = np.exp(np.minimum(s.z, 700.0))
    for lo in range(0, alphas.size, 16):
        a = alphas[lo:lo + 16, None]
        vals = ex[None, :] * a + s.upper[None, :]
        i = vals.argmin(axis=1)
        out[lo:lo + 16] = np.minimum(1.0, vals[np.arange(i.size), i])
        arg[lo:lo + 16] = s.z[i]
    res: np.ndarray = np.maximum(out, alphas)
    return res, arg


def _tpr_lower(s: _Samples, alphas: np.ndarray) -> np.ndarray:
    if s.z.size == 0:
        return alphas.copy()
    ex = np.exp(np.minimum(s.z, 700.0))
    out = np.empty(alphas.size)
    z_lo, z_hi = float(s.z[0]), float(s.z[-1]) + (s.z[1] - s.z[0] if s.z.size > 1 else 0.0)
    for lo in range(0, alphas.size, 16):
        a = alphas[lo:lo + 16]
        inside = (ex[None, :] * a[:, None] + s.lower[None, :]).min(axis=1)
        below = 1.0 - math.exp(min(z_lo, 700.0)) * (1.0 - a)
        above = math.exp(min(z_hi, 700.0)) * a
        out[lo:lo + 16] = np.minimum(np.minimum(inside, below), above)
    # the optimistic pair's lower end, lowered by a relative 1e-9 for round-off
    return np.clip(out * (1.0 - 1e-9), 0.0, 1.0)


def tradeoff(items: Iterable[Any], fprs: float | Sequence[float] | np.ndarray) -> TradeOff:
    """The attacker's true-positive rate at each false-positive rate, as a certified bracket.

    Args:
        items: (mechanism or guarantee value, count ≥ 1) pairs, or mechanisms (count 1), as for
            :func:`renyi.pld.epsilon_bounds`.
        fprs: false-positive rates α ∈ [0, 1].

    Returns:
        A :class:`TradeOff`: ``upper`` ≥ the largest TPR of any test at each α (both
        neighbouring directions; the worse one), ``lower`` ≤ it.

    Raises:
        ConversionError: some item has no known privacy loss distribution.
        DomainError: an α outside [0, 1], or a count < 1.

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> t = tradeoff([(Gaussian(1.0), 4)], [0.01])   # 2-GDP: Φ(Φ⁻¹(0.01) + 2) = 0.372081
        >>> bool(t.lower[0] <= 0.372081 <= t.upper[0] < 0.3721)
        True
    """
    arr = np.atleast_1d(np.asarray(fprs, dtype=np.float64))
    for a in arr.ravel():
        PROBABILITY.check("fpr", float(a))
    its = _items(items)
    alphas = arr.ravel()
    pos = alphas[alphas > 0]
    a_min = float(pos.min()) if pos.size else 1e-6
    log_floor = max(math.log(a_min) - math.log(1e4), -700.0)
    hi = np.zeros(alphas.size)
    lo = np.zeros(alphas.size)
    wit = np.zeros(alphas.size)
    _directions(its)  # a ConversionError before any work
    try:
        samples = _samples_for(its, log_floor, 1e-4, 2)
    except _Unresolved as exc:
        return _fallback_tradeoff(its, arr, alphas, str(exc))
    for s in samples:
        up, arg = _tpr_upper(s, alphas)
        wit = np.where(up > hi, arg, wit)
        hi = np.maximum(hi, up)
        lo = np.maximum(lo, _tpr_lower(s, alphas))
    hi = np.where(alphas >= 1.0, 1.0, hi)
    lo = np.minimum(np.maximum(lo, alphas), hi)
    return TradeOff(arr.copy(), hi.reshape(arr.shape), lo.reshape(arr.shape), wit.reshape(arr.shape))


def _fallback_tradeoff(its: list[tuple[Any, int]], arr: np.ndarray, alphas: np.ndarray, why: str) -> TradeOff:
    """The RDP route's TPR bound (valid, looser) with α as the lower end, and a warning."""
    import warnings

    from renyi.accounting import routes
    from renyi.core.errors import RenyiNumericalWarning

    warnings.warn(f"the PLD grid could not resolve the trade-off curve ({why}); using the RDP route",
                  RenyiNumericalWarning, stacklevel=3)
    rows = routes.tpr_bounds(routes.items(its), tuple(float(a) for a in alphas), "rdp")
    up = np.array([c.value for c in rows])
    wit = np.array([c.witness if c.witness is not None else 0.0 for c in rows])
    return TradeOff(arr.copy(), up.reshape(arr.shape), alphas.copy().reshape(arr.shape), wit.reshape(arr.shape))


# ----------------------------------------------------------------------------------------------
# μ-GDP
# ----------------------------------------------------------------------------------------------
def _points(s: _Samples, delta0: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(ε_A, u_A) for ε_A ≥ 0 up to the first u_A ≤ δ₀; None when δ₀ is never reached."""
    z, u = s.z, s.upper
    if z.size == 0:
        return None
    reach = np.nonzero(u <= delta0)[0]
    if reach.size == 0:
        return None
    end = int(reach[0])
    z, u = z[: end + 1], u[: end + 1]
    # ε ≥ 0 only; points without an informative bound (u = 1: gaps) are left out — chords
    # over longer intervals are still above the convex profile
    keep = (z >= 0) & (u < 1.0)
    if not keep.any():
        return None
    if keep[0] and z[0] == 0.0:
        return z[keep], u[keep]
    first = int(np.argmax(keep))
    if first > 0 and z[first] > 0 and u[first - 1] < 1.0:
        # the interval that contains ε = 0, from the last point below it
        keep[first - 1] = True
        return z[keep], u[keep]
    zk, uk = z[keep], u[keep]
    if zk[0] == 0.0:
        return zk, uk
    # δ between ε = 0 and the first point: the chord from (x = 0, δ = 1) to (e^{z₀}, u₀),
    # read at x = 1, bounds δ(0)
    u0 = 1.0 - (1.0 - float(uk[0])) * math.exp(-float(zk[0]))
    return np.concatenate([[0.0], zk]), np.concatenate([[u0], uk])


def _holds(mu: float, eps: np.ndarray, u: np.ndarray, delta0: float) -> bool:
    """True when the chords through (e^{ε_A}, u_A) lie below δ_μ + δ₀ (see the module doc)."""
    la = special.log_ndtr(-eps / mu + mu / 2.0)
    lb = special.log_ndtr(-eps / mu - mu / 2.0)
    with np.errstate(invalid="ignore"):
        ld = la + _log1mexp(eps + lb - la)
    ld = np.where(np.isnan(ld), -np.inf, ld)
    # Round-off allowance on δ_μ, relative: a few ulps of the logs involved, amplified by the
    # cancellation in Φ(a) − e^ε Φ(b) (a factor ≤ 2 + ε/μ² on this range); 10× the ulp.
    eta = 1e-15 * (10.0 + np.abs(la) + np.abs(lb) + np.abs(eps)) * (2.0 + np.abs(eps) / (mu * mu))
    dmu = np.exp(ld)
    g = dmu * (1.0 - eta) + delta0 - u
    if not np.all(g >= 0):
        return False
    if eps.size < 2:
        return True
    # per interval, one factor (1 − η) so that (1 − η)δ_μ stays convex on it
    eta_i = np.maximum(eta[:-1], eta[1:])
    ga = dmu[:-1] * (1.0 - eta_i) + delta0 - u[:-1]
    gb = dmu[1:] * (1.0 - eta_i) + delta0 - u[1:]
    tau = np.expm1(np.diff(eps))
    slope = (u[1:] - u[:-1]) / tau  # chord slope per unit of t = x/x_A − 1
    # x_A·Φ(−ε/μ − μ/2) at both ends, x_A = e^{ε_A}: the slope of δ_μ in t
    qa = np.exp(eps[:-1] + lb[:-1])
    qb = np.exp(eps[:-1] + lb[1:])
    s_a = -(1.0 - eta_i) * qa - slope
    s_b = -(1.0 - eta_i) * qb - slope
    # the slopes carry round-off too: a tangent line off by |e|·t, |e| ≤ 1e-12·|s|
    margin = 1e-12 * (np.abs(s_a) + np.abs(s_b) + np.abs(slope)) * tau
    if not np.all(np.minimum(ga, gb) >= margin):
        return False
    mid = (s_a < 0) & (s_b > 0)
    if not mid.any():
        return True
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = (gb - ga - s_b * tau) / (s_a - s_b)
        val = ga + s_a * t_star
    return bool(np.all(val[mid] >= margin[mid]))


def _needed_mu(eps: np.ndarray, u: np.ndarray, delta0: float) -> np.ndarray:
    """Pointwise: the smallest μ with δ_μ(ε_A) + δ₀ ≥ u_A (0 where u_A ≤ δ₀), by bisection."""
    out = np.zeros(eps.size)
    need = u > delta0
    if not need.any():
        return out
    e, target = eps[need], u[need] - delta0
    lo = np.full(e.size, 1e-8)
    hi = np.full(e.size, 1e4)
    lt = np.log(target)
    for _ in range(48):
        mid = np.sqrt(lo * hi)
        ok = _vec_log_gdp(mid, e) >= lt
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    out[need] = hi
    return out


def _max_needed(e: np.ndarray, u: np.ndarray, delta0: float) -> float:
    """max over points of the pointwise μ: on a subset, then at full resolution near its top."""
    stride = max(1, e.size // 2000)
    sub = np.arange(0, e.size, stride)
    need = _needed_mu(e[sub], u[sub], delta0)
    top = sub[need >= need.max() * (1.0 - 1e-2)][:50]
    near = np.unique(np.clip((top[:, None] + np.arange(-stride, stride + 1)[None, :]).ravel(), 0, e.size - 1))
    return max(float(need.max()), float(_needed_mu(e[near], u[near], delta0).max()))


def _vec_log_gdp(mu: np.ndarray, eps: np.ndarray) -> np.ndarray:
    la = special.log_ndtr(-eps / mu + mu / 2.0)
    lb = special.log_ndtr(-eps / mu - mu / 2.0)
    with np.errstate(invalid="ignore"):
        out = la + _log1mexp(eps + lb - la)
    return np.where(np.isnan(out), -np.inf, out)


def _gdp_of_items(items: list[tuple[Any, int]]) -> float:
    """μ of the composition of the items' own GDP guarantees (inf when some item has none).

    Gaussian mechanisms and GDP values are μ-GDP; their Poisson- or without-replacement-
    subsampled versions are too with the same μ (a subsampled pair is a post-processing
    mixture: C_q(f) ≥ f, Dong, Roth & Su 2022, Thm 4.2); μ's compose as √Σμ² (Cor. 3.3).
    """
    from renyi import mechanisms as M
    from renyi.guarantees import GDP
    from renyi.sampling.subsampling import PoissonSubsampled, SubsampledWithoutReplacement

    total = 0.0
    for m, c in items:
        base, scale = m, 1.0
        if isinstance(m, PoissonSubsampled):
            base = m.mechanism
        elif isinstance(m, SubsampledWithoutReplacement):
            base = m.mechanism
            if getattr(base, "neighbouring", "add_remove") == "add_remove":
                scale = 2.0  # replace-one = one removal and one addition
        if isinstance(base, GDP):
            mu = float(base.mu)
        elif isinstance(base, M.Gaussian):
            mu = float(base.sensitivity) / float(base.sigma)
        else:
            return math.inf
        total += c * (scale * mu) ** 2
    return math.sqrt(total)


def gdp_mu(items: Iterable[Any], *, delta0: float | None = None, method: str | None = None,
           tol: float = 1e-4) -> GDPBound:
    """The tightest certified μ-GDP statement for a composition (up to an additive ``delta0``).

    Args:
        items: (mechanism or guarantee value, count ≥ 1) pairs, or mechanisms (count 1).
        delta0: the additive slack δ₀ ∈ [0, 1): the statement is δ(ε) ≤ δ_μ(ε) + δ₀ at every
            ε ≥ 0. ``None`` (default): 1e-12, raised to the next power of ten above the PLD's
            resolution floor where the grid cannot reach 1e-12 (at most 1e-6; long
            compositions keep a little round-off mass at +∞). Otherwise exactly as given:
            the PLD check needs δ₀ ≥ 1e-300 (it cannot follow a tail to 0); with
            δ₀ = 0 only the composition of the mechanisms' own GDP guarantees is offered.
        method: ``None`` (the smaller of the two statements below), ``"gdp"`` or ``"pld"``.
        tol: the PLD grid's target discretisation error (smaller is tighter and slower).

    Returns:
        A :class:`GDPBound`: the smaller of the exact composition of the items' own GDP
        guarantees (``method="gdp"``, δ₀ = 0; Gaussian mechanisms and their subsampled
        versions) and the PLD-certified μ at ``delta0`` (``method="pld"``, with ``lower``).
        ``mu`` is ``inf`` when neither gives a finite μ (e.g. an (ε, δ)-DP item whose δ
        exceeds δ₀).

    Raises:
        ConversionError: some item has no known privacy loss distribution.
        DomainError: δ₀ outside [0, 1), or a count < 1.

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> from renyi.subsampling import PoissonSubsampled
        >>> gdp_mu([(Gaussian(1.0), 4)]).mu           # exact: √4 = 2
        2.0
        >>> b = gdp_mu([(PoissonSubsampled(Gaussian(1.0), 0.01), 1000)])
        >>> b.method, bool(0.3 < b.lower <= b.mu < 0.6), b.delta0   # √T/σ would be 31.6
        ('pld', True, 1e-12)
    """
    adaptive = delta0 is None
    d0 = 1e-12 if delta0 is None else float(delta0)
    if not (0.0 <= d0 < 1.0) or math.isnan(d0):
        raise DomainError(f"delta0 must be in [0, 1); got {delta0!r}", name="delta0", value=delta0)
    if method not in (None, "gdp", "pld"):
        raise DomainError(f"method must be None, 'gdp' or 'pld'; got {method!r}", name="method", value=method)
    its = _items(items)
    dirs = _directions(its)
    mu_gdp = _gdp_of_items(its)
    pure = math.isfinite(mu_gdp) and _pure_gaussian(its)
    exact = GDPBound(mu_gdp, 0.0, "gdp", mu_gdp if pure else None)
    if method == "gdp" or (method is None and pure):
        return exact  # Gaussian mechanisms: the composed μ is the exact answer
    none = GDPBound(math.inf, d0, "pld", None)
    if d0 < 1e-300:
        return exact if method is None else none
    pts = []
    lower = 0.0
    try:
        samples = _samples_for(its, math.log(d0) - math.log(1e3), tol, 6)
    except _Unresolved:
        return exact if method is None else none
    if adaptive:
        # the floor of the pessimistic bound (round-off mass kept at +∞), if above 1e-12
        floor = max(float(s.upper[s.z >= 0].min()) if (s.z >= 0).any() else 1.0 for s in samples)
        if floor > d0:
            d0 = 10.0 ** math.ceil(math.log10(2.0 * floor))
            if d0 > 1e-6:
                return exact if method is None else none
            none = GDPBound(math.inf, d0, "pld", None)
    for s in samples:
        p = _points(s, d0)
        if p is None:
            return exact if method is None else none
        pts.append(p)
        keep = (s.z >= 0) & (s.lower > d0)
        if keep.any():
            # any subset of points gives a valid lower bound
            lower = max(lower, _max_needed(s.z[keep], s.lower[keep], d0) * (1.0 - 1e-9))
    # the pointwise requirement (refined near its largest values), then grown until the chord
    # test passes on every point (the certificate)
    mu = max([1e-8] + [_max_needed(e, u, d0) for e, u in pts])
    step = 1e-10
    for _ in range(60):
        if all(_holds(mu, e, u, d0) for e, u in pts):
            break
        mu *= 1.0 + step
        step *= 2.0
    else:
        return exact if method is None else none
    if method is None and mu >= mu_gdp:
        return exact
    return GDPBound(mu, d0, "pld", min(lower, mu))


def _pure_gaussian(items: list[tuple[Any, int]]) -> bool:
    from renyi import mechanisms as M
    from renyi.guarantees import GDP

    return all(isinstance(m, (GDP, M.Gaussian)) for m, _ in items)
