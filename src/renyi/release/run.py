"""Running a release: spec → plan → checks → exact aggregates → spend → noise → files.

The order is what makes a release safe:

1. the spec is parsed and the plan made (bad input is a :class:`SpecError`; nothing read);
2. the output directory, the ledger and the table's schema are checked, the privacy unit is
   checked for NULLs, and the budget is checked (nothing spent yet);
3. the engine computes the exact aggregates under the contribution bounds;
4. the whole release is spent on the ledger in one transaction (refused: nothing is
   recorded and nothing written, :class:`~renyi.errors.BudgetExceededError`);
5. only then is noise drawn and are the files written, all at once
   (:func:`~renyi.release.output.write_release`). A failure after the spend stays spent and
   is recorded in the ledger as a zero-cost entry naming the failure.
"""

from __future__ import annotations

import math
import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from renyi.release.engine import Aggregates
from renyi.release.noise import QueryResult, add_noise
from renyi.release.plan import COVERAGE, RATIO_TYPES, Plan, make_plan
from renyi.release.spec import MAX_QUANTILE_CELLS, ReleaseSpec, SpecError, load_spec, output_stem, parse_spec

__all__ = ["ReleaseResult", "release", "resolve_spec", "release_report", "default_out_dir", "validate_columns",
           "privacy_unit_text"]


@dataclass(frozen=True)
class ReleaseResult:
    """What a release did (or, for a dry run, would do).

    Attributes:
        plan: the plan (sensitivities, ρ shares, noise, expected accuracy).
        report: the privacy report of the release (:class:`renyi.report.Report`).
        dry_run: True if nothing was read, spent or written.
        out_dir: the output directory (None for a dry run).
        files: the written files.
        results: the released vectors (empty for a dry run).
        spend: the ledger entry of the release (None for a dry run).
        release_id: a random identifier, in the ledger label and the manifest.
        manifest: the content of ``release.json``.
        truncation: the effect of the contribution bounds measured on the spec's public
            table (:func:`truncation_effect`), or None.
    """

    plan: Plan
    report: Any
    dry_run: bool
    out_dir: str | None = None
    files: tuple[str, ...] = ()
    results: tuple[QueryResult, ...] = ()
    spend: Any = None
    release_id: str = ""
    manifest: dict[str, Any] = field(default_factory=dict)
    truncation: dict[str, Any] | None = None

    @property
    def rho(self) -> float:
        """ρ spent (or to be spent) by the release."""
        return self.plan.rho


def resolve_spec(spec: Any) -> ReleaseSpec:
    """A :class:`ReleaseSpec` from a path, a dict (paths relative to the current directory) or a spec."""
    if isinstance(spec, ReleaseSpec):
        return spec
    if isinstance(spec, (str, os.PathLike)):
        return load_spec(spec)
    if isinstance(spec, Mapping):
        return parse_spec(spec, base_dir=os.getcwd())
    raise TypeError(f"spec must be a path, a dict or a ReleaseSpec; got {type(spec).__name__}")


def default_out_dir(spec: ReleaseSpec) -> str:
    """``[output] dir``, else ``<spec name>-release`` next to the spec (``./release`` for a dict)."""
    if spec.out_dir is not None:
        return spec.out_dir
    if spec.source != "<dict>":
        stem = os.path.splitext(os.path.basename(spec.source))[0]
        return os.path.join(os.path.dirname(os.path.abspath(spec.source)), f"{stem}-release")
    return os.path.abspath("release")


def privacy_unit_text(spec: ReleaseSpec) -> str:
    """The neighbouring relation of a release in its own words: what one neighbour differs by.

    A release is stated for one *person* (the privacy unit) added or removed with all the rows
    the release keeps of them, not for one record:

        >>> from renyi.release.spec import parse_spec
        >>> s = parse_spec({"data": {"source": "t.csv", "privacy_unit": "person_id", "max_rows_per_unit": 3},
        ...                 "privacy": {"budget": {"rho": 0.5}}, "query": [{"type": "count"}]})
        >>> privacy_unit_text(s)
        "one person (privacy unit 'person_id'), up to 3 rows, added or removed"
    """
    m = spec.data.max_rows_per_unit
    rows = "1 row" if m == 1 else f"up to {m} rows"
    return f"one person (privacy unit {spec.data.privacy_unit!r}), {rows}, added or removed"


