"""The accountant: composition held as state, a budget enforced by a privacy filter, and a
durable ledger.

State is kept on a **fixed grid of Rényi orders** stored in the ledger header:
the sum of the spends' RDP values at every grid order ([Mir17] Prop. 1 — RDP adds at each
order, adaptively), together with the exact summaries that exist for sub-families of spends:
Σμ² when every spend is Gaussian (μ-GDP composes exactly, [DRS19]), (Σξ, Σρ) when every spend
has a zCDP bound ([BS16] Lemma 7), Σε(∞) when every spend is pure, and Σδ of approximate
spends (folded in as δ-approximate RDP, [BS16] Lemma 37). ``epsilon(delta)`` reports the smallest
ε over all of these routes.

The budget check is a **privacy filter** (Rogers, Roth, Ullman & Vadhan 2016): a stopping
rule that keeps the final guarantee valid even when each spend's mechanism *and its privacy
parameters* are chosen from earlier outputs (fully adaptive composition). Which filter is used
for each kind of budget, and why it is valid, is stated in :class:`Accountant` and in
``docs/accountant.md``.

Examples:
    >>> from renyi.definitions import ZCDP, GDP
    >>> acct = Accountant(budget=ZCDP(1.0))
    >>> _ = acct.spend(GDP(1.0), count=2, label="two Gaussian queries")
    >>> acct.remaining
    ZCDP(rho=0.0)
    >>> acct.can_spend(GDP(0.1))
    False
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from time import time as _time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from renyi.guarantees import conversions as conv
from renyi.guarantees import neighbouring as nbr
from renyi.core._validation import NONNEGATIVE, PROBABILITY_OPEN, UNIT_CLOSED_OPEN, check_int
from renyi._version import __version__
from renyi.accounting import routes as _routes
from renyi.guarantees import GDP, MCDP, RDP, ZCDP, ApproxDP, ApproxRDP, ApproxZCDP, Conversion, Guarantee, PureDP
from renyi.guarantees.base import Item, items_of
from renyi.core.errors import BudgetExceededError, ConversionError, DomainError, LedgerError, NeighbouringError
from renyi.budget import plan as _plan
from renyi.budget.ledger import (
    LEDGER_FORMAT,
    SCHEMA_VERSION,
    Ledger,
    MemoryLedger,
    SpendRecord,
    SQLiteLedger,
    decode_floats,
    encode_floats,
    guarantee_from_json,
    guarantee_to_json,
)
from renyi.budget.ledger import _rdp_text

__all__ = [
    "Accountant",
    "Spend",
    "AccountantReport",
    "default_orders",
    "DEFAULT_FILTER_ORDERS",
    "replay",
    "BudgetCheck",
    "check_budget",
]

#: Orders used by the (ε, δ) filter by default: α = 1 + 2^k, k = −4, −3.5, …, 16 (41 orders).
#: A ratio of √2 between consecutive α − 1 costs < 1.5 % of ε against the best real order for
#: zCDP-like curves, and the union bound over 41 orders costs log 41 ≈ 3.7 nats of log(1/δ).
DEFAULT_FILTER_ORDERS: tuple[float, ...] = tuple(float(1.0 + 2.0**k) for k in np.arange(-4.0, 16.25, 0.5))


def default_orders() -> np.ndarray:
    """The default fixed grid of orders (sorted, in (1, 1e6]).

    The union of dp_accounting's default orders (1.1, 1.2, …, 10.9, 11, …, 63, 128, 256, 512,
    1024), 64 geometrically spaced orders 1 + 10^x for x ∈ [−3, 6], and
    :data:`DEFAULT_FILTER_ORDERS`; wide enough for tiny ρ (α* ≈ 2000 at ρ = 10⁻⁶).
    """
    parts = [
        1.0 + np.arange(1, 100) / 10.0,
        np.arange(11.0, 64.0),
        np.array([128.0, 256.0, 512.0, 1024.0]),
        1.0 + np.geomspace(1e-3, 1e6, 64),
        np.asarray(DEFAULT_FILTER_ORDERS),
    ]
    return np.unique(np.concatenate(parts))


# --------------------------------------------------------------------------------------
# Conservative arithmetic: every stored total is ≥ the exact sum of the recorded values.
# The rounding error of each + and × is computed exactly (Knuth's TwoSum, Dekker's
# TwoProduct); the result is nudged up one ulp only when it was rounded down, so exact sums
# (0.5 + 0.5 against a budget of 1.0) stay exact and a budget can be met with equality.
# --------------------------------------------------------------------------------------
_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp splitting for doubles)


def _two_sum_err(a: Any, b: Any, s: Any) -> Any:
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def _split(x: Any) -> tuple[Any, Any]:
    c = _SPLIT * x
    hi = c - (c - x)
    return hi, x - hi


def _two_prod_err(a: Any, b: Any, p: Any) -> Any:
    ah, al = _split(a)
    bh, bl = _split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _add_up(a: float, b: float) -> float:
    s = a + b
    if b == 0.0 or not math.isfinite(s):
        return s
    return math.nextafter(s, math.inf) if _two_sum_err(a, b, s) > 0.0 else s


def _mul_up(x: float, y: float) -> float:
    p = x * y
    if p == 0.0 or not math.isfinite(p) or abs(p) > 1e300:
        return p if abs(p) <= 1e300 or not math.isfinite(p) else math.nextafter(p, math.inf)
    return math.nextafter(p, math.inf) if _two_prod_err(x, y, p) > 0.0 else p


def _mul_down(x: float, y: float) -> float:
    p = x * y
    if p == 0.0 or not math.isfinite(p) or abs(p) > 1e300:
        return p
    return math.nextafter(p, -math.inf) if _two_prod_err(x, y, p) < 0.0 else p


def _sqrt_up(x: float) -> float:
    r = math.sqrt(x)
    if not math.isfinite(r) or r == 0.0:
        return r
    p = r * r
    return math.nextafter(r, math.inf) if p < x or (p == x and _two_prod_err(r, r, p) < 0.0) else r


def _up_mul(k: int, v: float) -> float:
    return v if k == 1 else _mul_up(float(k), v)


def _up_add(a: float, b: float) -> float:
    return _add_up(a, b)


def _up_add_arr(a: np.ndarray, k: int, v: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        if k == 1:
            kv = v
        else:
            kf = float(k)
            kv = kf * v
            err = _two_prod_err(kf, v, kv)
            np.nextafter(kv, np.inf, out=kv, where=err > 0.0)
        s = a + kv
        err = _two_sum_err(a, kv, s)
        np.nextafter(s, np.inf, out=s, where=err > 0.0)
    result: np.ndarray = s
    return result


@dataclass(frozen=True, slots=True)
class _Totals:
    """The composition of the recorded spends (rows 1..last_id), summed in id order."""

    last_id: int
    spends: int
    count: int
    rdp: np.ndarray
    eps_inf: float
    xi: float | None  # None as soon as one spend has no zCDP bound
    rho: float | None
    mu2: float | None  # None as soon as one spend is not μ-GDP
    delta: float  # Σ count·δ  (≥ 1 − Π(1 − δ)^count, the exact combination)
    all_pure: bool
    has_curve: bool

    @classmethod
    def empty(cls, n: int) -> _Totals:
        z = np.zeros(n)
        z.setflags(write=False)
        return cls(0, 0, 0, z, 0.0, 0.0, 0.0, 0.0, 0.0, True, False)

    def plus(self, u: Any, count: int, new_id: int, rows: int = 1) -> _Totals:
        """These totals plus ``count`` units of ``u`` (a :class:`_Unit` or a :class:`SpendRecord`),
        recorded in ``rows`` records."""
        rdp = _up_add_arr(self.rdp, count, u.rdp)
        rdp.setflags(write=False)
        xi = rho = mu2 = None
        if self.xi is not None and u.xi is not None:
            xi = _up_add(self.xi, _up_mul(count, u.xi))
            rho = _up_add(self.rho, _up_mul(count, u.rho))  # type: ignore[arg-type]
        if self.mu2 is not None and u.mu is not None:
            mu2 = _up_add(self.mu2, _up_mul(count, _mul_up(u.mu, u.mu)))
        gtype = u.guarantee.get("type")
        pure = gtype == "PureDP" or (gtype == "ApproxDP" and u.delta == 0.0)
        curve = gtype in ("RDP", "ApproxRDP")
        return _Totals(
            new_id, self.spends + rows, self.count + count, rdp,
            _up_add(self.eps_inf, _up_mul(count, u.eps_inf)), xi, rho, mu2,
            _up_add(self.delta, _up_mul(count, u.delta)),
            self.all_pure and pure, self.has_curve or curve,
        )


def _append(txn: Any, rec: SpendRecord) -> int:
    """Append ``rec`` in the open transaction; the ledger must give it the id it was built with
    (the record is built once, with the id it will get), else nothing is recorded."""
    new_id: int = txn.append(rec)
    if new_id != rec.id:
        raise LedgerError(f"ledger assigned id {new_id}, expected {rec.id}")
    return new_id


def _same_unit(a: Any, b: Any) -> bool:
    """Whether two units (a :class:`_Unit` or a :class:`SpendRecord`) add the same values to the
    totals (everything :meth:`_Totals.plus` reads)."""
    if a is b:
        return True
    return (a.eps_inf == b.eps_inf and a.xi == b.xi and a.rho == b.rho and a.mu == b.mu and a.delta == b.delta
            and a.guarantee.get("type") == b.guarantee.get("type")
            and (a.rdp is b.rdp or bool(np.array_equal(a.rdp, b.rdp))))


#: A run of equal units is folded while its count stays exact as a double.
_FOLD_MAX = 1 << 53
_NEW = object.__new__


class _Fold:
    """Totals kept as ``base`` plus one open *run*: the latest consecutive records of equal units,
    added as ``count`` units at once when the totals are read.

    The totals of a sequence of records are therefore defined by its runs (maximal stretches of
    equal units, each added once as count × unit with the conservative arithmetic above), the
    same whether a live accountant or a replay of the ledger computes them, so both agree to
    the bit; and a training loop's step (one more unit of the open run) costs an integer
    addition instead of arithmetic on the whole grid. Every total stays ≥ the exact sum.
    """

    __slots__ = ("base", "unit", "count", "rows", "last_id", "_t", "_kmax")

    def __init__(self, t: _Totals) -> None:
        self.base = t
        self.unit: Any = None
        self.count = 0
        self.rows = 0
        self.last_id = t.last_id
        self._t: _Totals | None = t
        self._kmax: int | None = None  # the largest run count the filter admits (cached)

    def copy(self) -> _Fold:
        f = _Fold(self.base)
        f.unit, f.count, f.rows, f.last_id, f._t, f._kmax = (self.unit, self.count, self.rows, self.last_id,
                                                             self._t, self._kmax)
        return f

    @property
    def totals(self) -> _Totals:
        t = self._t
        if t is None:
            t = self.base.plus(self.unit, self.count, self.last_id, self.rows)
            self._t = t
        return t

    def _extends(self, u: Any, count: int) -> bool:
        return self.unit is not None and self.count + count <= _FOLD_MAX and _same_unit(self.unit, u)

    def add(self, u: Any, count: int, new_id: int) -> None:
        """Add a record of ``count`` units of ``u`` with id ``new_id``."""
        if self._extends(u, count):
            self.count += count
            self.rows += 1
        else:
            self.base = self.totals
            self.unit, self.count, self.rows, self._kmax = u, count, 1, None
        self.last_id = new_id
        self._t = None

    def trial(self, u: Any, count: int) -> _Totals:
        """The totals with one more record of ``count`` units of ``u`` (nothing is changed)."""
        if self._extends(u, count):
            return self.base.plus(self.unit, self.count + count, self.last_id + 1, self.rows + 1)
        return self.totals.plus(u, count, self.last_id + 1)

    def admits(self, f: _Filter, u: Any, count: int) -> bool:
        """Whether ``f`` admits the totals with one more record of ``count`` units of ``u``."""
        if f.kind == "none":
            return True
        if not self._extends(u, count):
            return f.admits(self.totals.plus(u, count, self.last_id + 1))
        # one more step of the open run: the filter's verdict is monotone in the run's count
        # (totals only grow with it), so the largest admitted count is found once per run
        k = self._kmax
        if k is None:
            k = self._kmax = self._largest(f)
        want = self.count + count
        if want <= k:
            return True
        if k < _FOLD_MAX:
            return False
        return f.admits(self.base.plus(self.unit, want, self.last_id + 1, self.rows + 1))

    def _largest(self, f: _Filter) -> int:
        """The largest run count ≤ _FOLD_MAX that ``f`` admits on this base (count − 1 if none).

        Every candidate is decided by ``f.admits`` on the exact totals; the filter's floating
        point guess (:meth:`_Filter.guess`) only says where to start looking, so a wrong guess
        costs evaluations, never a wrong answer. From the guess: gallop up while admitted, or
        down while refused, then bisect (lo admitted, hi refused)."""
        def ok(k: int) -> bool:
            return f.admits(self.base.plus(self.unit, k, self.last_id + 1, self.rows + 1))

        low = self.count  # may itself be refused (e.g. others' spends over the budget)
        est = f.guess(self.base, self.unit)
        g = low + 1
        if est is not None and est == est:
            g = int(min(max(est, float(low)), float(_FOLD_MAX)))
        if ok(g):
            lo, step = g, 1
            while True:
                if lo >= _FOLD_MAX:
                    return _FOLD_MAX
                hi = min(lo + step, _FOLD_MAX)
                if not ok(hi):
                    break
                lo, step = hi, step * 2
        else:
            hi, step = g, 1
            while True:
                lo = max(hi - step, low)
                if lo == hi:  # g == low, refused
                    return low - 1
                if ok(lo):
                    break
                if lo == low:
                    return low - 1
                hi, step = lo, step * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok(mid):
                lo = mid
            else:
                hi = mid
        return lo


@dataclass(frozen=True, slots=True)
class _Unit:
    """What one run of a guarantee costs, on the grid (same fields as SpendRecord)."""

    guarantee: dict[str, Any]
    rdp: np.ndarray
    eps_inf: float
    xi: float | None
    rho: float | None
    mu: float | None
    delta: float


def _clean(values: Any, n: int) -> np.ndarray:
    a = np.broadcast_to(np.asarray(values, dtype=np.float64), (n,)).copy()
    a[np.isnan(a)] = math.inf  # no bound where a curve cannot be evaluated
    a = np.maximum(a, 0.0)
    a.setflags(write=False)
    return a


def _zcdp_of(g: Guarantee) -> tuple[float, float] | None:
    try:
        z = g.to_zcdp()
    except (ConversionError, TypeError, ValueError):
        return None
    return float(z.xi), float(z.rho)


def _unit_of(g: Guarantee, grid: np.ndarray) -> _Unit:
    n = grid.size
    gj = guarantee_to_json(g)
    if isinstance(g, GDP):
        return _Unit(gj, _clean(g.rdp(grid), n), 0.0 if g.mu == 0.0 else math.inf, 0.0, g.rho, g.mu, 0.0)
    if isinstance(g, (ZCDP, ApproxZCDP)):
        d = float(g.delta) if isinstance(g, ApproxZCDP) else 0.0
        rdp = conv.zcdp_to_rdp(g.rho, g.xi, grid)
        return _Unit(gj, _clean(rdp, n), g.xi if g.rho == 0.0 else math.inf, g.xi, g.rho, None, d)
    if isinstance(g, (PureDP, ApproxDP)):
        eps = float(g.epsilon)
        d = float(g.delta) if isinstance(g, ApproxDP) else 0.0
        # (ε, δ)-DP is δ-approximately RDP with the curve F_ε ([BS16] Lemma 37).
        return _Unit(gj, _clean(conv.pure_dp_rdp(eps, grid), n), eps, 0.0, conv.pure_dp_to_zcdp(eps), None, d)
    if isinstance(g, MCDP):
        xi, rho = _zcdp_of(g) or (None, None)
        return _Unit(gj, _clean(g.rdp(grid), n), math.inf, xi, rho, None, 0.0)
    if isinstance(g, ApproxRDP):
        inner = _unit_of(g.curve, grid)
        return _Unit(gj, inner.rdp, inner.eps_inf, inner.xi, inner.rho, None, float(g.delta))
    if isinstance(g, RDP):
        zc = g.zcdp
        if zc is None and math.isfinite(g.eps_inf):
            try:
                zc = conv.rdp_to_zcdp(g)
            except ConversionError:
                zc = None
        xi, rho = (None, None) if zc is None else (float(zc[0]), float(zc[1]))
        return _Unit(gj, _clean(g.rdp(grid), n), float(g.rdp(math.inf)), xi, rho, None, 0.0)
    # Any other guarantee type: its own RDP values and zCDP conversion, if it has one.
    zc2 = _zcdp_of(g)
    xi, rho = (None, None) if zc2 is None else zc2
    return _Unit(gj, _clean(g.rdp(grid), n), float(g.rdp(math.inf)), xi, rho, None, 0.0)


def _item_key(item: Any) -> Any:
    """A dictionary key for a spent item that is a value (a frozen dataclass: a mechanism or a
    guarantee, whose curve callables compare by value), else None.

    Equal values have equal guarantees, so the accountant reuses the per-unit curve it
    evaluated for an equal item: a repeated per-step spend costs a dictionary lookup instead
    of a curve evaluation on the grid.
    """
    params = getattr(type(item), "__dataclass_params__", None)
    if params is None or not params.frozen:
        return None
    key = (type(item), item)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _restate(item: Any, relation: str) -> Any:
    """``item`` stated under the accountant's ``relation`` (see :mod:`renyi._neighbouring`)."""
    try:
        return nbr.to_relation(item, relation)
    except NeighbouringError as exc:
        hint = (" (create the accountant with neighbouring='replace_one', or a budget stated under "
                "replace-one, to convert add/remove spends instead)" if relation == nbr.ADD_REMOVE else "")
        raise NeighbouringError(f"this accountant is {nbr.words(relation)}: {exc}{hint}",
                                name="neighbouring", value=exc.value) from None


