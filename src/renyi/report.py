"""The privacy report of a pipeline, computed as data (the CLI renders it; no printing here).

For the whole pipeline, :func:`compute_report` gives the total ε at the pipeline's δ with the
best route and its witness order, and the same ε through every accounting route of
:mod:`renyi.routes` (the one list the library, the accountant and the CLI also use), so a
reader sees what each analysis costs:

- ``exact``: the Gaussian-DP composition, exact for pipelines of Gaussian mechanisms without
  subsampling ([DRS19]; [BW18] Thm 8);
- ``pld``: numerical privacy loss distributions, a certified upper bound with a lower bound
  beside it (the bracket), when the PLD engine knows every mechanism;
- ``rdp``: the RDP curves add ([Mir17] Prop. 1) and convert with [CKS20] Prop. 12, the order
  optimised continuously; ``rdp_classic`` is the same curve through [Mir17] Prop. 3;
- ``zcdp``: the ρ's add ([BS16] Lemma 7) and convert with the best zCDP bound;
- ``direct``: one mechanism's own analysis (exact profiles), or a pure / (ε, δ) composition's;
- ``basic`` and ``advanced``: plain (ε, δ)-DP composition ([DR14] Thm 3.16, [DRV10] Thm III.3)
  after converting each run to (ε, δ) — what one gets without RDP or zCDP.

Every number is a valid upper bound; the best is their minimum. Each route says which
assumption it rests on: the routes valid under fully adaptive composition (exact GDP, RDP,
zCDP, basic) and those that need the sequence of mechanisms fixed in advance — as a pipeline
file is (PLD, direct, advanced). The report also gives each mechanism's share of the spend
(of the RDP curve at the witness order, and of ρ), its sampling assumption, and the budget's
status.

    >>> from renyi.pipeline import parse_pipeline
    >>> p = parse_pipeline({"privacy": {"delta": 1e-5},
    ...                     "mechanism": [{"name": "q", "type": "gaussian", "sigma": 20.0, "count": 1000}]})
    >>> r = compute_report(p)
    >>> r.route, r.method
    ('exact', 'exact Gaussian (BW18 Thm 8 / GDP)')
    >>> r.epsilon == compose((p.entries[0].mechanism, 1000)).epsilon(1e-5)
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from renyi.accounting import routes as _routes
from renyi.guarantees.composition import as_guarantee, compose
from renyi.mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace
from renyi.guarantees import RDP, ApproxDP, ApproxRDP, ApproxZCDP, Guarantee
from renyi.core.errors import ConversionError, DomainError
from renyi.pipeline import Entry, Pipeline

__all__ = ["Route", "Share", "BudgetStatus", "Report", "compute_report", "ROUTES", "total_guarantee",
           "rdp_guarantee"]

#: Route keys in display order, with their headings (from :data:`renyi.routes.ROUTES`).
ROUTES: dict[str, str] = {r.name: r.title for r in _routes.ROUTES}

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Route:
    """ε of the whole pipeline through one definition (``inf`` when it does not apply)."""

    key: str
    title: str
    epsilon: float
    method: str
    witness: float | None = None
    applicable: bool = True
    note: str = ""
    #: a lower bound on the true ε (the PLD route's bracket is [lower, epsilon]), else None
    lower: float | None = None
    #: valid under fully adaptive composition (through a filter of this definition)
    adaptive: bool = True
    #: what the number rests on, in words
    assumption: str = ""

    def to_dict(self) -> dict[str, Any]:
        """This route as a JSON-ready dict (non-finite numbers as strings)."""
        return {"key": self.key, "title": self.title, "epsilon": _j(self.epsilon), "method": self.method,
                "witness": _j(self.witness), "applicable": self.applicable, "note": self.note,
                "lower": _j(self.lower), "adaptive": self.adaptive, "assumption": self.assumption}


@dataclass(frozen=True, slots=True)
class Share:
    """One mechanism's part of the spend.

    Attributes:
        rdp: count·ε(α*) at the witness order α* of the RDP route (``inf`` if unbounded there).
        rdp_share: ``rdp`` over the pipeline's total at α* (the shares sum to 1).
        rho: count·ρ when the mechanism has a zCDP guarantee (else ``None``).
        rho_share: ``rho`` over the total ρ (``None`` unless every mechanism has one).
        epsilon_alone: ε at the pipeline's δ if this mechanism (all its runs) were run alone.
        half_width_95: the 95 % interval half-width of the noise in one answer of one run
            (:func:`renyi.accuracy.half_width`; for a subsampled mechanism, of its base noise),
            or ``None`` for mechanisms without additive noise.
    """

    name: str
    type: str
    count: int
    mechanism: str
    assumption: str
    rdp: float
    rdp_share: float
    rho: float | None
    rho_share: float | None
    epsilon_alone: float
    half_width_95: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """These fields as a JSON-ready dict (non-finite numbers as strings)."""
        return {k: _j(getattr(self, k)) for k in self.__slots__}


def noise_half_width(mechanism: Any, coverage: float = 0.95) -> float | None:
    """The interval half-width of one answer's noise (base noise of a subsampled mechanism), or None."""
    from renyi.accounting.accuracy import half_width

    m = mechanism
    while not isinstance(m, (Gaussian, Laplace, DiscreteGaussian, DiscreteLaplace)):
        m = getattr(m, "mechanism", None)
        if m is None:
            return None
    return half_width(m, coverage)


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """Whether the pipeline fits its budget: the accountant's verdict (one source of truth).

    ``kind`` is ``"epsilon"`` (an (ε, δ) budget: ``spent`` is the ε of the accountant's
    adaptive (ε, δ) filter at the budget's δ; ``fixed_epsilon`` is the tightest ε of the same
    sequence fixed in advance, the report's own ε, which may be smaller but does not decide)
    or ``"rho"`` (``spent`` is the total ρ). ``holds`` is True exactly when
    :class:`~renyi.accountant.Accountant` with this budget admits every entry
    (:func:`~renyi.accountant.check_budget`). ``remaining`` = limit − spent (negative when
    exceeded; −∞ when refused for another reason, e.g. a step with no zCDP bound).
    ``filter`` describes the accountant's filter that decided.
    """

    kind: str
    limit: float
    delta: float | None
    spent: float
    remaining: float
    holds: bool
    note: str = ""
    filter: str = ""
    fixed_epsilon: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """These fields as a JSON-ready dict (non-finite numbers as strings)."""
        return {k: _j(getattr(self, k)) for k in self.__slots__}