def _entry_params(m: Any) -> dict[str, Any]:
    """A measurement's parameters as the report shows them, in the release's output units (the
    unit of one noise step is the query's granularity), as the plan shows them."""
    pname, pval = m.noise_parameter
    if m.kind.startswith("quantile"):
        return {"epsilon": pval, "score_sensitivity": float(m.mechanism.sensitivity), "quantile": m.quantile,
                "groups_per_person": m.runs}
    if m.kind == "discovery":
        return {pname: pval, "sensitivity": float(m.mechanism.sensitivity), "threshold": m.threshold,
                "delta": m.delta}
    params: dict[str, Any] = {pname: pval * m.unit, "sensitivity": float(m.mechanism.sensitivity) * m.unit,
                              "cells": m.cells}
    if m.unit != 1.0:
        params["unit"] = m.unit
    return params


def release_report(plan: Plan) -> Any:
    """The privacy report of the release: every measurement as one vector release, composed.

    The same report as ``renyi report`` (through every definition), with the release's ρ
    budget; each entry is one vector release (count 1), as parallel composition allows.
    Noise parameters and the 95 % half-widths are in the release's output units (as in the
    plan), and the neighbouring relation is named by the privacy unit
    (:func:`privacy_unit_text`).
    """
    import dataclasses

    from renyi.pipeline import Budget, Entry, Pipeline
    from renyi.report import compute_report, noise_half_width

    entries = []
    for m in plan.measurements:
        pname, _ = m.noise_parameter
        if m.kind == "discovery":
            kind, mech = "gaussian_thresholding", m.spend_item
        elif m.kind.startswith("quantile"):
            kind, mech = "exponential", m.mechanism
        else:
            kind, mech = ("discrete_gaussian" if pname == "sigma" else "discrete_laplace"), m.mechanism
        entries.append(Entry(name=f"{m.query} ({m.kind}{'' if m.quantile is None else f' {m.quantile:g}'})",
                             type=kind, mechanism=mech, count=m.runs, params=_entry_params(m)))
    spec = plan.spec
    approx = plan.delta > 0.0
    # an approximate-zCDP release is checked against its own (ρ, δ) below (a ρ budget has no δ)
    p = Pipeline(entries=tuple(entries), delta=spec.delta, budget=None if approx else Budget(rho=spec.rho),
                 source=spec.source, title=spec.name)
    report = compute_report(p)
    unit_words = privacy_unit_text(spec)
    shares = []
    for s, m in zip(report.shares, plan.measurements):
        hw = noise_half_width(m.mechanism) if m.kind not in ("discovery", "quantile", "quantile_lower",
                                                             "quantile_upper") else None
        shares.append(dataclasses.replace(
            s, half_width_95=None if hw is None else hw * m.unit,
            assumption=s.assumption.replace("add/remove neighbours", unit_words)))
    out = dataclasses.replace(report, shares=tuple(shares), neighbouring_note=unit_words)
    if approx:
        from renyi.report import BudgetStatus

        limit_d = spec.budget["delta"] if "rho" in spec.budget else spec.discovery_delta
        holds = plan.rho <= spec.rho and plan.delta <= limit_d
        out = dataclasses.replace(out, budget=BudgetStatus(
            kind="rho", limit=spec.rho, delta=limit_d, spent=plan.rho, remaining=spec.rho - plan.rho, holds=holds,
            note=f"δ-approximate zCDP: key discovery spends δ = {plan.delta:.6g} of {limit_d:.6g}",
            filter="zCDP filter with a δ for key discovery (Σρ ≤ ρ, Σδ ≤ δ; [BS16] §8)"))
    return out


INTERVALS_COVER = (
    "Each interval covers the exact aggregate of the rows the release kept (at most max_rows_per_unit rows per "
    "individual, and the per-query group and row bounds), after clamping and rounding, with at least the stated "
    "probability, cell by cell. It accounts for the noise only: rows dropped by the contribution bounds and "
    "values changed by clamping move the exact aggregate away from the aggregate of the whole table, and no "
    "interval covers that difference (a bias chosen by the spec; see the truncation effect, measured on public "
    "data when the spec names one).")


