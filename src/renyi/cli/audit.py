"""``renyi audit``: an empirical lower bound on ε from canary scores, beside the certified one."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from renyi.cli._common import DelayedProgress, console, print_json, user_errors


class Design(str, Enum):
    """How the canaries were run (``renyi.audit.DESIGN_METHODS``)."""

    one_run = "one_run"
    independent = "independent"


class Method(str, Enum):
    """The audit methods the command line offers (``all`` runs the three)."""

    all = "all"
    threshold = "threshold"
    one_run = "one_run"
    gdp = "gdp"


def audit(
    scores: Annotated[Path, typer.Argument(help="CSV file with a header: a score and an included column, "
                                                "one row per canary.", show_default=False)],
    delta: Annotated[float, typer.Option(help="δ at which ε is bounded (and certified).", show_default=False)],
    event: Annotated[Optional[Path], typer.Option("--event", metavar="PIPELINE",
                                                  help="Pipeline file (TOML/JSON) declaring what the run was: "
                                                       "its certified ε is printed beside the audit.")] = None,
    design: Annotated[Optional[Design], typer.Option(
        help="How the canaries were run: one_run = one training run with many canaries, each "
             "included by its own fair coin (only the one_run audit is valid); independent = one "
             "training run per canary (all methods valid). Unset: every method runs and each line "
             "says the design it needs.", show_default=False)] = None,
    method: Annotated[Method, typer.Option(help="Audit method (all = every method valid for "
                                                "--design).")] = Method.all,
    confidence: Annotated[float, typer.Option(help="Confidence 1 − β of each lower bound.")] = 0.95,
    score_column: Annotated[str, typer.Option(help="Name of the score column.")] = "score",
    included_column: Annotated[str, typer.Option(help="Name of the included column (1/0, true/false, "
                                                      "yes/no, in/out).")] = "included",
    plot: Annotated[Optional[Path], typer.Option("--plot", metavar="FILE",
                                                 help="Draw the empirical trade-off against the certified "
                                                      "curve (PNG, SVG or PDF).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")] = False,
) -> None:
    """Lower bounds on ε from canary scores, beside renyi's certified upper bound.

    Higher scores must mean "looks included". Each method is valid for one experiment design:
    `one_run` for one training run with many canaries, each included by its own fair coin
    (Steinke, Nasr & Jagielski 2023); `threshold` and `gdp` only for independent trials (one
    training run per canary). `gdp` reports the μ the scores rule out (valid for any mechanism)
    and the ε of that μ, valid only if the trade-off is Gaussian. Lower bounds are rounded down;
    the certified ε up.

    Examples:

        renyi audit scores.csv --delta 1e-5 --design one_run

        renyi audit scores.csv --delta 1e-5

        renyi audit scores.csv --delta 1e-5 --event examples/dpsgd.toml --plot audit.png

        renyi audit scores.csv --delta 1e-5 --method one_run --json
    """
    with user_errors():
        from renyi.audit import audit as run_audit, read_scores

        if plot is not None:
            from renyi.cli._plotting import check_output

            check_output(plot)
        s, inc = read_scores(scores, score_column=score_column, included_column=included_column)
        methods = None if method is Method.all else (method.value,)
        with DelayedProgress("auditing"):
            rep = run_audit(s, inc, delta=delta, confidence=confidence, methods=methods,
                            event=None if event is None else event,
                            design=None if design is None else design.value)
        if plot is not None:
            from renyi.cli._plotting import save_figure

            with DelayedProgress("drawing"):
                save_figure("audit", plot, report=rep)
        if json_:
            out = rep.to_dict()
            out["scores"] = str(scores)
            if plot is not None:
                out["plot"] = str(plot)
            print_json(out)
        else:
            render_audit(rep, scores, plot)


#: The experiment design each method needs, in a table cell (renyi.audit.DESIGNS in full).
_VALID_FOR = {"threshold": "one run per canary", "one_run": "one run, a fair coin per canary",
              "gdp": "one run per canary"}


def render_audit(rep: Any, source: Path, plot: Path | None = None) -> None:
    """Render an :class:`renyi.audit.AuditReport` for people (a rich table)."""
    from rich.table import Table
    from rich.text import Text

    from renyi.core.formatting import fmt_down, fmt_num, fmt_up

    c = console()
    first = rep.results[0]
    head = Text()
    head.append("renyi audit", style="bold")
    head.append(f" · {source} · {first.canaries} canaries, {first.included} included"
                f" · δ = {fmt_num(rep.delta)} · confidence {fmt_num(rep.confidence)}")
    if rep.design:
        head.append(f" · design {rep.design}")
    c.print(head)
    t = Table(show_edge=False, pad_edge=False)
    t.add_column("bound")
    t.add_column("ε", justify="right")
    t.add_column("how")
    t.add_column("valid for")
    for r in rep.results:
        how = r.witness
        if r.mu is not None:
            how = f"μ ≥ {fmt_down(r.mu)} (valid for any mechanism); ε assumes a Gaussian trade-off"
        t.add_row(f"audit, {r.method}", f"≥ {fmt_down(r.epsilon)}", how, _VALID_FOR[r.method])
    if rep.certified is not None:
        if rep.lower is not None:
            t.add_row("renyi lower", f"≥ {fmt_down(rep.lower)}", "the declared event's true ε is at least this")
        t.add_row("renyi certified", f"≤ {fmt_up(rep.certified)}", f"{rep.event} ({rep.certified_method})")
    c.print(t)
    if not rep.design and any(r.method != "one_run" for r in rep.results):
        c.print(Text("threshold and gdp count each canary as an independent trial (one training run per "
                     "canary); for one run with many canaries only one_run is valid (--design one_run)",
                     style="yellow"))
    bad = rep.contradictions()
    if bad:
        c.print(Text(f"the audit's lower bound ({', '.join(bad)}) exceeds the certified ε: the run is not the "
                     "declared event, or its accounting is wrong (or the audit's "
                     f"{fmt_num(1 - rep.confidence)} chance of error came up)", style="bold red"))
    elif rep.certified is not None:
        c.print(Text("consistent: every assumption-free audit bound is at most the certified ε", style="dim"))
    if plot is not None:
        c.print(f"wrote {plot}", markup=False)
