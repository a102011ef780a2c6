"""The accounting routes: the one list of the ways renyi turns a composition into (ε, δ).

A *route* takes the (mechanism or guarantee, count) items of a composition and returns an
upper bound on ε at a given δ (or on δ at a given ε), as a
:class:`~renyi.definitions.Conversion` whose ``method`` is the route's name. Every route is a
valid bound, so the minimum over the routes that apply is one too; that minimum is what
``.epsilon(delta)`` / ``.delta(epsilon)`` of any mechanism or composition returns, and what the
report, the accountant, calibration and the CLI show.

| name | what it does | fully adaptive |
|---|---|---|
| `exact` | Gaussian mechanisms only: μ² adds, exact conversion ([DRS19]; [BW18] Thm 8). The true ε: when it applies no other route can be smaller. | yes ([ST22]) |
| `pld` | numerical privacy loss distributions (`renyi.pld`): pessimistic discretisation gives the certified upper bound, optimistic the `lower` end of a bracket [lower, upper]. | no |
| `clt` | ≥ 2²⁴ steps of one Poisson-subsampled Gaussian: Berry–Esseen on the tilted sum of a discretised dominating pair (`lower`: of a dominated pair); tight where no PLD grid is. | no |
| `rdp` | RDP curves add ([Mir17] Prop. 1), converted by [CKS20] Prop. 12 with the order optimised. | yes ([FZ21]) |
| `zcdp` | (ξ, ρ) add ([BS16] Lemma 7), best zCDP conversion. | yes ([FZ21]) |
| `direct` | the composed guarantee's (or a single mechanism's) own conversion: exact profiles of one Laplace / randomized-response run, pure and (ε, δ)-DP profiles. | no |
| `rdp_classic` | the same RDP curve through [Mir17] Prop. 3 (for comparison). | yes ([FZ21]) |
| `advanced` | (ε, δ)-DP advanced composition ([DRV10] Thm III.3) per mechanism, summed. | no |
| `basic` | (ε, δ)-DP basic composition ([DR14] Thm 3.16): ε's add. | yes ([RRUV16]) |

"Fully adaptive" means: still valid when each mechanism *and its privacy parameters* are
chosen from earlier outputs, through a privacy filter of the route's definition (the
accountant's budget filters). The other routes need the sequence of mechanisms fixed in
advance (a pipeline file, ``spend(m, count=T)``); the data and the queries may still be
chosen adaptively.

Adding a route is one module that builds a :class:`Route` and one line in :data:`ROUTES`.

Examples:
    >>> from renyi.mechanisms import Gaussian, Laplace
    >>> c = best_epsilon(Gaussian(2.0).compose(10), 1e-5)
    >>> c.method
    'exact'
    >>> mixed = Gaussian(2.0).compose(10) + Laplace(10.0)
    >>> best_epsilon(mixed, 1e-5, "rdp").value >= best_epsilon(mixed, 1e-5).value
    True
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from renyi.guarantees import conversions as conv
from renyi.core._validation import NONNEGATIVE, PROBABILITY_OPEN
from renyi.guarantees.neighbouring import align, relation_of
from renyi.guarantees.composition import _compose, advanced_composition, as_guarantee, route_items, zcdp_sum
from renyi.guarantees import GDP, MCDP, RDP, ZCDP, ApproxDP, ApproxRDP, ApproxZCDP, Conversion, Guarantee, PureDP
from renyi.guarantees.base import Item
from renyi.core.errors import ConversionError, DomainError
from renyi.core import hooks

__all__ = [
    "Route",
    "RouteResult",
    "ROUTES",
    "route",
    "names",
    "items",
    "best_epsilon",
    "best_delta",
    "epsilon_table",
    "delta_table",
    "pld_available",
    "tpr_bound",
    "tpr_bounds",
    "DEFAULT_FPRS",
]

#: Lists longer than this (distinct items) skip the per-mechanism (ε, δ) comparison routes
#: (advanced, basic): they convert every item separately, and on long lists they are far
#: above the RDP and PLD routes.
_PER_ITEM_LIMIT = 1000


# --------------------------------------------------------------------------------------
# The composition as the routes see it
# --------------------------------------------------------------------------------------
class Items:
    """The items of a composition with the per-route views computed once (lazily)."""

    __slots__ = ("items", "offer_pld", "_guarantees", "_composed", "_curve", "_zcdp", "_sum")

    def __init__(self, items: Sequence[Item], *, offer_pld: bool = False) -> None:
        self.items: tuple[Item, ...] = tuple(items)
        #: ask the PLD engine even where the default minimum would not (``RENYI_PLD_ROUTE=0``,
        #: one run of an unsubsampled mechanism), with its RDP fallback: reports and method="pld"
        self.offer_pld = offer_pld
        if not self.items:
            raise DomainError("nothing to account for: a composition needs at least one mechanism or guarantee")
        self._guarantees: list[tuple[Guarantee, int]] | None = None
        self._composed: Guarantee | None = None
        self._curve: Guarantee | None = None
        self._zcdp: Guarantee | ConversionError | None = None
        self._sum: ZCDP | None | bool = False

    def zcdp_sum(self) -> ZCDP | None:
        """The sum of the items when there are many and all are plain ZCDP values (else None):
        every view below is then that one value, read once per item (10⁵ ZCDP values took
        minutes item by item); the same numbers as the general path (:func:`zcdp_sum`)."""
        if self._sum is False:
            self._sum = zcdp_sum(self.items)
        return self._sum  # type: ignore[return-value]

    @property
    def guarantees(self) -> list[tuple[Guarantee, int]]:
        """(guarantee of one run, count) per item."""
        if self._guarantees is None:
            self._guarantees = [(as_guarantee(o), k) for o, k in self.items]
        return self._guarantees

    @property
    def single(self) -> Any:
        """The mechanism or guarantee when the composition is one run of one thing, else None."""
        if len(self.items) == 1 and self.items[0][1] == 1:
            return self.items[0][0]
        return None

    def composed(self) -> Guarantee:
        """The library's composition of the items (:func:`renyi.compose`'s type rules)."""
        if self._composed is None:
            self._composed = self.zcdp_sum() or _compose(tuple(self.guarantees))
        return self._composed

    def curve(self) -> Guarantee:
        """The RDP curve of the composition (``ApproxRDP`` when an item has a δ)."""
        if self._curve is None and self.zcdp_sum() is not None:
            self._curve = self.zcdp_sum().to_rdp()  # type: ignore[union-attr]
        if self._curve is None:
            self._curve = _compose(tuple((_as_curve(g), k) for g, k in self.guarantees))
        return self._curve

    def zcdp(self) -> Guarantee:
        """The zCDP guarantee of the composition (``ApproxZCDP`` when an item has a δ)."""
        if self._zcdp is None and self.zcdp_sum() is not None:
            self._zcdp = self.zcdp_sum()
        if self._zcdp is None:
            try:
                self._zcdp = _compose(tuple((_zcdp_of(g), k) for g, k in self.guarantees))
            except ConversionError as exc:
                self._zcdp = exc
        if isinstance(self._zcdp, ConversionError):
            raise self._zcdp
        return self._zcdp


def items(obj: Any, *, offer_pld: bool = False) -> Items:
    """The items of a mechanism, a guarantee (composed or not), an ``(item, count)`` pair or a
    list of these, as the routes see them.

    ``offer_pld``: use the PLD engine wherever it knows the mechanisms, even where the default
    minimum leaves it out (``RENYI_PLD_ROUTE=0``, or one run of an unsubsampled mechanism,
    whose own profile the direct route evaluates exactly); where its grid cannot resolve the
    question it then answers with the RDP route's ε and a warning. Reports and an explicit
    ``method="pld"`` set it.

    Items under different neighbouring relations (a list mixing them) are stated under one
    first, as :func:`renyi.compose` does (:func:`renyi._neighbouring.align`); a composed
    guarantee's items already are.
    """
    if isinstance(obj, Items):
        if offer_pld and not obj.offer_pld:
            return Items(obj.items, offer_pld=True)
        return obj
    flat = route_items((obj,))
    if len({relation_of(o) for o, _ in flat}) > 1:
        _, flat = align(flat)
    return Items(flat, offer_pld=offer_pld)


def _as_curve(g: Guarantee) -> Guarantee:
    """One run as an RDP curve, or as δ-approximate RDP when it has a δ ([BS16] Lemma 37)."""
    if isinstance(g, (RDP, ApproxRDP)):
        return g
    if isinstance(g, ApproxDP):
        curve: RDP = conv.pure_dp_to_rdp(float(g.epsilon))
        return curve if float(g.delta) == 0.0 else ApproxRDP(curve, float(g.delta))
    if isinstance(g, ApproxZCDP):
        zc: RDP = ZCDP(g.rho, g.xi).to_rdp()
        return ApproxRDP(zc, float(g.delta))
    return g.to_rdp()


def _zcdp_of(g: Guarantee) -> Guarantee:
    if isinstance(g, ApproxDP) and float(g.delta) > 0:
        z: Guarantee = g.to_approx_zcdp()
        return z
    if isinstance(g, ApproxZCDP):
        return g
    return g.to_zcdp()


def _native_eps(g: Any, delta: float) -> Conversion:
    if not delta > 0.0:
        # a share of a tiny δ (5e-324 split over runs) underflows to 0: this route has no
        # answer, which is not the caller's out-of-domain δ (it was refused as "got 0.0")
        raise ConversionError(f"the δ share of one run underflows to 0 (δ = {delta!r})")
    return g.best_epsilon(delta, method="native")  # type: ignore[no-any-return]


def _native_delta(g: Any, epsilon: float) -> Conversion:
    return g.best_delta(epsilon, method="native")  # type: ignore[no-any-return]


# --------------------------------------------------------------------------------------
# Routes
# --------------------------------------------------------------------------------------
Fn = Callable[[Items, float], Conversion]


@dataclass(frozen=True, slots=True)
class Route:
    """One way of accounting for a composition.

    Attributes:
        name: the key (``method=`` selects it), e.g. ``"pld"``.
        title: the heading shown in reports, e.g. ``"PLD (numerical)"``.
        adaptive: valid under fully adaptive composition (mechanisms and their parameters
            chosen from earlier outputs) through a privacy filter of this definition.
        assumption: what a number from this route rests on, in words.
        epsilon_fn: (items, δ) ↦ an upper bound on ε; raises ``ConversionError`` where the
            route does not apply.
        delta_fn: (items, ε) ↦ an upper bound on δ, or ``None`` when the route gives no δ.
        exact: the route's value is the true ε (up to rounding up) where it applies, so no
            other route can be smaller.
    """

    name: str
    title: str
    adaptive: bool
    assumption: str
    epsilon_fn: Fn
    delta_fn: Fn | None = None
    exact: bool = False

    def epsilon(self, composition: Any, delta: float) -> Conversion:
        """An upper bound on ε at ``delta`` through this route (``ConversionError`` if it does
        not apply); ``method`` is the route's name, ``detail`` the theorem used."""
        delta = PROBABILITY_OPEN.check("delta", delta)
        return self._named(self.epsilon_fn(items(composition), delta))

    def delta(self, composition: Any, epsilon: float) -> Conversion:
        """An upper bound on δ at ``epsilon`` through this route (``ConversionError`` if it
        does not apply or gives no δ)."""
        epsilon = NONNEGATIVE.check("epsilon", epsilon)
        if self.delta_fn is None:
            raise ConversionError(f"the {self.name} route gives ε at a δ, not δ at an ε")
        return self._named(self.delta_fn(items(composition), epsilon))

    def _named(self, c: Conversion) -> Conversion:
        if math.isnan(c.value):  # a route that cannot compute gives no bound, never NaN
            raise ConversionError(f"the {self.name} route could not compute a bound")
        return Conversion(c.value, c.witness, self.name, lower=c.lower, detail=c.detail or c.method)


