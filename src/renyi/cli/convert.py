"""``renyi convert``: a guarantee of one definition in the terms of another."""

from __future__ import annotations

import math
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from renyi.cli._common import EXIT_USER, CLIError, console, print_json, user_errors
from renyi.core.formatting import fmt_down, fmt_num, fmt_up


class Source(str, Enum):
    pure = "pure"
    approx = "approx"
    zcdp = "zcdp"
    approx_zcdp = "approx-zcdp"
    rdp = "rdp"
    gdp = "gdp"
    mcdp = "mcdp"


class Target(str, Enum):
    approx = "approx"
    zcdp = "zcdp"
    rdp = "rdp"
    pure = "pure"
    gdp = "gdp"


DEFAULT_ORDERS = (1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0, math.inf)


def _source(src: Source, epsilon: float | None, delta: float | None, rho: float | None, xi: float | None,
            alpha: float | None, mu: float | None, tau: float | None) -> tuple[Any, bool]:
    """The guarantee, and whether ``--delta`` was consumed as one of its parameters."""
    from renyi.guarantees import GDP, MCDP, RDP, ZCDP, ApproxDP, ApproxZCDP, PureDP

    def need(name: str, v: Any) -> Any:
        if v is None:
            raise CLIError(f"{src.value} needs --{name}", EXIT_USER)
        return v

    if src is Source.pure:
        return PureDP(need("epsilon", epsilon)), False
    if src is Source.approx:
        return ApproxDP(need("epsilon", epsilon), need("delta", delta)), True
    if src is Source.zcdp:
        return ZCDP(need("rho", rho), xi or 0.0), False
    if src is Source.approx_zcdp:
        return ApproxZCDP(need("rho", rho), xi or 0.0, need("delta", delta)), True
    if src is Source.rdp:
        return RDP.from_point(need("alpha", alpha), need("epsilon", epsilon)), False
    if src is Source.gdp:
        return GDP(need("mu", mu)), False
    return MCDP(need("mu", mu), need("tau", tau)), False


