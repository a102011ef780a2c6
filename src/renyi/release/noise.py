"""Noise and intervals: the exact aggregates become the released values.

Each measurement gets independent noise per cell from the exact samplers of
:mod:`renyi.samplers` (secure randomness unless a numpy ``Generator`` is passed, for tests).
Everything after the noise is post-processing and costs no privacy:

* a count, sum, count_distinct or histogram cell is ``value = exact + noise`` (times the
  granularity), with the interval ``value ± h`` where h is the exact half-width of the noise
  at the query's coverage (:func:`renyi.accuracy.half_width`): the interval covers the exact
  aggregate (after the contribution bounds and clamping) with probability ≥ the coverage,
  cell by cell;
* a mean is ``Σ(v − c)/count + c`` from the noisy **centred** sum Σ(v − c) (c the integer
  centre of the clamping range, :func:`renyi.release.plan.centring`) and the noisy count,
  clipped to the clamping range. Its interval is the range of Σ(v − c)/count + c over the
  box of the two intervals, each at coverage 1 − β/2 (so both hold with probability ≥ the
  coverage by the union bound), intersected with the clamping range; when the count's
  interval reaches 0 it is the whole clamping range;
* a variance is ``Q/count + q − (S/count)²`` from the noisy count, the centred sum S = Σ(v − c)
  and the shifted centred sum of squares Q = Σ((v − c)² − q), clipped to [0, ((H − L)/2)²]
  (no set of values in [L, H] has a larger population variance); its interval is the range of
  that function over the box of the three intervals, each at coverage 1 − β/3 (a std is its
  square root, interval included);
* opt-in post-processing (``post``): ``non_negative`` clips counts and their intervals at 0
  (the exact count is ≥ 0, so no coverage is lost); ``consistent`` replaces a query's levels
  (the total, by the first column, ..., by all) by their weighted least-squares projection on
  the consistent ones (parents equal the sum of their children), computed exactly on the tree
  in two passes. The projected value's error is a fixed linear combination of the independent
  noises, so its interval is a *bound*, no longer the exact quantile: for the discrete
  Gaussian, which is σ²-subgaussian ([CKS20] §2: E[e^{tZ}] ≤ e^{t²σ²/2}; checked numerically
  in the tests), P[|err| > t] ≤ 2·exp(−t²/(2P)) with P the combination's variance proxy;
  for the discrete Laplace, Chebyshev's inequality with the exact variance;
* a quantile (:func:`release_quantiles`) is chosen per group by the exponential mechanism over
  the public candidate grid, with an interval from two more exponential mechanisms;
* a query with ``keys = "discover"`` first keeps the groups whose noisy number of people
  reaches the threshold (:func:`discover_keys`); only those groups are released.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from renyi.release.engine import Aggregates
from renyi.release.plan import Measurement, Plan, QueryPlan

__all__ = ["QueryResult", "add_noise", "noise_query", "project_levels", "release_quantiles", "discover_keys",
           "quantile_scores"]


@dataclass(frozen=True, slots=True)
class QueryResult:
    """The released vector of one query, aligned with its key list.

    Attributes:
        name: the query's name.
        by: the group columns (a histogram adds ``bin``).
        keys: the public key list (one tuple per released value).
        value: the noisy values (int64 for counts and integer-granularity sums, else float64).
        lower, upper: the interval of each value (at the query's coverage).
        exact_intervals: True when each interval is the exact quantile of the noise (or, for a
            ratio, of the box of exact ones); False after a least-squares projection (a valid
            but wider bound).
        levels: for a ``consistent`` query, the coarser levels' results (coarsest first).
    """

    name: str
    by: tuple[str, ...]
    keys: tuple[tuple[str, ...], ...]
    value: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    exact_intervals: bool = True
    levels: tuple[QueryResult, ...] = ()

    def rows(self) -> list[tuple[Any, ...]]:
        """One tuple per group: the key values, then value, lower, upper."""
        out = []
        for i, k in enumerate(self.keys):
            out.append((*k, self.value[i].item(), self.lower[i].item(), self.upper[i].item()))
        return out


def _draw(m: Measurement, exact: np.ndarray, rng: Any) -> np.ndarray:
    # The mechanism's own release: value + exact discrete noise, int64 in and out.
    return np.asarray(m.mechanism.release(np.asarray(exact, dtype=np.int64), rng=rng), dtype=np.int64)


def _scaled(x: np.ndarray, unit: float) -> np.ndarray:
    return x if unit == 1.0 else x.astype(np.float64) * unit


def _int64(x: Any, what: str) -> np.ndarray:
    try:
        return np.asarray([int(v) for v in x], dtype=np.int64)
    except OverflowError:
        from renyi.release.spec import SpecError

        raise SpecError(f"{what} does not fit in 64-bit integers; use a coarser granularity") from None


def measured(m: Measurement, exact: dict[str, np.ndarray], query: QueryPlan) -> np.ndarray:
    """The exact vector a measurement adds noise to, from the engine's aggregates.

    Centring is exact integer arithmetic on the engine's aggregates (Python integers, so it
    cannot overflow silently): Σ(v − c) = Σv − c·count over the same rows, and Σ((v − c)² − q)
    = Σ(v − c)² − q·count. A coarser level of a ``consistent`` query sums its children.
    """
    q = query.query
    if m.kind == "sum2":
        vec = _int64((a - m.shift * b for a, b in zip(exact["sum2"].tolist(), exact["count"].tolist())),
                     f"query {q.name!r}: the sum of squares")
    elif m.kind == "sum" and m.centre:
        vec = _int64((a - m.centre * b for a, b in zip(exact["sum"].tolist(), exact["count"].tolist())),
                     f"query {q.name!r}: the centred sum")
    else:
        vec = np.asarray(exact[m.kind], dtype=np.int64)
    if m.level is not None and m.keys is not None:
        pos = {k: i for i, k in enumerate(m.keys)}
        n = len(m.level)
        idx = np.array([pos[k[:n]] for k in q.keys], dtype=np.int64)
        vec = _int64(_sum_by(idx, vec, len(m.keys)), f"query {q.name!r}: a level total")
    return vec


def _sum_by(idx: np.ndarray, vec: np.ndarray, size: int) -> list[int]:
    out = [0] * size
    for i, v in zip(idx.tolist(), vec.tolist()):
        out[i] += v
    return out


def _ratio_mean(qp: QueryPlan, noisy: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = qp.query
    assert q.bounds is not None
    by_kind = {m.kind: m for m in qp.measurements}
    ms, mc = by_kind["sum"], by_kind["count"]
    lo_b, hi_b = q.bounds
    g = ms.unit
    c0 = float(ms.centre)
    s = noisy["sum"].astype(np.float64)
    n = noisy["count"].astype(np.float64)
    hs, hc = float(ms.half_width), float(mc.half_width)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(n >= 1.0, s / np.maximum(n, 1.0) + c0, c0) * g
        mean = np.clip(mean, lo_b, hi_b)
        n_lo = n - hc
        ok = n_lo > 0.0
        cands = np.stack([(s - hs) / n_lo, (s - hs) / (n + hc), (s + hs) / n_lo, (s + hs) / (n + hc)])
        lower = np.where(ok, np.clip((cands.min(axis=0) + c0) * g, lo_b, hi_b), lo_b)
        upper = np.where(ok, np.clip((cands.max(axis=0) + c0) * g, lo_b, hi_b), hi_b)
    # the point estimate lies in its interval by construction when ok; keep it so when not
    return mean, np.minimum(lower, mean), np.maximum(upper, mean)


def _ratio_variance(qp: QueryPlan, noisy: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = qp.query
    assert q.bounds is not None
    by_kind = {m.kind: m for m in qp.measurements}
    m2, ms, mc = by_kind["sum2"], by_kind["sum"], by_kind["count"]
    g = ms.unit
    lo_u, hi_u = math.floor(q.bounds[0] / g), math.ceil(q.bounds[1] / g)
    vmax = ((hi_u - lo_u) / 2.0) ** 2  # the largest population variance of values in [L, H]
    shift = float(m2.shift)
    qq = noisy["sum2"].astype(np.float64)
    s = noisy["sum"].astype(np.float64)
    n = noisy["count"].astype(np.float64)
    h2, hs, hc = float(m2.half_width), float(ms.half_width), float(mc.half_width)
    with np.errstate(divide="ignore", invalid="ignore"):
        nn = np.maximum(n, 1.0)
        point = np.where(n >= 1.0, qq / nn + shift - (s / nn) ** 2, (hi_u - lo_u) ** 2 / 12.0)
        point = np.clip(point, 0.0, vmax)
        n_lo, n_hi = n - hc, n + hc
        ok = n_lo > 0.0
        u1 = 1.0 / n_hi
        u2 = np.where(ok, 1.0 / np.where(ok, n_lo, 1.0), np.inf)
        s_lo, s_hi = s - hs, s + hs
        s2min = np.where((s_lo <= 0.0) & (s_hi >= 0.0), 0.0, np.minimum(s_lo * s_lo, s_hi * s_hi))
        s2max = np.maximum(s_lo * s_lo, s_hi * s_hi)
        q_lo, q_hi = qq - h2, qq + h2

        # f(u) = q + Q·u − S²·u² (u = 1/count) is concave in u: the box's maximum is at Q_hi,
        # the smallest S², and the vertex u* = Q/(2S²) when inside [u1, u2]; the minimum at
        # Q_lo, the largest S², and an end of [u1, u2]
        def f(qv: np.ndarray, s2: np.ndarray, u: np.ndarray) -> np.ndarray:
            return np.asarray(shift + qv * u - s2 * u * u)

        ustar = np.where(s2min > 0.0, q_hi / (2.0 * np.where(s2min > 0.0, s2min, 1.0)), np.inf)
        inside = (ustar > u1) & (ustar < u2)
        up = np.maximum(f(q_hi, s2min, u1), f(q_hi, s2min, u2))
        up = np.where(inside, np.maximum(up, f(q_hi, s2min, ustar)), up)
        low = np.minimum(f(q_lo, s2max, u1), f(q_lo, s2max, u2))
        lower = np.where(ok, np.clip(low, 0.0, vmax), 0.0)
        upper = np.where(ok, np.clip(up, 0.0, vmax), vmax)
    lower, upper = np.minimum(lower, point), np.maximum(upper, point)
    scale = g * g
    if q.type == "std":
        return (np.asarray(np.sqrt(point * scale)), np.asarray(np.sqrt(lower * scale)),
                np.asarray(np.sqrt(upper * scale)))
    return point * scale, lower * scale, upper * scale


def _noise_variance(m: Measurement) -> float:
    """The variance proxy of one cell's noise: σ² for the discrete Gaussian (it is
    σ²-subgaussian), the exact variance 2r/(1 − r)², r = e^{−1/t}, for the discrete Laplace."""
    name, p = m.noise_parameter
    if name == "sigma":
        return p * p
    r = math.exp(-1.0 / p)
    return 2.0 * r / (1.0 - r) ** 2


def project_levels(children: list[np.ndarray], values: list[np.ndarray], variances: list[float]
                   ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Weighted least squares on a tree of levels: the consistent estimates and their variances.

    Level 0 is the root (one cell); ``children[l][j]`` is the index, at level l, of the parent
    of cell j of level l + 1. ``values[l]`` are the noisy cells of level l, each with noise of
    variance ``variances[l]``. The estimate minimising Σ (x − y)²/σ² under "every parent is the
    sum of its children" is computed in two passes (Hay et al. 2010, generalised to a variance
    per level; it is the exact Gaussian smoother on a tree): upward, each node's estimate from
    its subtree, z = (y/σ² + Σz_c/ΣV_c)/(1/σ² + 1/ΣV_c) with V = 1/(1/σ² + 1/ΣV_c); downward,
    x_c = z_c + (V_c/ΣV)(x_parent − Σz), with the error variance P_c = V_c + (V_c/ΣV)²(P_parent −
    ΣV). For independent noises of variance (proxy) σ², P is the variance (proxy) of the
    estimate's error.

    Returns:
        (estimates, variances) per level.
    """
    depth = len(values)
    z = [np.asarray(v, dtype=np.float64).copy() for v in values]
    var = [np.full(len(v), float(s)) for v, s in zip(values, variances)]
    sz: list[np.ndarray] = [np.zeros(0)] * depth
    sv: list[np.ndarray] = [np.zeros(0)] * depth
    for lv in range(depth - 2, -1, -1):
        par = children[lv]
        sz[lv] = np.bincount(par, weights=z[lv + 1], minlength=len(z[lv]))
        sv[lv] = np.bincount(par, weights=var[lv + 1], minlength=len(z[lv]))
        w_own = 1.0 / variances[lv]
        w_kids = 1.0 / sv[lv]
        z[lv] = (z[lv] * w_own + sz[lv] * w_kids) / (w_own + w_kids)
        var[lv] = 1.0 / (w_own + w_kids)
    x = [z[0]]
    p = [var[0]]
    for lv in range(1, depth):
        par = children[lv - 1]
        gain = var[lv] / sv[lv - 1][par]
        x.append(z[lv] + gain * (x[lv - 1][par] - sz[lv - 1][par]))
        p.append(var[lv] + gain * gain * (p[lv - 1][par] - sv[lv - 1][par]))
    return x, p