def _gdp_total(it: Items) -> GDP:
    if not all(isinstance(g, GDP) for g, _ in it.guarantees):
        raise ConversionError("the exact route needs every mechanism to be Gaussian without subsampling (μ-GDP)")
    g = it.composed()
    assert isinstance(g, GDP)
    return g


EXACT = Route(
    "exact", "exact (Gaussian DP)", True,
    "exact for Gaussian mechanisms; valid under fully adaptive composition (GDP filter, ST22)",
    lambda it, d: _native_eps(_gdp_total(it), d),
    lambda it, e: _native_delta(_gdp_total(it), e),
    exact=True,
)


# ----- PLD -----------------------------------------------------------------------------
def pld_available() -> ModuleType | None:
    """The :mod:`renyi.pld` engine, or None when this installation has none."""
    try:
        return importlib.import_module("renyi.pld")
    except ImportError:
        return None


def _pld_module(it: Items) -> Any:
    pld = pld_available()
    if pld is None:
        raise ConversionError("the PLD engine (renyi.pld) is not available")
    known = pld.supports
    if it.offer_pld:
        # the engine's own knowledge, whether or not it offers itself for the default minimum
        known = getattr(pld, "_supports", known)
    else:
        if not getattr(pld, "ROUTE_ENABLED", True):
            raise ConversionError("the PLD route is switched off for the default minimum (RENYI_PLD_ROUTE=0); "
                                  "ask for it with method='pld'")
        if _single_unsubsampled(it):
            # One run of a mechanism without subsampling: its PLD is its own privacy profile,
            # which the direct route evaluates exactly (or through the same pure/(ε, δ) pair).
            raise ConversionError("one run of an unsubsampled mechanism: the direct route is its exact profile")
    missing = next((o for o, _ in it.items if not known(o)), None)  # the first is named
    if missing is not None:
        raise ConversionError(f"no privacy loss distribution known for {missing!r}")
    return pld


