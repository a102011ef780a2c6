"""``renyi epsilon``, ``renyi delta`` and ``renyi calibrate``: one mechanism, run many times."""

from __future__ import annotations

import math
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from renyi.cli._common import EXIT_USER, CLIError, DelayedProgress, console, print_json, user_errors
from renyi.core.formatting import fmt_down, fmt_num, fmt_up


class Mech(str, Enum):
    gaussian = "gaussian"
    laplace = "laplace"
    randomized_response = "randomized-response"
    discrete_gaussian = "discrete-gaussian"
    discrete_laplace = "discrete-laplace"
    exponential = "exponential"


class Scheme(str, Enum):
    poisson = "poisson"
    without_replacement = "without-replacement"
    allocation = "allocation"
    shuffle = "shuffle"


class Neighbouring(str, Enum):
    add_remove = "add-remove"
    replace_one = "replace-one"


class Method(str, Enum):
    exact = "exact"
    pld = "pld"
    rdp = "rdp"
    zcdp = "zcdp"


class Solve(str, Enum):
    sigma = "sigma"
    scale = "scale"
    epsilon = "epsilon"
    steps = "steps"
    rate = "rate"


MechArg = Annotated[Mech, typer.Argument(help="The mechanism.", show_default=False)]
SigmaOpt = Annotated[Optional[float], typer.Option(help="Noise standard deviation σ (gaussian, discrete-gaussian).")]
ScaleOpt = Annotated[Optional[float], typer.Option(help="Noise scale b (laplace, discrete-laplace).")]
SensOpt = Annotated[Optional[float], typer.Option(help="Sensitivity Δ (ℓ₂ for Gaussians, ℓ₁ for Laplace).")]
POpt = Annotated[Optional[float], typer.Option("--p", help="Truth probability (randomized-response).")]
KOpt = Annotated[Optional[int], typer.Option("--k", help="Number of categories (randomized-response).")]
RateOpt = Annotated[Optional[float], typer.Option(help="Sampling rate q ∈ [0, 1] (batch size / dataset size).")]
SamplingOpt = Annotated[Scheme, typer.Option(help="Sampling scheme when --rate is given (allocation and shuffle: "
                                                 "rate = 1/steps per epoch; --steps counts steps).")]
StepsOpt = Annotated[Optional[int], typer.Option(help="Number of runs (compositions), e.g. DP-SGD steps [default: 1].")]
BatchOpt = Annotated[Optional[int], typer.Option(
    "--batch-size", help="Expected batch size B; with --dataset-size n the sampling rate is B/n.")]
DatasetOpt = Annotated[Optional[int], typer.Option("--dataset-size", help="Data set size n (with --batch-size).")]
EpochsOpt = Annotated[Optional[float], typer.Option(
    help="Passes over the data: runs = epochs / rate, rounded up (instead of --steps).")]