def convert(
    source: Annotated[Source, typer.Argument(help="Definition of the guarantee you have.", show_default=False)],
    epsilon: Annotated[Optional[float], typer.Option(help="ε of a pure, approx or RDP (with --alpha) guarantee.")] = None,
    delta: Annotated[Optional[float], typer.Option(
        help="δ of an approx / approx-zcdp guarantee; otherwise the δ at which to report ε.")] = None,
    rho: Annotated[Optional[float], typer.Option(help="ρ of a (approximate) zCDP guarantee.")] = None,
    xi: Annotated[Optional[float], typer.Option(help="ξ of a (ξ, ρ)-zCDP guarantee.")] = None,
    alpha: Annotated[Optional[float], typer.Option(help="Order α of an RDP point (α, ε).")] = None,
    mu: Annotated[Optional[float], typer.Option(help="μ of a GDP or mCDP guarantee.")] = None,
    tau: Annotated[Optional[float], typer.Option(help="τ of an mCDP guarantee.")] = None,
    to: Annotated[Optional[Target], typer.Option(help="Target definition (default: approx when a δ is known, "
                                                      "else zcdp).")] = None,
    target_delta: Annotated[Optional[float], typer.Option(help="Report ε at this δ.")] = None,
    target_epsilon: Annotated[Optional[float], typer.Option(help="Report δ at this ε instead.")] = None,
    orders: Annotated[Optional[str], typer.Option(help="Comma-separated orders for --to rdp (inf allowed).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Convert a guarantee between definitions: (ε, δ)-DP, zCDP, RDP, pure DP, GDP, mCDP.

    Uses the tightest valid conversion and says which theorem and order gave it.

    Examples:

        renyi convert zcdp --rho 0.5 --delta 1e-6

        renyi convert pure --epsilon 1 --to zcdp

        renyi convert rdp --alpha 8 --epsilon 2 --delta 1e-5

        renyi convert gdp --mu 1 --target-epsilon 2

        renyi convert approx --epsilon 1 --delta 1e-6 --to zcdp

        renyi convert mcdp --mu 0.6 --tau 1 --to rdp --orders 2,8,32
    """
    with user_errors():
        from renyi.guarantees import ApproxDP, ApproxZCDP

        g, delta_used = _source(source, epsilon, delta, rho, xi, alpha, mu, tau)
        at_delta = target_delta if target_delta is not None else (None if delta_used else delta)
        tgt = to or (Target.approx if (at_delta is not None or target_epsilon is not None) else Target.zcdp)
        out: dict[str, Any] = {"source": repr(g), "to": tgt.value}
        c = None if json_ else console()

        if tgt is Target.approx:
            if target_epsilon is not None:
                cv = g.best_delta(target_epsilon)
                out.update(epsilon=target_epsilon, delta=cv.value, method=cv.method, witness=cv.witness)
                text = f"δ ≤ {fmt_up(cv.value)} at ε = {fmt_num(target_epsilon)}"
            else:
                if at_delta is None:
                    raise CLIError("--to approx needs the δ at which to report ε: give --delta or --target-delta",
                                   EXIT_USER)
                cv = g.best_epsilon(at_delta)
                out.update(epsilon=cv.value, delta=at_delta, method=cv.method, witness=cv.witness)
                text = f"ε ≤ {fmt_up(cv.value)} at δ = {fmt_num(at_delta)}"
            wit = "" if cv.witness is None else f", α = {'∞' if cv.witness == math.inf else f'{cv.witness:.5g}'}"
            text += f"   ({cv.method}{wit})"
        elif tgt is Target.zcdp:
            plain = ""
            if isinstance(g, ApproxDP) and float(g.delta) > 0:
                # Read as a target first: the largest plain ρ whose ρ-zCDP implies this (ε, δ)
                # (what a zCDP budget may spend); then the δ-approximate zCDP it implies.
                from renyi.guarantees.conversions import zcdp_rho_for

                pr = zcdp_rho_for(float(g.epsilon), float(g.delta))
                out.update(plain_rho=pr)
                plain = (f"plain zCDP:            ρ ≤ {fmt_down(pr)}   (the largest ρ with ρ-zCDP ⇒ "
                         f"({fmt_num(float(g.epsilon))}, {fmt_num(float(g.delta))})-DP; use it as a zCDP budget)\n"
                         "δ-approximate zCDP:    ")
                z = g.to_approx_zcdp()
            elif isinstance(g, ApproxZCDP):
                z = g
            else:
                z = g.to_zcdp()
            out.update(rho=z.rho, xi=z.xi, delta=float(getattr(z, "delta", 0.0)) if isinstance(z, ApproxZCDP) else 0.0)
            text = f"ρ ≤ {fmt_up(z.rho)}"
            if z.xi:
                text += f", ξ ≤ {fmt_up(z.xi)}"
            if out["delta"]:
                text += f", δ = {fmt_num(out['delta'])} (approximate zCDP)"
            text = plain + text + f"   ({z!r})"
        elif tgt is Target.rdp:
            alphas = _parse_orders(orders)
            vals = [float(v) for v in g.rdp(alphas)] if alphas else []
            out.update(orders=alphas, epsilons=vals)
            text = "\n".join(f"  ε({'∞' if a == math.inf else fmt_num(a)}) ≤ {fmt_up(v)}" for a, v in zip(alphas, vals))
            text = "RDP curve:\n" + text
        elif tgt is Target.pure:
            e = float(g.rdp(math.inf))
            if not math.isfinite(e):
                raise CLIError(f"{g!r} implies no pure-DP guarantee (ε(∞) = ∞)", EXIT_USER)
            out.update(epsilon=e)
            text = f"ε ≤ {fmt_up(e)} (pure DP)"
        else:
            from renyi.guarantees import GDP

            if not isinstance(g, GDP):
                raise CLIError(f"no conversion from {source.value} to GDP: only Gaussian-DP guarantees are μ-GDP",
                               EXIT_USER)
            out.update(mu=g.mu)
            text = f"μ = {fmt_up(g.mu)}"
        if json_:
            print_json(out)
        else:
            assert c is not None
            c.print(repr(g), style="dim", markup=False)
            c.print(text, markup=False)


def _parse_orders(orders: str | None) -> list[float]:
    if orders is None:
        return list(DEFAULT_ORDERS)
    out = []
    for part in orders.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(math.inf if part.lower() in ("inf", "∞") else float(part))
        except ValueError:
            raise CLIError(f"--orders must be comma-separated numbers; got {part!r}", EXIT_USER) from None
    return out
