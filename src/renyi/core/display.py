"""Notebook and rich views of reports: ``Report`` and ``AccountantReport`` render as HTML
tables in Jupyter (``_repr_html_``) and as rich tables in a rich console (``__rich__``), with
the same content as ``renyi report``. Presentation only; every number is rounded up (an ε or δ
that is printed must stay an upper bound). rich is imported only when a rich view is asked for.
"""

from __future__ import annotations

import html
import math
from typing import Any

from renyi.core.formatting import fmt_down, fmt_num, fmt_pct, fmt_up

__all__ = ["report_html", "report_rich", "accountant_report_html", "accountant_report_rich"]


def _alpha(a: float | None) -> str:
    if a is None:
        return "–"
    return "∞" if a == math.inf else f"{a:.4g}"


def _table(title: str, header: list[str], rows: list[list[str]], bold_row: int | None = None) -> str:
    th = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        style = " style='font-weight:bold'" if i == bold_row else ""
        body.append(f"<tr{style}>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
    return (f"<table><caption style='text-align:left'>{html.escape(title)}</caption>"
            f"<thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def _route_rows(r: Any) -> tuple[list[list[str]], int | None]:
    rows, best = [], None
    for route in r.routes:
        if not route.applicable:
            rows.append([route.title, "n/a", "", "", route.note])
            continue
        if route.key == r.route:
            best = len(rows)
        ratio = f"{route.epsilon / r.epsilon:.2f}" if r.epsilon > 0 and math.isfinite(route.epsilon) else ""
        rows.append([route.title, fmt_up(route.epsilon), ratio, _alpha(route.witness), route.method])
    return rows, best


def _share_rows(r: Any) -> list[list[str]]:
    return [[s.name, s.mechanism, f"{s.count:,}", s.assumption, fmt_pct(s.rdp_share),
             "–" if s.rho_share is None else fmt_pct(s.rho_share), fmt_up(s.epsilon_alone)] for s in r.shares]


def _budget_line(b: Any) -> str:
    if b.kind == "rho":
        text = f"budget ρ ≤ {fmt_num(b.limit)}: spent ρ = {fmt_up(b.spent)} — "
    else:
        text = f"budget ε ≤ {fmt_num(b.limit)} at δ = {fmt_num(b.delta)}: spent ε = {fmt_up(b.spent)} — "
    if b.holds:
        text += f"holds, remaining {fmt_down(b.remaining)}"
    else:
        text += "EXCEEDED" + ("" if b.remaining == -math.inf else f" by {fmt_up(-b.remaining)}")
    return text + (f" ({b.note})" if b.note else "")


_ROUTE_HEADER = ["definition", "ε", "× best", "α", "method"]
_SHARE_HEADER = ["name", "mechanism", "runs", "sampling / neighbours", "share of ε(α*)", "share of ρ", "ε alone"]


def _headline(r: Any) -> str:
    title = f" · {r.title}" if r.title else ""
    wit = f", witness α = {_alpha(r.witness)}" if r.witness is not None else ""
    return f"ε ≤ {fmt_up(r.epsilon)} at δ = {fmt_num(r.delta)} — {r.method}{wit}  ({r.source}{title})"


def _neighbours_line(r: Any) -> str:
    return f"neighbours: {getattr(r, 'neighbouring_note', '') or _relation_words(getattr(r, 'neighbouring', 'add_remove'))}"


def report_html(r: Any) -> str:
    """The HTML view of a :class:`renyi.report.Report`."""
    routes, best = _route_rows(r)
    parts = [f"<div><p><b>{html.escape(_headline(r))}</b></p><p>{html.escape(_neighbours_line(r))}</p>",
             _table("The same pipeline through each definition", _ROUTE_HEADER, routes, best),
             _table(f"Mechanisms (share of the RDP curve at α* = {_alpha(r.rdp_witness)})", _SHARE_HEADER,
                    _share_rows(r))]
    if r.budget is not None:
        parts.append(f"<p>{html.escape(_budget_line(r.budget))}</p>")
    parts += [f"<p style='color:#a60'>warning: {html.escape(w)}</p>" for w in r.warnings]
    return "".join(parts) + "</div>"


def _rich_table(title: str, header: list[str], rows: list[list[str]], bold_row: int | None = None) -> Any:
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for i, h in enumerate(header):
        t.add_column(h, justify="right" if h in ("ε", "× best", "α", "runs", "ε alone") or "share" in h else "left")
    for i, row in enumerate(rows):
        t.add_row(*row, style="bold green" if i == bold_row else None)
    return t


def report_rich(r: Any) -> Any:
    """The rich view of a :class:`renyi.report.Report` (a ``rich.console.Group``)."""
    from rich.console import Group
    from rich.text import Text

    routes, best = _route_rows(r)
    items: list[Any] = [Text(_headline(r), style="bold"), Text(_neighbours_line(r), style="dim"),
                        _rich_table("The same pipeline through each definition", _ROUTE_HEADER, routes, best),
                        _rich_table(f"Mechanisms (share of the RDP curve at α* = {_alpha(r.rdp_witness)})",
                                    _SHARE_HEADER, _share_rows(r))]
    if r.budget is not None:
        items.append(Text(_budget_line(r.budget), style="green" if r.budget.holds else "bold red"))
    items += [Text(f"warning: {w}", style="yellow") for w in r.warnings]
    return Group(*items)


def _relation_words(relation: str) -> str:
    return {"add_remove": "add/remove (one record added or removed)",
            "replace_one": "replace-one (one record replaced)"}.get(relation, relation)


def _accountant_rows(r: Any) -> list[list[str]]:
    rows = [["spends", f"{r.spends:,} ({r.count:,} runs)"], ["spent", repr(r.spent)],
            ["budget", "none" if r.budget is None else repr(r.budget)],
            ["remaining", "–" if r.remaining is None else repr(r.remaining)], ["filter", r.filter],
            ["neighbours", _relation_words(getattr(r, "neighbouring", "add_remove"))]]
    if r.epsilon is not None and r.delta is not None:
        wit = f", α = {_alpha(r.witness)}" if r.witness is not None else ""
        rows.append(["ε", f"{fmt_up(r.epsilon)} at δ = {fmt_num(r.delta)} ({r.method}{wit})"])
    if r.assumption:
        rows.append(["assumption", r.assumption])
    rows.append(["ledger", r.ledger])
    return rows


def accountant_report_html(r: Any) -> str:
    """The HTML view of a :class:`renyi.accountant.AccountantReport`."""
    return _table("Accountant", ["", ""], _accountant_rows(r))


def accountant_report_rich(r: Any) -> Any:
    """The rich view of a :class:`renyi.accountant.AccountantReport` (a ``rich.table.Table``)."""
    return _rich_table("Accountant", ["", ""], _accountant_rows(r))
