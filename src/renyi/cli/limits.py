"""``renyi limits``: sample sizes below which no zCDP algorithm can be accurate."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Optional

import typer

from renyi.cli._common import console, print_json, user_errors
from renyi.core.formatting import fmt_num, fmt_up

app = typer.Typer(
    help="Lower bounds for zCDP (Bun & Steinke 2016, §6) beside what the Gaussian mechanism achieves.",
    no_args_is_help=True, rich_markup_mode=None,
)


class Neighbouring(str, Enum):
    replace_one = "replace-one"
    add_remove = "add-remove"


RhoOpt = Annotated[float, typer.Option(help="ρ of the zCDP guarantee.")]
XiOpt = Annotated[float, typer.Option(help="ξ of a (ξ, ρ)-zCDP guarantee.")]
BetaOpt = Annotated[float, typer.Option(help="Failure probability β.")]
NbOpt = Annotated[Neighbouring, typer.Option("--neighbouring", "--neighboring", help="The neighbouring relation ρ is stated under.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _render(title: str, out: dict[str, Any], task: str) -> None:
    from rich.table import Table
    from rich.text import Text

    c = console()
    head = Text()
    head.append("renyi limits", style="bold")
    head.append(f" · {title}")
    c.print(head)
    c.print(Text(task, style="dim"))
    t = Table(show_header=True)
    t.add_column("")
    t.add_column("n", justify="right")
    t.add_column("how")
    t.add_row("no zCDP algorithm below", Text(f"{out['n_min']:,}", style="bold"),
              f"Fano: needs I ≥ {fmt_num(round(out['fano_nats'], 4))} nats; "
              f"zCDP gives I ≤ ξ·n·H_n + ρn² (Bun & Steinke 2016, Prop. 28)")
    t.add_row("the Gaussian mechanism at", Text(f"{out['n_gaussian']:,}", style="bold green"),
              f"σ = {fmt_up(out['sigma'], 6)}, all cells within n/2 with probability ≥ 1 − β")
    if out.get("n_stability") is not None:
        t.add_row(f"(ε, δ) = ({fmt_up(out['epsilon'])}, {fmt_num(out['delta'])}) stability histogram",
                  f"{out['n_stability']:,}", "independent of the number of keys")
    c.print(t)
    c.print(f"gap: the Gaussian needs {out['n_gaussian'] / out['n_min']:.2f}× the lower bound", markup=False)


@app.command()
def histogram(
    keys: Annotated[float, typer.Option(help="Number of keys T (e.g. 1e6).")],
    rho: RhoOpt,
    beta: BetaOpt = 0.05,
    xi: XiOpt = 0.0,
    neighbouring: NbOpt = Neighbouring.replace_one,
    delta: Annotated[Optional[float], typer.Option(
        help="Also show the (ε, δ)-DP stability-based histogram at ρ's ε at this δ.")] = 1e-6,
    json_: JsonOpt = False,
) -> None:
    """How many rows any ρ-zCDP histogram over T keys needs to keep every count within n/2.

    Prints the lower bound (mutual information + Fano), the n the Gaussian mechanism
    achieves, and the n of an (ε, δ)-DP stability-based histogram (no dependence on T).

    Examples:

        renyi limits histogram --keys 1e6 --rho 0.5 --beta 0.05

        renyi limits histogram --keys 1e100 --rho 0.1 --json
    """
    with user_errors():
        import math

        from renyi import ZCDP
        from renyi.accounting import limits as lim

        nb = neighbouring.value.replace("-", "_")
        n_min = lim.histogram_min_n(keys, rho, beta, xi=xi, neighbouring=nb)
        n_g = lim.gaussian_histogram_n(keys, rho, beta, neighbouring=nb)
        sens = math.sqrt(2.0) if nb == "replace_one" else 1.0
        out: dict[str, Any] = {
            "task": "histogram", "keys": keys, "rho": rho, "xi": xi, "beta": beta, "neighbouring": nb,
            "fano_nats": lim.fano_bound(math.log(keys), beta), "n_min": n_min, "n_gaussian": n_g,
            "sigma": sens / math.sqrt(2.0 * rho),
        }
        if delta is not None:
            eps = ZCDP(rho, xi).epsilon(delta)
            out.update(epsilon=eps, delta=delta, n_stability=lim.stability_histogram_n(eps, delta, beta))
        if json_:
            print_json(out)
            return
        _render(f"histogram over T = {fmt_num(keys)} keys · ρ = {fmt_num(rho)}"
                + (f", ξ = {fmt_num(xi)}" if xi else "") + f" · β = {fmt_num(beta)} · {nb.replace('_', '-')}",
                out, "task: every count within n/2 with probability ≥ 1 − β")


@app.command()
def marginals(
    d: Annotated[int, typer.Option(help="Number of binary attributes d.")],
    rho: RhoOpt,
    beta: BetaOpt = 0.05,
    xi: XiOpt = 0.0,
    neighbouring: NbOpt = Neighbouring.replace_one,
    json_: JsonOpt = False,
) -> None:
    """How many rows any ρ-zCDP algorithm needs to answer d one-way marginals within 1/2.

    Examples:

        renyi limits marginals --d 1000 --rho 0.5
    """
    with user_errors():
        import math

        from renyi.accounting import limits as lim

        nb = neighbouring.value.replace("-", "_")
        out: dict[str, Any] = {
            "task": "one-way marginals", "d": d, "rho": rho, "xi": xi, "beta": beta, "neighbouring": nb,
            "fano_nats": lim.fano_bound(d * math.log(2.0), beta),
            "n_min": lim.marginals_min_n(d, rho, beta, xi=xi, neighbouring=nb),
            "n_gaussian": lim.gaussian_marginals_n(d, rho, beta, neighbouring=nb),
            "sigma": math.sqrt(d) / math.sqrt(2.0 * rho),
        }
        if json_:
            print_json(out)
            return
        _render(f"{d:,} one-way marginals · ρ = {fmt_num(rho)} · β = {fmt_num(beta)} · {nb.replace('_', '-')}",
                out, "task: every marginal within 1/2 with probability ≥ 1 − β")


@app.command()
def information(
    n: Annotated[int, typer.Option(help="Number of rows n.")],
    rho: RhoOpt,
    xi: XiOpt = 0.0,
    block: Annotated[Optional[int], typer.Option(
        help="Rows per independent block (1 = independent rows; omit for dependent rows).")] = None,
    neighbouring: NbOpt = Neighbouring.replace_one,
    json_: JsonOpt = False,
) -> None:
    """Upper bound on the mutual information I(X; M(X)) of a (ξ, ρ)-zCDP mechanism, in nats.

    Examples:

        renyi limits information --n 1000 --rho 0.01

        renyi limits information --n 1000 --rho 0.01 --block 1
    """
    with user_errors():
        from renyi import ZCDP
        from renyi.accounting import limits as lim

        nb = neighbouring.value.replace("-", "_")
        val = lim.mutual_information_bound(ZCDP(rho, xi), n, block=block, neighbouring=nb)
        rows = "dependent rows" if block is None else ("independent rows" if block == 1 else
                                                       f"{n // block} independent blocks of {block} rows")
        bits = val / 0.6931471805599453
        out = {"n": n, "rho": rho, "xi": xi, "block": block, "neighbouring": nb, "rows": rows,
               "mutual_information_nats": val, "bits": bits}
        if json_:
            print_json(out)
            return
        console().print(f"I(X; M(X)) ≤ {fmt_up(val)} nats ({fmt_up(bits)} bits) for n = {n:,}, {rows}",
                        markup=False)