def _single_unsubsampled(it: Items) -> bool:
    one = it.single
    if one is None:
        return False
    from renyi.sampling.allocation import RandomAllocation
    from renyi.sampling.subsampling import PoissonSubsampled, PoissonSubsampledReplaceOne, SubsampledWithoutReplacement

    if isinstance(one, RandomAllocation):
        # one epoch of a sampled mechanism: the PLD route is its tight bound; t = 1 and k = t
        # are no sampling, but an allocation has no direct route of its own: the PLD route
        # answers with the base's pair (t = 1 of a discrete Gaussian was billed by RDP only,
        # 5.22 against the base's 4.50 at δ = 1e-6)
        return False
    return not isinstance(one, (PoissonSubsampled, PoissonSubsampledReplaceOne, SubsampledWithoutReplacement))


_PLD_DETAIL = "privacy loss distributions: pessimistic (upper) and optimistic (lower) discretisation"


# Asked by name (method="pld", reports) the engine falls back to the RDP route with a warning
# where its grid cannot resolve the question; in the default minimum it steps aside instead
# (ConversionError: the RDP route is in the minimum anyway, and a report notes why).
def _pld_epsilon(it: Items, delta: float) -> Conversion:
    pld = _pld_module(it)
    lower, upper = pld.epsilon_bounds(list(it.items), delta, fallback=it.offer_pld)
    # a bracket wider than 1 % (or an upper end taken from an answer at a smaller δ) says why
    note = getattr(pld, "bracket_note", lambda *a: "")(list(it.items), delta)
    detail = _PLD_DETAIL + (f" ({note})" if note else "")
    return Conversion(float(upper), None, "pld", lower=float(lower), detail=detail)


def _pld_delta(it: Items, epsilon: float) -> Conversion:
    lower, upper = _pld_module(it).delta_bounds(list(it.items), epsilon, fallback=it.offer_pld)
    return Conversion(float(upper), None, "pld", lower=float(lower), detail=_PLD_DETAIL)


PLD = Route(
    "pld", "PLD (numerical)", False,
    "the sequence of mechanisms is fixed in advance (a pipeline file, spend(m, count=T))",
    _pld_epsilon, _pld_delta,
)

# ----- CLT (Berry–Esseen) -----------------------------------------------------------------
_CLT_DETAIL = ("central limit with Berry–Esseen (Shevtsova 2010, C = 0.56) on the tilted sum of a "
               "discretised dominating pair (upper) and a dominated pair (lower)")


#: :data:`renyi.accounting._clt.MIN_STEPS`, here so that a composition the route cannot cover
#: is turned away without importing it (its import loads scipy.special and mpmath: a third of
#: the fixed cost of a ``renyi release``, which asks every route)
_CLT_MIN_STEPS = 2**24
#: :data:`renyi.accounting._clt.WIDE_STEPS`: from here the minimum also asks the CLT route when
#: the PLD bracket is wider than 1 % (ε would otherwise drop at 2²⁴ steps where PLD is not tight)
_CLT_WIDE_STEPS = 2**14


def _clt_module(it: Items, min_steps: int = _CLT_MIN_STEPS) -> Any:
    if len(it.items) > 8:
        raise ConversionError("the CLT route covers 1 to 8 distinct Poisson-subsampled Gaussians")
    steps = sum(int(k) for _, k in it.items)
    if steps < min_steps:
        raise ConversionError(f"the CLT route needs at least {min_steps} steps (Berry–Esseen); got {steps}")
    from renyi.accounting import _clt

    return _clt


def _clt_epsilon(it: Items, delta: float) -> Conversion:
    lower, upper = _clt_module(it).epsilon_bounds(list(it.items), delta)
    return Conversion(upper, None, "clt", lower=lower, detail=_CLT_DETAIL)


def _clt_delta(it: Items, epsilon: float) -> Conversion:
    lower, upper = _clt_module(it).delta_bounds(list(it.items), epsilon)
    return Conversion(upper, None, "clt", lower=lower, detail=_CLT_DETAIL)