def report_document(plan: Plan, report: Any, truncation: dict[str, Any] | None = None) -> dict[str, Any]:
    """``report.json``: the privacy report, plus what the intervals cover (and the truncation
    effect measured on public data, when the spec names a public table)."""
    doc = dict(report.to_dict())
    doc["intervals"] = {"cover": INTERVALS_COVER,
                        "queries": {qp.query.name: {"coverage": qp.coverage, "interval": interval_text(qp),
                                                    "missing": missing_text(qp.query)}
                                    for qp in plan.queries},
                        "truncation_effect": truncation}
    return doc


def check_aggregates(plan: Plan, exact: Mapping[str, Mapping[str, Any]]) -> None:
    """Every vector the plan's measurements need came back from the engine, with its length
    (checked before the spend: an engine that does not compute a query type fails cleanly).

    Raises:
        SpecError: naming the query and the missing aggregate.
    """
    need = {"count": "count", "sum": "sum", "sum2": "sum2", "distinct": "distinct", "discovery": "persons",
            "quantile": "count", "quantile_lower": "count", "quantile_upper": "count"}
    for qp in plan.queries:
        q = qp.query
        got = exact.get(q.name, {})
        cells = q.cells
        if q.discover:
            if "keys" not in got:
                raise SpecError(f"query {q.name!r}: the engine did not return the groups of the data, which "
                                "keys = \"discover\" needs (see renyi.release.engine)", name="keys")
            cells = len(got["keys"])
        per = len(q.candidates) if q.type == "quantile" else (len(q.bins) - 1 if q.bins is not None else 1)
        for m in qp.measurements:
            key = need[m.kind]
            extra = ("count",) if m.kind in ("sum", "sum2") else ()
            for k in (key, *extra):
                if k not in got:
                    raise SpecError(f"query {q.name!r}: the engine did not compute {k!r}, which a {q.type} query "
                                    "needs (see renyi.release.engine)", name=k)
                size = cells * per if k == "count" else cells
                if len(got[k]) != size:
                    raise SpecError(f"query {q.name!r}: the engine returned {len(got[k])} values of {k!r}; "
                                    f"expected {size}", name=k)
        if q.type == "quantile" and q.discover and cells * per > MAX_QUANTILE_CELLS:
            raise SpecError(f"query {q.name!r}: {cells} groups × {per} candidates exceed {MAX_QUANTILE_CELLS} "
                            "counts; use a coarser granularity", name="granularity")


def exact_statistic(qp: Any, agg: dict[str, Any]) -> Any:
    """The statistic a query releases, computed without noise from exact aggregates (NaN where
    a ratio has no rows). Used on public data only."""
    import numpy as np

    q = qp.query
    n = agg["count"].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if q.type in ("count", "histogram"):
            return n
        if q.type == "count_distinct":
            return agg["distinct"].astype(float)
        if q.type == "quantile":
            return exact_quantiles(q, agg["count"])
        g = q.granularity
        s = agg["sum"].astype(float)
        if q.type == "sum":
            return s * g
        if q.type == "mean":
            return np.where(n > 0, s / n, np.nan) * g
        c = float(next(m.centre for m in qp.measurements if m.kind == "sum2"))
        sc = s - c * n
        var = np.where(n > 0, agg["sum2"].astype(float) / n - (sc / n) ** 2, np.nan) * g * g
        return np.sqrt(np.maximum(var, 0.0)) if q.type == "std" else var


def exact_quantiles(q: Any, counts: Any) -> Any:
    """The smallest q-quantile of every group (group-major over the quantiles), from the counts
    over the candidate grid; NaN for an empty group. Used on public data only."""
    import numpy as np

    cands = np.asarray(q.candidates, dtype=np.float64)
    h = np.asarray(counts, dtype=np.float64).reshape(-1, cands.size)
    up = np.cumsum(h, axis=1)
    n = up[:, -1]
    out = np.full((h.shape[0], len(q.quantiles)), np.nan)
    for j, qq in enumerate(q.quantiles):
        first = np.argmax(up >= qq * n[:, None], axis=1)
        out[:, j] = np.where(n > 0, cands[first], np.nan)
    return out.reshape(-1)


