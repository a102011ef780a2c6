"""Order optimisation shared by every RDP → (ε, δ) conversion.

The objectives below are valid bounds at *every* order, so the optimiser only buys
tightness; the number returned is always evaluated exactly at the returned order.
For curves whose CGF K(λ) = λ·ε(1+λ) is convex (exact divergences and their sums) the
objectives are quasi-convex in α (the CGF (α − 1)·ε(α) of an exact curve is convex), so a coarse grid plus a bracketed Brent
refinement finds the global optimum. Other curves (upper bounds, interpolated points) get
a dense grid first, then the same local refinement; the result is never worse than the grid.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from renyi.core._scalar import minimize_bounded

__all__ = ["DENSE_ORDERS", "COARSE_ORDERS", "minimize_over_orders"]

#: dp_accounting's default grid, extended toward 1 and toward very large orders (tiny ρ
#: needs α* in the thousands).
DENSE_ORDERS: np.ndarray = np.unique(
    np.concatenate(
        [
            1.0 + np.geomspace(1e-4, 0.1, 25),
            np.round(np.arange(1.1, 11.0, 0.1), 10),
            np.arange(11.0, 64.0),
            np.geomspace(64.0, 1e7, 60),
            [128.0, 256.0, 512.0, 1024.0],
        ]
    )
)

#: Coarse grid for convex curves: α − 1 log-spaced over [1e-4, 1e8].
COARSE_ORDERS: np.ndarray = 1.0 + np.geomspace(1e-4, 1e8, 49)


def _safe(values: np.ndarray) -> np.ndarray:
    # NaN can only come from inf − inf in an objective; an unusable order is simply skipped.
    return np.where(np.isnan(values), np.inf, values)


#: The largest t with exp(t) finite: the refinement works in t = log(α − 1).
_T_MAX = math.log(np.finfo(np.float64).max) - 1e-12

#: Chunks of increasing orders for the quasi-convex scan (large orders are the costly ones
#: for series-based curves, and are rarely needed).
_CHUNK_EDGES = (64.0, 4096.0)


def _scan_quasi_convex(objective: Callable[[np.ndarray], np.ndarray], grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Evaluate ``objective`` on ``grid`` in chunks of increasing order, stopping early.

    For a quasi-convex f, once some f(a_j) > f(a_i) with a_i < a_j, every later order has
    f ≥ f(a_j) (quasi-convexity: f(a_j) ≤ max(f(a_i), f(α))), so the rest of the grid cannot
    hold the minimum and is not evaluated.
    """
    vals_parts: list[np.ndarray] = []
    grids: list[np.ndarray] = []
    start = 0
    for edge in (*_CHUNK_EDGES, math.inf):
        stop = int(np.searchsorted(grid, edge, side="right"))
        if stop <= start:
            continue
        chunk = grid[start:stop]
        v = _safe(np.asarray(objective(chunk), dtype=np.float64))
        grids.append(chunk)
        vals_parts.append(v)
        start = stop
        allv = np.concatenate(vals_parts)
        i = int(np.argmin(allv))
        # the minimum is interior and the last value is strictly larger: the rest is larger still
        if i < allv.size - 1 and allv[-1] > allv[i]:
            break
    return np.concatenate(grids), np.concatenate(vals_parts)


def minimize_over_orders(
    objective: Callable[[np.ndarray], np.ndarray],
    *,
    convex: bool,
    extra_orders: tuple[float, ...] | np.ndarray = (),
) -> tuple[float, float]:
    """Minimise a vectorized objective over α ∈ (1, ∞).

    Args:
        objective: maps an array of finite orders > 1 to objective values (inf allowed).
        convex: True when the objective is quasi-convex in α (exact CGF curves).
        extra_orders: orders that must be tried (breakpoints of interpolated curves).

    Returns:
        (value, alpha): the smallest objective value found and the order at which it was
        evaluated. ``(inf, nan)`` is never returned: if every order is infinite the result
        is ``(inf, first order)``.
    """
    grid = COARSE_ORDERS if convex else DENSE_ORDERS
    extra = np.asarray(extra_orders, dtype=np.float64)
    if extra.size:
        extra = extra[np.isfinite(extra) & (extra > 1.0)]
        grid = np.unique(np.concatenate([grid, extra]))
    if convex:
        grid, vals = _scan_quasi_convex(objective, grid)
    else:
        vals = _safe(np.asarray(objective(grid), dtype=np.float64))
    i = int(np.argmin(vals))
    best_val, best_alpha = float(vals[i]), float(grid[i])
    if not math.isfinite(best_val):
        return best_val, best_alpha

    # Refine between the neighbours of the best grid order, in t = log(α − 1) so that the
    # bracket spans orders very close to 1 and very large ones alike.
    lo = math.log(grid[i - 1] - 1.0) if i > 0 else math.log(grid[0] - 1.0) - 2.0
    hi = math.log(grid[i + 1] - 1.0) if i + 1 < grid.size else math.log(grid[-1] - 1.0) + 2.0
    # An extra order near the largest double would put the bracket past exp's range.
    lo, hi = min(lo, _T_MAX), min(hi, _T_MAX)
    if not lo < hi:
        return best_val, best_alpha

    def f(t: float) -> float:
        v = float(_safe(np.asarray(objective(np.array([1.0 + math.exp(min(t, _T_MAX))]))))[0])
        return v

    def f_finite(t: float) -> float:
        # Brent's parabolic steps need finite values; an unusable order is just "very bad".
        v = f(t)
        return v if math.isfinite(v) else 1e300

    t, _ = minimize_bounded(f_finite, lo, hi, xatol=1e-7, maxiter=200)
    alpha = 1.0 + math.exp(t)
    val = f(t)  # re-evaluate exactly at the order we return
    if val < best_val:
        return val, alpha
    return best_val, best_alpha
