"""``renyi accuracy``: the interval a noise level gives, or the noise an interval allows."""

from __future__ import annotations

import math
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from renyi.cli._common import EXIT_USER, CLIError, console, print_json, user_errors
from renyi.core.formatting import fmt_down, fmt_num, fmt_up


class Noise(str, Enum):
    gaussian = "gaussian"
    laplace = "laplace"
    discrete_gaussian = "discrete-gaussian"
    discrete_laplace = "discrete-laplace"


class Method(str, Enum):
    independent = "independent"
    union = "union"


def _mechanism(kind: Noise, param: float, sensitivity: float) -> Any:
    from renyi import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace

    if kind is Noise.gaussian:
        return Gaussian(param, sensitivity)
    if kind is Noise.laplace:
        return Laplace(param, sensitivity)
    if kind is Noise.discrete_gaussian:
        if not float(sensitivity).is_integer():
            raise CLIError("discrete-gaussian needs an integer --sensitivity", EXIT_USER)
        return DiscreteGaussian(param, int(sensitivity))
    if not float(sensitivity).is_integer():
        raise CLIError("discrete-laplace needs an integer --sensitivity", EXIT_USER)
    return DiscreteLaplace(param, int(sensitivity))


def _privacy(m: Any, delta: float) -> dict[str, Any]:
    out: dict[str, Any] = {"epsilon": m.epsilon(delta), "delta": delta}
    rho = getattr(m, "rho", None)
    if rho is not None:
        out["rho"] = float(rho)
    if hasattr(m.epsilon, "__float__"):
        out["pure_epsilon"] = float(m.epsilon)
    return out