def truncation_effect(plan: Plan) -> dict[str, Any] | None:
    """How much the contribution bounds move each query's exact statistic, on public data.

    The spec's ``[data] public`` table (same columns; synthetic data or an earlier public
    table) is aggregated twice by the engine, with the spec's bounds and with none, and the
    differences summarised per query: the relative change of the total (additive statistics),
    and the median and largest absolute change over the cells. Public data costs no privacy;
    the figures say how far the exact aggregates the intervals cover can be from those of the
    whole table, which no interval covers. Clamping to ``bounds`` is part of both runs (it
    defines the statistic).

    Returns:
        None when the spec names no public table; else a JSON-ready dict.
    """
    import dataclasses

    import numpy as np

    from renyi.release.backends import open_engine

    spec = plan.spec
    if spec.data.public is None:
        return None
    pub = spec.data.public
    fmt = "parquet" if pub.lower().endswith((".parquet", ".pq")) else "csv"
    data = dataclasses.replace(spec.data, source=pub, format=fmt, table=None)
    if fmt != "csv":  # the spec's CSV options are for CSV files only
        data = dataclasses.replace(data, null_strings=None, delimiter=None, header=True, columns=None)
    # discovered keys differ between the two runs: their effect is not measured
    public_qs = tuple(q for q in spec.queries if not q.discover)
    if not public_qs:
        return {"public": pub, "queries": {}}
    spec = dataclasses.replace(spec, queries=public_qs, discovery_delta=0.0)
    free_q = tuple(dataclasses.replace(q, max_groups_per_unit=None, max_rows_per_group=None,
                                       max_distinct_per_unit=None, target=None) for q in spec.queries)
    bounded = make_plan(dataclasses.replace(spec, data=data,
                                            queries=tuple(dataclasses.replace(q, target=None) for q in spec.queries)))
    free = make_plan(dataclasses.replace(spec, data=dataclasses.replace(data, max_rows_per_unit=2**31 - 1,
                                                                        max_groups_per_unit=None,
                                                                        max_rows_per_group=None), queries=free_q))
    with open_engine(spec, data) as eng:
        validate_columns(bounded, eng.columns())
        a = eng.aggregate(bounded, 1)
        b = eng.aggregate(free, 1)
    out: dict[str, Any] = {"public": pub, "queries": {}}
    for qb, qf in zip(bounded.queries, free.queries):
        x = exact_statistic(qb, a[qb.query.name])
        y = exact_statistic(qf, b[qf.query.name])
        ok = np.isfinite(x) & np.isfinite(y)
        d = np.abs(x[ok] - y[ok])
        row: dict[str, Any] = {
            "median_abs_change": float(np.median(d)) if d.size else 0.0,
            "max_abs_change": float(d.max()) if d.size else 0.0,
        }
        if qb.query.type not in (*RATIO_TYPES, "quantile"):
            tot = float(np.sum(y[ok]))
            row["total_relative_change"] = float((np.sum(x[ok]) - tot) / tot) if tot else 0.0
        out["queries"][qb.query.name] = row
    return out


def validate_columns(plan: Plan, columns: Mapping[str, Any]) -> None:
    """Every column the plan names exists, and summed columns are numeric.

    Raises:
        SpecError: naming the first missing or non-numeric column and the query.
    """
    spec = plan.spec
    have = ", ".join(columns)

    def need(where: str, c: str) -> Any:
        if c not in columns:
            raise SpecError(f"{where}: column {c!r} is not in {spec.data.source} (columns: {have})", name=c)
        return columns[c]

    need("data: privacy_unit", spec.data.privacy_unit)
    for q in spec.queries:
        where = f"query {q.name!r}"
        for c in q.by:
            need(f"{where}: by", c)
        if q.column is not None:
            col = need(f"{where}: column", q.column)
            if not col.numeric and q.type != "count_distinct":
                verb = "binned" if q.type == "histogram" else "summed"
                raise SpecError(f"{where}: column {q.column!r} must be numeric to be {verb}; it is {col.type}",
                                name=q.column)


