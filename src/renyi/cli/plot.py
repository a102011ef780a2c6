"""``renyi plot``: figures (PNG, SVG or PDF by the output's suffix)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from renyi.cli._common import DelayedProgress, console, print_json, user_errors
from renyi.cli.mechanism import KOpt, Mech, POpt, ScaleOpt, SensOpt, SigmaOpt

app = typer.Typer(
    help="Figures: ε vs compositions, RDP curves, privacy profiles, the privacy loss distribution, "
         "the membership-test trade-off curve.",
    no_args_is_help=True, rich_markup_mode=None,
)

OutOpt = Annotated[Path, typer.Option("--output", "-o", help="Output file (.png, .svg or .pdf).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")]


def _done(kind: str, path: Path, json_: bool, extra: dict[str, Any] | None = None) -> None:
    from renyi.plots import DPI

    info = {"figure": kind, "output": str(path), "dpi": DPI, **(extra or {})}
    if json_:
        print_json(info)
    else:
        console().print(f"wrote {path}", markup=False)


@app.command()
def compositions(
    sigma: Annotated[float, typer.Option(help="Noise standard deviation σ of the Gaussian mechanism.")] = 20.0,
    sensitivity: Annotated[float, typer.Option(help="ℓ₂ sensitivity Δ.")] = 1.0,
    delta: Annotated[float, typer.Option(help="δ at which ε is reported.")] = 1e-5,
    max_count: Annotated[int, typer.Option(help="Largest number of compositions k.")] = 10_000,
    output: OutOpt = Path("compositions.png"),
    json_: JsonOpt = False,
) -> None:
    """ε versus the number of compositions of a Gaussian mechanism under each definition.

    Exact (GDP) vs RDP with the order optimised vs RDP at fixed orders vs zCDP vs plain
    (ε, δ) advanced and basic composition, on log–log axes.

    Examples:

        renyi plot compositions --sigma 20 --max-count 10000 -o compositions.png

        renyi plot compositions --sigma 5 --delta 1e-6 -o compositions.svg
    """
    with user_errors():
        from renyi.cli._plotting import check_output, save_figure

        check_output(output)
        with DelayedProgress("computing ε for each k") as step:
            save_figure("compositions", output, sigma=sigma, sensitivity=sensitivity, delta=delta,
                        max_count=max_count, progress=step)
        _done("compositions", output, json_, {"sigma": sigma, "delta": delta, "max_count": max_count})


def _report(pipeline: Path, delta: Optional[float]) -> Any:
    from renyi.pipeline import load_pipeline
    from renyi.report import compute_report

    with DelayedProgress("computing report", total=7) as step:
        return compute_report(load_pipeline(pipeline), delta=delta, progress=step)


PipeArg = Annotated[Path, typer.Argument(help="Pipeline file (TOML or JSON).", show_default=False)]
DeltaOpt = Annotated[Optional[float], typer.Option(help="δ (default: the pipeline's).")]


@app.command()
def rdp(pipeline: PipeArg, output: OutOpt = Path("rdp.png"), delta: DeltaOpt = None, json_: JsonOpt = False) -> None:
    """The RDP curve ε(α) of a pipeline, each mechanism's part, and the witness order.

    Examples:

        renyi plot rdp examples/dpsgd.toml -o dpsgd-rdp.png
    """
    with user_errors():
        from renyi.cli._plotting import check_output, save_figure

        check_output(output)
        r = _report(pipeline, delta)
        save_figure("rdp", output, report=r)
        _done("rdp", output, json_, {"witness": r.rdp_witness, "epsilon": r.route_by_key("rdp").epsilon})


@app.command()
def profile(pipeline: PipeArg, output: OutOpt = Path("profile.png"), delta: DeltaOpt = None,
            points: Annotated[int, typer.Option(help="Number of ε values.")] = 60,
            json_: JsonOpt = False) -> None:
    """The privacy profile δ(ε) of a pipeline through each definition.

    Examples:

        renyi plot profile examples/census.toml -o census-profile.png
    """
    with user_errors():
        from renyi.cli._plotting import check_output, save_figure

        check_output(output)
        r = _report(pipeline, delta)
        with DelayedProgress("computing δ(ε)") as step:
            save_figure("profile", output, report=r, points=points, progress=step)
        _done("profile", output, json_, {"epsilon": r.epsilon, "delta": r.delta})


@app.command()
def tradeoff(pipeline: PipeArg, output: OutOpt = Path("tradeoff.png"), delta: DeltaOpt = None,
             log_fpr: Annotated[bool, typer.Option("--log-fpr/--linear-fpr",
                                                   help="Logarithmic FPR and TPR axes (the default: the low "
                                                        "false-positive rates an attack needs), or linear.")] = True,
             points: Annotated[int, typer.Option(help="Number of false-positive rates.")] = 60,
             json_: JsonOpt = False) -> None:
    """The attacker's true-positive rate against the false-positive rate (membership test).

    Draws the PLD's certified upper bound, the tightest μ-GDP curve that holds, the RDP-implied
    bound and the random-guess diagonal.

    Examples:

        renyi plot tradeoff examples/dpsgd.toml -o dpsgd-tradeoff.png

        renyi plot tradeoff examples/dpsgd.toml --linear-fpr -o dpsgd-tradeoff.svg
    """
    with user_errors():
        from renyi.cli._plotting import check_output, save_figure

        check_output(output)
        if points < 2:
            from renyi.cli._common import EXIT_USER, CLIError

            raise CLIError(f"--points must be at least 2; got {points}", EXIT_USER)
        r = _report(pipeline, delta)
        with DelayedProgress("computing the trade-off curve"):
            save_figure("tradeoff", output, report=r, points=points, log_fpr=log_fpr)
        extra: dict[str, Any] = {"log_fpr": log_fpr}
        if getattr(r, "gdp", None) is not None:
            extra["gdp"] = {"mu": r.gdp.mu, "delta0": r.gdp.delta0, "method": r.gdp.method}
        _done("tradeoff", output, json_, extra)


@app.command()
def plrv(
    mechanism: Annotated[Mech, typer.Argument(help="The mechanism.", show_default=False)],
    sigma: SigmaOpt = None,
    scale: ScaleOpt = None,
    epsilon: Annotated[Optional[float], typer.Option(help="ε (randomized-response, exponential).")] = None,
    p: POpt = None,
    k: KOpt = None,
    sensitivity: SensOpt = None,
    orders: Annotated[str, typer.Option(help="Comma-separated orders α of the power means (inf allowed).")]
    = "1,2,3,8,inf",
    output: OutOpt = Path("plrv.png"),
    json_: JsonOpt = False,
) -> None:
    """The privacy loss random variable of a mechanism with its α-power means.

    The log of the α-power mean of e^Z is the Rényi divergence D_α: α → 1 is the mean of Z
    (KL), α = ∞ its maximum. The figure shows how higher orders weigh the bad tail.

    Examples:

        renyi plot plrv gaussian --sigma 1 -o gaussian-plrv.png

        renyi plot plrv laplace --scale 1 -o laplace-plrv.png
    """
    with user_errors():
        from renyi.pipeline import build_mechanism

        from renyi.cli._plotting import check_output, save_figure
        from renyi.cli.convert import _parse_orders

        check_output(output)
        params = {k_: v for k_, v in {"sigma": sigma, "scale": scale, "epsilon": epsilon, "p": p, "k": k,
                                      "sensitivity": sensitivity}.items() if v is not None}
        m = build_mechanism(mechanism.value, params, where=mechanism.value)
        alphas = _parse_orders(orders)
        label = f"{mechanism.value}(" + ", ".join(f"{k_}={v:g}" for k_, v in params.items()) + ")"
        save_figure("plrv", output, mechanism=m, orders=tuple(alphas), label=label)
        _done("plrv", output, json_, {"mechanism": repr(m), "orders": [a if math.isfinite(a) else "inf"
                                                                       for a in alphas]})
