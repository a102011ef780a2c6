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
from renyi.release.plan import COVERAGE, Plan, make_plan
from renyi.release.spec import ReleaseSpec, SpecError, load_spec, output_stem, parse_spec

__all__ = ["ReleaseResult", "release", "resolve_spec", "release_report", "default_out_dir", "validate_columns"]


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


def release_report(plan: Plan) -> Any:
    """The privacy report of the release: every measurement as one vector release, composed.

    The same report as ``renyi report`` (through every definition), with the release's ρ
    budget; each entry is one vector release (count 1), as parallel composition allows.
    """
    from renyi.pipeline import Budget, Entry, Pipeline
    from renyi.report import compute_report

    entries = []
    for m in plan.measurements:
        pname, pval = m.noise_parameter
        params = {pname: pval, "sensitivity": m.mechanism.sensitivity, "cells": m.cells}
        kind = "discrete_gaussian" if pname == "sigma" else "discrete_laplace"
        entries.append(Entry(name=f"{m.query} ({m.kind})", type=kind, mechanism=m.mechanism, count=1,
                             params=params))
    spec = plan.spec
    p = Pipeline(entries=tuple(entries), delta=spec.delta, budget=Budget(rho=spec.rho), source=spec.source,
                 title=spec.name)
    return compute_report(p)


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
            if not col.numeric:
                raise SpecError(f"{where}: column {q.column!r} must be numeric to be summed; it is {col.type}",
                                name=q.column)


def _open_accountant(spec: ReleaseSpec) -> Any:
    from renyi.budget.accountant import Accountant
    from renyi.guarantees import ZCDP

    if spec.ledger is None:
        return Accountant(ZCDP(spec.rho))
    if os.path.exists(spec.ledger):
        return Accountant(None, ledger=spec.ledger)  # the ledger keeps its own budget
    if not os.path.isdir(os.path.dirname(os.path.abspath(spec.ledger))):
        raise SpecError(f"privacy: ledger {spec.ledger}: its directory does not exist", name="ledger")
    total = spec.rho
    if spec.ledger_budget is not None:
        from renyi.release.spec import parse_budget

        total, _ = parse_budget("privacy.ledger_budget", spec.ledger_budget)
    return Accountant(ZCDP(total), ledger=spec.ledger)


def _label(spec: ReleaseSpec, plan: Plan, rid: str) -> str:
    qs = ", ".join(f"{qp.query.name} ({qp.query.type})" for qp in plan.queries)
    return f"release {spec.name} [{rid}]: {qs}"


def _num(x: float) -> Any:
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _manifest(plan: Plan, rid: str, spend: Any, files: list[str]) -> dict[str, Any]:
    spec = plan.spec
    queries = []
    for qp, f in zip(plan.queries, files):
        q = qp.query
        ms = []
        for m in qp.measurements:
            pname, pval = m.noise_parameter
            ms.append({"kind": m.kind, "noise": m.noise_name, pname: pval, "rho": m.achieved_rho,
                       "rho_share": m.rho, "l1": m.sensitivity.l1, "l2": m.sensitivity.l2,
                       "derivation": m.sensitivity.derivation(), "unit": m.unit,
                       "half_width_95": m.half_width * m.unit if q.type != "mean" else None})
        queries.append({"name": q.name, "type": q.type, "file": f, "by": list(q.by), "cells": q.cells,
                        "column": q.column, "bounds": list(q.bounds) if q.bounds else None,
                        "granularity": q.granularity, "weight": q.weight, "rho": qp.rho,
                        "max_groups_per_unit": q.max_groups_per_unit, "max_rows_per_group": q.max_rows_per_group,
                        "measurements": ms})
    return {
        "format": "renyi-release",
        "release_id": rid,
        "time": time.time(),
        "spec": spec.source,
        "source": spec.data.source,
        "privacy_unit": spec.data.privacy_unit,
        "max_rows_per_unit": spec.data.max_rows_per_unit,
        "budget": dict(spec.budget),
        "rho_budget": spec.rho,
        "rho_spent": plan.rho,
        "ledger": spec.ledger,
        "ledger_spend_id": None if spend is None else spend.id,
        "coverage": COVERAGE,
        "queries": queries,
    }


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
        return ReleaseResult(plan=plan, report=report, dry_run=True)

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
            top = max((float(np.max(np.abs(v))) for v in agg.values() if np.size(v)), default=0.0)
            if not top + 1000.0 * float(scale) < _INT64_ROOM:
                raise SpecError(f"query {qp.query.name!r}: its noise (scale {float(scale):.6g}) is too large to "
                                "release as 64-bit integers; raise the budget, narrow the bounds or coarsen the "
                                "granularity", name=qp.query.name, value=float(scale))


def _release(s: ReleaseSpec, plan: Plan, report: Any, out_dir: str, rng: Any, salt: int | None,
             step: Any) -> ReleaseResult:
    from renyi.guarantees.composition import compose
    from renyi.guarantees import ZCDP
    from renyi.release.duckdb import DuckDBEngine
    from renyi.release.output import write_release

    acct = _open_accountant(s)
    try:
        total = compose(*plan.mechanisms()) if len(plan.measurements) > 1 else plan.measurements[0].mechanism
        if not acct.can_spend(total):
            acct.spend(total)  # raises BudgetExceededError with the accountant's own message
        with DuckDBEngine(s.data, memory_limit=s.memory_limit, threads=s.threads) as engine:
            validate_columns(plan, engine.columns())
            nulls = engine.null_count(s.data.privacy_unit)
            if nulls:
                raise SpecError(f"data: the privacy unit {s.data.privacy_unit!r} has {nulls} NULL value(s); "
                                "every row must belong to an identified individual", name=s.data.privacy_unit,
                                value=nulls)
            if salt is None:
                from renyi.mechanisms.samplers import secure_rng

                # from the secure generator (os.urandom): the row choice cannot be predicted
                salt = int(secure_rng().integers(0, 2**63))
            step("aggregating")
            exact = engine.aggregate(plan, salt)
        check_fits_int64(plan, exact)
        rid = secrets.token_hex(6)
        step("spending")
        spend = acct.spend(total, label=_label(s, plan, rid))
        step("spent")
        try:
            results = add_noise(plan, exact, rng)
            stems = [output_stem(qp.query) for qp in plan.queries]
            names = [f"{st}.{s.out_format}" for st in stems]
            manifest = _manifest(plan, rid, spend, names)
            docs = {"report.json": report.to_dict(), "release.json": manifest}
            files = write_release(out_dir, list(zip(stems, results)), s.out_format, docs, hook=step)
        except BaseException as e:
            try:
                acct.spend(ZCDP(0.0), label=f"release [{rid}] FAILED after its spend #{spend.id} "
                                            f"(spent, nothing written): {type(e).__name__}: {e}"[:500])
            except Exception:  # the original error matters more; the spend itself is recorded
                pass
            raise
        step("done")
        return ReleaseResult(plan=plan, report=report, dry_run=False, out_dir=out_dir, files=tuple(files),
                             results=tuple(results), spend=spend, release_id=rid, manifest=manifest)
    finally:
        acct.close()