def _budget_guarantee(rho: float, budget: Mapping[str, float], discovery_delta: float) -> Any:
    """The ledger budget of a release budget: ρ-zCDP, or δ-approximate ρ-zCDP when it has a δ
    for key discovery (all of a ``{rho, delta}`` budget's δ; the discovery part of an
    ``{epsilon, delta}`` budget's)."""
    from renyi.guarantees import ZCDP, ApproxZCDP

    if "rho" in budget and "delta" in budget:
        return ApproxZCDP(rho, 0.0, budget["delta"])
    if discovery_delta > 0.0:
        return ApproxZCDP(rho, 0.0, discovery_delta)
    return ZCDP(rho)


def check_missing(plan: Plan, engine: Any) -> None:
    """No column read under ``missing = "error"`` holds NULL, NaN or ±inf (before any spend).

    Raises:
        SpecError: naming the query, the column and how many rows (the curator's own data: the
            count is in the message, never in the release).
    """
    from renyi.release.spec import MISSING_TYPES

    counted: dict[str, int] = {}
    for qp in plan.queries:
        q = qp.query
        if q.type not in MISSING_TYPES or q.missing != "error" or q.column is None:
            continue
        if q.column not in counted:
            counted[q.column] = int(engine.missing_count(q.column))
        n = counted[q.column]
        if n:
            raise SpecError(f"query {q.name!r}: column {q.column!r} has {n} row(s) with NULL, NaN or ±inf; set "
                            "missing = \"drop\" or a replacement value within the bounds", name="missing", value=n)


def _open_accountant(spec: ReleaseSpec) -> Any:
    from renyi.budget.accountant import Accountant

    if spec.ledger is None:
        return Accountant(_budget_guarantee(spec.rho, spec.budget, spec.discovery_delta))
    if os.path.exists(spec.ledger):
        return Accountant(None, ledger=spec.ledger)  # the ledger keeps its own budget
    if not os.path.isdir(os.path.dirname(os.path.abspath(spec.ledger))):
        raise SpecError(f"privacy: ledger {spec.ledger}: its directory does not exist", name="ledger")
    if spec.ledger_budget is not None:
        from renyi.release.spec import parse_budget

        total, b = parse_budget("privacy.ledger_budget", spec.ledger_budget)
        dd = spec.discovery_delta if "epsilon" in b else 0.0
        if dd > 0.0:  # the ledger's δ for discovery comes out of its (ε, δ), as for the release's
            from renyi.guarantees.conversions import zcdp_rho_for

            if dd >= b["delta"]:
                raise SpecError(f"privacy: ledger_budget's delta must exceed the δ of key discovery, {dd:.6g}",
                                name="ledger_budget")
            total = zcdp_rho_for(b["epsilon"], (b["delta"] - dd) / (1.0 - dd))
        return Accountant(_budget_guarantee(total, b, dd), ledger=spec.ledger)
    return Accountant(_budget_guarantee(spec.rho, spec.budget, spec.discovery_delta), ledger=spec.ledger)


def _label(spec: ReleaseSpec, plan: Plan, rid: str) -> str:
    qs = ", ".join(f"{qp.query.name} ({qp.query.type})" for qp in plan.queries)
    return f"release {spec.name} [{rid}]: {qs}"


def _num(x: float) -> Any:
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _centring_text(m: Any, q: Any) -> str | None:
    if m.kind == "sum" and q.type in RATIO_TYPES:
        lo_u, hi_u = math.floor(q.bounds[0] / q.granularity), math.ceil(q.bounds[1] / q.granularity)
        b = m.sensitivity.per_row
        return (f"centred: the noisy vector is Σ(v − {m.centre}) over the rows, v = round(clamp(x)/{q.granularity:g}) "
                f"∈ [{lo_u}, {hi_u}], so one row moves it by |v − {m.centre}| ≤ {b} (uncentred: "
                f"{max(abs(lo_u), abs(hi_u))}); the noisy count × {m.centre} is added back after the noise "
                "(post-processing, no privacy cost)")
    if m.kind == "sum2":
        b2 = m.shift + m.sensitivity.per_row
        return (f"centred squares: the noisy vector is Σ((v − {m.centre})² − {m.shift}) over the rows; (v − {m.centre})² "
                f"∈ [0, {b2}], so one row moves it by ≤ max({m.shift}, {b2} − {m.shift}) = {m.sensitivity.per_row}")
    return None