@dataclass(frozen=True, slots=True)
class Report:
    """The report of a pipeline. ``epsilon`` is the best (smallest) valid ε at ``delta``."""

    source: str
    title: str
    delta: float
    epsilon: float
    method: str
    witness: float | None
    route: str
    routes: tuple[Route, ...]
    shares: tuple[Share, ...]
    budget: BudgetStatus | None
    guarantee: str
    rdp_witness: float | None
    rho: float | None
    warnings: tuple[str, ...] = ()
    #: (FPR, upper bound on the attacker's TPR, route) at the FPRs of
    #: :data:`renyi.routes.DEFAULT_FPRS` (the hypothesis-testing view of the same composition)
    tradeoff: tuple[tuple[float, float, str], ...] = ()
    #: the tightest certified μ-GDP statement (:class:`renyi.pld.GDPBound`: ``mu``, ``delta0``,
    #: ``method``, ``lower``), or None where no finite μ is known
    gdp: Any = None
    #: the neighbouring relation the total (and the budget) is stated under
    neighbouring: str = "add_remove"
    #: the relation in words, with the entries converted to it (empty: none was)
    neighbouring_note: str = ""
    #: the composed guarantee and the composed RDP curve (for plots; not serialised)
    total: Any = field(default=None, compare=False, repr=False)
    curve: Any = field(default=None, compare=False, repr=False)
    entries: tuple[Entry, ...] = field(default=(), compare=False, repr=False)

    def _repr_html_(self) -> str:
        """An HTML table of the report (Jupyter shows it for a bare ``report``)."""
        from renyi.core.display import report_html

        return report_html(self)

    def __rich__(self) -> Any:
        """The report as rich tables (``rich.print(report)``), as ``renyi report`` prints it."""
        from renyi.core.display import report_rich

        return report_rich(self)

    def route_by_key(self, key: str) -> Route:
        """The route named ``key`` (e.g. ``"exact"``, ``"rdp"``, ``"zcdp"``); KeyError if absent."""
        for r in self.routes:
            if r.key == key:
                return r
        raise KeyError(key)

    def to_dict(self) -> dict[str, Any]:
        """The report as one JSON-ready object (``inf`` as the string ``"inf"``)."""
        return {
            "source": self.source,
            "title": self.title,
            "delta": self.delta,
            "epsilon": _j(self.epsilon),
            "method": self.method,
            "witness": _j(self.witness),
            "route": self.route,
            "guarantee": self.guarantee,
            "neighbouring": self.neighbouring,
            "neighbouring_note": self.neighbouring_note,
            "rdp_witness": _j(self.rdp_witness),
            "rho": _j(self.rho),
            "routes": [r.to_dict() for r in self.routes],
            "mechanisms": [s.to_dict() for s in self.shares],
            "budget": None if self.budget is None else self.budget.to_dict(),
            "warnings": list(self.warnings),
            "tradeoff": [{"fpr": f, "tpr": t, "route": m} for f, t, m in self.tradeoff],
            "gdp": None if self.gdp is None else {"mu": _j(self.gdp.mu), "delta0": self.gdp.delta0,
                                                  "method": self.gdp.method, "lower": self.gdp.lower},
        }