#: Very long compositions (≥ 2²⁴ steps) of one Poisson-subsampled Gaussian, where no PLD grid
#: resolves both one step and the sum (:mod:`renyi.accounting._clt`).
CLT = Route(
    "clt", "CLT (Berry–Esseen, certified)", False,
    "the sequence of mechanisms is fixed in advance (a pipeline file, spend(m, count=T))",
    _clt_epsilon, _clt_delta,
)

# ----- RDP, zCDP -----------------------------------------------------------------------
RDP_ROUTE = Route(
    "rdp", "RDP (CKS20, α optimised)", True,
    "valid under fully adaptive composition through an RDP filter (FZ21)",
    lambda it, d: _native_eps(it.curve(), d),
    lambda it, e: _native_delta(it.curve(), e),
)

ZCDP_ROUTE = Route(
    "zcdp", "zCDP", True,
    "valid under fully adaptive composition through a zCDP filter (FZ21; WRRW23 with δ)",
    lambda it, d: _native_eps(it.zcdp(), d),
    lambda it, e: _native_delta(it.zcdp(), e),
)


# ----- direct ----------------------------------------------------------------------------
def _direct_target(it: Items) -> Any:
    one = it.single
    if one is not None:
        return one  # a single run: the mechanism's own analysis (exact profiles)
    g = it.composed()
    if isinstance(g, (PureDP, ApproxDP, MCDP)):
        return g
    raise ConversionError("the direct route applies to one run of one mechanism, or to pure, (ε, δ) and mCDP "
                          "compositions (otherwise it is the RDP, zCDP or exact route)")


DIRECT = Route(
    "direct", "direct (own conversion)", False,
    "the sequence of mechanisms is fixed in advance",
    lambda it, d: _native_eps(_direct_target(it), d),
    lambda it, e: _native_delta(_direct_target(it), e),
)


# ----- comparison routes: Mironov's conversion, (ε, δ) composition ------------------------
def _classic_epsilon(it: Items, delta: float) -> Conversion:
    curve = it.curve()
    d = delta
    if isinstance(curve, ApproxRDP):
        da = float(curve.delta)
        if delta <= da:
            raise ConversionError("the (ε, δ) mechanisms' own δ already exceeds the requested δ")
        d = (delta - da) / (1.0 - da)
        curve = curve.curve
    if not isinstance(curve, RDP):  # pragma: no cover - Items.curve() gives RDP or ApproxRDP
        raise ConversionError(f"no RDP curve for the classic conversion: {curve!r}")
    return conv.rdp_to_approx_dp_mironov(curve, d)


RDP_CLASSIC = Route(
    "rdp_classic", "RDP (Mironov 2017 conversion)", True,
    "valid under fully adaptive composition through an RDP filter (FZ21)",
    _classic_epsilon,
)


def _fixed_approx(g: Guarantee) -> tuple[float, float] | None:
    """(ε, δ) of a guarantee that *is* an (ε, δ) statement with δ > 0."""
    if isinstance(g, ApproxDP) and float(g.delta) > 0:
        return float(g.epsilon), float(g.delta)
    return None


def _pure_eps(g: Guarantee) -> float:
    try:
        return float(g.rdp(math.inf))
    except (ConversionError, DomainError):
        return math.inf


def _per_item(it: Items) -> list[tuple[Guarantee, int]]:
    if len(it.items) > _PER_ITEM_LIMIT:
        raise ConversionError(f"skipped for more than {_PER_ITEM_LIMIT} distinct mechanisms (one conversion each)")
    return it.guarantees


def _basic_epsilon(it: Items, delta: float) -> Conversion:
    gs = _per_item(it)
    fixed = [_fixed_approx(g) for g, _ in gs]
    pure = [_pure_eps(g) if f is None else math.inf for (g, _), f in zip(gs, fixed)]
    rem = delta - math.fsum(k * f[1] for (_, k), f in zip(gs, fixed) if f is not None)
    if rem <= 0:
        raise ConversionError("the (ε, δ) mechanisms' own δ already exceeds the requested δ")
    needs = sum(k for (_, k), f, p in zip(gs, fixed, pure) if f is None and not math.isfinite(p))
    run_delta = rem / needs if needs else 0.0
    total = []
    for (g, k), f, p in zip(gs, fixed, pure):
        if f is not None:
            total.append(k * f[0])
        elif math.isfinite(p):
            total.append(k * p)
        else:
            total.append(k * _native_eps(g, run_delta).value)
    how = "pure-DP runs at δ = 0, the others at δ/N per run" if needs else "pure DP: ε adds"
    return Conversion(conv.round_up(math.fsum(total)), None, f"ε's of the runs add (DR14 Thm 3.16); {how}")


BASIC = Route(
    "basic", "(ε, δ)-DP, basic composition", True,
    "valid under fully adaptive composition (RRUV16 basic-composition filter)",
    _basic_epsilon,
)


def _advanced_epsilon(it: Items, delta: float) -> Conversion:
    gs = _per_item(it)
    fixed = [_fixed_approx(g) for g, _ in gs]
    rem = delta - math.fsum(k * f[1] for (_, k), f in zip(gs, fixed) if f is not None)
    if rem <= 0:
        raise ConversionError("the (ε, δ) mechanisms' own δ already exceeds the requested δ")
    m = sum(1 for f in fixed if f is None)
    share = rem / m if m else 0.0
    total = []
    for (g, k), f in zip(gs, fixed):
        if f is not None:
            total.append(k * f[0])
            continue
        p = _pure_eps(g)
        if math.isfinite(p):
            cands = [k * p]
            if share > 0.0:  # (δ split over the items may underflow to 0: then basic composition alone)
                cands.append(float(advanced_composition(p, 0.0, k, share).epsilon))
        else:
            # δ split over k runs may underflow to 0 (δ = 5e-324 was refused as "got 0.0"):
            # a share that is 0 gives no candidate rather than an out-of-domain call
            run = share / (2.0 * k)
            cands = [k * _native_eps(g, share / k).value] if share / k > 0.0 else []
            e_run = _native_eps(g, run).value if run > 0.0 else math.inf
            if math.isfinite(e_run):
                cands.append(float(advanced_composition(e_run, run, k, share / 2.0).epsilon))
            if not cands:
                raise ConversionError(f"δ = {delta!r} is too small to split over {k} runs (the share underflows)")
        total.append(min(cands))
    adv = Conversion(conv.round_up(math.fsum(total)), None,
                     "DRV10 Thm III.3 per mechanism (or basic if smaller), then summed; δ split evenly "
                     "across mechanisms, within one half for δ′ and half over the runs")
    # Basic composition of the whole list splits δ differently (evenly over all runs) and can
    # be smaller than the per-mechanism choice above; both are valid, so the row promises
    # "or basic if smaller" for the pipeline as a whole.
    basic = _basic_epsilon(it, delta)
    if basic.value < adv.value:
        return Conversion(basic.value, None, "basic composition (smaller than advanced here): " + basic.method)
    return adv