def missing_text(q: Any) -> str | None:
    """What the release did with rows whose column is NULL, NaN or ±inf, in words (None when
    the query reads no numeric column). The number of such rows is never released."""
    from renyi.release.spec import MISSING_TYPES

    if q.type not in MISSING_TYPES:
        return None
    if q.missing == "error":
        return (f"none: the release checked that {q.column!r} has no NULL, NaN or ±inf value (it would have "
                "failed before any spend)")
    if q.missing == "drop":
        return (f"rows whose {q.column!r} is NULL, NaN or ±inf take no part in this query (the rows each person keeps "
                "are chosen first)")
    return f"NULL, NaN and ±inf in {q.column!r} were replaced by {q.missing:g} (within the bounds)"


def interval_text(qp: Any) -> str:
    """What a query's intervals cover, in words (also in ``release.json``)."""
    q = qp.query
    cov = qp.coverage
    tail = ("The interval covers the noise only: not which rows the per-person contribution bounds kept, nor "
            "values changed by clamping or rounding.")
    if q.type == "quantile":
        return (f"[lower, upper] from two more exponential mechanisms over the grid (each on the group padded with "
                f"values at both bounds, failing with probability ≤ {(1 - cov) / 2:g}): contains every q-quantile "
                f"of the group's kept, clamped values rounded to the grid with probability ≥ {cov:g} per group and "
                "quantile (union bound), whatever the group's size; the value is the exponential mechanism's "
                "choice (no coverage of its own). " + tail)
    if q.type in RATIO_TYPES:
        k = len(qp.measurements)
        return (f"the range of the {q.type} over the box of its {k} measurements' intervals, each at coverage "
                f"{1 - (1 - cov) / k:.6g}: covers the exact {q.type} of the kept, clamped, rounded values with "
                f"probability ≥ {cov:g} per group with at least one row (union bound). " + tail)
    if "consistent" in q.post:
        return (f"a bound after the least-squares projection (not the exact noise quantile): covers the exact "
                f"aggregate with probability ≥ {cov:g} per cell, by the subgaussian tail of the discrete Gaussian "
                "(Chebyshev for the discrete Laplace). " + tail)
    return (f"value ± the exact {cov:g}-quantile of |noise|: covers the exact aggregate with probability ≥ {cov:g}, "
            "cell by cell. " + tail)


def _manifest(plan: Plan, rid: str, spend: Any, files: list[str]) -> dict[str, Any]:
    spec = plan.spec
    queries = []
    for qp, f in zip(plan.queries, files):
        q = qp.query
        ms = []
        for m in qp.measurements:
            pname, pval = m.noise_parameter
            # every figure in output units (one noise step is `unit`), as in the plan and the report
            row = {"kind": m.kind, "noise": m.noise_name, pname: pval * m.unit, "rho": m.achieved_rho,
                   "rho_share": m.rho, "l1": m.sensitivity.l1 * m.unit, "l2": m.sensitivity.l2 * m.unit,
                   "derivation": m.derivation(), "unit": m.unit,
                   "half_width_95": m.half_width * m.unit if q.type not in RATIO_TYPES and m.coverage == COVERAGE
                   else None,
                   "half_width": m.half_width * m.unit, "coverage": m.coverage}
            if m.kind.startswith("quantile"):
                row.update(half_width_95=None, half_width=None, quantile=m.quantile, runs=m.runs,
                           score_sensitivity=float(m.mechanism.sensitivity), eta=float(m.mechanism.eta),
                           candidates=len(q.candidates), slack=m.slack or None)
            if m.kind == "discovery":
                row.update(half_width_95=None, half_width=None, threshold=m.threshold, delta=m.delta,
                           how=("Gaussian thresholding: a group of the data is released when its number of people "
                                f"(each counted in at most {m.sensitivity.groups} groups) plus discrete Gaussian "
                                f"noise reaches {m.threshold}; δ = 1 − (1 − P[1 + Z ≥ τ])^k"))
            c = _centring_text(m, q)
            if c is not None:
                row["centring"] = c
                row["centre"] = m.centre * q.granularity
            if m.level is not None:
                row["level"] = list(m.level)
                row["cells"] = m.cells
            ms.append(row)
        queries.append({"name": q.name, "type": q.type, "file": f, "by": list(q.by), "cells": q.released_cells,
                        "column": q.column, "bounds": list(q.bounds) if q.bounds else None,
                        "granularity": q.granularity, "weight": None if q.target is not None else q.weight,
                        "target": None if q.target is None else {"half_width": q.target.half_width,
                                                                 "coverage": q.target.coverage},
                        "rho": qp.rho, "coverage": qp.coverage, "interval": interval_text(qp),
                        "bins": list(q.bins) if q.bins is not None else None,
                        "max_distinct_per_unit": q.max_distinct_per_unit, "post": list(q.post),
                        "max_groups_per_unit": q.max_groups_per_unit, "max_rows_per_group": q.max_rows_per_group,
                        "quantiles": None if q.quantiles is None else list(q.quantiles),
                        "missing": missing_text(q), "keys": "discover" if q.discover else q.key_source,
                        "discovery_delta": q.discovery_delta,
                        "measurements": ms})
    return {
        "format": "renyi-release",
        "release_id": rid,
        "time": time.time(),
        "spec": spec.source,
        "source": spec.data.source,
        "privacy_unit": spec.data.privacy_unit,
        "neighbours": privacy_unit_text(spec),
        "max_rows_per_unit": spec.data.max_rows_per_unit,
        "budget": dict(spec.budget),
        "rho_budget": spec.rho,
        "rho_spent": plan.rho,
        "delta_spent": plan.delta,
        "ledger": spec.ledger,
        "ledger_spend_id": None if spend is None else spend.id,
        "coverage": COVERAGE,
        "queries": queries,
    }