def _consistent(qp: QueryPlan, noisy: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    ms = qp.measurements
    keys = [m.keys if m.keys is not None else qp.query.keys for m in ms]
    children = []
    for lv in range(len(ms) - 1):
        pos = {k: i for i, k in enumerate(keys[lv])}
        n = len(ms[lv].level or ())
        children.append(np.array([pos[k[:n]] for k in keys[lv + 1]], dtype=np.int64))
    variances = [_noise_variance(m) for m in ms]
    x, p = project_levels(children, [v.astype(np.float64) for v in noisy], variances)
    beta = 1.0 - qp.coverage
    out = []
    for m, xv, pv in zip(ms, x, p):
        pv = np.maximum(pv, 0.0)
        if m.noise_parameter[0] == "sigma":
            h = np.sqrt(2.0 * pv * math.log(2.0 / beta))  # subgaussian tail bound
        else:
            h = np.sqrt(pv / beta)  # Chebyshev
        out.append((xv * m.unit, (xv - h) * m.unit, (xv + h) * m.unit))
    return out


def _non_negative(v: np.ndarray, lo: np.ndarray, up: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # the exact count is ≥ 0: intersecting its interval with [0, ∞) loses no coverage
    return np.maximum(v, 0), np.maximum(lo, 0), np.maximum(up, 0)


def quantile_scores(lower: np.ndarray, upper: np.ndarray, target: np.ndarray) -> np.ndarray:
    """u(c) = −dist(target, [L_c, R_c]) = −max(0, L_c − target, target − R_c), row by row.

    Sensitivity (one row added to a group of n rows, target q·n → q·(n + 1)): a row below c
    shifts [L_c, R_c] by 1 and the target by q (|Δu| ≤ 1 − q); a row at c widens the interval
    by 1 to the right and moves the target by q (Δu ∈ [−max(q, 1 − q), 0]); a row above c moves
    the target only (|Δu| ≤ q). So one row moves every score by at most max(q, 1 − q), and r
    rows by r·max(q, 1 − q) (removal is the reverse).
    """
    t = np.asarray(target, dtype=np.float64)[:, None]
    d = np.maximum(np.maximum(lower - t, t - upper), 0.0)
    return np.asarray(-d, dtype=np.float64)


def release_quantiles(qp: QueryPlan, exact: dict[str, np.ndarray], rng: Any = None) -> QueryResult:
    """Release a quantile query from its exact per-group counts over the candidate grid.

    ``exact["count"]`` holds, per group (key-major), the number of kept values rounded to each
    candidate c₀ < … < c_{K−1}. With L_c = #{v < c}, R_c = #{v ≤ c} and n the group's count:

    * the value is the exponential mechanism's choice with scores −dist(q·n, [L_c, R_c])
      (:func:`quantile_scores`; 0 exactly at the q-quantiles);
    * the lower end is the choice with the same scores on the group padded with s values at
      the lower bound and s at the upper (L_c += s for c > c₀, R_c += s, and R += s more at
      the top) and the target q·n. The padded target always lies in [0, n + 2s], so the best
      score is 0, and with probability ≥ 1 − K·e^{−ηt} = 1 − β/2 the choice has score ≥ −t
      ([DR14] Thm 3.11), hence L_c + s ≤ q·n + t < q·n + s: fewer than q·n values lie below
      it, so it is at most the smallest q-quantile. The upper end targets q·n + 2s and is,
      symmetrically, at least the largest q-quantile with probability ≥ 1 − β/2;
    * the interval is [min(lower, value), max(upper, value)]: with probability ≥ 1 − β (union
      bound) it contains every q-quantile of the group's kept, clamped, rounded values, for
      every n (an empty group gives the whole range).
    """
    q = qp.query
    cands = np.asarray(q.candidates, dtype=np.float64)
    k = cands.size
    cells = q.cells
    h = np.asarray(exact["count"], dtype=np.float64).reshape(cells, k)
    upper_c = np.cumsum(h, axis=1)
    lower_c = upper_c - h
    n = upper_c[:, -1] if k else np.zeros(cells)
    assert q.quantiles is not None
    values, lows, ups = [], [], []
    for qq in q.quantiles:
        ms = {m.kind: m for m in qp.measurements if m.quantile == qq}
        target = qq * n
        choice = {}
        for kind in ("quantile", "quantile_lower", "quantile_upper"):
            m = ms[kind]
            s = m.slack
            if kind == "quantile":
                lo_c, up_c, t = lower_c, upper_c, target
            else:
                pad_lo = np.where(np.arange(k) > 0, s, 0.0)
                pad_up = np.where(np.arange(k) == k - 1, 2.0 * s, s)
                lo_c, up_c = lower_c + pad_lo, upper_c + pad_up
                t = target if kind == "quantile_lower" else target + 2.0 * s
            u = quantile_scores(lo_c, up_c, t)
            choice[kind] = np.array([m.mechanism.release(u[i], rng=rng) for i in range(cells)], dtype=np.int64)
        v = cands[choice["quantile"]] if cells else np.zeros(0)
        lo = np.minimum(cands[choice["quantile_lower"]], v) if cells else np.zeros(0)
        up = np.maximum(cands[choice["quantile_upper"]], v) if cells else np.zeros(0)
        values.append(v)
        lows.append(lo)
        ups.append(up)
    if len(q.quantiles) == 1:
        return QueryResult(q.name, q.by, q.keys, values[0], lows[0], ups[0])
    # several quantiles: one row per (group, quantile), group-major
    labels = [f"{x:g}" for x in q.quantiles]
    keys = tuple((*key, lab) for key in q.keys for lab in labels)
    v, lo, up = (np.stack(a, axis=1).reshape(-1) if cells else np.zeros(0) for a in (values, lows, ups))
    return QueryResult(q.name, (*q.by, "quantile"), keys, v, lo, up)


def discover_keys(qp: QueryPlan, exact: dict[str, Any], rng: Any = None) -> tuple[QueryPlan, dict[str, np.ndarray]]:
    """Gaussian thresholding: keep the groups of the data whose noisy number of people reaches
    the threshold (:func:`renyi.release.plan.discovery_threshold`), and restrict the query and
    its exact aggregates to them (sorted, so their order reveals nothing more than the set).

    Only groups present in the data (after the contribution bounds) are candidates, so a key
    outside the data is never released.
    """
    import dataclasses

    (m,) = [x for x in qp.measurements if x.kind == "discovery"]
    keys = [tuple(k) for k in exact["keys"]]
    persons = np.asarray(exact["persons"], dtype=np.int64)
    noisy = _draw(m, persons, rng) if len(keys) else np.zeros(0, dtype=np.int64)
    kept = sorted((keys[i], i) for i in np.flatnonzero(noisy >= m.threshold).tolist())
    idx = np.array([i for _, i in kept], dtype=np.int64)
    q = dataclasses.replace(qp.query, keys=tuple(k for k, _ in kept))
    out: dict[str, np.ndarray] = {}
    for name, vec in exact.items():
        if name in ("keys", "persons"):
            continue
        arr = np.asarray(vec)
        per = arr.size // len(keys) if len(keys) else 1
        out[name] = arr.reshape(len(keys), per)[idx].reshape(-1) if len(keys) else arr
    rest = tuple(x for x in qp.measurements if x.kind != "discovery")
    return dataclasses.replace(qp, query=q, measurements=rest), out


def noise_query(qp: QueryPlan, exact: dict[str, np.ndarray], rng: Any = None) -> QueryResult:
    """Release one query: noise on each of its measurements, then the post-processing."""
    if qp.query.discover:
        qp, exact = discover_keys(qp, exact, rng)
    q = qp.query
    if q.type == "quantile":
        return release_quantiles(qp, exact, rng)
    noisy = [_draw(m, measured(m, exact, qp), rng) for m in qp.measurements]
    by, keys = q.by, q.keys
    if q.type == "histogram":
        by = (*q.by, "bin")
        keys = tuple((*k, b) for k in q.keys for b in q.bin_labels)
    if q.type in ("mean", "variance", "std"):
        nk = {m.kind: v for m, v in zip(qp.measurements, noisy)}
        value, lower, upper = _ratio_mean(qp, nk) if q.type == "mean" else _ratio_variance(qp, nk)
        return QueryResult(q.name, by, keys, value, lower, upper)
    if "consistent" in q.post:
        res = _consistent(qp, noisy)
        if "non_negative" in q.post:
            res = [_non_negative(*r) for r in res]
        parts = [QueryResult(q.name, m.level if m.level is not None else by,
                             m.keys if m.keys is not None else keys, *r, exact_intervals=False)
                 for m, r in zip(qp.measurements, res)]
        return QueryResult(q.name, by, keys, *res[-1], exact_intervals=False, levels=tuple(parts[:-1]))
    m = qp.measurements[0]
    v = noisy[0]
    h = m.half_width
    value, lower, upper = _scaled(v, m.unit), _scaled(v - h, m.unit), _scaled(v + h, m.unit)
    if "non_negative" in q.post:
        value, lower, upper = _non_negative(value, lower, upper)
    return QueryResult(q.name, by, keys, value, lower, upper)


def add_noise(plan: Plan, exact: Aggregates, rng: Any = None) -> list[QueryResult]:
    """Release every query of ``plan`` from its exact aggregates.

    Args:
        plan: the plan.
        exact: the engine's aggregates (query name → {"count", "sum", "sum2", "distinct"}
            int64 vectors, see :mod:`renyi.release.engine`).
        rng: None (secure randomness, the default) or a ``numpy.random.Generator``
            (reproducible, **not** secure: tests only).

    Returns:
        One :class:`QueryResult` per query, in the plan's order.
    """
    return [noise_query(qp, exact[qp.query.name], rng) for qp in plan.queries]