ADVANCED = Route(
    "advanced", "(ε, δ)-DP, advanced composition", False,
    "the sequence of mechanisms is fixed in advance",
    _advanced_epsilon,
)

#: The routes, in display order. Adding a route: build a :class:`Route` in its module and add
#: it here.
ROUTES: tuple[Route, ...] = (
    EXACT,
    PLD,
    CLT,
    RDP_ROUTE,
    ZCDP_ROUTE,
    DIRECT,
    RDP_CLASSIC,
    ADVANCED,
    BASIC,
)


def names() -> tuple[str, ...]:
    """The route names, in display order."""
    return tuple(r.name for r in ROUTES)


def route(name: str) -> Route:
    """The route called ``name`` (``DomainError`` naming the valid ones otherwise)."""
    for r in ROUTES:
        if r.name == name:
            return r
    raise DomainError(f"method must be one of {', '.join(names())} (or None for the best); got {name!r}",
                      name="method", value=name)


# --------------------------------------------------------------------------------------
# Evaluating the routes
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RouteResult:
    """One route's answer: ``conversion`` where it applies, else ``None`` and a ``note`` why."""

    route: Route
    conversion: Conversion | None
    note: str = ""

    @property
    def applicable(self) -> bool:
        """True when the route gave a bound (its conversion exists)."""
        return self.conversion is not None


#: A CLT bracket this narrow (relative) ends the search for the minimum (the PLD grid, asked
#: last, cannot resolve such step counts and costs seconds).
_CLT_STOP = {"epsilon": 1e-3, "delta": 1e-2}


def _table(obj: Any, x: float, which: str, stop_at_exact: bool) -> list[RouteResult]:
    it = items(obj)
    if stop_at_exact and which == "epsilon":
        fast = _pld_first(it, x)
        if fast is not None:
            return fast
    order = ROUTES
    skip: Callable[[Route, list[RouteResult]], str | None] | None = None
    if stop_at_exact:
        # For the minimum the numerical PLD route goes last: when a cheap route already gives
        # 0 no valid bound is smaller, and the PLD grid is not built at all (σ = 1e150 over 2⁶²
        # steps ran for minutes). The results keep the display order (ties: the first route).
        order = tuple(r for r in ROUTES if r is not PLD) + (PLD,)
        if which == "epsilon":
            def skip(r: Route, out: list[RouteResult]) -> str | None:
                if r is not PLD or not out:
                    return None
                found = [res.conversion.value for res in out if res.conversion is not None]
                floor = _laplace_floor(it, x)
                if found and floor is not None and min(found) <= floor * (1.0 + 1e-12):
                    # no route can be below the floor: the PLD grid could gain 1e-12 relative at most
                    return ("not asked: the bound found is within 1e-12 of the true ε "
                            "(ε(δ) ≥ Σεᵢ + log(1 − 2ᵏδ) for Laplace runs)")
                return None
    return _run_routes(it, x, which, order, stop_at_exact, skip)


def _run_routes(it: Items, x: float, which: str, order: tuple[Route, ...], stop: bool,
                skip: Callable[[Route, list[RouteResult]], str | None] | None) -> list[RouteResult]:
    """Ask the routes in ``order`` (``skip`` may give a reason not to ask one, from the results
    so far); with ``stop`` (the minimum) stop at an exact value, at 0, or at a CLT bracket
    within :data:`_CLT_STOP`. The results are returned in display order."""
    out: list[RouteResult] = []
    for r in order:
        if which == "delta" and r.delta_fn is None:
            out.append(RouteResult(r, None, "gives ε at a δ, not δ at an ε"))
            continue
        reason = skip(r, out) if skip is not None else None
        if reason is not None:
            out.append(RouteResult(r, None, reason))
            continue
        try:
            c = r.epsilon(it, x) if which == "epsilon" else r.delta(it, x)
        except ConversionError as exc:
            out.append(RouteResult(r, None, str(exc)))
            continue
        out.append(RouteResult(r, c))
        if stop and ((r.exact and math.isfinite(c.value)) or c.value == 0.0):
            break  # the true value (or 0): no valid bound is smaller
        if stop and r is CLT and c.lower is not None and c.value - c.lower <= _CLT_STOP[which] * c.value:
            break  # a certified bracket within 0.1 % (δ: 1 %): no valid bound is below its lower end
    else:
        if stop:
            _clt_where_pld_is_wide(it, x, which, out)
    rank = {r.name: i for i, r in enumerate(ROUTES)}
    return sorted(out, key=lambda res: rank[res.route.name])