def output_files(plan: Plan, results: list[QueryResult], fmt: str) -> list[tuple[str, QueryResult]]:
    """(file stem, result) of every file: one per query, plus one per coarser level of a
    ``consistent`` query (``<stem>.total``, ``<stem>.by_<column>``)."""
    out = []
    for qp, res in zip(plan.queries, results):
        stem = output_stem(qp.query)
        out.append((stem, res))
        for lv in res.levels:
            suffix = "total" if not lv.by else "by_" + "_".join(lv.by)
            out.append((f"{stem}.{output_stem_text(suffix)}", lv))
    return out


def output_stem_text(text: str) -> str:
    import re

    return re.sub(r"[^\w.-]+", "_", text).strip("._") or "level"


def release(spec: Any, *, dry_run: bool = False, out: str | os.PathLike[str] | None = None,
            rng: Any = None, salt: int | None = None, hook: Any = None) -> ReleaseResult:
    """Release the statistics a spec describes, under its zCDP budget, with 95 % intervals.

    Args:
        spec: a spec file (TOML/JSON), a dict with the same keys, or a parsed
            :class:`~renyi.release.spec.ReleaseSpec`.
        dry_run: only plan: σ, ρ share, sensitivity and expected accuracy of every query, and
            the privacy report; no row is read, nothing is spent or written.
        out: output directory (default: ``[output] dir``, else ``<spec>-release`` next to the
            spec); it must not exist or be empty.
        rng: None (secure randomness, the default) or a ``numpy.random.Generator``
            (reproducible, **not** secure: for tests).
        salt: the salt of the random choice of rows (default: 63 bits from the OS's CSPRNG);
            tests fix it to compare tables.
        hook: called with a stage name at each step (tests use it to simulate crashes).

    Returns:
        A :class:`ReleaseResult`; its ``report`` is the privacy report of the release and its
        ``spend`` the ledger entry.

    Raises:
        SpecError: bad spec, missing column, NULLs in the privacy unit, unusable output
            directory: raised before anything is spent.
        BudgetExceededError: the ledger's budget would be exceeded; nothing was recorded or
            written.
        LedgerError: the ledger is corrupted or foreign.
    """
    step = hook or (lambda stage: None)
    s = resolve_spec(spec)
    plan = make_plan(s)
    report = release_report(plan)
    if dry_run:
        return ReleaseResult(plan=plan, report=report, dry_run=True, truncation=truncation_effect(plan))

    out_dir = os.path.abspath(os.fspath(out)) if out is not None else default_out_dir(s)
    from renyi.release.output import check_out_dir, reserve_out_dir

    check_out_dir(out_dir)
    _check_ledger_outside(s, out_dir)
    with reserve_out_dir(out_dir):
        return _release(s, plan, report, out_dir, rng, salt, step)


