"""Certified lower bounds on what a route can return, so that the default minimum may skip a
route that cannot beat the bound already in hand (issue #24).

``.epsilon(δ)`` returns the smallest ε over every route that applies. For compositions of
Poisson-subsampled Gaussians (example level, or a person with k examples,
:class:`~renyi.sampling.subsampling.PoissonSubsampledGroup`) the PLD route is asked first,
and the comparison routes (``rdp``, ``rdp_classic``, ``advanced``, ``basic``), whose
fractional-order RDP rows and per-step conversions cost more than the PLD itself there, are
computed only when a cheap *certified lower bound* on their value is below the best bound
found so far. The minimum is therefore exactly the one over all routes computed fully: a
skipped route's value is at least its lower bound, which is at least the best value found.

Every bound below rests on the exact one-step pair of each item (remove direction)
P = Σ_j Bin(k, q)(j) N(j, σ²) against Q = N(0, σ²) (k = 1: the example-level pair), which a
neighbouring pair of data sets realises, so any valid RDP curve or (ε, δ) bound of the item
is at least that pair's:

* **RDP routes** (CKS20 Prop. 12 and Mir17 Prop. 3 over the composed curve c(α), which is
  ≥ Σ_i T_i·D_α(P_i‖Q_i)). D_α of a fixed pair is non-decreasing in α, so on α ∈ [n, n+1]
  c(α) ≥ S(n) = Σ_i T_i·D_n(P_i‖Q_i), computed exactly at integer orders (a log-space
  convolution, lowered by its rounding); the conversion term is bounded below on the interval
  from its monotone parts; α ∈ (1, 2] and the tail α ≥ N are bounded in closed form. The
  minimum over the intervals bounds the route's value from below, whatever order its
  optimiser returns. The rdp route's other candidates are covered too: the zero from the
  KL → TV bound is impossible once one step's TV (= δ_{P‖Q}(0)) exceeds δ (TV of the
  composition is at least one step's), and the unsubsampled Gaussian bound of the
  example-level fast path is bounded through its exact profile.
* **advanced / basic** ((ε, δ) of each step, composed): each step's ε at a δ′ is at least
  the exact pair's ε(δ′), certified from below by a δ_{P‖Q}(e) > δ′ evaluation at a
  candidate e (δ non-increasing in ε); advanced composition ([DRV10]) is at least
  min(k, √(2k ln(1/δ″)))·ε of its per-step ε.

``tests/test_route_skip.py`` checks, on random setups, that every lower bound is at most the
route's value computed fully and that the default minimum equals the minimum over all routes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from renyi.core._logmath import log_delta_gaussian

__all__ = ["SkipBounds", "plan"]

#: the routes a :class:`SkipBounds` can bound from below
GUARDED = ("rdp", "rdp_classic", "advanced", "basic")
#: log-space margin for a δ comparison (log δ is accurate to 1e-12)
_LOG_MARGIN = 1e-6


class SkipBounds:
    """Lower bounds for one composition of (mixture, count) items at one δ."""

    def __init__(self, parts: Sequence[tuple[Any, int]], delta: float, curve_fn: Callable[[], Any]) -> None:
        self.parts = list(parts)
        self.delta = delta
        self._curve_fn = curve_fn
        self._eps_cache: dict[tuple[int, float], float] = {}
        self._s_cache: dict[int, np.ndarray] = {}
        self._pos: bool | None = None
        self._cert: dict[int, float] = {}

    # ------------------------------------------------------------------ entry points
    def positive(self) -> bool:
        """True when one step's TV (its remove profile at ε = 0) certifiably exceeds δ: then the
        true ε of the composition at δ is > 0, no valid route returns 0, and the PLD route may
        go first without ever being the work that a zero from a cheap route would save."""
        ld = math.log(self.delta)
        for mix, _ in self.parts:
            if float(mix.log_delta_remove_lower(np.zeros(1))[0]) > ld + _LOG_MARGIN:
                return True
        return False

    def lower(self, name: str, target: float, *, full: bool = False) -> float:
        """A value v: when v ≥ ``target``, route ``name`` certifiably returns at least v (so it
        cannot be below ``target``); a value below ``target`` decides nothing. With ``full``
        the scan does not stop early and v is a lower bound in every case (tests)."""
        if name in ("rdp", "rdp_classic"):
            return self._rdp_lower(name, target, full)
        if name not in ("basic", "advanced"):
            return -math.inf
        if not full and len(self.parts) == 1 and math.isfinite(target) and target > 0.0:
            # one item run t times: both routes are ≥ c·ε(δ/t) (basic: c = t; advanced: also
            # c = min(t, √(2t ln(1/δ))), see _advanced_lower), so one profile value decides
            mix, t = self.parts[0]
            c = float(t) if name == "basic" else min(float(t), math.sqrt(2.0 * t * math.log(1.0 / self.delta)))
            need = target / c
            known = self._cert.get(t, -math.inf)  # an e already certified: ε(δ/t) ≥ e
            if need <= known:
                return target
            ok = float(mix.log_delta_remove_lower(np.array([need]))[0]) > math.log(self.delta / t) + _LOG_MARGIN
            if ok:
                self._cert[t] = max(known, need)
            return target if ok else -math.inf
        if name == "basic":
            return self._basic_lower()
        return min(self._basic_lower(), self._advanced_lower())

    # ------------------------------------------------------------------ RDP routes
    def _s(self, n_max: int) -> np.ndarray:
        """S(n) = Σ T_i·D_n(P_i‖Q_i) from below at n = 2 … ``n_max`` (an array; cached)."""
        hit = self._s_cache.get(n_max)
        if hit is None:
            n = np.arange(2, n_max + 1, dtype=np.float64)
            tot = np.zeros(n.size)
            for mix, t in self.parts:
                tot += t * mix.cgf_remove_lower(n_max)[2:] / (n - 1.0)
            hit = tot
            self._s_cache[n_max] = hit
        return hit

    def _positive(self) -> bool:
        if self._pos is None:
            self._pos = self.positive()
        return self._pos

    def _rdp_lower(self, name: str, target: float, full: bool) -> float:
        from renyi.guarantees import RDP
        from renyi.sampling.subsampling import SubsampledGaussianRDP

        curve = self._curve_fn()
        # the rdp route's value is the CKS objective at some order, or 0 (KL → TV), or the
        # unsubsampled Gaussian's ε (example-level fast path); anything else: no bound here
        if not isinstance(curve, RDP) or curve.zcdp is not None or math.isfinite(curve.eps_inf):
            return -math.inf
        plain = math.inf
        if name == "rdp":
            if type(curve) is SubsampledGaussianRDP:
                plain = _gdp_lower(math.sqrt(curve.steps) / curve.sigma, self.delta, target)
            elif type(curve) is not RDP:
                return -math.inf
            if not self._positive():
                return -math.inf  # the KL → TV zero is not excluded
        a = -math.log(self.delta)
        mironov = name == "rdp_classic"
        # α ∈ (1, 2]: Mironov's term A/(α−1) ≥ A; CKS's log(1−1/α) + (A − log α)/(α−1) with
        # x = α − 1 ≥ log x − log 2 + (A − log 2)/x, decreasing in x ≤ A − log 2, so ≥ A − 2 log 2
        if mironov:
            first = a
        else:
            if a - math.log(2.0) < 1.0:
                return -math.inf
            first = a - 2.0 * math.log(2.0)
        n_top = min(mix.max_order() for mix, _ in self.parts)
        if n_top < 3:
            return -math.inf
        # k = 1 everywhere: the closed form costs little even at 64 orders
        first_block = 64 if all(mix.k == 1 for mix, _ in self.parts) else 16
        blocks = [b for b in (16, 32, 64, 128, 256) if first_block <= b < n_top] + [n_top]
        for n_max in blocks:
            s = self._s(n_max)  # index m ↔ order n = m + 2
            n = np.arange(2, n_max + 1, dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                if mironov:
                    # the tail α ≥ n: c ≥ S(n), A/(α−1) ≥ 0; the interval [n, n+1]: A/(α−1) ≥ A/n
                    tail = s.copy()
                    iv = s + a / n
                else:
                    # tail: log(1−1/α) ≥ log(1−1/n), (A − log α)/(α−1) ≥ −log(α)/(α−1) ≥ −log(n)/(n−1);
                    # [n, n+1]: log(1−1/n) + (A − log(n+1))/n, or /(n−1) where that numerator is < 0
                    tail = s + np.log1p(-1.0 / n) - np.log(n) / (n - 1.0)
                    num = a - np.log(n + 1.0)
                    iv = s + np.log1p(-1.0 / n) + np.where(num >= 0.0, num / n, num / (n - 1.0))
            iv = iv[:-1]  # intervals [n, n+1] for n = 2 … n_max − 1
            if not full:
                hits = np.nonzero(tail >= target)[0]
                if hits.size:
                    m = int(hits[0])  # (1, 2], [2, 3], …, [m+1, m+2], and the tail from n = m + 2
                    return min(first, float(np.min(iv[:m])) if m else math.inf, float(tail[m]), plain)
                below = min(first, float(np.min(iv)) if iv.size else math.inf)
                if below < target:
                    return min(below, plain)
            if n_max == n_top:
                return min(first, float(np.min(iv)) if iv.size else math.inf, float(tail[-1]), plain)
        return -math.inf  # pragma: no cover - the last block is n_top

    # ------------------------------------------------------------------ advanced / basic
    def _eps_lo(self, i: int, delta_step: float) -> float:
        """A certified lower bound on item i's exact one-step ε at δ′ = ``delta_step``: the
        largest e on a grid with δ_{P‖Q}(e) > δ′ (from below), 0 when there is none."""
        key = (i, delta_step)
        hit = self._eps_cache.get(key)
        if hit is not None:
            return hit
        mix = self.parts[i][0]
        if not delta_step > 0.0:
            self._eps_cache[key] = 0.0
            return 0.0
        ld = math.log(delta_step) + _LOG_MARGIN
        mu = mix.k / mix.sigma  # the Gaussian with sensitivity k dominates: its ε is above
        top = 0.5 * mu * mu + mu * math.sqrt(2.0 * max(math.log(1.0 / delta_step), 1.0)) + 1.0
        grid = top * np.geomspace(1e-9, 1.0, 32)
        ok = mix.log_delta_remove_lower(grid) > ld
        if not ok[0]:
            found = 0.0
        else:
            j = int(np.nonzero(ok)[0][-1])
            found = float(grid[j])
            if j + 1 < grid.size:  # refine inside [grid[j], grid[j+1])
                fine = np.linspace(grid[j], grid[j + 1], 26)[1:-1]
                ok2 = mix.log_delta_remove_lower(fine) > ld
                if ok2.any():
                    found = float(fine[np.nonzero(ok2)[0][-1]])
        self._eps_cache[key] = found
        return found

    def _basic_lower(self) -> float:
        total = sum(t for _, t in self.parts)
        run = self.delta / total
        return math.fsum(t * self._eps_lo(i, run) for i, (_, t) in enumerate(self.parts))

    def _advanced_lower(self) -> float:
        share = self.delta / len(self.parts)
        out = []
        for i, (_, t) in enumerate(self.parts):
            # candidates: t·ε(share/t) and [DRV10] √(2t ln(1/δ″))·ε(share/(2t)) + … with δ″ = share/2
            # (or share for a pure ε), ε(share/(2t)) ≥ ε(share/t) ≥ e; ln(1/share) is the smaller log
            e = self._eps_lo(i, share / t)
            adv = math.sqrt(2.0 * t * math.log(1.0 / share))
            out.append(min(float(t), adv) * e)
        return math.fsum(out)


def _gdp_lower(mu: float, delta: float, target: float) -> float:
    """``target`` when the μ-GDP ε at δ is certifiably ≥ target (δ_G(μ, target) > δ), else −∞."""
    if not (math.isfinite(mu) and mu > 0.0 and math.isfinite(target)):
        return -math.inf
    ld = float(log_delta_gaussian(max(target, 0.0), mu))
    return target if ld > math.log(delta) + _LOG_MARGIN else -math.inf


def plan(items: Sequence[tuple[Any, int]], delta: float, curve_fn: Callable[[], Any]) -> SkipBounds | None:
    """:class:`SkipBounds` for a composition whose every item is a Poisson-subsampled add/remove
    Gaussian (example level or a person's group) with rate in (0, 1); None otherwise.
    ``curve_fn`` gives the composed RDP curve (called only to bound the RDP routes)."""
    from renyi.mechanisms import Gaussian
    from renyi.sampling import _group_gaussian as gg
    from renyi.sampling.subsampling import PoissonSubsampled, PoissonSubsampledGroup

    parts: list[tuple[Any, int]] = []
    for obj, count in items:
        if type(obj) is PoissonSubsampled or type(obj) is PoissonSubsampledGroup:
            base = obj.mechanism
            if type(base) is not Gaussian or base.neighbouring != "add_remove":
                return None
            k = obj.group_size if type(obj) is PoissonSubsampledGroup else 1
            q = float(obj.rate)
            sigma = float(base.sigma) / float(base.sensitivity)
            if not (0.0 < q < 1.0 and math.isfinite(sigma) and sigma > 0.0 and count >= 1):
                return None
            parts.append((gg.mixture(int(k), q, sigma), int(count)))
        else:
            return None
    if not parts:
        return None
    return SkipBounds(parts, delta, curve_fn)