def _pld_first(it: Items, delta: float) -> list[RouteResult] | None:
    """The default minimum of ε for compositions of Poisson-subsampled Gaussians (example or
    person level), or None (then every route is computed, PLD last).

    The cheap routes go first, then the PLD route, then each comparison route (rdp,
    rdp_classic, advanced, basic) only when a certified lower bound on its value
    (:mod:`renyi.accounting._route_skip`) is below the best bound found so far: a skipped
    route cannot be smaller, so the minimum is the one over every route. PLD goes before the
    RDP route only when one step's total variation exceeds δ (then no route can return 0,
    whose early stop would have saved the PLD grid)."""
    from renyi.accounting import _route_skip

    if it.offer_pld:
        return None
    try:
        bounds = _route_skip.plan(it.items, delta, it.curve)
        if bounds is None or not bounds.positive():
            return None
    except Exception:  # noqa: BLE001 - no plan: every route is computed, as without one
        return None
    # every route of ROUTES once: the unguarded ones in display order, then PLD, then the guarded
    guarded = tuple(r for r in ROUTES if r.name in _route_skip.GUARDED)
    order = tuple(r for r in ROUTES if r is not PLD and r not in guarded) + (PLD,) + guarded

    def skip(r: Route, out: list[RouteResult]) -> str | None:
        found = min((res.conversion.value for res in out if res.conversion is not None), default=math.inf)
        if r.name not in _route_skip.GUARDED or not math.isfinite(found):
            return None
        try:
            lb = bounds.lower(r.name, found)
        except Exception:  # noqa: BLE001 - no bound: the route is computed
            return None
        if lb >= found:
            return f"skipped: certifiably ≥ {lb:.6g}, not below the best bound {found:.6g}"
        return None

    return _run_routes(it, delta, "epsilon", order, True, skip)


def _clt_where_pld_is_wide(it: Items, x: float, which: str, out: list[RouteResult]) -> None:
    """Between 2¹⁴ and 2²⁴ steps of Poisson-subsampled Gaussians (in all), ask the CLT route when the
    PLD bracket is wider than 1 % (5 % in δ) or absent: replaces its "too few steps" entry."""
    at = {res.route.name: i for i, res in enumerate(out)}
    if "clt" not in at or out[at["clt"]].conversion is not None or len(it.items) > 8:
        return
    if not _CLT_WIDE_STEPS <= sum(int(k) for _, k in it.items) < _CLT_MIN_STEPS:
        return
    p = out[at["pld"]].conversion if "pld" in at else None
    width = 0.01 if which == "epsilon" else 0.05
    if p is not None and p.lower is not None and p.value - p.lower <= width * p.value:
        return
    from renyi.accounting import _clt

    try:
        if which == "epsilon":
            lower, upper = _clt.epsilon_bounds(list(it.items), x, min_steps=_CLT_WIDE_STEPS)
        else:
            lower, upper = _clt.delta_bounds(list(it.items), x, min_steps=_CLT_WIDE_STEPS)
    except ConversionError:
        return
    out[at["clt"]] = RouteResult(CLT, Conversion(upper, None, "clt", lower=lower, detail=_CLT_DETAIL))


def _laplace_floor(it: Items, delta: float) -> float | None:
    """A lower bound on the true ε(δ) of a composition of k runs of Laplace and discrete Laplace
    mechanisms only (None otherwise, or when 2ᵏδ ≥ 1/2).

    Each run's privacy loss takes its largest value εᵢ (its pure ε) with probability ≥ 1/2 in
    both directions (the half-line beyond both centres; the discrete law is symmetric about its
    centre and charges it), so δ(ε) ≥ 2⁻ᵏ(1 − e^{ε − Σεᵢ}) and ε(δ) ≥ Σεᵢ + log(1 − 2ᵏδ). When the
    bound found is within 1e-12 of this, no route can be smaller by more, and the PLD grid is not built
    (two Laplace(4.7e5), Laplace(27), DiscreteLaplace(83) at δ = 1e-30: 10 s of CPU; issue #26).
    """
    from renyi.mechanisms import DiscreteLaplace, Laplace

    k = 0
    total = 0.0
    for o, c in it.items:
        if type(o) not in (Laplace, DiscreteLaplace):
            return None
        k += int(c)
        if k > 60:
            return None
        total += int(c) * float(as_guarantee(o).rdp(math.inf))
    x = math.ldexp(delta, k)
    if not (math.isfinite(total) and x < 0.5):
        return None
    return max(0.0, total + math.log1p(-x) - 8.0 * math.ulp(total))


def epsilon_table(obj: Any, delta: float) -> tuple[RouteResult, ...]:
    """Every route's ε at ``delta`` for a mechanism or composition (for reports: the PLD
    engine is asked wherever it knows the mechanisms)."""
    delta = PROBABILITY_OPEN.check("delta", delta)
    return tuple(_table(items(obj, offer_pld=True), delta, "epsilon", False))


def delta_table(obj: Any, epsilon: float) -> tuple[RouteResult, ...]:
    """Every route's δ at ``epsilon`` for a mechanism or composition (PLD asked as in
    :func:`epsilon_table`)."""
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    return tuple(_table(items(obj, offer_pld=True), epsilon, "delta", False))


def best(results: Sequence[RouteResult], *, none_value: float = math.inf) -> Conversion:
    """The smallest answer among ``results`` (the first route in list order on ties)."""
    found = [r.conversion for r in results if r.conversion is not None]
    if not found:
        why = "; ".join(f"{r.route.name}: {r.note}" for r in results) or "no route"
        return Conversion(none_value, None, "none", detail=f"no route gives a finite bound ({why})")
    return min(found, key=lambda c: c.value)


def _select(obj: Any, x: float, which: str, method: str | None) -> Conversion:
    if method == "native":
        native = getattr(obj, "best_epsilon" if which == "epsilon" else "best_delta", None)
        if native is None:  # a composition given as (item, count) pairs has no conversion of its own
            raise DomainError(f"method='native' asks a mechanism's or guarantee's own conversion; got "
                              f"{type(obj).__name__}: use a route name ({', '.join(names())}) or None",
                              name="method", value=method)
        return native(x, method="native")  # type: ignore[no-any-return]
    if method is not None:
        r = route(method)
        if r is PLD:
            obj = items(obj, offer_pld=True)  # asked for by name: always offered
        return r.epsilon(obj, x) if which == "epsilon" else r.delta(obj, x)
    return best(_table(obj, x, which, True), none_value=math.inf if which == "epsilon" else 1.0)