def _check_ledger_outside(s: ReleaseSpec, out_dir: str) -> None:
    """A ledger inside the output directory makes it non-empty before the rename: refused
    before the spend (it failed after it)."""
    if s.ledger is None:
        return
    led, out = os.path.realpath(s.ledger), os.path.realpath(out_dir)
    if led == out or led.startswith(out.rstrip(os.sep) + os.sep):
        raise SpecError(f"privacy: ledger {s.ledger} is inside the output directory {out_dir}; keep the ledger "
                        "elsewhere (the output directory is written all at once, and must be new or empty)",
                        name="ledger", value=s.ledger)


#: the largest noisy value written: ints beyond 2⁶² are not exact in the output formats' int64
_INT64_ROOM = 2.0**62


def check_fits_int64(plan: Plan, exact: Aggregates) -> None:
    """Every noisy integer the release will draw fits in int64 (checked before the spend).

    The noise is bounded by 1000 scale units (a discrete Gaussian or Laplace draw beyond that
    has probability below 10⁻⁴³⁴); a σ near 10¹⁶ once passed every check, was spent, and then
    overflowed.
    """
    for qp in plan.queries:
        agg = exact.get(qp.query.name, {})
        for m in qp.measurements:
            _, scale = m.noise_parameter
            top = max((float(np.max(np.abs(v))) for k, v in agg.items() if k != "keys" and np.size(v)), default=0.0)
            if not top + 1000.0 * float(scale) < _INT64_ROOM:
                raise SpecError(f"query {qp.query.name!r}: its noise (scale {float(scale):.6g}) is too large to "
                                "release as 64-bit integers; raise the budget, narrow the bounds or coarsen the "
                                "granularity", name=qp.query.name, value=float(scale))


def _release(s: ReleaseSpec, plan: Plan, report: Any, out_dir: str, rng: Any, salt: int | None,
             step: Any) -> ReleaseResult:
    from renyi.guarantees.composition import compose
    from renyi.guarantees import ZCDP
    from renyi.release.backends import open_engine
    from renyi.release.output import write_release

    acct = _open_accountant(s)
    try:
        total = plan.spend()
        if not acct.can_spend(total):
            acct.spend(total)  # raises BudgetExceededError with the accountant's own message
        with open_engine(s) as engine:
            validate_columns(plan, engine.columns())
            nulls = engine.null_count(s.data.privacy_unit)
            if nulls:
                raise SpecError(f"data: the privacy unit {s.data.privacy_unit!r} has {nulls} NULL value(s); "
                                "every row must belong to an identified individual", name=s.data.privacy_unit,
                                value=nulls)
            check_missing(plan, engine)
            if salt is None:
                from renyi.mechanisms.samplers import secure_rng

                # from the secure generator (os.urandom): the row choice cannot be predicted
                salt = int(secure_rng().integers(0, 2**63))
            step("aggregating")
            exact = engine.aggregate(plan, salt)
            check_aggregates(plan, exact)
        check_fits_int64(plan, exact)
        truncation = truncation_effect(plan)  # public data: before the spend, at no cost
        rid = secrets.token_hex(6)
        step("spending")
        spend = acct.spend(total, label=_label(s, plan, rid))
        step("spent")
        try:
            results = add_noise(plan, exact, rng)
            outs = output_files(plan, results, s.out_format)
            names = [f"{output_stem(qp.query)}.{s.out_format}" for qp in plan.queries]
            manifest = _manifest(plan, rid, spend, names)
            manifest["truncation_effect"] = truncation
            docs = {"report.json": report_document(plan, report, truncation), "release.json": manifest}
            files = write_release(out_dir, outs, s.out_format, docs, hook=step)
        except BaseException as e:
            try:
                acct.spend(ZCDP(0.0), label=f"release [{rid}] FAILED after its spend #{spend.id} "
                                            f"(spent, nothing written): {type(e).__name__}: {e}"[:500])
            except Exception:  # the original error matters more; the spend itself is recorded
                pass
            raise
        step("done")
        return ReleaseResult(plan=plan, report=report, dry_run=False, out_dir=out_dir, files=tuple(files),
                             results=tuple(results), spend=spend, release_id=rid, manifest=manifest,
                             truncation=truncation)
    finally:
        acct.close()
