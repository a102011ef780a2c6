"""``renyi ledger``: inspect and export an accountant's ledger (read-only)."""

from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import re
import sys
from enum import Enum
from pathlib import Path
from collections.abc import Iterator
from typing import IO, Annotated, Any, Optional

import typer

from renyi.cli._common import EXIT_FAIL, EXIT_USER, CLIError, console, jsonable, print_json, user_errors
from renyi.core.formatting import fmt_num, fmt_up

app = typer.Typer(help="Inspect an accountant's ledger (a SQLite file): show, export or verify it.",
                  no_args_is_help=True, rich_markup_mode=None)


class Format(str, Enum):
    json = "json"
    csv = "csv"


def _open(path: Path) -> Any:
    """A ledger opened for reading, never creating or modifying it."""
    from renyi.core.errors import LedgerError
    from renyi.budget.ledger import open_readonly

    p = os.fspath(path)
    if not os.path.exists(p):
        raise CLIError(f"{p}: no such ledger file", EXIT_USER)
    if os.path.isfile(p) and os.path.getsize(p) == 0:
        raise CLIError(f"{p}: empty file, not a ledger", EXIT_USER)
    try:
        return open_readonly(p)
    except LedgerError as e:
        raise CLIError(str(e), EXIT_USER) from None


_COMPOSE_LIMIT = 64  # distinct spends composed exactly; beyond, the accountant's grid totals alone


def _totals(led: Any, delta: float | None) -> dict[str, Any]:
    """Composed totals of the ledger, one row at a time (memory independent of its length).

    The totals are the accountant's own (the same filter decides whether the budget holds);
    when the ledger holds few distinct spends, ``renyi.compose`` of them is also evaluated
    (continuous orders rather than the grid) and the smaller ε, both valid, is reported.
    """
    import renyi
    from renyi.budget.accountant import replay
    from renyi.budget.ledger import guarantee_from_json

    header = led.header
    acct = replay(header, led.iter_rows(0))
    st = acct.state
    out: dict[str, Any] = {"records": st["spends"], "runs": st["count"], "neighbouring": acct.neighbouring}
    plan = acct.plan
    if plan is not None:  # restated from the header, with the steps the rows recorded on it
        out["plan"] = plan.to_dict()
        out["plan_text"] = plan.describe()
        out["budget"] = repr(acct.budget)
        out["within_budget"] = acct.within_budget
        out["remaining"] = repr(acct.remaining)
    if st["spends"] == 0:
        return out
    spent = acct.spent
    out["guarantee"] = repr(spent)
    budget = header.get("budget") if isinstance(header.get("budget"), dict) else None
    d = delta if delta is not None else (budget or {}).get("delta")
    if d:
        d = float(d)
        c = acct.best_epsilon(d)
        groups: dict[tuple[str, bytes], list[Any]] = {}
        for rec in led.iter_rows(0):
            key = (json.dumps(rec.guarantee, sort_keys=True), rec.rdp.tobytes())
            if key in groups:
                groups[key][1] += rec.count
            elif len(groups) < _COMPOSE_LIMIT:
                groups[key] = [guarantee_from_json(rec.guarantee, orders=acct.orders, epsilons=rec.rdp), rec.count]
            else:
                groups = {}
                break
        if groups:
            c2 = renyi.compose(*[(g, k) for g, k in groups.values()]).best_epsilon(d)
            if c2.value < c.value:
                c = c2
        out.update(delta=d, epsilon=c.value, method=c.method, witness=c.witness)
    if st["rho"] is not None and st["xi"] == 0.0:
        out["rho"] = st["rho"]
    if acct.budget is not None:
        out["budget"] = repr(acct.budget)
        out["within_budget"] = acct.within_budget
        out["remaining"] = repr(acct.remaining)
    return out


#: Characters a terminal may act on: C0 and C1 controls, DEL, line/paragraph separators and
#: the bidirectional overrides (text that reorders what is shown). A label is user text
#: stored in a file anyone may have written, so none of these reaches the terminal raw.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: the same less C0 controls, which JSON already escapes inside strings (and uses as layout)
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _safe(text: str) -> str:
    """``text`` with every character of :data:`_UNSAFE` written as a visible escape (``\\x1b``)."""
    def esc(m: re.Match[str]) -> str:
        o = ord(m.group())
        return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"

    return _UNSAFE.sub(esc, text)