def best_epsilon(obj: Any, delta: float, method: str | None = None) -> Conversion:
    """The smallest valid ε at ``delta`` ∈ (0, 1) for a mechanism or composition.

    Args:
        obj: a mechanism, a guarantee (composed or not), an ``(item, count)`` pair or a list.
        delta: δ ∈ (0, 1).
        method: ``None`` (the minimum over the routes that apply) or a route name
            (``"exact"``, ``"pld"``, ``"rdp"``, ``"zcdp"``, ...; see :data:`ROUTES`).

    Returns:
        A :class:`~renyi.definitions.Conversion`: an upper bound on ε, ``method`` naming the
        route, ``lower`` its lower bound for the PLD route.

    Raises:
        DomainError: δ ∉ (0, 1), or an unknown ``method``.
        ConversionError: the selected route does not apply to ``obj``.
    """
    delta = PROBABILITY_OPEN.check("delta", delta)
    return _select(obj, delta, "epsilon", method)


def best_delta(obj: Any, epsilon: float, method: str | None = None) -> Conversion:
    """The smallest valid δ at ``epsilon`` ≥ 0 for a mechanism or composition (see
    :func:`best_epsilon`); 1 when no route gives a bound."""
    epsilon = NONNEGATIVE.check("epsilon", epsilon)
    return _select(obj, epsilon, "delta", method)


# --------------------------------------------------------------------------------------
# The hypothesis-testing view: the attacker's true-positive rate at a false-positive rate
# --------------------------------------------------------------------------------------
#: The false-positive rates at which reports give the attacker's true-positive rate.
DEFAULT_FPRS: tuple[float, ...] = (1e-3, 1e-2, 0.1)

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _cheap_routes() -> list[Route]:
    """The routes that give δ at an ε in milliseconds (all but the numerical PLD)."""
    return [r for r in ROUTES if r.delta_fn is not None and r.name != "pld"]


def _best_cheap_delta(it: Items, eps: float, fast: dict[str, Callable[[float], Conversion]] | None = None
                      ) -> Conversion:
    """The smallest δ at ``eps`` over :func:`_cheap_routes` (a route in ``fast`` answers through
    its function instead: :func:`_fast_deltas`)."""
    res = []
    for r in _cheap_routes():
        try:
            if fast is not None and r.name in fast:
                res.append(RouteResult(r, r._named(fast[r.name](eps))))
            else:
                res.append(RouteResult(r, r.delta(it, eps)))
        except ConversionError as exc:
            res.append(RouteResult(r, None, str(exc)))
    return best(res, none_value=1.0)


def _fast_deltas(it: Items) -> dict[str, Callable[[float], Conversion]]:
    """δ(ε) functions for the routes whose every call would optimise the order afresh: the RDP
    route of a plain RDP curve answers from the curve evaluated once on a grid of orders
    (:func:`renyi.conversions.rdp_delta_on_grid`, a valid bound at every ε, at most the
    optimiser's refinement above the route's own δ). Used by the trade-off search only, whose
    rows are then evaluated by the routes themselves at the ε found."""
    try:
        curve = it.curve()
    except ConversionError:
        return {}
    if type(curve) is not RDP:
        return {}
    return {RDP_ROUTE.name: conv.rdp_delta_on_grid(curve)}


def _exp_times(eps: float, a: float) -> float:
    """e^ε·a without overflow (+∞ when it exceeds the float range; 0 when a = 0)."""
    if a <= 0.0:
        return 0.0
    return math.exp(eps + math.log(a)) if eps + math.log(a) < 700.0 else math.inf


def tpr_bound(obj: Any, fpr: float, method: str | None = None) -> Conversion:
    """An upper bound on the true-positive rate of any membership test at false-positive rate
    ``fpr``, from the (ε, δ(ε)) profile of a route.

    (ε, δ)-DP bounds every test: TPR ≤ e^ε·FPR + δ and TPR ≤ 1 − e^{−ε}(1 − δ − FPR)
    ([KOV15] Thm 2.1; [DRS19] Prop. 2.5). Holding at every ε, the bound is the infimum over ε,
    which for the exact profile of the dominating pair is the trade-off curve itself ([DRS19]
    Prop. 2.12). It is evaluated on a grid of ε and refined by golden-section search; every ε
    tried gives a valid bound, so the minimum found is one too (never below the infimum).

    Args:
        obj: a mechanism or composition (see :func:`best_epsilon`).
        fpr: the false-positive rate ∈ [0, 1].
        method: the route whose δ(ε) is used (default: the best route at each ε).

    Returns:
        A ``Conversion`` whose ``value`` is the TPR bound ∈ [fpr, 1], ``witness`` the ε used and
        ``method`` the route.

    Examples:
        >>> from renyi.mechanisms import Gaussian
        >>> round(tpr_bound(Gaussian(1.0), 0.05).value, 6)  # Φ(Φ⁻¹(0.05) + 1), exact for μ = 1
        0.259511
    """
    return tpr_bounds(obj, (fpr,), method)[0]


