"""Hostile and valid values, each labelled with whether it lies in a parameter's domain.

``arg(kind)`` draws ``(value, valid)`` where ``valid`` is True (in the documented domain),
False (outside it: the call must raise) or None (the domain does not decide, e.g. a whole
number given as a float to an integer parameter, or an integer too large for a double).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import strategies as st

# name: (lo, hi, lo_closed, hi_closed) as in renyi._validation
DOMAINS: dict[str, tuple[float, float, bool, bool]] = {
    "pos": (0.0, math.inf, False, False),
    "nonneg": (0.0, math.inf, True, False),
    "nonneg_ext": (0.0, math.inf, True, True),
    "prob_open": (0.0, 1.0, False, False),
    "unit_co": (0.0, 1.0, True, False),
    "unit": (0.0, 1.0, True, True),
    "rate": (0.0, 1.0, False, True),
    "order": (1.0, math.inf, False, True),
    # orders of curves that extend to the KL limit α = 1 (pure_dp_rdp)
    "order_kl": (1.0, math.inf, True, True),
    # expectations of counts (Tuning's mean): [1, ∞)
    "ge1": (1.0, math.inf, True, False),
    # orders of Rényi divergences and power means: α ∈ [0, ∞]
    "order_any": (0.0, math.inf, True, True),
    # GDP's μ: ρ = μ²/2 must be a finite double
    "gdp_mu": (0.0, math.sqrt(1.7976931348623157e308), True, True),
    "real": (-math.inf, math.inf, False, False),
}

EDGES = [-math.inf, -1e300, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1e-300, 1e-30, 1e-16, 1e-9, 1e-5, 0.001, 0.1,
         0.5, 1.0 - 1e-16, 1.0, 1.0 + 2.220446049250313e-16, 1.5, 2.0, 10.0, 1e3, 1e6, 4.7e5, 5.6e8, 1e15, 1e100,
         1e300, 1.7976931348623157e308, math.inf]


class _Weird:
    def __float__(self) -> float:
        return 1.0

    def __repr__(self) -> str:
        return "<object with __float__>"


# values outside every numeric domain
JUNK: list[Any] = [math.nan, -math.nan, np.nan, np.float32("nan"), True, False, "1", "", None, 1 + 1j, [], [1.0],
                   np.array([]), {}, _Weird(), b"1"]


def all_ok(flags: list[bool | None]) -> bool | None:
    """Combine per-argument domain flags: False if any is junk, None if any is for the call to
    decide, else True."""
    if any(f is False for f in flags):
        return False
    if any(f is None for f in flags):
        return None
    return True


def in_domain(kind: str, x: Any) -> bool | None:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "fiu":
            x = x.item()
        else:
            return False
    if kind == "count":
        if isinstance(x, (int, np.integer)):
            return int(x) >= 1
        f = float(x)
        if math.isnan(f):
            return False
        return None if f.is_integer() and f >= 1 else False
    try:
        f = float(x)
    except OverflowError:
        return None
    if math.isnan(f):
        return False
    lo, hi, lc, hc = DOMAINS[kind]
    ok = (f >= lo if lc else f > lo) and (f <= hi if hc else f < hi)
    return ok


def _valid_float(kind: str) -> st.SearchStrategy[float]:
    lo, hi, lc, hc = DOMAINS[kind]
    lo_f = max(lo, -1e300)
    hi_f = min(hi, 1e300)
    return st.floats(min_value=lo_f, max_value=hi_f, exclude_min=not lc, exclude_max=not hc and hi_f == hi,
                     allow_nan=False, allow_infinity=False)


def arg(kind: str) -> st.SearchStrategy[tuple[Any, bool | None]]:
    """A value for a parameter of domain ``kind``, labelled with its validity."""
    if kind == "count":
        nums: st.SearchStrategy[Any] = st.one_of(
            st.integers(min_value=1, max_value=10**4),
            st.sampled_from([0, -1, 1, 2, 10**6, 10**9, 2**62, 10**400, 1.0, 2.5, 3.0, math.inf, -math.inf,
                             np.int64(3), np.float64(2.0)]),
        )
    else:
        nums = st.one_of(_valid_float(kind), st.sampled_from(EDGES),
                         st.floats(allow_nan=False, allow_infinity=True),
                         st.sampled_from([np.float32(0.5), np.int64(2), np.float64(1e-3), 10**400, np.array(0.25)]))
    labelled = nums.map(lambda x: (x, in_domain(kind, x)))
    # junk one time in four: a call with several parameters still reaches its valid paths often
    return st.one_of(labelled, labelled, labelled, st.sampled_from(JUNK).map(lambda x: (x, False)))


def valid(kind: str) -> st.SearchStrategy[Any]:
    """Only values inside the domain (including its edges)."""
    if kind == "count":
        return st.integers(min_value=1, max_value=1000)
    return st.one_of(_valid_float(kind), st.sampled_from([x for x in EDGES if in_domain(kind, x)]))


def orders_arg(kl: bool = False) -> st.SearchStrategy[tuple[Any, bool | None]]:
    """Orders α for ``.rdp``: scalars, arrays (1-D, 2-D), empty arrays, NaN inside.

    ``kl``: the domain includes α = 1 (curves defined at the KL limit, e.g. ``pure_dp_rdp``).
    """
    good = st.one_of(st.floats(min_value=1.0, max_value=1e6, exclude_min=True), st.just(math.inf),
                     st.sampled_from([1 + 1e-12, 1.5, 2.0, 32.0, 1e4, 1e15]))
    arrays = st.lists(good, min_size=1, max_size=6).map(np.array)
    return st.one_of(
        arg("order_kl" if kl else "order"),
        arrays.map(lambda a: (a, True)),
        arrays.map(lambda a: (a.reshape(1, -1), True)),
        st.lists(good, min_size=1, max_size=4).map(lambda v: (v, True)),  # a plain list is array-like
        st.sampled_from([np.array([]), np.array([2.0, math.nan]), np.array([0.5, 2.0]), np.array(["a"]),
                         np.array([True, False])]).map(lambda a: (a, False)),
        # α = 1 is the KL limit: in the domain of some curves ([1, ∞]), not of RDP guarantees
        st.just((np.array([1.0, 2.0]), True if kl else None)),
    )
