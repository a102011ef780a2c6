"""The ``renyi`` command line: privacy reports, single mechanisms, calibration, conversions,
plots and ledgers.

Kept light on purpose: this module and the command modules import only the standard library,
typer and rich; numpy, scipy, matplotlib and the library itself are imported inside the
commands, so ``renyi --help`` starts fast.
"""

from __future__ import annotations

import typer

from renyi.cli import accuracy as _accuracy
from renyi.cli import audit as _audit
from renyi.cli import convert as _convert
from renyi.cli import examples as _examples
from renyi.cli import ledger as _ledger
from renyi.cli import limits as _limits
from renyi.cli import mechanism as _mechanism
from renyi.cli import plot as _plot
from renyi.cli import release as _release
from renyi.cli import report as _report

__all__ = ["app", "main"]

app = typer.Typer(
    name="renyi",
    help=(
        "Rényi DP and zCDP accounting: what is my ε, what noise do I need, what does ρ mean in "
        "(ε, δ)? Every printed ε is a valid upper bound, rounded up.\n\n"
        "Start with:  renyi report --example dpsgd   (renyi examples lists them)"
    ),
    no_args_is_help=True,
    rich_markup_mode=None,  # plain click help: rich's help renderer costs ~0.3 s of imports
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

app.command(name="report", short_help="Privacy report of a pipeline file: ε through every definition.")(
    _report.report)
app.command(name="epsilon", short_help="ε at δ of one mechanism, run --steps times.")(_mechanism.epsilon)
app.command(name="delta", short_help="δ at ε of one mechanism, run --steps times.")(_mechanism.delta)
app.command(name="calibrate", short_help="Solve for σ, scale, ε, steps or rate to meet a target.")(
    _mechanism.calibrate)
app.command(name="convert", short_help="Convert a guarantee between definitions.")(_convert.convert)
app.command(name="release", short_help="Noisy counts, sums and means from a table (DuckDB), with a ledger.")(
    _release.release)
app.add_typer(_plot.app, name="plot", short_help="Figures (PNG/SVG): compositions, RDP, profile, PLRV.")
app.command(name="examples", short_help="List the shipped example pipelines, or print one.")(_examples.examples)
app.add_typer(_ledger.app, name="ledger", short_help="Show or export an accountant's ledger.")
app.command(name="accuracy", short_help="Interval half-width of noisy answers, or the noise for a half-width.")(
    _accuracy.accuracy)
app.command(name="allocate", short_help="Split a budget over queries to minimise a declared loss.")(
    _accuracy.allocate)
app.add_typer(_limits.app, name="limits", short_help="Sample sizes below which no zCDP algorithm is accurate.")
app.command(name="audit", short_help="Lower bounds on ε from canary scores, beside the certified ε.")(_audit.audit)


def _version(value: bool) -> None:
    if value:
        from renyi._version import __version__

        typer.echo(f"renyi {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Rényi DP and zCDP accounting from the command line."""


def main() -> None:
    """Entry point of the ``renyi`` console script."""
    from renyi.cli._common import one_line_usage_errors, one_line_warnings

    one_line_warnings()
    one_line_usage_errors()
    app()