def _resolve(item: Any) -> tuple[Guarantee, str | None]:
    if isinstance(item, Guarantee):
        return item, None
    g = getattr(item, "guarantee", None)
    if isinstance(g, Guarantee):
        return g, repr(item)
    raise TypeError(f"can only spend a guarantee or a mechanism; got {type(item).__name__}")


# --------------------------------------------------------------------------------------
# Filters
# --------------------------------------------------------------------------------------
class _Filter:
    """A privacy filter: ``admits(totals)`` decides whether the run may continue."""

    kind = "none"

    def check_unit(self, u: Any) -> None:
        """Raise ConversionError when a spend of this kind has no valid route to the budget."""

    def admits(self, t: _Totals) -> bool:
        return True

    def guess(self, t: _Totals, u: Any) -> float | None:
        """About the largest count of ``u`` these totals can add and stay admitted (floating
        point, a starting point for :meth:`_Fold._largest`, which decides exactly), or None."""
        return None

    def remaining(self, t: _Totals) -> Guarantee | None:
        return None

    def describe(self) -> str:
        return "no budget: every spend is recorded"


def _room(slack: float, per: float) -> float:
    """How many units of ``per`` fit in ``slack`` (floating point; ∞ when a unit costs nothing)."""
    if per > 0.0:
        return slack / per
    return math.inf if slack >= 0.0 else -math.inf