def _j(x: Any) -> Any:
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


# --------------------------------------------------------------------------------------
# Building blocks (each one library call)
# --------------------------------------------------------------------------------------
def total_guarantee(pipeline: Pipeline) -> Guarantee:
    """The library's composition of the whole pipeline (``renyi.compose``), stated under the
    pipeline's neighbouring relation (:meth:`Pipeline.relation`)."""
    total: Guarantee = compose(*pipeline.aligned_items())
    return total


def neighbouring_note(pipeline: Pipeline, aligned: list[tuple[Any, int]] | None = None) -> str:
    """The pipeline's neighbouring relation in words, naming the entries converted to it."""
    from renyi.guarantees.neighbouring import words

    relation = pipeline.relation()
    aligned = pipeline.aligned_items() if aligned is None else aligned
    what = {"add_remove": "one record added or removed", "replace_one": "one record replaced"}[relation]
    text = f"{words(relation)} neighbours ({what})"
    if pipeline.neighbouring is None and len({getattr(e.mechanism, "neighbouring", None) for e in pipeline.entries}) > 1:
        text += ("; the entries mix relations, so the total is stated under replace-one, the only relation "
                 "both can be stated under")
    converted = [e.name for e, (o, _) in zip(pipeline.entries, aligned) if o is not e.mechanism]
    if converted:
        text += (f"; stated under add/remove and converted: {', '.join(converted)} (a noise mechanism with its "
                 "sensitivity doubled, otherwise group privacy of two)")
    return text


def rdp_guarantee(pipeline: Pipeline) -> Guarantee:
    """The pipeline's RDP curve (``RDP``, or ``ApproxRDP`` when a mechanism has a δ), under the
    pipeline's neighbouring relation."""
    return compose(*[(_routes._as_curve(as_guarantee(o)), k) for o, k in pipeline.aligned_items()])


def _plain_curve(g: Guarantee) -> RDP:
    return g.curve if isinstance(g, ApproxRDP) else g  # type: ignore[return-value]


_zcdp_of = _routes._zcdp_of
_as_curve = _routes._as_curve


