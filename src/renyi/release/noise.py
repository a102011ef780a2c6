"""Noise and intervals: the exact aggregates become the released values.

Each measurement gets independent noise per cell from the exact samplers of
:mod:`renyi.samplers` (secure randomness unless a numpy ``Generator`` is passed, for tests).
Everything after the noise is post-processing and costs no privacy:

* a count or sum is ``value = exact + noise`` (times the granularity), with the interval
  ``value ± h`` where h is the exact 95 % half-width of the noise
  (:func:`renyi.accuracy.half_width`): the interval covers the exact aggregate (after the
  contribution bounds and clamping) with probability ≥ 95 %, cell by cell;
* a mean is ``noisy sum / noisy count``, clipped to the clamping range. Its interval is the
  range of sum/count over the box of the two intervals, each at 97.5 % (so both hold with
  probability ≥ 95 % by the union bound), intersected with the clamping range; when the
  count's interval reaches 0 the interval is the whole clamping range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from renyi.release.engine import Aggregates
from renyi.release.plan import Measurement, Plan, QueryPlan

__all__ = ["QueryResult", "add_noise", "noise_query"]


@dataclass(frozen=True, slots=True)
class QueryResult:
    """The released vector of one query, aligned with its key list.

    Attributes:
        name: the query's name.
        by: the group columns.
        keys: the public key list (one tuple per group).
        value: the noisy values (int64 for counts and integer-granularity sums, else float64).
        lower, upper: the 95 % interval of each value.
    """

    name: str
    by: tuple[str, ...]
    keys: tuple[tuple[str, ...], ...]
    value: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

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


def noise_query(qp: QueryPlan, exact: dict[str, np.ndarray], rng: Any = None) -> QueryResult:
    """Release one query: noise on each of its measurements, then the post-processing."""
    q = qp.query
    noisy = {m.kind: _draw(m, exact[m.kind], rng) for m in qp.measurements}
    by_kind = {m.kind: m for m in qp.measurements}
    if q.type in ("count", "sum"):
        m = by_kind[q.type]
        v = noisy[q.type]
        h = m.half_width
        value, lower, upper = _scaled(v, m.unit), _scaled(v - h, m.unit), _scaled(v + h, m.unit)
        return QueryResult(q.name, q.by, q.keys, value, lower, upper)
    assert q.bounds is not None
    ms, mc = by_kind["sum"], by_kind["count"]
    lo_b, hi_b = q.bounds
    s = noisy["sum"].astype(np.float64) * ms.unit
    c = noisy["count"].astype(np.float64)
    hs = ms.half_width * ms.unit
    hc = float(mc.half_width)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(c >= 1.0, s / np.maximum(c, 1.0), 0.5 * (lo_b + hi_b))
        mean = np.clip(mean, lo_b, hi_b)
        c_lo = c - hc
        ok = c_lo > 0.0
        cands = np.stack([(s - hs) / c_lo, (s - hs) / (c + hc), (s + hs) / c_lo, (s + hs) / (c + hc)])
        lower = np.where(ok, np.clip(cands.min(axis=0), lo_b, hi_b), lo_b)
        upper = np.where(ok, np.clip(cands.max(axis=0), lo_b, hi_b), hi_b)
    # the point estimate lies in its interval by construction when ok; keep it so when not
    lower = np.minimum(lower, mean)
    upper = np.maximum(upper, mean)
    return QueryResult(q.name, q.by, q.keys, mean, lower, upper)


def add_noise(plan: Plan, exact: Aggregates, rng: Any = None) -> list[QueryResult]:
    """Release every query of ``plan`` from its exact aggregates.

    Args:
        plan: the plan.
        exact: the engine's aggregates (query name → {"count", "sum"} int64 vectors).
        rng: None (secure randomness, the default) or a ``numpy.random.Generator``
            (reproducible, **not** secure: tests only).

    Returns:
        One :class:`QueryResult` per query, in the plan's order.
    """
    return [noise_query(qp, exact[qp.query.name], rng) for qp in plan.queries]