NeighOpt = Annotated[Optional[Neighbouring], typer.Option(
    "--neighbouring", help="Neighbouring relation of the mechanism (gaussian, laplace, discrete-*, exponential).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
GroupOpt = Annotated[Optional[int], typer.Option(
    "--group-size", help="User-level DP: the unit is a person with up to this many examples, each example "
                         "Poisson-sampled (gaussian with --rate; the tight Binomial-mixture analysis).")]
MethodOpt = Annotated[Optional[Method], typer.Option(
    help="Accounting route: exact (Gaussians), pld (numerical privacy loss distributions), rdp or zcdp. "
         "Default: the tightest valid route.")]


class _Schedule:
    """How often and on what sample the mechanism runs (the CLI's DP-SGD words)."""

    def __init__(self, steps: int | None, rate: float | None, sampling: Scheme, batch_size: int | None = None,
                 dataset_size: int | None = None, epochs: float | None = None,
                 neighbouring: Neighbouring | None = None, group_size: int | None = None) -> None:
        if (batch_size is None) != (dataset_size is None):
            raise CLIError("--batch-size and --dataset-size go together (the sampling rate is their ratio)",
                           EXIT_USER)
        if batch_size is not None and rate is not None:
            raise CLIError("give --rate or --batch-size/--dataset-size, not both", EXIT_USER)
        if epochs is not None and rate is None and batch_size is None:
            raise CLIError("--epochs needs a sampling rate (--rate, or --batch-size and --dataset-size)", EXIT_USER)
        self.steps, self.rate, self.sampling = steps, rate, sampling
        self.batch_size, self.dataset_size, self.epochs = batch_size, dataset_size, epochs
        self.neighbouring = neighbouring
        if group_size is not None and (sampling != Scheme.poisson or (rate is None and batch_size is None)):
            raise CLIError("--group-size needs Poisson sampling of examples (--rate, or --batch-size and "
                           "--dataset-size, with --sampling poisson)", EXIT_USER)
        self.group_size = group_size

    def entry(self, mech: Mech, params: dict[str, Any], steps: int | None = None,
              rate: float | None = None) -> dict[str, Any]:
        n = self.steps if steps is None else steps
        q = self.rate if rate is None else rate
        entry: dict[str, Any] = {"name": mech.value, "type": mech.value,
                                 **{k: v for k, v in params.items() if v is not None}}
        if self.neighbouring is not None:
            entry["neighbouring"] = self.neighbouring.value.replace("-", "_")
        if n is not None or self.epochs is None:
            entry["count"] = 1 if n is None else n
        if self.epochs is not None and steps is None:
            entry["epochs"] = self.epochs
        if self.sampling in (Scheme.allocation, Scheme.shuffle):
            # one mechanism of these schemes is one epoch of t = 1/rate steps: --steps counts steps
            # (a partial epoch is accounted as a whole one: it releases a prefix of one)
            if q is None and self.batch_size is not None:
                q = self.batch_size / self.dataset_size  # type: ignore[operator]
            if q is None or q <= 0:
                raise CLIError(f"--sampling {self.sampling.value} needs --rate (1/steps per epoch)", EXIT_USER)
            t = max(1, round(1.0 / q))
            if "count" in entry and n is not None:
                entry["count"] = max(1, math.ceil(n / t))
            entry["sampling"] = {"scheme": self.sampling.value, "rate": q}
        elif q is not None:
            entry["sampling"] = {"scheme": self.sampling.value, "rate": q}
        elif self.batch_size is not None:
            entry["sampling"] = {"scheme": self.sampling.value, "batch_size": self.batch_size,
                                 "dataset_size": self.dataset_size}
        if self.group_size is not None and "sampling" in entry:
            entry["sampling"]["group_size"] = self.group_size
        return entry


def _build(mech: Mech, params: dict[str, Any], sched: _Schedule, delta: float, *, steps: int | None = None,
           rate: float | None = None) -> Any:
    from renyi.pipeline import parse_pipeline

    data = {"privacy": {"delta": delta}, "mechanism": [sched.entry(mech, params, steps, rate)]}
    return parse_pipeline(data, source=f"renyi {mech.value}")


def _alpha(a: Any) -> str:
    if a is None:
        return "–"
    return "∞" if a == math.inf else f"{a:.4g}"


def epsilon(
    mechanism: MechArg,
    sigma: SigmaOpt = None,
    scale: ScaleOpt = None,
    epsilon: Annotated[Optional[float], typer.Option(help="ε of one run (randomized-response, exponential).")] = None,
    p: POpt = None,
    k: KOpt = None,
    sensitivity: SensOpt = None,
    rate: RateOpt = None,
    sampling: SamplingOpt = Scheme.poisson,
    steps: StepsOpt = None,
    batch_size: BatchOpt = None,
    dataset_size: DatasetOpt = None,
    epochs: EpochsOpt = None,
    neighbouring: NeighOpt = None,
    group_size: GroupOpt = None,
    delta: Annotated[float, typer.Option(help="δ at which ε is reported.")] = 1e-5,
    method: MethodOpt = None,
    json_: JsonOpt = False,
) -> None:
    """ε at δ of one mechanism run --steps times (optionally subsampled).

    Shows the best ε (the tightest valid route, or the one --method names) with its route and
    witness order, and the same through each route. Printed ε's are rounded up.

    Examples:

        renyi epsilon gaussian --sigma 1.1 --rate 0.004267 --steps 14063 --delta 1e-5

        renyi epsilon gaussian --sigma 1.1 --batch-size 256 --dataset-size 60000 --epochs 60

        renyi epsilon gaussian --sigma 1.0 --sampling allocation --rate 0.002132 --steps 4690

        renyi epsilon laplace --scale 10 --steps 20

        renyi epsilon randomized-response --epsilon 1 --steps 5 --json

        renyi epsilon gaussian --sigma 1.1 --rate 0.01 --steps 1000 --method rdp

        renyi epsilon gaussian --sigma 1.0 --rate 0.01 --steps 1000 --group-size 5
    """
    with user_errors():
        from renyi.report import compute_report

        params = {"sigma": sigma, "scale": scale, "epsilon": epsilon, "p": p, "k": k, "sensitivity": sensitivity}
        sched = _Schedule(steps, rate, sampling, batch_size, dataset_size, epochs, neighbouring, group_size)
        pipe = _build(mechanism, params, sched, delta)
        with DelayedProgress("computing ε", total=7) as step:
            r = compute_report(pipe, progress=step, method=None if method is None else method.value,
                               tradeoff=False)
        if json_:
            d = r.to_dict()
            d.pop("source", None)
            d.pop("title", None)
            d.pop("budget", None)
            print_json(d)
            return
        from rich.table import Table
        from rich.text import Text

        c = console()
        s = r.shares[0]
        line = Text()
        line.append("ε ≤ ", style="bold")
        line.append(fmt_up(r.epsilon), style="bold green")
        line.append(f" at δ = {fmt_num(r.delta)} for {s.count:,} × {s.mechanism}")
        c.print(line)
        c.print(f"best: {r.route_by_key(r.route).title} — {r.method}"
                + (f", witness α = {_alpha(r.witness)}" if r.witness is not None else "")
                + f"   [{s.assumption}]", markup=False)
        t = Table(show_edge=False, box=None, pad_edge=False)
        t.add_column("route")
        t.add_column("ε", justify="right")
        t.add_column("α", justify="right")
        t.add_column("method")
        for route in r.routes:
            if route.applicable:
                bracket = f"   [{fmt_down(route.lower)}, {fmt_up(route.epsilon)}]" if route.lower is not None else ""
                t.add_row(route.title, fmt_up(route.epsilon), _alpha(route.witness), route.method + bracket)
            else:
                t.add_row(route.title, "n/a", "", Text(route.note, style="dim"))
        c.print(t)


def delta(
    mechanism: MechArg,
    eps: Annotated[float, typer.Option("--eps", help="ε at which δ is reported.")],
    sigma: SigmaOpt = None,
    scale: ScaleOpt = None,
    epsilon: Annotated[Optional[float], typer.Option(help="ε of one run (randomized-response, exponential).")] = None,
    p: POpt = None,
    k: KOpt = None,
    sensitivity: SensOpt = None,
    rate: RateOpt = None,
    sampling: SamplingOpt = Scheme.poisson,
    steps: StepsOpt = None,
    batch_size: BatchOpt = None,
    dataset_size: DatasetOpt = None,
    epochs: EpochsOpt = None,
    neighbouring: NeighOpt = None,
    group_size: GroupOpt = None,
    method: MethodOpt = None,
    json_: JsonOpt = False,
) -> None:
    """δ at ε (--eps) of one mechanism run --steps times: the smallest valid δ (over the
    routes, or through the one --method names).

    Examples:

        renyi delta gaussian --sigma 2 --steps 100 --eps 3

        renyi delta gaussian --sigma 1.1 --rate 0.01 --steps 1000 --eps 2 --json
    """
    with user_errors():
        import renyi
        from renyi.accounting import routes

        params = {"sigma": sigma, "scale": scale, "epsilon": epsilon, "p": p, "k": k, "sensitivity": sensitivity}
        sched = _Schedule(steps, rate, sampling, batch_size, dataset_size, epochs, neighbouring, group_size)
        pipe = _build(mechanism, params, sched, 1e-5)
        with DelayedProgress("computing δ"):
            total = renyi.compose(*pipe.items())
            # one question: the PLD engine is asked wherever it knows the mechanism
            best = routes.best_delta(routes.items(total, offer_pld=True), eps,
                                     None if method is None else method.value)
        e = pipe.entries[0]
        if json_:
            print_json({"epsilon": eps, "delta": best.value, "method": best.method, "detail": best.detail,
                        "lower": best.lower, "witness": best.witness,
                        "mechanism": repr(e.mechanism), "count": e.count, "assumption": e.assumption})
            return
        c = console()
        from rich.markup import escape

        c.print(f"[bold]δ ≤ [green]{fmt_up(best.value)}[/green][/bold] at ε = {fmt_num(eps)} for "
                f"{e.count:,} × {escape(repr(e.mechanism))}")
        lower = f", bracket [{fmt_down(best.lower)}, {fmt_up(best.value)}]" if best.lower is not None else ""
        c.print(f"route: {best.method} — {best.detail}" + lower
                + (f", witness α = {_alpha(best.witness)}" if best.witness else "")
                + f"   ({e.assumption})", markup=False)


def calibrate(
    mechanism: MechArg,
    solve: Annotated[Optional[Solve], typer.Option(
        help="Parameter to solve for (default: sigma, scale or epsilon by mechanism).")] = None,
    epsilon: Annotated[Optional[float], typer.Option(help="Target ε (with --delta), or RDP ε (with --alpha).")] = None,
    delta: Annotated[Optional[float], typer.Option(help="Target δ.")] = None,
    rho: Annotated[Optional[float], typer.Option(help="Target ρ (zCDP).")] = None,
    alpha: Annotated[Optional[float], typer.Option(help="Target RDP order α (with --epsilon).")] = None,
    sigma: SigmaOpt = None,
    scale: ScaleOpt = None,
    mech_epsilon: Annotated[Optional[float], typer.Option(
        "--mech-epsilon", help="ε of one run when not solving for it (randomized-response, exponential).")] = None,
    k: KOpt = None,
    sensitivity: SensOpt = None,
    rate: RateOpt = None,
    sampling: SamplingOpt = Scheme.poisson,
    steps: StepsOpt = None,
    batch_size: BatchOpt = None,
    dataset_size: DatasetOpt = None,
    epochs: EpochsOpt = None,
    neighbouring: NeighOpt = None,
    group_size: GroupOpt = None,
    method: MethodOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Solve for σ, scale, ε, steps or rate so that the pipeline meets a target.

    An (ε, δ) target is measured through the tightest valid route (or the one --method
    names), on its certified upper bound.

    The target is (ε, δ) (--epsilon and --delta), ρ-zCDP (--rho) or an RDP point (--alpha
    and --epsilon). The answer is checked on the safe side: the achieved guarantee never
    exceeds the target.

    Examples:

        renyi calibrate gaussian --epsilon 1 --delta 1e-5

        renyi calibrate gaussian --rate 0.004267 --steps 14063 --epsilon 8 --delta 1e-5

        renyi calibrate gaussian --batch-size 256 --dataset-size 60000 --epochs 60 --epsilon 8 --delta 1e-5

        renyi calibrate gaussian --solve steps --sigma 1.1 --rate 0.004267 --epsilon 8 --delta 1e-5

        renyi calibrate laplace --steps 10 --rho 0.5
    """
    with user_errors():
        from renyi import compose
        from renyi.guarantees import RDP, ZCDP, ApproxDP

        try:
            from renyi.accounting.calibration import calibrate as lib_calibrate
        except ImportError:
            raise CLIError("calibration is not available in this version of renyi") from None

        default = {"gaussian": Solve.sigma, "discrete-gaussian": Solve.sigma, "laplace": Solve.scale,
                   "discrete-laplace": Solve.scale}.get(mechanism.value, Solve.epsilon)
        what = solve or default
        if rho is not None:
            if epsilon is not None or delta is not None or alpha is not None:
                raise CLIError("give one target: --epsilon/--delta, --rho, or --alpha/--epsilon", EXIT_USER)
            target: Any = ZCDP(rho)
        elif alpha is not None:
            if epsilon is None:
                raise CLIError("an RDP target needs --alpha and --epsilon", EXIT_USER)
            target = RDP.from_point(alpha, epsilon)
        elif epsilon is not None and delta is not None:
            target = ApproxDP(epsilon, delta)
        elif epsilon is not None:
            raise CLIError("an (ε, δ) target needs --delta (or give --rho, or --alpha for an RDP target)", EXIT_USER)
        else:
            raise CLIError("give a target: --epsilon E --delta D, --rho R, or --alpha A --epsilon E", EXIT_USER)

        base = {"sigma": sigma, "scale": scale, "epsilon": mech_epsilon, "k": k, "sensitivity": sensitivity}
        if what.value in ("sigma", "scale", "epsilon") and base.get(what.value) is not None:
            raise CLIError(f"--{what.value if what.value != 'epsilon' else 'mech-epsilon'} is being solved for; "
                           "do not give it", EXIT_USER)
        if what is Solve.rate and (rate is not None or batch_size is not None):
            raise CLIError("the rate is being solved for; do not give --rate or --batch-size", EXIT_USER)
        if what is Solve.rate and epochs is not None:
            raise CLIError("solving for the rate needs --steps, not --epochs (an epoch's length depends on the rate)",
                           EXIT_USER)
        if what is Solve.steps and (steps is not None or epochs is not None):
            raise CLIError("--steps is being solved for; do not give --steps or --epochs", EXIT_USER)
        check_delta = delta if delta is not None else 1e-5
        sched = _Schedule(steps, rate, sampling, batch_size, dataset_size, epochs, neighbouring, group_size)

        def make(x: float) -> Any:
            params = dict(base)
            n, q = None, None
            if what is Solve.steps:
                n = int(x)
            elif what is Solve.rate:
                q = float(x)
            else:
                params[what.value] = float(x)
            pipe = _build(mechanism, params, sched, check_delta, steps=n, rate=q)
            return compose(*pipe.items())

        kwargs: dict[str, Any] = {}
        if what is Solve.rate:
            kwargs["bounds"] = (1e-12, 1.0)
        elif what is Solve.steps:
            kwargs["integer"] = True
            kwargs["bounds"] = (1, 10**9)
        with DelayedProgress(f"calibrating {what.value}"):
            res = lib_calibrate(make, target, method=None if method is None else method.value, **kwargs)
        value = float(res.value)
        achieved = res.achieved
        summary = _achieved(achieved, target)
        if json_:
            print_json({"parameter": what.value, "value": int(value) if what is Solve.steps else value,
                        "target": repr(target), "achieved": summary, "method": res.method,
                        "mechanism": mechanism.value,
                        "steps": _runs(sched) if what is not Solve.steps else int(value),
                        "rate": value if what is Solve.rate else _rate_of(sched)})
            return
        c = console()
        shown = f"{int(value):,}" if what is Solve.steps else _fmt_param(what, value)
        from rich.markup import escape

        c.print(f"[bold]{what.value} = [green]{shown}[/green][/bold]  meets {escape(repr(target))}")
        c.print(f"achieved: {summary['text']}" + (f"   (route: {res.method})" if res.method else ""), markup=False)


def _rate_of(sched: _Schedule) -> float | None:
    if sched.rate is not None:
        return sched.rate
    if sched.batch_size is not None:
        return sched.batch_size / sched.dataset_size  # type: ignore[operator]
    return None


def _runs(sched: _Schedule) -> int:
    if sched.steps is not None or sched.epochs is None:
        return sched.steps or 1
    from renyi.accounting.dpsgd import schedule

    if sched.batch_size is not None:
        return int(schedule(batch_size=sched.batch_size, dataset_size=sched.dataset_size,  # type: ignore[arg-type]
                            epochs=sched.epochs).steps)
    return int(schedule(sched.rate, epochs=sched.epochs).steps)  # type: ignore[arg-type]


def _fmt_param(what: Solve, value: float) -> str:
    from renyi.core.formatting import fmt_down

    # More noise (σ, scale) is the safe side: round σ/scale up; ε, rate down.
    return fmt_up(value, 6) if what in (Solve.sigma, Solve.scale) else fmt_down(value, 6)


def _achieved(g: Any, target: Any) -> dict[str, Any]:
    from renyi.guarantees import RDP, ZCDP, ApproxDP

    if isinstance(target, ApproxDP):
        same = isinstance(g, ApproxDP) and float(g.delta) == float(target.delta)
        e = float(g.epsilon) if same else g.epsilon(float(target.delta))
        return {"epsilon": e, "delta": float(target.delta), "text": f"ε = {fmt_up(e)} at δ = {fmt_num(target.delta)}"}
    if isinstance(target, ZCDP):
        rho = g.to_zcdp().rho
        return {"rho": rho, "text": f"ρ = {fmt_up(rho)}"}
    if isinstance(target, RDP):
        a = float(target.orders[0]) if target.orders else math.nan
        e = float(g.rdp(a))
        return {"alpha": a, "epsilon": e, "text": f"ε({fmt_num(a)}) = {fmt_up(e)}"}
    return {"text": repr(g)}
