"""``renyi report``: the privacy report of a pipeline file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from renyi.cli._common import EXIT_USER, CLIError, DelayedProgress, console, print_json, user_errors
from renyi.core.formatting import fmt_down, fmt_num, fmt_pct, fmt_up


def report(
    pipeline: Annotated[Optional[Path], typer.Argument(help="Pipeline file (TOML, or JSON with the same keys).",
                                                       show_default=False)] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
    plot: Annotated[Optional[Path], typer.Option("--plot", metavar="FILE",
                                                 help="Also draw the report (PNG or SVG, by suffix).")] = None,
    delta: Annotated[Optional[float], typer.Option(help="Report ε at this δ instead of the file's.")] = None,
    example: Annotated[Optional[str], typer.Option("--example", metavar="NAME",
                                                   help="Use a shipped example pipeline instead of a file "
                                                        "(see `renyi examples`).")] = None,
) -> None:
    """Total ε of a pipeline, through every definition, with each mechanism's share.

    Prints the best ε at the pipeline's δ (with the method and witness order), the same
    through exact/GDP, RDP, zCDP and plain (ε, δ) composition, each mechanism's share of
    the spend and its sampling assumption, and whether the budget holds. Every printed ε is
    rounded up.

    Examples:

        renyi report examples/dpsgd.toml

        renyi report --example dpsgd

        renyi report examples/census.toml --json

        renyi report examples/mixed.toml --plot mixed.png
    """
    with user_errors():
        from renyi.pipeline import load_pipeline
        from renyi.report import compute_report

        p = load_pipeline(_pipeline_path(pipeline, example))
        with DelayedProgress("computing report", total=8) as step:
            r = compute_report(p, delta=delta, progress=step)
        if plot is not None:
            from renyi.cli._plotting import save_figure

            with DelayedProgress("drawing"):
                save_figure("report", plot, report=r)
        if json_:
            out = r.to_dict()
            if plot is not None:
                out["plot"] = str(plot)
            print_json(out)
        else:
            render_report(r, plot)


def _pipeline_path(pipeline: Path | None, example: str | None) -> Path:
    if (pipeline is None) == (example is None):
        raise CLIError("give a pipeline file or --example NAME (one of them)", EXIT_USER)
    if example is not None:
        from renyi._examples import example_path

        return example_path(example)
    assert pipeline is not None  # for the type checker: the test above excludes it
    return pipeline


def _alpha(a: Any) -> str:
    if a is None:
        return "–"
    return "∞" if a == float("inf") else f"{a:.4g}"


def render_report(r: Any, plot: Path | None = None) -> None:
    """Render a :class:`renyi.report.Report` for people (rich tables)."""
    from rich.table import Table
    from rich.text import Text

    c = console()
    head = Text()
    head.append("renyi report", style="bold")
    head.append(f" · {r.source}")
    if r.title:
        head.append(f" · {r.title}", style="italic")
    c.print(head)
    line = Text()
    line.append("ε ≤ ", style="bold")
    line.append(fmt_up(r.epsilon), style="bold green")
    line.append(f"  at δ = {fmt_num(r.delta)}")
    best = r.route_by_key(r.route)
    line.append(f"   best: {best.title} — {r.method}")
    if r.witness is not None:
        line.append(f", witness α = {_alpha(r.witness)}")
    c.print(line)
    if getattr(r, "tradeoff", ()):
        tl = Text()
        tl.append("attacker's TPR ≤ ")
        tl.append(", ".join(f"{fmt_up(t)} at FPR {fmt_num(f)}" for f, t, _ in r.tradeoff), style="bold")
        routes_used = sorted({m for _, _, m in r.tradeoff})
        tl.append(f"   (membership test, route {'/'.join(routes_used)})", style="dim")
        c.print(tl)
    g = getattr(r, "gdp", None)
    if g is not None:
        gl = Text()
        gl.append("μ-GDP: μ ≤ ")
        gl.append(fmt_up(g.mu), style="bold")
        if g.delta0 > 0:
            gl.append(f" up to δ₀ = {fmt_num(g.delta0)}")
        how = "composition of Gaussian DP" if g.method == "gdp" else "PLD"
        if g.lower is not None and g.method == "pld":
            how += f", bracket [{fmt_down(g.lower)}, {fmt_up(g.mu)}]"
        gl.append(f"   (TPR ≤ Φ(Φ⁻¹(FPR) + μ){' + δ₀' if g.delta0 > 0 else ''}; {how})", style="dim")
        c.print(gl)
    c.print(Text(f"composed guarantee: {r.guarantee}", style="dim"))
    if getattr(r, "neighbouring_note", ""):
        c.print(Text(f"neighbours: {r.neighbouring_note}", style="dim"))

    t = Table(title="The same pipeline through each accounting route", title_justify="left", show_lines=False)
    t.add_column("route")
    t.add_column("ε", justify="right")
    t.add_column("× best", justify="right")
    t.add_column("α", justify="right")
    t.add_column("holds for")
    t.add_column("method")
    for route in r.routes:
        holds = "adaptive" if getattr(route, "adaptive", True) else "fixed sequence"
        if not route.applicable:
            t.add_row(route.title, "n/a", "", "", "", Text(route.note, style="dim"))
            continue
        ratio = route.epsilon / r.epsilon if r.epsilon > 0 else float("nan")
        style = "bold green" if route.key == r.route else ""
        note = route.method
        if getattr(route, "lower", None) is not None:
            note = f"bracket [{fmt_down(route.lower)}, {fmt_up(route.epsilon)}] — {note}"
        t.add_row(Text(route.title, style=style), Text(fmt_up(route.epsilon), style=style),
                  "" if ratio != ratio else f"{ratio:.2f}", _alpha(route.witness), holds, Text(note))
    c.print(t)
    c.print(Text("adaptive: valid even when mechanisms and their parameters are chosen adaptively (through a "
                 "privacy filter); fixed sequence: valid for a sequence fixed in advance, as a pipeline file is",
                 style="dim"))

    m = Table(title=f"Mechanisms (share of the RDP curve at α* = {_alpha(r.rdp_witness)})", title_justify="left")
    m.add_column("name")
    m.add_column("mechanism")
    m.add_column("runs", justify="right")
    m.add_column("sampling / neighbours")
    m.add_column("share of ε(α*)", justify="right")
    m.add_column("share of ρ", justify="right")
    m.add_column("ε alone", justify="right")
    m.add_column("95 % ±", justify="right")
    for s in r.shares:
        m.add_row(Text(s.name), Text(s.mechanism), f"{s.count:,}", Text(s.assumption), fmt_pct(s.rdp_share),
                  "–" if s.rho_share is None else fmt_pct(s.rho_share), fmt_up(s.epsilon_alone),
                  "–" if s.half_width_95 is None else fmt_up(s.half_width_95))
    c.print(m)

    b = r.budget
    if b is not None:
        status = Text("budget: ", style="bold")
        if b.kind == "rho":
            status.append(f"ρ ≤ {fmt_num(b.limit)}: spent ρ = {fmt_up(b.spent)} — ")
        else:
            status.append(f"ε ≤ {fmt_num(b.limit)} at δ = {fmt_num(b.delta)}: spent ε = {fmt_up(b.spent)} — ")
        if b.holds:
            status.append("holds", style="bold green")
            status.append(f", remaining {fmt_down(b.remaining)}")
        else:
            status.append("EXCEEDED", style="bold red")
            if b.remaining != float("-inf"):
                status.append(f" by {fmt_up(-b.remaining)}")
        if b.note:
            status.append(f" ({b.note})")
        c.print(status)
    for w in r.warnings:
        c.print(Text(f"warning: {w}", style="yellow"))
    if plot is not None:
        c.print(Text(f"plot written to {plot}", style="dim"))