def _safe_json(text: str) -> str:
    """JSON text with the unsafe characters JSON leaves raw (DEL, C1, separators, bidi
    overrides) written as ``\\u`` escapes: the same JSON value, harmless on a terminal."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _when(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


_CHUNK = 500  # rows per printed table: the table is built and printed a chunk at a time


def _closing(led: Any) -> Any:
    import contextlib

    return contextlib.closing(led)


def _json_stream(out: IO[str], head: dict[str, Any], records: Iterator[Any], tail: dict[str, Any] | None) -> None:
    """``{**head, "records": [...], **tail}`` as indented strict JSON, one record at a time."""
    def dump(obj: Any, indent: int) -> str:
        text = _safe_json(json.dumps(jsonable(obj), ensure_ascii=False, indent=2, allow_nan=False))
        return text.replace("\n", "\n" + " " * indent)

    out.write("{\n")
    for k, v in head.items():
        out.write(f"  {json.dumps(k)}: {dump(v, 2)},\n")
    out.write('  "records": [')
    first = True
    for r in records:
        out.write(("\n    " if first else ",\n    ") + dump(r.to_json(), 4))
        first = False
    out.write("\n  ]" if not first else "]")
    for k, v in (tail or {}).items():
        out.write(f",\n  {json.dumps(k)}: {dump(v, 2)}")
    out.write("\n}\n")
    out.flush()


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
        if delta is not None:
            from renyi.core._validation import PROBABILITY_OPEN

            delta = PROBABILITY_OPEN.check("delta", delta)
        with _closing(_open(path)) as led:
            header = led.header
            totals = _totals(led, delta)  # first pass: also checks the whole hash chain
            if json_:
                _json_stream(sys.stdout, {"path": str(path), "header": header}, led.iter_rows(0),
                             {"totals": totals})
                return
            from rich.markup import escape
            from rich.table import Table

            c = console()
            c.print(_safe(f"ledger {path}  (format {header.get('format')}, schema "
                          f"{header.get('schema_version')}, renyi {header.get('renyi_version', '?')})"), markup=False)
            for key, value in header.items():
                if key not in ("format", "schema_version", "renyi_version", "grid", "filter_orders", "plan"):
                    c.print(_safe(f"  {key}: {value}"), markup=False)
            if "plan" in totals:
                c.print(_safe(f"  plan: {totals['plan_text']}"), markup=False)
                for i, ph in enumerate(totals["plan"]["phases"]):
                    what = ph["mechanism"] or ph["guarantee"].get("type")
                    c.print(_safe(f"    phase {i + 1}: {ph['used']:,} of {ph['count']:,} steps of {what}"), markup=False)
            columns = (("id", "right", 7), ("time (UTC)", "left", 19), ("label", "left", 16), ("runs", "right", 8),
                       ("spent", "left", 30), ("ρ per run", "right", 10), ("ε(∞) per run", "right", 12),
                       ("δ per run", "right", 9))

            def table(first: bool) -> Any:
                t = Table(show_header=first)
                for col, just, width in columns:
                    t.add_column(col, justify=just, min_width=width)  # type: ignore[arg-type]
                return t

            if int(totals["records"]) > _PLAIN_ABOVE or not c.is_terminal:
                # Long ledgers: plain aligned lines (rich lays out every table cell by cell,
                # minutes for 10⁵ rows); same columns, widths from the headers. Also when the
                # output is not a terminal: a table would be cut at the console's width.
                _plain_rows(c, led, columns)
            else:
                _rich_rows(c, led, table, escape)
            words = {"add_remove": "add/remove", "replace_one": "replace-one"}.get(totals["neighbouring"], "?")
            line = f"total: {totals['records']} spends, {totals['runs']:,} runs, {words} neighbours"
            if "rho" in totals:
                line += f"; ρ = {fmt_up(totals['rho'])}"
            if "epsilon" in totals:
                line += f"; ε ≤ {fmt_up(totals['epsilon'])} at δ = {fmt_num(totals['delta'])} ({totals['method']})"
            c.print(_safe(line), markup=False)
            if "within_budget" in totals:
                state = "within budget" if totals["within_budget"] else "OVER BUDGET"
                c.print(_safe(f"budget {totals['budget']}: {state}; remaining {totals['remaining']}"), markup=False)


#: Ledgers longer than this are shown as plain aligned lines rather than a rich table.
_PLAIN_ABOVE = 2000


def _row_cells(r: Any) -> tuple[str, ...]:
    return (str(r.id), _when(r.time), _safe(r.label or ""), f"{r.count:,}",
            _safe(r.mechanism or str(r.guarantee.get("type", ""))),
            "–" if r.rho is None else fmt_up(r.rho), fmt_up(r.eps_inf), fmt_num(r.delta))


def _rich_rows(c: Any, led: Any, table: Any, escape: Any) -> None:
    t, n = table(True), 0
    for r in led.iter_rows(0):
        t.add_row(*(escape(x) for x in _row_cells(r)))
        n += 1
        if n % _CHUNK == 0:
            c.print(t)
            t = table(False)
    if n % _CHUNK or n == 0:
        c.print(t)


def _plain_rows(c: Any, led: Any, columns: Any) -> None:
    widths = [max(w, len(col)) for col, _, w in columns]

    def line(cells: Any) -> str:
        out = []
        for (_, just, _), w, cell in zip(columns, widths, cells):
            out.append(cell.rjust(w) if just == "right" else cell.ljust(w))
        return "  ".join(out).rstrip()

    write = c.file.write
    write(line([col for col, _, _ in columns]) + "\n")
    buf = []
    for r in led.iter_rows(0):
        buf.append(line(_row_cells(r)))
        if len(buf) >= 1000:
            write("\n".join(buf) + "\n")
            buf = []
    if buf:
        write("\n".join(buf) + "\n")
    c.file.flush()


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
        with _closing(_open(path)) as led:
            list(_drain(led))  # check the whole hash chain before writing anything
            try:
                fh = sys.stdout if output is None else open(output, "w", encoding="utf-8", newline="")
            except OSError as e:
                raise CLIError(f"cannot write {str(output)!r}: {e.strerror or e}", EXIT_FAIL) from None
            try:
                if format is Format.json:
                    _json_stream(fh, {"header": led.header}, led.iter_rows(0), None)
                else:
                    w = csv.writer(fh)
                    w.writerow(["id", "time", "label", "count", "mechanism", "guarantee", "rho", "xi", "mu",
                                "eps_inf", "delta"])
                    for r in led.iter_rows(0):
                        d = r.to_json()
                        # text from the file is escaped (_safe): a CSV is read on terminals too
                        w.writerow([d["id"], d["time"], _safe(d["label"] or ""), d["count"],
                                    _safe(d["mechanism"] or ""), json.dumps(d["guarantee"]), d["rho"], d["xi"],
                                    d["mu"], d["eps_inf"], d["delta"]])
                    fh.flush()
            except OSError as e:
                raise CLIError(f"cannot write {str(output or 'stdout')!r}: {e.strerror or e}", EXIT_FAIL) from None
            finally:
                if fh is not sys.stdout:
                    fh.close()


def _drain(led: Any) -> Iterator[None]:
    for _ in led.iter_rows(0):
        yield None


def _read_key(key_file: Path | None) -> bytes | None:
    """The key of a keyed ledger from a file (its bytes, one trailing newline removed)."""
    if key_file is None:
        return None
    import stat

    try:
        st = os.stat(key_file)
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
            raise CLIError(f"{key_file}: the key file must be a regular file", EXIT_USER)
        with open(key_file, "rb") as fh:
            data = fh.read(1 << 16)
    except OSError as e:
        raise CLIError(f"{key_file}: cannot read the key file: {e.strerror or e}", EXIT_USER) from None
    key = data[:-1] if data.endswith(b"\n") else data
    if not key:
        raise CLIError(f"{key_file}: the key file is empty", EXIT_USER)
    return key


_KEY_HELP = "File holding the key of a keyed ledger (default: $RENYI_LEDGER_KEY)."


def _replay_plan(path: str, rep: Any) -> tuple[Any, str | None]:
    """For a ledger with a declared plan (inside the hash chain, in the header): replay the rows
    through the accountant, which checks that every spend marked as following the plan does
    (its phase, in order, within the phase's count), and that the budget holds."""
    import dataclasses

    from renyi.budget.accountant import replay
    from renyi.budget.ledger import open_readonly
    from renyi.core.errors import LedgerError

    led = open_readonly(path)
    try:
        if led.header is None or led.header.get("plan") is None:
            return rep, None
        try:
            acct = replay(led.header, led.iter_rows(0))
        except LedgerError as exc:
            return dataclasses.replace(rep, problems=((None, f"plan: {exc}"),)), None
        plan = acct.plan
        assert plan is not None
        if not acct.within_budget:
            return dataclasses.replace(rep, problems=((None, "the spends off the plan exceed what the plan left of "
                                                             "the budget"),)), None
        return rep, plan.describe()
    finally:
        led.close()


@app.command()
def verify(
    path: Annotated[Path, typer.Argument(help="Ledger file.", show_default=False)],
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    head: Annotated[Optional[str], typer.Option("--head", help="An exported head ID:HASH printed by an earlier "
                                                               "verify: that spend must still be stored.",
                                                show_default=False)] = None,
    key_file: Annotated[Optional[Path], typer.Option("--key-file", help=_KEY_HELP, show_default=False)] = None,
) -> None:
    """Check a ledger's hash chain: report every edited, deleted or reordered spend by id.

    Exit status: 0 when the chain holds, 1 when a problem was found (or the ledger has no
    chain), 2 when the file is missing or not a renyi ledger. The printed head (ID:HASH),
    kept elsewhere and passed back with --head, detects a later rollback of the whole file.

    Examples:

        renyi ledger verify spend.db
    """
    with user_errors():
        from renyi.core.errors import LedgerError
        from renyi.budget.ledger import verify as _verify

        p = os.fspath(path)
        if not os.path.exists(p):
            raise CLIError(f"{p}: no such ledger file", EXIT_USER)
        key = _read_key(key_file)
        try:
            rep = _verify(p, key=key, head=head)
        except LedgerError as e:
            raise CLIError(str(e), EXIT_USER) from None
        plan_text = None
        if rep.ok:
            rep, plan_text = _replay_plan(p, rep)
        if json_:
            print_json({"path": p, "ok": rep.ok, "chained": rep.chained, "rows": rep.rows, "head": rep.head,
                        "exported_head": rep.exported_head, "seal": rep.seal,
                        "problems": [{"id": i, "problem": m} for i, m in rep.problems], "plan": plan_text})
        else:
            out = sys.stdout
            if not rep.chained:
                out.write(f"{p}: FAILED, {rep.rows} spends and no hash chain: {rep.problems[0][1]}; "
                          "inspect them and adopt it with `renyi ledger adopt` if they are right\n")
            elif rep.ok:
                seal = {"none": "head not sealed (created before seals)", "sha256": "head sealed (SHA-256)",
                        "hmac-sha256": "head sealed with the key (HMAC-SHA-256)"}[rep.seal]
                out.write(f"{p}: OK, {rep.rows} spends, {seal}; head {rep.exported_head}\n")
                if plan_text:
                    out.write(_safe(f"  {plan_text}\n"))
            else:
                out.write(f"{p}: FAILED, {len(rep.problems)} problem(s) in {rep.rows} spends\n")
                for i, m in rep.problems:
                    out.write(f"  {'header' if i is None else 'spend ' + str(i)}: {m}\n")
            out.flush()
        if not rep.ok:
            raise typer.Exit(EXIT_FAIL)


@app.command()
def adopt(
    path: Annotated[Path, typer.Argument(help="Ledger file without a hash chain.", show_default=False)],
    key_file: Annotated[Optional[Path], typer.Option("--key-file", help=_KEY_HELP, show_default=False)] = None,
) -> None:
    """Give a ledger without a hash chain (written before chains, or with its chain removed) a
    new, sealed chain over its rows as they are now.

    renyi never does this by itself: nothing checked those rows. Inspect them first
    (renyi ledger show); after adoption every later edit is detected.

    Examples:

        renyi ledger adopt old.db
    """
    with user_errors():
        from renyi.errors import LedgerError
        from renyi.ledger import adopt_unchained

        p = os.fspath(path)
        if not os.path.exists(p):
            raise CLIError(f"{p}: no such ledger file", EXIT_USER)
        try:
            rep = adopt_unchained(p, key=_read_key(key_file))
        except LedgerError as e:
            raise CLIError(str(e), EXIT_USER) from None
        sys.stdout.write(f"{p}: adopted, {rep.rows} spends, head {rep.exported_head}\n")