def tpr_bounds(obj: Any, fprs: Sequence[float] = DEFAULT_FPRS, method: str | None = None) -> tuple[Conversion, ...]:
    """:func:`tpr_bound` at several false-positive rates, sharing the δ(ε) evaluations.

    Where the PLD engine knows every mechanism (and the exact Gaussian route does not apply),
    the rows come from its certified trade-off curve (:func:`renyi.pld.tradeoff`, with its
    lower end in ``lower``), each lowered by the other routes' δ at the curve's own optimal ε
    where that is smaller.
    """
    from renyi.core._validation import PROBABILITY

    rates = [PROBABILITY.check("fpr", f) for f in fprs]
    it = items(obj)
    clt = method is None and _clt_applies(it)
    if method == "pld" or (method is None and not _exact_applies(it) and not clt):
        curve = _pld_curve(it, rates)
        if curve is not None:
            return tuple(_with_cheap_routes(it, rates, curve) if method is None else _pld_rows(curve))
        if method == "pld":
            raise ConversionError("no privacy loss distribution is known for every mechanism of this composition")
    cache: dict[float, tuple[float, str]] = {}
    # The search needs δ(ε) at some ninety ε's: without a named method it runs on the routes
    # that answer in milliseconds, the RDP route from its curve evaluated once (_fast_deltas),
    # and each row is then evaluated at the ε the search found by every cheap route itself and
    # by the numerical PLD route (one composition per call), which can only lower the bound.
    fast = _fast_deltas(it) if method in (None, RDP_ROUTE.name) else {}

    def delta_at(eps: float) -> tuple[float, str]:
        if eps not in cache:
            if method is not None and method not in fast:
                c = best_delta(it, eps, method)
            elif method is not None:
                c = RDP_ROUTE._named(fast[method](eps))
            else:
                c = _best_cheap_delta(it, eps, fast)
            cache[eps] = (min(1.0, c.value), c.method)
        return cache[eps]

    def tpr(a: float, eps: float, d: float) -> float:
        t = min(1.0, _exp_times(eps, a) + d, 1.0 - math.exp(-eps) * max(0.0, 1.0 - d - a))
        return max(t, a)

    # A range of ε wide enough for every optimum: beyond ε(δ = 1e-9·FPR) the δ term is
    # negligible and e^ε·FPR only grows.
    small = min([f for f in rates if f > 0.0], default=1e-3)
    d_top = min(1e-6, max(1e-300, 1e-9 * small))
    try:
        if method is not None:
            top = best_epsilon(it, d_top, method).value
        else:  # the range only needs a valid ε: the fast routes give one
            found = []
            for r in _cheap_routes():
                try:
                    found.append(r.epsilon(it, d_top).value)
                except ConversionError:
                    pass
            top = min(found, default=math.inf)
    except ConversionError:
        top = math.inf
    top = min(max(top, 1.0), 50.0) if math.isfinite(top) else 50.0
    grid = [top * i / 16.0 for i in range(17)]
    out = []
    for a in rates:
        if a >= 1.0:
            out.append(Conversion(1.0, None, method or "none", detail="TPR ≤ 1"))
            continue
        seen: dict[float, float] = {}

        def bound(eps: float) -> float:
            if eps not in seen:
                seen[eps] = tpr(a, eps, delta_at(eps)[0])
            return seen[eps]

        vals = [bound(e) for e in grid]
        i = min(range(len(grid)), key=lambda j: vals[j])
        lo, hi = grid[max(0, i - 1)], grid[min(len(grid) - 1, i + 1)]
        x1, x2 = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
        for _ in range(24):
            if bound(x1) <= bound(x2):
                hi, x2 = x2, x1
                x1 = hi - _GOLDEN * (hi - lo)
            else:
                lo, x1 = x1, x2
                x2 = lo + _GOLDEN * (hi - lo)
        eps_best = min(seen, key=lambda e: seen[e])
        value, name = seen[eps_best], delta_at(eps_best)[1]
        if fast:
            # the row at the ε found, through the routes themselves (order optimised)
            c = best_delta(it, eps_best, method) if method is not None else _best_cheap_delta(it, eps_best)
            t = tpr(a, eps_best, min(1.0, c.value))
            if t < value:
                value, name = t, c.method
        if method is None and not clt:  # (the PLD grid cannot resolve what the CLT route covers)
            try:
                t = tpr(a, eps_best, min(1.0, PLD.delta(it, eps_best).value))
            except ConversionError:
                t = math.inf
            if t < value:
                value, name = t, "pld"
        out.append(Conversion(value, eps_best, name,
                              detail="TPR ≤ min over ε of e^ε·FPR + δ(ε) (KOV15 Thm 2.1; DRS19 Prop. 2.12)"))
    return tuple(out)


def _clt_applies(it: Items) -> bool:
    """True when the CLT route covers the composition (≥ 2²⁴ steps of one subsampled Gaussian):
    no PLD grid resolves it (its trade-off curve would be the RDP fallback's), so the search
    below runs on the cheap routes, the CLT route's δ(ε) among them."""
    try:
        _clt_module(it).applies(list(it.items))
    except ConversionError:
        return False
    return True


def _exact_applies(it: Items) -> bool:
    """True when the exact (Gaussian DP) route applies: its search below is then exact."""
    try:
        _gdp_total(it)
    except ConversionError:
        return False
    return True


_PLD_TPR_DETAIL = "TPR ≤ min over grid ε of e^ε·FPR + δ_PLD(ε) (DRS19 Prop. 2.12)"


def _pld_curve(it: Items, rates: Sequence[float]) -> Any:
    """The PLD's own certified trade-off curve (:func:`renyi.pld.tradeoff`: the infimum over
    every grid ε of the composed pessimistic PLD, with its optimistic lower end), or None."""
    try:
        return _pld_module(it).tradeoff(list(it.items), list(rates))
    except ConversionError:
        return None


def _pld_rows(curve: Any) -> list[Conversion]:
    return [Conversion(float(up), float(e), "pld", lower=float(lo), detail=_PLD_TPR_DETAIL)
            for up, lo, e in zip(curve.upper, curve.lower, curve.epsilon)]


def _with_cheap_routes(it: Items, rates: Sequence[float], curve: Any) -> list[Conversion]:
    """The PLD rows, each lowered by the fast routes' δ at the PLD's own optimal ε where that
    is smaller (both are valid; the PLD curve is the near-exact one, so one ε per rate is
    enough instead of the routes' own search)."""
    out = _pld_rows(curve)
    for i, (a, c) in enumerate(zip(rates, out)):
        eps = max(0.0, float(c.witness or 0.0))
        b = _best_cheap_delta(it, eps)
        d = min(1.0, b.value)
        t = max(a, min(1.0, _exp_times(eps, a) + d, 1.0 - math.exp(-eps) * max(0.0, 1.0 - d - a)))
        if t < c.value:
            out[i] = Conversion(t, eps, b.method,
                                detail="TPR ≤ min over ε of e^ε·FPR + δ(ε) (KOV15 Thm 2.1; DRS19 Prop. 2.12)")
    return out


# The routes answer ``g.epsilon(δ)`` / ``g.delta(ε)`` for every value (see renyi.core.hooks).
hooks.provide("best_epsilon", best_epsilon)
hooks.provide("best_delta", best_delta)
