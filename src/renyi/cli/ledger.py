"""``renyi ledger``: inspect and export an accountant's ledger (read-only)."""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ._common import EXIT_FAIL, EXIT_USER, CLIError, console, jsonable, print_json, user_errors
from ._format import fmt_num, fmt_up

app = typer.Typer(help="Inspect an accountant's ledger (a SQLite file): show it, or export it.",
                  no_args_is_help=True, rich_markup_mode=None)


class Format(str, Enum):
    json = "json"
    csv = "csv"


def _open(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """Header and records of a ledger file, opened without ever creating or modifying it."""
    from renyi.errors import LedgerError
    from renyi.ledger import SQLiteLedger

    p = os.fspath(path)
    if not os.path.exists(p):
        raise CLIError(f"{p}: no such ledger file", EXIT_USER)
    if os.path.isfile(p) and os.path.getsize(p) == 0:
        raise CLIError(f"{p}: empty file, not a ledger", EXIT_USER)
    try:
        led = SQLiteLedger(p)
        try:
            header = dict(getattr(led, "header", None) or getattr(led, "_existing", None) or {})
            records = led.rows_after(0)
        finally:
            led.close()
    except LedgerError as e:
        raise CLIError(str(e), EXIT_USER) from None
    return header, records


def _totals(header: dict[str, Any], records: list[Any], delta: float | None) -> dict[str, Any]:
    """Composed totals of the ledger's records, through the library."""
    import renyi
    from renyi.ledger import decode_floats, guarantee_from_json

    orders = header.get("orders")
    grid = decode_floats(orders) if orders is not None else None
    items = []
    for rec in records:
        items.append((guarantee_from_json(rec.guarantee, orders=grid), rec.count))
    out: dict[str, Any] = {"records": len(records), "runs": sum(r.count for r in records)}
    if not items:
        return out
    total = renyi.compose(*items)
    out["guarantee"] = repr(total)
    budget = header.get("budget") if isinstance(header.get("budget"), dict) else None
    d = delta if delta is not None else (budget or {}).get("delta")
    if d:
        c = total.best_epsilon(float(d))
        out.update(delta=float(d), epsilon=c.value, method=c.method, witness=c.witness)
    rhos = [r.rho for r in records]
    if all(x is not None for x in rhos):
        out["rho"] = math.fsum(r.count * r.rho for r in records)
    return out


def _when(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


@app.command()
def show(
    path: Annotated[Path, typer.Argument(help="Ledger file.", show_default=False)],
    delta: Annotated[Optional[float], typer.Option(help="Report ε at this δ (default: the budget's δ).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Show a ledger: its header, every spend, and the composed total.

    Examples:

        renyi ledger show spend.db

        renyi ledger show spend.db --delta 1e-6 --json
    """
    with user_errors():
        header, records = _open(path)
        totals = _totals(header, records, delta)
        if json_:
            print_json({"path": str(path), "header": header, "records": [r.to_json() for r in records],
                        "totals": totals})
            return
        from rich.table import Table

        c = console()
        c.print(f"ledger {path}  (format {header.get('format')}, schema "
                f"{header.get('schema_version')}, renyi {header.get('renyi_version', '?')})", markup=False)
        for key, value in header.items():
            if key not in ("format", "schema_version", "renyi_version", "orders"):
                c.print(f"  {key}: {value}", markup=False)
        t = Table()
        for col, just in (("id", "right"), ("time (UTC)", "left"), ("label", "left"), ("runs", "right"),
                          ("spent", "left"), ("ρ per run", "right"), ("ε(∞) per run", "right"),
                          ("δ per run", "right")):
            t.add_column(col, justify=just)  # type: ignore[arg-type]
        for r in records:
            from rich.markup import escape

            t.add_row(str(r.id), _when(r.time), escape(r.label or ""), f"{r.count:,}",
                      escape(r.mechanism or str(r.guarantee.get("type", ""))),
                      "–" if r.rho is None else fmt_up(r.rho), fmt_up(r.eps_inf), fmt_num(r.delta))
        c.print(t)
        line = f"total: {totals['records']} spends, {totals['runs']:,} runs"
        if "rho" in totals:
            line += f"; ρ = {fmt_up(totals['rho'])}"
        if "epsilon" in totals:
            line += f"; ε ≤ {fmt_up(totals['epsilon'])} at δ = {fmt_num(totals['delta'])} ({totals['method']})"
        c.print(line, markup=False)


@app.command()
def export(
    path: Annotated[Path, typer.Argument(help="Ledger file.", show_default=False)],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (default: stdout).")] = None,
    format: Annotated[Format, typer.Option(help="json (header + records) or csv (one row per spend).")]
    = Format.json,
) -> None:
    """Export a ledger as JSON (the documented ledger format) or CSV.

    Examples:

        renyi ledger export spend.db -o spend.json

        renyi ledger export spend.db --format csv > spend.csv
    """
    with user_errors():
        header, records = _open(path)
        if format is Format.json:
            text = json.dumps(jsonable({"header": header, "records": [r.to_json() for r in records]}),
                              ensure_ascii=False, indent=2, allow_nan=False) + "\n"
        else:
            buf = io.StringIO()
            w = csv.writer(buf)
            w.writerow(["id", "time", "label", "count", "mechanism", "guarantee", "rho", "xi", "mu", "eps_inf",
                        "delta"])
            for r in records:
                d = r.to_json()
                w.writerow([d["id"], d["time"], d["label"] or "", d["count"], d["mechanism"] or "",
                            json.dumps(d["guarantee"]), d["rho"], d["xi"], d["mu"], d["eps_inf"], d["delta"]])
            text = buf.getvalue()
        if output is None:
            sys.stdout.write(text)
        else:
            try:
                Path(output).write_text(text, encoding="utf-8")
            except OSError as e:
                raise CLIError(f"cannot write {str(output)!r}: {e.strerror or e}", EXIT_FAIL) from None