def _pure_eps(g: Guarantee) -> float:
    try:
        return float(g.rdp(math.inf))
    except (ConversionError, DomainError):
        return math.inf


# --------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------
def compute_report(pipeline: Pipeline, *, delta: float | None = None,
                   progress: Progress | None = None, method: str | None = None,
                   tradeoff: bool = True) -> Report:
    """Compute the privacy report of ``pipeline`` at ``delta`` (default: the pipeline's δ).

    Args:
        pipeline: a parsed pipeline (:func:`renyi.pipeline.load_pipeline`).
        delta: δ ∈ (0, 1) at which ε is reported.
        progress: called with a short label before each step (for progress bars).
        method: ``None`` (report the smallest valid ε) or a route name
            (:data:`renyi.routes.ROUTES`) whose ε is reported as the headline.
        tradeoff: also bound the attacker's true-positive rate at the false-positive rates
            of :data:`renyi.routes.DEFAULT_FPRS` (:func:`renyi.routes.tpr_bounds`, through
            ``method`` or the best route at each ε).

    Returns:
        A :class:`Report`; ``report.epsilon`` is the smallest of the valid ε's of its routes
        (or the selected route's).

    Raises:
        DomainError: an unknown ``method``. ConversionError: the selected route does not
            apply to this pipeline (the message says why).
    """
    if method is not None:
        _routes.route(method)
    step = progress or (lambda label: None)
    d = pipeline.delta if delta is None else float(delta)
    entries = pipeline.entries
    relation = pipeline.relation()
    aligned = pipeline.aligned_items()  # every entry under the pipeline's relation (or a NeighbouringError)
    gs = [as_guarantee(o) for o, _ in aligned]
    warnings: list[str] = []

    step("composing")
    total = total_guarantee(pipeline)
    it = _routes.items(total, offer_pld=True)  # one report, one PLD question: always asked

    step("routes")
    table = _routes.epsilon_table(it, d)
    step("RDP curve")
    curve = rdp_guarantee(pipeline)

    step("zCDP")
    rho_total: float | None = None
    entry_rho: list[float | None] = []
    for e, g in zip(entries, gs):
        try:
            z: Any = _zcdp_of(g)
            entry_rho.append(e.count * z.rho if z.xi == 0.0 else None)
        except ConversionError:
            entry_rho.append(None)
    try:
        ztot: Any = it.zcdp()
        rho_total = ztot.rho
    except ConversionError:
        ztot = None

    routes: list[Route] = []
    for res in table:
        r, c = res.route, res.conversion
        note = res.note
        if r.name == "exact" and c is not None and hasattr(total, "mu"):
            note = f"μ = {total.mu:.6g}; composition of Gaussians is exact in GDP"
        elif r.name == "exact" and c is None:
            note = "only for pipelines of Gaussian mechanisms without subsampling"
        elif r.name == "zcdp" and c is not None and ztot is not None:
            xi = f", ξ = {ztot.xi:.6g}" if ztot.xi else ""
            dz = f", δ = {float(ztot.delta):.3g} (approximate zCDP)" if isinstance(ztot, ApproxZCDP) else ""
            note = f"ρ = {ztot.rho:.6g}{xi}{dz}"
        elif r.name == "zcdp" and c is None:
            missing = [e.name for e, rr in zip(entries, entry_rho) if rr is None]
            note = (f"no useful zCDP guarantee for: {', '.join(missing)} (zCDP cannot express amplification by "
                    "subsampling: the only valid ρ is the unsubsampled one)") if missing else note
        elif r.name in ("pld", "clt") and c is not None and c.lower is not None:
            note = f"bracket [{c.lower:.6g}, {c.value:.6g}]: the true ε lies within"
        elif r.name == "rdp_classic" and c is not None:
            note = "ε(α) + log(1/δ)/(α − 1): the conversion of the first RDP accountants"
        if c is None:
            routes.append(Route(r.name, r.title, math.inf, r.title, applicable=False, note=note,
                                adaptive=r.adaptive, assumption=r.assumption))
        else:
            routes.append(Route(r.name, r.title, c.value, c.detail or c.method, c.witness, note=note,
                                lower=c.lower, adaptive=r.adaptive, assumption=r.assumption))
    rdp_row = next(r for r in routes if r.key == "rdp")
    rdp_witness = rdp_row.witness

    valid = [r for r in routes if r.applicable]
    if method is not None:
        chosen = next(r for r in routes if r.key == method)
        if not chosen.applicable:
            raise ConversionError(f"the {method} route does not apply to this pipeline: {chosen.note}")
        best = chosen
    elif valid:
        best = min(valid, key=lambda r: r.epsilon)  # every route is a valid bound: the min is too
    else:  # pragma: no cover - the RDP route applies to every mechanism renyi knows
        best = Route("none", "no route", math.inf, "no finite bound", applicable=False)

    step("shares")
    alpha = rdp_witness if rdp_witness is not None else 32.0
    per = []
    for e, g in zip(entries, gs):
        cg = _plain_curve(_routes._as_curve(g))
        per.append(e.count * float(cg.rdp(alpha)))
    tot = math.fsum(per)
    shares = []
    all_rho = all(r is not None for r in entry_rho) and rho_total
    for e, item, v, rho_e in zip(entries, aligned, per, entry_rho):
        alone = _routes.best_epsilon(item, d).value
        shares.append(Share(
            name=e.name, type=e.type, count=e.count, mechanism=describe(e),
            assumption=e.assumption + ("; converted to replace-one" if item[0] is not e.mechanism else ""),
            rdp=v, rdp_share=_share(v, tot, per),
            rho=rho_e, rho_share=(rho_e / rho_total if all_rho and rho_e is not None and rho_total else None),
            epsilon_alone=alone, half_width_95=noise_half_width(e.mechanism)))

    tpr: tuple[tuple[float, float, str], ...] = ()
    gdp: Any = None
    if tradeoff:
        step("trade-off")
        gdp = _gdp_statement(it)  # first: its deeper PLD samples serve the TPR rows too
        tpr = tuple((f, c.value, c.method) for f, c in
                    zip(_routes.DEFAULT_FPRS, _routes.tpr_bounds(it, _routes.DEFAULT_FPRS, method)))

    step("budget")
    status = _budget_status(pipeline, d, best, total, curve, rho_total, relation)

    return Report(
        source=pipeline.source, title=pipeline.title, delta=d, epsilon=best.epsilon, method=best.method,
        witness=best.witness, route=best.key, routes=tuple(routes), shares=tuple(shares), budget=status,
        guarantee=repr(total), rdp_witness=rdp_witness, rho=rho_total, warnings=tuple(warnings),
        tradeoff=tpr, gdp=gdp, total=total, curve=curve, entries=entries,
        neighbouring=relation, neighbouring_note=neighbouring_note(pipeline, aligned),
    )