def accuracy(
    noise: Annotated[Noise, typer.Argument(help="The noise added to each answer.", show_default=False)],
    sigma: Annotated[Optional[float], typer.Option(help="σ (gaussian, discrete-gaussian).")] = None,
    scale: Annotated[Optional[float], typer.Option(help="Scale b (laplace, discrete-laplace).")] = None,
    half_width: Annotated[Optional[float], typer.Option(
        help="Solve for the noise: the largest σ or scale whose interval is at most ±this.")] = None,
    cells: Annotated[int, typer.Option(help="Number of answers that must all be within the interval.")] = 1,
    beta: Annotated[Optional[float], typer.Option(
        help="Failure probability β: P[some answer is outside] ≤ β (default 0.05).")] = None,
    coverage: Annotated[Optional[float], typer.Option(help="Coverage 1 − β, instead of --beta.")] = None,
    method: Annotated[Method, typer.Option(
        help="independent: exact for independent noise; union: the union bound over cells.")] = Method.independent,
    sensitivity: Annotated[float, typer.Option(help="Sensitivity Δ for the privacy columns (ℓ₂ Gaussians, ℓ₁ Laplace).")] = 1.0,
    delta: Annotated[float, typer.Option(help="δ at which ε is reported.")] = 1e-6,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Accuracy of noisy answers: the simultaneous interval, or the noise for an interval.

    With --sigma/--scale: the half-width λ such that all --cells answers are within ±λ with
    probability ≥ 1 − β (rounded up). With --half-width: the largest σ or scale that keeps
    all answers within ±λ (rounded down), with the privacy it costs: ρ = Δ²/(2σ²) and ε at δ.

    Examples:

        renyi accuracy gaussian --sigma 100 --cells 3000 --beta 0.05

        renyi accuracy gaussian --half-width 300 --cells 3000

        renyi accuracy discrete-laplace --scale 4 --coverage 0.9 --json
    """
    with user_errors():
        from renyi.accounting import accuracy as acc

        if beta is not None and coverage is not None:
            raise CLIError("give --beta or --coverage, not both", EXIT_USER)
        b = beta if beta is not None else (None if coverage is not None else 0.05)
        cov = coverage if coverage is not None else 0.95
        param = sigma if noise in (Noise.gaussian, Noise.discrete_gaussian) else scale
        other = scale if noise in (Noise.gaussian, Noise.discrete_gaussian) else sigma
        pname = "sigma" if noise in (Noise.gaussian, Noise.discrete_gaussian) else "scale"
        if other is not None:
            raise CLIError(f"{noise.value} takes --{pname}, not --{'scale' if pname == 'sigma' else 'sigma'}",
                           EXIT_USER)
        if (param is None) == (half_width is None):
            raise CLIError(f"give exactly one of --{pname} and --half-width", EXIT_USER)
        kind = noise.value.replace("-", "_")
        if half_width is not None:
            param = acc.noise_for(half_width, cov, cells, kind, beta=b, method=method.value)
            solved = True
        else:
            solved = False
        assert param is not None
        m = _mechanism(noise, param, sensitivity)
        lam = acc.half_width(m, cov, cells, beta=b, method=method.value)
        lam1 = acc.half_width(m, cov, 1, beta=b, method=method.value) if cells > 1 else lam
        fail = acc.failure_probability(m, lam, cells, method=method.value)
        out: dict[str, Any] = {
            "noise": noise.value, pname: param, "solved": pname if solved else "half_width",
            "cells": cells, "beta": b if b is not None else 1.0 - cov, "method": method.value,
            "half_width": lam, "half_width_one_cell": lam1, "failure_probability": fail,
            "sensitivity": sensitivity, "privacy": _privacy(m, delta),
        }
        if half_width is not None:
            out["requested_half_width"] = half_width
        if json_:
            print_json(out)
            return
        _render(out, pname)


def _render(out: dict[str, Any], pname: str) -> None:
    from rich.text import Text

    c = console()
    sym = "σ" if pname == "sigma" else "b"
    head = Text()
    head.append("renyi accuracy", style="bold")
    head.append(f" · {out['noise']} · {out['cells']:,} cell{'s' if out['cells'] > 1 else ''} · "
                f"β = {out['beta']:.6g} ({out['method']})")
    c.print(head)
    line = Text()
    if out["solved"] == pname:
        line.append(f"{sym} ≤ ", style="bold")
        line.append(fmt_down(out[pname], 6), style="bold green")
        line.append(f"  keeps all answers within ±{fmt_num(out['requested_half_width'])}")
    else:
        line.append(f"{sym} = {fmt_num(out[pname])}")
    c.print(line)
    hw = Text()
    hw.append("half-width ", style="bold")
    hw.append(f"±{fmt_up(out['half_width'], 6)}", style="bold green")
    hw.append(f" for all {out['cells']:,} answers at once" if out["cells"] > 1 else " for the answer")
    if out["cells"] > 1:
        hw.append(f"  (±{fmt_up(out['half_width_one_cell'], 6)} for one answer alone)")
    c.print(hw)
    c.print(Text(f"P[some answer outside] = {fmt_up(out['failure_probability'], 4)}", style="dim"))
    p = out["privacy"]
    priv = Text()
    priv.append("privacy ", style="bold")
    priv.append(f"(sensitivity {fmt_num(out['sensitivity'])}): ")
    parts = []
    if "rho" in p:
        parts.append(f"ρ = {fmt_up(p['rho'])}")
    if "pure_epsilon" in p and math.isfinite(p["pure_epsilon"]):
        parts.append(f"pure ε = {fmt_up(p['pure_epsilon'])}")
    parts.append(f"ε = {fmt_up(p['epsilon'])} at δ = {fmt_num(p['delta'])}")
    priv.append(", ".join(parts))
    c.print(priv)


class Loss(str, Enum):
    weights = "weights"
    variance = "variance"
    max_relative = "max-relative"


_QUERY_KEYS = {"sensitivity": float, "cells": int, "weight": float, "magnitude": float}


def _parse_query(text: str) -> dict[str, Any]:
    """``NAME`` or ``NAME:key=value,key=value`` (keys: sensitivity, cells, weight, magnitude)."""
    name, _, rest = text.partition(":")
    if not name.strip():
        raise CLIError(f"--query needs a name: {text!r}", EXIT_USER)
    out: dict[str, Any] = {"name": name.strip()}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, val = item.partition("=")
        key = key.strip()
        if not eq or key not in _QUERY_KEYS:
            raise CLIError(f"--query {text!r}: expected key=value with key in {', '.join(_QUERY_KEYS)}", EXIT_USER)
        try:
            num = float(val)
            out[key] = int(num) if _QUERY_KEYS[key] is int and num.is_integer() else num
        except ValueError:
            raise CLIError(f"--query {text!r}: {key} must be a number; got {val!r}", EXIT_USER) from None
    return out


def allocate(
    query: Annotated[list[str], typer.Option(
        help="A query: NAME or NAME:sensitivity=Δ,cells=T,weight=w,magnitude=m (repeat the option).")],
    rho: Annotated[Optional[float], typer.Option(help="A ρ-zCDP budget, spent on Gaussian noise.")] = None,
    epsilon: Annotated[Optional[float], typer.Option(help="A pure ε-DP budget, spent on Laplace noise.")] = None,
    loss: Annotated[Loss, typer.Option(help="What to minimise.")] = Loss.weights,
    coverage: Annotated[float, typer.Option(help="Coverage of each query's simultaneous interval.")] = 0.95,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Split a budget over queries to minimise a loss; print the split and each query's accuracy.

    Losses: weights (share ∝ weight), variance (Σ weight·cells·variance), max-relative
    (the largest weight·half-width/magnitude).

    Examples:

        renyi allocate --rho 1 --loss max-relative --query "counts:cells=3000,magnitude=500" --query "sums:sensitivity=100,cells=3000,magnitude=2e5"

        renyi allocate --epsilon 1 --loss variance --query a --query "b:sensitivity=2" --json
    """
    with user_errors():
        from renyi import PureDP, ZCDP
        from renyi.accounting import accuracy as acc

        if (rho is None) == (epsilon is None):
            raise CLIError("give exactly one of --rho and --epsilon", EXIT_USER)
        budget = ZCDP(rho) if rho is not None else PureDP(epsilon)  # type: ignore[arg-type]
        a = acc.allocate(budget, [_parse_query(q) for q in query], loss=loss.value.replace("-", "_"),
                         coverage=coverage)
        if json_:
            print_json(a.to_dict())
            return
        from rich.table import Table
        from rich.text import Text

        c = console()
        sym = "ρ" if a.unit == "rho" else "ε"
        head = Text()
        head.append("renyi allocate", style="bold")
        head.append(f" · {sym} = {fmt_num(a.total)} · {a.kind} noise · loss: {loss.value} · "
                    f"{fmt_num(a.coverage)} intervals")
        c.print(head)
        t = Table()
        for col, just in (("query", "left"), (sym, "right"), ("share", "right"),
                          ("σ" if a.kind == "gaussian" else "b", "right"), ("± half-width", "right"),
                          ("relative", "right")):
            t.add_column(col, justify=just)  # type: ignore[arg-type]
        for q in a.queries:
            t.add_row(Text(q.name), fmt_down(q.budget), f"{100 * q.share:.1f}%", fmt_up(q.noise),
                      fmt_up(q.half_width), fmt_up(q.relative_half_width))
        c.print(t)
        c.print(f"loss = {fmt_up(a.loss_value)}", markup=False)
