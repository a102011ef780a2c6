"""``renyi release``: noisy statistics from a table, under a zCDP budget, with a ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from renyi.cli._common import DelayedProgress, console, print_json, user_errors
from renyi.core.formatting import fmt_num, fmt_up


def release(
    spec: Annotated[Path, typer.Argument(help="Release spec (TOML, or JSON with the same keys).", show_default=False)],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan (σ, ρ share, sensitivity, expected "
                                                              "accuracy) and the report; read no row, spend nothing.")]
    = False,
    out: Annotated[Optional[Path], typer.Option("--out", metavar="DIR",
                                                help="Output directory (new or empty; default: [output] dir, "
                                                     "else <spec>-release next to the spec).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the plan, the report and the files as one JSON "
                                                       "object.")] = False,
) -> None:
    """Release counts, sums and means by groups from a CSV/Parquet/DuckDB table.

    The spec names the privacy unit and its contribution bounds (enforced in SQL before
    aggregating), the budget (ρ, or ε and δ converted to plain ρ), and the queries over
    public key lists. Sensitivities are derived, the budget is split by weight, the release is
    spent on the ledger before any noisy value is written, and all files are written at once:
    one per query (value, lower, upper: a 95 % interval), the privacy report and a manifest.

    Examples:

        renyi release examples/release/spec.toml --dry-run

        renyi release examples/release/spec.toml --out results
    """
    with user_errors():
        from renyi.release.run import release as run_release

        with DelayedProgress("planning" if dry_run else "releasing"):
            r = run_release(spec, dry_run=dry_run, out=out)
        if json_:
            print_json(_as_json(r))
            return
        render_plan(r)
        from renyi.cli.report import render_report

        render_report(r.report)
        c = console()
        if r.dry_run:
            c.print("dry run: no row read, nothing spent, nothing written", style="dim", markup=False)
        else:
            c.print(f"spent ρ = {fmt_up(r.rho)} on the ledger (entry #{r.spend.id}, release {r.release_id})",
                    markup=False)
            for f in r.files:
                c.print(f"wrote {f}", markup=False)


def _as_json(r: Any) -> dict[str, Any]:
    return {
        "dry_run": r.dry_run,
        "rho": r.rho,
        "plan": _plan_rows(r),
        "report": r.report.to_dict(),
        "out_dir": r.out_dir,
        "files": list(r.files),
        "release_id": r.release_id or None,
        "ledger_spend_id": None if r.spend is None else r.spend.id,
        "truncation_effect": r.truncation,
    }


def _plan_rows(r: Any) -> list[dict[str, Any]]:
    rows = []
    for qp in r.plan.queries:
        for m in qp.measurements:
            pname, pval = m.noise_parameter
            t = qp.query.target
            rows.append({"query": m.query, "type": qp.query.type, "measurement": m.kind, "cells": m.cells,
                         "noise": m.noise_name, pname: pval * m.unit, "rho_share": m.rho,
                         "rho": m.achieved_rho, "l1": m.sensitivity.l1 * m.unit, "l2": m.sensitivity.l2 * m.unit,
                         "derivation": m.derivation(),
                         "half_width_95": m.half_width * m.unit if m.coverage == 0.95 else None,
                         "half_width": m.half_width * m.unit, "coverage": m.coverage,
                         "centre": m.centre * qp.query.granularity if m.centre else None,
                         "level": None if m.level is None else list(m.level),
                         "target": None if t is None else {"half_width": t.half_width, "coverage": t.coverage},
                         "quantile": m.quantile, "runs": m.runs,
                         "threshold": m.threshold if m.kind == "discovery" else None,
                         "delta": m.delta if m.kind == "discovery" else None})
            if m.kind == "discovery" or m.kind.startswith("quantile"):
                rows[-1].update(half_width_95=None, half_width=None)
            if m.kind.startswith("quantile"):
                rows[-1].update(l1=float(m.mechanism.sensitivity), l2=float(m.mechanism.sensitivity))
    return rows


def render_plan(r: Any) -> None:
    """The plan as a table: per measurement, noise, ρ share, sensitivities and accuracy."""
    from rich.table import Table
    from rich.text import Text

    c = console()
    plan = r.plan
    spec = plan.spec
    d = spec.data
    head = Text()
    head.append("renyi release", style="bold")
    head.append(f" · {spec.source}")
    c.print(head)
    budget = ", ".join(f"{k} = {fmt_num(v)}" for k, v in spec.budget.items())
    conv = "" if "rho" in spec.budget else f" → plain ρ = {spec.rho:.6g} (largest ρ-zCDP implying it)"
    if plan.delta > 0.0:
        conv += (f"; key discovery spends δ = {plan.delta:.3g} (the release is δ-approximately ρ-zCDP"
                 + (", ρ converted at the δ left)" if "epsilon" in spec.budget else ")"))
    c.print(Text(f"budget: {budget}{conv}; privacy unit {d.privacy_unit!r}, ≤ {d.max_rows_per_unit} row(s) "
                 f"per individual (random choice)"))
    t = Table(title="Plan (one vector release per measurement; groups are disjoint cells)", title_justify="left")
    for col, just in (("query", "left"), ("measure", "left"), ("cells", "right"), ("noise", "left"),
                      ("σ / scale / ε", "right"), ("ρ share", "right"), ("ℓ₁", "right"), ("ℓ₂", "right"),
                      ("± per cell", "right"), ("coverage", "right")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for row in _plan_rows(r):
        par = row.get("sigma", row.get("scale", row.get("epsilon")))
        if row["measurement"] == "discovery":
            hw = f"keep if ≥ {row['threshold']}"
        elif row["half_width"] is None or row["type"] in ("mean", "variance", "std"):
            hw = "see interval"
        else:
            hw = fmt_up(row["half_width"])
        meas = row["measurement"] + (f" ({'total' if not row['level'] else ', '.join(row['level'])})"
                                     if row["level"] is not None else "")
        if row["quantile"] is not None:
            meas += f" q={row['quantile']:g}"
        cells = "discovered" if row["measurement"] == "discovery" or (row["cells"] == 0) else f"{row['cells']:,}"
        t.add_row(Text(row["query"]), meas, cells, row["noise"], f"{par:.4g}",
                  f"{row['rho']:.4g}", f"{row['l1']:.6g}", f"{row['l2']:.6g}", hw, f"{row['coverage']:.4g}")
    c.print(t)
    targets = [qp for qp in plan.queries if qp.query.target is not None]
    if targets:
        for qp in targets:
            tg = qp.query.target
            c.print(Text(f"target {qp.query.name}: ±{fmt_num(tg.half_width)} at {tg.coverage:g} per cell → "
                         f"±{fmt_up(qp.half_width)} with the least noise, ρ = {qp.needed_rho:.6g}"), markup=False)
        c.print(Text(f"total ρ = {fmt_up(plan.rho)} of the budget's {spec.rho:.6g} (the smallest meeting every target"
                     + ("; the weighted queries share the rest)" if len(targets) < len(plan.queries) else ")")),
                markup=False)
    from renyi.release.run import missing_text

    for qp in plan.queries:
        words = missing_text(qp.query)
        if words is not None and qp.query.missing != "error":
            c.print(Text(f"missing values, query {qp.query.name}: {words}"), markup=False)
    if r.truncation is not None:
        c.print(Text(f"truncation effect of the contribution bounds, on the public table {r.truncation['public']} "
                     "(not covered by the intervals):"), markup=False)
        for name, e in r.truncation["queries"].items():
            tot = e.get("total_relative_change")
            c.print(Text(f"  {name}: median |change| {e['median_abs_change']:.4g}, largest {e['max_abs_change']:.4g}"
                         + (f", total {tot:+.3%}" if tot is not None else "")), markup=False)
    for qp in plan.queries:
        for m in qp.measurements:
            c.print(Text(f"  {m.query} ({m.kind}): {m.derivation()}"
                         + (f" (units of {fmt_num(m.unit)})" if m.unit != 1.0 else "")
                         + (f"; centred on {fmt_num(m.centre * qp.query.granularity)}" if m.centre else ""),
                         style="dim"))