def _gdp_statement(it: Any) -> Any:
    """The tightest certified μ-GDP statement (:func:`renyi.pld.gdp_mu`), None where none is
    known (no PLD engine, a mechanism without a known loss, or no finite μ)."""
    from renyi.core.errors import ConversionError

    pld = _routes.pld_available()
    if pld is None:
        return None
    try:
        b = pld.gdp_mu(list(it.items))
    except (ConversionError, ValueError):
        return None
    return b if math.isfinite(b.mu) else None


def describe(entry: Entry) -> str:
    """A short description of an entry's mechanism, e.g. ``gaussian(sigma=1.1, q=0.004267)``."""
    parts = [f"{k}={_short(v)}" for k, v in entry.params.items() if k != "neighbouring"]
    if entry.sampling is not None:
        parts.append(f"q={entry.sampling.rate:.4g}")
    if getattr(entry, "cells", 1) > 1:
        parts.append(f"{entry.cells} disjoint cells" if entry.disjoint else f"{entry.cells} cells")
    return f"{entry.type}({', '.join(parts)})"


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return "[" + ", ".join(_short(x) for x in v) + "]"
    return str(v)


def _share(v: float, tot: float, per: list[float]) -> float:
    if tot == 0.0:
        return 0.0
    if math.isfinite(tot):
        return v / tot
    n_inf = sum(1 for x in per if math.isinf(x))
    return 1.0 / n_inf if math.isinf(v) else 0.0