def _rooms(slack: np.ndarray, per: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.where(per > 0.0, slack / np.where(per > 0.0, per, 1.0), np.where(slack >= 0.0, math.inf, -math.inf))
    return np.where(np.isnan(out), -math.inf, out)


def _wrong_kind(u: Any, budget: str, why: str) -> ConversionError:
    return ConversionError(f"cannot spend {u.guarantee.get('type')} against a {budget} budget: {why}")


class _PureFilter(_Filter):
    """Σ count·ε_i ≤ ε: basic composition is a valid filter for pure DP ([RRUV16])."""

    kind = "pure"

    def __init__(self, eps: float) -> None:
        self.eps = eps

    def check_unit(self, u: Any) -> None:
        if u.delta > 0.0 or not math.isfinite(u.eps_inf):
            raise _wrong_kind(u, "pure ε-DP", "it has no pure-DP bound (ε(∞) = ∞ or δ > 0)")

    def admits(self, t: _Totals) -> bool:
        return t.eps_inf <= self.eps

    def guess(self, t: _Totals, u: Any) -> float | None:
        return _room(self.eps - t.eps_inf, u.eps_inf)

    def remaining(self, t: _Totals) -> Guarantee:
        return PureDP(max(0.0, self.eps - t.eps_inf))

    def describe(self) -> str:
        return f"pure-DP filter: Σε ≤ {self.eps!r}"


class _ZCDPFilter(_Filter):
    """Σρ ≤ ρ, Σξ ≤ ξ (and Σδ ≤ δ for approximate zCDP).

    Valid under fully adaptive composition: the RDP filter of [FZ21] Thm 3.1 at every order α
    with budget ξ + ρα at once; for δ > 0 the approximate-zCDP filter of [WRRW23].
    """

    kind = "zcdp"

    def __init__(self, rho: float, xi: float, delta: float) -> None:
        self.rho, self.xi, self.delta = rho, xi, delta

    def check_unit(self, u: Any) -> None:
        name = "zCDP" if self.delta == 0.0 else "approximate zCDP"
        if u.rho is None:
            raise _wrong_kind(u, name, "it has no zCDP bound")
        if u.delta > 0.0 and self.delta == 0.0:
            raise _wrong_kind(u, name, "it is approximate (δ > 0) and the budget has no δ")

    def admits(self, t: _Totals) -> bool:
        return (t.rho is not None and t.rho <= self.rho and t.xi <= self.xi  # type: ignore[operator]
                and t.delta <= self.delta)

    def guess(self, t: _Totals, u: Any) -> float | None:
        if t.rho is None or t.xi is None or u.rho is None or u.xi is None:
            return None
        return min(_room(self.rho - t.rho, u.rho), _room(self.xi - t.xi, u.xi), _room(self.delta - t.delta, u.delta))

    def remaining(self, t: _Totals) -> Guarantee:
        rho = max(0.0, self.rho - (t.rho or 0.0))
        xi = max(0.0, self.xi - (t.xi or 0.0))
        if self.delta == 0.0:
            return ZCDP(rho, xi)
        return ApproxZCDP(rho, xi, max(0.0, self.delta - t.delta))

    def describe(self) -> str:
        extra = "" if self.delta == 0.0 else f", Σδ ≤ {self.delta!r}"
        return f"zCDP filter: Σρ ≤ {self.rho!r}, Σξ ≤ {self.xi!r}{extra} (FZ21 Thm 3.1 at every order)"


class _GDPFilter(_Filter):
    """Σμ² ≤ μ²: fully adaptive composition of GDP ([ST22], Smith & Thakurta 2022)."""

    kind = "gdp"

    def __init__(self, mu: float) -> None:
        self.mu = mu
        self.mu2 = _mul_down(mu, mu)

    def check_unit(self, u: Any) -> None:
        if u.mu is None:
            raise _wrong_kind(u, "μ-GDP", "only Gaussian (μ-GDP) spends compose exactly in GDP")

    def admits(self, t: _Totals) -> bool:
        return t.mu2 is not None and t.mu2 <= self.mu2

    def guess(self, t: _Totals, u: Any) -> float | None:
        if t.mu2 is None or u.mu is None:
            return None
        return _room(self.mu2 - t.mu2, u.mu * u.mu)

    def remaining(self, t: _Totals) -> Guarantee:
        return GDP(math.sqrt(max(0.0, self.mu2 - (t.mu2 or 0.0))))

    def describe(self) -> str:
        return f"GDP filter: Σμ² ≤ {self.mu!r}² (Smith & Thakurta 2022)"


class _RDPFilter(_Filter):
    """Σ ε_i(α) ≤ B(α) at **every** grid order ([FZ21] Thm 3.1 applied at each order)."""

    kind = "rdp"

    def __init__(self, grid: np.ndarray, bound: np.ndarray) -> None:
        self.grid = grid
        self.bound = bound

    def check_unit(self, u: Any) -> None:
        if u.delta > 0.0:
            raise _wrong_kind(u, "RDP", "it is approximate (δ > 0), and δ-approximate RDP does not imply RDP")

    def admits(self, t: _Totals) -> bool:
        return bool(np.all(t.rdp <= self.bound))

    def guess(self, t: _Totals, u: Any) -> float | None:
        return float(np.min(_rooms(self.bound - t.rdp, u.rdp), initial=math.inf))

    def remaining(self, t: _Totals) -> Guarantee:
        finite = np.isfinite(self.bound)
        if not np.any(finite):
            return RDP(lambda a: np.full(np.shape(a), math.inf), label="unbounded")
        slack = np.maximum(self.bound[finite] - t.rdp[finite], 0.0)
        slack = np.where(np.isnan(slack), 0.0, slack)
        return RDP.from_points(self.grid[finite], slack, label="remaining RDP budget")

    def describe(self) -> str:
        return f"per-order RDP filter on {int(np.isfinite(self.bound).sum())} grid orders (FZ21 Thm 3.1 at each)"


class _ApproxDPFilter(_Filter):
    """The (ε, δ) filter: continue while **some** order α of a fixed set Λ has
    Σ ε_i(α) ≤ B(α) = ε − log(1 − 1/α) + (log(δ_R/|Λ|) + log α)/(α − 1), and Σδ_i ≤ δ_A.

    Validity (docs/accountant.md, "The (ε, δ) filter"): for each α the process
    exp((α−1)(L_t − Σ_{s≤t} ε_s(α))) is a nonnegative supermartingale ([FZ21] §3), so at the
    final time T, E[e^{(α−1)L_T}; α alive at T] ≤ e^{(α−1)B(α)}; the hockey-stick divergence
    E[(1 − e^{ε−L_T})₊] is bounded order by order as in [CKS20] Prop. 12, and since some α is
    alive at T, a union bound over Λ gives δ_R. Approximate spends add their δ's ([WRRW23]),
    reserved up front as δ_A, so (ε, δ_A + δ_R)-DP holds.
    """

    kind = "approx_dp"

    def __init__(self, eps: float, delta: float, approx_delta: float, grid: np.ndarray,
                 filter_orders: np.ndarray) -> None:
        self.eps, self.delta, self.approx_delta = eps, delta, approx_delta
        self.delta_r = delta - approx_delta
        self.idx = np.flatnonzero(np.isin(grid, filter_orders))
        a = grid[self.idx]
        self.orders = a
        m = a.size
        log_share = math.log(self.delta_r) - math.log(m)
        # c(α) is the CKS20 Prop. 12 offset: ε = ε_R + c(α) at δ = δ_R/|Λ|.
        c = np.log1p(-1.0 / a) - (log_share + np.log(a)) / (a - 1.0)
        self.c = c
        bound = eps - c
        self.bound = bound - np.abs(bound) * 2.0**-48  # round-off never loosens the filter

    def check_unit(self, u: Any) -> None:
        if u.delta > 0.0 and self.approx_delta == 0.0:
            raise _wrong_kind(
                u, "(ε, δ)",
                "approximate spends (δ > 0) need part of the budget's δ reserved for them: "
                "Accountant(budget, approx_delta=...)",
            )

    def admits(self, t: _Totals) -> bool:
        if t.delta > self.approx_delta:
            return False
        return bool(np.any(t.rdp[self.idx] <= self.bound))

    def guess(self, t: _Totals, u: Any) -> float | None:
        k = float(np.max(_rooms(self.bound - t.rdp[self.idx], u.rdp[self.idx]), initial=-math.inf))
        return min(k, _room(self.approx_delta - t.delta, u.delta))

    def spent_epsilon(self, t: _Totals) -> float:
        """The smallest ε' whose filter (same δ split and orders) admits these totals."""
        vals = t.rdp[self.idx] + self.c
        best = float(np.min(vals)) if vals.size else math.inf
        return max(0.0, conv.round_up(best)) if math.isfinite(best) else math.inf

    def remaining(self, t: _Totals) -> Guarantee:
        left = self.eps - self.spent_epsilon(t)
        return ApproxDP(max(0.0, left) if math.isfinite(left) else 0.0, self.delta)

    def describe(self) -> str:
        return (
            f"(ε, δ) filter: ε = {self.eps!r}, δ = {self.delta!r} = δ_R {self.delta_r!r} (RDP part, "
            f"union bound over {self.orders.size} orders, CKS20 Prop. 12 per order) + "
            f"δ_A {self.approx_delta!r} (approximate spends)"
        )


def _sub_down(a: float, b: float) -> float:
    """a − b rounded down (never above the exact difference)."""
    s = a - b
    if not math.isfinite(s):
        return s
    return math.nextafter(s, -math.inf) if _two_sum_err(a, -b, s) < 0.0 else s


class _PlanFilter(_Filter):
    """A declared plan billed at (ε_P, δ_P), and the (ε, δ) filter on what it left for the
    spends off the plan: ε_O = ε − ε_P, δ_O = δ − δ_P (both rounded down), of which δ_A is kept
    for approximate spends. Valid by concurrent composition (:mod:`renyi.budget.plan`)."""

    kind = "plan"

    def __init__(self, eps: float, delta: float, approx_delta: float, spec: _plan.PlanSpec, grid: np.ndarray,
                 filter_orders: np.ndarray) -> None:
        self.eps, self.delta, self.approx_delta, self.spec = eps, delta, approx_delta, spec
        self.eps_o = max(0.0, _sub_down(eps, spec.epsilon))
        self.delta_o = max(0.0, _sub_down(delta, spec.delta))
        self.delta_r = _sub_down(self.delta_o, approx_delta)
        self.inner: _ApproxDPFilter | None = None
        if self.delta_r > 0.0:
            self.inner = _ApproxDPFilter(self.eps_o, self.delta_o, approx_delta, grid, filter_orders)

    def check_unit(self, u: Any) -> None:
        if self.inner is None:
            raise ConversionError(
                f"this spend is off the declared plan, and the plan holds all of the budget's δ = {self.delta!r} "
                f"(plan_delta = {self.spec.delta!r}, approx_delta = {self.approx_delta!r}): nothing is left for the "
                "filter that bills spends off the plan; nothing was recorded. Declare the plan with "
                "plan_delta < δ − approx_delta to leave room for them")
        self.inner.check_unit(u)

    def admits(self, t: _Totals) -> bool:
        if self.inner is None:
            return t.spends == 0
        return self.inner.admits(t)

    def guess(self, t: _Totals, u: Any) -> float | None:
        return None if self.inner is None else self.inner.guess(t, u)

    def spent_epsilon(self, t: _Totals) -> float:
        """ε_P plus the smallest ε' whose off-plan filter admits these (off-plan) totals."""
        off = 0.0 if t.spends == 0 or self.inner is None else self.inner.spent_epsilon(t)
        return _add_up(self.spec.epsilon, off)

    def remaining(self, t: _Totals) -> Guarantee:
        if self.inner is None:
            return ApproxDP(0.0, 0.0)
        return self.inner.remaining(t)

    def describe(self) -> str:
        s = self.spec
        head = (f"declared plan billed at (ε_P, δ_P) = ({s.epsilon!r}, {s.delta!r}) [{s.method}]; spends off the "
                f"plan: ")
        if self.inner is None:
            return head + "refused (the plan holds all of δ)"
        return (head + f"(ε, δ) filter on what the plan left, ε_O = {self.eps_o!r}, δ_O = {self.delta_o!r} "
                f"({self.inner.describe()}); concurrent composition (Lyu22, VZ23)")


# --------------------------------------------------------------------------------------
# Public values
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Spend:
    """One entry of the history.

    Attributes:
        id: position in the ledger (1, 2, …).
        time: POSIX time at which the spend was recorded.
        label: the user's label, or None.
        count: how many runs were spent.
        guarantee: the guarantee of one run, as recorded (RDP curves come back as points on
            the grid, conservative between them).
        mechanism: ``repr`` of the mechanism, or None when a guarantee was spent.
        stored: the stored record (per-unit values on the grid); ``record`` is its JSON.
    """

    id: int
    time: float
    label: str | None
    count: int
    guarantee: Guarantee
    mechanism: str | None
    stored: SpendRecord = field(repr=False, compare=False)

    @property
    def record(self) -> dict[str, Any]:
        """The stored record as JSON (schema of docs/accountant.md)."""
        return self.stored.to_json()

    @property
    def plan_phase(self) -> int | None:
        """The index of the declared plan's phase this spend followed (free of further cost),
        or None for a spend off the plan (or without one)."""
        j = self.stored.guarantee.get("plan_phase")
        return j if isinstance(j, int) and not isinstance(j, bool) else None


class _StoredOfSpend:
    """``Spend.stored``: the slot holds a record, or for a spend made on the accountant's fast
    path (:meth:`Accountant.spend`, a repeated step) the :class:`_Hot` state of its run; the
    record with the spend's own id and time is then built the first time it is read (and kept).
    """

    __slots__ = ("slot",)

    def __init__(self, slot: Any) -> None:
        self.slot = slot

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self.slot
        r = self.slot.__get__(obj, cls)
        if r.__class__ is _Hot:
            f = r.first
            i, t = _SPEND_ID.__get__(obj, cls), _SPEND_TIME.__get__(obj, cls)
            hot = r
            r = f if (f.id == i and f.time == t) else SpendRecord(
                i, t, f.label, f.count, f.guarantee, f.mechanism, f.rdp, f.eps_inf, f.xi, f.rho, f.mu, f.delta)
            for name, value in (("label", None), ("count", 1), ("guarantee", hot.g), ("mechanism", hot.mech)):
                _SPEND_SLOT[name].__set__(obj, value)  # the fields read from the run so far, now kept
            self.slot.__set__(obj, r)
        return r

    def __set__(self, obj: Any, value: Any) -> None:
        self.slot.__set__(obj, value)

    def __delete__(self, obj: Any) -> None:
        self.slot.__delete__(obj)


class _FieldOfHotSpend:
    """A field of :class:`Spend` that a fast-path spend leaves unset: read from its run's
    :class:`_Hot` state (label None, count 1, the run's guarantee and mechanism)."""

    __slots__ = ("slot", "name")

    def __init__(self, slot: Any, name: str) -> None:
        self.slot, self.name = slot, name

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self.slot
        try:
            return self.slot.__get__(obj, cls)
        except AttributeError:
            hot = _SPEND_STORED.__get__(obj, cls)
            if hot.__class__ is not _Hot:
                raise
            return None if self.name == "label" else 1 if self.name == "count" else getattr(
                hot, "g" if self.name == "guarantee" else "mech")

    def __set__(self, obj: Any, value: Any) -> None:
        self.slot.__set__(obj, value)

    def __delete__(self, obj: Any) -> None:
        self.slot.__delete__(obj)


_SPEND_ID = Spend.__dict__["id"]
_SPEND_TIME = Spend.__dict__["time"]
_SPEND_STORED = Spend.__dict__["stored"]
_SPEND_SLOT = {n: Spend.__dict__[n] for n in ("label", "count", "guarantee", "mechanism")}
_SPEND_SET_ID, _SPEND_SET_TIME, _SPEND_SET_STORED = _SPEND_ID.__set__, _SPEND_TIME.__set__, _SPEND_STORED.__set__
setattr(Spend, "stored", _StoredOfSpend(_SPEND_STORED))
for _name in ("label", "count", "guarantee", "mechanism"):
    setattr(Spend, _name, _FieldOfHotSpend(Spend.__dict__[_name], _name))


class _Hot:
    """What a repeated step of one item needs on :meth:`Accountant.spend`'s fast path: valid
    while it is the accountant's ``_hot`` (every other change to the totals or the ledger drops
    it). ``kmax`` bounds the count of the totals' open run: the largest count the filter admits
    (computed by the exact filter on the exact totals, :meth:`_Fold._largest`), or, on a plan,
    the count at which its phase has no step left; ``c0`` is the open run's count up to which
    plan steps are folded into the accountant's plan cursor."""

    __slots__ = ("item", "ledger", "append", "kmax", "entry", "g", "mech", "first", "phase", "c0")

    def __init__(self, item: Any, ledger: MemoryLedger, run: Any, kmax: int, c0: int, entry: list[Any] | None,
                 g: Guarantee, mech: str | None, phase: int | None) -> None:
        self.item, self.ledger, self.append, self.kmax, self.entry = item, ledger, run.times.append, kmax, entry
        self.g, self.mech, self.first, self.phase, self.c0 = g, mech, run.first, phase, c0


@dataclass(frozen=True, slots=True)
class AccountantReport:
    """A summary of an accountant (``Accountant.report()``)."""

    budget: Guarantee | None
    filter: str
    spends: int
    count: int
    spent: Guarantee
    remaining: Guarantee | None
    delta: float | None
    epsilon: float | None
    method: str | None
    witness: float | None
    ledger: str
    grid_size: int
    #: the lower end of the PLD route's bracket when ``method`` is ``"pld"``, else None
    lower: float | None = None
    #: what ``epsilon`` rests on (see :mod:`renyi.routes`), e.g. that the sequence was fixed
    #: in advance; the budget itself is enforced by a filter valid under full adaptivity
    assumption: str | None = None
    #: the neighbouring relation the totals and the budget are stated under
    neighbouring: str = nbr.DEFAULT
    #: the declared plan and how far the run followed it (None without a plan)
    plan: _plan.PlanStatus | None = None

    def _repr_html_(self) -> str:
        """An HTML table of the summary (Jupyter shows it for a bare ``acc.report()``)."""
        from renyi.core.display import accountant_report_html

        return accountant_report_html(self)

    def __rich__(self) -> Any:
        """The summary as a rich table (``rich.print(acc.report())``)."""
        from renyi.core.display import accountant_report_rich

        return accountant_report_rich(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict (guarantees as ``repr``; ∞ as the string "inf")."""

        def num(x: float | None) -> float | str | None:
            if x is None:
                return None
            return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")

        return {
            "budget": None if self.budget is None else repr(self.budget),
            "filter": self.filter,
            "spends": self.spends,
            "count": self.count,
            "spent": repr(self.spent),
            "remaining": None if self.remaining is None else repr(self.remaining),
            "delta": self.delta,
            "epsilon": num(self.epsilon),
            "method": self.method,
            "witness": num(self.witness),
            "ledger": self.ledger,
            "grid_size": self.grid_size,
            "lower": num(self.lower),
            "assumption": self.assumption,
            "neighbouring": self.neighbouring,
            "plan": None if self.plan is None else self.plan.to_dict(),
        }


def _budget_json(budget: Guarantee, grid: np.ndarray) -> dict[str, Any]:
    gj = guarantee_to_json(budget, orders=grid if isinstance(budget, RDP) else None)
    gj.pop("label", None)
    return gj


def _comparable(obj: Any) -> Any:
    if isinstance(obj, dict):
        out = {k: _comparable(v) for k, v in obj.items() if k != "label"}
        if "type" in out:  # a guarantee stored before relations were recorded: the default
            out.setdefault("neighbouring", nbr.DEFAULT)
        return out
    return obj


# --------------------------------------------------------------------------------------
# The accountant
# --------------------------------------------------------------------------------------
class Accountant:
    """Composition held as state, with an optional budget enforced by a privacy filter and a
    durable ledger.

    Args:
        budget: ``None`` (record only), or one of
            * ``ApproxDP(ε, δ)`` with δ > 0 — the (ε, δ) filter: RDP on a fixed set of
              orders with a union bound (see ``docs/accountant.md``); ``approx_delta`` of δ is
              reserved for approximate spends;
            * ``PureDP(ε)`` or ``ApproxDP(ε, 0)`` — Σε ≤ ε (pure spends only);
            * ``ZCDP(rho, xi)`` / ``ApproxZCDP(rho, xi, delta)`` — Σρ ≤ ρ, Σξ ≤ ξ (, Σδ ≤ δ);
            * ``GDP(mu)`` — Σμ² ≤ μ² (Gaussian spends only);
            * an ``RDP`` curve — Σε_i(α) ≤ budget(α) at every grid order.
        ledger: ``None`` (in memory), a path (a SQLite file, created if missing), or a
            :class:`~renyi.ledger.Ledger`. An existing ledger brings its own budget, grid and
            filter settings; passing a different budget raises :class:`LedgerError`.
        filter_orders: orders Λ of the (ε, δ) filter (default :data:`DEFAULT_FILTER_ORDERS`);
            fewer orders cost less union bound, a single order is the filter of [FZ21] Thm 3.1.
        approx_delta: δ_A ∈ [0, δ), the part of an (ε, δ) budget's δ reserved for approximate
            spends (``ApproxDP`` with δ > 0, PTR, …). Default 0: such spends are refused.
        neighbouring: the neighbouring relation of the totals, ``"add_remove"`` or
            ``"replace_one"``. With a budget it is the budget's own (``budget.neighbouring``;
            giving a different one is an error); without, it defaults to add/remove. An
            existing ledger brings its own. Spends stated under add/remove are converted to a
            replace-one accountant (a noise mechanism with its sensitivity doubled, else group
            privacy of two; :mod:`renyi._neighbouring`); replace-one spends to an add/remove
            accountant are refused with :class:`~renyi.errors.NeighbouringError`, since a
            replace-one guarantee does not imply an add/remove one.
        plan: a sequence of mechanisms declared before any spend (a mechanism, a
            ``(mechanism, count)`` pair, a composition, or a list of these, in order; e.g.
            :func:`renyi.dpsgd.plan`). Needs an ``ApproxDP(ε, δ)`` budget and a new ledger. The
            plan is billed at creation at its certified upper bound ε_P at ``plan_delta`` over the
            routes of :mod:`renyi.routes` (PLD for DP-SGD), and refused, with nothing recorded,
            when ε_P > ε. Spends that follow the plan in order cost nothing more; spends off the
            plan go through the (ε, δ) filter on what it left (ε − ε_P, δ − ``plan_delta``). The
            rule and its proof: :mod:`renyi.budget.plan`. A ledger with a plan restates it when
            reopened (``plan=None``); passing a different plan raises :class:`LedgerError`.
        plan_delta: δ_P ∈ (0, δ − approx_delta], the δ the plan is billed at. Default: all of
            δ − approx_delta, so that spends off the plan are refused; a smaller δ_P leaves
            δ − approx_delta − δ_P for them.
        plan_reserve: ``None`` (default: every spend is its own row), or an integer R ≥ 1: on a
            ledger with a plan, steps that follow the plan (one run, no label) are recorded
            *ahead*, in blocks: the first step of a block writes one durable row for the next b
            steps of its phase (b = 1, 2, 4, … up to R, never more than the phase has left), and
            the following b − 1 steps write nothing and return that row's :class:`Spend`. The
            row is committed before any of its steps runs, so a crash (or a stop) mid-block can
            only leave up to b − 1 steps recorded that never ran — lost progress, never a step
            beyond the plan. See ``docs/plans.md``, "Steps recorded ahead".

    Raises:
        TypeError: for a budget of an unsupported kind.
        DomainError: for bad ``approx_delta`` / ``filter_orders`` / ``neighbouring``, or a
            ``neighbouring`` that differs from the budget's.
        LedgerError: for a corrupted, foreign or newer-version ledger, or a budget that
            differs from the one stored in the ledger.
        BudgetExceededError: the plan does not fit in the budget (nothing was recorded).
    """

    def __init__(self, budget: Guarantee | None = None, ledger: Any = None, *,
                 filter_orders: Iterable[float] | None = None, approx_delta: float | None = None,
                 neighbouring: str | None = None, plan: Any = None, plan_delta: float | None = None,
                 plan_reserve: int | None = None) -> None:
        if budget is not None and not isinstance(budget, Guarantee):
            raise TypeError(f"budget must be a guarantee or None; got {type(budget).__name__}")
        if ledger is not None and not isinstance(ledger, (Ledger, str, os.PathLike)):
            raise TypeError(f"ledger must be None, a path or a Ledger; got {type(ledger).__name__}")
        self._lock = threading.RLock()

        fo = None
        if filter_orders is not None:
            fo = np.unique(np.asarray(list(filter_orders), dtype=np.float64))
            if fo.size == 0 or np.any(~np.isfinite(fo)) or np.any(fo <= 1.0):
                raise DomainError(f"filter_orders must be finite orders in (1, inf), at least one; got {fo.tolist()!r}",
                                  name="filter_orders", value=fo)
        if approx_delta is not None:
            approx_delta = UNIT_CLOSED_OPEN.check("approx_delta", approx_delta)
        if neighbouring is not None:
            neighbouring = nbr.check_neighbouring(neighbouring)
        relation = nbr.relation_of(budget) if budget is not None else (neighbouring or nbr.DEFAULT)
        if budget is not None and neighbouring is not None and neighbouring != relation:
            raise DomainError(
                f"neighbouring must be the budget's relation, {relation!r} (the budget {budget!r} is stated "
                f"under {nbr.words(relation)} neighbours); got {neighbouring!r}: state the budget under "
                f"{neighbouring!r}, e.g. {type(budget).__name__}(..., neighbouring={neighbouring!r})",
                name="neighbouring", value=neighbouring)

        grid = default_orders()
        if fo is not None:
            grid = np.unique(np.concatenate([grid, fo]))
        proposal: dict[str, Any] = {
            "format": LEDGER_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "renyi_version": __version__,
            "created": time.time(),
            "grid": encode_floats(grid),
            "filter_orders": encode_floats(fo if fo is not None else np.asarray(DEFAULT_FILTER_ORDERS)),
            "approx_delta": approx_delta or 0.0,
            "budget": None if budget is None else _budget_json(budget, grid),
            "neighbouring": relation,
        }
        if budget is not None:
            _make_filter(proposal, decode_floats(proposal["grid"]))  # validate before touching a file
        declared = None
        self._cache: dict[Any, _Unit] = {}
        if plan is not None:
            declared = self._declare(plan, plan_delta, budget, grid, relation, approx_delta or 0.0)
        elif plan_delta is not None:
            raise DomainError(f"plan_delta needs a plan; got plan_delta={plan_delta!r} and no plan",
                              name="plan_delta", value=plan_delta)
        if plan_reserve is not None:
            plan_reserve = check_int("plan_reserve", plan_reserve)
            if plan is None and (ledger is None or getattr(ledger, "header", 0) is None or (
                    isinstance(ledger, (str, os.PathLike)) and not os.path.exists(ledger))):
                # a new ledger without a plan: refused before anything is written
                raise DomainError(f"plan_reserve needs a plan (declared now, or stored in the ledger); got "
                                  f"plan_reserve={plan_reserve!r} and no plan", name="plan_reserve", value=plan_reserve)
        if ledger is None:
            store: Ledger = MemoryLedger(lock=self._lock)  # one lock: the fast path holds both
        elif isinstance(ledger, Ledger):
            store = ledger
        else:
            store = SQLiteLedger(ledger)
        self._ledger = store
        if declared is not None:
            existing = getattr(store, "header", None)
            if not (isinstance(existing, dict) and existing.get("plan") is not None):
                # certified before a file is touched: a plan that does not fit records nothing
                try:
                    assert isinstance(budget, ApproxDP)  # checked by _declare
                    spec = _certify_plan(*declared, float(budget.epsilon))
                except BaseException:
                    store.close()
                    raise
                proposal["plan"] = spec.to_json()
                _make_filter(proposal, grid)
        try:
            header = store.initialize(proposal)
        except BaseException:
            store.close()
            raise
        try:
            self._grid = decode_floats(header["grid"])
            self._grid.setflags(write=False)
            if header.get("budget") is not None and budget is not None:
                if _comparable(header["budget"]) != _comparable(proposal["budget"]):
                    raise LedgerError(
                        f"the ledger's budget {header['budget']!r} differs from the budget given "
                        f"{proposal['budget']!r}; open it with budget=None to use the stored one"
                    )
            if header.get("budget") is None and budget is not None:
                raise LedgerError("the ledger was created without a budget; a budget cannot be added later")
            if fo is not None and header.get("filter_orders") != proposal["filter_orders"]:
                raise LedgerError("filter_orders differ from those stored in the ledger")
            if approx_delta is not None and header.get("approx_delta") != approx_delta:
                raise LedgerError("approx_delta differs from the value stored in the ledger")
            # a ledger written before relations were recorded is under the default, add/remove
            stored = nbr.check_neighbouring(header.get("neighbouring", nbr.DEFAULT), "ledger neighbouring")
            if (budget is not None or neighbouring is not None) and stored != relation:
                raise LedgerError(
                    f"the ledger's totals are stated under {nbr.words(stored)} neighbours, not "
                    f"{nbr.words(relation)}; open it with budget=None and neighbouring=None to use the stored relation")
            self._neighbouring = stored
            if declared is not None and header.get("plan") is None:
                raise LedgerError("the ledger was created without a plan; a plan is declared when its ledger is "
                                  "created (use a new ledger)")
            self._spec: _plan.PlanSpec | None = None
            if header.get("plan") is not None:
                self._spec = _plan.PlanSpec.from_json(header["plan"])
                if declared is not None:
                    _, phases, d_p = declared
                    if [(p.key, p.count) for p in phases] != [(p.key, p.count) for p in self._spec.phases] or (
                            plan_delta is not None and self._spec.delta != d_p):
                        raise LedgerError("the plan given differs from the plan declared in the ledger; open it "
                                          "with plan=None to use the stored one")
            self._header = header
            self._filter = _make_filter(header, self._grid)
            self._budget = None if header.get("budget") is None else guarantee_from_json(header["budget"])
        except (KeyError, TypeError, ValueError) as exc:
            store.close()
            raise LedgerError(f"bad ledger header: {exc}") from None
        except BaseException:
            store.close()
            raise
        self._all = _Fold(_Totals.empty(self._grid.size))
        # the totals the filter judges: every spend, or with a plan the spends off the plan
        self._offf = self._all if self._spec is None else _Fold(_Totals.empty(self._grid.size))
        self._hot: _Hot | None = None
        if plan_reserve is not None and self._spec is None:
            self._ledger.close()
            raise DomainError(f"plan_reserve needs a plan (declared now, or stored in the ledger); got "
                              f"plan_reserve={plan_reserve!r} and no plan", name="plan_reserve", value=plan_reserve)
        self._reserve = plan_reserve
        self._next_block = 1
        self._block: list[Any] | None = None  # [unit, mech, steps left in the block, its Spend]
        self._cur = None if self._spec is None else _plan.Cursor.start(len(self._spec.phases))
        self._keys: dict[int, tuple[_Unit, str | None, str]] = {}
        self._planned: dict[tuple[int, int], tuple[_Unit, dict[str, Any]]] = {}
        # The mechanisms (or guarantees) spent through this object, merged by equality, for the
        # routes that need them (PLD). None once the ledger holds spends this object did not
        # make (other processes, an import, an existing ledger): the ledger stores guarantees,
        # not mechanisms, and a route may only account for everything that was spent.
        self._live: dict[Any, list[Any]] | None = {}
        self._last_live: tuple[Any, list[Any], dict[Any, list[Any]]] | None = None
        self._items: dict[Any, tuple[Guarantee, str | None, _Unit, Any]] = {}
        self._last_item: tuple[Any, tuple[Guarantee, str | None, _Unit, Any]] | None = None
        self._decode_memo: dict[tuple[int, int], tuple[Any, Any, Guarantee]] = {}
        self.refresh()

    # ----- context manager -------------------------------------------------------------
    def __enter__(self) -> Accountant:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the ledger (the accountant cannot spend afterwards)."""
        self._ledger.close()

    def __repr__(self) -> str:
        return f"Accountant(budget={self._budget!r}, ledger={self._ledger!r}, spends={self._totals.spends})"

    # ----- properties ------------------------------------------------------------------
    @property
    def neighbouring(self) -> str:
        """The neighbouring relation of the totals and the budget: ``"add_remove"`` or ``"replace_one"``."""
        return self._neighbouring

    @property
    def budget(self) -> Guarantee | None:
        """The budget (as stored in the ledger), or None."""
        return self._budget

    @property
    def ledger(self) -> Ledger:
        """The ledger that records every accepted spend (a :class:`MemoryLedger` by default)."""
        return self._ledger

    @property
    def orders(self) -> np.ndarray:
        """The fixed grid of orders on which the RDP state is kept (read-only)."""
        return self._grid

    @property
    def header(self) -> dict[str, Any]:
        """The ledger header (format, schema version, renyi version, grid, budget, …)."""
        result: dict[str, Any] = json.loads(json.dumps(self._header))
        return result

    @property
    def filter(self) -> str:
        """A description of the privacy filter that enforces the budget."""
        return self._filter.describe()

    # ----- state -----------------------------------------------------------------------
    def refresh(self) -> None:
        """Read spends recorded by other processes since the last read."""
        with self._lock:
            self._apply(self._ledger.iter_rows(self._totals.last_id))

    @property
    def _totals(self) -> _Totals:
        """The totals of every recorded spend."""
        return self._all.totals

    @property
    def _off(self) -> _Totals:
        """The totals the filter judges: every spend, or with a plan the spends off the plan."""
        return self._offf.totals

    def _apply(self, rows: Iterable[SpendRecord]) -> None:
        # Only the totals are kept: memory does not grow with the length of the ledger.
        spec, fold, off = self._spec, self._all, self._offf
        for r in rows:
            if self._hot is not None:
                self._drop_hot()
            if r.id != fold.last_id + 1:
                raise LedgerError(f"ledger rows are not contiguous: expected id {fold.last_id + 1}, got {r.id}")
            if r.rdp.size != self._grid.size:
                raise LedgerError(f"spend {r.id} has {r.rdp.size} RDP values; the grid has {self._grid.size}")
            j = r.guarantee.get("plan_phase")
            if spec is None or self._cursor is None:
                if j is not None:
                    raise LedgerError(f"spend {r.id} claims a plan phase, but the ledger declares no plan")
            elif j is None:
                off.add(r, r.count, r.id)
            else:
                key = _plan.phase_key(r.mechanism, r.guarantee, _rdp_text(r.rdp)[0])
                if self._cursor.match(spec, key, r.count) != j:
                    raise LedgerError(f"spend {r.id} claims plan phase {j!r}, but it does not follow the declared "
                                      "plan there (another mechanism, a phase already closed, or more steps than "
                                      "the phase has left)")
                self._cursor = self._cursor.advance(j, r.count)
            fold.add(r, r.count, r.id)
            self._live = None  # a spend this object did not make: its mechanism is unknown

    @property
    def _cursor(self) -> _plan.Cursor | None:
        """How far the recorded spends followed the plan (steps of the fast path included)."""
        hot = self._hot
        if hot is not None and hot.phase is not None:
            with self._lock:
                k = self._all.count - hot.c0
                if k and self._hot is hot:
                    assert self._cur is not None
                    self._cur = self._cur.advance(hot.phase, k)
                    hot.c0 += k
        return self._cur

    @_cursor.setter
    def _cursor(self, value: _plan.Cursor | None) -> None:
        self._cur = value

    def _drop_hot(self) -> None:
        """Leave the fast path (its plan steps are folded into the cursor first)."""
        with self._lock:
            if self._hot is not None:
                self._cursor  # noqa: B018 - flushes the fast path's plan steps
                self._hot = None

    def _arm(self, item: Any, stated: Any, rec: SpendRecord, sp: Spend, phase: int | None) -> None:
        """After a spend of one run of ``item`` (no label): set up the fast path for the next
        identical step, when the ledger is this object's own memory ledger and the item is an
        immutable value (the checks the fast path skips hold for every further step of it)."""
        led = self._ledger
        last = self._last_item
        if not (isinstance(led, MemoryLedger) and led._lock is self._lock and last is not None and last[0] is item
                and led._runs and led._runs[-1].first.guarantee is rec.guarantee and led._n == self._all.last_id):
            return
        entry = None
        if self._live is not None:
            ll = self._last_live
            if ll is None or ll[0] is not stated or ll[2] is not self._live:
                return
            entry = ll[1]
        fold = self._all
        if phase is not None:
            assert self._cur is not None and self._spec is not None
            kmax = min(fold.count + self._spec.phases[phase].count - self._cur.used[phase], _FOLD_MAX)
        elif self._filter.kind == "none":
            kmax = _FOLD_MAX
        else:
            if fold._kmax is None:
                fold._kmax = fold._largest(self._filter)
            kmax = fold._kmax
        if fold.count < kmax:
            self._hot = _Hot(item, led, led._runs[-1], kmax, fold.count, entry, sp.guarantee, sp.mechanism, phase)

    def _unit(self, g: Guarantee) -> _Unit:
        try:
            key: Any = (type(g), g)
            hash(key)
        except TypeError:
            key = None
        if key is not None:
            u = self._cache.get(key)
            if u is not None:
                return u
        u = _unit_of(g, self._grid)
        if key is not None:
            if len(self._cache) >= 1024:
                self._cache.clear()
            self._cache[key] = u
        return u

    def _exceeded(self, g: Guarantee, count: int) -> BudgetExceededError:
        requested = g if count == 1 else g.compose(count)
        where = ""
        if self._spec is not None:
            where = (f" (a spend off the declared plan, billed through the filter on what the plan left; "
                     f"{self._plan_position()})")
        return BudgetExceededError(
            f"spending {requested!r} would exceed the budget {self._budget!r}{where}; remaining: {self.remaining!r}; "
            "nothing was recorded",
            requested=requested,
            remaining=self.remaining,
        )

    def _declare(self, plan: Any, plan_delta: float | None, budget: Guarantee | None, grid: np.ndarray,
                 relation: str, approx_delta: float) -> tuple[tuple[Item, ...], list[_plan.PlanPhase], float]:
        """The plan's items, its phases as stored, and δ_P (checked; nothing is written here)."""
        if budget is None or not isinstance(budget, ApproxDP) or not float(budget.delta) > 0.0:
            raise DomainError(
                f"a plan is billed at its (ε, δ): it needs an ApproxDP(ε, δ) budget with δ > 0; got budget={budget!r}",
                name="budget", value=budget)
        delta = float(budget.delta)
        top = _sub_down(delta, approx_delta)
        if plan_delta is None:
            d_p = top
        else:
            d_p = PROBABILITY_OPEN.check("plan_delta", plan_delta)
            if d_p > top:
                raise DomainError(f"plan_delta must be in (0, {top!r}] (the budget's δ less approx_delta); "
                                  f"got {plan_delta!r}", name="plan_delta", value=plan_delta)
        items = _plan.plan_items(plan, relation)
        phases = []
        for obj, k in items:
            g, mech = _resolve(obj)
            unit = _unit_of(g, grid)
            phases.append(_plan.PlanPhase(mech, unit.guarantee, _rdp_text(unit.rdp)[0], k))
        return items, phases, d_p

    @property
    def plan(self) -> _plan.PlanStatus | None:
        """The declared plan and how far the recorded spends followed it (None without one).

        Restated from the ledger when it is reopened: its phases, its bill (ε_P, δ_P) and the
        steps recorded on it (:class:`renyi.budget.plan.PlanStatus`; ``describe()`` says it in words,
        including phases that stopped early).
        """
        spec, cur = self._spec, self._cursor
        if spec is None or cur is None:
            return None
        blk = self._block
        return _plan.PlanStatus(spec.phases, cur.used, spec.epsilon, spec.delta, spec.lower, spec.method, cur.phase,
                                0 if blk is None else int(blk[2]))

    # ----- spending ----------------------------------------------------------------------
    def spend(self, item: Any, count: int = 1, label: str | None = None) -> Spend:
        """Record ``count`` runs of a mechanism or guarantee, if the budget allows it.

        The check and the write happen in one ledger transaction under its write lock, so
        concurrent accountants on one ledger never together exceed the budget.

        Args:
            item: a guarantee or a mechanism (anything with a ``guarantee``).
            count: number of runs, an integer ≥ 1.
            label: an optional label for the history.

        Returns:
            The recorded :class:`Spend`.

        Raises:
            BudgetExceededError: the budget would not hold; nothing was recorded.
            ConversionError: the spend has no valid route to the budget's definition (e.g.
                an ``ApproxDP`` spend against a ``ZCDP`` budget).
            DomainError / TypeError: bad ``count``, ``label`` or ``item``.
        """
        hot = self._hot
        if hot is not None and item is hot.item and count == 1 and label is None and count.__class__ is int:
            lock = self._lock
            lock.acquire()
            try:
                fold = self._all
                c = fold.count
                n = fold.last_id
                led = hot.ledger
                if self._hot is hot and c < hot.kmax and led._n == n:
                    # a repeated step: the exact filter's verdict for this run's counts is cached
                    # (hot.kmax); the ledger's open run gets a time, the totals' open run a count
                    now = _time()
                    hot.append(now)
                    n += 1
                    led._n = n
                    fold.last_id = n
                    fold.count = c + 1
                    fold.rows += 1
                    fold._t = None
                    e = hot.entry
                    if e is not None:
                        e[1] += 1
                    sp = _NEW(Spend)
                    _SPEND_SET_ID(sp, n)
                    _SPEND_SET_TIME(sp, now)
                    _SPEND_SET_STORED(sp, hot)  # the other fields are the run's (_FieldOfHotSpend)
                    return sp
            finally:
                lock.release()
        with self._lock:
            self._drop_hot()
            return self._spend_slow(item, count, label)

    def _spend_slow(self, item0: Any, count: int, label: str | None) -> Spend:
        g, mech, k, label, unit, item = self._prepare(item0, count, label, check=self._spec is None)
        if self._spec is not None:
            if self._reserve is not None and k == 1 and label is None:
                return self._spend_ahead(g, mech, unit, item, item0)
            self._block = None
            return self._spend_planned(g, mech, k, label, unit, item, item0)
        fold = self._all
        with self._lock:
            if not fold.admits(self._filter, unit, k):
                # Totals only grow and ours are a prefix of the ledger: refusing now is final.
                raise self._exceeded(g, k)
            now = time.time()
            with self._ledger.transaction() as txn:
                others = txn.rows_after(fold.last_id)
                if others:  # spends by other processes since our last read
                    self._apply(others)
                    if not fold.admits(self._filter, unit, k):
                        raise self._exceeded(g, k)
                # built with the id it will get, so that it is built once
                rec = SpendRecord(fold.last_id + 1, now, label, k, unit.guarantee, mech, unit.rdp, unit.eps_inf,
                                  unit.xi, unit.rho, unit.mu, unit.delta)
                new_id = _append(txn, rec)
            fold.add(unit, k, new_id)
            self._remember(item, k)
            sp = self._spend_of(rec)
            if k == 1 and label is None:
                self._arm(item0, item, rec, sp, None)
            return sp

    def _plan_key(self, unit: _Unit, mech: str | None) -> str:
        hit = self._keys.get(id(unit))
        if hit is not None and hit[0] is unit and hit[1] == mech:
            return hit[2]
        key = _plan.phase_key(mech, unit.guarantee, _rdp_text(unit.rdp)[0])
        if len(self._keys) >= 1024:
            self._keys.clear()
        self._keys[id(unit)] = (unit, mech, key)
        return key

    def _plan_decision(self, unit: _Unit, mech: str | None, k: int, key: str) -> int | None:
        """The plan phase this spend follows (None: off the plan, and then admitted by the filter
        on what the plan left, or an error)."""
        assert self._spec is not None and self._cursor is not None
        j = self._cursor.match(self._spec, key, k)
        if j is not None:
            return j
        try:
            self._filter.check_unit(unit)
        except ConversionError as exc:
            raise ConversionError(f"{exc} [{self._plan_position()}]") from None
        return None

    def _plan_position(self) -> str:
        st = self.plan
        assert st is not None
        if st.finished:
            return f"the plan is exhausted: all {st.steps} declared steps were spent"
        j = st.current
        p = st.phases[j]
        return (f"the plan is at phase {j + 1} of {len(st.phases)} ({p.mechanism or p.guarantee.get('type')}, "
                f"{p.count - st.used[j]} of {p.count} steps left)")

    def _spend_planned(self, g: Guarantee, mech: str | None, k: int, label: str | None, unit: _Unit,
                       item: Any, item0: Any) -> Spend:
        key = self._plan_key(unit, mech)
        with self._lock:
            j = self._plan_decision(unit, mech, k, key)
            for _ in range(2):
                if j is None and not self._offf.admits(self._filter, unit, k):
                    raise self._exceeded(g, k)
                now = time.time()
                with self._ledger.transaction() as txn:
                    others = txn.rows_after(self._all.last_id)
                    if others:  # spends by other processes since our last read: decide again
                        self._apply(others)
                        j2 = self._plan_decision(unit, mech, k, key)
                        if j2 != j:
                            j = j2
                            continue  # (leaves the transaction without writing)
                        if j is None and not self._offf.admits(self._filter, unit, k):
                            raise self._exceeded(g, k)
                    gj = unit.guarantee if j is None else self._planned_json(unit, j)
                    rec = SpendRecord(self._all.last_id + 1, now, label, k, gj, mech, unit.rdp, unit.eps_inf,
                                      unit.xi, unit.rho, unit.mu, unit.delta)
                    new_id = _append(txn, rec)
                break
            else:  # pragma: no cover - the plan moved twice under us
                raise LedgerError("the ledger changed twice while this spend was decided; nothing was recorded")
            self._all.add(unit, k, new_id)
            if j is None:
                self._offf.add(unit, k, new_id)
            else:
                assert self._cursor is not None
                self._cursor = self._cursor.advance(j, k)
            self._remember(item, k)
            sp = self._spend_of(rec)
            if k == 1 and label is None and j is not None:
                self._arm(item0, item, rec, sp, j)
            return sp

    def _spend_ahead(self, g: Guarantee, mech: str | None, unit: _Unit, item: Any, item0: Any) -> Spend:
        """One step with ``plan_reserve``: taken from the open block, or a new block's row
        (written, and committed, before the step runs); off the plan: the general path."""
        assert self._spec is not None
        blk = self._block
        if blk is not None and blk[0] is unit and blk[1] == mech and blk[2] > 0:
            blk[2] -= 1
            sp: Spend = blk[3]
            return sp
        self._block = None
        key = self._plan_key(unit, mech)
        spec = self._spec
        for _ in range(2):
            cur = self._cursor
            assert cur is not None
            j = cur.match(spec, key, 1)
            if j is None:  # off the plan: billed (or refused) as without reserve
                return self._spend_planned(g, mech, 1, None, unit, item, item0)
            now = time.time()
            with self._ledger.transaction() as txn:
                others = txn.rows_after(self._all.last_id)
                if others:  # other processes' spends: decide again
                    self._apply(others)
                    cur = self._cursor
                    assert cur is not None
                    if cur.match(spec, key, 1) != j:
                        continue  # (leaves the transaction without writing)
                b = min(self._next_block, self._reserve or 1, spec.phases[j].count - cur.used[j])
                rec = SpendRecord(self._all.last_id + 1, now, None, b, self._planned_json(unit, j), mech, unit.rdp,
                                  unit.eps_inf, unit.xi, unit.rho, unit.mu, unit.delta)
                new_id = _append(txn, rec)
            break
        else:  # pragma: no cover - the plan moved twice under us
            raise LedgerError("the ledger changed twice while this spend was decided; nothing was recorded")
        self._all.add(unit, b, new_id)
        self._cursor = cur.advance(j, b)
        self._remember(item, b)
        sp = self._spend_of(rec)
        self._next_block = min(2 * self._next_block, self._reserve or 1)
        self._block = [unit, mech, b - 1, sp]
        return sp

    def _planned_json(self, unit: _Unit, j: int) -> dict[str, Any]:
        # the record's guarantee with the phase it follows (inside the hash chain); one object per
        # (unit, phase), so that repeated steps share it as they share the unit's JSON
        memo = self._planned.get((id(unit), j))
        if memo is not None and memo[0] is unit:
            return memo[1]
        gj = dict(unit.guarantee, plan_phase=j)
        if len(self._planned) >= 1024:
            self._planned.clear()
        self._planned[(id(unit), j)] = (unit, gj)
        return gj

    def _prepare(self, item: Any, count: Any, label: Any,
                 check: bool = True) -> tuple[Guarantee, str | None, int, str | None, _Unit, Any]:
        k = count if type(count) is int and 1 <= count <= _FOLD_MAX else check_int("count", count)
        if label is not None and not isinstance(label, str):
            raise TypeError(f"label must be a string or None; got {type(label).__name__}")
        last = self._last_item
        if last is not None and last[0] is item:
            # the same (immutable) object as the previous spend: a training loop's step
            g, mech, unit, stated = last[1]
        else:
            key = _item_key(item)
            hit = None if key is None else self._items.get(key)
            if hit is None:
                _resolve(item)  # a TypeError for what is neither a guarantee nor a mechanism
                # the spend stated under the accountant's relation (converted or refused)
                stated = _restate(item, self._neighbouring)
                g, mech = _resolve(stated)
                unit = self._unit(g)
                if key is not None:
                    if len(self._items) >= 1024:
                        self._items.clear()
                    self._items[key] = (g, mech, unit, stated)
            else:
                g, mech, unit, stated = hit
            self._last_item = (item, (g, mech, unit, stated)) if key is not None else None
        if check:
            self._filter.check_unit(unit)
        return g, mech, k, label, unit, stated

    def can_spend(self, item: Any, count: int = 1) -> bool:
        """Whether :meth:`spend` would accept ``count`` runs of ``item`` now (records nothing).

        Raises the same ``ConversionError`` / ``DomainError`` / ``TypeError`` as :meth:`spend`.
        """
        _, mech, k, _, unit, _ = self._prepare(item, count, None, check=self._spec is None)
        with self._lock:
            self.refresh()
            if self._spec is not None:
                blk = self._block
                if k == 1 and blk is not None and blk[0] is unit and blk[1] == mech and blk[2] > 0:
                    return True  # a step recorded ahead (plan_reserve) is waiting for it
                if self._plan_decision(unit, mech, k, self._plan_key(unit, mech)) is not None:
                    return True
                return self._offf.admits(self._filter, unit, k)
            return self._all.admits(self._filter, unit, k)

    def release(self, mechanism: Any, value: Any, label: str | None = None, rng: Any = None) -> Any:
        """Check, record, then sample: ``mechanism.release(value, rng)`` only after the spend
        is committed. A refused release raises :class:`BudgetExceededError` and returns
        nothing; if sampling fails after the spend, the spend stays recorded (conservative)."""
        if isinstance(mechanism, Guarantee) or not callable(getattr(mechanism, "release", None)):
            raise TypeError(f"release needs a mechanism; got {type(mechanism).__name__}")
        self.spend(mechanism, 1, label)
        return mechanism.release(value, rng=rng)

    # ----- reading ----------------------------------------------------------------------
    def _spend_of(self, r: SpendRecord) -> Spend:
        # Records of one cached unit share its JSON and its grid values (the same objects),
        # so repeated spends of one mechanism decode once; identity is checked, not assumed.
        key = (id(r.guarantee), id(r.rdp))
        hit = self._decode_memo.get(key)
        if hit is not None and hit[0] is r.guarantee and hit[1] is r.rdp:
            g = hit[2]
        else:
            g = guarantee_from_json(r.guarantee, orders=self._grid, epsilons=r.rdp)
            if len(self._decode_memo) >= 1024:
                self._decode_memo.clear()
            self._decode_memo[key] = (r.guarantee, r.rdp, g)
        return Spend(r.id, r.time, r.label, r.count, g, r.mechanism, r)

    def _stored(self) -> list[SpendRecord]:
        # Re-read from the ledger (the accountant keeps only totals); the rows this
        # accountant has applied are exactly ids 1..last_id.
        last = self._totals.last_id
        out = []
        for r in self._ledger.iter_rows(0):
            if r.id > last:
                break
            out.append(r)
        return out

    @property
    def history(self) -> tuple[Spend, ...]:
        """Every recorded spend, in ledger order (call :meth:`refresh` to see other processes')."""
        with self._lock:
            return tuple(self._spend_of(r) for r in self._stored())

    @property
    def records(self) -> tuple[SpendRecord, ...]:
        """The raw stored records (per-unit values on the grid)."""
        with self._lock:
            return tuple(self._stored())

    @property
    def state(self) -> dict[str, Any]:
        """The totals as exact JSON numbers (for audits and bit-for-bit comparisons)."""
        t = self._totals
        return {
            "last_id": t.last_id, "spends": t.spends, "count": t.count, "rdp": encode_floats(t.rdp),
            "eps_inf": encode_floats([t.eps_inf])[0], "xi": t.xi, "rho": t.rho, "mu2": t.mu2,
            "delta": t.delta, "all_pure": t.all_pure, "has_curve": t.has_curve,
        }

    def _curve(self) -> RDP:
        t = self._totals
        finite = np.isfinite(t.rdp)
        zc = None if t.rho is None or t.xi is None else (t.xi, t.rho)
        if not np.any(finite):
            from renyi.guarantees.rdp import _Infinite

            return RDP(_Infinite(), eps_inf=t.eps_inf, zcdp=zc, convex=False, label="spent")
        pts = RDP.from_points(self._grid[finite], t.rdp[finite], eps_inf=t.eps_inf)
        return RDP(pts.fn, eps_inf=t.eps_inf, zcdp=zc, convex=False, orders=tuple(self._grid[finite]),
                   label=f"composition of {t.spends} spends on {int(finite.sum())} orders")

    @property
    def spent(self) -> Guarantee:
        """The composition of the recorded spends as one guarantee, stated under
        :attr:`neighbouring` (see :meth:`_spent`)."""
        with self._lock:
            g: Guarantee = nbr.with_relation(self._spent(), self._neighbouring)
            return g

    def _spent(self) -> Guarantee:
        """The composition of the recorded spends as one guarantee (the composition table of
        :func:`renyi.compose`, computed from the ledger's totals).

        This is the guarantee of the realised sequence *as if it had been fixed in advance*;
        under fully adaptive parameter choices the valid statement is the budget (the filter).
        """
        t = self._totals
        if t.spends == 0:
            return PureDP(0.0)
        d = min(t.delta, math.nextafter(1.0, 0.0))
        if t.mu2 is not None:
            return GDP(_sqrt_up(t.mu2))
        if t.all_pure:
            return PureDP(t.eps_inf)
        if not t.has_curve and t.rho is not None:
            return ZCDP(t.rho, t.xi) if d == 0.0 else ApproxZCDP(t.rho, t.xi, d)  # type: ignore[arg-type]
        curve = self._curve()
        return curve if d == 0.0 else ApproxRDP(curve, d)

    @property
    def within_budget(self) -> bool:
        """Whether the recorded spends pass the budget's filter (True without a budget).

        This is the one budget check: :meth:`spend` admits a spend exactly when the totals
        with it would be within budget, and the pipeline report asks the same question.
        """
        with self._lock:
            return self._filter.admits(self._off)

    @property
    def remaining(self) -> Guarantee | None:
        """What is left of the budget, in the budget's own terms (None without a budget).

        * ``ApproxDP(ε, δ)`` budget: ``ApproxDP(ε − ε_F, δ)`` where ε_F is the smallest ε'
          whose (ε', δ) filter (same δ split and orders) would admit what was spent;
        * ``PureDP``: ε − Σε; ``ZCDP``: (ρ − Σρ, ξ − Σξ); ``ApproxZCDP``: also δ − Σδ;
        * ``GDP``: √(μ² − Σμ²); ``RDP``: the per-order slack budget(α) − Σε_i(α) on the grid.
        """
        with self._lock:
            left = self._filter.remaining(self._off)
            return None if left is None else nbr.with_relation(left, self._neighbouring)

    def _remember(self, item: Any, count: int) -> None:
        if self._live is None:
            return
        last = self._last_live
        if last is not None and last[0] is item and last[2] is self._live:
            last[1][1] += count  # the previous spend's (immutable) object again: its entry, no hashing
            return
        for obj, k in items_of(item, count):
            try:
                key: Any = (type(obj), obj)
                hash(key)
            except TypeError:
                key = ("id", id(obj))
            entry = self._live.get(key)
            if entry is not None:
                entry[1] += k
            else:
                entry = self._live[key] = [obj, k]
            self._last_live = (item, entry, self._live) if obj is item and key[0] != "id" else None

    def _live_items(self) -> list[Item] | None:
        if self._live is None or not self._live:
            return None
        return [(o, int(k)) for o, k in self._live.values()]

    def _route_inputs(self, method: str | None = None) -> list[tuple[_routes.Route, Any]]:
        """Each accounting route of :mod:`renyi.routes` with what the accountant can give it:
        the exact summaries of the totals (Σμ² for the exact route, (Σξ, Σρ) for zCDP, Σε(∞)
        and Σδ for the direct (ε, δ) route, the RDP curve on the grid for RDP), and the spent
        mechanisms themselves for the PLD route when this object made every spend."""
        t = self._totals
        d = t.delta
        if d >= 1.0:
            return [] if t.mu2 is None else [(_routes.EXACT, GDP(_sqrt_up(t.mu2)))]
        out: list[tuple[_routes.Route, Any]] = []
        if t.mu2 is not None:
            out.append((_routes.EXACT, GDP(_sqrt_up(t.mu2))))
        live = self._live_items()
        if live is not None and (t.mu2 is None or method == "pld"):
            # (all-Gaussian spends: the exact route is the truth, PLD cannot be smaller)
            out.append((_routes.PLD, live))
        if np.any(np.isfinite(t.rdp)):
            curve = self._curve()
            out.append((_routes.RDP_ROUTE, curve if d == 0.0 else ApproxRDP(curve, d)))
        if t.rho is not None:
            out.append((_routes.ZCDP_ROUTE, ZCDP(t.rho, t.xi) if d == 0.0 else ApproxZCDP(t.rho, t.xi, d)))  # type: ignore[arg-type]
        if math.isfinite(t.eps_inf):
            out.append((_routes.DIRECT, ApproxDP(t.eps_inf, d)))
        return out

    def _best(self, which: str, x: float, method: str | None) -> Conversion:
        if method is not None:
            _routes.route(method)  # unknown names are a DomainError
        with self._lock:
            if self._totals.spends == 0:
                return Conversion(0.0, None, "nothing spent")
            results = []
            for r, obj in self._route_inputs(method):
                if method is not None and r.name != method:
                    continue
                if method == "pld":
                    obj = _routes.items(obj, offer_pld=True)  # asked for by name
                try:
                    c = r.epsilon(obj, x) if which == "epsilon" else r.delta(obj, x)
                except ConversionError as exc:
                    results.append(_routes.RouteResult(r, None, str(exc)))
                    continue
                results.append(_routes.RouteResult(r, c))
            if method is not None and not any(res.applicable for res in results):
                why = results[0].note if results else "the accountant has no input for it"
                raise ConversionError(f"the {method} route does not apply to these spends: {why}")
            return _routes.best(results, none_value=math.inf if which == "epsilon" else 1.0)

    def best_epsilon(self, delta: float, method: str | None = None) -> Conversion:
        """The smallest ε at ``delta`` over the accounting routes (:mod:`renyi.routes`) for
        the spends so far, with the route's name as ``method``.

        The routes: exact GDP (every spend Gaussian), RDP on the grid ([CKS20] Prop. 12), zCDP,
        the direct (ε, δ) route (every spend pure or (ε, δ)), and the PLD route when every spend
        was made by this object (the ledger keeps guarantees, not mechanisms). Like
        :attr:`spent`, the number is the guarantee of the realised sequence *as if it had been
        fixed in advance*; under fully adaptive choices the valid statement is the budget,
        enforced by the filter. ``method`` selects one route.
        """
        delta = PROBABILITY_OPEN.check("delta", delta)
        return self._best("epsilon", delta, method)

    def epsilon(self, delta: float, method: str | None = None) -> float:
        """The smallest valid ε at ``delta`` for the spends so far (see :meth:`best_epsilon`)."""
        return self.best_epsilon(delta, method).value

    def best_delta(self, epsilon: float, method: str | None = None) -> Conversion:
        """The smallest δ at ``epsilon`` over the same routes as :meth:`best_epsilon`."""
        epsilon = NONNEGATIVE.check("epsilon", epsilon)
        return self._best("delta", epsilon, method)

    def delta(self, epsilon: float, method: str | None = None) -> float:
        """The smallest valid δ at ``epsilon`` for the spends so far (see :meth:`best_delta`)."""
        return self.best_delta(epsilon, method).value

    def report(self, delta: float | None = None) -> AccountantReport:
        """A summary: budget, filter, totals, what remains, and ε at ``delta`` (default: the
        budget's δ when it has one)."""
        with self._lock:
            if delta is None and self._budget is not None:
                bd = float(getattr(self._budget, "delta", 0.0) or 0.0) if isinstance(
                    self._budget, (ApproxDP, ApproxZCDP)) else 0.0
                delta = bd if bd > 0 else None
            conv_ = self.best_epsilon(delta) if delta is not None else None
            assumption = None
            if conv_ is not None and conv_.method in _routes.names():
                assumption = _routes.route(conv_.method).assumption
            return AccountantReport(
                budget=self._budget,
                filter=self._filter.describe(),
                spends=self._totals.spends,
                count=self._totals.count,
                spent=self.spent,
                remaining=self.remaining,
                delta=delta,
                epsilon=None if conv_ is None else conv_.value,
                method=None if conv_ is None else conv_.method,
                witness=None if conv_ is None else conv_.witness,
                ledger=repr(self._ledger),
                grid_size=int(self._grid.size),
                lower=None if conv_ is None else conv_.lower,
                assumption=assumption,
                neighbouring=self._neighbouring,
                plan=self.plan,
            )

    # ----- export / import ----------------------------------------------------------------
    def export_jsonl(self, dest: str | os.PathLike[str] | IO[str]) -> int:
        """Write the header and every spend as JSON lines; returns the number of spends.

        Line 1 is ``{"header": {...}}``; each further line is one record (docs/accountant.md).
        """
        def write(fh: IO[str]) -> int:
            # One line at a time: memory does not grow with the length of the ledger.
            with self._lock:
                self.refresh()
                last = self._totals.last_id
                fh.write(json.dumps({"header": self._header}, allow_nan=False) + "\n")
                n = 0
                for r in self._ledger.iter_rows(0):
                    if r.id > last:
                        break
                    fh.write(json.dumps(r.to_json(), allow_nan=False) + "\n")
                    n += 1
            return n

        if isinstance(dest, (str, os.PathLike)):
            with open(dest, "w", encoding="utf-8") as fh:
                return write(fh)
        return write(dest)

    def import_jsonl(self, src: str | os.PathLike[str] | IO[str]) -> int:
        """Append the spends of an exported history, all or nothing, checking the budget.

        The export's grid must equal this ledger's grid. Records keep their time, label,
        count, guarantee and per-unit values; they get new ids.

        Raises:
            LedgerError: malformed file or a different grid, or a plan on either side (a plan's
                steps belong to the ledger that declared it).
            BudgetExceededError: the budget would not hold; nothing was imported.
        """
        if self._spec is not None:
            raise LedgerError("cannot import spends into a ledger with a declared plan (its filter bills spends "
                              "against the plan's position, which an import does not follow)")
        if isinstance(src, (str, os.PathLike)):
            with open(src, encoding="utf-8") as fh:
                text = fh.read()
        else:
            text = src.read()
        lines = [ln for ln in text.splitlines() if ln.strip()]
        try:
            objs = [json.loads(ln) for ln in lines]
        except json.JSONDecodeError as exc:
            raise LedgerError(f"not a renyi history export: {exc}") from None
        if not objs or not isinstance(objs[0], dict) or "header" not in objs[0]:
            raise LedgerError("not a renyi history export: the first line must be {\"header\": ...}")
        head = objs[0]["header"]
        if not isinstance(head, dict) or head.get("format") != LEDGER_FORMAT:
            raise LedgerError("not a renyi history export (wrong format)")
        if isinstance(head.get("schema_version"), int) and head["schema_version"] > SCHEMA_VERSION:
            raise LedgerError(f"export written by a newer renyi (schema version {head['schema_version']})")
        if head.get("plan") is not None:
            raise LedgerError("the export comes from a ledger with a declared plan: its steps were billed by that "
                              "plan and cannot be imported into another ledger")
        if head.get("grid") != self._header["grid"]:
            raise LedgerError("the export's grid of orders differs from this ledger's; totals would not be comparable")
        theirs = head.get("neighbouring", nbr.DEFAULT)
        if theirs != self._neighbouring:
            raise LedgerError(f"the export's spends are stated under {theirs!r} neighbours, this ledger's under "
                              f"{self._neighbouring!r}; their totals do not add")
        recs = []
        for o in objs[1:]:
            if not isinstance(o, dict):
                raise LedgerError("malformed record in export")
            r = SpendRecord.from_json(o, id=0)
            if r.rdp.size != self._grid.size:
                raise LedgerError("a record's RDP values do not match the grid")
            self._filter.check_unit(r)
            recs.append(r)
        with self._lock:
            with self._ledger.transaction() as txn:
                self._apply(txn.rows_after(self._all.last_id))
                fold = self._all.copy()
                for r in recs:
                    fold.add(r, r.count, fold.last_id + 1)
                    if not self._filter.admits(fold.totals):
                        raise BudgetExceededError(
                            f"importing would exceed the budget {self._budget!r} at record "
                            f"{r.guarantee!r}; nothing was imported",
                            requested=guarantee_from_json(r.guarantee, orders=self._grid, epsilons=r.rdp),
                            remaining=self.remaining,
                        )
                for i, r in enumerate(recs):
                    nid = txn.append(r)
                    if nid != self._totals.last_id + 1 + i:
                        raise LedgerError(f"ledger assigned id {nid}, expected {self._totals.last_id + 1 + i}")
            self._drop_hot()
            self._live = None
            self._all = self._offf = fold
        return len(recs)


def _certify_plan(items: tuple[Item, ...], phases: list[_plan.PlanPhase], d_p: float, eps: float) -> _plan.PlanSpec:
    """The plan's bill: its certified ε at δ_P; a plan that does not fit is refused."""
    c = _plan.certify(items, d_p)
    if not c.value <= eps:
        raise BudgetExceededError(
            f"the plan costs ε = {c.value!r} at δ = {d_p!r} ({c.method}), more than the budget's ε = {eps!r}; "
            "nothing was recorded", requested=ApproxDP(c.value, d_p), remaining=ApproxDP(eps, d_p))
    return _plan.PlanSpec(tuple(phases), float(c.value), d_p, c.lower, c.method, c.detail)


def _make_filter(header: dict[str, Any], grid: np.ndarray) -> _Filter:
    b = header.get("budget")
    if header.get("plan") is not None and (b is None or b.get("type") != "ApproxDP"):
        raise LedgerError("the ledger declares a plan but has no (ε, δ) budget")
    if b is None:
        return _Filter()
    g = guarantee_from_json(b)
    if isinstance(g, PureDP) or (isinstance(g, ApproxDP) and float(g.delta) == 0.0):
        return _PureFilter(float(g.epsilon))
    if isinstance(g, ApproxDP):
        eps, delta = g.params
        ad = float(header.get("approx_delta") or 0.0)
        if not 0.0 <= ad < delta:
            raise DomainError(f"approx_delta must be in [0, {delta!r}) (the budget's delta); got {ad!r}",
                              name="approx_delta", value=ad)
        fo = decode_floats(header["filter_orders"])
        if header.get("plan") is not None:
            return _PlanFilter(eps, delta, ad, _plan.PlanSpec.from_json(header["plan"]), grid, fo)
        return _ApproxDPFilter(eps, delta, ad, grid, fo)
    if isinstance(g, ZCDP):
        return _ZCDPFilter(g.rho, g.xi, 0.0)
    if isinstance(g, ApproxZCDP):
        return _ZCDPFilter(g.rho, g.xi, float(g.delta))
    if isinstance(g, GDP):
        return _GDPFilter(g.mu)
    if isinstance(g, RDP):
        orders = decode_floats(b["orders"])
        epsilons = decode_floats(b["epsilons"])
        if orders.shape != grid.shape or np.any(orders != grid):
            raise LedgerError("the RDP budget is not given on the ledger's grid")
        return _RDPFilter(grid, epsilons)
    raise TypeError(
        f"unsupported budget {type(g).__name__}: use ApproxDP, PureDP, ZCDP, ApproxZCDP, GDP or an RDP curve"
    )


# --------------------------------------------------------------------------------------
# Replaying a stored history (read-only tools: `renyi ledger show`, audits)
# --------------------------------------------------------------------------------------
class _ReplayLedger(Ledger):
    """A read-only view of a header and a stream of records, for :func:`replay`."""

    def __init__(self, header: dict[str, Any], rows: Iterable[SpendRecord]) -> None:
        self._header = header
        self._rows = iter(rows)

    def __repr__(self) -> str:
        return "replay"

    def initialize(self, header: dict[str, Any]) -> dict[str, Any]:
        return self._header

    def iter_rows(self, last_id: int) -> Any:
        for r in self._rows:
            if r.id > last_id:
                yield r

    def rows_after(self, last_id: int) -> list[SpendRecord]:
        return list(self.iter_rows(last_id))

    def transaction(self) -> Any:
        raise LedgerError("a replayed ledger is read-only")


def replay(header: dict[str, Any], rows: Iterable[SpendRecord]) -> Accountant:
    """An accountant holding the totals of a stored history, read one row at a time.

    The same totals, filter and budget check as :class:`Accountant` on that ledger (one source
    of truth), in memory independent of the number of rows. The result cannot spend.

    Raises:
        LedgerError: for a malformed header or rows.
    """
    return Accountant(ledger=_ReplayLedger(header, rows))


# --------------------------------------------------------------------------------------
# The one budget check for a fixed sequence of spends (the pipeline report asks it)
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BudgetCheck:
    """The accountant's verdict on a sequence of spends against a budget (:func:`check_budget`).

    Attributes:
        holds: True when an :class:`Accountant` with the budget admits every spend, in order.
        filter: the privacy filter that decided (:attr:`Accountant.filter`).
        spent: what the sequence costs in that filter's terms: the smallest ε' whose (ε', δ)
            filter admits it (an ``ApproxDP`` budget; never below the sequence's own ε),
            Σε (pure DP), Σρ (zCDP), √Σμ² (GDP); ``None`` for an RDP budget, or where the
            sequence has no such number (e.g. no zCDP bound).
        approx_delta: the part of the budget's δ reserved for approximate spends.
        reason: why the budget does not hold (the accountant's own message; "" when it holds).
    """

    holds: bool
    filter: str
    spent: float | None
    approx_delta: float = 0.0
    reason: str = ""


def _spent_of(f: _Filter, t: _Totals) -> float | None:
    if isinstance(f, _ApproxDPFilter):
        return f.spent_epsilon(t)
    if isinstance(f, _PureFilter):
        return t.eps_inf
    if isinstance(f, _ZCDPFilter):
        return t.rho
    if isinstance(f, _GDPFilter):
        return None if t.mu2 is None else _sqrt_up(t.mu2)
    return None


def check_budget(budget: Guarantee, items: Iterable[tuple[Any, int]], *,
                 approx_delta: float | None = None) -> BudgetCheck:
    """Whether ``Accountant(budget)`` admits every ``(item, count)`` of ``items``, in order.

    The one budget check shared by the accountant and the pipeline report: the items are
    spent, one by one, in an in-memory :class:`Accountant` with this budget, exactly as a
    run would spend them, so a report can never say "holds" where a run would be refused,
    or the reverse. The filters are those of a fully adaptive run (the (ε, δ) filter is RDP
    on a fixed set of orders with a union bound, see :class:`Accountant`); the ε of the same
    sequence fixed in advance may be smaller (a PLD or exact route), but it does not decide.

    Args:
        budget: any budget :class:`Accountant` takes.
        items: ``(mechanism or guarantee, count)`` pairs, in the order they are spent.
        approx_delta: the part of an (ε, δ) budget's δ reserved for approximate spends.
            Default: exactly the sum of the approximate spends' δ's (a fixed sequence knows
            it in advance; the smallest reservation that admits them), 0 if there are none.

    Returns:
        A :class:`BudgetCheck`; a refused spend (budget exceeded, or no valid route to the
        budget's definition) gives ``holds=False`` with the accountant's message.

    Raises:
        TypeError / DomainError: a budget or item :class:`Accountant` does not take.

    Examples:
        >>> from renyi import Gaussian, ZCDP
        >>> check_budget(ZCDP(0.5), [(Gaussian(2.0), 3)]).holds
        True
        >>> check_budget(ZCDP(0.3), [(Gaussian(2.0), 3)]).spent
        0.375
    """
    pairs = [(it, k) for it, k in items]
    # the same relation as the budget's, so that spends are restated exactly as the filter sees them
    free = Accountant(neighbouring=nbr.relation_of(budget))
    try:
        for it, k in pairs:
            free.spend(it, k)
    except ConversionError as exc:
        return BudgetCheck(False, "", None, 0.0, str(exc))
    t = free._totals
    if approx_delta is None:
        approx_delta = 0.0
        if isinstance(budget, ApproxDP) and float(budget.delta) > 0.0 and t.delta > 0.0:
            if not t.delta < float(budget.delta):
                return BudgetCheck(False, Accountant(budget).filter, None, 0.0,
                                   f"the approximate spends' δ's sum to {t.delta!r}, not below the budget's "
                                   f"δ = {float(budget.delta)!r}: nothing is left for the RDP part")
            approx_delta = t.delta
    acct = Accountant(budget, approx_delta=approx_delta)
    spent = _spent_of(acct._filter, t)
    try:
        for it, k in pairs:
            acct.spend(it, k)
    except (BudgetExceededError, ConversionError) as exc:
        return BudgetCheck(False, acct.filter, spent, approx_delta, str(exc))
    return BudgetCheck(True, acct.filter, spent, approx_delta)