def _budget_status(pipeline: Pipeline, delta: float, best: Route, total: Guarantee, curve: Guarantee,
                   rho_total: float | None, relation: str = "add_remove") -> BudgetStatus | None:
    """The budget's verdict: the accountant's (one source of truth, :func:`renyi.accountant.check_budget`).

    The pipeline's entries are spent, in order, in an in-memory accountant with the budget,
    exactly as a run would spend them; "holds" is whether it admits them all, ``spent`` is
    the cost in its filter's terms (Σρ for a ρ budget; for an (ε, δ) budget the ε of the
    accountant's adaptive (ε, δ) filter). The tightest ε of the sequence fixed in advance
    (the report's ε at the budget's δ, e.g. from PLD) is given beside it as ``fixed_epsilon``:
    it is valid, but only for a sequence fixed in advance, so it does not decide.
    """
    b = pipeline.budget
    if b is None:
        return None
    from renyi.budget.accountant import check_budget
    from renyi.guarantees import ZCDP, PureDP

    items = [(e.mechanism, e.count) for e in pipeline.entries]
    if b.rho is not None:
        chk = check_budget(ZCDP(b.rho, neighbouring=relation), items)  # spends convert as compose does
        spent = chk.spent if chk.spent is not None else (rho_total if rho_total is not None else math.inf)
        if chk.holds:
            note = ""
        elif rho_total is None:
            note = "the pipeline has no zCDP guarantee, so a ρ budget cannot hold"
        else:
            note = f"the accountant refuses this pipeline: {chk.reason}"
        return _status("rho", b.rho, None, spent, chk.holds, note, chk.filter, None)
    assert b.epsilon is not None
    bd = b.delta if b.delta is not None else delta
    if bd == delta:
        fixed, how = best.epsilon, best.title
    elif bd == 0.0:
        fixed, how = min(_pure_eps(total), _pure_eps(curve)), "pure DP"
    else:
        fixed, how = min(total.epsilon(bd), curve.epsilon(bd)), "best conversion"
    budget = (PureDP(b.epsilon, neighbouring=relation) if bd == 0.0
              else ApproxDP(b.epsilon, bd, neighbouring=relation))
    chk = check_budget(budget, items)
    spent = chk.spent if chk.spent is not None else math.inf
    kind = "pure-DP filter" if bd == 0.0 else "adaptive (ε, δ) filter (RDP with a union bound over orders)"
    note = f"verdict of the accountant's {kind}"
    if chk.approx_delta:
        note += f", δ = {chk.approx_delta:.3g} of it reserved for the (ε, δ) steps"
    if not chk.holds and spent <= b.epsilon:
        note += f"; it refuses: {chk.reason}"
    if fixed < spent:
        note += f"; fixed in advance, the sequence has ε = {fixed:.6g} ({how})"
        if fixed <= b.epsilon < spent:
            note += ", within the budget, but a run's accountant cannot use it"
    return _status("epsilon", b.epsilon, bd, spent, chk.holds, note, chk.filter, fixed)


def _status(kind: str, limit: float, delta: float | None, spent: float, holds: bool, note: str, filt: str,
            fixed: float | None) -> BudgetStatus:
    remaining = limit - spent
    if not holds and remaining >= 0.0:
        remaining = -math.inf  # refused for another reason than the amount (printed without "by")
    return BudgetStatus(kind, limit, delta, spent, remaining, holds, note=note, filter=filt, fixed_epsilon=fixed)
